"""Thread placement (polyc/codegen/thread_placement.py) is opt-in: by default a kernel
leaves every thread's CPU mask as it found it. With ``place_threads=True``
(``POLYC_PLACE_THREADS=1``) a kernel places its team for the call: the caller's CPU
mask is the same after the call as before, other threads of the team run on one CPU
each, and the results do not change."""
import os
import sys

import numpy as np
import pytest

import polyc
from corpus import CORPUS_BY_NAME
from polyc.compiler import frontend, generate
from polyc.options import Options

SOFTMAX = CORPUS_BY_NAME["softmax"]

linux_with_cores = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2
    or os.environ.get("OMP_NUM_THREADS", "2") in ("0", "1") or "OMP_PROC_BIND" in os.environ,
    reason="places threads only on Linux, with two CPUs or more and no binding chosen")


def _reference(x):
    return SOFTMAX.reference(x)[0]


def test_placement_is_opt_in():
    op = frontend(SOFTMAX.source)
    text = generate(op, Options()).c_source.text
    assert "omp parallel" in text and "polyc_place_team" not in text
    assert Options.from_environment({"POLYC_PLACE_THREADS": "1"}).place_threads
    assert not Options.from_environment({"POLYC_PLACE_THREADS": "0"}).place_threads


@pytest.mark.needs_cc
@linux_with_cores
def test_by_default_no_thread_changes_its_cpu_mask():
    x = np.random.default_rng(2).standard_normal((512, 256)).astype(np.float32)
    before = {int(t): os.sched_getaffinity(int(t)) for t in os.listdir("/proc/self/task")}
    op = polyc.define(SOFTMAX.source)
    for _ in range(3):
        np.testing.assert_allclose(op(x), _reference(x), rtol=1e-5, atol=1e-6)
    process = os.sched_getaffinity(0)
    for task in os.listdir("/proc/self/task"):
        assert os.sched_getaffinity(int(task)) == before.get(int(task), process)


def test_parallel_kernels_place_their_team_and_serial_ones_do_not():
    op = frontend(SOFTMAX.source)
    text = generate(op, Options(place_threads=True)).c_source.text
    entry = text[text.index("\nint polyc_softmax("):text.index("\nint polyc_softmax_launch(")]
    assert entry.index("polyc_place_team(&polyc_team)") < entry.index("#pragma omp parallel")
    assert entry.rstrip().endswith("polyc_release_team(&polyc_team);\n  return polyc_status;\n}")
    serial = generate(op, Options(parallel=False, place_threads=True)).c_source.text
    assert "polyc_place_team" not in serial and "omp parallel" not in serial


@pytest.mark.needs_cc
@linux_with_cores
def test_the_callers_cpu_mask_is_restored_and_the_team_runs_on_other_cpus():
    x = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    op = polyc.define(SOFTMAX.source, place_threads=True)
    before = os.sched_getaffinity(0)
    for _ in range(3):
        np.testing.assert_allclose(op(x), _reference(x), rtol=1e-5, atol=1e-6)
        assert os.sched_getaffinity(0) == before
    main = os.getpid()
    single = [os.sched_getaffinity(int(t)) for t in os.listdir("/proc/self/task")
              if int(t) != main and len(os.sched_getaffinity(int(t))) == 1]
    assert single, "no thread of the team was placed on a CPU of its own"


@pytest.mark.needs_cc
@linux_with_cores
def test_a_restricted_caller_keeps_its_mask():
    # The caller may use only two CPUs: the team is placed within them, and the
    # caller's mask (not the process's first one) comes back.
    allowed = sorted(os.sched_getaffinity(0))
    original = set(allowed)
    restricted = set(allowed[-2:])
    x = np.random.default_rng(1).standard_normal((300, 700)).astype(np.float32)
    op = polyc.define(SOFTMAX.source, place_threads=True)
    try:
        os.sched_setaffinity(0, restricted)
        np.testing.assert_allclose(op(x), _reference(x), rtol=1e-5, atol=1e-6)
        assert os.sched_getaffinity(0) == restricted
    finally:
        os.sched_setaffinity(0, original)
