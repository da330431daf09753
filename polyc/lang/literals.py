"""Expressions of literals alone, which TC types weakly.

A literal (``0.1``, ``2``) is *weak*: it takes the type of the operation it meets, and
so does an expression of literals alone (``1.0 / 9.0``). Sema computes such an
expression in the wider floating type it meets (:func:`widened`); the printer pins a
temporary that one defines to its type (:func:`literals_alone`), since reading the
text back would give it float32.
"""
from __future__ import annotations

from dataclasses import replace

from polyc.lang import ir
from polyc.lang import types as ty


def widened(expr: ir.Expr, elem: ty.ScalarType) -> ir.Expr:
    """``expr``, a weak floating expression, computed in the wider ``elem``: its float
    literals and the operations on them retyped (indices and sizes stay integers)."""
    if not expr.type.is_float:
        return expr
    if isinstance(expr, ir.Const):
        return ir.Const(elem, float(expr.value))
    if isinstance(expr, (ir.Unary, ir.Binary, ir.Select, ir.Call)):
        return replace(ir.map_children(expr, lambda child: widened(child, elem)), type=elem)
    return expr


def literals_alone(e: ir.Expr) -> bool:
    """Whether ``e`` reads no tensor and casts nothing (TC types it as literals)."""
    return not any(isinstance(part, (ir.Read, ir.Cast)) for part in ir.walk(e))
