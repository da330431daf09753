"""Which SIMD loops store their output past the cache (a decision codegen carries out).

A store through the cache first reads the line it writes, and a large output
evicts the inputs on its way; :mod:`polyc.codegen.streaming` stages such stores and
writes them with streaming stores. This pass decides where: a SIMD loop whose one
statement writes an output written once and read by none
(:func:`polyc.rewrite.layout.write_once_outputs`), walking that output's last,
contiguous index with step 1, on a machine with streaming stores. The loop is
marked ``stream <tensor>`` (:class:`~polyc.scheduling.marks.StreamedStores`);
whether the output is large enough is decided per call.
"""
from __future__ import annotations

import islpy as isl

from polyc.machine import Machine
from polyc.poly.program import PolyProgram, statement_names
from polyc.rewrite.layout import write_once_outputs
from polyc.scheduling.band_members import band_members
from polyc.scheduling.marks import SIMD_MARK, StreamedStores, insert_decision_marks, node_mark


def mark_streamed_stores(tree: isl.Schedule, program: PolyProgram,
                         machine: Machine) -> isl.Schedule:
    """``tree`` with a :class:`StreamedStores` mark above each SIMD loop that streams."""
    streamable = write_once_outputs(program.op)
    if not streamable or not machine.streaming_stores:
        return tree

    def decide(node: isl.ScheduleNode) -> StreamedStores | None:
        if node_mark(node) != SIMD_MARK or node.n_children() != 1 or \
                node.child(0).get_type() != isl.schedule_node_type.band:
            return None
        return streamed(node.child(0), program, streamable)

    return insert_decision_marks(tree, decide)


def streamed(band: isl.ScheduleNode, program: PolyProgram,
             streamable: frozenset[str]) -> StreamedStores | None:
    """The stores the SIMD ``band``'s loop streams: its one statement writes an output
    written once, and the loop walks that output's last index with step 1."""
    names = statement_names(band.get_domain())
    if len(names) != 1:
        return None
    stmt = program.statement(names[0])
    statement = stmt.statement
    if stmt.is_init or statement.tensor not in streamable or not statement.indices:
        return None
    if band_members(band, program)[0].walks.get(stmt.name) != statement.indices[-1]:
        return None
    return StreamedStores(statement.tensor)
