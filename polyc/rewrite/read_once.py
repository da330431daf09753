"""Temporaries read once at the element they hold, or cheap: their value substituted into
their readers.

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

A temporary read more than once, by one statement or several, is substituted at
each read when its value is cheap: at most one arithmetic operation, no call or select,
and at most one read of an element that varies with all of the store's indices. Its
value is then computed at each read, for one operation and the load of that element,
where the temporary costs a store and a load at each read. A layer norm's centred
values ``xc(n, d) = X(n, d) - mean(n)``, read by the variance and the output, were a
row buffer: that spelling ran 1.25-1.36x the others', and runs as they do since (4096
x 1024, Zen 5 VM, 2 threads, `benchmarks/run.py --sections spellings`).

A right-hand side of another type than ``T`` is converted to it, as the store did.
Values and rounding are unchanged: the same expression, in the same type, evaluated
at each read.
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
                      if (found := _store_and_readers(op, t.name)) is not None), None)
        if found is None:
            return op
        op = _substituted(op, *found)


def _store_and_readers(op: ir.Op, name: str
                       ) -> tuple[int, tuple[tuple[int, ir.Read], ...]] | None:
    """``(store, ((reader, read), ...))``: the position of the statement that writes
    ``name``, and of each statement that reads it with its read; ``None`` where
    ``name`` does not qualify."""
    writers = [k for k, s in enumerate(op.statements) if s.tensor == name]
    reads = tuple((k, e) for k, s in enumerate(op.statements) for e in ir.walk(s.rhs)
                  if isinstance(e, ir.Read) and e.tensor == name)
    read_by_a_range = any(name in ir.tensors_read(b) for s in op.statements
                          for r in s.domain for b in (r.lo_bound, r.hi_bound) if b is not None)
    if len(writers) != 1 or not reads or read_by_a_range:
        return None
    (store,) = writers
    producer = op.statements[store]
    if (producer.op != "=" or producer.reduction_indices
            or len(set(producer.indices)) != len(producer.indices)
            or name in producer.tensors_read or ir.has_gather(producer.rhs)):
        return None
    if len(reads) > 1 and not _cheap(producer):
        return None
    for reader, read in reads:
        consumer = op.statements[reader]
        names = [i.name for i in read.indices if isinstance(i, ir.Index)]
        if (reader < store or len(names) != len(read.indices) or len(set(names)) != len(names)
                or set(names) != {r.index for r in consumer.domain}
                or _inside_indices(consumer.rhs, read)):
            return None
        renaming = dict(zip(producer.indices, names))
        if any(_renamed(producer.range_of(p), renaming) != consumer.range_of(renaming[p])
               for p in producer.indices):
            return None
    last = max(reader for reader, _ in reads)
    if ir.writes_any(op.statements[store:last + 1], producer.tensors_read):
        return None
    return store, reads


def _cheap(producer: ir.Statement) -> bool:
    """Whether the stored value costs at most one arithmetic operation and reads at most
    one element that varies with all of the store's indices: recomputed at each of its
    reads, it costs that operation and that load, where the temporary costs a store and
    a load at each read (``xc(n, d) = X(n, d) - mean(n)``)."""
    value = producer.rhs
    operations = [e for e in ir.walk(value) if isinstance(e, (ir.Binary, ir.Unary))]
    if len(operations) > 1 or any(isinstance(e, (ir.Call, ir.Select)) for e in ir.walk(value)):
        return False
    whole = set(producer.indices)
    return sum(1 for e in ir.walk(value)
               if isinstance(e, ir.Read) and whole <= set(ir.index_names(e))) <= 1


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


def _substituted(op: ir.Op, store: int, reads: tuple[tuple[int, ir.Read], ...]) -> ir.Op:
    producer = op.statements[store]
    statements = list(op.statements)
    for reader in sorted({reader for reader, _ in reads}):
        values = {id(read): _value(producer, read) for k, read in reads if k == reader}
        statements[reader] = dataclasses.replace(statements[reader], rhs=ir.rewrite(
            statements[reader].rhs, lambda e: values.get(id(e))))
    del statements[store]
    return dataclasses.replace(
        op, statements=tuple(statements),
        temporaries=tuple(t for t in op.temporaries if t.name != producer.tensor))


def _value(producer: ir.Statement, read: ir.Read) -> ir.Expr:
    """The stored value at the element ``read`` reads, in the read's type."""
    value = ir.substitute_indices(producer.rhs, dict(zip(producer.indices, read.indices)))
    return value if value.type == read.type else ir.Cast(read.type, value)
