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
A factor 1, the dividend of a reciprocal (``X(n, d) * (1.0 / D)``), scales nothing: it
neither moves alone nor stays in the scaling.

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

A sum of terms with different invariant factors, one of them computed from another
reduction, is split into a sum per term (terms with the same other factors share one),
scaled and added once they are finished::

    d_rstd(n) +=! d_Y(n, d) * gamma(d) * (X(n, d) - mu(n))
    d_ss(n) = d_rstd(n) * ...
    d_mu(n) +=! -(d_Y(n, d) * gamma(d) * rstd(n)) - d_ss(n) * (X(n, d) - mu(n))
  →
    d_mu_part(n) +=! d_Y(n, d) * gamma(d)
    d_mu_part1(n) +=! X(n, d) - mu(n)
    ...
    d_mu(n) = -(rstd(n) * d_mu_part(n)) - d_ss(n) * d_mu_part1(n)

As written, the second sum waits for the first (``d_ss`` needs ``d_rstd``: one more
pass over each row); split, its partial sums read only what the first does, and move up
beside it. A layer norm's backward (``polyc.grad_with_residuals``, 4096 × 1024, Zen 5
VM, 2 threads): 1.57-1.72 → 1.35-1.45 ms. Rounding changes as for any reassociation.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang.types import INT64, ScalarType

SCALE_SUFFIX = "_scale"


def hoist_invariant_factors(op: ir.Op) -> ir.Op:
    """``op`` with each sum's reduction-invariant factors and divisors moved into a
    scaling statement right after it (see the module docstring)."""
    op = _split_sums_by_factor(op)
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
    invariant = [f for f in factors if _hoistable(f, statement)]
    divisors = [q for q in quotients if _hoistable(q.rhs, statement)]
    variant = [f for f in factors if not any(f is g for g in invariant)]
    if not (any(map(_scales, invariant)) or divisors) or not variant or \
            len(divisors) != len(quotients):
        return None  # a sign or a 1 alone does not move: a statement for nothing
    return invariant, divisors, variant


def _hoistable(expr: ir.Expr, statement: ir.Statement) -> bool:
    """Whether ``expr`` may scale ``statement``'s finished sum: no reduction index
    changes it, it holds no gather and it does not read the sum."""
    return (not ir.index_names(expr) & set(statement.reduction_indices)
            and not ir.has_gather(expr) and statement.tensor not in ir.tensors_read(expr))


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


def _scales(factor: ir.Expr) -> bool:
    """Whether ``factor`` changes a value's magnitude: not a sign (-1, applied as a
    negation) and not 1, the dividend of a reciprocal (``X(n, d) * (1.0 / D)``), which
    scales nothing (``1 * x`` is ``x`` exactly, for every float and integer)."""
    return not (isinstance(factor, ir.Const) and factor.value in (1, -1))


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
    scaled = _product([f for f in invariant if _scales(f)] + [element])
    for quotient in quotients:
        scaled = ir.Binary(quotient.type, "/", scaled, quotient.rhs)
    if sum(map(_is_sign, invariant)) % 2:
        scaled = ir.Unary(scaled.type, "-", scaled)
    output_ranges = tuple(r for r in statement.domain if r.index in statement.indices)
    return ir.Statement(name=statement.name + SCALE_SUFFIX, tensor=statement.tensor,
                        indices=statement.indices, op="=", init=False,
                        rhs=scaled, domain=output_ranges,
                        reduction_indices=(), span=statement.span)


# ------------------------------------------------------- sums of terms with other factors


def _split_sums_by_factor(op: ir.Op) -> ir.Op:
    """``op`` with each sum whose terms have different invariant factors, one of them
    computed from a reduction, split into one sum per term and their scaled total
    (module docstring)."""
    derived: set[str] = set()  # tensors computed, at some remove, from a reduction
    taken = set(op.tensors) | set(op.sizes)
    statements: list[ir.Statement] = []
    temporaries: list[ir.Tensor] = []
    for statement in op.statements:
        split = _split_by_factor(statement, op.tensor(statement.tensor), derived, taken)
        if split is None:
            statements.append(statement)
        else:
            parts, total = split
            temporaries += [tensor for tensor, _ in parts]
            placed = -1
            for _, part in parts:  # as early as what it reads allows (in term order):
                # beside the sums it no longer waits for, where the scheduler fuses it
                writers = [k for k, s in enumerate(statements)
                           if s.tensor in part.tensors_read]
                placed = max(max(writers, default=-1), placed) + 1
                statements.insert(placed, part)
            statements.append(total)
        if statement.reduction_indices or statement.tensors_read & derived:
            derived.add(statement.tensor)
    if not temporaries:
        return op
    return dataclasses.replace(op, statements=tuple(statements),
                               temporaries=op.temporaries + tuple(temporaries))


def _split_by_factor(statement: ir.Statement, tensor: ir.Tensor, derived: set[str],
                     taken: set[str]
                     ) -> tuple[list[tuple[ir.Tensor, ir.Statement]], ir.Statement] | None:
    """``([(partial sum's tensor, its statement)], total)`` for ``statement``, or
    ``None`` where it does not qualify."""
    element = tensor.type
    if not (statement.op == "+" and statement.init and statement.reduction_indices
            and element.is_float and statement.rhs.type == element) or \
            _output_ranges_need_reduction(statement):
        return None
    terms = []  # (invariant factors, the rest's product)
    for negated, term in _signed_terms(statement.rhs):
        factors, _ = _factors(term, divides=False)
        if any(f.type != element for f in factors):
            return None
        invariant = [f for f in factors if _hoistable(f, statement)]
        variant = [f for f in factors if not any(f is g for g in invariant)]
        if not variant:
            return None
        terms.append(([_sign(element)] * negated + invariant, _product(variant)))
    if len(terms) < 2 or not any(ir.tensors_read(f) & derived
                                 for invariant, _ in terms for f in invariant):
        return None  # no factor waits on another reduction: one sum serves
    sums: dict[ir.Expr, tuple[ir.Tensor, ir.Statement]] = {}
    for _, variant in terms:
        if variant not in sums:
            name = ir.fresh_name(f"{statement.tensor}_part", taken, separator="")
            taken.add(name)
            part = ir.Tensor(name, element, tensor.shape, ir.TEMPORARY)
            sums[variant] = (part, dataclasses.replace(
                statement, name=f"{statement.name}_part{len(sums)}", tensor=name,
                rhs=variant))
    at = tuple(ir.Index(INT64, i) for i in statement.indices)
    total = None
    for invariant, variant in terms:
        read = ir.Read(element, sums[variant][0].name, at)
        scaled = _product([f for f in invariant if _scales(f)] + [read])
        if sum(map(_is_sign, invariant)) % 2:
            total = ir.Unary(element, "-", scaled) if total is None else \
                ir.Binary(element, "-", total, scaled)
        else:
            total = scaled if total is None else ir.Binary(element, "+", total, scaled)
    output_ranges = tuple(r for r in statement.domain if r.index in statement.indices)
    return list(sums.values()), dataclasses.replace(
        statement, op="=", init=False, rhs=total, domain=output_ranges,
        reduction_indices=())


def _signed_terms(expr: ir.Expr, negated: bool = False) -> list[tuple[bool, ir.Expr]]:
    """The terms of ``expr`` read as a sum, each with whether it is subtracted."""
    if isinstance(expr, ir.Binary) and expr.op in ("+", "-") and \
            expr.lhs.type == expr.type == expr.rhs.type:
        return _signed_terms(expr.lhs, negated) + _signed_terms(
            expr.rhs, negated != (expr.op == "-"))
    return [(negated, expr)]
