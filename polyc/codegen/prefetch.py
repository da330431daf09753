"""Prefetch the next row's inputs while the last pass over a row runs.

A row-wise fused nest (softmax, layer norm; :mod:`polyc.scheduling.vector_passes`)
walks each row several times: its first pass reads the row from memory, the
others from the L1 cache. The hardware prefetcher follows a stream only while
it is being read, so every row's first pass (and a later one that reads another
input first) waits for memory while the other passes leave the memory bus idle.
polyc issues software prefetches of the next row's reads of the passes before the
last, spread over the chunks of the last pass::

    for n (parallel):                          for n (parallel):
      for d: m = max(m, X(n, d))                 for d: m = max(m, X(n, d))   (in cache)
      for d: e(d) = exp(X(n, d) - m)             for d: e(d) = exp(X(n, d) - m)
      for d: Y(n, d) = e(d) / s           →      for chunks of d:
                                                   prefetch X(n + 1, d): the chunk's lines
                                                   for d in the chunk: Y(n, d) = e(d) / s

The last pass's values map one to one onto each earlier pass's, from their first
values on (the passes of a fused row walk the same range); past the end of a
pass's range nothing is fetched for it, and on the last row of the loop nothing
at all. Which row loops prefetch, and which tensors, is decided by
:mod:`polyc.scheduling.row_prefetch` (a ``prefetch next row`` mark): inputs read at
unit stride along a pass's loop, with indices that read no tensor (a prefetch
computes its address and never reads memory), and that vary with the row; each
where the first pass that reads it does. This module writes the addresses.

Spread over the last pass, the prefetches did better than issuing the whole row
before the last pass or fetching two rows ahead (measurements:
benchmarks/README.md, "Design measurements").

A call prefetches only where the fetched tensors hold the decision's ``from_bytes``
together (:func:`~polyc.machine.rules.row_prefetch_threshold`, tested at run time as
streaming stores are); elsewhere the last pass runs as one loop, since its chunks alone
cost time (:attr:`RowPrefetch.fetching`).

An output that only the last pass stores (the decision's ``stores``) has no line in
the cache when the last pass writes it, and each store waits for its line to come
from memory. Its lines of the current row are fetched for writing right after the
first pass that loops over the row (which reads the row from memory), so that they
arrive while the passes between read the cache (:meth:`RowPrefetch.store_code`); where
the last pass streams its stores past the cache (a size tested at run time,
:mod:`polyc.codegen.streaming`), they are not fetched.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.c_expr import index_names
from polyc.codegen.c_names import braced, c_name
from polyc.codegen.isl_ast import (coefficient, exclusive_upper_bound, identifiers,
                                   mentions, single, statement_loops)
from polyc.lang import ir
from polyc.lang.types import INT64
from polyc.machine.rules import PREFETCH_CHUNK_LINES, line_elements
from polyc.scheduling.marks import (SIMD_MARK, PrefetchNextRow, StreamedStores, decision_of,
                                    node_mark, statement_calls)

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter


@dataclass(frozen=True)
class PassFetch:
    """What the last pass fetches of one earlier pass's reads: ``iterator`` is that pass's
    loop iterator (C), ``start`` / ``end`` its first value and exclusive upper bound (C,
    in terms of the row); ``bindings``: ``(index, C)`` of its statement's indices;
    ``addresses``: C lvalues of the reads to fetch."""

    iterator: str
    start: str
    end: str
    bindings: tuple[tuple[str, str], ...]
    addresses: tuple[str, ...]
    for_writing: bool = False  # the last pass's own stores, fetched to be written

    def code(self) -> cgen.Generable:
        """The prefetches for the last pass's value ``polyc_line`` (in the next row)."""
        fetch = cgen.Block(
            [cgen.Initializer(cgen.Value("const int64_t", name), value)
             for name, value in self.bindings]
            + [cgen.Statement(f"__builtin_prefetch(&{address}, {int(self.for_writing)}, 3)")
               for address in self.addresses])
        return cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", self.iterator),
                             f"({self.start}) + (polyc_line - polyc_last_start)"),
            cgen.If(f"{self.iterator} < {self.end}", fetch)])


