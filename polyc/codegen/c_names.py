"""C spellings of user names, the helper functions every kernel includes, and the
kernel's allocation idiom (``polyc_alloc``, line-aligned, of at least one element; failure
sets the status).

User identifiers (tensors, sizes, indices) keep their names in C unless they
collide with a C keyword, a libc/math name, polyc's own ``polyc_`` helpers or
isl's loop iterators ``c0, c1, ...``; then they get a trailing underscore.

The helpers give every operation defined behaviour (no C undefined
behaviour on any input): integer division and remainder by zero give 0 (as
numpy does), ``INT_MIN / -1`` wraps (``-fwrapv``), float-to-integer
conversions saturate and map NaN to 0, and ``max``/``min`` reductions
propagate NaN as numpy's ``max``/``min`` do.
"""
from __future__ import annotations

import re

import cgen

from polyc.lang import types as ty

_C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Bool _Complex _Imaginary bool true false NULL main
exp exp2 expm1 log log1p log2 log10 sqrt cbrt pow tanh sinh cosh asinh acosh atanh sin cos
tan asin acos atan atan2 erf erfc fabs floor ceil round trunc rint nearbyint lgamma tgamma
fmax fmin fmod hypot copysign fdim remainder nextafter fma abs malloc aligned_alloc free calloc
memset memcpy size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t isnan
INFINITY NAN status
""".split())

_ISL_ITERATOR = re.compile(r"^c\d+$")


def entry_name(op) -> str:
    """The kernel's entry point (:mod:`polyc.codegen.translation_unit`)."""
    return f"polyc_{op.name}"


def entry_parameters(op) -> tuple[tuple[str, str], ...]:
    """``(C type, name)`` of the entry point's parameters: the sizes, the inputs (tensors
    as ``const T *restrict``, 0-rank inputs by value) and the outputs."""
    params = [("int64_t", c_name(s)) for s in op.sizes]
    for tensor in op.inputs:
        if tensor.rank == 0:  # by value; float16 travels as float (no ctypes half type)
            ctype = "float" if tensor.type == ty.FLOAT16 else tensor.type.c_type
            params.append((ctype, c_name(tensor.name)))
        else:
            params.append((f"const {tensor.type.c_type} *restrict", c_name(tensor.name)))
    for tensor in op.outputs:
        params.append((f"{tensor.type.c_type} *restrict", c_name(tensor.name)))
    return tuple(params)


def launch_name(entry: str) -> str:
    """The uniform entry point beside the kernel's entry point ``entry``
    (:mod:`polyc.codegen.translation_unit`)."""
    return f"{entry}_launch"


def c_name(name: str) -> str:
    """The C identifier for user name ``name``."""
    if name in _C_RESERVED or name.startswith("polyc_") or _ISL_ITERATOR.match(name) \
            or name.startswith("__"):
        return name + "_"
    return name


def after_leading_comment(c_source: str) -> int:
    """Where a kernel's text starts after its leading comment (the operator and options
    for a reader, :mod:`polyc.codegen.translation_unit`) and the blank lines after it."""
    start = 0
    if c_source.startswith("/*"):
        end = c_source.find("*/")
        start = end + 2 if end >= 0 else len(c_source)
    while c_source.startswith("\n", start):
        start += 1
    return start


