"""Reverse-mode differentiation of one right-hand side: the cotangent each read receives.

For ``rhs`` and a cotangent ``seed`` flowing into it, :func:`read_cotangents` returns,
for every floating-point read ``T(f(i))``, the expression ``seed * ∂rhs/∂T(f(i))`` over
the statement's indices, forward values recomputed inline::

    rhs  = exp(X(n, d) - m(n))            seed = d_Y(n, d)
    X(n, d)  ←  d_Y(n, d) * exp(X(n, d) - m(n))
    m(n)     ←  -(d_Y(n, d) * exp(X(n, d) - m(n)))

A read under a ternary receives its cotangent under the same condition
(``c ? seed * … : 0``), so that every read the partial derivative makes stays
inside the guard that kept the forward read in bounds.

Derivatives at kinks, as torch defines them: ``fmax``/``fmin``/``max``/``min`` split a
tie evenly between the two arguments; ``abs`` has derivative 0 at 0. Integer, boolean
and comparison subexpressions, ``floor``, ``ceil``, ``round``, ``trunc``, ``rint`` and
casts to integers have derivative 0. A function without a derivative here
(``lgamma``, ``tgamma``, ``nextafter``) is a :class:`~polyc.errors.SemanticError`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from polyc.errors import SemanticError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang import types as ty
from polyc.lang.printer import expr_to_tc

# ----------------------------------------------------------------- building expressions


def const(value: float, like: ty.ScalarType) -> ir.Const:
    """A literal of ``like``'s floating type (float32 when ``like`` is not a float)."""
    return ir.Const(like if like.is_float else ty.FLOAT32, float(value))


def is_const(e: ir.Expr, value: float) -> bool:
    return isinstance(e, ir.Const) and not isinstance(e.value, bool) and e.value == value


def _type(a: ir.Expr, b: ir.Expr) -> ty.ScalarType:
    return ty.promote(a.type, isinstance(a, ir.Const), b.type, isinstance(b, ir.Const))[0]


def add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    if isinstance(b, ir.Unary) and b.op == "-":
        return ir.Binary(_type(a, b), "-", a, b.operand)
    return ir.Binary(_type(a, b), "+", a, b)


def sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(b, 0):
        return a
    if is_const(a, 0):
        return neg(b)
    return ir.Binary(_type(a, b), "-", a, b)


def neg(a: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Unary) and a.op == "-":
        return a.operand
    if is_const(a, 0):
        return a
    return ir.Unary(a.type, "-", a)


def mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(a, 0) or is_const(b, 0):
        return const(0, _type(a, b))
    if is_const(a, 1):
        return b
    if is_const(b, 1):
        return a
    if is_const(a, -1):
        return neg(b)
    if is_const(b, -1):
        return neg(a)
    return ir.Binary(_type(a, b), "*", a, b)


