#!/usr/bin/env python
"""polyc's benchmark: one table comparing polyc with numpy (and torch eager, when
``import torch`` works), all measured in the same run.

    python benchmarks/run.py                       # everything (a few minutes)
    python benchmarks/run.py --quick --kernels gemm,softmax
    python benchmarks/run.py --threads 1 --repeat 11 --json results.json

Method (see ``--help`` for the knobs, benchmarks/README.md for the measurements
behind these choices):

* every contestant runs on the same number of threads: OMP_NUM_THREADS,
  OPENBLAS_NUM_THREADS, MKL_NUM_THREADS (and torch.set_num_threads) are set
  to ``--threads`` (default: $OMP_NUM_THREADS if set, else the cores this
  process may use) *before* numpy, polyc or torch is imported;
* outputs are preallocated for every contestant (``out=``), except where the
  torch idiom has no ``out=`` (noted);
* each result is checked against a float64 numpy reference before timing
  (max |got - ref| / max |ref| <= 1e-3);
* timing is round-robin (``--method interleaved``): per round, each
  contestant in turn gets a *visit*: a pause (``--settle``, 0.2 s) so that the
  thread pool that ran before has stopped spinning, one untimed call that
  wakes its own threads, then one timed call.  The median over rounds is
  reported.  Why: after a call, OpenBLAS's workers spin for ~0.1 s and
  libgomp's (polyc's) for a few ms; a call of the other library made while
  they spin shares the cores with them and on 2 cores ran up to 2x slower
  (polyc after numpy) or 1.5x slower (numpy after polyc).  Changing the
  spinning instead (GOMP_SPINCOUNT=0, OMP_WAIT_POLICY=passive) removes
  numpy's penalty but slows polyc kernels with several parallel loops by up
  to 25x, so the libraries keep their defaults and the harness waits;
* threads are pinned (main thread to the first CPU, pool workers to the
  others; ``--no-pin``), see :func:`pin_threads`;
* before each kernel the harness waits (``--quiet-wait``) for other processes
  to leave the CPUs alone, and reports the load that remained;
* polyc compiles cold: kernels go to a fresh temporary cache directory, and
  the compile time is split into polyc's own stages and the C compiler's.
"""
from __future__ import annotations

import argparse
import os
import sys

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
# Environment variables that change how thread pools behave; shown in the header when set.
SHOWN_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_PROC_BIND", "OMP_PLACES",
                   "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "POLYC_CFLAGS", "POLYC_CC",
                   "POLYC_MACHINE", "POLYC_PLACE_THREADS", "ATEN_CPU_CAPABILITY",
                   "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "NPY_DISABLE_CPU_FEATURES")
# Environment variables that hold OpenBLAS to another CPU's kernels or cache sizes. Some
# machines set them for every process (this VM: OPENBLAS_CORETYPE=Haswell, i.e. AVX2
# kernels on an AVX-512 CPU); numpy's matmul then ran 1024³ in 8.3 ms instead of 4.6
# (Zen 5, 2 threads). The harness removes them so that numpy runs at its best
# (``--keep-blas-env`` keeps them) and says so in the header.
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# ``--as-isa avx2``: every contestant held to AVX2 on an AVX-512 CPU, to measure what an
# AVX2 machine would see where none is at hand: polyc's AVX2 model (zen3: 16 registers,
# 256-bit vectors) compiled for Haswell's instructions, OpenBLAS's Haswell kernels,
# torch's AVX2 kernels (ATen, oneDNN, MKL) and numpy's dispatch without AVX-512. The
# caches, memory and clock stay the host's.
AS_ISA = {
    "avx2": {"POLYC_MACHINE": "zen3", "POLYC_CFLAGS": "-march=haswell",
             "OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx2",
             "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"},
}


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default="",
                   help="comma-separated subset (default: all); see --list")
    p.add_argument("--list", action="store_true", help="list the kernels and exit")
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    p.add_argument("--repeat", type=int, default=7,
                   help="timed rounds per kernel (median reported; default 7, fewer for "
                        "slow kernels, see --budget)")
    p.add_argument("--budget", type=float, default=15.0,
                   help="seconds of measuring per kernel (all contestants, pauses and "
                        "warm-ups included) beyond which the number of rounds is cut "
                        "(never below --min-repeat; default 15)")
    p.add_argument("--min-repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=0,
                   help="threads for every contestant (default: $OMP_NUM_THREADS, else cores)")
    p.add_argument("--method", choices=("interleaved", "blocked"), default="interleaved",
                   help="interleaved: round-robin, one call of each contestant per round "
                        "(default); blocked: all rounds of one contestant, then the next: "
                        "calls back to back, with the --settle pause only between "
                        "contestants (with --settle 0 the previous contestant's spinning "
                        "threads share the CPUs with the next one's first calls)")
    p.add_argument("--settle", type=float, default=0.2,
                   help="seconds to pause before each visit of a contestant, so that the "
                        "previous one's spinning worker threads go to sleep (OpenBLAS spins "
                        "~0.1 s after a call, libgomp a few ms; default 0.2)")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed calls at each visit, after the pause (default 1)")
    p.add_argument("--quiet-wait", type=float, default=None,
                   help="before each kernel, wait up to this many seconds for other "
                        "processes to leave the CPUs alone (default 10, 3 with --quick; "
                        "0 disables)")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin threads to cores (see pin_threads in run.py)")
    p.add_argument("--place-threads", action="store_true",
                   help="polyc's kernels place their OpenMP threads (POLYC_PLACE_THREADS=1; "
                        "off by default: it changes the threads' CPU affinity)")
    p.add_argument("--no-torch", action="store_true", help="leave torch out even if installed")
    p.add_argument("--keep-blas-env", action="store_true",
                   help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE from the environment "
                        "(default: removed, so that OpenBLAS picks its kernels for this CPU)")
    p.add_argument("--as-isa", choices=sorted(AS_ISA),
                   help="hold every contestant to this instruction set on a CPU that has "
                        "more (avx2 on an AVX-512 CPU: polyc's zen3 model built for "
                        "Haswell, OpenBLAS's Haswell kernels, torch's and numpy's AVX2 "
                        "kernels); caches and clock stay the host's")
    p.add_argument("--sections",
                   default="kernels,compile,backward,triangular,spellings,fusion,corpus",
                   help="comma-separated: kernels (polyc against numpy and torch), spellings "
                        "(equivalent spellings of one operator, against the fastest), fusion "
                        "(the default fusion against fusion='min' and 'max'), corpus (the "
                        "same for every operator of tests/corpus.py, scaled up), compile "
                        "(cold compile of every corpus operator), backward (polyc.grad against "
                        "torch autograd), triangular (triangular and banded domains, written "
                        "with where ranges and with selects, against numpy's full product and "
                        "SciPy's BLAS); default all")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="keep polyc's kernels in DIR (default: a fresh temporary directory, "
                        "so that compile times are cold); benchmarks/scaling.py shares one "
                        "between its runs")
    return p.parse_args(argv)


ARGS = parse_args()
START_CPUS = os.sched_getaffinity(0)  # before pin_threads narrows the main thread's
if ARGS.quiet_wait is None:
    ARGS.quiet_wait = 3.0 if ARGS.quick else 10.0
if ARGS.threads <= 0:
    ARGS.threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or usable_cores()
_THREAD_SOURCE = "--threads" if "--threads" in " ".join(sys.argv) else (
    "$OMP_NUM_THREADS" if os.environ.get("OMP_NUM_THREADS") else "cores")
for _var in THREAD_VARIABLES:
    os.environ[_var] = str(ARGS.threads)
if ARGS.place_threads:
    os.environ["POLYC_PLACE_THREADS"] = "1"
REMOVED_VARIABLES = {} if ARGS.keep_blas_env else {
    v: os.environ.pop(v) for v in BLAS_OVERRIDES if v in os.environ}
if ARGS.as_isa:
    for _var, _value in AS_ISA[ARGS.as_isa].items():
        os.environ[_var] = _value
        REMOVED_VARIABLES.pop(_var, None)
