"""Range inference: TC's rules, symbolic in the size variables.

TC infers the range of every index variable of a statement that no ``where``
clause gives. It works in rounds. In each round, every access dimension whose
index expression has exactly one unresolved index ``x`` — all other indices
resolved in earlier rounds — yields the *maximal* range of ``x`` that keeps
that dimension in bounds for every value of the resolved indices. The ranges
found for ``x`` in one round are intersected. Rounds repeat until nothing
changes; an index still unresolved is an error.

Example: ``O(n, m, h, w) +=! I(n, c, h + kh, w + kw) * W(m, c, kh, kw)``
resolves ``n, c, m, kh, kw`` from plain dimensions in round one, then
``h in 0 : H - KH + 1`` and ``w`` in round two.

Index expressions are kept as :class:`LinearIndex`: integer coefficients on
index variables plus an offset that is a size expression.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.sizes import SizeExpr
from polyc.lang.types import INT64


@dataclass(frozen=True)
class LinearIndex:
    """``sum(coeff * index) + offset``, ``offset`` a size expression."""

    coefficients: tuple[tuple[str, int], ...]
    offset: SizeExpr

    def coefficient(self, index: str) -> int:
        return dict(self.coefficients).get(index, 0)

    @property
    def indices(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.coefficients)


def affine_of(expr: ir.Expr) -> LinearIndex | None:
    """``expr`` as a :class:`LinearIndex`, or ``None`` when it is not affine
    (a gather, a product of two variables, a division, a float...)."""
    if isinstance(expr, ir.Index):
        return LinearIndex(((expr.name, 1),), sz.const(0))
    if isinstance(expr, ir.SizeValue):
        return LinearIndex((), expr.size)
    if isinstance(expr, ir.Const):
        if isinstance(expr.value, bool) or not isinstance(expr.value, int):
            return None
        return LinearIndex((), sz.const(expr.value))
    if isinstance(expr, ir.Cast) and expr.type.is_integral and expr.type.kind != "bool":
        return affine_of(expr.operand)
    if isinstance(expr, ir.Unary) and expr.op == "-":
        inner = affine_of(expr.operand)
        return None if inner is None else scaled(inner, -1)
    if isinstance(expr, ir.Binary) and expr.op in ("+", "-"):
        lhs, rhs = affine_of(expr.lhs), affine_of(expr.rhs)
        if lhs is None or rhs is None:
            return None
        return linear_sum(lhs, rhs if expr.op == "+" else scaled(rhs, -1))
    if isinstance(expr, ir.Call) and expr.function in ("min", "max") and not expr.type.is_float:
        args = [affine_of(a) for a in expr.args]
        if any(a is None or a.coefficients for a in args):
            return None
        combine = sz.smin if expr.function == "min" else sz.smax
        return LinearIndex((), combine(args[0].offset, args[1].offset))
    if isinstance(expr, ir.Binary) and expr.op == "/":
        # Between sizes (range bounds, offsets), `/` is floor division by a positive constant.
        lhs, rhs = affine_of(expr.lhs), affine_of(expr.rhs)
        if lhs is None or rhs is None or lhs.coefficients or rhs.coefficients:
            return None
        if isinstance(rhs.offset, sz.Affine) and rhs.offset.is_constant and rhs.offset.const > 0:
            return LinearIndex((), sz.floordiv(lhs.offset, rhs.offset.const))
        return None
    if isinstance(expr, ir.Binary) and expr.op == "*":
        lhs, rhs = affine_of(expr.lhs), affine_of(expr.rhs)
        if lhs is None or rhs is None:
            return None
        for factor, other in ((lhs, rhs), (rhs, lhs)):
            if not factor.coefficients and isinstance(factor.offset, sz.Affine) \
                    and factor.offset.is_constant:
                return scaled(other, factor.offset.const)
        return None
    return None


def linear_expr(linear: LinearIndex) -> ir.Expr:
    """``linear`` as an IR expression (int64)."""
    terms: list[ir.Expr] = []
    for name, c in linear.coefficients:
        index = ir.Index(INT64, name)
        terms.append(index if c == 1 else ir.Binary(INT64, "*", ir.Const(INT64, c), index))
    if not (isinstance(linear.offset, sz.Affine) and linear.offset == sz.const(0)) or not terms:
        terms.append(ir.SizeValue(INT64, linear.offset))
    result = terms[0]
    for term in terms[1:]:
        result = ir.Binary(INT64, "+", result, term)
    return result


def negated(linear: LinearIndex) -> LinearIndex:
    """``-linear``."""
    return scaled(linear, -1)


def shifted(linear: LinearIndex, offset: SizeExpr) -> LinearIndex:
    """``linear + offset``."""
    return linear_sum(linear, LinearIndex((), offset))


def linear_to_isl(linear: LinearIndex) -> str:
    """isl text of ``linear``: ``(1*i) + (-1*r) + (N - 1)``."""
    terms = [f"{c}*{sz.isl_name(n)}" for n, c in linear.coefficients]
    terms.append(sz.to_isl(linear.offset))
    return " + ".join(f"({t})" for t in terms)


def scaled(a: LinearIndex, factor: int) -> LinearIndex:
    """``factor * a``."""
    return LinearIndex(tuple((n, c * factor) for n, c in a.coefficients if c * factor),
                       sz.scale(a.offset, factor))


def linear_sum(a: LinearIndex, b: LinearIndex) -> LinearIndex:
    """``a + b``."""
    coefficients = dict(a.coefficients)
    for name, c in b.coefficients:
        coefficients[name] = coefficients.get(name, 0) + c
    return LinearIndex(tuple(sorted((n, c) for n, c in coefficients.items() if c)),
                       sz.add(a.offset, b.offset))


@dataclass(frozen=True)
class AccessDim:
    """One dimension of one access: its index expression and the extent it must stay in."""

    index: LinearIndex
    extent: SizeExpr


@dataclass(frozen=True)
class Unresolved:
    """Range inference could not resolve these indices (in order of appearance)."""

    indices: tuple[str, ...]


@dataclass(frozen=True)
class DependentRange:
    """A ``where`` range whose bounds depend on other indices: ``index >= each of
    lower`` and ``index < each of upper`` (``max``/``min`` split into their arguments)."""

    lower: tuple[LinearIndex, ...]
    upper: tuple[LinearIndex, ...]

    @property
    def depends_on(self) -> frozenset[str]:
        return frozenset(n for piece in self.lower + self.upper for n in piece.indices)


def bound_pieces(expr: ir.Expr, combine: str) -> tuple[LinearIndex, ...] | None:
    """The affine arguments of a range bound: ``max(a, max(b, c))`` is ``(a, b, c)``
    when ``combine`` is ``"max"`` (a lower bound), likewise ``min`` for an upper one;
    ``None`` when some argument is not affine."""
    if isinstance(expr, ir.Call) and expr.function == combine and not expr.type.is_float:
        pieces = [bound_pieces(a, combine) for a in expr.args]
        return None if any(p is None for p in pieces) else tuple(x for p in pieces for x in p)
    linear = affine_of(expr)
    return None if linear is None else (linear,)


def interval_of(linear: LinearIndex, ranges: dict[str, tuple[SizeExpr, SizeExpr]]
                ) -> tuple[SizeExpr, SizeExpr]:
    """The least and the greatest value of ``linear`` over the box ``ranges``
    (half-open per index; an empty range gives bounds that are never used)."""
    least: SizeExpr = linear.offset
    greatest: SizeExpr = linear.offset
    for name, c in linear.coefficients:
        lo, hi = ranges[name]
        last = sz.sub(hi, sz.const(1))
        least = sz.add(least, sz.scale(lo if c > 0 else last, c))
        greatest = sz.add(greatest, sz.scale(last if c > 0 else lo, c))
    return least, greatest


def bounding_box(dependent: DependentRange, ranges: dict[str, tuple[SizeExpr, SizeExpr]]
                 ) -> tuple[SizeExpr, SizeExpr]:
    """The box ``lo:hi`` of the values a dependent range takes while the indices it
    depends on stay in ``ranges``."""
    lo = hi = None
    for piece in dependent.lower:
        least = interval_of(piece, ranges)[0]
        lo = least if lo is None else sz.smax(lo, least)
    for piece in dependent.upper:
        greatest = interval_of(piece, ranges)[1]
        hi = greatest if hi is None else sz.smin(hi, greatest)
    return lo, hi


def tightened(r: ir.IndexRange, kind: str, bound: LinearIndex) -> ir.IndexRange:
    """``r`` with ``index >= bound`` (``"lower"``) or ``index < bound`` added. A range with
    index-dependent bounds takes a bound in the sizes as one more argument of them: its
    box is their bounding box (:func:`with_bounding_boxes`), which would drop a box
    bound."""
    if not bound.coefficients and r.is_box:  # a bound in the sizes: the box moves
        if kind == "lower":
            return dataclasses.replace(r, lo=sz.smax(r.lo, bound.offset))
        return dataclasses.replace(r, hi=sz.smin(r.hi, bound.offset))
    new = linear_expr(bound)
    if kind == "lower":
        old = r.lo_bound if r.lo_bound is not None else ir.SizeValue(INT64, r.lo)
        return dataclasses.replace(r, lo_bound=ir.Call(INT64, "max", (old, new)))
    old = r.hi_bound if r.hi_bound is not None else ir.SizeValue(INT64, r.hi)
    return dataclasses.replace(r, hi_bound=ir.Call(INT64, "min", (old, new)))


def with_bounding_boxes(domain: tuple[ir.IndexRange, ...]) -> tuple[ir.IndexRange, ...]:
    """``domain`` with the box of each index-dependent range made its bounds' bounding
    box over the other ranges' boxes."""
    boxes = {r.index: (r.lo, r.hi) for r in domain}
    result = []
    for r in domain:
        if not r.is_box:
            lo, hi = bounding_box(range_bounds(r), boxes)
            r = dataclasses.replace(r, lo=lo, hi=hi)
        result.append(r)
    return tuple(result)


