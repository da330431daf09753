"""Which members of a band make a register block, and what the block needs to know of
them: the row member, the reductions and the outer member its columns may span
(:func:`register_block_members`, :class:`BlockMembers`), the window
offsets that go outside (:func:`is_window`, :func:`block_reductions`), the row factor
(:func:`block_row_factor`), the statement the vector member walks, and whether a
partial block at the end may move back over its neighbour (:func:`edge_moves_back`).

:mod:`polyc.scheduling.tiling` builds the blocks (``_register_block``) and sizes the
tiles around them from these answers.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.poly.program import PolyProgram, isl_items, statements_named
from polyc.scheduling.band_members import (Member, is_vector_reduction, statement_accesses,
                                           uses, walks_unit_stride)
from polyc.scheduling.packing import row_factor


@dataclass(frozen=True)
class BlockMembers:
    """The members of a band that make a register block with its vector member: the
    ``row`` member, the ``reductions`` kept inside the block, and the ``outer`` member
    its columns span besides the vector one (``None``: the vector member alone)."""

    row: Member
    reductions: list[Member]
    outer: Member | None = None


def register_block_members(members: list[Member], vector: Member, program: PolyProgram
                           ) -> BlockMembers | None:
    """The members of a register block with ``vector``, or ``None``.

    Every non-parallel member must be a reduction member of one pure reduction whose
    accumulator does not depend on it; the row member is a parallel member that the
    accumulator depends on, along which an operand invariant in ``vector`` varies (it
    is broadcast across the vector lanes) and the operands that vary with ``vector``
    do not (each vector load serves every row of the block).

    Where several members qualify (a layer applied to every image of a batch,
    ``Y(b, l, n) += X(b, l, k) * W(k, n)``), the rows are the one whose index lies
    deepest in the broadcast operand's layout, so that a block's rows are neighbours in
    memory and the rows a tile streams one run: ``X(m, n0, n1, r)`` blocked along
    ``m`` had read eight lines 256 KiB apart per block (kronecker3 4.35 → 3.77 ms along
    ``n1``, its outer members then plain loops; measurements: benchmarks/README.md,
    "Design measurements"). Ties go to the outer member.

    A sum over windows that no operand broadcasts (a pooling, a box filter) gets rows
    all the same (:func:`_stencil_rows`) where its vector loads are contiguous.

    The block's columns span an outer member too where one qualifies
    (:func:`_outer_columns`).
    """
    reductions = [m for m in members if not m.coincident]
    if not reductions or not all(is_vector_reduction(m, program) for m in reductions):
        return None
    names = {n for m in reductions for n, index in m.walks.items() if index is not None}
    if len(names) != 1:
        return None
    name = names.pop()
    statement = program.statement(name).statement
    accesses = statement_accesses(program.statement(name), program.op)
    vector_index = vector.walks.get(name)
    if vector_index is None or vector_index not in statement.indices:
        return None
    inputs = [a for a in accesses if not a.is_write and a.tensor != statement.tensor]
    best, best_depth = None, -1
    for row in members:
        row_index = row.walks.get(name)
        if row is vector or not row.coincident or row_index not in statement.indices:
            continue
        # the innermost dimension along which a broadcast operand walks the row member
        depth = _deepest_dimension(
            [a for a in inputs if all(d is not None and d.coefficient(vector_index) == 0
                                      for d in a.dims)], row_index, gathered_moves=False)
        # Each vector of the streamed operands is reused across the block's rows.
        streamed_reused = all(all(d is not None and d.coefficient(row_index) == 0
                                  for d in a.dims)
                              for a in inputs
                              if uses(a, vector_index))
        if depth is not None and streamed_reused and depth > best_depth:
            best, best_depth = row, depth
    if best is not None:
        return BlockMembers(best, reductions, _outer_columns(members, vector, best, name,
                                                             program, inputs))
    if all(is_window(m, program) for m in reductions) and all(
            walks_unit_stride(a, vector_index) for a in inputs if uses(a, vector_index)):
        rows = _stencil_rows(members, vector, name, statement)
        if rows is not None:
            return BlockMembers(rows, reductions)
    return None


def _outer_columns(members: list[Member], vector: Member, row: Member, name: str,
                   program: PolyProgram, inputs) -> Member | None:
    """The member a register block's columns span besides ``vector``
    (:func:`~polyc.machine.rules.outer_column_steps`): a parallel member the
    accumulator depends on, along which no broadcast operand varies (each broadcast
    serves the block's columns along it too) and a streamed operand does (each of its
    steps loads its own vectors); where several qualify, the one whose index lies
    deepest in a streamed operand's layout (a convolution's image rows ``h`` of
    ``I(n, c, h + r, w + s)``, not its images ``n``). ``None`` where none qualifies (a
    matmul: every parallel member but the vector one moves the broadcast operand).

    A convolution's rows of 14 output columns, under half of a block two vectors wide,
    had run half-width blocks, one vector per row: eight broadcasts and one load for
    eight multiply-adds (measurements: benchmarks/README.md, "Design measurements").
    Only a member whose steps the statement's domain leaves an interval of their own:
    a convolution's data gradient, whose window rows are bounded by its image rows
    (``r in max(0, h + R - H):min(R, h + 1)``), had its blocks cut into many pieces,
    its C twice as long and gcc 5.5x as slow.
    Only where the streamed operands' vectors are contiguous: a strided convolution's
    gathered lanes, in blocks twice as tall and unrolled, took gcc 15 s instead of 5.
    """
    statement = program.statement(name).statement
    vector_index = vector.walks[name]
    streamed = [a for a in inputs if uses(a, vector_index)]
    broadcast = [a for a in inputs if not uses(a, vector_index)]
    if not all(walks_unit_stride(a, vector_index) for a in streamed):
        return None
    best, best_depth = None, -1
    for member in members:
        index = member.walks.get(name)
        if (member is vector or member is row or not member.coincident
                or index not in statement.indices
                or any(uses(a, index) for a in broadcast)
                or not _independent_interval(program, name, index)):
            continue
        depth = _deepest_dimension(streamed, index, gathered_moves=True)
        if depth is not None and depth > best_depth:
            best, best_depth = member, depth
    return best


def _deepest_dimension(accesses, index: str, gathered_moves: bool) -> int | None:
    """The innermost dimension of any of ``accesses`` that ``index`` moves, ``None`` where
    it moves none; a gathered dimension (no affine form) counts as moved where
    ``gathered_moves``."""
    return max((k for a in accesses for k, d in enumerate(a.dims)
                if (gathered_moves if d is None else d.coefficient(index))),
               default=None)


def _stencil_rows(members: list[Member], vector: Member, name: str,
                  statement: ir.Statement) -> Member | None:
    """The rows of a register block for a sum over windows that no operand broadcasts
    (``O(h, w) +=! I(h + kh, w + kw)``): the parallel member of the accumulator's layout
    nearest the vector's. Its loads serve one accumulator each, but the sums stay in
    registers across the window: accumulated in memory, each pass over a short row
    waits on the store of the pass before. Only where the vector's loads are contiguous:
    a stride-2 pool's block of gathers ran 2x slower than its loop over memory."""
    rows = [m for m in members if m is not vector and m.coincident
            and m.walks.get(name) in statement.indices]
    return max(rows, key=lambda m: statement.indices.index(m.walks[name]), default=None)


