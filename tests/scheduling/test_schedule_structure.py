"""Structure of the schedules polyc builds: fusion, distribution, tiling, marks, legality."""
import dataclasses
import re

import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.machine import NAMED_MACHINES
from polyc.machine.rules import (ROW_TILES, panel_budget, panel_depth, register_block,
                                 streamed_depth, tile_budget, transpose_subtile,
                                 transpose_tile)
from polyc.options import Options
from polyc.scheduling.cache_model import Footprint, square_tile, tile_sizes
from polyc.scheduling.schedule import check_legality
from c_text import reduction_loops
from corpus import CORPUS

SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  row_sum(n) +=! exp(X(n, d) - row_max(n))
  Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
}"""
MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
LAYERNORM = """def layernorm(float(N, D) X, float(D) gamma, float(D) beta, float eps) -> (Y) {
  mean(n) +=! X(n, d) / D
  var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) / D
  Y(n, d) = (X(n, d) - mean(n)) * rsqrt(var(n) + eps) * gamma(d) + beta(d)
}"""


def compiled(source, **options):
    return generate(frontend(source), Options().with_(**options))


def top_level_loops(ast_text: str) -> list[str]:
    return [line for line in ast_text.splitlines() if line.startswith("for ")]


@pytest.mark.parametrize("source", [SOFTMAX, LAYERNORM])
def test_row_chains_are_one_parallel_loop_nest_with_vector_passes(source):
    compilation = compiled(source)
    ast = compilation.ast_text
    assert "// parallel" in ast.split("\nfor", 1)[0] and len(top_level_loops(ast)) == 1
    c = compilation.c_source.text
    # one parallel row loop (a region with a row buffer per thread where softmax's
    # exponentials are computed once into one, polyc.rewrite.common_values)
    assert c.count("#pragma omp for") == 1
    assert len(reduction_loops(c)) == 2     # two row reductions, vectorised
    assert "#pragma omp simd\n" in c              # the elementwise pass


def test_without_fusion_the_passes_are_separate_nests():
    ast = compiled(SOFTMAX, fusion="min").ast_text
    assert ast.count("// parallel") >= 3


def test_matmul_is_tiled_and_register_blocked(machine):
    compilation = compiled(MATMUL, machine=machine)
    tree = str(compilation.schedule)
    assert 'mark: "register"' in tree and 'mark: "simd"' in tree and 'mark: "parallel"' in tree
    c = compilation.c_source.text
    rows, columns = register_block(machine, 4)
    assert f"float polyc_acc[{rows}][{columns}]" in c
    assert "polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] +" in c


CONV = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
}"""


def tile_of(schedule: str, index: str) -> int:
    """The tile size of ``index`` in a printed schedule (1: not tiled)."""
    found = re.search(rf"\({index} - \({index}\) mod (\d+)\)", schedule)
    return int(found.group(1)) if found else 1


def test_innermost_block_reduction_runs_a_panel_depth_per_visit(machine):
    # A convolution's 7-member band has small tiles; its channel loop, innermost in the
    # register block (the windows r, s go outside), still gets BLIS's panel depth.
    compilation = compiled(CONV, machine=machine)
    depth = panel_depth(machine, register_block(machine, 4)[1], 4)
    assert tile_of(str(compilation.schedule), "c") == depth


def test_convolution_tiles_few_images_and_more_output_rows(machine):
    # Along the batch only the small filter is reused; output rows reuse the input's
    # rows (a window) and the filter. A cube tile gave both 8 (conv2d 12.8 ms; 11.3 ms
    # with the batch tile at 2).
    schedule = str(compiled(CONV, machine=machine).schedule)
    assert tile_of(schedule, "n") < tile_of(schedule, "h")


def test_footprint_counts_a_sliding_window_as_a_sum():
    # I(n, c, h + r) under the band (n, h, r, c)
    image = Footprint((((0, 1),), ((3, 1),), ((1, 1), (2, 1))))
    assert image.elements([2, 8, 3, 16]) == 2 * 16 * (8 + 3 - 1)
    strided = Footprint((((0, 2), (1, 1)),))  # X(2 i + j)
    assert strided.elements([4, 5]) == 2 * 3 + 4 + 1


MATMUL_FOOTPRINTS = [Footprint((((0, 1),), ((2, 1),))),   # A(i, k)
                     Footprint((((2, 1),), ((1, 1),))),   # B(k, j)
                     Footprint((((0, 1),), ((1, 1),)))]   # C(i, j)


