"""The machine's caches, read from the system, and tile sizes that fit them.

Tile sizes are chosen when the kernel is compiled, on the machine that runs it
(kernels are built with ``-march=native`` anyway): every tile's working set
should fit in half of the L2 cache, leaving room for the streams passing
through.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True)
class Caches:
    """Data cache sizes in bytes (per core for L1 and L2) and the line size."""

    l1: int
    l2: int
    l3: int
    line: int
    source: str  # where the figures came from

    def __str__(self) -> str:
        return (f"L1d {self.l1 // 1024} KiB, L2 {self.l2 // 1024} KiB, "
                f"L3 {self.l3 // 1024} KiB, line {self.line} B ({self.source})")


# Used when the system does not say (e.g. not Linux): a common x86 server core.
DEFAULT_CACHES = Caches(l1=32 * 1024, l2=1024 * 1024, l3=32 * 1024 * 1024, line=64,
                        source="defaults")


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


@functools.lru_cache(maxsize=1)
def machine_caches() -> Caches:
    """The data caches of CPU 0 from sysfs, or :data:`DEFAULT_CACHES`."""
    sizes: dict[int, int] = {}
    line = DEFAULT_CACHES.line
    try:
        for index in sorted(_SYSFS_CACHE.glob("index*")):
            kind = (index / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            level = int((index / "level").read_text())
            sizes[level] = _parse_size((index / "size").read_text())
            line_file = index / "coherency_line_size"
            if line_file.exists():
                line = int(line_file.read_text())
    except (OSError, ValueError):
        return DEFAULT_CACHES
    if not {1, 2} <= sizes.keys():
        return DEFAULT_CACHES
    return Caches(l1=sizes[1], l2=sizes[2], l3=sizes.get(3, sizes[2]), line=line,
                  source="sysfs")


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
        best, best_gain = None, 0.0
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
            if saved > 0 and gain > best_gain:
                best, best_gain = trial, gain
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


@functools.lru_cache(maxsize=1)
def vector_bytes() -> int:
    """The widest SIMD register the compiler may use with ``-march=native``, in bytes."""
    try:
        flags = next((line.split(":", 1)[1].split() for line in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), [])
    except OSError:
        flags = []
    if "avx512f" in flags:
        return 64
    if "avx2" in flags or "avx" in flags:
        return 32
    return 16


def register_block(element_bytes: int) -> tuple[int, int]:
    """Rows × columns of an output block kept in registers across a reduction.

    Two vectors per row, and as many rows as leave room for the two vectors of the
    streamed operand and a broadcast: 6 rows (12 accumulators) with the 16 vector
    registers of SSE and AVX2, as BLIS's Haswell kernels; 8 rows (16 accumulators) with
    AVX-512's 32. Eight rows make tiles of 128 rows that divide the power-of-two
    extents most operators have, where tiles of 126 leave a thin last tile (M = 128 was
    126 + 2, M = 512 4 × 126 + 8 rows, one thread of two getting 61% of the tiles'
    work). Measured on 2 threads against 6 rows (medians, one process): conv2d 22.7 →
    14.7 ms, mlp 9.2 → 8.1, tbmm 3.1 → 2.6, gemm 15.0 → 14.3, 2mm 27.6 → 26.7; 12 rows
    (24 accumulators, tiles of 120) ran slower than either.
    """
    width = vector_bytes()
    lanes = max(1, width // element_bytes)
    return (8 if width >= 64 else 6), 2 * lanes


def panel_depth(caches: Caches, columns: int, element_bytes: int) -> int:
    """The reduction steps a register block should run per visit: BLIS's ``kc``, the
    largest power of two whose panel of the streamed operand (``columns`` lanes per
    step) fills half the L1 cache, at least 8 and at most 256 (128 for float32 with
    AVX-512 and a 32 KiB L1).

    A tile's innermost reduction member gets at least this extent, however small the
    square tile of its band: a convolution's 7-member band tiles by 8, which ran its
    channel loop 8 steps per visit of each block (conv2d 13.9 ms; 12.4 with the
    channel tile at 64).
    """
    depth = 256
    while depth > 8 and depth * columns * element_bytes > caches.l1 // 2:
        depth //= 2
    return depth
