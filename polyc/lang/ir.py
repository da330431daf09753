"""polyc's IR: one operator, fully resolved, typed and ranged.

Produced by sema, consumed by every later stage. Immutable; spans do not
take part in equality. ``polyc.lang.printer.to_tc`` prints an :class:`Op` back
to TC text whose parse gives an equal :class:`Op`.

An operator is a sequence of statements; each writes one tensor element per
point of its iteration domain, a box ``lo <= index < hi`` per index variable
whose bounds are :mod:`size expressions <polyc.lang.sizes>`::

    S0: C(m, n) +=! A(m, k) * B(k, n)   where m in 0:M, n in 0:N, k in 0:K
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from polyc.errors import Source, Span
from polyc.lang import sizes as sz
from polyc.lang.sizes import SizeExpr
from polyc.lang.types import ScalarType


def _span():
    return field(default=None, compare=False, repr=False)


# ----------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    type: ScalarType


@dataclass(frozen=True)
class Const(Expr):
    """A literal; ``value`` is a Python int, float or bool of ``type``'s kind."""

    value: int | float | bool


@dataclass(frozen=True)
class Index(Expr):
    """An index (iteration) variable of the statement, as a value."""

    name: str


@dataclass(frozen=True)
class SizeValue(Expr):
    """A size expression as a value: a size variable ``N`` or an extent ``T.1``."""

    size: SizeExpr


@dataclass(frozen=True)
class Read(Expr):
    """``tensor(indices)``; a 0-rank tensor (scalar parameter) has no indices.

    Indices are integer expressions: affine in indices and sizes for ordinary
    reads; containing a :class:`Read` for data-dependent reads (gathers).
    """

    tensor: str
    indices: tuple[Expr, ...]


@dataclass(frozen=True)
class Unary(Expr):
    op: str  # "-" or "!"
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    """Arithmetic (``+ - * / %``, C semantics), comparison or logical operator."""

    op: str
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True)
class Select(Expr):
    """``cond ? then : other``."""

    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True)
class Call(Expr):
    """A builtin function (``exp``, ``fmax``, ``min``...) by its TC name."""

    function: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Cast(Expr):
    """``float32(x)``: conversion to ``type``."""

    operand: Expr


# ----------------------------------------------------------------- statements


REDUCTION_OPS = ("+", "*", "max", "min")

# The identity a ``!`` initialisation stores, for the operators whose identity is a
# number a literal can spell (max and min start at the type's extreme).
LITERAL_IDENTITIES = {"+": 0, "*": 1}


@dataclass(frozen=True)
class IndexRange:
    """``index in lo:hi`` (half-open).

    ``lo`` and ``hi`` are expressions of the sizes. A range whose bounds depend on
    other indices of the statement (``k in i + 1:M``, ``j in max(0, i - W):i + W + 1``)
    keeps its bounds as written in ``lo_bound`` / ``hi_bound`` (affine in indices and
    sizes; ``max(...)`` of such in a lower bound, ``min(...)`` in an upper one), and
    ``lo:hi`` is then its bounding box: the least and past-the-greatest value the index
    takes. The statement's domain is the box intersected with the bounds
    (:func:`polyc.poly.program.domain_constraints`).
    """

    index: str
    lo: SizeExpr
    hi: SizeExpr
    lo_bound: Expr | None = None
    hi_bound: Expr | None = None

    @property
    def is_box(self) -> bool:
        """Whether the bounds are expressions of the sizes only."""
        return self.lo_bound is None and self.hi_bound is None

    @property
    def depends_on(self) -> frozenset[str]:
        """The other indices its bounds mention."""
        return index_names(*(b for b in (self.lo_bound, self.hi_bound) if b is not None))


