"""Automatic scheduling with isl, parallel marks, and the legality proof.

``compute_schedule`` asks isl's scheduler for a schedule that respects every
dependence (validity), keeps producers near consumers (proximity) and finds
loops without loop-carried dependences (coincidence). The fusion strategy
picks isl's options: ``"max"`` fuses whole components, ``"min"`` serialises
strongly connected components (no fusion), ``"default"`` leaves isl's choice.

The outermost band member that isl found coincident along each path of the
tree gets a ``parallel`` mark; code generation turns it into an OpenMP loop.

``check_legality`` proves the final schedule respects every dependence:
``dep ⊆ { a -> b : S(a) ≺ S(b) }``. A schedule that fails is a bug in
polyc, never output.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import islpy as isl

from polyc.errors import InternalError
from polyc.poly.dependences import Dependences
from polyc.fusion.distribute import distribute_shifted_members
from polyc.poly.cache_model import machine_caches
from polyc.poly.program import PolyProgram, isl_items
from polyc.poly.tiling import optimize_bands

PARALLEL_MARK = "parallel"
FUSION_STRATEGIES = ("default", "max", "min")

# isl's scheduler options live on the (shared) context; set them under a lock.
_SCHEDULER_LOCK = threading.Lock()


@dataclass(frozen=True)
class Schedule:
    tree: isl.Schedule
    fusion: str

    @property
    def schedule_map(self) -> isl.UnionMap:
        return self.tree.get_map()

    def __str__(self) -> str:
        return schedule_tree_text(self.tree)


def compute_schedule(program: PolyProgram, deps: Dependences, fusion: str = "default",
                     parallel: bool = True, optimize: bool = True) -> Schedule:
    if fusion not in FUSION_STRATEGIES:
        raise ValueError(f"fusion must be one of {FUSION_STRATEGIES}, not {fusion!r}")
    validity = deps.all
    constraints = (isl.ScheduleConstraints.on_domain(program.domain)
                   .set_context(program.context)
                   .set_validity(validity)
                   .set_proximity(deps.dep_flow)
                   .set_coincidence(validity))
    ctx = program.domain.get_ctx()
    with _SCHEDULER_LOCK:
        saved = (ctx.get_schedule_whole_component(), ctx.get_schedule_serialize_sccs())
        try:
            ctx.set_schedule_whole_component(1 if fusion == "max" else 0)
            ctx.set_schedule_serialize_sccs(1 if fusion == "min" else 0)
            tree = constraints.compute_schedule()
        finally:
            ctx.set_schedule_whole_component(saved[0])
            ctx.set_schedule_serialize_sccs(saved[1])
    if optimize:
        tree = distribute_shifted_members(tree, deps)
        tree = optimize_bands(tree, program, machine_caches())
    if parallel:
        tree = _mark_outer_parallel(tree.get_root()).get_schedule()
    schedule = Schedule(tree, fusion)
    check_legality(schedule.schedule_map, deps, program)
    return schedule


def _mark_outer_parallel(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Mark the outermost coincident band member on each path; returns the same position."""
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
        if node.band_member_get_coincident(0):
            return node.insert_mark(isl.Id(PARALLEL_MARK))
    for position in range(node.n_children()):
        node = _mark_outer_parallel(node.child(position)).parent()
    return node


def check_legality(schedule_map: isl.UnionMap, deps: Dependences, program: PolyProgram) -> None:
    """Raise :class:`InternalError` unless ``schedule_map`` orders every dependence."""
    schedule_map = schedule_map.intersect_domain(program.domain)
    # Each dependence, mapped through the schedule, must go strictly forward in time:
    # { S(a) -> S(b) : a -> b in deps } ⊆ lex_lt. (Cheaper than building lex_lt of the
    # schedule over all pairs of instances.)
    images = deps.all.apply_domain(schedule_map).apply_range(schedule_map)
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


def schedule_tree_text(tree: isl.Schedule) -> str:
    """isl's block-style YAML of the schedule tree (band members, marks, filters)."""
    root = tree.get_root()
    text = root.to_str() if hasattr(root, "to_str") else str(tree)
    return "\n".join(line for line in text.splitlines() if "YOU ARE HERE" not in line)
