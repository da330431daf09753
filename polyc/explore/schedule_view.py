"""A schedule tree in words: its loop nests, bands, tiles and marks.

``summarize_schedule(schedule, program)`` reads the final schedule tree and
gives a :class:`ScheduleSummary`: the loop nests (the statements under one
outermost band share its loops: they were fused), every band with its members
(the loops), tile sizes and the ``parallel`` / ``simd`` / ``register`` marks
above it, and an indented outline. For matmul with its ``!`` initialisation::

    band (m - m mod 128, n - n mod 128, k - k mod 128)  [parallel] tiles 128 x 128 x 128; ...
      band (m mod 128 - m mod 8, n mod 128 - n mod 32, k mod 128)  ...
        band (m mod 8, 0)  [register] ...
          band (n mod 32)  [simd] ...
            sequence
              - S0_init
              - S0
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl

from polyc.poly.program import PolyProgram, isl_items
from polyc.scheduling.marks import SIMD_MARK, SIMD_REDUCTION_MARK, mark_name, node_mark
from polyc.scheduling.packing import Panel

_NODE = isl.schedule_node_type
# `x - x mod T` (a tile loop) once `(x) mod` is printed `x mod`.
_TILE = re.compile(r"^(?P<x>.+) - \(?(?P=x)\)? mod (?P<size>\d+)$")


@dataclass(frozen=True)
class Loop:
    """One band member: a loop, with the index each statement walks along it."""

    expression: str                        # e.g. "m - m mod 128" (one statement's)
    walks: tuple[tuple[str, str], ...]     # (statement, index) pairs, statements that move
    coincident: bool                       # no dependence is carried: may run in parallel
    tile: int | None                       # T for a tile loop ``x - x mod T``

    @property
    def name(self) -> str:
        """The indices walked, e.g. ``"m"`` or ``"d/e"`` when statements differ."""
        indices = list(dict.fromkeys(index for _, index in self.walks))
        return "/".join(indices) if indices else self.expression

    @property
    def statements(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name for name, _ in self.walks))


@dataclass(frozen=True)
class Band:
    """A band node: loops that the statements below it share, outermost first."""

    loops: tuple[Loop, ...]
    statements: tuple[str, ...]
    permutable: bool
    marks: tuple             # marks directly above the band: flag names ("parallel",
                             # "simd", ...) and decisions (polyc.scheduling.marks)
    depth: int               # how many bands enclose it

    @property
    def tiles(self) -> tuple[int, ...] | None:
        """The tile sizes when this band iterates over tiles, else None."""
        sizes = tuple(loop.tile for loop in self.loops)
        return sizes if any(size is not None for size in sizes) and \
            all(size is not None or not loop.walks for size, loop in
                zip(sizes, self.loops)) else None


@dataclass(frozen=True)
class LoopNest:
    """Statements under one outermost band: they share its loops (they were fused)."""

    statements: tuple[str, ...]
    bands: tuple[Band, ...]   # every band of the nest, outermost first (may be empty)

    @property
    def outer(self) -> Band | None:
        return self.bands[0] if self.bands else None

    @property
    def shared_loops(self) -> tuple[Loop, ...]:
        """The outer band's loops that every statement of the nest walks."""
        if self.outer is None:
            return ()
        everyone = set(self.statements)
        return tuple(loop for loop in self.outer.loops if set(loop.statements) >= everyone)

    def has_mark(self, mark: str) -> bool:
        """Whether a band of the nest is under a mark with this name."""
        return any(mark_name(m) == mark for band in self.bands for m in band.marks)


@dataclass(frozen=True)
class ScheduleSummary:
    nests: tuple[LoopNest, ...]
    bands: tuple[Band, ...]
    marks: tuple                # every mark of the tree, in tree order (as Band.marks)
    outline: str

    def count(self, mark: str) -> int:
        """The marks with this name."""
        return sum(1 for m in self.marks if mark_name(m) == mark)

    @property
    def simd_marks(self) -> int:
        """``simd`` marks and their kinds (``simd-reduction``)."""
        return sum(1 for m in self.marks if m in (SIMD_MARK, SIMD_REDUCTION_MARK))

    @property
    def tiled(self) -> bool:
        return any(band.tiles for band in self.bands)

    def brief(self) -> str:
        """One line: ``2 loop nests; parallel x2, simd; tiled``."""
        short = [_short_mark(m) for m in self.marks]
        marks = ", ".join(m if short.count(m) == 1 else f"{m} x{short.count(m)}"
                          for m in dict.fromkeys(short))
        nests = len(self.nests)
        parts = [f"{nests} loop nest{'s' if nests != 1 else ''}", marks or "no marks"]
        if self.tiled:
            parts.append("tiled")
        return "; ".join(parts)


def _short_mark(mark) -> str:
    """A mark as the one-line summary names it: a pack mark by its tensor alone."""
    return f"pack {mark.operand}" if isinstance(mark, Panel) else mark_name(mark)