def range_bounds(r: ir.IndexRange) -> DependentRange:
    """The bounds of ``r`` as pieces: the written ones where it depends on other
    indices, its box's bound on a side that does not."""
    lower = bound_pieces(r.lo_bound, "max") if r.lo_bound is not None else (
        LinearIndex((), r.lo),)
    upper = bound_pieces(r.hi_bound, "min") if r.hi_bound is not None else (
        LinearIndex((), r.hi),)
    return DependentRange(lower, upper)


def infer_ranges(indices: tuple[str, ...], given: dict[str, tuple[SizeExpr, SizeExpr]],
                 access_dims: tuple[AccessDim, ...], guarded_dims: tuple[AccessDim, ...] = (),
                 dependent: dict[str, DependentRange] | None = None
                 ) -> dict[str, tuple[SizeExpr, SizeExpr]] | Unresolved:
    """The half-open range ``(lo, hi)`` of every index in ``indices``.

    ``given`` holds the ranges written in ``where`` clauses (they override
    inference). ``guarded_dims`` are the dimensions of reads under an affine guard
    (``i >= 1 ? A(i - 1) : 0``): the guard, not the range, keeps them inside, so they
    range an index only when no other access can. ``dependent`` holds the ``where``
    ranges whose bounds depend on other indices: each gets its bounding box once the
    indices it depends on are ranged. Returns :class:`Unresolved` when some index
    cannot be ranged.
    """
    resolved = dict(given)
    waiting = dict(dependent or {})
    while True:
        ready = {x: d for x, d in waiting.items() if d.depends_on <= resolved.keys()}
        for x, d in ready.items():
            resolved[x] = bounding_box(d, resolved)
            del waiting[x]
        if ready:
            continue
        found = _round(access_dims, resolved) or _round(guarded_dims, resolved)
        found = {x: c for x, c in found.items() if x not in waiting}
        if not found:
            break
        for x, candidates in found.items():
            lo = candidates[0][0]
            hi = candidates[0][1]
            for other_lo, other_hi in candidates[1:]:
                lo, hi = sz.smax(lo, other_lo), sz.smin(hi, other_hi)
            resolved[x] = (lo, hi)
    missing = tuple(n for n in indices if n not in resolved)
    if missing:
        return Unresolved(missing)
    return {n: resolved[n] for n in indices}


