/*
 * polyc 0.1.0: operator `gesummv`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256 -falign-loops=64
 *
 * def gesummv(float32 alpha, float32 beta, float32(N, N) A, float32(N, N) B, float32(N) x) -> (float32 y) {
 *   t(i) +=! A(i, j) * x(j) where i in 0:N, j in 0:N
 *   y(i) +=! B(i, j) * x(j) where i in 0:N, j in 0:N
 *   y(i) = alpha * t(i) + beta * y(i) where i in 0:N
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
static __attribute__((noinline)) void polyc_gesummv_region0(int * polyc_status_at, int64_t N, float alpha, float beta, const float *restrict A, const float *restrict B, const float *restrict x, float *restrict y)
{
  #pragma omp for schedule(static) nowait
  for (int64_t c0 = 0; c0 < N; c0 += 8)
  {
    float t[8];
    {
      for (int64_t c2 = 0; c2 <= polyc_min(7, ((N - c0) - 1)); c2 += 1)
      {
        const int64_t i = (c0 + c2);
        t[(i) % 8] = 0.0f;
      }
      if ((((N - c0) - 1) >= 7))
      {
        float polyc_acc0;
        {
          const int64_t c2 = 0;
          const int64_t i = (c0 + c2);
          polyc_acc0 = t[(i) % 8];
        }
        float polyc_acc1;
        {
          const int64_t c2 = 1;
          const int64_t i = (c0 + c2);
          polyc_acc1 = t[(i) % 8];
        }
        float polyc_acc2;
        {
          const int64_t c2 = 2;
          const int64_t i = (c0 + c2);
          polyc_acc2 = t[(i) % 8];
        }
        float polyc_acc3;
        {
          const int64_t c2 = 3;
          const int64_t i = (c0 + c2);
          polyc_acc3 = t[(i) % 8];
        }
        float polyc_acc4;
        {
          const int64_t c2 = 4;
          const int64_t i = (c0 + c2);
          polyc_acc4 = t[(i) % 8];
        }
        float polyc_acc5;
        {
          const int64_t c2 = 5;
          const int64_t i = (c0 + c2);
          polyc_acc5 = t[(i) % 8];
        }
        float polyc_acc6;
        {
          const int64_t c2 = 6;
          const int64_t i = (c0 + c2);
          polyc_acc6 = t[(i) % 8];
        }
        float polyc_acc7;
        {
          const int64_t c2 = 7;
          const int64_t i = (c0 + c2);
          polyc_acc7 = t[(i) % 8];
        }
        #pragma omp simd reduction(+:polyc_acc0, polyc_acc1, polyc_acc2, polyc_acc3, polyc_acc4, polyc_acc5, polyc_acc6, polyc_acc7)
        for (int64_t c1 = 0; c1 < N; c1 += 1)
        {
          {
            const int64_t c2 = 0;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc0 = (polyc_acc0 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 1;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc1 = (polyc_acc1 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 2;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc2 = (polyc_acc2 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 3;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc3 = (polyc_acc3 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 4;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc4 = (polyc_acc4 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 5;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc5 = (polyc_acc5 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 6;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc6 = (polyc_acc6 + (A[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 7;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc7 = (polyc_acc7 + (A[(i) * N + j] * x[j]));
          }
        }
        {
          const int64_t c2 = 0;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc0;
        }
        {
          const int64_t c2 = 1;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc1;
        }
        {
          const int64_t c2 = 2;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc2;
        }
        {
          const int64_t c2 = 3;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc3;
        }
        {
          const int64_t c2 = 4;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc4;
        }
        {
          const int64_t c2 = 5;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc5;
        }
        {
          const int64_t c2 = 6;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc6;
        }
        {
          const int64_t c2 = 7;
          const int64_t i = (c0 + c2);
          t[(i) % 8] = polyc_acc7;
        }
      }
      else
      {
        for (int64_t c1 = 0; c1 < N; c1 += 1)
        {
          for (int64_t c2 = 0; c2 <= polyc_min(7, ((N - c0) - 1)); c2 += 1)
          {
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            t[(i) % 8] = (t[(i) % 8] + (A[(i) * N + j] * x[j]));
          }
        }
      }
      for (int64_t c2 = 0; c2 <= polyc_min(7, ((N - c0) - 1)); c2 += 1)
      {
        const int64_t i = (c0 + c2);
        y[i] = 0.0f;
      }
      if ((((N - c0) - 1) >= 7))
      {
        float polyc_acc0;
        {
          const int64_t c2 = 0;
          const int64_t i = (c0 + c2);
          polyc_acc0 = y[i];
        }
        float polyc_acc1;
        {
          const int64_t c2 = 1;
          const int64_t i = (c0 + c2);
          polyc_acc1 = y[i];
        }
        float polyc_acc2;
        {
          const int64_t c2 = 2;
          const int64_t i = (c0 + c2);
          polyc_acc2 = y[i];
        }
        float polyc_acc3;
        {
          const int64_t c2 = 3;
          const int64_t i = (c0 + c2);
          polyc_acc3 = y[i];
        }
        float polyc_acc4;
        {
          const int64_t c2 = 4;
          const int64_t i = (c0 + c2);
          polyc_acc4 = y[i];
        }
        float polyc_acc5;
        {
          const int64_t c2 = 5;
          const int64_t i = (c0 + c2);
          polyc_acc5 = y[i];
        }
        float polyc_acc6;
        {
          const int64_t c2 = 6;
          const int64_t i = (c0 + c2);
          polyc_acc6 = y[i];
        }
        float polyc_acc7;
        {
          const int64_t c2 = 7;
          const int64_t i = (c0 + c2);
          polyc_acc7 = y[i];
        }
        #pragma omp simd reduction(+:polyc_acc0, polyc_acc1, polyc_acc2, polyc_acc3, polyc_acc4, polyc_acc5, polyc_acc6, polyc_acc7)
        for (int64_t c1 = 0; c1 < N; c1 += 1)
        {
          {
            const int64_t c2 = 0;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc0 = (polyc_acc0 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 1;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc1 = (polyc_acc1 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 2;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc2 = (polyc_acc2 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 3;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc3 = (polyc_acc3 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 4;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc4 = (polyc_acc4 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 5;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc5 = (polyc_acc5 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 6;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc6 = (polyc_acc6 + (B[(i) * N + j] * x[j]));
          }
          {
            const int64_t c2 = 7;
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            polyc_acc7 = (polyc_acc7 + (B[(i) * N + j] * x[j]));
          }
        }
        {
          const int64_t c2 = 0;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc0;
        }
        {
          const int64_t c2 = 1;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc1;
        }
        {
          const int64_t c2 = 2;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc2;
        }
        {
          const int64_t c2 = 3;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc3;
        }
        {
          const int64_t c2 = 4;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc4;
        }
        {
          const int64_t c2 = 5;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc5;
        }
        {
          const int64_t c2 = 6;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc6;
        }
        {
          const int64_t c2 = 7;
          const int64_t i = (c0 + c2);
          y[i] = polyc_acc7;
        }
      }
      else
      {
        for (int64_t c1 = 0; c1 < N; c1 += 1)
        {
          for (int64_t c2 = 0; c2 <= polyc_min(7, ((N - c0) - 1)); c2 += 1)
          {
            const int64_t i = (c0 + c2);
            const int64_t j = c1;
            y[i] = (y[i] + (B[(i) * N + j] * x[j]));
          }
        }
      }
      for (int64_t c2 = 0; c2 <= polyc_min(7, ((N - c0) - 1)); c2 += 1)
      {
        const int64_t i = (c0 + c2);
        y[i] = ((alpha * t[(i) % 8]) + (beta * y[i]));
      }
    }
  }
}

#undef polyc_status

int polyc_gesummv(int64_t N, float alpha, float beta, const float *restrict A, const float *restrict B, const float *restrict x, float *restrict y)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(N)) + (polyc_extent(N) * polyc_extent(N)) + (polyc_extent(N)) + (polyc_extent(N) * polyc_extent(N)) + (polyc_extent(N));
  if (polyc_work >= 32768)
  {
    #pragma omp parallel
    polyc_gesummv_region0(&polyc_status, N, alpha, beta, A, B, x, y);
  }
  else
  {
    polyc_gesummv_region0(&polyc_status, N, alpha, beta, A, B, x, y);
  }
  return polyc_status;
}

int polyc_gesummv_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_gesummv(polyc_sizes[0], *(const float *)polyc_args[0], *(const float *)polyc_args[1], (const float *)polyc_args[2], (const float *)polyc_args[3], (const float *)polyc_args[4], (float *)polyc_args[5]);
}
