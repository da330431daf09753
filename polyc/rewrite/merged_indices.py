"""Merged indices: a contraction over indices that move together runs over fewer, longer
ones, as a matrix product (the "transpose-transpose-GEMM" of tensor contraction codes).

Indices move together when every tensor one of them indexes has them all, as adjacent
dimensions in one order, over their whole extents: the pair ``(a, b)`` then addresses
the same element as one index ``ab = a * SB + b`` over ``SA * SB`` values, in a view of
the same memory with the pair's dimensions merged. A contraction over small extents
gains long vector loops and register blocks that fill their lanes::

    C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e)        extents 24: vectors 24 wide
  →
    A_t(a, b, e, f) = A(a, e, b, f)                         copies (see below)
    B_t(e, f, c, d) = B(d, f, c, e)
    C_m(ab, cd) +=! A_t_m(ab, ef) * B_t_m(ef, cd)           a 576 x 576 x 576 product

which runs in 0.9 ms where the six-deep nest took 1.5 (numpy's einsum, which makes the
same copies and calls OpenBLAS: 1.3; Zen 5, 2 threads; benchmarks/README.md, "Design
measurements").

The indices that can merge are those the statement uses only as whole dimensions of its
tensors (not in ``h + r``, not as values), ranging over ``0:extent`` of every dimension
they index. Candidates are the runs of the output's indices, and the sets of reduction
indices, that index the same tensors. An input whose dimensions of a candidate are not
adjacent (``A(a, e, b, f)``) is copied with them adjacent if the statement re-reads it
(some output index does not index it, so the copy serves many reads), laid out in the
order the register-blocked nest walks it (the output's groups, the reductions, the
vector group: :func:`polyc.rewrite.layout.loop_order`); otherwise the candidate is
not merged.

Only a pure reduction that defines its tensor (``+=!`` and the like, the tensor's only
writer) over a box is merged. Its merged size is a *derived size* the kernel computes
(``SA_SB = SA * SB``). A statement that touches the memory under another name is ordered
whole before or after it (:mod:`polyc.poly.dependences`, ``dep_alias``): isl cannot
relate a merged index to the storage's element by element.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ir import is_pure_reduction
from polyc.lang.types import INT64
from polyc.rewrite.layout import COPY_PREFIX, copy_statement, layout_copies, loop_order

Group = tuple[str, ...]


def merge_indices(op: ir.Op) -> ir.Op:
    """``op`` with the indices of its contractions that move together merged (see the
    module docstring)."""
    touches = Counter(t for s in op.statements for t in {s.tensor} | s.tensors_read)
    merging = _Merging(op)
    statements = []
    for stmt in op.statements:
        plan = _plan(stmt, op, touches[stmt.tensor] == 1)
        statements.append(stmt if plan is None else merging.merged(stmt, *plan))
    if not merging.views:
        return op
    return dataclasses.replace(
        op, statements=tuple(merging.copies) + tuple(statements),
        temporaries=op.temporaries + tuple(merging.copied.values()),
        views=op.views + tuple(merging.views.values()),
        derived_sizes=op.derived_sizes + tuple(merging.derived.values()))


def _plan(stmt: ir.Statement, op: ir.Op, own_output: bool
          ) -> tuple[list[Group], set[int]] | None:
    """The statement's index groups (the output's in order, then the reductions') and
    the positions of the reads to copy; ``None`` if no group has two indices.

    Only inputs, their copies and an output no other statement touches are merged: a
    tensor another statement touches would be read there under its own shape, and the
    two statements could no longer be fused (the row-wise softmax of an attention)."""
    if not (own_output and is_pure_reduction(stmt) and stmt.init and stmt.is_box
            and stmt.indices and stmt.reduction_indices):
        return None
    if any(isinstance(e, ir.Read) for read in ir.walk(stmt.rhs) if isinstance(read, ir.Read)
           for i in read.indices for e in ir.walk(i)):
        return None  # a gather: its dimension is data, not an index
    accesses = _accesses(stmt)
    mergeable = _mergeable(stmt, op, accesses)
    if len(mergeable) < 2:
        return None

    def signature(index: str) -> frozenset[int]:
        return frozenset(k for k, (_, dims) in enumerate(accesses) if index in dims)

    groups: list[list[str]] = []
    for index in stmt.indices:
        if (groups and index in mergeable and groups[-1][-1] in mergeable
                and signature(index) == signature(groups[-1][-1])):
            groups[-1].append(index)
        else:
            groups.append([index])
    by_signature: dict[frozenset[int], list[str]] = {}
    for index in stmt.reduction_indices:
        if index in mergeable:
            by_signature.setdefault(signature(index), []).append(index)
        else:
            groups.append([index])
    inputs = {t.name for t in op.inputs}
    for members in by_signature.values():
        groups.append(_reduction_order(members, accesses, inputs))
    copies: set[int] = set()
    for k, (tensor, dims) in enumerate(accesses):
        if k and tensor not in inputs:  # a temporary another statement writes
            broken = [g for g in groups if len(g) > 1 and set(g) & set(dims)]
        else:
            broken = [g for g in groups if len(g) > 1 and not _adjacent(g, dims)]
        if not broken:
            continue
        rereads = not set(stmt.indices) <= set(filter(None, dims))
        if tensor in inputs and rereads and all(dims):
            copies.add(k)
            continue
        groups = [part for g in groups for part in ([[i] for i in g] if g in broken else [g])]
    if all(len(g) == 1 for g in groups):
        return None
    copies = {k for k in copies if any(len(g) > 1 and not _adjacent(g, accesses[k][1])
                                       for g in groups)}
    return [tuple(g) for g in groups], copies


def _accesses(stmt: ir.Statement) -> list[tuple[str, tuple[str | None, ...]]]:
    """The output, then every read with its dimensions: the index name of a dimension
    indexed by a plain index, else ``None``."""
    reads = [e for e in ir.walk(stmt.rhs) if isinstance(e, ir.Read) and e.indices]
    return [(stmt.tensor, stmt.indices)] + [
        (r.tensor, tuple(i.name if isinstance(i, ir.Index) else None for i in r.indices))
        for r in reads]


def _mergeable(stmt: ir.Statement, op: ir.Op, accesses) -> set[str]:
    """The indices the statement uses only as whole dimensions, each over ``0:extent`` of
    every dimension it indexes, at most once per tensor access."""
    whole = Counter(name for _, dims in accesses[1:] for name in dims if name)
    used = Counter(e.name for e in ir.walk(stmt.rhs) if isinstance(e, ir.Index))
    result = set()
    for r in stmt.domain:
        if r.lo != sz.const(0) or used[r.index] != whole[r.index] or (
                r.index in stmt.reduction_indices and not whole[r.index]):
            continue
        if all(dims.count(r.index) <= 1 and all(
                op.tensor(tensor).shape[k] == r.hi
                for k, name in enumerate(dims) if name == r.index)
               for tensor, dims in accesses):
            result.add(r.index)
    return result


def _reduction_order(members: list[str], accesses, inputs: set[str]) -> list[str]:
    """The order of a group of reduction indices: of the orders the accesses hold them
    in, the one most accesses that cannot be copied (not inputs) hold adjacent, then
    the one most accesses hold adjacent (fewest copies), then the first."""
    orders = [[i for i in dims if i in members] for _, dims in accesses
              if set(members) <= set(dims)]

    def held(order: list[str]) -> tuple[int, int]:
        adjacent = [(tensor, _adjacent(order, dims)) for tensor, dims in accesses]
        return (sum(a for t, a in adjacent if t not in inputs), sum(a for _, a in adjacent))

    return max(orders, key=held)


def _adjacent(group: list[str], dims: tuple[str | None, ...]) -> bool:
    """Whether ``group``'s indices are absent from ``dims`` or adjacent there, in order."""
    if not set(group) & set(dims):
        return True
    if not set(group) <= set(dims):
        return False
    start = dims.index(group[0])
    return list(dims[start:start + len(group)]) == group