def _round(access_dims, resolved) -> dict[str, list[tuple[SizeExpr, SizeExpr]]]:
    """The ranges one round of inference finds, per index."""
    found: dict[str, list[tuple[SizeExpr, SizeExpr]]] = {}
    for dim in access_dims:
        unknown = [n for n in dim.index.indices if n not in resolved]
        if len(unknown) != 1:
            continue
        x = unknown[0]
        found.setdefault(x, []).append(_maximal_range(x, dim, resolved))
    return found


def _maximal_range(x: str, dim: AccessDim, resolved) -> tuple[SizeExpr, SizeExpr]:
    """The largest ``lo <= x < hi`` with ``0 <= index < extent`` for all resolved values."""
    a = dim.index.coefficient(x)
    rest = LinearIndex(tuple((n, c) for n, c in dim.index.coefficients if n != x),
                       dim.index.offset)
    rest_min, rest_max = interval_of(rest, resolved)
    last_valid = sz.sub(dim.extent, sz.const(1))
    if a > 0:
        lo = sz.ceildiv(sz.neg(rest_min), a)
        hi = sz.add(sz.floordiv(sz.sub(last_valid, rest_max), a), sz.const(1))
    else:
        lo = sz.ceildiv(sz.sub(rest_max, last_valid), -a)
        hi = sz.add(sz.floordiv(rest_min, -a), sz.const(1))
    return lo, hi


def has_uneven_extent(statement: ir.Statement) -> bool:
    """Whether some range's extent changes with the indices it depends on (a triangle:
    ``k in i + 1:M``), as opposed to a band that moves with them (``j in max(0, i - W):
    min(N, i + W + 1)``: the same indices with the same coefficients on both sides, up to
    clamps in the sizes). Loops over such a statement's indices hold uneven work."""
    for r in statement.domain:
        if r.is_box:
            continue
        bounds = range_bounds(r)
        moving = {p.coefficients for p in bounds.lower + bounds.upper if p.coefficients}
        if len(moving) != 1 or not all(any(p.coefficients for p in side)
                                       for side in (bounds.lower, bounds.upper)):
            return True
    return False
