"""Loops over an index the data selects run one iteration (:mod:`polyc.lang.selections`).

In ``d_E(v, d) +=! v == I(b, l) ? d_O(b, d) : 0.0`` (a gather's adjoint) only the ``v``
equal to ``I(b, l)`` adds anything. A band member that walks such an index in every
statement below it moves inside the members that walk the indices of the data's value
(``b`` and ``l``, members of the same band: a histogram ``H(v) +=! v == I(b) ? 1.0 : 0.0``
whose ``b`` became a vector loop of its own keeps its loop over ``v``), is split into a band
of its own and gets the ``selected`` mark; code
generation computes the one iteration from the data instead of looping
(:mod:`polyc.codegen.selected_iteration`). The adjoint becomes a scatter-add: one pass
over the lookups. Its tile loop stays where tiling put it: tiles of ``v`` run in
parallel, each thread adding the lookups that land in its rows, as torch's embedding
backward shares out rows, without atomics.

Any order of a permutable band's members is legal; the schedule is proven legal with
the rest (:func:`polyc.scheduling.schedule.check_legality`). The moved member is not
coincident any more: a loop of one iteration is nothing to share out.
"""
from __future__ import annotations

import islpy as isl

from polyc.lang import ir
from polyc.lang.selections import selected_indices
from polyc.poly.program import PolyProgram
from polyc.scheduling.band_members import Member, band_members
from polyc.scheduling.marks import SELECTED_MARK, node_mark
from polyc.scheduling.tiling import reorder_members


def select_loops(tree: isl.Schedule, program: PolyProgram) -> isl.Schedule:
    """``tree`` with the loop of each selected index run as one iteration."""
    return _visit(tree.get_root(), program).get_schedule()


def _visit(node: isl.ScheduleNode, program: PolyProgram) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0 and \
            (node.band_get_permutable() or node.band_n_member() == 1):
        node = _select(node, program)
    if node_mark(node) == SELECTED_MARK:
        return _visit(node.child(0).child(0), program).parent().parent()
    for position in range(node.n_children()):
        node = _visit(node.child(position), program).parent()
    return node


def _select(node: isl.ScheduleNode, program: PolyProgram) -> isl.ScheduleNode:
    """The band with its selected members moved and marked; same tree position."""
    members = band_members(node, program)
    for member in members:
        values = _selected_values(member, program)
        others = [m.position for m in members if m is not member]
        walked = {name: {members[k].walks.get(name) for k in others} for name in values}
        if not values or any(not ir.index_names(value) <= walked[name]
                             for name, value in values.items()):
            continue
        needed = [k for k, position in enumerate(others)
                  if any(members[position].walks.get(name) in ir.index_names(value)
                         for name, value in values.items())]
        at = needed[-1] + 1 if needed else member.position  # a constant value: in place
        order = others[:at] + [member.position] + others[at:]
        node = _split_and_mark(_reordered(node, order), at)
        return _select(node, program) if at > 0 else node
    return node


def _selected_values(member: Member, program: PolyProgram) -> dict[str, ir.Expr]:
    """For each statement below, the value that selects the index ``member`` walks; empty
    unless the member walks a selected index of every statement."""
    values = {}
    for name, index in member.walks.items():
        stmt = program.statement(name)
        value = None if stmt.is_init or index is None or name not in member.plain else \
            selected_indices(stmt.statement).get(index)
        if value is None:
            return {}
        values[name] = value
    return values


def _reordered(node: isl.ScheduleNode, order: list[int]) -> isl.ScheduleNode:
    """:func:`~polyc.scheduling.tiling.reorder_members`, each member keeping its AST loop
    type too (tiling peels the point band's reduction members, ``separate``)."""
    loop_types = [node.band_member_get_ast_loop_type(k) for k in order]
    node = reorder_members(node, order)
    for new, loop_type in enumerate(loop_types):
        node = node.band_member_set_ast_loop_type(new, loop_type)
    return node


def _split_and_mark(node: isl.ScheduleNode, at: int) -> isl.ScheduleNode:
    """Member ``at`` of the band split into a band of its own, not coincident, under the
    ``selected`` mark; returns the node at the band's position."""
    if at > 0:
        node = node.band_split(at).child(0)
    if node.band_n_member() > 1:
        node = node.band_split(1)
    node = node.band_member_set_coincident(0, 0).insert_mark(isl.Id(SELECTED_MARK))
    return node.parent() if at > 0 else node