if "numpy" in sys.modules and __name__ == "__main__" and not os.environ.get("_POLYC_BENCH_EXEC"):
    # Something imported numpy before the thread settings were made: start over with them.
    os.environ["_POLYC_BENCH_EXEC"] = "1"
    os.execv(sys.executable, [sys.executable] + sys.argv)

# Only now: the libraries read the thread settings when they load.
import contextlib  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # the operator corpus

import polyc  # noqa: E402
from polyc.machine import host_brand  # noqa: E402
from kernels import BENCHES, BY_NAME, TOLERANCE, max_rel_error  # noqa: E402
from variants import FUSION_STRATEGIES, SPELLINGS, SPELLINGS_BY_NAME, alike  # noqa: E402
from backward import BACKWARD, BACKWARD_BY_NAME  # noqa: E402
import triangular  # noqa: E402
from corpus import CORPUS, make_inputs  # noqa: E402

torch = None
TORCH_ERROR = "not installed"
if not ARGS.no_torch:
    try:
        import torch  # noqa: E402

        torch.set_num_threads(ARGS.threads)
    except ModuleNotFoundError:
        torch = None
    except Exception as error:  # a broken installation
        torch = None
        TORCH_ERROR = f"import failed: {type(error).__name__}: {error}"
else:
    TORCH_ERROR = "left out by --no-torch"


# ------------------------------------------------------------------ machine

def blas_name() -> str:
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        name = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:
        return "unknown BLAS"
    core = openblas_core()
    return f"{name}, {core} kernels" if core else name


def openblas_core() -> str | None:
    """The CPU model whose kernels numpy's OpenBLAS chose (``openblas_get_corename``)."""
    import ctypes
    import glob

    libs = glob.glob(str(Path(np.__file__).resolve().parent.parent / "numpy.libs" / "*openblas*"))
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                       "openblas_get_corename64_", "openblas_get_corename"):
            function = getattr(lib, symbol, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                return function().decode(errors="replace")
    return None


def cc_version() -> str:
    import subprocess

    cc = os.environ.get("POLYC_CC", "cc")
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.splitlines()[0] if out.stdout else cc
    except Exception:
        return cc


def polyc_revision() -> str:
    """Where polyc was imported from and, in a git checkout, its commit (+ "modified")."""
    import subprocess

    package = Path(polyc.__file__).resolve().parent
    text = str(package)
    try:
        def git(*args):
            return subprocess.run(["git", "-C", str(package.parent), *args], capture_output=True,
                                  text=True, timeout=10)
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode == 0:
            dirty = git("status", "--porcelain", "--", str(package)).stdout.strip()
            text += f", git {head.stdout.strip()}{' + uncommitted changes' if dirty else ''}"
    except Exception:
        pass
    return text


def header() -> dict:
    machine = polyc.Options.from_environment().machine
    info = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": host_brand(),
        "cores": usable_cores(),
        "machine_model": str(machine),
        "simd": machine.isa,
        "threads": ARGS.threads,
        "threads_from": _THREAD_SOURCE,
        "python": platform.python_version(),
        "polyc": polyc.__version__,
        "polyc_at": polyc_revision(),
        "numpy": np.__version__,
        "blas": blas_name(),
        "torch": torch.__version__ if torch is not None else f"- ({TORCH_ERROR})",
        "cc": cc_version(),
        "env": {v: os.environ[v] for v in SHOWN_VARIABLES if v in os.environ},
        "removed_env": REMOVED_VARIABLES,
        "method": ARGS.method,
        "settle_s": ARGS.settle,
        "warmup": ARGS.warmup,
        "pinned": not (ARGS.no_pin or usable_cores() < 2 or ARGS.threads > usable_cores()),
        "quick": ARGS.quick,
    }
    return info


def print_header(info: dict) -> None:
    print(f"polyc benchmark  {info['date']}{'  (--quick sizes)' if info['quick'] else ''}")
    print(f"machine: {info['cpu']}, {info['cores']} cores")
    print(f"polyc's machine model: {info['machine_model']}")
    print(f"threads: {info['threads']} for every contestant (from {info['threads_from']}), "
          + ("pinned: main thread to the first CPU, pool workers to the others"
             if info["pinned"] else "not pinned")
          + "".join(f", {k}={v}" for k, v in info["env"].items()))
    if info["removed_env"]:
        print("removed from the environment so that OpenBLAS runs at its best: "
              + ", ".join(f"{k}={v}" for k, v in info["removed_env"].items())
              + " (--keep-blas-env keeps them)")
    print(f"polyc: {info['polyc_at']}")
    print(f"versions: polyc {info['polyc']}, numpy {info['numpy']} ({info['blas']}), "
          f"torch {info['torch']}, python {info['python']}, {info['cc']}")
    print(f"timing: median over rounds, {info['method']}; each visit = "
          f"{1000 * info['settle_s']:.0f} ms pause + {info['warmup']} untimed call(s) + timed "
          "call(s); outputs preallocated; results checked against float64 numpy first")
    print()


# ------------------------------------------------------------------ measuring

class LoadMeter:
    """CPU time that *other* processes used on this machine while we measured.

    Busy ticks of all CPUs (/proc/stat) minus this process's own (threads and
    waited-for children, /proc/self/stat), in cores on average: 0.0 is a quiet
    machine, 1.0 another process keeping a core busy all along.  Linux only;
    ``None`` elsewhere.
    """

    def __init__(self):
        self.start = self._sample()

    @staticmethod
    def _sample():
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
            busy = sum(fields) - fields[3] - fields[4]  # all but idle and iowait
            with open("/proc/self/stat") as f:
                mine = sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:15])
            return busy, mine, time.monotonic()
        except (OSError, ValueError, IndexError):
            return None

    def cores(self) -> float | None:
        end = self._sample()
        if self.start is None or end is None:
            return None
        ticks = os.sysconf("SC_CLK_TCK")
        seconds = end[2] - self.start[2]
        if seconds <= 0:
            return None
        return max(0.0, ((end[0] - self.start[0]) - (end[1] - self.start[1])) / ticks / seconds)


def pin_threads() -> str:
    """Pin this process's threads: the main thread to the first usable CPU, every other
    thread (thread-pool workers of libgomp, OpenBLAS, torch) round-robin to the others.

    With as many threads as cores, each pool then has one thread per core.  Unpinned,
    Linux on this VM often woke a pool's worker on the main thread's core and left it
    there until the next scheduler tick: a 0.3 ms parallel region took 4 or 8 ms
    instead, at random, more often for libgomp than for OpenBLAS.  Applied to every
    contestant alike; ``--no-pin`` leaves placement to the OS.

    Called again before each kernel's measurement, it pins the threads created since
    (which inherit the main thread's single CPU): the CPUs come from the process's
    start, not from the main thread's affinity, which the first call narrowed. Reading
    the latter, every later call pinned nothing, and a thread pool that OpenBLAS had
    re-created during the mlp kernel shared the main thread's CPU from then on: numpy's
    1024³ gemm ran 40-48 ms instead of 13-16 in every kernel measured after it.
    """
    cpus = sorted(START_CPUS)
    if ARGS.no_pin or len(cpus) < 2 or ARGS.threads > len(cpus):
        return "not pinned"
    main = os.getpid()
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:
        return "not pinned"
    workers = [t for t in tids if t != main]
    try:
        os.sched_setaffinity(main, {cpus[0]})
        for i, tid in enumerate(workers):
            try:
                os.sched_setaffinity(tid, {cpus[1 + i % (len(cpus) - 1)]})
            except OSError:  # the thread has exited
                pass
    except OSError as error:
        return f"not pinned ({error})"
    return f"main thread on CPU {cpus[0]}, {len(workers)} workers on CPUs {cpus[1:]}"


