"""Full blocks of a non-rectangular domain: isl's ``isolate`` option on a block band.

A register block (:mod:`polyc.scheduling.tiling`) needs constant trip counts: six rows
and two vectors at every step of its reduction loop. Over a box that holds everywhere
but at the box's edges, which code generation handles. Over a triangle
(``k in i + 1:M``) the diagonal cuts blocks, and their trip counts then depend on the
reduction index; a block band whose loops mix cut and whole blocks gets no register
block at all. isl's ``isolate`` option splits the band's loops into the blocks the
domain's index-dependent bounds leave whole, generated apart with constant trip counts,
and the rest (the diagonal), generated as plain loops::

    full = P(D) \\ P(B \\ D)

where ``D`` is the statement's domain, ``B`` its bounding box (the same ranges with
only their size bounds) and ``P`` the schedule down to the band: a block is isolated
when no point of its box lies outside the domain. isl isolates convex sets only: where
``full`` has several pieces (a last row of blocks at an edge), the largest is isolated.
Over a box (``B == D``) nothing changes. The isolated blocks are a subset of the
schedule's own points, so this is a code generation option, not a new schedule:
legality is unchanged.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.program import PolyProgram, box_domain, isl_items, statements_named


def isolate_full_blocks(band: isl.ScheduleNode, program: PolyProgram, name: str
                        ) -> isl.ScheduleNode:
    """``band`` with the ``isolate`` option for the blocks of statement ``name`` that its
    index-dependent bounds leave whole (see the module docstring); same tree position.
    Unchanged over a box, or where the schedule is not one affine function."""
    stmt = program.statement(name)
    if stmt.statement.is_box or stmt.is_init:
        return band
    schedule = _schedule_down_to(band, name)
    if schedule is None:
        return band
    domain = isl_items(statements_named(program.domain, [name]).get_set_list())[0]
    box = box_domain(program, stmt).intersect_params(program.context)
    cut = schedule.intersect_domain(box.subtract(domain)).range()
    full = _convex_part(schedule.intersect_domain(domain).range().subtract(cut).coalesce())
    if full is None:
        return band
    outer = full.dim(isl.dim_type.set) - band.band_n_member()
    isolate = isl.Map.from_range(full).move_dims(
        isl.dim_type.in_, 0, isl.dim_type.out, 0, outer).wrap().set_tuple_name("isolate")
    options = band.band_get_ast_build_options().union(isl.UnionSet.from_set(isolate))
    return band.band_set_ast_build_options(options)


def _convex_part(full: isl.Set) -> isl.Set | None:
    """isl isolates a convex set only: ``full`` when it is one, else its piece of full
    dimension (fewest equalities: the others are single rows or columns at an edge)."""
    pieces = isl_items(full.get_basic_set_list())
    if not pieces:
        return None
    if len(pieces) == 1:
        return full
    return isl.Set.from_basic_set(min(pieces, key=lambda b: b.affine_hull().n_constraint()))


def _schedule_down_to(band: isl.ScheduleNode, name: str) -> isl.Map | None:
    """The schedule of statement ``name`` down to and including ``band`` (the outer
    bands' members, then the band's) as one total affine map, or ``None``."""
    prefix = band.get_prefix_schedule_union_pw_multi_aff()
    partial = isl.UnionPwMultiAff.from_multi_union_pw_aff(band.band_get_partial_schedule())
    combined = prefix.flat_range_product(partial)
    for piece in isl_items(combined.get_pw_multi_aff_list()):
        if piece.get_tuple_name(isl.dim_type.in_) != name:
            continue
        pieces = []
        piece.foreach_piece(lambda _, multi_aff: pieces.append(multi_aff))
        if len(pieces) != 1:
            return None
        return isl.Map.from_multi_aff(pieces[0])
    return None
