"""Vector passes over the same range, in one iteration of the loops outside, put in one
vector loop.

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

Independent passes over a row join the same way, wherever isl put them: the
sums of a layer norm's backward (``sum_d dY*gamma*(X - mu)``, ``sum_d dY*gamma``,
``sum_d (X - mu)``) and its column sums (``d_gamma(d) += ...``, ``d_beta(d) +=
dY``) become one loop with one accumulator per sum. Each sum alone is one chain
of additions, each waiting on the last (a vector add's latency per vector of the
row); side by side the chains overlap, and the row is read once
(measurements: benchmarks/README.md, "Design measurements").

In the schedule tree, the children of a sequence, and of the sequences and sets
nested in it, are listed in execution order (a set's children, independent, in
their listed order); a vector pass is one of them that is a vector mark over a
one-member band over the statements it runs. Each pass, in order, joins the
earliest pass before it where

* both walk the same values in each iteration of the loops outside (the later
  pass's member shifted by a constant first where that makes them the same: isl
  may offset a pass, ``d + D``, to order it after another in a band they once
  shared),
* every dependence between them inside one iteration of those loops links
  instances at the same value (the consumer reads what this iteration produced,
  nothing from another iteration; so the joined loop still runs as one vector
  loop),
* what the later pass depends on among the children in between (directly or
  through others) depends on nothing of the earlier pass: it moves before the
  joined loop, the rest of those children after it (outside every loop, where the
  children are whole loop nests, which the fusion strategy has ordered, no child in
  between may hold a loop, and all move before),
* no statement of either stores an output written once (those loops stream their
  stores, :mod:`polyc.codegen.streaming`, which a joined loop cannot),
* the loop holds no more reductions than
  :func:`~polyc.machine.rules.joined_accumulators` (each keeps a vector register), and
* no reduction is joined with a call into the math library: the vector
  functions' calling convention clobbers every vector register, so an
  accumulator would be stored and reloaded around each call: fused, the example
  above with ``exp`` gained nothing, where passes without a call gain.

The children then form one flat sequence in the new order; a joined loop is the
vector mark (a reduction's if any of its passes is one) over a band of all the
members over the sequence of their statements. The final schedule is proven legal
anyway.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.relations import same_image
from polyc.scheduling.distribute import walks
from polyc.scheduling.schedule_tree import backward_dependences


@dataclass(frozen=True)
class VectorPasses:
    """The marks above vector loops: ``plain`` (parallel) and ``reduction``;
    ``keep_apart(statements)``: whether a pass over these statements must stay a loop
    of its own; ``calls_out(statements)``: whether they call a library function;
    ``accumulators``: the most reductions one loop may hold
    (:func:`~polyc.machine.rules.joined_accumulators`)."""

    plain: str
    reduction: str
    keep_apart: Callable[[isl.UnionSet], bool]
    calls_out: Callable[[isl.UnionSet], bool]
    accumulators: int


@dataclass(frozen=True)
class _Pass:
    """A vector loop: its mark, its band's member and that member's loop type, the
    statement groups below the band in order, and whether they call a library."""

    mark: str
    member: isl.UnionPwAff
    loop_type: isl.ast_loop_type
    statements: tuple[isl.UnionSet, ...]
    calls: bool


@dataclass(frozen=True)
class _Child:
    """A child of the flattened sequence: its place in the original order, the
    statement instances it runs, its loop where it is a vector pass, and whether it
    holds a loop."""

    index: int
    statements: isl.UnionSet
    vector: _Pass | None
    loops: bool


def fuse_vector_passes(tree: isl.Schedule, deps: Dependences,
                       passes: VectorPasses) -> isl.Schedule:
    return _visit(tree.get_root(), deps, passes).get_schedule()


def _visit(node: isl.ScheduleNode, deps: Dependences, passes: VectorPasses
           ) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.sequence:
        regrouped = _regrouped(node, deps, passes)
        if regrouped is not None and not backward_dependences(
                regrouped.get_schedule().get_map(), deps):
            node = regrouped
    for position in range(node.n_children()):
        node = _visit(node.child(position), deps, passes).parent()
    return node


def _regrouped(sequence: isl.ScheduleNode, deps: Dependences, passes: VectorPasses
               ) -> isl.ScheduleNode | None:
    """The sequence with its passes joined (module docstring), at the same position;
    ``None`` where no two join."""
    children = [_child(k, node, passes) for k, node in enumerate(_flattened(sequence))]
    if sum(child.vector is not None for child in children) < 2:
        return None
    joins = _Joins(children, sequence.get_prefix_schedule_union_map(), deps, passes,
                   in_loop=sequence.get_schedule_depth() > 0)
    groups: list[list[_Child]] = [[child] for child in children]
    joined, later = False, 1
    while later < len(groups):
        regrouped = joins.joined(groups, later)
        if regrouped is None:
            later += 1
        else:  # the next child is now at position `later`
            groups, joined = regrouped, True
    return _rebuilt(sequence, groups, passes) if joined else None


def _flattened(node: isl.ScheduleNode) -> list[isl.ScheduleNode]:
    """The nodes below the filters of ``node`` and of the sequences and sets nested in
    it, in execution order."""
    if node.get_type() not in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        return [node]
    return [below for k in range(node.n_children())
            for below in _flattened(node.child(k).child(0))]


def _child(index: int, node: isl.ScheduleNode, passes: VectorPasses) -> _Child:
    statements = node.get_domain()
    return _Child(index, statements, _vector_pass(node, statements, passes), _has_loop(node))


def _has_loop(node: isl.ScheduleNode) -> bool:
    """Whether some band below ``node`` walks more than one value for a statement."""
    if node.get_type() == isl.schedule_node_type.band:
        partial = node.band_get_partial_schedule()
        statements = node.get_domain()
        if any(walks(partial.get_at(k), statements) for k in range(node.band_n_member())):
            return True
    return any(_has_loop(node.child(k)) for k in range(node.n_children()))


def _vector_pass(mark: isl.ScheduleNode, statements: isl.UnionSet, passes: VectorPasses
                 ) -> _Pass | None:
    """``mark``'s loop where it is a vector mark over a one-member band over a leaf or a
    sequence of leaves, that need not stay apart."""
    if mark.get_type() != isl.schedule_node_type.mark or \
            mark.mark_get_id().get_name() not in (passes.plain, passes.reduction):
        return None
    band = mark.child(0)
    if band.get_type() != isl.schedule_node_type.band or band.band_n_member() != 1:
        return None
    below = band.child(0)
    if below.get_type() == isl.schedule_node_type.leaf:
        groups = (statements,)
    elif below.get_type() == isl.schedule_node_type.sequence and all(
            below.child(k).child(0).get_type() == isl.schedule_node_type.leaf
            for k in range(below.n_children())):
        groups = tuple(below.child(k).child(0).get_domain()
                       for k in range(below.n_children()))
    else:
        return None
    if passes.keep_apart(statements):
        return None
    return _Pass(mark.mark_get_id().get_name(),
                 band.band_get_partial_schedule().get_at(0).intersect_domain(statements),
                 band.band_member_get_ast_loop_type(0), groups, passes.calls_out(statements))


class _Joins:
    """Which passes of a flattened sequence may join (module docstring)."""

    def __init__(self, children: list[_Child], outer: isl.UnionMap, deps: Dependences,
                 passes: VectorPasses, in_loop: bool):
        self.outer = outer
        self.passes = passes
        self.in_loop = in_loop
        self.linked = deps.validity.intersect(same_image(outer))
        reached = [self.linked.intersect_domain(child.statements).range()
                   for child in children]
        self.depends = {(a.index, b.index) for a in children for b in children
                        if a.index != b.index
                        and not reached[a.index].intersect(b.statements).is_empty()}

    def joined(self, groups: list[list[_Child]], later: int) -> list[list[_Child]] | None:
        """``groups`` with the pass at ``later`` joined to the earliest pass before it
        that it may join, the children it depends on in between moved before them;
        ``None`` where it joins none."""
        tail = groups[later]
        if tail[0].vector is None:
            return None
        for earlier in range(later):
            head = groups[earlier]
            if not all(child.vector is not None for child in head):
                continue
            tail = self._aligned(head, groups[later])
            if tail is None or not self._may_join(head, tail):
                continue
            between = groups[earlier + 1:later]
            needed = self._closure(between, tail, backwards=True)
            if not self.in_loop:  # whole loop nests: no loop crosses another
                if any(child.loops for group in between for child in group):
                    continue
                needed = set(range(len(between)))
            if needed & self._closure(between, head, backwards=False):
                continue
            return groups[:earlier] + [between[k] for k in sorted(needed)] + \
                [head + tail] + [group for k, group in enumerate(between)
                                 if k not in needed] + groups[later + 1:]
        return None

    def _closure(self, between: list[list[_Child]], end: list[_Child], backwards: bool
                 ) -> set[int]:
        """The positions in ``between`` of the groups that ``end`` (after them) depends
        on, directly or through others of them, with ``backwards``; else of those that
        depend on ``end`` (before them)."""
        found: set[int] = set()
        order = range(len(between) - 1, -1, -1) if backwards else range(len(between))
        for k in order:
            linked = [end] + [between[j] for j in found]
            if any(self._depends(between[k], other) if backwards
                   else self._depends(other, between[k]) for other in linked):
                found.add(k)
        return found

    def _may_join(self, head: list[_Child], tail: list[_Child]) -> bool:
        loops = [child.vector for child in head + tail]
        reductions = sum(loop.mark == self.passes.reduction for loop in loops)
        if reductions > self.passes.accumulators or \
                reductions and any(loop.calls for loop in loops):
            return False
        if not self._depends(head, tail):
            return True
        same_value = same_image(isl.UnionMap.from_union_pw_aff(_members(loops)))
        return self.linked.intersect_domain(_statements(head)).intersect_range(
            _statements(tail)).is_subset(same_value)

    def _aligned(self, head: list[_Child], tail: list[_Child]) -> list[_Child] | None:
        """``tail`` with its loop walking the values ``head``'s walks in each iteration of
        the loops outside: as it is, or shifted by a constant (isl may have offset a
        pass's member, ``d + D``, to order it after another in a band they once
        shared; alone in its child of the sequence, a pass's values order nothing
        else); ``None`` where neither does."""
        (child,) = tail
        walked, target = self._walked(child.vector.member, child), self._walked(
            head[0].vector.member, head[0])
        if walked.is_equal(target):
            return tail
        if walked.n_set() != 1 or target.n_set() != 1:
            return None
        walked, target = isl.Set.from_union_set(walked), isl.Set.from_union_set(target)
        last = walked.dim(isl.dim_type.set) - 1
        if target.dim(isl.dim_type.set) != last + 1:
            return None
        shift = walked.dim_min(last).sub(target.dim_min(last))
        if shift.n_piece() != 1:
            return None
        member = child.vector.member.sub(
            isl.UnionPwAff.pw_aff_on_domain(child.statements, shift))
        if not member.domain().is_equal(child.vector.member.domain()) or \
                not self._walked(member, child).is_equal(target):
            return None
        return [replace(child, vector=replace(child.vector, member=member))]

    def _walked(self, member: isl.UnionPwAff, child: _Child) -> isl.UnionSet:
        return self.outer.intersect_domain(child.statements).flat_range_product(
            isl.UnionMap.from_union_pw_aff(member)).range()

    def _depends(self, first: list[_Child], second: list[_Child]) -> bool:
        return any((a.index, b.index) in self.depends for a in first for b in second)


def _members(loops: list[_Pass]) -> isl.UnionPwAff:
    members = loops[0].member
    for loop in loops[1:]:
        members = members.union_add(loop.member)
    return members


def _statements(group: list[_Child]) -> isl.UnionSet:
    result = group[0].statements
    for child in group[1:]:
        result = result.union(child.statements)
    return result


def _rebuilt(sequence: isl.ScheduleNode, groups: list[list[_Child]], passes: VectorPasses
             ) -> isl.ScheduleNode:
    """One sequence of ``groups`` in place of ``sequence``: each joined group a vector
    loop over the sequence of its statements; same position."""
    listed = isl.UnionSetList.alloc(sequence.get_ctx(), len(groups))
    for group in groups:
        listed = listed.add(_statements(group))
    # isl copies the old sequence under each new filter, pruned to the filter: a lone
    # child's copy is that child's subtree as it was.
    regrouped = sequence.insert_sequence(listed)
    for position, group in enumerate(groups):
        if len(group) == 1:
            continue
        loops = [child.vector for child in group]
        statements = [part for loop in loops for part in loop.statements]
        node = regrouped.child(position).child(0).cut()
        inner = isl.UnionSetList.alloc(sequence.get_ctx(), len(statements))
        for part in statements:
            inner = inner.add(part)
        node = node.insert_sequence(inner)
        reduction = next((loop for loop in loops if loop.mark == passes.reduction), None)
        band = node.insert_partial_schedule(
            isl.MultiUnionPwAff.from_union_pw_aff(_members(loops))).band_set_permutable(1)
        band = band.band_member_set_ast_loop_type(0, (reduction or loops[0]).loop_type)
        mark = passes.plain if reduction is None else passes.reduction
        regrouped = band.insert_mark(isl.Id(mark)).parent().parent()
    return regrouped
