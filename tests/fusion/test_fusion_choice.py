"""The default fusion never takes a statement's vector loop or register block away
(polyc.scheduling.fusion_choice.lost_vector_loops): PolyBench's bicg, symm and trmm, where
fusing had run 20–45× slower than not fusing."""
import sys
from pathlib import Path

import numpy as np
import pytest

import polyc
from polyc.machine import NAMED_MACHINES
from polyc.poly.program import statement_names
from polyc.scheduling import fusion_choice
from polyc.scheduling.marks import PrivateAccumulators, mark_name, marks_by_statement
from polyc.scheduling.schedule_tree import outer_nests

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from kernels import BY_NAME  # noqa: E402

BICG = """def bicg(float(N, M) A, float(N) r, float(M) p) -> (s, q) {
  s(j) +=! r(i) * A(i, j)
  q(i) +=! A(i, j) * p(j)
}"""
SYMM = """def symm(float alpha, float beta, float(M, M) A, float(M, N) B, float(M, N) C) -> (D) {
  S(i, k) = k <= i ? A(i, k) : A(k, i)
  Cout(i, j) +=! S(i, k) * B(k, j)
  D(i, j) = alpha * Cout(i, j) + beta * C(i, j)
}"""
TRMM = """def trmm(float alpha, float(M, M) A, float(M, N) B) -> (Bout) {
  Lt(i, k) = k > i ? A(k, i) : 0
  P(i, j) +=! Lt(i, k) * B(k, j)
  Bout(i, j) = alpha * (P(i, j) + B(i, j))
}"""
VECTOR = {"simd", "simd-reduction", "register"}


def _references(name, args):
    a = [x.astype(np.float64) if isinstance(x, np.ndarray) else x for x in args]
    if name == "bicg":
        A, r, p = a
        return (r @ A, A @ p)
    if name == "symm":
        alpha, beta, A, B, C = a
        S = np.tril(A) + np.tril(A, -1).T
        return (alpha * (S @ B) + beta * C,)
    alpha, A, B = a
    return (alpha * (np.tril(A, -1).T @ B + B),)


def _arguments(name, rng, m, n):
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    if name == "bicg":
        return (f32(m, n), f32(m), f32(n))
    if name == "symm":
        return (1.5, 1.2, f32(m, m), f32(m, n), f32(m, n))
    return (1.5, f32(m, m), f32(m, n))


# trmm's Lt is forwarded into the product it feeds (polyc.rewrite.split_selects): what is
# left fuses without loss, and the default fuses it maximally.
@pytest.mark.parametrize("name, source, turned_down", [
    ("bicg", BICG, True), ("symm", SYMM, True), ("trmm", TRMM, False)])
def test_the_default_keeps_every_vector_loop_and_block_of_the_unfused_nests(name, source,
                                                                             turned_down):
    default = polyc.define(source).compilation()
    apart = polyc.define(source, fusion="min").compilation()
    fused = polyc.define(source, fusion="max").compilation()
    kept, separate = ({name: {mark_name(m) for m in marks}
                       for name, marks in marks_by_statement(c.schedule.tree).items()}
                      for c in (default, apart))
    deepest = max(len(s.indices) for s in default.program.statements)
    for statement in default.program.statements:
        if len(statement.indices) == deepest:
            assert separate[statement.name] & VECTOR <= kept[statement.name], statement.name
    if not turned_down:
        assert default.schedule.decision.startswith("maximal fusion")
        assert marks_by_statement(fused.schedule.tree) == marks_by_statement(
            default.schedule.tree)
        return
    # maximal fusion is what the default turned down, and says why (symm's select on the
    # indices is two triangles in the canonical form: maximal fusion would then shrink
    # the bands tiling needs before it took a vector loop)
    assert marks_by_statement(fused.schedule.tree) != marks_by_statement(default.schedule.tree)
    assert ("would lose the vector loop or register block" in
            default.schedule.decision or "maximal fusion would shrink the permutable bands"
            in default.schedule.decision)


@pytest.mark.needs_cc
@pytest.mark.parametrize("name, source", [("bicg", BICG), ("symm", SYMM), ("trmm", TRMM)])
@pytest.mark.parametrize("fusion", ["default", "max"])
def test_values(name, source, fusion):
    rng = np.random.default_rng(len(name))
    for m, n in [(1, 1), (7, 13), (37, 70)]:
        args = _arguments(name, rng, m, n)
        got = polyc.define(source, fusion=fusion)(*args)
        got = got if isinstance(got, tuple) else (got,)
        for actual, reference in zip(got, _references(name, args)):
            np.testing.assert_allclose(actual, reference, rtol=1e-4, atol=1e-4)


# A layer norm backward as a user writes it by hand (a benchmark kernel): row sums, then
# d_X, and the column sums d_gamma and d_beta over the rows.
LAYERNORM_BACKWARD = BY_NAME["layernorm_backward"].source


