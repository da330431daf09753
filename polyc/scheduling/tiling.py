"""Band optimisation: loop order, tiling and SIMD marks on permutable bands.

For the outermost band along each path of the schedule tree:

1. **Order** — coincident (parallel) members first, the others (reductions)
   inside, so the outer loops can run in parallel and an output tile stays in
   cache while the reduction sweeps. In a band left untiled the reductions nest in
   memory order, the longest stride outside (:func:`_in_memory_order`).
2. **Tile** — when tiling keeps a block of data in cache (:func:`tiling_matters`:
   an access reused along one member and varying along two others), tile the
   band. Each member gets its own tile size (:func:`~polyc.scheduling.cache_model.tile_sizes`):
   from one register block, the member whose doubling saves the most traffic per
   byte grows first, while the working set (each array's block, a sliding window's
   ``h + r`` counted as a sum) fits half the L2 cache and no tile passes the cube
   tile that would fit. Members without reuse (a batch index every access depends
   on) are not tiled, nor, in a register-blocked band, members whose only reuse is of
   the block's streamed panel (:func:`_block_carries`). The innermost reduction of a
   register block runs the panel depth (:func:`~polyc.machine.rules.panel_depth`).
   Inside the tile, statements that walk different members (an initialisation,
   an epilogue) get point loops of their own, in dependence order.
3. **Intra-tile order** — inside the tile, the member along which the most
   accesses walk unit stride (weighted by each statement's share of the work)
   goes innermost and is split off under a ``simd`` mark. Candidates
   are the coincident members and a reduction member whose accumulator does
   not depend on it: reductions may be reassociated, so code generation keeps
   the accumulator in a scalar and vectorises over lanes of partial results
   (:mod:`polyc.codegen.vector_reductions`).

Permuting the members of a permutable band is always legal (every dependence
distance is non-negative in every member), tiling a permutable band too;
``polyc.scheduling.schedule`` re-proves the final schedule anyway. Before/after for
matmul (``C(m, n) +=! A(m, k) * B(k, n)``)::

    band (m, n, k)                 band (m - m%T, n - n%T, k - k%T)     tiles
                          →          band (m%T, k%T)                  point loops
                                       mark "simd"
                                         band (n%T)                   unit stride in C, B
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import islpy as isl

from polyc.machine import Machine
from polyc.machine.rules import (outer_column_steps, panel_budget, panel_columns, panel_depth,
                                 register_block, streamed_depth, streamed_row_tile, tile_budget,
                                 transpose_subtile, transpose_tile)
from polyc.poly.dependences import Dependences
from polyc.poly.program import PolyProgram, statements_named, tensors_unwritten_in
from polyc.scheduling.band_members import (Member, band_footprints, band_members,
                                           is_vector_reduction, memory_depth,
                                           reuse_per_member, statement_accesses,
                                           tiling_matters, unit_stride_score, uses,
                                           walks_unit_stride)
from polyc.scheduling.cache_model import square_tile, tile_sizes
from polyc.scheduling.distribute import group_order
from polyc.scheduling.full_blocks import isolate_full_blocks
from polyc.scheduling.marks import (SIMD_MARK, SIMD_REDUCTION_MARK, RegisterBlock, decision_mark,
                                    is_register_block, node_mark)
from polyc.scheduling.packing import Panel, register_block_panels
from polyc.scheduling.register_blocks import (BlockMembers, block_reductions, block_row_factor,
                                              edge_moves_back, is_window,
                                              register_block_members, walking_statement)
from polyc.scheduling.straighten import permutable_members
from polyc.scheduling.transposed_blocks import mark_transposed_block



def reorder_members(node: isl.ScheduleNode, order: list[int]) -> isl.ScheduleNode:
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


def has_inner_band(node: isl.ScheduleNode) -> bool:
    """Whether a band with members lies below ``node`` (its loops are not innermost)."""
    for position in range(node.n_children()):
        child = node.child(position)
        if child.get_type() == isl.schedule_node_type.band and child.band_n_member() > 0:
            return True
        if has_inner_band(child):
            return True
    return False


def merge_child_bands(node: isl.ScheduleNode, deps: Dependences) -> isl.ScheduleNode:
    """Merge the chain of single-child bands below ``node`` into it while the result stays
    permutable; same tree position.

    isl often leaves reduction loops in bands of their own (a convolution's ``r`` and
    ``s`` under the band of ``n, k, h, w, c``). Merged, they can be tiled and ordered
    with the rest. Legal when every dependence active at the band (same outer loops)
    has a non-negative distance in each merged member; coincidence flags are recomputed
    for the merged band: a member is coincident when all those distances are zero.
    """
    while node.n_children() == 1 and node.child(0).get_type() == isl.schedule_node_type.band:
        child = node.child(0)
        if not child.band_get_permutable() or child.band_n_member() == 0:
            break
        merged = node.band_get_partial_schedule().flat_range_product(
            child.band_get_partial_schedule())
        coincident = permutable_members(node, merged, deps)
        if coincident is None:
            break
        node = node.delete().delete().insert_partial_schedule(merged).band_set_permutable(1)
        for k, flag in enumerate(coincident):
            node = node.band_member_set_coincident(k, flag)
    return node


def optimize_band(node: isl.ScheduleNode, program: PolyProgram, machine: Machine,
                  deps: Dependences, tile: bool = True) -> tuple[isl.ScheduleNode, bool]:
    """Order, tile and mark one permutable band; returns the node at the same position
    and whether the band was tiled."""
    members = band_members(node, program)
    if not all(m.affine for m in members):
        return node, False
    n = len(members)
    order = [m.position for m in members if m.coincident] + \
            [m.position for m in members if not m.coincident]
    node = reorder_members(node, order)
    members = [members[k] for k in order]
    vector = _vector_member(members, program)
    innermost = not has_inner_band(node)

    carries = reuse_per_member(members, program)
    tiled = tile and n >= 2 and any(carries) and tiling_matters(node, program)
    if not tiled:
        node, members = _in_memory_order(node, members, program)
        contiguous = _contiguous_members(members, program)
        if tile and innermost and len(contiguous) >= 2:
            return _tile_transposition(node, members, vector, contiguous, program,
                                      machine), True
        return _optimize_point_band(node, members, vector, None, program, innermost), False
    blocking = None
    if vector is not None and vector.coincident and innermost:
        blocking = register_block_members(members, vector, program)
    if blocking is not None:
        carries = _block_carries(members, carries, vector, blocking, program)
    element = _element_bytes(program)
    footprints = band_footprints(members, program)
    windows = {k: WINDOW_SPAN for k, m in enumerate(members)
               if not m.coincident and is_window(m, program)}
    budget = tile_budget(machine)
    square = square_tile(footprints, [c or m is vector for c, m in zip(carries, members)],
                         element, budget, windows)
    start, largest = _tile_start(members, carries, vector, blocking, program, machine,
                                 element, square)
    streams = _streamed_rows(members, vector, blocking, largest, machine, element)
    for position in streams:
        factor = block_row_factor(vector, blocking, program)
        inner = members.index(block_reductions(blocking.reductions, program)[-1])
        largest[position] = streamed_row_tile(machine, largest[position], element,
                                              start[inner], factor is not None)
        if not is_window(members[inner], program):
            start[inner] = largest[inner] = streamed_depth(
                machine, element, start[inner], largest[position], factor is not None)
    if blocking is not None:
        # The streamed operand's panel (the block's reduction steps × the vector member's
        # tile) must fit the packing budget, or it would be read unpacked.
        steps = math.prod(start[members.index(m)] for m in blocking.reductions)
        position = members.index(vector)
        largest[position] = min(largest[position],
                                panel_columns(machine, steps, start[position], element))
    chosen = tile_sizes(footprints, start, largest, element, budget, windows, streams)
    sizes = isl.MultiVal.zero(node.band_get_space())
    depth = node.get_schedule_depth()
    tile_loops = {}  # member position -> (schedule depth of its tile loop, tile size)
    for k, (member, tile_size) in enumerate(zip(members, chosen)):
        sizes = sizes.set_val(k, isl.Val(tile_size))
        tile_loops[member.position] = (depth + k, tile_size)
    point = node.band_tile(sizes).child(0)
    packing = _Packing(tile_loops, tensors_unwritten_in(program, node.get_domain()), machine)
    groups = _point_groups(point, members, program, deps) if innermost else None
    if groups is None:
        point = _optimize_point_band(point, members, vector, blocking, program, innermost,
                                     packing)
        return point.parent(), True
    # Statements that walk different members (an initialisation, an epilogue) get point
    # loops of their own inside the tile, in dependence order: each is then one clean nest.
    listed = isl.UnionSetList.alloc(point.get_ctx(), len(groups))
    for group_filter, _ in groups:
        listed = listed.add(group_filter)
    point = point.insert_sequence(listed)
    for position, (_, names) in enumerate(groups):
        band = point.child(position).child(0)
        group = [Member(m.position, m.coincident,
                        {name: index for name, index in m.walks.items() if name in names},
                        m.affine, m.plain & names) for m in members]
        group_vector = _vector_member(group, program)
        group_blocking = None
        if group_vector is not None and group_vector.coincident:
            group_blocking = register_block_members(group, group_vector, program)
        band = _optimize_point_band(band, group, group_vector, group_blocking, program, True,
                                    packing)
        point = band.parent().parent()
    return point.parent(), True


def _in_memory_order(node: isl.ScheduleNode, members: list[Member], program: PolyProgram
                     ) -> tuple[isl.ScheduleNode, list[Member]]:
    """An untiled band's sequential members ordered by their stride, longest outside
    (:func:`~polyc.scheduling.band_members.memory_depth`); the parallel members keep
    their places in front. isl orders the members of a band as its scheduler found them:
    a fused reduction's shifted member (``H + h``) may come first, whatever it walks."""
    sequential = [m for m in members if not m.coincident]
    ordered = sorted(sequential, key=lambda m: -memory_depth(m, members, program))
    if ordered == sequential:
        return node, members
    reordered = [m for m in members if m.coincident] + ordered
    return reorder_members(node, [members.index(m) for m in reordered]), reordered


