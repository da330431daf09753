"""Every size polyc derives from the machine, with its reason, in one place.

Each rule takes a :class:`~polyc.machine.model.Machine` and states itself against
it (``a panel fills half of L1``), never as a number of one CPU. Tests derive their
expectations by calling these rules under named models. The measurements behind
the constants are in ``benchmarks/README.md``.
"""
from __future__ import annotations

from polyc.machine.model import Machine

# -------------------------------------------------------------- register blocks

# A register block is at most this many rows: eight rows make row tiles of 128, which
# divide the power-of-two extents most operators have (six made tiles of 126, leaving
# a thin last tile: M = 512 gave one thread of two 61% of the work); twelve rows (24
# accumulators) ran slower than either.
MAX_BLOCK_ROWS = 8


def vector_lanes(machine: Machine, element_bytes: int) -> int:
    """The elements of ``element_bytes`` one vector holds (at least 1)."""
    return max(1, machine.vector_bytes // element_bytes)


def register_block(machine: Machine, element_bytes: int) -> tuple[int, int]:
    """Rows × columns of an output block kept in registers across a reduction.

    Two vectors per row, and as many rows as leave three registers free (the two
    vectors of the streamed operand and a broadcast), at most :data:`MAX_BLOCK_ROWS`:
    6 × 2 vectors with 16 registers (BLIS's Haswell kernel), 8 × 2 with 32."""
    rows = min(MAX_BLOCK_ROWS, (machine.vector_registers - 3) // 2)
    return rows, 2 * vector_lanes(machine, element_bytes)


def outer_column_steps(machine: Machine, element_bytes: int) -> int:
    """The steps of a register block's outer column member (a second member its columns
    span, like a convolution's image rows ``h`` beside its columns ``w``): as many as
    the block has vectors per row. Where the vector member leaves half the block's
    columns or fewer (a late layer's 14 output columns against 32), the narrowed block
    takes that many steps of the outer member at once, each row's vectors one per step,
    so that each broadcast still serves as many vectors as in a full block (8 × 2 × 16
    float32 with 32 registers, 6 × 2 × 8 with 16); a full block runs the steps one
    after another (:mod:`polyc.codegen.register_block`)."""
    columns = register_block(machine, element_bytes)[1]
    return max(1, columns // vector_lanes(machine, element_bytes))


def masked_rows_unrolled(machine: Machine) -> bool:
    """Whether a full-width masked edge block's loops over rows are unrolled whole by
    the C itself (``#pragma GCC unroll``) rather than left to the compiler.

    With AVX-512's mask registers gcc turns a masked lane's select into a masked load
    whose mask it rebuilds for every row, finds the row loop's body too large to unroll
    and keeps the block's accumulators on the stack: the 256-bit shape of an AVX-512
    part (``skylake-avx512``: 8 × 16 float32) ran a convolution with 14 output columns
    4.4x slower than the 512-bit one (64 against 15 ms, Zen 4, 2 threads). Unrolled,
    the accumulators stay in registers (13-15 ms). AVX2 has no mask registers: gcc
    keeps them in registers there unaided, and forcing the unroll slowed a Kronecker
    product with masked edges by 14% (benchmarks/README.md, "Design measurements").
    A block whose masked lanes are gathered (a strided read) stays rolled: unrolled, gcc
    compiled a strided convolution in 19 s instead of 3.7
    (:meth:`~polyc.codegen.c_expr.ExprEmitter.masked_loads_contiguous`)."""
    return machine.isa == "avx512"


def edge_slack(machine: Machine) -> int:
    """The elements allocated past the end of a temporary: an edge register block's
    lanes past the edge load them before they are selected away
    (:mod:`polyc.codegen.register_block`); a block's columns, of the narrowest
    elements, bound how far past the last element they reach."""
    return register_block(machine, 1)[1]


def joined_accumulators(machine: Machine) -> int:
    """The most reductions one vector loop over a row keeps side by side
    (:mod:`polyc.scheduling.vector_passes`): each holds a vector register across the
    loop, and half the registers stay for the values the passes load and compute
    (8 with 16 registers, 16 with 32)."""
    return max(1, machine.vector_registers // 2)


# A vector reduction's independent chains: an addition or fused multiply-add takes about
# 4 cycles before its sum feeds the next, and two may start each cycle, so one
# accumulator leaves the units idle most of the time; four cover most of the latency
# (a row's mean and variance, 4096 × 1024 under AVX2: 0.55 -> 0.43 ms).
REDUCTION_CHAINS = 4


def reduction_chains(machine: Machine, reductions: int) -> int:
    """Vector accumulators each of ``reductions`` reductions in one vector loop keeps, so
    that its additions form that many independent chains
    (:mod:`polyc.codegen.vector_reductions`): :data:`REDUCTION_CHAINS`, fewer where
    the loop's reductions would together hold more than :func:`joined_accumulators`."""
    return max(1, min(REDUCTION_CHAINS, joined_accumulators(machine) // max(1, reductions)))


# ------------------------------------------------------------------ tile sizes

def tile_budget(machine: Machine) -> int:
    """A tile's working set: half of L2, leaving room for the streams passing through."""
    return machine.l2 // 2


def panel_budget(machine: Machine) -> int:
    """The largest packed panel or row-factor buffer in bytes: a quarter of L2, at most
    256 KiB (it lives on the stack of the thread that runs the tile)."""
    return min(machine.l2 // 4, 256 * 1024)


def panel_columns(machine: Machine, steps: int, columns: int, element_bytes: int) -> int:
    """The widest tile of a register block's vector member whose packed panel of the
    streamed operand (``steps`` reduction steps × the tile's columns) fits
    :func:`panel_budget`: ``columns`` (one block's) doubled while it fits, never less.

    A wider tile leaves that operand unpacked (:mod:`polyc.scheduling.packing`): each
    step of a block then reads one row of it a row stride apart, rows that share an L1
    set when the stride is a power of two. With a 2 MiB L2 (Sapphire Rapids) the tile
    budget had let a 1024³ matmul's tile grow to 256 columns × 512 steps, a 512 KiB
    panel, left unpacked: 2.2x slower than 128 columns packed."""
    width = columns
    while 2 * width * steps * element_bytes <= panel_budget(machine):
        width *= 2
    return width


# The panel depth's bounds, in reduction steps.
MIN_PANEL_DEPTH, MAX_PANEL_DEPTH = 8, 256


def panel_depth(machine: Machine, columns: int, element_bytes: int) -> int:
    """The reduction steps a register block runs per visit: BLIS's ``kc``, the largest
    power of two whose panel of the streamed operand (``columns`` lanes per step) fills
    half of L1, within :data:`MIN_PANEL_DEPTH` and :data:`MAX_PANEL_DEPTH`.

    A tile's innermost block reduction gets at least this extent, however small its
    band's square tile (a convolution's seven-member band tiles by 8)."""
    depth = MAX_PANEL_DEPTH
    while depth > MIN_PANEL_DEPTH and depth * columns * element_bytes > machine.l1 // 2:
        depth //= 2
    return depth


# How many cube tiles a register block's streamed rows may span: each packed panel is
# then copied once per that many rows.
ROW_TILES = 8
# The deepest visit of streamed rows, in reduction steps (1024 ran slower than 512).
MAX_STREAMED_DEPTH = 512


def streamed_row_tile(machine: Machine, cube_rows: int, element_bytes: int, depth: int,
                      has_row_factor: bool) -> int:
    """The most rows a tile of streamed register-block rows may span: :data:`ROW_TILES`
    cube tiles, fewer where a row factor's buffer (the rows × ``depth`` steps) would not
    fit :func:`panel_budget` (it would then not be packed at all)."""
    rows = cube_rows * ROW_TILES
    if has_row_factor:
        while rows > cube_rows and rows * depth * element_bytes > panel_budget(machine):
            rows //= 2
    return rows


def streamed_depth(machine: Machine, element_bytes: int, depth: int, row_tile: int,
                   has_row_factor: bool) -> int:
    """The reduction steps per visit of a register block whose rows stream, from
    ``depth`` (:func:`panel_depth`) on: doubled, up to :data:`MAX_STREAMED_DEPTH`, while
    the block's rows of the broadcast operand at the doubled depth (rows × depth
    elements) fit half of L1, and a row factor's buffer (the tile's ``row_tile`` rows ×
    the doubled depth) :func:`panel_budget`.

    Each visit loads and stores the block's accumulators; across the tile's rows L1
    keeps only the broadcast rows (the packed panel streams from L2 either way)."""
    rows = register_block(machine, element_bytes)[0]
    while depth < MAX_STREAMED_DEPTH:
        deeper = 2 * depth
        if rows * deeper * element_bytes > machine.l1 // 2:
            break
        if has_row_factor and row_tile * deeper * element_bytes > panel_budget(machine):
            break
        depth = deeper
    return depth


def transpose_tile(machine: Machine) -> int:
    """The square tile of a band whose accesses walk their lines along different loops
    (a transposed copy): ``T`` lines of the strided side fit half of L1, ``16 <= T <=
    256``, so each line is used whole while it is in L1."""
    size = 256
    while size > 16 and size * machine.line > machine.l1 // 2:
        size //= 2
    return size


def transpose_subtile(machine: Machine, element_bytes: int) -> int:
    """The square sub-tile a transposition tile (:func:`transpose_tile`) is walked in:
    one cache line of each strided row. Rows a power of two of bytes apart (a 1024-wide
    float32 matrix: 4 KiB) all fall into one set of L1, which holds as many lines as it
    has ways, whatever its size: a whole tile's lines then miss in L1 and L2 on every
    pass. A sub-tile uses each line whole, one after another, while it is still in L2
    (measured on a transposed copy, 1024 wide: 2.0 ms in tiles, 0.59 ms in sub-tiles;
    1000 wide, no conflicts: 0.32 and 0.30 ms)."""
    return min(transpose_tile(machine), line_elements(machine, element_bytes))


# ------------------------------------------------------- memory traffic in C

def line_elements(machine: Machine, element_bytes: int) -> int:
    """The elements of ``element_bytes`` each in one cache line."""
    return max(1, machine.line // max(1, element_bytes))


def streaming_threshold(machine: Machine) -> int:
    """The output size in bytes from which stores bypass the cache: a quarter of the
    last-level cache (smaller outputs are likely read again from it)."""
    return machine.l3 // 4


def row_prefetch_threshold(machine: Machine) -> int:
    """The bytes that the tensors a row walk prefetches (its earlier passes' inputs, its
    last pass's output) must hold together for its last pass to prefetch the next row:
    half the last-level cache. A smaller walk stays in that cache from one call to the
    next, where the hardware prefetcher keeps up and the prefetches are instructions
    that gain nothing: a layer norm of 1024 x 1024 (4 MiB in, 4 MiB out; Zen 4, 32 MiB
    L3, 2 threads) ran 0.127 ms with them, 0.117 without (and 0.123 with the last pass
    in chunks but no prefetch). From memory they pay: a softmax of 4096 x 1024 (32 MiB)
    2.56 ms without, 2.15 with (benchmarks/README.md, "Design measurements")."""
    return machine.l3 // 2


# How many source rows ahead a blocked panel copy prefetches the lines of its next
# block: the copy walks the source a block of a row at a time, rows a row stride apart,
# which the hardware prefetcher does not follow. A distance in rows, not bytes: one
# row of blocks is a handful of lines on any cache.
PREFETCH_ROWS = 8
# The chunk of a row's last pass that prefetches the next row's lines, in cache lines
# of the fetched input (as a streamed store's chunk).
PREFETCH_CHUNK_LINES = 8

# ------------------------------------------------------- the fusion cost model

# The extent the cost model gives a size it knows nothing of (kernels are compiled for
# every size), and the extent of a window size: one subtracted from another extent
# (``H - KH + 1``), a convolution's or pooling's kernel.
NOMINAL_EXTENT = 1024
NOMINAL_WINDOW = 4
# The instances a statement runs at nominal sizes, at most: deep nests get smaller
# extents (a five-deep contraction 64 per size), as the operators that have them do.
NOMINAL_INSTANCES = 1 << 30

# Bytes one core moves per cycle from each level of the memory hierarchy, from the
# vendors' optimisation manuals (Zen 3: 32 B/cycle from L2, 32 from L3 at best, about
# 8 from memory per core; Intel alike): relative figures, for comparing schedules of
# one operator, not for predicting times.
L2_BYTES_PER_CYCLE = 32
L3_BYTES_PER_CYCLE = 16
MEMORY_BYTES_PER_CYCLE = 8

# Arithmetic operations a call of a math-library function (exp, log, tanh, ...) counts
# as: a vector implementation takes about ten FMAs.
CALL_OPERATIONS = 10


def memory_levels(machine: Machine) -> tuple[tuple[str, float, float], ...]:
    """``(name, capacity in bytes, bytes per cycle per core)`` of each level a loop nest
    may find its data in, nearest first: L1 (two vector loads a cycle), L2, L3,
    memory (unbounded)."""
    return (("L1", machine.l1, 2 * machine.vector_bytes),
            ("L2", machine.l2, L2_BYTES_PER_CYCLE),
            ("L3", machine.l3, L3_BYTES_PER_CYCLE),
            ("memory", float("inf"), MEMORY_BYTES_PER_CYCLE))


def operations_per_cycle(machine: Machine, element_bytes: int, vector: bool,
                         register_block: bool) -> float:
    """Arithmetic operations one core retires per cycle on elements of
    ``element_bytes``: a lane at a time in scalar code; a vector's lanes in a vector
    loop (whose loads keep one FMA unit busy); every FMA unit's in a register block,
    which loads an operand once per several FMAs."""
    if not vector:
        return 1.0
    lanes = vector_lanes(machine, element_bytes)
    return float(lanes * (max(1, machine.fma_units) if register_block else 1))


# ------------------------------------------------------------------ threads

# Statement instances below which a parallel loop runs on one thread: waking a team
# costs a few microseconds on any core count.
PARALLEL_WORK_THRESHOLD = 32768


def summary(machine: Machine) -> str:
    """The sizes these rules give a float32 kernel on ``machine``, for ``explain()``."""
    rows, columns = register_block(machine, 4)
    depth = panel_depth(machine, columns, 4)
    return (f"float32 register block {rows} × {columns}, panel depth {depth} "
            f"(up to {streamed_depth(machine, 4, depth, 1, False)} for streamed rows), "
            f"tile budget {tile_budget(machine) // 1024} KiB, panel budget "
            f"{panel_budget(machine) // 1024} KiB, transposition tiles "
            f"{transpose_tile(machine)}², streaming stores from "
            f"{streaming_threshold(machine) // 1024} KiB, a row's sum in "
            f"{reduction_chains(machine, 1) * vector_lanes(machine, 4)} partial results")
