"""The C of panel packing (:mod:`polyc.scheduling.packing`): the copy into a tile's panel
buffer, and the reads of register blocks that go to it.

For ``pack S0 B: n@1+128/32, k@2+128`` (matmul, float32), in ``B``'s own order::

    _Alignas(64) float polyc_panel_B_storage[16384];
    float *restrict polyc_panel_B = polyc_panel_B_storage;
    for (polyc_p1 = max(0, 0 - c2); polyc_p1 < min(128, K - c2); ...)     k in the tile
      polyc_start = max(0, 0 - c1);  polyc_end = min(128, N - c1);        n in the tile
      for (polyc_block = polyc_start / 32; polyc_block * 32 < polyc_end; ...)
        if the block is whole:  #pragma omp simd  for (polyc_lane = 0; polyc_lane < 32; ...)
        else:                   #pragma omp simd  for (polyc_lane = 0; polyc_lane < 32; ...)
                                  if (polyc_first <= polyc_lane < polyc_last)  (masked)
          { n = c1 + polyc_block * 32 + polyc_lane;  k = c2 + polyc_p1;
            polyc_panel_B[(polyc_block * 128 + polyc_p1) * 32 + polyc_lane] = B[k * N + n]; }

and a full block's read ``B[(k) * N + n]`` becomes
``polyc_panel_B[(((n - c8 - c1) / 32) * 128 + (k - c2)) * 32 + c8]``, where ``c8``
is the block's vector lane: ``n - c8`` is the block's first column, a whole number of
blocks from the tile's first, ``c1``. Only elements inside the statement's index
ranges are copied: full blocks read no others, edge blocks read the lanes inside as well
and mask the others (:mod:`polyc.codegen.register_block`).
"""
from __future__ import annotations

from typing import Callable

import cgen
import islpy as isl

from polyc.codegen.ast_build import loop_iterator
from polyc.codegen.c_expr import ExprEmitter
from polyc.codegen.c_names import braced, c_name
from polyc.codegen.transposed_blocks import helper_name
from polyc.lang import ir
from polyc.machine import Machine
from polyc.machine.rules import PREFETCH_ROWS, line_elements, vector_lanes
from polyc.scheduling.marks import ast_children, node_mark
from polyc.scheduling.packing import Panel, PanelDim, operand_expr, source_order


def buffer_name(panel: Panel) -> str:
    if panel.is_factor:
        return f"polyc_factor_{c_name(panel.statement)}"
    return f"polyc_panel_{c_name(panel.operand)}"


def buffer_type(panel: Panel, statement: ir.Statement, op: ir.Op) -> str:
    """The C type of a pointer to ``panel``'s buffer: its elements are the factor's
    compute type, or the operand's type."""
    if panel.is_factor:
        ctype = operand_expr(panel, statement).type.compute_type.c_type
    else:
        ctype = op.tensor(panel.operand).type.c_type
    return f"{ctype} *restrict"


