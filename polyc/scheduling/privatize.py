"""Parallel loops that carry reductions: each thread accumulates into a private copy.

In ``atax`` fused into one pass over ``A``::

    for i:                        tmp(i) +=! A(i, j) * x(j)
      for j: tmp(i) += A(i, j) * x(j)
      for j: y(j)   += A(i, j) * tmp(i)      y(j) +=! A(i, j) * tmp(i)

the loop over ``i`` carries the update chain of ``y`` and nothing else. Sums may
be reassociated, so the loop can still run in parallel: each thread adds into
a private ``y`` that starts at the identity, and the private copies are
combined into ``y`` after the loop (:mod:`polyc.codegen.parallel_region`).

That is legal when, among the instances under the loop:

1. every coincidence dependence the loop carries is the update chain of a pure
   reduction (the *privatized* statements, accumulating into the privatized
   tensors), or goes into such an update through its tensor from an earlier
   iteration (the initialisation at ``i = 0``: it writes the shared tensor,
   which the private sums are added to after the loop);
2. no dependence leaves a privatized update towards another statement: nothing
   inside the loop reads a privatized tensor after an update, or writes it
   after one (an initialisation before every update is fine: it writes the
   shared tensor, and the private sums are added to what it wrote).

The mark above such a loop carries the tensors
(:class:`~polyc.scheduling.marks.PrivateAccumulators`; isl prints it ``parallel private: y``).
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.program import PolyProgram, PolyStatement, isl_items
from polyc.poly.relations import same_image

def privatization(band: isl.ScheduleNode, deps: Dependences,
                  program: PolyProgram) -> tuple[str, ...] | None:
    """For the first member of ``band``: ``()`` when it is parallel as it is, the tensors
    to privatize when it is parallel with private accumulators, ``None`` otherwise."""
    inside = band.get_domain()
    outer = band.get_prefix_schedule_union_map()
    member = isl.UnionMap.from_union_pw_aff(band.band_get_partial_schedule().get_at(0))
    same_outer = same_image(outer)
    local = deps.coincidence.intersect_domain(inside).intersect_range(inside).intersect(
        same_outer)
    carried = local.subtract(same_image(member))
    if carried.is_empty():
        return ()
    chains = carried.intersect(deps.dep_reduction)
    updates = {part.get_tuple_name(isl.dim_type.in_)
               for part in isl_items(chains.get_map_list())}
    tensors = tuple(sorted({program.statement(name).statement.tensor for name in updates}))
    # Besides the chains, the loop may carry what flows into an update through the
    # privatized tensor: its initialisation (or a read of it) in an earlier iteration.
    for part in isl_items(carried.subtract(deps.dep_reduction).get_map_list()):
        source = program.statement(part.get_tuple_name(isl.dim_type.in_))
        sink = part.get_tuple_name(isl.dim_type.out)
        through_private = source.statement.tensor in tensors or (
            _reads(source) & set(tensors) and
            source.statement.tensor not in _reads(program.statement(sink)))
        if sink not in updates or not through_private:
            return None
    # The statements that write a privatized tensor (besides its updates) or read one.
    others = {stmt.name for stmt in program.statements
              if (stmt.name not in updates and stmt.statement.tensor in tensors)
              or _reads(stmt) & set(tensors)}
    leaving = deps.validity.union(deps.dep_reduction_order).intersect(same_outer)
    for source in isl_items(leaving.intersect_domain(inside).intersect_range(inside)
                            .get_map_list()):
        if source.get_tuple_name(isl.dim_type.in_) in updates and \
                source.get_tuple_name(isl.dim_type.out) in others:
            return None
    return tensors


def _reads(stmt: PolyStatement) -> set[str]:
    if stmt.is_init:
        return set()
    return set(stmt.statement.tensors_read)
