"""Tile sizes that fit a cache budget: the footprint of a tile and the greedy search.

The budget comes from the machine model (:func:`polyc.machine.rules.tile_budget`:
half of L2, leaving room for the streams passing through).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Footprint:
    """The block of one array that a tile touches, per array dimension: the band members
    whose tiles it spans, with their coefficients. ``I(n, c, h + r)`` under a band
    ``(n, h, r, c)`` is ``(((0, 1),), ((3, 1),), ((1, 1), (2, 1)))``: a sliding window's
    dimension spans ``t_h + t_r - 1`` elements, not their product."""

    dims: tuple[tuple[tuple[int, int], ...], ...]

    def elements(self, tiles: list[int]) -> int:
        total = 1
        for dim in self.dims:
            total *= 1 + sum(abs(c) * (tiles[m] - 1) for m, c in dim)
        return total


def tile_sizes(footprints: list[Footprint], start: list[int], largest: list[int],
               element_bytes: int, budget: int,
               spans: dict[int, int] | None = None,
               streams: dict[int, int] | None = None) -> list[int]:
    """Tile sizes for a band by greedy doubling, from ``start``.

    The cost of a tile is the data it brings into the cache per iteration it runs,
    ``sum(footprints) / prod(tiles)``. Each step doubles the member that lowers that
    cost the most per byte the working set grows, while the working set stays within
    ``budget`` bytes and no member passes its ``largest`` (one whose ``largest`` is its
    ``start`` stays as it is). A member with a ``spans`` entry counts at most that many
    steps per tile (the window offset of a small filter). A member with a ``streams``
    entry walks its tile that many steps at a time, outermost, and never returns: the
    working set counts one such stride of it (a register block's rows, whose blocks of
    the operands pass through the cache one after another), the traffic the whole tile.

    Where doublings gain alike (members that every footprint treats the same), the
    smaller tile grows, the inner member first: the tile stays balanced and its runs of
    contiguous memory long. Taking the outer member first had given a Kronecker
    product's three image members ``16 × 16 × 4`` with a 2 MiB L2: sixteen rows a
    power of two apart share cache sets, and it ran 3.2x slower on a Sapphire Rapids
    Xeon than ``8 × 8 × 16`` (benchmarks/README.md).

    Matmul's three arrays come out as a cube. A convolution keeps few images of its
    batch per tile (along the batch only the small filter is reused) and spends the
    cache on output rows and channels, which reuse the input block.
    """
    tiles = list(start)
    spans = spans or {}
    streams = streams or {}

    def steps(trial: list[int]) -> list[int]:
        return [min(t, spans.get(m, t)) for m, t in enumerate(trial)]

    def working_set(trial: list[int]) -> int:
        resident = [min(t, streams.get(m, t)) for m, t in enumerate(steps(trial))]
        return sum(f.elements(resident) for f in footprints) * element_bytes

    def traffic(trial: list[int]) -> float:
        points = 1
        for t in steps(trial):
            points *= t
        return working_set(trial) / points

    while True:
        best, best_gain, best_member = None, 0.0, -1
        size, cost = working_set(tiles), traffic(tiles)
        for member in range(len(tiles)):
            if tiles[member] * 2 > largest[member]:
                continue
            trial = list(tiles)
            trial[member] *= 2
            grown = working_set(trial)
            if grown > budget:
                continue
            saved = cost - traffic(trial)
            gain = saved / (grown - size) if grown > size else float("inf")
            if saved <= 0:
                continue
            # Equal gains (a symmetric footprint): the smaller tile grows, the inner one
            # first, so that the tile stays balanced and its contiguous runs long.
            tied = best is not None and math.isclose(gain, best_gain, rel_tol=1e-9)
            if (gain > best_gain and not tied) or (
                    tied and (tiles[member], -member) <= (tiles[best_member], -best_member)):
                best, best_gain, best_member = trial, gain, member
        if best is None:
            return tiles
        tiles = best


def square_tile(footprints: list[Footprint], tiled: list[bool], element_bytes: int,
                budget: int, spans: dict[int, int] | None = None, smallest: int = 8,
                largest: int = 256) -> int:
    """The largest power-of-two ``T`` whose tile, ``T`` along every ``tiled`` member and
    1 along the others, fits in ``budget`` bytes (at least ``smallest``)."""
    spans = spans or {}
    tile = largest
    while tile > smallest and element_bytes * sum(
            f.elements([min(tile, spans.get(m, tile)) if t else 1
                        for m, t in enumerate(tiled)])
            for f in footprints) > budget:
        tile //= 2
    return tile
