"""Automatic scheduling with isl, parallel marks, and the legality proof.

``compute_schedule`` asks isl's scheduler for a schedule that respects every
dependence (validity), keeps producers near consumers (proximity) and finds
loops without loop-carried dependences (coincidence). The fusion strategy
picks isl's options: ``"max"`` fuses whole components, ``"min"`` serialises
strongly connected components (no fusion), ``"default"`` fuses as much as keeps
the outer loop parallel and every band tiling needs: everything, isl's own
choice, or groups of consecutive statements (a contraction with its epilogue),
in that order of preference.

The outermost band member that isl found coincident along each path of the
tree gets a ``parallel`` mark; code generation turns it into an OpenMP loop.
When the members after it are coincident too (the tile loops of a matmul's
rows and columns), a ``collapse N`` mark below it lets OpenMP share out the
N loops as one: 9 row tiles on 2 threads leave one thread idle a fifth of
the time, 72 row-and-column tiles do not.

``check_legality`` proves the final schedule respects every dependence:
``dep ⊆ { a -> b : S(a) ≺ S(b) }``. A schedule that fails is a bug in
polyc, never output.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import islpy as isl

from polyc.errors import InternalError
from polyc.poly.dependences import Dependences
from polyc.poly.fusion_cost import (FusionCost, NestShape, affine_inputs, nominal_sizes,
                                    schedule_cost)
from polyc.fusion.distribute import distribute_shifted_members
from polyc.fusion.vector_passes import VectorPasses, fuse_vector_passes
from polyc.machine import Machine
from polyc.poly.privatize import privatization, privatized_tensors, private_mark
from polyc.poly.program import INIT_SUFFIX, PolyProgram, isl_items, statements_named
from polyc.poly.straighten import straighten_bands
from polyc.poly.jam import JAM_MARK, JamRules, jam_outer_rows
from polyc.poly.relations import same_image
from polyc.poly.marks import (PARALLEL_MARK, REGISTER_MARK, SIMD_MARK, SIMD_REDUCTION_MARK,
                              collapse_mark, collapsed_loops, marks_by_statement)
from polyc.poly.tiling import (accumulates_along, carries_reuse, has_inner_band, optimize_bands,
                               tiling_matters, calls_library, reduces, writes_once,
                               writes_once_below)

FUSION_STRATEGIES = ("default", "max", "min")

# isl's scheduler options live on the (shared) context; set them under a lock.
_SCHEDULER_LOCK = threading.Lock()


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
            head = compute_schedule(_restricted(program, first), deps, fusion, parallel,
                                    optimize, machine=machine)
            tail = compute_schedule(_restricted(program, rest), deps, fusion, parallel,
                                    optimize, machine=machine)
            tree = head.tree.sequence(tail.tree)
            schedule = Schedule(tree, fusion, tail.decision, tail.candidates)
            check_legality(schedule.schedule_map, deps, program)
            check_parallel(tree, deps, program)
            return schedule
    return _compute_schedule(program, deps, fusion, parallel, optimize, machine)


def _restricted(program: PolyProgram, domain: isl.UnionSet) -> PolyProgram:
    names = {part.get_tuple_name() for part in isl_items(domain.get_set_list())}
    return dataclasses.replace(program, domain=domain, statements=tuple(
        s for s in program.statements if s.name in names))


def _compute_schedule(program: PolyProgram, deps: Dependences, fusion: str,
                      parallel: bool, optimize: bool, machine: Machine) -> Schedule:
    if fusion not in FUSION_STRATEGIES:
        raise ValueError(f"fusion must be one of {FUSION_STRATEGIES}, not {fusion!r}")
    constraints = _constraints(program, deps, program.domain)
    candidates: tuple[FusionCandidate, ...] = ()
    if fusion == "default":
        tree, decision, candidates = _default_fusion(constraints, program, deps, parallel,
                                                     optimize, machine)
    else:
        tree = _finish(_isl_schedule(constraints, program, whole_component=fusion == "max",
                                     serialize_sccs=fusion == "min"),
                       program, deps, parallel, optimize, machine)
        decision = {"max": "maximal fusion (fusion='max')",
                    "min": "no fusion (fusion='min')"}[fusion]
    schedule = Schedule(tree, fusion, decision, candidates)
    check_legality(schedule.schedule_map, deps, program)
    check_parallel(tree, deps, program)
    return schedule


@dataclass(frozen=True)
class FusionCandidate:
    """One fusion the default strategy considered: its estimated cost
    (:mod:`polyc.poly.fusion_cost`) where it was acceptable, else ``None``; ``verdict``
    says why it was acceptable or turned down."""

    name: str
    cost: FusionCost | None
    verdict: str
    chosen: bool = False


# Estimates within this factor of the cheapest count as equal, and the candidate that
# fuses more wins: the model leaves out what fusion saves besides traffic (loop
# overhead, thread teams started once instead of per nest).
COST_TOLERANCE = 1.02


def _default_fusion(constraints: isl.ScheduleConstraints, program: PolyProgram,
                    deps: Dependences, parallel: bool, optimize: bool, machine: Machine
                    ) -> tuple[isl.Schedule, str, tuple[FusionCandidate, ...]]:
    """The default strategy's final tree, its decision and the candidates it weighed.

    The candidates, from most fused to least: maximal fusion, isl's default fusion,
    fusion in groups (:func:`_fused_groups`), no fusion. A candidate is turned down
    where it would serialise an outer loop, shrink a band its tiling needs, or,
    optimised, take a vector loop or register block from a statement
    (:func:`_lost_vector_loops`); of the others, the model of
    :mod:`polyc.poly.fusion_cost` picks the cheapest (the most fused among estimates
    within :data:`COST_TOLERANCE`)."""
    unfused = _isl_schedule(constraints, program, serialize_sccs=True)
    depths = _outer_band_depths(unfused, program, tiled_only=True)
    apart = _finish(unfused, program, deps, parallel, optimize, machine)
    sizes = nominal_sizes(program)
    considered: list[FusionCandidate] = []
    trees: dict[str, isl.Schedule] = {}
    seen = [("no fusion", unfused.get_map())]

    def lost(tree: isl.Schedule) -> list[str]:
        return _lost_vector_loops(tree, apart, program) if optimize else []

    def accept(name: str, tree: isl.Schedule, verdict: str) -> None:
        cost = schedule_cost(program, _nest_shapes(tree), machine, sizes)
        considered.append(FusionCandidate(name, cost, verdict))
        trees[name] = tree

    def reject(name: str, verdict: str) -> None:
        considered.append(FusionCandidate(name, None, verdict))

    def same_as_earlier(name: str, tree: isl.Schedule) -> bool:
        schedule_map = tree.get_map()
        for earlier, known in seen:
            if schedule_map.is_equal(known):
                reject(name, f"the same loops as {earlier}")
                return True
        seen.append((name, schedule_map))
        return False

    for name, candidate in (("maximal fusion", dict(whole_component=True)),
                            ("isl's default fusion", {})):
        fused = _isl_schedule(constraints, program, **candidate)
        if same_as_earlier(name, fused):
            continue
        fused_depth = _outer_band_depths(fused, program)
        if not _outer_loop_parallel(fused, deps, program):
            reject(name, f"{name} would serialise the outer loop")
            continue
        if any(fused_depth.get(s, 0) < d for s, d in depths.items()):
            reject(name, f"{name} would shrink the permutable bands tiling needs")
            continue
        finished = _finish(fused, program, deps, parallel, optimize, machine)
        if losers := lost(finished):
            reject(name, f"{name} would lose the vector loop, register block or jammed rows "
                         f"of {', '.join(losers)}")
            continue
        private = _outer_private_tensors(fused, deps, program)
        how = (f"in parallel with private accumulators for {', '.join(private)}"
               if private else "parallel")
        accept(name, finished, f"the outer loop stays {how}, no band loses depth")
    grouped = _fused_groups(program, deps, depths, _innermost_indices(unfused))
    if grouped is not None:
        tree, groups = grouped
        name = (f"fusion in {len(groups)} groups: "
                + " | ".join(", ".join(group) for group in groups))
        if not same_as_earlier(name, tree):
            tree = _finish(tree, program, deps, parallel, optimize, machine)
            if parallel and _serial_nests(tree) > _serial_nests(apart):
                # Optimised, a group lost what its nests had apart (gemver: a column
                # walk that runs in parallel with private accumulators only on its own).
                reject(name, "fusion in groups would leave a loop nest without an outer "
                             "parallel loop")
            elif losers := lost(tree):
                reject(name, "fusion in groups would lose the vector loop, register block "
                             f"or jammed rows of {', '.join(losers)}")
            else:
                accept(name, tree, "the outer loops stay parallel, no band loses depth")
    accept("no fusion", apart, "")
    chosen = cheapest_candidate(considered)
    reasons = [chosen.verdict] if chosen.verdict else []
    for other in considered:
        if other is chosen:
            continue
        if other.cost is not None:
            if considered.index(other) < considered.index(chosen):
                reasons.append(f"{other.name} would cost "
                               f"{other.cost.cycles / chosen.cost.cycles:.2f}× as much")
        elif not other.verdict.startswith("the same loops"):
            reasons.append(other.verdict)
    decision = chosen.name + (f" ({'; '.join(reasons)})" if reasons else "")
    candidates = tuple(dataclasses.replace(c, chosen=c is chosen) for c in considered)
    return trees[chosen.name], decision, candidates


def cheapest_candidate(candidates: list[FusionCandidate]) -> FusionCandidate:
    """Of the candidates with a cost (listed from most fused to least), the first whose
    estimate is within :data:`COST_TOLERANCE` of the cheapest."""
    scored = [c for c in candidates if c.cost is not None]
    cheapest = min(c.cost.cycles for c in scored)
    return next(c for c in scored if c.cost.cycles <= cheapest * COST_TOLERANCE)


def _nest_shapes(tree: isl.Schedule) -> tuple[NestShape, ...]:
    """The loop nests of a finished tree as the cost model sees them."""
    marks = marks_by_statement(tree)
    vector = {SIMD_MARK, SIMD_REDUCTION_MARK, REGISTER_MARK}
    walked = _walked_indices(tree)
    shapes = []
    for nest in _outer_nests(tree):
        names = tuple(part.get_tuple_name()
                      for part in isl_items(nest.get_domain().get_set_list()))
        shapes.append(NestShape(
            names,
            all(any(m.startswith(PARALLEL_MARK) for m in marks.get(n, ())) for n in names),
            frozenset(n for n in names if marks.get(n, frozenset()) & vector),
            frozenset(n for n in names if REGISTER_MARK in marks.get(n, frozenset())),
            tuple((n, walked.get(n, frozenset())) for n in names)))
    return tuple(shapes)


def _walked_indices(tree: isl.Schedule) -> dict[str, frozenset[int]]:
    """For each statement, the positions of its indices that its fastest loop walks:
    the loop below a ``simd`` or ``simd-reduction`` mark (a jammed block's rows are
    unrolled around it), else its innermost loop (:func:`_innermost_indices`)."""
    walked = _innermost_indices(tree)

    def visit(node: isl.ScheduleNode) -> None:
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() \
                in (SIMD_MARK, SIMD_REDUCTION_MARK) and \
                node.child(0).get_type() == isl.schedule_node_type.band:
            band = node.child(0)
            member = band.band_get_partial_schedule().get_at(band.band_n_member() - 1)
            for pw_aff in isl_items(member.get_pw_aff_list()):
                walked[pw_aff.get_tuple_id(isl.dim_type.in_).get_name()] = \
                    affine_inputs(pw_aff)
        for k in range(node.n_children()):
            visit(node.child(k))

    visit(tree.get_root())
    return walked


def _lost_vector_loops(fused: isl.Schedule, apart: isl.Schedule, program: PolyProgram
                       ) -> list[str]:
    """The statements of the most loops (where the work is: not a row reduction's
    initialisation) that run in a vector loop (a ``simd`` or ``simd-reduction`` mark),
    a register block or a jammed block of rows apart, but not in ``fused``.

    Fusion that costs a statement its vector loop or register block costs far more
    than the traffic it saves: bicg's column sum ``s(j) +=! r(i) * A(i, j)`` fused
    with the row sum ``q(i) +=! A(i, j) * p(j)`` walked ``A`` down its columns, 20×
    slower than apart; symm's and trmm's triangle selects fused into their products
    were recomputed inside the reduction loop, 40× slower; isl's default fusion of
    bicg's initialisation into its column sum cost it its jammed rows (×1.2)."""
    vector = {SIMD_MARK, SIMD_REDUCTION_MARK, REGISTER_MARK}
    fused_marks, apart_marks = marks_by_statement(fused), marks_by_statement(apart)
    deepest = max(len(s.indices) for s in program.statements)
    losers = []
    for name, marks in apart_marks.items():
        if len(program.statement(name).indices) < deepest:
            continue
        kept = fused_marks.get(name, frozenset())
        if any(mark in marks and mark not in kept for mark in (REGISTER_MARK, JAM_MARK)) or (
                marks & vector and not kept & vector):
            losers.append(name)
    return sorted(losers)


