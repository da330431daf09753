"""The members of a band and the statements below it, as the scheduling heuristics see
them: which index each member walks per statement, the accesses with their affine
indices, and the questions tiling, jams and fusion ask of them (does a member carry
reuse, is an access reused in a block worth tiling, is a reduction vectorisable along it,
does a statement write an output once).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.lang.builtins import is_library_call
from polyc.lang.ir import is_pure_reduction
from polyc.lang.ranges import LinearIndex, affine_of
from polyc.lang.types import INT64
from polyc.poly.program import PolyProgram, PolyStatement, isl_items
from polyc.rewrite.layout import write_once_outputs
from polyc.scheduling.cache_model import Footprint


@dataclass(frozen=True)
class Access:
    tensor: str
    dims: tuple[LinearIndex | None, ...]
    is_write: bool


def statement_accesses(stmt: PolyStatement, op: ir.Op) -> tuple[Access, ...]:
    """The write and the reads of one polyhedral statement, with affine indices."""
    statement = stmt.statement
    lhs = tuple(affine_of(ir.Index(INT64, i)) for i in statement.indices)
    accesses = [Access(statement.tensor, lhs, True)]
    if not stmt.is_init:
        if statement.is_reduction:
            accesses.append(Access(statement.tensor, lhs, False))
        for read in (e for e in ir.walk(statement.rhs) if isinstance(e, ir.Read)):
            if op.tensor(read.tensor).rank:
                accesses.append(Access(read.tensor, tuple(affine_of(i) for i in read.indices),
                                       False))
    return tuple(accesses)


def uses(access: Access, index: str) -> bool:
    """Whether the access varies with ``index`` (a gathered dimension may)."""
    return any(d is None or d.coefficient(index) for d in access.dims)


@dataclass(frozen=True)
class Member:
    """One band member: for each statement, the index it walks (None: constant)."""

    position: int
    coincident: bool
    walks: dict[str, str | None]  # statement name -> index name, or None
    affine: bool                  # every statement's expression is `index + c` or constant
    plain: frozenset[str] = frozenset()  # statements whose expression is the bare index


def band_members(node: isl.ScheduleNode, program: PolyProgram) -> list[Member]:
    partial = node.band_get_partial_schedule()
    members = []
    for position in range(node.band_n_member()):
        walks: dict[str, str | None] = {}
        plain = set()
        affine = True
        for pw_aff in isl_items(partial.get_at(position).get_pw_aff_list()):
            name = pw_aff.get_domain_space().get_tuple_name(isl.dim_type.set)
            pieces = pw_aff.get_pieces()
            stmt = program.statement(name)
            if len(pieces) != 1:
                affine = False
                continue
            aff = pieces[0][1]
            dims = [d for d in range(aff.dim(isl.dim_type.in_))
                    if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()]
            if not dims:
                walks[name] = None
            elif len(dims) == 1 and aff.get_coefficient_val(
                    isl.dim_type.in_, dims[0]).is_one() and aff.get_denominator_val().is_one():
                walks[name] = stmt.indices[dims[0]]
                if aff.get_constant_val().is_zero():
                    plain.add(name)
            else:
                affine = False
        members.append(Member(position, bool(node.band_member_get_coincident(position)),
                              walks, affine, frozenset(plain)))
    return members


def unit_stride_score(member: Member, members: list[Member], program: PolyProgram) -> float:
    """How well vectorising along ``member`` suits the accesses of the band's statements.

    Per access: unit stride +1, invariant +0.5 (it stays in a register), strided -2;
    a write counts double. Each statement weighs by its share of the band's work:
    ``64 ** (members it walks)``, so a reduction outweighs its initialisation.
    """
    score = 0.0
    for name, index in member.walks.items():
        if index is None:
            continue
        depth = sum(1 for m in members if m.walks.get(name) is not None)
        work = 64.0 ** depth
        for access in statement_accesses(program.statement(name), program.op):
            weight = work * (2.0 if access.is_write else 1.0)
            if not any(d is None or d.coefficient(index) != 0 for d in access.dims):
                score += 0.5 * weight
            elif walks_unit_stride(access, index):
                score += weight
            else:
                score -= 2 * weight
    return score


def memory_depth(member: Member, members: list[Member], program: PolyProgram) -> float:
    """How far from the contiguous dimension the accesses walk ``member``: per access that
    uses its index, the count of dimensions after the last one the index moves (0 along
    the rows' elements, 1 from row to row, ...), weighed as in :func:`unit_stride_score`
    by each statement's share of the work. In a row-major array the deeper member has the
    longer stride, so it belongs outside: a loop nest walked in memory order reads whole
    lines and pages in turn (a loop from image to image inside a loop over rows reads a
    128-byte row a page apart at every step)."""
    total = weight = 0.0
    for name, index in member.walks.items():
        if index is None:
            continue
        work = 64.0 ** sum(1 for m in members if m.walks.get(name) is not None)
        for access in statement_accesses(program.statement(name), program.op):
            moved = [k for k, d in enumerate(access.dims) if d is None or d.coefficient(index)]
            if moved:
                total += work * (len(access.dims) - 1 - moved[-1])
                weight += work
    return total / weight if weight else 0.0


def walks_unit_stride(access, index: str) -> bool:
    """Whether ``access`` walks ``index`` along its last (contiguous) dimension only, one
    element a step."""
    dims = access.dims
    return bool(dims) and dims[-1] is not None and dims[-1].coefficient(index) == 1 and all(
        d is not None and d.coefficient(index) == 0 for d in dims[:-1])


def is_vector_reduction(member: Member, program: PolyProgram) -> bool:
    """Whether ``member`` may be vectorised as a reduction: the only statement walking it is
    one reduction whose accumulator does not depend on it and whose right-hand side does not
    read the accumulated tensor. Reductions may be reassociated, so the loop then runs as
    a vector loop over lanes of partial results folded into a scalar accumulator
    (:mod:`polyc.codegen.vector_reductions`)."""
    walking = [name for name, index in member.walks.items() if index is not None]
    if len(walking) != 1:
        return False
    stmt = program.statement(walking[0])
    statement = stmt.statement
    index = member.walks[walking[0]]
    return not stmt.is_init and is_pure_reduction(statement) and \
        index not in statement.indices


def reuse_per_member(members: list[Member], program: PolyProgram) -> list[bool]:
    """For each member, whether it carries data reuse: some access of a statement walking
    it is invariant along it. A member that every access depends on (a batch index) gains
    nothing from tiling."""
    accesses = [(name, access) for name in set().union(*(m.walks for m in members))
                for access in statement_accesses(program.statement(name), program.op)]
    return [any(m.walks.get(name) is not None and not uses(access, m.walks[name])
                for name, access in accesses) for m in members]


def band_footprints(members: list[Member], program: PolyProgram) -> list[Footprint]:
    """The block of each array a tile of the band touches (one per tensor and index
    pattern: an accumulator's read and write count once). A gathered dimension may span
    every member its statement walks."""
    footprints = set()
    for name in set().union(*(m.walks for m in members)):
        walked = [(k, m.walks[name]) for k, m in enumerate(members)
                  if m.walks.get(name) is not None]
        for access in statement_accesses(program.statement(name), program.op):
            footprints.add((access.tensor, Footprint(tuple(
                tuple((k, 1) for k, _ in walked) if d is None else
                tuple((k, d.coefficient(index)) for k, index in walked
                      if d.coefficient(index))
                for d in access.dims))))
    return [footprint for _, footprint in sorted(footprints, key=repr)]


def carries_reuse(node: isl.ScheduleNode, program: PolyProgram) -> bool:
    """Whether some access of a statement below the band is invariant along its first
    member (``x(j)`` along a matrix-vector product's rows)."""
    members = band_members(node, program)
    return all(m.affine for m in members) and reuse_per_member(members[:1], program)[0]


def accumulates_along(node: isl.ScheduleNode, program: PolyProgram) -> bool:
    """Whether a reduction below the band accumulates along its first member into
    elements that do not depend on it (``y(j) += A(i, j) tmp(i)`` along ``i``)."""
    member = band_members(node, program)[0]
    for name, index in member.walks.items():
        stmt = program.statement(name)
        if index is not None and not stmt.is_init and stmt.statement.is_reduction \
                and index not in stmt.statement.indices:
            return True
    return False


def reduces(statements: isl.UnionSet, program: PolyProgram) -> bool:
    """Whether one of ``statements`` is a reduction's update (not its initialisation)."""
    return any(not (stmt := program.statement(part.get_tuple_name())).is_init
               and stmt.statement.is_reduction
               for part in isl_items(statements.get_set_list()))


def writes_once_below(node: isl.ScheduleNode, program: PolyProgram) -> bool:
    """Whether a statement below the band stores an output written once
    (:func:`~polyc.rewrite.layout.write_once_outputs`)."""
    return writes_once(node.get_domain(), program)


def calls_library(statements: isl.UnionSet, program: PolyProgram) -> bool:
    """Whether one of ``statements`` calls a math library function (``exp``)."""
    return any(isinstance(e, ir.Call) and is_library_call(e.function)
               for part in isl_items(statements.get_set_list())
               for e in ir.walk(program.statement(part.get_tuple_name()).statement.rhs))


def writes_once(statements: isl.UnionSet, program: PolyProgram) -> bool:
    """Whether one of ``statements`` stores an output written once."""
    once = write_once_outputs(program.op)
    return any(program.statement(part.get_tuple_name()).statement.tensor in once
               for part in isl_items(statements.get_set_list()))


def tiling_matters(node: isl.ScheduleNode, program: PolyProgram) -> bool:
    """Whether tiling the band would keep reused blocks of data in cache: some access is
    invariant along a member of the band (reused) and varies along two others (a block,
    like matmul's ``A(m, k)`` along ``n``). Reused rows or scalars (``x(j)`` in a
    matrix-vector product) stay in cache untiled."""
    members = band_members(node, program)
    if not all(m.affine for m in members):
        return False
    for name in set().union(*(m.walks for m in members)):
        walked = [m.walks[name] for m in members if m.walks.get(name) is not None]
        for access in statement_accesses(program.statement(name), program.op):
            varying = [index for index in walked if uses(access, index)]
            if 2 <= len(varying) < len(walked):
                return True
    return False
