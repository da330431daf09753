"""Selects on affine conditions of the indices become index-dependent domains
(polyc.rewrite.split_selects): exact pieces, zero sums dropped, the rest left alone."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from polyc.compiler import frontend
from polyc.rewrite.split_selects import split_selects


def _statements(source: str) -> list[str]:
    return str(split_selects(frontend(source))).splitlines()[1:-1]


def test_a_triangle_by_value_is_a_triangular_sum_and_its_zeros_are_gone():
    assert _statements("def f(float(M, M) A, float(M, N) B) -> (C) "
                       "{ C(i, j) +=! (k > i ? A(k, i) : 0.0) * B(k, j) }") == [
        "  C(i, j) +=! A(k, i) * B(k, j) where i in 0:M, j in 0:N, k in max(0, i + 1):M"]


def test_both_sides_of_a_select_are_sums_and_the_first_keeps_the_initialisation():
    assert _statements("def f(float(M, M) A, float(M, N) B) -> (C) "
                       "{ C(i, j) +=! (k <= i ? A(i, k) : A(k, i)) * B(k, j) }") == [
        "  C(i, j) +=! A(i, k) * B(k, j) where i in 0:M, j in 0:N, k in 0:min(M, i + 1)",
        "  C(i, j) += A(k, i) * B(k, j) where i in 0:M, j in 0:N, k in max(0, i + 1):M"]


def test_a_conjunction_fails_in_convex_pieces():
    assert _statements("def f(float(N) A) -> (B) "
                       "{ B(i) = i == 3 && i < N - 1 ? A(i) : 2 * A(i) }") == [
        "  B(i) = A(i) where i in 3:min(4, N - 1)",
        "  B(i) = 2.0 * A(i) where i in 0:min(3, N)",
        "  B(i) = 2.0 * A(i) where i in 4:N",
        "  B(i) = 2.0 * A(i) where i in max(3, N - 1):min(4, N)"]


def test_a_sum_whose_pieces_leave_part_of_its_box_starts_with_its_initialisation():
    # the sum over 1:N alone would leave B(0) uninitialised: a statement fills the box
    assert _statements("def f(float(N, K) A) -> (B) { B(i) +=! i >= 1 ? A(i, k) : 0.0 }"
                       ) == ["  B(i) = 0.0 where i in 0:N",
                             "  B(i) += A(i, k) where i in 1:N, k in 0:K"]


@pytest.mark.parametrize("source", [
    # a condition on data, or not affine
    "def f(float(N) A) -> (B) { B(i) = A(i) > 0.0 ? A(i) : 0.0 }",
    "def f(float(N) A) -> (B) { B(i) = i * i < N ? A(i) : 0.0 }",
    # a point reads another point's element of what it writes: the order matters
    "def f(float(N) A) -> (B) { B(i) = A(i)\n B(i) = i >= 1 ? B(i - 1) + A(i) : B(i) }",
    # a disjunction
    "def f(float(N) A) -> (B) { B(i) = i < 2 || i > 5 ? A(i) : 0.0 }",
    # a maximum's pieces would initialise only B(1:N): B(0) must still be 0
    "def f(float(N, K) A) -> (B) { B(i) max=! i >= 1 ? A(i, k) : 0.0 }",
    # a coefficient of 2 on every index: no bound without a division
    "def f(float(N) A) -> (B) { B(i) = 2 * i < N ? A(i) : 0.0 }",
])
def test_what_stays_as_written(source):
    op = frontend(source)
    assert split_selects(op) == op


_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal}
_REDUCE = {"+": np.sum, "max": np.max, "min": np.min}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(_COMPARE)), st.integers(-2, 2), st.sampled_from(sorted(_REDUCE)),
       st.integers(0, 6), st.integers(0, 6))
def test_split_selects_agree_with_numpy(comparison, shift, reduction, m, n):
    # a select on k against i (shifted) in a reduction of every kind, at small sizes
    zero = {"+": 0.0, "max": -1.0, "min": 1.0}[reduction]
    source = (f"def f(float(M, K) A, float(K, N) B) -> (C) {{ C(i, j) {reduction}=! "
              f"(k {comparison} i + {shift} ? A(i, k) * B(k, j) : {zero}) }}")
    assert split_selects(frontend(source)) != frontend(source)
    rng = np.random.default_rng(m * 7 + n)
    A = rng.standard_normal((m, 5))
    B = rng.standard_normal((5, n))
    k, i = np.arange(5)[None, None, :], np.arange(m)[:, None, None]
    terms = np.where(_COMPARE[comparison](k, i + shift), A[:, None, :] * B.T[None, :, :], zero)
    want = _REDUCE[reduction](terms, axis=2) if terms.size else np.zeros((m, n))
    got = polyc.define(source)(A.astype(np.float32), B.astype(np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.needs_cc
def test_a_bound_in_the_sizes_on_a_triangle_keeps_its_piece_empty():
    # the inner select's failing side `j >= M` bounds j by a size alone, after the outer
    # one gave j an index-dependent range: the piece is empty (it once lost that bound
    # and stored 5.0 over the whole triangle)
    source = ("def f(float(N, M) A) -> (B) "
              "{ B(i, j) = i + j >= 2 ? (j < M ? A(i, j) : 5.0) : 1.0 }")
    a = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    i, j = np.indices(a.shape)
    np.testing.assert_array_equal(polyc.define(source)(a), np.where(i + j >= 2, a, 1.0))


def test_a_select_temporary_is_forwarded_into_the_sum_it_feeds():
    assert _statements("def trmm(float alpha, float(M, M) A, float(M, N) B) -> (Bout) {\n"
                       " Lt(i, k) = k > i ? A(k, i) : 0\n P(i, j) +=! Lt(i, k) * B(k, j)\n"
                       " Bout(i, j) = alpha * (P(i, j) + B(i, j))\n}") == [
        "  P(i, j) +=! A(k, i) * B(k, j) where i in 0:M, j in 0:N, k in max(0, i + 1):M",
        "  Bout(i, j) = alpha * (P(i, j) + B(i, j)) where i in 0:M, j in 0:N"]
    assert _statements("def symm(float(M, M) A, float(M, N) B) -> (C) {\n"
                       " S(i, k) = k <= i ? A(i, k) : A(k, i)\n C(i, j) +=! S(i, k) * B(k, j)\n}"
                       ) == [
        "  C(i, j) +=! A(i, k) * B(k, j) where i in 0:M, j in 0:N, k in 0:min(M, i + 1)",
        "  C(i, j) += A(k, i) * B(k, j) where i in 0:M, j in 0:N, k in max(0, i + 1):M"]


@pytest.mark.parametrize("source", [
    # a zero-padded copy: forwarded, it would only trim a band's borders
    "def f(float(N) I, float(K) W) -> (O) {\n"
    " Ip(h) = h >= 1 && h < N + 1 ? I(h - 1) : 0.0 where h in 0:N + 2\n"
    " O(h) +=! Ip(h + r) * W(r) where h in 0:N\n}",
    # arithmetic in the value: each reader would repeat it
    "def f(float(M, M) A, float(M, N) B) -> (C) {\n Lt(i, k) = k > i ? 2.0 * A(k, i) : 0.0\n"
    " C(i, j) +=! Lt(i, k) * B(k, j)\n}",
    # what it reads changes before its reader runs
    "def f(float(M, M) A, float(M, N) B) -> (C) {\n T(i, k) = A(i, k)\n"
    " Lt(i, k) = k > i ? T(k, i) : 0.0\n T(i, k) = 1.0\n C(i, j) +=! Lt(i, k) * B(k, j) + T(k, j)\n}",
    # a reader that reads other points of what it writes is not split
    "def f(float(M, M) A) -> (C) {\n Lt(i, k) = k > i ? A(k, i) : 0.0\n C(i, k) = A(i, k)\n"
    " C(i, k) = i >= 1 ? C(i - 1, k) + Lt(i, k) : C(i, k)\n}",
])
def test_select_temporaries_that_stay(source):
    op = frontend(source)
    assert any(t.name in ("Ip", "Lt") for t in split_selects(op).temporaries)


def test_forwarded_temporaries_compute_what_the_copies_did():
    source = ("def f(float(M, M) A, float(M, N) B) -> (C) {\n"
              " Lt(i, k) = k > i ? A(k, i) : 0\n C(i, j) +=! Lt(i, k) * B(k, j)\n}")
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((9, 9)).astype(np.float32), rng.standard_normal((9, 4)).astype(
        np.float32)
    want = np.tril(A.astype(np.float64), -1).T @ B.astype(np.float64)
    for canonicalize in (True, False):
        np.testing.assert_allclose(polyc.define(source, canonicalize=canonicalize)(A, B), want,
                                   rtol=1e-5, atol=1e-5)
