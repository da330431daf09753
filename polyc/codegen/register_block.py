"""Register blocks: a reduction loop around a ``register`` nest keeps the block of
outputs in a local array across the loop (unroll-and-jam with scalar replacement),
reading packed panels (:mod:`polyc.scheduling.packing`); edge blocks masked, moved back
or narrowed so that they keep constant trip counts (all but the moved-back ones read the
panels too: their lanes stay within the block's columns).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.c_expr import ExprEmitter, combine, identity
from polyc.codegen.c_names import braced, c_name
from polyc.codegen.isl_ast import Trip, constant_trip, mentions, single
from polyc.codegen.panels import buffer_name, buffer_type, panel_element, panel_read
from polyc.lang import ir
from polyc.lang.ir import is_pure_reduction
from polyc.lang.ranges import affine_of
from polyc.machine.rules import masked_rows_unrolled
from polyc.poly.program import PolyStatement
from polyc.scheduling.marks import SIMD_MARK, RegisterBlock, is_register_block, node_mark
from polyc.scheduling.packing import operand_expr

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter, Scope

# How a block at an edge is handled (see _emit_register_block).
_FULL, _MASKED, _SHIFTED, _OWNED = "full", "masked", "shifted", "owned"
# The narrowest vector an edge block narrows to, in bytes: one SSE register.
MIN_NARROWED_BYTES = 16


def register_block_at(emitter: LoopNestEmitter, loop: isl.AstNode) -> _RegisterBlock | None:
    """The register block whose reduction loops start at ``loop`` (the chain of loops
    down to a ``register`` mark, none of them moving the block's element, around a nest
    of constant trip counts over one pure reduction); ``None`` for any other loop."""
    chain = [loop]  # the reduction loops around the register nest, outermost first
    body = single(loop.for_get_body())
    while body.get_type() == isl.ast_node_type.for_:
        chain.append(body)
        body = single(body.for_get_body())
    if not is_register_block(node_mark(body)):
        return None
    chain_iterators = [emitter.expr(c.for_get_iterator()) for c in chain]
    nest, simd_levels, node = [], [], body.mark_get_node()
    while True:
        inner_marks = set()
        while node.get_type() == isl.ast_node_type.mark:
            inner_marks.add(node_mark(node))
            node = node.mark_get_node()
        if node.get_type() != isl.ast_node_type.for_:
            break
        nest.append(node)
        simd_levels.append(SIMD_MARK in inner_marks)
        node = single(node.for_get_body())
    if not nest or node.get_type() != isl.ast_node_type.user:
        return None
    call = node.user_get_expr()
    stmt, bound = emitter.called(call)
    statement = stmt.statement
    if stmt.is_init or not is_pure_reduction(statement):
        return None
    lhs_args = [bound[i] for i in statement.indices]
    iterators = [emitter.expr(n.for_get_iterator()) for n in nest]
    if any(mentions(a, it) for a in lhs_args for it in chain_iterators) or not all(
            any(mentions(a, it) for a in lhs_args) for it in iterators):
        return None
    trips = [constant_trip(inner, iterators[level], chain_iterators + iterators)
             for level, inner in enumerate(nest)]
    if any(trip is None for trip in trips):
        return None
    return _RegisterBlock(chain, stmt, iterators, simd_levels, trips, call,
                          node_mark(body))


def register_blocked(emitter: LoopNestEmitter, loop: isl.AstNode, iterator: str,
                     scope: Scope):
    """A reduction loop around a ``register`` nest: keep the block of outputs in a local
    array across the loop (unroll-and-jam with scalar replacement).

    Before:  for (k...) for (i < 6) simd for (j < 32) C[..i..j..] += A[..] * B[..];
    After:   float polyc_acc[6][32];  load it from C
             for (k...) for (i < 6) simd for (j < 32) polyc_acc[i][j] += A[..] * B[..];
             store it to C

    A partial block at an edge (bounds below the full trip) keeps the constant trip
    counts, so the accumulator still lives in registers: a row past the edge repeats
    the last row (the same loads, sums and stores again), and a vector lane past the
    edge reads zeros (masked loads) and is never stored. A full block's outer column
    steps (:meth:`_RegisterBlock.outer_level`) run one after another, as many as there
    are: steps short of the block's make no edge block of their own.
    """
    block = register_block_at(emitter, loop)
    if block is None:
        return None
    trips, looped = block.trips, block.outer_level
    emitter.blocked[block.stmt.name] = emitter.blocked.get(block.stmt.name, 0) + 1
    counts = [cgen.Initializer(cgen.Value("const int64_t", f"polyc_count{level}"),
                               _trip_count(emitter, trip))
              for level, trip in enumerate(trips)]
    steps = [counts[looped]] if looped is not None else []
    full = [emitter.expr(trip.full) for level, trip in enumerate(trips)
            if trip.full is not None and level != looped]
    if not full:
        return cgen.Block(steps + [_emit_register_block(emitter, block, _FULL, scope)])
    nonempty = " && ".join(f"polyc_count{level} > 0" for level in range(len(trips)))
    edge = _unmasked_edge(emitter, block, _emit_register_block(emitter, block, _MASKED, scope),
                          scope)
    return cgen.Block(steps + [cgen.If(
        " && ".join(full), _emit_register_block(emitter, block, _FULL, scope),
        cgen.Block([count for level, count in enumerate(counts) if level != looped]
                   + [cgen.If(nonempty, braced(edge))]))])


def _unmasked_edge(emitter: LoopNestEmitter, block: _RegisterBlock, masked,
                   scope: Scope):
    """An edge block without masked loads where it can be had:

    * all columns (the edge is in the rows), or exactly half of them (16 against
      32): a full- or half-width block that owns all its lanes, so it stores them
      without a condition;
    * more than half the columns, where the block may move back
      (``RegisterBlock.edge_moves_back``): moved back by ``polyc_shift`` lanes, the
      full-width block (not where it must stay within its columns,
      ``edge_within_columns``). With half the columns or fewer, the narrow blocks
      below do less work (a convolution's 54 columns: 3 blocks of 16 and one of 8,
      not 4 of 16; 18.0 -> 16.9 ms under AVX2);
    * more than half, where it may not move back that far (the first block of a
      narrow extent, e.g. 24 columns against 32): the full-width block masked where
      every masked read loads and selects (:func:`_masked_lanes_load`: a panel, a
      temporary with slack), else half-width blocks, the last one moved back over its
      neighbour's columns (24 = 16 + 16 moved by 8): two half-width blocks load the
      broadcast operand twice (a convolution's 14 columns under AVX2: 28 -> 19 ms);
    * otherwise masked: half as wide where less than half the columns are left
      (kronecker product with 8 columns of 32: 1.4 -> 0.93 ms).

    A block with an outer column level (a convolution's image rows) keeps that level's
    steps side by side when narrowed, so a narrowed block serves each broadcast with as
    many vectors as a full one, and narrowing only saves work. Where a quarter of the
    columns is at least :data:`MIN_NARROWED_BYTES` (:func:`_quarter_lanes`), such a
    block also narrows to a quarter: owned or masked for a quarter of the columns or
    fewer (7 output columns: 16 lanes -> 8), and for more than half but at most three
    quarters, an owned half-width block followed by a quarter-width one moved back over
    it (54 columns: 32 + 16 + 8 lanes instead of 32 + 32). On a Zen 4 at 512 bits a
    convolution with 7 columns ran 2.5 -> 1.2 ms, 22 columns 4.7 -> 3.7, 54 columns
    (the benchmark's) 10.3 -> 9.1. Each of these blocks' edge variants is a function of
    its own (:meth:`~polyc.codegen.outlining.Outliner.block`).

    The exact half is common (16 channels, 16 float32 lanes of AVX-512) and is a
    block of its own because gcc compiles the conditional store of the general
    half-width block (``if (lane >= polyc_own)``) into accumulator spills and
    blends, which slowed kronecker3 (D = 16, every block at that edge) most; wider
    extents (24) run as before (measurements: benchmarks/README.md, "Design
    measurements").
    """
    levels = [k for k, simd in enumerate(block.simd_levels) if simd]
    if len(levels) != 1:
        return masked
    level = levels[0]
    width, count = block.trips[level].trip, f"polyc_count{level}"
    moved = _moved_index(block, level)
    moves = moved is not None
    quarter = _quarter_lanes(emitter, block, width)
    narrow = braced(masked)
    if width % 2 == 0:
        half = width // 2
        below_half = braced(_emit_register_block(emitter, block, _MASKED, scope,
                                                 vector_width=half))
        if quarter is not None:
            below_half = cgen.If(f"{count} <= {quarter}", braced(cgen.If(
                f"{count} == {quarter}",
                braced(_emit_register_block(emitter, block, _OWNED, scope,
                                            vector_width=quarter)),
                braced(_emit_register_block(emitter, block, _MASKED, scope,
                                            vector_width=quarter)))), below_half)
        narrow = cgen.If(f"{count} < {half}", below_half, narrow)
        if moves and not _masked_lanes_load(emitter, block, scope, width):
            halves = cgen.For(
                "int64_t polyc_sub = 0", f"polyc_sub < {count}", f"polyc_sub += {half}",
                cgen.Block([
                    cgen.Initializer(cgen.Value("const int64_t", "polyc_base"),
                                     f"polyc_min(polyc_sub, {count} - {half})"),
                    cgen.Initializer(cgen.Value("const int64_t", "polyc_own"),
                                     "polyc_sub - polyc_base"),
                    _emit_register_block(emitter, block, _SHIFTED, scope,
                                         vector_width=half)]))
            narrow = cgen.If(f"{count} > {half}", braced(halves), narrow)
        exact = braced(_emit_register_block(emitter, block, _OWNED, scope,
                                            vector_width=half))
        narrow = cgen.If(f"{count} == {half}", exact, narrow)
    narrow = cgen.If(f"{count} == {width}", braced(
        _emit_register_block(emitter, block, _OWNED, scope)), narrow)
    combo = moves and quarter is not None
    if combo:
        # half the columns owned, then a quarter-width block moved back over them
        # (within the block's columns: no run-time test) for the rest
        pieces = cgen.Block([
            exact,  # the same half-width block as for exactly half the columns
            cgen.Block([
                cgen.Initializer(cgen.Value("const int64_t", "polyc_base"),
                                 f"{count} - {quarter}"),
                cgen.Initializer(cgen.Value("const int64_t", "polyc_own"),
                                 f"{half} - polyc_base"),
                _emit_register_block(emitter, block, _SHIFTED, scope,
                                     vector_width=quarter)])])
        narrow = cgen.If(f"{count} > {half} && {count} <= {half + quarter}", pieces, narrow)
    if not moves or block.decision.edge_within_columns:
        return narrow
    moved_back = cgen.Block([
        cgen.Initializer(cgen.Value("const int64_t", "polyc_base"), "-polyc_shift"),
        cgen.Initializer(cgen.Value("const int64_t", "polyc_own"), "polyc_shift"),
        _emit_register_block(emitter, block, _SHIFTED, scope)])
    moves_full = "polyc_shift > 0" if width % 2 else f"polyc_shift > 0 && {count} > {half}"
    if combo:
        moves_full += f" && {count} > {half + quarter}"
    return cgen.Block(_vector_shift(emitter, block, level, moved) + [
        cgen.If(moves_full, moved_back, narrow)])


def _quarter_lanes(emitter: LoopNestEmitter, block: _RegisterBlock, width: int) -> int | None:
    """The lanes of a quarter-width edge block (a quarter of the block's ``width``
    columns), where a quarter is at least :data:`MIN_NARROWED_BYTES`; ``None``
    otherwise."""
    if block.outer_level is None:
        return None
    tensor = emitter.program.op.tensor(block.stmt.statement.tensor)
    element = max(1, tensor.type.compute_type.bits // 8)
    quarter = width // 4
    return quarter if width % 4 == 0 and quarter * element >= MIN_NARROWED_BYTES else None


def _masked_lanes_load(emitter: LoopNestEmitter, block: _RegisterBlock, scope: Scope,
                       lanes: int) -> bool:
    """Whether a masked block ``lanes`` wide loads every lane of its reads and selects
    (:meth:`~polyc.codegen.c_expr.ExprEmitter.loads_every_lane`): no load waits on a
    lane's condition."""
    exprs = emitter.exprs.masked(frozenset(block.vector_indices), "", lanes)
    exprs = _panel_reads(emitter, block, exprs, scope)
    return exprs.loads_every_lane(block.stmt.statement.rhs)


def _moved_index(block: _RegisterBlock, level: int) -> str | None:
    """The one index of the block's statement that its vector level (``level``, its only
    one) moves, where the block may move back along it
    (``RegisterBlock.edge_moves_back``), and where that index's value depends on no
    other level of the block; ``None`` otherwise."""
    moved, bound = block.vector_indices, block.bound
    if not block.decision.edge_moves_back or len(moved) != 1 or any(
            mentions(bound[moved[0]], it) for it in block.iterators
            if it != block.iterators[level]):
        return None
    return moved[0]


def _vector_shift(emitter: LoopNestEmitter, block: _RegisterBlock, level: int,
                  index: str) -> list:
    """C that sets ``polyc_shift`` for a block whose vector level (``level``, moving
    ``index``) falls short: the number of lanes the block may move back so that it is
    full again (0: it may not).

    The moved block recomputes columns of the block before it but stores only its
    own, so it runs the full-width loop without masks. Tiling proved the move legal
    (``RegisterBlock.edge_moves_back``): the statement's instances along the vector
    index are an interval independent of its other indices, so the block stays among
    them while its first column stays within the index's range (tested here at run
    time), and the columns it does not own read only read-only tensors (no race with
    the thread that owns them); their accumulators start at 0, not from the output.
    """
    iterator = block.iterators[level]
    statement = block.stmt.statement
    low = emitter.exprs.size(statement.range_of(index).lo)
    shift = f"{block.trips[level].trip} - polyc_count{level}"
    first = cgen.Block([
        cgen.Initializer(cgen.Value("const int64_t", iterator), f"-({shift})"),
        cgen.Initializer(cgen.Value("const int64_t", c_name(index)),
                         emitter.expr(block.bound[index])),
        cgen.If(f"{c_name(index)} >= {low}", cgen.Statement(f"polyc_shift = {shift}"))])
    return [cgen.Statement("int64_t polyc_shift = 0"), first]


def _emit_register_block(emitter: LoopNestEmitter, block: _RegisterBlock, mode: str,
                         scope: Scope, vector_width: int | None = None):
    """The C of one register block. ``mode`` says how a block at an edge (trip counts
    ``polyc_count<level>`` below the full ones) is handled: ``_FULL`` blocks have none;
    otherwise a row past the edge repeats the last row, and a vector lane past it
    reads zeros (``_MASKED``), or (``_SHIFTED``) the block's columns start at
    ``polyc_base`` and it stores only the lanes from ``polyc_own`` on, the others
    recomputing a neighbour's columns, or (``_OWNED``, exactly as wide as the columns
    left, narrowed or not) it owns every lane. ``vector_width`` narrows the vector
    level.

    An outer column level (``RegisterBlock.outer``: a convolution's image rows beside
    its columns) is part of a narrowed block, its steps side by side in the
    accumulators (8 rows × 2 image rows × 16 lanes: each broadcast serves two vectors,
    as in a full block); a full-width block runs its steps one after another, a loop
    around the whole block (8 × 2 × 32 accumulators would not fit the registers).
    A block with an outer level has its loops over rows unrolled in the C (gcc unrolled
    only the innermost and kept the accumulators in memory: a convolution ran 3.7x
    slower)."""
    stmt, statement = block.stmt, block.stmt.statement
    tensor = emitter.program.op.tensor(statement.tensor)
    elem = tensor.type.compute_type
    looped = block.outer_level if vector_width is None else None
    levels = [level for level in range(len(block.iterators)) if level != looped]
    all_counts = [f"polyc_count{level}" for level in range(len(block.iterators))]
    lanes = [f"polyc_lane{level}" for level in levels]
    counts = [all_counts[level] for level in levels]
    simd_levels = [block.simd_levels[level] for level in levels]
    iterators = [block.iterators[level] for level in levels]
    vector_lanes = [(lane, count) for lane, count, simd
                    in zip(lanes, counts, simd_levels) if simd]
    widths = [vector_width if simd and vector_width else block.trips[level].trip
              for level, simd in zip(levels, simd_levels)]
    block_lanes = max((w for w, simd in zip(widths, simd_levels) if simd), default=1)
    exprs, store_condition = emitter.exprs, ""
    if mode == _MASKED and vector_lanes:
        store_condition = " && ".join(f"{lane} < {count}" for lane, count in vector_lanes)
        exprs = exprs.masked(frozenset(block.vector_indices), store_condition, block_lanes)
        if _lanes_drop_unseen(statement, tensor):
            exprs = exprs.lanes_unselected()
    elif mode == _SHIFTED:
        store_condition = f"{vector_lanes[0][0]} >= polyc_own"
    if mode != _SHIFTED or vector_width is not None:
        # its lanes stay within the block's columns (a narrowed block's base is not
        # negative): a packed panel holds what they read, a masked lane reading 0
        exprs = _panel_reads(emitter, block, exprs, scope)
    tensor, target, current, value = emitter.accumulator(statement, exprs, scope)
    if mode == _SHIFTED:  # lanes it does not own start at 0: no read of them
        unowned = exprs.masked(frozenset(statement.indices), store_condition, block_lanes)
        current = emitter.accumulator(statement, unowned, scope)[2]
    bind_all = [cgen.Initializer(cgen.Value("const int64_t", c_name(i)),
                                 emitter.expr(block.bound[i])) for i in stmt.indices]
    bind_lhs = [b for b, i in zip(bind_all, stmt.indices) if i in statement.indices]
    acc = "polyc_acc" + "".join(f"[{lane}]" for lane in lanes)

    def lane_value(lane: str, count: str, simd: bool) -> str:
        if mode == _FULL:
            return lane
        if simd:
            return f"{lane} + polyc_base" if mode == _SHIFTED else lane
        return f"polyc_min({lane}, {count} - 1)"

    # a full-width masked block's rows unrolled in the C where the compiler would keep
    # its accumulators in memory (rules.masked_rows_unrolled); not where its masked lanes
    # are gathered (gcc took 19 s instead of 3.7 on a strided convolution, unrolled);
    # and every block that holds outer column steps side by side (see the docstring)
    unroll_rows = (block.decision.outer > 1 and looped is None) or (
        mode == _MASKED and vector_width is None and masked_rows_unrolled(emitter.machine)
        and exprs.masked_loads_contiguous(statement.rhs))

    def nest_loops(body_lines):
        """The block's loops over lanes, each binding its isl iterator."""
        lines = [cgen.Initializer(cgen.Value("const int64_t", it),
                                  lane_value(lane, count, simd))
                 for lane, count, it, simd in zip(lanes, counts, iterators, simd_levels)]
        inner = cgen.Block(lines + body_lines)
        for lane, width, simd in reversed(list(zip(lanes, widths, simd_levels))):
            loop_ = cgen.For(f"int64_t {lane} = 0", f"{lane} < {width}",
                             f"{lane} += 1", inner)
            pragma = "omp simd" if simd else f"GCC unroll {width}" if unroll_rows else None
            inner = cgen.Block([cgen.Module([cgen.Pragma(pragma), loop_]) if pragma else loop_])
        return inner

    store = cgen.Statement(f"{target} = {acc}")
    if store_condition:
        store = cgen.If(store_condition, store)
    reduction = nest_loops(bind_all + [cgen.Statement(
        f"{acc} = {combine(statement.op, tensor, acc, value)}")])
    for reduction_loop in reversed(block.chain):
        reduction = emitter.loop(reduction_loop, reduction)
    declare = cgen.Statement(f"{elem.c_type} polyc_acc" + "".join(f"[{w}]" for w in widths))
    load = nest_loops(bind_lhs + [cgen.Statement(f"{acc} = {current}")])
    save = nest_loops(bind_lhs + [store])
    first = emitter.first_visits.get(stmt.name)
    if first is not None:
        # A visit holding the first updates starts from the identity: one copy of the
        # block, its start chosen by a branch. The whole block twice (one copy per
        # start) had been a third of gcc's time on contractions and ran no faster once
        # loops start on a cache line (Machine.cflags; benchmarks/README.md, "Compile
        # time").
        start = nest_loops([cgen.Statement(f"{acc} = {identity(statement.op, tensor.type)}")])
        load = cgen.If(first, start, load)
    block_code = cgen.Block([declare, load, reduction, save])
    if looped is not None:
        step = f"polyc_lane{looped}"
        bind = cgen.Initializer(cgen.Value("const int64_t", block.iterators[looped]), step)
        block_code = cgen.For(f"int64_t {step} = 0", f"{step} < polyc_count{looped}",
                              f"{step} += 1", cgen.Block([bind, block_code]))
    if mode == _FULL or block.outer_level is None:
        return block_code
    # each edge variant of a block with an outer level in a function of its own
    # (Outliner.block; its visits run windows of channels: the call costs nothing
    # beside them, where a Kronecker product's 16-step visits ran 18% slower outlined)
    program = emitter.program
    locals_ = {name: "int64_t" for name in ["polyc_base", "polyc_own", *all_counts]}
    return emitter.outliner.block(block_code, {**locals_, **{
        buffer_name(panel): buffer_type(panel, program.statement(panel.statement).statement,
                                        program.op)
        for panel in scope.panels.values()}})


def _lanes_drop_unseen(statement, tensor) -> bool:
    """Whether a masked block's lanes past the edge may compute on whatever they load
    (:meth:`~polyc.codegen.c_expr.ExprEmitter.lanes_unselected`): a float accumulator
    and no gathered index in the statement (a lane past the edge would check or read
    an index it made up)."""
    return tensor.type.compute_type.is_float and all(
        affine_of(index) is not None for read in ir.walk(statement.rhs)
        if isinstance(read, ir.Read) for index in read.indices)


def _panel_reads(emitter: LoopNestEmitter, block: _RegisterBlock, exprs: ExprEmitter,
                 scope: Scope) -> ExprEmitter:
    """``exprs``, but the reads of a block whose lanes stay within its columns that go
    to packed panels do: those of the block's statement, in panels blocked along an
    index that one level of the block walks, as wide as that level; a row factor's
    panel, the whole factor."""
    reads, factors, bound = {}, {}, block.bound
    statement = block.stmt.statement
    for operand, panel in scope.panels.items():
        if panel.statement != block.stmt.name:
            continue
        if not panel.lanes:  # row-major: any block inside the tile reads it
            factors[operand_expr(panel, statement)] = panel_element(panel, "")
            continue
        levels = [k for k, it in enumerate(block.iterators)
                  if mentions(bound[panel.dims[0].index], it)]
        if len(levels) == 1 and block.trips[levels[0]].trip == panel.lanes:
            reads[operand] = panel_read(panel, statement, block.iterators[levels[0]])
    return exprs.redirected(reads).substituted(factors)


def _trip_count(emitter: LoopNestEmitter, trip: Trip) -> str:
    bound = emitter.expr(trip.bound)
    return bound if trip.strict else f"{bound} + 1"


@dataclass(frozen=True)
class _RegisterBlock:
    chain: list                         # reduction loops around the block, outermost first
    stmt: PolyStatement
    iterators: list[str]                # the block's loop iterators, outermost first
    simd_levels: list[bool]             # which of them is a vector loop
    trips: list[Trip]
    call: isl.AstExpr                   # the statement's isl call (its index expressions)
    decision: RegisterBlock             # what tiling decided (its register mark)

    @property
    def bound(self) -> dict[str, isl.AstExpr]:
        return dict(zip(self.stmt.indices, (self.call.get_op_arg(k)
                                            for k in range(1, self.call.get_op_n_arg()))))

    @property
    def outer_level(self) -> int | None:
        """The level of the block's outer column member (``RegisterBlock.outer``): the
        one between its rows and its vector level; ``None`` without one."""
        if self.decision.outer < 2 or len(self.iterators) != 3 or not self.simd_levels[2]:
            return None
        return 1

    @property
    def vector_indices(self) -> tuple[str, ...]:
        """The statement's indices that move with a vector level's iterator."""
        vector = [it for it, simd in zip(self.iterators, self.simd_levels) if simd]
        bound = self.bound
        return tuple(i for i in self.stmt.indices
                     if any(mentions(bound[i], it) for it in vector))


