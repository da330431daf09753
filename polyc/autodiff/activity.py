"""Which forward values the backward differentiates: those that depend on a
differentiated input, except through a value the outputs do not depend on.

Softmax subtracts each row's maximum before ``exp`` and divides by the sum of the
results; ``Y = exp(X - m) / Σ exp(X - m)`` is the same for every ``m``, so ``∂Y/∂m`` is
zero. Differentiated through anyway, the maximum costs a count of the ties, one more
sum per row and a masked division per element, to add a sum that is zero but for
rounding. :func:`active_versions` proves which versions the outputs do not depend on
and makes them constants of the backward.

The proof. Perturb a version ``v`` by an arbitrary ``δ``, ``v(a) → v(a) + δ(a)``, and
follow the statements after it. Each value then changes in one of two ways, its
*effect*, with ``k`` a rational number and ``at`` the element of ``δ`` (affine in the
statement's indices)::

    shift(k, at):   value + k·δ(at)          v itself: shift(1, its indices)
    scale(k, at):   value · exp(k·δ(at))     exp(shift(k)) = scale(k), log(scale(k)) = shift(k)

``+``/``-`` add shifts; ``*``/``/`` add scales; ``sqrt``, ``rsqrt`` and ``pow`` by a
constant multiply a scale; ``max``/``min``, comparisons and ternaries need operands with
one effect; a sum over indices keeps a scale whose ``at`` does not mention them, a
maximum or minimum keeps either. Anything else (a shift times a value, a sum of shifts,
a gather through the perturbed value) is *unknown*, and ``v`` is then not proven. ``v``
is invariant when every output of the operator comes out unchanged (``k = 0``):
softmax's ``e / row_sum`` is ``scale(-1) / scale(-1)``; log-softmax's
``X - m - log(row_sum)`` is ``shift(-1) - shift(-1)``. Changing ``v`` by any ``δ``
leaves the outputs as they are, so every partial derivative of an output with respect
to an element of ``v`` is zero, and so is every term of the chain rule that passes
through ``v``: dropping them changes the gradient only by rounding. Several such
values are dropped together: the terms through each sum to zero on their own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import LinearIndex, affine_of, linear_sum, scaled


@dataclass(frozen=True)
class Effect:
    """How a value changes when the perturbed version does (see the module docstring);
    ``k == 0``: not at all (``at`` is then ``None``)."""

    kind: str                       # "shift" or "scale"
    k: Fraction
    at: tuple[LinearIndex, ...] | None

    @property
    def unchanged(self) -> bool:
        return self.k == 0


UNCHANGED = Effect("shift", Fraction(0), None)
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _effect(kind: str, k: Fraction, at) -> Effect:
    return UNCHANGED if k == 0 else Effect(kind, k, at)


def active_versions(steps, wrt, inputs, outputs) -> tuple[set[str], frozenset[str]]:
    """``(active, constants)``: the versions that depend on an input named in ``wrt``,
    not through a constant; the constants, versions no version in ``outputs`` depends on.

    ``steps``: the forward statements on versions, in order, each with ``.statement``
    (its reads renamed to versions), ``.version`` and ``.previous`` (the version it
    updates, or ``None``); ``inputs``: the operator's input names."""
    active = _depending(steps, wrt, frozenset())
    outputs = frozenset(outputs)
    constants = frozenset(
        step.version.name for step in steps if step.version.name in active
        and step.version.name not in inputs and step.version.type.is_float
        and _outputs_unchanged(steps, step.version.name, outputs))
    return (_depending(steps, wrt, constants) if constants else active), constants


def _depending(steps, wrt, constants: frozenset[str]) -> set[str]:
    """The versions that depend on an input named in ``wrt``, not through ``constants``."""
    active = set(wrt)
    for step in steps:
        if step.version.name in constants:
            continue
        reads = ir.tensors_read(step.statement.rhs)
        if (reads & active and step.version.type.is_float) or \
                (step.previous is not None and step.previous.name in active):
            active.add(step.version.name)
    return active


def _outputs_unchanged(steps, perturbed: str, outputs: frozenset[str]) -> bool:
    effects: dict[str, tuple[Effect | None, tuple[str, ...]]] = {}
    after = False
    for step in steps:
        name = step.version.name
        if not after:
            after = name == perturbed
            if after:
                effects[name] = (Effect("shift", Fraction(1), _at(step.statement.indices)),
                                 step.statement.indices)
            continue
        # None: unknown, which matters only if it reaches an output
        effects[name] = (_statement_effect(step, effects), step.statement.indices)
    return after and all(effects.get(o, (UNCHANGED,))[0] == UNCHANGED for o in outputs)


