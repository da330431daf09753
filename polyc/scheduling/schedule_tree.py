"""Queries of schedule trees and isl's scheduler, shared by the scheduling passes."""
from __future__ import annotations

import threading
from collections import OrderedDict

import islpy as isl

from polyc.errors import InternalError
from polyc.poly.dependences import Dependences
from polyc.poly.program import PolyProgram, isl_items, statements_named
from polyc.scheduling.privatize import privatization
from polyc.scheduling.band_members import tiling_matters

# isl's scheduler options live on the (shared) context; set them under a lock.
_SCHEDULER_LOCK = threading.Lock()

# isl's schedules of the last constraints it was given, by their text and the fusion
# options: one operator's fusion candidates, its strategies (min is the default's
# unfused candidate) and its groups under every machine model ask the same questions.
_SCHEDULES: OrderedDict[tuple[str, bool, bool], isl.Schedule] = OrderedDict()
REMEMBERED_SCHEDULES = 256


def serial_nests(tree: isl.Schedule) -> int:
    """The loop nests of a marked tree that do not start with a parallel loop."""
    return sum(1 for nest in outer_nests(tree)
               if has_band(nest) and nest.get_type() != isl.schedule_node_type.mark)


def has_band(node: isl.ScheduleNode) -> bool:
    """Whether a loop runs somewhere under a schedule tree node."""
    return node.get_type() == isl.schedule_node_type.band or any(
        has_band(node.child(k)) for k in range(node.n_children()))


def innermost_indices(tree: isl.Schedule) -> dict[str, frozenset[int]]:
    """For each statement, the positions of its indices that the last schedule
    dimension varying with them uses (its innermost loop; ``frozenset()`` when the
    schedule is not an affine function of them)."""
    walked = {}
    for relation in isl_items(tree.get_map().get_map_list()):
        name = relation.get_tuple_name(isl.dim_type.in_)
        count = relation.dim(isl.dim_type.in_)
        walked[name] = frozenset()
        try:
            schedule = isl.PwMultiAff.from_map(relation)
        except isl.Error:
            continue
        for position in reversed(range(schedule.dim(isl.dim_type.out))):
            value = schedule.get_pw_aff(position)
            used = frozenset(k for k in range(count)
                             if value.involves_dims(isl.dim_type.in_, k, 1))
            if used:
                walked[name] = used
                break
    return walked


def group_constraints(program: PolyProgram, deps: Dependences,
                      names: list[str]) -> isl.ScheduleConstraints:
    """The scheduling constraints of the statements ``names`` alone."""
    return scheduling_constraints(program, deps, statements_named(program.domain, names))


def scheduling_constraints(program: PolyProgram, deps: Dependences,
                           domain: isl.UnionSet) -> isl.ScheduleConstraints:
    """The scheduling constraints of the statement instances ``domain``: every
    dependence among them valid, producers near consumers and statements reading one
    element near each other (proximity), parallel loops carrying none (coincidence)."""

    def within(relation: isl.UnionMap) -> isl.UnionMap:
        return relation.intersect_domain(domain).intersect_range(domain)

    return (isl.ScheduleConstraints.on_domain(domain)
            .set_context(program.context)
            .set_validity(within(deps.validity))
            .set_proximity(within(deps.dep_flow.union(deps.dep_reuse)))
            .set_coincidence(within(deps.coincidence)))


def isl_schedule(constraints: isl.ScheduleConstraints, program: PolyProgram,
                 whole_component: bool = False, serialize_sccs: bool = False) -> isl.Schedule:
    """isl's scheduler with the fusion options set (they live on the shared context);
    the same constraints and options again give the schedule isl gave (remembered for
    the last :data:`REMEMBERED_SCHEDULES` questions)."""
    ctx = program.domain.get_ctx()
    key = (constraints.to_str(), whole_component, serialize_sccs)
    with _SCHEDULER_LOCK:
        if key in _SCHEDULES:
            _SCHEDULES.move_to_end(key)
            return _SCHEDULES[key]
        saved = (ctx.get_schedule_whole_component(), ctx.get_schedule_serialize_sccs())
        try:
            ctx.set_schedule_whole_component(int(whole_component))
            ctx.set_schedule_serialize_sccs(int(serialize_sccs))
            schedule = constraints.compute_schedule()
        finally:
            ctx.set_schedule_whole_component(saved[0])
            ctx.set_schedule_serialize_sccs(saved[1])
        _SCHEDULES[key] = schedule
        if len(_SCHEDULES) > REMEMBERED_SCHEDULES:
            _SCHEDULES.popitem(last=False)
        return schedule