@dataclass(frozen=True)
class RowPrefetch:
    """What the last pass of a row fetches for the next row.

    ``row``: the row loop's iterator (C); ``next_row`` / ``row_end``: C of its next
    value and of its exclusive upper bound; ``passes``: what it fetches of each earlier
    pass's reads; ``line_elements``: the elements of the narrowest fetched tensor in a
    cache line."""

    row: str
    next_row: str
    row_end: str
    passes: tuple[PassFetch, ...]
    line_elements: int
    stores: tuple[PassFetch, ...] = ()  # the last pass's stores in this row, for writing
    stores_cached: str | None = None    # C: where the stores go through the cache
    fetching: str = "1"                 # C: where the call prefetches (the tensors' size)

    def store_code(self) -> list:
        """The fetches, for writing, of the lines the last pass of this row stores: issued
        after the first pass, which reads the row from memory; the passes between then
        read the cache and leave the memory bus to these (module docstring)."""
        code = [cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", "polyc_last_start"), fetch.start),
            cgen.For(f"int64_t polyc_line = {fetch.start}", f"polyc_line < {fetch.end}",
                     f"polyc_line += {self.line_elements}", fetch.code())])
                for fetch in self.stores]
        if not code:
            return code
        condition = self.fetching if self.stores_cached is None else \
            f"{self.fetching} && {self.stores_cached}"
        return [cgen.If(condition, cgen.Block(code))]

    def code(self, chunk_start: str, chunk_end: str, last_start: str) -> list:
        """The prefetches for the values ``[chunk_start, chunk_end)`` of the last pass,
        whose first value is ``last_start`` (C, evaluated in the current row)."""
        if not self.passes:
            return []
        line = cgen.Block([
            # the next row's values: the row's iterator, shadowed, is the next row
            cgen.Initializer(cgen.Value("const int64_t", self.row), "polyc_next_row"),
            *(fetch.code() for fetch in self.passes)])
        return [cgen.If(
            f"{self.fetching} && {self.next_row} < {self.row_end}",
            cgen.Block([
                cgen.Initializer(cgen.Value("const int64_t", "polyc_next_row"),
                                 self.next_row),
                cgen.Initializer(cgen.Value("const int64_t", "polyc_last_start"), last_start),
                cgen.For(f"int64_t polyc_line = {chunk_start}", f"polyc_line < {chunk_end}",
                         f"polyc_line += {self.line_elements}", line)]))]


def chunked_loop(plan: RowPrefetch, iterator: str, start: str, end: str,
                 body, plain) -> cgen.Generable:
    """The SIMD loop ``for (iterator = start; iterator < end; ++iterator) body`` in chunks
    of :data:`~polyc.machine.rules.PREFETCH_CHUNK_LINES` lines, each after the
    prefetches for its values, where the call prefetches; else ``plain`` (that loop as
    usual: the chunks alone cost time)."""
    chunk = PREFETCH_CHUNK_LINES * plan.line_elements
    chunked = cgen.For(
        f"int64_t polyc_chunk = {start}, polyc_end", f"polyc_chunk < {end}",
        "polyc_chunk = polyc_end",
        cgen.Block([
            cgen.Statement(f"polyc_end = polyc_min({end}, polyc_chunk + {chunk})"),
            *plan.code("polyc_chunk", "polyc_end", start),
            cgen.Pragma("omp simd"),
            cgen.For(f"int64_t {iterator} = polyc_chunk", f"{iterator} < polyc_end",
                     f"{iterator} += 1", body)]))
    return cgen.If(plan.fetching, cgen.Block([chunked]), braced(plain))


