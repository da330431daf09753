"""Distribute shifted members: a fused loop whose statements occupy disjoint ranges
becomes a sequence of loops, one per statement group.

isl's scheduler fuses producer-consumer chains under one outer loop and often
"fuses" their inner loops by shifting them apart; softmax's three row passes
come out as one member ``{ S0[n, d] -> d; S1[n, d] -> D + d; S2[n, d] -> 2D + d }``.
That member carries the dependences between the passes, so it is neither
parallel nor a single reduction, and nothing can be vectorised. Its statements
occupy disjoint, ordered ranges, so it *is* a sequence of loops::

    band (n, [d | D + d | 2D + d])           band (n)
      set { S0 } { S1 } { S2 }         →       sequence
                                                 { S0 }: band (d)   reduction: simd + accumulator
                                                 { S1 }: band (d)   reduction: simd + accumulator
                                                 { S2 }: band (d)   parallel:  simd

A band whose only loop holds a reduction between the points of its initialisation
and an epilogue (``{ S0_init[i] -> 0; S0[i, j] -> j; S1[i] -> N }``) is distributed
too, so that the reduction's loop is a band of its own, unless tiling takes the band
(a matmul's reduction and its initialisation, which tiling separates itself).

A loop of one member whose groups walk the same values stays whole when it runs in
parallel with private accumulators (:mod:`polyc.scheduling.privatize`): a loop over
rows holding a row's passes and a column sum that accumulates across the rows (a layer
norm backward's ``d_gamma``, :mod:`polyc.scheduling.nest_fusion`). Distributed, each
group would read the rows again.

Distributing into the order A, B is legal exactly when no dependence goes
from an instance of B to an instance of A within one iteration of the outer
loops; the groups are put in such an order (a cycle keeps them fused). The
final schedule is proven legal anyway.
"""
from __future__ import annotations

from typing import Callable

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.program import isl_items
from polyc.poly.relations import affine_inputs, same_image


def distribute_shifted_members(tree: isl.Schedule, deps: Dependences,
                               tiled: Callable[[isl.ScheduleNode], bool],
                               privately_parallel: Callable[[isl.ScheduleNode], bool]
                               ) -> isl.Schedule:
    """``tiled(band)``: whether tiling will take the band whole (it then separates a
    reduction's initialisation itself); ``privately_parallel(band)``: whether the band's
    first member is parallel with private accumulators (and not as it is)."""
    return _visit(tree.get_root(), deps, tiled, privately_parallel).get_schedule()


def _visit(node: isl.ScheduleNode, deps: Dependences,
           tiled: Callable[[isl.ScheduleNode], bool],
           privately_parallel: Callable[[isl.ScheduleNode], bool]) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.band:
        distributed = _distribute(node, deps, tiled, privately_parallel)
        if distributed is not None:
            node = distributed
    for position in range(node.n_children()):
        node = _visit(node.child(position), deps, tiled, privately_parallel).parent()
    return node


