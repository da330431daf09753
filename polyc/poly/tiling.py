"""Band optimisation: loop order, tiling and SIMD marks on permutable bands.

For the outermost band along each path of the schedule tree:

1. **Order** — coincident (parallel) members first, the others (reductions)
   inside, so the outer loops can run in parallel and an output tile stays in
   cache while the reduction sweeps.
2. **Tile** — when some access is invariant along a member (data reuse), tile
   the band; the tile size makes one tile's working set fit half the L2 cache
   (:mod:`polyc.poly.cache_model`).
3. **Intra-tile order** — inside the tile, the member along which the most
   accesses walk unit stride (weighted by each statement's share of the work)
   goes innermost and is split off under a ``simd`` mark. Candidates
   are the coincident members and a reduction member whose accumulator does
   not depend on it: reductions may be reassociated, so code generation keeps
   the accumulator in a scalar and vectorises with ``omp simd reduction``.

Permuting the members of a permutable band is always legal (every dependence
distance is non-negative in every member), tiling a permutable band too;
``polyc.poly.schedule`` re-proves the final schedule anyway. Before/after for
matmul (``C(m, n) +=! A(m, k) * B(k, n)``)::

    band (m, n, k)                 band (m - m%T, n - n%T, k - k%T)     tiles
                          →          band (m%T, k%T)                  point loops
                                       mark "simd"
                                         band (n%T)                   unit stride in C, B
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.lang.ranges import LinearIndex, affine_of
from polyc.lang.types import INT64
from polyc.poly.cache_model import Caches, square_tile
from polyc.poly.program import PolyProgram, PolyStatement, isl_items

SIMD_MARK = "simd"


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


@dataclass(frozen=True)
class Member:
    """One band member: for each statement, the index it walks (None: constant)."""

    position: int
    coincident: bool
    walks: dict[str, str | None]  # statement name -> index name, or None
    affine: bool                  # every statement's expression is `index + c` or constant


def band_members(node: isl.ScheduleNode, program: PolyProgram) -> list[Member]:
    partial = node.band_get_partial_schedule()
    members = []
    for position in range(node.band_n_member()):
        walks: dict[str, str | None] = {}
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
            else:
                affine = False
        members.append(Member(position, bool(node.band_member_get_coincident(position)),
                              walks, affine))
    return members


def _unit_stride_score(member: Member, members: list[Member], program: PolyProgram) -> float:
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
            uses = [k for k, d in enumerate(access.dims)
                    if d is None or d.coefficient(index) != 0]
            last = access.dims[-1] if access.dims else None
            if not uses:
                score += 0.5 * weight
            elif uses == [len(access.dims) - 1] and last is not None \
                    and last.coefficient(index) == 1:
                score += weight
            else:
                score -= 2 * weight
    return score


def _is_vector_reduction(member: Member, program: PolyProgram) -> bool:
    """Whether ``member`` may be vectorised as a reduction: the only statement walking it is
    one reduction whose accumulator does not depend on it and whose right-hand side does not
    read the accumulated tensor. Reductions may be reassociated, so the loop then runs as
    ``#pragma omp simd reduction`` over a scalar accumulator."""
    walking = [name for name, index in member.walks.items() if index is not None]
    if len(walking) != 1:
        return False
    stmt = program.statement(walking[0])
    statement = stmt.statement
    index = member.walks[walking[0]]
    return (not stmt.is_init and statement.is_reduction and index not in statement.indices
            and not any(isinstance(e, ir.Read) and e.tensor == statement.tensor
                        for e in ir.walk(statement.rhs)))


def _reuse_exponents(members: list[Member], program: PolyProgram) -> tuple[bool, list[int]]:
    """Whether some access is invariant along a member, and each access's tiled dimensions."""
    exponents, reuse = [], False
    statements = set().union(*(m.walks for m in members))
    for name in statements:
        walked = {m.walks.get(name) for m in members} - {None}
        for access in statement_accesses(program.statement(name), program.op):
            used = {index for index in walked
                    if any(d is None or d.coefficient(index) for d in access.dims)}
            exponents.append(len(used))
            reuse |= len(used) < len(walked)
    return reuse, exponents


def _reorder(node: isl.ScheduleNode, order: list[int]) -> isl.ScheduleNode:
    """The band with its members permuted (``order[new] = old``); same tree position."""
    if order == list(range(len(order))):
        return node
    partial = node.band_get_partial_schedule()
    coincident = [node.band_member_get_coincident(k) for k in range(len(order))]
    reordered = partial
    for new, old in enumerate(order):
        reordered = reordered.set_at(new, partial.get_at(old))
    node = node.delete().insert_partial_schedule(reordered).band_set_permutable(1)
    for new, old in enumerate(order):
        node = node.band_member_set_coincident(new, coincident[old])
    return node


def _has_inner_band(node: isl.ScheduleNode) -> bool:
    for position in range(node.n_children()):
        child = node.child(position)
        if child.get_type() == isl.schedule_node_type.band and child.band_n_member() > 0:
            return True
        if _has_inner_band(child):
            return True
    return False


def optimize_band(node: isl.ScheduleNode, program: PolyProgram, caches: Caches,
                  tile: bool = True) -> isl.ScheduleNode:
    """Order, tile and mark one permutable band; returns the node at the same position."""
    members = band_members(node, program)
    if not all(m.affine for m in members):
        return node
    n = len(members)
    order = [m.position for m in members if m.coincident] + \
            [m.position for m in members if not m.coincident]
    node = _reorder(node, order)
    members = [members[k] for k in order]

    reuse, exponents = _reuse_exponents(members, program)
    tiled = tile and n >= 2 and reuse
    if tiled:
        element = max(t.type.bits // 8 for t in program.op.tensors.values())
        size = square_tile(exponents, element, caches.l2 // 2)
        sizes = isl.MultiVal.zero(node.band_get_space())
        for k in range(n):
            sizes = sizes.set_val(k, isl.Val(size))
        node = node.band_tile(sizes)
        point = node.child(0)
    else:
        point = node

    candidates = [m for m in members if m.coincident or _is_vector_reduction(m, program)]
    scores = [(_unit_stride_score(m, members, program), m) for m in candidates]
    best = max(scores, key=lambda item: item[0], default=(0.0, None))
    vector = best[1] if best[0] > 0 else None
    if vector is not None:
        position = members.index(vector)
        point = _reorder(point, [k for k in range(n) if k != position] + [position])
        if n <= 4:
            # Peel iterations where the set of statements differs (an initialisation at
            # the first reduction step) so the loops left hold one statement each.
            for k in range(n):
                point = point.band_member_set_ast_loop_type(k, isl.ast_loop_type.separate)
        if not _has_inner_band(point):
            # Split off the vector member and mark it; `point` stays at the band's position.
            if n > 1:
                point = point.band_split(n - 1).child(0).insert_mark(isl.Id(SIMD_MARK)).parent()
            else:
                point = point.insert_mark(isl.Id(SIMD_MARK))
    return point.parent() if tiled else point


def optimize_bands(tree: isl.Schedule, program: PolyProgram, caches: Caches,
                   tile: bool = True) -> isl.Schedule:
    """Apply :func:`optimize_band` to the outermost permutable band of every path."""
    return _visit(tree.get_root(), program, caches, tile).get_schedule()


def _visit(node, program, caches, tile):
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0 and (
            node.band_get_permutable() or node.band_n_member() == 1):
        return optimize_band(node, program, caches, tile)
    for position in range(node.n_children()):
        node = _visit(node.child(position), program, caches, tile).parent()
    return node