def _contiguous_members(members: list[Member], program: PolyProgram) -> list[int]:
    """The positions of the members along which some access walks the lines of a block:
    its last (contiguous) dimension with unit stride, while another dimension walks
    another member (``W(n, m)`` along ``m``; not a vector ``u(i)``)."""
    found = []
    for k, member in enumerate(members):
        for name, index in member.walks.items():
            if index is None:
                continue
            others = {m.walks.get(name) for m in members if m is not member} - {None}
            if any(walks_unit_stride(access, index)
                   and any(d.coefficient(other) for d in access.dims[:-1] for other in others)
                   for access in statement_accesses(program.statement(name), program.op)
                   if len(access.dims) >= 2):
                found.append(k)
                break
    return found


def _tile_transposition(node: isl.ScheduleNode, members: list[Member], vector: Member | None,
                        contiguous: list[int], program: PolyProgram,
                        machine: Machine) -> isl.ScheduleNode:
    """Tile a band whose accesses walk their lines along different members (a transposed
    copy ``W_t(m, n) = W(n, m)``): untiled, the inner loop takes a new line of the
    strided side per iteration and uses the rest of it on the next iterations of the
    outer loop, which find it in L1 only while the inner loop's lines fit there (a
    1024-wide ``W``'s 1024 lines do not). In square tiles of
    :func:`~polyc.machine.rules.transpose_tile`, whose lines fit half of L1, each walked
    in square sub-tiles of :func:`~polyc.machine.rules.transpose_subtile` (one line of
    each strided row), moved through vector registers where the band is a plain copy
    (:mod:`~polyc.scheduling.transposed_blocks`); a copy already narrower than a tile
    runs as before. Same position; the innermost point band as usual."""
    element = _element_bytes(program)
    levels = (transpose_tile(machine), transpose_subtile(machine, element))
    for size in levels:
        sizes = isl.MultiVal.zero(node.band_get_space())
        for k in range(len(members)):
            sizes = sizes.set_val(k, isl.Val(size if k in contiguous else 1))
        node = node.band_tile(sizes).child(0)
    node = _optimize_point_band(node, members, vector, None, program, True)
    if vector is None:  # the band's members in their order: the mark's positions hold
        node = mark_transposed_block(node, members, levels[-1], program, machine)
    for _ in levels:
        node = node.parent()
    return node


