"""Panel packing: copy a streamed operand's tile into the order the register block reads it.

A register block (:func:`polyc.scheduling.tiling._register_block`) loads, per step of
the reduction, one row of vectors of the *streamed* operand (``B(k, n)`` in
matmul: the operand that varies with the vector index) and reuses it for every
row of the block. Read in place, a block's panel of ``B`` (tile's ``k`` ×
32 columns) is spread over one row of ``B`` per ``k``: with ``N = 1024`` that
is 128 rows 4 KiB apart, all in the same few L1 sets and on 128 pages, so it is
fetched again from L2 for each row of blocks. Copied once per tile into a
buffer laid out as ``[n / 32][k][n % 32]`` (BLIS's packed panels), each panel
is contiguous::

    for tiles (c0, c1, c2):                       for tiles (c0, c1, c2):
      for blocks of rows, columns:          →       copy B's tile into polyc_panel_B
        for k: acc += A(m, k) * B(k, n)             for blocks of rows, columns:
                                                      for k: acc += A(m, k) * panel(n, k)

The decision is made from the access relations when the register block is built:
an operand is packed when

* it varies with the vector index and not with the block's row index, so every
  block of rows of the tile reads each panel (or, the broadcast operand, with the row
  index and not the vector index: panels of rows), and at least ``MIN_REUSE``
  blocks do,
* it is read with plain indices (``B(k, n)``, any order; not ``I(h + r)``),
  each walked by a tiled member with no offset, and only by reads with the same
  indices,
* nothing writes it while the loops run (an input, a layout copy made before
  them, a temporary another nest computes: no statement under the tiled band
  writes it),
* its tile is more than one row (some other index has a tile extent above 1),
  the vector index's tile extent is a whole number of blocks, and the buffer
  fits the budget (it lives on the stack of the thread that runs the tile).

A *row factor* is packed too: the part of the product that varies with the block's
rows and not its vector lanes, when it is more than a read (``alpha * A(m, k)`` in
``alpha * A(m, k) * B(k, n)``). In place, the block evaluates it once per row, per
step of the reduction, per block of columns: a scalar multiply per vector FMA pair
on the FMA ports (2mm's first product ran slower than the plain matmul;
measurements: benchmarks/README.md, "Design measurements").
Packed, it is evaluated once per element of the tile, in the same order, so the
values are the same; the block reads it like a broadcast operand. It pays from
``MIN_FACTOR_REUSE`` blocks of columns on (the copy is one pass over the tile).

The decision, a :class:`Panel`, travels to code generation in a mark above the
tile's point loops (:mod:`polyc.scheduling.marks`), which isl prints as
``pack S0 B: n@1+128/32, k@2+128`` — tensor ``B`` of statement ``S0``; the
buffer's dimensions outermost first, each ``index@depth+extent`` (the tile's
first ``index`` is the iterator ``c<depth>`` of the tile loop), the vector
dimension first, split into blocks of 32 lanes that go innermost. A row factor's
panel names the factor's text in parentheses: ``pack S0 (alpha * A(m, k)): m@0+128,
k@2+128``, unblocked, row-major. Full register blocks read the panel, and so do
edge blocks whose lanes stay within their columns; a block moved back over its
neighbour's columns reads the tensor itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


from polyc.errors import InternalError
from polyc.lang import ir
from polyc.lang.printer import expr_to_tc

# The register blocks of a tile that must read each panel for the copy to pay: the copy
# is one pass over the tile, and each block that reads the panel reads it contiguously.
# Packing B, each panel read by every block of rows of the tile, paid; packing A too,
# each panel read by a few blocks of columns, lost part of that (measurements:
# benchmarks/README.md, "Design measurements").
MIN_REUSE = 8
# Blocks of columns that must read each element of a packed row factor: each saves the
# factor's arithmetic per row and step; the copy costs about one block's share.
MIN_FACTOR_REUSE = 2


@dataclass(frozen=True)
class PanelDim:
    """One dimension of a packed tile: the iteration index that walks it, the schedule
    depth of the tile loop whose iterator is the tile's first value of that index, and
    the tile's extent along it."""

    index: str
    depth: int
    extent: int


