"""Straightened bands: members that walk one index each, where isl combined several.

Where a reduction's extent is a constant (a convolution's filter written ``float(K, C,
3, 3)``), isl's scheduler may pick a skewed basis for the reduction loops: the band
``(n, k, h, w, c, c + r, s)`` instead of ``(..., c, r, s)``. Both walk the same points,
but a member that moves two indices is no loop the tiling can size, block or
vectorise, and the whole nest stayed a plain loop nest, far slower than with a
symbolic filter size (measurements: benchmarks/README.md, "Design measurements").

A member ``c + r`` whose other indices are all walked by earlier members is replaced
by the one index it adds (``r``): the members stay a unimodular basis of the same
points (triangular, unit diagonal), only the order of the points changes. The band
is rewritten only where every dependence active at it (same outer loops) keeps a
non-negative distance along every new member, so it stays permutable; coincidence
flags are recomputed the same way. The final schedule is proven legal as always.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.program import isl_items
from polyc.poly.relations import same_image


def straighten_bands(tree: isl.Schedule, deps: Dependences) -> isl.Schedule:
    """``tree`` with each permutable band straightened where that is legal."""
    return _visit(tree.get_root(), deps).get_schedule()


def _visit(node: isl.ScheduleNode, deps: Dependences) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0 \
            and node.band_get_permutable():
        node = _straighten(node, deps)
    for position in range(node.n_children()):
        node = _visit(node.child(position), deps).parent()
    return node


def _straighten(node: isl.ScheduleNode, deps: Dependences) -> isl.ScheduleNode:
    partial = node.band_get_partial_schedule()
    count = partial.dim(isl.dim_type.set)
    members = [isl_items(partial.get_at(k).get_pw_aff_list()) for k in range(count)]
    statements = {pa.get_domain_space().get_tuple_name(isl.dim_type.set)
                  for member in members for pa in member}
    covered: dict[str, set[int]] = {name: set() for name in statements}
    straightened = []
    changed = False
    for member in members:
        pieces = []
        for pw_aff in member:
            name = pw_aff.get_domain_space().get_tuple_name(isl.dim_type.set)
            plain = _plain_index(pw_aff, covered[name])
            if plain is None:
                return node
            index, aff = plain
            if index is not None:
                covered[name].add(index)
            changed = changed or aff is not None
            pieces.append(pw_aff if aff is None else
                          isl.PwAff.from_aff(aff).intersect_domain(pw_aff.domain()))
        straightened.append(pieces)
    if not changed:
        return node
    new_partial = partial
    for k, pieces in enumerate(straightened):
        union = isl.UnionPwAff.from_pw_aff(pieces[0])
        for piece in pieces[1:]:
            union = union.union_add(isl.UnionPwAff.from_pw_aff(piece))
        new_partial = new_partial.set_at(k, union)
    coincident = permutable_members(node, new_partial, deps)
    if coincident is None:
        return node
    node = node.delete().insert_partial_schedule(new_partial).band_set_permutable(1)
    for k, flag in enumerate(coincident):
        node = node.band_member_set_coincident(k, flag)
    return node


def permutable_members(node: isl.ScheduleNode, partial: isl.MultiUnionPwAff,
                       deps: Dependences) -> list[bool] | None:
    """Whether ``partial`` may stand as one permutable band at ``node``'s position:
    every dependence active there (same outer loops) has a non-negative distance
    along each member. Then each member's coincidence flag (all those distances zero
    for the coincidence dependences), else ``None``."""
    prefix = node.get_prefix_schedule_union_map()
    same_outer = same_image(prefix)
    active = deps.validity.intersect(same_outer)
    maps = [isl.UnionMap.from_union_pw_aff(partial.get_at(k))
            for k in range(partial.dim(isl.dim_type.set))]
    if not all(active.is_subset(m.lex_le_union_map(m)) for m in maps):
        return None
    coincidence = deps.coincidence.intersect(same_outer)
    return [coincidence.is_subset(same_image(m)) for m in maps]


def _plain_index(pw_aff: isl.PwAff, covered: set[int]
                 ) -> tuple[int | None, isl.Aff | None] | None:
    """For one statement's expression of a member: ``(index it adds, replacement)``.
    The index is ``None`` for a constant member; the replacement ``None`` when the
    expression is kept as it is (no index, or one). ``None`` when it cannot be
    straightened (several pieces, a denominator, several new indices, or a new
    index with a coefficient other than 1)."""
    pieces = pw_aff.get_pieces()
    if len(pieces) != 1:
        return None
    aff = pieces[0][1]
    if not aff.get_denominator_val().is_one():
        return None
    used = [d for d in range(aff.dim(isl.dim_type.in_))
            if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()]
    if len(used) <= 1:
        return (used[0] if used else None), None
    new = [d for d in used if d not in covered]
    if len(new) != 1 or not aff.get_coefficient_val(isl.dim_type.in_, new[0]).is_one():
        return None
    plain = isl.Aff.var_on_domain(isl.LocalSpace.from_space(aff.get_domain_space()),
                                  isl.dim_type.set, new[0])
    return new[0], plain.add_constant_val(aff.get_constant_val())
