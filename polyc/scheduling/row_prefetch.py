"""Which row loops prefetch the next row, and what (a decision codegen carries out).

A row-wise fused nest (softmax, layer norm, their backward) walks each row in several
passes; the passes wait for memory where they first read a row, while the others
read the L1 cache. :mod:`polyc.codegen.prefetch` spreads software prefetches of the
next row over the last pass. This pass decides where, and of which tensors: a
one-member row band whose child is a sequence of passes, the last a SIMD loop of one
statement; each input that a pass before the last reads at unit stride along its
innermost loop (indices that read no tensor, the others not walked by it) and along
the row is fetched, where the first pass that reads it does (a softmax's backward
reads ``X`` in its first pass and ``d_Y`` from its second: both are fetched; fetching
``X`` alone left the row of ``d_Y`` to wait for memory, 1.57 against 1.34 ms on
4096 × 1024, Zen 5, 2 threads). An output that only the last pass stores is fetched
for writing too (:func:`_row_stores`). The band is marked ``prefetch next row from
<bytes>: <tensors>; for writing: <output>`` (:class:`~polyc.scheduling.marks.PrefetchNextRow`).

Whether to prefetch is decided per call: where the fetched tensors hold at least
:func:`~polyc.machine.rules.row_prefetch_threshold` bytes together (half the last-level
cache). A smaller walk finds its rows in that cache, and the prefetches and the chunks
of the last pass cost instructions for nothing.
"""
from __future__ import annotations

import islpy as isl

from polyc.lang import ir
from polyc.machine import Machine
from polyc.machine.rules import row_prefetch_threshold
from polyc.poly.program import PolyProgram, statement_names
from polyc.scheduling.band_members import band_members
from polyc.scheduling.marks import SIMD_MARK, PrefetchNextRow, insert_decision_marks, node_mark
from polyc.scheduling.tiling import has_inner_band


def mark_row_prefetches(tree: isl.Schedule, program: PolyProgram,
                        machine: Machine) -> isl.Schedule:
    """``tree`` with a :class:`PrefetchNextRow` mark above each row band that prefetches."""
    threshold = row_prefetch_threshold(machine)
    return insert_decision_marks(tree, lambda node: (
        row_prefetch(node, program, threshold)
        if node.get_type() == isl.schedule_node_type.band else None))


def row_prefetch(row: isl.ScheduleNode, program: PolyProgram,
                 threshold: int) -> PrefetchNextRow | None:
    """What the row band ``row`` prefetches for its next row, in calls where that holds
    at least ``threshold`` bytes; ``None`` for nothing."""
    if row.band_n_member() != 1 or row.child(0).get_type() != isl.schedule_node_type.sequence:
        return None
    passes = [row.child(0).child(k) for k in range(row.child(0).n_children())]
    if len(passes) < 2 or not _simd_loop_of_one_statement(passes[-1].child(0)):
        return None
    row_walks = band_members(row, program)[0].walks
    tensors: list[str] = []
    for band in (band for part in passes[:-1] for band in _innermost_bands(part, program)):
        pass_walks = band_members(band, program)[-1].walks
        for name in statement_names(band.get_domain()):
            stmt = program.statement(name)
            if not stmt.is_init:
                tensors += [t for t in _row_reads(stmt, pass_walks.get(name),
                                                  row_walks.get(name), program)
                            if t not in tensors]
    stores = _row_stores(passes, row_walks, program)
    return (PrefetchNextRow(tuple(tensors), stores, threshold) if tensors or stores
            else None)


def _row_stores(passes: list[isl.ScheduleNode], row_walks: dict,
                program: PolyProgram) -> tuple[str, ...]:
    """The output the last pass stores along its loop and the row, where no earlier pass
    reads or writes it: its lines are not in the cache when the last pass stores them,
    and each store waits for its line to be read from memory (a softmax spelled with its
    exponentials in a row buffer: 1.30-1.37 against 1.05-1.10 ms with them stored into
    ``Y`` by an earlier pass, 4096 × 1024, Intel Xeon, 2 threads; with the lines fetched
    for writing after the first pass, 1.11-1.14: benchmarks/README.md)."""
    bands = _innermost_bands(passes[-1], program)
    names = statement_names(bands[0].get_domain()) if len(bands) == 1 else []
    if len(names) != 1:
        return ()
    last, (name,) = bands[0], names
    statement = program.statement(name).statement
    tensor = program.op.tensor(statement.tensor)
    earlier = [program.statement(other).statement for part in passes[:-1]
               for other in statement_names(part.filter_get_filter())]
    if (tensor.role != ir.OUTPUT or not statement.indices
            or any(statement.tensor == s.tensor or statement.tensor in s.tensors_read
                   for s in earlier)
            or statement.indices[-1] != band_members(last, program)[-1].walks.get(name)
            or row_walks.get(name) not in statement.indices[:-1]):
        return ()
    return (statement.tensor,)


def _row_reads(stmt, walks: str | None, row_walks: str | None,
               program: PolyProgram) -> list[str]:
    """The inputs that statement ``stmt`` reads at unit stride along its pass's loop (which
    walks its index ``walks``) and along the row (index ``row_walks``), with indices that
    read no tensor."""
    tensors = []
    for read in ir.walk(stmt.statement.rhs):
        if not isinstance(read, ir.Read) or not read.indices:
            continue
        *outer, inner = read.indices
        names = ir.index_names(*read.indices)
        if (program.op.tensor(read.tensor).role == ir.INPUT and isinstance(inner, ir.Index)
                and names <= set(stmt.indices)
                and not any(isinstance(e, ir.Read) for i in outer for e in ir.walk(i))
                and walks == inner.name and walks not in ir.index_names(*outer)
                and row_walks in names and read.tensor not in tensors):
            tensors.append(read.tensor)
    return tensors


def _simd_loop_of_one_statement(node: isl.ScheduleNode) -> bool:
    marks = set()
    while node.get_type() == isl.schedule_node_type.mark:
        marks.add(node_mark(node))
        node = node.child(0)
    return (SIMD_MARK in marks and node.get_type() == isl.schedule_node_type.band
            and len(statement_names(node.get_domain())) == 1)


def _innermost_bands(node: isl.ScheduleNode, program: PolyProgram) -> list[isl.ScheduleNode]:
    """The bands under ``node``, in order, that are the innermost loop of a pass: no band
    below them, and a last member that is a loop (not a constant) for their statements."""
    if node.get_type() == isl.schedule_node_type.band and not has_inner_band(node):
        last = band_members(node, program)[-1]
        names = statement_names(node.get_domain())
        constant = all(name in last.walks and last.walks[name] is None for name in names)
        return [] if constant else [node]
    return [band for k in range(node.n_children())
            for band in _innermost_bands(node.child(k), program)]
