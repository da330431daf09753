"""The marks the scheduling passes put in the schedule tree, and how to read them.

A leaf module: the passes that write marks (tiling, jams, parallel marks) and those
that read them (fusion choice, thread partition, contraction, code generation) import
the vocabulary from here, not from one another.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.program import isl_items

PARALLEL_MARK = "parallel"
COLLAPSE_MARK_PREFIX = "collapse "  # "collapse 2": the parallel loop and the next one
SIMD_MARK = "simd"                      # a parallel member: plain `omp simd`
SIMD_REDUCTION_MARK = "simd-reduction"  # a reduction member: scalar accumulator + reduction
REGISTER_MARK = "register"


def collapse_mark(count: int) -> isl.Id:
    return isl.Id(f"{COLLAPSE_MARK_PREFIX}{count}")


def collapsed_loops(mark: str) -> int | None:
    """The number of loops a ``collapse N`` mark collapses; ``None`` for any other mark."""
    if not mark.startswith(COLLAPSE_MARK_PREFIX):
        return None
    return int(mark[len(COLLAPSE_MARK_PREFIX):])


def marks_by_statement(tree: isl.Schedule) -> dict[str, frozenset[str]]:
    """For each statement, the names of the marks above its instances."""
    found: dict[str, set[str]] = {}

    def visit(node: isl.ScheduleNode) -> None:
        if node.get_type() == isl.schedule_node_type.mark:
            mark = node.mark_get_id().get_name()
            for part in isl_items(node.get_domain().get_set_list()):
                found.setdefault(part.get_tuple_name(), set()).add(mark)
        for k in range(node.n_children()):
            visit(node.child(k))

    visit(tree.get_root())
    return {name: frozenset(marks) for name, marks in found.items()}
