"""isl AST → one C99 + OpenMP translation unit, built with cgen.

The entry point takes the sizes, then the inputs (tensors as ``const T
*restrict``, 0-rank inputs by value), then the outputs, and returns a status
(0: done; 1: out of memory; 2: a gather index was out of range)::

    int polyc_matmul(int64_t M, int64_t K, int64_t N,
                     const float *restrict A, const float *restrict B, float *restrict C)

Beside it, every kernel has the same uniform entry, which the C launcher
(:mod:`polyc.jit.launcher`) calls without knowing the operator: the sizes in an
array, then one pointer per input and output (to the data of a tensor, to the
value of a 0-rank input)::

    int polyc_matmul_launch(const int64_t *polyc_sizes, void *const *polyc_args)

Temporaries are allocated inside. The loop nests are written by
:mod:`polyc.codegen.loop_nest`; this module adds the header comment, the helpers
the nests use, the entry point's parameters, the work estimate that decides
whether parallel regions start threads, and the temporaries.
"""
from __future__ import annotations

from dataclasses import dataclass

import cgen
import islpy as isl

from polyc.codegen import streaming, transposed_blocks
from polyc.codegen.c_expr import ExprEmitter
from polyc.codegen.c_names import (PREAMBLE, allocation_failed, allocation_statement, c_name,
                                   entry_name, entry_parameters, launch_name)
from polyc.codegen.loop_nest import LoopNestEmitter, Scope
from polyc.codegen.outlining import STATUS_AFTER, STATUS_BEFORE
from polyc.codegen.panels import iterators_around_marks
from polyc.codegen.thread_boxes import GRID_HELPER
from polyc.codegen.thread_placement import PLACEMENT_HELPERS, place_team, release_team
from polyc.codegen.vector_math import declarations
from polyc.errors import InternalError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.printer import to_tc
from polyc.machine import Machine
from polyc.machine.rules import PARALLEL_WORK_THRESHOLD
from polyc.poly.program import PolyProgram
from polyc.scheduling.folding import FoldedInit
from polyc.version import __version__


@dataclass(frozen=True)
class CSource:
    text: str
    entry: str                          # the entry function's name
    parameters: tuple[tuple[str, str], ...]  # (C type, name) in call order
    streamed: frozenset[str] = frozenset()  # outputs with streaming stores when large
    stream_threshold: int | None = None     # ... of at least this many bytes




def emit_c(program: PolyProgram, ast: isl.AstNode, settings: str,
           simd_math: frozenset[str] = frozenset(), contractions=None,
           check_gathers: bool = True, stream_threshold: int | None = None,
           folded: dict[str, FoldedInit] | None = None,
           *, machine: Machine, place_threads: bool = False) -> CSource:
    """The C translation unit for ``program`` scheduled as ``ast``.

    ``settings`` describes the options (for the header comment); ``simd_math`` names
    the math functions with vector versions to declare (:mod:`polyc.codegen.vector_math`);
    outputs of at least ``stream_threshold`` bytes written once get streaming stores
    (:mod:`polyc.codegen.streaming`; ``None``: never); ``folded`` names the reductions
    whose initialisation folds into their register blocks (:mod:`polyc.scheduling.folding`);
    ``machine`` gives the cache line (prefetches); ``place_threads``: the kernel pins
    its OpenMP team (:mod:`polyc.codegen.thread_placement`).
    """
    op = program.op
    contractions = contractions or {}
    emitter = LoopNestEmitter(program, contractions, check_gathers,
                              iterators_around_marks(ast), stream_threshold, machine=machine)
    emitter.fold_inits(folded or {}, ast)
    code = emitter.node(ast, Scope())
    if not emitter.folds_complete():
        raise InternalError(f"`{op.name}`: a folded initialisation was skipped, but a "
                            f"register mark of its reduction did not become a block")
    parameters = entry_parameters(op)
    shared = tuple(t for t in op.temporaries if t.name not in contractions)
    body = [cgen.Statement("int polyc_status = 0")]
    body += [cgen.Initializer(cgen.Value("const int64_t", c_name(derived.name)),
                              emitter.exprs.element_count(derived.factors))
             for derived in op.derived_sizes]
    body.append(cgen.Initializer(cgen.Value("const int64_t", "polyc_work"), _work(program)))
    placed = emitter.parallel and place_threads
    if placed:
        body += place_team(f"polyc_work >= {PARALLEL_WORK_THRESHOLD}")
    body += _allocate_temporaries(shared, emitter.exprs)
    body += streaming.fenced([code], str(code))
    if shared:
        body.append(cgen.Line("polyc_done:"))
        body += [cgen.Statement(f"free({c_name(t.name)})") for t in shared]
    if placed:
        body += release_team()
    body.append(cgen.Statement("return polyc_status"))
    declaration = cgen.FunctionDeclaration(
        cgen.Value("int", entry_name(op)),
        [_declarator(ctype, name) for ctype, name in parameters])
    function = cgen.FunctionBody(declaration, cgen.Block(body))
    header = _header_comment(op, settings)
    vector_math = declarations(emitter.exprs.math_calls, simd_math)
    stream = streaming.HELPERS if emitter.streamed else ""
    transposes = transposed_blocks.helpers(emitter.transposed_blocks)
    grid = GRID_HELPER if emitter.shared_out else ""
    placement = PLACEMENT_HELPERS if placed else ""
    regions = emitter.outliner.functions
    outlined = ([STATUS_BEFORE, *(f"{region}\n" for region in regions), STATUS_AFTER, ""]
                if regions else [])
    text = "\n".join([header, PREAMBLE, stream + transposes, grid, placement, vector_math, "",
                      *outlined, str(function), "", str(_launch_entry(op, parameters)), ""])
    return CSource(text, entry_name(op), parameters, frozenset(emitter.streamed),
                   stream_threshold)


