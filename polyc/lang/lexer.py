"""Splits TC source text into tokens.

``tokenize(source)`` gives a list of :class:`Token` that always ends with one
``END`` token. Whitespace and ``#`` comments (to the end of the line) are
skipped; anything the language has no use for is a :class:`ParseError`::

    C(m, n) +=! A(m, k) * B(k, n)   # matmul
    -> C ( m , n ) +=! A ( m , k ) * B ( k , n ) END

Two tokens need care:

* ``max=`` and ``min=`` (and their ``!`` forms) are reduction operators only
  when ``=`` follows the word at once and is not itself part of ``==``;
  otherwise ``max`` and ``min`` are ordinary identifiers (``max(a, b)``).
* ``T.1`` lexes as the identifier ``T`` and the number ``.1``; the parser
  reads that pair as a dimension query.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from polyc.errors import ParseError, Source, Span

IDENT = "identifier"
KEYWORD = "keyword"
NUMBER = "number"
OPERATOR = "operator"
END = "end of input"

KEYWORDS = frozenset({"def", "in", "where", "exists"})

# Longest first, so that ``+=!`` wins over ``+=`` and ``+``.
OPERATORS = ("<=>", "+=!", "*=!",
             "==", "!=", "<=", ">=", "&&", "||", "+=", "*=", "->",
             "+", "-", "*", "/", "%", "<", ">", "!", "?", ":", "(", ")", ",", ".", "=",
             "{", "}", ";")

REDUCTION_WORDS = ("max", "min")

# The characters str.splitlines() breaks at: Source.line_text() numbers lines
# with it, so token positions must agree with it.
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_SKIP = f"(?:[ \\t{_LINE_BREAKS}]+|#[^{_LINE_BREAKS}]*)+"
_HEX = r"0[xX][0-9a-fA-F]+"
# C decimal literals; the f/F suffix only on a literal that is already floating.
_DECIMAL = (r"(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
            r"|[0-9]+[eE][+-]?[0-9]+)[fF]?|[0-9]+")
_IDENT = r"[_a-zA-Z][_a-zA-Z0-9]*"
_OPERATOR = "|".join(re.escape(op) for op in OPERATORS)
# One pattern for every token; a number is tried before '.' so that `.5` is a number.
_TOKEN = re.compile(f"(?P<skip>{_SKIP})|(?P<number>{_HEX}|{_DECIMAL})|(?P<word>{_IDENT})"
                    f"|(?P<operator>{_OPERATOR})")
_WORD_TAIL = re.compile(r"[_a-zA-Z0-9]*")


@dataclass(frozen=True)
class Token:
    """One token: its ``kind`` (``IDENT``, ``KEYWORD``, ``NUMBER``, ``OPERATOR`` or
    ``END``), its ``text`` as written (``""`` for ``END``) and where it is."""

    kind: str
    text: str
    span: Span

    def is_op(self, *texts: str) -> bool:
        """Whether this is the operator (or punctuation) spelled as one of ``texts``."""
        return self.kind == OPERATOR and self.text in texts

    def is_keyword(self, word: str) -> bool:
        return self.kind == KEYWORD and self.text == word

    def describe(self) -> str:
        """The token as error messages quote it: ``'where'`` or ``end of input``."""
        return END if self.kind == END else f"'{self.text}'"


def tokenize(source: Source) -> list[Token]:
    """The tokens of ``source``, ending with an ``END`` token.

    Raises :class:`ParseError` at the first character no token can start with
    and at malformed number literals (``1e``, ``2x``, ``010``).
    """
    return _Lexer(source).run()


class _Positions:
    """Maps offsets in the text to 1-based (line, column) pairs."""

    def __init__(self, source: Source):
        self.source = source
        self.line_starts = [0]
        for line in source.text.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.ends_with_break = source.text[-1:] in tuple(_LINE_BREAKS)

    def line_col(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.line_starts, offset) - 1
        if index == len(self.line_starts) - 1 and index > 0 and not self.ends_with_break:
            index -= 1  # the end of a text whose last line has no line break
        return self.source.first_line + index, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        """The span of ``text[start:end]``, which holds no line break."""
        line, col = self.line_col(start)
        return Span(line, col, line, col + end - start, self.source)


class _Lexer:
    def __init__(self, source: Source):
        self.source = source
        self.text = source.text
        self.positions = _Positions(source)
        self.tokens: list[Token] = []

    def run(self) -> list[Token]:
        pos, length = 0, len(self.text)
        while pos < length:
            match = _TOKEN.match(self.text, pos)
            if match is None:
                raise ParseError(f"unexpected character {_quote_char(self.text[pos])}",
                                 self.positions.span(pos, pos + 1))
            kind = match.lastgroup
            if kind == "word":
                pos = self._word(pos, match.end())
            elif kind == "number":
                pos = self._number(pos, match.end())
            elif kind == "operator":
                pos = self._add(OPERATOR, pos, match.end())
            else:
                pos = match.end()
        self.tokens.append(Token(END, "", self._end_span()))
        return self.tokens

    def _word(self, pos: int, end: int) -> int:
        word = self.text[pos:end]
        if word in REDUCTION_WORDS and self._reduction_equals_at(end):
            end += 1
            if self.text.startswith("!", end):
                end += 1
            return self._add(OPERATOR, pos, end)
        return self._add(KEYWORD if word in KEYWORDS else IDENT, pos, end)

    def _reduction_equals_at(self, pos: int) -> bool:
        """Whether ``max``/``min`` ending at ``pos`` is followed by ``=`` but not ``==``."""
        return self.text.startswith("=", pos) and not self.text.startswith("==", pos)

    def _number(self, pos: int, end: int) -> int:
        tail = _WORD_TAIL.match(self.text, end).end()
        literal = self.text[pos:tail]
        if tail > end:
            raise ParseError(f"invalid number literal '{literal}'", self.positions.span(pos, tail))
        if len(literal) > 1 and literal[0] == "0" and literal.isdigit():
            raise ParseError(f"invalid number literal '{literal}': TC has no octal literals, "
                             f"write '{literal.lstrip('0') or '0'}'",
                             self.positions.span(pos, end))
        return self._add(NUMBER, pos, end)

    def _add(self, kind: str, start: int, end: int) -> int:
        self.tokens.append(Token(kind, self.text[start:end], self.positions.span(start, end)))
        return end

    def _end_span(self) -> Span:
        """Just after the last token, so that an error at the end shows its line."""
        if self.tokens:
            last = self.tokens[-1].span
            return Span(last.end_line, last.end_col, last.end_line, last.end_col, self.source)
        first = self.source.first_line
        return Span(first, 1, first, 1, self.source)


def _quote_char(char: str) -> str:
    if char.isascii() and char.isprintable():
        return f"'{char}'"
    if char.isprintable():
        return f"'{char}' (U+{ord(char):04X})"
    return f"U+{ord(char):04X}"
