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
of all ``t`` cover ``[0, u)`` once, so every value of the loop is in one box. Along a
loop of uneven work (:attr:`~polyc.scheduling.threads.SharedLoop.work`) the region
first sums each block's work into ``polyc_work<k>`` (at most :data:`WORK_UNITS`
blocks: more values make wider blocks), and part ``t`` begins at the block boundary
nearest to ``t / p`` of the total (``polyc_cut``): the parts still cover the blocks
once, whatever the work. The
grid's sizes multiply to the thread count (:data:`GRID_HELPER`); the region runs on
one thread (its ``if`` clause) when the work is small, and that thread's box is
everything.
"""
from __future__ import annotations

import cgen
import islpy as isl

from polyc.codegen.c_expr import isl_expr_to_c
from polyc.scheduling.threads import VALUE, Partition, SharedLoop

GRID_HELPER = r"""
/* Where part `part` of `parts` of a loop of uneven work begins: the unit boundary
   nearest to an even share of the work, work[u] being the work of units [0, u).
   Boundaries never decrease with `part`: the parts cover the units once. */
static inline int64_t polyc_cut(const double *work, int64_t units, int64_t part,
                                int64_t parts) {
  if (part <= 0) return 0;
  if (part >= parts) return units;
  const double target = work[units] * (double)part / (double)parts;
  int64_t low = 0, high = units;
  while (low < high) {
    const int64_t middle = low + (high - low) / 2;
    if (work[middle] < target) low = middle + 1; else high = middle;
  }
  if (low > 0 && target - work[low - 1] < work[low] - target) low -= 1;
  return low;
}

/* The threads as a grid over `count` loops: parts[k] along loop k, the parts
   multiplying to `threads`. Loop k has extents[k] values in blocks of sizes[k];
   where `work` and work[k] are not NULL, work[k] is the cumulative work of its
   blocks (polyc_cut). Each prime factor of `threads`, largest first, goes to the outermost
   loop whose largest part would hold at most 5% more than an even share (of its
   values, or of its work), else to the loop where it would hold least (OpenMP's
   static schedule of collapsed loops also cuts the outermost first: each thread
   keeps its own images of a batch). */
