"""Streaming (non-temporal) stores for large outputs written once.

A store through the cache first reads the line it writes (a read for
ownership), so writing an output costs two transfers per byte, and a large one
evicts the inputs on its way. x86 has stores that bypass the cache, but gcc's
vectoriser never emits them, and OpenMP's ``nontemporal`` clause is ignored.
polyc therefore stages: the SIMD loop computes a chunk of consecutive values
into a small aligned buffer, and :func:`polyc_stream` copies it out with
streaming stores, whole 64-byte lines only (a line written both ways would be
read first after all). Where a row starts inside a line (numpy's large arrays
start 16 bytes into one), its first chunk is the rest of that line alone, copied
with plain stores, and every later chunk starts on a line boundary. A chunk staged
whole from such a start would be copied out from an offset into the stage, each
vector load spanning two of the vector stores that had just written it, which the
CPU cannot forward from its store buffer: with 64-byte vectors (Zen 5) a row
normalisation into a 16-byte-offset output ran 1.3x slower than into an aligned one.

Which loops stream is a scheduling decision (:mod:`polyc.scheduling.stream_stores`,
a ``stream <tensor>`` mark): an output written by one ``=`` statement and read by
none, in a SIMD loop that walks its last (contiguous) dimension with step 1.
Whether to stream is decided per call: only when the output is at least the
machine's streaming threshold (a quarter of the last-level cache), since a smaller
one may still be in cache when its consumer reads it.

Streaming stores are weakly ordered: other threads may see them late until the
writing thread runs a store fence. A thread's own later loads see them in order,
and no statement of the kernel reads a streamed output, so the fence runs once,
where the code that streams ends: at the end of a parallel region's function, each
thread's own stores before the region's closing barrier, and after the entry
function's code for what streams outside regions. A fence after every streamed
row cost a softmax 6% (Zen 5 VM; benchmarks/README.md, "Design measurements").

Streaming pays for the operators that write a large output once (elementwise,
layer norm, softmax). Stores written with intrinsics straight from registers were
faster still, but need the loop body in vector code (measurements:
benchmarks/README.md, "Design measurements").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.c_names import braced, c_name
from polyc.codegen.isl_ast import coefficient, exclusive_upper_bound, mentions, single
from polyc.codegen.prefetch import RowPrefetch, stored_bytes
from polyc.lang import ir
from polyc.lang import types as ty
from polyc.scheduling.marks import StreamedStores

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter

STAGE_BYTES = 512  # one chunk: eight cache lines
STREAM_CALL = "polyc_stream("
FENCE = "polyc_stream_fence()"

# Streaming stores through the compilers' builtins, not <immintrin.h>: that header
# alone cost gcc about as long as a whole small kernel (measurements:
# benchmarks/README.md, "Design measurements").
HELPERS = r"""
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__)
typedef long long polyc_line_part __attribute__((vector_size(64)));
#elif defined(__AVX__)
typedef long long polyc_line_part __attribute__((vector_size(32)));
#else
typedef long long polyc_line_part __attribute__((vector_size(16)));
#endif
/* One vector of `src` stored to `dst` (aligned to its size) past the cache. */
static inline void polyc_stream_part(char *dst, const char *src) {
  polyc_line_part v;
  memcpy(&v, src, sizeof v);
#if defined(__clang__)
  __builtin_nontemporal_store(v, (polyc_line_part *)dst);
#elif defined(__AVX512F__)
  __builtin_ia32_movntdq512((polyc_line_part *)dst, v);
#elif defined(__AVX__)
  __builtin_ia32_movntdq256((polyc_line_part *)dst, v);
#else
  __builtin_ia32_movntdq((polyc_line_part *)dst, v);
#endif
}
#define POLYC_STREAMING 1
#endif
/* Copies `bytes` from `src` to `dst` with streaming stores for the whole 64-byte
   lines of `dst`, plain stores for the partial lines at either end. */
