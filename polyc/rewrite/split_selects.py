"""Selects on the indices become domains: a triangle chosen by value runs as a triangle.

A statement whose right-hand side selects on an affine condition of its indices,

    D(i, j) +=! (k > i ? A(k, i) : 0.0) * B(k, j)

computes the condition at every point, and the zeros besides. Splitting the domain at
the condition gives one statement per side, each with its branch in place of the
select and the condition as an index-dependent range (:class:`~polyc.lang.ir.IndexRange`)::

    D(i, j) +=! A(k, i) * B(k, j) where k in max(0, i + 1):K
    D(i, j) += 0.0 * B(k, j) where k in 0:min(K, i + 1)      -- adds zero: dropped

so the triangle runs as fast as the ``where`` spelling. A condition is a comparison of
affine index expressions (``<``, ``<=``, ``>``, ``>=``, ``==``), or a conjunction of
such; it bounds the statement's last index whose coefficient is ±1 (the reduction
indices come last, so that a ``!`` keeps its box). The side where a conjunction fails
is cut into convex pieces (``!a``, then ``a && !b``). A piece of a sum whose value is
zero once simplified (``0.0 * x``, ``x * 0.0``, ``-0.0``) adds nothing and is dropped:
polyc takes ``0 * x`` as 0 for every ``x``, as BLAS's triangular routines do, which
never read the other triangle (an infinity or NaN there no longer turns into NaN).
A ``!`` statement whose pieces no longer cover the box of its left-hand indices (the
adjoint ``d_A(k, i) +=! k > i ? … : 0.0`` keeps ``k in 1:M``) starts with its
initialisation as a statement of its own (``d_A(k, i) = 0.0`` over the box) for sums
and products; a ``max=!``/``min=!`` is then not split.

Only statements whose points read no element of the tensor they write but their own
are split: their points may then run in any order. A select whose pieces' boxes would
need a ``min`` of ``max`` bounds (a border on both sides of a padded copy) stays.
Splitting stops at :data:`MAX_PIECES` statements per statement.

A temporary that stores only a select on the indices of reads, as PolyBench spells
trmm and symm,

    Lt(i, k) = k > i ? A(k, i) : 0.0
    P(i, j) +=! Lt(i, k) * B(k, j)

is forwarded into its readers first (``P(i, j) +=! (k > i ? A(k, i) : 0.0) * B(k,
j)``), where every reader then splits into pieces without selects, some piece is a
triangle (its extent changes with another index: it saves a fraction of the work),
and nothing it reads is written between its statement and its last reader; the
temporary is gone. Its value holds no arithmetic or calls, which each reader would
repeat. A zero-padded copy (autodiff's borders, :mod:`polyc.autodiff.padding`) stays:
forwarded, it would only trim the borders of a band, and a convolution over the
copy's box ran 2.3x faster than over the band (the data gradient of the benchmark's
conv2d, 23.7 against 53.9 ms).
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import (LinearIndex, affine_of, has_uneven_extent, linear_sum,
                               negated, shifted, tightened, with_bounding_boxes)
from polyc.lang.types import INT64

MAX_PIECES = 8
_COMPARISONS = ("<", "<=", ">", ">=", "==")


def split_selects(op: ir.Op) -> ir.Op:
    """``op`` with each statement split at its selects on the indices, those of
    temporaries forwarded into their readers first (see the module docstring)."""
    op = _forward_select_temporaries(op)
    statements: list[ir.Statement] = []
    for statement in op.statements:
        statements += _split(statement)
    if len(statements) == len(op.statements) and all(
            a is b for a, b in zip(statements, op.statements)):
        return op
    return dataclasses.replace(op, statements=tuple(statements))


def _split(statement: ir.Statement) -> list[ir.Statement]:
    own = tuple(ir.Index(INT64, i) for i in statement.indices)
    if any(isinstance(e, ir.Read) and e.tensor == statement.tensor and e.indices != own
           for e in ir.walk(statement.rhs)):
        return [statement]  # a point reads another's element: the order matters
    pieces = [statement]
    while len(pieces) < MAX_PIECES:
        for k, piece in enumerate(pieces):
            cut = _cut(piece)
            if cut is not None and len(pieces) - 1 + len(cut) <= MAX_PIECES:
                pieces[k:k + 1] = cut
                break
        else:
            break
    if len(pieces) == 1:
        return pieces
    kept = _kept(pieces, statement)
    if statement.init and any((r.lo, r.hi) != (o.lo, o.hi) for r, o in zip(
            kept[0].domain, statement.domain) if r.index in statement.indices):
        if statement.op not in ir.LITERAL_IDENTITIES:
            return [statement]  # the `!` would no longer initialise the whole box
        return [_fill(statement)] + _named([dataclasses.replace(p, init=False)
                                            for p in kept], statement)
    return _named(kept, statement)


def _fill(statement: ir.Statement) -> ir.Statement:
    """The initialisation of a ``!`` statement as a statement of its own: the identity
    over the box of its left-hand indices."""
    identity = ir.LITERAL_IDENTITIES[statement.op]
    kind = statement.rhs.type
    return ir.Statement(
        name=f"{statement.name}_fill", tensor=statement.tensor, indices=statement.indices,
        op="=", init=False, rhs=ir.Const(kind, float(identity) if kind.is_float else identity),
        domain=tuple(ir.IndexRange(r.index, r.lo, r.hi) for r in
                     (statement.range_of(i) for i in statement.indices)),
        reduction_indices=())


def _forward_select_temporaries(op: ir.Op) -> ir.Op:
    """``op`` with each temporary that only stores a select on the indices of reads
    (``Lt(i, k) = k > i ? A(k, i) : 0.0``) replaced by that value in its readers, where
    every reader then splits into selects-free pieces; the temporary is gone."""
    for temporary in op.temporaries:
        forwarded = _forwarded(op, temporary)
        if forwarded is not None:
            return _forward_select_temporaries(forwarded)
    return op


def _forwarded(op: ir.Op, temporary: ir.Tensor) -> ir.Op | None:
    writers = [k for k, s in enumerate(op.statements) if s.tensor == temporary.name]
    if len(writers) != 1:
        return None
    first = writers[0]
    definition = op.statements[first]
    if definition.op != "=" or definition.reduction_indices or not definition.is_box \
            or not _has_select(definition.rhs) or not _cheap(definition.rhs):
        return None
    value = definition.rhs
    if value.type != temporary.type:
        value = ir.Cast(temporary.type, value)
    readers = [k for k, s in enumerate(op.statements)
               if temporary.name in s.tensors_read and k != first]
    if not readers or any(op.statements[k].tensor in definition.tensors_read
                          for k in range(first, max(readers) + 1)):
        return None  # what it reads changes before a reader runs
    statements = list(op.statements)
    for k in readers:
        reader = statements[k]
        rhs = ir.rewrite(reader.rhs, lambda e: ir.substitute_indices(value, dict(zip(
            definition.indices, e.indices))) if isinstance(e, ir.Read) and
            e.tensor == temporary.name else None)
        replaced = dataclasses.replace(reader, rhs=rhs)
        pieces = _split(replaced)
        if temporary.name in replaced.tensors_read or any(
                _has_select(piece.rhs) for piece in pieces):
            return None  # a reader would evaluate the select per point
        if not any(has_uneven_extent(piece) for piece in pieces):
            return None  # bands only trim borders: the copy's box loops run faster
        statements[k] = replaced
    del statements[first]
    return dataclasses.replace(op, statements=tuple(statements), temporaries=tuple(
        t for t in op.temporaries if t.name != temporary.name))


def _cheap(e: ir.Expr) -> bool:
    """Whether ``e`` is selects on the indices of affine reads and literals: no
    arithmetic or calls, which each reader would repeat at each of its points."""
    if isinstance(e, ir.Read):
        return all(affine_of(index) is not None for index in e.indices)
    if isinstance(e, ir.Select):
        return _inequalities(e.cond) is not None and _cheap(e.then) and _cheap(e.other)
    if isinstance(e, ir.Cast):
        return _cheap(e.operand)
    return isinstance(e, (ir.Const, ir.Index, ir.SizeValue))


def _cut(statement: ir.Statement) -> list[ir.Statement] | None:
    """The statement cut at its first select on the indices: the side where the
    condition holds, then the pieces where it fails; ``None`` when it has none."""
    for select in _selects(statement.rhs):
        conjuncts = _inequalities(select.cond)
        if conjuncts is None:
            continue
        bounds = [_bound(statement, c) for c in conjuncts]
        failing = [_bound(statement, shifted(negated(c), sz.const(-1)))  # e < 0: -e - 1 >= 0
                   for c in conjuncts]
        if any(b is None for b in bounds + failing):
            continue
        pieces = [_restricted(statement, bounds, select, select.then)]
        for k, fail in enumerate(failing):
            pieces.append(_restricted(statement, bounds[:k] + [fail], select, select.other))
        if all(_plain(r.lo) and _plain(r.hi) for piece in pieces for r in piece.domain):
            return pieces
    return None


def _plain(e: sz.SizeExpr) -> bool:
    """Whether a box bound is an affine form or one min/max of such (the size arithmetic
    of extents and trip counts stays small: a min of maxes multiplies out)."""
    return not isinstance(e, sz.MinMax) or all(isinstance(a, sz.Affine) for a in e.args)


def _selects(expr: ir.Expr):
    """The selects of ``expr`` outside the indices of reads (those ``ir.rewrite`` reaches),
    outermost first."""
    if isinstance(expr, ir.Select):
        yield expr
    if isinstance(expr, ir.Read):
        return
    for child in ir.children(expr):
        yield from _selects(child)


def _has_select(expr: ir.Expr) -> bool:
    return next(_selects(expr), None) is not None


def _inequalities(condition: ir.Expr) -> list[LinearIndex] | None:
    """``condition`` as affine expressions that are all ``>= 0``, or ``None``."""
    if isinstance(condition, ir.Binary) and condition.op == "&&":
        left, right = _inequalities(condition.lhs), _inequalities(condition.rhs)
        return None if left is None or right is None else left + right
    if not (isinstance(condition, ir.Binary) and condition.op in _COMPARISONS):
        return None
    lhs, rhs = affine_of(condition.lhs), affine_of(condition.rhs)
    if lhs is None or rhs is None or not (lhs.coefficients or rhs.coefficients):
        return None
    difference = linear_sum(lhs, negated(rhs))
    below = sz.const(-1)
    if condition.op == ">=":
        return [difference]
    if condition.op == ">":
        return [shifted(difference, below)]
    if condition.op == "<=":
        return [negated(difference)]
    if condition.op == "<":
        return [shifted(negated(difference), below)]
    return [difference, negated(difference)]  # ==


def _bound(statement: ir.Statement, inequality: LinearIndex
           ) -> tuple[str, str, LinearIndex] | None:
    """``expr >= 0`` as a bound on one index: ``(index, "lower" | "upper", bound)``
    (``index >= bound`` or ``index < bound``), on the last index of the domain with a
    coefficient of ±1; ``None`` when there is none."""
    order = [r.index for r in statement.domain]
    candidates = [(order.index(n), n, c) for n, c in inequality.coefficients
                  if c in (1, -1) and n in order]
    if not candidates or len(inequality.coefficients) != len(
            [n for n, _ in inequality.coefficients if n in order]):
        return None
    _, index, c = max(candidates)
    rest = LinearIndex(tuple((n, d) for n, d in inequality.coefficients if n != index),
                       inequality.offset)
    if c == 1:   # index + rest >= 0: index >= -rest
        return index, "lower", negated(rest)
    return index, "upper", shifted(rest, sz.const(1))  # rest - index >= 0: index < rest + 1


def _restricted(statement: ir.Statement, bounds, select: ir.Select, branch: ir.Expr
                ) -> ir.Statement:
    """The statement on the side of ``bounds``, ``branch`` in place of ``select``."""
    domain = list(statement.domain)
    for index, kind, bound in bounds:
        position = next(k for k, r in enumerate(domain) if r.index == index)
        domain[position] = tightened(domain[position], kind, bound)
    rhs = _simplified(ir.rewrite(statement.rhs, lambda e: branch if e is select else None))
    return dataclasses.replace(statement, rhs=rhs, domain=with_bounding_boxes(tuple(domain)))


def _simplified(expr: ir.Expr) -> ir.Expr:
    """``expr`` with products by zero and sums with zero folded, bottom up (see the
    module docstring)."""
    e = ir.map_children(expr, _simplified)
    zero = ir.Const(e.type, 0.0 if e.type.is_float else 0)
    if isinstance(e, ir.Binary):
        if e.op == "*" and (_is_zero(e.lhs) or _is_zero(e.rhs)) or \
                e.op == "/" and _is_zero(e.lhs):
            return zero
        if e.op in ("+", "-") and _is_zero(e.rhs) and e.lhs.type == e.type:
            return e.lhs
        if e.op == "+" and _is_zero(e.lhs) and e.rhs.type == e.type:
            return e.rhs
    if (isinstance(e, ir.Cast) or isinstance(e, ir.Unary) and e.op == "-") and \
            _is_zero(e.operand):
        return zero
    return e


def _is_zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and not isinstance(e.value, bool) and e.value == 0


def _kept(pieces: list[ir.Statement], original: ir.Statement) -> list[ir.Statement]:
    """The pieces without those of a sum that add zero; the first one left keeps the
    ``!`` (the initialisation covers the box of the left-hand indices either way)."""
    if original.op == "+":
        kept = [p for p in pieces if not _is_zero(p.rhs)] or pieces[:1]
    else:
        kept = pieces
    return [dataclasses.replace(p, init=original.init and k == 0) for k, p in enumerate(kept)]


def _named(pieces: list[ir.Statement], original: ir.Statement) -> list[ir.Statement]:
    return [p if k == 0 else dataclasses.replace(p, name=f"{original.name}_{k}")
            for k, p in enumerate(pieces)]
