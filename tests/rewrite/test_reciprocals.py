"""Division by a value a loop does not change becomes a multiplication by its reciprocal
(polyc.rewrite.reciprocals)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend
from polyc.rewrite.reciprocals import multiply_by_reciprocals


def _statements(source: str) -> list[str]:
    return str(multiply_by_reciprocals(frontend(source))).splitlines()[1:-1]


def test_a_divisor_one_loop_does_not_change_becomes_a_reciprocal():
    source = """def f(float(N, D) X, float(N) s, float eps) -> (Y, Z) {
      Y(n, d) = (X(n, d) - s(n)) / sqrt(s(n) + eps)
      Z(n, d) = X(n, d) / D
    }"""
    assert _statements(source) == [
        "  Y(n, d) = (X(n, d) - s(n)) * (1.0 / sqrt(s(n) + eps)) where n in 0:N, d in 0:D",
        "  Z(n, d) = X(n, d) * (1.0 / D) where n in 0:N, d in 0:D"]


def test_divisions_that_would_save_nothing_or_are_integer_stay():
    source = """def f(float(N, D) X, float(N, D) W, float(N) s, int32(N, D) I) -> (A, B, C) {
      A(n, d) = X(n, d) / W(n, d)
      B(n, d) = s(n) / (s(n) + 1.0) + X(n, d)
      C(n, d) = I(n, d) / 3
    }"""
    op = frontend(source)
    assert multiply_by_reciprocals(op) == op


def test_the_explanation_shows_the_rewrite_and_canonicalize_false_keeps_the_division():
    source = "def f(float(N, D) X, float(N) s) -> (Y) { Y(n, d) = X(n, d) / s(n) }"
    assert "X(n, d) * (1.0 / s(n))" in str(polyc.define(source).explain())
    kept = polyc.define(source, canonicalize=False).compilation().c_source.text
    assert "1.0f /" not in kept and "/ s[" in kept


@pytest.mark.needs_cc
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.integers(0, 2 ** 32 - 1))
def test_values_agree_with_the_quotient_within_one_unit_in_the_last_place(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    s = rng.uniform(0.01, 100.0, n).astype(np.float32)
    op = polyc.define("""def f(float(N, D) X, float(N) s, float eps) -> (Y) {
      Y(n, d) = X(n, d) / sqrt(s(n) + eps)
    }""")
    got = op(X, s, np.float32(1e-5))
    quotient = X / np.sqrt(s + np.float32(1e-5))[:, None]
    ulps = np.abs(got.view(np.int32).astype(np.int64) - quotient.view(np.int32))
    assert ulps.max(initial=0) <= 1
    exact = X.astype(np.float64) / np.sqrt(s.astype(np.float64) + 1e-5)[:, None]
    np.testing.assert_allclose(got, exact, rtol=4e-7, atol=0)
