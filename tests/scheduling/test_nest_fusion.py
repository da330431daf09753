"""Consecutive loop nests fused along their outer loop (polyc.scheduling.nest_fusion): a
layer norm backward walks its rows once, in parallel with private accumulators for its
column sums; a fusion that would run a dependence backwards is not made."""
import sys
from pathlib import Path

import numpy as np
import pytest

import polyc
from polyc.compiler import generate
from polyc.poly.program import statement_names
from polyc.scheduling.marks import PrivateAccumulators, marks_by_statement
from polyc.scheduling.nest_fusion import fuse_outer_loops
from polyc.scheduling.schedule_tree import isl_schedule, outer_nests, scheduling_constraints

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from kernels import BY_NAME  # noqa: E402

LAYERNORM = BY_NAME["layernorm"].source
GESUMMV = """def gesummv(float alpha, float beta, float(N, N) A, float(N, N) B, float(N) x) -> (y) {
  t(i) +=! A(i, j) * x(j)
  y(i) +=! B(i, j) * x(j)
  y(i) = alpha * t(i) + beta * y(i)
}"""


def _isl_default(op: polyc.Operator):
    compilation = generate(op.ir, op.options)
    program, deps = compilation.program, compilation.dependences
    tree = isl_schedule(scheduling_constraints(program, deps, program.domain), program)
    return tree, program, deps


def _writers(compilation) -> dict[str, str]:
    return {stmt.statement.tensor: stmt.name for stmt in compilation.program.statements
            if not stmt.is_init}


def test_the_layer_norm_backward_reads_its_rows_in_one_parallel_loop(machine):
    """The residual backward (what polyc.to_torch runs): isl's default fusion runs the rows'
    passes in one nest and d_X with the column sums d_gamma, d_beta in another; fused
    along the rows, d_X and the row sums it needs share one parallel loop, the column
    sums accumulating privately per thread."""
    _, backward = polyc.grad_with_residuals(polyc.define(LAYERNORM, machine=machine))
    compilation = backward.compilation()
    assert compilation.schedule.decision.startswith("isl's default fusion, outer loops fused")
    writers = _writers(compilation)
    nests = [set(statement_names(nest.get_domain()))
             for nest in outer_nests(compilation.schedule.tree)]
    together = {writers[t] for t in ("d_X", "d_gamma", "d_beta")}
    holding = [names for names in nests if together <= names]
    assert len(holding) == 1
    assert any(len(compilation.program.statement(name).indices) == 2
               and compilation.program.statement(name).statement.indices == ("n",)
               for name in holding[0]), "a row sum runs in the same loop"
    private = {tensor for marks in marks_by_statement(compilation.schedule.tree).values()
               for mark in marks if isinstance(mark, PrivateAccumulators)
               for tensor in mark.tensors}
    assert {"d_gamma", "d_beta"} <= private


def test_nests_are_fused_only_where_every_dependence_keeps_its_order():
    """``c(i)`` reads ``s`` of the mirrored row: in one loop over rows, row 0 would read
    ``s(N - 1)`` before the last row wrote it, so the nests stay apart."""
    op = polyc.define("""def mirrored(float(N, M) A) -> (c) {
      s(i) +=! A(i, j)
      c(i) +=! A(i, j) * s(N - 1 - i)
    }""")
    tree, program, deps = _isl_default(op)
    fused = fuse_outer_loops(tree, deps, program)
    if fused is not None:
        for nest in outer_nests(fused):
            assert not {"S0", "S1"} <= set(statement_names(nest.get_domain()))


def test_a_single_nest_has_nothing_to_fuse():
    op = polyc.define("""def rows(float(N, M) A) -> (s) {
      s(i) +=! A(i, j) * A(i, j)
    }""")
    tree, program, deps = _isl_default(op)
    assert fuse_outer_loops(tree, deps, program) is None


def test_a_parallel_loop_peeled_around_its_first_iteration_still_runs_in_parallel(machine):
    """gesummv's residual backward fuses into one loop over rows with private
    accumulators whose initialisations isl peels before the loop, in a block of their
    own around it: the loop is still the band's parallel loop in the C."""
    _, backward = polyc.grad_with_residuals(polyc.define(GESUMMV, machine=machine))
    compilation = backward.compilation()
    assert compilation.schedule.decision.startswith("isl's default fusion, outer loops fused")
    assert "#pragma omp for" in compilation.c_source.text


@pytest.mark.needs_cc
@pytest.mark.parametrize("n", [1, 9, 33])
def test_gesummv_residual_backward_values(n):
    rng = np.random.default_rng(n)
    forward, backward = polyc.grad_with_residuals(polyc.define(GESUMMV))
    alpha, beta = 1.5, -0.7
    A, B = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    x, d_y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    _, *residuals = forward(alpha, beta, A, B, x)
    d_alpha, d_beta, d_A, d_B, d_x = backward(alpha, beta, A, B, x, d_y, *residuals)
    A64, B64, x64, d_y64 = (v.astype(np.float64) for v in (A, B, x, d_y))
    np.testing.assert_allclose(d_alpha, d_y64 @ (A64 @ x64), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d_beta, d_y64 @ (B64 @ x64), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d_A, alpha * np.outer(d_y64, x64), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d_B, beta * np.outer(d_y64, x64), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d_x, (alpha * A64 + beta * B64).T @ d_y64, rtol=1e-4,
                               atol=1e-4)
