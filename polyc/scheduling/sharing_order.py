"""The order of the loops OpenMP collapses: loops whose trip count grows with the
tensors outside, loops over a window or a constant range inside.

OpenMP's static schedule gives each thread one contiguous run of the collapsed
iterations. A convolution's weight gradient ``d_F(k, c, r, s)`` is computed with its
window members outermost (the layout the output is written in); tiled by 2 over
``R = 3``, ``r`` has two tiles, of two rows and of one. Collapsed as ``r, s, k, c``,
the first half of the iterations is the first ``r`` tile: one thread does two thirds
of the work, the other one third, and the nest takes as long as the larger share
(the benchmark's, 8 × 64 × 56², Zen 5: 11.0 ms on one thread, 6.9 on two). Collapsed
as ``k, c, r, s``, each thread's run holds whole ``k`` tiles with every ``r`` tile in
each, the same work (5.3-5.5 ms on two threads).

A member is short when its values do not spread further as the tensors grow: at the
cost model's nominal sizes (:func:`~polyc.scheduling.fusion_cost.nominal_sizes`) and at
those with every size but the windows :data:`GROWTH` larger (more than any tile), its
values spread as far. Short members move after the others, each group keeping its
order; nothing changes where none is short or all are. A band with AST build options
or loop types keeps its order. Permuting members of a permutable band is legal, and
members coincident before stay coincident; the final schedule is proven legal anyway.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.program import PolyProgram
from polyc.scheduling.fusion_cost import nominal_sizes, parameter_point, window_sizes

GROWTH = 1 << 16


def growth_points(program: PolyProgram) -> tuple[isl.Set, isl.Set]:
    """The parameters at the nominal sizes, and with every size but the windows
    :data:`GROWTH` larger: where :func:`sharing_order` compares spreads (computed once
    per program; each fusion candidate's bands ask)."""
    sizes = nominal_sizes(program)
    windows = window_sizes(program)
    grown = {name: value if name in windows else value + GROWTH for name, value in sizes.items()}
    return parameter_point(program, sizes), parameter_point(program, grown)


def sharing_order(band: isl.ScheduleNode, count: int, points: tuple[isl.Set, isl.Set]
                  ) -> list[int]:
    """The order (``order[new] = old``) of ``band``'s members with its first ``count``
    (coincident, to be collapsed) long members before its short ones, judged at the
    :func:`growth_points` ``points``."""
    order = list(range(band.band_n_member()))
    if count < 2 or not band.band_get_permutable() or _has_ast_choices(band):
        return order
    image = band.get_domain().apply(isl.UnionMap.from_multi_union_pw_aff(
        band.band_get_partial_schedule()))
    if image.n_set() != 1:
        return order
    image = isl.Set.from_union_set(image)
    images = [image.intersect_params(point) for point in points]
    if any(part.is_empty() for part in images):
        return order
    short = [_spread(images[0], k) == _spread(images[1], k) for k in range(count)]
    return [k for k in range(count) if not short[k]] + \
        [k for k in range(count) if short[k]] + order[count:]


def _has_ast_choices(band: isl.ScheduleNode) -> bool:
    """Whether the band carries AST build options or loop types (full blocks isolated,
    members separated): they name members by position, so its order stays."""
    return not band.band_get_ast_build_options().is_empty() or any(
        band.band_member_get_ast_loop_type(k) != isl.ast_loop_type.default
        for k in range(band.band_n_member()))


def _spread(image: isl.Set, member: int) -> int:
    """How far apart the values of ``member`` lie in ``image`` (one point: 0)."""
    return (image.dim_max_val(member) - image.dim_min_val(member)).to_python()
