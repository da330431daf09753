/*
 * polyc 0.1.0: operator `cross_entropy`
 * options: fusion=default parallel=True optimize=True canonicalize=True check_gathers=True place_threads=False machine=zen3 cc=cc cflags=-O3 -march=native -fopenmp -fPIC -shared -fwrapv -fno-math-errno -std=gnu11 -mprefer-vector-width=256 -falign-loops=64
 *
 * def cross_entropy(float32(B, C) X, int32(B) T) -> (float32 loss) {
 *   mx(b) max=! X(b, c) where b in 0:B, c in 0:C
 *   s(b) +=! exp(X(b, c) - mx(b)) where b in 0:B, c in 0:C
 *   loss +=! log(s(b)) + mx(b) - X(b, T(b)) where b in 0:B
 *   loss = loss / B
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



// polyc-link: -lmvec
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float logf(float);

#define polyc_status (*polyc_status_at)
static __attribute__((noinline)) void polyc_cross_entropy_region0(int * polyc_status_at, int64_t B, int64_t C, const float *restrict X, float *restrict mx, float *restrict s)
{
  #pragma omp for schedule(static) nowait
  for (int64_t c0 = 0; c0 < B; c0 += 1)
  {
    {
      const int64_t b = c0;
      mx[b] = (-INFINITY);
    }
    {
      const int64_t b = c0;
      float polyc_acc;
      int polyc_nan;
      polyc_acc = mx[b];
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
        for (; polyc_from + 32 <= C; polyc_from += 32)
        {
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
          {
            const int64_t c1 = polyc_from + polyc_lane;
            {
              const int64_t c = c1;
              const float polyc_v = X[(b) * C + c];
              polyc_part0[polyc_lane] = polyc_v > polyc_part0[polyc_lane] ? polyc_v : polyc_part0[polyc_lane];
              polyc_nans0[polyc_lane] |= polyc_v != polyc_v;
            }
          }
        }
        #pragma omp simd
        for (int64_t c1 = polyc_from; c1 < C; c1 += 1)
        {
          const int64_t c = c1;
          const float polyc_v = X[(b) * C + c];
          polyc_part0[c1 - polyc_from] = polyc_v > polyc_part0[c1 - polyc_from] ? polyc_v : polyc_part0[c1 - polyc_from];
          polyc_nans0[c1 - polyc_from] |= polyc_v != polyc_v;
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
      mx[b] = polyc_nan ? (float)NAN : polyc_acc;
    }
    {
      const int64_t b = c0;
      s[b] = 0.0f;
    }
    {
      const int64_t b = c0;
      float polyc_acc;
      polyc_acc = s[b];
      {
        float polyc_part0[32];
        #pragma omp simd
        for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
        {
          polyc_part0[polyc_lane] = 0.0f;
        }
        int64_t polyc_from = C;
        for (; polyc_from + 32 <= (2 * C); polyc_from += 32)
        {
          #pragma omp simd
          for (int64_t polyc_lane = 0; polyc_lane < 32; polyc_lane += 1)
          {
            const int64_t c1 = polyc_from + polyc_lane;
            {
              const int64_t c = ((-C) + c1);
              polyc_part0[polyc_lane] = (polyc_part0[polyc_lane] + expf((X[(b) * C + c] - mx[b])));
            }
          }
        }
        #pragma omp simd
        for (int64_t c1 = polyc_from; c1 < (2 * C); c1 += 1)
        {
          const int64_t c = ((-C) + c1);
          polyc_part0[c1 - polyc_from] = (polyc_part0[c1 - polyc_from] + expf((X[(b) * C + c] - mx[b])));
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
      s[b] = polyc_acc;
    }
  }
}

static __attribute__((noinline)) void polyc_cross_entropy_region1(int * polyc_status_at, int64_t B, int64_t C, const float *restrict X, const int32_t *restrict T, float *restrict loss, float *restrict mx, float *restrict s, float *restrict polyc_private_loss)
{
  {
    float *restrict polyc_mine_loss = polyc_private_loss + (size_t)omp_get_thread_num() * (size_t)polyc_max(1, 1);
    for (int64_t polyc_e = 0; polyc_e < 1; polyc_e += 1)
      polyc_mine_loss[polyc_e] = 0.0f;
    #pragma omp for schedule(static)
    for (int64_t c0 = 0; c0 < B; c0 += 1)
    {
      const int64_t b = c0;
      polyc_mine_loss[0] = (polyc_mine_loss[0] + ((logf(s[b]) + mx[b]) - X[(b) * C + polyc_gather_index(((int64_t)(T[b])), C, &polyc_status)]));
    }
    #pragma omp critical
    {
      for (int64_t polyc_e = 0; polyc_e < 1; polyc_e += 1)
        loss[polyc_e] = (loss[polyc_e] + polyc_mine_loss[polyc_e]);
    }
  }
}

#undef polyc_status

int polyc_cross_entropy(int64_t B, int64_t C, const float *restrict X, const int32_t *restrict T, float *restrict loss)
{
  int polyc_status = 0;
  const int64_t polyc_work = (polyc_extent(B)) + (polyc_extent(B) * polyc_extent(C)) + (polyc_extent(B)) + (polyc_extent(B) * polyc_extent(C)) + (1) + (polyc_extent(B)) + (1);
  float *restrict mx = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(B) + 64));
  float *restrict s = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, polyc_extent(B) + 64));
  if (!mx)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  if (!s)
  {
    polyc_status = 1;
    goto polyc_done;
  }
  {
    if (polyc_work >= 32768)
    {
      #pragma omp parallel
      polyc_cross_entropy_region0(&polyc_status, B, C, X, mx, s);
    }
    else
    {
      polyc_cross_entropy_region0(&polyc_status, B, C, X, mx, s);
    }
    {
      loss[0] = 0.0f;
    }
    {
      float *restrict polyc_private_loss = (float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, 1) * (size_t)omp_get_max_threads());
      if (!polyc_private_loss)
        polyc_status = 1;
      else
      {
        if (polyc_work >= 32768)
        {
          #pragma omp parallel
          polyc_cross_entropy_region1(&polyc_status, B, C, X, T, loss, mx, s, polyc_private_loss);
        }
        else
        {
          polyc_cross_entropy_region1(&polyc_status, B, C, X, T, loss, mx, s, polyc_private_loss);
        }
      }
      free(polyc_private_loss);
    }
    {
      loss[0] = (loss[0] / ((float)((B))));
    }
  }
  polyc_done:
  free(mx);
  free(s);
  return polyc_status;
}

int polyc_cross_entropy_launch(const int64_t * polyc_sizes, void *const * polyc_args)
{
  return polyc_cross_entropy(polyc_sizes[0], polyc_sizes[1], (const float *)polyc_args[0], (const int32_t *)polyc_args[1], (float *)polyc_args[2]);
}