def pack_code(panel: Panel, statement: ir.Statement, exprs: ExprEmitter,
              machine: Machine, transposes: set | None = None) -> list:
    """The declaration of the panel buffer and the loops that fill it. The loops walk
    the operand's dimensions in its own order (rows of the source read whole); a
    blocked panel's vector dimension as blocks of lanes."""
    operand = operand_expr(panel, statement)
    if panel.is_factor:
        ctype, value = operand.type.compute_type.c_type, exprs.expr(operand)
    else:
        ctype = exprs.tensors[panel.operand].type.c_type
        value = exprs.access(panel.operand, operand.indices)
    name = buffer_name(panel)
    if panel.lanes:
        copy = _blocked_copy(panel, operand, value, statement, exprs,
                             exprs.tensors[panel.operand].type.bits // 8, machine, transposes)
    else:
        copy = _row_major_copy(panel, operand, value, statement, exprs)
    # Read through a restrict pointer: read straight from the array, gcc no longer
    # keeps the block's accumulators in registers.
    return [
        cgen.Statement(f"_Alignas(64) {ctype} {name}_storage[{panel.elements}]"),
        cgen.Initializer(cgen.Value(f"{ctype} *restrict", name), f"{name}_storage"),
        braced(copy)]


def _bounds(dim: PanelDim, statement: ir.Statement, exprs: ExprEmitter) -> tuple[str, str]:
    """The C of the first and past-the-last offset into the tile along ``dim`` that lie
    inside the statement's index range."""
    index_range = statement.range_of(dim.index)
    origin = loop_iterator(dim.depth)
    return (f"polyc_max(0, {exprs.size(index_range.lo)} - {origin})",
            f"polyc_min({dim.extent}, {exprs.size(index_range.hi)} - {origin})")


def _row_major_copy(panel: Panel, operand: ir.Expr, value: str, statement: ir.Statement,
                    exprs: ExprEmitter):
    """The copy into an unblocked panel: one loop per dimension, the last a vector loop."""
    offset = ""
    for k, dim in enumerate(panel.dims):
        offset = f"polyc_p{k}" if k == 0 else f"({offset}) * {dim.extent} + polyc_p{k}"
    body = cgen.Block(
        [cgen.Initializer(cgen.Value("const int64_t", c_name(dim.index)),
                          f"{loop_iterator(dim.depth)} + polyc_p{k}")
         for k, dim in enumerate(panel.dims)]
        + [cgen.Statement(f"{buffer_name(panel)}[{offset}] = {value}")])
    for k in reversed(range(len(panel.dims))):
        low, high = _bounds(panel.dims[k], statement, exprs)
        body = cgen.For(f"int64_t polyc_p{k} = {low}", f"polyc_p{k} < {high}",
                        f"polyc_p{k} += 1", braced(body))
        if k == len(panel.dims) - 1:
            body = cgen.Module([cgen.Pragma("omp simd"), body])
    return body


def _blocked_copy(panel: Panel, operand: ir.Expr, value: str, statement: ir.Statement,
                  exprs: ExprEmitter, element_bytes: int, machine: Machine,
                  transposes: set | None):
    """The copy into a blocked panel: the vector dimension as blocks of lanes; where
    the source's rows (its index before the vector one) are copied a block at a time,
    each whole block first prefetches its lines :data:`PREFETCH_ROWS` rows ahead."""
    vector, lanes = panel.dims[0], panel.lanes
    indices = source_order(operand, [dim.index for dim in panel.dims])
    position = {dim.index: k for k, dim in enumerate(panel.dims)}  # buffer order
    offset = "polyc_block"
    for k, dim in enumerate(panel.dims[1:], 1):
        offset = f"({offset}) * {dim.extent} + polyc_p{k}"
    copy = cgen.Block(
        [cgen.Initializer(cgen.Value("const int64_t", c_name(vector.index)),
                          f"{loop_iterator(vector.depth)} + polyc_block * {lanes} + polyc_lane")]
        + [cgen.Initializer(cgen.Value("const int64_t", c_name(dim.index)),
                            f"{loop_iterator(dim.depth)} + polyc_p{k}")
           for k, dim in enumerate(panel.dims[1:], 1)]
        + [cgen.Statement(f"{buffer_name(panel)}[({offset}) * {lanes} + polyc_lane] = "
                          f"{value}")])
    body = copy
    for index in reversed(indices):
        k = position[index]
        dim = panel.dims[k]
        low, high = _bounds(dim, statement, exprs)
        if k:
            body = cgen.For(f"int64_t polyc_p{k} = {low}", f"polyc_p{k} < {high}",
                            f"polyc_p{k} += 1", braced(body))
            continue
        # A whole block of lanes (all but the tile's edges) copies with a constant trip
        # count: vectorised (a row of the source), where a variable one is a call to
        # memcpy per block, which slowed gemm (measurements: benchmarks/README.md,
        # "Design measurements").
        whole = cgen.For("int64_t polyc_lane = 0", f"polyc_lane < {lanes}",
                         "polyc_lane += 1", braced(body))
        transposing = None
        if body is not copy and transposes is not None:
            transposing = _transposing(panel, indices, value, statement, exprs,
                                       element_bytes, machine, transposes)
        if transposing is not None:
            whole = transposing("0", str(lanes))
        if body is copy:
            whole = cgen.Module([cgen.Pragma("omp simd"), whole])
            ahead = _prefetch_ahead(panel, indices, position, value, statement, exprs,
                                    element_bytes, machine)
            if ahead is not None:
                whole = cgen.Block([ahead, whole])
        if body is copy:
            # A partial block (a tile's edge, or a panel narrower than a block) copies
            # its lanes under a mask, vectorised: a loop from polyc_first to
            # polyc_last became a call to memcpy per row, where a kronecker product's
            # 16-wide panel, packed once per tile of rows, spent a tenth of its time.
            part = cgen.Module([cgen.Pragma("omp simd"), cgen.For(
                "int64_t polyc_lane = 0", f"polyc_lane < {lanes}", "polyc_lane += 1",
                cgen.If("polyc_lane >= polyc_first && polyc_lane < polyc_last",
                        braced(body)))])
        elif transposing is not None:
            part = transposing("polyc_first", "polyc_last")
        else:
            part = cgen.For("int64_t polyc_lane = polyc_first", "polyc_lane < polyc_last",
                            "polyc_lane += 1", braced(body))
        block = cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", "polyc_first"),
                             f"polyc_max(0, polyc_start - polyc_block * {lanes})"),
            cgen.Initializer(cgen.Value("const int64_t", "polyc_last"),
                             f"polyc_min({lanes}, polyc_end - polyc_block * {lanes})"),
            cgen.If(f"polyc_first == 0 && polyc_last == {lanes}", cgen.Block([whole]),
                    braced(part))])
        body = cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", "polyc_start"), low),
            cgen.Initializer(cgen.Value("const int64_t", "polyc_end"), high),
            cgen.For("int64_t polyc_block = polyc_start / " + str(lanes),
                     f"polyc_block * {lanes} < polyc_end", "polyc_block += 1", block)])
    return body