def _statement_effect(step, effects) -> Effect | None:
    statement = step.statement
    value = _expr_effect(statement.rhs, effects)
    if value is None:
        return None
    if statement.is_reduction and not value.unchanged:
        if statement.op == "*" or (statement.op == "+" and value.kind != "scale"):
            return None  # a product, or a sum of shifts: not followed
        summed = set(statement.reduction_indices)
        if any(summed & set(a.indices) for a in value.at):
            return None  # the terms change by different elements of δ
    if step.previous is not None:  # the value it updates, or keeps where it does not write
        previous = _read_effect(step.previous.name, _at(statement.indices), effects)
        return _same(previous, value)
    return value


def _at(indices: tuple[str, ...]) -> tuple[LinearIndex, ...]:
    """The element the statement's indices name, as affine forms."""
    return tuple(LinearIndex(((i, 1),), sz.const(0)) for i in indices)


def _read_effect(tensor: str, indices: tuple[LinearIndex | None, ...], effects
                 ) -> Effect | None:
    effect, names = effects.get(tensor, (UNCHANGED, ()))
    if effect is None or effect.unchanged:
        return effect
    if any(i is None for i in indices):
        return None  # a gather from a changed tensor
    values = dict(zip(names, indices))
    return Effect(effect.kind, effect.k, tuple(_substituted(a, values) for a in effect.at))


def _substituted(linear: LinearIndex, values: dict[str, LinearIndex]) -> LinearIndex:
    """``linear`` with each index replaced by its value."""
    result = LinearIndex((), linear.offset)
    for name, c in linear.coefficients:
        result = linear_sum(result, scaled(values[name], c))
    return result


def _expr_effect(e: ir.Expr, effects) -> Effect | None:
    """``e``'s effect, ``None``: unknown."""
    if isinstance(e, ir.Read):
        if any(_expr_effect(i, effects) != UNCHANGED for i in e.indices):
            return None
        return _read_effect(e.tensor, tuple(affine_of(i) for i in e.indices), effects)
    operands = [_expr_effect(c, effects) for c in ir.children(e)]
    if any(o is None for o in operands):
        return None
    if all(o.unchanged for o in operands):
        return UNCHANGED
    if isinstance(e, ir.Unary):
        (a,) = operands
        return _effect(a.kind, -a.k if a.kind == "shift" else a.k, a.at) if e.op == "-" \
            else None
    if isinstance(e, ir.Cast):
        return operands[0] if e.type.is_float else None
    if isinstance(e, ir.Select):
        cond, then, other = operands
        return _same(then, other) if cond.unchanged else None
    if isinstance(e, ir.Binary):
        return _binary_effect(e.op, *operands)
    if isinstance(e, ir.Call):
        return _call_effect(e, operands)
    return None


def _binary_effect(op: str, a: Effect, b: Effect) -> Effect | None:
    if op in COMPARISONS:  # a common shift, or a common positive factor, keeps the order
        return UNCHANGED if _same(a, b) is not None else None
    sign = {"+": 1, "-": -1, "*": 1, "/": -1}.get(op)
    kind = "shift" if op in "+-" else "scale"
    if sign is None or any(not x.unchanged and x.kind != kind for x in (a, b)):
        return None
    at = _common_at(a, b)
    if at is None:
        return None
    return _effect(kind, a.k + sign * b.k, at)


def _call_effect(e: ir.Call, operands: list[Effect]) -> Effect | None:
    f, a = e.function, operands[0]
    if f in ("fmax", "fmin", "max", "min"):
        return _same(*operands)
    if len(operands) == 1:
        if f == "exp" and a.kind == "shift":
            return Effect("scale", a.k, a.at)
        if f == "log" and a.kind == "scale":
            return Effect("shift", a.k, a.at)
        powers = {"sqrt": Fraction(1, 2), "rsqrt": Fraction(-1, 2), "fabs": 1, "abs": 1}
        if f in powers and a.kind == "scale":
            return _effect("scale", a.k * powers[f], a.at)
        return None
    exponent = e.args[1] if f == "pow" else None
    if isinstance(exponent, ir.Const) and not isinstance(exponent.value, bool) and \
            math.isfinite(exponent.value) and a.kind == "scale":
        return _effect("scale", a.k * Fraction(e.args[1].value), a.at)
    return None


def _common_at(a: Effect, b: Effect):
    """The element both change by (either's when one is unchanged); ``None``: different
    elements."""
    if a.unchanged or b.unchanged:
        return b.at if a.unchanged else a.at
    return a.at if a.at == b.at else None


def _same(a: Effect | None, b: Effect | None) -> Effect | None:
    """The effect of a value that is ``a`` or ``b`` (a maximum, a ternary): theirs when
    they are equal."""
    if a is None or b is None:
        return None
    return a if a == b else None