def wait_for_quiet(limit: float, threshold: float = 0.15) -> float:
    """Wait (up to ``limit`` seconds) for a half second in which other processes use
    less than ``threshold`` cores; returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        meter = LoadMeter()
        time.sleep(0.5)
        load = meter.cores()
        if load is None or load < threshold:
            break
    return time.monotonic() - start


class Contestant:
    """One implementation of a kernel: a zero-argument callable plus its outputs."""

    def __init__(self, name: str, run, outputs_of):
        self.name = name
        self.run = run
        self.outputs_of = outputs_of  # () -> list of numpy arrays to check
        self.times: list[float] = []
        self.faults: list[int] = []  # page faults of the process during each timed call
        self.error: str | None = None
        self.check: str = ""
        self.rel_error: float = float("nan")
        self.first_s: float = 0.0  # the first (checked) call


LONG_CALL_S = 0.25  # calls longer than this get no warm-up call before their timed call


# A new process with the cache the cold compile filled: define() + compile(), timed
# inside it (the interpreter's and numpy's start-up excluded).
WARM_PROCESS = """
import sys, time
import polyc
start = time.perf_counter()
op = polyc.define(sys.argv[2], cache_dir=sys.argv[1])
op.compile()
print(time.perf_counter() - start, op._compilation is None)
"""


def warm_process_seconds(source: str, cache_dir: str) -> float | None:
    """define() + compile() in a new process whose cache already holds the kernel;
    ``None`` if it had to generate the C again (or failed). The process gets the CPUs
    this one started with (pinning narrowed the main thread's), so that it detects the
    same machine."""
    result = subprocess.run([sys.executable, "-c", WARM_PROCESS, cache_dir, source],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                            preexec_fn=lambda: os.sched_setaffinity(0, START_CPUS))
    if result.returncode != 0:
        return None
    seconds, found = result.stdout.split()
    return float(seconds) if found == "True" else None


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(contestants: list[Contestant]) -> int:
    """Time every live contestant; returns the number of rounds.

    A *visit* of a contestant is: pause ``--settle`` seconds (the previous
    contestant's worker threads stop spinning and go to sleep), ``--warmup``
    untimed calls (which wake this contestant's own thread pool and leave it
    hot, as in any loop that calls a kernel repeatedly), then timed calls.
    ``interleaved``: one visit per contestant per round, one timed call each,
    round-robin, so slow drifts of the machine (other processes, frequency)
    hit every contestant alike.  ``blocked``: one visit per contestant with
    all its timed calls back to back.
    """
    live = [c for c in contestants if c.error is None]
    if not live:
        return 0
    pin_threads()  # every contestant ran once: all thread pools exist
    estimate = {}
    for c in live:
        if c.first_s > LONG_CALL_S:
            estimate[c.name] = c.first_s  # slow: the checked call is estimate enough
        else:
            pause()
            c.run()
            estimate[c.name] = timed(c.run)
    # Warm-up calls exist to wake thread pools and caches; a long call does not need one.
    warmups = {c.name: ARGS.warmup if estimate[c.name] <= LONG_CALL_S else 0 for c in live}
    per_round = sum(ARGS.settle + (warmups[c.name] + 1) * estimate[c.name] for c in live)
    rounds = ARGS.repeat
    if per_round * rounds > ARGS.budget:
        rounds = max(ARGS.min_repeat, int(ARGS.budget / per_round))
    if ARGS.method == "interleaved":
        for _ in range(rounds):
            for c in live:
                visit(c, warmups[c.name], 1)
    else:
        for c in live:
            visit(c, warmups[c.name], rounds)
    return rounds


def visit(c: Contestant, warmups: int, calls: int) -> None:
    pause()
    for _ in range(warmups):
        c.run()
    for _ in range(calls):
        before = page_faults()
        c.times.append(timed(c.run))
        c.faults.append(page_faults() - before)


def page_faults() -> int:
    """The process's page faults so far (minor: memory the kernel maps on first touch).
    A buffer that the allocator gives back to the system and takes again faults on every
    call, at about a microsecond per 4 KiB page on a VM: which contestant pays depends on
    the sizes freed before, so the tables say where timed calls faulted."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def median_faults(c: Contestant) -> int:
    return int(statistics.median(c.faults)) if c.faults else 0


def pause() -> None:
    if ARGS.settle > 0:
        time.sleep(ARGS.settle)


def median_ms(c: Contestant | None) -> float | None:
    if c is None or c.error is not None or not c.times:
        return None
    return 1000 * statistics.median(c.times)


def check(c: Contestant, reference) -> None:
    try:
        outputs = c.outputs_of()
        errors = [max_rel_error(np.asarray(got), ref) for got, ref in zip(outputs, reference)]
        c.rel_error = max(errors) if errors else float("nan")
        c.check = "ok" if len(outputs) == len(reference) and c.rel_error <= TOLERANCE else "WRONG"
    except Exception as error:
        c.error = f"check failed: {type(error).__name__}: {error}"
        c.check = "error"


def to_numpy(value):
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


def torch_contestant(bench, args: tuple, shapes: list) -> Contestant:
    """``bench``'s torch eager implementation on ``args`` (numpy arrays shared with
    torch tensors, no copies), outputs of ``shapes``; its ``error`` says what failed."""
    try:
        t_args = tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
        t_outs = [torch.empty(s, dtype=torch.float32) for s in shapes]
        prepared = bench.torch(t_args, t_outs)
        last = {}

        def torch_run():
            last["result"] = prepared()

        first = timed(torch_run)

        def torch_outputs():
            result = last["result"]
            if isinstance(result, torch.Tensor):
                result = [result]
            if result is None:
                result = t_outs
            return [to_numpy(r) for r in result]

        contestant = Contestant("torch", torch_run, torch_outputs)
        contestant.first_s = first
    except Exception as error:
        contestant = Contestant("torch", None, None)
        contestant.error = f"{type(error).__name__}: {error}".splitlines()[0]
    return contestant


def bench_one(bench, cache_dir: Path, rng_seed: int) -> dict:
    sizes = bench.quick_sizes if ARGS.quick else bench.sizes
    rng = np.random.default_rng(rng_seed)
    args = bench.inputs(sizes, rng)
    reference = bench.reference(*args)
    shapes = bench.outputs(sizes)
    row: dict = {"kernel": bench.name, "formula": bench.formula, "sizes": sizes,
                 "size_text": bench.size_text(sizes), "kind": bench.kind,
                 "work": bench.work(sizes), "notes": []}

    # --- polyc: cold compile into a fresh cache directory
    contestants: list[Contestant] = []
    p_outs = [np.empty(s, np.float32) for s in shapes]
    p_out = p_outs[0] if len(p_outs) == 1 else tuple(p_outs)
    try:
        start = time.perf_counter()
        op = polyc.define(bench.source, cache_dir=cache_dir)
        frontend = time.perf_counter() - start
        compilation = op.compilation()
        kernel = op.compile(*args)
        total = time.perf_counter() - start
        row["compile"] = {"frontend_s": frontend, "stages_s": dict(compilation.seconds),
                          "polyc_s": frontend + sum(compilation.seconds.values()),
                          "cc_s": kernel.compile_seconds, "cache": kernel.cache_hit,
                          "total_s": total,
                          "warm_process_s": warm_process_seconds(bench.source, str(cache_dir))}
        polyc_run = lambda: op(*args, out=p_out)  # noqa: E731
        first = timed(polyc_run)
        contestants.append(Contestant("polyc", polyc_run, lambda: p_outs))
        contestants[-1].first_s = first
    except Exception as error:
        row["compile"] = None
        c = Contestant("polyc", None, None)
        c.error = f"{type(error).__name__}: {error}".splitlines()[0]
        c.check = "error"
        contestants.append(c)
        row["notes"].append(f"polyc failed: {c.error}")

    # --- numpy
    n_outs = [np.empty(s, np.float32) for s in shapes]
    try:
        numpy_run = bench.numpy(args, n_outs)
        first = timed(numpy_run)
        contestants.append(Contestant("numpy", numpy_run, lambda: n_outs))
        contestants[-1].first_s = first
    except Exception as error:
        c = Contestant("numpy", None, None)
        c.error = f"{type(error).__name__}: {error}"
        contestants.append(c)
        row["notes"].append(f"numpy failed: {c.error}")

    # --- torch (eager)
    if torch is not None and bench.torch is not None:
        contestant = torch_contestant(bench, args, shapes)
        contestants.append(contestant)
        if contestant.error is not None:
            row["notes"].append(f"torch failed: {contestant.error}")
        if bench.torch_note:
            row["notes"].append(f"torch: {bench.torch_note}")

    for c in contestants:
        if c.error is None:
            check(c, reference)
            if c.check != "ok" and c.name != "polyc":
                row["notes"].append(f"{c.name} result {c.check} (rel. error {c.rel_error:.1e})")

    # A WRONG polyc kernel is still timed (the number is informative); the table marks it.
    row["quiet_wait_s"] = wait_for_quiet(ARGS.quiet_wait) if ARGS.quiet_wait > 0 else 0.0
    meter = LoadMeter()
    row["rounds"] = measure(contestants)
    row["other_load"] = meter.cores()
    for c in contestants:
        row[c.name] = {"median_ms": median_ms(c), "times_s": c.times, "check": c.check,
                       "rel_error": c.rel_error, "error": c.error,
                       "page_faults": median_faults(c)}
    return row


# ------------------------------------------------------- spellings and fusion strategies

# Variants of one operator are compared on back-to-back calls (settled thread teams and
# caches): a timed sample runs as many calls as take about this long (the fastest
# variant's), at most MAX_BACK_TO_BACK. Sub-millisecond kernels timed one call per visit
# moved by ±20% between identical variants (a thread team's wake-up included).
BACK_TO_BACK_S = 0.01
MAX_BACK_TO_BACK = 200


def shared_outputs(outputs: list, first) -> list:
    """The output arrays a variant writes into: ``outputs``, those of the variants before
    it, where its first result has their shapes and dtypes, else new ones (and
    ``outputs`` becomes them). Where an operator's arrays fill the L3, which of its
    output's lines stay there depends on where the array's pages fall, so that one
    kernel's time moves with the array it writes (benchmarks/README.md, "Design
    measurements"); written into the same arrays, variants differ only by their
    kernels. Each variant gets them filled with NaN (integers with their largest value)
    for its checked first call, so that an earlier variant's results cannot pass its
    check."""
    results = [np.asarray(r) for r in (first if isinstance(first, tuple) else (first,))]
    if any(r.dtype.kind not in "fciu" for r in results):  # no value to poison them with
        return [np.empty_like(r) for r in results]
    if [(a.shape, a.dtype) for a in outputs] != [(r.shape, r.dtype) for r in results]:
        outputs[:] = [np.empty_like(r) for r in results]
    for array in outputs:  # what an earlier variant wrote must not pass this one's check
        array.fill(np.nan if array.dtype.kind in "fc" else np.iinfo(array.dtype).max)
    return list(outputs)


def bench_variants(bench, variants: list[tuple[str, object]], rng_seed: int,
                   with_torch: bool = False) -> dict:
    """Time polyc operators that compute the same thing (``variants``: label and
    Operator) on ``bench``'s inputs, interleaved like the kernels' contestants, per
    call of back-to-back calls (:data:`BACK_TO_BACK_S`); ``with_torch``: torch eager
    too, where installed (the row's ``torch_ms``)."""
    sizes = bench.quick_sizes if ARGS.quick else bench.sizes
    args = bench.inputs(sizes, np.random.default_rng(rng_seed))
    reference = bench.reference(*args)
    contestants, calls, written = [], 1, []
    peer = None
    if with_torch and torch is not None and getattr(bench, "torch", None) is not None:
        peer = torch_contestant(bench, args, bench.outputs(sizes))
        if peer.error is None:
            check(peer, reference)
    for label, op in variants:
        outs: list = []
        single = lambda op=op, outs=outs: op(  # noqa: E731
            *args, out=outs[0] if len(outs) == 1 else tuple(outs))
        contestant = Contestant(label, single, lambda outs=outs: outs)
        try:
            first = op(*args)  # compiles (the first timed call must not), gives the outputs
            outs.extend(shared_outputs(written, first))
            contestant.first_s = timed(single)
            check(contestant, reference)
            calls = max(calls, round(BACK_TO_BACK_S / max(contestant.first_s, 1e-6)))
        except Exception as error:
            contestant.error = f"{type(error).__name__}: {error}".splitlines()[0]
            contestant.check = "error"
        contestants.append(contestant)
    calls = min(calls, MAX_BACK_TO_BACK)
    timed_ones = contestants + ([peer] if peer is not None and peer.error is None else [])
    for contestant in timed_ones:
        single = contestant.run
        contestant.run = lambda single=single: [single() for _ in range(calls)]
        contestant.first_s *= calls
    if ARGS.quiet_wait > 0:
        wait_for_quiet(ARGS.quiet_wait)
    meter = LoadMeter()
    rounds = measure(timed_ones)
    torch_ms = median_ms(peer) / calls if peer is not None and median_ms(peer) else None
    return {"kernel": bench.name, "size_text": bench.size_text(sizes), "rounds": rounds,
            "calls": calls, "other_load": meter.cores(), "torch_ms": torch_ms,
            "torch_check": peer.check if peer is not None else None,
            "variants": [{"label": c.name, "check": c.check, "error": c.error,
                          "median_ms": None if median_ms(c) is None else median_ms(c) / calls}
                         for c in contestants]}


def print_variants(title: str, rows: list[dict], note: str, worst_of: str | None = None
                   ) -> None:
    """One line per variant: its time and its ratio to the fastest of its operator
    (``worst_of``: the label whose ratio to the fastest is summarised instead)."""
    print()
    print(title)
    peers = any(row.get("torch_ms") for row in rows)
    columns = [("kernel", "<"), ("variant", "<"), ("check", "<"), ("n", ">"), ("calls", ">"),
               ("polyc ms", ">"), ("÷ fastest", ">")] + (
        [("torch ms", ">"), ("÷ torch", ">")] if peers else []) + [("other load", ">")]
    cells, worst = [], []
    for row in rows:
        times = [v["median_ms"] for v in row["variants"] if v["median_ms"] is not None]
        fastest = min(times) if times else None
        for k, v in enumerate(row["variants"]):
            ratio = v["median_ms"] / fastest if fastest and v["median_ms"] else None
            if ratio is not None and (worst_of is None or worst_of in v["label"].split(" = ")):
                worst.append((ratio, row["kernel"], v["label"]))
            torch_ms = row.get("torch_ms")
            cells.append([row["kernel"] if k == 0 else "", v["label"], v["check"],
                          str(row["rounds"]), str(row.get("calls", 1)), fmt_ms(v["median_ms"]),
                          "-" if ratio is None else f"{ratio:.2f}"] + (
                [fmt_ms(torch_ms) if k == 0 else "", fmt_ratio(torch_ms, v["median_ms"])]
                if peers else []) + [
                "-" if k or row["other_load"] is None else f"{row['other_load']:.2f}"])
    print(table(columns, cells))
    if worst:
        ratio, kernel, label = max(worst)
        print(f"{note}; worst: {ratio:.2f} ({kernel}, {label})")


def print_fusion_summary(rows: list[dict], margin: float = 1.10) -> None:
    """How many operators' default fusion is within ``margin`` of the fastest strategy
    and of ``fusion='min'``, and the ones that are not."""
    slow, behind_min, counted, one_kernel = [], [], 0, 0
    for row in rows:
        times = strategy_times(row)
        if "default" not in times:
            continue
        one_kernel += len(row["variants"]) == 1
        counted += 1
        if times["default"] > margin * min(times.values()):
            slow.append(f"{row['kernel']} {times['default'] / min(times.values()):.2f}")
        if "min" in times and times["default"] > margin * times["min"]:
            behind_min.append(row["kernel"])
    print(f"default fusion within {margin:.2f}× of the fastest strategy on "
          f"{counted - len(slow)} of {counted} operators"
          + (f"; beyond: {', '.join(slow)}" if slow else "")
          + f"; slower than fusion='min' by more than {margin:.2f}× on {len(behind_min)}"
          + f" ({one_kernel} generate the same kernel under all three)")


def spelling_variants(group, cache_dir: Path) -> list[tuple[str, object]]:
    """The spellings of ``group``, one variant per distinct kernel (``variants.alike``):
    spellings that compile to the same C share one row (``"benchmark's = exp twice, no
    temporary"``), as the fusion strategies do."""
    return alike([(label, polyc.define(source, cache_dir=cache_dir))
                  for label, source in group.sources])


def spelling_rows(cache_dir: Path, names: list[str]) -> list[dict]:
    rows = []
    for k, group in enumerate(SPELLINGS):
        if names and group.name not in names:
            continue
        variants = spelling_variants(group, cache_dir)
        rows.append(bench_variants(group.bench, variants, ARGS.seed + 100 + k,
                                   with_torch=True))
        print(f"  spellings {group.name}: done", file=sys.stderr, flush=True)
    return rows


def strategy_variants(source: str, name: str | None, cache_dir: Path
                      ) -> list[tuple[str, object]]:
    """The operator under each fusion strategy, one variant per distinct kernel: the
    strategies whose C is the same share one (label ``"default = max"``), so that
    timing noise never tells identical kernels apart."""
    return alike([(strategy, polyc.define(source, name=name, fusion=strategy,
                                          cache_dir=cache_dir))
                  for strategy in FUSION_STRATEGIES])


def strategy_times(row: dict) -> dict[str, float]:
    """Each strategy's time in a row of :func:`strategy_variants` variants."""
    return {strategy: v["median_ms"] for v in row["variants"] if v["median_ms"]
            for strategy in v["label"].split(" = ")}


def fusion_rows(cache_dir: Path, names: list[str]) -> list[dict]:
    rows = []
    for k, name in enumerate(names):
        bench = BY_NAME[name]
        variants = strategy_variants(bench.source, None, cache_dir)
        rows.append(bench_variants(bench, variants, ARGS.seed + k))
        print(f"  fusion {name}: done", file=sys.stderr, flush=True)
    return rows


class CorpusBench:
    """An operator of the test corpus (``tests/corpus.py``) as a benchmark: its largest
    test sizes scaled up (:func:`corpus_sizes`), its inputs and float64 reference."""

    def __init__(self, entry):
        self.entry = entry
        self.name = entry.name
        self.sizes = self.quick_sizes = corpus_sizes(entry)

    def inputs(self, sizes: dict, rng) -> tuple:
        return make_inputs(self.entry, sizes, rng)

    def reference(self, *args) -> tuple:
        return self.entry.reference(*args)

    def size_text(self, sizes: dict) -> str:
        return " ".join(f"{k}={v}" for k, v in sizes.items())


# A corpus operator is scaled up until its tensors hold about this many elements, or its
# statements run about this many instances: a millisecond or more per call.
CORPUS_ELEMENTS = 1 << 22
CORPUS_INSTANCES = 1 << 27


def corpus_sizes(entry) -> dict:
    """Sizes to time ``entry`` at: its window sizes (a convolution's kernel: the ones
    the compiler's cost model takes as small) as in its largest test, every other size
    the largest power of two from 8 that keeps its tensors within
    :data:`CORPUS_ELEMENTS` elements and its statements within :data:`CORPUS_INSTANCES`
    instances."""
    from polyc.compiler import frontend
    from polyc.lang import sizes as sz
    from polyc.machine import rules
    from polyc.scheduling.fusion_cost import nominal_sizes
    from polyc.poly.program import build_poly_program, isl_name

    op = frontend(entry.source, entry.def_name)
    nominal = nominal_sizes(build_poly_program(op))
    base = max(entry.shapes, key=lambda s: sum(s.values()))

    def scaled(extent: int) -> dict:
        return {k: v if nominal.get(isl_name(k)) == rules.NOMINAL_WINDOW else extent
                for k, v in base.items()}

    def within(sizes: dict) -> bool:
        elements = sum(math.prod(max(0, sz.evaluate(d, sizes)) for d in t.shape)
                       for t in op.inputs + op.outputs + op.temporaries)
        instances = sum(math.prod(max(0, sz.evaluate(r.hi, sizes) - sz.evaluate(r.lo, sizes))
                                  for r in stmt.domain) for stmt in op.statements)
        return elements <= CORPUS_ELEMENTS and instances <= CORPUS_INSTANCES

    extent = 8
    while extent < (1 << 22) and within(scaled(2 * extent)):
        extent *= 2
    return scaled(extent)


def corpus_rows(cache_dir: Path, names: list[str]) -> list[dict]:
    rows = []
    chosen = [e for e in CORPUS if not names or e.name in names]
    for k, entry in enumerate(chosen):
        try:
            bench = CorpusBench(entry)
            variants = strategy_variants(entry.source, entry.def_name, cache_dir)
            row = bench_variants(bench, variants, ARGS.seed + 200 + k)
            if all(v["check"] == "error" for v in row["variants"]):
                # sizes the operator's preconditions refuse: its own largest test sizes
                bench.sizes = bench.quick_sizes = max(entry.shapes,
                                                      key=lambda s: sum(s.values()))
                row = bench_variants(bench, variants, ARGS.seed + 200 + k)
            rows.append(row)
        except Exception as error:
            print(f"  corpus {entry.name}: {type(error).__name__}: {error}", file=sys.stderr)
            continue
        print(f"  corpus [{k + 1}/{len(chosen)}] {entry.name}: done", file=sys.stderr,
              flush=True)
    return rows


# ------------------------------------------------------------------ cold compiles

def first_calls(contestants: list[Contestant], reference) -> None:
    """Each contestant's untimed first call (polyc compiles), then a timed one
    (``first_s``) whose outputs are checked against ``reference`` where both exist; a
    contestant that fails gets its ``error``."""
    for c in contestants:
        try:
            c.run()
            c.first_s = timed(c.run)
            if reference is not None and c.outputs_of is not None:
                check(c, reference)
        except Exception as error:
            c.error = f"{type(error).__name__}: {error}".splitlines()[0]
            c.check = "error"


def bench_backward(entry, rng_seed: int) -> dict:
    """``polyc.grad`` of one kernel against torch autograd (backward alone, and forward +
    backward) and numpy's formula, interleaved; checked against torch's gradients."""
    bench = entry.bench
    sizes = bench.quick_sizes if ARGS.quick else bench.sizes
    rng = np.random.default_rng(rng_seed)
    args = bench.inputs(sizes, rng)
    forward = polyc.define(bench.source)
    grad = polyc.grad(forward, wrt=entry.wrt)
    cotangent = rng.standard_normal(forward(*args).shape).astype(np.float32)
    wanted = [k for k, t in enumerate(forward.ir.inputs)
              if t.type.is_float and (entry.wrt is None or t.name in entry.wrt)]
    arrays = [k for k in wanted if isinstance(args[k], np.ndarray)]
    floats = wanted
    last: dict = {}

    def gradients(result) -> list:  # polyc's gradients of the array inputs
        result = result if isinstance(result, tuple) else (result,)
        return [g for k, g in zip(floats, result) if k in arrays]

    contestants = [Contestant("polyc", lambda: last.__setitem__("polyc", grad(*args, cotangent)),
                              lambda: gradients(last["polyc"]))]
    # the backward that takes what the forward kept (to_torch's), the forward run once
    pair = polyc.grad_with_residuals(forward, wrt=entry.wrt)
    taken = pair.saved(pair.forward(*args))
    contestants.append(Contestant("polyc saved", lambda: last.__setitem__(
        "saved", pair.backward(*args, cotangent, *taken)), lambda: gradients(last["saved"])))
    reference = None
    if torch is not None:
        t_args = [torch.from_numpy(a).requires_grad_(k in arrays) if isinstance(a, np.ndarray)
                  else a for k, a in enumerate(args)]
        leaves = [t_args[k] for k in arrays]
        d_y = torch.from_numpy(cotangent)
        saved = entry.torch_forward(*t_args)
        reference = [g.numpy() for g in torch.autograd.grad(saved, leaves, d_y,
                                                            retain_graph=True)]
        contestants.append(Contestant("torch backward", lambda: torch.autograd.grad(
            saved, leaves, d_y, retain_graph=True), lambda: reference))
        contestants.append(Contestant("torch forward+backward", lambda: torch.autograd.grad(
            entry.torch_forward(*t_args), leaves, d_y), lambda: reference))
        registered = polyc.to_torch(forward)
        contestants.append(Contestant("polyc.to_torch forward+backward", lambda: last.__setitem__(
            "registered", torch.autograd.grad(registered(*t_args), leaves, d_y)),
            lambda: [g.numpy() for g in last["registered"]]))
        contestants.append(Contestant("polyc.to_torch forward", lambda: registered(*t_args),
                                      None))
        contestants.append(Contestant("torch forward", lambda: entry.torch_forward(*t_args),
                                      None))
    if entry.numpy is not None:
        contestants.append(Contestant("numpy", lambda: last.__setitem__(
            "numpy", entry.numpy(args, cotangent)), lambda: list(last["numpy"])))
    first_calls(contestants, reference)  # compiles polyc's backward
    rounds = measure(contestants)
    return {"kernel": entry.name, "size_text": bench.size_text(sizes), "rounds": rounds,
            "note": entry.note, "compile_s": None,
            "times": {c.name: median_ms(c) for c in contestants},
            "faults": {c.name: median_faults(c) for c in contestants},
            "checks": {c.name: c.check or c.error for c in contestants}}


def bench_triangular(name: str, cache_dir: Path, rng_seed: int) -> dict:
    """One triangular kernel (benchmarks/triangular.py): polyc's ``where`` and select
    spellings against numpy's full-matrix formula, SciPy's BLAS and torch, interleaved."""
    source, reference_of, _ = triangular.KERNELS[name]
    sizes = (triangular.QUICK_SIZES if ARGS.quick else triangular.SIZES)[name]
    args = triangular.inputs(name, sizes, np.random.default_rng(rng_seed))
    reference = reference_of(*args)
    last: dict = {}
    contestants = []
    spellings = [("where", source)] + (
        [("select", triangular.TERNARY[name])] if name in triangular.TERNARY else [])
    for label, text in spellings:
        op = polyc.define(text, cache_dir=cache_dir)
        out = np.empty(reference[0].shape, np.float32)
        contestants.append(Contestant(f"polyc {label}", lambda op=op, out=out: op(*args, out=out),
                                      lambda out=out: [out]))
    peers = [("numpy", triangular.numpy_peer(name, args)),
             ("scipy", triangular.scipy_peer(name, args)),
             ("torch", triangular.torch_peer(name, args, torch))]
    for label, peer in peers:
        if peer is not None:
            contestants.append(Contestant(
                label, lambda label=label, peer=peer: last.__setitem__(label, peer()),
                lambda label=label: list(last[label])))
    first_calls(contestants, reference)  # compiles polyc's kernels
    if ARGS.quiet_wait > 0:
        wait_for_quiet(ARGS.quiet_wait)
    rounds = measure(contestants)
    return {"kernel": name, "size_text": ", ".join(f"{k}={v}" for k, v in sizes.items()),
            "rounds": rounds, "gflop": triangular.work(name, sizes) / 1e9,
            "times": {c.name: median_ms(c) for c in contestants},
            "checks": {c.name: c.check or c.error for c in contestants}}


def print_triangular(rows: list[dict]) -> None:
    print()
    print("triangular: index-dependent domains, written with where ranges and with selects, "
          "against numpy's full-matrix formula and SciPy's BLAS (same run)")
    columns = [("kernel", "<"), ("sizes", "<"), ("check", "<"), ("n", ">"), ("where ms", ">"),
               ("GFLOP/s", ">"), ("select ms", ">"), ("÷ where", ">"), ("numpy ms", ">"),
               ("÷", ">"), ("scipy ms", ">"), ("÷", ">"), ("torch ms", ">"), ("÷", ">")]
    cells = []
    for row in rows:
        t = row["times"]
        mine = t.get("polyc where")
        checks = {row["checks"].get(k) for k in ("polyc where", "polyc select") if k in t}
        cells.append([row["kernel"], row["size_text"], ",".join(sorted(map(str, checks))),
                      str(row["rounds"]), fmt_ms(mine),
                      f"{row['gflop'] / mine * 1000:.1f}" if mine else "-",
                      fmt_ms(t.get("polyc select")),
                      f"{t['polyc select'] / mine:.2f}" if mine and t.get("polyc select")
                      else "-",
                      fmt_ms(t.get("numpy")), fmt_ratio(t.get("numpy"), mine),
                      fmt_ms(t.get("scipy")), fmt_ratio(t.get("scipy"), mine),
                      fmt_ms(t.get("torch")), fmt_ratio(t.get("torch"), mine)])
    print(table(columns, cells))
    print("where: the operator with index-dependent where ranges; select: the same with "
          "selects on the indices (÷ where: its time / where's, 1 = as fast); numpy: the "
          "full-matrix formula (twice the work of a triangle); scipy: strmm, ssyrk, ssyr2k, "
          "ssymm, sgbmv; torch: scaled_dot_product_attention(is_causal=True). ÷: the peer's "
          "time / polyc where's (above 1: polyc faster). GFLOP/s: the triangle's FLOPs")


def print_backward(rows: list[dict]) -> None:
    print()
    print("backward: polyc.grad against torch autograd and numpy's formula (same run)")
    columns = [("kernel", "<"), ("sizes", "<"), ("check", "<"), ("n", ">"), ("polyc ms", ">"),
               ("torch bwd", ">"), ("÷", ">"), ("torch fwd+bwd", ">"), ("÷", ">"),
               ("saved ms", ">"), ("÷ bwd", ">"),
               ("numpy ms", ">"), ("÷", ">"), ("to_torch fwd", ">"), ("÷", ">"),
               ("to_torch fwd+bwd", ">"), ("÷", ">")]
    cells = []
    for row in rows:
        t = row["times"]
        mine = t.get("polyc")
        ours_forward, ours_both = t.get("polyc.to_torch forward"), t.get(
            "polyc.to_torch forward+backward")
        checks = {row["checks"].get(k) for k in ("polyc", "polyc saved") if k in t}
        cells.append([row["kernel"], row["size_text"], ",".join(sorted(map(str, checks))),
                      str(row["rounds"]), fmt_ms(mine),
                      fmt_ms(t.get("torch backward")), fmt_ratio(t.get("torch backward"), mine),
                      fmt_ms(t.get("torch forward+backward")),
                      fmt_ratio(t.get("torch forward+backward"), mine),
                      fmt_ms(t.get("polyc saved")),
                      fmt_ratio(t.get("torch backward"), t.get("polyc saved")),
                      fmt_ms(t.get("numpy")), fmt_ratio(t.get("numpy"), mine),
                      fmt_ms(ours_forward), fmt_ratio(t.get("torch forward"), ours_forward),
                      fmt_ms(ours_both), fmt_ratio(t.get("torch forward+backward"), ours_both)])
    print(table(columns, cells))
    print("polyc: polyc.grad(op) on numpy arrays; to_torch: the registered op in a torch "
          "autograd graph, forward alone and forward + backward. ÷: torch's time (the "
          "backward alone, forward + backward, the forward) / ours (above 1: polyc faster); "
          "polyc.grad's backward recomputes the forward values it needs; saved: the "
          "backward of polyc.grad_with_residuals on numpy arrays, taking the outputs it "
          "reads and the reductions its forward kept (what to_torch runs; ÷ bwd: torch's "
          "backward alone / it)")
    for row in rows:
        if row["note"]:
            print(f"  {row['kernel']}: {row['note']}")
    print_faults([(row["kernel"], row["faults"]) for row in rows])


def print_faults(rows: list[tuple[str, dict]]) -> None:
    """The contestants whose timed calls took page faults (median per call), by row."""
    lines = [f"  {kernel}: " + ", ".join(f"{name} {count}" for name, count in faults.items()
                                         if count)
             for kernel, faults in rows if any(faults.values())]
    if lines:
        print("page faults per timed call (median; about 1 µs each on a VM, part of the "
              "times above; the allocator's state decides who pays):")
        print("\n".join(lines))


def launcher_seconds(cache_dir: Path) -> tuple[float, str]:
    """Build (or find) the C launcher before anything is timed: it is built once per
    cache directory and Python, not once per operator."""
    from polyc.jit.launcher import launcher_module

    start = time.perf_counter()
    module = launcher_module(polyc.Options().with_(cache_dir=cache_dir))
    return time.perf_counter() - start, module.describe()


def compile_rows(names: list[str]) -> list[dict]:
    """Cold compile of every corpus operator, each into a fresh cache directory: polyc's
    stages, the C compiler, and the wall time of define() + compile(). The precompiled
    header of the kernels' standard headers (polyc/jit/headers.py), which a cache builds
    once for all its kernels, is one for all of them."""
    rows = []
    shared = Path(tempfile.mkdtemp(prefix="polyc-headers-"))
    with tempfile.TemporaryDirectory(prefix="polyc-compile-") as tmp:  # builds the header
        (Path(tmp) / "headers").symlink_to(shared, target_is_directory=True)
        polyc.define("def scale(float(N) x) -> (y) { y(i) = 2 * x(i) }",
                     cache_dir=Path(tmp)).compile()
    for entry in [e for e in CORPUS if not names or e.name in names]:
        with tempfile.TemporaryDirectory(prefix="polyc-compile-") as tmp:
            (Path(tmp) / "headers").symlink_to(shared, target_is_directory=True)
            start = time.perf_counter()
            op = polyc.define(entry.source, name=entry.def_name, cache_dir=Path(tmp))
            frontend = time.perf_counter() - start
            try:
                kernel = op.compile()
            except Exception as error:
                print(f"  compile {entry.name}: {type(error).__name__}: {error}",
                      file=sys.stderr)
                continue
            total = time.perf_counter() - start
            stages = op.compilation().seconds
            rows.append({"operator": entry.name, "frontend_s": frontend, "stages_s": stages,
                         "cc_s": kernel.compile_seconds, "total_s": total,
                         "c_lines": kernel.c_source.count("\n")})
    shutil.rmtree(shared, ignore_errors=True)
    return rows


def print_compiles(rows: list[dict]) -> None:
    print()
    print("cold compile of every corpus operator (fresh cache directory each, C launcher "
          "and precompiled header already built)")
    cells = [[r["operator"], f"{1000 * (r['frontend_s'] + sum(r['stages_s'].values())):.0f}",
              max(r["stages_s"], key=r["stages_s"].get), f"{1000 * r['cc_s']:.0f}",
              str(r["c_lines"]), f"{1000 * r['total_s']:.0f}"]
             for r in sorted(rows, key=lambda r: -r["total_s"])]
    print(table([("operator", "<"), ("polyc ms", ">"), ("slowest stage", "<"), ("cc ms", ">"),
                 ("C lines", ">"), ("cold total ms", ">")], cells))
    totals = sorted(r["total_s"] for r in rows)
    cc = sum(r["cc_s"] for r in rows) / max(sum(totals), 1e-9)
    print(f"median {1000 * statistics.median(totals):.0f} ms, max {1000 * totals[-1]:.0f} ms, "
          f"{sum(t > 1.0 for t in totals)} over 1 s, {len(totals)} operators; the C compiler "
          f"is {100 * cc:.0f}% of the total")


# ------------------------------------------------------------------ per-call overhead

def overhead(cache_dir: Path) -> dict:
    """Warm per-call cost on tiny inputs with out= given: polyc's 2x2 matmul and 4-element
    add, called and through bind(), against np.einsum, np.matmul and np.add."""
    op = polyc.define(BY_NAME["gemm"].source, cache_dir=cache_dir)
    add = polyc.define("def add(float(N) X, float(N) Y) -> (Z) { Z(i) = X(i) + Y(i) }",
                       cache_dir=cache_dir)
    A = np.ones((2, 2), np.float32)
    B = np.ones((2, 2), np.float32)
    C = np.empty((2, 2), np.float32)
    X, Y, Z = np.ones(4, np.float32), np.ones(4, np.float32), np.empty(4, np.float32)
    op(A, B, out=C)
    add(X, Y, out=Z)
    bound_mm, bound_add = op.bind(A, B, out=C), add.bind(X, Y, out=Z)
    pin_threads()
    calls = {
        "polyc": lambda: op(A, B, out=C),
        "polyc bind()": bound_mm,
        "numpy.einsum": lambda: np.einsum("ik,kj->ij", A, B, out=C),
        "numpy.matmul": lambda: np.matmul(A, B, out=C),
        "polyc add": lambda: add(X, Y, out=Z),
        "polyc add, allocating": lambda: add(X, Y),
        "polyc add bind()": bound_add,
        "numpy.add": lambda: np.add(X, Y, out=Z),
    }
    if torch is not None:
        try:
            tA, tB, tC = torch.from_numpy(A), torch.from_numpy(B), torch.from_numpy(C)
            torch.matmul(tA, tB, out=tC)
            calls["torch.matmul"] = lambda: torch.matmul(tA, tB, out=tC)
            op(tA, tB, out=tC)
            calls["polyc on torch tensors"] = lambda: op(tA, tB, out=tC)
            tX, tY = torch.from_numpy(X), torch.from_numpy(Y)
            registered = polyc.to_torch(add)
            registered(tX, tY)
            calls["polyc.to_torch(add)"] = lambda: registered(tX, tY)
            calls["polyc add on torch tensors, allocating"] = lambda: add(tX, tY)
            calls["torch.add"] = lambda: torch.add(tX, tY)
        except Exception:
            pass
    n = 2000
    result = {}
    for name, call in calls.items():
        for _ in range(200):
            call()
        samples = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(n):
                call()
            samples.append((time.perf_counter() - start) / n)
        result[name] = 1e6 * statistics.median(samples)
    return result


# ------------------------------------------------------------------ printing

def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def fmt_rate(row: dict, ms: float | None) -> str:
    if ms is None or ms <= 0:
        return "-"
    per_second = row["work"] / (ms / 1000)
    unit = "GFLOP/s" if row["kind"] == "compute" else "GB/s"
    return f"{per_second / 1e9:.1f} {unit}"


def fmt_ratio(other: float | None, mine: float | None) -> str:
    if other is None or mine is None or mine <= 0:
        return "-"
    return f"{other / mine:.2f}"


def table(columns: list[tuple[str, str]], rows: list[list[str]]) -> str:
    """Plain-text table; ``columns`` are (title, "<" or ">")."""
    widths = [max(len(title), *(len(r[i]) for r in rows)) if rows else len(title)
              for i, (title, _) in enumerate(columns)]

    def line(cells):
        out = []
        for cell, (_, align), width in zip(cells, columns, widths):
            out.append(cell.ljust(width) if align == "<" else cell.rjust(width))
        return "  ".join(out).rstrip()

    text = [line([title for title, _ in columns]), line(["-" * w for w in widths])]
    text += [line(r) for r in rows]
    return "\n".join(text)


def print_results(rows: list[dict], over: dict | None) -> None:
    have_torch = torch is not None
    columns = [("kernel", "<"), ("size", "<"), ("check", "<"), ("n", ">"),
               ("polyc ms", ">"), ("numpy ms", ">")]
    if have_torch:
        columns.append(("torch ms", ">"))
    columns += [("polyc rate", ">"), ("numpy rate", ">"), ("numpy/polyc", ">")]
    if have_torch:
        columns.append(("torch/polyc", ">"))
    columns.append(("other load", ">"))
    cells = []
    for row in rows:
        p = row.get("polyc", {}).get("median_ms")
        n = row.get("numpy", {}).get("median_ms")
        t = row.get("torch", {}).get("median_ms") if "torch" in row else None
        check_text = row.get("polyc", {}).get("check", "error")
        line = [row["kernel"], row["size_text"], check_text, str(row["rounds"]),
                fmt_ms(p), fmt_ms(n)]
        if have_torch:
            line.append(fmt_ms(t))
        line += [fmt_rate(row, p), fmt_rate(row, n), fmt_ratio(n, p)]
        if have_torch:
            line.append(fmt_ratio(t, p))
        load = row.get("other_load")
        line.append("-" if load is None else f"{load:.2f}")
        cells.append(line)
    print(table(columns, cells))
    print("ratios > 1: polyc is faster.  rate: GFLOP/s for contractions, GB/s of compulsory "
          "traffic (inputs read once,\noutputs written once) for memory-bound kernels.  n: rounds. "
          "other load: cores that other processes kept\nbusy while this kernel was timed "
          "(0 = quiet machine; above ~0.2 the numbers are disturbed).")
    if not have_torch:
        print(f"torch: {TORCH_ERROR}, so its columns are left out.")
    print_faults([(row["kernel"], {name: row[name].get("page_faults", 0)
                                   for name in ("polyc", "numpy", "torch") if name in row})
                  for row in rows])

    print()
    print("cold compile (fresh cache directory)")
    ccols = [("kernel", "<"), ("polyc ms", ">"), ("frontend", ">"), ("domains+deps", ">"),
             ("schedule", ">"), ("ast", ">"), ("c", ">"), ("cc ms", ">"), ("cold total", ">"),
             ("cache", "<"), ("warm process", ">")]
    crows = []
    for row in rows:
        comp = row.get("compile")
        if not comp:
            crows.append([row["kernel"]] + ["-"] * 8 + ["error", "-"])
            continue
        st = dict(comp["stages_s"])
        named = {k: st.pop(k, 0.0) for k in ("schedule", "ast", "c")}
        crows.append([
            row["kernel"], f"{1000 * comp['polyc_s']:.0f}", f"{1000 * comp['frontend_s']:.0f}",
            f"{1000 * sum(st.values()):.0f}",  # domains, dependences and any newer stage
            f"{1000 * named['schedule']:.0f}", f"{1000 * named['ast']:.0f}",
            f"{1000 * named['c']:.0f}", f"{1000 * comp['cc_s']:.0f}",
            f"{1000 * comp['total_s']:.0f}", comp["cache"],
            "-" if comp.get("warm_process_s") is None else f"{1000 * comp['warm_process_s']:.0f}"])
    print(table(ccols, crows))
    print("polyc ms = frontend (define(): parse, sema, bounds proof) + sum of "
          "compilation().seconds (the other columns);\ncc ms = Kernel.compile_seconds (the C "
          "compiler); cold total = wall time of define() + compile(); warm process = define() "
          "+ compile() in a new\nprocess with that cache (no polyhedral stage, no C compiler; "
          "'-': it generated the C again).")

    if over:
        print()
        print("warm per-call overhead with out= (median of 7 x 2000 calls): 2x2 matmul, then "
              "a 4-element add")
        print("  " + "   ".join(f"{name} {us:.2f} us" for name, us in over.items()))
        print(f"  polyc add / numpy.add {over['polyc add'] / over['numpy.add']:.2f}; "
              f"polyc 2x2 matmul / numpy.einsum {over['polyc'] / over['numpy.einsum']:.2f}; "
              f"polyc add bind() {over['polyc add bind()']:.2f} us")

    notes = [(row["kernel"], note) for row in rows for note in row["notes"]]
    if notes:
        print()
        for kernel, note in notes:
            print(f"note [{kernel}]: {note}")


# ------------------------------------------------------------------ main

def main() -> int:
    if ARGS.list:
        for b in BENCHES:
            print(f"{b.name:12} {b.formula:55} {b.size_text(b.sizes)}")
        return 0
    names = [n.strip() for n in ARGS.kernels.split(",") if n.strip()] or [b.name for b in BENCHES]
    corpus_names = {entry.name for entry in CORPUS}
    unknown = [n for n in names if n not in BY_NAME and n not in SPELLINGS_BY_NAME
               and n not in corpus_names and n not in BACKWARD_BY_NAME
               and n not in triangular.KERNELS]
    if unknown:
        print(f"unknown kernel(s): {', '.join(unknown)}; known: {', '.join(BY_NAME)}, "
              f"{', '.join(n for n in SPELLINGS_BY_NAME if n not in BY_NAME)}", file=sys.stderr)
        return 2
    chosen = [n.strip() for n in ARGS.kernels.split(",") if n.strip()]
    names = [n for n in names if n in BY_NAME]
    sections = {s.strip() for s in ARGS.sections.split(",") if s.strip()}
    unknown = sorted(sections - {"kernels", "compile", "spellings", "fusion", "corpus",
                                 "backward", "triangular"})
    if unknown:
        print(f"unknown section(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    info = header()
    print_header(info)
    rows, spellings, fusions, corpus, compiles, over = [], [], [], [], [], None
    backwards: list[dict] = []
    triangles: list[dict] = []
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        cache_dir = Path(ARGS.cache_dir) if ARGS.cache_dir else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="polyc-bench-cache-")))
        launcher_s, launcher_text = launcher_seconds(cache_dir)
        print(f"calls {launcher_text}; built in {1000 * launcher_s:.0f} ms (once per cache "
              f"directory and Python)\n")
        for i, name in enumerate(names if "kernels" in sections else []):
            bench = BY_NAME[name]
            t0 = time.perf_counter()
            try:
                row = bench_one(bench, cache_dir, ARGS.seed + i)
            except Exception:
                traceback.print_exc()
                row = {"kernel": name, "size_text": "", "kind": bench.kind, "work": 1,
                       "rounds": 0, "notes": ["benchmark crashed (traceback above)"]}
            rows.append(row)
            print(f"  [{i + 1}/{len(names)}] {name}: {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
        if "kernels" in sections:
            over = overhead(cache_dir)
        if "compile" in sections:
            compiles = compile_rows(chosen)
        if "spellings" in sections:
            spellings = spelling_rows(cache_dir, chosen)
        if "fusion" in sections:
            fusions = fusion_rows(cache_dir, names)
        if "corpus" in sections:
            corpus = corpus_rows(cache_dir, chosen)
        if "backward" in sections:
            for i, entry in enumerate(BACKWARD):
                if chosen and entry.name not in chosen:
                    continue
                backwards.append(bench_backward(entry, ARGS.seed + i))
                print(f"  backward {entry.name}: done", file=sys.stderr, flush=True)
        if "triangular" in sections:
            for i, name in enumerate(triangular.KERNELS):
                if chosen and name not in chosen:
                    continue
                triangles.append(bench_triangular(name, cache_dir, ARGS.seed + i))
                print(f"  triangular {name}: done", file=sys.stderr, flush=True)
    if rows:
        print()
        print_results(rows, over)
    if compiles:
        print_compiles(compiles)
    if backwards:
        print_backward(backwards)
    if triangles:
        print_triangular(triangles)
    if spellings:
        print_variants("spellings: one operator written several ways, and torch eager (same "
                       "run)", spellings, "÷ fastest: time / the fastest spelling of the "
                       "operator; ÷ torch: torch's time / the spelling's")
    if fusions:
        print_variants("fusion: the default strategy against fusion='min' and 'max' (same run)",
                       fusions, "÷ fastest: time / the fastest strategy; the worst ratio is "
                       "the default's", worst_of="default")
    if corpus:
        print_variants("corpus: the default fusion against fusion='min' and 'max' on every "
                       "operator of tests/corpus.py, scaled up (same run)", corpus,
                       "÷ fastest: time / the fastest strategy; the worst ratio is the "
                       "default's", worst_of="default")
        print_fusion_summary(corpus + fusions)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump({"machine": info, "kernels": rows, "overhead_us": over,
                       "spellings": spellings, "fusion": fusions, "corpus": corpus,
                       "compile": compiles, "backward": backwards,
                       "triangular": triangles}, f,
                      indent=1, default=str)
    wrong = [r["kernel"] for r in rows if r.get("polyc", {}).get("check") != "ok"]
    wrong += [f"{r['kernel']} backward{label}" for r in backwards
              for label in ("", " saved") if r["checks"].get(f"polyc{label}") not in ("ok", "")]
    wrong += [f"{r['kernel']} {label}" for r in triangles for label, c in r["checks"].items()
              if label.startswith("polyc") and c != "ok"]
    wrong += [f"{r['kernel']} {v['label']}" for r in spellings + fusions + corpus
              for v in r["variants"] if v["check"] != "ok"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
