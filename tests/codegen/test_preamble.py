"""The helpers every kernel's C starts with (polyc.codegen.c_names.PREAMBLE), compiled
alone and compared with Python's own arithmetic."""
import ctypes

import pytest
from hypothesis import given, settings, strategies as st

from polyc.codegen.c_names import PREAMBLE

from c_probe import compile_probe

pytestmark = pytest.mark.needs_cc

PROBE = PREAMBLE + """
int64_t polyc_probe_floordiv(int64_t a, int64_t b) { return polyc_floordiv(a, b); }
"""

INT64 = st.integers(-(2 ** 63) + 1, 2 ** 63 - 1)


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    loaded = compile_probe(PROBE, tmp_path_factory.mktemp("preamble"))
    loaded.polyc_probe_floordiv.restype = ctypes.c_int64
    loaded.polyc_probe_floordiv.argtypes = [ctypes.c_int64, ctypes.c_int64]
    return loaded


def test_floordiv_rounds_towards_minus_infinity_for_every_sign(probe):
    for a in range(-40, 41):
        for b in [*range(-7, 0), *range(1, 8)]:
            assert probe.polyc_probe_floordiv(a, b) == a // b, (a, b)


@settings(max_examples=300, deadline=None)
@given(a=INT64, b=INT64.filter(lambda b: b != 0))
def test_floordiv_agrees_with_python_over_int64(probe, a, b):
    assert probe.polyc_probe_floordiv(a, b) == a // b
