"""The polyc pipeline, top to bottom.

    source ─parse→ AST ─analyze→ IR ─prove bounds→ IR + preconditions
      ─build_poly_program→ isl model ─compute_dependences→ deps
      ─compute_schedule→ schedule tree (legality proven) ─build_ast→ isl AST
      ─emit_c→ C ─get_library→ loaded kernel

Each stage is one call; every intermediate is kept in a :class:`Compilation`
so that ``explain()``, the command line and tests can show it.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import islpy as isl

from polyc.codegen.ast_build import ast_text, build_ast
from polyc.codegen.emit import CSource, emit_c
from polyc.codegen.vector_math import simd_math_functions
from polyc.fusion.common_values import share_common_values
from polyc.fusion.contraction import contract_temporaries
from polyc.fusion.invariant_factors import hoist_invariant_factors
from polyc.fusion.layout import layout_copies, transpose_strided_operands
from polyc.lang import ast as syntax
from polyc.lang import ir
from polyc.lang.parser import parse
from polyc.lang.sema import analyze
from polyc.machine import rules
from polyc.options import Options
from polyc.poly.bounds import prove_accesses_in_bounds
from polyc.poly.dependences import Dependences, compute_dependences
from polyc.poly.folding import folded_inits
from polyc.poly.program import PolyProgram, build_poly_program
from polyc.poly.schedule import Schedule, compute_schedule
from polyc.poly.threads import partition_nests


def check(program: syntax.Program, name: str | None = None) -> ir.Op:
    """Syntax tree → IR with the preconditions its accesses need."""
    return prove_accesses_in_bounds(analyze(program, name))


def frontend(source: str, name: str | None = None, filename: str = "<string>") -> ir.Op:
    """TC text → checked IR."""
    return check(parse(source, filename=filename), name)


@dataclass(frozen=True)
class Compilation:
    """Everything one compilation produced, stage by stage."""

    op: ir.Op
    options: Options
    program: PolyProgram
    dependences: Dependences
    schedule: Schedule
    ast: isl.AstNode
    c_source: CSource
    seconds: dict[str, float] = field(default_factory=dict)
    contractions: dict = field(default_factory=dict)  # temporary -> Contraction

    @property
    def ast_text(self) -> str:
        return ast_text(self.ast)


def settings_text(options: Options) -> str:
    return (f"fusion={options.fusion} parallel={options.parallel} optimize={options.optimize} "
            f"canonicalize={options.canonicalize} check_gathers={options.check_gathers} "
            f"place_threads={options.place_threads} "
            f"machine={options.machine.name} "
            f"cc={options.cc} cflags={' '.join(options.cflags)}")


def generate(op: ir.Op, options: Options) -> Compilation:
    """IR → C: the polyhedral stages and code generation (no C compiler involved)."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal start
        now = time.perf_counter()
        seconds[stage] = now - start
        start = now

    if options.optimize:
        if options.canonicalize:
            op = share_common_values(hoist_invariant_factors(op))
        op = transpose_strided_operands(op)
    program = build_poly_program(op)
    lap("domains")
    dependences = compute_dependences(program)
    lap("dependences")
    schedule = compute_schedule(program, dependences, options.fusion, options.parallel,
                                options.optimize, prologue=layout_copies(op),
                                machine=options.machine)
    lap("schedule")
    shared = schedule.tree
    partitions = {}
    if options.optimize and options.parallel:
        shared, partitions = partition_nests(schedule.tree)
    ast = build_ast(program, shared)
    lap("ast")
    contractions = contract_temporaries(program, schedule) if options.optimize else {}
    lap("contraction")
    simd_math = frozenset()
    if options.optimize:
        simd_math = (simd_math_functions() if options.vector_math is None
                     else options.vector_math)
    stream = (rules.streaming_threshold(options.machine)
              if options.optimize and options.machine.streaming_stores else None)
    folded = (folded_inits(schedule.tree, dependences, program, options.machine)
              if options.optimize else {})
    c_source = emit_c(program, ast, settings_text(options), simd_math, contractions,
                      options.check_gathers, stream, folded, partitions,
                      machine=options.machine, place_threads=options.place_threads)
    lap("c")
    compilation = Compilation(op, options, program, dependences, schedule, ast, c_source,
                              seconds, contractions)
    if options.debug:
        print_debug_channels(compilation)
    return compilation


def print_debug_channels(compilation: Compilation) -> None:
    """``POLYC_DEBUG=ir,deps,...``: print the chosen stages to standard error."""
    from polyc.explain import STAGES, stage_texts

    texts = stage_texts(compilation)
    for stage in STAGES:
        if stage in compilation.options.debug:
            print(f"[polyc {stage}] {compilation.op.name}\n{texts[stage]}", file=sys.stderr)
