"""Parallel loops over reductions with private accumulators (polyc.scheduling.privatize)."""
import islpy as isl
import numpy as np
import pytest

import polyc
from polyc.compiler import frontend, generate
from polyc.errors import InternalError
from polyc.options import Options
from polyc.scheduling.marks import PrivateAccumulators, decision_mark
from polyc.scheduling.schedule import check_parallel

ATAX = """def atax(float(M, N) A, float(N) x) -> (y) {
  tmp(i) +=! A(i, j) * x(j)
  y(j) +=! A(i, j) * tmp(i)
}"""


def compiled(source, **options):
    return generate(frontend(source), Options().with_(**options))


def test_atax_reads_A_in_one_parallel_pass_with_a_private_y():
    compilation = compiled(ATAX)
    assert compilation.schedule.decision.startswith("maximal fusion")
    assert "// parallel private: y" in compilation.ast_text
    c = compilation.c_source.text
    assert "polyc_mine_y[j] = (polyc_mine_y[j] +" in c   # the updates go private
    assert "#pragma omp critical" in c and "#pragma omp for schedule(static)" in c


@pytest.mark.needs_cc
@pytest.mark.parametrize("m, n", [(1, 1), (3, 5), (257, 130), (1000, 37), (0, 4), (4, 0)])
def test_atax_matches_numpy(m, n):
    rng = np.random.default_rng(m + 7 * n)
    A = rng.standard_normal((m, n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    expected = A.astype(np.float64).T @ (A.astype(np.float64) @ x.astype(np.float64))
    np.testing.assert_allclose(polyc.define(ATAX)(A, x), expected, rtol=1e-4, atol=1e-3)


@pytest.mark.needs_cc
@pytest.mark.parametrize("op, combine", [("max", np.max), ("min", np.min), ("+", np.sum)])
def test_private_max_min_and_sum_reductions(op, combine):
    source = f"""def f(double(M, N) A, double(N) x) -> (y) {{
      t(i) +=! A(i, j) * x(j)
      y(j) {op}=! A(i, j) * t(i)
    }}"""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((300, 200))
    x = rng.standard_normal(200)
    t = A @ x
    compiled_op = polyc.define(source)
    assert "parallel private: y" in compiled_op.compilation().ast_text
    np.testing.assert_allclose(compiled_op(A, x), combine(A * t[:, None], axis=0), rtol=1e-12)


def test_a_private_mark_is_proven_like_any_other():
    compilation = compiled(ATAX)
    tree = compilation.schedule.tree
    root = tree.get_root()
    mark = root.child(0)
    assert mark.get_type() == isl.schedule_node_type.mark
    # The same loop, claimed parallel with the wrong tensor private: refused.
    forged = mark.delete().insert_mark(decision_mark(PrivateAccumulators(("tmp",)))).get_schedule()
    with pytest.raises(InternalError, match="not parallel"):
        check_parallel(forged, compilation.dependences, compilation.program)


# The backward of `T0(i, k, j) = tanh(X0(i, j) + X1(j, k) + X3(k + 1))` (found by the
# fuzzer): the band (i, k) is parallel in i with private d_X1 and d_X3, and isl peels i = 0
# into a piece that starts with the k loop. That piece must run as it is: the band's marks
# on the k loop made it an OpenMP loop over k whose d_X3(k) read the contracted T0 of k - 1.
PEELED = """def peeled(double(I, J) X0, double(J, K) X1, double(K) X3, double(I, K - 1, J) d_T0)
    -> (double d_X0, double d_X1, double d_X3) {
  T0(i, k, j) = tanh(X0(i, j) + X1(j, k) + X3(k + 1)) where i in 0:I, k in 0:K - 1, j in 0:J
  d_X0(i, j) +=! d_T0(i, k, j) * (1.0 - T0(i, k, j) * T0(i, k, j))
      where i in 0:I, j in 0:J, k in 0:K - 1
  d_X1(j, k) +=! k < K - 1 ? d_T0(i, k, j) * (1.0 - T0(i, k, j) * T0(i, k, j)) : 0.0
      where j in 0:J, k in 0:K, i in 0:I
  d_X3(k) +=! k - 1 >= 0 ? d_T0(i, k - 1, j) * (1.0 - T0(i, k - 1, j) * T0(i, k - 1, j)) : 0.0
      where k in 0:K, i in 0:I, j in 0:J
}"""


@pytest.mark.needs_cc
@pytest.mark.parametrize("i, j, k", [(2, 2, 2), (1, 3, 4), (5, 2, 3), (9, 4, 7)])
def test_a_peeled_piece_without_the_parallel_loop_runs_as_it_is(i, j, k):
    rng = np.random.default_rng(i + 3 * j + 5 * k)
    X0, X1, X3 = rng.standard_normal((i, j)), rng.standard_normal((j, k)), rng.standard_normal(k)
    d_T0 = rng.standard_normal((i, k - 1, j))
    compiled_op = polyc.define(PEELED)
    assert "parallel private: d_X1, d_X3" in compiled_op.compilation().ast_text
    g = d_T0 * (1 - np.tanh(X0[:, None, :] + X1.T[None, :k - 1, :] + X3[None, 1:, None]) ** 2)
    d_X1, d_X3 = np.zeros((j, k)), np.zeros(k)
    d_X1[:, :k - 1], d_X3[1:] = g.sum(axis=0).T, g.sum(axis=(0, 2))
    expected = (g.sum(axis=1), d_X1, d_X3)
    for got, want in zip(compiled_op(X0, X1, X3, d_T0), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
