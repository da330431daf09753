"""Which row loops prefetch the next row, and what (a decision codegen carries out).

A row-wise fused nest (softmax, layer norm) walks each row in several passes; its
first pass waits for memory while the others read the L1 cache.
:mod:`polyc.codegen.prefetch` spreads software prefetches of the next row over the
last pass. This pass decides where, and of which tensors: a one-member row band
whose child is a sequence of passes, the last a SIMD loop of one statement; the
first pass's innermost loop runs one statement, and each input it reads at unit
stride along that loop (indices that read no tensor, the others not walked by it)
and along the row is fetched. The band is marked ``prefetch next row: <tensors>``
(:class:`~polyc.scheduling.marks.PrefetchNextRow`).
"""
from __future__ import annotations

import islpy as isl

from polyc.lang import ir
from polyc.poly.program import PolyProgram, isl_items
from polyc.scheduling.band_members import band_members
from polyc.scheduling.marks import SIMD_MARK, PrefetchNextRow, decision_mark, node_mark


def mark_row_prefetches(tree: isl.Schedule, program: PolyProgram) -> isl.Schedule:
    """``tree`` with a :class:`PrefetchNextRow` mark above each row band that prefetches."""
    return _visit(tree.get_root(), program).get_schedule()


def _visit(node: isl.ScheduleNode, program: PolyProgram) -> isl.ScheduleNode:
    """The subtree at ``node`` marked; returns the same position."""
    if node.get_type() == isl.schedule_node_type.band:
        decision = row_prefetch(node, program)
        if decision is not None:
            node = node.insert_mark(decision_mark(decision)).child(0)
            return _children(node, program).parent()
    return _children(node, program)


def _children(node: isl.ScheduleNode, program: PolyProgram) -> isl.ScheduleNode:
    for position in range(node.n_children()):
        node = _visit(node.child(position), program).parent()
    return node


def row_prefetch(row: isl.ScheduleNode, program: PolyProgram) -> PrefetchNextRow | None:
    """What the row band ``row`` prefetches for its next row; ``None`` for nothing."""
    if row.band_n_member() != 1 or row.child(0).get_type() != isl.schedule_node_type.sequence:
        return None
    passes = [row.child(0).child(k) for k in range(row.child(0).n_children())]
    if len(passes) < 2 or not _simd_loop_of_one_statement(passes[-1].child(0)):
        return None
    first = next((band for part in passes[:-1] for band in _innermost_bands(part, program)),
                 None)
    if first is None:
        return None
    (name,) = _statements(first)
    stmt = program.statement(name)
    if stmt.is_init:
        return None
    first_walks = band_members(first, program)[-1].walks.get(name)
    row_walks = band_members(row, program)[0].walks.get(name)
    tensors = []
    for read in ir.walk(stmt.statement.rhs):
        if not isinstance(read, ir.Read) or not read.indices:
            continue
        *outer, inner = read.indices
        names = ir.index_names(*read.indices)
        if (program.op.tensor(read.tensor).role == ir.INPUT and isinstance(inner, ir.Index)
                and names <= set(stmt.indices)
                and not any(isinstance(e, ir.Read) for i in outer for e in ir.walk(i))
                and first_walks == inner.name and first_walks not in ir.index_names(*outer)
                and row_walks in names and read.tensor not in tensors):
            tensors.append(read.tensor)
    return PrefetchNextRow(tuple(tensors)) if tensors else None


def _simd_loop_of_one_statement(node: isl.ScheduleNode) -> bool:
    marks = set()
    while node.get_type() == isl.schedule_node_type.mark:
        marks.add(node_mark(node))
        node = node.child(0)
    return (SIMD_MARK in marks and node.get_type() == isl.schedule_node_type.band
            and len(_statements(node)) == 1)


def _innermost_bands(node: isl.ScheduleNode, program: PolyProgram) -> list[isl.ScheduleNode]:
    """The bands under ``node``, in order, that are the innermost loop of one statement:
    no band below them, and a last member that is a loop (not a constant)."""
    if node.get_type() == isl.schedule_node_type.band and not _has_band_below(node):
        names = _statements(node)
        if len(names) != 1:
            return []
        last = band_members(node, program)[-1]
        constant = names[0] in last.walks and last.walks[names[0]] is None
        return [] if constant else [node]
    return [band for k in range(node.n_children())
            for band in _innermost_bands(node.child(k), program)]


def _has_band_below(node: isl.ScheduleNode) -> bool:
    return any(node.child(k).get_type() == isl.schedule_node_type.band
               or _has_band_below(node.child(k)) for k in range(node.n_children()))


def _statements(node: isl.ScheduleNode) -> list[str]:
    return [part.get_tuple_name() for part in isl_items(node.get_domain().get_set_list())]
