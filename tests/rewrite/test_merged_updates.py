"""Updates of one element merge into one statement, one pass instead of several
(polyc.rewrite.merged_updates)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend
from polyc.rewrite.merged_updates import merge_updates

HEADER = "def f(float(N, D) X, float(D) b, float(N) s) -> (Y, R, Z) {"


def _statements(body: str) -> list[str]:
    return str(merge_updates(frontend(f"{HEADER} {body} }}"))).splitlines()[1:-1]


def test_a_store_and_its_updates_become_one_statement_at_the_last():
    assert _statements("""
        Y(n, d) = X(n, d) * s(n)
        R(n) +=! X(n, d)
        Y(n, d) += b(d)
        Z(n, d) = X(n, d)
        Y(n, d) += R(n)
    """) == [
        "  R(n) +=! X(n, d) where n in 0:N, d in 0:D",
        "  Z(n, d) = X(n, d) where n in 0:N, d in 0:D",
        "  Y(n, d) = X(n, d) * s(n) + b(d) + R(n) where n in 0:N, d in 0:D"]


def test_two_contributions_to_a_sum_become_one_sum():
    assert _statements("""
        R(n) +=! X(n, d) * s(n)
        Y(n, d) = X(n, d)
        R(n) += X(n, d) * b(d)
        Z(n, d) = X(n, d) * R(n)
    """) == [
        "  Y(n, d) = X(n, d) where n in 0:N, d in 0:D",
        "  R(n) +=! X(n, d) * s(n) + X(n, d) * b(d) where n in 0:N, d in 0:D",
        "  Z(n, d) = X(n, d) * R(n) where n in 0:N, d in 0:D"]


KEPT = [
    # a statement in between reads the element: it must see the first value
    "Y(n, d) = X(n, d)  Z(n, d) = Y(n, d)  Y(n, d) += b(d)",
    # a statement in between changes what the first right-hand side reads
    "R(n) = s(n)  Y(n, d) = R(n) + X(n, d)  R(n) = s(n) * 2.0  Y(n, d) += b(d)",
    # other ranges
    "Y(n, d) = X(n, d)  Y(n, d) += b(d) where n in 0:N, d in 1:D",
    # the update reads its own tensor
    "Y(n, d) = X(n, d)  Y(n, d) += Y(n, d)",
    # an update with its own `!` starts over
    "R(n) +=! X(n, d)  R(n) +=! X(n, d) * 2.0",
    # other operators (max does not merge; + after * would not be a product)
    "R(n) max=! X(n, d)  R(n) max= X(n, d) * 2.0",
    "R(n) *=! X(n, d)  R(n) += X(n, d)",
    # a sum and a store over other indices (the store has no reduction index)
    "R(n) = s(n)  R(n) += X(n, d)",
]


@pytest.mark.parametrize("body", KEPT)
def test_what_stays_apart(body):
    # Y, R and Z are temporaries here; O is the output
    op = frontend(f"def f(float(N, D) X, float(D) b, float(N) s) -> (O) {{ {body} "
                  f"O(n) = s(n) }}")
    assert merge_updates(op) == op


SPELLINGS = """def f(float(N, D) X, float(D) b, float(N) s) -> (Y, R) {
  Y(n, d) = X(n, d) * s(n)
  R(n) +=! X(n, d) * b(d)
  Y(n, d) += b(d) * R(n)
  R(n) += X(n, d) * s(n)
  Y(n, d) += 1.0
}"""


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 5), d=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_merged_operators_compute_what_the_updates_did(n, d, seed):
    rng = np.random.default_rng(seed)
    X, b, s = rng.standard_normal((n, d)), rng.standard_normal(d), rng.standard_normal(n)
    merged = polyc.define(SPELLINGS.replace("float", "double"))
    assert "merged" in merged.explain(X, b, s).section("ir")
    Y, R = merged(X, b, s)
    r = X @ b
    want_Y = X * s[:, None] + b[None, :] * r[:, None] + 1.0
    np.testing.assert_allclose(Y, want_Y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(R, r + X.sum(axis=1) * s, rtol=1e-12, atol=1e-12)
