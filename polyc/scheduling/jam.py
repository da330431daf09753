"""Unroll-and-jam of an outer loop into the vector loops it holds.

A matrix-vector chain such as ``atax`` (``tmp(i) = Σ_j A(i, j) x(j)`` then
``y(j) += A(i, j) tmp(i)``) is an outer loop over rows around a sequence of
vector loops over ``j``. Each row reads all of ``x`` and reads and writes all
of ``y``; the row's dot product is one dependence chain. Taking the rows in
blocks of :data:`JAM_ROWS` (8) and moving the row loop *inside* each vector
loop lets one load of ``x(j)`` and one load and store of ``y(j)`` serve eight
rows, and gives the dot products eight independent chains:

    for i:                          for i0 in steps of 8:
      for j: tmp(i) += A x            for j: for r < 8: tmp(i0+r) += A(i0+r, j) x(j)
      for j: y(j) += A tmp(i)   →     for j: for r < 8: y(j) += A(i0+r, j) tmp(i0+r)

In the schedule tree this is the outer band tiled by 8 with its point band
sunk below every leaf, each marked ``jam``; the emitter unrolls a full block's
``jam`` loop into the vector loop around it (one accumulator per row for a
reduction). The result must pass the legality check it is given, else the
band stays as it was; the whole schedule is proven again afterwards.

It applies to a one-member band left untiled whose subtree holds only
sequences, filters, vector marks and bands right above leaves (loops with
nothing inside them), with some vector loop below, some access invariant
along the band (the reuse that jamming turns into fewer loads), and a chain to
break: a vector reduction below (one dependence chain per row), or a reduction
accumulating along the band (``y(j)``, loaded and stored once per block).
An elementwise vector loop beside the reductions keeps its rows as a plain
loop around it (jamming it saves nothing). Rows that store an output written
once (elementwise rows, layer norm's ``Y``) are left alone: a jammed vector
loop holds several statements, so its stores cannot stream
(:mod:`polyc.codegen.streaming`), and streaming is worth more than jamming them
(measurements: benchmarks/README.md, "Design measurements").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import islpy as isl


JAM_MARK = "jam"
# Rows per jammed block: one load of each shared vector serves them all, and each row's
# dot product is a dependence chain of its own (measurements, against 2 and 4 rows:
# benchmarks/README.md, "Design measurements").
JAM_ROWS = 8


@dataclass(frozen=True)
class JamRules:
    """What :func:`jam_outer_rows` asks of the schedule: ``carries_reuse(band)``, some
    access is invariant along the band's member; ``accumulates_along(band)``, a
    reduction accumulates along it; ``writes_once(band)``, a statement below stores an
    output written once; ``legal(schedule)``, the schedule respects the
    dependences; the marks above vector loops, and those above vector reductions;
    ``reduces(statements)``, one of them is a reduction's update (only those are jammed
    into their vector loops)."""

    carries_reuse: Callable[[isl.ScheduleNode], bool]
    accumulates_along: Callable[[isl.ScheduleNode], bool]
    writes_once: Callable[[isl.ScheduleNode], bool]
    legal: Callable[[isl.Schedule], bool]
    vector_marks: frozenset[str]
    reduction_marks: frozenset[str]
    reduces: Callable[[isl.UnionSet], bool]  # some of the statements is a reduction's update


def jam_outer_rows(tree: isl.Schedule, rules: JamRules) -> isl.Schedule:
    """The schedule with every eligible outermost band jammed (see the module doc)."""
    return _visit(tree.get_root(), rules).get_schedule()


def _visit(node: isl.ScheduleNode, rules: JamRules) -> isl.ScheduleNode:
    if node.get_type() == isl.schedule_node_type.band:
        below = node.child(0)
        if (node.band_n_member() == 1
                and _only_innermost_loops(below, rules.vector_marks)
                and _has_mark(below, rules.vector_marks) and rules.carries_reuse(node)
                and not rules.writes_once(node)
                and (_has_mark(below, rules.reduction_marks)
                     or rules.accumulates_along(node))):
            jammed = _jam(node, rules)
            if rules.legal(jammed.get_schedule()):
                return jammed
        return node  # the outermost band: nothing below is jammed on its own
    for position in range(node.n_children()):
        node = _visit(node.child(position), rules).parent()
    return node


def _only_innermost_loops(node: isl.ScheduleNode, vector_marks: frozenset[str]) -> bool:
    kind = node.get_type()
    if kind == isl.schedule_node_type.leaf:
        return True
    if kind == isl.schedule_node_type.band:
        return node.child(0).get_type() == isl.schedule_node_type.leaf
    if kind == isl.schedule_node_type.mark and node.mark_get_id().get_name() not in vector_marks:
        return False
    if kind not in (isl.schedule_node_type.sequence, isl.schedule_node_type.set,
                    isl.schedule_node_type.filter, isl.schedule_node_type.mark):
        return False
    return all(_only_innermost_loops(node.child(k), vector_marks)
               for k in range(node.n_children()))


def _has_mark(node: isl.ScheduleNode, names: frozenset[str]) -> bool:
    if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() in names:
        return True
    return any(_has_mark(node.child(k), names) for k in range(node.n_children()))


def _jam(band: isl.ScheduleNode, rules: JamRules) -> isl.ScheduleNode:
    """The band tiled by :data:`JAM_ROWS`, its point loop sunk below every leaf and
    marked; returns the tile band."""
    sizes = isl.MultiVal.zero(band.band_get_space()).set_val(0, isl.Val(JAM_ROWS))
    tile = band.band_tile(sizes)
    point = tile.child(0)
    rows = point.band_get_partial_schedule()
    return _sink(point.delete(), rows, rules).parent()


def _sink(node: isl.ScheduleNode, rows: isl.MultiUnionPwAff, rules: JamRules
          ) -> isl.ScheduleNode:
    """``rows`` inserted as a marked band above every leaf under ``node``, except that
    a vector loop of statements that reduce nothing (an elementwise pass beside the
    reductions) gets them as a plain loop around it: jammed, it saves no load and runs
    eight rows' streams at once, slower than its rows one by one (measurements:
    benchmarks/README.md, "Design measurements"). Returns the node at ``node``'s
    position."""
    if node.get_type() == isl.schedule_node_type.mark and \
            node.mark_get_id().get_name() in rules.vector_marks and \
            not rules.reduces(node.get_domain()):
        return node.insert_partial_schedule(rows.intersect_domain(node.get_domain()))
    if node.get_type() == isl.schedule_node_type.leaf:
        band = node.insert_partial_schedule(rows.intersect_domain(node.get_domain()))
        return band.insert_mark(isl.Id(JAM_MARK))
    for position in range(node.n_children()):
        node = _sink(node.child(position), rows, rules).parent()
    return node
