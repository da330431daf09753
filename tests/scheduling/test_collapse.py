"""Collapsed parallel loops: the coincident tile loops after the parallel one are shared
out with it (``collapse N`` marks, proven like the parallel ones)."""
import islpy as isl
import numpy as np
import pytest

import polyc
from polyc.compiler import frontend, generate
from polyc.errors import InternalError
from polyc.options import Options
from polyc.scheduling.marks import Collapse, decision_mark
from polyc.scheduling.schedule import check_parallel, collapsible_members

MATMUL = """def matmul(float(M, K) A, float(K, N) B) -> (C) {
  C(m, n) +=! A(m, k) * B(k, n)
}"""

# `C(m, n)` is carried along `m` by the running sum over rows: only `n` is parallel.
PREFIX_SUM = """def rows(float(M, N) A) -> (C) {
  C(m, n) = A(m, n)
  C(m, n) = C(m - 1, n) + C(m, n) where m in 1:M
}"""


def compiled(source, **options):
    return generate(frontend(source), Options().with_(**options))


def test_matmul_row_and_column_tiles_are_shared_out_together():
    # Both loops are shared out, in boxes of rows and columns (polyc.scheduling.threads).
    compilation = compiled(MATMUL)
    assert "// collapse 2" in compilation.ast_text and "// threads 0" in compilation.ast_text
    assert "polyc_thread_grid(omp_get_num_threads(), 2," in compilation.c_source.text


def test_the_innermost_loop_is_never_collapsed():
    # A 3-deep parallel band; its innermost loop stays a plain loop for the C compiler
    # to vectorise.
    source = "def scale(float(A, B, C) X) -> (Y) { Y(a, b, c) = X(a, b, c) * 2 }"
    compilation = compiled(source)
    text = compilation.c_source.text
    assert "collapse(2)" in text and "collapse(3)" not in text
    assert compilation.ast_text.count("// collapse 2") == 1


def test_a_tiled_transposing_copy_collapses_its_tile_loops_only():
    # The copy of `X(b, k, m)` with k last (the register block broadcasts X along its
    # rows m) is tiled along m and k: its three tile loops are shared out together, its
    # sub-tile loops (two; full sub-tiles are transposed blocks) and the code of the
    # edges (two loops over half-size blocks, two over the elements around them) stay
    # inside.
    source = """def f(float(B, K, M) X, float(B, K, N) Y) -> (Z) {
      Z(b, m, n) +=! X(b, k, m) * Y(b, k, n)
    }"""
    text = compiled(source).c_source.text
    copy = text[:text.index("X_t021[((t0) * M + t2) * K + t1] = X[")]
    copy = copy[copy.rindex("#pragma omp for"):]
    assert "collapse(3)" in copy and copy.count("for (") == 3 + 2 + 2 + 2


def test_a_band_with_one_parallel_member_is_not_collapsed():
    compilation = compiled(PREFIX_SUM)
    assert "collapse" not in compilation.ast_text
    assert "collapse(" not in compilation.c_source.text


def test_a_collapse_mark_is_proven_like_any_other():
    compilation = compiled(MATMUL)
    root = compilation.schedule.tree.get_root()
    parallel = root.child(0)
    collapse = parallel.child(0)
    assert collapse.mark_get_id().get_name() == "collapse 2"
    # Claiming the reduction's tile loop (the third member) parallel too: refused.
    forged = collapse.delete().insert_mark(decision_mark(Collapse(3))).get_schedule()
    with pytest.raises(InternalError, match="carry dependences"):
        check_parallel(forged, compilation.dependences, compilation.program)


@pytest.mark.needs_cc
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (7, 3, 300), (300, 5, 7), (131, 130, 129),
                                     (0, 4, 4), (260, 0, 33)])
def test_collapsed_matmul_matches_numpy(m, k, n):
    rng = np.random.default_rng(m * 31 + n)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    expected = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(polyc.define(MATMUL)(A, B), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_collapsed_loops_keep_contracted_temporaries_private():
    # A batched softmax: the batch and row loops collapse, and the temporaries shrink to
    # a row (`e`) and scalars declared inside each (batch, row) iteration of a thread.
    source = """def softmax3(float(B, N, D) X) -> (Y) {
      mx(b, i) max=! X(b, i, d)
      e(b, i, d) = exp(X(b, i, d) - mx(b, i))
      s(b, i) +=! e(b, i, d)
      Y(b, i, d) = e(b, i, d) / s(b, i)
    }"""
    compilation = compiled(source)
    assert "collapse(2)" in compilation.c_source.text
    assert set(compilation.contractions) == {"mx", "e", "s"}
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3, 70, 50)).astype(np.float32)
    wide = X.astype(np.float64)
    expected = np.exp(wide - wide.max(axis=2, keepdims=True))
    expected /= expected.sum(axis=2, keepdims=True)
    np.testing.assert_allclose(polyc.define(source)(X), expected, rtol=1e-5, atol=1e-6)


def _band(domain: str, members: str):
    schedule = isl.Schedule.from_domain(isl.UnionSet(domain))
    return schedule.get_root().child(0).insert_partial_schedule(isl.MultiUnionPwAff(members))


@pytest.mark.parametrize("domain, members, count, collapsible", [
    ("[N] -> { S[i, j] : 0 <= i < N and 0 <= j < N }",
     "[N] -> [{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", 2, 2),          # a box
    ("[N] -> { S[i, j] : 0 <= i < N and 0 <= j <= i }",
     "[N] -> [{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", 2, 1),          # a triangle
    ("[N] -> { S[i, j] : 0 <= i < N and j = 0 }",
     "[N] -> [{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]", 2, 1),          # no second loop
    ("[N] -> { S[i, j, k] : 0 <= i, j, k < N }",
     "[N] -> [{ S[i, j, k] -> [(i)] }, { S[i, j, k] -> [(j)] }, { S[i, j, k] -> [(k)] }]",
     3, 3),
    ("[N] -> { S[i, j, k] : 0 <= i, j < N and 0 <= k <= j }",
     "[N] -> [{ S[i, j, k] -> [(i)] }, { S[i, j, k] -> [(j)] }, { S[i, j, k] -> [(k)] }]",
     3, 2),
])
def test_collapse_depth_is_proven_on_the_bands_image(domain, members, count, collapsible):
    assert collapsible_members(_band(domain, members), count) == collapsible
