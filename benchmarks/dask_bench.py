"""polyc.dask on a LocalCluster: against single-process polyc and Dask's own formulations.

    make bench-dask                                   # = .venv/bin/python benchmarks/dask_bench.py
    .venv/bin/python benchmarks/dask_bench.py --scale 0.25 --repeat 1   # a smoke run, seconds

For each operator (matmul, conv2d, layernorm, a tensor contraction; float32, arrays of
a few GB at ``--scale 1``) the inputs are made once on a ``LocalCluster`` of
``--workers`` processes with one thread each (the workers' OpenMP and BLAS run on one
thread: Dask's nanny sets ``OMP_NUM_THREADS=1``) and persisted there. Then, each timed
``--repeat`` times (median), from building the graph to the output persisted in the
workers' memory:

* ``polyc.dask``: ``polyc.dask.apply(op, *inputs)``; its plan is made once per
  operator, shapes and chunks (``plan s``: the first, isl proving every block), the
  timed runs find it made;
* ``dask``: Dask's own formulation on the same chunks: ``A @ B``, ``da.einsum(...,
  optimize=True)`` (numpy's einsum through BLAS), the
  layer norm in dask array expressions, and the convolution as ``map_overlap`` (halo
  ``R - 1`` above, no boundary) of numpy's ``sliding_window_view`` + ``einsum``;
* ``1-proc``: single-process polyc on numpy copies of the inputs, on as many threads
  as there are workers (the overhead column compares against it).

Also: the seconds it takes to write the output's bytes into memory the process has
not used yet (``touch s``; every contestant pays it: each round holds its outputs so
none writes into pages another just freed), the graph's tasks beyond the inputs
(before Dask's own optimisation), the most memory the cluster's worker processes held
during a run (``MemorySampler``, sampled every 0.25 s from the workers' heartbeats,
which lag: a lower bound; beyond what they held before),
and the outputs compared (largest difference relative to the largest value).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

WORKER_THREADS = 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="array sizes scale (1: arrays of a few GB; 0.25 a smoke run)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per contestant")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated operators")
    args = parser.parse_args()
    # Single-process polyc gets the cluster's cores; set before any kernel loads OpenMP.
    os.environ["OMP_NUM_THREADS"] = str(args.workers * WORKER_THREADS)

    from distributed import Client, LocalCluster

    import polyc
    from polyc.machine import host_brand

    cases = _cases(args.scale)
    if args.only:
        cases = [c for c in cases if c[0] in args.only.split(",")]
    with LocalCluster(n_workers=args.workers, threads_per_worker=WORKER_THREADS,
                      processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        print(f"polyc.dask benchmark: {args.workers} worker processes x {WORKER_THREADS} "
              f"thread on {host_brand()} ({os.cpu_count()} cores), float32, median of "
              f"{args.repeat}; 1-proc: polyc in one process on {args.workers} threads")
        print(f"{'operator':<12} {'blocks':>6} {'tasks p/d':>10} {'plan s':>6} {'1-proc s':>9} "
              f"{'polyc.dask s':>12} {'dask s':>8} {'overhead':>9} {'dask/polyc':>10} "
              f"{'peak GB p/d':>12} {'diff':>8} {'touch s':>7}")
        for name, source, make, formulation, description in cases:
            op = polyc.define(source)
            inputs = [x.persist() if hasattr(x, "persist") else x for x in make()]
            _wait(inputs)
            local = [x.compute() if hasattr(x, "compute") else x for x in inputs]
            row = _measure(client, op, inputs, local, formulation, args.repeat)
            print(f"{name:<12} {row['blocks']:>6} {row['tasks']:>10} {row['plan']:>6.2f} "
                  f"{row['single']:>9.2f} "
                  f"{row['polyc']:>12.2f} {row['dask']:>8.2f} "
                  f"{row['polyc'] / row['single'] - 1:>+9.0%} "
                  f"{row['dask'] / row['polyc']:>10.2f} {row['memory']:>12} "
                  f"{row['diff']:>8.1e} {row['touch']:>7.2f}")
            print(f"{'':<12} {description}")
            del inputs, local
            sys.stdout.flush()


def _measure(client, op, inputs, local, formulation, repeat) -> dict:
    import polyc.dask
    from dask.core import flatten
    from distributed.diagnostics import MemorySampler

    start = time.perf_counter()
    plan = polyc.dask.plan(op, *inputs)  # the first: isl proves every block
    planning = time.perf_counter() - start
    ours, theirs = polyc.dask.apply(op, *inputs), formulation(*inputs)
    input_keys = sum(len(list(flatten(x.__dask_keys__()))) for x in inputs
                     if hasattr(x, "__dask_keys__"))
    tasks = f"{plan.tasks}/{len(dict(theirs.__dask_graph__())) - input_keys}"
    difference = abs(ours - theirs).max() / abs(theirs).max()
    diff = float(difference.compute())
    op.compile(*local)  # in this process; the workers compile in the warm-up round
    times = {"single": [], "polyc": [], "dask": []}
    peaks = {"polyc": 0, "dask": 0}
    sampler = MemorySampler()
    for round_ in range(repeat + 1):  # round 0 warms up (workers compile, pools grow)
        # Every contestant writes its output into memory no other output of the round
        # freed: each result is held until the round ends (see _first_touch).
        held, start_memory = [], _cluster_memory(client)
        start = time.perf_counter()
        held.append(op(*local))
        times["single"].append(time.perf_counter() - start)
        for contestant, build in (("polyc", lambda: polyc.dask.apply(op, *inputs)),
                                  ("dask", lambda: formulation(*inputs))):
            before = _cluster_memory(client)
            with sampler.sample(f"{contestant}{round_}", client=client, interval=0.25):
                start = time.perf_counter()
                held.append(build().persist())
                _wait(held[-1:])
                times[contestant].append(time.perf_counter() - start)
            print(f"  [{contestant} round {round_}: {times[contestant][-1]:.2f} s]",
                  file=sys.stderr, flush=True)
            samples = [m for _, m in sampler.samples[f"{contestant}{round_}"]]
            if samples:
                peaks[contestant] = max(peaks[contestant], max(samples) - before)
        # Before freeing the round's outputs, which the next allocation would reuse.
        touch = _first_touch(sum(o.nbytes for o in _outputs(held[0])))
        del held
        _settle(client, start_memory)
    row = {k: statistics.median(v[1:]) for k, v in times.items()}
    row["touch"] = touch
    row.update(blocks=plan.blocks, tasks=tasks, diff=diff, plan=planning,
               memory=f"{peaks['polyc'] / 1e9:.1f}/{peaks['dask'] / 1e9:.1f}")
    return row


def _outputs(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def _first_touch(nbytes: int) -> float:
    """Seconds to write ``nbytes`` into memory this process has not used yet: what
    every contestant pays for its output beyond the kernel. On a VM whose host takes
    back the guest's free pages this is far above memory bandwidth."""
    import numpy as np

    start = time.perf_counter()
    np.empty(nbytes, np.uint8).fill(1)
    return time.perf_counter() - start