def summarize_schedule(schedule, program: PolyProgram) -> ScheduleSummary:
    """``schedule``: a :class:`polyc.scheduling.schedule.Schedule` or an ``isl.Schedule``."""
    tree = schedule.tree if hasattr(schedule, "tree") else schedule
    walker = _Walker(program)
    walker.visit(tree.get_root(), depth=0, marks=(), nest=None, band_depth=0)
    nests = tuple(LoopNest(tuple(_program_order(program, names)), tuple(bands))
                  for names, bands in walker.nests)
    return ScheduleSummary(nests, tuple(walker.bands), tuple(walker.marks),
                           "\n".join(walker.lines))


def statements_of(node: isl.ScheduleNode, program: PolyProgram) -> tuple[str, ...]:
    """The statements whose instances reach ``node``, in program order."""
    names = {s.get_tuple_name() for s in isl_items(node.get_domain().get_set_list())}
    return _program_order(program, names)


def _program_order(program: PolyProgram, names) -> tuple[str, ...]:
    return tuple(s.name for s in program.statements if s.name in set(names))


def aff_text(pw_aff: isl.PwAff) -> str:
    """``m - m mod 128`` from ``[M] -> { S0[m, n] -> [(m - (m) mod 128)] }``."""
    pieces = pw_aff.get_pieces()
    texts = []
    for _, aff in pieces:
        match = re.search(r"->\s*\[\((.*)\)\]\s*\}\s*$", str(aff))
        texts.append(match.group(1) if match else str(aff))
    text = "; ".join(dict.fromkeys(texts))
    return re.sub(r"\(([A-Za-z_]\w*)\) mod", r"\1 mod", text)


def band_loops(node: isl.ScheduleNode, program: PolyProgram) -> tuple[Loop, ...]:
    partial = node.band_get_partial_schedule()
    loops = []
    for position in range(node.band_n_member()):
        walks, texts = [], []
        for pw_aff in isl_items(partial.get_at(position).get_pw_aff_list()):
            name = pw_aff.get_domain_space().get_tuple_name(isl.dim_type.set)
            indices = program.statement(name).indices
            moving = [indices[d] for d in range(len(indices))
                      if any(aff.involves_dims(isl.dim_type.in_, d, 1)
                             for _, aff in pw_aff.get_pieces())]
            walks += [(name, index) for index in moving]
            texts.append((len(moving), aff_text(pw_aff), name))
        order = {n: k for k, n in enumerate(_program_order(program, {w[0] for w in walks}))}
        walks.sort(key=lambda w: order.get(w[0], 0))
        # Show the expression of the statement that moves most (the reduction over the init).
        texts.sort(key=lambda t: -t[0])
        expression = texts[0][1] if texts else "0"
        tile = _TILE.match(expression)
        loops.append(Loop(expression, tuple(walks),
                          bool(node.band_member_get_coincident(position)),
                          int(tile.group("size")) if tile else None))
    return tuple(loops)


class _Walker:
    def __init__(self, program: PolyProgram):
        self.program = program
        self.lines: list[str] = []
        self.bands: list[Band] = []
        self.marks: list = []
        self.nests: list[tuple[set, list]] = []

    def visit(self, node, depth, marks, nest, band_depth) -> None:
        kind = node.get_type()
        pad = "  " * depth
        if kind == _NODE.mark:
            mark = node_mark(node)
            self.marks.append(mark)
            self.visit(node.child(0), depth, marks + (mark,), nest, band_depth)
            return
        if kind == _NODE.band and node.band_n_member() > 0:
            statements = statements_of(node, self.program)
            band = Band(band_loops(node, self.program), statements,
                        bool(node.band_get_permutable()), marks, band_depth)
            self.bands.append(band)
            if nest is None:
                nest = (set(statements), [])
                self.nests.append(nest)
            nest[1].append(band)
            self.lines.append(pad + _band_line(band))
            self.visit(node.child(0), depth + 1, (), nest, band_depth + 1)
            return
        if kind in (_NODE.sequence, _NODE.set):
            self.lines.append(pad + ("sequence" if kind == _NODE.sequence
                                     else "set (any order)"))
            for position in range(node.n_children()):
                child = node.child(position)
                if child.get_type() == _NODE.filter:
                    child = child.child(0)
                self.lines.append(f"{pad}  - {', '.join(statements_of(child, self.program))}")
                self.visit(child, depth + 2, marks, nest, band_depth)
            return
        if kind == _NODE.leaf:
            if nest is None:  # statements outside any loop: a nest of their own
                self.nests.append((set(statements_of(node, self.program)), []))
            return
        for position in range(node.n_children()):  # domain, filter, context, guard, ...
            self.visit(node.child(position), depth, marks, nest, band_depth)


def _band_line(band: Band) -> str:
    members = ", ".join(loop.expression for loop in band.loops)
    notes = []
    if band.marks:
        notes.append(" ".join(f"[{mark_name(mark)}]" for mark in band.marks))
    flags = []
    if band.tiles:
        flags.append("tiles " + " x ".join(str(t) if t else "1" for t in band.tiles))
    coincident = [loop.name for loop in band.loops if loop.coincident and loop.walks]
    if coincident:
        flags.append("coincident " + ", ".join(coincident))
    if band.permutable and len(band.loops) > 1:
        flags.append("permutable")
    if flags:
        notes.append("; ".join(flags))
    return f"band ({members})" + ("  " + " ".join(notes) if notes else "")
