"""The syntax tree of TC source, as written, with source spans.

Both front ends produce it: the TC parser (``parser.py``) and the Python form
(``pyfront.py``). It is purely syntactic: a name may be a tensor, a size
variable, an index variable, a scalar parameter or a where-binding; a call may
be a tensor read, a builtin function, a cast or a dimension query. Sema
(``sema.py``) resolves all of that.

Every node is a frozen dataclass whose ``span`` does not take part in
equality, so trees of the same program written in either front end compare
equal.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from polyc.errors import Span


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False)


# ----------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    pass


@dataclass(frozen=True)
class Name(Expr):
    """An identifier used as a value: ``i``, ``N``, ``alpha``, a where-binding."""

    name: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Number(Expr):
    """A numeric literal. ``text`` is the literal as written (``.5``, ``1e-5``, ``2``).

    ``is_float`` is true when the literal has a ``.``, an exponent or an ``f``
    suffix; the value is then a Python float, else a Python int.
    """

    value: int | float
    is_float: bool
    span: Span | None = _span()


@dataclass(frozen=True)
class Unary(Expr):
    """``op`` is ``"-"`` or ``"!"``."""

    op: str
    operand: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Binary(Expr):
    """``op`` is one of ``+ - * / % == != < <= > >= && ||``."""

    op: str
    lhs: Expr
    rhs: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Ternary(Expr):
    """``cond ? then : other`` (right-associative)."""

    cond: Expr
    then: Expr
    other: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Apply(Expr):
    """``name(args...)``: a tensor read, a builtin call or a cast (sema decides).

    The span of ``name`` alone is ``name_span``.
    """

    name: str
    args: tuple[Expr, ...]
    span: Span | None = _span()
    name_span: Span | None = _span()


@dataclass(frozen=True)
class DimOf(Expr):
    """``T.k``: the extent of dimension ``k`` (from 0) of tensor ``T``."""

    tensor: str
    dim: int
    span: Span | None = _span()


# ----------------------------------------------------------------- where clauses


@dataclass(frozen=True)
class WhereClause:
    pass


@dataclass(frozen=True)
class RangeClause(WhereClause):
    """``index in lo:hi`` (half-open)."""

    index: str
    lo: Expr
    hi: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class LetClause(WhereClause):
    """``name = expr``: a statement-local binding, substituted where ``name`` is used."""

    name: str
    value: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class ExistsClause(WhereClause):
    """``exists expr``: an access considered only by range inference."""

    expr: Expr
    span: Span | None = _span()


# ----------------------------------------------------------------- statements


ASSIGN_OPS = ("=", "+=", "*=", "max=", "min=")


@dataclass(frozen=True)
class Stmt:
    pass


@dataclass(frozen=True)
class Assign(Stmt):
    """``tensor(indices) op rhs [<=> equivalent] [where clauses]``.

    ``op`` is one of :data:`ASSIGN_OPS`; ``init`` is true for the ``!`` forms
    (``+=!`` etc.; ``=!`` is not TC). ``indices`` are index-variable names; a
    0-rank output has none (``s +=! A(i)`` is written with ``indices=()``).
    """

    tensor: str
    indices: tuple[str, ...]
    op: str
    init: bool
    rhs: Expr
    where: tuple[WhereClause, ...] = ()
    equivalent: Expr | None = None
    span: Span | None = _span()
    lhs_span: Span | None = _span()


@dataclass(frozen=True)
class CallStmt(Stmt):
    """``O1, O2 = other(A, B)``: call another ``def`` of the same source (inlined)."""

    targets: tuple[str, ...]
    callee: str
    args: tuple[str, ...]
    span: Span | None = _span()


# ----------------------------------------------------------------- definitions


@dataclass(frozen=True)
class TensorType:
    """``float(M, 3)``: an element type name and dimensions (size names or ints).

    ``dims`` is ``None`` when no parenthesised list was written (a 0-rank scalar
    or an output with inferred shape); ``()`` for an explicit ``float()``. A
    dimension is a size name, an integer, or an extent derived from sizes that
    other dimensions name (``float(N, H - KH + 1) d_O``), which each call checks.
    """

    elem: str
    dims: tuple[str | int | Expr, ...] | None
    span: Span | None = _span()


@dataclass(frozen=True)
class Param:
    """An input: ``float(M, K) A`` or ``float alpha`` (0-rank)."""

    name: str
    type: TensorType
    span: Span | None = _span()


@dataclass(frozen=True)
class OutputDecl:
    """An entry of the ``-> (...)`` list; its type is optional (and then inferred)."""

    name: str
    type: TensorType | None
    span: Span | None = _span()


@dataclass(frozen=True)
class Def:
    """``def name(params) -> (outputs) { body }``."""

    name: str
    params: tuple[Param, ...]
    outputs: tuple[OutputDecl, ...]
    body: tuple[Stmt, ...]
    span: Span | None = _span()
    name_span: Span | None = _span()


@dataclass(frozen=True)
class Program:
    """A whole source: one or more ``def``s."""

    defs: tuple[Def, ...]
    span: Span | None = _span()
