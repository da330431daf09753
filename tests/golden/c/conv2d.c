/*
 * polyc 0.1.0: operator `conv2d`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256 -falign-loops=64
 *
 * def conv2d(float32(N, C, H, W) I, float32(M, C, KH, KW) W1) -> (float32 O) {
 *   I_t0213(t0, t2, t1, t3) = I(t0, t1, t2, t3) where t0 in 0:N, t2 in 0:H, t1 in 0:C, t3 in 0:W
 *   W1_t0231(t0, t2, t3, t1) = W1(t0, t1, t2, t3) where t0 in 0:M, t2 in 0:KH, t3 in 0:KW, t1 in 0:C
 *   O(n, m, h, w) +=! I_t0213(n, h + kh, c, w + kw) * W1_t0231(m, kh, kw, c) where n in 0:N, m in 0:M, h in 0:H - KH + 1, w in 0:W - KW + 1, c in 0:C, kh in 0:KH, kw in 0:KW
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





#define polyc_status (*polyc_status_at)
static __attribute__((noinline)) void polyc_conv2d_region0(int * polyc_status_at, int64_t C, int64_t M, int64_t KH, int64_t KW, const float *restrict W1, float *restrict W1_t0231)
{
  #pragma omp for collapse(4) schedule(static) nowait
  for (int64_t c0 = 0; c0 < M; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < KH; c1 += 1)
    {
      for (int64_t c2 = 0; c2 < KW; c2 += 256)
      {
        for (int64_t c3 = 0; c3 < C; c3 += 256)
        {
          for (int64_t c6 = 0; c6 <= polyc_min(255, ((KW - c2) - 1)); c6 += 16)
          {
            for (int64_t c7 = 0; c7 <= polyc_min(255, ((C - c3) - 1)); c7 += 16)
            {
              if (((polyc_min(15, (((KW - c2) - c6) - 1)) + 1)) - (0) == 16 && ((polyc_min(15, (((C - c3) - c7) - 1)) + 1)) - (0) == 16)
              {
                float *polyc_dst;
                const float *polyc_src;
                int64_t polyc_ld, polyc_ls;
                {
                  const int64_t c10 = 0 + 0;
                  const int64_t c11 = 0 + 0;
                  const int64_t t0 = c0;
                  const int64_t t2 = c1;
                  const int64_t t3 = ((c2 + c6) + c10);
                  const int64_t t1 = ((c3 + c7) + c11);
                  polyc_dst = &W1_t0231[(((t0) * KH + t2) * KW + t3) * C + t1];
                  polyc_src = &W1[(((t0) * C + t1) * KH + t2) * KW + t3];
                }
                {
                  const int64_t c10 = 0 + 1;
                  const int64_t c11 = 0 + 0;
                  const int64_t t0 = c0;
                  const int64_t t2 = c1;
                  const int64_t t3 = ((c2 + c6) + c10);
                  const int64_t t1 = ((c3 + c7) + c11);
                  polyc_ld = &W1_t0231[(((t0) * KH + t2) * KW + t3) * C + t1] - polyc_dst;
                }
                {
                  const int64_t c10 = 0 + 0;
                  const int64_t c11 = 0 + 1;
                  const int64_t t0 = c0;
                  const int64_t t2 = c1;
                  const int64_t t3 = ((c2 + c6) + c10);
                  const int64_t t1 = ((c3 + c7) + c11);
                  polyc_ls = &W1[(((t0) * C + t1) * KH + t2) * KW + t3] - polyc_src;
                }
                polyc_transpose_32_16_8(polyc_dst, polyc_ld, polyc_src, polyc_ls);
              }
              else
              {
                float *polyc_dst;
                const float *polyc_src;
                int64_t polyc_ld, polyc_ls;
                {
                  const int64_t c10 = 0 + 0;
                  const int64_t c11 = 0 + 0;
                  const int64_t t0 = c0;
                  const int64_t t2 = c1;
                  const int64_t t3 = ((c2 + c6) + c10);
                  const int64_t t1 = ((c3 + c7) + c11);
                  polyc_dst = &W1_t0231[(((t0) * KH + t2) * KW + t3) * C + t1];
                  polyc_src = &W1[(((t0) * C + t1) * KH + t2) * KW + t3];
                }
                {
                  const int64_t c10 = 0 + 1;
                  const int64_t c11 = 0 + 0;
                  const int64_t t0 = c0;
                  const int64_t t2 = c1;
                  const int64_t t3 = ((c2 + c6) + c10);
                  const int64_t t1 = ((c3 + c7) + c11);
                  polyc_ld = &W1_t0231[(((t0) * KH + t2) * KW + t3) * C + t1] - polyc_dst;
                }
                {
                  const int64_t c10 = 0 + 0;
                  const int64_t c11 = 0 + 1;
                  const int64_t t0 = c0;
                  const int64_t t2 = c1;
                  const int64_t t3 = ((c2 + c6) + c10);
                  const int64_t t1 = ((c3 + c7) + c11);
                  polyc_ls = &W1[(((t0) * C + t1) * KH + t2) * KW + t3] - polyc_src;
                }
                const int64_t polyc_whole0 = (((polyc_min(15, (((KW - c2) - c6) - 1)) + 1)) - (0)) / 8 * 8, polyc_whole1 = (((polyc_min(15, (((C - c3) - c7) - 1)) + 1)) - (0)) / 8 * 8;
                for (int64_t polyc_b0 = 0; polyc_b0 < polyc_whole0; polyc_b0 += 8)
                  for (int64_t polyc_b1 = 0; polyc_b1 < polyc_whole1; polyc_b1 += 8)
                  {
                    {
                      const int64_t c10 = 0 + polyc_b0;
                      const int64_t c11 = 0 + polyc_b1;
                      const int64_t t0 = c0;
                      const int64_t t2 = c1;
                      const int64_t t3 = ((c2 + c6) + c10);
                      const int64_t t1 = ((c3 + c7) + c11);
                      polyc_dst = &W1_t0231[(((t0) * KH + t2) * KW + t3) * C + t1];
                      polyc_src = &W1[(((t0) * C + t1) * KH + t2) * KW + t3];
                    }
                    polyc_transpose_32_8_8(polyc_dst, polyc_ld, polyc_src, polyc_ls);
                  }
                for (int64_t c10 = 0; c10 < (polyc_min(15, (((KW - c2) - c6) - 1)) + 1); c10 += 1)
                  for (int64_t c11 = c10 - (0) < polyc_whole0 ? (0) + polyc_whole1 : 0; c11 < (polyc_min(15, (((C - c3) - c7) - 1)) + 1); c11 += 1)
                  {
                    const int64_t t0 = c0;
                    const int64_t t2 = c1;
                    const int64_t t3 = ((c2 + c6) + c10);
                    const int64_t t1 = ((c3 + c7) + c11);
                    W1_t0231[(((t0) * KH + t2) * KW + t3) * C + t1] = W1[(((t0) * C + t1) * KH + t2) * KW + t3];
                  }
              }
            }
          }
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_region1(int * polyc_status_at, int64_t N, int64_t C, int64_t H, int64_t W, const float *restrict I, float *restrict I_t0213)
{
  #pragma omp for collapse(3) schedule(static) nowait
  for (int64_t c0 = 0; c0 < N; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < H; c1 += 1)
    {
      for (int64_t c2 = 0; c2 < C; c2 += 1)
      {
        #pragma omp simd
        for (int64_t c3 = 0; c3 < W; c3 += 1)
        {
          const int64_t t0 = c0;
          const int64_t t2 = c1;
          const int64_t t1 = c2;
          const int64_t t3 = c3;
          I_t0213[(((t0) * H + t2) * C + t1) * W + t3] = I[(((t0) * C + t1) * H + t2) * W + t3];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block0(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_count0, int64_t polyc_count1, int64_t polyc_count2)
{
  for (int64_t polyc_lane1 = 0; polyc_lane1 < polyc_count1; polyc_lane1 += 1)
  {
    const int64_t c15 = polyc_lane1;
    {
      float polyc_acc[6][16];
      if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2;
            polyc_acc[polyc_lane0][polyc_lane2] = 0.0f;
          }
        }
      }
      else
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2;
            const int64_t n = c0;
            const int64_t m = (c1 + c14);
            const int64_t h = ((c2 + c9) + c15);
            const int64_t w = (c3 + c19);
            polyc_acc[polyc_lane0][polyc_lane2] = ((polyc_lane2 < polyc_count2) ? O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] : 0.0f);
          }
        }
      }
      for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
      {
        for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
        {
          for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
          {
            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
            {
              #pragma omp simd
              for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
              {
                const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
                const int64_t c19 = polyc_lane2;
                const int64_t n = c0;
                const int64_t m = (c1 + c14);
                const int64_t h = ((c2 + c9) + c15);
                const int64_t w = (c3 + c19);
                const int64_t c = (c4 + c13);
                const int64_t kh = (c5 + c11);
                const int64_t kw = (c6 + c12);
                polyc_acc[polyc_lane0][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
              }
            }
          }
        }
      }
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2;
            const int64_t n = c0;
            const int64_t m = (c1 + c14);
            const int64_t h = ((c2 + c9) + c15);
            const int64_t w = (c3 + c19);
            if (polyc_lane2 < polyc_count2)
              O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane2];
          }
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block1(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_count0, int64_t polyc_count1, int64_t polyc_count2)
{
  float polyc_acc[6][2][8];
  if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = 0.0f;
        }
      }
    }
  }
  else
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = ((polyc_lane2 < polyc_count2) ? O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] : 0.0f);
        }
      }
    }
  }
  for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
  {
    for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
    {
      for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
      {
        #pragma GCC unroll 6
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma GCC unroll 2
          for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
          {
            #pragma omp simd
            for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
            {
              const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
              const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
              const int64_t c19 = polyc_lane2;
              const int64_t n = c0;
              const int64_t m = (c1 + c14);
              const int64_t h = ((c2 + c9) + c15);
              const int64_t w = (c3 + c19);
              const int64_t c = (c4 + c13);
              const int64_t kh = (c5 + c11);
              const int64_t kw = (c6 + c12);
              polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
            }
          }
        }
      }
    }
  }
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          if (polyc_lane2 < polyc_count2)
            O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block2(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_count0, int64_t polyc_count1)
{
  float polyc_acc[6][2][4];
  if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = 0.0f;
        }
      }
    }
  }
  else
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w];
        }
      }
    }
  }
  for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
  {
    for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
    {
      for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
      {
        #pragma GCC unroll 6
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma GCC unroll 2
          for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
          {
            #pragma omp simd
            for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
            {
              const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
              const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
              const int64_t c19 = polyc_lane2;
              const int64_t n = c0;
              const int64_t m = (c1 + c14);
              const int64_t h = ((c2 + c9) + c15);
              const int64_t w = (c3 + c19);
              const int64_t c = (c4 + c13);
              const int64_t kh = (c5 + c11);
              const int64_t kw = (c6 + c12);
              polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
            }
          }
        }
      }
    }
  }
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block3(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_count0, int64_t polyc_count1, int64_t polyc_count2)
{
  float polyc_acc[6][2][4];
  if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = 0.0f;
        }
      }
    }
  }
  else
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = ((polyc_lane2 < polyc_count2) ? O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] : 0.0f);
        }
      }
    }
  }
  for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
  {
    for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
    {
      for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
      {
        #pragma GCC unroll 6
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma GCC unroll 2
          for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
          {
            #pragma omp simd
            for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
            {
              const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
              const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
              const int64_t c19 = polyc_lane2;
              const int64_t n = c0;
              const int64_t m = (c1 + c14);
              const int64_t h = ((c2 + c9) + c15);
              const int64_t w = (c3 + c19);
              const int64_t c = (c4 + c13);
              const int64_t kh = (c5 + c11);
              const int64_t kw = (c6 + c12);
              polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
            }
          }
        }
      }
    }
  }
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          if (polyc_lane2 < polyc_count2)
            O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block4(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_count0, int64_t polyc_count1)
{
  float polyc_acc[6][2][8];
  if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = 0.0f;
        }
      }
    }
  }
  else
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w];
        }
      }
    }
  }
  for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
  {
    for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
    {
      for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
      {
        #pragma GCC unroll 6
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma GCC unroll 2
          for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
          {
            #pragma omp simd
            for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
            {
              const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
              const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
              const int64_t c19 = polyc_lane2;
              const int64_t n = c0;
              const int64_t m = (c1 + c14);
              const int64_t h = ((c2 + c9) + c15);
              const int64_t w = (c3 + c19);
              const int64_t c = (c4 + c13);
              const int64_t kh = (c5 + c11);
              const int64_t kw = (c6 + c12);
              polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
            }
          }
        }
      }
    }
  }
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 8; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block5(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_count0, int64_t polyc_count1)
{
  for (int64_t polyc_lane1 = 0; polyc_lane1 < polyc_count1; polyc_lane1 += 1)
  {
    const int64_t c15 = polyc_lane1;
    {
      float polyc_acc[6][16];
      if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2;
            polyc_acc[polyc_lane0][polyc_lane2] = 0.0f;
          }
        }
      }
      else
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2;
            const int64_t n = c0;
            const int64_t m = (c1 + c14);
            const int64_t h = ((c2 + c9) + c15);
            const int64_t w = (c3 + c19);
            polyc_acc[polyc_lane0][polyc_lane2] = O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w];
          }
        }
      }
      for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
      {
        for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
        {
          for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
          {
            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
            {
              #pragma omp simd
              for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
              {
                const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
                const int64_t c19 = polyc_lane2;
                const int64_t n = c0;
                const int64_t m = (c1 + c14);
                const int64_t h = ((c2 + c9) + c15);
                const int64_t w = (c3 + c19);
                const int64_t c = (c4 + c13);
                const int64_t kh = (c5 + c11);
                const int64_t kw = (c6 + c12);
                polyc_acc[polyc_lane0][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
              }
            }
          }
        }
      }
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2;
            const int64_t n = c0;
            const int64_t m = (c1 + c14);
            const int64_t h = ((c2 + c9) + c15);
            const int64_t w = (c3 + c19);
            O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane2];
          }
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block6(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_base, int64_t polyc_count0, int64_t polyc_count1, int64_t polyc_own)
{
  float polyc_acc[6][2][4];
  if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2 + polyc_base;
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = 0.0f;
        }
      }
    }
  }
  else
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2 + polyc_base;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = ((polyc_lane2 >= polyc_own) ? O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] : 0.0f);
        }
      }
    }
  }
  for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
  {
    for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
    {
      for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
      {
        #pragma GCC unroll 6
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma GCC unroll 2
          for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
          {
            #pragma omp simd
            for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
            {
              const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
              const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
              const int64_t c19 = polyc_lane2 + polyc_base;
              const int64_t n = c0;
              const int64_t m = (c1 + c14);
              const int64_t h = ((c2 + c9) + c15);
              const int64_t w = (c3 + c19);
              const int64_t c = (c4 + c13);
              const int64_t kh = (c5 + c11);
              const int64_t kw = (c6 + c12);
              polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
            }
          }
        }
      }
    }
  }
  {
    #pragma GCC unroll 6
    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
    {
      #pragma GCC unroll 2
      for (int64_t polyc_lane1 = 0; polyc_lane1 < 2; polyc_lane1 += 1)
      {
        #pragma omp simd
        for (int64_t polyc_lane2 = 0; polyc_lane2 < 4; polyc_lane2 += 1)
        {
          const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
          const int64_t c15 = polyc_min(polyc_lane1, polyc_count1 - 1);
          const int64_t c19 = polyc_lane2 + polyc_base;
          const int64_t n = c0;
          const int64_t m = (c1 + c14);
          const int64_t h = ((c2 + c9) + c15);
          const int64_t w = (c3 + c19);
          if (polyc_lane2 >= polyc_own)
            O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane1][polyc_lane2];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_block7(int64_t C, int64_t H, float *restrict I_t0213, int64_t KH, int64_t KW, int64_t M, float *restrict O, int64_t W, float *restrict W1_t0231, int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6, int64_t c9, int64_t polyc_base, int64_t polyc_count0, int64_t polyc_count1, int64_t polyc_own)
{
  for (int64_t polyc_lane1 = 0; polyc_lane1 < polyc_count1; polyc_lane1 += 1)
  {
    const int64_t c15 = polyc_lane1;
    {
      float polyc_acc[6][16];
      if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2 + polyc_base;
            polyc_acc[polyc_lane0][polyc_lane2] = 0.0f;
          }
        }
      }
      else
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2 + polyc_base;
            const int64_t n = c0;
            const int64_t m = (c1 + c14);
            const int64_t h = ((c2 + c9) + c15);
            const int64_t w = (c3 + c19);
            polyc_acc[polyc_lane0][polyc_lane2] = ((polyc_lane2 >= polyc_own) ? O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] : 0.0f);
          }
        }
      }
      for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
      {
        for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
        {
          for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
          {
            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
            {
              #pragma omp simd
              for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
              {
                const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
                const int64_t c19 = polyc_lane2 + polyc_base;
                const int64_t n = c0;
                const int64_t m = (c1 + c14);
                const int64_t h = ((c2 + c9) + c15);
                const int64_t w = (c3 + c19);
                const int64_t c = (c4 + c13);
                const int64_t kh = (c5 + c11);
                const int64_t kw = (c6 + c12);
                polyc_acc[polyc_lane0][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
              }
            }
          }
        }
      }
      {
        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
        {
          #pragma omp simd
          for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
          {
            const int64_t c14 = polyc_min(polyc_lane0, polyc_count0 - 1);
            const int64_t c19 = polyc_lane2 + polyc_base;
            const int64_t n = c0;
            const int64_t m = (c1 + c14);
            const int64_t h = ((c2 + c9) + c15);
            const int64_t w = (c3 + c19);
            if (polyc_lane2 >= polyc_own)
              O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane2];
          }
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_conv2d_region2(int * polyc_status_at, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t KH, int64_t KW, float *restrict O, float *restrict I_t0213, float *restrict W1_t0231)
{
  #pragma omp for collapse(4) schedule(static) nowait
  for (int64_t c0 = 0; c0 < N; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < M; c1 += 6)
    {
      for (int64_t c2 = 0; c2 <= (H - KH); c2 += 8)
      {
        for (int64_t c3 = 0; c3 <= (W - KW); c3 += 16)
        {
          if (!(((1 * C + -1 >= 0) && (1 * KH + -1 >= 0) && (-1 * W + 1 * KW + 15 >= 0) && (1 * KW + -1 >= 0))))
          {
            for (int64_t c8 = 0; c8 <= polyc_min(5, ((M - c1) - 1)); c8 += 1)
            {
              for (int64_t c9 = 0; c9 <= polyc_min(7, ((H - KH) - c2)); c9 += 1)
              {
                #pragma omp simd
                for (int64_t c13 = 0; c13 <= polyc_min(15, ((W - KW) - c3)); c13 += 1)
                {
                  const int64_t n = c0;
                  const int64_t m = (c1 + c8);
                  const int64_t h = (c2 + c9);
                  const int64_t w = (c3 + c13);
                  O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = 0.0f;
                }
              }
            }
          }
          for (int64_t c4 = 0; c4 < C; c4 += 256)
          {
            for (int64_t c5 = 0; c5 < KH; c5 += 8)
            {
              for (int64_t c6 = 0; c6 < KW; c6 += 8)
              {
                for (int64_t c9 = 0; c9 <= polyc_min(7, ((H - KH) - c2)); c9 += 2)
                {
                  const int64_t polyc_count1 = polyc_min(1, (((H - KH) - c2) - c9)) + 1;
                  if ((((M - c1) - 1) >= 5) && (((W - KW) - c3) >= 15))
                    for (int64_t polyc_lane1 = 0; polyc_lane1 < polyc_count1; polyc_lane1 += 1)
                    {
                      const int64_t c15 = polyc_lane1;
                      {
                        float polyc_acc[6][16];
                        if ((((1 * c6 + 0 == 0) && (1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * W + 1 * KW + 15 >= 0))))
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
                            {
                              const int64_t c14 = polyc_lane0;
                              const int64_t c19 = polyc_lane2;
                              polyc_acc[polyc_lane0][polyc_lane2] = 0.0f;
                            }
                          }
                        }
                        else
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
                            {
                              const int64_t c14 = polyc_lane0;
                              const int64_t c19 = polyc_lane2;
                              const int64_t n = c0;
                              const int64_t m = (c1 + c14);
                              const int64_t h = ((c2 + c9) + c15);
                              const int64_t w = (c3 + c19);
                              polyc_acc[polyc_lane0][polyc_lane2] = O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w];
                            }
                          }
                        }
                        for (int64_t c11 = 0; c11 <= polyc_min(7, ((KH - c5) - 1)); c11 += 1)
                        {
                          for (int64_t c12 = 0; c12 <= polyc_min(7, ((KW - c6) - 1)); c12 += 1)
                          {
                            for (int64_t c13 = 0; c13 <= polyc_min(255, ((C - c4) - 1)); c13 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
                                {
                                  const int64_t c14 = polyc_lane0;
                                  const int64_t c19 = polyc_lane2;
                                  const int64_t n = c0;
                                  const int64_t m = (c1 + c14);
                                  const int64_t h = ((c2 + c9) + c15);
                                  const int64_t w = (c3 + c19);
                                  const int64_t c = (c4 + c13);
                                  const int64_t kh = (c5 + c11);
                                  const int64_t kw = (c6 + c12);
                                  polyc_acc[polyc_lane0][polyc_lane2] = (polyc_acc[polyc_lane0][polyc_lane2] + (I_t0213[(((n) * H + h + kh) * C + c) * W + kw + w] * W1_t0231[(((m) * KH + kh) * KW + kw) * C + c]));
                                }
                              }
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane2 = 0; polyc_lane2 < 16; polyc_lane2 += 1)
                            {
                              const int64_t c14 = polyc_lane0;
                              const int64_t c19 = polyc_lane2;
                              const int64_t n = c0;
                              const int64_t m = (c1 + c14);
                              const int64_t h = ((c2 + c9) + c15);
                              const int64_t w = (c3 + c19);
                              O[(((n) * M + m) * (H - KH + 1) + h) * (W - KW + 1) + w] = polyc_acc[polyc_lane0][polyc_lane2];
                            }
                          }
                        }
                      }
                    }
                  else
                  {
                    const int64_t polyc_count0 = polyc_min(5, ((M - c1) - 1)) + 1;
                    const int64_t polyc_count2 = polyc_min(15, ((W - KW) - c3)) + 1;
                    if (polyc_count0 > 0 && polyc_count1 > 0 && polyc_count2 > 0)
                    {
                      int64_t polyc_shift = 0;
                      {
                        const int64_t c19 = -(16 - polyc_count2);
                        const int64_t w = (c3 + c19);
                        if (w >= 0)
                          polyc_shift = 16 - polyc_count2;
                      }
                      if (polyc_shift > 0 && polyc_count2 > 8 && polyc_count2 > 12)
                      {
                        const int64_t polyc_base = -polyc_shift;
                        const int64_t polyc_own = polyc_shift;
                        polyc_conv2d_block7(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_base, polyc_count0, polyc_count1, polyc_own);
                      }
                      else
                        if (polyc_count2 > 8 && polyc_count2 <= 12)
                        {
                          {
                            polyc_conv2d_block4(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1);
                          }
                          {
                            const int64_t polyc_base = polyc_count2 - 4;
                            const int64_t polyc_own = 8 - polyc_base;
                            polyc_conv2d_block6(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_base, polyc_count0, polyc_count1, polyc_own);
                          }
                        }
                        else
                          if (polyc_count2 == 16)
                          {
                            polyc_conv2d_block5(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1);
                          }
                          else
                            if (polyc_count2 == 8)
                            {
                              polyc_conv2d_block4(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1);
                            }
                            else
                              if (polyc_count2 < 8)
                                if (polyc_count2 <= 4)
                                {
                                  if (polyc_count2 == 4)
                                  {
                                    polyc_conv2d_block2(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1);
                                  }
                                  else
                                  {
                                    polyc_conv2d_block3(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1, polyc_count2);
                                  }
                                }
                                else
                                {
                                  polyc_conv2d_block1(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1, polyc_count2);
                                }
                              else
                              {
                                polyc_conv2d_block0(C, H, I_t0213, KH, KW, M, O, W, W1_t0231, c0, c1, c2, c3, c4, c5, c6, c9, polyc_count0, polyc_count1, polyc_count2);
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

int polyc_conv2d(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t KH, int64_t KW, const float *restrict I, const float *restrict W1, float *restrict O)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(N) * polyc_extent(H) * polyc_extent(C) * polyc_extent(W)) + (polyc_extent(M) * polyc_extent(KH) * polyc_extent(KW) * polyc_extent(C)) + (polyc_extent(N) * polyc_extent(M) * polyc_extent(H - KH + 1) * polyc_extent(W - KW + 1)) + (polyc_extent(N) * polyc_extent(M) * polyc_extent(H - KH + 1) * polyc_extent(W - KW + 1) * polyc_extent(C) * polyc_extent(KH) * polyc_extent(KW));
  float *restrict I_t0213 = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(N) * polyc_extent(H) * polyc_extent(C) * polyc_extent(W) + 64));
  float *restrict W1_t0231 = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(M) * polyc_extent(KH) * polyc_extent(KW) * polyc_extent(C) + 64));
  if (!I_t0213)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  if (!W1_t0231)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  memset(I_t0213 + polyc_extent(N) * polyc_extent(H) * polyc_extent(C) * polyc_extent(W), 0, sizeof(float) * 64);
  {
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_conv2d_region0(&polyc_status, C, M, KH, KW, W1, W1_t0231);
    }
    else
    {
      polyc_conv2d_region0(&polyc_status, C, M, KH, KW, W1, W1_t0231);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_conv2d_region1(&polyc_status, N, C, H, W, I, I_t0213);
    }
    else
    {
      polyc_conv2d_region1(&polyc_status, N, C, H, W, I, I_t0213);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_conv2d_region2(&polyc_status, N, C, H, W, M, KH, KW, O, I_t0213, W1_t0231);
    }
    else
    {
      polyc_conv2d_region2(&polyc_status, N, C, H, W, M, KH, KW, O, I_t0213, W1_t0231);
    }
  }
  polyc_done:
  free(I_t0213);
  free(W1_t0231);
  return polyc_status;
}

int polyc_conv2d_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_conv2d(polyc_sizes[0], polyc_sizes[1], polyc_sizes[2], polyc_sizes[3], polyc_sizes[4], polyc_sizes[5], polyc_sizes[6], (const float *)polyc_args[0], (const float *)polyc_args[1], (float *)polyc_args[2]);
}