def _finish(tree: isl.Schedule, program: PolyProgram, deps: Dependences, parallel: bool,
            optimize: bool, machine: Machine) -> isl.Schedule:
    """The fused tree optimised (tiling, register blocks, jams, vector passes) and with
    its parallel marks."""
    if optimize:
        tree = straighten_bands(tree, deps)
        tree = distribute_shifted_members(
            tree, deps, tiled=lambda band: tiling_matters(band, program))
        tree = optimize_bands(tree, program, machine, deps)
        tree = jam_outer_rows(tree, JamRules(
            carries_reuse=lambda band: carries_reuse(band, program),
            accumulates_along=lambda band: accumulates_along(band, program),
            writes_once=lambda band: writes_once_below(band, program),
            legal=lambda candidate: _is_legal(candidate, deps, program),
            vector_marks=frozenset({SIMD_MARK, SIMD_REDUCTION_MARK}),
            reduction_marks=frozenset({SIMD_REDUCTION_MARK}),
            reduces=lambda statements: reduces(statements, program)))
        tree = fuse_vector_passes(tree, deps, VectorPasses(
            SIMD_MARK, SIMD_REDUCTION_MARK,
            keep_apart=lambda statements: writes_once(statements, program),
            calls_out=lambda statements: calls_library(statements, program)))
    if parallel:
        tree = _mark_outer_parallel(tree.get_root(), deps, program).get_schedule()
    return tree