PREAMBLE = r"""
#define _GNU_SOURCE  /* sched_getcpu, CPU_SET: polyc/codegen/thread_placement.py */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <omp.h>

/* Floor division without a branch: a strided output's extent, (H - KH) / 2 + 1, is
   computed in its innermost loops, and gcc unswitches loop nests on a branch here
   (benchmarks/README.md, "Design measurements"). */
static inline int64_t polyc_floordiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) & ((a < 0) != (b < 0)));
}
static inline int64_t polyc_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t polyc_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t polyc_extent(int64_t a) { return a > 0 ? a : 0; }
/* Temporaries start on a cache line: a 64-byte vector at malloc's 16-byte alignment
   spans two lines at every load and store. */
static inline void *polyc_alloc(size_t bytes) {
  return bytes > SIZE_MAX - 63 ? NULL : aligned_alloc(64, (bytes + 63) / 64 * 64);
}

/* A lane of an edge register block past the edge reads 0 (it is never stored). Where
   every lane lies inside an allocation (a packed panel; a temporary, allocated with
   slack past its end: ExprEmitter._lanes_loadable) the value is loaded whatever the
   lane, then selected: a load under the condition, as `keep ? v : 0` writes it, gcc
   compiled with the block's accumulators in memory (kronecker product with 8 columns:
   3.6 -> 1.4 ms). A float sum with no gathered index reads a temporary's lanes
   unselected (ExprEmitter.lanes_unselected): they are computed and dropped unseen. */
#define POLYC_LANE_KEEP(keep, value) \
  ({ __typeof__(value) polyc_kept = (value); (keep) ? polyc_kept : (__typeof__(value))0; })

/* fmax and fmin with C's rule for NaN (a NaN operand yields the other one) as a
   compare and a select, which vectorises: gcc calls libm's fmaxf, never inlined. */
static inline float polyc_fmaxf(float a, float b) { return ((a > b) | (b != b)) ? a : b; }
static inline float polyc_fminf(float a, float b) { return ((a < b) | (b != b)) ? a : b; }
static inline double polyc_fmax(double a, double b) { return ((a > b) | (b != b)) ? a : b; }
static inline double polyc_fmin(double a, double b) { return ((a < b) | (b != b)) ? a : b; }

#define POLYC_INT_OPS(T, S, MIN)                                                \
  static inline T polyc_div_##S(T a, T b) {                                     \
    return b == 0 ? (T)0 : ((MIN) != 0 && a == (T)(MIN) && b == (T)-1) ? a : a / b; \
  }                                                                             \
  static inline T polyc_mod_##S(T a, T b) {                                     \
    return (b == 0 || ((MIN) != 0 && b == (T)-1)) ? (T)0 : a % b;               \
  }
POLYC_INT_OPS(int8_t, int8, INT8_MIN)
POLYC_INT_OPS(int16_t, int16, INT16_MIN)
POLYC_INT_OPS(int32_t, int32, INT32_MIN)
POLYC_INT_OPS(int64_t, int64, INT64_MIN)
POLYC_INT_OPS(uint8_t, uint8, 0)
POLYC_INT_OPS(uint16_t, uint16, 0)
POLYC_INT_OPS(uint32_t, uint32, 0)
POLYC_INT_OPS(uint64_t, uint64, 0)

/* Float to integer: NaN -> 0, saturating at the target's limits. */
static inline int64_t polyc_f2i(double x, double lo, double hi) {
  if (x != x) return 0;
  if (x <= lo) return (int64_t)lo;
  if (x >= hi) return (int64_t)hi;
  return (int64_t)x;
}
static inline uint64_t polyc_f2u64(double x) {
  if (x != x || x <= 0.0) return 0;
  if (x >= 18446744073709551615.0) return UINT64_MAX;
  return (uint64_t)x;
}

/* max/min reductions propagate NaN, as numpy's max and min do. */
static inline float polyc_maxf(float a, float b) { return (b > a || b != b) ? b : a; }
static inline float polyc_minf(float a, float b) { return (b < a || b != b) ? b : a; }
static inline double polyc_maxd(double a, double b) { return (b > a || b != b) ? b : a; }
static inline double polyc_mind(double a, double b) { return (b < a || b != b) ? b : a; }

/* A data-dependent index outside [0, extent) sets the status and reads element 0. */
static inline int64_t polyc_gather_index(int64_t v, int64_t extent, int *status) {
  if (v < 0 || v >= extent) {
    #pragma omp atomic write
    *status = 2;
    return 0;
  }
  return v;
}
""".strip()

STATUS_OK, STATUS_NO_MEMORY, STATUS_GATHER_OUT_OF_RANGE = 0, 1, 2


def braced(node):
    """``node`` as a braced C block (a loop or branch body), unless it is one already."""
    braced_already = isinstance(node, cgen.Block) and not isinstance(node, cgen.Module)
    return node if braced_already else cgen.Block([node])


def allocation_statement(ctype: str, c_var: str, count: str, times: str = ""):
    """``T *restrict v = (T *)polyc_alloc(sizeof(T) * max(1, count) [* times])``."""
    return cgen.Statement(f"{ctype} *restrict {c_var} = ({ctype} *)polyc_alloc("
                          f"sizeof({ctype}) * (size_t)polyc_max(1, {count}){times})")


def allocation_failed(in_parallel_region: bool) -> list:
    """The statements that record an allocation failure in the kernel's status."""
    status = cgen.Statement("polyc_status = 1")
    return [cgen.Pragma("omp atomic write"), status] if in_parallel_region else [status]
