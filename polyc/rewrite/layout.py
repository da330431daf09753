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

More generally the copy takes the order in which the loops walk the operand
(:func:`_better_order`), so that a register block's reduction steps read
adjacent rows too (a convolution's input channels). The same holds for an operand
without the vector index, read across the register block's rows (``A(k, m)`` in
``C(m, n) +=! A(k, m) * B(k, n)``, a backward's transposed product): in place, each
reduction step takes a new line of every row of blocks, a row of ``A`` apart, and the
next block of columns finds none of them in cache when that stride is a power of two
(all in one L1 set); copied as ``A_t(m, k)``, each row of the block streams along
``k`` (1024³, 2 threads: 0.62-0.64 → 0.80-0.87 of numpy's ``A.T @ B``). Only inputs read with
affine indices (no gathers) are copied, each a permutation of the input's
dimensions. The copies are ordinary statements (``L0``, ``L1``, ...), scheduled
as a prologue before the rest and proven legal like everything else.
"""
from __future__ import annotations

import dataclasses

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ir import is_pure_reduction
from polyc.lang.ranges import affine_of
from polyc.lang.types import INT64

# Copy statements are named L0, L1, ... (the user's statements keep S0, S1, ...).
COPY_PREFIX = "L"


def transpose_strided_operands(op: ir.Op) -> ir.Op:
    """``op`` with copies of the inputs worth transposing (see the module docstring)."""
    inputs = {t.name: t for t in op.inputs}
    inputs.update({v.name: v for v in op.views if v.storage in inputs})  # merged inputs
    copies: dict[tuple[str, tuple[int, ...]], ir.Tensor] = {}
    statements = []
    for stmt in op.statements:
        if not (is_pure_reduction(stmt) and stmt.indices and stmt.reduction_indices):
            statements.append(stmt)
            continue
        vector_index = stmt.indices[-1]

        def copied(read: ir.Read) -> ir.Read:
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

        statements.append(dataclasses.replace(stmt, rhs=ir.rewrite(
            stmt.rhs, lambda e: copied(e) if isinstance(e, ir.Read) else None)))
    if not copies:
        return op
    first = len(layout_copies(op))
    prologue = [copy_statement(inputs[name], order, copy, f"{COPY_PREFIX}{first + k}")
                for k, ((name, order), copy) in enumerate(copies.items())]
    return dataclasses.replace(op, temporaries=op.temporaries + tuple(copies.values()),
                               statements=tuple(prologue + statements))


def transpose_window_outputs(op: ir.Op) -> ir.Op:
    """``op`` with each contraction whose output's last index is a window computed into a
    temporary with the windows outermost, then copied out.

    A contraction vectorises along its output's last index. The weight gradient of a
    convolution, ``d_F(k, c, r, s) +=! d_O(n, k, h, w) * I(n, c, h + r, w + s)``, ends in
    ``s``, a window offset (a few elements: 3 lanes of 8 or 16). A window is told from
    the index it offsets by their ranges: its own is a size or a constant (``0:S``),
    the other's is derived from it (``0:W - S + 1``)::

        d_F(k, c, r, s) +=! d_O(n, k, h, w) * I(n, c, h + r, w + s)
      →
        d_F_w(r, s, k, c) +=! d_O(n, k, h, w) * I(n, c, h + r, w + s)
        d_F(k, c, r, s) = d_F_w(r, s, k, c)

    which vectorises along the channels (measured at the bench sizes: 184 → 28 ms).
    Only a tensor's defining contraction (``+=!`` and the like, over its whole
    shape), with an output index that is not a window, is transposed."""
    statements, temporaries = [], []
    defined: set[str] = set()
    taken = set(op.tensors) | set(op.sizes)
    for stmt in op.statements:
        first = stmt.tensor not in defined
        defined.add(stmt.tensor)
        windows = _window_indices(stmt)
        if not (first and is_pure_reduction(stmt) and stmt.init and stmt.is_box and stmt.indices
                and stmt.indices[-1] in windows and set(stmt.indices) - windows):
            statements.append(stmt)
            continue
        order = sorted(range(len(stmt.indices)), key=lambda k: stmt.indices[k] not in windows)
        tensor = op.tensor(stmt.tensor)
        name = ir.fresh_name(f"{stmt.tensor}_w", taken, separator="")
        temporaries.append(ir.Tensor(name, tensor.type, tuple(tensor.shape[k] for k in order),
                                     ir.TEMPORARY))
        indices = tuple(stmt.indices[k] for k in order)
        statements.append(dataclasses.replace(
            stmt, tensor=name, indices=indices,
            domain=tuple(stmt.range_of(i) for i in indices) + tuple(
                stmt.range_of(i) for i in stmt.reduction_indices)))
        statements.append(ir.Statement(
            name=f"{stmt.name}_out", tensor=stmt.tensor, indices=stmt.indices, op="=",
            init=False, rhs=ir.Read(tensor.type, name, tuple(ir.Index(INT64, i)
                                                             for i in indices)),
            domain=tuple(stmt.range_of(i) for i in stmt.indices), reduction_indices=()))
    if not temporaries:
        return op
    return dataclasses.replace(op, temporaries=op.temporaries + tuple(temporaries),
                               statements=tuple(statements))


def _window_indices(stmt: ir.Statement) -> set[str]:
    """The indices that are windows of another in some read (``r`` of ``h + r`` when
    ``r`` ranges over a size or a constant and ``h`` over a range derived from it)."""
    ranges = {r.index: r.hi for r in stmt.domain}

    def plain(extent) -> bool:
        return sz.plain_name(extent) is not None or (
            isinstance(extent, sz.Affine) and extent.is_constant)

    windows = set()
    for read in (e for e in ir.walk(stmt.rhs) if isinstance(e, ir.Read)):
        for index in read.indices:
            linear = affine_of(index)
            names = [n for n, c in linear.coefficients if c > 0] if linear else []
            for window in names:
                if plain(ranges[window]) and any(
                        not plain(ranges[other]) and sz.size_names(ranges[window])
                        <= sz.size_names(ranges[other]) for other in names if other != window):
                    windows.add(window)
    return windows


def layout_copies(op: ir.Op) -> tuple[str, ...]:
    """The names of the copy statements this pass added (scheduled as a prologue)."""
    return tuple(s.name for s in op.statements if s.name.startswith(COPY_PREFIX))


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
    """The dimension order of the copy, if this read is worth copying: affine indices
    (no gather), the vector index in at most one dimension (none: an operand the
    register block broadcasts along its rows), the operand invariant along some output
    index (so it is re-read), and its dimensions out of the loops' order.

    The copy is laid out in the order the statement's loops walk it (each dimension
    keyed by the innermost loop that moves it, :func:`loop_order`): a register
    block's vector lanes read one row, and its successive reduction steps adjacent
    rows. The contraction's ``B(d, f, c, e)`` becomes ``B_t(c, e, f, d)``, not
    ``B_t(f, c, e, d)``, whose steps along ``f`` were 24³ elements apart, all in two
    sets of the L1 cache; a convolution's ``I(n, c, h + r, w + s)`` becomes
    ``I_t(n, h + r, c, w + s)``, its steps along the channels a row apart instead of
    an image apart. The copy's cost against the compute falls with the output
    channels that re-read it: with few channels it costs more than it saves, and it
    is made all the same (measurements: benchmarks/README.md, "Design
    measurements")."""
    if any(isinstance(e, ir.Read) for i in read.indices for e in ir.walk(i)):
        return None
    dims = [ir.index_names(i) for i in read.indices]
    if sum(vector_index in names for names in dims) > 1:
        return None
    if all(index in frozenset().union(*dims) for index in stmt.indices):
        return None  # read once per output element: a copy would not pay
    walk = loop_order(stmt, vector_index)
    order = tuple(sorted(range(len(dims)), key=lambda k: max(
        (walk.index(name) for name in dims[k]), default=-1)))
    return None if order == tuple(range(len(dims))) else order


def loop_order(stmt: ir.Statement, vector_index: str) -> list[str]:
    """The statement's indices in the order its register-blocked nest walks them,
    outermost first: the output indices, the window offsets (the ``r`` of ``h + r``:
    short loops, outside the block's other reductions), the other reductions, the
    vector index; each group in the statement's order."""
    windows = {name for read in ir.walk(stmt.rhs) if isinstance(read, ir.Read)
               for i in read.indices if len(ir.index_names(i)) > 1
               for name in ir.index_names(i)}
    reductions = sorted(stmt.reduction_indices, key=lambda r: r not in windows)
    return [i for i in stmt.indices if i != vector_index] + reductions + [vector_index]


def copy_statement(source: ir.Tensor, order: tuple[int, ...], copy: ir.Tensor,
                    name: str) -> ir.Statement:
    indices = tuple(f"t{k}" for k in range(source.rank))
    read = ir.Read(source.type, source.name, tuple(ir.Index(INT64, i) for i in indices))
    lhs = tuple(indices[k] for k in order)
    domain = tuple(ir.IndexRange(indices[k], sz.const(0), source.shape[k]) for k in order)
    return ir.Statement(name=name, tensor=copy.name, indices=lhs, op="=", init=False,
                        rhs=read, domain=domain, reduction_indices=())
