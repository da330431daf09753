"""The default fusion never takes a statement's vector loop, register block or jammed
rows away (polyc.scheduling.fusion_choice.lost_vector_loops): PolyBench's bicg, symm and trmm,
where fusing had run 20–45× slower than not fusing."""
import numpy as np
import pytest

import polyc
from polyc.scheduling.marks import mark_name, marks_by_statement

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
    assert ("would lose the vector loop, register block or jammed rows" in
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
