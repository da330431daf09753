"""Guards: the affine conditions under which a read is evaluated.

A read under a ternary, or on the right of ``&&`` or ``||``, happens only where the
condition that selects it holds::

    B(i) = i >= 1 ? A(i - 1) : 0.0              reads A(i - 1) only where i >= 1
    d_I(h) +=! h - r >= 0 && h - r < HO ? d_O(h - r) * W(r) : 0.0

The access relations (:mod:`polyc.poly.program`) and the bounds proof
(:mod:`polyc.poly.bounds`) restrict each read to the points where its guard holds,
so that a read a guard keeps inside its tensor is proven in bounds and depends only
on what it really reads. The C code evaluates a ternary's branches and ``&&``/``||``
operands only when selected (C's ternary and short-circuit), and no rewrite moves a
read out from under its guard (:mod:`polyc.rewrite.common_values` leaves guarded
values alone).

A guard is the conjunction of the conditions above the read that isl can state:
comparisons of affine integer expressions of indices and sizes, divisibility
``e % c == 0`` by a positive constant, and ``!``, ``&&``, ``||`` of those. A condition
on data (``X(i) > 0``) says nothing about where the read happens and is left out,
which only widens the relation (the read is then assumed everywhere above it).
"""
from __future__ import annotations

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import affine_of, linear_to_isl

_COMPARE = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "!="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def guarded_reads(expr: ir.Expr) -> list[tuple[ir.Read, str | None]]:
    """Every read in ``expr`` (gather indices included), each with the isl text of its
    guard (``None``: evaluated wherever ``expr`` is)."""
    found: list[tuple[ir.Read, str | None]] = []
    _collect(expr, (), found)
    return found


def _collect(expr: ir.Expr, guards: tuple[str, ...], found: list) -> None:
    if isinstance(expr, ir.Read):
        found.append((expr, " and ".join(f"({g})" for g in guards) if guards else None))
        for index in expr.indices:
            _collect(index, guards, found)
        return
    if isinstance(expr, ir.Select):
        _collect(expr.cond, guards, found)
        for branch, negate in ((expr.then, False), (expr.other, True)):
            condition = condition_to_isl(expr.cond, negate)
            _collect(branch, guards + ((condition,) if condition else ()), found)
        return
    if isinstance(expr, ir.Binary) and expr.op in ("&&", "||"):
        _collect(expr.lhs, guards, found)
        condition = condition_to_isl(expr.lhs, negate=expr.op == "||")
        _collect(expr.rhs, guards + ((condition,) if condition else ()), found)
        return
    for child in ir.children(expr):
        _collect(child, guards, found)


def condition_to_isl(expr: ir.Expr, negate: bool = False) -> str | None:
    """isl text of a condition that ``expr`` (negated if asked) implies, or ``None``
    when isl can state nothing it implies (see the module docstring)."""
    if isinstance(expr, ir.Unary) and expr.op == "!":
        return condition_to_isl(expr.operand, not negate)
    if isinstance(expr, ir.Const) and isinstance(expr.value, bool):
        return "1 = 1" if expr.value != negate else "1 = 0"
    if isinstance(expr, ir.Binary) and expr.op in ("&&", "||"):
        lhs = condition_to_isl(expr.lhs, negate)
        rhs = condition_to_isl(expr.rhs, negate)
        conjunction = (expr.op == "&&") != negate
        if conjunction:
            known = [part for part in (lhs, rhs) if part]
            return " and ".join(f"({part})" for part in known) if known else None
        return None if lhs is None or rhs is None else f"({lhs}) or ({rhs})"
    if isinstance(expr, ir.Binary) and expr.op in _COMPARE:
        op = _NEGATED[expr.op] if negate else expr.op
        divisible = _divisibility(expr.lhs, expr.rhs) if op in ("==", "!=") else None
        if divisible is not None:
            return divisible if op == "==" else f"not ({divisible})"
        lhs, rhs = _integer_affine(expr.lhs), _integer_affine(expr.rhs)
        if lhs is None or rhs is None:
            return None
        if op == "!=":
            return f"{lhs} < {rhs} or {lhs} > {rhs}"
        return f"{lhs} {_COMPARE[op]} {rhs}"
    return None


def _integer_affine(expr: ir.Expr) -> str | None:
    if not expr.type.is_integral or expr.type.kind == "bool":
        return None
    linear = affine_of(expr)
    if linear is None:
        return None
    return f"({linear_to_isl(linear)})"


def _divisibility(lhs: ir.Expr, rhs: ir.Expr) -> str | None:
    """``e mod c = 0`` for ``e % c == 0`` (either side), ``c`` a positive constant;
    C's truncating ``%`` and isl's ``mod`` agree on which values are multiples."""
    for remainder, zero in ((lhs, rhs), (rhs, lhs)):
        if not (isinstance(zero, ir.Const) and zero.value == 0 and not isinstance(
                zero.value, bool) and isinstance(remainder, ir.Binary) and remainder.op == "%"):
            continue
        dividend = _integer_affine(remainder.lhs)
        divisor = affine_of(remainder.rhs) if remainder.rhs.type.is_integral else None
        if dividend is None or divisor is None or divisor.coefficients:
            continue
        if isinstance(divisor.offset, sz.Affine) and divisor.offset.is_constant \
                and divisor.offset.const > 0:
            return f"{dividend} mod {divisor.offset.const} = 0"
    return None
