"""Where a kernel's threads run while it runs: one CPU each.

Left to Linux, a thread of libgomp's team that sleeps between calls is often woken
on the CPU of the thread that wakes it (the caller, busy with its own share) and
waits there for the next load balancing, a scheduler tick later. A short kernel
called now and then, unpinned, takes several times as long as it does with
OMP_PROC_BIND=true or with its threads placed as here (measurements:
benchmarks/README.md, "Design measurements").

So a kernel with parallel regions, before the first, places its team on a block of
CPUs the calling thread may use, one thread each. The block starts at a CPU that
depends on the process id, so that the teams of several processes (each with its
OMP_NUM_THREADS share of a large machine) take different CPUs instead of all the
first ones. The team's other threads are put on the block's second and later CPUs
and stay there (the team's threads are libgomp's; they are placed again, in one
extra parallel region, only when the team or the allowed CPUs change). The calling
thread is left where it runs unless that is one of them: then it is moved to the
block's first CPU for the call, and its CPU mask is restored before the kernel
returns. A call costs a system call more, two or three when the caller is moved: a
small part of even a short kernel's call (measurements: benchmarks/README.md,
"Design measurements"). Nothing is placed when the user chose a binding
(``OMP_PROC_BIND``), when the team has more threads than there are CPUs, or off
Linux.
"""
from __future__ import annotations

import cgen

# C helpers; the kernel calls them when its work is large enough to run in parallel.
PLACEMENT_HELPERS = r"""
#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
typedef struct { int placed; cpu_set_t mask; } polyc_placement;

/* The team's threads on CPUs of their own among those the caller may use: a block of
   `threads` of them, from a start that depends on the process id (so that the
   teams of several processes take different CPUs); the team's other threads stay
   on theirs, and the caller is moved to the block's first CPU for the call when it
   runs on one of them (see polyc/codegen/thread_placement.py). */
static void polyc_place_team(polyc_placement *placement) {
  static __thread int polyc_placed_cpu = -1;  /* a team thread's CPU, once placed */
  static uint64_t polyc_team_placed = 0;      /* the team last placed: its signature */
  placement->placed = 0;
  if (omp_get_proc_bind() != omp_proc_bind_false) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int threads = omp_get_max_threads(), count = CPU_COUNT(&allowed);
  if (threads < 2 || threads > count) return;
  /* The allowed CPUs in order, as far as the block reaches (it may wrap around). */
  const int start = (int)(((int64_t)getpid() * threads) % count);
  const int needed = start + threads < count ? start + threads : count;
  int cpus[CPU_SETSIZE], block[CPU_SETSIZE];
  int n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && n < needed; cpu++)
    if (CPU_ISSET(cpu, &allowed)) cpus[n++] = cpu;
  for (int t = 0; t < threads; t++) block[t] = cpus[(start + t) % count];
  const int here = sched_getcpu();
  for (int t = 1; t < threads; t++)
    if (here == block[t]) {
      cpu_set_t first;
      CPU_ZERO(&first);
      CPU_SET(block[0], &first);
      if (sched_setaffinity(0, sizeof first, &first) != 0) return;
      placement->placed = 1;
      placement->mask = allowed;
      break;
    }
  /* The block of CPUs in one word (FNV-1a over its CPUs, in order): the team is
     placed again when it changes. */
  uint64_t signature = 14695981039346656037ull;
  for (int t = 0; t < threads; t++)
    signature = (signature ^ (uint64_t)(block[t] + 1)) * 1099511628211ull;
  uint64_t known;
  #pragma omp atomic read
  known = polyc_team_placed;
  if (known == signature) return;
  #pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t > 0 && polyc_placed_cpu != block[t]) {
      cpu_set_t own;
      CPU_ZERO(&own);
      CPU_SET(block[t], &own);
      if (sched_setaffinity(0, sizeof own, &own) == 0) polyc_placed_cpu = block[t];
    }
  }
  #pragma omp atomic write
  polyc_team_placed = signature;
}

static void polyc_release_team(const polyc_placement *placement) {
  if (placement->placed) sched_setaffinity(0, sizeof placement->mask, &placement->mask);
}
#else
typedef struct { int placed; } polyc_placement;
static void polyc_place_team(polyc_placement *placement) { placement->placed = 0; }
static void polyc_release_team(const polyc_placement *placement) { (void)placement; }
#endif
"""


def place_team(work_condition: str) -> list:
    """The statements at the start of the kernel: its team placed when
    ``work_condition`` (the parallel regions' own) holds."""
    return [cgen.Statement("polyc_placement polyc_team = {0}"),
            cgen.If(work_condition, cgen.Statement("polyc_place_team(&polyc_team)"))]


def release_team() -> list:
    """The statement before the kernel returns: the caller's CPU mask restored."""
    return [cgen.Statement("polyc_release_team(&polyc_team)")]
