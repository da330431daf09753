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
