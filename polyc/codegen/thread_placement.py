"""Where a kernel's threads run while it runs: one CPU each, the caller on the first.

Left to Linux, a thread of libgomp's team that sleeps between calls is often woken
on the CPU of the thread that wakes it (the caller, busy with its own share) and
waits there for the next load balancing, a scheduler tick later. On the 2-core VM a
softmax (4096 × 1024) that runs in 1.3 ms took 5–6 ms at the median when called
every 50 ms, unpinned (2 threads; torch's own softmax took 1.9 against 1.0 ms); with
OMP_PROC_BIND=true, or with the threads placed as here, 1.3.

So a kernel with parallel regions, before the first, places the team on the first
CPUs the calling thread may use, one thread each: the calling thread on the first
(moved there for the call if it runs elsewhere; its CPU mask is restored before
the kernel returns), each other thread of the team on one of the next (a mask that
stays: the team's threads are libgomp's; they are placed again, in one extra
parallel region, only when the team or the allowed CPUs change). A call then costs
a system call or two more (0.4 µs on a 256 × 256 elementwise kernel: 11.5 against
11.1 µs). Nothing is placed when the user chose a binding (``OMP_PROC_BIND``),
when the team has more threads than there are CPUs, or off Linux.
"""
from __future__ import annotations

import cgen

# C helpers; the kernel calls them when its work is large enough to run in parallel.
PLACEMENT_HELPERS = r"""
#if defined(__linux__)
#include <sched.h>
typedef struct { int placed; cpu_set_t mask; } polyc_placement;

/* The team's threads on the first CPUs the caller may use, one each: the caller on
   the first (moved there for the call if it is elsewhere), the others on the next
   ones, where they stay (see polyc/codegen/thread_placement.py). */
static void polyc_place_team(polyc_placement *placement) {
  static __thread int polyc_placed_cpu = -1;  /* a team thread's CPU, once placed */
  static uint64_t polyc_team_placed = 0;      /* the team last placed: its signature */
  placement->placed = 0;
  if (omp_get_proc_bind() != omp_proc_bind_false) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const int threads = omp_get_max_threads();
  if (threads < 2 || threads > CPU_COUNT(&allowed)) return;
  int cpus[CPU_SETSIZE];
  int n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && n < threads; cpu++)
    if (CPU_ISSET(cpu, &allowed)) cpus[n++] = cpu;
  if (sched_getcpu() != cpus[0]) {
    cpu_set_t first;
    CPU_ZERO(&first);
    CPU_SET(cpus[0], &first);
    if (sched_setaffinity(0, sizeof first, &first) != 0) return;
    placement->placed = 1;
    placement->mask = allowed;
  }
  /* The team's size and CPUs in one word (CPUs from the 45th on only counted): the
     team is placed again when it changes. */
  uint64_t signature = (uint64_t)threads << 54 | (uint64_t)CPU_COUNT(&allowed) << 45;
  for (int k = 0; k < n && cpus[k] < 45; k++) signature |= (uint64_t)1 << cpus[k];
  uint64_t known;
  #pragma omp atomic read
  known = polyc_team_placed;
  if (known == signature) return;
  #pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t > 0 && polyc_placed_cpu != cpus[t]) {
      cpu_set_t own;
      CPU_ZERO(&own);
      CPU_SET(cpus[t], &own);
      if (sched_setaffinity(0, sizeof own, &own) == 0) polyc_placed_cpu = cpus[t];
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
