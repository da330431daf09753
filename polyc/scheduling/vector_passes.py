"""Fuse consecutive vector passes over the same range into one vector loop.

Loop distribution (:mod:`polyc.scheduling.distribute`) and band optimisation leave
a row of softmax as a sequence of vector loops, one per statement. Two of them
walk the same values, the exponentials and their sum::

    for d: e(d) = exp(X(n, d) - row_max(n))      simd
    row_sum(n) = 0                                no loop
    for d: row_sum(n) += e(d)                     simd reduction

The sum reads each ``e(d)`` in the iteration that wrote it, so the two loops
can be one: every ``e(d)`` is added while it is still in a register, and the
row of ``e`` is walked once less::

    row_sum(n) = 0
    for d: e(d) = exp(X(n, d) - row_max(n)); acc += e(d)     simd reduction

In the schedule tree, two children of a sequence, each a vector mark over a
one-member band right above a leaf, become one child: the mark (a reduction's
if either is one) over a band of both members over a sequence of the two
statement groups. Children in between that hold no loop (the sum's
initialisation) move before the first pass. It is done when

* both bands walk the same values in each iteration of the loops outside,
* every dependence between the two passes inside one iteration of those loops
  links instances at the same value (the consumer reads what this iteration
  produced, nothing from another iteration; so the fused loop still runs as
  one vector loop), and no dependence goes from the first pass to a child that
  moves before it,
* at most one of the passes is a reduction, and no statement of either stores
  an output written once (those loops stream their stores,
  :mod:`polyc.codegen.streaming`, which a fused loop cannot),
* a reduction is not fused with a call into the math library: the vector
  functions' calling convention clobbers every vector register, so the
  accumulator would be stored and reloaded around each call: fused, the example
  above with ``exp`` gained nothing, where passes without a call gain
  (measurements: benchmarks/README.md, "Design measurements").

The final schedule is proven legal anyway.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.relations import same_image
from polyc.scheduling.distribute import walks


@dataclass(frozen=True)
class VectorPasses:
    """The marks above vector loops: ``plain`` (parallel) and ``reduction``;
    ``keep_apart(statements)``: whether a pass over these statements must stay a loop
    of its own; ``calls_out(statements)``: whether they call a library function."""

    plain: str
    reduction: str
    keep_apart: Callable[[isl.UnionSet], bool]
    calls_out: Callable[[isl.UnionSet], bool]


@dataclass(frozen=True)
class _Pass:
    """A child of a sequence that is one vector loop: its position, the statement
    instances it runs, its mark, its band's member and that member's loop type."""

    position: int
    statements: isl.UnionSet
    mark: str
    member: isl.UnionPwAff
    loop_type: isl.ast_loop_type


def fuse_vector_passes(tree: isl.Schedule, deps: Dependences,
                       passes: VectorPasses) -> isl.Schedule:
    return _visit(tree.get_root(), deps, passes).get_schedule()


def _visit(node: isl.ScheduleNode, deps: Dependences, passes: VectorPasses
           ) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.sequence:
        fused = _fuse_once(node, deps, passes)
        while fused is not None:
            node = fused
            fused = _fuse_once(node, deps, passes)
    for position in range(node.n_children()):
        node = _visit(node.child(position), deps, passes).parent()
    return node


def _fuse_once(sequence: isl.ScheduleNode, deps: Dependences, passes: VectorPasses
               ) -> isl.ScheduleNode | None:
    """The sequence with its first fusable pair of passes fused; ``None`` if none is."""
    count = sequence.n_children()
    for first in range(count):
        head = _vector_pass(sequence, first, passes)
        if head is None:
            continue
        for second in range(first + 1, count):
            tail = _vector_pass(sequence, second, passes)
            if tail is not None:
                if _fusable(sequence, head, tail, deps, passes):
                    return _fuse(sequence, head, tail, passes)
                break
            if _has_loop(sequence.child(second)):
                break
    return None


def _vector_pass(sequence: isl.ScheduleNode, position: int, passes: VectorPasses
                 ) -> _Pass | None:
    child = sequence.child(position)
    mark = child.child(0)
    if mark.get_type() != isl.schedule_node_type.mark or \
            mark.mark_get_id().get_name() not in (passes.plain, passes.reduction):
        return None
    band = mark.child(0)
    if band.get_type() != isl.schedule_node_type.band or band.band_n_member() != 1 or \
            band.child(0).get_type() != isl.schedule_node_type.leaf:
        return None
    statements = mark.get_domain()  # the instances that pass the filter
    if passes.keep_apart(statements):
        return None
    return _Pass(position, statements, mark.mark_get_id().get_name(),
                 band.band_get_partial_schedule().get_at(0).intersect_domain(statements),
                 band.band_member_get_ast_loop_type(0))


def _has_loop(node: isl.ScheduleNode) -> bool:
    """Whether some band below ``node`` walks more than one value for a statement."""
    if node.get_type() == isl.schedule_node_type.band:
        partial = node.band_get_partial_schedule()
        statements = node.get_domain()
        if any(walks(partial.get_at(k), statements) for k in range(node.band_n_member())):
            return True
    return any(_has_loop(node.child(k)) for k in range(node.n_children()))


def _fusable(sequence: isl.ScheduleNode, head: _Pass, tail: _Pass, deps: Dependences,
             passes: VectorPasses) -> bool:
    if head.mark == tail.mark == passes.reduction:
        return False
    if passes.reduction in (head.mark, tail.mark) and (
            passes.calls_out(head.statements) or passes.calls_out(tail.statements)):
        return False
    outer = sequence.get_prefix_schedule_union_map()
    same_outer = same_image(outer)

    def walked(part: _Pass) -> isl.UnionSet:
        member = isl.UnionMap.from_union_pw_aff(part.member)
        return outer.intersect_domain(part.statements).flat_range_product(member).range()

    if not walked(head).is_equal(walked(tail)):
        return False
    linked = deps.validity.intersect(same_outer)
    members = isl.UnionMap.from_union_pw_aff(head.member.union_add(tail.member))
    same_value = same_image(members)
    from_head = linked.intersect_domain(head.statements)
    if not from_head.intersect_range(tail.statements).is_subset(same_value) or \
            not linked.intersect_domain(tail.statements).intersect_range(
                head.statements).is_empty():
        return False
    return all(from_head.intersect_range(sequence.child(k).filter_get_filter()).is_empty()
               for k in range(head.position + 1, tail.position))


def _fuse(sequence: isl.ScheduleNode, head: _Pass, tail: _Pass, passes: VectorPasses
          ) -> isl.ScheduleNode:
    """Regroup the sequence's children as (before, moved, fused, after); same position."""
    filters = [sequence.child(k).filter_get_filter() for k in range(sequence.n_children())]
    order = list(range(head.position)) + list(range(head.position + 1, tail.position))
    fused_at = len(order)
    groups = [filters[k] for k in order] + [head.statements.union(tail.statements)] + \
        [filters[k] for k in range(tail.position + 1, len(filters))]
    listed = isl.UnionSetList.alloc(sequence.get_ctx(), len(groups))
    for group in groups:
        listed = listed.add(group)
    # isl copies the old sequence under each new filter, keeping the children it meets.
    regrouped = sequence.insert_sequence(listed)
    for position in reversed(range(len(groups))):
        if position != fused_at and regrouped.child(position).child(0).get_type() == \
                isl.schedule_node_type.sequence:
            # A group whose copy is a sequence of several (a nested sequence of the old
            # one) moves the fused group along when spliced before it.
            before = regrouped.n_children()
            regrouped = regrouped.sequence_splice_child(position)
            if position < fused_at:
                fused_at += regrouped.n_children() - before
    inner = regrouped.child(fused_at).child(0)  # the old sequence: the two passes
    for position in range(inner.n_children()):
        inner = inner.child(position).child(0).delete().delete().parent().parent()
    reduction = next((part for part in (head, tail) if part.mark == passes.reduction), None)
    band = inner.insert_partial_schedule(isl.MultiUnionPwAff.from_union_pw_aff(
        head.member.union_add(tail.member))).band_set_permutable(1)
    band = band.band_member_set_ast_loop_type(0, (reduction or head).loop_type)
    mark = passes.plain if reduction is None else passes.reduction
    return band.insert_mark(isl.Id(mark)).parent().parent()
