/*
 * polyc 0.1.0: operator `tensor_contraction`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256
 *
 * def tensor_contraction(float32(SA, SE, SB, SF) A, float32(SD, SF, SC, SE) B) -> (float32 C) {
 *   A_t0213(t0, t2, t1, t3) = A(t0, t1, t2, t3) where t0 in 0:SA, t2 in 0:SB, t1 in 0:SE, t3 in 0:SF
 *   B_t2310(t2, t3, t1, t0) = B(t0, t1, t2, t3) where t2 in 0:SC, t3 in 0:SE, t1 in 0:SF, t0 in 0:SD
 *   C(a, b, c, d) +=! A_t0213(a, b, e, f) * B_t2310(c, e, f, d) where a in 0:SA, b in 0:SB, c in 0:SC, d in 0:SD, e in 0:SE, f in 0:SF
 * }
 */
#define _GNU_SOURCE  /* sched_getcpu, CPU_SET: polyc/codegen/thread_placement.py */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <omp.h>

static inline int64_t polyc_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t polyc_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t polyc_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t polyc_extent(int64_t a) { return a > 0 ? a : 0; }
/* Temporaries start on a cache line: a 64-byte vector at malloc's 16-byte alignment
   spans two lines at every load and store. */
static inline void *polyc_alloc(size_t bytes) {
  return bytes > SIZE_MAX - 63 ? NULL : aligned_alloc(64, (bytes + 63) / 64 * 64);
}

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
    polyc_transpose_32_16_8_v r[8];
    for (int i = 0; i < 8; i++) memcpy(&r[i], src + (bj + i) * ls + bi, sizeof r[i]);
    for (int i = 0; i < 8; i++) if (!(i & 4)) {
      polyc_transpose_32_16_8_v a = r[i], b = r[i + 4];
      r[i] = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 2, 3, 8, 9, 10, 11);
      r[i + 4] = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 4, 5, 6, 7, 12, 13, 14, 15);
    }
    for (int i = 0; i < 8; i++) if (!(i & 2)) {
      polyc_transpose_32_16_8_v a = r[i], b = r[i + 2];
      r[i] = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 1, 8, 9, 4, 5, 12, 13);
      r[i + 2] = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int i = 0; i < 8; i++) if (!(i & 1)) {
      polyc_transpose_32_16_8_v a = r[i], b = r[i + 1];
      r[i] = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 0, 8, 2, 10, 4, 12, 6, 14);
      r[i + 1] = POLYC_SHUFFLE(polyc_transpose_32_16_8_m, a, b, 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int i = 0; i < 8; i++)
      memcpy(dst + (bi + i) * ld + bj, &r[i], sizeof r[i]);
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
static __attribute__((noinline)) void polyc_tensor_contraction_region0(int * polyc_status_at, int64_t SE, int64_t SF, int64_t SD, int64_t SC, const float *restrict B, float *restrict B_t2310)
{
  #pragma omp for collapse(4) schedule(static) nowait
  for (int64_t c0 = 0; c0 < SC; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < SE; c1 += 256)
    {
      for (int64_t c2 = 0; c2 < SF; c2 += 1)
      {
        for (int64_t c3 = 0; c3 < SD; c3 += 256)
        {
          for (int64_t c5 = 0; c5 <= polyc_min(255, ((SE - c1) - 1)); c5 += 16)
          {
            for (int64_t c7 = 0; c7 <= polyc_min(255, ((SD - c3) - 1)); c7 += 16)
            {
              if (((polyc_min(15, (((SE - c1) - c5) - 1)) + 1)) - (0) == 16 && ((polyc_min(15, (((SD - c3) - c7) - 1)) + 1)) - (0) == 16)
              {
                float *polyc_dst;
                const float *polyc_src;
                int64_t polyc_ld, polyc_ls;
                {
                  const int64_t c9 = 0 + 0;
                  const int64_t c11 = 0 + 0;
                  const int64_t t2 = c0;
                  const int64_t t3 = ((c1 + c5) + c9);
                  const int64_t t1 = c2;
                  const int64_t t0 = ((c3 + c7) + c11);
                  polyc_dst = &B_t2310[(((t2) * SE + t3) * SF + t1) * SD + t0];
                  polyc_src = &B[(((t0) * SF + t1) * SC + t2) * SE + t3];
                }
                {
                  const int64_t c9 = 0 + 1;
                  const int64_t c11 = 0 + 0;
                  const int64_t t2 = c0;
                  const int64_t t3 = ((c1 + c5) + c9);
                  const int64_t t1 = c2;
                  const int64_t t0 = ((c3 + c7) + c11);
                  polyc_ld = &B_t2310[(((t2) * SE + t3) * SF + t1) * SD + t0] - polyc_dst;
                }
                {
                  const int64_t c9 = 0 + 0;
                  const int64_t c11 = 0 + 1;
                  const int64_t t2 = c0;
                  const int64_t t3 = ((c1 + c5) + c9);
                  const int64_t t1 = c2;
                  const int64_t t0 = ((c3 + c7) + c11);
                  polyc_ls = &B[(((t0) * SF + t1) * SC + t2) * SE + t3] - polyc_src;
                }
                polyc_transpose_32_16_8(polyc_dst, polyc_ld, polyc_src, polyc_ls);
              }
              else
              {
                for (int64_t c9 = 0; c9 <= polyc_min(15, (((SE - c1) - c5) - 1)); c9 += 1)
                {
                  for (int64_t c11 = 0; c11 <= polyc_min(15, (((SD - c3) - c7) - 1)); c11 += 1)
                  {
                    const int64_t t2 = c0;
                    const int64_t t3 = ((c1 + c5) + c9);
                    const int64_t t1 = c2;
                    const int64_t t0 = ((c3 + c7) + c11);
                    B_t2310[(((t2) * SE + t3) * SF + t1) * SD + t0] = B[(((t0) * SF + t1) * SC + t2) * SE + t3];
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

static __attribute__((noinline)) void polyc_tensor_contraction_region1(int * polyc_status_at, int64_t SA, int64_t SE, int64_t SB, int64_t SF, const float *restrict A, float *restrict A_t0213)
{
  #pragma omp for collapse(3) schedule(static) nowait
  for (int64_t c0 = 0; c0 < SA; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < SB; c1 += 1)
    {
      for (int64_t c2 = 0; c2 < SE; c2 += 1)
      {
        #pragma omp simd
        for (int64_t c3 = 0; c3 < SF; c3 += 1)
        {
          const int64_t t0 = c0;
          const int64_t t2 = c1;
          const int64_t t1 = c2;
          const int64_t t3 = c3;
          A_t0213[(((t0) * SB + t2) * SE + t1) * SF + t3] = A[(((t0) * SE + t1) * SB + t2) * SF + t3];
        }
      }
    }
  }
}

static __attribute__((noinline)) void polyc_tensor_contraction_region2(int * polyc_status_at, int64_t SA, int64_t SE, int64_t SB, int64_t SF, int64_t SD, int64_t SC, float *restrict C, float *restrict A_t0213, float *restrict B_t2310)
{
  #pragma omp for collapse(4) schedule(static) nowait
  for (int64_t c0 = 0; c0 < SA; c0 += 2)
  {
    for (int64_t c1 = 0; c1 < SB; c1 += 6)
    {
      for (int64_t c2 = 0; c2 < SC; c2 += 1)
      {
        for (int64_t c3 = 0; c3 < SD; c3 += 16)
        {
          if (!(((1 * SE + -1 >= 0) && (1 * SF + -1 >= 0) && (-1 * SD + 16 >= 0))))
          {
            for (int64_t c6 = 0; c6 <= polyc_min(1, ((SA - c0) - 1)); c6 += 1)
            {
              for (int64_t c7 = 0; c7 <= polyc_min(5, ((SB - c1) - 1)); c7 += 1)
              {
                #pragma omp simd
                for (int64_t c11 = 0; c11 <= polyc_min(15, ((SD - c3) - 1)); c11 += 1)
                {
                  const int64_t a = (c0 + c6);
                  const int64_t b = (c1 + c7);
                  const int64_t c = c2;
                  const int64_t d = (c3 + c11);
                  C[(((a) * SB + b) * SC + c) * SD + d] = 0.0f;
                }
              }
            }
          }
          for (int64_t c4 = 0; c4 < SE; c4 += 8)
          {
            for (int64_t c5 = 0; c5 < SF; c5 += 256)
            {
              for (int64_t c6 = 0; c6 <= polyc_min(1, ((SA - c0) - 1)); c6 += 1)
              {
                if ((((SB - c1) - 1) >= 5) && (((SD - c3) - 1) >= 15))
                  if ((((1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * SD + 16 >= 0))))
                  {
                    float polyc_acc[6][16];
                    {
                      for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                      {
                        #pragma omp simd
                        for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                        {
                          const int64_t c12 = polyc_lane0;
                          const int64_t c15 = polyc_lane1;
                          polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                        }
                      }
                    }
                    for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                    {
                      for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c12 = polyc_lane0;
                            const int64_t c15 = polyc_lane1;
                            const int64_t a = (c0 + c6);
                            const int64_t b = (c1 + c12);
                            const int64_t c = c2;
                            const int64_t d = (c3 + c15);
                            const int64_t e = (c4 + c10);
                            const int64_t f = (c5 + c11);
                            polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                          }
                        }
                      }
                    }
                    {
                      for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                      {
                        #pragma omp simd
                        for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                        {
                          const int64_t c12 = polyc_lane0;
                          const int64_t c15 = polyc_lane1;
                          const int64_t a = (c0 + c6);
                          const int64_t b = (c1 + c12);
                          const int64_t c = c2;
                          const int64_t d = (c3 + c15);
                          C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                        }
                      }
                    }
                  }
                  else
                  {
                    float polyc_acc[6][16];
                    {
                      for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                      {
                        #pragma omp simd
                        for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                        {
                          const int64_t c12 = polyc_lane0;
                          const int64_t c15 = polyc_lane1;
                          const int64_t a = (c0 + c6);
                          const int64_t b = (c1 + c12);
                          const int64_t c = c2;
                          const int64_t d = (c3 + c15);
                          polyc_acc[polyc_lane0][polyc_lane1] = C[(((a) * SB + b) * SC + c) * SD + d];
                        }
                      }
                    }
                    for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                    {
                      for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c12 = polyc_lane0;
                            const int64_t c15 = polyc_lane1;
                            const int64_t a = (c0 + c6);
                            const int64_t b = (c1 + c12);
                            const int64_t c = c2;
                            const int64_t d = (c3 + c15);
                            const int64_t e = (c4 + c10);
                            const int64_t f = (c5 + c11);
                            polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                          }
                        }
                      }
                    }
                    {
                      for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                      {
                        #pragma omp simd
                        for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                        {
                          const int64_t c12 = polyc_lane0;
                          const int64_t c15 = polyc_lane1;
                          const int64_t a = (c0 + c6);
                          const int64_t b = (c1 + c12);
                          const int64_t c = c2;
                          const int64_t d = (c3 + c15);
                          C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                        }
                      }
                    }
                  }
                else
                {
                  const int64_t polyc_count0 = polyc_min(5, ((SB - c1) - 1)) + 1;
                  const int64_t polyc_count1 = polyc_min(15, ((SD - c3) - 1)) + 1;
                  if (polyc_count0 > 0 && polyc_count1 > 0)
                  {
                    int64_t polyc_shift = 0;
                    {
                      const int64_t c15 = -(16 - polyc_count1);
                      const int64_t d = (c3 + c15);
                      if (d >= 0)
                        polyc_shift = 16 - polyc_count1;
                    }
                    if (polyc_shift > 0 || polyc_count1 == 16)
                    {
                      const int64_t polyc_base = -polyc_shift;
                      const int64_t polyc_own = polyc_shift;
                      if ((((1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * SD + 16 >= 0))))
                      {
                        float polyc_acc[6][16];
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c15 = polyc_lane1 + polyc_base;
                              polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                            }
                          }
                        }
                        for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                        {
                          for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1 + polyc_base;
                                const int64_t a = (c0 + c6);
                                const int64_t b = (c1 + c12);
                                const int64_t c = c2;
                                const int64_t d = (c3 + c15);
                                const int64_t e = (c4 + c10);
                                const int64_t f = (c5 + c11);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                              }
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c15 = polyc_lane1 + polyc_base;
                              const int64_t a = (c0 + c6);
                              const int64_t b = (c1 + c12);
                              const int64_t c = c2;
                              const int64_t d = (c3 + c15);
                              if (polyc_lane1 >= polyc_own)
                                C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                            }
                          }
                        }
                      }
                      else
                      {
                        float polyc_acc[6][16];
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c15 = polyc_lane1 + polyc_base;
                              const int64_t a = (c0 + c6);
                              const int64_t b = (c1 + c12);
                              const int64_t c = c2;
                              const int64_t d = (c3 + c15);
                              polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 >= polyc_own) ? C[(((a) * SB + b) * SC + c) * SD + d] : 0.0f);
                            }
                          }
                        }
                        for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                        {
                          for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1 + polyc_base;
                                const int64_t a = (c0 + c6);
                                const int64_t b = (c1 + c12);
                                const int64_t c = c2;
                                const int64_t d = (c3 + c15);
                                const int64_t e = (c4 + c10);
                                const int64_t f = (c5 + c11);
                                polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                              }
                            }
                          }
                        }
                        {
                          for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                          {
                            #pragma omp simd
                            for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                            {
                              const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                              const int64_t c15 = polyc_lane1 + polyc_base;
                              const int64_t a = (c0 + c6);
                              const int64_t b = (c1 + c12);
                              const int64_t c = c2;
                              const int64_t d = (c3 + c15);
                              if (polyc_lane1 >= polyc_own)
                                C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                            }
                          }
                        }
                      }
                    }
                    else
                      if (polyc_count1 == 8)
                      {
                        if ((((1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * SD + 16 >= 0))))
                        {
                          float polyc_acc[6][8];
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1;
                                polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                              }
                            }
                          }
                          for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                          {
                            for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t a = (c0 + c6);
                                  const int64_t b = (c1 + c12);
                                  const int64_t c = c2;
                                  const int64_t d = (c3 + c15);
                                  const int64_t e = (c4 + c10);
                                  const int64_t f = (c5 + c11);
                                  polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                                }
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1;
                                const int64_t a = (c0 + c6);
                                const int64_t b = (c1 + c12);
                                const int64_t c = c2;
                                const int64_t d = (c3 + c15);
                                C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                        else
                        {
                          float polyc_acc[6][8];
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1;
                                const int64_t a = (c0 + c6);
                                const int64_t b = (c1 + c12);
                                const int64_t c = c2;
                                const int64_t d = (c3 + c15);
                                polyc_acc[polyc_lane0][polyc_lane1] = C[(((a) * SB + b) * SC + c) * SD + d];
                              }
                            }
                          }
                          for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                          {
                            for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t a = (c0 + c6);
                                  const int64_t b = (c1 + c12);
                                  const int64_t c = c2;
                                  const int64_t d = (c3 + c15);
                                  const int64_t e = (c4 + c10);
                                  const int64_t f = (c5 + c11);
                                  polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                                }
                              }
                            }
                          }
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1;
                                const int64_t a = (c0 + c6);
                                const int64_t b = (c1 + c12);
                                const int64_t c = c2;
                                const int64_t d = (c3 + c15);
                                C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                      }
                      else
                        if (polyc_count1 > 8)
                        {
                          for (int64_t polyc_sub = 0; polyc_sub < polyc_count1; polyc_sub += 8)
                          {
                            const int64_t polyc_base = polyc_min(polyc_sub, polyc_count1 - 8);
                            const int64_t polyc_own = polyc_sub - polyc_base;
                            if ((((1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * SD + 16 >= 0))))
                            {
                              float polyc_acc[6][8];
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1 + polyc_base;
                                    polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                                  }
                                }
                              }
                              for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                              {
                                for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                                {
                                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                  {
                                    #pragma omp simd
                                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                    {
                                      const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                      const int64_t c15 = polyc_lane1 + polyc_base;
                                      const int64_t a = (c0 + c6);
                                      const int64_t b = (c1 + c12);
                                      const int64_t c = c2;
                                      const int64_t d = (c3 + c15);
                                      const int64_t e = (c4 + c10);
                                      const int64_t f = (c5 + c11);
                                      polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                                    }
                                  }
                                }
                              }
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1 + polyc_base;
                                    const int64_t a = (c0 + c6);
                                    const int64_t b = (c1 + c12);
                                    const int64_t c = c2;
                                    const int64_t d = (c3 + c15);
                                    if (polyc_lane1 >= polyc_own)
                                      C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                                  }
                                }
                              }
                            }
                            else
                            {
                              float polyc_acc[6][8];
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1 + polyc_base;
                                    const int64_t a = (c0 + c6);
                                    const int64_t b = (c1 + c12);
                                    const int64_t c = c2;
                                    const int64_t d = (c3 + c15);
                                    polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 >= polyc_own) ? C[(((a) * SB + b) * SC + c) * SD + d] : 0.0f);
                                  }
                                }
                              }
                              for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                              {
                                for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                                {
                                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                  {
                                    #pragma omp simd
                                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                    {
                                      const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                      const int64_t c15 = polyc_lane1 + polyc_base;
                                      const int64_t a = (c0 + c6);
                                      const int64_t b = (c1 + c12);
                                      const int64_t c = c2;
                                      const int64_t d = (c3 + c15);
                                      const int64_t e = (c4 + c10);
                                      const int64_t f = (c5 + c11);
                                      polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * B_t2310[(((c) * SE + e) * SF + f) * SD + d]));
                                    }
                                  }
                                }
                              }
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1 + polyc_base;
                                    const int64_t a = (c0 + c6);
                                    const int64_t b = (c1 + c12);
                                    const int64_t c = c2;
                                    const int64_t d = (c3 + c15);
                                    if (polyc_lane1 >= polyc_own)
                                      C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                                  }
                                }
                              }
                            }
                          }
                        }
                        else
                        {
                          if ((((1 * c5 + 0 == 0) && (1 * c4 + 0 == 0) && (-1 * SD + 16 >= 0))))
                          {
                            float polyc_acc[6][16];
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  polyc_acc[polyc_lane0][polyc_lane1] = 0.0f;
                                }
                              }
                            }
                            for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                            {
                              for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1;
                                    const int64_t a = (c0 + c6);
                                    const int64_t b = (c1 + c12);
                                    const int64_t c = c2;
                                    const int64_t d = (c3 + c15);
                                    const int64_t e = (c4 + c10);
                                    const int64_t f = (c5 + c11);
                                    polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * ((polyc_lane1 < polyc_count1) ? B_t2310[(((c) * SE + e) * SF + f) * SD + d] : 0.0f)));
                                  }
                                }
                              }
                            }
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t a = (c0 + c6);
                                  const int64_t b = (c1 + c12);
                                  const int64_t c = c2;
                                  const int64_t d = (c3 + c15);
                                  if (polyc_lane1 < polyc_count1)
                                    C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
                                }
                              }
                            }
                          }
                          else
                          {
                            float polyc_acc[6][16];
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t a = (c0 + c6);
                                  const int64_t b = (c1 + c12);
                                  const int64_t c = c2;
                                  const int64_t d = (c3 + c15);
                                  polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? C[(((a) * SB + b) * SC + c) * SD + d] : 0.0f);
                                }
                              }
                            }
                            for (int64_t c10 = 0; c10 <= polyc_min(7, ((SE - c4) - 1)); c10 += 1)
                            {
                              for (int64_t c11 = 0; c11 <= polyc_min(255, ((SF - c5) - 1)); c11 += 1)
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1;
                                    const int64_t a = (c0 + c6);
                                    const int64_t b = (c1 + c12);
                                    const int64_t c = c2;
                                    const int64_t d = (c3 + c15);
                                    const int64_t e = (c4 + c10);
                                    const int64_t f = (c5 + c11);
                                    polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + (A_t0213[(((a) * SB + b) * SE + e) * SF + f] * ((polyc_lane1 < polyc_count1) ? B_t2310[(((c) * SE + e) * SF + f) * SD + d] : 0.0f)));
                                  }
                                }
                              }
                            }
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t a = (c0 + c6);
                                  const int64_t b = (c1 + c12);
                                  const int64_t c = c2;
                                  const int64_t d = (c3 + c15);
                                  if (polyc_lane1 < polyc_count1)
                                    C[(((a) * SB + b) * SC + c) * SD + d] = polyc_acc[polyc_lane0][polyc_lane1];
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
  }
}