def test_matmul_tiles_grow_from_one_register_block_to_a_cube():
    tiles = tile_sizes(MATMUL_FOOTPRINTS, start=[8, 32, 128], largest=[128, 128, 128],
                       element_bytes=4, budget=512 * 1024)
    assert tiles == [128, 128, 128]
    small = tile_sizes(MATMUL_FOOTPRINTS, start=[1, 1, 1], largest=[256] * 3,
                       element_bytes=4, budget=3 * 16 * 16 * 4)
    assert small == [16, 16, 16]


def test_streamed_rows_do_not_count_against_the_cache():
    # A register block's rows (8 at a time) stream: the cache holds one block's rows of
    # A and C, so the rows grow to their bound while the budget still holds a cube.
    tiles = tile_sizes(MATMUL_FOOTPRINTS, start=[8, 32, 128], largest=[512, 128, 128],
                       element_bytes=4, budget=512 * 1024, streams={0: 8})
    assert tiles == [512, 128, 128]
    counted = tile_sizes(MATMUL_FOOTPRINTS, start=[8, 32, 128], largest=[512, 128, 128],
                         element_bytes=4, budget=512 * 1024)
    assert counted[0] < 512 and 4 * (counted[0] * 128 * 2 + 128 * 128) <= 512 * 1024


def test_matmul_rows_span_several_cubes_and_convolution_rows_do_not(machine):
    # Matmul's register block rows are the outermost loop of its tile: they grow by whole
    # blocks to ROW_TILES cube tiles (the cube: the square tile that fits the budget). A
    # convolution runs image rows outside its block of output channels, which then count
    # in full.
    cube = square_tile(MATMUL_FOOTPRINTS, [True] * 3, 4, tile_budget(machine))
    rows = register_block(machine, 4)[0]
    expected = rows
    while expected * 2 <= ROW_TILES * cube:
        expected *= 2
    matmul = str(compiled(MATMUL, machine=machine).schedule)
    assert tile_of(matmul, "m") == expected > cube
    # A convolution's band holds more arrays than matmul's: its cube is no larger.
    conv = str(compiled(CONV, machine=machine).schedule)
    assert tile_of(conv, "k") <= max(rows, cube)


def test_streamed_rows_run_deeper_reductions_unless_a_factor_panel_would_not_fit(machine):
    # Streamed rows keep only the broadcast rows in L1: the block visits the reduction
    # in deeper steps (fewer loads and stores of its accumulators)...
    rows, columns = register_block(machine, 4)
    depth = panel_depth(machine, columns, 4)
    matmul = str(compiled(MATMUL, machine=machine).schedule)
    deeper = streamed_depth(machine, 4, depth, tile_of(matmul, "m"), has_row_factor=False)
    assert tile_of(matmul, "k") == deeper >= depth
    assert rows * deeper * 4 <= machine.l1 // 2          # the broadcast rows fit half of L1
    # ... but a row factor's panel holds the tile's rows × those steps, within its budget.
    scaled = str(compiled(MATMUL.replace("A(m, k) * B", "(A(m, k) + 2.5) * B"),
                          machine=machine).schedule)
    assert depth <= tile_of(scaled, "k") <= deeper
    assert tile_of(scaled, "m") * tile_of(scaled, "k") * 4 <= panel_budget(machine)
    assert "pack S0 (A(m, k) + 2.5)" in scaled


@pytest.mark.parametrize("name, l1, deeper", [
    ("zen5", None, 512),      # 8 rows × 512 steps × 4 B = 16 KiB: within half of 48 KiB
    ("zen3", None, 512),      # 6 × 512 × 4 = 12 KiB: within half of 32 KiB
    ("zen3", 16 * 1024, 256),  # 6 × 512 × 4 would pass half of 16 KiB
])
def test_streamed_depth_doubles_while_the_broadcast_rows_fit_half_of_l1(name, l1, deeper):
    machine = NAMED_MACHINES[name]
    if l1 is not None:
        machine = dataclasses.replace(machine, l1=l1)
    depth = panel_depth(machine, register_block(machine, 4)[1], 4)
    assert streamed_depth(machine, 4, depth, 1024, has_row_factor=False) == deeper
    # A row factor's buffer of 1024 rows × the depth passes the panel budget: no deeper.
    assert streamed_depth(machine, 4, depth, 1024, has_row_factor=True) == depth


