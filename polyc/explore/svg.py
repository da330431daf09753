"""Hand-written SVG: just enough to draw polyc's pictures, no plotting library.

    drawing = Drawing(200, 100)
    drawing.add("circle", cx=10, cy=10, r=4, fill="#333")
    drawing.add("text", "S0", x=20, y=14, font_size=11)   # font_size -> font-size
    text = drawing.render()

:class:`Picture` is what polyc hands out: it renders inline in Jupyter
(``_repr_svg_``), prints as text in a terminal and saves to a file.
"""
from __future__ import annotations

import html
from pathlib import Path

FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
CHAR_WIDTH = 0.62  # of the font size, for a monospace font


def text_width(text: str, font_size: float) -> float:
    return len(text) * font_size * CHAR_WIDTH


def _number(value) -> str:
    if isinstance(value, float):
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return str(value)


def _attributes(attributes: dict) -> str:
    parts = []
    for key, value in attributes.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        parts.append(f'{name}="{html.escape(_number(value), quote=True)}"')
    return " ".join(parts)


class Drawing:
    """An SVG document built element by element."""

    def __init__(self, width: float, height: float, title: str = ""):
        self.width = width
        self.height = height
        self.title = title
        self.defs: list[str] = []
        self.items: list[str] = []

    def element(self, tag: str, text: str | None = None, tooltip: str | None = None,
                **attributes) -> str:
        attrs = _attributes(attributes)
        inner = (f"<title>{html.escape(tooltip)}</title>" if tooltip else "") + \
            (html.escape(text) if text is not None else "")
        if not inner:
            return f"<{tag} {attrs}/>"
        return f"<{tag} {attrs}>{inner}</{tag}>"

    def add(self, tag: str, text: str | None = None, tooltip: str | None = None,
            **attributes) -> None:
        self.items.append(self.element(tag, text, tooltip, **attributes))

    def group(self, items: list[str], tooltip: str | None = None, **attributes) -> None:
        title = f"<title>{html.escape(tooltip)}</title>" if tooltip else ""
        self.items.append(f"<g {_attributes(attributes)}>{title}{''.join(items)}</g>")

    def arrow_marker(self, marker_id: str, color: str, size: float = 6) -> str:
        """Define an arrowhead; use it as ``marker_end=f"url(#{marker_id})"``."""
        self.defs.append(
            f'<marker id="{marker_id}" viewBox="0 0 10 10" refX="9" refY="5" '
            f'markerWidth="{_number(size)}" markerHeight="{_number(size)}" '
            f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
            f'fill="{color}"/></marker>')
        return f"url(#{marker_id})"

    def render(self) -> str:
        width, height = _number(float(self.width)), _number(float(self.height))
        title = f"<title>{html.escape(self.title)}</title>" if self.title else ""
        defs = f"<defs>{''.join(self.defs)}</defs>" if self.defs else ""
        body = "\n".join(self.items)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                f'viewBox="0 0 {width} {height}" font-family="{FONT}" '
                f'style="max-width: 100%; height: auto; background: #ffffff">'
                f"{title}{defs}\n{body}\n</svg>")


class Picture:
    """A figure: ``.svg`` (text), inline in Jupyter, ``str()`` for terminals, ``.save()``."""

    @property
    def svg(self) -> str:
        raise NotImplementedError

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path) -> Path:
        """Write the picture: ``.svg`` as SVG, ``.html`` as a page around it, else text."""
        path = Path(path)
        if path.suffix.lower() == ".svg":
            path.write_text(self.svg + "\n", encoding="utf-8")
        elif path.suffix.lower() in (".html", ".htm"):
            path.write_text(f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'></head>"
                            f"<body>{self.svg}</body></html>\n", encoding="utf-8")
        else:
            path.write_text(str(self) + "\n", encoding="utf-8")
        return path
