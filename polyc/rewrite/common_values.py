"""Values two statements compute alike: computed once, into a temporary both read.

A softmax spelled without a temporary evaluates its exponentials twice, once for
the row sum and once for the output::

    S1:        row_sum(n) +=! exp(X(n, d) - row_max(n))
    S2:        Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
  →
    S1_shared: exp_S1(n, d) = exp(X(n, d) - row_max(n))
    S1:        row_sum(n) +=! exp_S1(n, d)
    S2:        Y(n, d) = exp_S1(n, d) / row_sum(n)

which is the spelling with a temporary ``e(n, d)``: fusion puts the three in one
row loop and array contraction shrinks the temporary to a row buffer of the
thread (``polyc.scheduling.contraction``), so each exponential is computed once and
read back from L1, which costs less than computing it twice (measurements:
benchmarks/README.md, "Design measurements").

Only calls of the math library are shared (``exp``, ``log``, ``tanh``, ...: tens of
cycles each); recomputing cheap arithmetic costs less than storing and loading it.
A value qualifies when it appears in an earlier and a later statement, both over
the same ranges of the indices it uses (boxes, each starting at 0: the temporary's
shape), it is evaluated unconditionally in both (not under a ternary's branch or
``&&``/``||``, whose guard may be what keeps its reads in bounds), it reads no
tensor that either statement or one between them writes (so it has the same value
in both), and it holds no gather. The temporary is computed right before the
earlier statement, over those ranges. The values are the same expressions; results
differ only where a loop's vector and scalar iterations call
the vector math library (4 ulp) and the scalar one differently.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.builtins import is_library_call
from polyc.lang.types import INT64

SHARED_SUFFIX = "_shared"


def share_common_values(op: ir.Op) -> ir.Op:
    """``op`` with each library call that two statements compute alike computed once
    into a temporary (see the module docstring)."""
    while True:
        found = _first_shared(op)
        if found is None:
            return op
        op = _share(op, *found)


def _first_shared(op: ir.Op) -> tuple[int, ir.Expr] | None:
    """``(position of the earlier statement, the value)`` of the first qualifying value."""
    statements = op.statements
    for first, earlier in enumerate(statements):
        for value in ir.walk_unconditional(earlier.rhs):
            if not _worth_sharing(value):
                continue
            for later in statements[first + 1:]:
                if _qualifies(value, statements, first, later):
                    return first, value
    return None


def _worth_sharing(value: ir.Expr) -> bool:
    return (isinstance(value, ir.Call) and is_library_call(value.function)
            and not ir.has_gather(value))


def _qualifies(value: ir.Expr, statements: tuple[ir.Statement, ...], first: int,
               later: ir.Statement) -> bool:
    if not any(e == value for e in ir.walk_unconditional(later.rhs)):
        return False
    earlier = statements[first]
    indices = ir.index_names(value)
    if any(earlier.range_of(i) != later.range_of(i) or earlier.range_of(i).lo != sz.const(0)
           or not earlier.range_of(i).is_box for i in indices):
        return False
    read = ir.tensors_read(value)
    last = statements.index(later)
    return not ir.writes_any(statements[first:last + 1], read)


def _share(op: ir.Op, first: int, value: ir.Expr) -> ir.Op:
    earlier = op.statements[first]
    order = [r.index for r in earlier.domain if r.index in ir.index_names(value)]
    name = _fresh(f"{value.function}_{earlier.name}", op)
    temporary = ir.Tensor(name, value.type, tuple(earlier.range_of(i).hi for i in order),
                          ir.TEMPORARY)
    taken = {s.name for s in op.statements}
    statement_name, k = earlier.name + SHARED_SUFFIX, 1
    while statement_name in taken:  # a second value shared from the same statement
        statement_name, k = f"{earlier.name}{SHARED_SUFFIX}{k}", k + 1
    compute = ir.Statement(name=statement_name, tensor=name,
                           indices=tuple(order), op="=", init=False, rhs=value,
                           domain=tuple(earlier.range_of(i) for i in order),
                           reduction_indices=(), span=earlier.span)
    shared = ir.Read(value.type, name, tuple(ir.Index(INT64, i) for i in order))
    read = ir.tensors_read(value)
    statements = list(op.statements[:first]) + [compute]
    unchanged = False  # from the first statement that writes what the value reads
    for statement in op.statements[first:]:
        unchanged = unchanged or statement.tensor in read
        if not unchanged and _same_ranges(statement, earlier, order):
            statement = dataclasses.replace(statement, rhs=ir.rewrite(
                statement.rhs, lambda e: shared if e == value else None))
        statements.append(statement)
    return dataclasses.replace(op, temporaries=op.temporaries + (temporary,),
                               statements=tuple(statements))


def _same_ranges(statement: ir.Statement, earlier: ir.Statement, order: list[str]) -> bool:
    return all(any(r.index == i for r in statement.domain)
               and statement.range_of(i) == earlier.range_of(i) for i in order)


def _fresh(base: str, op: ir.Op) -> str:
    return ir.fresh_name(base, set(op.tensors) | set(op.sizes))
