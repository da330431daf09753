"""The ranges of one statement's indices: its ``where`` clauses, then TC's inference
(:mod:`polyc.lang.ranges`) for the others, with errors that say what is missing.

A ``where`` bound in the sizes only gives a box range (``k in 0:K``). A bound that
mentions other indices of the statement (``k in i + 1:M``, ``j in max(0, i - W):min(N,
i + W + 1)``) gives an index-dependent range: affine in indices and sizes, ``max(...)``
of such in a lower bound and ``min(...)`` in an upper one. Its bounding box is derived
once the indices it depends on are ranged, and its bounds stay in the IR
(:class:`~polyc.lang.ir.IndexRange`).
"""
from __future__ import annotations

from dataclasses import dataclass

from polyc.errors import SemanticError, Span
from polyc.lang import ir
from polyc.lang.printer import expr_to_tc
from polyc.lang.sizes import SizeExpr
from polyc.lang.ranges import (AccessDim, DependentRange, Unresolved, affine_of, bound_pieces,
                               infer_ranges)


@dataclass(frozen=True)
class GivenRange:
    """A ``where index in lo:hi`` clause with its bounds lowered to IR."""

    index: str
    lo: ir.Expr
    hi: ir.Expr
    span: Span | None
    lo_span: Span | None
    hi_span: Span | None


def statement_ranges(lhs: tuple[str, ...], indices: dict[str, Span | None],
                     given: list[GivenRange], reads: list[tuple[ir.Read, str | None]],
                     tensors: dict[str, ir.Tensor], span: Span | None
                     ) -> tuple[ir.IndexRange, ...]:
    """The range of every index of a statement, left-hand indices first.

    ``indices``: every index of the statement, in order of appearance, with where it
    first appears; ``reads``: its accesses (the left-hand side's too when its tensor
    exists) with their affine guards (:mod:`polyc.lang.guards`)."""
    boxes, dependent, written = {}, {}, {}
    for clause in given:
        if ir.index_names(clause.lo, clause.hi):
            dependent[clause.index] = _dependent_range(clause)
            written[clause.index] = tuple(b if ir.index_names(b) else None
                                          for b in (clause.lo, clause.hi))
        else:
            boxes[clause.index] = (size_bound(clause.lo, clause.lo_span),
                                   size_bound(clause.hi, clause.hi_span))
    access_dims: list[AccessDim] = []
    guarded_dims: list[AccessDim] = []
    for read, guard in reads:
        for index_expr, extent in zip(read.indices, tensors[read.tensor].shape):
            linear = affine_of(index_expr)
            if linear is not None:
                (access_dims if guard is None else guarded_dims).append(AccessDim(linear, extent))
    result = infer_ranges(tuple(indices), boxes, tuple(access_dims), tuple(guarded_dims),
                          dependent)
    if isinstance(result, Unresolved):
        raise _unresolved(result, lhs, indices, dependent, given, access_dims, span)
    ordered = tuple(lhs) + tuple(i for i in indices if i not in lhs)
    return tuple(ir.IndexRange(i, *result[i], *written.get(i, (None, None))) for i in ordered)


def size_bound(bound: ir.Expr, span: Span | None) -> SizeExpr:
    """A range bound (or an extent) lowered to IR, as an expression of the sizes."""
    linear = affine_of(bound)
    if linear is None or linear.coefficients:
        raise SemanticError("a range bound must be an affine expression of size variables "
                            "and integer constants", span)
    return linear.offset


def _dependent_range(clause: GivenRange) -> DependentRange:
    if clause.index in ir.index_names(clause.lo, clause.hi):
        raise SemanticError(f"the range of `{clause.index}` depends on `{clause.index}` itself",
                            clause.span)
    lower, upper = bound_pieces(clause.lo, "max"), bound_pieces(clause.hi, "min")
    for pieces, bound, combine, span in ((lower, clause.lo, "max", clause.lo_span),
                                         (upper, clause.hi, "min", clause.hi_span)):
        if pieces is None:
            raise SemanticError(
                f"a range bound that depends on other indices must be affine in the indices "
                f"and sizes (or the {combine}(...) of such): `{expr_to_tc(bound)}` is not",
                span)
    return DependentRange(lower, upper)


def _unresolved(result: Unresolved, lhs, indices, dependent, given, access_dims, span
                ) -> SemanticError:
    waiting = [i for i in result.indices if i in dependent]
    if waiting:
        others = ", ".join(f"`{n}`" for n in sorted(dependent[waiting[0]].depends_on))
        clause = next(c for c in given if c.index == waiting[0])
        return SemanticError(f"the range of `{waiting[0]}` depends on {others}, whose ranges "
                             f"depend on it in turn or cannot be inferred", clause.span)
    index = result.indices[0]
    if not any(index in d.index.indices for d in access_dims):
        reason = ("it is not used in any tensor access on the right-hand side"
                  if index in lhs else "no tensor access uses it")
    else:
        reason = "every access that uses it also uses another index whose range is unknown"
    return SemanticError(f"cannot infer the range of index `{index}`: {reason}; give it a "
                         f"range with `where {index} in 0:<extent>`", indices.get(index) or span)
