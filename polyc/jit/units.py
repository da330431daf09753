"""A kernel's C split into translation units that the C compiler builds side by side.

Most of a tiled kernel's compile time is the compiler's back end on its parallel
regions, which :mod:`polyc.codegen.outlining` makes functions of their own: a
kernel with two large regions (two matrix products, attention) compiles them one
after the other in one process. :func:`compile_units` cuts the translation unit
between its regions, so that each core compiles a share::

    unit 0:  helpers, the prototypes, region 0 (hidden), ...
    unit 1:  helpers, the prototypes, region 1 (hidden), ...
    last:    helpers, the prototypes, the entry points

Every unit repeats the helpers (``static inline``: a unit that does not use one
compiles nothing for it). A region loses ``static`` and becomes a hidden symbol,
so that the unit with the entry points links to it and nothing outside the shared
object sees it. The outlined functions include the edge blocks that regions call;
a unit holds them in order of size, not of calls, so every unit declares every
function first (without, a call before the definition was an implicit declaration:
a warning in gcc 12, an error in clang 14 and gcc 14). Where splitting would not pay
(one region, regions too small, one core), the source stays one unit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from polyc.codegen.outlining import REGION_QUALIFIERS, STATUS_AFTER, STATUS_BEFORE
from polyc.machine.detect import usable_cores

# A region shorter than this compiles faster than a second compiler process starts.
MIN_REGION_LINES = 150
_HIDDEN = '__attribute__((noinline, visibility("hidden"))) void'


@dataclass(frozen=True)
class Unit:
    """One translation unit: its C, and its size in region lines (for balance)."""

    text: str
    lines: int


def compile_units(c_source: str, cores: int | None = None) -> list[Unit]:
    """``c_source`` as the translation units to compile at once on ``cores`` cores
    (default: the cores this process may use); one unit when splitting does not pay."""
    cores = cores or usable_cores()
    start = c_source.find(f"\n{STATUS_BEFORE}\n")
    end = c_source.find(f"\n{STATUS_AFTER}\n")
    if cores < 2 or start < 0 or end < 0:
        return [Unit(c_source, 0)]
    preamble, rest = c_source[:start + 1], c_source[end + len(STATUS_AFTER) + 2:]
    regions = _regions(c_source[start + len(STATUS_BEFORE) + 2:end + 1])
    large = [region for region in regions if region.count("\n") >= MIN_REGION_LINES]
    if len(large) < 2:
        return [Unit(c_source, 0)]
    groups: list[list[str]] = [[] for _ in range(min(cores, len(large)))]
    sizes = [0] * len(groups)
    for region in sorted(regions, key=lambda r: -r.count("\n")):  # largest first
        k = sizes.index(min(sizes))
        groups[k].append(region)
        sizes[k] += region.count("\n")
    prototypes = "".join(_signature(region) + ";\n" for region in regions)
    units = [Unit("".join([preamble, prototypes, STATUS_BEFORE, "\n",
                           *(_exported(region) for region in group), STATUS_AFTER, "\n"]),
                  size)
             for group, size in zip(groups, sizes)]
    units.append(Unit("".join([preamble, prototypes, rest]), 0))
    return units


def _regions(text: str) -> list[str]:
    """The outlined functions of ``text``, each from its qualifiers to its closing brace."""
    starts = [m.start() for m in re.finditer(rf"^{re.escape(REGION_QUALIFIERS)} ", text,
                                             re.MULTILINE)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def _signature(region: str) -> str:
    return _exported(region[:region.index("\n{")])


def _exported(region: str) -> str:
    return region.replace(REGION_QUALIFIERS, _HIDDEN, 1)
