"""Transposed copies moved through vector registers a block at a time
(polyc/scheduling/transposed_blocks.py, polyc/codegen/transposed_blocks.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from polyc.machine.rules import transpose_subtile
from polyc.scheduling.marks import TransposedBlock, decision_of, marks_by_statement

TRANSPOSE = "def t({t}(M, N) A) -> (B) {{ B(n, m) = A(m, n) }}"
# Each batch's rows transposed: the copy's last indices are its two inner ones.
BATCHED = "def t({t}(P, M, N) A) -> (B) {{ B(p, n, m) = A(p, m, n) }}"
TRANSPOSED_PRODUCT = "def f(float(K, M) A, float(K, N) B) -> (C) { C(m, n) +=! A(k, m) * B(k, n) }"


def _blocks(op) -> dict[str, TransposedBlock]:
    return {name: block for name, marks in marks_by_statement(
        op.compilation().schedule.tree).items()
        if (block := decision_of(marks, TransposedBlock)) is not None}


@pytest.mark.parametrize("element", ["float", "double"])
def test_a_transposition_is_blocked_as_the_machine_model_says(machine, element):
    op = polyc.define(TRANSPOSE.format(t=element), machine=machine)
    (block,) = _blocks(op).values()
    size = transpose_subtile(machine, block.element_bytes)
    assert block.element_bytes == (4 if element == "float" else 8)
    assert block.size == size
    assert block.lanes == min(size, machine.vector_bytes // block.element_bytes)
    assert (block.src_member, block.dst_member) != (0, 0)
    text = op.compilation().c_source.text
    assert f"polyc_transpose_{8 * block.element_bytes}_{size}_{block.lanes}(" in text
    # A partial sub-tile at an edge is copied in blocks of half its side where they fit.
    assert block.edge == size // 2 and block.edge_lanes == min(block.edge, block.lanes)
    assert f"polyc_transpose_{8 * block.element_bytes}_{block.edge}_{block.edge_lanes}(" \
        in text


@pytest.mark.parametrize("element", ["float", "double"])
def test_a_sub_block_is_written_out_with_a_variable_per_vector(machine, element):
    # gcc left loops over a sub-block's rows rolled inside a large function and moved
    # every row through the stack: each load, shuffle and store is a statement of its own
    op = polyc.define(TRANSPOSE.format(t=element), machine=machine)
    (block,) = _blocks(op).values()
    name = f"polyc_transpose_{8 * block.element_bytes}_{block.size}_{block.lanes}"
    text = op.compilation().c_source.text
    start = text.index(f"static inline void {name}(")
    helper = text[start:text.index("\n}\n", start)]
    lanes = block.lanes
    rounds = lanes.bit_length() - 1
    assert "r[" not in helper and helper.count("for (") == 2   # the sub-blocks' loop only
    assert [helper.count(f"memcpy(&r{i},") for i in range(lanes)] == [1] * lanes
    assert helper.count("POLYC_SHUFFLE(") == lanes * rounds
    assert helper.count("memcpy(dst + ") == lanes


@pytest.mark.needs_cc
@pytest.mark.parametrize("element", ["float", "double"])
@pytest.mark.parametrize("shape", [(64, 48), (37, 53), (5, 3), (8, 54), (44, 24)])
def test_blocked_transposition_values(machine, element, shape):
    """Full blocks, partial blocks at both edges (with and without room for an edge
    block, along either side), and a copy smaller than one block."""
    op = polyc.define(TRANSPOSE.format(t=element), machine=machine)
    dtype = np.float32 if element == "float" else np.float64
    A = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(op(A), A.T)


@pytest.mark.needs_cc
@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 70), st.integers(1, 70))
def test_batched_transposition_values(p, m, n):
    op = polyc.define(BATCHED.format(t="float"))
    A = np.random.default_rng(p * m * n).standard_normal((p, m, n)).astype(np.float32)
    np.testing.assert_array_equal(op(A), A.transpose(0, 2, 1))


@pytest.mark.needs_cc
def test_a_layout_copy_is_blocked_and_the_contraction_stays_exact(machine):
    # A(k, m), broadcast along the register block's rows, is copied transposed (no
    # panel holds it, so the copy stays: polyc.scheduling.packed_copies)
    op = polyc.define(TRANSPOSED_PRODUCT, machine=machine)
    assert set(_blocks(op)) == {"L0"}
    rng = np.random.default_rng(1)
    A = rng.standard_normal((33, 20)).astype(np.float32)
    B = rng.standard_normal((33, 40)).astype(np.float32)
    expected = A.astype(np.float64).T @ B.astype(np.float64)
    np.testing.assert_allclose(op(A, B), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_a_float_copy_beside_doubles_is_blocked_at_the_tiles_the_doubles_set(machine):
    # Tiling sizes a transposition's sub-tiles for the operator's widest element: the
    # float copy's blocks are a line of doubles square, so that its full sub-tiles run
    # as blocks at all.
    source = """def t(float(M, N) A, double(N) v) -> (B, C) {
      B(n, m) = A(m, n)
      C(n) = 2 * v(n)
    }"""
    op = polyc.define(source, machine=machine)
    (block,) = _blocks(op).values()
    size = transpose_subtile(machine, 8)
    assert (block.element_bytes, block.size) == (4, size)
    assert block.lanes == min(size, machine.vector_bytes // 4)
    rng = np.random.default_rng(2)
    A, v = rng.standard_normal((40, 27)).astype(np.float32), rng.standard_normal(27)
    B, C = op(A, v)
    np.testing.assert_array_equal(B, A.T)
    np.testing.assert_array_equal(C, 2 * v)


@pytest.mark.parametrize("source", [
    "def t(float(M, N) A) -> (B) { B(n, m) = 2 * A(m, n) }",           # not a plain copy
    "def t(int32(M, N) A) -> (B) { B(n, m) = float(A(m, n)) }",          # a conversion
    "def t(int16(M, N) A) -> (B) { B(n, m) = A(m, n) }",                 # 2-byte elements
    "def t(float(M, N) A) -> (B) { B(m, n) = A(m, n) }",                 # no transposition
])
def test_only_plain_copies_of_4_or_8_byte_elements_are_blocked(source):
    assert _blocks(polyc.define(source)) == {}
