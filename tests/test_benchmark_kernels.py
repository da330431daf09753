"""The benchmark's kernels (benchmarks/kernels.py) at tiny sizes: each TC source
parses, compiles and matches numpy's float64 reference, and so does each numpy
idiom the benchmark times polyc against. Nothing here is timed."""
import sys
from pathlib import Path

import numpy as np
import pytest

import polyc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from kernels import BENCHES, TOLERANCE, max_rel_error  # noqa: E402
from variants import SPELLINGS, SPELLINGS_BY_NAME, alike  # noqa: E402

SPELLED = [(group, label, source) for group in SPELLINGS for label, source in group.sources]


@pytest.mark.needs_cc
@pytest.mark.parametrize("bench", BENCHES, ids=[b.name for b in BENCHES])
def test_benchmark_kernel_matches_numpy(bench):
    sizes = bench.tiny_sizes
    args = bench.inputs(sizes, np.random.default_rng(0))
    reference = bench.reference(*args)
    shapes = bench.outputs(sizes)
    assert [r.shape for r in reference] == [tuple(s) for s in shapes]

    op = polyc.define(bench.source)
    result = op(*args)
    result = list(result) if isinstance(result, tuple) else [result]
    assert [r.shape for r in result] == [tuple(s) for s in shapes]
    for got, ref in zip(result, reference):
        assert got.dtype == np.float32
        assert max_rel_error(got, ref) <= TOLERANCE

    # out= as the benchmark calls it
    outs = [np.empty(s, np.float32) for s in shapes]
    op(*args, out=outs[0] if len(outs) == 1 else tuple(outs))
    for got, ref in zip(outs, reference):
        assert max_rel_error(got, ref) <= TOLERANCE

    # the numpy idiom polyc is compared with computes the same thing
    numpy_outs = [np.empty(s, np.float32) for s in shapes]
    bench.numpy(args, numpy_outs)()
    for got, ref in zip(numpy_outs, reference):
        assert max_rel_error(got, ref) <= TOLERANCE


def test_spellings_that_compile_alike_share_one_row():
    # The benchmark's softmax and "exp twice" differ only in the name of the exponentials'
    # buffer (`e`, and `exp_S1` that polyc introduced); normalised in place is another
    # kernel; every mlp spelling is one of its own (fmax, a select, a temporary).
    softmax = [(label, polyc.define(source))
               for label, source in SPELLINGS_BY_NAME["softmax"].sources]
    assert [label for label, _ in alike(softmax)] == [
        "benchmark's = exp twice, no temporary", "written into Y, then divided"]
    mlp = [(label, polyc.define(source)) for label, source in SPELLINGS_BY_NAME["mlp"].sources]
    assert [label for label, _ in alike(mlp)] == [label for label, _ in mlp]


@pytest.mark.needs_cc
@pytest.mark.parametrize("group, label, source", SPELLED,
                         ids=[f"{g.name}: {label}" for g, label, _ in SPELLED])
def test_every_spelling_computes_its_operator(group, label, source):
    # The "spellings" section times these against each other: each must be the same
    # operator (float64 reference of the group's benchmark), with each strategy.
    sizes = group.bench.tiny_sizes
    args = group.bench.inputs(sizes, np.random.default_rng(1))
    for fusion in ("default", "min"):
        result = polyc.define(source, fusion=fusion)(*args)
        result = list(result) if isinstance(result, tuple) else [result]
        for got, ref in zip(result, group.bench.reference(*args), strict=True):
            assert max_rel_error(got, ref) <= TOLERANCE, (label, fusion)


def test_benchmark_work_counts_are_positive():
    for bench in BENCHES:
        for sizes in (bench.sizes, bench.quick_sizes, bench.tiny_sizes):
            assert bench.work(sizes) > 0
            assert bench.kind in ("compute", "memory")


