"""The C of a thread partition (:mod:`polyc.scheduling.threads`): each thread's box.

For a nest sharing out rows ``i`` (unit 8, the register block's rows) and
columns ``j`` (unit 32) among the threads of the parallel region::

    const int64_t polyc_first0 = 0;                       (the loops' first values)
    const int64_t polyc_first1 = 0;
    const int64_t polyc_extents[2] = {polyc_max(0, (NI - 1) - (polyc_first0) + 1), ...};
    const int64_t polyc_sizes[2] = {8, 32};
    const int64_t polyc_units[2] = {(polyc_extents[0] + 7) / 8, ...};   (blocks)
    int64_t polyc_parts[2];
    polyc_thread_grid(omp_get_num_threads(), 2, polyc_extents, polyc_sizes, polyc_parts);
    int64_t polyc_place = omp_get_thread_num();
    const int64_t polyc_t1 = polyc_place % polyc_parts[1];   (the grid's coordinates)
    polyc_place /= polyc_parts[1];
    const int64_t polyc_t0 = polyc_place % polyc_parts[0];
    polyc_place /= polyc_parts[0];
    const int64_t polyc_lo0_0 =
        polyc_first0 + 8 * (polyc_units[0] * polyc_t0 / polyc_parts[0]);
    const int64_t polyc_hi0_0 =
        polyc_first0 + 8 * (polyc_units[0] * (polyc_t0 + 1) / polyc_parts[0]);
    ...

Part ``t`` of ``p`` along a loop holds units ``[u t / p, u (t + 1) / p)``: the parts
of all ``t`` cover ``[0, u)`` once, so every value of the loop is in one box. The
grid's sizes multiply to the thread count (:data:`GRID_HELPER`); the region runs on
one thread (its ``if`` clause) when the work is small, and that thread's box is
everything.
"""
from __future__ import annotations

import cgen
import islpy as isl

from polyc.codegen.c_expr import isl_expr_to_c
from polyc.scheduling.threads import Partition

GRID_HELPER = r"""
/* The threads as a grid over `count` loops: parts[k] along loop k, the parts
   multiplying to `threads`. Loop k has extents[k] values in blocks of sizes[k].
   Each prime factor of `threads`, largest first, goes to the outermost loop whose
   largest part would hold at most 5% more values than an even share (OpenMP's
   static schedule of collapsed loops also cuts the outermost first: each thread
   keeps its own images of a batch), else to the loop where it would hold least. */
static inline void polyc_thread_grid(int64_t threads, int count, const int64_t *extents,
                                     const int64_t *sizes, int64_t *parts) {
  int64_t factors[64];
  int n = 0;
  for (int k = 0; k < count; k++) parts[k] = 1;
  for (int64_t p = 2; p * p <= threads; p++)
    while (threads % p == 0) { factors[n++] = p; threads /= p; }
  if (threads > 1) factors[n++] = threads;
  for (int f = n - 1; f >= 0; f--) {
    int best = 0;
    double best_excess = 0.0;
    for (int k = 0; k < count; k++) {
      const int64_t q = parts[k] * factors[f];
      const int64_t blocks = (extents[k] + sizes[k] - 1) / sizes[k];
      const int64_t largest = ((blocks + q - 1) / q) * sizes[k];
      const double excess = extents[k] > 0 ? (double)largest * q / extents[k] : 1e300;
      if (excess <= 1.05) { best = k; break; }
      if (k == 0 || excess < best_excess) { best = k; best_excess = excess; }
    }
    parts[best] *= factors[f];
  }
}
"""


def box_code(partition: Partition, context: isl.Set, names: dict[str, str]) -> list:
    """The declarations of this thread's box of ``partition`` (module docstring), at the
    start of the parallel region; ``context`` holds the sizes' constraints, ``names``
    maps isl identifiers to C."""
    build = isl.AstBuild.from_context(context)
    count = len(partition.loops)
    firsts, extents, sizes, units = [], [], [], []
    for k, loop in enumerate(partition.loops):
        first = isl_expr_to_c(build.expr_from_pw_aff(loop.first), names)
        last = isl_expr_to_c(build.expr_from_pw_aff(loop.last), names)
        firsts.append(cgen.Initializer(cgen.Value("const int64_t", f"polyc_first{k}"), first))
        extents.append(f"polyc_max(0, ({last}) - (polyc_first{k}) + 1)")
        sizes.append(str(loop.unit))
        units.append(f"(polyc_extents[{k}] + {loop.unit - 1}) / {loop.unit}")
    lines = firsts + [
        cgen.Statement(f"const int64_t polyc_extents[{count}] = {{{', '.join(extents)}}}"),
        cgen.Statement(f"const int64_t polyc_sizes[{count}] = {{{', '.join(sizes)}}}"),
        cgen.Statement(f"const int64_t polyc_units[{count}] = {{{', '.join(units)}}}"),
        cgen.Statement(f"int64_t polyc_parts[{count}]"),
        cgen.Statement(f"polyc_thread_grid(omp_get_num_threads(), {count}, polyc_extents, "
                       f"polyc_sizes, polyc_parts)"),
        cgen.Statement("int64_t polyc_place = omp_get_thread_num()")]
    for k in reversed(range(count)):
        lines += [cgen.Initializer(cgen.Value("const int64_t", f"polyc_t{k}"),
                                   f"polyc_place % polyc_parts[{k}]"),
                  cgen.Statement(f"polyc_place /= polyc_parts[{k}]")]
    for k, loop in enumerate(partition.loops):
        for name, part in ((partition.low(k), f"polyc_t{k}"),
                           (partition.high(k), f"(polyc_t{k} + 1)")):
            lines.append(cgen.Initializer(
                cgen.Value("const int64_t", name),
                f"polyc_first{k} + {loop.unit} * (polyc_units[{k}] * {part} / "
                f"polyc_parts[{k}])"))
    return lines
