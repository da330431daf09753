"""OpenMP parallel regions: a loop under a ``parallel`` mark, shared out by OpenMP's
static schedule (collapsed over the loops a ``collapse`` mark names) or in thread
boxes (:mod:`polyc.scheduling.threads`), with private accumulators for the reductions it
carries (:mod:`polyc.scheduling.privatize`) and private copies of the contracted
temporaries it uses (:mod:`polyc.scheduling.contraction`).

Every region runs on several threads only when the kernel has enough work; small
problems run its code on the calling thread without touching OpenMP
(:mod:`polyc.codegen.outlining`).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.c_expr import combine, identity
from polyc.codegen.c_names import allocation_failed, allocation_statement, braced, c_name
from polyc.codegen.isl_ast import has_loop, mentions, single
from polyc.codegen.prefetch import row_prefetch
from polyc.codegen.thread_boxes import box_code
from polyc.lang import ir
from polyc.lang.ir import is_pure_reduction
from polyc.lang.ranges import has_uneven_extent
from polyc.scheduling.marks import (SIMD_MARK, called_statements, collapsed_loops, decision_of,
                                    is_parallel)
from polyc.scheduling.threads import Partition

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter, Scope


def parallel_loop(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str,
                  marks: frozenset, scope: Scope):
    """A loop under a ``parallel`` mark: the loops of this thread's box under a
    ``threads`` mark, else an OpenMP loop, collapsed with the loops inside it under
    a ``collapse`` mark; a row loop's last pass fetches the next row."""
    box = thread_box(emitter, marks)
    if box is not None:
        loop = emitter.loop(node, emitter.node(node.for_get_body(), scope), iterator)
        return parallel_region(emitter, cgen.Block(box + [loop]))
    nest = collapsible(emitter, node, marks)
    prefetch = row_prefetch(emitter, node, iterator, marks) if len(nest) == 1 else None
    loop = emitter.loops(nest, emitter.row_body(nest[-1].for_get_body(), prefetch, scope))
    sharing = "dynamic" if _uneven(emitter, node) else "static"
    return parallel_region(emitter, loop, f"{_simd(marks)}{_collapse(nest)} schedule({sharing})")


def _uneven(emitter: LoopNestEmitter, node: isl.AstNode) -> bool:
    """Whether the loop runs a statement whose ranges' extents vary (a triangle's rows):
    its iterations then hold uneven work, which OpenMP shares out as they finish."""
    return any(has_uneven_extent(emitter.statements[name].statement)
               for name in called_statements(node))


def parallel_region(emitter: LoopNestEmitter, body, sharing: str | None = None):
    """A parallel region running ``body`` when the kernel has enough work, and ``body``
    on the calling thread without OpenMP otherwise (:mod:`polyc.codegen.outlining`);
    ``sharing``: the clauses of the ``omp for`` that shares out ``body``, a loop. Notes
    that the kernel places its team (:mod:`polyc.codegen.thread_placement`)."""
    emitter.parallel = True
    return emitter.outliner.region(body, sharing)


def thread_box(emitter: LoopNestEmitter, marks: frozenset) -> list | None:
    """The C declaring this thread's box, for a nest under a ``threads`` mark
    (:mod:`polyc.codegen.thread_boxes`); ``None`` for any other."""
    partition = decision_of(marks, Partition)
    if partition is None:
        return None
    emitter.shared_out = True
    return box_code(partition, emitter.program.context, emitter.names)


def collapsible(emitter: LoopNestEmitter, node: isl.AstNode,
                marks: frozenset) -> list[isl.AstNode]:
    """The loops, ``node`` first, that a ``collapse N`` mark shares out as one. The
    scheduling pass proved N members collapsible (loops whose bounds do not depend on
    each other, never an innermost loop: :func:`~polyc.scheduling.schedule.collapsible_members`);
    this only follows isl's AST down them, and stops early where the AST did not keep
    them perfectly nested."""
    count = collapsed_loops(marks)
    nest = [node]
    while len(nest) < count:
        inner = single(nest[-1].for_get_body())
        if inner.get_type() != isl.ast_node_type.for_ or \
                not has_loop(inner.for_get_body()):
            break
        outer = [emitter.expr(loop.for_get_iterator()) for loop in nest]
        if any(mentions(bound, name) for name in outer for bound in (
                inner.for_get_init(), inner.for_get_cond(), inner.for_get_inc())):
            break
        nest.append(inner)
    return nest