def _serial_nests(tree: isl.Schedule) -> int:
    """The loop nests of a marked tree that do not start with a parallel loop."""
    return sum(1 for nest in _outer_nests(tree)
               if _has_band(nest) and nest.get_type() != isl.schedule_node_type.mark)


def _has_band(node: isl.ScheduleNode) -> bool:
    """Whether a loop runs somewhere under a schedule tree node."""
    return node.get_type() == isl.schedule_node_type.band or any(
        _has_band(node.child(k)) for k in range(node.n_children()))


def _fused_groups(program: PolyProgram, deps: Dependences, depths: dict[str, int],
                  innermost: dict[str, frozenset[int]]
                  ) -> tuple[isl.Schedule, list[list[str]]] | None:
    """Maximal fusion within groups of consecutive statements, the groups in sequence:
    ``(schedule, groups)``, or ``None`` when no two statements of the program could
    share loops.

    The statements go in program order (a reduction with its initialisation), each
    joining the group before it when the group's maximal fusion keeps its outer loop
    parallel, every band its tiling needs (``depths``: the band depths of the unfused
    schedule) and every statement's innermost loop (``innermost``: the indices it
    walks in the unfused schedule, the order its accesses were laid out for), and
    reuses data in place (:func:`_reused_in_place`). The original program runs
    statements in this order, so every dependence between two groups goes forward.
    2mm's second product fuses with its ``+ beta * D`` epilogue, as mlp's with its
    bias, while the first product, whose rows the second reads whole, stays a nest of
    its own."""
    units: list[list[str]] = []
    for stmt in program.statements:
        if units and units[-1][-1] == stmt.name + INIT_SUFFIX and not stmt.is_init:
            units[-1].append(stmt.name)
        else:
            units.append([stmt.name])
    groups: list[tuple[list[str], isl.Schedule]] = []
    for unit in units:
        if groups:
            joined = groups[-1][0] + unit
            tree = _fused_group(program, deps, depths, joined)
            if (tree is not None and _reused_in_place(tree, deps, groups[-1][0], unit, program)
                    and all(innermost.get(name) == walked for name, walked
                            in _innermost_indices(tree).items())):
                groups[-1] = (joined, tree)
                continue
        tree = _fused_group(program, deps, depths, unit)
        if tree is None:
            tree = _isl_schedule(_group_constraints(program, deps, unit), program,
                                 serialize_sccs=True)
        groups.append((unit, tree))
    if len(groups) == len(program.statements) or len(groups) == 1:
        return None
    tree = groups[0][1]
    for _, later in groups[1:]:
        tree = tree.sequence(later)
    return tree, [names for names, _ in groups]


