"""Folding a reduction's initialisation into its register block (polyc.scheduling.folding)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.codegen.c_expr import set_to_c
from polyc.compiler import frontend, generate
from polyc.options import Options
from polyc.explore.schedule_view import summarize_schedule
from polyc.machine.rules import register_block
from polyc.scheduling.folding import folded_inits
from polyc.scheduling.marks import RegisterBlock

# A product whose output rows (D) may be no wider than a register block.
NARROW = """def narrow(float(M, N, R) X, float(D, R) W) -> (Y) {
  Y(m, n, d) +=! X(m, n, r) * W(d, r)
}"""
NARROW_MAX = """def narrow_max(float(M, N, R) X, float(D, R) W) -> (Y) {
  Y(m, n, d) max=! X(m, n, r) * W(d, r)
}"""


def compiled(source):
    return generate(frontend(source), Options())


def test_the_register_mark_carries_the_block_that_folding_reads(machine):
    compilation = generate(frontend(NARROW), Options().with_(machine=machine))
    marks = summarize_schedule(compilation.schedule, compilation.program).marks
    blocks = [mark for mark in marks if isinstance(mark, RegisterBlock)]
    rows, columns = register_block(machine, 4)
    # one reduction loop (r); X and W read-only, d's range a box: the edge may move
    # back, within its columns (W's panel transposes W: polyc.scheduling.packed_copies)
    assert blocks == [RegisterBlock(rows, columns, 1, edge_moves_back=True,
                                    edge_within_columns=True)]
    fold = folded_inits(compilation.schedule.tree, compilation.dependences,
                        compilation.program)["S0"]
    assert fold.lanes == columns


def test_an_edge_block_moves_back_only_where_isl_shows_an_interval_of_columns():
    import dataclasses

    import islpy as isl
    from polyc.scheduling.band_members import Member
    from polyc.scheduling.register_blocks import edge_moves_back

    # unmerged: the test's triangle is written over the statement's own indices
    program = generate(frontend(NARROW), Options().with_(canonicalize=False)).program
    along_d = Member(2, True, {"S0": "d", "S0_init": "d"}, True)
    read_only = frozenset(program.op.tensors) - {"Y"}   # what the loops write
    assert edge_moves_back(along_d, program, read_only)
    # Were the columns a triangle (d <= m), moving back could leave the domain.
    S0 = "S0[m, n, d, r] : 0 <= m < M and 0 <= n < N and 0 <= d <= m and d < D and 0 <= r < R"
    triangle = isl.UnionSet(f"[M, N, R, D] -> {{ {S0} }}")
    triangular = dataclasses.replace(program, domain=triangle)
    assert not edge_moves_back(along_d, triangular, read_only)


def test_first_visits_start_from_the_identity_and_the_init_nest_is_skipped():
    compilation = compiled(NARROW)
    fold = folded_inits(compilation.schedule.tree, compilation.dependences,
                        compilation.program)["S0"]
    assert fold.init == "S0_init" and fold.vector_index == "d"
    first, _ = set_to_c(fold.first_visits, {})
    assert "== 0" in first                      # the first reduction tile
    skipped, _ = set_to_c(fold.skipped_inits, {})
    assert "R" in skipped                       # only where the reduction is not empty
    c = compilation.c_source.text
    assert f"if (!{skipped})" in c                # the init nest, guarded
    assert "D" in skipped                       # only where the output is one block wide
    assert c.count("polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;") >= 1


def test_a_window_sum_folds_at_every_width():
    # no operand is invariant along the vector: the fold's conditions name no width
    source = """def box(float(N, H, W) I) -> (O) {
      O(n, h, w) +=! I(n, h + r, w + s) where r in 0:3, s in 0:3
    }"""
    compilation = compiled(source)
    fold = folded_inits(compilation.schedule.tree, compilation.dependences,
                        compilation.program)["S0"]
    assert fold.vector_index == "w"
    skipped, _ = set_to_c(fold.skipped_inits, {})
    assert "W" not in skipped and "W" not in set_to_c(fold.first_visits, {})[0]
    # ... where a product's output keeps the width condition (NARROW's D, above)
    narrow = compiled(NARROW)
    kept = folded_inits(narrow.schedule.tree, narrow.dependences, narrow.program)["S0"]
    assert "D" in set_to_c(kept.skipped_inits, {})[0]


def test_a_fold_is_taken_only_where_every_register_mark_forms_a_block(monkeypatch):
    # Code generation decides before writing any C: a fold whose register marks would
    # not all become blocks is not taken (its init nest runs), never undone afterwards.
    import polyc.codegen.loop_nest as loop_nest

    folded = compiled(NARROW).c_source.text
    assert "polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;" in folded
    monkeypatch.setattr(loop_nest, "register_block_at", lambda emitter, loop: None)
    unfolded = compiled(NARROW).c_source.text
    assert "polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;" not in unfolded
    assert unfolded.count("polyc_acc") > 0  # the blocks themselves are still made


@pytest.mark.needs_cc
@pytest.mark.parametrize("source, identity", [(NARROW, 0.0), (NARROW_MAX, -np.inf)])
def test_an_empty_reduction_still_gets_its_identity(source, identity):
    op = polyc.define(source)
    X = np.ones((3, 5, 0), np.float32)
    W = np.ones((7, 0), np.float32)
    Y = np.full((3, 5, 7), 42.0, np.float32)
    op(X, W, out=Y)
    assert np.all(Y == identity)


@pytest.mark.needs_cc
@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 10), n=st.integers(1, 20), r=st.integers(0, 140),
       d=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_folded_products_match_numpy_on_both_sides_of_the_width_test(m, n, r, d, seed):
    # d up to the block's width folds (16 float32 lanes with AVX2, 32 with AVX-512),
    # wider does not; r > 128 spans two reduction tiles, so only the first visit
    # starts from the identity.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n, r)).astype(np.float32)
    W = rng.standard_normal((d, r)).astype(np.float32)
    Y = np.full((m, n, d), np.nan, np.float32)   # garbage the fold must never read
    polyc.define(NARROW)(X, W, out=Y)
    expected = np.einsum("mnr,dr->mnd", X.astype(np.float64), W.astype(np.float64))
    np.testing.assert_allclose(Y, expected, rtol=1e-4, atol=1e-4)


def test_set_to_c_names_the_iterators_it_uses():
    import islpy as isl
    text, used = set_to_c(isl.Set("[K] -> { [i0, i1, i2] : i2 = 0 and K > 0 }"), {"K": "K"})
    assert used == {"c2"} and "c2" in text and "K" in text
    assert set_to_c(isl.Set("{ [i0] : exists e : i0 = 2e }"), {}) is None


@pytest.mark.needs_cc
@pytest.mark.parametrize("model", ["zen3", "zen5"])
def test_an_output_exactly_one_block_wide_folds_and_a_wider_one_does_not(model):
    # The fold holds where `extent <= lanes` (a condition on the sizes, tested at run
    # time): a block as wide as the output has no init nest to load from
    # (kronecker3's 16-wide rows with AVX2's 16-lane blocks).
    import islpy as isl
    from polyc.machine import NAMED_MACHINES
    from polyc.machine.rules import register_block

    lanes = register_block(NAMED_MACHINES[model], 4)[1]
    op = polyc.define(NARROW, machine=model)
    fold = next(iter(op.compilation().folded.values()))

    def folds_at(d):
        sizes = isl.Set(f"[M, N, R, D] -> {{ : M = 3 and N = 4 and R = 150 and D = {d} }}")
        return not fold.first_visits.params().intersect_params(sizes).is_empty()

    assert folds_at(lanes) and not folds_at(lanes + 1)
    assert f"(-1 * D + {lanes} >= 0)" in op.compilation().c_source.text
    rng = np.random.default_rng(lanes)
    for d in (lanes, lanes + 1):
        X = rng.standard_normal((3, 4, 150)).astype(np.float32)
        W = rng.standard_normal((d, 150)).astype(np.float32)
        Y = np.full((3, 4, d), np.nan, np.float32)
        op(X, W, out=Y)
        expected = np.einsum("mnr,dr->mnd", X.astype(np.float64), W.astype(np.float64))
        np.testing.assert_allclose(Y, expected, rtol=1e-4, atol=1e-4)
