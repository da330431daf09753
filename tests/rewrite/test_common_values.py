"""A library call two statements compute alike is computed once, into a temporary
(polyc.rewrite.common_values)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend
from polyc.rewrite.common_values import share_common_values

SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  row_sum(n) +=! exp(X(n, d) - row_max(n))
  Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
}"""


def _statements(source: str) -> list[str]:
    return str(share_common_values(frontend(source))).splitlines()[1:-1]


def test_softmax_computes_each_exponential_once():
    assert _statements(SOFTMAX) == [
        "  row_max(n) max=! X(n, d) where n in 0:N, d in 0:D",
        "  exp_S1(n, d) = exp(X(n, d) - row_max(n)) where n in 0:N, d in 0:D",
        "  row_sum(n) +=! exp_S1(n, d) where n in 0:N, d in 0:D",
        "  Y(n, d) = exp_S1(n, d) / row_sum(n) where n in 0:N, d in 0:D"]
    # fused into one row loop, the temporary becomes a row buffer of the thread
    fusion = polyc.define(SOFTMAX).explain((4, 5)).section("fusion")
    assert "exp_S1: float32(N, D), contracted to float32(1, D)" in fusion


KEPT = [
    # cheap arithmetic is recomputed, not stored
    "Y(i) = X(i) * 2 + 1  Z(i) = X(i) * 2 + 1",
    # other ranges of i (the value over one range is not the other's)
    "Y(i) = exp(X(i))  Z(i) = exp(X(i)) where i in 0:N-1",
    # a gather is evaluated only where the program evaluates it
    "Y(i) = exp(V(I(i)))  Z(i) = exp(V(I(i)))",
    # a value under a guard is evaluated only where the guard holds (its read may be
    # inside the tensor only there)
    "Y(i) = i >= 1 ? exp(X(i - 1)) : 0.0 where i in 0:N "
    " Z(i) = i >= 1 ? exp(X(i - 1)) : 1.0 where i in 0:N",
    "Y(i) = i >= 1 && exp(X(i - 1)) > 1.0 ? 1.0 : 0.0 where i in 0:N "
    " Z(i) = i >= 1 ? exp(X(i - 1)) : 2.0 where i in 0:N",
]


@pytest.mark.parametrize("body", KEPT)
def test_what_stays_computed_where_it_is(body):
    op = frontend(f"def f(float(N) X, int32(N) I, float(M) V) -> (Y, Z) {{ {body} }}")
    assert share_common_values(op) == op


def test_a_value_read_after_its_inputs_change_is_recomputed():
    source = """def f(float(N) A) -> (Y, T, Z) {
      T(i) = A(i)
      Y(i) = exp(T(i))
      T(i) = T(i) + 1
      Z(i) = exp(T(i))
    }"""
    op = frontend(source)
    assert share_common_values(op) == op  # T changes between the two exp(T(i))


@pytest.mark.needs_cc
@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 9), d=st.integers(1, 200), canonicalize=st.booleans(),
       fusion=st.sampled_from(["default", "min", "max"]))
def test_softmax_values(n, d, canonicalize, fusion):
    rng = np.random.default_rng(n * 1000 + d)
    X = (rng.standard_normal((n, d)) * 4).astype(np.float32)
    X64 = X.astype(np.float64)
    e = np.exp(X64 - X64.max(axis=1, keepdims=True))
    got = polyc.define(SOFTMAX, canonicalize=canonicalize, fusion=fusion)(X)
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.needs_cc
def test_results_are_those_of_the_unshared_program():
    # The same expressions: equal but for where a loop's vector and scalar parts use the
    # vector math library (4 ulp) or the scalar one.
    X = np.random.default_rng(5).standard_normal((33, 70)).astype(np.float32)
    shared = polyc.define(SOFTMAX)(X)
    kept = polyc.define(SOFTMAX, canonicalize=False)(X)
    np.testing.assert_allclose(shared, kept, rtol=1e-6, atol=0)


@pytest.mark.needs_cc
def test_two_values_shared_from_one_statement_are_two_statements():
    # erf and exp of one statement, both computed again later: two computations, each
    # its own polyhedral statement (they once shared a name, and isl took them for one)
    source = """def f(float(N) X) -> (Y, Z) {
      Y(i) = erf(X(i)) + exp(X(i))
      Z(i) = erf(X(i)) * exp(X(i))
    }"""
    shared = share_common_values(frontend(source))
    assert [s.name for s in shared.statements] == ["S0_shared", "S0_shared1", "S0", "S1"]
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    y, z = polyc.define(source)(x)
    np.testing.assert_allclose(y, [math.erf(v) + math.exp(v) for v in x], rtol=1e-5)
    np.testing.assert_allclose(z, [math.erf(v) * math.exp(v) for v in x], rtol=1e-5)