def _fused_group(program: PolyProgram, deps: Dependences, depths: dict[str, int],
                 names: list[str]) -> isl.Schedule | None:
    """The maximal fusion of the statements ``names`` if its outer loop is parallel as it
    is (no private accumulators) and no band is shallower than ``depths``, else
    ``None``."""
    tree = _isl_schedule(_group_constraints(program, deps, names), program,
                         whole_component=True)
    fused_depth = _outer_band_depths(tree, program)
    if not _outer_loop_parallel(tree, deps, program) or _outer_private_tensors(
            tree, deps, program) or any(
            fused_depth.get(name, 0) < depths[name] for name in names if name in depths):
        return None
    return tree


def _reused_in_place(tree: isl.Schedule, deps: Dependences, group: list[str],
                     unit: list[str], program: PolyProgram) -> bool:
    """Whether fusing ``unit`` into ``group`` (``tree``: their maximal fusion) reuses data
    in place: some value ``unit`` reads is written or read by ``group`` (flow or reuse
    dependences), always in the same iteration of the fused outer band's loops up to
    its last parallel one (the first must be parallel). Fusion that
    only shares loops, or meets a value in another iteration (a transposed read of a
    producer's output), keeps the reuse distance of separate nests and may lose the
    access order each nest had."""
    band = tree.get_root().child(0)
    if band.get_type() != isl.schedule_node_type.band:
        return False
    sources = statements_named(program.domain, group)
    sinks = statements_named(program.domain, unit)
    links = (deps.dep_flow.union(deps.dep_reuse)
             .intersect_domain(sources).intersect_range(sinks))
    if links.is_empty():
        return False
    parallel = [k for k in range(band.band_n_member()) if band.band_member_get_coincident(k)]
    if not parallel or parallel[0] != 0:
        return False  # the shared loops start with a parallel one, else nothing to share
    schedule = isl.UnionMap.from_multi_union_pw_aff(
        band.band_get_partial_schedule().drop_dims(isl.dim_type.set, parallel[-1] + 1,
                                                   band.band_n_member() - parallel[-1] - 1))
    same = same_image(schedule)
    return links.is_subset(same)


