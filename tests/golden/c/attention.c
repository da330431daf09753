/*
 * polyc 0.1.0: operator `attention`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256 -falign-loops=64
 *
 * def attention(float32(B, Q, D) Qm, float32(B, S, D) Km, float32(B, S, E) Vm) -> (float32 O) {
 *   sc(b, q, s) +=! Qm(b, q, d) * Km(b, s, d) where b in 0:B, q in 0:Q, s in 0:S, d in 0:D
 *   sc(b, q, s) = sc(b, q, s) * (1.0 / sqrt(float32(D))) where b in 0:B, q in 0:Q, s in 0:S
 *   mx(b, q) max=! sc(b, q, s) where b in 0:B, q in 0:Q, s in 0:S
 *   p(b, q, s) = exp(sc(b, q, s) - mx(b, q)) where b in 0:B, q in 0:Q, s in 0:S
 *   z(b, q) +=! p(b, q, s) where b in 0:B, q in 0:Q, s in 0:S
 *   O(b, q, e) +=! p(b, q, s) * Vm(b, s, e) where b in 0:B, q in 0:Q, e in 0:E, s in 0:S
 *   O(b, q, e) = O(b, q, e) * (1.0 / z(b, q)) where b in 0:B, q in 0:Q, e in 0:E
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



// polyc-link: -lmvec
#pragma omp declare simd notinbranch
float expf(float);

#define polyc_status (*polyc_status_at)
static __attribute__((noinline)) void polyc_attention_region0(int * polyc_status_at, int64_t B, int64_t Q, int64_t D, int64_t S, const float *restrict Qm, const float *restrict Km, float *restrict sc)
{
  #pragma omp for collapse(3) schedule(static) nowait
  for (int64_t c0 = 0; c0 < B; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < Q; c1 += 768)
    {
      for (int64_t c2 = 0; c2 < S; c2 += 64)
      {
        {
          if (!(((1 * D + -1 >= 0) && (-1 * S + 16 >= 0))))
          {
            for (int64_t c5 = 0; c5 <= polyc_min(767, ((Q - c1) - 1)); c5 += 1)
            {
              #pragma omp simd
              for (int64_t c7 = 0; c7 <= polyc_min(63, ((S - c2) - 1)); c7 += 1)
              {
                const int64_t b = c0;
                const int64_t q = (c1 + c5);
                const int64_t s = (c2 + c7);
                sc[((b) * Q + q) * S + s] = 0.0f;
              }
            }
          }
          for (int64_t c3 = 0; c3 < D; c3 += 512)
          {
            _Alignas(64) float polyc_panel_Km_storage[32768];
            float *restrict polyc_panel_Km = polyc_panel_Km_storage;
            {
              for (int64_t polyc_p1 = polyc_max(0, 0 - c0); polyc_p1 < polyc_min(1, B - c0); polyc_p1 += 1)
              {
                const int64_t polyc_start = polyc_max(0, 0 - c2);
                const int64_t polyc_end = polyc_min(64, S - c2);
                for (int64_t polyc_block = polyc_start / 16; polyc_block * 16 < polyc_end; polyc_block += 1)
                {
                  const int64_t polyc_first = polyc_max(0, polyc_start - polyc_block * 16);
                  const int64_t polyc_last = polyc_min(16, polyc_end - polyc_block * 16);
                  if (polyc_first == 0 && polyc_last == 16)
                  {
                    {
                      const int64_t polyc_squared = (0) + ((16) - (0)) / 8 * 8;
                      const int64_t polyc_rest = (polyc_max(0, 0 - c3)) + ((polyc_min(512, D - c3)) - (polyc_max(0, 0 - c3))) / 8 * 8;
                      for (int64_t polyc_group = 0; polyc_group < polyc_squared; polyc_group += 8)
                        for (int64_t polyc_p2 = polyc_max(0, 0 - c3); polyc_p2 < polyc_rest; polyc_p2 += 8)
                        {
                          const float *polyc_src;
                          int64_t polyc_ls;
                          {
                            const int64_t s = c2 + polyc_block * 16 + polyc_group;
                            const int64_t b = c0 + polyc_p1;
                            const int64_t d = c3 + polyc_p2;
                            polyc_src = &Km[((b) * S + s) * D + d];
                          }
                          {
                            const int64_t s = c2 + polyc_block * 16 + polyc_group + 1;
                            const int64_t b = c0 + polyc_p1;
                            const int64_t d = c3 + polyc_p2;
                            polyc_ls = &Km[((b) * S + s) * D + d] - polyc_src;
                          }
                          polyc_transpose_32_8_8(&polyc_panel_Km[(((polyc_block) * 1 + polyc_p1) * 512 + polyc_p2) * 16 + polyc_group], 16, polyc_src, polyc_ls);
                        }
                      for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
                        for (int64_t polyc_p2 = polyc_lane < polyc_squared ? polyc_rest : polyc_max(0, 0 - c3); polyc_p2 < polyc_min(512, D - c3); polyc_p2 += 1)
                        {
                          const int64_t s = c2 + polyc_block * 16 + polyc_lane;
                          const int64_t b = c0 + polyc_p1;
                          const int64_t d = c3 + polyc_p2;
                          polyc_panel_Km[(((polyc_block) * 1 + polyc_p1) * 512 + polyc_p2) * 16 + polyc_lane] = Km[((b) * S + s) * D + d];
                        }
                    }
                  }
                  else
                  {
                    const int64_t polyc_squared = (polyc_first) + ((polyc_last) - (polyc_first)) / 8 * 8;
                    const int64_t polyc_rest = (polyc_max(0, 0 - c3)) + ((polyc_min(512, D - c3)) - (polyc_max(0, 0 - c3))) / 8 * 8;
                    for (int64_t polyc_group = polyc_first; polyc_group < polyc_squared; polyc_group += 8)
                      for (int64_t polyc_p2 = polyc_max(0, 0 - c3); polyc_p2 < polyc_rest; polyc_p2 += 8)
                      {
                        const float *polyc_src;
                        int64_t polyc_ls;
                        {
                          const int64_t s = c2 + polyc_block * 16 + polyc_group;
                          const int64_t b = c0 + polyc_p1;
                          const int64_t d = c3 + polyc_p2;
                          polyc_src = &Km[((b) * S + s) * D + d];
                        }
                        {
                          const int64_t s = c2 + polyc_block * 16 + polyc_group + 1;
                          const int64_t b = c0 + polyc_p1;
                          const int64_t d = c3 + polyc_p2;
                          polyc_ls = &Km[((b) * S + s) * D + d] - polyc_src;
                        }
                        polyc_transpose_32_8_8(&polyc_panel_Km[(((polyc_block) * 1 + polyc_p1) * 512 + polyc_p2) * 16 + polyc_group], 16, polyc_src, polyc_ls);
                      }
                    for (int64_t polyc_lane = polyc_first; polyc_lane < polyc_last; polyc_lane += 1)
                      for (int64_t polyc_p2 = polyc_lane < polyc_squared ? polyc_rest : polyc_max(0, 0 - c3); polyc_p2 < polyc_min(512, D - c3); polyc_p2 += 1)
                      {
                        const int64_t s = c2 + polyc_block * 16 + polyc_lane;
                        const int64_t b = c0 + polyc_p1;
                        const int64_t d = c3 + polyc_p2;
                        polyc_panel_Km[(((polyc_block) * 1 + polyc_p1) * 512 + polyc_p2) * 16 + polyc_lane] = Km[((b) * S + s) * D + d];
                      }
                  }
                }
              }
            }
            for (int64_t c5 = 0; c5 <= polyc_min(767, ((Q - c1) - 1)); c5 += 6)
            {
              for (int64_t c6 = 0; c6 <= polyc_min(63, ((S - c2) - 1)); c6 += 16)
              {
                if (((((Q - c1) - c5) - 1) >= 5) && ((((S - c2) - c6) - 1) >= 15))
                {
                  float polyc_acc[6][16];
                  if ((((1 * c3 + 0 == 0) && (-1 * S + 16 >= 0))))
                  {
                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                      {
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
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
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
                        const int64_t b = c0;
                        const int64_t q = ((c1 + c5) + c8);
                        const int64_t s = ((c2 + c6) + c10);
                        polyc_acc[polyc_lane0][polyc_lane1] = sc[((b) * Q + q) * S + s];
                      }
                    }
                  }
                  for (int64_t c7 = 0; c7 <= polyc_min(511, ((D - c3) - 1)); c7 += 1)
                  {
                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                      {
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
                        const int64_t b = c0;
                        const int64_t q = ((c1 + c5) + c8);
                        const int64_t s = ((c2 + c6) + c10);
                        const int64_t d = (c3 + c7);
                        polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (Qm[((b) * Q + q) * D + d] * polyc_panel_Km[((((s - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (d - c3)) * 16 + c10]));
                      }
                    }
                  }
                  {
                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                      {
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
                        const int64_t b = c0;
                        const int64_t q = ((c1 + c5) + c8);
                        const int64_t s = ((c2 + c6) + c10);
                        sc[((b) * Q + q) * S + s] = polyc_acc[polyc_lane0][polyc_lane1];
                      }
                    }
                  }
                }
                else
                {
                  const int64_t polyc_count0 = polyc_min(5, (((Q - c1) - c5) - 1)) + 1;
                  const int64_t polyc_count1 = polyc_min(15, (((S - c2) - c6) - 1)) + 1;
                  if (polyc_count0 > 0 && polyc_count1 > 0)
                  {
                    if (polyc_count1 == 16)
                    {
                      float polyc_acc[6][16];
                      if ((((1 * c3 + 0 == 0) && (-1 * S + 16 >= 0))))
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c10 = polyc_lane1;
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
                            const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c10 = polyc_lane1;
                            const int64_t b = c0;
                            const int64_t q = ((c1 + c5) + c8);
                            const int64_t s = ((c2 + c6) + c10);
                            polyc_acc[polyc_lane0][polyc_lane1] = sc[((b) * Q + q) * S + s];
                          }
                        }
                      }
                      for (int64_t c7 = 0; c7 <= polyc_min(511, ((D - c3) - 1)); c7 += 1)
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c10 = polyc_lane1;
                            const int64_t b = c0;
                            const int64_t q = ((c1 + c5) + c8);
                            const int64_t s = ((c2 + c6) + c10);
                            const int64_t d = (c3 + c7);
                            polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (Qm[((b) * Q + q) * D + d] * polyc_panel_Km[((((s - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (d - c3)) * 16 + c10]));
                          }
                        }
                      }
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                            const int64_t c10 = polyc_lane1;
                            const int64_t b = c0;
                            const int64_t q = ((c1 + c5) + c8);
                            const int64_t s = ((c2 + c6) + c10);
                            sc[((b) * Q + q) * S + s] = polyc_acc[polyc_lane0][polyc_lane1];
                          }
                        }
                      }
                    }
                    else
                      if (polyc_count1 == 8)
                      {
                        float polyc_acc[6][8];
                        if ((((1 * c3 + 0 == 0) && (-1 * S + 16 >= 0))))
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
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
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t s = ((c2 + c6) + c10);
                              polyc_acc[polyc_lane0][polyc_lane1] = sc[((b) * Q + q) * S + s];
                            }
                          }
                        }
                        for (int64_t c7 = 0; c7 <= polyc_min(511, ((D - c3) - 1)); c7 += 1)
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t s = ((c2 + c6) + c10);
                              const int64_t d = (c3 + c7);
                              polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (Qm[((b) * Q + q) * D + d] * polyc_panel_Km[((((s - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (d - c3)) * 16 + c10]));
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t s = ((c2 + c6) + c10);
                              sc[((b) * Q + q) * S + s] = polyc_acc[polyc_lane0][polyc_lane1];
                            }
                          }
                        }
                      }
                      else
                        if (polyc_count1 < 8)
                        {
                          float polyc_acc[6][8];
                          if ((((1 * c3 + 0 == 0) && (-1 * S + 16 >= 0))))
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
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
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t s = ((c2 + c6) + c10);
                                polyc_acc[polyc_lane0][polyc_lane1] = sc[((b) * Q + q) * S + s];
                              }
                            }
                          }
                          for (int64_t c7 = 0; c7 <= polyc_min(511, ((D - c3) - 1)); c7 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t s = ((c2 + c6) + c10);
                                const int64_t d = (c3 + c7);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (Qm[((b) * Q + q) * D + d] * POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_Km[((((s - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (d - c3)) * 16 + c10])));
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t s = ((c2 + c6) + c10);
                                if (polyc_lane1 < polyc_count1)
                                  sc[((b) * Q + q) * S + s] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                        else
                        {
                          float polyc_acc[6][16];
                          if ((((1 * c3 + 0 == 0) && (-1 * S + 16 >= 0))))
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
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
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t s = ((c2 + c6) + c10);
                                polyc_acc[polyc_lane0][polyc_lane1] = sc[((b) * Q + q) * S + s];
                              }
                            }
                          }
                          for (int64_t c7 = 0; c7 <= polyc_min(511, ((D - c3) - 1)); c7 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t s = ((c2 + c6) + c10);
                                const int64_t d = (c3 + c7);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (Qm[((b) * Q + q) * D + d] * POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_Km[((((s - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (d - c3)) * 16 + c10])));
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t s = ((c2 + c6) + c10);
                                if (polyc_lane1 < polyc_count1)
                                  sc[((b) * Q + q) * S + s] = polyc_acc[polyc_lane0][polyc_lane1];
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
        for (int64_t c5 = 0; c5 <= polyc_min(767, ((Q - c1) - 1)); c5 += 1)
        {
          #pragma omp simd
          for (int64_t c7 = 0; c7 <= polyc_min(63, ((S - c2) - 1)); c7 += 1)
          {
            const int64_t b = c0;
            const int64_t q = (c1 + c5);
            const int64_t s = (c2 + c7);
            sc[((b) * Q + q) * S + s] = (sc[((b) * Q + q) * S + s] * (1.0f / sqrtf(((float)((D))))));
          }
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_attention_region1(int * polyc_status_at, int64_t B, int64_t Q, int64_t S, float *restrict sc, float *restrict mx, float *restrict p, float *restrict z)
{
  #pragma omp for collapse(2) schedule(static) nowait
  for (int64_t c0 = 0; c0 < B; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < Q; c1 += 1)
    {
      {
        const int64_t b = c0;
        const int64_t q = c1;
        mx[(b) * Q + q] = (-INFINITY);
      }
      {
        const int64_t b = c0;
        const int64_t q = c1;
        float polyc_acc;
        int polyc_nan;
        polyc_acc = mx[(b) * Q + q];
        polyc_nan = polyc_acc != polyc_acc;
        {
          float polyc_part0[32];
          int polyc_nans0[32];
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = (-INFINITY);
            polyc_nans0[polyc_lane] = 0;
          }
          int64_t polyc_from = 0;
          for (; polyc_from + 32 <= S; polyc_from += 32)
          {
            #pragma omp simd
            for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
            {
              const int64_t c2 = polyc_from + polyc_lane;
              {
                const int64_t s = c2;
                const float polyc_v = sc[((b) * Q + q) * S + s];
                polyc_part0[polyc_lane] = polyc_v > polyc_part0[polyc_lane] ? polyc_v : polyc_part0[polyc_lane];
                polyc_nans0[polyc_lane] |= polyc_v != polyc_v;
              }
            }
          }
          #pragma omp simd
          for (int64_t c2 = polyc_from; c2 < S; c2 += 1)
          {
            const int64_t s = c2;
            const float polyc_v = sc[((b) * Q + q) * S + s];
            polyc_part0[c2 - polyc_from] = polyc_v > polyc_part0[c2 - polyc_from] ? polyc_v : polyc_part0[c2 - polyc_from];
            polyc_nans0[c2 - polyc_from] |= polyc_v != polyc_v;
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = polyc_part0[polyc_lane + 16] > polyc_part0[polyc_lane] ? polyc_part0[polyc_lane + 16] : polyc_part0[polyc_lane];
            polyc_nans0[polyc_lane] |= polyc_nans0[polyc_lane + 16];
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 8; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = polyc_part0[polyc_lane + 8] > polyc_part0[polyc_lane] ? polyc_part0[polyc_lane + 8] : polyc_part0[polyc_lane];
            polyc_nans0[polyc_lane] |= polyc_nans0[polyc_lane + 8];
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 4; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = polyc_part0[polyc_lane + 4] > polyc_part0[polyc_lane] ? polyc_part0[polyc_lane + 4] : polyc_part0[polyc_lane];
            polyc_nans0[polyc_lane] |= polyc_nans0[polyc_lane + 4];
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 2; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = polyc_part0[polyc_lane + 2] > polyc_part0[polyc_lane] ? polyc_part0[polyc_lane + 2] : polyc_part0[polyc_lane];
            polyc_nans0[polyc_lane] |= polyc_nans0[polyc_lane + 2];
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 1; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = polyc_part0[polyc_lane + 1] > polyc_part0[polyc_lane] ? polyc_part0[polyc_lane + 1] : polyc_part0[polyc_lane];
            polyc_nans0[polyc_lane] |= polyc_nans0[polyc_lane + 1];
          }
          polyc_acc = polyc_part0[0] > polyc_acc ? polyc_part0[0] : polyc_acc;
          polyc_nan |= polyc_nans0[0];
        }
        mx[(b) * Q + q] = polyc_nan ? (float)NAN : polyc_acc;
      }
      {
        const int64_t b = c0;
        const int64_t q = c1;
        z[(b) * Q + q] = 0.0f;
      }
      #pragma omp simd
      for (int64_t c2 = S; c2 < (2 * S); c2 += 1)
      {
        const int64_t b = c0;
        const int64_t q = c1;
        const int64_t s = ((-S) + c2);
        p[((b) * Q + q) * S + s] = expf((sc[((b) * Q + q) * S + s] - mx[(b) * Q + q]));
      }
      {
        const int64_t b = c0;
        const int64_t q = c1;
        float polyc_acc;
        polyc_acc = z[(b) * Q + q];
        {
          float polyc_part0[32];
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = 0.0f;
          }
          int64_t polyc_from = S;
          for (; polyc_from + 32 <= (2 * S); polyc_from += 32)
          {
            #pragma omp simd
            for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
            {
              const int64_t c2 = polyc_from + polyc_lane;
              {
                const int64_t s = ((-S) + c2);
                polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + p[((b) * Q + q) * S + s]);
              }
            }
          }
          #pragma omp simd
          for (int64_t c2 = polyc_from; c2 < (2 * S); c2 += 1)
          {
            const int64_t s = ((-S) + c2);
            polyc_part0[c2 - polyc_from] = (polyc_part0[c2 - polyc_from] + p[((b) * Q + q) * S + s]);
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + polyc_part0[polyc_lane + 16]);
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 8; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + polyc_part0[polyc_lane + 8]);
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 4; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + polyc_part0[polyc_lane + 4]);
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 2; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + polyc_part0[polyc_lane + 2]);
          }
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 1; polyc_lane += 1)
          {
            polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + polyc_part0[polyc_lane + 1]);
          }
          polyc_acc = (polyc_acc + polyc_part0[0]);
        }
        z[(b) * Q + q] = polyc_acc;
      }
    }
  }
}

static __attribute__((noinline)) void polyc_attention_region2(int * polyc_status_at, int64_t B, int64_t Q, int64_t S, int64_t E, const float *restrict Vm, float *restrict O, float *restrict p, float *restrict z)
{
  #pragma omp for collapse(3) schedule(static) nowait
  for (int64_t c0 = 0; c0 < B; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < Q; c1 += 768)
    {
      for (int64_t c2 = 0; c2 < E; c2 += 64)
      {
        {
          if (!(((1 * S + -1 >= 0) && (-1 * E + 16 >= 0))))
          {
            for (int64_t c5 = 0; c5 <= polyc_min(767, ((Q - c1) - 1)); c5 += 1)
            {
              #pragma omp simd
              for (int64_t c7 = 0; c7 <= polyc_min(63, ((E - c2) - 1)); c7 += 1)
              {
                const int64_t b = c0;
                const int64_t q = (c1 + c5);
                const int64_t e = (c2 + c7);
                O[((b) * Q + q) * E + e] = 0.0f;
              }
            }
          }
          for (int64_t c3 = 0; c3 < S; c3 += 512)
          {
            _Alignas(64) float polyc_panel_Vm_storage[32768];
            float *restrict polyc_panel_Vm = polyc_panel_Vm_storage;
            {
              for (int64_t polyc_p1 = polyc_max(0, 0 - c0); polyc_p1 < polyc_min(1, B - c0); polyc_p1 += 1)
              {
                for (int64_t polyc_p2 = polyc_max(0, 0 - c3); polyc_p2 < polyc_min(512, S - c3); polyc_p2 += 1)
                {
                  const int64_t polyc_start = polyc_max(0, 0 - c2);
                  const int64_t polyc_end = polyc_min(64, E - c2);
                  for (int64_t polyc_block = polyc_start / 16; polyc_block * 16 < polyc_end; polyc_block += 1)
                  {
                    const int64_t polyc_first = polyc_max(0, polyc_start - polyc_block * 16);
                    const int64_t polyc_last = polyc_min(16, polyc_end - polyc_block * 16);
                    if (polyc_first == 0 && polyc_last == 16)
                    {
                      {
                        if (polyc_p2 + 8 < polyc_min(512, S - c3))
                        {
                          const int64_t e = c2 + polyc_block * 16;
                          const int64_t b = c0 + polyc_p1;
                          const int64_t s = c3 + polyc_p2 + 8;
                          __builtin_prefetch(&Vm[((b) * S + s) * E + e] + 0, 0, 3);
                        }
                        #pragma omp simd
                        for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
                        {
                          const int64_t e = c2 + polyc_block * 16 + polyc_lane;
                          const int64_t b = c0 + polyc_p1;
                          const int64_t s = c3 + polyc_p2;
                          polyc_panel_Vm[(((polyc_block) * 1 + polyc_p1) * 512 + polyc_p2) * 16 + polyc_lane] = Vm[((b) * S + s) * E + e];
                        }
                      }
                    }
                    else
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane = 0; polyc_lane < 16; polyc_lane += 1)
                        if (polyc_lane >= polyc_first && polyc_lane < polyc_last)
                        {
                          const int64_t e = c2 + polyc_block * 16 + polyc_lane;
                          const int64_t b = c0 + polyc_p1;
                          const int64_t s = c3 + polyc_p2;
                          polyc_panel_Vm[(((polyc_block) * 1 + polyc_p1) * 512 + polyc_p2) * 16 + polyc_lane] = Vm[((b) * S + s) * E + e];
                        }
                    }
                  }
                }
              }
            }
            for (int64_t c5 = 0; c5 <= polyc_min(767, ((Q - c1) - 1)); c5 += 6)
            {
              for (int64_t c6 = 0; c6 <= polyc_min(63, ((E - c2) - 1)); c6 += 16)
              {
                if (((((Q - c1) - c5) - 1) >= 5) && ((((E - c2) - c6) - 1) >= 15))
                {
                  float polyc_acc[6][16];
                  if ((((1 * c3 + 0 == 0) && (-1 * E + 16 >= 0))))
                  {
                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                      {
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
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
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
                        const int64_t b = c0;
                        const int64_t q = ((c1 + c5) + c8);
                        const int64_t e = ((c2 + c6) + c10);
                        polyc_acc[polyc_lane0][polyc_lane1] = O[((b) * Q + q) * E + e];
                      }
                    }
                  }
                  for (int64_t c7 = 0; c7 <= polyc_min(511, ((S - c3) - 1)); c7 += 1)
                  {
                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                      {
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
                        const int64_t b = c0;
                        const int64_t q = ((c1 + c5) + c8);
                        const int64_t e = ((c2 + c6) + c10);
                        const int64_t s = (c3 + c7);
                        polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (p[((b) * Q + q) * S + s] * polyc_panel_Vm[((((e - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (s - c3)) * 16 + c10]));
                      }
                    }
                  }
                  {
                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                    {
                      #pragma omp simd
                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                      {
                        const int64_t c8 = polyc_lane0;
                        const int64_t c10 = polyc_lane1;
                        const int64_t b = c0;
                        const int64_t q = ((c1 + c5) + c8);
                        const int64_t e = ((c2 + c6) + c10);
                        O[((b) * Q + q) * E + e] = polyc_acc[polyc_lane0][polyc_lane1];
                      }
                    }
                  }
                }
                else
                {
                  const int64_t polyc_count0 = polyc_min(5, (((Q - c1) - c5) - 1)) + 1;
                  const int64_t polyc_count1 = polyc_min(15, (((E - c2) - c6) - 1)) + 1;
                  if (polyc_count0 > 0 && polyc_count1 > 0)
                  {
                    int64_t polyc_shift = 0;
                    {
                      const int64_t c10 = -(16 - polyc_count1);
                      const int64_t e = ((c2 + c6) + c10);
                      if (e >= 0)
                        polyc_shift = 16 - polyc_count1;
                    }
                    if (polyc_shift > 0 && polyc_count1 > 8)
                    {
                      const int64_t polyc_base = -polyc_shift;
                      const int64_t polyc_own = polyc_shift;
                      {
                        float polyc_acc[6][16];
                        if ((((1 * c3 + 0 == 0) && (-1 * E + 16 >= 0))))
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1 + polyc_base;
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
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1 + polyc_base;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t e = ((c2 + c6) + c10);
                              polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 >= polyc_own) ? O[((b) * Q + q) * E + e] : 0.0f);
                            }
                          }
                        }
                        for (int64_t c7 = 0; c7 <= polyc_min(511, ((S - c3) - 1)); c7 += 1)
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1 + polyc_base;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t e = ((c2 + c6) + c10);
                              const int64_t s = (c3 + c7);
                              polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (p[((b) * Q + q) * S + s] * Vm[((b) * S + s) * E + e]));
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1 + polyc_base;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t e = ((c2 + c6) + c10);
                              if (polyc_lane1 >= polyc_own)
                                O[((b) * Q + q) * E + e] = polyc_acc[polyc_lane0][polyc_lane1];
                            }
                          }
                        }
                      }
                    }
                    else
                      if (polyc_count1 == 16)
                      {
                        float polyc_acc[6][16];
                        if ((((1 * c3 + 0 == 0) && (-1 * E + 16 >= 0))))
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
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
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t e = ((c2 + c6) + c10);
                              polyc_acc[polyc_lane0][polyc_lane1] = O[((b) * Q + q) * E + e];
                            }
                          }
                        }
                        for (int64_t c7 = 0; c7 <= polyc_min(511, ((S - c3) - 1)); c7 += 1)
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t e = ((c2 + c6) + c10);
                              const int64_t s = (c3 + c7);
                              polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (p[((b) * Q + q) * S + s] * polyc_panel_Vm[((((e - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (s - c3)) * 16 + c10]));
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c10 = polyc_lane1;
                              const int64_t b = c0;
                              const int64_t q = ((c1 + c5) + c8);
                              const int64_t e = ((c2 + c6) + c10);
                              O[((b) * Q + q) * E + e] = polyc_acc[polyc_lane0][polyc_lane1];
                            }
                          }
                        }
                      }
                      else
                        if (polyc_count1 == 8)
                        {
                          float polyc_acc[6][8];
                          if ((((1 * c3 + 0 == 0) && (-1 * E + 16 >= 0))))
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
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
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t e = ((c2 + c6) + c10);
                                polyc_acc[polyc_lane0][polyc_lane1] = O[((b) * Q + q) * E + e];
                              }
                            }
                          }
                          for (int64_t c7 = 0; c7 <= polyc_min(511, ((S - c3) - 1)); c7 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t e = ((c2 + c6) + c10);
                                const int64_t s = (c3 + c7);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (p[((b) * Q + q) * S + s] * polyc_panel_Vm[((((e - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (s - c3)) * 16 + c10]));
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c10 = polyc_lane1;
                                const int64_t b = c0;
                                const int64_t q = ((c1 + c5) + c8);
                                const int64_t e = ((c2 + c6) + c10);
                                O[((b) * Q + q) * E + e] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                        else
                          if (polyc_count1 < 8)
                          {
                            float polyc_acc[6][8];
                            if ((((1 * c3 + 0 == 0) && (-1 * E + 16 >= 0))))
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                {
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
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
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
                                  const int64_t b = c0;
                                  const int64_t q = ((c1 + c5) + c8);
                                  const int64_t e = ((c2 + c6) + c10);
                                  polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? O[((b) * Q + q) * E + e] : 0.0f);
                                }
                              }
                            }
                            for (int64_t c7 = 0; c7 <= polyc_min(511, ((S - c3) - 1)); c7 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                {
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
                                  const int64_t b = c0;
                                  const int64_t q = ((c1 + c5) + c8);
                                  const int64_t e = ((c2 + c6) + c10);
                                  const int64_t s = (c3 + c7);
                                  polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (p[((b) * Q + q) * S + s] * POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_Vm[((((e - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (s - c3)) * 16 + c10])));
                                }
                              }
                            }
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                {
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
                                  const int64_t b = c0;
                                  const int64_t q = ((c1 + c5) + c8);
                                  const int64_t e = ((c2 + c6) + c10);
                                  if (polyc_lane1 < polyc_count1)
                                    O[((b) * Q + q) * E + e] = polyc_acc[polyc_lane0][polyc_lane1];
                                }
                              }
                            }
                          }
                          else
                          {
                            float polyc_acc[6][16];
                            if ((((1 * c3 + 0 == 0) && (-1 * E + 16 >= 0))))
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
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
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
                                  const int64_t b = c0;
                                  const int64_t q = ((c1 + c5) + c8);
                                  const int64_t e = ((c2 + c6) + c10);
                                  polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? O[((b) * Q + q) * E + e] : 0.0f);
                                }
                              }
                            }
                            for (int64_t c7 = 0; c7 <= polyc_min(511, ((S - c3) - 1)); c7 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
                                  const int64_t b = c0;
                                  const int64_t q = ((c1 + c5) + c8);
                                  const int64_t e = ((c2 + c6) + c10);
                                  const int64_t s = (c3 + c7);
                                  polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (p[((b) * Q + q) * S + s] * POLYC_LANE_KEEP(polyc_lane1 < polyc_count1, polyc_panel_Vm[((((e - c10 - c2) / 16) * 1 + (b - c0)) * 512 + (s - c3)) * 16 + c10])));
                                }
                              }
                            }
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c8 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c10 = polyc_lane1;
                                  const int64_t b = c0;
                                  const int64_t q = ((c1 + c5) + c8);
                                  const int64_t e = ((c2 + c6) + c10);
                                  if (polyc_lane1 < polyc_count1)
                                    O[((b) * Q + q) * E + e] = polyc_acc[polyc_lane0][polyc_lane1];
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
        for (int64_t c5 = 0; c5 <= polyc_min(767, ((Q - c1) - 1)); c5 += 1)
        {
          #pragma omp simd
          for (int64_t c7 = 0; c7 <= polyc_min(63, ((E - c2) - 1)); c7 += 1)
          {
            const int64_t b = c0;
            const int64_t q = (c1 + c5);
            const int64_t e = (c2 + c7);
            O[((b) * Q + q) * E + e] = (O[((b) * Q + q) * E + e] * (1.0f / z[(b) * Q + q]));
          }
        }
      }
    }
  }
}

#undef polyc_status

int polyc_attention(int64_t B, int64_t Q, int64_t D, int64_t S, int64_t E, const float *restrict Qm, const float *restrict Km, const float *restrict Vm, float *restrict O)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(B) * polyc_extent(Q) * polyc_extent(S)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(S) * polyc_extent(D)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(S)) + (polyc_extent(B) * polyc_extent(Q)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(S)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(S)) + (polyc_extent(B) * polyc_extent(Q)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(S)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(E)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(E) * polyc_extent(S)) + (polyc_extent(B) * polyc_extent(Q) * polyc_extent(E));
  float *restrict sc = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(B) * polyc_extent(Q) * polyc_extent(S) + 64));
  float *restrict mx = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(B) * polyc_extent(Q) + 64));
  float *restrict p = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(B) * polyc_extent(Q) * polyc_extent(S) + 64));
  float *restrict z = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(B) * polyc_extent(Q) + 64));
  if (!sc)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  if (!mx)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  if (!p)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  if (!z)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  memset(sc + polyc_extent(B) * polyc_extent(Q) * polyc_extent(S), 0, sizeof(float) * 64);
  {
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_attention_region0(&polyc_status, B, Q, D, S, Qm, Km, sc);
    }
    else
    {
      polyc_attention_region0(&polyc_status, B, Q, D, S, Qm, Km, sc);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_attention_region1(&polyc_status, B, Q, S, sc, mx, p, z);
    }
    else
    {
      polyc_attention_region1(&polyc_status, B, Q, S, sc, mx, p, z);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_attention_region2(&polyc_status, B, Q, S, E, Vm, O, p, z);
    }
    else
    {
      polyc_attention_region2(&polyc_status, B, Q, S, E, Vm, O, p, z);
    }
  }
  polyc_done:
  free(sc);
  free(mx);
  free(p);
  free(z);
  return polyc_status;
}

int polyc_attention_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_attention(polyc_sizes[0], polyc_sizes[1], polyc_sizes[2], polyc_sizes[3], polyc_sizes[4], (const float *)polyc_args[0], (const float *)polyc_args[1], (const float *)polyc_args[2], (float *)polyc_args[3]);
}