def test_equal_gains_grow_the_smaller_then_the_inner_tile():
    """Y(m, n0, n1, d) +=! X(m, n0, n1, r) * W(d, r): m, n0 and n1 gain alike, so the
    tile stays balanced and grows the innermost of them last (16 x 16 x 4 had shared
    cache sets along m and run 3.2x slower)."""
    kronecker = [Footprint((((0, 1),), ((1, 1),), ((2, 1),), ((4, 1),))),   # X
                 Footprint((((3, 1),), ((4, 1),))),                        # W
                 Footprint((((0, 1),), ((1, 1),), ((2, 1),), ((3, 1),)))]  # Y
    tiles = tile_sizes(kronecker, start=[8, 1, 1, 32, 128], largest=[16, 16, 16, 32, 128],
                       element_bytes=4, budget=1 << 20)
    assert tiles == [8, 8, 16, 32, 128]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 2)),
                                  min_size=1, max_size=2), min_size=1, max_size=3),
                min_size=1, max_size=4),
       st.lists(st.sampled_from([1, 2, 8]), min_size=4, max_size=4),
       st.integers(12, 18))
def test_tile_sizes_stop_at_a_budgeted_local_optimum(arrays, start, budget_log):
    footprints = [Footprint(tuple(tuple(dim) for dim in dims)) for dims in arrays]
    largest = [64, 64, 64, start[3]]  # the last member is fixed
    budget = 2 ** budget_log

    def size(tiles):
        return 4 * sum(f.elements(tiles) for f in footprints)

    def cost(tiles):
        points = 1
        for t in tiles:
            points *= t
        return size(tiles) / points

    tiles = tile_sizes(footprints, start, largest, 4, budget)
    assert all(s <= t <= max(s, high) for s, t, high in zip(start, tiles, largest))
    assert tiles[3] == start[3]
    if size(start) <= budget:
        assert size(tiles) <= budget
    for member in range(4):  # no single doubling left that fits and saves traffic
        trial = list(tiles)
        trial[member] *= 2
        assert trial[member] > largest[member] or size(trial) > budget \
            or cost(trial) >= cost(tiles)


@pytest.mark.parametrize("l1, columns, element, depth", [
    (32 * 1024, 32, 4, 128),     # AVX-512 float32: 128 steps × 32 lanes = 16 KiB
    (48 * 1024, 32, 4, 128),     # a power of two that fits
    (32 * 1024, 16, 8, 128),
    (32 * 1024, 16, 4, 256),     # at most 256
    (1024, 32, 4, 8),            # at least 8
])
def test_panel_depth_fills_half_of_l1(l1, columns, element, depth):
    machine = dataclasses.replace(NAMED_MACHINES["zen5"], l1=l1)
    assert panel_depth(machine, columns, element) == depth


@pytest.mark.parametrize("name, block", [("zen3", (6, 16)), ("zen5", (8, 32)),
                                         ("skylake-avx512", (8, 16)), ("x86-64", (6, 8))])
