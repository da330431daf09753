"""Consecutive loop nests fused along their outer loop: one walk over the rows.

isl's scheduler fuses strongly connected components while the fused band stays as
parallel as the parts; a nest that accumulates across the rows (a column sum, a
scalar sum: a layer norm's gradients of ``gamma``, ``beta`` and ``eps``) is not
parallel, so isl leaves the row passes before it in a nest of their own, and each
nest reads the rows from memory again::

    for n (parallel, private d_eps):     d_rstd(n) = sum_d ...; d_eps += ...
    for n (parallel, private d_gamma):   d_X(n, d) = ...; d_gamma(d) += ...
  →
    for n (parallel, private d_eps, d_gamma):
      d_rstd(n) = sum_d ...; d_eps += ...
      d_X(n, d) = ...; d_gamma(d) += ...

Nests are fused, greedily from the first, where the later one touches a tensor the
earlier ones touch (the reuse that fusing captures: two unrelated transposes gain
nothing and would lose their tiles) and the fused outer loop keeps every
dependence (an iteration of a later nest reads nothing an iteration after it of an
earlier nest writes) and stays parallel, as it is or with private accumulators
(:mod:`polyc.scheduling.privatize`). The inner loops of each nest stay as they were,
in sequence under the fused loop. The fusion strategy weighs the result against
the others (:mod:`polyc.scheduling.fusion_choice`); the final schedule is proven legal
anyway.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.program import PolyProgram, statement_names
from polyc.scheduling.privatize import privatization
from polyc.scheduling.schedule_tree import (backward_dependences, outer_nests, starts_parallel,
                                            subtree_schedule)


def fuse_outer_loops(tree: isl.Schedule, deps: Dependences,
                     program: PolyProgram) -> isl.Schedule | None:
    """``tree`` with consecutive nests fused along their outer loop where that is legal
    and parallel (module docstring); ``None`` where no two nests fuse."""
    nests = outer_nests(tree)
    groups: list[list[isl.ScheduleNode]] = []
    fused: list[isl.Schedule] = []
    for nest in nests:
        if groups and _is_loop(nest) and _is_loop(groups[-1][-1]) and \
                _touched(nest, program) & set().union(
                    *(_touched(earlier, program) for earlier in groups[-1])):
            trial = _fused(groups[-1] + [nest], deps, program)
            if not backward_dependences(trial.get_map(), deps) and starts_parallel(
                    trial.get_root().child(0), deps, program):
                groups[-1].append(nest)
                fused[-1] = trial
                continue
        groups.append([nest])
        fused.append(subtree_schedule(nest))
    if len(groups) == len(nests):
        return None
    result = fused[0]
    for schedule in fused[1:]:
        result = result.sequence(schedule)
    return result


def _is_loop(nest: isl.ScheduleNode) -> bool:
    return nest.get_type() == isl.schedule_node_type.band and nest.band_n_member() > 0


def _touched(nest: isl.ScheduleNode, program: PolyProgram) -> set[str]:
    """The tensors the nest's statements read or write."""
    touched = set()
    for name in statement_names(nest.get_domain()):
        statement = program.statement(name).statement
        touched |= {statement.tensor, *statement.tensors_read}
    return touched


def _fused(nests: list[isl.ScheduleNode], deps: Dependences,
           program: PolyProgram) -> isl.Schedule:
    """One band of the nests' outer members (their union) over the sequence of what each
    nest has below its outer member."""
    outer, inner = None, None
    for nest in nests:
        band = nest.band_split(1) if nest.band_n_member() > 1 else nest
        member = band.band_get_partial_schedule()
        below = subtree_schedule(band.child(0))
        outer = member if outer is None else outer.union_add(member)
        inner = below if inner is None else inner.sequence(below)
    band = inner.insert_partial_schedule(outer).get_root().child(0)
    band = band.band_set_permutable(1)
    parallel = privatization(band, deps, program) == ()  # parallel as it is
    return band.band_member_set_coincident(0, int(parallel)).get_schedule()