static inline void polyc_thread_grid(int64_t threads, int count, const int64_t *extents,
                                     const int64_t *sizes, const double *const *work,
                                     int64_t *parts) {
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
      double excess = 1e300;
      if (work && work[k]) {
        double largest = 0.0;
        int64_t start = 0;
        for (int64_t t = 1; t <= q; t++) {
          const int64_t end = polyc_cut(work[k], blocks, t, q);
          if (work[k][end] - work[k][start] > largest) largest = work[k][end] - work[k][start];
          start = end;
        }
        if (work[k][blocks] > 0.0) excess = largest * q / work[k][blocks];
      } else if (extents[k] > 0) {
        excess = (double)(((blocks + q - 1) / q) * sizes[k]) * q / extents[k];
      }
      if (excess <= 1.05) { best = k; break; }
      if (k == 0 || excess < best_excess) { best = k; best_excess = excess; }
    }
    parts[best] *= factors[f];
  }
}
"""

# The blocks a loop of uneven work is cut in at most: larger extents are cut in
# groups of blocks (its work is summed per block, at the start of each region).
WORK_UNITS = 1024


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
        if loop.work:  # at most WORK_UNITS blocks: whole groups of register blocks
            group = loop.unit * WORK_UNITS
            sizes.append(f"{loop.unit} * polyc_max(1, (polyc_extents[{k}] + {group - 1}) / "
                         f"{group})")
            units.append(f"(polyc_extents[{k}] + polyc_sizes[{k}] - 1) / polyc_sizes[{k}]")
        else:
            sizes.append(str(loop.unit))
            units.append(f"(polyc_extents[{k}] + {loop.unit - 1}) / {loop.unit}")
    lines = firsts + [
        cgen.Statement(f"const int64_t polyc_extents[{count}] = {{{', '.join(extents)}}}"),
        cgen.Statement(f"const int64_t polyc_sizes[{count}] = {{{', '.join(sizes)}}}"),
        cgen.Statement(f"const int64_t polyc_units[{count}] = {{{', '.join(units)}}}")]
    weighted = [k for k, loop in enumerate(partition.loops) if loop.work]
    for k in weighted:
        lines += _work_code(k, partition.loops[k], build, names)
    work = "NULL"
    if weighted:
        lines.append(cgen.Statement(
            f"const double *const polyc_loop_work[{count}] = {{" + ", ".join(
                f"polyc_work{k}" if k in weighted else "NULL" for k in range(count)) + "}"))
        work = "polyc_loop_work"
    lines += [
        cgen.Statement(f"int64_t polyc_parts[{count}]"),
        cgen.Statement(f"polyc_thread_grid(omp_get_num_threads(), {count}, polyc_extents, "
                       f"polyc_sizes, {work}, polyc_parts)"),
        cgen.Statement("int64_t polyc_place = omp_get_thread_num()")]
    for k in reversed(range(count)):
        lines += [cgen.Initializer(cgen.Value("const int64_t", f"polyc_t{k}"),
                                   f"polyc_place % polyc_parts[{k}]"),
                  cgen.Statement(f"polyc_place /= polyc_parts[{k}]")]
    for k, loop in enumerate(partition.loops):
        for name, part in ((partition.low(k), f"polyc_t{k}"),
                           (partition.high(k), f"(polyc_t{k} + 1)")):
            if loop.work:
                cut = (f"polyc_sizes[{k}] * polyc_cut(polyc_work{k}, polyc_units[{k}], "
                       f"{part}, polyc_parts[{k}])")
            else:
                cut = f"{loop.unit} * (polyc_units[{k}] * {part} / polyc_parts[{k}])"
            lines.append(cgen.Initializer(cgen.Value("const int64_t", name),
                                          f"polyc_first{k} + {cut}"))
    return lines


def _work_code(k: int, loop: SharedLoop, build: isl.AstBuild, names: dict[str, str]) -> list:
    """``polyc_work<k>``: the cumulative work of loop ``k``'s blocks. A block's work is
    the number of its values times the mean of the work at its first and last value
    (exact where the work is linear in the value: a triangle's rows)."""
    value = names.get(VALUE, VALUE)
    products = [" * ".join(f"(double)({isl_expr_to_c(build.expr_from_pw_aff(e), names)})"
                           for e in extents) or "1.0"
                for _, extents in loop.work]
    array = f"polyc_work{k}"
    at_ends = cgen.Block([
        cgen.Initializer(cgen.Value("const int64_t", value),
                         "polyc_from + polyc_end * (polyc_count - 1)"),
        cgen.Statement("polyc_ends += " + " + ".join(products))])
    return [
        cgen.Statement(f"double {array}[{WORK_UNITS + 1}]"),
        cgen.Statement(f"{array}[0] = 0.0"),
        cgen.For("int64_t polyc_u = 0", f"polyc_u < polyc_units[{k}]", "polyc_u += 1",
                 cgen.Block([
                     cgen.Initializer(cgen.Value("const int64_t", "polyc_from"),
                                      f"polyc_first{k} + polyc_sizes[{k}] * polyc_u"),
                     cgen.Initializer(cgen.Value("const int64_t", "polyc_count"),
                                      f"polyc_min(polyc_sizes[{k}], polyc_first{k} + "
                                      f"polyc_extents[{k}] - polyc_from)"),
                     cgen.Initializer(cgen.Value("double", "polyc_ends"), "0.0"),
                     cgen.For("int64_t polyc_end = 0", "polyc_end < 2", "polyc_end += 1",
                              at_ends),
                     cgen.Statement(f"{array}[polyc_u + 1] = {array}[polyc_u] + "
                                    f"0.5 * polyc_ends * (double)polyc_count")]))]
