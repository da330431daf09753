"""Panel packing: a register block's streamed operand is copied per tile into panels.

Only full register blocks read the panel; edge blocks read the tensor itself, and
the copy takes only elements inside the statement's index ranges. The values tests
use sizes that cross tile boundaries (matmul's tiles are 512 × 128 × 128 for float32
on AVX-512 machines; other machines get other sizes, and the tests hold there too).
"""
import dataclasses
import math
import re

import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.explore.schedule_view import summarize_schedule
from polyc.lang.printer import expr_to_tc
from polyc.machine.rules import (PREFETCH_ROWS, line_elements, panel_budget, panel_depth,
                                 register_block)
from polyc.options import Options
from polyc.poly.program import statements_named, tensors_unwritten_in
from polyc.scheduling.marks import decision_mark, decision_of, mark_value
from polyc.scheduling.packing import Panel, PanelDim, row_factor

MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
TRANSPOSED = "def mt(float(M,K) A, float(N,K) B) -> (C) { C(m, n) +=! A(m, k) * B(n, k) }"
BATCHED = """def bmm(float(P,M,K) X, float(P,K,N) Y) -> (Z) {
  Z(p, m, n) +=! X(p, m, k) * Y(p, k, n)
}"""


def _compiled(source: str, **options):
    return generate(frontend(source), Options().with_(**options))


def _pack_marks(source: str, **options) -> list[Panel]:
    compilation = _compiled(source, **options)
    marks = summarize_schedule(compilation.schedule, compilation.program).marks
    return [mark for mark in marks if isinstance(mark, Panel)]


def test_a_pack_mark_carries_its_panel():
    panel = Panel("S0", "B", (PanelDim("n", 1, 128), PanelDim("k", 2, 128)), 32)
    mark = decision_mark(panel)
    assert mark.get_name() == "pack S0 B: n@1+128/32, k@2+128"
    assert mark_value(mark) is panel
    assert mark_value(isl.Id("parallel")) == "parallel"
    # The text is for people: a mark that only names a panel carries none.
    assert decision_of([mark_value(isl.Id(mark.get_name()))], Panel) is None


def test_matmul_packs_the_streamed_operand_only():
    panels = _pack_marks(MATMUL)
    assert [p.operand for p in panels] == ["B"]
    panel = panels[0]
    assert [d.index for d in panel.dims] == ["n", "k"]   # blocks of n, then k, then lanes
    assert panel.dims[0].extent % panel.lanes == 0
    text = _compiled(MATMUL).c_source.text
    assert "float *restrict polyc_panel_B = polyc_panel_B_storage;" in text
    # Full blocks read the panel; edge blocks still read B.
    assert "* polyc_panel_B[" in text and "* B[(k) * N + n]" in text
    assert "A[(m) * K + k] *" in text                     # A is read in place
    # A partial block of the panel copies its lanes under a mask, vectorised.
    lanes = panel.lanes
    assert re.search(r"#pragma omp simd\s*for \(int64_t polyc_lane = 0; polyc_lane < "
                     rf"{lanes}; polyc_lane \+= 1\)\s*if \(polyc_lane >= polyc_first && "
                     r"polyc_lane < polyc_last\)", text)


@pytest.mark.needs_cc
@pytest.mark.parametrize("l2_scale", [1, 2, 4, 8])
def test_the_streamed_operand_is_packed_however_large_l2_is(machine, l2_scale):
    """A larger L2 grows the tiles, but never the streamed operand's panel past the
    packing budget, which would leave it unpacked (a 2 MiB L2 had: a 512 KiB panel of a
    1024³ matmul, read a row stride apart, 2.2x slower on Sapphire Rapids)."""
    model = dataclasses.replace(machine, l2=machine.l2 * l2_scale)
    panels = _pack_marks(MATMUL, machine=model)
    assert [p.operand for p in panels] == ["B"]
    assert math.prod(d.extent for d in panels[0].dims) * 4 <= panel_budget(model)


def test_explain_names_the_panels():
    op = polyc.define(MATMUL)
    A = np.ones((20, 10), np.float32)
    B = np.ones((10, 40), np.float32)
    explanation = op.explain(A, B)
    assert "B packed per tile into" in explanation.section("fusion")
    assert "pack B" in explanation.summary