def _transposing(panel: Panel, indices: list[str], value: str, statement: ir.Statement,
                 exprs: ExprEmitter, element_bytes: int, machine: Machine, transposes: set):
    """The copy of a block's lanes from ``first`` to ``last`` (C expressions) through
    vector transposes, as a function of them, where the source walks the panel's last
    dimension along its rows (its last index, unit stride) and the block's lanes across
    them (tbmm's ``Y(b, n, k)`` packed along ``n``): squares of a vector's lanes on each
    side, each moved by the helper of :mod:`polyc.codegen.transposed_blocks` (rows
    loaded as vectors, shuffled, stored as the panel's rows); the lanes past the last
    whole square, and the steps past the last whole one, element by element. ``None``
    where the shapes do not fit (another order, lanes not a whole number of vectors)."""
    vector, last = panel.dims[0], panel.dims[-1]
    side = vector_lanes(machine, element_bytes)
    if (len(panel.dims) < 2 or len(indices) < 2 or indices[-1] != last.index
            or indices.index(vector.index) != len(indices) - 2 or side < 2
            or panel.lanes % side):
        return None
    shape = (element_bytes, side, side)
    k = len(panel.dims) - 1
    low, high = _bounds(last, statement, exprs)
    offset = "polyc_block"
    for j, dim in enumerate(panel.dims[1:], 1):
        offset = f"({offset}) * {dim.extent} + polyc_p{j}"
    element = exprs.tensors[panel.operand].type.c_type
    name = buffer_name(panel)

    def at(lane: str) -> list:
        return ([cgen.Initializer(cgen.Value("const int64_t", c_name(vector.index)),
                                  f"{loop_iterator(vector.depth)} + polyc_block * "
                                  f"{panel.lanes} + {lane}")]
                + [cgen.Initializer(cgen.Value("const int64_t", c_name(dim.index)),
                                    f"{loop_iterator(dim.depth)} + polyc_p{j}")
                   for j, dim in enumerate(panel.dims[1:], 1)])

    def code(first: str, last_lane: str) -> cgen.Block:
        transposes.add(shape)
        squares = cgen.Block([
            cgen.Statement(f"const {element} *polyc_src"),
            cgen.Statement("int64_t polyc_ls"),
            cgen.Block(at("polyc_group") + [cgen.Statement(f"polyc_src = &{value}")]),
            cgen.Block(at("polyc_group + 1")
                       + [cgen.Statement(f"polyc_ls = &{value} - polyc_src")]),
            cgen.Statement(f"{helper_name(*shape)}(&{name}[({offset}) * {panel.lanes} + "
                           f"polyc_group], {panel.lanes}, polyc_src, polyc_ls)")])
        # the elements no square copied: the steps past the squares' last in their
        # lanes, every step in the lanes past the last square
        rest = cgen.For(
            f"int64_t polyc_lane = {first}", f"polyc_lane < {last_lane}", "polyc_lane += 1",
            cgen.For(f"int64_t polyc_p{k} = polyc_lane < polyc_squared ? polyc_rest : {low}",
                     f"polyc_p{k} < {high}", f"polyc_p{k} += 1", cgen.Block(at("polyc_lane") + [
                         cgen.Statement(f"{name}[({offset}) * {panel.lanes} + polyc_lane] = "
                                        f"{value}")])))
        return cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", "polyc_squared"),
                             f"({first}) + (({last_lane}) - ({first})) / {side} * {side}"),
            cgen.Initializer(cgen.Value("const int64_t", "polyc_rest"),
                             f"({low}) + (({high}) - ({low})) / {side} * {side}"),
            cgen.For(f"int64_t polyc_group = {first}", "polyc_group < polyc_squared",
                     f"polyc_group += {side}",
                     cgen.For(f"int64_t polyc_p{k} = {low}", f"polyc_p{k} < polyc_rest",
                              f"polyc_p{k} += {side}", squares)),
            rest])

    return code