def _element_bytes(program: PolyProgram) -> int:
    """The widest element of the operator's tensors, in bytes: what tile sizes, register
    blocks and sub-tiles are sized for."""
    return max(t.type.bits // 8 for t in program.op.tensors.values())


# The tile of a window offset (the r, s of ``I(h + r, w + s)``): one tile spans the
# usual filters (3 × 3 to 7 × 7) whatever their size, which the kernel learns at run
# time; the tile model counts WINDOW_SPAN steps of it (a 3 × 3 filter).
WINDOW_TILE = 8
WINDOW_SPAN = 3


def _streamed_rows(members: list[Member], vector: Member | None, blocking,
                   largest: list[int], machine: Machine, element: int) -> dict[int, int]:
    """``{position of the row member: rows per register block}`` when a register
    block's rows are the outermost loop of their tile, else ``{}``.

    Every other member of the band is then the block's (its reductions and vector
    member, inside) or a plain loop (tile 1): the tile's blocks of rows run one after
    another and never return, so the cache holds one block's rows of the operands
    that use the row member, and the row tile only sets how many rows reuse each fill
    of the others (the packed panel, copied once per tile). It may span
    :data:`~polyc.machine.rules.ROW_TILES` cube tiles. Where other members' point loops
    run outside the rows (a convolution's image rows, a contraction's outer indices),
    the rows are revisited and count in full.
    """
    if blocking is None:
        return {}
    inside = {id(blocking.row), id(vector), *(id(m) for m in blocking.reductions)}
    if any(id(m) not in inside and largest[k] > 1 for k, m in enumerate(members)):
        return {}
    return {members.index(blocking.row): register_block(machine, element)[0]}


def _block_carries(members: list[Member], carries: list[bool], vector: Member, blocking,
                   program: PolyProgram) -> list[bool]:
    """``carries`` (:func:`~polyc.scheduling.band_members.reuse_per_member`) for a band
    with a register block: a member outside the block carries reuse only through an
    operand invariant along it that varies along the block's rows or another member
    outside the block.

    An operand that varies along the block's vector member and reductions alone (the
    streamed operand of ``Y(b, l, n) += X(b, l, k) * W(k, n)``, ``W``) is reused by
    every row of every tile while its panel stays in cache: tiling ``b`` for it only
    cut the streamed rows into cube tiles. Left a plain loop, ``b`` lets the rows
    stream as a matmul's do (:func:`_streamed_rows`): that layer at 8 x 512 x 512 x
    512 ran 5.9 -> 5.0 ms, 14.1 -> 9.0 under AVX2 (measurements: benchmarks/README.md,
    "Design measurements").
    The operand a block broadcasts along its rows (a convolution's filter, invariant
    along the batch and the image rows) still makes those members carry."""
    panel = {id(vector), *(id(m) for m in blocking.reductions)}
    result = list(carries)
    for k, member in enumerate(members):
        if id(member) in panel or member is blocking.row or not carries[k]:
            continue
        result[k] = False
        for name, index in member.walks.items():
            if index is None:
                continue
            others = [m.walks[name] for m in members
                      if id(m) not in panel and m is not member and m.walks.get(name)]
            if any(not uses(access, index) and any(uses(access, other) for other in others)
                   for access in statement_accesses(program.statement(name), program.op)):
                result[k] = True
                break
    return result


def _tile_start(members: list[Member], carries: list[bool], vector: Member | None, blocking,
                program: PolyProgram, machine: Machine, element: int, square: int
                ) -> tuple[list[int], list[int]]:
    """Where :func:`~polyc.scheduling.cache_model.tile_sizes` starts each member, and how far it
    may grow it.

    No member grows past ``square``, the cube tile that fits the cache: the extents
    are run-time sizes, and a band of many members (a tensor contraction) usually has
    short ones, where a long tile along one member would be mostly empty while the
    model counts it full. Within that bound the vector member starts at two vectors and
    a register block's row member at its rows (both grow by doublings, so by whole
    blocks); where the block's columns span an outer member, that member starts at its
    steps of the block; a member without reuse stays a plain loop (tile 1); any other
    member starts at 1. A register block's reductions are fixed: the innermost runs the
    panel depth, window offsets :data:`WINDOW_TILE`, any other ``square`` (each tile of
    a reduction reloads the block's accumulators).
    """
    rows, columns = register_block(machine, element)
    first = {id(vector): columns} if vector is not None else {}
    fixed = {}
    if blocking is not None:
        first[id(blocking.row)] = rows
        if blocking.outer is not None:
            first[id(blocking.outer)] = outer_column_steps(machine, element)
        fixed = {id(r): WINDOW_TILE if is_window(r, program) else square
                 for r in blocking.reductions}
        inner = block_reductions(blocking.reductions, program)[-1]
        if not is_window(inner, program):
            fixed[id(inner)] = panel_depth(machine, columns, element)
    start, largest = [], []
    for k, member in enumerate(members):
        if id(member) in fixed:
            start.append(fixed[id(member)])
            largest.append(fixed[id(member)])
        elif id(member) in first:
            start.append(first[id(member)])
            largest.append(max(first[id(member)], square))
        else:
            start.append(1)
            largest.append(square if carries[k] else 1)
    return start, largest


def _vector_member(members: list[Member], program: PolyProgram) -> Member | None:
    """The member to vectorise along: the best unit-stride score among the parallel
    members and the reductions that may be vectorised; ``None`` when none scores.

    A window offset (the ``kw`` of ``I(2 * w + kw)``) is no candidate: a filter is a
    few steps wide. A stride-2 convolution had vectorised its 3-step ``kw`` (unit
    stride in both inputs) instead of ``w``, and ran far slower than register-blocked
    along ``w`` (measurements: benchmarks/README.md, "Design measurements")."""
    candidates = [m for m in members if m.coincident or (
        is_vector_reduction(m, program) and not is_window(m, program))]
    scores = [(unit_stride_score(m, members, program), m) for m in candidates]
    best = max(scores, key=lambda item: item[0], default=(0.0, None))
    return best[1] if best[0] > 0 else None


def _point_groups(point: isl.ScheduleNode, members: list[Member], program: PolyProgram,
                  deps: Dependences) -> list[tuple[isl.UnionSet, set[str]]] | None:
    """The statements of a tile's point band in groups that walk the same members, as
    ``(filter, names)`` in an order the dependences inside one tile allow; ``None``
    when there is one group or no such order.

    Statements are ordered one by one and consecutive ones walking the same members
    merged: an initialisation, the reduction and an epilogue make three nests. Grouped
    by members alone, the initialisation and the epilogue were one group, which isl
    fused with the reduction, peeling the first step of every reduction tile out of
    the register block (mlp ran slower; measurements: benchmarks/README.md, "Design
    measurements"). Where the statements cannot be ordered one by one, they are
    grouped by the members they walk."""
    names = sorted(set().union(*(m.walks for m in members)))
    signature = {name: tuple(m.walks.get(name) is not None for m in members)
                 for name in names}
    if len(set(signature.values())) < 2:
        return None
    domain = point.get_domain()
    outer = point.get_prefix_schedule_union_map()
    order = group_order([statements_named(domain, {name}) for name in names], outer, deps)
    if order is not None:
        runs: list[list[str]] = []
        for k in order:
            if runs and signature[runs[-1][-1]] == signature[names[k]]:
                runs[-1].append(names[k])
            else:
                runs.append([names[k]])
        return [(statements_named(domain, set(run)), set(run)) for run in runs]
    by_signature: dict[tuple[bool, ...], set[str]] = {}
    for name in names:
        by_signature.setdefault(signature[name], set()).add(name)
    filters = [statements_named(domain, group) for group in by_signature.values()]
    order = group_order(filters, outer, deps)
    if order is None:
        return None
    groups = list(by_signature.values())
    return [(filters[k], groups[k]) for k in order]


@dataclass(frozen=True)
class _Packing:
    """What panel packing needs to know of the tiles: each tiled member's tile loop
    (``position -> (schedule depth, tile size)``), the tensors nothing writes while the
    band's loops run (inputs, layout copies, temporaries of other nests) and the machine
    (the buffer budget)."""

    tile_loops: dict[int, tuple[int, int]]
    read_only: frozenset[str]
    machine: Machine

    @property
    def budget(self) -> int:
        return panel_budget(self.machine)


def _optimize_point_band(point: isl.ScheduleNode, members: list[Member],
                         vector: Member | None, blocking, program: PolyProgram,
                         innermost: bool, packing: _Packing | None = None
                         ) -> isl.ScheduleNode:
    """Put ``vector`` innermost in the (point) band and mark it, or build the register
    block; same tree position."""
    if vector is None:
        return point
    n = len(members)
    position = members.index(vector)
    point = reorder_members(point, [k for k in range(n) if k != position] + [position])
    # Peel the iterations of reduction members where the set of statements differs
    # (an initialisation at the first step) so the loops left hold one statement.
    in_point_order = [m for m in members if m is not vector] + [vector]
    for k, member in enumerate(in_point_order):
        if not member.coincident:
            point = point.band_member_set_ast_loop_type(k, isl.ast_loop_type.separate)
    if blocking is not None:
        return _register_block(point, in_point_order, vector, blocking, program, packing)
    if innermost:
        # Split off the vector member and mark it; `point` stays at the band's position.
        mark = isl.Id(SIMD_MARK if vector.coincident else SIMD_REDUCTION_MARK)
        if n > 1:
            return point.band_split(n - 1).child(0).insert_mark(mark).parent()
        return point.insert_mark(mark)
    return point


def _register_block(point: isl.ScheduleNode, members: list[Member], vector: Member,
                    blocking: BlockMembers, program: PolyProgram,
                    packing: _Packing) -> isl.ScheduleNode:
    """Tile the point band once more into a register block; same tree position.

        point band (..., row, reductions..., vector)
      → band (...)                                  the rest of the point loops
          band (row / MR, vector / NR, reductions...)
            mark "register"                         the block stays in registers
              band (row % MR, 0...)
                mark "simd"
                  band (vector % NR)

    With an outer column member (``blocking.outer``), it joins the block after the row
    (``outer / MO`` and ``outer % MO``, :func:`~polyc.machine.rules.outer_column_steps`);
    not where its tile is no whole number of the block's steps (a group's point band
    tiled for another block).
    """
    element = _element_bytes(program)
    rows, columns = register_block(packing.machine, element)
    row, outer, depth = blocking.row, blocking.outer, 1
    if outer is not None:
        depth = outer_column_steps(packing.machine, element)
        tile = packing.tile_loops.get(outer.position)
        if depth < 2 or tile is None or tile[1] % depth:
            outer, depth = None, 1
    outer_members = [outer] if outer is not None else []
    reductions = block_reductions(blocking.reductions, program)
    block_members = [row, *outer_members, *reductions, vector]
    order = [m for m in members if m not in block_members] + block_members
    point = reorder_members(point, [members.index(m) for m in order])
    prefix = len(order) - len(block_members)
    block = point.band_split(prefix).child(0) if prefix else point
    sizes = isl.MultiVal.zero(block.band_get_space())
    steps = [rows] + [depth] * len(outer_members) + [1] * len(reductions) + [columns]
    for k, size in enumerate(steps):
        sizes = sizes.set_val(k, isl.Val(size))
    count, spans = len(reductions), 1 + len(outer_members)  # spans: row (and outer)
    block = reorder_members(block.band_tile(sizes),
                            list(range(spans)) + [spans + count]
                            + list(range(spans, spans + count)))
    for k in range(spans + 1, spans + count + 1):
        block = block.band_member_set_ast_loop_type(k, isl.ast_loop_type.separate)
    block = isolate_full_blocks(block, program, walking_statement(vector, program))
    moves_back = edge_moves_back(vector, program, packing.read_only)
    inner = block.child(0).band_split(spans + count).child(0)
    inner = inner.insert_mark(isl.Id(SIMD_MARK)).parent()
    decision = RegisterBlock(rows, columns, count, moves_back, outer=depth)
    block = inner.insert_mark(decision_mark(decision)).parent()
    point = block.parent() if prefix else block
    for panel in _panels(order, vector, row, reductions, program, packing, rows, columns):
        point = point.insert_mark(decision_mark(panel))
    return point


def _panels(order: list[Member], vector: Member, row: Member, reductions: list[Member],
            program: PolyProgram, packing: _Packing, rows: int,
            columns: int) -> list[Panel]:
    """The streamed operands of the register block to pack per tile
    (:mod:`polyc.scheduling.packing`); ``order``: the point loops, outermost first."""
    name = next(n for n, index in reductions[0].walks.items() if index is not None)
    stmt = program.statement(name)
    tiles = {m.walks[name]: packing.tile_loops[m.position] for m in order
             if m.walks.get(name) is not None and name in m.plain
             and m.position in packing.tile_loops}
    loop_order = [m.walks[name] for m in order if m.walks.get(name) is not None]
    return register_block_panels(name, stmt.statement, program.op,
                                 packing.read_only, vector.walks[name],
                                 row.walks[name], loop_order, tiles, rows, columns,
                                 packing.budget)


def optimize_bands(tree: isl.Schedule, program: PolyProgram, machine: Machine,
                   deps: Dependences, tile: bool = True) -> isl.Schedule:
    """Apply :func:`optimize_band` to the outermost permutable band of every path."""
    return _visit(tree.get_root(), program, machine, deps, tile).get_schedule()


def _visit(node, program, machine, deps, tile):
    if node_mark(node) in (SIMD_MARK, SIMD_REDUCTION_MARK) or is_register_block(node_mark(node)):
        return node  # the loops below were optimised with the band they were split from
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0 and (
            node.band_get_permutable() or node.band_n_member() == 1):
        if node.band_get_permutable():
            node = merge_child_bands(node, deps)
        node, tiled = optimize_band(node, program, machine, deps, tile)
        if node.get_type() != isl.schedule_node_type.band:
            return node  # a mark went above it: the band was the innermost one
        if tiled or not has_inner_band(node):
            return node
        # An outer band left whole (e.g. the rows of softmax): optimise the loops inside.
    for position in range(node.n_children()):
        node = _visit(node.child(position), program, machine, deps, tile).parent()
    return node
