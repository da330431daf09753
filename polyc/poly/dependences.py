"""Dependences from isl's dataflow analysis, with reductions left free to reorder.

``dep_flow`` (read after write) is value-based: each read depends on the last
write of its element only. ``dep_false`` is write-after-read plus
write-after-write.

A *pure reduction* (``C(m, n) +=! A(m, k) * B(k, n)``: a reduction operator,
and the right-hand side does not read the accumulated tensor) may accumulate
in any order. Its updates are chained by self-dependences through the
accumulator (``S0[m, n, k] -> S0[m, n, k + 1]``): those are ``dep_reduction``.
They are not *validity* constraints — reduction loops may be tiled,
interchanged and reordered — but they stay *coincidence* constraints, so a
loop that carries them never runs in parallel, and the schedule (injective on
each statement) keeps each element's updates sequential.

Without the update chain, nothing would order the *other* statements that
touch the accumulator against all the updates: the initialisation must come
before every update, a consumer after every update. ``dep_reduction_order``
adds those memory-based dependences: every pair (other statement, update) that
touches the same element, in the original order.

A tensor read or written through a view (:mod:`polyc.rewrite.merged_indices`: its
memory with merged indices, an index that is a product of sizes, which isl cannot
relate element by element to the storage's) adds ``dep_alias``: the statements that
touch that memory under two names, one of them writing, run whole one before the
other, in program order.

    validity    = dep_flow ∪ dep_false − dep_reduction ∪ dep_reduction_order ∪ dep_alias
    coincidence = validity ∪ dep_reduction
    proximity   = dep_flow ∪ dep_reuse   (dep_reuse: two statements reading one element)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.poly.program import PolyProgram, isl_items, isl_name, statements_named
from polyc.poly.relations import same_image


@dataclass(frozen=True)
class Dependences:
    dep_flow: isl.UnionMap             # { S[...] -> T[...] }: T reads what S wrote
    dep_false: isl.UnionMap            # write after read, write after write
    dep_reduction: isl.UnionMap        # updates of a pure reduction, one after the other
    dep_reduction_order: isl.UnionMap  # other statements vs every update of a reduction
    dep_reuse: isl.UnionMap            # two statements reading one element (proximity only)
    dep_alias: isl.UnionMap | None = None  # statements touching one memory under two names

    @functools.cached_property
    def validity(self) -> isl.UnionMap:
        """What every schedule must respect (built once: the scheduling passes ask for
        it dozens of times per operator)."""
        validity = (self.dep_flow.union(self.dep_false).subtract(self.dep_reduction)
                    .union(self.dep_reduction_order))
        if self.dep_alias is not None:
            validity = validity.union(self.dep_alias)
        return validity.coalesce()

    @functools.cached_property
    def coincidence(self) -> isl.UnionMap:
        """What a parallel loop must not carry."""
        return self.validity.union(self.dep_reduction)

    def by_statement_pair(self) -> dict[tuple[str, str, str], isl.Map]:
        """``{(kind, source, sink): relation}`` for printing and pictures."""
        result = {}
        for kind, relation in (("flow", self.dep_flow), ("false", self.dep_false)):
            for m in isl_items(relation.get_map_list()):
                key = (kind, m.get_tuple_name(isl.dim_type.in_),
                       m.get_tuple_name(isl.dim_type.out))
                result[key] = result[key].union(m) if key in result else m
        return result


def compute_dependences(program: PolyProgram) -> Dependences:
    schedule = program.original_schedule
    flow = (isl.UnionAccessInfo.from_sink(program.reads)
            .set_must_source(program.must_writes)
            .set_schedule_map(schedule)
            .compute_flow()
            .get_may_dependence())
    write_after_read = (isl.UnionAccessInfo.from_sink(program.may_writes)
                        .set_may_source(program.reads)
                        .set_schedule_map(schedule)
                        .compute_flow()
                        .get_may_dependence())
    write_after_write = (isl.UnionAccessInfo.from_sink(program.may_writes)
                         .set_must_source(program.must_writes)
                         .set_schedule_map(schedule)
                         .compute_flow()
                         .get_may_dependence())
    false = write_after_read.union(write_after_write).coalesce()
    everything = flow.union(false)
    reductions = [s for s in program.statements
                  if not s.is_init and ir.is_pure_reduction(s.statement)]
    chains = isl.UnionMap.empty(everything.get_space())
    orders = isl.UnionMap.empty(everything.get_space())
    if reductions:
        before = schedule.lex_lt_union_map(schedule)
        accesses = program.reads.union(program.may_writes)
        for stmt in reductions:
            own = statements_named(program.domain, (stmt.name,))
            chains = chains.union(everything.intersect_domain(own).intersect_range(own))
            updates = program.may_writes.intersect_domain(own)
            others = accesses.subtract_domain(own)
            same_element = updates.apply_range(others.reverse())  # { update -> other }
            orders = orders.union(same_element.intersect(before)).union(
                same_element.reverse().intersect(before))
    return Dependences(flow.coalesce(), false, chains.coalesce(), orders.coalesce(),
                       _input_reuse(program), _alias_order(program))


def _alias_order(program: PolyProgram) -> isl.UnionMap | None:
    """``{ S[...] -> T[...] }`` for every instance pair of two statements that touch one
    memory under two names (a view and its storage), one of them writing, S first in
    program order; ``None`` when no memory has two names."""
    memory = {isl_name(t.name): isl_name(t.storage or t.name)
              for t in program.op.tensors.values()}
    if len(set(memory.values())) == len(memory):
        return None
    touches = []  # (statement position, memory, name, writes)
    positions = {s.name: k for k, s in enumerate(program.statements)}
    for relation, writes in ((program.reads, False), (program.may_writes, True)):
        for part in isl_items(relation.get_map_list()):
            name = part.get_tuple_name(isl.dim_type.out)
            touches.append((positions[part.get_tuple_name(isl.dim_type.in_)],
                            memory[name], name, writes))
    result = isl.UnionMap.empty(program.reads.get_space())
    for first, memory_a, name_a, writes_a in touches:
        for second, memory_b, name_b, writes_b in touches:
            if (first < second and memory_a == memory_b and name_a != name_b
                    and (writes_a or writes_b)):
                before = statements_named(program.domain, (program.statements[first].name,))
                after = statements_named(program.domain, (program.statements[second].name,))
                result = result.union(isl.UnionMap.from_domain_and_range(before, after))
    return result.coalesce()


def _input_reuse(program: PolyProgram) -> isl.UnionMap:
    """Read-after-read between different statements: ``{ S[a] -> T[b] }`` when T reads an
    element S read before it. Not a constraint on order, only on distance: as proximity,
    it lets the scheduler fuse independent statements that share their inputs (the mean
    and the variance of a row read the row once)."""
    schedule = program.original_schedule
    shared = same_image(program.reads).intersect(
        schedule.lex_lt_union_map(schedule))
    result = isl.UnionMap.empty(shared.get_space())
    for part in isl_items(shared.get_map_list()):
        if part.get_tuple_name(isl.dim_type.in_) != part.get_tuple_name(isl.dim_type.out):
            result = result.union(isl.UnionMap.from_map(part))
    return result.coalesce()