@dataclass(frozen=True)
class Panel:
    """An operand's tile, packed into panels of ``lanes`` along one index (the vector
    index of a streamed operand, the row index of a broadcast one or a row factor).

    ``operand`` is the packed tensor's name, or a row factor's TC text in parentheses.
    ``dims`` is the buffer's order, outermost first: ``dims[0]`` is that blocked index
    (its blocks of ``lanes``; the lanes themselves go innermost), then the others in
    the order the register block's loops walk them. A row factor's panel is not
    blocked (``lanes == 0``): its dims are in the order its copy walks them, row-major
    like its source, so that the copy is a vector loop; the block reads it by
    broadcasts, as it would read the source."""

    statement: str
    operand: str
    dims: tuple[PanelDim, ...]
    lanes: int

    @property
    def is_factor(self) -> bool:
        return self.operand.startswith("(")

    @property
    def elements(self) -> int:
        return math.prod(dim.extent for dim in self.dims)

    @property
    def blocks(self) -> int:
        return self.dims[0].extent // self.lanes if self.lanes else 1

    def mark_name(self) -> str:
        """The text of the ``pack`` mark carrying this panel (:mod:`polyc.scheduling.marks`)."""
        dims = ", ".join(f"{d.index}@{d.depth}+{d.extent}"
                         + (f"/{self.lanes}" if k == 0 and self.lanes else "")
                         for k, d in enumerate(self.dims))
        return f"pack {self.statement} {self.operand}: {dims}"

    def describe(self) -> str:
        others = " × ".join(f"{d.index} {d.extent}" for d in self.dims[1:])
        if self.is_factor:
            extents = " × ".join(f"{d.index} {d.extent}" for d in self.dims)
            return f"row factor {self.operand[1:-1]} evaluated per tile into {extents}"
        return (f"{self.operand} packed per tile into {self.blocks} panel"
                f"{'s' if self.blocks != 1 else ''} of {others} × {self.lanes} lanes "
                f"along {self.dims[0].index}")


def operand_expr(panel: Panel, statement: ir.Statement) -> ir.Expr:
    """The expression ``panel`` holds the values of: the read of its tensor (all the
    statement's reads of it agree), or the row factor its mark names."""
    for e in ir.walk(statement.rhs):
        if panel.is_factor and f"({expr_to_tc(e)})" == panel.operand:
            return e
        if not panel.is_factor and isinstance(e, ir.Read) and e.tensor == panel.operand:
            return e
    raise InternalError(f"{statement.name} has no operand {panel.operand}")


def source_order(operand: ir.Expr, names: list[str]) -> list[str]:
    """``names`` in the order a copy of ``operand`` walks them, outermost first: the
    indices of the operand's widest read in that read's order (rows of the source read
    whole), then the others in the order given."""
    reads = [e for e in ir.walk(operand) if isinstance(e, ir.Read)]
    widest = max(reads, key=lambda read: len(read.indices)).indices if reads else ()
    first = [i.name for i in widest if isinstance(i, ir.Index) and i.name in names]
    return first + [n for n in names if n not in first]


def row_factor(rhs: ir.Expr, vector_index: str, row_index: str) -> ir.Expr | None:
    """The one maximal part of ``rhs`` that uses ``row_index`` and not ``vector_index``
    when it is more than a read or a conversion of one: ``alpha * A(m, k)`` in
    ``alpha * A(m, k) * B(k, n)``. ``None`` when there is none, or several."""
    found = []

    def visit(e: ir.Expr) -> None:
        names = ir.index_names(e)
        if vector_index not in names:
            if row_index in names:
                found.append(e)
            return
        for child in ir.children(e):
            visit(child)

    visit(rhs)
    if len(found) != 1:
        return None
    factor = found[0]
    plain = factor.operand if isinstance(factor, ir.Cast) else factor
    return None if isinstance(plain, ir.Read) else factor


