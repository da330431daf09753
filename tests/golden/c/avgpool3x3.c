/*
 * polyc 0.1.0: operator `avgpool3x3`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256 -falign-loops=64
 *
 * def avgpool3x3(float32(N, C, H, W) I) -> (float32 O) {
 *   O(n, c, h, w) +=! I(n, c, h + kh, w + kw) where n in 0:N, c in 0:C, h in 0:H - 2, w in 0:W - 2, kh in 0:3, kw in 0:3
 *   O(n, c, h, w) = O(n, c, h, w) * (1.0 / 9.0) where n in 0:N, c in 0:C, h in 0:H - 2, w in 0:W - 2
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





#define polyc_status (*polyc_status_at)
static __attribute__((noinline)) void polyc_avgpool3x3_region0(int * polyc_status_at, int64_t N, int64_t C, int64_t H, int64_t W, const float *restrict I, float *restrict O)
{
  #pragma omp for collapse(4) schedule(static) nowait
  for (int64_t c0 = 0; c0 < N; c0 += 1)
  {
    for (int64_t c1 = 0; c1 < C; c1 += 1)
    {
      for (int64_t c2 = 0; c2 < (H - 2); c2 += 1536)
      {
        for (int64_t c3 = 0; c3 < (W - 2); c3 += 256)
        {
          {
            if (!((1)))
            {
              for (int64_t c8 = 0; c8 <= polyc_min(1535, ((H - c2) - 3)); c8 += 1)
              {
                #pragma omp simd
                for (int64_t c11 = 0; c11 <= polyc_min(255, ((W - c3) - 3)); c11 += 1)
                {
                  const int64_t n = c0;
                  const int64_t c = c1;
                  const int64_t h = (c2 + c8);
                  const int64_t w = (c3 + c11);
                  O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = 0.0f;
                }
              }
            }
            {
              for (int64_t c8 = 0; c8 <= polyc_min(1535, ((H - c2) - 3)); c8 += 6)
              {
                for (int64_t c9 = 0; c9 <= polyc_min(255, ((W - c3) - 3)); c9 += 16)
                {
                  if (((((H - c2) - c8) - 3) >= 5) && ((((W - c3) - c9) - 3) >= 15))
                  {
                    float polyc_acc[6][16];
                    if (((1)))
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
                    else
                    {
                      for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                      {
                        #pragma omp simd
                        for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                        {
                          const int64_t c12 = polyc_lane0;
                          const int64_t c15 = polyc_lane1;
                          const int64_t n = c0;
                          const int64_t c = c1;
                          const int64_t h = ((c2 + c8) + c12);
                          const int64_t w = ((c3 + c9) + c15);
                          polyc_acc[polyc_lane0][polyc_lane1] = O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w];
                        }
                      }
                    }
                    for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                    {
                      for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                      {
                        for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                        {
                          #pragma omp simd
                          for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                          {
                            const int64_t c12 = polyc_lane0;
                            const int64_t c15 = polyc_lane1;
                            const int64_t n = c0;
                            const int64_t c = c1;
                            const int64_t h = ((c2 + c8) + c12);
                            const int64_t w = ((c3 + c9) + c15);
                            const int64_t kh = c10;
                            const int64_t kw = c11;
                            polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + I[(((n) * C + c) * H + h + kh) * W + kw + w]);
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
                          const int64_t n = c0;
                          const int64_t c = c1;
                          const int64_t h = ((c2 + c8) + c12);
                          const int64_t w = ((c3 + c9) + c15);
                          O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
                        }
                      }
                    }
                  }
                  else
                  {
                    const int64_t polyc_count0 = polyc_min(5, (((H - c2) - c8) - 3)) + 1;
                    const int64_t polyc_count1 = polyc_min(15, (((W - c3) - c9) - 3)) + 1;
                    if (polyc_count0 > 0 && polyc_count1 > 0)
                    {
                      int64_t polyc_shift = 0;
                      {
                        const int64_t c15 = -(16 - polyc_count1);
                        const int64_t w = ((c3 + c9) + c15);
                        if (w >= 0)
                          polyc_shift = 16 - polyc_count1;
                      }
                      if (polyc_shift > 0 && polyc_count1 > 8)
                      {
                        const int64_t polyc_base = -polyc_shift;
                        const int64_t polyc_own = polyc_shift;
                        {
                          float polyc_acc[6][16];
                          if (((1)))
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
                          else
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1 + polyc_base;
                                const int64_t n = c0;
                                const int64_t c = c1;
                                const int64_t h = ((c2 + c8) + c12);
                                const int64_t w = ((c3 + c9) + c15);
                                polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 >= polyc_own) ? O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] : 0.0f);
                              }
                            }
                          }
                          for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                          {
                            for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1 + polyc_base;
                                  const int64_t n = c0;
                                  const int64_t c = c1;
                                  const int64_t h = ((c2 + c8) + c12);
                                  const int64_t w = ((c3 + c9) + c15);
                                  const int64_t kh = c10;
                                  const int64_t kw = c11;
                                  polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + I[(((n) * C + c) * H + h + kh) * W + kw + w]);
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
                                const int64_t n = c0;
                                const int64_t c = c1;
                                const int64_t h = ((c2 + c8) + c12);
                                const int64_t w = ((c3 + c9) + c15);
                                if (polyc_lane1 >= polyc_own)
                                  O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                      }
                      else
                        if (polyc_count1 == 16)
                        {
                          float polyc_acc[6][16];
                          if (((1)))
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
                          else
                          {
                            for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                            {
                              #pragma omp simd
                              for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                              {
                                const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                const int64_t c15 = polyc_lane1;
                                const int64_t n = c0;
                                const int64_t c = c1;
                                const int64_t h = ((c2 + c8) + c12);
                                const int64_t w = ((c3 + c9) + c15);
                                polyc_acc[polyc_lane0][polyc_lane1] = O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w];
                              }
                            }
                          }
                          for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                          {
                            for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t n = c0;
                                  const int64_t c = c1;
                                  const int64_t h = ((c2 + c8) + c12);
                                  const int64_t w = ((c3 + c9) + c15);
                                  const int64_t kh = c10;
                                  const int64_t kw = c11;
                                  polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + I[(((n) * C + c) * H + h + kh) * W + kw + w]);
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
                                const int64_t n = c0;
                                const int64_t c = c1;
                                const int64_t h = ((c2 + c8) + c12);
                                const int64_t w = ((c3 + c9) + c15);
                                O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
                              }
                            }
                          }
                        }
                        else
                          if (polyc_count1 == 8)
                          {
                            float polyc_acc[6][8];
                            if (((1)))
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
                            else
                            {
                              for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                              {
                                #pragma omp simd
                                for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                {
                                  const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                  const int64_t c15 = polyc_lane1;
                                  const int64_t n = c0;
                                  const int64_t c = c1;
                                  const int64_t h = ((c2 + c8) + c12);
                                  const int64_t w = ((c3 + c9) + c15);
                                  polyc_acc[polyc_lane0][polyc_lane1] = O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w];
                                }
                              }
                            }
                            for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                            {
                              for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                              {
                                for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                {
                                  #pragma omp simd
                                  for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                  {
                                    const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                    const int64_t c15 = polyc_lane1;
                                    const int64_t n = c0;
                                    const int64_t c = c1;
                                    const int64_t h = ((c2 + c8) + c12);
                                    const int64_t w = ((c3 + c9) + c15);
                                    const int64_t kh = c10;
                                    const int64_t kw = c11;
                                    polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + I[(((n) * C + c) * H + h + kh) * W + kw + w]);
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
                                  const int64_t n = c0;
                                  const int64_t c = c1;
                                  const int64_t h = ((c2 + c8) + c12);
                                  const int64_t w = ((c3 + c9) + c15);
                                  O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
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
                                {
                                  float polyc_acc[6][8];
                                  if (((1)))
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
                                  else
                                  {
                                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                    {
                                      #pragma omp simd
                                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                      {
                                        const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                        const int64_t c15 = polyc_lane1 + polyc_base;
                                        const int64_t n = c0;
                                        const int64_t c = c1;
                                        const int64_t h = ((c2 + c8) + c12);
                                        const int64_t w = ((c3 + c9) + c15);
                                        polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 >= polyc_own) ? O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] : 0.0f);
                                      }
                                    }
                                  }
                                  for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                                  {
                                    for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                                    {
                                      for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                      {
                                        #pragma omp simd
                                        for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                        {
                                          const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                          const int64_t c15 = polyc_lane1 + polyc_base;
                                          const int64_t n = c0;
                                          const int64_t c = c1;
                                          const int64_t h = ((c2 + c8) + c12);
                                          const int64_t w = ((c3 + c9) + c15);
                                          const int64_t kh = c10;
                                          const int64_t kw = c11;
                                          polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + I[(((n) * C + c) * H + h + kh) * W + kw + w]);
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
                                        const int64_t n = c0;
                                        const int64_t c = c1;
                                        const int64_t h = ((c2 + c8) + c12);
                                        const int64_t w = ((c3 + c9) + c15);
                                        if (polyc_lane1 >= polyc_own)
                                          O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
                                      }
                                    }
                                  }
                                }
                              }
                            }
                            else
                              if (polyc_count1 < 8)
                              {
                                float polyc_acc[6][8];
                                if (((1)))
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
                                else
                                {
                                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                  {
                                    #pragma omp simd
                                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                    {
                                      const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                      const int64_t c15 = polyc_lane1;
                                      const int64_t n = c0;
                                      const int64_t c = c1;
                                      const int64_t h = ((c2 + c8) + c12);
                                      const int64_t w = ((c3 + c9) + c15);
                                      polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] : 0.0f);
                                    }
                                  }
                                }
                                for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                                {
                                  for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                                  {
                                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                    {
                                      #pragma omp simd
                                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 8; polyc_lane1 += 1)
                                      {
                                        const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                        const int64_t c15 = polyc_lane1;
                                        const int64_t n = c0;
                                        const int64_t c = c1;
                                        const int64_t h = ((c2 + c8) + c12);
                                        const int64_t w = ((c3 + c9) + c15);
                                        const int64_t kh = c10;
                                        const int64_t kw = c11;
                                        polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + ((polyc_lane1 < polyc_count1) ? I[(((n) * C + c) * H + h + kh) * W + kw + w] : 0.0f));
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
                                      const int64_t n = c0;
                                      const int64_t c = c1;
                                      const int64_t h = ((c2 + c8) + c12);
                                      const int64_t w = ((c3 + c9) + c15);
                                      if (polyc_lane1 < polyc_count1)
                                        O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
                                    }
                                  }
                                }
                              }
                              else
                              {
                                float polyc_acc[6][16];
                                if (((1)))
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
                                else
                                {
                                  for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                  {
                                    #pragma omp simd
                                    for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                    {
                                      const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                      const int64_t c15 = polyc_lane1;
                                      const int64_t n = c0;
                                      const int64_t c = c1;
                                      const int64_t h = ((c2 + c8) + c12);
                                      const int64_t w = ((c3 + c9) + c15);
                                      polyc_acc[polyc_lane0][polyc_lane1] = ((polyc_lane1 < polyc_count1) ? O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] : 0.0f);
                                    }
                                  }
                                }
                                for (int64_t c10 = 0; c10 <= 2; c10 += 1)
                                {
                                  for (int64_t c11 = 0; c11 <= 2; c11 += 1)
                                  {
                                    for (int64_t polyc_lane0 = 0; polyc_lane0 < 6; polyc_lane0 += 1)
                                    {
                                      #pragma omp simd
                                      for (int64_t polyc_lane1 = 0; polyc_lane1 < 16; polyc_lane1 += 1)
                                      {
                                        const int64_t c12 = polyc_min(polyc_lane0, polyc_count0 - 1);
                                        const int64_t c15 = polyc_lane1;
                                        const int64_t n = c0;
                                        const int64_t c = c1;
                                        const int64_t h = ((c2 + c8) + c12);
                                        const int64_t w = ((c3 + c9) + c15);
                                        const int64_t kh = c10;
                                        const int64_t kw = c11;
                                        polyc_acc[polyc_lane0][polyc_lane1] = (polyc_acc[polyc_lane0][polyc_lane1] + ((polyc_lane1 < polyc_count1) ? I[(((n) * C + c) * H + h + kh) * W + kw + w] : 0.0f));
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
                                      const int64_t n = c0;
                                      const int64_t c = c1;
                                      const int64_t h = ((c2 + c8) + c12);
                                      const int64_t w = ((c3 + c9) + c15);
                                      if (polyc_lane1 < polyc_count1)
                                        O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = polyc_acc[polyc_lane0][polyc_lane1];
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
          for (int64_t c8 = 0; c8 <= polyc_min(1535, ((H - c2) - 3)); c8 += 1)
          {
            #pragma omp simd
            for (int64_t c11 = 0; c11 <= polyc_min(255, ((W - c3) - 3)); c11 += 1)
            {
              const int64_t n = c0;
              const int64_t c = c1;
              const int64_t h = (c2 + c8);
              const int64_t w = (c3 + c11);
              O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] = (O[(((n) * C + c) * (H - 2) + h) * (W - 2) + w] * (1.0f / 9.0f));
            }
          }
        }
      }
    }
  }
}

#undef polyc_status

int polyc_avgpool3x3(int64_t N, int64_t C, int64_t H, int64_t W, const float *restrict I, float *restrict O)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(N) * polyc_extent(C) * polyc_extent(H - 2) * polyc_extent(W - 2)) + (polyc_extent(N) * polyc_extent(C) * polyc_extent(H - 2) * polyc_extent(W - 2) * polyc_extent(3) * polyc_extent(3)) + (polyc_extent(N) * polyc_extent(C) * polyc_extent(H - 2) * polyc_extent(W - 2));
  if (polyc_work >= 32768)
  {
    #pragma omp parallel
    polyc_avgpool3x3_region0(&polyc_status, N, C, H, W, I, O);
  }
  else
  {
    polyc_avgpool3x3_region0(&polyc_status, N, C, H, W, I, O);
  }
  return polyc_status;
}

int polyc_avgpool3x3_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_avgpool3x3(polyc_sizes[0], polyc_sizes[1], polyc_sizes[2], polyc_sizes[3], (const float *)polyc_args[0], (float *)polyc_args[1]);
}
