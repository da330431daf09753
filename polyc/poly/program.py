"""IR → isl: iteration domains, access relations and the original schedule.

Each IR statement becomes one or two polyhedral statements. A ``!`` form
splits into an initialisation over the left-hand indices and the update
over the whole domain; TC's ``C(m, n) +=! A(m, k) * B(k, n)`` gives::

    domain:   [M, N, K] -> { S0_init[m, n] : 0 <= m < M and 0 <= n < N;
                             S0[m, n, k] : 0 <= m < M and 0 <= n < N and 0 <= k < K }
    writes:   { S0_init[m, n] -> C[m, n]; S0[m, n, k] -> C[m, n] }
    reads:    { S0[m, n, k] -> C[m, n]; S0[m, n, k] -> A[m, k]; S0[m, n, k] -> B[k, n] }

Sizes are isl parameters. A data-dependent index (``LUT(I(b, l), d)``) is a
may-read of the whole dimension it indexes; a read under a guard (``i >= 1 ?
A(i - 1) : 0``) is restricted to where the guard holds (:mod:`polyc.lang.guards`).
The original schedule runs the statements in program order, each in the
lexicographic order of its domain.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import affine_of, bound_pieces, linear_to_isl
from polyc.lang.sizes import isl_name
from polyc.lang.types import INT64
from polyc.lang.guards import guarded_reads

INIT_SUFFIX = "_init"


def isl_items(isl_list) -> list:
    """The elements of an isl list (``UnionSet.get_set_list()``, ``UnionMap.get_map_list()``)."""
    return [isl_list.get_at(k) for k in range(len(isl_list))]


def statement_names(domain: isl.UnionSet) -> list[str]:
    """The names of the statements with instances in ``domain``, in isl's order."""
    return [part.get_tuple_name() for part in isl_items(domain.get_set_list())]


def tensors_unwritten_in(program: PolyProgram, domain: isl.UnionSet) -> frozenset[str]:
    """The tensors no statement with instances in ``domain`` writes: while the loops of
    a schedule subtree whose domain that is run, nothing changes them (only the
    subtree's statements run then), whatever other nests write them before or after."""
    written = {program.statement(name).statement.tensor for name in statement_names(domain)}
    return frozenset(program.op.tensors) - written


def statements_named(domain: isl.UnionSet, names) -> isl.UnionSet:
    """The part of ``domain`` that belongs to the statements called ``names``."""
    result = isl.UnionSet.empty(domain.get_space())
    for part in isl_items(domain.get_set_list()):
        if part.get_tuple_name() in names:
            result = result.union(isl.UnionSet.from_set(part))
    return result


@dataclass(frozen=True)
class PolyStatement:
    """One polyhedral statement: an IR statement's update, or its initialisation."""

    name: str
    statement: ir.Statement
    is_init: bool

    @property
    def indices(self) -> tuple[str, ...]:
        if self.is_init:
            return self.statement.indices
        return tuple(r.index for r in self.statement.domain)


@dataclass(frozen=True)
class PolyProgram:
    """The polyhedral model of one operator (PPCG's vocabulary)."""

    op: ir.Op
    statements: tuple[PolyStatement, ...]
    context: isl.Set             # what is known of the sizes at run time
    domain: isl.UnionSet         # { S[i, ...] : ... }
    reads: isl.UnionMap          # { S[i, ...] -> T[...] } (may)
    may_writes: isl.UnionMap
    must_writes: isl.UnionMap
    original_schedule: isl.UnionMap  # { S[i, ...] -> [position, i, ..., 0] }

    def statement(self, name: str) -> PolyStatement:
        return next(s for s in self.statements if s.name == name)


def params_prefix(op: ir.Op) -> str:
    return "[" + ", ".join(isl_name(s) for s in op.parameters) + "]"


def poly_statements(op: ir.Op) -> tuple[PolyStatement, ...]:
    result = []
    for stmt in op.statements:
        if stmt.init:
            result.append(PolyStatement(stmt.name + INIT_SUFFIX, stmt, True))
        result.append(PolyStatement(stmt.name, stmt, False))
    return tuple(result)


def domain_constraints(stmt: PolyStatement) -> str:
    """isl text of the statement's domain: its ranges, and where a range depends on other
    indices, its bounds (an initialisation covers the box of the left-hand indices)."""
    if stmt.is_init:
        ranges = tuple(stmt.statement.range_of(i) for i in stmt.statement.indices)
        parts = [box_constraint(r) for r in ranges]
    else:
        parts = [c for r in stmt.statement.domain for c in range_constraints(r)]
    return " and ".join(parts) if parts else "true"


def box_domain(program: PolyProgram, stmt: PolyStatement) -> isl.Set:
    """The statement's bounding box: its ranges with their size bounds only."""
    ranges = stmt.statement.domain if not stmt.is_init else tuple(
        stmt.statement.range_of(i) for i in stmt.statement.indices)
    body = " and ".join(box_constraint(r) for r in ranges) or "true"
    return isl.Set(f"{params_prefix(program.op)} -> {{ {tuple_text(stmt)} : {body} }}")


def box_constraint(r: ir.IndexRange) -> str:
    """``lo <= index < hi``, a ``max`` in ``lo`` and a ``min`` in ``hi`` one constraint
    per argument (isl would read them as a union of cases)."""
    name = isl_name(r.index)
    parts = [f"{sz.to_isl(lo)} <= {name}" for lo in _arguments(r.lo, "max")]
    parts += [f"{name} < {sz.to_isl(hi)}" for hi in _arguments(r.hi, "min")]
    return " and ".join(parts)


