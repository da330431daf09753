"""The default fusion: which statements share loops, decided by cost.

The candidates, from most fused to least: maximal fusion, isl's default fusion with its
consecutive nests fused along their outer loop (:mod:`polyc.scheduling.nest_fusion`),
isl's default fusion, fusion in groups of consecutive statements (a contraction with
its epilogue), no fusion. Each
is finished (tiled, register-blocked, jammed, marked parallel) and either turned down
by a rule no cost may override — it would serialise an outer loop, shrink a band
tiling needs, or take a statement's vector loop or register block — or estimated by
the machine's cost model (:mod:`polyc.scheduling.fusion_cost`); the cheapest wins, the more
fused among estimates within :data:`COST_TOLERANCE`. A fusion that would take vector
loops is tried once more with the loop nests that hold those statements unfused and
its other nests as they were (:func:`nests_apart`): what one nest loses does not cost
the others their fusion.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import islpy as isl

from polyc.machine import Machine
from polyc.poly.dependences import Dependences
from polyc.poly.program import (INIT_SUFFIX, PolyProgram, isl_items, statement_names,
                                 statements_named)
from polyc.poly.relations import affine_inputs, same_image
from polyc.scheduling.fusion_cost import FusionCost, NestShape, nominal_sizes, schedule_cost
from polyc.scheduling.marks import (SIMD_MARK, SIMD_REDUCTION_MARK, is_parallel, is_register_block,
                                    marks_by_statement, node_mark)
from polyc.scheduling.nest_fusion import fuse_outer_loops
from polyc.scheduling.schedule_tree import (group_constraints, innermost_indices, isl_schedule,
                                            outer_band_depths, outer_loop_parallel, outer_nests,
                                            outer_private_tensors, serial_nests,
                                            subtree_schedule)


@dataclass(frozen=True)
class FusionCandidate:
    """One fusion the default strategy considered: its estimated cost
    (:mod:`polyc.scheduling.fusion_cost`) where it was acceptable, else ``None``; ``verdict``
    says why it was acceptable or turned down."""

    name: str
    cost: FusionCost | None
    verdict: str
    chosen: bool = False


# Estimates within this factor of the cheapest count as equal, and the candidate that
# fuses more wins: the model leaves out what fusion saves besides traffic (loop
# overhead, thread teams started once instead of per nest).
COST_TOLERANCE = 1.02


def default_fusion(constraints: isl.ScheduleConstraints, program: PolyProgram,
                   deps: Dependences, machine: Machine,
                   finish: Callable[[isl.Schedule], isl.Schedule], parallel: bool,
                   optimize: bool) -> tuple[isl.Schedule, str, tuple[FusionCandidate, ...]]:
    """The default strategy's final tree, its decision and the candidates it weighed;
    ``finish`` optimises a candidate's tree and marks it parallel (tiling, register
    blocks, jams: what the candidates are compared after).

    The candidates, from most fused to least: maximal fusion, isl's default fusion with
    its nests fused along their outer loop
    (:func:`~polyc.scheduling.nest_fusion.fuse_outer_loops`), isl's default fusion,
    fusion in groups (:func:`fused_groups`), no fusion. A candidate is turned down
    where it would serialise an outer loop, shrink a band its tiling needs, or,
    optimised, take a vector loop or register block from a statement
    (:func:`lost_vector_loops`; it is then tried with those statements' nests
    unfused, :func:`nests_apart`); of the others, the model of
    :mod:`polyc.scheduling.fusion_cost` picks the cheapest (the most fused among estimates
    within :data:`COST_TOLERANCE`)."""
    unfused = isl_schedule(constraints, program, serialize_sccs=True)
    depths = outer_band_depths(unfused, program, tiled_only=True)
    apart = finish(unfused)
    sizes = nominal_sizes(program)
    considered: list[FusionCandidate] = []
    trees: dict[str, isl.Schedule] = {}
    seen = [("no fusion", unfused.get_map())]

    def lost(tree: isl.Schedule) -> list[str]:
        return lost_vector_loops(tree, apart, program) if optimize else []

    def accept(name: str, tree: isl.Schedule, verdict: str) -> None:
        cost = schedule_cost(program, nest_shapes(tree), machine, sizes)
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

    isl_default = isl_schedule(constraints, program)
    maximal = isl_schedule(constraints, program, whole_component=True)
    for name, fused in (("maximal fusion", maximal),
                        ("isl's default fusion, outer loops fused",
                         fuse_outer_loops(isl_default, deps, program)),
                        ("isl's default fusion", isl_default)):
        if fused is None or same_as_earlier(name, fused):
            continue
        fused_depth = outer_band_depths(fused, program)
        if not outer_loop_parallel(fused, deps, program):
            reject(name, f"{name} would serialise the outer loop")
            continue
        if any(fused_depth.get(s, 0) < d for s, d in depths.items()):
            reject(name, f"{name} would shrink the permutable bands tiling needs")
            continue
        finished = finish(fused)
        if losers := lost(finished):
            reject(name, f"{name} would lose the vector loop or register block "
                         f"of {', '.join(losers)}")
            fused = nests_apart(fused, losers, program, deps)
            if fused is None:
                continue
            name = f"{name}, the nests of {', '.join(losers)} unfused"
            if same_as_earlier(name, fused):
                continue
            finished = finish(fused)
            if losers := lost(finished):
                reject(name, f"{name} would still lose the vector loop or register "
                             f"block of {', '.join(losers)}")
                continue
        private = outer_private_tensors(fused, deps, program)
        how = (f"in parallel with private accumulators for {', '.join(private)}"
               if private else "parallel")
        accept(name, finished, f"the outer loop stays {how}, no band loses depth")
    grouped = fused_groups(program, deps, depths, innermost_indices(unfused), maximal)
    if grouped is not None:
        tree, groups = grouped
        name = (f"fusion in {len(groups)} groups: "
                + " | ".join(", ".join(group) for group in groups))
        if not same_as_earlier(name, tree):
            tree = finish(tree)
            if parallel and serial_nests(tree) > serial_nests(apart):
                # Optimised, a group lost what its nests had apart (gemver: a column
                # walk that runs in parallel with private accumulators only on its own).
                reject(name, "fusion in groups would leave a loop nest without an outer "
                             "parallel loop")
            elif losers := lost(tree):
                reject(name, "fusion in groups would lose the vector loop or register "
                             f"block of {', '.join(losers)}")
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


def nests_apart(fused: isl.Schedule, losers: list[str], program: PolyProgram,
                deps: Dependences) -> isl.Schedule | None:
    """``fused`` with each of its loop nests that holds a statement of ``losers``
    scheduled unfused (isl's schedule of its statements alone, strongly connected
    components apart), the other nests as they are, in ``fused``'s order (which every
    dependence between nests follows); ``None`` where ``fused`` is one nest."""
    nests = outer_nests(fused)
    if len(nests) < 2:
        return None
    tree = None
    for nest in nests:
        names = statement_names(nest.get_domain())
        if any(name in losers for name in names):
            nest = isl_schedule(group_constraints(program, deps, names), program,
                                serialize_sccs=True)
        else:
            nest = subtree_schedule(nest)
        tree = nest if tree is None else tree.sequence(nest)
    return tree


def cheapest_candidate(candidates: list[FusionCandidate]) -> FusionCandidate:
    """Of the candidates with a cost (listed from most fused to least), the first whose
    estimate is within :data:`COST_TOLERANCE` of the cheapest."""
    scored = [c for c in candidates if c.cost is not None]
    cheapest = min(c.cost.cycles for c in scored)
    return next(c for c in scored if c.cost.cycles <= cheapest * COST_TOLERANCE)


def nest_shapes(tree: isl.Schedule) -> tuple[NestShape, ...]:
    """The loop nests of a finished tree as the cost model sees them."""
    marks = marks_by_statement(tree)
    walked = walked_indices(tree)
    shapes = []
    for nest in outer_nests(tree):
        names = tuple(statement_names(nest.get_domain()))
        shapes.append(NestShape(
            names,
            all(any(is_parallel(m) for m in marks.get(n, ())) for n in names),
            frozenset(n for n in names if _vectorised(marks.get(n, frozenset()))),
            frozenset(n for n in names if _blocked(marks.get(n, frozenset()))),
            tuple((n, walked.get(n, frozenset())) for n in names)))
    return tuple(shapes)


def _blocked(marks: frozenset) -> bool:
    """Whether a statement under these marks runs in a register block."""
    return any(is_register_block(mark) for mark in marks)


def _vectorised(marks: frozenset) -> bool:
    """Whether a statement under these marks runs in a vector loop or a register block."""
    return bool(marks & {SIMD_MARK, SIMD_REDUCTION_MARK}) or _blocked(marks)


def walked_indices(tree: isl.Schedule) -> dict[str, frozenset[int]]:
    """For each statement, the positions of its indices that its fastest loop walks:
    the loop below a ``simd`` or ``simd-reduction`` mark (a jammed block's rows are
    unrolled around it), else its innermost loop (:func:`innermost_indices`)."""
    walked = innermost_indices(tree)

    def visit(node: isl.ScheduleNode) -> None:
        if node_mark(node) in (SIMD_MARK, SIMD_REDUCTION_MARK) and \
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


def lost_vector_loops(fused: isl.Schedule, apart: isl.Schedule, program: PolyProgram
                      ) -> list[str]:
    """The statements of the most loops (where the work is: not a row reduction's
    initialisation) that run in a vector loop (a ``simd`` or ``simd-reduction`` mark) or
    a register block apart, but not in ``fused``.

    Fusion that costs a statement its vector loop or register block costs far more
    than the traffic it saves: bicg's column sum ``s(j) +=! r(i) * A(i, j)`` fused
    with the row sum ``q(i) +=! A(i, j) * p(j)`` walked ``A`` down its columns;
    symm's and trmm's triangle selects fused into their products were recomputed
    inside the reduction loop. A vector loop that keeps its vectors but loses the rows
    jammed into it (:mod:`polyc.scheduling.jam`) is left to the cost model: a column
    sum loads and stores its accumulator row once per row instead of once per eight
    (bicg's lost ×1.2 so), a row sum runs one accumulator chain instead of eight, which
    on long rows runs as fast (a matrix-vector product of 4096 × 1024 on Zen 5: 0.11 ms
    with one chain, 0.12 with eight rows jammed), while fusing a layer norm backward's
    row passes and column sums into one parallel loop over rows saves reading the rows
    again (×1.2–1.8; measurements: benchmarks/README.md, "Design measurements")."""
    fused_marks, apart_marks = marks_by_statement(fused), marks_by_statement(apart)
    deepest = max(len(s.indices) for s in program.statements)
    losers = []
    for name, marks in apart_marks.items():
        if len(program.statement(name).indices) < deepest:
            continue
        kept = fused_marks.get(name, frozenset())
        if (_blocked(marks) and not _blocked(kept)) or (
                _vectorised(marks) and not _vectorised(kept)):
            losers.append(name)
    return sorted(losers)


def fused_groups(program: PolyProgram, deps: Dependences, depths: dict[str, int],
                 innermost: dict[str, frozenset[int]], maximal: isl.Schedule
                 ) -> tuple[isl.Schedule, list[list[str]]] | None:
    """Maximal fusion within groups of consecutive statements, the groups in sequence:
    ``(schedule, groups)``, or ``None`` when no two statements of the program could
    share loops.

    The statements go in program order (a reduction with its initialisation), each
    joining the group before it when the group's maximal fusion keeps its outer loop
    parallel, every band its tiling needs (``depths``: the band depths of the unfused
    schedule) and every statement's innermost loop (``innermost``: the indices it
    walks in the unfused schedule, the order its accesses were laid out for), and
    reuses data in place (:func:`reused_in_place`). The original program runs
    statements in this order, so every dependence between two groups goes forward.
    2mm's second product fuses with its ``+ beta * D`` epilogue, as mlp's with its
    bias, while the first product, whose rows the second reads whole, stays a nest of
    its own. Where ``maximal``, the maximal fusion of every statement, meets what each
    unit's joining asks, they all form one group, and that is ``None`` too
    (:func:`_one_group`)."""
    units: list[list[str]] = []
    for stmt in program.statements:
        if units and units[-1][-1] == stmt.name + INIT_SUFFIX and not stmt.is_init:
            units[-1].append(stmt.name)
        else:
            units.append([stmt.name])
    if len(units) < 2 or _one_group(program, deps, depths, innermost, units, maximal):
        return None
    groups: list[tuple[list[str], isl.Schedule]] = []
    for unit in units:
        if groups and not shared_values(deps, groups[-1][0], unit, program).is_empty():
            # (sharing no value, the unit never joins: reused_in_place; no isl schedule)
            joined = groups[-1][0] + unit
            tree = fused_group(program, deps, depths, joined)
            if (tree is not None and reused_in_place(tree, deps, groups[-1][0], unit, program)
                    and all(innermost.get(name) == walked for name, walked
                            in innermost_indices(tree).items())):
                groups[-1] = (joined, tree)
                continue
        tree = fused_group(program, deps, depths, unit)
        if tree is None:
            tree = isl_schedule(group_constraints(program, deps, unit), program,
                                serialize_sccs=True)
        groups.append((unit, tree))
    if len(groups) == len(program.statements) or len(groups) == 1:
        return None
    tree = groups[0][1]
    for _, later in groups[1:]:
        tree = tree.sequence(later)
    return tree, [names for names, _ in groups]


def _one_group(program: PolyProgram, deps: Dependences, depths: dict[str, int],
               innermost: dict[str, frozenset[int]], units: list[list[str]],
               maximal: isl.Schedule) -> bool:
    """Whether ``maximal``, the maximal fusion of every statement, meets what each unit's
    joining the statements before it asks in :func:`fused_groups` (and what
    :func:`fused_group` asks of a group): then the units all join one group, the maximal
    fusion candidate itself. Checked on that one schedule instead of on isl's schedule
    of each prefix: joining unit by unit, isl scheduled groups of 2, 3, ... n units, all
    of them for an operator of 17 row sums (33 calls, two thirds of its compile time)."""
    if not _meets_group_rules(maximal, program, deps, depths) or any(
            innermost.get(name) != walked
            for name, walked in innermost_indices(maximal).items()):
        return False
    in_place = _in_place_map(maximal)
    if in_place is None:
        return False
    before: list[str] = []
    for unit in units:
        if before:
            links = shared_values(deps, before, unit, program)
            if links.is_empty() or not links.is_subset(in_place):
                return False
        before = before + unit
    return True


def fused_group(program: PolyProgram, deps: Dependences, depths: dict[str, int],
                names: list[str]) -> isl.Schedule | None:
    """The maximal fusion of the statements ``names`` if its outer loop is parallel as it
    is (no private accumulators) and no band is shallower than ``depths``, else
    ``None``."""
    tree = isl_schedule(group_constraints(program, deps, names), program,
                        whole_component=True)
    return tree if _meets_group_rules(tree, program, deps, depths) else None


def _meets_group_rules(tree: isl.Schedule, program: PolyProgram, deps: Dependences,
                       depths: dict[str, int]) -> bool:
    """Whether the outer loop of the fused ``tree`` is parallel as it is (no private
    accumulators) and no band of its statements is shallower than ``depths``."""
    fused_depth = outer_band_depths(tree, program)
    return outer_loop_parallel(tree, deps, program) and not outer_private_tensors(
        tree, deps, program) and all(fused_depth.get(name, 0) >= depths[name]
                                     for name in statement_names(tree.get_domain())
                                     if name in depths)


def shared_values(deps: Dependences, group: list[str], unit: list[str],
                  program: PolyProgram) -> isl.UnionMap:
    """The flow and reuse dependences from ``group``'s statements to ``unit``'s: the
    values ``unit`` reads that ``group`` writes or reads."""
    return (deps.dep_flow.union(deps.dep_reuse)
            .intersect_domain(statements_named(program.domain, group))
            .intersect_range(statements_named(program.domain, unit)))


def reused_in_place(tree: isl.Schedule, deps: Dependences, group: list[str],
                    unit: list[str], program: PolyProgram) -> bool:
    """Whether fusing ``unit`` into ``group`` (``tree``: their maximal fusion) reuses data
    in place: some value ``unit`` reads is written or read by ``group`` (flow or reuse
    dependences), always in the same iteration of the fused outer band's loops up to
    its last parallel one (the first must be parallel). Fusion that
    only shares loops, or meets a value in another iteration (a transposed read of a
    producer's output), keeps the reuse distance of separate nests and may lose the
    access order each nest had."""
    links = shared_values(deps, group, unit, program)
    if links.is_empty():
        return False
    in_place = _in_place_map(tree)
    return in_place is not None and links.is_subset(in_place)


def _in_place_map(tree: isl.Schedule) -> isl.UnionMap | None:
    """``{ S[a] -> T[b] }`` for instances in the same iteration of the outer band's
    loops up to its last parallel one; ``None`` where the tree does not start with a
    band whose first loop is parallel (nothing to share in place)."""
    band = tree.get_root().child(0)
    if band.get_type() != isl.schedule_node_type.band:
        return None
    parallel = [k for k in range(band.band_n_member()) if band.band_member_get_coincident(k)]
    if not parallel or parallel[0] != 0:
        return None
    schedule = isl.UnionMap.from_multi_union_pw_aff(
        band.band_get_partial_schedule().drop_dims(isl.dim_type.set, parallel[-1] + 1,
                                                   band.band_n_member() - parallel[-1] - 1))
    return same_image(schedule)