@pytest.mark.needs_cc
def test_benchmark_runs_openblas_with_its_own_kernels(tmp_path):
    """An OPENBLAS_CORETYPE in the environment (this VM sets Haswell on an AVX-512
    CPU) would hold numpy to another CPU's kernels: the harness removes it, says so,
    and still checks polyc's result."""
    import json
    import os
    import subprocess

    report = tmp_path / "bench.json"
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell", POLYC_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run(
        [sys.executable, str(Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"),
         "--quick", "--kernels", "elementwise", "--no-torch", "--quiet-wait", "0",
         "--repeat", "1", "--min-repeat", "1", "--settle", "0", "--json", str(report)],
        env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "removed from the environment" in run.stdout and "OPENBLAS_CORETYPE=Haswell" in run.stdout
    machine = json.loads(report.read_text())["machine"]
    assert machine["removed_env"]["OPENBLAS_CORETYPE"] == "Haswell"
    assert "OPENBLAS_CORETYPE" not in machine["env"]


@pytest.mark.needs_cc
def test_benchmark_as_avx2_holds_every_contestant_to_avx2(tmp_path):
    """--as-isa avx2: polyc's AVX2 model built for Haswell, OpenBLAS's Haswell kernels
    (kept, not removed), numpy's AVX-512 dispatch off; polyc's result still checked."""
    import json
    import os
    import subprocess

    if polyc.Options.from_environment().machine.isa not in ("avx2", "avx512"):
        pytest.skip("the host runs no AVX2 code")
    report = tmp_path / "bench.json"
    env = dict(os.environ, POLYC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("POLYC_MACHINE", None)
    run = subprocess.run(
        [sys.executable, str(Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"),
         "--quick", "--kernels", "gemm", "--sections", "kernels", "--no-torch",
         "--as-isa", "avx2", "--quiet-wait", "0", "--repeat", "1", "--min-repeat", "1",
         "--settle", "0", "--json", str(report)],
        env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(report.read_text())
    machine = result["machine"]
    assert machine["machine_model"].startswith("zen3 ")
    assert machine["env"]["OPENBLAS_CORETYPE"] == "Haswell"
    assert machine["env"]["POLYC_CFLAGS"] == "-march=haswell"
    assert "OPENBLAS_CORETYPE" not in machine["removed_env"]
    (row,) = result["kernels"]
    assert row["polyc"]["check"] == "ok"


def test_scaling_runs_each_thread_count_and_compiles_once(tmp_path):
    """benchmarks/scaling.py: one run.py process per thread count, their results in
    one table and one JSON; the second process finds the first one's kernel."""
    import json
    import subprocess

    report = tmp_path / "scaling.json"
    run = subprocess.run(
        [sys.executable, str(Path(__file__).resolve().parents[1] / "benchmarks" / "scaling.py"),
         "--threads", "1,2", "--kernels", "elementwise", "--json", str(report), "--",
         "--quick", "--no-torch", "--quiet-wait", "0", "--repeat", "1", "--min-repeat", "1",
         "--settle", "0"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads(report.read_text())
    assert sorted(results) == ["1", "2"]
    assert [results[t]["machine"]["threads"] for t in ("1", "2")] == [1, 2]
    rows = [results[t]["kernels"][0] for t in ("1", "2")]
    assert [row["polyc"]["check"] for row in rows] == ["ok", "ok"]
    assert [row["compile"]["cache"] for row in rows] == ["miss", "disk"]
    line = next(line for line in run.stdout.splitlines() if line.startswith("elementwise"))
    assert line.split()[1:4] == ["polyc", f"{rows[0]['polyc']['median_ms']:.3f}", "(1.00)"]


PIN_AGAIN = """
import json, os, sys, threading
sys.path.insert(0, sys.argv[1])  # the benchmarks directory
sys.argv = ["run.py", "--no-torch", "--threads", "2"]
import run
run.pin_threads()
started, stop = threading.Event(), threading.Event()
native = []

def pool_worker():  # a thread created after the main thread was pinned to one CPU
    native.append(threading.get_native_id())
    started.set()
    stop.wait()

worker = threading.Thread(target=pool_worker)
worker.start()
started.wait()
inherited = os.sched_getaffinity(native[0])
run.pin_threads()
print(json.dumps([sorted(inherited), sorted(os.sched_getaffinity(native[0])),
                  sorted(os.sched_getaffinity(0)), sorted(run.START_CPUS)]))
stop.set()
worker.join()
"""


def test_pinning_again_pins_the_threads_created_since():
    """The harness pins before each kernel's measurement: a pool created after the first
    pinning (OpenBLAS re-creates its pool during the mlp kernel) starts on the main
    thread's one CPU and must be moved off it, else the peer it serves runs on one core."""
    import json
    import os
    import subprocess

    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: the harness pins nothing")
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    run = subprocess.run([sys.executable, "-c", PIN_AGAIN, str(benchmarks)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    inherited, repinned, main, start = json.loads(run.stdout.strip().splitlines()[-1])
    assert main == [start[0]] and inherited == main     # the new thread on the main's CPU
    assert len(repinned) == 1 and repinned[0] in start[1:]   # moved to another one
