#!/usr/bin/env python
"""How polyc and its peers scale with threads: run.py's kernels section at 1, 2, 4, ...
threads, one process per thread count, and one table of the results.

    python benchmarks/scaling.py                               # 1, 2, 4, ... up to the cores
    python benchmarks/scaling.py --threads 1,4,16 --kernels gemm,conv2d
    python benchmarks/scaling.py --json scaling.json -- --repeat 5 --settle 0.1

Each thread count runs in a process of its own, because numpy's OpenBLAS, torch and
libgomp read their thread settings when they load; run.py sets them for every contestant
alike and pins the threads (see its docstring for the method).  The processes share one
kernel cache, so that each kernel is compiled once.  Arguments after ``--`` go to run.py.

Printed per kernel and contestant: the median time at each thread count and, in
brackets, the speed-up over that contestant's own one-thread time; then polyc's ratio
to each peer at each thread count (the peer's time / polyc's: above 1, polyc is faster).
Scaling as well as a peer means polyc's ratio to it does not fall as threads are added.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONTESTANTS = ("polyc", "numpy", "torch")


def default_threads() -> list[int]:
    """1, 2, 4, ... below the cores this process may use, then the cores themselves."""
    cores = len(os.sched_getaffinity(0))
    counts, t = [], 1
    while t < cores:
        counts.append(t)
        t *= 2
    return counts + [cores]


def parse_args(argv=None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default="",
                   help="comma-separated thread counts (default: 1, 2, 4, ... and the cores)")
    p.add_argument("--kernels", default="", help="comma-separated subset (default: all)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--log", metavar="FILE",
                   help="append each run.py's full output to FILE (default: not kept)")
    args, rest = p.parse_known_args(argv)
    return args, [a for a in rest if a != "--"]


def run_at(threads: int, kernels: str, cache_dir: str, extra: list[str],
           log: str | None) -> dict:
    """run.py's kernels section at ``threads`` threads; its JSON results."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, str(HERE / "run.py"), "--sections", "kernels",
                   "--threads", str(threads), "--cache-dir", cache_dir,
                   "--json", out.name] + (["--kernels", kernels] if kernels else []) + extra
        env = {k: v for k, v in os.environ.items() if k != "_POLYC_BENCH_EXEC"}
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if log:
            with open(log, "a") as f:
                f.write(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}\n")
        if done.returncode not in (0, 1):  # 1: some result was wrong, still reported
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"run.py at {threads} threads failed (exit {done.returncode})")
        return json.loads(Path(out.name).read_text())


def median_ms(row: dict, contestant: str) -> float | None:
    entry = row.get(contestant)
    if not isinstance(entry, dict) or entry.get("check") != "ok":
        return None
    return entry.get("median_ms")


def table(results: dict[int, dict]) -> list[str]:
    counts = sorted(results)
    first = results[counts[0]]
    lines = [f"machine: {first['machine']['cpu']}, {first['machine']['cores']} cores; "
             f"polyc's model: {first['machine']['machine_model']}",
             f"numpy {first['machine']['numpy']} ({first['machine']['blas']}), "
             f"torch {first['machine']['torch']}", ""]
    header = f"{'kernel':<20}{'':<7}" + "".join(f"{f'{t} thr':>17}" for t in counts)
    lines += ["median ms (speed-up over one thread)", header]
    names = [row["kernel"] for row in first["kernels"]]
    by_count = {t: {row["kernel"]: row for row in results[t]["kernels"]} for t in counts}
    ratios = []
    for name in names:
        times = {c: [median_ms(by_count[t].get(name, {}), c) for t in counts]
                 for c in CONTESTANTS}
        for c in CONTESTANTS:
            if all(x is None for x in times[c]):
                continue
            base = times[c][0]
            cells = []
            for x in times[c]:
                if x is None:
                    cells.append(f"{'-':>17}")
                else:
                    speedup = f"({base / x:.2f})" if base else ""
                    cells.append(f"{x:>10.3f} {speedup:>6}")
            lines.append(f"{name if c == 'polyc' else '':<20}{c:<7}" + "".join(cells))
        for peer in CONTESTANTS[1:]:
            pairs = list(zip(times["polyc"], times[peer]))
            if any(p and q for p, q in pairs):
                ratios.append(f"{name:<20}{peer:<7}" + "".join(
                    f"{q / p:>17.2f}" if p and q else f"{'-':>17}" for p, q in pairs))
    lines += ["", "polyc's ratio to each peer (the peer's time / polyc's; above 1: polyc "
              "faster)", header] + ratios
    return lines


def main(argv=None) -> int:
    args, extra = parse_args(argv)
    counts = ([int(t) for t in args.threads.split(",") if t.strip()] if args.threads
              else default_threads())
    results = {}
    with tempfile.TemporaryDirectory(prefix="polyc-scaling-cache-") as cache_dir:
        for t in counts:
            print(f"[{t} threads] ...", file=sys.stderr, flush=True)
            results[t] = run_at(t, args.kernels, cache_dir, extra, args.log)
    print("\n".join(table(results)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({str(t): r for t, r in results.items()}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
