"""The iteration space of one statement: its points, tiles and execution order.

``iteration_space(op)`` fixes the sizes to small numbers, enumerates the
points of a statement's domain in a 2-D plane with isl, orders them by the
final schedule (``schedule_map``, compared lexicographically) and groups them
into tiles: points whose coordinates in the outermost band agree share a tile
when that band iterates over tiles (``x - x mod T``). For softmax's row
maximum ``S0[n, d]`` with ``N = D = 12`` and 8 x 8 tiles, ``str()`` gives the
step at which each point runs, tile boundaries drawn::

    n \\ d   0    1  ...    7 |   8  ...   11
    n=0      0    1  ...    7 |  64  ...   67
    ...
    n=7     56   57  ...   63 |  92  ...   95
          ------------------------------------
    n=8     96   97  ...  103 | 128  ...  131

The picture (SVG) draws the points coloured by step, the tiles as boxes and
arrows from each point to the next. Tiles chosen for a real cache are often
larger than the whole picture; ``l2_bytes`` re-runs polyc's scheduler as if the
machine's L2 cache had that size, so that the tiles it picks fit the picture.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import islpy as isl

from polyc.explore.schedule_view import band_loops, statements_of
from polyc.explore.svg import Drawing, Picture
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.poly.program import PolyProgram, isl_items, isl_name
from polyc.rewrite.layout import layout_copies

DEFAULT_EXTENT = 12   # sizes in the picture
SMALL_EXTENT = 3      # sizes subtracted in some range (filter widths: H - R + 1)
MAX_POINTS = 1600
_GRADIENT = ("#440154", "#3b528b", "#21918c", "#5ec962", "#fde725")
_TILE_FILLS = ("#dbe9f6", "#fde6cf", "#e0f0d9", "#efe0f2", "#fff5c2", "#e3e3e3")


@dataclass(frozen=True, eq=False)
class IterationSpace(Picture):
    name: str                                  # the operator
    statement: str                             # e.g. "S0"
    indices: tuple[str, ...]                   # the statement's domain indices
    dims: tuple[str, str]                      # drawn: (rows, columns)
    fixed: tuple[tuple[str, int], ...]         # the other indices, fixed
    sizes: tuple[tuple[str, int], ...]
    points: tuple[tuple[int, int], ...]        # (row, column), in execution order
    tiles: tuple[int, ...]                     # the tile of each point (tiles numbered in order)
    tile_sizes: tuple[int | None, int | None] | None   # along (rows, columns), if tiled
    note: str = ""

    @property
    def steps(self) -> dict[tuple[int, int], int]:
        return {point: step for step, point in enumerate(self.points)}

    @property
    def caption(self) -> str:
        sizes = ", ".join(f"{n} = {v}" for n, v in self.sizes)
        fixed = ", ".join(f"{n} = {v}" for n, v in self.fixed)
        count = len(set(self.tiles))
        text = (f"{self.statement}[{', '.join(self.indices)}] for {sizes}"
                + (f" ({fixed})" if fixed else "") + f": {len(self.points)} points")
        if self.tile_sizes:
            shape = " x ".join(str(t) if t else "all" for t in self.tile_sizes)
            text += f" in {count} tile{'s' if count != 1 else ''} of {shape}"
        else:
            text += ", not tiled"
        return text

    def __repr__(self) -> str:
        return f"<polyc IterationSpace {self.caption}>"

    def __str__(self) -> str:
        return _text(self)

    @property
    def svg(self) -> str:
        return _draw(self)


def iteration_space(source, statement: str | None = None, sizes: dict | None = None,
                    dims: tuple[str, str] | None = None, fixed: dict | None = None,
                    l2_bytes: int | None = None) -> IterationSpace:
    """The iteration space of ``statement`` of an Operator or a Compilation.

    ``statement``: a statement name (default: the first of the operator's own
    statements with a 2-D domain, else with more dimensions; initialisations and
    polyc's layout copies only where there is no other); ``dims``: the two indices to draw (default:
    the last two left-hand indices); ``fixed``: values of the other indices
    (default: their lowest); ``sizes``: size variables (default
    :data:`DEFAULT_EXTENT`, or :data:`SMALL_EXTENT` for sizes subtracted in a
    range, such as filter widths); ``l2_bytes``: schedule as for an L2 cache of
    this size (see the module docstring) instead of using the compiled schedule.
    """
    compilation = source.compilation() if hasattr(source, "compilation") else source
    program = compilation.program
    stmt = _choose_statement(program, statement)
    indices = stmt.indices
    dims = tuple(dims) if dims else _default_dims(stmt)
    if len(dims) != 2 or any(d not in indices for d in dims) or dims[0] == dims[1]:
        raise ValueError(f"dims must be two different indices of {stmt.name}"
                         f"[{', '.join(indices)}], not {dims}")
    values = picture_sizes(program.op, sizes)
    tree = compilation.schedule.tree
    note = ""
    if l2_bytes is not None:
        tree = schedule_for_cache(compilation, l2_bytes)
        note = f"scheduled as for a {_bytes(l2_bytes)} L2 cache so that tiles fit the picture"

    domain = _statement_domain(program, stmt.name)
    domain = _fix_params(domain, values)
    fixed_values = dict(fixed or {})
    for position, index in enumerate(indices):
        if index in dims:
            continue
        if index not in fixed_values:
            fixed_values[index] = _lowest(domain, position)
        domain = domain.fix_val(isl.dim_type.set, position, fixed_values[index])
    count = domain.count_val().to_python() if not domain.is_empty() else 0
    if count > MAX_POINTS:
        raise ValueError(f"{count} points are too many to draw: pass smaller sizes=")
    rows, columns = indices.index(dims[0]), indices.index(dims[1])

    order = _images(tree.get_map(), domain)
    band = _outer_band(tree.get_root(), stmt.name, program)
    tile_sizes, keys = None, {}
    if band is not None:
        loops = band_loops(band, program)
        walked = {index: loop.tile for loop in loops for name, index in loop.walks
                  if name == stmt.name}
        if any(walked.get(index) for index in indices):
            tile_sizes = (walked.get(dims[0]), walked.get(dims[1]))
            keys = _images(band.child(0).get_prefix_schedule_union_map(), domain)
    ordered = sorted(order, key=lambda point: order[point])
    tile_of, tiles = {}, []
    for point in ordered:
        key = keys.get(point, ())
        tiles.append(tile_of.setdefault(key, len(tile_of)))
    points = tuple((point[rows], point[columns]) for point in ordered)
    return IterationSpace(
        name=program.op.name, statement=stmt.name, indices=indices, dims=dims,
        fixed=tuple((i, fixed_values[i]) for i in indices if i not in dims),
        sizes=tuple(values.items()), points=points, tiles=tuple(tiles),
        tile_sizes=tile_sizes, note=note)


def picture_sizes(op: ir.Op, given: dict | None = None) -> dict[str, int]:
    """Sizes for a picture: ``given`` ones (at most :data:`DEFAULT_EXTENT`), else defaults."""
    given = dict(given or {})
    subtracted = set()
    for stmt in op.statements:
        for index_range in stmt.domain:
            for bound in (index_range.hi,):
                if isinstance(bound, sz.Affine):
                    subtracted |= {atom for atom, c in bound.terms
                                   if c < 0 and isinstance(atom, str)}
    values = {}
    for name in op.sizes:
        default = SMALL_EXTENT if name in subtracted else DEFAULT_EXTENT
        values[name] = int(given[name]) if name in given else default
    for derived in op.derived_sizes:  # merged indices' extents
        values[derived.name] = derived.value(values)
    return values


def schedule_for_cache(compilation, l2_bytes: int) -> isl.Schedule:
    """The compilation's schedule as the compiler's scheduler builds it for the same
    machine with an L2 cache of ``l2_bytes`` (and an L1 no larger)."""
    from polyc.scheduling.schedule import compute_schedule

    options = compilation.options
    machine = replace(options.machine, l1=min(options.machine.l1, l2_bytes), l2=l2_bytes,
                      source=f"an L2 cache of {_bytes(l2_bytes)}")
    return compute_schedule(compilation.program, compilation.dependences, options.fusion,
                            options.parallel, options.optimize,
                            prologue=layout_copies(compilation.op), machine=machine).tree


def _bytes(count: int) -> str:
    return f"{count // 1024} KiB" if count % 1024 == 0 else f"{count} B"


def _choose_statement(program: PolyProgram, name: str | None):
    if name is not None:
        try:
            return program.statement(name)
        except StopIteration:
            names = ", ".join(s.name for s in program.statements)
            raise ValueError(f"no statement {name} in {program.op.name} (statements: "
                             f"{names})") from None
    copies = layout_copies(program.op)
    candidates = sorted((s for s in program.statements if len(s.indices) >= 2),
                        key=lambda s: (s.name in copies, s.is_init, len(s.indices) != 2))
    if not candidates:
        raise ValueError(f"{program.op.name} has no statement with two or more dimensions")
    return candidates[0]


def _default_dims(stmt) -> tuple[str, str]:
    lhs = stmt.statement.indices
    return tuple(lhs[-2:]) if len(lhs) >= 2 else tuple(stmt.indices[:2])


def _statement_domain(program: PolyProgram, name: str) -> isl.Set:
    return next(s for s in isl_items(program.domain.get_set_list())
                if s.get_tuple_name() == name)


def _fix_params(domain: isl.Set, values: dict[str, int]) -> isl.Set:
    by_isl_name = {isl_name(name): value for name, value in values.items()}
    for position in range(domain.dim(isl.dim_type.param)):
        name = domain.get_dim_name(isl.dim_type.param, position)
        domain = domain.fix_val(isl.dim_type.param, position, by_isl_name[name])
    return domain


def _lowest(domain: isl.Set, position: int) -> int:
    coordinate = isl.Aff.var_on_domain(isl.LocalSpace.from_space(domain.get_space()),
                                       isl.dim_type.set, position)
    value = domain.min_val(coordinate)
    return value.to_python() if value.is_int() else 0


def _images(relation: isl.UnionMap, domain: isl.Set) -> dict[tuple[int, ...], tuple[int, ...]]:
    """``{point: its image}`` for a relation that is a function on ``domain``'s points."""
    restricted = relation.intersect_domain(isl.UnionSet.from_set(domain))
    images: dict[tuple[int, ...], tuple[int, ...]] = {}
    n_in = domain.dim(isl.dim_type.set)
    for relation_map in isl_items(restricted.get_map_list()):
        total = n_in + relation_map.dim(isl.dim_type.out)

        def add(point, total=total):
            coordinates = tuple(point.get_coordinate_val(isl.dim_type.set, k).to_python()
                                for k in range(total))
            images[coordinates[:n_in]] = coordinates[n_in:]

        relation_map.wrap().foreach_point(add)
    return images