@dataclass(frozen=True)
class Statement:
    """``tensor(indices) op rhs`` over ``domain``.

    ``op`` is ``"="`` or a reduction operator from :data:`REDUCTION_OPS`
    (``+=`` is ``"+"``). ``init`` marks the ``!`` forms: the written element
    is set to the operator's identity before the first update. ``domain``
    lists the left-hand indices first, then ``reduction_indices``. A range may
    depend on other indices (:class:`IndexRange`); the ``!`` initialisation then
    still covers the whole box of the left-hand indices.
    """

    name: str
    tensor: str
    indices: tuple[str, ...]
    op: str
    init: bool
    rhs: Expr
    domain: tuple[IndexRange, ...]
    reduction_indices: tuple[str, ...]
    equivalent: str | None = None
    span: Span | None = _span()

    @property
    def is_reduction(self) -> bool:
        return self.op != "="

    @property
    def tensors_read(self) -> frozenset[str]:
        """The tensors its right-hand side reads (gather indices included)."""
        return tensors_read(self.rhs)

    def range_of(self, index: str) -> IndexRange:
        return next(r for r in self.domain if r.index == index)

    @property
    def is_box(self) -> bool:
        """Whether its domain is a box (no range depends on another index)."""
        return all(r.is_box for r in self.domain)


# ----------------------------------------------------------------- operator


INPUT, OUTPUT, TEMPORARY, VIEW = "input", "output", "temporary", "view"


@dataclass(frozen=True)
class DerivedSize:
    """A size the kernel computes from others: the product of ``factors`` (each clamped
    at 0), the extent of several indices merged into one."""

    name: str
    factors: tuple[SizeExpr, ...]

    def value(self, sizes: dict[str, int]) -> int:
        """Its value where the operator's sizes are ``sizes``."""
        product = 1
        for factor in self.factors:
            product *= max(0, sz.evaluate(factor, sizes))
        return product


