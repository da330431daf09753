"""The statement dependence graph: statements as nodes, dependences as edges.

``dependence_graph(op)`` (an :class:`polyc.Operator` or a
:class:`polyc.compiler.Compilation`) gives a :class:`DependenceGraph`; each
edge carries its kind (``flow``: read after write; ``false``: write after
read or write after write) and, between statements with as many dimensions,
the distance ``sink - source`` as an isl set with the sizes projected out and
as a compact vector. For matmul::

    S0_init -> S0   flow
    S0 -> S0        flow   (0, 0, 1)    { [m = 0, n = 0, k = 1] }
    S0 -> S0        false  (0, 0, >=1)  { [m = 0, n = 0, k] : k > 0 }

The picture draws the statements in program order from left to right, flow
dependences as arcs above them and false dependences as dashed arcs below.
Arcs leave a node on its right half and reach one on its left half, longer
arcs nearer the middle, so that no arc crosses the label of a shorter one.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import islpy as isl

from polyc.explore.svg import Drawing, Picture, text_width
from polyc.lang.printer import statement_to_tc
from polyc.poly.program import PolyStatement

FLOW_COLOR = "#1f5fbf"
FALSE_COLOR = "#c46a12"
_IDENTITY = {"+": "0", "*": "1", "max": "lowest", "min": "highest"}


@dataclass(frozen=True)
class Edge:
    kind: str                 # "flow" or "false"
    source: str
    sink: str
    relation: str             # the dependence relation in isl notation
    distance: str | None      # isl set of sink - source (sizes projected out), or None
    vector: str | None        # the distance per dimension: "(0, 0, 1)", "(0, >=1)"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.vector}" if self.vector else self.kind


@dataclass(frozen=True, eq=False)
class DependenceGraph(Picture):
    name: str
    statements: tuple[tuple[str, str], ...]   # (statement name, its TC text)
    edges: tuple[Edge, ...]

    def __str__(self) -> str:
        lines = [f"dependence graph of {self.name}: {len(self.statements)} statements, "
                 f"{len(self.edges)} edges"]
        pairs = [f"{e.source} -> {e.sink}" for e in self.edges]
        width = max((len(p) for p in pairs), default=0)
        vector_width = max((len(e.vector or "") for e in self.edges), default=0)
        for pair, edge in zip(pairs, self.edges):
            line = f"  {pair:{width}}  {edge.kind:5}  {edge.vector or '':{vector_width}}"
            lines.append((line + (f"  {edge.distance}" if edge.distance else "")).rstrip())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<polyc DependenceGraph of {self.name}: {len(self.edges)} edges>"

    @property
    def svg(self) -> str:
        return _draw(self)


def dependence_graph(source) -> DependenceGraph:
    """The graph of an :class:`polyc.Operator` or a :class:`polyc.compiler.Compilation`."""
    compilation = source.compilation() if hasattr(source, "compilation") else source
    program = compilation.program
    edges = []
    for (kind, src, sink), relation in sorted(
            compilation.dependences.by_statement_pair().items(),
            key=lambda item: (_position(program, item[0][1]), _position(program, item[0][2]),
                              item[0][0] != "flow")):
        distance = distance_set(relation)
        edges.append(Edge(kind, src, sink, str(relation),
                          str(distance) if distance is not None else None,
                          distance_vector(distance) if distance is not None else None))
    statements = tuple((s.name, poly_statement_text(s)) for s in program.statements)
    return DependenceGraph(program.op.name, statements, tuple(edges))


def _position(program, name: str) -> int:
    return next(k for k, s in enumerate(program.statements) if s.name == name)


def poly_statement_text(stmt: PolyStatement) -> str:
    """TC text of a polyhedral statement; an initialisation shows the identity it stores."""
    statement = stmt.statement
    if stmt.is_init:
        lhs = statement.tensor + (f"({', '.join(statement.indices)})"
                                  if statement.indices else "")
        return f"{lhs} = {_IDENTITY.get(statement.op, '?')}"
    return statement_to_tc(statement).split(" where ")[0]


def distance_set(relation: isl.Map) -> isl.Set | None:
    """``{ sink - source }`` with the sizes projected out, for same-dimension pairs."""
    if relation.dim(isl.dim_type.in_) != relation.dim(isl.dim_type.out):
        return None
    try:
        same_space = relation.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(
            isl.dim_type.out)
        deltas = same_space.deltas()
    except isl.Error:
        return None
    return deltas.project_out(isl.dim_type.param, 0,
                              deltas.dim(isl.dim_type.param)).coalesce()


def distance_vector(distance: isl.Set) -> str:
    """Per dimension: the value, ``>=lo``, ``<=hi``, ``lo..hi`` or ``*`` (any)."""
    count = distance.dim(isl.dim_type.set)
    parts = []
    for position in range(count):
        line = distance.project_out(isl.dim_type.set, position + 1, count - position - 1) \
                       .project_out(isl.dim_type.set, 0, position)
        if line.is_empty():
            parts.append("-")
            continue
        coordinate = isl.Aff.var_on_domain(isl.LocalSpace.from_space(line.get_space()),
                                           isl.dim_type.set, 0)
        low, high = line.min_val(coordinate), line.max_val(coordinate)
        low_text = "" if low.is_neginfty() else str(low.to_python())
        high_text = "" if high.is_infty() else str(high.to_python())
        if low_text and low_text == high_text:
            parts.append(low_text)
        elif not low_text and not high_text:
            parts.append("*")
        elif not high_text:
            parts.append(f">={low_text}")
        elif not low_text:
            parts.append(f"<={high_text}")
        else:
            parts.append(f"{low_text}..{high_text}")
    return "(" + ", ".join(parts) + ")"


# ----------------------------------------------------------------- drawing

_FONT = 11
_NODE_HEIGHT = 28
_SLOT = 9   # between the attachment points of arcs on one side of a node


def _arc_height(span: int) -> float:
    """How far an arc rises above its nodes (a self-loop's curve peaks at 3/4 of it)."""
    return 34.0 if span == 0 else 14.0 + 28.0 * span


def _peak(span: int) -> float:
    return 0.75 * _arc_height(span) if span == 0 else _arc_height(span)


def _draw(graph: DependenceGraph) -> str:
    names = [name for name, _ in graph.statements]
    position = {name: k for k, name in enumerate(names)}
    labels = [edge.label for edge in graph.edges]
    label_width = max((text_width(label, _FONT) for label in labels), default=0)

    # Where arcs attach: per node and side (above/below), the spans arriving on the left
    # half and leaving on the right half, shortest at the corner.
    arriving: dict[tuple[str, str], list[int]] = {}
    leaving: dict[tuple[str, str], list[int]] = {}
    for edge in graph.edges:
        span = position[edge.sink] - position[edge.source]
        if span:
            arriving.setdefault((edge.sink, edge.kind), []).append(span)
            leaving.setdefault((edge.source, edge.kind), []).append(span)
    for slots in list(arriving.values()) + list(leaving.values()):
        slots.sort()
    node_widths = {}
    for name in names:
        loops = [text_width(e.label, _FONT) for e in graph.edges
                 if e.source == name and e.sink == name]
        middle = max(loops, default=16) / 2 + 8   # kept free for the self-loop's label
        slots = max((len(group.get((name, kind), ())) for group in (arriving, leaving)
                     for kind in ("flow", "false")), default=0)
        half = middle + _SLOT * slots + 8
        node_widths[name] = max(80.0, text_width(name, 12) + 24, 2 * half)
    widest = max(node_widths.values(), default=80.0)
    gap = max(150.0, widest + label_width + 30)

    def attach(name: str, kind: str, span: int, end: bool) -> float:
        slots = (arriving if end else leaving)[(name, kind)]
        offset = node_widths[name] / 2 - 9 - _SLOT * slots.index(span)
        return centre[name] - offset if end else centre[name] + offset

    legend = [f"{name}: {text}" for name, text in graph.statements]
    key = ["flow: read after write (solid, above)",
           "false: write after read or write after write (dashed, below)"]

    def height_of(kind: str) -> float:
        spans = [abs(position[e.sink] - position[e.source])
                 for e in graph.edges if e.kind == kind]
        return max((_peak(s) for s in spans), default=0) + (22 if spans else 8)

    above, below = height_of("flow"), height_of("false")
    title_height = 26
    row_y = title_height + above + _NODE_HEIGHT / 2
    legend_y = row_y + _NODE_HEIGHT / 2 + below + 14
    margin = 20.0
    row_width = 2 * margin + gap * max(len(names) - 1, 0) + widest
    legend_width = 2 * margin + max((text_width(line, _FONT) for line in legend + key),
                                    default=0)
    width = max(row_width, legend_width, 320.0)
    height = legend_y + 15 * (len(legend) + len(key) + 1) + 6
    x0 = margin + widest / 2
    centre = {name: x0 + k * gap for k, name in enumerate(names)}

    drawing = Drawing(width, height, f"dependence graph of {graph.name}")
    uid = hashlib.sha1(graph.name.encode() + repr(graph.edges).encode()).hexdigest()[:8]
    markers = {"flow": drawing.arrow_marker(f"polyc-flow-{uid}", FLOW_COLOR),
               "false": drawing.arrow_marker(f"polyc-false-{uid}", FALSE_COLOR)}
    drawing.add("text", f"dependences of {graph.name}", x=margin, y=17, font_size=13,
                font_weight="bold", fill="#222")

    for edge in graph.edges:
        color = FLOW_COLOR if edge.kind == "flow" else FALSE_COLOR
        up = edge.kind == "flow"
        sign = -1 if up else 1
        y_edge = row_y + sign * _NODE_HEIGHT / 2
        x_src = centre[edge.source]
        span = abs(position[edge.sink] - position[edge.source])
        lift = sign * _arc_height(span)
        if span == 0:
            path = (f"M {x_src - 9:.1f} {y_edge:.1f} C {x_src - 26:.1f} {y_edge + lift:.1f}, "
                    f"{x_src + 26:.1f} {y_edge + lift:.1f}, {x_src + 9:.1f} {y_edge:.1f}")
            label_x = x_src
        else:
            start = attach(edge.source, edge.kind, span, end=False)
            end = attach(edge.sink, edge.kind, span, end=True)
            # Up, across, down, with rounded corners: an arc's vertical legs stay clear
            # of the labels of the shorter arcs nested inside it.
            top, r = y_edge + lift, 10.0
            path = (f"M {start:.1f} {y_edge:.1f} L {start:.1f} {top - sign * r:.1f} "
                    f"Q {start:.1f} {top:.1f} {start + r:.1f} {top:.1f} "
                    f"L {end - r:.1f} {top:.1f} Q {end:.1f} {top:.1f} {end:.1f} "
                    f"{top - sign * r:.1f} L {end:.1f} {y_edge:.1f}")
            label_x = (start + end) / 2
        label_y = y_edge + sign * _peak(span) + (-5 if up else 13)
        tooltip = f"{edge.kind} {edge.source} -> {edge.sink}: {edge.relation}"
        if edge.distance:
            tooltip += f"\ndistance: {edge.distance}"
        drawing.group([
            drawing.element("path", d=path, fill="none", stroke=color, stroke_width=1.6,
                            stroke_dasharray=None if up else "5 3",
                            marker_end=markers[edge.kind]),
            drawing.element("text", edge.label, x=label_x, y=label_y, font_size=_FONT,
                            text_anchor="middle", fill=color,
                            paint_order="stroke", stroke="#ffffff", stroke_width=3),
        ], tooltip=tooltip, class_="polyc-edge")

    for name, text in graph.statements:
        w = node_widths[name]
        drawing.group([
            drawing.element("rect", x=centre[name] - w / 2, y=row_y - _NODE_HEIGHT / 2,
                            width=w, height=_NODE_HEIGHT, rx=6, fill="#eef3fb",
                            stroke="#34495e", stroke_width=1.2),
            drawing.element("text", name, x=centre[name], y=row_y + 4.5, font_size=12,
                            text_anchor="middle", fill="#1b2631", font_weight="bold"),
        ], tooltip=f"{name}: {text}", class_="polyc-node")

    y = legend_y
    for line in legend:
        drawing.add("text", line, x=margin, y=y, font_size=_FONT, fill="#333")
        y += 15
    y += 4
    for line, color in zip(key, (FLOW_COLOR, FALSE_COLOR)):
        drawing.add("text", line, x=margin, y=y, font_size=_FONT, fill=color)
        y += 15
    return drawing.render()