def reuses_nothing(name: str, vector_index: str, program: PolyProgram) -> bool:
    """Whether every operand of statement ``name`` varies along ``vector_index``: its
    register blocks (:func:`_stencil_rows`) reuse no load across their rows."""
    statement = program.statement(name)
    return all(uses(a, vector_index) for a in statement_accesses(statement, program.op)
               if not a.is_write and a.tensor != statement.statement.tensor)


def is_window(member: Member, program: PolyProgram) -> bool:
    """Whether the member's index is added to another index in some access (a sliding
    window's offset, like ``r`` in ``I(h + r)``)."""
    return any(len(d.indices) > 1 and index in d.indices
               for name, index in member.walks.items() if index is not None
               for access in statement_accesses(program.statement(name), program.op)
               for d in access.dims if d is not None)


def block_reductions(reductions: list[Member], program: PolyProgram) -> list[Member]:
    """A register block's reduction members in loop order, outermost first. Window
    offsets (the r, s of ``I(h + r, w + s)``) are usually a few steps long: they go
    outside, so the innermost reduction loop is a long one."""
    return sorted(reductions, key=lambda m: not is_window(m, program))


def block_row_factor(vector: Member, blocking: BlockMembers, program: PolyProgram
                     ) -> ir.Expr | None:
    """The row factor (:func:`~polyc.scheduling.packing.row_factor`) of the statement a
    register block computes, if it has one."""
    name = next(n for n, index in blocking.reductions[0].walks.items() if index is not None)
    statement = program.statement(name).statement
    return row_factor(statement.rhs, vector.walks[name], blocking.row.walks[name])


def walking_statement(vector: Member, program: PolyProgram) -> str:
    """The reduction statement a register block's vector member walks."""
    return next(name for name, index in vector.walks.items()
                if index is not None and not program.statement(name).is_init)


def edge_moves_back(vector: Member, program: PolyProgram, read_only: frozenset[str]) -> bool:
    """Whether a partial register block at the end of ``vector`` may move back over its
    neighbour's columns (:class:`~polyc.scheduling.marks.RegisterBlock`): the block's
    one reduction statement has its instances along the vector index as an interval
    independent of its other indices (no constraint of its domain ties that index to
    another), and reads only ``read_only`` tensors at indices that move with it."""
    walking = [name for name, index in vector.walks.items()
               if index is not None and not program.statement(name).is_init]
    if len(walking) != 1:
        return False
    stmt = program.statement(walking[0])
    index = vector.walks[stmt.name]
    if any(read.tensor not in read_only for read in ir.walk(stmt.statement.rhs)
           if isinstance(read, ir.Read) and index in ir.index_names(*read.indices)):
        return False
    return _independent_interval(program, stmt.name, index)


def _independent_interval(program: PolyProgram, name: str, index: str) -> bool:
    """Whether statement ``name``'s instances along ``index`` are an interval that no
    constraint of its domain ties to another of its indices."""
    stmt = program.statement(name)
    domain = statements_named(program.domain, [name]).coalesce()
    sets = isl_items(domain.get_set_list())
    if len(sets) != 1:
        return False
    position = stmt.indices.index(index)
    for basic in isl_items(sets[0].get_basic_set_list()):
        if basic.dim(isl.dim_type.div):
            return False
        for constraint in basic.get_constraints():
            if constraint.get_coefficient_val(isl.dim_type.set, position).is_zero():
                continue
            if any(not constraint.get_coefficient_val(isl.dim_type.set, k).is_zero()
                   for k in range(basic.dim(isl.dim_type.set)) if k != position):
                return False
    return True
