"""Where a Python-form operator is in its file: its ``def`` as a syntax tree, and spans.

:class:`LocatedFunction` reads a function's source with :mod:`inspect`,
parses it with :mod:`ast` and turns the positions of its nodes into
:class:`polyc.errors.Span` values that point into the ``.py`` file (absolute
lines; columns as in the file), for the reader in ``pyfront.py``.
"""
from __future__ import annotations

import ast as py
import inspect
import re

from polyc.errors import ParseError, Source, Span


class LocatedFunction:
    """``fn``'s ``def`` as a Python syntax tree, and the spans of its nodes.

    The source is not dedented: an indented ``def`` (a method, a function
    inside a function) is parsed as the body of an ``if 1:`` so that Python's
    columns are already the file's (textwrap.dedent would also fail on a
    docstring whose continuation lines are less indented than the ``def``).
    ``source.text`` holds the file's lines from the ``def`` on; decorators are
    left out.
    """

    def __init__(self, fn):
        name = getattr(fn, "__name__", repr(fn))
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError) as err:
            raise ParseError(f"cannot read the source of `{name}` ({err}): a Python-form "
                             f"operator must be a function defined in a file or notebook cell")
        filename = (inspect.getsourcefile(fn)
                    or getattr(getattr(fn, "__code__", None), "co_filename", "<unknown>"))
        text = "".join(lines)
        # Python numbers lines at \n, \r\n and \r only (unlike str.splitlines).
        self.lines = re.split(r"\r\n|\r|\n", text)
        wrapped = bool(lines) and lines[0][:1] in (" ", "\t")
        self.start = max(start, 1)  # the absolute line of lines[0]
        # The absolute line of line L of the parsed text is L + line_shift.
        self.line_shift = self.start - 1 - int(wrapped)
        try:
            module = py.parse("if 1:\n" + text if wrapped else text)
        except SyntaxError as err:
            line = (err.lineno or 1) + self.line_shift
            col = err.offset or 1
            source = Source(text, filename, self.start)
            raise ParseError(f"cannot parse the source of `{name}`: {err.msg}",
                             Span(line, col, line, col + 1, source))
        body = module.body[0].body if wrapped else module.body
        node = body[0] if body else None
        if not isinstance(node, (py.FunctionDef, py.AsyncFunctionDef)):
            raise ParseError(f"`{name}` is not written as a `def` statement (a lambda?): write "
                             f"the operator as `def {name}(...): ...`")
        def_line = node.lineno + self.line_shift
        self.source = Source("".join(lines[def_line - self.start:]), filename, def_line)
        self.node = node
        if isinstance(node, py.AsyncFunctionDef):
            raise ParseError("an operator must be a plain `def`, not `async def`", self.span(node))

    def _line(self, line: int) -> str:
        """The text of line ``line`` of the parsed text."""
        index = line + self.line_shift - self.start
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def position(self, line: int, byte_offset: int) -> tuple[int, int]:
        """(absolute line, 1-based column) of a position of the parsed text.

        Python's column offsets count UTF-8 bytes; spans count characters.
        """
        text = self._line(line)
        col = byte_offset if text.isascii() else len(
            text.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))
        return line + self.line_shift, col + 1

    def span(self, node) -> Span:
        line, col = self.position(node.lineno, node.col_offset)
        end_line, end_col = self.position(node.end_lineno, node.end_col_offset)
        return Span(line, col, end_line, end_col, self.source)

    def name_span(self, node: py.FunctionDef) -> Span:
        """The span of the function's name in ``def name(``."""
        line, col = self.position(node.lineno, node.col_offset)
        found = self._line(node.lineno).find(node.name, col - 1 + len("def"))
        if found < 0:
            return self.span(node)
        return Span(line, found + 1, line, found + 1 + len(node.name), self.source)