def test_register_blocks_leave_three_registers_free(name, block):
    # Two vectors per row; rows as many as leave room for two streamed vectors and a
    # broadcast, at most eight: 16 registers give 6 rows, 32 give 8.
    assert register_block(NAMED_MACHINES[name], 4) == block
    assert register_block(NAMED_MACHINES[name], 8) == (block[0], block[1] // 2)


def test_legality_check_rejects_a_reversed_schedule():
    compilation = compiled(MATMUL, optimize=False)
    reversed_map = isl.UnionMap(
        "[M, K, N] -> { S0[m, n, k] -> [m, n, -k]; S0_init[m, n] -> [m, n, 1] }")
    with pytest.raises(AssertionError, match="illegal schedule"):
        check_legality(reversed_map, compilation.dependences, compilation.program)


def test_every_schedule_is_checked():
    compilation = compiled(SOFTMAX)
    check_legality(compilation.schedule.schedule_map, compilation.dependences,
                   compilation.program)


def test_bias_relu_epilogue_runs_inside_the_contraction_tile():
    source = """def fc(float(B, M) I, float(N, M) W, float(N) bias) -> (O) {
      O(b, n) +=! I(b, m) * W(n, m)
      O(b, n) = fmax(O(b, n) + bias(n), 0)
    }"""
    compilation = compiled(source)
    ast = compilation.ast_text
    lines = ast.splitlines()
    # The contraction with its epilogue in one nest, after W's transposed copy (L0)
    # unless the panels transpose W.
    copies = sum(s.name.startswith("L") for s in compilation.op.statements)
    assert ast.count("// parallel") == 1 + copies
    tile_loop = next(k for k, line in enumerate(lines) if re.search(r"c2 \+= \d+", line))
    epilogues = [k for k, line in enumerate(lines) if "S1(" in line]
    indent = len(lines[tile_loop]) - len(lines[tile_loop].lstrip())
    assert epilogues and all(k > tile_loop for k in epilogues)
    assert all(len(lines[k]) - len(lines[k].lstrip()) > indent for k in epilogues)


def test_initialisation_reduction_and_epilogue_are_three_nests_in_the_tile():
    # Grouped by the loops they walk, the initialisation and the epilogue formed one
    # group in a cycle with the reduction; fused, isl peeled the first step of every
    # reduction tile into a loop outside the register block (mlp 8.5 -> 8.0 ms).
    source = """def fc(float(B, M) I, float(M, N) W, float(N) bias) -> (O) {
      O(b, n) +=! I(b, m) * W(m, n)
      O(b, n) = fmax(O(b, n) + bias(n), 0)
    }"""
    tree = str(compiled(source).schedule)
    nests = re.findall(r'- filter: "[^"]*\{ (S\w+)\[', tree)
    assert nests == ["S0_init", "S0", "S1"]
    reduction = tree[tree.index('- filter: "[B, M, N] -> { S0['):]
    assert 'mark: "register"' in reduction.split("- filter:")[1]


def test_independent_statements_sharing_inputs_are_fused_horizontally():
    source = """def moments(float(N, D) X) -> (mean, var) {
      mean(n) +=! X(n, d) / D
      var(n) +=! X(n, d) * X(n, d) / D
    }"""
    compilation = compiled(source)
    text = compilation.c_source.text
    assert text.count("#pragma omp for") == 1
    # one vector loop over the row, an accumulator for each sum (vector_passes)
    assert reduction_loops(text) == [("polyc_part0", "polyc_part1")]
    assert not compilation.dependences.dep_reuse.is_empty()
    unfused = compiled(source, fusion="min").c_source.text
    assert unfused.count("#pragma omp for") >= 2  # X read once per nest


def test_register_block_rows_share_the_streamed_operand(machine):
    # Z(b, m, n): the rows of a register block must be m (Y_t does not depend on m),
    # not the batch b (each batch has its own matrices).
    source = """def tbmm(float(B, M, K) X, float(B, N, K) Y) -> (Z) {
      Z(b, m, n) +=! X(b, m, k) * Y(b, n, k)
    }"""
    compilation = compiled(source, machine=machine)
    # Y's panels are packed with n last, transposing Y (its layout copy dropped)
    assert "polyc_panel_Y[" in compilation.c_source.text and "Y_t021" not in compilation.op.tensors
    assert f"float polyc_acc[{register_block(machine, 4)[0]}][" in compilation.c_source.text
    ast = compilation.ast_text
    assert "S0(c0, " in ast                                 # b is a plain outer loop


LAYER = """def layer(float(B, L, K) X, float(K, N) W) -> (Y) {
  Y(b, l, n) +=! X(b, l, k) * W(k, n)
}"""
KRONECKER = """def kron(float(M, N0, N1, R) X, float(D, R) W) -> (Y) {
  Y(m, n0, n1, d) +=! X(m, n0, n1, r) * W(d, r)
}"""


def register_rows(ast: str) -> str:
    """The size parameter bounding the register block's row loop in a printed AST."""
    loop = ast.split("// register\n", 1)[1].splitlines()[0]
    return re.search(r"min\(\d+, (\w+) - ", loop).group(1)


def test_a_layer_over_a_batch_is_a_matmul_over_its_merged_rows(machine):
    # b and l move together (X and Y hold them adjacent, over their whole extents): one
    # index over B * L rows, and the layer gets exactly matmul's schedule.
    layer = compiled(LAYER, machine=machine)
    matmul = compiled(MATMUL, machine=machine)
    assert str(layer.op).count("+=!") == 1 and "Y_m(bl, n) +=! X_m(bl, k) * W(k, n)" in str(
        layer.op)
    schedule, reference = str(layer.schedule), str(matmul.schedule)
    assert [tile_of(schedule, i) for i in ("bl", "n", "k")] == [
        tile_of(reference, i) for i in "mnk"]
    assert register_rows(layer.ast_text) == "B_L"


def test_a_layer_over_a_batch_streams_its_rows_as_matmul_does(machine):
    # Unmerged (canonicalize=False): W varies only with the block's columns and
    # reduction: its panel serves every row of every image, so the batch b is a plain
    # loop, not a tile that would cut the streamed rows into cubes, and the layer gets
    # matmul's tiles. Its rows are l, X's rows.
    layer = compiled(LAYER, machine=machine, canonicalize=False)
    matmul = str(compiled(MATMUL, machine=machine).schedule)
    schedule = str(layer.schedule)
    assert tile_of(schedule, "b") == 1 and "S0(c0, " in layer.ast_text
    assert [tile_of(schedule, i) for i in "lnk"] == [tile_of(matmul, i) for i in "mnk"]
    assert register_rows(layer.ast_text) == "L"


def test_register_block_rows_are_the_operand_rows_nearest_in_memory(machine):
    # Unmerged (canonicalize=False): m, n0 and n1 all qualify as rows (X varies along
    # them, W does not): n1, X's innermost, makes each block's rows neighbouring lines;
    # m and n0 are plain loops. (Merged, m, n0 and n1 are one index.)
    compilation = compiled(KRONECKER, machine=machine, canonicalize=False)
    assert register_rows(compilation.ast_text) == "N1"
    schedule = str(compilation.schedule)
    assert tile_of(schedule, "m") == tile_of(schedule, "n0") == 1


@pytest.mark.needs_cc
@pytest.mark.parametrize("source, shapes, formula", [
    (LAYER, [(3, 37, 19), (19, 21)], "blk,kn->bln"),
    (KRONECKER, [(2, 3, 29, 16), (16, 16)], "mabr,dr->mabd"),
    (KRONECKER, [(3, 2, 5, 7), (9, 7)], "mabr,dr->mabd"),
])
def test_streamed_layers_match_numpy(source, shapes, formula):
    rng = np.random.default_rng(11)
    inputs = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    expected = np.einsum(formula, *(x.astype(np.float64) for x in inputs))
    np.testing.assert_allclose(polyc.define(source)(*inputs), expected, rtol=1e-4, atol=1e-4)


def test_layout_copies_follow_the_loops_reductions_then_vector():
    # Unmerged (canonicalize=False): B(d, f, c, e) is copied as B_t(c, e, f, d): output
    # index c, then the reductions e, f in the statement's order (f innermost in the
    # block), d last. The block's steps along f read rows 24 elements apart, not 24³.
    source = """def tc(float(SA, SE, SB, SF) A, float(SD, SF, SC, SE) B) -> (C) {
      C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e)
    }"""
    compilation = compiled(source, canonicalize=False)
    text = compilation.c_source.text
    assert "B_t2310[(((c) * SE + e) * SF + f) * SD + d]" in text
    assert "B_t2310[(((t2) * SE + t3) * SF + t1) * SD + t0] = B[" in text


def test_an_operand_read_across_the_block_rows_is_copied_with_the_reduction_last(machine):
    # A(k, m) has no vector index: the register block reads it along its rows, a line of
    # A per reduction step, a row of A apart. Copied as A_t(m, k), each row streams
    # along k. Read in the loops' order (a plain matmul's A(m, k)), nothing is copied.
    source = "def f(float(K, M) A, float(K, N) B) -> (C) { C(m, n) +=! A(k, m) * B(k, n) }"
    compilation = compiled(source, machine=machine)
    text = compilation.c_source.text
    assert [t.name for t in compilation.op.temporaries] == ["A_t10"]
    assert "A_t10[(t1) * K + t0] = A[(t0) * M + t1]" in text
    assert f"float polyc_acc[{register_block(machine, 4)[0]}][" in text
    assert "A_t10[(m) * K + k]" in text
    # only the copy reads A (its loop, and its full blocks' addresses)
    assert text.count("A[") == text.count("= A[(t0) * M + t1]") + text.count("&A[(t0) * M + t1]")
    assert compiled(MATMUL, machine=machine).op.temporaries == ()
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((37, 50)), rng.standard_normal((37, 70))
    np.testing.assert_allclose(polyc.define(source)(A.astype(np.float32), B.astype(np.float32)),
                               A.T @ B, rtol=1e-4, atol=1e-4)


def test_a_convolution_input_is_copied_with_its_channels_inside_the_image_rows():
    # I(n, c, h + r, w + s): the block's innermost reduction is c (the window offsets
    # r, s go outside it), so the copy puts c after h + r: steps a row apart.
    text = compiled(CONV).c_source.text
    assert re.search(r"I_t0213\[\(\(\(n\) \* H \+ \(?h \+ r\)?\) \* C \+ c\) \* W \+", text)
    assert "I_t0213[(((t0) * H + t2) * C + t1) * W + t3] = I[" in text
    # The filter F(k, c, r, s), read along the block's rows k, is copied with c last too.
    assert "F_t0231[(((t0) * R + t2) * S + t3) * C + t1] = F[" in text
    # A pooling reads I once per output element (all its indices): no copy.
    pooling = ("def pool(float(N, C, H, W) I) -> (O) "
               "{ O(n, c, h, w) max=! I(n, c, h + r, w + s) where r in 0:3, s in 0:3 }")
    assert compiled(pooling).op.temporaries == ()


STENCIL = """def box(float(N, H, W) I) -> (O) {
  O(n, h, w) +=! I(n, h + r, w + s) where r in 0:3, s in 0:3
}"""


def test_a_window_sum_keeps_its_sums_in_registers(machine):
    # No operand is invariant along the vector (nothing is reused across a block's rows),
    # but a register block keeps each sum in registers across the window instead of
    # adding each pass to memory: the rows are h, the output's index nearest w.
    compilation = compiled(STENCIL, machine=machine)
    assert f"float polyc_acc[{register_block(machine, 4)[0]}][" in compilation.c_source.text
    assert register_rows(compilation.ast_text) == "H"
    # a stride-2 window gathers along the vector: its loop over memory stays
    strided = STENCIL.replace("w + s", "2 * w + s").replace(
        "s in 0:3", "s in 0:3, w in 0:W / 2 - 1")
    assert "polyc_acc" not in compiled(strided, machine=machine).c_source.text


DEPTHWISE = """def dw(float(N, C, H, W) I, float(C, R, S) F) -> (O) {
  O(n, c, h, w) +=! I(n, c, h + r, w + s) * F(c, r, s)
}"""


def test_a_depthwise_convolution_keeps_its_sums_in_registers(machine):
    # F(c, r, s) is broadcast along w but varies with c, as I does: no row of the usual
    # kind shares a load; the window sum's block runs along h
    compilation = compiled(DEPTHWISE, machine=machine)
    assert f"float polyc_acc[{register_block(machine, 4)[0]}][" in compilation.c_source.text
    assert register_rows(compilation.ast_text) == "H"


@pytest.mark.needs_cc
def test_a_depthwise_convolution_in_registers_matches_numpy():
    rng = np.random.default_rng(6)
    x, f = rng.standard_normal((2, 3, 19, 45)), rng.standard_normal((3, 3, 2))
    expected = sum(x[:, :, r:r + 17, s:s + 44] * f[None, :, r, s, None, None]
                   for r in range(3) for s in range(2))
    result = polyc.define(DEPTHWISE)(x.astype(np.float32), f.astype(np.float32))
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("op", ["+=!", "max=!"])
def test_window_sums_in_registers_match_numpy(op):
    # full and partial blocks along both the rows and the vector
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 37, 45)).astype(np.float32)
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), (1, 2))
    expected = windows.sum(axis=(3, 4)) if op == "+=!" else windows.max(axis=(3, 4))
    result = polyc.define(STENCIL.replace("+=!", op))(x)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


