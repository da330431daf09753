"""Differential fuzzing: random multi-statement programs, every option variant, vs numpy.

`make test` runs a bounded number; `make fuzz` runs the long campaign
(POLYC_FUZZ_EXAMPLES, default 2000 there).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import polyc
from corpus import assert_close
from fuzz_programs import fuzz_programs

pytestmark = pytest.mark.needs_cc

EXAMPLES = int(os.environ.get("POLYC_FUZZ_EXAMPLES", "25"))
VARIANTS = ({}, {"optimize": False, "parallel": False}, {"fusion": "max"}, {"fusion": "min"})


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(fuzz_programs(), st.integers(0, 2**16))
def test_random_programs_agree_with_numpy_under_every_variant(program, seed):
    if program.rejected:
        with pytest.raises(polyc.SemanticError, match="unwritten"):
            polyc.define(program.source)
        return
    op = polyc.define(program.source)
    arrays = program.inputs(seed)
    expected = program.reference(arrays)
    for variant in VARIANTS:
        result = op.with_options(**variant)(*arrays)
        results = result if isinstance(result, tuple) else (result,)
        for actual, reference in zip(results, expected):
            assert actual.shape == reference.shape, (program.source, variant)
            assert_close(actual, reference, 1e-4, what=f"{variant} {program.source}")


@settings(max_examples=max(EXAMPLES // 3, 5), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(fuzz_programs(), st.integers(0, 2**16))
def test_random_programs_differentiate(program, seed):
    """polyc.grad of a random program against central differences of its float64 oracle."""
    from gradcheck import directional, directions, finite_difference, relative_error

    if program.rejected:
        return
    op = polyc.define(program.source)
    arrays = program.inputs(seed)
    rng = np.random.default_rng(seed)
    # a max or min over an empty triangle row is infinite, and 0 * inf in the chain rule
    # is NaN (as in torch): no finite difference checks that
    assume(all(np.isfinite(v).all() for v in program.values(arrays).values()))
    cotangents = [rng.standard_normal(r.shape) for r in program.reference(arrays)]
    gradients = polyc.grad(op)(*arrays, *(w.astype(np.float32) for w in cotangents))
    direction = directions(arrays, [True] * len(arrays), rng)
    expected = finite_difference(lambda *xs: program.reference(xs),
                                 tuple(a.astype(np.float64) for a in arrays), direction,
                                 cotangents)
    actual = directional(gradients, direction)
    assert relative_error(actual, expected, 1e-3) <= 1e-3, (program.source, actual, expected)
