"""Layout copies that only packed panels read are dropped; the panels copy from the
source, transposing (polyc.scheduling.packed_copies, polyc.codegen.panels)."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.options import Options
from polyc.scheduling.marks import RegisterBlock, marks_by_statement
from polyc.scheduling.packing import Panel

TBMM = """def tbmm(float(B, M, K) X, float(B, N, K) Y) -> (Z) {
  Z(b, m, n) +=! X(b, m, k) * Y(b, n, k)
}"""


def _panels(compilation) -> set[tuple[str, str]]:
    return {(mark.statement, mark.operand)
            for marks in marks_by_statement(compilation.schedule.tree).values()
            for mark in marks if isinstance(mark, Panel)}


def test_the_copy_goes_and_the_panel_reads_the_source(machine):
    compilation = generate(frontend(TBMM), Options().with_(machine=machine))
    assert [s.name for s in compilation.op.statements] == ["S0"]
    assert "Y_t021" not in compilation.op.tensors
    assert _panels(compilation) == {("S0", "Y")}
    text = compilation.c_source.text
    lanes = machine.vector_bytes // 4
    assert "Y_t021" not in text and f"polyc_transpose_32_{lanes}_{lanes}(&polyc_panel_Y[" in text


def test_explain_shows_the_dropped_copy(machine):
    schedule = polyc.define(TBMM, machine=machine).explain().section("schedule")
    assert "L0: Y_t021(t0, t2, t1) = Y(t0, t1, t2)" in schedule
    assert "dropped: the panels of Y transpose it as they pack it" in schedule
    assert "dropped" not in polyc.define(TBMM, optimize=False).explain().section("schedule")


def test_edge_blocks_read_the_panel_and_stay_within_their_columns(machine):
    # Moved back before its first column, an edge block would read Y across its lanes
    # (a gather per lane and step); masked or narrowed, it reads the panel, its lanes
    # past the edge masked.
    compilation = generate(frontend(TBMM), Options().with_(machine=machine))
    blocks = [mark for marks in marks_by_statement(compilation.schedule.tree).values()
              for mark in marks if isinstance(mark, RegisterBlock)]
    assert blocks and all(block.edge_within_columns for block in blocks)
    text = compilation.c_source.text
    assert "polyc_shift" not in text
    assert re.search(r"POLYC_LANE_KEEP\(polyc_lane\d < polyc_count\d, polyc_panel_Y\[", text)
    blocks_code = [line for line in text.splitlines() if "polyc_acc" in line]
    assert not any(re.search(r"\bY\[", line) for line in blocks_code)  # none in place


def test_a_copy_some_reader_does_not_pack_stays(machine):
    # The contraction packs its merged view of one copy, B_t3120_m, and reads the other,
    # A_t0213, in place: both copies stay (the view is not the copy's own name).
    source = """def contraction(float(SA, SE, SB, SF) A, float(SD, SF, SC, SE) B) -> (C) {
      C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e)
    }"""
    compilation = polyc.define(source, machine=machine).compilation()
    assert [s.name for s in compilation.op.statements][:2] == ["L0", "L1"]


@pytest.mark.needs_cc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=6, deadline=None)
@given(st.integers(1, 3), st.integers(1, 70), st.integers(1, 100), st.integers(1, 45))
def test_values(dtype, b, m, n, k):
    rng = np.random.default_rng(b * 1000 + m * 100 + n * 10 + k)
    X = rng.standard_normal((b, m, k)).astype(dtype)
    Y = rng.standard_normal((b, n, k)).astype(dtype)
    source = TBMM if dtype == np.float32 else TBMM.replace("float(", "double(")
    want = X.astype(np.float64) @ Y.astype(np.float64).transpose(0, 2, 1)
    np.testing.assert_allclose(polyc.define(source)(X, Y), want, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("model", ["x86-64", "zen3", "skylake-avx512", "sapphirerapids"])
def test_values_under_each_vector_width(model):
    # whole 16 x 16, 8 x 8 and 4 x 4 transposes, the steps past the last whole one
    # (k = 37), and blocks narrower than the panel's lanes (n = 20: squares, then lanes
    # element by element)
    rng = np.random.default_rng(5)
    op = polyc.define(TBMM, machine=model)
    for m, n in ((70, 96), (9, 20)):
        X = rng.standard_normal((2, m, 37)).astype(np.float32)
        Y = rng.standard_normal((2, n, 37)).astype(np.float32)
        want = X.astype(np.float64) @ Y.astype(np.float64).transpose(0, 2, 1)
        np.testing.assert_allclose(op(X, Y), want, rtol=1e-4, atol=1e-4)
