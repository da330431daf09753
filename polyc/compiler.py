"""The polyc pipeline, top to bottom.

    source ─parse→ AST ─analyze→ IR ─prove bounds→ IR + preconditions   (frontend)
    then the stages of :data:`PIPELINE`, in order, over one Compilation record (stage,
    package, what it does):

    canonical form    rewrite     selects on the indices split into domains, bounds
                                  that never bind dropped, stores of what elements
                                  already hold dropped (poly), updates merged,
                                  temporaries read once or cheap substituted, factors,
                                  divisors and common values, divisions by what a
                                  loop does not change as products with its
                                  reciprocal (optimize, canonicalize)
    layout copies     rewrite     indices that move together merged (a contraction as a
                                  matrix product; canonicalize), strided reused operands
                                  transposed, outputs ending in a window computed
                                  transposed (optimize)
    domains           poly        the isl model: domains, accesses, original schedule
    dependences       poly        flow, anti, output and reuse relations
    schedule          scheduling  fusion, tiling, register blocks, jams, streamed stores,
                                  row prefetches, parallel marks (legality proven)
    packed copies     scheduling  layout copies that only packed panels read dropped:
                                  the panels copy from the source (optimize; proven)
    thread partition  scheduling  thread boxes of register-blocked nests (optimize,
                                  parallel; proven)
    ast               codegen     isl's AST of the (partitioned) schedule
    contraction       scheduling  temporaries shrunk to what the loops need (optimize)
    folds             scheduling  reduction initialisations folded into register blocks
                                  (optimize)
    c                 codegen     the C translation unit

The C compiler and loading (``polyc.jit``) follow, in ``Operator.compile``. Each stage
is one call that fills fields of the frozen :class:`Compilation` (and its time in
``seconds``), so that ``explain()``, the command line and tests can show every
intermediate.
"""
from __future__ import annotations

import dataclasses
import functools
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import islpy as isl

from polyc.codegen.ast_build import ast_text, build_ast
from polyc.codegen.translation_unit import CSource, emit_c
from polyc.codegen.vector_math import simd_math_functions
from polyc.lang import ir
from polyc.lang.ranges import has_uneven_extent
from polyc.frontend import check, frontend  # noqa: F401  (the pipeline's first stage)
from polyc.machine import rules
from polyc.options import Options
from polyc.poly.dependences import Dependences, compute_dependences
from polyc.poly.program import PolyProgram, build_poly_program
from polyc.poly.redundant_stores import drop_redundant_stores
from polyc.rewrite.common_values import share_common_values
from polyc.rewrite.invariant_factors import hoist_invariant_factors
from polyc.rewrite.merged_indices import merge_indices
from polyc.rewrite.merged_updates import merge_updates
from polyc.rewrite.read_once import substitute_read_once
from polyc.rewrite.reciprocals import multiply_by_reciprocals
from polyc.rewrite.redundant_bounds import drop_redundant_bounds
from polyc.rewrite.split_selects import split_selects
from polyc.rewrite.layout import (layout_copies, transpose_strided_operands,
                                  transpose_window_outputs)
from polyc.scheduling.contraction import contract_temporaries
from polyc.scheduling.folding import folded_inits
from polyc.scheduling.packed_copies import CopiesInPanels, read_copies_in_panels
from polyc.scheduling.schedule import (Schedule, check_legality, check_parallel,
                                      compute_schedule)
from polyc.scheduling.threads import check_partitions, partition_nests


