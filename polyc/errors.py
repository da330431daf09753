"""polyc's exceptions and source spans.

Every error a user can cause derives from :class:`PolycError`. Errors about
source text carry a :class:`Span`; their ``str()`` is

    file:line:col: message
        O(i) +=! A(i, j) * B(j)
                 ^~~~~~~

Internal invariant failures are :class:`InternalError`, which is deliberately
*not* a ``PolycError``: it is a bug in polyc and asks to be reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, eq=False)
class Source:
    """A piece of user source text and where it came from.

    ``first_line`` is the line number of the text's first line in ``filename``
    (Python-form operators live inside a larger ``.py`` file).
    """

    text: str
    filename: str = "<string>"
    first_line: int = 1

    def line_text(self, line: int) -> str:
        """The text of absolute line ``line`` (as numbered in ``filename``)."""
        lines = self.text.splitlines()
        index = line - self.first_line
        return lines[index] if 0 <= index < len(lines) else ""


@dataclass(frozen=True)
class Span:
    """A half-open region of a :class:`Source`; lines and columns count from 1.

    Spans never take part in equality, so IR built from differently formatted
    but equivalent sources compares equal.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    source: Source | None = field(default=None, compare=False, repr=False)

    def to(self, other: Span) -> Span:
        """The span from the start of ``self`` to the end of ``other``."""
        return Span(self.line, self.col, other.end_line, other.end_col, self.source)

    def location(self) -> str:
        filename = self.source.filename if self.source else "<string>"
        return f"{filename}:{self.line}:{self.col}"

    def excerpt(self) -> str:
        """The source line with a ``^~~~`` marker under the span."""
        if self.source is None:
            return ""
        text = self.source.line_text(self.line).expandtabs(1)
        if not text.strip():
            return ""
        end = self.end_col if self.end_line == self.line else len(text) + 1
        width = max(1, end - self.col)
        marker = " " * (self.col - 1) + "^" + "~" * (width - 1)
        return f"    {text}\n    {marker}"


@dataclass(frozen=True)
class Location:
    """Where an error is, for errors made outside any source (e.g. call sites)."""

    description: str


class PolycError(Exception):
    """Base of every error a user of polyc can cause."""

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.col if self.span else None

    def __str__(self) -> str:
        if self.span is None:
            return self.message
        excerpt = self.span.excerpt()
        head = f"{self.span.location()}: {self.message}"
        return f"{head}\n{excerpt}" if excerpt else head


class ParseError(PolycError):
    """The source text is not a well-formed TC program."""


class SemanticError(PolycError):
    """The program parses but means nothing (or something polyc cannot prove safe)."""


class ArgumentError(PolycError, ValueError):
    """The arguments of a call do not fit the operator (arity, dtype, shape, sizes)."""


class CompileError(PolycError):
    """The system C compiler failed; the message holds its output and the C file's path."""


class CompileTimeout(CompileError):
    """The system C compiler ran past ``POLYC_CC_TIMEOUT`` and was stopped."""


class ConfigurationError(PolycError):
    """A setting polyc cannot use: an unknown machine model, a malformed machine file."""


class InternalError(AssertionError):
    """A broken invariant inside polyc: a bug. Please report it with the operator."""

    def __init__(self, message: str):
        super().__init__(f"internal error in polyc (please report): {message}")
