"""Register blocks at the edges of the iteration space compute exactly what numpy does.

A full block is MR rows × NR lanes (8 × 32 float32 with AVX-512, 6 × 16 with AVX2;
the tests run both shapes under named machine models, whatever the host). At an edge the
block keeps its constant shape: a row past the edge repeats the last row, and the
vector level either moves back over the previous block's columns (``polyc_shift``;
only its own columns are stored) where more than half the columns are left, or runs
as one half-width block owning all its lanes (exactly half the columns), or masks the
lanes past the edge: in a half-width block where less than half the columns are left,
else full-width where every masked read loads and selects, else as half-width blocks,
the last one moved back over its neighbour's columns. A masked lane reads 0: from a
packed panel, which holds every lane, it loads and then selects (``POLYC_LANE_KEEP``);
from the tensor itself, only under the condition. Each test picks sizes that reach one
of these paths and checks the values in float64.

Lanes past the edge load, then select, where every lane lies inside an allocation: a
packed panel, or a temporary on the heap (``rules.edge_slack`` elements past its end,
zeroed) read with the masked index in its last dimension alone; a temporary's lanes
are not even selected in a float sum without gathers (computed, dropped unseen).
"""
import re

import numpy as np
import pytest

import polyc
from polyc.compiler import frontend, generate
from polyc.machine import NAMED_MACHINES
from polyc.machine.rules import edge_slack, masked_rows_unrolled, register_block
from polyc.options import Options

MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
CONV = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
}"""
# The input already has its channels outside its rows: read as it is, with no layout copy
# (no slack past its end), its masked lanes load under the condition.
CONV_NHCW = """def conv(float(N, H, C, W) I, float(K, R, S, C) F) -> (O) {
  O(n, k, h, w) +=! I(n, h + r, c, w + s) * F(k, r, s, c)
}"""
# A stride of 2 along the vector index: the masked lanes' loads are not contiguous.
STRIDED_CONV = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, 2 * h + r, 2 * w + s) * F(k, c, r, s)
      where h in 0:(H - R) / 2 + 1, w in 0:(W - S) / 2 + 1
}"""
# The block shapes of AVX2 and AVX-512, whatever the host: float32 6 × 16 and 8 × 32.
EDGE_MODELS = ("zen3", "zen5")


def _c(source: str, model: str | None = None) -> str:
    options = Options() if model is None else Options(machine=model)
    return generate(frontend(source), options).c_source.text


@pytest.mark.parametrize("model", EDGE_MODELS)
def test_edge_blocks_keep_the_register_block_shape(model):
    MR, NR = register_block(NAMED_MACHINES[model], 4)
    text = _c(MATMUL, model)
    assert "polyc_shift" in text                        # moved back: full width, no masks
    assert "(polyc_lane1 < polyc_count1) ?" in text     # masked lanes read zeros
    assert "POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_B[" in text  # selected
    assert f"if (polyc_count1 < {NR // 2})" in text      # narrower than half: half-width
    assert "polyc_min(polyc_lane0, polyc_count0 - 1)" in text  # a row past the edge repeats
    assert f"float polyc_acc[{MR}][{NR // 2}]" in text   # half-width blocks: narrow extents
    assert f"if (polyc_count1 == {NR // 2})" in text     # exactly half: no store condition
    # Half the columns or fewer: a half-width block, even where the block could move back.
    assert f"if (polyc_shift > 0 && polyc_count1 > {NR // 2})" in text
    # The panel holds every lane: more than half the columns run one masked block...
    assert "polyc_sub" not in text
    # ... but where a masked read would wait on its condition, half-width blocks.
    assert f"polyc_sub += {NR // 2}" in _c(CONV_NHCW, model)


