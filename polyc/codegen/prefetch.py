"""Prefetch the next row's inputs while the last pass over a row runs.

A row-wise fused nest (softmax, layer norm; :mod:`polyc.fusion.vector_passes`)
walks each row several times: its first pass reads the row from memory, the
others from the L1 cache. The hardware prefetcher follows a stream only while
it is being read, so every row's first pass waits for memory while the passes
after it leave the memory bus idle. polyc issues software prefetches of the
next row's reads of the first pass, spread over the chunks of the last pass::

    for n (parallel):                          for n (parallel):
      for d: m = max(m, X(n, d))                 for d: m = max(m, X(n, d))   (in cache)
      for d: e(d) = exp(X(n, d) - m)             for d: e(d) = exp(X(n, d) - m)
      for d: Y(n, d) = e(d) / s           →      for chunks of d:
                                                   prefetch X(n + 1, d): the chunk's lines
                                                   for d in the chunk: Y(n, d) = e(d) / s

The last pass's values map one to one onto the first pass's, from their first
values on (the passes of a fused row walk the same range); past the end of the
first pass's range nothing is fetched, and on the last row of the loop nothing
at all. Only inputs read at unit stride along the first pass's loop, with
indices that read no tensor (a prefetch computes its address and never reads
memory), and that vary with the row are fetched.

Measured on 2 threads (softmax 4096 × 1024, C written by hand from polyc's,
41 interleaved rounds): 2.56 → 2.15 ms with the prefetches spread over the last
pass; 2.37 ms issuing the whole row before the last pass; 2.30 ms fetching two
rows ahead.
"""
from __future__ import annotations

from dataclasses import dataclass

import cgen

from polyc.machine.rules import PREFETCH_CHUNK_LINES


@dataclass(frozen=True)
class RowPrefetch:
    """What the last pass of a row fetches for the next row.

    ``row``: the row loop's iterator (C); ``next_row`` / ``row_end``: C of its next
    value and of its exclusive upper bound; ``first``: the first pass's iterator,
    ``first_start`` / ``first_end`` its first value and exclusive upper bound (C, in
    terms of the row); ``bindings``: ``(index, C)`` of the first pass's statement
    indices; ``addresses``: C lvalues of its reads to fetch; ``line_elements``: the
    elements of the narrowest of them in a cache line."""

    row: str
    next_row: str
    row_end: str
    first: str
    first_start: str
    first_end: str
    bindings: tuple[tuple[str, str], ...]
    addresses: tuple[str, ...]
    line_elements: int

    def code(self, chunk_start: str, chunk_end: str, last_start: str) -> list:
        """The prefetches for the values ``[chunk_start, chunk_end)`` of the last pass,
        whose first value is ``last_start`` (C, evaluated in the current row)."""
        fetch = cgen.Block(
            [cgen.Initializer(cgen.Value("const int64_t", name), value)
             for name, value in self.bindings]
            + [cgen.Statement(f"__builtin_prefetch(&{address}, 0, 3)")
               for address in self.addresses])
        line = cgen.Block([
            # the next row's values: the row's iterator, shadowed, is the next row
            cgen.Initializer(cgen.Value("const int64_t", self.row), "polyc_next_row"),
            cgen.Initializer(cgen.Value("const int64_t", self.first),
                             f"({self.first_start}) + (polyc_line - polyc_last_start)"),
            cgen.If(f"{self.first} < {self.first_end}", fetch)])
        return [cgen.If(
            f"{self.next_row} < {self.row_end}",
            cgen.Block([
                cgen.Initializer(cgen.Value("const int64_t", "polyc_next_row"),
                                 self.next_row),
                cgen.Initializer(cgen.Value("const int64_t", "polyc_last_start"), last_start),
                cgen.For(f"int64_t polyc_line = {chunk_start}", f"polyc_line < {chunk_end}",
                         f"polyc_line += {self.line_elements}", line)]))]


def chunked_loop(plan: RowPrefetch, iterator: str, start: str, end: str,
                 body) -> cgen.Generable:
    """The SIMD loop ``for (iterator = start; iterator < end; ++iterator) body`` in chunks
    of :data:`~polyc.machine.rules.PREFETCH_CHUNK_LINES` lines, each after the
    prefetches for its values."""
    chunk = PREFETCH_CHUNK_LINES * plan.line_elements
    return cgen.For(
        f"int64_t polyc_chunk = {start}, polyc_end", f"polyc_chunk < {end}",
        "polyc_chunk = polyc_end",
        cgen.Block([
            cgen.Statement(f"polyc_end = polyc_min({end}, polyc_chunk + {chunk})"),
            *plan.code("polyc_chunk", "polyc_end", start),
            cgen.Pragma("omp simd"),
            cgen.For(f"int64_t {iterator} = polyc_chunk", f"{iterator} < polyc_end",
                     f"{iterator} += 1", body)]))
