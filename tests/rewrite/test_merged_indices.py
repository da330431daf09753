"""Indices that move together in a contraction merge into one
(polyc.rewrite.merged_indices)."""
import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.options import Options
from polyc.poly.program import isl_items
from polyc.rewrite.merged_indices import merge_indices

CONTRACTION = """def tc(float(SA, SE, SB, SF) A, float(SD, SF, SC, SE) B) -> (C) {
  C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e)
}"""


def _body(source: str) -> list[str]:
    return str(merge_indices(frontend(source))).splitlines()[1:-1]


def test_a_contraction_becomes_a_matrix_product_of_copies_laid_out_as_the_nest_walks():
    # (a, b), (c, d) and (e, f) each index the same tensors; A and B hold them apart, and
    # each is re-read (A along c, d; B along a, b), so each is copied with the groups
    # adjacent: rows, then the reduction, then the vector group (c, d) last.
    assert _body(CONTRACTION) == [
        "  # SA_SB = SA * SB",
        "  # SC_SD = SC * SD",
        "  # SE_SF = SE * SF",
        "  # A_t0213_m(SA_SB, SE_SF): the memory of A_t0213",
        "  # B_t3120_m(SE_SF, SC_SD): the memory of B_t3120",
        "  # C_m(SA_SB, SC_SD): the memory of C",
        "  A_t0213(t0, t2, t1, t3) = A(t0, t1, t2, t3) where t0 in 0:SA, t2 in 0:SB, "
        "t1 in 0:SE, t3 in 0:SF",
        "  B_t3120(t3, t1, t2, t0) = B(t0, t1, t2, t3) where t3 in 0:SE, t1 in 0:SF, "
        "t2 in 0:SC, t0 in 0:SD",
        "  C_m(ab, cd) +=! A_t0213_m(ab, ef) * B_t3120_m(ef, cd) where ab in 0:SA_SB, "
        "cd in 0:SC_SD, ef in 0:SE_SF"]


def test_operands_that_hold_a_group_adjacent_are_read_through_views():
    assert _body("""def f(float(B1, B2, M, K) X, float(B1, B2, K, N) Y) -> (Z) {
      Z(b1, b2, m, n) +=! X(b1, b2, m, k) * Y(b1, b2, k, n)
    }""")[-1] == ("  Z_m(b1b2, m, n) +=! X_m(b1b2, m, k) * Y_m(b1b2, k, n) where "
                  "b1b2 in 0:B1_B2, m in 0:M, n in 0:N, k in 0:K")
    assert _body("""def f(float(NR, NQ, NP) A, float(NP, NP) C4) -> (S) {
      S(r, q, p) +=! A(r, q, s) * C4(s, p)
    }""")[-1] == ("  S_m(rq, p) +=! A_m(rq, s) * C4(s, p) where rq in 0:NR_NQ, p in 0:NP, "
                  "s in 0:NP")


@pytest.mark.parametrize("source", [
    "def f(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }",
    # windows: h and w index I only as h + r and w + s
    "def f(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) "
    "{ O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s) }",
    # i and j index different reads
    "def f(float(N, K) A) -> (G) { G(i, j) +=! A(i, k) * A(j, k) }",
    # i is also a value
    "def f(float(I, J, K) A) -> (C) { C(i, j) +=! A(i, j, k) * float32(i) }",
    # T is a temporary another statement writes, C an output another statement reads
    "def f(float(I, J, K) A) -> (C) { T(i, j, k) = A(i, j, k) * 2.0\n"
    " C(i, j) +=! T(i, j, k) }",
    "def f(float(I, J, K) A) -> (C, D) { C(i, j) +=! A(i, j, k)\n D(i, j) = C(i, j) }",
    # j covers part of A's dimension
    "def f(float(I, J, K) A) -> (C) { C(i, j) +=! A(i, j, k) where j in 0:J - 1 }",
    # a triangle, not a box
    "def f(float(I, J, K) A) -> (C) { C(i, j) +=! A(i, j, k) where k in j:K }",
    # (j, k) apart in A, which is read once per output element: a copy would not pay
    "def f(float(J, I, K) A) -> (s) { s(i) +=! A(j, i, k) }",
    # a gather
    "def f(float(V, D) T, int64(B, L) I) -> (E) { E(b, l) +=! T(I(b, l), d) }",
])
def test_what_stays_as_written(source):
    op = frontend(source)
    assert merge_indices(op) == op


def test_copies_run_whole_before_the_statement_that_reads_their_views():
    compilation = generate(frontend(CONTRACTION), Options())
    alias = compilation.dependences.dep_alias
    pairs = {(m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out))
             for m in isl_items(alias.get_map_list())}
    assert pairs == {("L0", "S0"), ("L1", "S0")}
    assert alias.is_subset(compilation.dependences.validity)


def test_canonicalize_false_keeps_the_indices_apart():
    compilation = generate(frontend(CONTRACTION), Options().with_(canonicalize=False))
    assert not compilation.op.views and not compilation.op.derived_sizes


CASES = {
    # einsum formula: TC source
    "aebf,dfce->abcd": CONTRACTION,
    "blk,kn->bln": "def f(float(B, L, K) X, float(K, N) W) -> (Y) "
                   "{ Y(b, l, n) +=! X(b, l, k) * W(k, n) }",
    "abmk,abkn->abmn": "def f(float(A, B, M, K) X, float(A, B, K, N) Y) -> (Z) "
                       "{ Z(a, b, m, n) +=! X(a, b, m, k) * Y(a, b, k, n) }",
    "mabr,dr->mabd": "def f(float(M, A, B, R) X, float(D, R) W) -> (Y) "
                     "{ Y(m, a, b, d) +=! X(m, a, b, r) * W(d, r) }",
    "ikj,kl->ijl": "def f(float(I, K, J) X, float(K, L) W) -> (Y) "
                   "{ Y(i, j, l) +=! X(i, k, j) * W(k, l) }",
}
_OPERATORS = {}


def _operator(formula):
    if formula not in _OPERATORS:
        _OPERATORS[formula] = polyc.define(CASES[formula])
    return _OPERATORS[formula]


@pytest.mark.needs_cc
@settings(max_examples=12, deadline=None)
@given(formula=st.sampled_from(sorted(CASES)), data=st.data())
def test_merged_contractions_match_numpy(formula, data):
    operator = _operator(formula)
    assert operator.compilation().op.views  # the case merges something
    inputs, outputs = formula.split("->")
    extents = {letter: data.draw(st.integers(0 if letter == "a" else 1, 7), label=letter)
               for letter in sorted(set(inputs) - {",", "-", ">"})}
    rng = np.random.default_rng(len(formula))
    arrays = [rng.standard_normal([extents[c] for c in spec]).astype(np.float32)
              for spec in inputs.split(",")]
    expected = np.einsum(formula, *(a.astype(np.float64) for a in arrays))
    np.testing.assert_allclose(operator(*arrays), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_max_over_merged_indices_matches_numpy():
    operator = polyc.define("def f(float(A, B, K, L) X) -> (Y) "
                            "{ Y(a, b) max=! X(a, b, k, l) }")
    assert "Y_m(ab) max=! X_m(ab, kl)" in str(operator.compilation().op)
    x = np.random.default_rng(3).standard_normal((3, 5, 4, 6)).astype(np.float32)
    np.testing.assert_array_equal(operator(x), x.max(axis=(2, 3)))