def _outer_band(node: isl.ScheduleNode, name: str, program: PolyProgram):
    """The outermost band node on ``name``'s path through the tree, or None."""
    while True:
        if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
            return node
        if node.n_children() == 0:
            return None
        for position in range(node.n_children()):
            child = node.child(position)
            if name in statements_of(_below_filter(child), program):
                node = child
                break
        else:
            return None


def _below_filter(node: isl.ScheduleNode) -> isl.ScheduleNode:
    return node.child(0) if node.get_type() == isl.schedule_node_type.filter else node


# ----------------------------------------------------------------- text


def _text(space: IterationSpace) -> str:
    steps = space.steps
    if not steps:
        return f"{space.caption}\n(no points)"
    tile_of = dict(zip(space.points, space.tiles))
    rows = sorted({r for r, _ in steps})
    columns = sorted({c for _, c in steps})

    def differ(a, b) -> bool:
        return a in tile_of and b in tile_of and tile_of[a] != tile_of[b]

    column_breaks = {k for k in range(1, len(columns))
                     if any(differ((r, columns[k - 1]), (r, columns[k])) for r in rows)}
    row_breaks = {k for k in range(1, len(rows))
                  if any(differ((rows[k - 1], c), (rows[k], c)) for c in columns)}
    width = max(len(str(len(steps) - 1)), max(len(str(c)) for c in columns)) + 1
    label = max(len(f"{space.dims[0]}={r}") for r in rows + [0])
    label = max(label, len(f"{space.dims[0]} \\ {space.dims[1]}")) + 1

    def line(first: str, cells: list[str]) -> str:
        text = first.ljust(label)
        for k, cell in enumerate(cells):
            text += (" |" if k in column_breaks else "  " if k else "") + cell.rjust(width)
        return text

    header = line(f"{space.dims[0]} \\ {space.dims[1]}", [str(c) for c in columns])
    lines = [space.caption] + ([f"({space.note})"] if space.note else []) + [
        "numbers: the step at which each point runs"
        + ("; | and - separate tiles" if space.tile_sizes else ""), header]
    for k, row in enumerate(rows):
        if k in row_breaks:
            lines.append(" " * label + "-" * (len(header) - label))
        cells = [str(steps[(row, c)]) if (row, c) in steps else "." for c in columns]
        lines.append(line(f"{space.dims[0]}={row}", cells))
    return "\n".join(lines)