def outer_band_depths(tree: isl.Schedule, program: PolyProgram,
                      tiled_only: bool = False) -> dict[str, int]:
    """For each statement, the number of members of the outermost band above it; with
    ``tiled_only``, only for statements whose band has blocks of data to keep in cache
    (:func:`~polyc.scheduling.tiling.tiling_matters`)."""
    depths: dict[str, int] = {}

    def visit(node: isl.ScheduleNode) -> None:
        if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
            if tiled_only and not tiling_matters(node, program):
                return
            for part in isl_items(node.get_domain().get_set_list()):
                depths.setdefault(part.get_tuple_name(), node.band_n_member())
            return
        for position in range(node.n_children()):
            visit(node.child(position))

    visit(tree.get_root())
    return depths


def outer_loop_parallel(tree: isl.Schedule, deps: Dependences, program: PolyProgram) -> bool:
    """Whether the tree starts with one band over every statement whose first member is
    parallel, as it is or with private accumulators (one parallel loop around
    everything); a tree of several nests counts as parallel when each nest starts so."""
    return all(starts_parallel(nest, deps, program) for nest in outer_nests(tree))


def outer_nests(tree: isl.Schedule) -> list[isl.ScheduleNode]:
    """The top node of each loop nest: below the top-level sequences and sets (isl
    nests a set of independent nests in a sequence's child), or the root's."""
    return _nests_below(tree.get_root().child(0))


def _nests_below(node: isl.ScheduleNode) -> list[isl.ScheduleNode]:
    if node.get_type() in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        return [nest for k in range(node.n_children())
                for nest in _nests_below(node.child(k).child(0))]
    return [node]


def outer_private_tensors(tree: isl.Schedule, deps: Dependences,
                          program: PolyProgram) -> tuple[str, ...]:
    """The tensors the outer loops of ``tree`` accumulate privately to run in parallel."""
    return tuple(sorted({tensor for nest in outer_nests(tree)
                         if nest.get_type() == isl.schedule_node_type.band
                         and nest.band_n_member() > 0
                         and not nest.band_member_get_coincident(0)
                         for tensor in privatization(nest, deps, program) or ()}))


def backward_dependences(schedule_map: isl.UnionMap, deps: Dependences) -> list[isl.Map]:
    """The dependences ``schedule_map`` runs backwards, in schedule time: each validity
    dependence between instances it schedules, mapped through it, that does not go
    strictly forward (``{ S(a) -> S(b) : a -> b in deps } ⊆ lex_lt``; cheaper than
    building lex_lt of the schedule over all pairs of instances). Empty where it
    respects every one."""
    images = deps.validity.apply_domain(schedule_map).apply_range(schedule_map)
    backward = []
    for image in isl_items(images.get_map_list()):
        behind = image.subtract(isl.Map.lex_lt(image.get_space().domain()))
        if not behind.is_empty():
            backward.append(behind)
    return backward


def starts_parallel(node: isl.ScheduleNode, deps: Dependences, program: PolyProgram) -> bool:
    if node.get_type() == isl.schedule_node_type.leaf:
        return True
    if node.get_type() != isl.schedule_node_type.band or node.band_n_member() == 0:
        return False
    return bool(node.band_member_get_coincident(0)) or \
        privatization(node, deps, program) is not None


def subtree_schedule(node: isl.ScheduleNode) -> isl.Schedule:
    """The subtree below ``node`` (bands, sequences, sets and marks) as a schedule of its
    own, over the statement instances that reach ``node``."""
    return _copy_below(node, isl.Schedule.from_domain(node.get_domain())
                       .get_root().child(0)).get_schedule()


def _copy_below(source: isl.ScheduleNode, target: isl.ScheduleNode) -> isl.ScheduleNode:
    """Copy ``source`` and its subtree in place of the leaf ``target``; the node where
    the copy starts."""
    kind = source.get_type()
    if kind == isl.schedule_node_type.leaf:
        return target
    if kind == isl.schedule_node_type.band:
        band = target.insert_partial_schedule(source.band_get_partial_schedule())
        band = band.band_set_permutable(source.band_get_permutable())
        for k in range(source.band_n_member()):
            band = band.band_member_set_coincident(k, source.band_member_get_coincident(k))
        return _copy_below(source.child(0), band.child(0)).parent()
    if kind == isl.schedule_node_type.mark:
        mark = target.insert_mark(source.mark_get_id())
        return _copy_below(source.child(0), mark.child(0)).parent()
    if kind in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        filters = isl.UnionSetList.alloc(source.get_ctx(), source.n_children())
        for k in range(source.n_children()):
            filters = filters.add(source.child(k).filter_get_filter())
        insert = (target.insert_sequence if kind == isl.schedule_node_type.sequence
                  else target.insert_set)
        node = insert(filters)
        for k in range(source.n_children()):
            node = _copy_below(source.child(k).child(0), node.child(k).child(0)).parent().parent()
        return node
    raise InternalError(f"cannot copy a {kind} node of a schedule tree")