def _prefetch_ahead(panel: Panel, indices: list[str], position: dict[str, int], value: str,
                    statement: ir.Statement, exprs: ExprEmitter, element_bytes: int,
                    machine: Machine):
    """The prefetch of a whole block's lines :data:`PREFETCH_ROWS` source rows ahead
    (``value``: the C of the copied element), inside the tile's rows; ``None`` where the
    vector index is not the source's last or no loop walks rows around the blocks."""
    vector = panel.dims[0]
    if len(indices) < 2 or indices[-1] != vector.index:
        return None
    row = position[indices[-2]]
    _, high = _bounds(panel.dims[row], statement, exprs)
    bindings = [cgen.Initializer(cgen.Value("const int64_t", c_name(vector.index)),
                                 f"{loop_iterator(vector.depth)} + polyc_block * {panel.lanes}")]
    for k, dim in enumerate(panel.dims[1:], 1):
        ahead = f" + {PREFETCH_ROWS}" if k == row else ""
        bindings.append(cgen.Initializer(cgen.Value("const int64_t", c_name(dim.index)),
                                         f"{loop_iterator(dim.depth)} + polyc_p{k}{ahead}"))
    line = line_elements(machine, element_bytes)
    fetches = [cgen.Statement(f"__builtin_prefetch(&{value} + {lane}, 0, 3)")
               for lane in range(0, panel.lanes, line)]
    return cgen.If(f"polyc_p{row} + {PREFETCH_ROWS} < {high}",
                   cgen.Block(bindings + fetches))


def panel_read(panel: Panel, statement: ir.Statement,
               lane_iterator: str) -> Callable[[tuple], str | None]:
    """The C of a full register block's read of the packed tensor, given the read's
    indices (``None`` for a read the panel does not hold)."""
    packed = operand_expr(panel, statement).indices
    element = panel_element(panel, lane_iterator)
    return lambda indices: element if indices == packed else None


def panel_element(panel: Panel, lane_iterator: str) -> str:
    """The C of the panel's element that a full register block's lane reads (the lane
    iterator of the level that walks a blocked panel's blocked dimension)."""
    if not panel.lanes:
        offset = ""
        for dim in panel.dims:
            relative = f"({c_name(dim.index)} - {loop_iterator(dim.depth)})"
            offset = f"({offset}) * {dim.extent} + {relative}" if offset else relative
        return f"{buffer_name(panel)}[{offset}]"
    vector, others = panel.dims[0], panel.dims[1:]
    v = c_name(vector.index)
    offset = f"({v} - {lane_iterator} - {loop_iterator(vector.depth)}) / {panel.lanes}"
    for dim in others:
        offset = (f"({offset}) * {dim.extent} + "
                  f"({c_name(dim.index)} - {loop_iterator(dim.depth)})")
    return f"{buffer_name(panel)}[({offset}) * {panel.lanes} + {lane_iterator}]"


def iterators_around_marks(node: isl.AstNode) -> dict[object, frozenset[str]]:
    """For each mark in the AST (its value: :func:`polyc.scheduling.marks.mark_value`), the loop
    iterators bound at every place it occurs."""
    around: dict[object, frozenset[str]] = {}

    def visit(n: isl.AstNode, bound: frozenset[str]) -> None:
        kind = n.get_type()
        if kind == isl.ast_node_type.for_:
            bound = bound | {n.for_get_iterator().get_id().get_name()}
        elif kind == isl.ast_node_type.mark:
            mark = node_mark(n)
            around[mark] = around[mark] & bound if mark in around else bound
        for child in ast_children(n):
            visit(child, bound)

    visit(node, frozenset())
    return around