def _innermost_indices(tree: isl.Schedule) -> dict[str, frozenset[int]]:
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


def _group_constraints(program: PolyProgram, deps: Dependences,
                       names: list[str]) -> isl.ScheduleConstraints:
    """The scheduling constraints of the statements ``names`` alone."""
    return _constraints(program, deps, statements_named(program.domain, names))


def _constraints(program: PolyProgram, deps: Dependences,
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


def _isl_schedule(constraints: isl.ScheduleConstraints, program: PolyProgram,
                  whole_component: bool = False, serialize_sccs: bool = False) -> isl.Schedule:
    """isl's scheduler with the fusion options set (they live on the shared context)."""
    ctx = program.domain.get_ctx()
    with _SCHEDULER_LOCK:
        saved = (ctx.get_schedule_whole_component(), ctx.get_schedule_serialize_sccs())
        try:
            ctx.set_schedule_whole_component(int(whole_component))
            ctx.set_schedule_serialize_sccs(int(serialize_sccs))
            return constraints.compute_schedule()
        finally:
            ctx.set_schedule_whole_component(saved[0])
            ctx.set_schedule_serialize_sccs(saved[1])


def _outer_band_depths(tree: isl.Schedule, program: PolyProgram,
                       tiled_only: bool = False) -> dict[str, int]:
    """For each statement, the number of members of the outermost band above it; with
    ``tiled_only``, only for statements whose band has blocks of data to keep in cache
    (:func:`~polyc.poly.tiling.tiling_matters`)."""
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


def _outer_loop_parallel(tree: isl.Schedule, deps: Dependences, program: PolyProgram) -> bool:
    """Whether the tree starts with one band over every statement whose first member is
    parallel, as it is or with private accumulators (one parallel loop around
    everything); a tree of several nests counts as parallel when each nest starts so."""
    return all(_starts_parallel(nest, deps, program) for nest in _outer_nests(tree))


def _outer_nests(tree: isl.Schedule) -> list[isl.ScheduleNode]:
    """The top node of each loop nest: below a top-level sequence or set, or the root's."""
    node = tree.get_root().child(0)
    if node.get_type() in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        return [node.child(k).child(0) for k in range(node.n_children())]
    return [node]


def _outer_private_tensors(tree: isl.Schedule, deps: Dependences,
                           program: PolyProgram) -> tuple[str, ...]:
    """The tensors the outer loops of ``tree`` accumulate privately to run in parallel."""
    return tuple(sorted({tensor for nest in _outer_nests(tree)
                         if nest.get_type() == isl.schedule_node_type.band
                         and nest.band_n_member() > 0
                         and not nest.band_member_get_coincident(0)
                         for tensor in privatization(nest, deps, program) or ()}))


def _starts_parallel(node: isl.ScheduleNode, deps: Dependences, program: PolyProgram) -> bool:
    if node.get_type() == isl.schedule_node_type.leaf:
        return True
    if node.get_type() != isl.schedule_node_type.band or node.band_n_member() == 0:
        return False
    return bool(node.band_member_get_coincident(0)) or \
        privatization(node, deps, program) is not None


def _mark_outer_parallel(node: isl.ScheduleNode, deps: Dependences,
                         program: PolyProgram) -> isl.ScheduleNode:
    """Mark the outermost parallel band member on each path, as it is or with private
    accumulators (:mod:`polyc.poly.privatize`), and the coincident members right after
    it for collapsing; returns the same position."""
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
        if node.band_member_get_coincident(0):
            count = 1
            while count < node.band_n_member() and node.band_member_get_coincident(count):
                count += 1
            if count == node.band_n_member() and not has_inner_band(node):
                count -= 1  # the innermost loop stays a loop for the C compiler
            if count > 1:
                node = node.insert_mark(collapse_mark(count))
            return node.insert_mark(isl.Id(PARALLEL_MARK))
        private = privatization(node, deps, program)
        if private == ():
            return node.insert_mark(isl.Id(PARALLEL_MARK))
        if private:
            return node.insert_mark(private_mark(private))
    for position in range(node.n_children()):
        node = _mark_outer_parallel(node.child(position), deps, program).parent()
    return node


def _is_legal(tree: isl.Schedule, deps: Dependences, program: PolyProgram) -> bool:
    try:
        check_legality(tree.get_map(), deps, program)
    except InternalError:
        return False
    return True


def check_legality(schedule_map: isl.UnionMap, deps: Dependences, program: PolyProgram) -> None:
    """Raise :class:`InternalError` unless ``schedule_map`` orders every dependence."""
    schedule_map = schedule_map.intersect_domain(program.domain)
    # Each dependence, mapped through the schedule, must go strictly forward in time:
    # { S(a) -> S(b) : a -> b in deps } ⊆ lex_lt. (Cheaper than building lex_lt of the
    # schedule over all pairs of instances.)
    images = deps.validity.apply_domain(schedule_map).apply_range(schedule_map)
    for image in isl_items(images.get_map_list()):
        forward = isl.Map.lex_lt(image.get_space().domain())
        if not image.is_subset(forward):
            raise InternalError(f"illegal schedule for `{program.op.name}`: dependences "
                                f"{image.subtract(forward)} (in schedule time) go backwards "
                                f"under {schedule_map}")
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
        private = (privatized_tensors(node.mark_get_id().get_name())
                   if node.get_type() == isl.schedule_node_type.mark else None)
        collapsed = (collapsed_loops(node.mark_get_id().get_name())
                     if node.get_type() == isl.schedule_node_type.mark else None)
        if collapsed is not None:
            band = node.child(0)
            if band.get_type() != isl.schedule_node_type.band or \
                    band.band_n_member() < collapsed or \
                    not _carried(band, collapsed, deps).is_empty():
                raise InternalError(f"`{program.op.name}`: the loops marked "
                                    f"{node.mark_get_id().get_name()!r} carry dependences")
        elif private is not None:
            band = node.child(0)
            if band.get_type() != isl.schedule_node_type.band or \
                    privatization(band, deps, program) != private:
                raise InternalError(f"`{program.op.name}`: the loop marked "
                                    f"{node.mark_get_id().get_name()!r} is not parallel "
                                    f"with those tensors private")
        elif node.get_type() == isl.schedule_node_type.mark and \
                node.mark_get_id().get_name() in (PARALLEL_MARK, SIMD_MARK,
                                                  SIMD_REDUCTION_MARK):
            band = node.child(0)
            while band.get_type() == isl.schedule_node_type.mark:
                band = band.child(0)
            if band.get_type() == isl.schedule_node_type.band:
                carried = _carried(band, 1, deps)
                if node.mark_get_id().get_name() == SIMD_REDUCTION_MARK:
                    carried = _within_statements(carried).subtract(deps.dep_reduction)
                if not carried.is_empty():
                    raise InternalError(
                        f"`{program.op.name}`: a loop marked {node.mark_get_id().get_name()}"
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
