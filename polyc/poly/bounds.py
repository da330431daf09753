"""The static bounds proof: every affine access stays inside its tensor.

For each access, isl computes the sizes for which some point of the
statement's domain reaches outside the tensor::

    bad = params((access(domain)) \\ { T[a0, ...] : 0 <= a0 < extent0 and ... })

Empty: proven safe for all sizes. Otherwise the complement (within the
sizes' context) becomes an :class:`~polyc.lang.ir.Precondition` that every
call checks before running, as for TC's ``C(i + j)``, which needs ``C`` long
enough. If no sizes that give the statement any work make the access safe, the
program is rejected.
Data-dependent dimensions (gathers) are checked at run time instead. A read under a
guard is checked where its guard holds (``i >= 1 ? A(i - 1) : 0`` is in bounds for
every ``N``): :mod:`polyc.lang.guards`.
"""
from __future__ import annotations

import dataclasses

import islpy as isl

from polyc.errors import SemanticError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.printer import expr_to_tc
from polyc.lang.types import INT64
from polyc.lang.guards import guarded_reads
from polyc.poly.program import (access_text, isl_name, params_prefix, poly_statements,
                                sizes_context, tuple_text, domain_constraints)


def prove_accesses_in_bounds(op: ir.Op) -> ir.Op:
    """``op`` with the preconditions its accesses need (see the module docstring)."""
    prefix = params_prefix(op)
    context = sizes_context(op)
    tensors = op.tensors
    preconditions: list[ir.Precondition] = []
    seen: set[str] = set()
    for stmt in poly_statements(op):
        if stmt.is_init:
            continue
        domain = isl.Set(f"{prefix} -> {{ {tuple_text(stmt)} : {domain_constraints(stmt)} }}")
        domain = domain.intersect_params(context)
        lhs = ir.Read(tensors[stmt.statement.tensor].type, stmt.statement.tensor,
                      tuple(ir.Index(INT64, i) for i in stmt.statement.indices))
        for access, guard in [(lhs, None)] + guarded_reads(stmt.statement.rhs):
            tensor = tensors[access.tensor]
            if tensor.rank == 0:
                continue
            access_map = access_text(stmt, tensor, access.indices, guard)
            relation = isl.Map(f"{prefix} -> {{ {access_map} }}")
            touched = domain.apply(relation)
            box = isl.Set(f"{prefix} -> {{ {isl_name(tensor.name)}"
                          f"[{', '.join(f'a{k}' for k in range(tensor.rank))}] : "
                          + " and ".join(f"0 <= a{k} < {sz.to_isl(d)}"
                                         for k, d in enumerate(tensor.shape)) + " }")
            bad = touched.subtract(box).params().intersect(context)
            if bad.is_empty():
                continue
            safe = context.subtract(bad).coalesce()
            text = _access_source(access)
            if safe.intersect(domain.params()).is_empty():
                clamp = "" if stmt.statement.is_box else (
                    " (clamp an index-dependent range to the extents: `j in max(0, i - W):"
                    "min(N, i + W + 1)`)")
                raise SemanticError(
                    f"`{text}` reads or writes outside `{tensor.name}` "
                    f"({', '.join(sz.to_tc(d) for d in tensor.shape)}) for every choice of "
                    f"sizes that gives the statement work: check its index expressions or "
                    f"add a `where` range{clamp}",
                    stmt.statement.span)
            condition = str(safe)
            if condition in seen:
                continue
            seen.add(condition)
            preconditions.append(ir.Precondition(
                condition=condition,
                description=f"`{text}` in statement {stmt.name} stays inside `{tensor.name}` "
                            f"({', '.join(sz.to_tc(d) for d in tensor.shape)}) only if "
                            f"{_constraint_text(safe)}",
                span=stmt.statement.span))
    return dataclasses.replace(op, preconditions=tuple(preconditions))


def _access_source(access: ir.Read) -> str:
    return expr_to_tc(access)


def _constraint_text(condition: isl.Set) -> str:
    text = str(condition)
    return text[text.index(":") + 1:text.rindex("}")].strip() if ":" in text else text
