"""Gather indices checked before the kernel runs: one vectorised pass per index tensor.

In ``O(b, l, d) = T(I(b, l), d)`` every element of ``I`` becomes an index into
``T``'s first dimension when ``b`` and ``l`` range over all of ``I`` (the
usual case: their ranges are inferred from ``I``'s shape). Then ``0 <= I < T.shape[0]``
is exactly the condition for the call to be safe, and numpy checks it before
the kernel touches an output::

    >>> embed(T, np.array([[0, 7]], np.int32))
    ArgumentError: embed: gather index out of range in `T(I(b, l), d)`:
    I[0, 1] = 7 but T has 5 entries in dimension 0 (valid: 0..4)

Gathers whose index tensor is read only in part, or through an expression
(``T(I(b) + 1)``), are checked inside the kernel instead (see
``polyc.codegen.c_expr``), which reports the same message through
:func:`gather_message` after the call.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.printer import expr_to_tc


@dataclass(frozen=True)
class Gather:
    """``tensor(..., index(...), ...)``: ``index`` read whole at position ``dim``."""

    read: ir.Read               # the gathering read, e.g. T(I(b, l), d)
    dim: int                    # the position of the data-dependent index
    index: str                  # the index tensor, an input
    statement: ir.Statement     # where it happens (empty domain: never)


def whole_gathers(op: ir.Op) -> tuple[Gather, ...]:
    """The gathers of ``op`` whose index tensor is an input read over its whole extent."""
    found = []
    for statement in op.statements:
        for read in (e for e in ir.walk(statement.rhs) if isinstance(e, ir.Read)):
            for dim, index in enumerate(read.indices):
                if isinstance(index, ir.Read) and _reads_whole_input(op, statement, index):
                    found.append(Gather(read, dim, index.tensor, statement))
    return tuple(found)


def _reads_whole_input(op: ir.Op, statement: ir.Statement, read: ir.Read) -> bool:
    tensor = op.tensor(read.tensor)
    if tensor.role != ir.INPUT or not tensor.rank:
        return False
    names = [i.name for i in read.indices if isinstance(i, ir.Index)]
    if len(names) != len(read.indices) or len(set(names)) != len(names):
        return False
    return all(statement.range_of(name).is_box and statement.range_of(name).lo == sz.const(0)
               and statement.range_of(name).hi == extent
               for name, extent in zip(names, tensor.shape))


def active_gathers(op: ir.Op, gathers: tuple[Gather, ...], sizes: dict[str, int]
                   ) -> list[tuple[Gather, int]]:
    """The gathers that run for ``sizes``, each with the extent its indices must stay
    below (a statement whose domain is empty never uses its indices)."""
    return [(gather, sz.evaluate(op.tensor(gather.read.tensor).shape[gather.dim], sizes))
            for gather in gathers
            if all(sz.evaluate(r.hi, sizes) > sz.evaluate(r.lo, sizes)
                   for r in gather.statement.domain)]


def check_gathers(op: ir.Op, gathers: tuple[Gather, ...], sizes: dict[str, int],
                  arrays: dict[str, np.ndarray]) -> str | None:
    """The message for the first out-of-range index, or ``None`` when all are in range."""
    for gather, extent in active_gathers(op, gathers, sizes):
        values = arrays[gather.index]
        if values.size and (values.min() < 0 or values.max() >= extent):
            return gather_message(op, gather.read, gather.dim, values, extent)
    return None


def gather_message(op: ir.Op, read: ir.Read, dim: int, values: np.ndarray,
                   extent: int) -> str | None:
    """Name the tensor, the position and the value of the first index of ``values`` that
    falls outside ``extent``; ``None`` if there is none."""
    bad = np.argwhere((values < 0) | (values >= extent))
    if not len(bad):
        return None
    position = tuple(int(p) for p in bad[0])
    index = read.indices[dim]
    return (f"{op.name}: gather index out of range in `{expr_to_tc(read)}`: "
            f"{index.tensor}{list(position)} = {values[position]} but "
            f"{read.tensor} has {extent} entries in dimension {dim} "
            f"(valid: 0..{extent - 1})")
