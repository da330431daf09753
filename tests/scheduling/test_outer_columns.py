"""A register block's columns span a second member besides the vector one where a
member qualifies (``register_blocks._outer_columns``): a convolution's image rows ``h``,
along which the filter (the broadcast operand) is invariant and the input (the streamed
one) moves. Blocks narrowed to half their columns or fewer (a late layer's 14 output
columns against 32) keep ``rules.outer_column_steps`` image rows side by side in their
accumulators; full blocks run them one after another; their edge variants narrow to
quarters too, each a function of its own. Expectations come from the rules, under every
named machine model; values in float64 on any host.
"""
import re

import numpy as np
import pytest

import polyc
from polyc.codegen.register_block import MIN_NARROWED_BYTES
from polyc.compiler import frontend, generate
from polyc.machine import NAMED_MACHINES
from polyc.machine.rules import outer_column_steps, register_block
from polyc.options import Options
from polyc.scheduling.marks import RegisterBlock, marks_by_statement

CONV = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
}"""
# The filter moves with every parallel member but the vector one: no outer member.
MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
LAYER = """def layer(float(B, L, K) X, float(K, N) W) -> (Y) {
  Y(b, l, n) +=! X(b, l, k) * W(k, n)
}"""
# Lanes gathered (2 * w + s): blocks twice as tall would be unrolled over gathers.
STRIDED_CONV = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, 2 * h + r, 2 * w + s) * F(k, c, r, s)
      where h in 0:(H - R) / 2 + 1, w in 0:(W - S) / 2 + 1
}"""


def _blocks(source: str, machine) -> tuple[list[RegisterBlock], str]:
    compilation = generate(frontend(source), Options(machine=machine))
    blocks = [mark for marks in marks_by_statement(compilation.schedule.tree).values()
              for mark in marks if isinstance(mark, RegisterBlock)]
    return blocks, compilation.c_source.text


def test_a_convolution_block_spans_its_image_rows(machine):
    MR, NR = register_block(machine, 4)
    steps = outer_column_steps(machine, 4)
    assert steps == NR // (machine.vector_bytes // 4) >= 2  # one step per vector of a row
    blocks, text = _blocks(CONV, machine)
    assert blocks and all(block.outer == steps for block in blocks)
    # narrowed to half its columns: the steps side by side, the rows unrolled in the C
    assert f"float polyc_acc[{MR}][{steps}][{NR // 2}]" in text
    assert f"#pragma GCC unroll {steps}\n" in text
    # a full block: one step after another, as many as there are, each its own MR × NR
    # block
    loop = re.search(r"for \(int64_t polyc_lane1 = 0; polyc_lane1 < polyc_count1; "
                     r"polyc_lane1 \+= 1\)\s*\{\s*const int64_t (c\d+) = polyc_lane1;", text)
    assert loop and f"float polyc_acc[{MR}][{NR}]" in text[loop.end():]
    # the steps are image rows (h), not images (n): the input's rows lie deeper
    assert re.search(rf"const int64_t h = \(\(c\d+ \+ c\d+\) \+ {loop.group(1)}\);", text)


def test_a_convolution_narrows_its_edges_to_quarters_in_functions_of_their_own(machine):
    # Narrowed blocks keep the image rows side by side, so narrowing only saves work:
    # a quarter of the columns (where that is at least an SSE register) for the columns
    # a quarter block covers, and half + a quarter moved back for up to three quarters.
    # Each edge variant is a function of its own; the full block stays in the region.
    MR, NR = register_block(machine, 4)
    steps, half, quarter = outer_column_steps(machine, 4), NR // 2, NR // 4
    _, text = _blocks(CONV, machine)
    headers = [(m.start(), m.group(1)) for m in
               re.finditer(r"static __attribute__\(\(noinline\)\) void (\w+)\(", text)]
    ends = [start for start, _ in headers[1:]] + [text.index("\nint polyc_conv(")]
    bodies = {name: text[start:end] for (start, name), end in zip(headers, ends)}
    blocks = [name for name in bodies if "_block" in name]
    regions = "".join(body for name, body in bodies.items() if "_region" in name)
    assert blocks and all(f"{name}(" in regions for name in blocks)
    assert set(re.findall(r"float polyc_acc(\[[^;]*);", regions)) == {f"[{MR}][{NR}]"}
    if quarter * 4 >= MIN_NARROWED_BYTES:
        assert f"float polyc_acc[{MR}][{steps}][{quarter}]" in text
        assert f"polyc_count2 > {half} && polyc_count2 <= {half + quarter}" in text
    else:  # the SSE2 baseline: 8 lanes, a quarter of two floats
        assert not re.search(rf"polyc_acc\[{MR}\]\[{steps}\]\[{quarter}\]", text)


def test_blocks_without_an_outer_member_stay_inline(machine):
    _, text = _blocks(MATMUL, machine)
    assert "_block0(" not in text


@pytest.mark.parametrize("source", [MATMUL, LAYER, STRIDED_CONV],
                         ids=["matmul", "layer", "strided"])
def test_blocks_without_an_outer_member(source, machine):
    blocks, text = _blocks(source, machine)
    assert blocks and all(block.outer == 1 for block in blocks)
    assert not re.search(r"polyc_acc\[\d+\]\[\d+\]\[\d+\]", text)


def test_image_rows_that_bound_a_window_are_no_outer_member(machine):
    # The data gradient's window rows depend on its image rows (r in max(0, h + R - H):
    # min(R, h + 1)): blocks over pairs of image rows were cut into many pieces (its C
    # twice as long, gcc 5.5x as slow). Its blocks span its images instead, whose
    # steps are an interval of their own.
    gradient = polyc.grad(polyc.define(CONV, machine=machine.name), wrt=("I",))
    text = gradient.compilation().c_source.text
    loop = re.search(r"for \(int64_t polyc_lane1 = 0; polyc_lane1 < polyc_count1; "
                     r"polyc_lane1 \+= 1\)\s*\{\s*const int64_t (c\d+) = polyc_lane1;", text)
    assert loop
    assert re.search(rf"const int64_t n = \(c\d+ \+ {loop.group(1)}\);", text)
    assert not re.search(rf"const int64_t h = \(c\d+ \+ {loop.group(1)}\);", text)


@pytest.mark.needs_cc
@pytest.mark.parametrize("model", ["zen3", "zen5", "skylake-avx512"])
def test_convolutions_over_outer_columns_compute_what_numpy_does(model):
    # Output rows 1 (a step past the edge repeats the last row), 2 and 7; widths below
    # and at a quarter of a block, below, at and above half, at and above three
    # quarters, and over two blocks. One kernel serves every shape.
    _, NR = register_block(NAMED_MACHINES[model], 4)
    op = polyc.define(CONV, machine=model)
    rng = np.random.default_rng(NR)
    for out_rows in (1, 2, 7):
        for out_columns in (3, NR // 4, NR // 2 - 2, NR // 2, NR // 2 + 1, NR // 2 + NR // 4,
                            NR // 2 + NR // 4 + 1, 2 * NR + 5):
            I = rng.standard_normal((2, 3, out_rows + 2, out_columns + 2)).astype(np.float32)
            F = rng.standard_normal((9, 3, 3, 3)).astype(np.float32)
            windows = np.lib.stride_tricks.sliding_window_view(I.astype(np.float64), (3, 3),
                                                               axis=(2, 3))
            expected = np.einsum("nchwrs,kcrs->nkhw", windows, F.astype(np.float64))
            np.testing.assert_allclose(op(I, F), expected, rtol=1e-4, atol=1e-4,
                                       err_msg=f"{out_rows} x {out_columns}")
