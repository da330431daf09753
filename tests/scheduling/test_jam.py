"""Unroll-and-jam of outer rows into the vector loops (polyc/scheduling/jam.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from polyc.scheduling.jam import JAM_MARK, JAM_ROWS, jam_outer_rows

ATAX = """def atax(float(M, N) A, float(N) x) -> (y) {
  tmp(i) +=! A(i, j) * x(j)
  y(j) +=! A(i, j) * tmp(i)
}"""
ROW_MAX_SHIFTED = """def f(float(M, N) A, float(N) b) -> (m) {
  m(i) max=! A(i, j) + b(j)
}"""
TOTAL_MAX = "def f(float(M, N) A, float(N) b) -> (m) { m max=! A(i, j) * b(j) }"
TOTAL_SUM = "def f(double(M, N) A, double(N) b) -> (s) { s +=! A(i, j) * b(j) }"
ELEMENTWISE = "def f(float(M, N) a, float(N) b) -> (O) { O(i, j) = a(i, j) + b(j) }"


def _jammed(op: polyc.Operator) -> bool:
    return f'"{JAM_MARK}"' in str(op.compilation().schedule)


def test_a_matrix_vector_chain_is_jammed_by_rows_with_one_accumulator_each():
    op = polyc.define(ATAX)
    assert _jammed(op)
    c = op.compilation().c_source.text
    accumulators = ", ".join(f"polyc_acc{k}" for k in range(JAM_ROWS))
    assert f"reduction(+:{accumulators})" in c
    # tmp lives in one block of rows: as many elements, indexed modulo their number
    assert f"float tmp[{JAM_ROWS}];" in c and f"% {JAM_ROWS}]" in c
    explained = str(op.explain())
    assert f"tmp: float32(M), contracted to float32({JAM_ROWS})" in explained
    assert (f"rows of loop i jammed by {JAM_ROWS} into the vector loops "
            "(one accumulator per row): S0, S1") in explained


def test_rows_that_only_stream_are_left_alone():
    assert not _jammed(polyc.define(ELEMENTWISE))  # its stores stream instead
    layernorm_like = polyc.define("""def f(float(N, D) X, float(D) g) -> (Y) {
      mu(n) +=! X(n, d)
      Y(n, d) = (X(n, d) - mu(n)) * g(d)
    }""")
    assert not _jammed(layernorm_like)  # reuse of g and a reduction, but Y streams
    softmax = polyc.define("""def softmax(float(N, D) X) -> (Y) {
      row_max(n) max=! X(n, d)
      Y(n, d) = exp(X(n, d) - row_max(n))
    }""")
    assert not _jammed(softmax)  # no access invariant along the rows
    assert not _jammed(polyc.define(ATAX, optimize=False))


def test_a_jam_the_legality_check_rejects_is_not_made(monkeypatch):
    import dataclasses

    import polyc.scheduling.schedule as schedule

    seen = []

    def recording(tree, rules):
        seen.append((tree, rules))
        return jam_outer_rows(tree, rules)

    monkeypatch.setattr(schedule, "jam_outer_rows", recording)
    polyc.define(ATAX).compilation()
    tree, rules = seen[0]
    assert f'"{JAM_MARK}"' in str(jam_outer_rows(tree, rules))  # legal as it is
    refused = dataclasses.replace(rules, legal=lambda candidate: False)
    assert str(jam_outer_rows(tree, refused)) == str(tree)


@pytest.mark.needs_cc
@pytest.mark.parametrize("rows", [0, 1, 3, 4, 5, 8, 13])
def test_jammed_atax_matches_numpy_for_any_row_count(rows):
    op = polyc.define(ATAX)
    rng = np.random.default_rng(rows)
    A = rng.standard_normal((rows, 37)).astype(np.float32)
    x = rng.standard_normal(37).astype(np.float32)
    expected = A.astype(np.float64).T @ (A.astype(np.float64) @ x)
    np.testing.assert_allclose(op(A, x), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_rows_reducing_into_one_element_combine_their_accumulators():
    """(Unfused, the reduction's loops hold it alone, so its rows are jammed.)"""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((11, 40))
    b = rng.standard_normal(40)
    total_sum = polyc.define(TOTAL_SUM, fusion="min")
    assert _jammed(total_sum)
    np.testing.assert_allclose(total_sum(A, b), (A * b).sum(), rtol=1e-12)
    total_max = polyc.define(TOTAL_MAX, fusion="min")
    A32, b32 = A.astype(np.float32), b.astype(np.float32)
    assert total_max(A32, b32) == (A32 * b32).max()


@pytest.mark.needs_cc
@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 14), cols=st.integers(1, 70), nan_at=st.none() | st.tuples(
    st.integers(0, 13), st.integers(0, 69)))
def test_jammed_max_reductions_see_every_nan(rows, cols, nan_at):
    rng = np.random.default_rng(rows * 100 + cols)
    A = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    if nan_at is not None:
        A[nan_at[0] % rows, nan_at[1] % cols] = np.nan
    for source, expected in ((ROW_MAX_SHIFTED, (A + b).max(axis=1)),
                             (TOTAL_MAX, (A * b).max())):
        op = polyc.define(source, fusion="min")
        assert _jammed(op)
        np.testing.assert_array_equal(op(A, b), expected)


@pytest.mark.needs_cc
def test_an_elementwise_pass_beside_jammed_reductions_runs_its_rows_one_by_one():
    # Y's pass reduces nothing: jammed it saved no load and ran eight rows' streams at
    # once (2.5x slower than its rows one by one); the row sums stay jammed.
    from polyc.scheduling.marks import marks_by_statement
    op = polyc.define("""def f(float(N, M) X, float(M) b) -> (Y, Z) {
      Y(i, j) = X(i, j) * 2 + b(j)
      Z(i) +=! Y(i, j)
    }""")
    marks = marks_by_statement(op.compilation().schedule.tree)
    assert JAM_MARK in marks["S1"] and "simd-reduction" in marks["S1"]
    assert JAM_MARK not in marks["S0"] and "simd" in marks["S0"]
    rng = np.random.default_rng(3)
    X, b = rng.standard_normal((19, 37)).astype(np.float32), np.ones(37, np.float32)
    Y, Z = op(X, b)
    np.testing.assert_allclose(Y, X.astype(np.float64) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(Z, (X.astype(np.float64) * 2 + 1).sum(1), rtol=1e-5)


@pytest.mark.parametrize("fusion", ["default", "max", "min"])
def test_a_jam_that_would_break_a_vector_mark_below_it_is_not_made(fusion):
    # Found by the fuzzer: the rows' sum into a scalar had a band of its own, coincident
    # only while the whole row loop was outside it. Jammed (the row loop tiled by 8, its
    # point loop sunk below), that band's `simd` loop would carry the sum: the candidate
    # is now refused, where the parallel-mark proof used to stop the compilation.
    source = """def f(double(I, J) X) -> (S) {
      T(i) +=! X(i, j) where j in 0:min(J, i)
      S +=! T(i)
    }"""
    X = np.random.default_rng(0).standard_normal((19, 11))
    expected = sum(X[i, :min(11, i)].sum() for i in range(19))
    np.testing.assert_allclose(polyc.define(source, fusion=fusion)(X), expected, rtol=1e-12)
