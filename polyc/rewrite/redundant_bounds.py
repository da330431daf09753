"""Index-dependent ranges in one form: bounds that never bind dropped, the rest rebuilt.

A range's bound may hold an argument that never decides it. Splitting a select on the
indices adds its condition to the range the statement had (:mod:`split_selects`), so
the lower triangle chosen by value,

    D(i, j) +=! (j <= i ? A(i, k) * A(j, k) : 0.0)        -- j in 0:N
  → D(i, j) +=! A(i, k) * A(j, k) where j in 0:min(N, i + 1)

keeps ``N``, which ``i + 1`` never exceeds while ``i`` stays in ``0:N``. A ``min``
argument ``p`` is dropped where another, ``q``, is never greater (the greatest value
of ``q - p`` over the boxes of the other indices is at most 0 whatever the sizes), and
likewise a ``max`` argument never greater than another: the range becomes ``j in
0:i + 1``, as the ``where`` spelling writes it. Each bound left is then rebuilt from
its affine pieces in one order and one spelling of their terms (``i + 1`` whether
written ``1 + i`` or produced by a rewrite), so both spellings are one operator and
share one compilation (:func:`polyc.compiler.generate` remembers compilations by
their canonical form). A range whose bounds keep no other index becomes a box.

The points are unchanged: a dropped argument is implied by the others over a superset
of the statement's points, and isl sees the same set with fewer constraints. The
proof is symbolic in the sizes (:func:`never_positive`): a bound it cannot decide
stays.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import (LinearIndex, interval_of, linear_sum, negated, range_bounds,
                               with_bounding_boxes)
from polyc.lang.types import INT64


def drop_redundant_bounds(op: ir.Op) -> ir.Op:
    """``op`` with each index-dependent range's bounds reduced to those that can bind,
    in one canonical form (see the module docstring)."""
    statements = tuple(_with_canonical_ranges(s) for s in op.statements)
    if all(a is b for a, b in zip(statements, op.statements)):
        return op
    return dataclasses.replace(op, statements=statements)


def _with_canonical_ranges(statement: ir.Statement) -> ir.Statement:
    if statement.is_box:
        return statement
    boxes = {r.index: (r.lo, r.hi) for r in statement.domain}
    domain = with_bounding_boxes(tuple(_canonical(r, boxes) for r in statement.domain))
    if domain == statement.domain:
        return statement
    return dataclasses.replace(statement, domain=domain)


def _canonical(r: ir.IndexRange, boxes: dict[str, tuple[sz.SizeExpr, sz.SizeExpr]]
               ) -> ir.IndexRange:
    """``r`` with the arguments of its bounds that never bind dropped, and its bounds
    rebuilt from the pieces left (a side with no index left is a bound of the box)."""
    if r.is_box:
        return r
    bounds = range_bounds(r)
    lower = _binding(bounds.lower, boxes, "max")
    upper = _binding(bounds.upper, boxes, "min")
    lo, lo_bound = _side(lower, "max")
    hi, hi_bound = _side(upper, "min")
    return dataclasses.replace(r, lo=r.lo if lo is None else lo,
                               hi=r.hi if hi is None else hi,
                               lo_bound=lo_bound, hi_bound=hi_bound)


def _binding(pieces: tuple[LinearIndex, ...], boxes, combine: str
             ) -> tuple[LinearIndex, ...]:
    """The pieces of a ``combine`` (``min`` or ``max``) of which none is decided by
    another: for ``min``, ``p`` goes where some other piece is never greater."""
    kept = list(dict.fromkeys(pieces))
    for piece in list(kept):
        others = [q for q in kept if q != piece]
        if any(_never_beyond(q, piece, boxes, combine) for q in others):
            kept.remove(piece)
    return tuple(sorted(kept, key=_order))


def _never_beyond(q: LinearIndex, p: LinearIndex, boxes, combine: str) -> bool:
    """Whether ``q <= p`` (``combine`` ``min``) or ``q >= p`` (``max``) at every point
    of the other indices' boxes, whatever the sizes."""
    difference = linear_sum(q, negated(p))
    if any(n not in boxes for n in difference.indices):
        return False
    least, greatest = interval_of(difference, boxes)
    return never_positive(greatest if combine == "min" else sz.neg(least))


def never_positive(e: sz.SizeExpr) -> bool:
    """Whether ``e <= 0`` for all values of the sizes (``False`` where it cannot tell)."""
    if isinstance(e, sz.MinMax):
        decided = [never_positive(a) for a in e.args]
        return any(decided) if e.op == "min" else all(decided)
    return e.is_constant and e.const <= 0


def _order(piece: LinearIndex) -> tuple:
    return (piece.coefficients, sz.to_tc(piece.offset))


def _side(pieces: tuple[LinearIndex, ...], combine: str
          ) -> tuple[sz.SizeExpr | None, ir.Expr | None]:
    """One side of a range from its pieces: ``(box bound, None)`` when no piece holds
    an index, else ``(None, bound)`` with the bound written as ``combine`` of them."""
    if not any(p.coefficients for p in pieces):
        fold = sz.smin if combine == "min" else sz.smax
        box = pieces[0].offset
        for piece in pieces[1:]:
            box = fold(box, piece.offset)
        return box, None
    bound = _written(pieces[0])
    for piece in pieces[1:]:
        bound = ir.Call(INT64, combine, (bound, _written(piece)))
    return None, bound


def _written(piece: LinearIndex) -> ir.Expr:
    """``piece`` as TC writes it (``i - K / 2``, ``i + 1``): its indices, then the sizes
    of its offset, then its constant, each added or subtracted, so that a bound left
    as written parses to the same expression."""
    terms = [(c, ir.Index(INT64, n)) for n, c in piece.coefficients]
    offset = piece.offset
    if isinstance(offset, sz.Affine):
        terms += _size_terms(offset)
    else:
        terms.append((1, ir.SizeValue(INT64, offset)))
    return _sum(terms)


def _size_terms(size: sz.Affine) -> list[tuple[int, ir.Expr]]:
    terms: list[tuple[int, ir.Expr]] = []
    for atom, c in size.terms:
        if isinstance(atom, str):
            terms.append((c, ir.SizeValue(INT64, sz.var(atom))))
        else:  # floor division by a positive constant: TC's `/` between sizes
            numerator = _sum(_size_terms(atom.numerator))
            terms.append((c, ir.Binary(INT64, "/", numerator,
                                       ir.Const(INT64, atom.denominator))))
    if size.const or not terms:
        terms.append((size.const, ir.Const(INT64, abs(size.const))))
    return terms


def _sum(terms: list[tuple[int, ir.Expr]]) -> ir.Expr:
    """``sum(c * e)`` with each coefficient's sign as ``+`` or ``-``."""
    def scaled(c: int, e: ir.Expr) -> ir.Expr:
        return e if abs(c) == 1 or isinstance(e, ir.Const) else \
            ir.Binary(INT64, "*", ir.Const(INT64, abs(c)), e)
    (c, e), rest = terms[0], terms[1:]
    total = scaled(c, e) if c >= 0 else ir.Unary(INT64, "-", scaled(c, e))
    for c, e in rest:
        total = ir.Binary(INT64, "+" if c >= 0 else "-", total, scaled(c, e))
    return total
