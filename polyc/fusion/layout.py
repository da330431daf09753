"""Layout transformation: copy a strided, reused operand into a transposed temporary.

A contraction vectorises along the output's unit-stride index (``n`` in
``Z(b, m, n)``). An operand read with that index in another position
(``Y(b, n, k)``) would be walked with a large stride; if the operand is also
re-read across some output index (``Y`` does not depend on ``m``), one copy
into a layout with that index last pays for itself many times::

    Z(b, m, n) +=! X(b, m, k) * Y(b, n, k)
  →
    Y_t(b, k, n) = Y(b, n, k)                     one pass over Y
    Z(b, m, n) +=! X(b, m, k) * Y_t(b, k, n)      a batched matmul: register-blocked

Only inputs read with plain index variables (a permutation of the statement's
indices) are copied. The copies are ordinary statements (``L0``, ``L1``, ...),
scheduled as a prologue before the rest and proven legal like everything else.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.types import INT64
from polyc.poly.dependences import is_pure_reduction

# Copy statements are named L0, L1, ... (the user's statements keep S0, S1, ...).
COPY_PREFIX = "L"


def transpose_strided_operands(op: ir.Op) -> ir.Op:
    """``op`` with copies of the inputs worth transposing (see the module docstring)."""
    inputs = {t.name: t for t in op.inputs}
    copies: dict[tuple[str, tuple[int, ...]], ir.Tensor] = {}
    statements = []
    for stmt in op.statements:
        if not (is_pure_reduction(stmt) and stmt.indices and stmt.reduction_indices):
            statements.append(stmt)
            continue
        vector_index = stmt.indices[-1]

        def rewrite(read: ir.Read) -> ir.Read:
            order = _better_order(read, vector_index, stmt)
            if read.tensor not in inputs or order is None:
                return read
            key = (read.tensor, order)
            if key not in copies:
                source = inputs[read.tensor]
                copies[key] = ir.Tensor(
                    f"{read.tensor}_t{''.join(str(k) for k in order)}", source.type,
                    tuple(source.shape[k] for k in order), ir.TEMPORARY)
            return ir.Read(read.type, copies[key].name, tuple(read.indices[k] for k in order))

        statements.append(dataclasses.replace(stmt, rhs=_map_reads(stmt.rhs, rewrite)))
    if not copies:
        return op
    prologue = [_copy_statement(inputs[name], order, copy, f"{COPY_PREFIX}{k}")
                for k, ((name, order), copy) in enumerate(copies.items())]
    return dataclasses.replace(op, temporaries=op.temporaries + tuple(copies.values()),
                               statements=tuple(prologue + statements))


def layout_copies(op: ir.Op) -> tuple[str, ...]:
    """The names of the copy statements this pass added (scheduled as a prologue)."""
    return tuple(s.name for s in op.statements if s.name.startswith(COPY_PREFIX))


def read_only_tensors(op: ir.Op) -> frozenset[str]:
    """The tensors nothing writes while the operator's loops run: its inputs, and the
    layout copies (written by the prologue, before the loops that read them)."""
    copies = layout_copies(op)
    return frozenset(t.name for t in op.inputs) | frozenset(
        s.tensor for s in op.statements if s.name in copies)


def write_once_outputs(op: ir.Op) -> frozenset[str]:
    """The outputs written by exactly one ``=`` statement and read by no statement: each
    element is stored once and never loaded (their stores may bypass the cache,
    :mod:`polyc.codegen.streaming`)."""
    writers: dict[str, list[ir.Statement]] = {}
    for statement in op.statements:
        writers.setdefault(statement.tensor, []).append(statement)
    read = {tensor for statement in op.statements for tensor in statement.tensors_read}
    return frozenset(
        t.name for t in op.outputs
        if t.rank > 0 and t.name not in read and len(writers.get(t.name, ())) == 1
        and writers[t.name][0].op == "=")


def _better_order(read: ir.Read, vector_index: str, stmt: ir.Statement
                  ) -> tuple[int, ...] | None:
    """The dimension order of the copy, if this read is worth copying: plain distinct
    index variables, the vector index not already last, and invariant along some
    output index (so it is re-read).

    The copy is laid out in the order the statement's loops walk it: its output
    indices, then its reductions (a register block's innermost loop is the last
    reduction), each in the statement's order, and the vector index last. A
    block's successive steps then read adjacent rows: the contraction's
    ``B(d, f, c, e)`` becomes ``B_t(c, e, f, d)``, not ``B_t(f, c, e, d)``, whose
    steps along ``f`` were 24³ elements apart, all in two sets of the L1 cache
    (×1.07, interleaved A/B, 21 rounds)."""
    names = [i.name if isinstance(i, ir.Index) else None for i in read.indices]
    if None in names or len(set(names)) != len(names) or vector_index not in names:
        return None
    if names[-1] == vector_index:
        return None
    if all(index in names for index in stmt.indices):
        return None  # read once per output element: a copy would not pay
    loop_order = [i for i in stmt.indices if i != vector_index] + \
        list(stmt.reduction_indices) + [vector_index]
    return tuple(sorted(range(len(names)), key=lambda k: loop_order.index(names[k])))


def _copy_statement(source: ir.Tensor, order: tuple[int, ...], copy: ir.Tensor,
                    name: str) -> ir.Statement:
    indices = tuple(f"t{k}" for k in range(source.rank))
    read = ir.Read(source.type, source.name, tuple(ir.Index(INT64, i) for i in indices))
    lhs = tuple(indices[k] for k in order)
    domain = tuple(ir.IndexRange(indices[k], sz.const(0), source.shape[k]) for k in order)
    return ir.Statement(name=name, tensor=copy.name, indices=lhs, op="=", init=False,
                        rhs=read, domain=domain, reduction_indices=())


def _map_reads(expr: ir.Expr, rewrite) -> ir.Expr:
    """``expr`` with every top-level tensor read passed through ``rewrite``."""
    if isinstance(expr, ir.Read):
        return rewrite(expr)
    if isinstance(expr, (ir.Unary, ir.Cast)):
        return dataclasses.replace(expr, operand=_map_reads(expr.operand, rewrite))
    if isinstance(expr, ir.Binary):
        return dataclasses.replace(expr, lhs=_map_reads(expr.lhs, rewrite),
                                   rhs=_map_reads(expr.rhs, rewrite))
    if isinstance(expr, ir.Select):
        return dataclasses.replace(expr, cond=_map_reads(expr.cond, rewrite),
                                   then=_map_reads(expr.then, rewrite),
                                   other=_map_reads(expr.other, rewrite))
    if isinstance(expr, ir.Call):
        return dataclasses.replace(expr, args=tuple(_map_reads(a, rewrite) for a in expr.args))
    return expr
