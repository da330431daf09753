"""The coverage proof: no statement reads, and no call returns, an element never written.

A tensor's first statement fixes its shape. When that statement is a box (every
range in the sizes only) or a ``!`` form (its initialisation covers the box of its
left-hand indices), it writes every element, and nothing is left to prove. Where it
is an ``=`` over a domain with index-dependent ranges (a triangle, a band), isl
proves, for every later read of the tensor, that earlier statements wrote what it
reads, and for an output, that its statements together write all of it::

    def symmetrize(float(N, N) A) -> (S) {
      S(i, k) = A(i, k) where k in 0:i + 1        # the lower triangle...
      S(i, k) = A(k, i) where k in i + 1:N        # ...and the upper: S is whole
    }

A first statement that leaves elements unwritten and no later one writing them is a
:class:`~polyc.errors.SemanticError` naming an element.
"""
from __future__ import annotations

import islpy as isl

from polyc.errors import SemanticError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.guards import guarded_reads
from polyc.lang.printer import expr_to_tc
from polyc.lang.types import INT64
from polyc.poly.program import (PolyStatement, isl_name, known_context, params_prefix,
                                poly_statements, touched_elements)


def prove_elements_written(op: ir.Op) -> ir.Op:
    """``op`` unchanged once proven (see the module docstring)."""
    partial = _partially_defined(op)
    if not partial:
        return op
    prefix = params_prefix(op)
    context = known_context(op)
    tensors = op.tensors
    written = {name: isl.Set(f"{prefix} -> {{ {isl_name(name)}[{_dims(tensors[name])}] : "
                             f"false }}") for name in partial}
    for stmt in poly_statements(op):
        statement = stmt.statement
        if not stmt.is_init:
            for read, guard in _reads_of(statement, partial, tensors):
                _check_read(stmt, read, guard, written[read.tensor], prefix, context, tensors)
        if statement.tensor in partial:
            lhs = tuple(ir.Index(INT64, i) for i in statement.indices)
            written[statement.tensor] = written[statement.tensor].union(
                touched_elements(stmt, tensors[statement.tensor], lhs, None, prefix, context))
    for name in partial:
        tensor = tensors[name]
        if tensor.role != ir.OUTPUT:
            continue
        missing = _shape_set(tensor, prefix).intersect_params(context).subtract(written[name])
        if not missing.is_empty():
            first = next(s for s in op.statements if s.tensor == name)
            raise SemanticError(
                f"output `{name}` is left unwritten at {_element(missing, name)} (polyc never "
                f"returns unwritten elements): write the rest in another statement, or use a "
                f"`!` reduction such as `+=!`, whose initialisation covers the whole box",
                first.span)
    return op


def _partially_defined(op: ir.Op) -> set[str]:
    """The tensors whose first statement is an ``=`` over a domain that is not a box."""
    first: dict[str, ir.Statement] = {}
    for statement in op.statements:
        first.setdefault(statement.tensor, statement)
    return {name for name, s in first.items() if s.op == "=" and not s.is_box}


def _reads_of(statement: ir.Statement, names: set[str], tensors
              ) -> list[tuple[ir.Read, str | None]]:
    """The statement's reads of ``names`` with their guards (:mod:`polyc.lang.guards`),
    and its accumulator's read when it accumulates into one of them."""
    reads = [(read, guard) for read, guard in guarded_reads(statement.rhs)
             if read.tensor in names]
    if statement.is_reduction and statement.tensor in names and not statement.init:
        tensor = tensors[statement.tensor]
        reads.append((ir.Read(tensor.type, tensor.name,
                              tuple(ir.Index(INT64, i) for i in statement.indices)), None))
    return reads


def _check_read(stmt: PolyStatement, read: ir.Read, guard: str | None, written: isl.Set,
                prefix, context, tensors) -> None:
    touched = touched_elements(stmt, tensors[read.tensor], read.indices, guard, prefix, context)
    missing = touched.subtract(written)
    if not missing.is_empty():
        raise SemanticError(
            f"`{expr_to_tc(read)}` reads {_element(missing, read.tensor)}, which no earlier "
            f"statement writes: `{read.tensor}`'s first statement leaves it unwritten",
            stmt.statement.span)


def _dims(tensor: ir.Tensor) -> str:
    return ", ".join(f"a{k}" for k in range(tensor.rank))


def _shape_set(tensor: ir.Tensor, prefix: str) -> isl.Set:
    bounds = " and ".join(f"0 <= a{k} < {sz.to_isl(d)}" for k, d in enumerate(tensor.shape))
    return isl.Set(f"{prefix} -> {{ {isl_name(tensor.name)}[{_dims(tensor)}] : "
                   f"{bounds or 'true'} }}")


def _element(elements: isl.Set, name: str) -> str:
    """One element of ``elements`` for the smallest sizes that have one: ``L(0, 1) for N = 2``."""
    point = _smallest_sizes_point(elements)
    coordinates = [point.get_coordinate_val(isl.dim_type.set, k).to_python()
                   for k in range(elements.dim(isl.dim_type.set))]
    sizes = [(elements.get_dim_name(isl.dim_type.param, k),
              point.get_coordinate_val(isl.dim_type.param, k).to_python())
             for k in range(elements.dim(isl.dim_type.param))]
    where = f" for {', '.join(f'{n} = {v}' for n, v in sizes)}" if sizes else ""
    return f"{name}({', '.join(map(str, coordinates))}){where}"


def _smallest_sizes_point(elements: isl.Set) -> isl.Point:
    """A point of ``elements`` with the sizes lexicographically smallest (parameters
    moved in front of the set dimensions for the lexmin, then back)."""
    params = elements.dim(isl.dim_type.param)
    moved = elements.move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, params)
    return _unmoved_point(moved.lexmin().sample_point(), params, elements)


def _unmoved_point(point: isl.Point, params: int, original: isl.Set) -> isl.Point:
    """``point`` of the set with its first ``params`` dimensions made parameters again."""
    values = [point.get_coordinate_val(isl.dim_type.set, k)
              for k in range(point.get_space().dim(isl.dim_type.set))]
    moved = isl.Point.zero(original.get_space())
    for k in range(params):
        moved = moved.set_coordinate_val(isl.dim_type.param, k, values[k])
    for k in range(original.dim(isl.dim_type.set)):
        moved = moved.set_coordinate_val(isl.dim_type.set, k, values[params + k])
    return moved
