"""Syntax highlighting of every language explain() shows, as HTML (pygments).

``to_html(text, language)`` gives the body of a ``<pre>`` block with inline
styles (no stylesheet needed: the HTML survives notebook renderers that strip
``<style>``). Languages: ``"tc"``, ``"isl"`` and ``"schedule"`` (lexers defined here),
``"c"``, ``"python"``, ``"yaml"`` (isl's schedule trees) and ``"text"``.
"""
from __future__ import annotations

import functools
import html

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import RegexLexer, bygroups, words
from pygments.lexers import get_lexer_by_name
from pygments.styles.default import DefaultStyle
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Text, Whitespace)

class TCLexer(RegexLexer):
    """Tensor Comprehensions: ``def f(float(M, K) A) -> (C) { C(m) +=! A(m, k) }``."""

    name = "Tensor Comprehensions"
    aliases = ["tc"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"#.*?$", Comment.Single),
            (r"(def)(\s+)([A-Za-z_]\w*)", bygroups(Keyword, Whitespace, Name.Function)),
            (words(("where", "in", "exists"), suffix=r"\b"), Keyword),
            (words(("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
                    "int64", "float16", "float32", "float64", "float", "double", "half",
                    "int", "long"), suffix=r"\b"), Keyword.Type),
            (r"[A-Za-z_]\w*(?=\s*\()", Name.Function),
            (r"\d+\.\d*([eE][-+]?\d+)?|\d+[eE][-+]?\d+", Number.Float),
            (r"\d+", Number.Integer),
            (r"[A-Za-z_]\w*(\.\d+)?", Name),
            (r"(\+=!?|\*=!?|max=!?|min=!?|<=>|->|==|!=|<=|>=|&&|\|\||[-+*/%<>=!?:])",
             Operator),
            (r"[(){},;.\[\]]", Punctuation),
            (r".", Text),
        ],
    }


class IslLexer(RegexLexer):
    """isl sets, maps and the expressions in schedule trees."""

    name = "isl"
    aliases = ["isl"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"', String),
            (words(("and", "or", "not", "exists", "mod", "floor", "ceil", "min", "max",
                    "implies", "true", "false"), suffix=r"\b"), Keyword.Pseudo),  # not bold
            (r"[A-Za-z_]\w*'*(?=\[)", Name.Function),   # tuple names: S0[...], A[...]
            (r"[A-Z]\w*'*", Name.Constant),               # sizes are isl parameters
            (r"[a-z_]\w*'*", Name),
            (r"\d+", Number.Integer),
            (r"(->|<=|>=|<|>|=|\+|-|\*|/|:)", Operator),
            (r"[\[\]{}(),;]", Punctuation),
            (r".", Text),
        ],
    }


class ScheduleOutlineLexer(RegexLexer):
    """polyc's outline of a schedule tree (:mod:`polyc.explore.schedule_view`)."""

    name = "polyc schedule outline"
    aliases = ["schedule"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"\[[\w-]+\]", Name.Exception),   # marks: bold, to stand out
            (words(("band", "sequence", "set"), suffix=r"\b"), Keyword),
            (r"(tiles|coincident|permutable|any order)\b", Comment),
            (r"S\d+(_init)?\b", Name.Function),
            (words(("mod", "floor"), suffix=r"\b"), Operator.Word),
            (r"\d+", Number.Integer),
            (r"[A-Za-z_]\w*", Name),
            (r".", Text),
        ],
    }


@functools.lru_cache(maxsize=None)
def _lexer(language: str):
    if language == "tc":
        return TCLexer(stripnl=False, ensurenl=False)
    if language == "isl":
        return IslLexer(stripnl=False, ensurenl=False)
    if language == "schedule":
        return ScheduleOutlineLexer(stripnl=False, ensurenl=False)
    return get_lexer_by_name(language, stripnl=False, ensurenl=False)


class _Style(DefaultStyle):
    """pygments' default colours, without the greys of whitespace and operators: inline
    styles repeat on every token, and those are half of them."""

    styles = {**DefaultStyle.styles, Whitespace: "", Operator: ""}


@functools.lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(style=_Style, noclasses=True, nowrap=True)


def to_html(text: str, language: str = "text") -> str:
    """``text`` as highlighted HTML (escaped; no enclosing ``<pre>``)."""
    if language == "text" or not text:
        return html.escape(text)
    return highlight(text, _lexer(language), _formatter())