def test_row_sums_d_x_and_column_sums_run_in_one_parallel_loop_over_rows(machine):
    """isl's default fusion leaves row sums in a nest of their own (the nest of the
    column sums d_gamma and d_beta is not parallel as it is); the default fuses the nests
    along their loop over rows (polyc.scheduling.nest_fusion), parallel with private
    accumulators for the column sums: each row is read once, every statement keeps its
    vector loop. The row sums lose the eight rows jammed into them apart, which the
    default leaves to the cost model (one accumulator chain per row)."""
    default = polyc.define(LAYERNORM_BACKWARD, machine=machine).compilation()
    apart = polyc.define(LAYERNORM_BACKWARD, machine=machine, fusion="min").compilation()
    kept, separate = ({name: {mark_name(m) for m in marks}
                       for name, marks in marks_by_statement(c.schedule.tree).items()}
                      for c in (default, apart))
    private = {tensor for marks in marks_by_statement(default.schedule.tree).values()
               for mark in marks if isinstance(mark, PrivateAccumulators)
               for tensor in mark.tensors}
    assert private == {"d_gamma", "d_beta"}
    assert default.schedule.decision.startswith("isl's default fusion, outer loops fused")
    nests = [set(statement_names(nest.get_domain()))
             for nest in outer_nests(default.schedule.tree)]
    writer = {stmt.statement.tensor: stmt.name for stmt in default.program.statements
              if not stmt.is_init}
    one_walk = {writer[tensor] for tensor in ("a", "xs", "d_X", "d_gamma", "d_beta")}
    assert any(one_walk <= names for names in nests)
    for statement in default.program.statements:
        if len(statement.indices) == 2 and separate[statement.name] & VECTOR:
            # a vector loop still (a column sum's may be a sum's loop it joined)
            assert kept[statement.name] & VECTOR, statement.name


@pytest.mark.needs_cc
def test_layer_norm_backward_values():
    bench = BY_NAME["layernorm_backward"]
    rng = np.random.default_rng(5)
    for n, d in [(1, 1), (9, 13), (33, 70)]:
        args = bench.inputs({"N": n, "D": d}, rng)
        got = polyc.define(LAYERNORM_BACKWARD)(*args)
        for actual, reference in zip(got, bench.reference(*args), strict=True):
            np.testing.assert_allclose(actual, reference, rtol=1e-3, atol=1e-3)


LAYERNORM = BY_NAME["layernorm"].source


def test_a_fusion_that_walks_column_sums_down_their_columns_runs_their_nest_unfused(machine):
    """The layer norm backward polyc.grad derives: isl's default fusion runs the rows'
    statements in a few nests over tiles of rows, but fuses the column sums d_gamma and
    d_beta with their initialisations in a loop over columns, the rows inside it: no
    vector loop. The default keeps that fusion and schedules only the column sums' nest
    unfused (each a nest over tiles of rows with private accumulators and a vector loop)
    rather than giving up every fusion."""
    wrt = ("X", "gamma", "beta")
    # canonicalize=False: the backward as derived, each contribution to d_X and d_mu a
    # statement of its own (merged, isl's default fusion keeps every vector loop)
    default = polyc.grad(polyc.define(LAYERNORM, machine=machine, canonicalize=False),
                         wrt=wrt).compilation()
    apart = polyc.grad(polyc.define(LAYERNORM, machine=machine, fusion="min",
                                    canonicalize=False), wrt=wrt).compilation()
    decision = default.schedule.decision
    assert "isl's default fusion would lose the vector loop" in decision
    assert decision.startswith("isl's default fusion, ") and "the nests of" in decision
    writer = {stmt.statement.tensor: stmt.name for stmt in default.program.statements
              if not stmt.is_init}
    unfused = decision.split(" unfused")[0].split("the nests of ")[1].split(", ")
    assert {writer["d_gamma"], writer["d_beta"]} <= set(unfused)
    kept, separate = ({name: {mark_name(m) for m in marks}
                       for name, marks in marks_by_statement(c.schedule.tree).items()}
                      for c in (default, apart))
    for statement in default.program.statements:
        if len(statement.indices) == 2 and separate[statement.name] & VECTOR:
            # a vector loop still (a column sum's may be a sum's loop it joined)
            assert kept[statement.name] & VECTOR, statement.name
    assert len(outer_nests(default.schedule.tree)) < len(outer_nests(apart.schedule.tree))


@pytest.mark.needs_cc
def test_derived_layer_norm_backward_values():
    bench, forward = BY_NAME["layernorm_backward"], BY_NAME["layernorm"]
    rng = np.random.default_rng(6)
    backward = polyc.grad(polyc.define(LAYERNORM), wrt=("X", "gamma", "beta"))
    for n, d in [(1, 1), (9, 13), (33, 70)]:
        X, gamma, eps, d_Y, mu, ss = bench.inputs({"N": n, "D": d}, rng)
        beta = forward.inputs({"N": n, "D": d}, rng)[2]
        got = backward(X, gamma, beta, eps, d_Y)
        for actual, reference in zip(got, bench.reference(X, gamma, eps, d_Y, mu, ss),
                                     strict=True):
            np.testing.assert_allclose(actual, reference, rtol=1e-3, atol=1e-3)


def test_statements_that_all_join_one_group_cost_no_schedule_per_statement(monkeypatch):
    # Row sums of one input: the maximal fusion of all of them meets what each one's
    # joining asks, so fusion in groups adds no isl schedule of its own, however many.
    calls = []
    schedule = fusion_choice.isl_schedule
    monkeypatch.setattr(fusion_choice, "isl_schedule",
                        lambda *args, **kwargs: calls.append(args) or schedule(*args, **kwargs))
    counts, decisions = [], []
    for sums in (3, 9):
        calls.clear()
        body = "\n".join(f"  s{k}(n) +=! X(n, d) * {k + 1}" for k in range(sums))
        outputs = ", ".join(f"s{k}" for k in range(sums))
        op = polyc.define(f"def rows(float(N, D) X) -> ({outputs}) {{\n{body}\n}}",
                          machine=NAMED_MACHINES["zen3"])
        decisions.append(op.compilation().schedule.decision)
        counts.append(len(calls))
    assert counts[0] == counts[1] <= 4
    assert all(decision.startswith("maximal fusion") for decision in decisions)
