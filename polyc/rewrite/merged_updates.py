"""Updates of one element merged into one statement: one pass instead of several.

``polyc.grad`` accumulates each contribution to a gradient in a statement of its own,
and users write an output the same way (a product, then ``+= bias``)::

    S7: d_X(n, d) = d_Y(n, d) * gamma(d) * rstd(n)
    S8: d_X(n, d) += 2.0 * d_ss(n) * (X(n, d) - mu(n))
    S5: d_mu(n) +=! ...                         (reads no d_X)
    S9: d_X(n, d) += d_mu(n)
  →
    S5: d_mu(n) +=! ...
    S7: d_X(n, d) = d_Y(n, d) * gamma(d) * rstd(n)
                    + 2.0 * d_ss(n) * (X(n, d) - mu(n)) + d_mu(n)

Each statement over a row is a pass over it: the three passes of ``d_X`` load and
store the row three times, and the first one streams its stores past the cache
only for the next pass to read them back. Merged, the row is written once.

A later update ``T(i) += b`` (or ``*=``) joins an earlier statement ``T(i) = a``
(``+=`` or ``+=!``, with the same operator) into ``T(i) = a + b`` at the later
statement's place when

* both run over the same ranges (reduction indices included) and write the element
  at the same indices, and neither right-hand side reads ``T``;
* no statement between them reads or writes ``T`` (none sees the value in between);
* none between them writes a tensor ``a`` reads (``a``, now evaluated later, has the
  same value there).

For ``=`` then ``+=`` the arithmetic is the same; two updates of a sum are
reassociated (``(T + a) + b`` becomes ``T + (a + b)``), which changes rounding only,
as any reordering of a sum does. Only ``+`` and ``*`` merge, and only right-hand sides
of the element's type (no conversion moves).
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir

MERGED_OPS = ("+", "*")


def merge_updates(op: ir.Op) -> ir.Op:
    """``op`` with each update merged into the earlier statement of its element (see
    the module docstring), repeatedly: ``=``, ``+=``, ``+=`` become one statement."""
    statements = list(op.statements)
    merged = False
    position = 1
    while position < len(statements):
        later = statements[position]
        earlier = _earlier_partner(statements, position, op)
        if earlier is None:
            position += 1
            continue
        first = statements[earlier]
        rhs = ir.Binary(later.rhs.type, later.op, first.rhs, later.rhs)
        statements[position] = dataclasses.replace(first, rhs=rhs)
        del statements[earlier]
        merged = True
    return dataclasses.replace(op, statements=tuple(statements)) if merged else op


def _earlier_partner(statements: list[ir.Statement], position: int, op: ir.Op) -> int | None:
    """The position of the statement the update at ``position`` merges into; ``None``
    where there is none."""
    later = statements[position]
    element_type = op.tensor(later.tensor).type
    if later.op not in MERGED_OPS or later.init or later.rhs.type != element_type or \
            later.tensor in later.tensors_read:
        return None
    written_between: set[str] = set()
    for k in range(position - 1, -1, -1):
        candidate = statements[k]
        if candidate.tensor == later.tensor:
            if (candidate.op in ("=", later.op) and candidate.indices == later.indices
                    and candidate.domain == later.domain
                    and candidate.reduction_indices == later.reduction_indices
                    and candidate.rhs.type == element_type
                    and later.tensor not in candidate.tensors_read
                    and not candidate.tensors_read & written_between):
                return k
            return None
        if later.tensor in candidate.tensors_read:
            return None
        written_between.add(candidate.tensor)
    return None