def div(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(a, 0):
        return const(0, _type(a, b))
    if is_const(b, 1):
        return a
    return ir.Binary(_type(a, b), "/", a, b)


def select(cond: ir.Expr, then: ir.Expr, other: ir.Expr) -> ir.Expr:
    if is_const(then, 0) and is_const(other, 0):
        return then
    return ir.Select(_type(then, other), cond, then, other)


def compare(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary(ty.BOOL, op, a, b)


def conjunction(conditions) -> ir.Expr | None:
    result = None
    for condition in conditions:
        result = condition if result is None else ir.Binary(ty.BOOL, "&&", result, condition)
    return result


def negation(condition: ir.Expr) -> ir.Expr:
    if isinstance(condition, ir.Unary) and condition.op == "!":
        return condition.operand
    return ir.Unary(ty.BOOL, "!", condition)


def call(function: str, *args: ir.Expr) -> ir.Expr:
    return ir.Call(args[0].type if args[0].type.is_float else ty.FLOAT32, function, args)


def plus_size(index: ir.Expr, offset: sz.SizeExpr) -> ir.Expr:
    """``index + offset`` (``index`` when the offset is 0)."""
    if offset == sz.const(0):
        return index
    if sz.to_tc(offset).startswith("-"):
        return ir.Binary(ty.INT64, "-", index, ir.SizeValue(ty.INT64, sz.neg(offset)))
    return ir.Binary(ty.INT64, "+", index, ir.SizeValue(ty.INT64, offset))


def guarded(conditions: tuple[ir.Expr, ...], value: ir.Expr) -> ir.Expr:
    """``c1 && c2 ? value : 0`` (``value`` when there is no condition)."""
    condition = conjunction(conditions)
    return value if condition is None else select(condition, value, const(0, value.type))


# ----------------------------------------------------------------- reverse mode


@dataclass(frozen=True)
class ReadCotangent:
    """The cotangent one read of a right-hand side receives (guards included)."""

    read: ir.Read
    value: ir.Expr


def read_cotangents(rhs: ir.Expr, seed: ir.Expr, active) -> list[ReadCotangent]:
    """The cotangent of every read of an ``active(tensor)`` floating-point tensor in
    ``rhs`` when ``seed`` flows into ``rhs`` (see the module docstring)."""
    found: list[ReadCotangent] = []
    _backward(rhs, seed, (), active, found)
    return found


def _backward(e: ir.Expr, seed: ir.Expr, guards: tuple[ir.Expr, ...], active, found) -> None:
    if not e.type.is_float or is_const(seed, 0):
        return  # integers, booleans and comparisons: derivative 0
    if isinstance(e, ir.Read):
        if active(e.tensor):
            found.append(ReadCotangent(e, guarded(guards, seed)))
        return
    if isinstance(e, (ir.Const, ir.Index, ir.SizeValue)):
        return
    if isinstance(e, ir.Unary):  # "-" (a float is never the operand of "!")
        _backward(e.operand, neg(seed), guards, active, found)
        return
    if isinstance(e, ir.Cast):
        if e.operand.type.is_float:
            _backward(e.operand, seed, guards, active, found)
        return
    if isinstance(e, ir.Select):
        _backward(e.then, seed, guards + (e.cond,), active, found)
        _backward(e.other, seed, guards + (negation(e.cond),), active, found)
        return
    for operand, partial in _partials(e):
        _backward(operand, mul(seed, partial), guards, active, found)


def _partials(e: ir.Expr) -> list[tuple[ir.Expr, ir.Expr]]:
    """``(operand, ∂e/∂operand)`` for each operand of a binary operation or a call."""
    if isinstance(e, ir.Binary):
        a, b = e.lhs, e.rhs
        one = const(1, e.type)
        if e.op == "+":
            return [(a, one), (b, one)]
        if e.op == "-":
            return [(a, one), (b, const(-1, e.type))]
        if e.op == "*":
            return [(a, b), (b, a)]
        if e.op == "/":
            return [(a, div(one, b)), (b, neg(div(e, b)))]
        if e.op == "%":  # fmod: a - trunc(a / b) * b
            return [(a, one), (b, neg(call("trunc", div(a, b))))]
    if isinstance(e, ir.Call):
        return _call_partials(e)
    raise SemanticError(f"cannot differentiate `{expr_to_tc(e)}`")


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_ZERO_DERIVATIVE = ("floor", "ceil", "round", "trunc", "rint", "nearbyint")


def _call_partials(e: ir.Call) -> list[tuple[ir.Expr, ir.Expr]]:
    f, args = e.function, e.args
    x = args[0]

    def c(value: float) -> ir.Expr:
        return const(value, e.type)

    one = c(1)
    unary = {
        "exp": lambda: e,
        "exp2": lambda: mul(e, c(_LN2)),
        "expm1": lambda: add(e, one),
        "log": lambda: div(one, x),
        "log1p": lambda: div(one, add(one, x)),
        "log2": lambda: div(one, mul(x, c(_LN2))),
        "log10": lambda: div(one, mul(x, c(_LN10))),
        "sqrt": lambda: div(c(0.5), e),
        "rsqrt": lambda: div(mul(c(-0.5), e), x),
        "cbrt": lambda: div(one, mul(c(3), mul(e, e))),
        "tanh": lambda: sub(one, mul(e, e)),
        "sinh": lambda: call("cosh", x),
        "cosh": lambda: call("sinh", x),
        "asinh": lambda: call("rsqrt", add(mul(x, x), one)),
        "acosh": lambda: call("rsqrt", sub(mul(x, x), one)),
        "atanh": lambda: div(one, sub(one, mul(x, x))),
        "sin": lambda: call("cos", x),
        "cos": lambda: neg(call("sin", x)),
        "tan": lambda: add(one, mul(e, e)),
        "asin": lambda: call("rsqrt", sub(one, mul(x, x))),
        "acos": lambda: neg(call("rsqrt", sub(one, mul(x, x)))),
        "atan": lambda: div(one, add(one, mul(x, x))),
        "erf": lambda: mul(c(_TWO_OVER_SQRT_PI), call("exp", neg(mul(x, x)))),
        "erfc": lambda: mul(c(-_TWO_OVER_SQRT_PI), call("exp", neg(mul(x, x)))),
        "fabs": lambda: _sign(x, e.type),
        "abs": lambda: _sign(x, e.type),
    }
    if f in unary:
        return [(x, unary[f]())]
    if f in _ZERO_DERIVATIVE:
        return []
    if f in ("fmax", "fmin", "max", "min"):
        a, b = args
        wins = ">" if f in ("fmax", "max") else "<"
        return [(a, _tie_split(wins, a, b, e.type)), (b, _tie_split(wins, b, a, e.type))]
    if f == "pow":
        a, b = args
        return [(a, mul(b, call("pow", a, sub(b, one)))), (b, mul(e, call("log", a)))]
    if f == "atan2":
        a, b = args
        norm = add(mul(a, a), mul(b, b))
        return [(a, div(b, norm)), (b, neg(div(a, norm)))]
    if f == "hypot":
        a, b = args
        return [(a, div(a, e)), (b, div(b, e))]
    if f == "copysign":
        a, b = args
        return [(a, mul(call("copysign", one, a), call("copysign", one, b)))]
    if f == "fdim":
        a, b = args
        return [(a, select(compare(">", a, b), one, c(0))),
                (b, select(compare(">", a, b), c(-1), c(0)))]
    if f == "fmod":
        a, b = args
        return [(a, one), (b, neg(call("trunc", div(a, b))))]
    if f == "remainder":
        a, b = args
        return [(a, one), (b, neg(call("rint", div(a, b))))]
    if f == "fma":
        a, b, d = args
        return [(a, b), (b, a), (d, one)]
    raise SemanticError(f"cannot differentiate `{expr_to_tc(e)}`: polyc has no derivative "
                        f"of `{f}`")


def _sign(x: ir.Expr, like: ty.ScalarType) -> ir.Expr:
    """1, -1 or 0 (``abs``' derivative, 0 at 0 as in torch)."""
    zero = const(0, like)
    return select(compare(">", x, zero), const(1, like),
                  select(compare("<", x, zero), const(-1, like), zero))


def _tie_split(wins: str, a: ir.Expr, b: ir.Expr, like: ty.ScalarType) -> ir.Expr:
    """``a``'s share of the derivative of max(a, b) (``wins`` ``>``) or min: 1 where it
    wins, 1/2 on a tie."""
    return select(compare(wins, a, b), const(1, like),
                  select(compare("==", a, b), const(0.5, like), const(0, like)))
