"""Reduction-invariant factors and divisors: scale the finished sum, not every term.

A sum's term may be a product with factors that no reduction index changes:
``alpha`` in PolyBench's ``tmp(i, j) +=! alpha * A(i, k) * B(k, j)``, or a quotient
by such a divisor: ``D`` in a mean written ``mu(n) +=! X(n, d) / D``. Multiplication
and division distribute over the sum, so they can scale each finished element once::

    S0:       tmp(i, j) +=! alpha * A(i, k) * B(k, j)
  →
    S0:       tmp(i, j) +=! A(i, k) * B(k, j)
    S0_scale: tmp(i, j) = alpha * tmp(i, j)

    S1:       var(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n)) / D
  →
    S1:       var(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n))
    S1_scale: var(n) = var(n) / D

A division per term is the slowest arithmetic a row reduction does (measured on a
layer norm spelled with ``/ D`` inside both sums and with the division after them:
benchmarks/README.md, "Design measurements"); the rewrite makes both spellings one
program.

A negation is a factor ``-1`` (exact): the adjoint ``d_mu(n) +=! -(d_Y(n, d) * gamma(d) *
rstd(n))`` that polyc.grad derives for a mean becomes a plain sum scaled by ``-rstd(n)``;
a sign alone stays in the sum (moving it would add a statement and save nothing).

One multiplication per output element instead of one per term, and the contraction
left with plain reads: a register block broadcasts ``A`` straight from memory instead
of evaluating ``alpha * A(i, k)`` into a packed panel per tile, which bounds how deep
the tile may be. Fusion puts the scaling inside the contraction's tile, after its last
reduction step (as it does a bias epilogue).

Only initialised sums (``+=!``) qualify, divisors only in floating sums (integer
division does not distribute), and only when every factor, product and quotient has
the statement's type (so no conversion moves; a divisor converts to it in the
quotient as in the scaling). Like reordering the sum, this changes rounding only; an
empty sum comes out as ``factor * 0`` or ``0 / divisor`` (NaN for an infinite or NaN
factor, or a zero divisor: the mean of no values, where the term-wise form gives 0).
Factors holding a data-dependent read
(a gather) stay put: a hoisted gather would be evaluated even for an empty sum.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang.types import INT64, ScalarType

SCALE_SUFFIX = "_scale"


def hoist_invariant_factors(op: ir.Op) -> ir.Op:
    """``op`` with each sum's reduction-invariant factors and divisors moved into a
    scaling statement right after it (see the module docstring)."""
    statements: list[ir.Statement] = []
    for statement in op.statements:
        split = _split_invariant(statement, op.tensor(statement.tensor).type)
        if split is None or _output_ranges_need_reduction(statement):
            statements.append(statement)
            continue
        invariant, divisors, variant = split
        statements.append(dataclasses.replace(statement, rhs=_product(variant)))
        statements.append(_scale_statement(statement, invariant, divisors))
    if len(statements) == len(op.statements):
        return op
    return dataclasses.replace(op, statements=tuple(statements))


def _split_invariant(statement: ir.Statement, element_type: ScalarType
                     ) -> tuple[list[ir.Expr], list[ir.Binary], list[ir.Expr]] | None:
    """The factors of ``statement``'s term that no reduction index changes, the
    quotients (``x / d``) by such divisors, and the other factors, in source order;
    ``None`` where the statement does not qualify."""
    if not (statement.op == "+" and statement.init and statement.reduction_indices):
        return None
    factors, quotients = _factors(statement.rhs, divides=element_type.is_float)
    if any(f.type != element_type for f in factors + quotients + [statement.rhs]):
        return None
    reduction = set(statement.reduction_indices)

    def hoistable(expr: ir.Expr) -> bool:
        return (not ir.index_names(expr) & reduction and not ir.has_gather(expr)
                and statement.tensor not in ir.tensors_read(expr))

    invariant = [f for f in factors if hoistable(f)]
    divisors = [q for q in quotients if hoistable(q.rhs)]
    variant = [f for f in factors if not any(f is g for g in invariant)]
    if not (any(not _is_sign(f) for f in invariant) or divisors) or not variant or \
            len(divisors) != len(quotients):
        return None  # a sign alone does not move: it would add a statement for nothing
    return invariant, divisors, variant


def _factors(expr: ir.Expr, divides: bool) -> tuple[list[ir.Expr], list[ir.Binary]]:
    """The operands of the product tree at the top of ``expr`` (left to right, a
    quotient's dividend among them) and, where ``divides`` (a floating sum: integer
    division does not distribute), the quotients whose divisors it divides by."""
    if isinstance(expr, ir.Binary) and expr.op == "*":
        (left, left_quotients), (right, right_quotients) = (_factors(expr.lhs, divides),
                                                            _factors(expr.rhs, divides))
        return left + right, left_quotients + right_quotients
    if divides and isinstance(expr, ir.Binary) and expr.op == "/":
        factors, quotients = _factors(expr.lhs, divides)
        return factors, quotients + [expr]
    if isinstance(expr, ir.Unary) and expr.op == "-":
        factors, quotients = _factors(expr.operand, divides)
        return [_sign(expr.type)] + factors, quotients
    return [expr], []


def _sign(element_type: ScalarType) -> ir.Const:
    """A negation as a factor: ``-x`` is ``-1 * x`` (exactly, also for wrapping integers)."""
    return ir.Const(element_type, -1.0 if element_type.is_float else -1)


def _is_sign(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.Const) and expr.value == -1


def _output_ranges_need_reduction(statement: ir.Statement) -> bool:
    """Whether a left-hand range depends on a reduction index (``i in k:N``): the scaling
    statement, over the left-hand ranges alone, could not say where ``i`` starts."""
    return any(r.depends_on - set(statement.indices)
               for r in statement.domain if r.index in statement.indices)


def _product(factors: list[ir.Expr]) -> ir.Expr:
    result = factors[0]
    for factor in factors[1:]:
        result = ir.Binary(result.type, "*", result, factor)
    return result


def _scale_statement(statement: ir.Statement, invariant: list[ir.Expr],
                     quotients: list[ir.Binary]) -> ir.Statement:
    """``tensor(indices) = factors * tensor(indices) / divisor / ...``."""
    element = ir.Read(statement.rhs.type, statement.tensor,
                      tuple(ir.Index(INT64, i) for i in statement.indices))
    scaled = _product([f for f in invariant if not _is_sign(f)] + [element])
    for quotient in quotients:
        scaled = ir.Binary(quotient.type, "/", scaled, quotient.rhs)
    if sum(map(_is_sign, invariant)) % 2:
        scaled = ir.Unary(scaled.type, "-", scaled)
    output_ranges = tuple(r for r in statement.domain if r.index in statement.indices)
    return ir.Statement(name=statement.name + SCALE_SUFFIX, tensor=statement.tensor,
                        indices=statement.indices, op="=", init=False,
                        rhs=scaled, domain=output_ranges,
                        reduction_indices=(), span=statement.span)