def kernel_code(text: str) -> str:
    """The kernel's own code in a translation unit ``text``, after the header and the
    helpers: its outlined parallel regions (:mod:`polyc.codegen.outlining`), its entry
    point and the uniform entry point."""
    start = text.find(f"\n{STATUS_BEFORE}\n")
    return text[text.index("\nint polyc_") if start < 0 else start:].lstrip("\n")


def _launch_entry(op: ir.Op, parameters: tuple[tuple[str, str], ...]):
    """``int <entry>_launch(sizes, args)``: the entry point called with the sizes in an
    array and a pointer per input and output (a 0-rank input's points to its value)."""
    values = [f"polyc_sizes[{k}]" for k in range(len(op.sizes))]
    for k, (ctype, _) in enumerate(parameters[len(op.sizes):]):
        pointer = ctype.replace(" *restrict", " *")
        values.append(f"({pointer})polyc_args[{k}]" if pointer != ctype
                      else f"*(const {ctype} *)polyc_args[{k}]")
    call = f"return {entry_name(op)}({', '.join(values)})"
    declaration = cgen.FunctionDeclaration(
        cgen.Value("int", launch_name(entry_name(op))),
        [cgen.Value("const int64_t *", "polyc_sizes"), cgen.Value("void *const *", "polyc_args")])
    return cgen.FunctionBody(declaration, cgen.Block([cgen.Statement(call)]))


def _declarator(ctype: str, name: str):
    return cgen.Value(ctype, name)


def _header_comment(op: ir.Op, settings: str) -> str:
    source = to_tc(op).replace("*/", "* /")
    lines = [f"polyc {__version__}: operator `{op.name}`", f"options: {settings}", "",
             *source.rstrip().splitlines()]
    return "/*\n" + "\n".join(f" * {line}".rstrip() for line in lines) + "\n */"


def _work(program: PolyProgram) -> str:
    """C expression: the number of statement instances (the parallel-or-not decision)."""
    terms = []
    for stmt in program.statements:
        ranges = (stmt.statement.domain if not stmt.is_init else
                  tuple(stmt.statement.range_of(i) for i in stmt.statement.indices))
        factors = [f"polyc_extent({sz.to_c(sz.sub(r.hi, r.lo), c_name)})" for r in ranges]
        terms.append(" * ".join(factors) if factors else "1")
    return " + ".join(f"({t})" for t in terms) if terms else "0"


def _allocate_temporaries(temporaries: tuple[ir.Tensor, ...], exprs: ExprEmitter) -> list:
    """Each temporary on the heap, with ``exprs.slack`` elements past its end (what
    :meth:`ExprEmitter._lanes_loadable` relies on), zeroed where lanes past an edge
    read them unselected (:meth:`ExprEmitter.lanes_unselected`)."""
    lines = []
    for tensor in temporaries:
        lines.append(allocation_statement(
            tensor.type.c_type, c_name(tensor.name),
            f"{exprs.element_count(tensor.shape)} + {exprs.slack}"))
    done = cgen.Statement("goto polyc_done")
    for tensor in temporaries:
        lines.append(cgen.If(f"!{c_name(tensor.name)}",
                             cgen.Block(allocation_failed(False) + [done])))
    for tensor in temporaries:  # what masked lanes load unselected: zeros
        if tensor.name not in exprs.unselected_reads:
            continue
        name, ctype = c_name(tensor.name), tensor.type.c_type
        lines.append(cgen.Statement(
            f"memset({name} + {exprs.element_count(tensor.shape)}, 0, "
            f"sizeof({ctype}) * {exprs.slack})"))
    return lines