def _distribute(band: isl.ScheduleNode, deps: Dependences,
                tiled: Callable[[isl.ScheduleNode], bool],
                privately_parallel: Callable[[isl.ScheduleNode], bool]) -> isl.ScheduleNode | None:
    """Distribute the band's last member over its child filters when dependences allow."""
    n = band.band_n_member()
    child = band.child(0)
    if child.get_type() not in (isl.schedule_node_type.set, isl.schedule_node_type.sequence):
        return None
    filters = _leaf_groups(child)
    last = band.band_get_partial_schedule().get_at(n - 1)
    walking = sum(walks(last, f) for f in filters)
    if band.band_member_get_coincident(n - 1) or walking == 0 or (walking == 1 and tiled(band)):
        # Nothing to gain: a parallel loop, no real loop in it, or one real loop in a
        # band tiling takes (a matmul's reduction with its initialisation, which tiling
        # separates). One loop with the points of an initialisation and an epilogue in
        # an untiled band (a row sum, then its mean) is distributed: the reduction's
        # loop becomes a band of its own, which a vector reduction needs.
        return None
    outer = band.get_prefix_schedule_union_map()
    if n > 1:
        outer = outer.flat_range_product(isl.UnionMap.from_multi_union_pw_aff(
            band.band_get_partial_schedule().drop_dims(isl.dim_type.set, n - 1, 1)))
    if walking > 1 and n == 1 and privately_parallel(band) and \
            _overlapping(filters, outer, isl.UnionMap.from_union_pw_aff(last)):
        # The groups walk the same values: one loop over rows, parallel with private
        # accumulators (a column sum beside row passes). Distributed, each group would
        # read the rows again.
        return None
    order = group_order(filters, outer, deps)
    if order is None:
        return None
    if n > 1:
        band = band.band_split(n - 1).child(0)
    member = band.band_get_partial_schedule()
    prefix = band.get_prefix_schedule_union_map()
    band = band.delete()  # now at the set/sequence node
    nested = len(filters) != band.n_children()
    if nested or band.get_type() == isl.schedule_node_type.set or \
            order != list(range(len(order))):
        # Insert a sequence in dependence order above the node; isl copies the node
        # under each filter and drops what the filter excludes.
        listed = isl.UnionSetList.alloc(band.get_ctx(), len(order))
        for k in order:
            listed = listed.add(filters[k])
        band = band.insert_sequence(listed)
    for position in range(band.n_children()):
        group = band.child(position)
        group_filter = group.filter_get_filter()
        partial = member.intersect_domain(group_filter)
        inner = group.child(0).insert_partial_schedule(partial).band_set_permutable(1)
        inner = inner.band_member_set_coincident(
            0, _coincident(partial, prefix, deps, group_filter))
        band = inner.parent().parent()
    return band.parent() if n > 1 else band


def _overlapping(filters: list[isl.UnionSet], outer: isl.UnionMap,
                 member: isl.UnionMap) -> bool:
    """Whether two groups take a value of ``member`` in common within one iteration of
    the ``outer`` loops."""
    images = [outer.flat_range_product(member).intersect_domain(f).range() for f in filters]
    return any(not a.intersect(b).is_empty()
               for k, a in enumerate(images) for b in images[k + 1:])


def _leaf_groups(node: isl.ScheduleNode) -> list[isl.UnionSet]:
    """The finest statement groups of a set/sequence node: the filters, descending into
    filters that hold a set or sequence themselves (no band in between)."""
    groups = []
    for k in range(node.n_children()):
        group = node.child(k)
        inner = group.child(0)
        if inner.get_type() in (isl.schedule_node_type.set, isl.schedule_node_type.sequence):
            groups.extend(_leaf_groups(inner))
        else:
            groups.append(group.filter_get_filter())
    return groups


def walks(member: isl.UnionPwAff, group: isl.UnionSet) -> bool:
    """Whether some statement of ``group`` takes more than one value of ``member``."""
    return any(affine_inputs(pw_aff)
               for pw_aff in isl_items(member.intersect_domain(group).get_pw_aff_list()))


def group_order(filters, outer: isl.UnionMap, deps: Dependences) -> list[int] | None:
    """The groups in an order where no dependence (within one iteration of the outer
    loops) goes from a later group to an earlier one; ``None`` if there is none, or
    fewer than two groups."""
    if len(filters) < 2:
        return None
    same_outer = same_image(outer)
    linked = deps.validity.intersect(same_outer)
    edges = {(a, b) for a in range(len(filters)) for b in range(len(filters)) if a != b
             and not linked.intersect_domain(filters[a]).intersect_range(filters[b]).is_empty()}
    order: list[int] = []
    while len(order) < len(filters):
        ready = [k for k in range(len(filters)) if k not in order
                 and not any((j, k) in edges for j in range(len(filters)) if j not in order)]
        if not ready:
            return None  # a cycle: the groups must stay fused
        order.append(ready[0])
    return order


def _coincident(partial: isl.MultiUnionPwAff, prefix: isl.UnionMap, deps: Dependences,
                group: isl.UnionSet) -> bool:
    """No dependence inside ``group`` links two instances that share the outer loops and
    differ in this member."""
    inside = deps.coincidence.intersect_domain(group).intersect_range(group)
    if inside.is_empty():
        return True
    # Pairs of instances of ``group`` only: the pairs over every statement grow with
    # the square of their number.
    same_outer = same_image(prefix.intersect_domain(group))
    member = isl.UnionMap.from_multi_union_pw_aff(partial).intersect_domain(group)
    same_member = same_image(member)
    carried = inside.intersect(same_outer).subtract(same_member)
    return carried.is_empty()