FIXED_FILTER = """def conv(float(N, C, H, W) I, float(K, C, 3, 3) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
}"""


def test_a_constant_filter_size_gets_the_same_register_blocked_nest():
    # With r, s in 0:3 isl picked the band (..., c, c + r, s): no member to tile or
    # block. Straightened (polyc/scheduling/straighten.py), it is (..., c, r, s) again.
    fixed, symbolic = (str(compiled(source).schedule) for source in (FIXED_FILTER, CONV))
    assert "c + r" not in fixed
    assert "S0[n, k, h, w, c, r, s] -> [(r - (r) mod" in fixed   # r is a member again
    assert 'mark: "register"' in fixed and 'mark: "register"' in symbolic
    assert tile_of(fixed, "k") == tile_of(symbolic, "k")


@pytest.mark.needs_cc
@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 2), c=st.integers(1, 9), k=st.integers(1, 20),
       h=st.integers(3, 12), w=st.integers(3, 40), dilation=st.integers(1, 2),
       stride=st.integers(1, 2))
def test_fixed_filter_convolutions_match_numpy(n, c, k, h, w, dilation, stride):
    h, w = h + 2 * dilation, w + 2 * dilation
    source = FIXED_FILTER.replace(
        "I(n, c, h + r, w + s)",
        f"I(n, c, {stride} * h + {dilation} * r, {stride} * w + {dilation} * s)")
    rng = np.random.default_rng(n + c * 3 + k * 5 + h * 7 + w * 11)
    I = rng.standard_normal((n, c, h, w)).astype(np.float32)
    F = rng.standard_normal((k, c, 3, 3)).astype(np.float32)
    got = polyc.define(source)(I, F)
    oh, ow = (h - 2 * dilation - 1) // stride + 1, (w - 2 * dilation - 1) // stride + 1
    want = np.zeros((n, k, oh, ow))
    for r in range(3):
        for s in range(3):
            window = I[:, :, dilation * r::stride, dilation * s::stride][:, :, :oh, :ow]
            want += np.einsum("nchw,kc->nkhw", window.astype(np.float64), F[:, :, r, s])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_a_strided_convolution_vectorises_its_output_not_the_filter():
    source = CONV.replace("I(n, c, h + r, w + s)", "I(n, c, 2 * h + r, 2 * w + s)")
    schedule = compiled(source).schedule
    text = str(schedule)
    assert "simd-reduction" not in text
    assert 'mark: "register"' in text


