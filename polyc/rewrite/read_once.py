"""Temporaries read once, at the element they hold: their value substituted into the reader.

``polyc.grad`` names each adjoint it builds, and users name the steps of a formula;
a temporary that one statement writes elementwise and one later statement reads
once per element is a store and a load per element and, fused, a row buffer::

    S4: d_e(n, d) = d_Y(n, d) * (1.0 / row_sum(n)) + d_row_sum(n)
    S5: d_X(n, d) = d_e(n, d) * e(n, d)
  →
    S5: d_X(n, d) = (d_Y(n, d) * (1.0 / row_sum(n)) + d_row_sum(n)) * e(n, d)

The value is computed once either way, so the substitution only saves the store, the
load and the pass that wrote the buffer: a softmax's backward, 4096 × 1024 on two
threads, 1.97 → 1.81 ms (measurements: benchmarks/README.md, "Design measurements").
A temporary ``T`` is substituted when

* one statement writes it, a plain store (``=``, no reduction index) at distinct
  indices, whose right-hand side reads no ``T`` and holds no gather (a gather's index
  check stays where the user wrote it);
* one read of one later statement reads it, at distinct indices that are all of that
  statement's indices (each element read once, at one point: a read that repeats
  along another index would recompute the value there), over the same ranges as the
  store's after renaming (every element read is one the store wrote, and only those);
* no statement from the store to the reader, the reader included, writes a tensor the
  store's right-hand side reads (the value is the same where it is now computed).

A right-hand side of another type than ``T`` is converted to it, as the store did.
Values and rounding are unchanged: the same expression, evaluated once per element.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang.types import INT64


def substitute_read_once(op: ir.Op) -> ir.Op:
    """``op`` with each temporary read once, at the element it holds, substituted into
    its reader (see the module docstring), until none is left."""
    while True:
        found = next((found for t in op.temporaries
                      if (found := _store_and_reader(op, t.name)) is not None), None)
        if found is None:
            return op
        op = _substituted(op, *found)


def _store_and_reader(op: ir.Op, name: str) -> tuple[int, int, ir.Read] | None:
    """``(store, reader, read)``: the positions of the statement that writes ``name``
    and of the one that reads it, and its read; ``None`` where ``name`` does not
    qualify."""
    writers = [k for k, s in enumerate(op.statements) if s.tensor == name]
    reads = [(k, e) for k, s in enumerate(op.statements) for e in ir.walk(s.rhs)
             if isinstance(e, ir.Read) and e.tensor == name]
    read_by_a_range = any(name in ir.tensors_read(b) for s in op.statements
                          for r in s.domain for b in (r.lo_bound, r.hi_bound) if b is not None)
    if len(writers) != 1 or len(reads) != 1 or read_by_a_range:
        return None
    (store,), ((reader, read),) = writers, reads
    producer, consumer = op.statements[store], op.statements[reader]
    if (reader < store or producer.op != "=" or producer.reduction_indices
            or len(set(producer.indices)) != len(producer.indices)
            or name in producer.tensors_read or ir.has_gather(producer.rhs)):
        return None
    names = [i.name for i in read.indices if isinstance(i, ir.Index)]
    if (len(names) != len(read.indices) or len(set(names)) != len(names)
            or set(names) != {r.index for r in consumer.domain}
            or _inside_indices(consumer.rhs, read)):
        return None
    renaming = dict(zip(producer.indices, names))
    if any(_renamed(producer.range_of(p), renaming) != consumer.range_of(renaming[p])
           for p in producer.indices):
        return None
    if ir.writes_any(op.statements[store:reader + 1], producer.tensors_read):
        return None
    return store, reader, read


def _inside_indices(expr: ir.Expr, read: ir.Read) -> bool:
    """Whether ``read`` occurs inside the indices of another read (a gather index)."""
    return any(read in ir.walk(i) for e in ir.walk(expr) if isinstance(e, ir.Read)
               for i in e.indices)


def _renamed(index_range: ir.IndexRange, renaming: dict[str, str]) -> ir.IndexRange:
    values = {old: ir.Index(INT64, new) for old, new in renaming.items()}
    return dataclasses.replace(
        index_range, index=renaming[index_range.index],
        lo_bound=None if index_range.lo_bound is None
        else ir.substitute_indices(index_range.lo_bound, values),
        hi_bound=None if index_range.hi_bound is None
        else ir.substitute_indices(index_range.hi_bound, values))


def _substituted(op: ir.Op, store: int, reader: int, read: ir.Read) -> ir.Op:
    producer, consumer = op.statements[store], op.statements[reader]
    values = {p: i for p, i in zip(producer.indices, read.indices)}
    value = ir.substitute_indices(producer.rhs, values)
    if value.type != read.type:
        value = ir.Cast(read.type, value)
    rhs = ir.rewrite(consumer.rhs, lambda e: value if e is read else None)
    statements = list(op.statements)
    statements[reader] = dataclasses.replace(consumer, rhs=rhs)
    del statements[store]
    return dataclasses.replace(
        op, statements=tuple(statements),
        temporaries=tuple(t for t in op.temporaries if t.name != producer.tensor))