@dataclass(frozen=True)
class Tensor:
    """A named array: an input, an output or a temporary of the body; or a view, which
    names the memory of the tensor ``storage`` read and written with its own shape
    (indices merged: :mod:`polyc.rewrite.merged_indices`)."""

    name: str
    type: ScalarType
    shape: tuple[SizeExpr, ...]
    role: str
    span: Span | None = _span()
    storage: str | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Precondition:
    """A relation between sizes that the program needs and polyc checks per call.

    ``condition`` is an isl parameter set, e.g. ``[M, N] -> { : N >= M + 1 }``;
    ``description`` says which access needs it.
    """

    condition: str
    description: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Op:
    """One operator (``def``), ready for the polyhedral stages."""

    name: str
    sizes: tuple[str, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    temporaries: tuple[Tensor, ...]
    statements: tuple[Statement, ...]
    preconditions: tuple[Precondition, ...] = ()
    source: Source | None = field(default=None, compare=False, repr=False)
    views: tuple[Tensor, ...] = ()
    derived_sizes: tuple[DerivedSize, ...] = ()

    @property
    def tensors(self) -> dict[str, Tensor]:
        return {t.name: t for t in self.inputs + self.outputs + self.temporaries + self.views}

    @property
    def parameters(self) -> tuple[str, ...]:
        """The sizes the loops are written in: the operator's, then the derived ones."""
        return self.sizes + tuple(d.name for d in self.derived_sizes)

    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def __str__(self) -> str:
        from polyc.lang.printer import to_tc

        return to_tc(self)


def children(expr: Expr) -> tuple[Expr, ...]:
    """The sub-expressions directly under ``expr``."""
    if isinstance(expr, Read):
        return expr.indices
    if isinstance(expr, (Unary, Cast)):
        return (expr.operand,)
    if isinstance(expr, Binary):
        return (expr.lhs, expr.rhs)
    if isinstance(expr, Select):
        return (expr.cond, expr.then, expr.other)
    if isinstance(expr, Call):
        return expr.args
    return ()


def index_names(*exprs: Expr) -> frozenset[str]:
    """The loop indices that some of ``exprs`` use (inside gathers too)."""
    return frozenset(e.name for expr in exprs for e in walk(expr) if isinstance(e, Index))


def fresh_name(base: str, taken: set[str], separator: str = "_") -> str:
    """``base``, else ``base<separator>1``, ``base<separator>2``, ...: the first not in
    ``taken``, which it joins."""
    name, k = base, 1
    while name in taken:
        name, k = f"{base}{separator}{k}", k + 1
    taken.add(name)
    return name


def is_pure_reduction(statement: Statement) -> bool:
    """A reduction whose right-hand side does not read the tensor it accumulates into."""
    return statement.is_reduction and statement.tensor not in statement.tensors_read


def tensors_read(expr: Expr) -> frozenset[str]:
    """The tensors ``expr`` reads (gather indices included)."""
    return frozenset(e.tensor for e in walk(expr) if isinstance(e, Read))


def writes_any(statements, tensors: frozenset[str]) -> bool:
    """Whether one of ``statements`` writes one of ``tensors``: where none does, an
    expression that reads only ``tensors`` has the same value before and after them."""
    return any(s.tensor in tensors for s in statements)


def rewrite(expr: Expr, replacement) -> Expr:
    """``expr`` with each sub-expression for which ``replacement(e)`` is not ``None``
    replaced by that value, outermost first; the indices of a read are left as they
    are (a replaced read is replaced whole)."""
    new = replacement(expr)
    if new is not None:
        return new
    if isinstance(expr, Read):
        return expr
    return map_children(expr, lambda child: rewrite(child, replacement))


def substitute_indices(expr: Expr, values: dict) -> Expr:
    """``expr`` with each index named in ``values`` replaced by its value (an
    expression), everywhere: in reads' indices too."""
    if isinstance(expr, Index):
        return values.get(expr.name, expr)
    return map_children(expr, lambda child: substitute_indices(child, values))


def renamed_reads(expr: Expr, names: dict[str, str]) -> Expr:
    """``expr`` reading each tensor named in ``names`` under its new name (gathers too)."""
    if isinstance(expr, Read):
        return Read(expr.type, names.get(expr.tensor, expr.tensor),
                    tuple(renamed_reads(i, names) for i in expr.indices))
    return map_children(expr, lambda e: renamed_reads(e, names))


def map_children(expr: Expr, f) -> Expr:
    """``expr`` with ``f`` applied to each of its :func:`children` (a read's indices
    included)."""
    if isinstance(expr, Read):
        return replace(expr, indices=tuple(f(i) for i in expr.indices))
    if isinstance(expr, (Unary, Cast)):
        return replace(expr, operand=f(expr.operand))
    if isinstance(expr, Binary):
        return replace(expr, lhs=f(expr.lhs), rhs=f(expr.rhs))
    if isinstance(expr, Select):
        return replace(expr, cond=f(expr.cond), then=f(expr.then), other=f(expr.other))
    if isinstance(expr, Call):
        return replace(expr, args=tuple(f(a) for a in expr.args))
    return expr


def has_gather(expr: Expr) -> bool:
    """Whether ``expr`` reads a tensor at a data-dependent index (a gather)."""
    return any(isinstance(e, Read) and any(isinstance(r, Read) for i in e.indices
                                           for r in walk(i))
               for e in walk(expr))


def walk_unconditional(expr: Expr):
    """The sub-expressions of ``expr`` evaluated wherever ``expr`` is, pre-order: not
    those in a ternary's branches or on the right of ``&&`` and ``||``, which C evaluates
    only when selected (and whose reads may be in bounds only there)."""
    yield expr
    if isinstance(expr, Select):
        yield from walk_unconditional(expr.cond)
    elif isinstance(expr, Binary) and expr.op in ("&&", "||"):
        yield from walk_unconditional(expr.lhs)
    else:
        for child in children(expr):
            yield from walk_unconditional(child)


def walk(expr: Expr):
    """Every sub-expression of ``expr``, pre-order."""
    yield expr
    for child in children(expr):
        yield from walk(child)