def test_elementwise_walks_rows_with_the_unit_stride_index_innermost():
    source = "def ew(float(M, N) a, float(N) b, float c) -> (o) { o(i, j) = (a(i, j) + b(j)) * c }"
    ast = compiled(source).ast_text
    lines = ast.splitlines()
    simd = next(k for k, line in enumerate(lines) if "// simd" in line)
    loop, call = lines[simd + 1], lines[simd + 2]
    iterator = loop.split("int ")[1].split(" ")[0]
    assert call.strip().startswith("S0(") and call.rstrip(");").endswith(iterator)


BATCHNORM_STATS = """def batchnorm_stats(float(N, C, H, W) X) -> (mean, var) {
  mean(c) +=! X(n, c, h, w)
  mean(c) = mean(c) / (N * H * W)
  var(c) +=! (X(n, c, h, w) - mean(c)) * (X(n, c, h, w) - mean(c))
  var(c) = var(c) / (N * H * W)
}"""


@pytest.mark.parametrize("fusion", ["default", "min"])
def test_untiled_reduction_loops_walk_memory_in_order(fusion):
    # Fused, isl shifts the variance's loop over h past the mean's (H + h) and puts it
    # first; the loop over images then ran inside the loop over rows, a page apart at
    # every step (1.13x the unfused time on a Zen 3). Each statement's loops must nest
    # n outside h outside w, the order of X's dimensions.
    lines = compiled(BATCHNORM_STATS, fusion=fusion).ast_text.splitlines()
    calls = [k for k, line in enumerate(lines) if re.match(r"\s*S[02]\(", line)]
    assert len(calls) == 2
    for call in calls:
        arguments = re.search(r"\((.*)\)", lines[call]).group(1).split(", ")
        loops = {}  # iterator -> depth of its loop, innermost definition before the call
        for line in lines[:call]:
            found = re.match(r"(\s*)for \(int (c\d+) ", line)
            if found:
                loops[found.group(2)] = len(found.group(1))
        depth = [loops[re.search(r"c\d+", arguments[k]).group(0)] for k in (1, 2, 3)]
        assert depth == sorted(depth) and len(set(depth)) == 3, (lines[call], depth)