def parallel_with_private_accumulators(emitter: LoopNestEmitter, node: isl.AstNode,
                                       iterator: str, tensors: list[str], scope: Scope):
    """A parallel loop whose reductions into ``tensors`` each thread accumulates in a
    private copy, added into the tensor after the loop (:mod:`polyc.scheduling.privatize`).

        T *polyc_private_y = polyc_alloc(threads * |y|);
        #pragma omp parallel
        { T *polyc_mine_y = its part, set to the identity;
          #pragma omp for: the loop, its updates of y going to polyc_mine_y
          #pragma omp critical: y += polyc_mine_y }
    """
    allocations, setup, combined, frees = [], [], [], []
    private = {}  # tensor -> this thread's private accumulator
    for name in tensors:
        tensor = emitter.program.op.tensor(name)
        ctype, c_var = tensor.type.c_type, c_name(name)
        count = emitter.exprs.element_count(tensor.shape)
        op = next(s.statement.op for s in emitter.program.statements
                  if s.statement.tensor == name and not s.is_init
                  and is_pure_reduction(s.statement))
        pool, mine = f"polyc_private_{c_var}", f"polyc_mine_{c_var}"
        allocations.append(
            allocation_statement(ctype, pool, count, " * (size_t)omp_get_max_threads()"))
        setup += [
            cgen.Initializer(cgen.Value(f"{ctype} *restrict", mine),
                             f"{pool} + (size_t)omp_get_thread_num() * "
                             f"(size_t)polyc_max(1, {count})"),
            cgen.For("int64_t polyc_e = 0", f"polyc_e < {count}", "polyc_e += 1",
                     cgen.Statement(f"{mine}[polyc_e] = {identity(op, tensor.type)}"))]
        memory = c_name(tensor.storage or name)  # a view's elements are its storage's
        combined.append(cgen.For(
            "int64_t polyc_e = 0", f"polyc_e < {count}", "polyc_e += 1",
            cgen.Statement(f"{memory}[polyc_e] = " + combine(
                op, tensor, f"{memory}[polyc_e]", f"{mine}[polyc_e]"))))
        frees.append(cgen.Statement(f"free({pool})"))
        emitter.outliner.variables.declare(pool, f"{ctype} *restrict")
        private[name] = mine
    body = emitter.node(node.for_get_body(), dataclasses.replace(scope, private=private))
    if emitter.contractions:
        body = with_private_temporaries(emitter, node.for_get_body(), body)
    loop = emitter.loop(node, body, iterator)
    failed = " || ".join(f"!polyc_private_{c_name(name)}" for name in tensors)
    region = cgen.Block(setup + [
        cgen.Pragma("omp for schedule(static)"), loop,
        cgen.Pragma("omp critical"), cgen.Block(combined)])
    parallel = parallel_region(emitter, region)
    return cgen.Block(allocations + [
        cgen.If(failed, *allocation_failed(False), cgen.Block([parallel]))] + frees)


def parallel_with_private_temporaries(emitter: LoopNestEmitter, node: isl.AstNode,
                                      marks: frozenset, scope: Scope):
    """The parallel loop with the contracted temporaries it uses private to each
    thread (see polyc.scheduling.contraction): fixed-size ones declared in the body, the
    others allocated once per thread around the loop, not once per iteration::

        #pragma omp parallel
        { float *e = polyc_alloc(...);
          #pragma omp for: the loop, its body skipped if the allocation failed
          free(e); }
    """
    box = thread_box(emitter, marks)
    nest = [node] if box is not None else collapsible(emitter, node, marks)
    body_node = nest[-1].for_get_body()
    decls, allocated = _private_temporaries(emitter, body_node)
    fixed = [d for d, c_var in decls if c_var not in allocated]
    prefetch = (row_prefetch(emitter, node, emitter.expr(node.for_get_iterator()), marks)
                if box is None and len(nest) == 1 else None)
    body = emitter.row_body(body_node, prefetch, scope)
    if fixed:
        body = cgen.Block(fixed + [body])
    clauses = f"{_simd(marks)}{_collapse(nest)} schedule(static)"
    # Shared out in boxes, each thread runs the loops of its box; else OpenMP's.
    share = box if box is not None else [cgen.Pragma(f"omp for{clauses}")]
    if not allocated:
        if box is None:
            return parallel_region(emitter, emitter.loops(nest, body), clauses)
        return parallel_region(emitter, cgen.Block(box + [emitter.loops(nest, body)]))
    failed = " || ".join(f"!{c_var}" for c_var in allocated)
    loop = emitter.loops(nest, cgen.If(" && ".join(allocated), braced(body)))
    region = cgen.Block(
        [d for d, c_var in decls if c_var in allocated]
        + share + [loop,
           cgen.If(failed, cgen.Block(allocation_failed(True)))]
        + [cgen.Statement(f"free({c_var})") for c_var in allocated])
    return parallel_region(emitter, region)


def with_private_temporaries(emitter: LoopNestEmitter, node: isl.AstNode, body):
    """``body`` (the code of ``node``) in a block that declares the contracted
    temporaries its statements use; allocation failure skips it and sets the status."""
    decls, allocated = _private_temporaries(emitter, node)
    if not decls:
        return body
    if not allocated:
        return cgen.Block([d for d, _ in decls] + [body])
    failed = " || ".join(f"!{c_var}" for c_var in allocated)
    guarded = cgen.If(failed, cgen.Block(allocation_failed(True)), braced(body))
    return cgen.Block([d for d, _ in decls] + [guarded] +
                      [cgen.Statement(f"free({c_var})") for c_var in allocated])


def _private_temporaries(emitter: LoopNestEmitter,
                         node: isl.AstNode) -> tuple[list, list[str]]:
    """``([(declaration, C name)], [C names allocated with polyc_alloc])`` of the contracted
    temporaries that the statements under ``node`` use."""
    names = called_statements(node)
    used = {emitter.statements[name].statement.tensor for name in names}
    used |= {read.tensor for name in names
             for read in ir.walk(emitter.statements[name].statement.rhs)
             if isinstance(read, ir.Read)}
    decls, allocated = [], []
    for name in sorted(used & emitter.contractions.keys()):
        tensor = emitter.program.op.tensor(name)
        contraction = emitter.contractions[name]
        count = contraction.constant_elements(tensor)
        c_var = c_name(name)
        if count is not None:
            decls.append((cgen.Statement(
                f"{tensor.type.c_type} {c_var}[{max(count, 1)}]"), c_var))
            continue
        elements = emitter.exprs.element_count(contraction.shape(tensor))
        decls.append((allocation_statement(tensor.type.c_type, c_var, elements), c_var))
        allocated.append(c_var)
    return decls, allocated


def _simd(marks: frozenset) -> str:
    return " simd" if SIMD_MARK in marks else ""


def _collapse(nest: list) -> str:
    return f" collapse({len(nest)})" if len(nest) > 1 else ""


def is_parallel_loop(marks: frozenset) -> bool:
    return any(is_parallel(mark) for mark in marks)