def _arguments(e: sz.SizeExpr, op: str) -> list[sz.SizeExpr]:
    if isinstance(e, sz.MinMax) and e.op == op:
        return [a for arg in e.args for a in _arguments(arg, op)]
    return [e]


def range_constraints(r: ir.IndexRange) -> list[str]:
    """The constraints of ``index in lo:hi``: the box, and the bounds that depend on
    other indices (``max`` in a lower bound, ``min`` in an upper one, one constraint
    per argument)."""
    parts = [box_constraint(r)]
    name = isl_name(r.index)
    if r.lo_bound is not None:
        parts += [f"{linear_to_isl(p)} <= {name}" for p in bound_pieces(r.lo_bound, "max")]
    if r.hi_bound is not None:
        parts += [f"{name} < {linear_to_isl(p)}" for p in bound_pieces(r.hi_bound, "min")]
    return parts


def tuple_text(stmt: PolyStatement) -> str:
    return f"{stmt.name}[{', '.join(isl_name(i) for i in stmt.indices)}]"


def sizes_context(op: ir.Op) -> isl.Set:
    """Sizes are non-negative and every extent is non-negative (else the call is rejected)."""
    constraints = [f"{isl_name(s)} >= 0" for s in op.parameters]
    for tensor in op.tensors.values():
        constraints += [f"{sz.to_isl(d)} >= 0" for d in tensor.shape if sz.size_names(d)]
    body = " and ".join(constraints) if constraints else "true"
    return isl.Set(f"{params_prefix(op)} -> {{ : {body} }}")


def known_context(op: ir.Op) -> isl.Set:
    """What is known of the sizes at run time: :func:`sizes_context` and the
    preconditions the bounds proof added."""
    context = sizes_context(op)
    for precondition in op.preconditions:
        context = context.intersect(isl.Set(precondition.condition))
    return context


def touched_elements(stmt: PolyStatement, tensor: ir.Tensor, indices: tuple[ir.Expr, ...],
                     guard: str | None, prefix: str, context: isl.Set) -> isl.Set:
    """The elements of ``tensor`` that ``stmt`` touches at ``indices`` (where ``guard``
    holds) over its whole domain, for the sizes ``context`` allows."""
    domain = isl.Set(f"{prefix} -> {{ {tuple_text(stmt)} : {domain_constraints(stmt)} }}")
    relation = isl.Map(f"{prefix} -> {{ {access_text(stmt, tensor, indices, guard)} }}")
    return domain.intersect_params(context).apply(relation)


def access_text(stmt: PolyStatement, tensor: ir.Tensor, indices: tuple[ir.Expr, ...],
                guard: str | None = None) -> str:
    """``S[i, k] -> A[i, k]``, with a data-dependent dimension spanning the whole extent,
    restricted to the points where ``guard`` (isl text over the statement's indices,
    :mod:`polyc.lang.guards`) holds."""
    names, constraints = [], [f"({guard})"] if guard else []
    for position, (index, extent) in enumerate(zip(indices, tensor.shape)):
        linear = affine_of(index)
        if linear is None:
            name = f"a{position}"
            names.append(name)
            constraints.append(f"0 <= {name} < {sz.to_isl(extent)}")
        else:
            names.append(linear_to_isl(linear))
    text = f"{tuple_text(stmt)} -> {isl_name(tensor.name)}[{', '.join(names)}]"
    return text + (f" : {' and '.join(constraints)}" if constraints else "")


def build_poly_program(op: ir.Op) -> PolyProgram:
    """The isl model of ``op`` (see the module docstring)."""
    statements = poly_statements(op)
    prefix = params_prefix(op)
    tensors = op.tensors
    domain_parts, read_parts, write_parts, schedule_parts = [], [], [], []
    depth = max((len(s.indices) for s in statements), default=0)
    for position, stmt in enumerate(statements):
        domain_parts.append(f"{tuple_text(stmt)} : {domain_constraints(stmt)}")
        target = tensors[stmt.statement.tensor]
        lhs = tuple(ir.Index(INT64, i) for i in stmt.statement.indices)
        write_parts.append(access_text(stmt, target, lhs))
        if not stmt.is_init:
            if stmt.statement.is_reduction:
                read_parts.append(access_text(stmt, target, lhs))
            for read, guard in guarded_reads(stmt.statement.rhs):
                read_parts.append(access_text(stmt, tensors[read.tensor], read.indices, guard))
        dims = [isl_name(i) for i in stmt.indices] + ["0"] * (depth - len(stmt.indices))
        schedule_parts.append(f"{tuple_text(stmt)} -> [{', '.join([str(position)] + dims)}]")

    def union_map(parts) -> isl.UnionMap:
        if not parts:
            return isl.UnionMap(f"{prefix} -> {{ }}")
        return isl.UnionMap(f"{prefix} -> {{ {'; '.join(parts)} }}")

    context = known_context(op)
    domain = isl.UnionSet(f"{prefix} -> {{ {'; '.join(domain_parts)} }}") if domain_parts \
        else isl.UnionSet(f"{prefix} -> {{ }}")
    domain = domain.intersect_params(context)
    writes = union_map(write_parts).intersect_domain(domain)
    return PolyProgram(
        op=op,
        statements=statements,
        context=context,
        domain=domain,
        reads=union_map(read_parts).intersect_domain(domain),
        may_writes=writes,
        must_writes=writes,
        original_schedule=union_map(schedule_parts).intersect_domain(domain),
    )