def _wait(collections) -> None:
    from distributed import wait

    wait([c for c in collections if hasattr(c, "__dask_graph__")])


def _cluster_memory(client) -> int:
    return sum(client.run(_process_memory).values())


def _process_memory() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _settle(client, before: int, seconds: float = 10.0) -> None:
    """Wait until the workers gave back what the last run held (freed results)."""
    deadline = time.perf_counter() + seconds
    while _cluster_memory(client) > before * 1.1 + 64e6 and time.perf_counter() < deadline:
        time.sleep(0.2)


# ----------------------------------------------------------------- the operators


def _cases(scale: float) -> list:
    import dask.array as da
    import numpy as np

    rng = da.random.default_rng(0)

    def normal(shape, chunks):
        return rng.standard_normal(shape, chunks=chunks, dtype=np.float32)

    def scaled(n: int, unit: int = 1) -> int:
        return max(unit, round(n * scale / unit) * unit)

    m = scaled(6144, 64)
    matmul = ("matmul", "def matmul(float(M, K) A, float(K, N) B) -> (C) "
              "{ C(m, n) +=! A(m, k) * B(k, n) }",
              lambda: (normal((m, m), m // 3), normal((m, m), m // 3)),
              lambda A, B: A @ B,
              f"{m}^3, chunks {m // 3} on every dimension (k split: partial sums, a tree)")

    n, h, c = scaled(32, 2), 258, 64
    conv = ("conv2d", """def conv2d(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
              O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s) }""",
            lambda: (normal((n, c, h, h), (n // 2, c, 130, 130)),
                     normal((c, c, 3, 3), (c, c, 3, 3))),
            _conv_map_overlap,
            f"I {n}x{c}x{h}x{h}, F {c}x{c}x3x3; chunks {n // 2} x {c} x 130 x 130 "
            f"(halo of 2 in h and w)")

    rows, d = scaled(262144, 1024), 1024
    layernorm = ("layernorm", """def layernorm(float(N, D) X, float(D) gamma, float(D) beta,
                                              float eps) -> (Y) {
          mu(n) +=! X(n, d)
          mu(n) = mu(n) / D
          ss(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n))
          rstd(n) = rsqrt(ss(n) / D + eps)
          Y(n, d) = (X(n, d) - mu(n)) * rstd(n) * gamma(d) + beta(d) }""",
                 lambda: (normal((rows, d), (rows // 16, d)), normal((d,), d),
                          normal((d,), d), 1e-5),
                 _layernorm_dask,
                 f"X {rows}x{d}, chunks of {rows // 16} rows")

    e = scaled(64, 4)
    contraction = ("contraction", """def contraction(float(SA, SE, SB, SF) A,
                                                 float(SD, SF, SC, SE) B) -> (C) {
          C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e) }""",
                   lambda: (normal((e,) * 4, (e // 2, e // 2, e, e)),
                            normal((e,) * 4, (e // 2, e, e, e // 2))),
                   lambda A, B: da.einsum("aebf,dfce->abcd", A, B, optimize=True),
                   f"extents {e}; a, d and e in 2 chunks (e split: partial sums)")
    return [matmul, conv, layernorm, contraction]


def _conv_map_overlap(I, F):
    """The valid convolution as Dask's ``map_overlap``: each block extended by ``R - 1``
    rows and ``S - 1`` columns above (``boundary="none"``), numpy's idiom per block."""
    import numpy as np

    weights = F.compute()
    K, _, R, S = weights.shape

    def block(x):
        windows = np.lib.stride_tricks.sliding_window_view(x, (R, S), axis=(2, 3))
        return np.einsum("nchwrs,kcrs->nkhw", windows, weights, optimize=True)

    def shrunk(chunks, by):
        return chunks[:-1] + (chunks[-1] - by,)

    chunks = (I.chunks[0], (K,), shrunk(I.chunks[2], R - 1), shrunk(I.chunks[3], S - 1))
    return I.map_overlap(block, depth={2: (0, R - 1), 3: (0, S - 1)}, boundary="none",
                         trim=False, chunks=chunks, dtype=I.dtype,
                         meta=np.empty((0,) * 4, I.dtype))


def _layernorm_dask(X, gamma, beta, eps):
    import dask.array as da

    mean = X.mean(axis=1, keepdims=True)
    centred = X - mean
    var = (centred * centred).mean(axis=1, keepdims=True)
    return centred / da.sqrt(var + eps) * gamma + beta


if __name__ == "__main__":
    main()
