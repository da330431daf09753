"""Indices a reduction's data selects: the terms are the identity except at one value.

The adjoint of a gather (:mod:`polyc.autodiff.inversion`) sums over every lookup::

    d_E(v, d) +=! v == I(b, l) ? d_O(b, d) : 0.0

At given ``d``, ``b`` and ``l``, every ``v`` but ``I(b, l)`` adds 0: the loop over ``v``
has one iteration that changes anything, and the value of its index is data. Run as one
iteration (:mod:`polyc.scheduling.selected_loops` puts the loop inside those of the
data's indices; :mod:`polyc.codegen.selected_iteration` emits it), the adjoint is a
scatter-add: one pass over the lookups, not one per row of ``E``. The loop keeps its
bounds, so a value outside them (an out-of-range index) runs no iteration, as before.
"""
from __future__ import annotations

from polyc.lang import ir
from polyc.lang.guards import guarded_reads


def selected_indices(statement: ir.Statement) -> dict[str, ir.Expr]:
    """For each index ``v`` of ``statement`` whose terms are the reduction's identity
    unless ``v == e``, a conjunct of the ternary's condition: the expression ``e``
    (integer, not using ``v``, not reading the tensor the statement writes). Code
    generation evaluates ``e`` before the loop over ``v``, so it is either evaluated
    wherever the statement is (C evaluates the conjunct first) or safe to evaluate
    anywhere."""
    identity = ir.LITERAL_IDENTITIES.get(statement.op)
    rhs = statement.rhs
    if identity is None or not isinstance(rhs, ir.Select) or \
            not isinstance(rhs.other, ir.Const) or rhs.other.value != identity:
        return {}
    unconditional = {id(e) for e in ir.walk_unconditional(rhs)}
    unguarded = {id(read) for read, guard in guarded_reads(rhs) if guard is None}
    indices = {r.index for r in statement.domain}
    selected: dict[str, ir.Expr] = {}
    for condition in _conjuncts(rhs.cond):
        if not isinstance(condition, ir.Binary) or condition.op != "==":
            continue
        for index, value in ((condition.lhs, condition.rhs), (condition.rhs, condition.lhs)):
            if isinstance(index, ir.Index) and index.name in indices and \
                    index.name not in ir.index_names(value) and \
                    value.type.kind in ("int", "uint") and \
                    statement.tensor not in ir.tensors_read(value) and \
                    (id(condition) in unconditional or _safe_anywhere(value, unguarded)):
                selected.setdefault(index.name, value)
    return selected


def _safe_anywhere(value: ir.Expr, unguarded: set[int]) -> bool:
    """Whether ``value`` may be evaluated where C would not have (on the right of ``&&``):
    no gathers (whose index check could fail there), and reads proven in bounds without a
    guard (:mod:`polyc.lang.guards`)."""
    return not ir.has_gather(value) and all(
        id(e) in unguarded for e in ir.walk(value) if isinstance(e, ir.Read))


def _conjuncts(condition: ir.Expr) -> list[ir.Expr]:
    if isinstance(condition, ir.Binary) and condition.op == "&&":
        return _conjuncts(condition.lhs) + _conjuncts(condition.rhs)
    return [condition]
