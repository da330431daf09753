"""Vectorised math (libmvec) keeps its documented accuracy and IEEE special values."""
import numpy as np
import pytest

import polyc
from polyc.codegen.vector_math import simd_math_functions

pytestmark = pytest.mark.needs_cc

FUNCTIONS = {
    "exp": (np.exp, -80.0, 80.0), "log": (np.log, 1e-30, 1e30), "tanh": (np.tanh, -10.0, 10.0),
    "sin": (np.sin, -100.0, 100.0), "expm1": (np.expm1, -10.0, 10.0),
    "log1p": (np.log1p, -0.9, 100.0), "erf": (None, -4.0, 4.0),
}


def ulp_error(actual: np.ndarray, exact: np.ndarray) -> float:
    spacing = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(actual.astype(np.float64) - exact) / spacing))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_math_within_4_ulp(name):
    reference, lo, hi = FUNCTIONS[name]
    if reference is None:
        from math import erf
        reference = np.vectorize(erf)
    op = polyc.define(f"def f(float(N) X) -> (Y) {{ Y(i) = {name}(X(i)) }}")
    x = np.linspace(lo, hi, 100_003).astype(np.float32)
    y = op(x)
    assert ulp_error(y, reference(x.astype(np.float64))) <= 4.0
    if name + "f" in simd_math_functions():
        assert "declare simd" in op.compile().c_source


def test_special_values_propagate():
    op = polyc.define("def f(float(N) X) -> (Y) { Y(i) = exp(X(i)) + log(fabs(X(i))) }")
    x = np.array([np.nan, np.inf, -np.inf, 0.0] * 5, dtype=np.float32)
    with np.errstate(all="ignore"):
        expected = np.exp(x) + np.log(np.abs(x))
    np.testing.assert_array_equal(op(x), expected)
