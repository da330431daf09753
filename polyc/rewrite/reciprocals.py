"""Division by a value that a loop of the statement does not change: a multiplication by
its reciprocal.

A layer norm is as naturally written with a division as with ``rsqrt``::

    Y(n, d) = (X(n, d) - mean(n)) / sqrt(var(n) + eps) * gamma(d) + beta(d)
  →
    Y(n, d) = (X(n, d) - mean(n)) * (1 / sqrt(var(n) + eps)) * gamma(d) + beta(d)

The reciprocal reads nothing the loop over ``d`` changes, so the C compiler computes it
once per row (loop-invariant code motion, as for ``rsqrt``); each element then costs a
multiplication instead of a division, which a core issues only every 4 to 16 cycles
where it issues two multiplications per cycle (the layer norm, 4096 × 1024, 2 threads:
benchmarks/README.md, "Design measurements"). A softmax's ``e(n, d) / row_sum(n)`` and
a mean's ``sum(n) / D`` are the same case; a divisor that every loop changes stays a
division (its reciprocal would cost the same division and a multiplication more).

Only floating quotients qualify (integer division has no reciprocal), and only where
the dividend changes along an index that the divisor does not (the quotient as a
whole is otherwise invariant already). The rewrite leaves what is read and when
unchanged: the reciprocal is an expression in the same place. Rounding: ``x * (1 / d)``
rounds twice, so it can differ from the correctly rounded ``x / d`` in the last place
(by at most one unit: it is within 1.5 units of the exact quotient, ``x / d`` within
half of one), as gcc's ``-freciprocal-math`` would; ``1 / d`` overflows to infinity for
a ``d`` below the reciprocal of the largest float (``x / d`` might still be finite).
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir


def multiply_by_reciprocals(op: ir.Op) -> ir.Op:
    """``op`` with each floating division by a value one of its statement's loops does
    not change written as a multiplication by its reciprocal (module docstring)."""
    statements = tuple(dataclasses.replace(s, rhs=_rewritten(s.rhs, s)) for s in op.statements)
    if statements == op.statements:
        return op
    return dataclasses.replace(op, statements=statements)


def _rewritten(expr: ir.Expr, statement: ir.Statement) -> ir.Expr:
    loops = frozenset(r.index for r in statement.domain)

    def reciprocal(e: ir.Expr) -> ir.Expr | None:
        if not (isinstance(e, ir.Binary) and e.op == "/" and e.type.is_float):
            return None
        dividend, divisor = _rewritten(e.lhs, statement), _rewritten(e.rhs, statement)
        if not (ir.index_names(dividend) - ir.index_names(divisor)) & loops:
            return dataclasses.replace(e, lhs=dividend, rhs=divisor)
        inverse = ir.Binary(e.type, "/", ir.Const(e.type, 1.0), divisor)
        return ir.Binary(e.type, "*", dividend, inverse)

    return ir.rewrite(expr, reciprocal)
