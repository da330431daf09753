"""Hypothesis: random einsum-style comprehensions compiled and compared with numpy."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyc
from corpus import assert_close
from strategies import einsum_programs

pytestmark = pytest.mark.needs_cc


@settings(max_examples=int(os.environ.get("POLYC_FUZZ_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(einsum_programs(), st.integers(0, 2**16))
def test_random_comprehensions_match_numpy(program, seed):
    op = polyc.define(program.source)
    arrays = program.arrays(seed)
    result = op(*arrays)
    expected = program.reference(arrays)
    assert result.shape == expected.shape, program.source
    tolerance = 1e-3 if program.reduction == "*" else 1e-4
    assert_close(result, expected, tolerance, what=program.source)
