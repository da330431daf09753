"""Reduction-invariant factors: multiply the finished sum, not every term.

A sum's term may be a product with factors that no reduction index changes:
``alpha`` in PolyBench's ``tmp(i, j) +=! alpha * A(i, k) * B(k, j)``. Multiplication
distributes over the sum, so such factors can scale each finished element once::

    S0:       tmp(i, j) +=! alpha * A(i, k) * B(k, j)
  →
    S0:       tmp(i, j) +=! A(i, k) * B(k, j)
    S0_scale: tmp(i, j) = alpha * tmp(i, j)

One multiplication per output element instead of one per term, and the contraction
left with plain reads: a register block broadcasts ``A`` straight from memory instead
of evaluating ``alpha * A(i, k)`` into a packed panel per tile, which bounds how deep
the tile may be. Fusion puts the scaling inside the contraction's tile, after its last
reduction step (as it does a bias epilogue).

Only initialised sums (``+=!``) qualify, and only when every factor and product has
the statement's type (so no conversion moves). Like reordering the sum, this changes
rounding only; an empty sum comes out as ``factor * 0`` (NaN for an infinite or NaN
factor, where the term-wise form gives 0). Factors holding a data-dependent read
(a gather) stay put: a hoisted gather would be evaluated even for an empty sum.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang.types import INT64, ScalarType

SCALE_SUFFIX = "_scale"


def hoist_invariant_factors(op: ir.Op) -> ir.Op:
    """``op`` with each sum's reduction-invariant factors moved into a scaling
    statement right after it (see the module docstring)."""
    statements: list[ir.Statement] = []
    for statement in op.statements:
        split = _split_invariant(statement, op.tensor(statement.tensor).type)
        if split is None:
            statements.append(statement)
            continue
        invariant, variant = split
        statements.append(dataclasses.replace(statement, rhs=_product(variant)))
        statements.append(_scale_statement(statement, invariant))
    if len(statements) == len(op.statements):
        return op
    return dataclasses.replace(op, statements=tuple(statements))


def _split_invariant(statement: ir.Statement, element_type: ScalarType
                     ) -> tuple[list[ir.Expr], list[ir.Expr]] | None:
    """The factors of ``statement``'s term that no reduction index changes, and the
    others, in source order; ``None`` where the statement does not qualify."""
    if not (statement.op == "+" and statement.init and statement.reduction_indices):
        return None
    factors = _factors(statement.rhs)
    if any(f.type != element_type for f in factors + [statement.rhs]):
        return None
    reduction = set(statement.reduction_indices)
    invariant = [f for f in factors
                 if not ir.index_names(f) & reduction and not _has_gather(f)
                 and statement.tensor not in _tensors_read(f)]
    variant = [f for f in factors if not any(f is g for g in invariant)]
    if not invariant or not variant:
        return None
    return invariant, variant


def _factors(expr: ir.Expr) -> list[ir.Expr]:
    """The operands of the product tree at the top of ``expr``, left to right."""
    if isinstance(expr, ir.Binary) and expr.op == "*":
        return _factors(expr.lhs) + _factors(expr.rhs)
    return [expr]


def _product(factors: list[ir.Expr]) -> ir.Expr:
    result = factors[0]
    for factor in factors[1:]:
        result = ir.Binary(result.type, "*", result, factor)
    return result


def _has_gather(expr: ir.Expr) -> bool:
    return any(isinstance(e, ir.Read) and any(isinstance(r, ir.Read) for i in e.indices
                                              for r in ir.walk(i))
               for e in ir.walk(expr))


def _tensors_read(expr: ir.Expr) -> set[str]:
    return {e.tensor for e in ir.walk(expr) if isinstance(e, ir.Read)}


def _scale_statement(statement: ir.Statement, invariant: list[ir.Expr]) -> ir.Statement:
    element = ir.Read(statement.rhs.type, statement.tensor,
                      tuple(ir.Index(INT64, i) for i in statement.indices))
    output_ranges = tuple(r for r in statement.domain if r.index in statement.indices)
    return ir.Statement(name=statement.name + SCALE_SUFFIX, tensor=statement.tensor,
                        indices=statement.indices, op="=", init=False,
                        rhs=_product(invariant + [element]), domain=output_ranges,
                        reduction_indices=(), span=statement.span)
