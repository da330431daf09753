"""Automatic scheduling with isl, parallel marks, and the legality proof.

``compute_schedule`` asks isl's scheduler for a schedule that respects every
dependence (validity), keeps producers near consumers (proximity) and finds
loops without loop-carried dependences (coincidence). The fusion strategy
picks isl's options: ``"max"`` fuses whole components, ``"min"`` serialises
strongly connected components (no fusion), ``"default"`` weighs maximal fusion,
isl's own choice, groups of consecutive statements and no fusion, finished, by
the rules and the cost model of :mod:`polyc.scheduling.fusion_choice`.

The outermost band member that isl found coincident along each path of the
tree gets a ``parallel`` mark; code generation turns it into an OpenMP loop.
When the members after it are coincident too (the tile loops of a matmul's
rows and columns), a ``collapse N`` mark below it lets OpenMP share out the
N loops as one: 9 row tiles on 2 threads leave one thread idle a fifth of
the time, 72 row-and-column tiles do not. Loops over a window or a constant range
go inside the collapsed loops that grow with the tensors
(:mod:`polyc.scheduling.sharing_order`), so that OpenMP's static chunks split along
the long ones.

``check_legality`` proves the final schedule respects every dependence:
``dep ⊆ { a -> b : S(a) ≺ S(b) }``. A schedule that fails is a bug in
polyc, never output.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import islpy as isl

from polyc.errors import InternalError
from polyc.machine import Machine
from polyc.machine.rules import joined_accumulators
from polyc.poly.dependences import Dependences
from polyc.poly.program import PolyProgram, isl_items, statement_names, statements_named
from polyc.poly.relations import same_image
from polyc.scheduling.band_members import (accumulates_along, calls_library, carries_reuse,
                                           reduces, tiling_matters, writes_once,
                                           writes_once_below)
from polyc.scheduling.distribute import distribute_shifted_members
from polyc.scheduling.fusion_choice import FusionCandidate, default_fusion
from polyc.scheduling.jam import JamRules, jam_outer_rows
from polyc.scheduling.marks import (PARALLEL_MARK, SIMD_MARK, SIMD_REDUCTION_MARK, Collapse,
                                    PrivateAccumulators, decision_mark, mark_name, node_mark)
from polyc.scheduling.privatize import privatization
from polyc.scheduling.schedule_tree import (backward_dependences, isl_schedule,
                                            scheduling_constraints)
from polyc.scheduling.selected_loops import select_loops
from polyc.scheduling.row_prefetch import mark_row_prefetches
from polyc.scheduling.straighten import straighten_bands
from polyc.scheduling.stream_stores import mark_streamed_stores
from polyc.scheduling.sharing_order import growth_points, sharing_order
from polyc.scheduling.tiling import has_inner_band, optimize_bands, reorder_members
from polyc.scheduling.vector_passes import VectorPasses, fuse_vector_passes

FUSION_STRATEGIES = ("default", "max", "min")



@dataclass(frozen=True)
class Schedule:
    tree: isl.Schedule
    fusion: str
    decision: str = ""  # which fusion the strategy chose, and why
    candidates: tuple["FusionCandidate", ...] = ()  # what the default strategy weighed

    @property
    def schedule_map(self) -> isl.UnionMap:
        return self.tree.get_map()

    def __str__(self) -> str:
        return schedule_tree_text(self.tree)


def compute_schedule(program: PolyProgram, deps: Dependences, fusion: str = "default",
                     parallel: bool = True, optimize: bool = True,
                     prologue: tuple[str, ...] = (), *, machine: Machine) -> Schedule:
    """The schedule of ``program``; statements named in ``prologue`` (layout copies) run
    first, in a schedule of their own, so they never fuse into the loops they feed."""
    if prologue:
        first = statements_named(program.domain, prologue)
        rest = program.domain.subtract(first)
        if not rest.is_empty():
            # Each part is proven with the whole below, not on its own as well.
            head = _compute_schedule(_restricted(program, first), deps, fusion, parallel,
                                     optimize, machine, prove=False)
            tail = _compute_schedule(_restricted(program, rest), deps, fusion, parallel,
                                     optimize, machine, prove=False)
            tree = head.tree.sequence(tail.tree)
            schedule = Schedule(tree, fusion, tail.decision, tail.candidates)
            check_legality(schedule.schedule_map, deps, program)
            check_parallel(tree, deps, program)
            return schedule
    return _compute_schedule(program, deps, fusion, parallel, optimize, machine)


def _restricted(program: PolyProgram, domain: isl.UnionSet) -> PolyProgram:
    names = set(statement_names(domain))
    return dataclasses.replace(program, domain=domain, statements=tuple(
        s for s in program.statements if s.name in names))


def _compute_schedule(program: PolyProgram, deps: Dependences, fusion: str,
                      parallel: bool, optimize: bool, machine: Machine,
                      prove: bool = True) -> Schedule:
    if fusion not in FUSION_STRATEGIES:
        raise ValueError(f"fusion must be one of {FUSION_STRATEGIES}, not {fusion!r}")
    constraints = scheduling_constraints(program, deps, program.domain)
    points = growth_points(program) if parallel else None  # for sharing_order
    candidates: tuple[FusionCandidate, ...] = ()
    if fusion == "default":
        tree, decision, candidates = default_fusion(
            constraints, program, deps, machine,
            lambda tree: _finish(tree, program, deps, parallel, optimize, machine, points),
            parallel, optimize)
    else:
        tree = _finish(isl_schedule(constraints, program, whole_component=fusion == "max",
                                    serialize_sccs=fusion == "min"),
                       program, deps, parallel, optimize, machine, points)
        decision = {"max": "maximal fusion (fusion='max')",
                    "min": "no fusion (fusion='min')"}[fusion]
    schedule = Schedule(tree, fusion, decision, candidates)
    if prove:
        check_legality(schedule.schedule_map, deps, program)
        check_parallel(tree, deps, program)
    return schedule


def _finish(tree: isl.Schedule, program: PolyProgram, deps: Dependences, parallel: bool,
            optimize: bool, machine: Machine, points) -> isl.Schedule:
    """The fused tree optimised (tiling, register blocks, jams, vector passes) and with
    its parallel marks (``points``: :func:`~polyc.scheduling.sharing_order.growth_points`)."""
    if optimize:
        tree = straighten_bands(tree, deps)
        tree = distribute_shifted_members(
            tree, deps, tiled=lambda band: tiling_matters(band, program),
            privately_parallel=lambda band: bool(privatization(band, deps, program)))
        tree = optimize_bands(tree, program, machine, deps)
        tree = select_loops(tree, program)
        tree = jam_outer_rows(tree, JamRules(
            carries_reuse=lambda band: carries_reuse(band, program),
            accumulates_along=lambda band: accumulates_along(band, program),
            writes_once=lambda band: writes_once_below(band, program),
            legal=lambda candidate: _is_legal(candidate, deps, program, marks=True),
            vector_marks=frozenset({SIMD_MARK, SIMD_REDUCTION_MARK}),
            reduction_marks=frozenset({SIMD_REDUCTION_MARK}),
            reduces=lambda statements: reduces(statements, program)))
        tree = fuse_vector_passes(tree, deps, VectorPasses(
            SIMD_MARK, SIMD_REDUCTION_MARK,
            keep_apart=lambda statements: writes_once(statements, program),
            calls_out=lambda statements: calls_library(statements, program),
            accumulators=joined_accumulators(machine)))
        tree = mark_streamed_stores(tree, program, machine)
        tree = mark_row_prefetches(tree, program, machine)
    if parallel:
        tree = _mark_outer_parallel(tree.get_root(), deps, program, points).get_schedule()
    return tree


def _mark_outer_parallel(node: isl.ScheduleNode, deps: Dependences,
                         program: PolyProgram, points) -> isl.ScheduleNode:
    """Mark the outermost parallel band member on each path, as it is or with private
    accumulators (:mod:`polyc.scheduling.privatize`), and the coincident members right after
    it for collapsing; returns the same position."""
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
        if node.band_member_get_coincident(0):
            count = 1
            while count < node.band_n_member() and node.band_member_get_coincident(count):
                count += 1
            if count == node.band_n_member() and not has_inner_band(node):
                count -= 1  # the innermost loop stays a loop for the C compiler
            node = reorder_members(node, sharing_order(node, count, points))
            count = collapsible_members(node, count)
            if count > 1:
                node = node.insert_mark(decision_mark(Collapse(count)))
            return node.insert_mark(isl.Id(PARALLEL_MARK))
        private = privatization(node, deps, program)
        if private == ():
            return node.insert_mark(isl.Id(PARALLEL_MARK))
        if private:
            return node.insert_mark(decision_mark(PrivateAccumulators(private)))
    for position in range(node.n_children()):
        node = _mark_outer_parallel(node.child(position), deps, program, points).parent()
    return node


def collapsible_members(band: isl.ScheduleNode, count: int) -> int:
    """How many of the first ``count`` members of ``band`` OpenMP can collapse into one
    loop: each a loop (more than one value) whose values do not depend on the members
    before it (the loops' bounds name no outer iterator), proven on the band's image."""
    if count < 2:
        return count
    image = band.get_domain().apply(isl.UnionMap.from_multi_union_pw_aff(
        band.band_get_partial_schedule()))
    if image.n_set() != 1:
        return 1
    image = isl.Set.from_union_set(image)
    n = image.dim(isl.dim_type.set)
    for k in range(1, count):
        leading = image.project_out(isl.dim_type.set, k + 1, n - k - 1)
        outer = leading.project_out(isl.dim_type.set, k, 1)
        member = leading.project_out(isl.dim_type.set, 0, k)
        if member.is_singleton() or not outer.flat_product(member).is_equal(leading):
            return k
    return count


def _is_legal(tree: isl.Schedule, deps: Dependences, program: PolyProgram,
              marks: bool = False) -> bool:
    """Whether ``tree`` respects every dependence and, with ``marks``, whether its marks
    still hold: a jam sinks a row loop below bands whose members were coincident only
    with the whole row loop outside them (a sum into a scalar along the rows)."""
    try:
        check_legality(tree.get_map(), deps, program)
        if marks:
            check_parallel(tree, deps, program)
    except InternalError:
        return False
    return True


def check_legality(schedule_map: isl.UnionMap, deps: Dependences, program: PolyProgram) -> None:
    """Raise :class:`InternalError` unless ``schedule_map`` orders every dependence."""
    schedule_map = schedule_map.intersect_domain(program.domain)
    backward = backward_dependences(schedule_map, deps)
    if backward:
        raise InternalError(f"illegal schedule for `{program.op.name}`: dependences "
                            f"{backward[0]} (in schedule time) go backwards under "
                            f"{schedule_map}")
    scheduled = schedule_map.domain()
    if not program.domain.is_subset(scheduled):
        raise InternalError(f"schedule for `{program.op.name}` misses statement instances "
                            f"{program.domain.subtract(scheduled)}")


def check_parallel(tree: isl.Schedule, deps: Dependences, program: PolyProgram) -> None:
    """Prove the ``parallel``, ``collapse``, ``simd`` and ``simd-reduction`` marks.

    A ``parallel`` or ``simd`` loop carries no coincidence dependence within one iteration
    of the loops around it; ``collapse N`` loops carry none between different iterations
    of the N loops together. A ``simd-reduction`` loop is vectorised only where it holds
    its reduction alone (with a scalar accumulator); among that statement's own instances
    it may carry only the reduction's update chain.
    """
    def visit(node: isl.ScheduleNode) -> None:
        mark = node_mark(node)
        if isinstance(mark, Collapse):
            band = node.child(0)
            if band.get_type() != isl.schedule_node_type.band or \
                    band.band_n_member() < mark.loops or \
                    not _carried(band, mark.loops, deps).is_empty():
                raise InternalError(f"`{program.op.name}`: the loops marked "
                                    f"{mark_name(mark)!r} carry dependences")
        elif isinstance(mark, PrivateAccumulators):
            band = node.child(0)
            if band.get_type() != isl.schedule_node_type.band or \
                    privatization(band, deps, program) != mark.tensors:
                raise InternalError(f"`{program.op.name}`: the loop marked "
                                    f"{mark_name(mark)!r} is not parallel "
                                    f"with those tensors private")
        elif mark in (PARALLEL_MARK, SIMD_MARK, SIMD_REDUCTION_MARK):
            band = node.child(0)
            while band.get_type() == isl.schedule_node_type.mark:
                band = band.child(0)
            if band.get_type() == isl.schedule_node_type.band:
                carried = _carried(band, 1, deps)
                if mark == SIMD_REDUCTION_MARK:
                    carried = _within_statements(carried).subtract(deps.dep_reduction)
                if not carried.is_empty():
                    raise InternalError(
                        f"`{program.op.name}`: a loop marked {mark}"
                        f" carries dependences {carried}")
        for position in range(node.n_children()):
            visit(node.child(position))

    visit(tree.get_root())


def _carried(band: isl.ScheduleNode, count: int, deps: Dependences) -> isl.UnionMap:
    """The coincidence dependences that the first ``count`` members of ``band``, taken
    together, carry within one iteration of the loops around the band."""
    outer = band.get_prefix_schedule_union_map()
    partial = band.band_get_partial_schedule()
    same = same_image(outer)
    local = deps.coincidence.intersect(same)
    for k in range(count):
        member = isl.UnionMap.from_union_pw_aff(partial.get_at(k))
        same = same.intersect(same_image(member))
    return local.subtract(same)


def _within_statements(relation: isl.UnionMap) -> isl.UnionMap:
    """The part of ``relation`` between instances of one and the same statement."""
    result = isl.UnionMap.empty(relation.get_space())
    for part in isl_items(relation.get_map_list()):
        if part.get_tuple_name(isl.dim_type.in_) == part.get_tuple_name(isl.dim_type.out):
            result = result.union(isl.UnionMap.from_map(part))
    return result


def schedule_tree_text(tree: isl.Schedule) -> str:
    """isl's block-style YAML of the schedule tree (band members, marks, filters)."""
    root = tree.get_root()
    text = root.to_str() if hasattr(root, "to_str") else str(tree)
    return "\n".join(line for line in text.splitlines() if "YOU ARE HERE" not in line)