def test_shifted_passes_nested_in_groups_are_distributed():
    # isl nests the mean and variance passes in one filter group next to others:
    # distribution must look through nested sequences to vectorise both passes.
    source = """def moments(float(N, D) X) -> (mean, var) {
      mean(n) +=! X(n, d)
      mean(n) = mean(n) / D
      var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n))
      var(n) = var(n) / D
    }"""
    c = compiled(source).c_source.text
    assert c.count("#pragma omp for") == 1
    assert len(reduction_loops(c)) == 2


@pytest.mark.parametrize("source", [
    """def row_mean(float(M, N) X) -> (O) {
      O(i) +=! X(i, j)
      O(i) = O(i) / N
    }""",
    """def row_mean(float(M, N) X) -> (O) { O(i) +=! X(i, j) / N }""",  # canonicalised alike
])
def test_a_reduction_between_its_initialisation_and_epilogue_is_a_vector_reduction(source):
    # isl puts the three statements of a fused row mean in one member (0, j, N); its one
    # loop is distributed into a band of its own, which the vector reduction needs (it
    # had run as a scalar loop storing to O(i) at each step, 2.9x slower than unfused).
    compilation = compiled(source)
    assert compilation.schedule.decision.startswith("maximal fusion")
    c = compilation.c_source.text
    assert c.count("#pragma omp for") == 1
    assert reduction_loops(c) == [("polyc_part0",)]


