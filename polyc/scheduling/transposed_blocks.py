"""Transposed copies moved through vector registers a square block at a time.

A layout copy ``W_t(m, n) = W(n, m)`` (:mod:`polyc.rewrite.layout`) reads its source
along one loop and writes its destination along the other, so neither side can be a
vector loop: compiled as written, each element is a scalar load and a scalar store
(gcc builds no vectors from them). Tiling already walks such a copy in square
sub-tiles of one cache line of each strided row
(:func:`~polyc.machine.rules.transpose_subtile`, for the operator's widest
element); this pass marks that innermost
band so that code generation (:mod:`polyc.codegen.transposed_blocks`) moves each
full sub-tile as rows of vectors: it loads the source rows, transposes them in
registers with two-source shuffles (log2 of the lanes rounds) and stores the
destination rows. A partial sub-tile at an edge is copied in blocks of half the
side where they fit, and element by element around them: a tensor whose extent
along one side is 8 (a convolution's batch, made innermost in its weight
gradient's copy of ``d_O``) has no full sub-tile at all. The tbmm benchmark's copy
of ``Y`` went from 21% to 15% of its time (Zen 4, 2 threads), the weight
gradient's copy of ``d_O`` from 14% to 4% (Zen 5; benchmarks/README.md, "Design
measurements").

The block changes the order of the copy's instances inside the sub-tile, which is
legal when isl proved both members of the band coincident (no dependence between
the copy's instances along them); the copy reads a tensor it does not write.
"""
from __future__ import annotations

import islpy as isl

from polyc.lang import ir
from polyc.machine import Machine
from polyc.machine.rules import vector_lanes
from polyc.poly.program import PolyProgram
from polyc.scheduling.band_members import Member
from polyc.scheduling.marks import TransposedBlock, decision_mark


def mark_transposed_block(point: isl.ScheduleNode, members: list[Member], size: int,
                          program: PolyProgram, machine: Machine) -> isl.ScheduleNode:
    """``point`` (the innermost band of a transposition's sub-tiles, ``size`` square)
    under a :class:`TransposedBlock` mark where its copy qualifies (see the module
    docstring); the node at the same position."""
    block = transposed_block(members, size, program, machine)
    return point.insert_mark(decision_mark(block)) if block is not None else point


def transposed_block(members: list[Member], size: int, program: PolyProgram,
                     machine: Machine) -> TransposedBlock | None:
    """The block of ``size`` a band of ``members`` copies in, or ``None``: the band runs one
    statement, a plain copy between two tensors of one type of 4 or 8 bytes, each
    indexed by the statement's indices in some order; every member is coincident and
    walks one index as it is; the source's last index and the destination's are
    walked by two different members."""
    names = {name for member in members for name in member.walks}
    if len(names) != 1 or not all(member.coincident for member in members):
        return None
    name = names.pop()
    stmt = program.statement(name)
    statement = stmt.statement
    source = statement.rhs
    if stmt.is_init or statement.op != "=" or not isinstance(source, ir.Read) \
            or source.tensor == statement.tensor:
        return None
    op = program.op
    target = op.tensor(statement.tensor)
    if op.tensor(source.tensor).type != target.type or target.type.bits not in (32, 64):
        return None
    read = [index.name if isinstance(index, ir.Index) else None for index in source.indices]
    if None in read or sorted(read) != sorted(statement.indices) or not statement.indices:
        return None
    walked = {member.walks.get(name): k for k, member in enumerate(members)
              if name in member.plain}
    src_member, dst_member = walked.get(read[-1]), walked.get(statement.indices[-1])
    if src_member is None or dst_member is None or src_member == dst_member:
        return None
    element = target.type.bits // 8
    lanes = min(size, vector_lanes(machine, element))
    if lanes < 2 or size % lanes:
        return None
    edge = size // 2
    edge_lanes = min(edge, lanes)
    if edge < 2 or edge % edge_lanes:
        edge = edge_lanes = 0
    return TransposedBlock(name, size, lanes, element, src_member, dst_member, edge,
                           edge_lanes)