#undef polyc_status

int polyc_tensor_contraction(int64_t SA, int64_t SE, int64_t SB, int64_t SF, int64_t SD, int64_t SC, const float *restrict A, const float *restrict B, float *restrict C)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(SA) * polyc_extent(SB) * polyc_extent(SE) * polyc_extent(SF)) + (polyc_extent(SC) * polyc_extent(SE) * polyc_extent(SF) * polyc_extent(SD)) + (polyc_extent(SA) * polyc_extent(SB) * polyc_extent(SC) * polyc_extent(SD)) + (polyc_extent(SA) * polyc_extent(SB) * polyc_extent(SC) * polyc_extent(SD) * polyc_extent(SE) * polyc_extent(SF));
  float *restrict A_t0213 = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(SA) * polyc_extent(SB) * polyc_extent(SE) * polyc_extent(SF)));
  float *restrict B_t2310 = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(SC) * polyc_extent(SE) * polyc_extent(SF) * polyc_extent(SD)));
  if (!A_t0213)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  if (!B_t2310)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  {
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_tensor_contraction_region0(&polyc_status, SE, SF, SD, SC, B, B_t2310);
    }
    else
    {
      polyc_tensor_contraction_region0(&polyc_status, SE, SF, SD, SC, B, B_t2310);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_tensor_contraction_region1(&polyc_status, SA, SE, SB, SF, A, A_t0213);
    }
    else
    {
      polyc_tensor_contraction_region1(&polyc_status, SA, SE, SB, SF, A, A_t0213);
    }
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_tensor_contraction_region2(&polyc_status, SA, SE, SB, SF, SD, SC, C, A_t0213, B_t2310);
    }
    else
    {
      polyc_tensor_contraction_region2(&polyc_status, SA, SE, SB, SF, SD, SC, C, A_t0213, B_t2310);
    }
  }
  polyc_done:
  free(A_t0213);
  free(B_t2310);
  return polyc_status;
}

int polyc_tensor_contraction_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_tensor_contraction(polyc_sizes[0], polyc_sizes[1], polyc_sizes[2], polyc_sizes[3], polyc_sizes[4], polyc_sizes[5], (const float *)polyc_args[0], (const float *)polyc_args[1], (float *)polyc_args[2]);
}
