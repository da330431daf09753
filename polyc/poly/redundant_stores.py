"""Redundant stores: a statement that stores a constant where every element it writes
already holds that constant is dropped, proven with isl.

Splitting a select on the indices (:mod:`polyc.rewrite.split_selects`) leaves such
stores behind. In ::

    D(i, j) +=! j <= i ? A(i, k) * A(j, k) : 0.0
    D(i, j) = j <= i ? alpha * D(i, j) + beta * C(i, j) : 0.0

the second statement's upper piece, ``D(i, j) = 0.0 where j in i + 1:N``, writes zeros
over the zeros the ``!`` initialisation wrote, and no statement in between writes there.
Kept, it would share the triangle's loop nest and cut its tiles apart; dropped, the
select spelling compiles to the same loops as ``where j in 0:i + 1``.

Statements run in program order, each over its whole domain, so walking them in order
with, for each tensor and constant, the set of elements known to hold that constant is
exact: a ``+=!``/``*=!`` initialisation stores its identity (0, 1), an ``X(...) = c``
stores ``c``, and any other write leaves its elements unknown.
"""
from __future__ import annotations

import dataclasses
import math

import islpy as isl

from polyc.lang import ir
from polyc.lang.types import INT64
from polyc.poly.program import known_context, params_prefix, poly_statements, touched_elements


def drop_redundant_stores(op: ir.Op) -> ir.Op:
    """``op`` without the constant stores that change no element (module docstring)."""
    if not any(_stored_constant(s) is not None for s in op.statements):
        return op
    prefix, context, tensors = params_prefix(op), known_context(op), op.tensors
    holding: dict[tuple[str, float, bool], isl.Set] = {}  # (tensor, value, sign) -> elements
    redundant = set()
    for stmt in poly_statements(op):
        statement = stmt.statement
        lhs = tuple(ir.Index(INT64, i) for i in statement.indices)
        written = touched_elements(stmt, tensors[statement.tensor], lhs, None, prefix, context)
        if written.is_empty():
            continue  # no instances: it writes nothing, and is kept as written
        value = (ir.LITERAL_IDENTITIES.get(statement.op) if stmt.is_init
                 else _stored_constant(statement))
        key = None if value is None else (statement.tensor, float(value),
                                          math.copysign(1.0, value) > 0)
        if key is not None and not stmt.is_init and key in holding \
                and written.is_subset(holding[key]):
            redundant.add(statement.name)
            continue
        for other in holding:
            if other[0] == statement.tensor and other != key:
                holding[other] = holding[other].subtract(written)
        if key is not None:
            holding[key] = holding[key].union(written) if key in holding else written
    if not redundant:
        return op
    return dataclasses.replace(
        op, statements=tuple(s for s in op.statements if s.name not in redundant))


def _stored_constant(statement: ir.Statement) -> int | float | None:
    """The literal an ``X(...) = c`` stores, else None."""
    if statement.op == "=" and isinstance(statement.rhs, ir.Const) \
            and not isinstance(statement.rhs.value, bool):
        return statement.rhs.value
    return None
