"""HTML for Jupyter and for saved pages: an :class:`polyc.explain.Explanation` and tables.

Every style is inline: notebook viewers that strip ``<style>`` elements
(GitHub, some editors) still show the same page. Each section is a
``<details>`` block that can be folded; code is highlighted with pygments,
pictures are inline SVG.
"""
from __future__ import annotations

import html

from polyc.explore.highlight import to_html

FONT = ("-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif")
MONO = "'DejaVu Sans Mono', Menlo, Consolas, monospace"

BOX = ("font-family: {font}; color: #1f2328; background: #ffffff; max-width: 1180px; "
       "padding: 12px 14px; border: 1px solid #d0d7de; border-radius: 8px; "
       "line-height: 1.4; text-align: left;").format(font=FONT)
HEADING = "font-size: 17px; font-weight: 600; margin: 0 0 6px 0;"
CHIP = ("display: inline-block; background: #eef3fb; border: 1px solid #c9d6ea; "
        "border-radius: 10px; padding: 1px 9px; margin: 0 5px 5px 0; font-size: 12px; "
        "color: #24292f;")
DETAILS = ("border: 1px solid #d8dee4; border-radius: 6px; margin: 8px 0 0 0; "
           "background: #ffffff;")
SUMMARY = ("cursor: pointer; padding: 5px 10px; font-weight: 600; font-size: 13.5px; "
           "background: #f6f8fa; border-radius: 6px; color: #1f2328;")
LABEL = "font-size: 11.5px; color: #57606a; padding: 6px 12px 2px 12px;"
PRE = ("margin: 0; padding: 6px 12px 8px 12px; font-family: {mono}; font-size: 12px; "
       "line-height: 1.4; overflow: auto; max-height: 36em; background: #ffffff; "
       "color: #1f2328; white-space: pre; border: none;").format(mono=MONO)
PICTURE = "padding: 8px 12px; overflow-x: auto;"
TABLE = ("border-collapse: collapse; font-size: 12.5px; margin: 4px 0; "
         "font-family: {font};").format(font=FONT)
CELL = "border-bottom: 1px solid #d8dee4; padding: 4px 10px; text-align: left;"
HEAD_CELL = CELL + " background: #f6f8fa; font-weight: 600;"


# Code keeps its lines (scroll sideways); isl relations and prose-like text wrap, isl
# with a hanging indent so that each relation stays recognisable.
WRAP = "white-space: pre-wrap; overflow-wrap: anywhere;"
HANGING = "padding-left: 3em; text-indent: -3em;"
_WRAPPED = ("isl", "text", "schedule", "tc")


def code_block(text: str, language: str = "text") -> str:
    text = text.rstrip()
    if language == "isl":
        lines = "".join(f'<div style="{HANGING}">{to_html(line, language) or "&#8203;"}</div>'
                        for line in text.splitlines())
        return f'<pre style="{PRE} {WRAP}">{lines}</pre>'
    wrap = WRAP if language in _WRAPPED else ""
    return f'<pre style="{PRE} {wrap}">{to_html(text, language)}</pre>'


def part_html(part) -> str:
    label = f'<div style="{LABEL}">{html.escape(part.label)}</div>' if part.label else ""
    body = (f'<div style="{PICTURE}">{part.svg}</div>' if part.svg
            else code_block(part.text, part.language))
    if part.collapsed:
        title = html.escape(part.label or "details")
        return (f'<details style="margin: 4px 12px 6px 12px;"><summary style="cursor: '
                f'pointer; font-size: 11.5px; color: #57606a;">{title}</summary>{body}'
                f'</details>')
    return label + body


def section_html(section, open_: bool = True) -> str:
    parts = "".join(part_html(part) for part in section.parts if part.show != "text")
    return (f'<details {"open " if open_ else ""}style="{DETAILS}" '
            f'data-polyc-section="{html.escape(section.key)}"><summary style="{SUMMARY}">'
            f'{html.escape(section.title)}</summary>{parts}</details>')


def explanation_html(explanation) -> str:
    chips = "".join(f'<span style="{CHIP}">{html.escape(chip)}</span>'
                    for chip in explanation.summary.split("; ") if chip)
    sections = "".join(section_html(s) for s in explanation.sections)
    return (f'<div class="polyc-explain" style="{BOX}">'
            f'<div style="{HEADING}">polyc &middot; explain <code style="font-family: '
            f'{MONO}; font-size: 16px;">{html.escape(explanation.name)}</code></div>'
            f'<div>{chips}</div>{sections}</div>')


def table_html(header: list[str], rows: list[list[str]], title: str = "",
               notes: list[str] = ()) -> str:
    """A table of escaped text cells."""
    head = "".join(f'<th style="{HEAD_CELL}">{html.escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="{CELL}">{html.escape(str(c))}</td>'
                                    for c in row) + "</tr>" for row in rows)
    caption = f'<div style="{HEADING}">{html.escape(title)}</div>' if title else ""
    footer = "".join(f'<div style="{LABEL} padding-left: 0;">{html.escape(n)}</div>'
                     for n in notes)
    return (f'<div class="polyc-table" style="{BOX}">{caption}<table style="{TABLE}">'
            f'<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{footer}</div>')


def page(body: str, title: str) -> str:
    """A standalone HTML document around ``body``."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title></head>"
            f"<body style=\"margin: 16px; background: #ffffff;\">\n{body}\n</body></html>\n")