def row_prefetch(emitter: LoopNestEmitter, row: isl.AstNode, iterator: str,
                 marks: frozenset) -> RowPrefetch | None:
    """How the last pass of a row loop (``row``, a loop around a sequence of passes
    ending in a SIMD loop) fetches what its ``marks``' decision names
    (:class:`~polyc.scheduling.marks.PrefetchNextRow`, :mod:`polyc.scheduling.row_prefetch`):
    each tensor where the first pass that reads it does; ``None`` without a decision,
    or where the AST does not have the decision's shape."""
    decision = decision_of(marks, PrefetchNextRow)
    if decision is None:
        return None
    body, row_end = row.for_get_body(), exclusive_upper_bound(row, iterator)
    if body.get_type() != isl.ast_node_type.block or row_end is None:
        return None
    children = body.block_get_children()
    passes = [children.get_at(k) for k in range(len(children))]
    last, marks = passes[-1], set()
    while last.get_type() == isl.ast_node_type.mark:
        marks.add(node_mark(last))
        last = last.mark_get_node()
    if SIMD_MARK not in marks or last.get_type() != isl.ast_node_type.for_ or \
            single(last.for_get_body()).get_type() != isl.ast_node_type.user:
        return None
    fetches, fetched, widths, stored = [], set(), [], set()
    for loop in (loop for node in passes[:-1] for loop in statement_loops(node)):
        for call in statement_calls(loop.for_get_body()):
            fetch = _pass_fetch(emitter, loop, call, iterator, decision.tensors, fetched)
            if fetch is not None:
                fetch, tensors = fetch
                fetches.append(fetch)
                fetched |= set(tensors)
                widths += [emitter.program.op.tensor(t).type.bits // 8 for t in tensors]
    stores = []
    for call in statement_calls(last.for_get_body()) if decision.stores else ():
        fetch = _pass_fetch(emitter, last, call, iterator, decision.stores, set(),
                            for_writing=True)
        if fetch is not None:
            stores.append(fetch[0])
            stored |= set(fetch[1])
            widths += [emitter.program.op.tensor(t).type.bits // 8 for t in fetch[1]]
    if not fetches and not stores:
        return None
    streamed = decision_of(marks, StreamedStores)
    cached = None
    if stores and streamed is not None and emitter.stream_threshold is not None:
        size = stored_bytes(emitter, emitter.program.op.tensor(streamed.tensor))
        cached = f"{size} < {emitter.stream_threshold}"
    fetched_bytes = " + ".join(stored_bytes(emitter, emitter.program.op.tensor(name))
                               for name in sorted(fetched | stored))
    return RowPrefetch(iterator, f"({iterator} + 1)", emitter.expr(row_end), tuple(fetches),
                       line_elements(emitter.machine, min(widths)), tuple(stores), cached,
                       f"({fetched_bytes}) >= {decision.from_bytes}")


def stored_bytes(emitter: LoopNestEmitter, tensor: ir.Tensor) -> str:
    """C of the bytes ``tensor`` holds (what decides whether its stores stream)."""
    return f"(int64_t)sizeof({tensor.type.c_type}) * {emitter.exprs.element_count(tensor.shape)}"


def _pass_fetch(emitter: LoopNestEmitter, loop: isl.AstNode, call: isl.AstExpr, row: str,
                tensors: tuple[str, ...], fetched: set[str], for_writing: bool = False
                ) -> tuple[PassFetch, list[str]] | None:
    """What the last pass fetches of the reads of one statement ``call`` in a pass
    ``loop`` (``for_writing``: of its store, in the last pass itself): the decided
    ``tensors`` not yet ``fetched`` that it reads (stores) at unit stride along the loop
    and that vary with the ``row``; with the tensors; ``None`` for none."""
    pass_iterator = emitter.expr(loop.for_get_iterator())
    end = exclusive_upper_bound(loop, pass_iterator)
    stmt, bound = emitter.called(call)
    known = {row, pass_iterator, *emitter.names}
    if end is None or stmt.is_init or not all(identifiers(e) <= known for e in (
            loop.for_get_init(), end, *bound.values())):
        return None  # the pass's loop is not the row's child
    addresses, taken = {}, set()
    statement = stmt.statement
    accessed = ([ir.Read(emitter.program.op.tensor(statement.tensor).type, statement.tensor,
                         tuple(ir.Index(INT64, i) for i in statement.indices))]
                if for_writing else ir.walk(statement.rhs))
    for read in accessed:
        if not isinstance(read, ir.Read) or not read.indices:
            continue
        *outer, inner = read.indices
        if (read.tensor not in tensors or read.tensor in fetched
                or not isinstance(inner, ir.Index)
                or not index_names(read.indices) <= bound.keys()
                or any(isinstance(e, ir.Read) for i in outer for e in ir.walk(i))
                or coefficient(bound[inner.name], pass_iterator) != 1
                or any(mentions(bound[n], pass_iterator) for n in index_names(outer))
                or not any(mentions(bound[n], row) for n in index_names(read.indices))):
            continue
        addresses[emitter.exprs.access(read.tensor, read.indices)] = None
        taken.add(read.tensor)
    if not addresses:
        return None
    bindings = tuple((c_name(index), emitter.expr(arg)) for index, arg in bound.items())
    return PassFetch(pass_iterator, emitter.expr(loop.for_get_init()), emitter.expr(end),
                     bindings, tuple(addresses), for_writing), sorted(taken)