static inline void polyc_stream(void *restrict dst, const void *restrict src, int64_t bytes) {
  char *restrict d = (char *)dst;
  const char *restrict s = (const char *)src;
  int64_t k = 0;
  for (; k < bytes && ((uintptr_t)(d + k) & 63); k++) d[k] = s[k];
  for (; k + 64 <= bytes; k += 64) {
#if defined(POLYC_STREAMING)
    for (int64_t q = 0; q < 64; q += (int64_t)sizeof(polyc_line_part))
      polyc_stream_part(d + k + q, s + k + q);
#else
    memcpy(d + k, s + k, 64);
#endif
  }
  for (; k < bytes; k++) d[k] = s[k];
}
/* Orders the streaming stores before what follows (other threads' reads). */
static inline void polyc_stream_fence(void) {
#if defined(POLYC_STREAMING)
  __builtin_ia32_sfence();
#endif
}
"""


def staged_loop(iterator: str, lo: str, hi: str, element: ty.ScalarType, bindings: list,
                target: str, value: str, size_bytes: str, threshold: int, plain,
                prefetch: RowPrefetch | None = None):
    """The C of a SIMD loop ``for (iterator = lo; iterator < hi; ++iterator) { bindings;
    target = value; }`` that streams its stores when ``size_bytes >= threshold``, else
    runs ``plain`` (the loop as usual). ``target`` is contiguous along ``iterator``;
    each chunk starts with the prefetches of ``prefetch`` (:mod:`polyc.codegen.prefetch`)
    for its values."""
    ctype = element.c_type
    chunk = STAGE_BYTES // max(1, element.bits // 8)
    at_chunk = cgen.Block([cgen.Initializer(cgen.Value("const int64_t", iterator),
                                            "polyc_chunk"),
                           *bindings,
                           cgen.Statement(f"polyc_to = &{target}")])
    staged = cgen.For(
        f"int64_t polyc_chunk = {lo}, polyc_end", f"polyc_chunk < {hi}",
        "polyc_chunk = polyc_end",
        cgen.Block([
            cgen.Statement(f"{ctype} *polyc_to"),
            at_chunk,
            # a chunk that starts inside a line is that line's rest alone, so the
            # others start on a line boundary (see the module's docstring)
            cgen.Initializer(cgen.Value("const int64_t", "polyc_head"),
                             "(int64_t)((uintptr_t)polyc_to & 63)"),
            cgen.Statement(
                f"polyc_end = polyc_min({hi}, polyc_chunk + (polyc_head ? polyc_max(1, "
                f"(64 - polyc_head) / (int64_t)sizeof({ctype})) : {chunk}))"),
            *(prefetch.code("polyc_chunk", "polyc_end", lo) if prefetch is not None else []),
            cgen.Statement(f"_Alignas(64) {ctype} polyc_stage[{chunk}]"),
            cgen.Pragma("omp simd"),
            cgen.For(f"int64_t {iterator} = polyc_chunk", f"{iterator} < polyc_end",
                     f"{iterator} += 1",
                     cgen.Block([*bindings,
                                 cgen.Statement(f"polyc_stage[{iterator} - polyc_chunk] = "
                                                f"{value}")])),
            cgen.Statement(f"polyc_stream(polyc_to, polyc_stage, "
                           f"(polyc_end - polyc_chunk) * (int64_t)sizeof({ctype}))"),
        ]))
    return cgen.If(f"{size_bytes} >= {threshold}", cgen.Block([staged]), braced(plain))


def fenced(code: list, text: str) -> list:
    """``code`` (a list of C whose text is ``text``) followed by the fence that makes its
    streaming stores visible to other threads, where it streams (module docstring)."""
    return code + [cgen.Statement(FENCE)] if STREAM_CALL in text else code


def streamed_loop(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str, plain,
                  decision: StreamedStores, prefetch: RowPrefetch | None = None):
    """The SIMD loop ``node`` (C: ``plain``) with streaming stores for large outputs, as
    ``decision`` says, each chunk after the prefetches of ``prefetch``; ``None`` where
    the AST does not have the shape the decision saw (a body of one statement writing
    along ``iterator`` with step 1) or nothing streams (``stream_threshold``)."""
    body = single(node.for_get_body())
    if emitter.stream_threshold is None or body.get_type() != isl.ast_node_type.user:
        return None
    stmt, bound = emitter.called(body.user_get_expr())
    statement = stmt.statement
    if stmt.is_init or statement.tensor != decision.tensor:
        return None
    *outer, last = statement.indices
    upper = exclusive_upper_bound(node, iterator)
    if (upper is None or coefficient(bound[last], iterator) != 1
            or any(mentions(bound[i], iterator) for i in outer)):
        return None
    tensor = emitter.program.op.tensor(statement.tensor)
    lhs = tuple(ir.Index(ty.INT64, i) for i in statement.indices)
    bindings = [cgen.Initializer(cgen.Value("const int64_t", c_name(index)),
                                 emitter.expr(arg)) for index, arg in bound.items()]
    size = stored_bytes(emitter, tensor)
    emitter.streamed.add(tensor.name)
    return staged_loop(
        iterator, emitter.expr(node.for_get_init()), emitter.expr(upper), tensor.type,
        bindings, emitter.exprs.access(tensor.name, lhs),
        emitter.exprs.expr(statement.rhs, tensor.type), size, emitter.stream_threshold, plain,
        prefetch)