class _Merging:
    """The views, derived sizes and copies that merging an operator's statements needs,
    shared between statements."""

    def __init__(self, op: ir.Op):
        self.op = op
        self.taken = set(op.tensors) | set(op.parameters) | {
            r.index for s in op.statements for r in s.domain}
        self.derived: dict[tuple[sz.SizeExpr, ...], ir.DerivedSize] = {}
        self.views: dict[tuple[str, tuple], ir.Tensor] = {}
        self.copied: dict[tuple[str, tuple[int, ...]], ir.Tensor] = {}
        self.copies: list[ir.Statement] = []
        self.first_copy = len(layout_copies(op))

    def merged(self, stmt: ir.Statement, groups: list[Group], copies: set[int]
               ) -> ir.Statement:
        names = {g: g[0] if len(g) == 1 else self._name("".join(g)) for g in groups}
        ranges = {g: stmt.range_of(g[0]) if len(g) == 1 else ir.IndexRange(
            names[g], sz.const(0), sz.var(self._size(tuple(stmt.range_of(i).hi
                                                               for i in g))))
                  for g in groups}
        group_of = {i: g for g in groups for i in g}
        walk = loop_order(stmt, stmt.indices[-1])
        order = sorted(groups, key=lambda g: max(walk.index(i) for i in g))
        reads = [e for e in ir.walk(stmt.rhs) if isinstance(e, ir.Read) and e.indices]
        replaced = []
        for k, read in enumerate(reads, start=1):
            if k in copies:
                read = self._copy(read, order, group_of)
            replaced.append(self._view(read, group_of, names, ranges))
        output = self._view(ir.Read(self.op.tensor(stmt.tensor).type, stmt.tensor, tuple(
            ir.Index(INT64, i) for i in stmt.indices)), group_of, names, ranges)
        # ir.rewrite visits the reads in ir.walk's order (no read is inside another's
        # indices: _plan takes no gathers)
        replacements = iter(replaced)
        rhs = ir.rewrite(stmt.rhs, lambda e: next(replacements)
                         if isinstance(e, ir.Read) and e.indices else None)
        indices = tuple(names[g] for g in groups if g[0] in stmt.indices)
        reductions = tuple(names[g] for g in groups if g[0] not in stmt.indices)
        return dataclasses.replace(
            stmt, tensor=output.tensor, indices=indices, rhs=rhs,
            domain=tuple(ranges[g] for g in groups), reduction_indices=reductions)

    def _copy(self, read: ir.Read, order: list[Group], group_of) -> ir.Read:
        """``read`` of a copy of its input with each group's dimensions adjacent, in the
        nest's walk ``order``."""
        dims = [i.name for i in read.indices]
        position = {i: (order.index(group_of[i]), group_of[i].index(i)) for i in dims}
        permutation = tuple(sorted(range(len(dims)), key=lambda k: position[dims[k]]))
        key = (read.tensor, permutation)
        source = self.op.tensor(read.tensor)
        if key not in self.copied:
            name = self._name(f"{read.tensor}_t{''.join(str(k) for k in permutation)}")
            self.copied[key] = copy = ir.Tensor(
                name, source.type, tuple(source.shape[k] for k in permutation), ir.TEMPORARY)
            self.copies.append(copy_statement(
                source, permutation, copy, f"{COPY_PREFIX}{self.first_copy + len(self.copies)}"))
        return ir.Read(read.type, self.copied[key].name,
                       tuple(read.indices[k] for k in permutation))

    def _view(self, read: ir.Read, group_of, names, ranges) -> ir.Read:
        """``read`` through a view with its groups' dimensions merged (``read`` itself
        where none merges)."""
        copies = {t.name: t for t in self.copied.values()}
        tensor = copies.get(read.tensor) or self.op.tensor(read.tensor)
        indices, shape = [], []
        for k, index in enumerate(read.indices):
            group = group_of.get(index.name) if isinstance(index, ir.Index) else None
            if group is None or len(group) == 1:
                indices.append(index)
                shape.append(tensor.shape[k])
            elif group[0] == index.name:
                indices.append(ir.Index(INT64, names[group]))
                shape.append(ranges[group].hi)
        if len(indices) == len(read.indices):
            return read
        key = (tensor.name, tuple(shape))
        if key not in self.views:
            self.views[key] = ir.Tensor(self._name(f"{tensor.name}_m"), tensor.type,
                                        tuple(shape), ir.VIEW, storage=tensor.name)
        return ir.Read(read.type, self.views[key].name, tuple(indices))

    def _size(self, factors: tuple[sz.SizeExpr, ...]) -> str:
        if factors not in self.derived:
            plain = [sz.plain_name(f) for f in factors]
            name = self._name("_".join(plain) if all(plain) else f"E{len(self.derived)}")
            self.derived[factors] = ir.DerivedSize(name, factors)
        return self.derived[factors].name

    def _name(self, wanted: str) -> str:
        return ir.fresh_name(wanted, self.taken, separator="")

