"""Dependences from isl's dataflow analysis.

``dep_flow`` (read after write) is value-based: each read depends on the last
write of its element only. ``dep_false`` is write-after-read plus
write-after-write. ``dep_reduction`` is the part of these that links the
updates of one reduction statement to each other through its accumulator
(``S0[m, n, k] -> S0[m, n, k + 1]``): the order of a reduction's updates is
free up to associativity, which the scheduler may exploit — tiling and
interchanging the reduction loop — as long as each output element's updates
stay sequential.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.poly.program import PolyProgram, isl_items


@dataclass(frozen=True)
class Dependences:
    dep_flow: isl.UnionMap       # { S[...] -> T[...] }: T reads what S wrote
    dep_false: isl.UnionMap      # write after read, write after write
    dep_reduction: isl.UnionMap  # self-dependences of reductions through their accumulator

    @property
    def all(self) -> isl.UnionMap:
        return self.dep_flow.union(self.dep_false)

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
    reduction = _reduction_self_dependences(program, flow.union(false))
    return Dependences(flow.coalesce(), false, reduction)


def _reduction_self_dependences(program: PolyProgram, deps: isl.UnionMap) -> isl.UnionMap:
    names = [s.name for s in program.statements
             if not s.is_init and s.statement.is_reduction]
    result = isl.UnionMap.empty(deps.get_space())
    for name in names:
        space_filter = isl.UnionSet(f"{{ {name}[{', '.join(f'x{k}' for k in range(_arity(program, name)))}] }}")
        own = deps.intersect_domain(space_filter).intersect_range(space_filter)
        result = result.union(own)
    return result.coalesce()


def _arity(program: PolyProgram, name: str) -> int:
    return len(program.statement(name).indices)