def test_no_panel_without_a_plain_streamed_read():
    conv = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
      O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
    }"""
    assert _pack_marks(conv) == []                        # I(.., w + s): a window
    matvec = "def mv(float(M,K) A, float(K) x) -> (y) { y(m) +=! A(m, k) * x(k) }"
    assert _pack_marks(matvec) == []                      # no register block


def test_a_tensor_is_packed_only_where_no_statement_of_its_nest_writes_it():
    chain = """def chain(float(M,K) A, float(K,N) B) -> (T, D) {
      T(k, n) = B(k, n) * 2.0
      D(m, n) +=! A(m, k) * READ(k, n)
    }"""
    source = chain.replace("READ", "T")
    # Unfused, D's loops are a register-blocked matmul over T, which a nest of its own
    # computes before them: nothing writes T while they run, so T is packed as B is.
    compilation = _compiled(source, fusion="min")
    assert "register" in str(compilation.schedule)
    assert [p.operand for p in _pack_marks(source, fusion="min")] == ["T"]
    assert [p.operand for p in _pack_marks(chain.replace("READ", "B"), fusion="min")] == ["B"]
    # The rule: the tensors no statement under the band writes.
    program = compilation.program
    both, d_only = program.domain, statements_named(program.domain, ["S1_init", "S1"])
    assert "T" not in tensors_unwritten_in(program, both)
    assert {"A", "B", "T"} <= tensors_unwritten_in(program, d_only)
    assert "D" not in tensors_unwritten_in(program, d_only)
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((40, 70)), rng.standard_normal((70, 90))
    T, D = polyc.define(source, fusion="min")(A.astype(np.float32), B.astype(np.float32))
    np.testing.assert_allclose(D, A @ (2 * B), rtol=1e-4, atol=1e-3)


def _check_matmul(m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    expected = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(polyc.define(MATMUL)(A, B), expected, rtol=1e-4, atol=1e-3)


@pytest.mark.needs_cc
@pytest.mark.parametrize("m, k, n", [
    (48, 128, 128),    # one whole tile
    (50, 131, 161),    # partial tiles along k and n: panels cut at the edges
    (130, 257, 300),   # several tiles along every index
    (7, 300, 40),      # one full block of rows, edge columns
    (126, 5, 33),      # a short reduction
])
def test_packed_matmul_values(m, k, n):
    _check_matmul(m, k, n)


@pytest.mark.needs_cc
@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 140), k=st.integers(1, 140), n=st.integers(1, 170))
def test_packed_matmul_values_property(m, k, n):
    _check_matmul(m, k, n, seed=m * 31 + k * 7 + n)


@pytest.mark.needs_cc
def test_packed_transposed_and_batched_operands():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 150)).astype(np.float32)
    B = rng.standard_normal((140, 150)).astype(np.float32)
    # the panels read B itself, transposing: the layout copy B_t10 is dropped
    assert [p.operand for p in _pack_marks(TRANSPOSED)] == ["B"]
    np.testing.assert_allclose(polyc.define(TRANSPOSED)(A, B),
                               A.astype(np.float64) @ B.T.astype(np.float64),
                               rtol=1e-4, atol=1e-3)
    X = rng.standard_normal((3, 20, 130)).astype(np.float32)
    Y = rng.standard_normal((3, 130, 70)).astype(np.float32)
    assert [p.operand for p in _pack_marks(BATCHED)] == ["Y"]
    np.testing.assert_allclose(polyc.define(BATCHED)(X, Y),
                               X.astype(np.float64) @ Y.astype(np.float64),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.needs_cc
@pytest.mark.parametrize("fusion", ["default", "min"])
def test_the_copy_stays_inside_the_index_ranges(fusion):
    # k starts at 3, and n at 40 in the update: the panels take only those.
    source = """def two(float(M, K) A, float(K, N) B) -> (C, D) {
      C(m, n) +=! A(m, k) * B(k, n) where k in 3:K
      D(m, n) = B(0, n) where m in 0:M
      D(m, n) += A(m, k) * B(k, n) where n in 40:N, k in 3:K
    }"""
    if fusion == "min":  # fused, the two reductions share loops: no register block
        assert [p.statement for p in _pack_marks(source, fusion=fusion)] == ["S0", "S2"]
    rng = np.random.default_rng(11)
    A = rng.standard_normal((60, 140)).astype(np.float32)
    B = rng.standard_normal((140, 170)).astype(np.float32)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    C = A64[:, 3:] @ B64[3:, :]
    D = np.repeat(B64[:1, :], 60, axis=0)
    D[:, 40:] += A64[:, 3:] @ B64[3:, 40:]
    got_c, got_d = polyc.define(source, fusion=fusion)(A, B)
    np.testing.assert_allclose(got_c, C, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got_d, D, rtol=1e-4, atol=1e-3)


# ---------------------------------------------------------------- row factors

SCALED = "def smm(float alpha, float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! FACTOR * B(k, n) }"


def _factor(rhs_factor: str) -> str | None:
    statement = frontend(SCALED.replace("FACTOR", rhs_factor).replace(
        "float alpha", "float alpha, float(M) s")).statements[-1]
    factor = row_factor(statement.rhs, "n", "m")
    return None if factor is None else expr_to_tc(factor)


def test_row_factor_is_the_one_part_varying_with_rows_only():
    assert _factor("alpha * A(m, k)") == "alpha * A(m, k)"
    assert _factor("(A(m, k) + s(m))") == "A(m, k) + s(m)"
    assert _factor("exp(A(m, k))") == "exp(A(m, k))"
    assert _factor("A(m, k)") is None                    # a plain read: packed as a tensor
    assert _factor("A(m, k) * s(m) * B(k, n) * alpha * s(m) * A(m, k)") is None  # two parts


def test_a_factor_mark_carries_its_panel():
    panel = Panel("S0", "(alpha * A(m, k))", (PanelDim("m", 0, 128), PanelDim("k", 2, 128)), 0)
    mark = decision_mark(panel)
    assert mark.get_name() == "pack S0 (alpha * A(m, k)): m@0+128, k@2+128"
    assert mark_value(mark) is panel
    assert panel.is_factor and not Panel("S0", "B", panel.dims, 32).is_factor


def test_shifted_matmul_evaluates_its_factor_once_per_tile(machine):
    # (A + alpha) is no product, so no scale factor can leave the sum: it is packed.
    source = SCALED.replace("FACTOR", "(A(m, k) + alpha)")
    assert [p.operand for p in _pack_marks(source, machine=machine)] == [
        "(A(m, k) + alpha)", "B"]
    text = _compiled(source, machine=machine).c_source.text
    # The copy evaluates the factor into rows of the tile's reduction steps (a panel
    # depth: the factor's buffer keeps the visits from deepening); full blocks read it,
    # edge blocks evaluate it in place.
    depth = panel_depth(machine, register_block(machine, 4)[1], 4)
    assert (f"polyc_factor_S0[(polyc_p0) * {depth} + polyc_p1] = (A[(m) * K + k] + alpha);"
            in text)
    assert f"(polyc_factor_S0[((m - c0)) * {depth} + (k - c2)] * polyc_panel_B[" in text
    assert "((A[(m) * K + k] + alpha) * B[(k) * N + n])" in text
    op = polyc.define(source, machine=machine)
    explanation = op.explain((), (20, 10), (10, 40))
    assert re.search(rf"row factor A\(m, k\) \+ alpha evaluated per tile into m \d+ × k {depth}",
                     explanation.section("fusion"))


def test_scale_factors_leave_the_sum_instead_of_being_packed():
    # alpha * A(m, k): alpha multiplies the finished sum (polyc.rewrite.invariant_factors),
    # and A is broadcast from memory like a plain matmul's.
    source = SCALED.replace("FACTOR", "alpha * A(m, k)")
    assert [p.operand for p in _pack_marks(source)] == ["B"]


@pytest.mark.needs_cc
@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 140), k=st.integers(1, 140), n=st.integers(1, 300),
       form=st.sampled_from(["alpha * A(m, k)", "(A(m, k) + s(m))", "exp(A(m, k)) * alpha"]),
       dtype=st.sampled_from(["float", "double"]))
def test_packed_factor_values(m, k, n, form, dtype):
    source = SCALED.replace("FACTOR", form).replace("float alpha", "float alpha, float(M) s")
    source = source.replace("float", dtype)
    numpy_type = np.float32 if dtype == "float" else np.float64
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    A = rng.standard_normal((m, k)).astype(numpy_type)
    B = rng.standard_normal((k, n)).astype(numpy_type)
    s = rng.standard_normal(m).astype(numpy_type)
    A64, s64 = A.astype(np.float64), s.astype(np.float64)[:, None]
    factor = {"alpha * A(m, k)": 1.5 * A64, "(A(m, k) + s(m))": A64 + s64,
              "exp(A(m, k)) * alpha": np.exp(A64) * 1.5}[form]
    got = polyc.define(source)(1.5, s, A, B)
    np.testing.assert_allclose(got, factor @ B.astype(np.float64), rtol=1e-4, atol=1e-3)


def test_the_copy_prefetches_each_whole_block_rows_ahead(machine):
    # B's rows are N elements apart: each whole block of a row fetches, line by line,
    # the same block PREFETCH_ROWS rows later, while those rows are in the tile.
    text = _compiled(MATMUL, machine=machine).c_source.text
    lanes = register_block(machine, 4)[1]
    assert f"if (polyc_p1 + {PREFETCH_ROWS} < polyc_min(" in text
    assert f"const int64_t k = c2 + polyc_p1 + {PREFETCH_ROWS};" in text
    fetched = re.findall(r"__builtin_prefetch\(&B\[\(k\) \* N \+ n\] \+ (\d+), 0, 3\)", text)
    assert [int(lane) for lane in fetched] == list(range(0, lanes, line_elements(machine, 4)))


def test_an_operand_read_under_a_guard_is_not_packed(machine):
    # B(k, n) stays inside B only where k < J: a copy of the tile over k in 0:K would
    # read rows past B's end (the guard is what the bounds proof relies on)
    source = ("def f(float(M, K) A, float(J, N) B) -> (C) "
              "{ C(m, n) +=! A(m, k) * (k < J ? B(k, n) : 0.0) where k in 0:K }")
    assert [p.operand for p in _pack_marks(source, machine=machine, canonicalize=False)] == []
    # the canonical form splits the select into the domain k in 0:min(K, J): no guard left,
    # and the tile's copy over that box stays inside B
    assert [p.operand for p in _pack_marks(source, machine=machine)] == ["B"]
    unguarded = "def f(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
    assert [p.operand for p in _pack_marks(unguarded, machine=machine)] == ["B"]
    guarded = polyc.define(source)
    a = np.random.default_rng(0).standard_normal((7, 9)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(guarded(a, b), a[:, :5] @ b, rtol=1e-5, atol=1e-5)
