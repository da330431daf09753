/*
 * polyc 0.1.0: operator `matmul_trans_a`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256 -falign-loops=64
 *
 * def matmul_trans_a(float32(K, M) A, float32(K, N) B) -> (float32 C) {
 *   A_t10(t1, t0) = A(t0, t1) where t1 in 0:M, t0 in 0:K
 *   C(m, n) +=! A_t10(m, k) * B(k, n) where m in 0:M, n in 0:N, k in 0:K
 * }
 */
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

/* Copies a 8 x 8 block: dst[c * ld + r] = src[r * ls + c]. */
#if defined(__GNUC__) || defined(__clang__)
#ifndef POLYC_SHUFFLE
#if defined(__clang__)
#define POLYC_SHUFFLE(mask_type, a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define POLYC_SHUFFLE(mask_type, a, b, ...) __builtin_shuffle(a, b, (mask_type){__VA_ARGS__})
#endif
#endif
typedef float polyc_transpose_32_8_8_v __attribute__((vector_size(32)));
typedef int polyc_transpose_32_8_8_m __attribute__((vector_size(32)));
static inline void polyc_transpose_32_8_8(float *restrict dst, int64_t ld,
                          const float *restrict src, int64_t ls) {
  for (int bi = 0; bi < 8; bi += 8)
  for (int bj = 0; bj < 8; bj += 8) {
    polyc_transpose_32_8_8_v r0, r1, r2, r3, r4, r5, r6, r7;
    memcpy(&r0, src + (bj + 0) * ls + bi, sizeof r0);
    memcpy(&r1, src + (bj + 1) * ls + bi, sizeof r1);
    memcpy(&r2, src + (bj + 2) * ls + bi, sizeof r2);
    memcpy(&r3, src + (bj + 3) * ls + bi, sizeof r3);
    memcpy(&r4, src + (bj + 4) * ls + bi, sizeof r4);
    memcpy(&r5, src + (bj + 5) * ls + bi, sizeof r5);
    memcpy(&r6, src + (bj + 6) * ls + bi, sizeof r6);
    memcpy(&r7, src + (bj + 7) * ls + bi, sizeof r7);
    { polyc_transpose_32_8_8_v a = r0, b = r4; r0 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r4 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_8_8_v a = r1, b = r5; r1 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r5 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_8_8_v a = r2, b = r6; r2 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r6 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_8_8_v a = r3, b = r7; r3 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r7 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_8_8_v a = r0, b = r2; r0 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r2 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_8_8_v a = r1, b = r3; r1 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r3 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_8_8_v a = r4, b = r6; r4 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r6 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_8_8_v a = r5, b = r7; r5 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r7 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_8_8_v a = r0, b = r1; r0 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r1 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    { polyc_transpose_32_8_8_v a = r2, b = r3; r2 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r3 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    { polyc_transpose_32_8_8_v a = r4, b = r5; r4 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r5 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    { polyc_transpose_32_8_8_v a = r6, b = r7; r6 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r7 = POLYC_SHUFFLE(polyc_transpose_32_8_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    memcpy(dst + (bi + 0) * ld + bj, &r0, sizeof r0);
    memcpy(dst + (bi + 1) * ld + bj, &r1, sizeof r1);
    memcpy(dst + (bi + 2) * ld + bj, &r2, sizeof r2);
    memcpy(dst + (bi + 3) * ld + bj, &r3, sizeof r3);
    memcpy(dst + (bi + 4) * ld + bj, &r4, sizeof r4);
    memcpy(dst + (bi + 5) * ld + bj, &r5, sizeof r5);
    memcpy(dst + (bi + 6) * ld + bj, &r6, sizeof r6);
    memcpy(dst + (bi + 7) * ld + bj, &r7, sizeof r7);
  }
}
#else
static inline void polyc_transpose_32_8_8(float *restrict dst, int64_t ld,
                          const float *restrict src, int64_t ls) {
  for (int c = 0; c < 8; c++)
    for (int r = 0; r < 8; r++) dst[c * ld + r] = src[r * ls + c];
}
#endif

/* Copies a 16 x 16 block: dst[c * ld + r] = src[r * ls + c]. */
#if defined(__GNUC__) || defined(__clang__)
#ifndef POLYC_SHUFFLE
#if defined(__clang__)
#define POLYC_SHUFFLE(mask_type, a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define POLYC_SHUFFLE(mask_type, a, b, ...) __builtin_shuffle(a, b, (mask_type){__VA_ARGS__})
#endif
#endif
typedef float polyc_transpose_32_16_8_v __attribute__((vector_size(32)));
typedef int polyc_transpose_32_16_8_m __attribute__((vector_size(32)));
static inline void polyc_transpose_32_16_8(float *restrict dst, int64_t ld,
                          const float *restrict src, int64_t ls) {
  for (int bi = 0; bi < 16; bi += 8)
  for (int bj = 0; bj < 16; bj += 8) {
    polyc_transpose_32_16_8_v r0, r1, r2, r3, r4, r5, r6, r7;
    memcpy(&r0, src + (bj + 0) * ls + bi, sizeof r0);
    memcpy(&r1, src + (bj + 1) * ls + bi, sizeof r1);
    memcpy(&r2, src + (bj + 2) * ls + bi, sizeof r2);
    memcpy(&r3, src + (bj + 3) * ls + bi, sizeof r3);
    memcpy(&r4, src + (bj + 4) * ls + bi, sizeof r4);
    memcpy(&r5, src + (bj + 5) * ls + bi, sizeof r5);
    memcpy(&r6, src + (bj + 6) * ls + bi, sizeof r6);
    memcpy(&r7, src + (bj + 7) * ls + bi, sizeof r7);
    { polyc_transpose_32_16_8_v a = r0, b = r4; r0 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r4 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_16_8_v a = r1, b = r5; r1 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r5 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_16_8_v a = r2, b = r6; r2 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r6 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_16_8_v a = r3, b = r7; r3 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11); r7 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15); }
    { polyc_transpose_32_16_8_v a = r0, b = r2; r0 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r2 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_16_8_v a = r1, b = r3; r1 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r3 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_16_8_v a = r4, b = r6; r4 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r6 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_16_8_v a = r5, b = r7; r5 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13); r7 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15); }
    { polyc_transpose_32_16_8_v a = r0, b = r1; r0 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r1 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    { polyc_transpose_32_16_8_v a = r2, b = r3; r2 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r3 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    { polyc_transpose_32_16_8_v a = r4, b = r5; r4 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r5 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    { polyc_transpose_32_16_8_v a = r6, b = r7; r6 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14); r7 = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15); }
    memcpy(dst + (bi + 0) * ld + bj, &r0, sizeof r0);
    memcpy(dst + (bi + 1) * ld + bj, &r1, sizeof r1);
    memcpy(dst + (bi + 2) * ld + bj, &r2, sizeof r2);
    memcpy(dst + (bi + 3) * ld + bj, &r3, sizeof r3);
    memcpy(dst + (bi + 4) * ld + bj, &r4, sizeof r4);
    memcpy(dst + (bi + 5) * ld + bj, &r5, sizeof r5);
    memcpy(dst + (bi + 6) * ld + bj, &r6, sizeof r6);
    memcpy(dst + (bi + 7) * ld + bj, &r7, sizeof r7);
  }
}
#else
static inline void polyc_transpose_32_16_8(float *restrict dst, int64_t ld,
                          const float *restrict src, int64_t ls) {
  for (int c = 0; c < 16; c++)
    for (int r = 0; r < 16; r++) dst[c * ld + r] = src[r * ls + c];
}
#endif


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




#define polyc_status (*polyc_status_at)
static __attribute__((noinline)) void polyc_matmul_trans_a_region0(int * polyc_status_at, int64_t K, int64_t M, const float *restrict A, float *restrict A_t10)
{
  #pragma omp for collapse(2) schedule(static) nowait
  for (int64_t c0 = 0; c0 < M; c0 += 256)
  {
    for (int64_t c1 = 0; c1 < K; c1 += 256)
    {
      for (int64_t c2 = 0; c2 <= polyc_min(255, ((M - c0) - 1)); c2 += 16)
      {
        for (int64_t c3 = 0; c3 <= polyc_min(255, ((K - c1) - 1)); c3 += 16)
        {
          if (((polyc_min(15, (((M - c0) - c2) - 1)) + 1)) - (0) == 16 && ((polyc_min(15, (((K - c1) - c3) - 1)) + 1)) - (0) == 16)
          {
            float *polyc_dst;
            const float *polyc_src;
            int64_t polyc_ld, polyc_ls;
            {
              const int64_t c4 = 0 + 0;
              const int64_t c5 = 0 + 0;
              const int64_t t1 = ((c0 + c2) + c4);
              const int64_t t0 = ((c1 + c3) + c5);
              polyc_dst = &A_t10[(t1) * K + t0];
              polyc_src = &A[(t0) * M + t1];
            }
            {
              const int64_t c4 = 0 + 1;
              const int64_t c5 = 0 + 0;
              const int64_t t1 = ((c0 + c2) + c4);
              const int64_t t0 = ((c1 + c3) + c5);
              polyc_ld = &A_t10[(t1) * K + t0] - polyc_dst;
            }
            {
              const int64_t c4 = 0 + 0;
              const int64_t c5 = 0 + 1;
              const int64_t t1 = ((c0 + c2) + c4);
              const int64_t t0 = ((c1 + c3) + c5);
              polyc_ls = &A[(t0) * M + t1] - polyc_src;
            }
            polyc_transpose_32_16_8(polyc_dst, polyc_ld, polyc_src, polyc_ls);
          }
          else
          {
            float *polyc_dst;
            const float *polyc_src;
            int64_t polyc_ld, polyc_ls;
            {
              const int64_t c4 = 0 + 0;
              const int64_t c5 = 0 + 0;
              const int64_t t1 = ((c0 + c2) + c4);
              const int64_t t0 = ((c1 + c3) + c5);
              polyc_dst = &A_t10[(t1) * K + t0];
              polyc_src = &A[(t0) * M + t1];
            }
            {
              const int64_t c4 = 0 + 1;
              const int64_t c5 = 0 + 0;
              const int64_t t1 = ((c0 + c2) + c4);
              const int64_t t0 = ((c1 + c3) + c5);
              polyc_ld = &A_t10[(t1) * K + t0] - polyc_dst;
            }
            {
              const int64_t c4 = 0 + 0;
              const int64_t c5 = 0 + 1;
              const int64_t t1 = ((c0 + c2) + c4);
              const int64_t t0 = ((c1 + c3) + c5);
              polyc_ls = &A[(t0) * M + t1] - polyc_src;
            }
            const int64_t polyc_whole0 = (((polyc_min(15, (((M - c0) - c2) - 1)) + 1)) - (0)) / 8 * 8, polyc_whole1 = (((polyc_min(15, (((K - c1) - c3) - 1)) + 1)) - (0)) / 8 * 8;
            for (int64_t polyc_b0 = 0; polyc_b0 < polyc_whole0; polyc_b0 += 8)
              for (int64_t polyc_b1 = 0; polyc_b1 < polyc_whole1; polyc_b1 += 8)
              {
                {
                  const int64_t c4 = 0 + polyc_b0;
                  const int64_t c5 = 0 + polyc_b1;
                  const int64_t t1 = ((c0 + c2) + c4);
                  const int64_t t0 = ((c1 + c3) + c5);
                  polyc_dst = &A_t10[(t1) * K + t0];
                  polyc_src = &A[(t0) * M + t1];
                }
                polyc_transpose_32_8_8(polyc_dst, polyc_ld, polyc_src, polyc_ls);
              }
            for (int64_t c4 = 0; c4 < (polyc_min(15, (((M - c0) - c2) - 1)) + 1); c4 += 1)
              for (int64_t c5 = c4 - (0) < polyc_whole0 ? (0) + polyc_whole1 : 0; c5 < (polyc_min(15, (((K - c1) - c3) - 1)) + 1); c5 += 1)
              {
                const int64_t t1 = ((c0 + c2) + c4);
                const int64_t t0 = ((c1 + c3) + c5);
                A_t10[(t1) * K + t0] = A[(t0) * M + t1];
              }
          }
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_matmul_trans_a_region1(int * polyc_status_at, int64_t K, int64_t M, int64_t N, const float *restrict B, float *restrict C, float *restrict A_t10)
{
  {
    const int64_t polyc_first0 = 0;
    const int64_t polyc_first1 = 0;
    const int64_t polyc_extents[2] = {polyc_max(0, ((M - 1)) - (polyc_first0) + 1), polyc_max(0, ((N - 1)) - (polyc_first1) + 1)};
    const int64_t polyc_sizes[2] = {6, 64};
    const int64_t polyc_units[2] = {(polyc_extents[0] + 5) / 6, (polyc_extents[1] + 63) / 64};
    int64_t polyc_parts[2];
    polyc_thread_grid(omp_get_num_threads(), 2, polyc_extents, polyc_sizes, NULL, polyc_parts);
    int64_t polyc_place = omp_get_thread_num();
    const int64_t polyc_t1 = polyc_place % polyc_parts[1];
    polyc_place /= polyc_parts[1];
    const int64_t polyc_t0 = polyc_place % polyc_parts[0];
    polyc_place /= polyc_parts[0];
    const int64_t polyc_lo0_0 = polyc_first0 + 6 * (polyc_units[0] * polyc_t0 / polyc_parts[0]);
    const int64_t polyc_hi0_0 = polyc_first0 + 6 * (polyc_units[0] * (polyc_t0 + 1) / polyc_parts[0]);
    const int64_t polyc_lo0_1 = polyc_first1 + 64 * (polyc_units[1] * polyc_t1 / polyc_parts[1]);
    const int64_t polyc_hi0_1 = polyc_first1 + 64 * (polyc_units[1] * (polyc_t1 + 1) / polyc_parts[1]);
    for (int64_t c0 = ((-(polyc_lo0_0 % 768)) + polyc_lo0_0); c0 < polyc_min(M, polyc_hi0_0); c0 += 768)
    {
      for (int64_t c1 = polyc_lo0_1; c1 < polyc_min(N, polyc_hi0_1); c1 += 64)
      {
        if (!(((1 * K + -1 >= 0) && (-1 * N + 16 >= 0))))
        {
          for (int64_t c3 = polyc_max(0, (polyc_lo0_0 - c0)); c3 <= polyc_min(polyc_min(767, ((polyc_hi0_0 - c0) - 1)), ((M - c0) - 1)); c3 += 1)
          {
            #pragma omp simd
            for (int64_t c5 = 0; c5 <= polyc_min(63, ((N - c1) - 1)); c5 += 1)
            {
              const int64_t m = (c0 + c3);
              const int64_t n = (c1 + c5);
              C[(m) * N + n] = 0.0f;
            }
          }
        }
        for (int64_t c2 = 0; c2 < K; c2 += 512)
        {
          _Alignas(64) float polyc_panel_B_storage[32768];
          float *restrict polyc_panel_B = polyc_panel_B_storage;
          {
            for (int64_t polyc_p1 = polyc_max(0, 0 - c2); polyc_p1 < polyc_min(512, K - c2); polyc_p1 += 1)
            {
              const int64_t polyc_start = polyc_max(0, 0 - c1);
              const int64_t polyc_end = polyc_min(64, N - c1);
              for (int64_t polyc_block = polyc_start / 16; polyc_block * 16 < polyc_end; polyc_block += 1)
              {
                const int64_t polyc_first = polyc_max(0, polyc_start - polyc_block * 16);
                const int64_t polyc_last = polyc_min(16, polyc_end - polyc_block * 16);
                if (polyc_first == 0 && polyc_last == 16)
                {
                  {
                    if (polyc_p1 + 8 < polyc_min(512, K - c2))
                    {
                      const int64_t n = c1 + polyc_block * 16;
                      const int64_t k = c2 + polyc_p1 + 8;
                      __builtin_prefetch(&B[(k) * N + n] + 0, 0, 3);
                    }
                    #pragma omp simd
                    for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
                    {
                      const int64_t n = c1 + polyc_block * 16 + polyc_lane;
                      const int64_t k = c2 + polyc_p1;
                      polyc_panel_B[((polyc_block) * 512 + polyc_p1) * 16 + polyc_lane] = B[(k) * N + n];
                    }
                  }
                }
                else
                {
                  #pragma omp simd
                  for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
                    if (polyc_lane >= polyc_first && polyc_lane < polyc_last)
                    {
                      const int64_t n = c1 + polyc_block * 16 + polyc_lane;
                      const int64_t k = c2 + polyc_p1;
                      polyc_panel_B[((polyc_block) * 512 + polyc_p1) * 16 + polyc_lane] = B[(k) * N + n];
                    }
                }
              }
            }
          }
          for (int64_t c3 = polyc_max(0, (polyc_lo0_0 - c0)); c3 <= polyc_min(polyc_min(767, ((polyc_hi0_0 - c0) - 1)), ((M - c0) - 1)); c3 += 6)
          {
            for (int64_t c4 = 0; c4 <= polyc_min(63, ((N - c1) - 1)); c4 += 16)
            {
              if (((((M - c0) - c3) - 1) >= 5) && ((((N - c1) - c4) - 1) >= 15))
              {
                float polyc_acc[6][16];
                if ((((1 * c2 + 0 == 0) && (-1 * N + 16 >= 0))))
                {
                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                  {
                    #pragma omp simd
                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                    {
                      const int64_t c6 = polyc_lane0;
                      const int64_t c8 = polyc_lane1;
                      polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                    }
                  }
                }
                else
                {
                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                  {
                    #pragma omp simd
                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                    {
                      const int64_t c6 = polyc_lane0;
                      const int64_t c8 = polyc_lane1;
                      const int64_t m = ((c0 + c3) + c6);
                      const int64_t n = ((c1 + c4) + c8);
                      polyc_acc[polyc_lane0][polyc_lane1] = C[(m) * N + n];
                    }
                  }
                }
                for (int64_t c5 = 0; c5 <= polyc_min(511, ((K - c2) - 1)); c5 += 1)
                {
                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                  {
                    #pragma omp simd
                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                    {
                      const int64_t c6 = polyc_lane0;
                      const int64_t c8 = polyc_lane1;
                      const int64_t m = ((c0 + c3) + c6);
                      const int64_t n = ((c1 + c4) + c8);
                      const int64_t k = (c2 + c5);
                      polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t10[(m) * K + k] * polyc_panel_B[(((n - c8 - c1) / 16) * 512 + (k - c2)) * 16 + c8]));
                    }
                  }
                }
                {
                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                  {
                    #pragma omp simd
                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                    {
                      const int64_t c6 = polyc_lane0;
                      const int64_t c8 = polyc_lane1;
                      const int64_t m = ((c0 + c3) + c6);
                      const int64_t n = ((c1 + c4) + c8);
                      C[(m) * N + n] = polyc_acc[polyc_lane0][polyc_lane1];
                    }
                  }
                }
              }
              else
              {
                const int64_t polyc_count0 = polyc_min(5, (((M - c0) - c3) - 1)) + 1;
                const int64_t polyc_count1 = polyc_min(15, (((N - c1) - c4) - 1)) + 1;
                if (polyc_count0 > 0 && polyc_count1 > 0)
                {
                  int64_t polyc_shift = 0;
                  {
                    const int64_t c8 = -(16 - polyc_count1);
                    const int64_t n = ((c1 + c4) + c8);
                    if (n >= 0)
                      polyc_shift = 16 - polyc_count1;
                  }
                  if (polyc_shift > 0 && polyc_count1 > 8)
                  {
                    const int64_t polyc_base = -polyc_shift;
                    const int64_t polyc_own = polyc_shift;
                    {
                      float polyc_acc[6][16];
                      if ((((1 * c2 + 0 == 0) && (-1 * N + 16 >= 0))))
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1 + polyc_base;
                            polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                          }
                        }
                      }
                      else
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1 + polyc_base;
                            const int64_t m = ((c0 + c3) + c6);
                            const int64_t n = ((c1 + c4) + c8);
                            polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 >= polyc_own) ? C[(m) * N + n] : 0.0f);
                          }
                        }
                      }
                      for (int64_t c5 = 0; c5 <= polyc_min(511, ((K - c2) - 1)); c5 += 1)
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1 + polyc_base;
                            const int64_t m = ((c0 + c3) + c6);
                            const int64_t n = ((c1 + c4) + c8);
                            const int64_t k = (c2 + c5);
                            polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t10[(m) * K + k] * B[(k) * N + n]));
                          }
                        }
                      }
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1 + polyc_base;
                            const int64_t m = ((c0 + c3) + c6);
                            const int64_t n = ((c1 + c4) + c8);
                            if (polyc_lane1 >= polyc_own)
                              C[(m) * N + n] = polyc_acc[polyc_lane0][polyc_lane1];
                          }
                        }
                      }
                    }
                  }
                  else
                    if (polyc_count1 == 16)
                    {
                      float polyc_acc[6][16];
                      if ((((1 * c2 + 0 == 0) && (-1 * N + 16 >= 0))))
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1;
                            polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                          }
                        }
                      }
                      else
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1;
                            const int64_t m = ((c0 + c3) + c6);
                            const int64_t n = ((c1 + c4) + c8);
                            polyc_acc[polyc_lane0][polyc_lane1] = C[(m) * N + n];
                          }
                        }
                      }
                      for (int64_t c5 = 0; c5 <= polyc_min(511, ((K - c2) - 1)); c5 += 1)
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1;
                            const int64_t m = ((c0 + c3) + c6);
                            const int64_t n = ((c1 + c4) + c8);
                            const int64_t k = (c2 + c5);
                            polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t10[(m) * K + k] * polyc_panel_B[(((n - c8 - c1) / 16) * 512 + (k - c2)) * 16 + c8]));
                          }
                        }
                      }
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c8 = polyc_lane1;
                            const int64_t m = ((c0 + c3) + c6);
                            const int64_t n = ((c1 + c4) + c8);
                            C[(m) * N + n] = polyc_acc[polyc_lane0][polyc_lane1];
                          }
                        }
                      }
                    }
                    else
                      if (polyc_count1 == 8)
                      {
                        float polyc_acc[6][8];
                        if ((((1 * c2 + 0 == 0) && (-1 * N + 16 >= 0))))
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c8 = polyc_lane1;
                              polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                            }
                          }
                        }
                        else
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c8 = polyc_lane1;
                              const int64_t m = ((c0 + c3) + c6);
                              const int64_t n = ((c1 + c4) + c8);
                              polyc_acc[polyc_lane0][polyc_lane1] = C[(m) * N + n];
                            }
                          }
                        }
                        for (int64_t c5 = 0; c5 <= polyc_min(511, ((K - c2) - 1)); c5 += 1)
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c8 = polyc_lane1;
                              const int64_t m = ((c0 + c3) + c6);
                              const int64_t n = ((c1 + c4) + c8);
                              const int64_t k = (c2 + c5);
                              polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t10[(m) * K + k] * polyc_panel_B[(((n - c8 - c1) / 16) * 512 + (k - c2)) * 16 + c8]));
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c8 = polyc_lane1;
                              const int64_t m = ((c0 + c3) + c6);
                              const int64_t n = ((c1 + c4) + c8);
                              C[(m) * N + n] = polyc_acc[polyc_lane0][polyc_lane1];
                            }
                          }
                        }
                      }
                      else
                        if (polyc_count1 < 8)
                        {
                          float polyc_acc[6][8];
                          if ((((1 * c2 + 0 == 0) && (-1 * N + 16 >= 0))))
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                              }
                            }
                          }
                          else
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                const int64_t m = ((c0 + c3) + c6);
                                const int64_t n = ((c1 + c4) + c8);
                                polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? C[(m) * N + n] : 0.0f);
                              }
                            }
                          }
                          for (int64_t c5 = 0; c5 <= polyc_min(511, ((K - c2) - 1)); c5 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                const int64_t m = ((c0 + c3) + c6);
                                const int64_t n = ((c1 + c4) + c8);
                                const int64_t k = (c2 + c5);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t10[(m) * K + k] * POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_B[(((n - c8 - c1) / 16) * 512 + (k - c2)) * 16 + c8])));
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                const int64_t m = ((c0 + c3) + c6);
                                const int64_t n = ((c1 + c4) + c8);
                                if (polyc_lane1 < polyc_count1)
                                  C[(m) * N + n] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                        else
                        {
                          float polyc_acc[6][16];
                          if ((((1 * c2 + 0 == 0) && (-1 * N + 16 >= 0))))
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                              }
                            }
                          }
                          else
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                const int64_t m = ((c0 + c3) + c6);
                                const int64_t n = ((c1 + c4) + c8);
                                polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? C[(m) * N + n] : 0.0f);
                              }
                            }
                          }
                          for (int64_t c5 = 0; c5 <= polyc_min(511, ((K - c2) - 1)); c5 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                const int64_t m = ((c0 + c3) + c6);
                                const int64_t n = ((c1 + c4) + c8);
                                const int64_t k = (c2 + c5);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t10[(m) * K + k] * POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_B[(((n - c8 - c1) / 16) * 512 + (k - c2)) * 16 + c8])));
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c6 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c8 = polyc_lane1;
                                const int64_t m = ((c0 + c3) + c6);
                                const int64_t n = ((c1 + c4) + c8);
                                if (polyc_lane1 < polyc_count1)
                                  C[(m) * N + n] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                }
              }
            }
          }
        }
      }
    }
  }
}

#undef polyc_status

int polyc_matmul_trans_a(int64_t K, int64_t M, int64_t N, const float *restrict A, const float *restrict B, float *restrict C)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(M) * polyc_extent(K)) + (polyc_extent(M) * polyc_extent(N)) + (polyc_extent(M) * polyc_extent(N) * polyc_extent(K));
  float *restrict A_t10 = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(M) * polyc_extent(K) + 64));
  if (!A_t10)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  {
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_matmul_trans_a_region0(&polyc_status, K, M, A, A_t10);
    }
    else
    {
      polyc_matmul_trans_a_region0(&polyc_status, K, M, A, A_t10);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_matmul_trans_a_region1(&polyc_status, K, M, N, B, C, A_t10);
    }
    else
    {
      polyc_matmul_trans_a_region1(&polyc_status, K, M, N, B, C, A_t10);
    }
  }
  polyc_done:
  free(A_t10);
  return polyc_status;
}

int polyc_matmul_trans_a_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_matmul_trans_a(polyc_sizes[0], polyc_sizes[1], polyc_sizes[2], (const float *)polyc_args[0], (const float *)polyc_args[1], (float *)polyc_args[2]);
}