# ----------------------------------------------------------------- drawing

_CELL = 34
_RADIUS = 11


def _colour(fraction: float) -> str:
    fraction = min(max(fraction, 0.0), 1.0) * (len(_GRADIENT) - 1)
    low = min(int(fraction), len(_GRADIENT) - 2)
    t = fraction - low
    a, b = _GRADIENT[low], _GRADIENT[low + 1]
    channels = [round(int(a[i:i + 2], 16) * (1 - t) + int(b[i:i + 2], 16) * t)
                for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in channels)


def _draw(space: IterationSpace) -> str:
    if not space.points:
        drawing = Drawing(360, 40)
        drawing.add("text", space.caption + ": no points", x=10, y=24, font_size=12)
        return drawing.render()
    rows = sorted({r for r, _ in space.points})
    columns = sorted({c for _, c in space.points})
    left, top = 64.0, 64.0
    grid_width = _CELL * len(columns)
    grid_height = _CELL * len(rows)
    caption_lines = [space.caption] + ([space.note] if space.note else []) + [
        "colour and number: execution step; arrows: the order; boxes: tiles"]
    width = max(left + grid_width + 24, 12 + 6.9 * max(len(line) for line in caption_lines))
    height = top + grid_height + 20 + 16 * len(caption_lines)

    def x_of(column: int) -> float:
        return left + _CELL * columns.index(column) + _CELL / 2

    def y_of(row: int) -> float:
        return top + _CELL * rows.index(row) + _CELL / 2

    drawing = Drawing(width, height, f"iteration space of {space.statement}")
    uid = hashlib.sha1(repr((space.statement, space.points)).encode()).hexdigest()[:8]
    near = drawing.arrow_marker(f"polyc-step-{uid}", "#333333", size=5)
    far = drawing.arrow_marker(f"polyc-jump-{uid}", "#9a9a9a", size=5)
    drawing.add("text", f"iteration space of {space.statement} in {space.name}", x=12, y=18,
                font_size=13, font_weight="bold", fill="#222")
    # Axes: columns along x, rows along y (like a matrix).
    drawing.add("text", f"{space.dims[1]} \u2192", x=left, y=top - 26, font_size=12,
                fill="#222")
    drawing.add("text", f"{space.dims[0]} \u2193", x=12, y=top + 12, font_size=12,
                fill="#222")
    for column in columns:
        drawing.add("text", str(column), x=x_of(column), y=top - 8, font_size=10,
                    text_anchor="middle", fill="#555")
    for row in rows:
        drawing.add("text", str(row), x=left - 10, y=y_of(row) + 3.5, font_size=10,
                    text_anchor="end", fill="#555")

    if space.tile_sizes:
        members: dict[int, list[tuple[int, int]]] = {}
        for point, tile in zip(space.points, space.tiles):
            members.setdefault(tile, []).append(point)
        pad = _CELL / 2 - 2
        for tile, points in members.items():
            xs = [x_of(c) for _, c in points]
            ys = [y_of(r) for r, _ in points]
            drawing.add("rect", x=min(xs) - pad, y=min(ys) - pad,
                        width=max(xs) - min(xs) + 2 * pad, height=max(ys) - min(ys) + 2 * pad,
                        rx=5, fill=_TILE_FILLS[tile % len(_TILE_FILLS)], stroke="#7f8c8d",
                        stroke_width=1.2, tooltip=f"tile {tile}: {len(points)} points")

    last = len(space.points) - 1
    for step in range(last):
        (r0, c0), (r1, c1) = space.points[step], space.points[step + 1]
        x0, y0, x1, y1 = x_of(c0), y_of(r0), x_of(c1), y_of(r1)
        length = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
        if length == 0:
            continue
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        adjacent = length <= _CELL * 1.01
        drawing.add("line", x1=x0 + ux * _RADIUS, y1=y0 + uy * _RADIUS,
                    x2=x1 - ux * (_RADIUS + 1), y2=y1 - uy * (_RADIUS + 1),
                    stroke="#333333" if adjacent else "#9a9a9a",
                    stroke_width=1.1 if adjacent else 0.8,
                    stroke_dasharray=None if adjacent else "3 3",
                    stroke_opacity=None if adjacent else 0.7,
                    marker_end=near if adjacent else far)

    numbers = len(space.points) <= 400
    for step, (row, column) in enumerate(space.points):
        fraction = step / last if last else 0.0
        items = [drawing.element("circle", cx=x_of(column), cy=y_of(row), r=_RADIUS,
                                 fill=_colour(fraction), stroke="#222", stroke_width=0.6)]
        if numbers:
            items.append(drawing.element(
                "text", str(step), x=x_of(column), y=y_of(row) + 3,
                font_size=8 if step < 100 else 7,
                text_anchor="middle", fill="#ffffff" if fraction < 0.6 else "#111111"))
        drawing.group(items, tooltip=f"{space.statement}: {space.dims[0]} = {row}, "
                                     f"{space.dims[1]} = {column}: step {step}, tile "
                                     f"{space.tiles[step]}")

    y = top + grid_height + 22
    for line in caption_lines:
        drawing.add("text", line, x=12, y=y, font_size=11, fill="#333")
        y += 16
    return drawing.render()
