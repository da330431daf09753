"""Inlining of call statements: ``O1, O2 = other(A, B)`` becomes ``other``'s body.

Works on the syntax tree, before sema. The callee's parameters are renamed to
the caller's arguments, its outputs to the call's targets, its temporaries to
fresh names (``other_T__1``), and each of its size variables to the extent of
the argument it comes from (``T.k``), which sema resolves like any other
dimension query. A single-target ``x = f(A, B)`` where ``f`` is a def (and
not a tensor or builtin) is a call statement too.
"""
from __future__ import annotations

import dataclasses
import itertools

from polyc.errors import SemanticError
from polyc.lang import ast


def inline_calls(program: ast.Program, definition: ast.Def) -> ast.Def:
    """``definition`` with every call statement replaced by the callee's statements."""
    defs = {d.name: d for d in program.defs}
    counter = itertools.count(1)
    return _inline(definition, defs, (definition.name,), counter)


def _inline(definition: ast.Def, defs, stack: tuple[str, ...], counter) -> ast.Def:
    tensors = {p.name for p in definition.params} | {o.name for o in definition.outputs}
    body: list[ast.Stmt] = []
    for stmt in definition.body:
        call = _as_call(stmt, defs, tensors)
        if call is None:
            body.append(stmt)
            if isinstance(stmt, ast.Assign):
                tensors.add(stmt.tensor)
            continue
        if call.callee in stack:
            raise SemanticError(f"recursive call of `{call.callee}` "
                                f"({' -> '.join(stack + (call.callee,))})", call.span)
        callee = _inline(defs[call.callee], defs, stack + (call.callee,), counter)
        body.extend(_instantiate(callee, call, definition, counter))
        tensors.update(call.targets)
    return dataclasses.replace(definition, body=tuple(body))


def _as_call(stmt: ast.Stmt, defs, tensors) -> ast.CallStmt | None:
    if isinstance(stmt, ast.CallStmt):
        if stmt.callee not in defs:
            raise SemanticError(f"call of undefined def `{stmt.callee}`", stmt.span)
        return stmt
    if (isinstance(stmt, ast.Assign) and not stmt.indices and stmt.op == "=" and not stmt.where
            and isinstance(stmt.rhs, ast.Apply) and stmt.rhs.name in defs
            and stmt.rhs.name not in tensors
            and all(isinstance(a, ast.Name) for a in stmt.rhs.args)):
        return ast.CallStmt((stmt.tensor,), stmt.rhs.name,
                            tuple(a.name for a in stmt.rhs.args), stmt.span)
    return None


def _instantiate(callee: ast.Def, call: ast.CallStmt, caller: ast.Def, counter):
    if len(call.args) != len(callee.params):
        raise SemanticError(
            f"`{callee.name}` takes {len(callee.params)} argument(s) "
            f"({', '.join(p.name for p in callee.params)}) but {len(call.args)} were given",
            call.span)
    if len(call.targets) != len(callee.outputs):
        raise SemanticError(
            f"`{callee.name}` returns {len(callee.outputs)} output(s) "
            f"({', '.join(o.name for o in callee.outputs)}) but the call assigns "
            f"{len(call.targets)}", call.span)
    renames = {p.name: a for p, a in zip(callee.params, call.args)}
    renames.update({o.name: t for o, t in zip(callee.outputs, call.targets)})
    size_values: dict[str, ast.Expr] = {}
    for param, arg in zip(callee.params, call.args):
        for k, dim in enumerate(param.type.dims or ()):
            if isinstance(dim, str) and dim not in size_values:
                size_values[dim] = ast.DimOf(arg, k, call.span)
    number = next(counter)
    for stmt in callee.body:
        if isinstance(stmt, ast.Assign) and stmt.tensor not in renames:
            renames[stmt.tensor] = f"{callee.name}_{stmt.tensor}__{number}"
    return [_rename_stmt(stmt, renames, size_values) for stmt in callee.body]


def _rename_stmt(stmt: ast.Assign, renames, size_values) -> ast.Assign:
    def expr(e: ast.Expr) -> ast.Expr:
        return _rename_expr(e, renames, size_values)

    where = []
    for clause in stmt.where:
        if isinstance(clause, ast.RangeClause):
            where.append(dataclasses.replace(clause, lo=expr(clause.lo), hi=expr(clause.hi)))
        elif isinstance(clause, ast.LetClause):
            where.append(dataclasses.replace(clause, value=expr(clause.value)))
        else:
            where.append(dataclasses.replace(clause, expr=expr(clause.expr)))
    return dataclasses.replace(
        stmt, tensor=renames.get(stmt.tensor, stmt.tensor), rhs=expr(stmt.rhs),
        where=tuple(where),
        equivalent=None if stmt.equivalent is None else expr(stmt.equivalent))


def _rename_expr(e: ast.Expr, renames, size_values) -> ast.Expr:
    def sub(x: ast.Expr) -> ast.Expr:
        return _rename_expr(x, renames, size_values)

    if isinstance(e, ast.Name):
        if e.name in size_values:
            return dataclasses.replace(size_values[e.name], span=e.span)
        return dataclasses.replace(e, name=renames.get(e.name, e.name))
    if isinstance(e, ast.Apply):
        return dataclasses.replace(e, name=renames.get(e.name, e.name),
                                   args=tuple(sub(a) for a in e.args))
    if isinstance(e, ast.DimOf):
        return dataclasses.replace(e, tensor=renames.get(e.tensor, e.tensor))
    if isinstance(e, ast.Unary):
        return dataclasses.replace(e, operand=sub(e.operand))
    if isinstance(e, ast.Binary):
        return dataclasses.replace(e, lhs=sub(e.lhs), rhs=sub(e.rhs))
    if isinstance(e, ast.Ternary):
        return dataclasses.replace(e, cond=sub(e.cond), then=sub(e.then), other=sub(e.other))
    return e