def _edge_sizes(MR: int, NR: int) -> list[tuple[int, int, int]]:
    return [
        (MR, 5, NR),                    # full blocks only
        (MR + 1, 9, NR + 1),            # one row and one column past full blocks
        (2 * MR - 1, 3, NR + 18),       # move back by NR - 18 lanes (wider blocks)
        (MR - 1, 17, NR // 2 + 4),      # narrower than one block: half-width, repeated rows
        (MR, 4, NR // 2),               # one half-width block owning all its lanes
        (2 * MR - 3, 6, NR // 2),       # the same, and a row past the edge
        (2 * MR, 7, 3 * NR // 4),       # more than half: one masked block (panel reads)
        (MR + 1, 3, NR // 2 + 1),       # the same, one lane past half
        (MR + 3, 5, NR // 4),           # narrower than half a block: masked lanes
        (MR + 2, 40, NR // 2 - 1),      # the same, over more steps than a panel's depth
        (1, 1, 1),
        (2 * MR + 1, 64, 3 * NR + 1),
    ]


@pytest.mark.needs_cc
@pytest.mark.parametrize("model", EDGE_MODELS)
@pytest.mark.parametrize("case", range(12))
def test_matmul_edges(model, case):
    m, k, n = _edge_sizes(*register_block(NAMED_MACHINES[model], 4))[case]
    rng = np.random.default_rng(m * 1000 + n)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    op = polyc.define(MATMUL, machine=model)
    expected = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(op(A, B), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("model", EDGE_MODELS)
def test_masked_lanes_load_a_heap_temporary_along_its_last_index(model):
    # The convolution reads its input through a layout copy (a temporary allocated with
    # rules.edge_slack elements past its end, zeroed since it is read so): its masked
    # lanes load whatever lies there, unselected (a float sum, no gather: a lane past
    # the edge is computed and dropped unseen). Its vector level comes after the rows and the image rows.
    text = _c(CONV, model)
    slack = edge_slack(NAMED_MACHINES[model])
    assert "polyc_max(1, polyc_extent(N) * polyc_extent(H) * polyc_extent(C) * " \
           f"polyc_extent(W) + {slack})" in text
    assert re.search(r"memset\(I_t\d+ \+ polyc_extent\(N\) \* polyc_extent\(H\) \* "
                     rf"polyc_extent\(C\) \* polyc_extent\(W\), 0, sizeof\(float\) \* {slack}\)",
                     text)
    assert "POLYC_LANE_KEEP(polyc_lane2 < polyc_count2, I_t" not in text
    masked = text[text.index("((polyc_lane2 < polyc_count2) ? O["):]
    assert re.search(r"polyc_acc\[[^=]*= \(polyc_acc\[[^;]* \+ \(I_t\d+\[", masked)
    # a user's array has no slack: its masked lanes load under the condition
    assert "((polyc_lane2 < polyc_count2) ? O[" in text
    # an integer sum keeps the select (a lane's value never reaches a trap, but the
    # rule keeps to float arithmetic)
    integer = _c(CONV.replace("float(", "int32("), model)
    assert re.search(r"POLYC_LANE_KEEP\(polyc_lane\d < polyc_count\d, I_t\d+\[", integer)
    # and its copy's slack, which no lane reads unselected, is left as allocated
    assert "memset(" not in integer


@pytest.mark.needs_cc
@pytest.mark.parametrize("layout", ["NCHW", "NHCW"])
@pytest.mark.parametrize("width", [7, 12, 17, 34, 40, 45])
def test_convolution_edges(width, layout):
    # NCHW: through the layout copy, every edge loads and selects; NHCW: the input as it
    # is, masked under the condition, more than half the columns in half-width blocks.
    rng = np.random.default_rng(width)
    I = rng.standard_normal((2, 3, 9, width)).astype(np.float32)
    F = rng.standard_normal((7, 3, 3, 3)).astype(np.float32)
    if layout == "NCHW":
        out = polyc.define(CONV)(I, F)
    else:
        out = polyc.define(CONV_NHCW)(np.ascontiguousarray(I.transpose(0, 2, 1, 3)),
                                      np.ascontiguousarray(F.transpose(0, 2, 3, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(I.astype(np.float64), (3, 3), axis=(2, 3))
    expected = np.einsum("nchwrs,kcrs->nkhw", windows, F.astype(np.float64))
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("width", [9, 16, 37, 70])
def test_strided_convolution_edges(width):
    # The input's layout copy is read at 2 * w + s: masked lanes load up to twice the
    # block's width past the last lane's element, inside the copy's slack.
    rng = np.random.default_rng(width)
    I = rng.standard_normal((2, 3, 7, width)).astype(np.float32)
    F = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    op = polyc.define(STRIDED_CONV)
    text = op.compilation().c_source.text
    assert "memset(I_t" in text and "(polyc_lane1 < polyc_count1) ? O[" in text
    windows = np.lib.stride_tricks.sliding_window_view(I.astype(np.float64), (3, 3),
                                                       axis=(2, 3))[:, :, ::2, ::2]
    expected = np.einsum("nchwrs,kcrs->nkhw", windows, F.astype(np.float64))
    np.testing.assert_allclose(op(I, F), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("fusion", ["default", "min"])
def test_a_block_does_not_move_below_the_start_of_its_range(fusion):
    # The second statement updates columns 40..N-1 only: its edge block may not move
    # back into columns below 40, which it must leave alone.
    source = """def two(float(M, K) A, float(K, N) B) -> (C) {
      C(m, n) +=! A(m, k) * B(k, n)
      C(m, n) += A(m, k) * B(k, n) where n in 40:N
    }"""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((8, 6)).astype(np.float32)
    B = rng.standard_normal((6, 61)).astype(np.float32)
    expected = A.astype(np.float64) @ B.astype(np.float64)
    expected[:, 40:] *= 2
    np.testing.assert_allclose(polyc.define(source, fusion=fusion)(A, B), expected,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_gathers_in_masked_lanes_are_not_checked_out_of_range():
    # Lanes past the edge read index 0 (masked), never an out-of-range index.
    source = """def g(float(M, K) A, float(T, N) B, int32(K) I) -> (C) {
      C(m, n) +=! A(m, k) * B(I(k), n)
    }"""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((7, 5)).astype(np.float32)
    B = rng.standard_normal((4, 19)).astype(np.float32)
    I = np.array([3, 0, 2, 2, 1], np.int32)
    expected = A.astype(np.float64) @ B.astype(np.float64)[I]
    np.testing.assert_allclose(polyc.define(source)(A, B, I), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("n", [16, 24, 31])
def test_masked_blocks_over_a_transposed_operand(n):
    # `B(n, k)` is packed into panels through transposes (no layout copy); an edge block
    # with more than half its columns loads every lane of the panel and selects.
    source = "def mt(float(M,K) A, float(N,K) B) -> (C) { C(m, n) +=! A(m, k) * B(n, k) }"
    text = _c(source)
    assert "POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_B[" in text
    assert "polyc_sub" not in text
    rng = np.random.default_rng(n)
    A = rng.standard_normal((13, 11)).astype(np.float32)
    B = rng.standard_normal((n, 11)).astype(np.float32)
    expected = A.astype(np.float64) @ B.astype(np.float64).T
    np.testing.assert_allclose(polyc.define(source)(A, B), expected, rtol=1e-4, atol=1e-4)


def test_masked_blocks_unroll_their_rows_where_the_rule_says(machine):
    # More than half the columns left: one full-width masked block, whose loops over rows
    # the C unrolls whole where the model's ISA has mask registers
    # (rules.masked_rows_unrolled); half-width and moved-back blocks are left to gcc.
    MR, NR = register_block(machine, 4)
    text = generate(frontend(MATMUL), Options(machine=machine)).c_source.text
    assert "POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_B[" in text
    unrolled = [m.end() for m in re.finditer(r"#pragma GCC unroll (\d+)\n", text)]
    if not masked_rows_unrolled(machine):
        assert unrolled == []
        return
    # the full-width masked block's two starts (from zero on a first visit, else from
    # the output), its reduction and its store, each over the block's rows
    assert len(unrolled) == 4
    assert text.count(f"#pragma GCC unroll {MR}\n") == len(unrolled)
    for end in unrolled:
        assert re.match(rf"\s*for \(int64_t polyc_lane0 = 0; polyc_lane0 < {MR};", text[end:])
        block = text[:end].rfind("float polyc_acc[")
        assert text[block:].startswith(f"float polyc_acc[{MR}][{NR}]")
        following = text.find("float polyc_acc[", block + 1)
        assert "polyc_lane1 < polyc_count1" in text[block:following]  # a masked block


def test_masked_blocks_that_gather_their_lanes_stay_rolled():
    # A strided read (2 * w + s) loads its lanes with permutes: unrolled, gcc took 19 s
    # instead of 3.7 on the corpus's strided convolution. Contiguous lanes unroll.
    model = next(m for m in NAMED_MACHINES.values() if masked_rows_unrolled(m))
    assert "#pragma GCC unroll" in _c(CONV, model.name)
    strided = _c(STRIDED_CONV, model.name)
    assert "(polyc_lane1 < polyc_count1) ? O[" in strided  # a masked block
    assert "#pragma GCC unroll" not in strided


@pytest.mark.needs_cc
@pytest.mark.parametrize("width", [14, 16, 30])
def test_convolution_edges_under_a_256_bit_avx512_model(width):
    # skylake-avx512: 8 × 16 float32 blocks; 14 of 16 output columns run the unrolled
    # masked block (4.4x slower rolled, rules.masked_rows_unrolled). Correct on any host.
    rng = np.random.default_rng(width)
    I = rng.standard_normal((2, 5, 6, width + 2)).astype(np.float32)
    F = rng.standard_normal((9, 5, 3, 3)).astype(np.float32)
    op = polyc.define(CONV, machine="skylake-avx512")
    windows = np.lib.stride_tricks.sliding_window_view(I.astype(np.float64), (3, 3),
                                                       axis=(2, 3))
    expected = np.einsum("nchwrs,kcrs->nkhw", windows, F.astype(np.float64))
    np.testing.assert_allclose(op(I, F), expected, rtol=1e-4, atol=1e-4)