def register_block_panels(statement_name: str, statement: ir.Statement, op: ir.Op,
                          read_only: frozenset[str], vector_index: str, row_index: str,
                          loop_order: list[str], tiles: dict[str, tuple[int, int]],
                          rows: int, columns: int, budget: int) -> list[Panel]:
    """The operands of a register-blocked ``statement`` worth packing (module docstring):
    the streamed ones in panels of ``columns`` vector lanes, the broadcast ones (varying
    with the row index, not the vector index) in panels of ``rows`` rows.

    ``loop_order``: the indices of the tile's point loops, outermost first;
    ``tiles``: ``index -> (depth of its tile loop, tile extent)`` for the indices
    walked by a tiled member with no offset; ``read_only``: the tensors nothing
    writes while the loops run; ``budget``: the largest buffer, in bytes.
    """
    factor = _factor_panel(statement_name, statement, op, read_only, vector_index,
                           row_index, loop_order, tiles, rows, columns, budget)
    inside = {read.tensor for read in ir.walk(factor[0])
              if isinstance(read, ir.Read)} if factor else set()
    reads: dict[str, set[tuple[ir.Expr, ...]]] = {}
    for read in ir.walk(statement.rhs):
        if isinstance(read, ir.Read) and op.tensor(read.tensor).rank:
            reads.setdefault(read.tensor, set()).add(read.indices)
    # a copy of the tile reads every element the loops cover: only a read evaluated
    # everywhere is known to stay inside its tensor there (not one under a guard)
    unguarded = {(read.tensor, read.indices) for read in ir.walk_unconditional(statement.rhs)
                 if isinstance(read, ir.Read)}
    panels = []
    for tensor, variants in sorted(reads.items()):
        if tensor == statement.tensor or tensor not in read_only or len(variants) != 1:
            continue
        if (tensor, next(iter(variants))) not in unguarded:
            continue
        if tensor in inside:
            continue  # the factor's panel holds what the block reads of it
        indices = next(iter(variants))
        if not all(isinstance(i, ir.Index) for i in indices):
            continue
        names = [i.name for i in indices]
        if len(set(names)) != len(names) or not all(n in tiles for n in names):
            continue
        if vector_index in names and row_index not in names:
            blocked, lanes, reused_along, block = vector_index, columns, row_index, rows
        elif row_index in names and vector_index not in names:
            blocked, lanes, reused_along, block = row_index, rows, vector_index, columns
        else:
            continue
        if tiles.get(reused_along, (0, 0))[1] < MIN_REUSE * block:
            continue  # too few register blocks read each panel to pay for the copy
        others = sorted((n for n in names if n != blocked), key=loop_order.index)
        if tiles[blocked][1] % lanes or not any(tiles[n][1] > 1 for n in others):
            continue
        dims = tuple(PanelDim(n, *tiles[n]) for n in [blocked, *others])
        panel = Panel(statement_name, tensor, dims, lanes)
        if panel.elements * max(1, op.tensor(tensor).type.bits // 8) <= budget:
            panels.append(panel)
    return panels + ([factor[1]] if factor else [])


def _factor_panel(statement_name: str, statement: ir.Statement, op: ir.Op,
                  read_only: frozenset[str], vector_index: str, row_index: str,
                  loop_order: list[str], tiles: dict[str, tuple[int, int]],
                  rows: int, columns: int, budget: int) -> tuple[ir.Expr, Panel] | None:
    """The row factor of ``statement`` and its panel, where packing it is possible and
    pays (module docstring); arguments as for :func:`register_block_panels`."""
    factor = row_factor(statement.rhs, vector_index, row_index)
    if factor is None:
        return None
    reads = [e for e in ir.walk(factor) if isinstance(e, ir.Read)]
    if any(read.tensor not in read_only or
           not all(isinstance(i, ir.Index) for i in read.indices) for read in reads):
        return None  # a value written while the loops run, or a gather
    names = ir.index_names(factor)
    if not names <= tiles.keys():
        return None
    if tiles.get(vector_index, (0, 0))[1] < MIN_FACTOR_REUSE * columns:
        return None
    order = source_order(factor, sorted(names, key=loop_order.index))
    dims = tuple(PanelDim(n, *tiles[n]) for n in order)
    panel = Panel(statement_name, f"({expr_to_tc(factor)})", dims, 0)
    if panel.elements * max(1, factor.type.compute_type.bits // 8) > budget:
        return None
    return factor, panel
