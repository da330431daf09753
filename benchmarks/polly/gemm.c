/* The Polly reference: a naive 1024^3 float32 matmul, the same loops polyc
   starts from, for `clang -O3 -march=native -mllvm -polly -mllvm -polly-parallel`.
   Prints the median of 15 calls. Run by `make bench-polly` (benchmarks/polly/run.sh). */
#include <stdio.h>
#include <time.h>

#define N 1024
static float A[N][N], B[N][N], C[N][N];

__attribute__((noinline)) static void gemm(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = 0;
      for (int k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (float)((i * j) % 7) / 7;
      B[i][j] = (float)((i + j) % 5) / 5;
    }
  enum { ROUNDS = 15 };
  double times[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    const double start = now();
    gemm();
    times[r] = now() - start;
  }
  for (int a = 0; a < ROUNDS; a++)
    for (int b = a + 1; b < ROUNDS; b++)
      if (times[b] < times[a]) {
        const double t = times[a];
        times[a] = times[b];
        times[b] = t;
      }
  double sum = 0;  /* the result is used, so that the loops are not dropped */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) sum += C[i][j];
  printf("polly gemm 1024^3: median %.2f ms (%.1f GFLOP/s), min %.2f ms (sum of C %.6g)\n",
         times[ROUNDS / 2] * 1e3, 2.0 * N * N * N / times[ROUNDS / 2] * 1e-9, times[0] * 1e3,
         sum);
  return 0;
}