MLP2 = """def mlp2(float(B, M) I, float(M, N) W1, float(N) B1, float(N, P) W2, float(P) B2)
    -> (O) {
  H(b, n) +=! I(b, m) * W1(m, n)
  H(b, n) = fmax(H(b, n) + B1(n), 0)
  O(b, p) +=! H(b, n) * W2(n, p)
  O(b, p) = O(b, p) + B2(p)
}"""


def test_layers_fuse_in_groups_each_epilogue_in_its_contraction_tile():
    # Fusing the two layers would cut the second's band (it reads whole rows of H);
    # each layer still runs its initialisation and epilogue inside its own tiles.
    compilation = compiled(MLP2)
    decision = compilation.schedule.decision
    assert decision.startswith("fusion in 2 groups: S0_init, S0, S1 | S2_init, S2, S3")
    tree = str(compilation.schedule)
    nests = [set(re.findall(r"(S\w+)\[", line)) for line in tree.splitlines()
             if line.startswith("  - filter:")]
    assert nests == [{"S0_init", "S0", "S1"}, {"S2_init", "S2", "S3"}]
    assert tree.count('mark: "register"') == 2
    text = compilation.c_source.text
    assert text[text.index("\nint polyc_mlp2("):].count("#pragma omp parallel") == 2


def test_groups_that_walk_a_column_are_not_fused():
    # gemver's column walk x(i) += Ahat(j, i) y(j) runs on its own in parallel over j
    # with private accumulators, its vector loop along Ahat's rows; grouped with x's
    # epilogue it runs along i, its vector loop down Ahat's columns (a line per element).
    gemver = next(entry for entry in CORPUS if entry.name == "gemver")
    schedule = compiled(gemver.source).schedule
    assert schedule.decision.startswith("no fusion")
    grouped = next(c for c in schedule.candidates if c.name.startswith("fusion in"))
    chosen = next(c for c in schedule.candidates if c.chosen)
    assert grouped.cost is None or grouped.cost.cycles > chosen.cost.cycles


@pytest.mark.needs_cc
@settings(max_examples=8, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40), st.integers(1, 40))
def test_layers_fused_in_groups_match_numpy(b, m, n, p):
    import numpy as np
    import polyc
    rng = np.random.default_rng(b * 10**6 + m * 10**4 + n * 100 + p)
    I, W1, B1, W2, B2 = (rng.standard_normal(shape).astype(np.float32)
                         for shape in ((b, m), (m, n), (n,), (n, p), (p,)))
    hidden = np.maximum(I.astype(np.float64) @ W1 + B1, 0)
    expected = hidden @ W2 + B2
    np.testing.assert_allclose(polyc.define(MLP2)(I, W1, B1, W2, B2), expected,
                               rtol=1e-4, atol=1e-4)


def test_a_transposed_copy_runs_in_square_tiles_of_line_wide_subtiles(machine):
    # The layout copy A_t(m, k) = A(k, m) walks A's lines along m and A_t's along k:
    # tiled along both, each tile's lines of both stay in L1 while it uses them whole,
    # and walked in sub-tiles one line wide, whose lines stay in L2 even when a
    # power-of-two stride puts them all in one set.
    source = """def f(float(K, M) A, float(K, N) B) -> (C) {
      C(m, n) +=! A(k, m) * B(k, n)
    }"""
    compilation = compiled(source, machine=machine)
    tree = str(compilation.schedule)
    copy = tree[tree.index('filter: "[K, M, N] -> { L0['):].split("- filter:")[0]
    tiles = {int(t) for t in re.findall(r"mod (\d+)\)", copy)}
    assert tiles == {transpose_tile(machine), transpose_subtile(machine, 4)}
    plain = "def f(float(M, N) A) -> (B) { B(m, n) = A(m, n) * 2 }"
    assert " mod " not in str(compiled(plain).schedule)  # lines along one member only