@dataclass(frozen=True)
class Compilation:
    """Everything one compilation produced, stage by stage: each stage of
    :data:`PIPELINE` fills its fields (``None`` or empty until then)."""

    op: ir.Op
    options: Options
    program: PolyProgram | None = None
    dependences: Dependences | None = None
    schedule: Schedule | None = None
    # the layout copies dropped after scheduling: packed panels transpose their sources
    copies_in_panels: CopiesInPanels | None = None
    # the schedule tree the AST is built from: thread boxes made explicit, and each
    # partitioned nest's box (polyc.scheduling.threads)
    partitioned: isl.Schedule | None = None
    partitions: dict = field(default_factory=dict)
    ast: isl.AstNode | None = None
    contractions: dict = field(default_factory=dict)  # temporary -> Contraction
    folded: dict = field(default_factory=dict)        # statement -> FoldedInit
    c_source: CSource | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # stage -> time

    @property
    def ast_text(self) -> str:
        return ast_text(self.ast)


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline: its name (its key in ``Compilation.seconds``), the
    fields it fills (``run`` returns them), and when it runs (``applies``)."""

    name: str
    run: Callable[[Compilation], dict]
    applies: Callable[[Options], bool] = lambda options: True


# The canonical form's rewrites, in the order they run.
CANONICAL_FORM: tuple[Callable[[ir.Op], ir.Op], ...] = (
    split_selects, drop_redundant_bounds, drop_redundant_stores, merge_updates,
    substitute_read_once, hoist_invariant_factors, share_common_values,
    multiply_by_reciprocals)


def _canonical_form(c: Compilation) -> dict:
    op = c.op
    for rewrite in CANONICAL_FORM:
        op = rewrite(op)
    return {"op": op}


def _optimizing(options: Options) -> bool:
    return options.optimize


def _layout_copies(c: Compilation) -> dict:
    op = merge_indices(c.op) if c.options.canonicalize else c.op
    return {"op": transpose_strided_operands(transpose_window_outputs(op))}


def _schedule(c: Compilation) -> dict:
    return {"schedule": compute_schedule(c.program, c.dependences, c.options.fusion,
                                         c.options.parallel, c.options.optimize,
                                         prologue=layout_copies(c.op),
                                         machine=c.options.machine)}


def _packed_copies(c: Compilation) -> dict:
    dropped = read_copies_in_panels(c.op, c.schedule)
    if dropped is None:
        return {}
    check_legality(dropped.schedule.schedule_map, dropped.dependences, dropped.program)
    check_parallel(dropped.schedule.tree, dropped.dependences, dropped.program)
    return {"op": dropped.op, "program": dropped.program, "dependences": dropped.dependences,
            "schedule": dropped.schedule, "copies_in_panels": dropped}


def _partition(c: Compilation) -> dict:
    uneven = frozenset(s.name for s in c.program.statements
                       if has_uneven_extent(s.statement))
    partitioned, partitions = partition_nests(c.schedule.tree, uneven)
    check_partitions(partitioned, c.dependences)
    return {"partitioned": partitioned, "partitions": partitions}


def _ast(c: Compilation) -> dict:
    tree = c.partitioned if c.partitioned is not None else c.schedule.tree
    return {"ast": build_ast(c.program, tree)}


def _c(c: Compilation) -> dict:
    options = c.options
    simd_math = frozenset()
    if options.optimize:
        simd_math = (simd_math_functions() if options.vector_math is None
                     else options.vector_math)
    stream = (rules.streaming_threshold(options.machine)
              if options.optimize and options.machine.streaming_stores else None)
    return {"c_source": emit_c(c.program, c.ast, options.summary(), simd_math,
                               c.contractions, options.check_gathers, stream, c.folded,
                               machine=options.machine,
                               place_threads=options.place_threads)}


# The canonical form comes first: generate() finds the compilations it keeps by the IR
# that stage gives.
PIPELINE: tuple[Stage, ...] = (
    Stage("canonical form", _canonical_form,
          lambda options: options.optimize and options.canonicalize),
    Stage("layout copies", _layout_copies, _optimizing),
    Stage("domains", lambda c: {"program": build_poly_program(c.op)}),
    Stage("dependences", lambda c: {"dependences": compute_dependences(c.program)}),
    Stage("schedule", _schedule),
    Stage("packed copies", _packed_copies, _optimizing),
    Stage("thread partition", _partition,
          lambda options: options.optimize and options.parallel),
    Stage("ast", _ast),
    Stage("contraction",
          lambda c: {"contractions": contract_temporaries(c.program, c.schedule, c.ast)},
          _optimizing),
    Stage("folds", lambda c: {"folded": folded_inits(c.schedule.tree, c.dependences,
                                                     c.program)}, _optimizing),
    Stage("c", _c),
)


def generate(op: ir.Op, options: Options) -> Compilation:
    """IR → C: the stages of :data:`PIPELINE` that apply to ``options``, in order (no C
    compiler involved).

    The pipeline is a function of the IR and the options alone, and a Compilation is
    frozen, so the process keeps its last ones (:func:`remember`): the same operator
    defined again (a notebook cell run twice, one kernel in two tests) is not generated
    again. They are found by the canonical form (the first stage), so that two
    spellings of one operator (a triangle written with ``where`` and with a select)
    share one compilation; its ``seconds`` are this call's canonical form and the
    first generation's other stages. ``generate.forget()`` empties them (for code
    that patches a stage)."""
    written = _run(Compilation(op, options), PIPELINE[:1])
    try:
        hash((written.op, options))
    except TypeError:  # an IR or options that cannot be hashed: generated each time
        compilation = _generated(written.op, options)
    else:
        compilation = _remembered(written.op, options)
    compilation = dataclasses.replace(compilation,
                                      seconds={**written.seconds, **compilation.seconds})
    if options.debug:
        print_debug_channels(compilation)
    return compilation


# How many compilations a process keeps by default. One takes about 0.3 MB (isl's
# objects and the C) for a forward operator, 2 MB for the gradient of a convolution
# or of attention (benchmarks/README.md, "Compile time").
REMEMBERED = 32


def remember(count: int) -> None:
    """Keep the process's last ``count`` compilations from now on (0: none), forgetting
    those kept so far. A process that generates many operators again and again, such
    as the test suite under several machine models, trades memory for time here."""
    global _remembered
    _remembered = functools.lru_cache(maxsize=count)(_generated)


def _generated(op: ir.Op, options: Options) -> Compilation:
    """The stages after the canonical form, from the canonical ``op``."""
    return _run(Compilation(op, options), PIPELINE[1:])


def _run(compilation: Compilation, stages: tuple[Stage, ...]) -> Compilation:
    for stage in stages:
        if stage.applies(compilation.options):
            start = time.perf_counter()
            changes = stage.run(compilation)
            seconds = {**compilation.seconds, stage.name: time.perf_counter() - start}
            compilation = dataclasses.replace(compilation, **changes, seconds=seconds)
    return compilation


remember(REMEMBERED)  # sets _remembered, the memo generate() asks
generate.forget = lambda: _remembered.cache_clear()


def print_debug_channels(compilation: Compilation) -> None:
    """``POLYC_DEBUG=ir,deps,...``: print the chosen stages to standard error."""
    from polyc.explain import STAGES, stage_texts

    texts = stage_texts(compilation)
    for stage in STAGES:
        if stage in compilation.options.debug:
            print(f"[polyc {stage}] {compilation.op.name}\n{texts[stage]}", file=sys.stderr)
