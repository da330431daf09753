"""The C launcher (polyc/jit/launcher.c): calls go through it, and every call it does not
take itself goes to the Python binder, so that a call gives the same result or the same
ArgumentError with or without it (``launcher=False``: ctypes, the reference here)."""
import re
import threading
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyc
from polyc.errors import ArgumentError
from polyc.jit import launcher as launcher_module_
from polyc.jit.launcher import LauncherWarning, launcher_module

pytestmark = pytest.mark.needs_cc

SOURCES = {
    "mm": "def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }",
    "axpy": "def axpy(float a, float(N) x, float(N) y) -> (z) { z(i) = a * x(i) + y(i) }",
    "shift": "def shift(int32(N) x, int32 k) -> (z) { z(i) = x(i) + k }",
    "ushift": "def ushift(uint8(N) x, uint8 k) -> (z) { z(i) = x(i) + k }",
    "wide": "def wide(uint64(N) x, uint64 k) -> (z) { z(i) = x(i) + k }",
    "hscale": "def hscale(half(N) x, half a) -> (z) { z(i) = x(i) * a }",
    "dscale": "def dscale(double(N) x, double a) -> (z) { z(i) = x(i) * a }",
    "pick": "def pick(bool(N) m, bool on) -> (z) { z(i) = m(i) && on }",
    "gather": "def gather(float(N) T, int64(M) idx) -> (G) { G(i) = T(idx(i)) }",
    "gather8": "def gather8(float(N) T, uint8(M) idx) -> (G) { G(i) = T(idx(i)) }",
    "window": "def window(float(N) x, float(K) w) -> (y) { y(i) +=! x(i + k) * w(k) }",
    "fixed": "def fixed(float(4, N) x) -> (s) { s(n) +=! x(r, n) }",
    "moments": """def moments(float(N, D) X) -> (mean, top) {
  mean(n) +=! X(n, d) / D
  top(n) max=! X(n, d)
}""",
    "accumulate": "def accumulate(float(N, K) A) -> (s) { s(n) += A(n, k) }",
    # an extent derived from sizes, checked per call
    "derived": "def derived(float(N) x, float(K) w, float(N - K + 1) d) -> (y) "
               "{ y(i) +=! x(i + k) * w(k) * d(i) }",
}
OPS = {name: polyc.define(source) for name, source in SOURCES.items()}
REFERENCE = {name: op.with_options(launcher=False) for name, op in OPS.items()}


def uses_launcher(op) -> bool:
    module = launcher_module(op.options)
    if module.module is None:
        pytest.skip(f"no C launcher here: {module.reason}")
    return op._launcher is not None


def outcome(op, args, out=None):
    """What a call gives: its results (dtype, shape, bytes), or the error's type and message."""
    try:
        result = op(*args, out=out)
    except (ArgumentError, MemoryError) as error:
        return type(error).__name__, str(error)
    results = result if isinstance(result, tuple) else (result,)
    return tuple((r.dtype.str, r.shape, r.tobytes()) for r in results)


def same(name, args, out_factory=None):
    """The launcher's outcome equals the Python binder's; the launcher is in use."""
    op, reference = OPS[name], REFERENCE[name]
    op.compile()  # a bad first call raises before compiling; later ones reach the launcher
    ours = outcome(op, args, out_factory() if out_factory else None)
    theirs = outcome(reference, args, out_factory() if out_factory else None)
    assert ours == theirs
    assert uses_launcher(op) and reference._launcher is None
    return ours


F32 = np.float32
A = np.arange(15, dtype=F32).reshape(3, 5)
B = np.arange(20, dtype=F32).reshape(5, 4)
X = np.arange(6, dtype=F32)

BAD_CALLS = [
    ("mm", (A,), None),                                         # arity
    ("mm", (A, B, B), None),
    ("mm", (A.tolist(), B), None),                              # not an array
    ("mm", (A.astype(np.float64), B), None),                    # dtype
    ("mm", (A.astype(">f4"), B), None),                         # byte order
    ("mm", (A[0], B), None),                                    # rank
    ("mm", (A, B[:4]), None),                                   # sizes disagree
    ("mm", (A, B), lambda: np.empty((3, 5), F32)),              # out shape
    ("mm", (A, B), lambda: np.empty((3, 4), np.float64)),       # out dtype
    ("mm", (A, B), lambda: [[0.0] * 4] * 3),                    # out not an array
    ("mm", (A, B), lambda: (np.empty((3, 4), F32),) * 2),       # out count
    ("mm", (A, B), lambda: np.empty((3, 4), F32).setflags(write=False)),  # replaced below
    ("fixed", (np.zeros((3, 2), F32),), None),                  # constant extent
    ("derived", (X, np.ones(2, F32), np.ones(4, F32)), None),   # derived extent
    ("derived", (X, np.ones(2, F32), np.ones(6, F32)), None),
    ("window", (X, np.ones(8, F32)), None),                     # negative output extent
    ("axpy", (np.float64(2), X, X), None),                      # numpy scalar of another type
    ("axpy", (np.zeros(1, F32), X, X), None),                   # array for a scalar
    ("axpy", ("2", X, X), None),                                # not a number
    ("axpy", (1e39, X, X), None),                               # too large for float32
    ("axpy", (10 ** 40, X, X), None),
    ("shift", (np.arange(3, dtype=np.int32), 2 ** 31), None),   # out of int32's range
    ("shift", (np.arange(3, dtype=np.int32), 1.5), None),       # float for an int
    ("ushift", (np.arange(3, dtype=np.uint8), -1), None),
    ("ushift", (np.arange(3, dtype=np.uint8), 256), None),
    pytest.param("hscale", (np.ones(3, np.float16), 70000.0), None,  # too large for half
                 marks=pytest.mark.needs_float16),
    ("pick", (np.ones(3, bool), 1), None),                      # int for a bool
    ("gather", (X, np.array([0, 6, 1])), None),                 # index out of range
    ("gather", (X, np.array([-1, 0])), None),
    ("gather8", (X, np.array([0, 255], np.uint8)), None),
    ("moments", (np.ones((2, 3), F32),), lambda: np.empty(2, F32)),      # one out for two
    ("moments", (np.ones((2, 3), F32),), lambda: (lambda base: (base[:2], base[1:3]))(
        np.empty(4, F32))),                                     # outputs overlap
]


def _read_only():
    out = np.empty((3, 4), F32)
    out.setflags(write=False)
    return out


BAD_CALLS[11] = ("mm", (A, B), _read_only)


@pytest.mark.parametrize("name, args, out", BAD_CALLS, ids=range(len(BAD_CALLS)))
def test_every_bad_argument_gives_the_binders_error(name, args, out):
    result = same(name, args, out)
    assert result[0] == "ArgumentError", result


GOOD_CALLS = [
    ("mm", (A, B), None),
    ("derived", (X, np.arange(2, dtype=F32), np.arange(5, dtype=F32)), None),
    ("mm", (A, B), lambda: np.empty((3, 4), F32)),
    ("mm", (np.asfortranarray(A), B), None),                    # a copy is made
    ("mm", (A[:, ::2], B[::2]), None),                          # strided
    ("mm", (np.zeros((0, 5), F32), B), None),                   # empty
    ("mm", (A, B), lambda: np.zeros((6, 4), F32)[::2]),         # non-contiguous out
    ("axpy", (2.5, X, X), None),
    ("axpy", (F32(2.5), X, X), None),
    ("axpy", (np.array(2.5, F32), X, X), None),
    ("axpy", (True, X, X), None),
    ("axpy", (3, X, X), None),
    ("axpy", (2 ** 60 + 1, X, X), None),                        # numpy rounds it
    ("axpy", (float("nan"), X, X), None),
    ("axpy", (float("inf"), X, X), None),
    ("axpy", (2.0, X, X), lambda: X.copy()),
    ("shift", (np.arange(3, dtype=np.int32), -2 ** 31), None),
    ("shift", (np.arange(3, dtype=np.int32), np.int32(7)), None),
    ("ushift", (np.arange(3, dtype=np.uint8), 255), None),
    ("wide", (np.arange(3, dtype=np.uint64), 2 ** 64 - 5), None),  # beyond int64
    pytest.param("hscale", (np.ones(3, np.float16), 0.1), None,  # rounded to half first
                 marks=pytest.mark.needs_float16),
    pytest.param("hscale", (np.ones(3, np.float16), np.float16(0.1)), None,
                 marks=pytest.mark.needs_float16),
    ("dscale", (np.ones(3), 0.1), None),
    ("pick", (np.array([True, False, True]), True), None),
    ("pick", (np.array([True, False, True]), np.bool_(False)), None),
    ("gather", (X, np.array([0, 5, 1])), None),
    ("gather", (X, np.zeros(0, np.int64)), None),
    ("gather8", (X, np.array([0, 5], np.uint8)), None),
    ("window", (X, np.ones(3, F32)), None),
    ("moments", (np.arange(6, dtype=F32).reshape(2, 3),), None),
    ("moments", (np.ones((2, 3), F32),), lambda: (np.empty(2, F32), np.empty(2, F32))),
    ("accumulate", (np.ones((2, 3), F32),), None),
    ("accumulate", (np.ones((2, 3), F32),), lambda: np.ones(2, F32)),  # adds to out
]


@pytest.mark.parametrize("name, args, out", GOOD_CALLS, ids=range(len(GOOD_CALLS)))
def test_good_calls_give_the_binders_results(name, args, out):
    result = same(name, args, out)
    assert result[0] != "ArgumentError", result


def test_an_input_that_is_also_the_output_is_copied_first():
    x = np.arange(5, dtype=F32)
    y = x.copy()
    OPS["axpy"](2.0, x, x, out=x)
    np.testing.assert_array_equal(x, 3 * y)


def test_out_is_returned_and_fresh_outputs_are_new_arrays():
    op = OPS["mm"]
    out = np.empty((3, 4), F32)
    assert op(A, B, out=out) is out
    first, second = op(A, B), op(A, B)
    assert first is not second and np.shares_memory(first, second) is False
    mean, top = OPS["moments"](np.ones((2, 3), F32), out=[np.empty(2, F32), np.empty(2, F32)])
    assert mean.tolist() == [1.0, 1.0] and top.tolist() == [1.0, 1.0]


def test_each_new_size_is_prepared_and_remembered():
    op = OPS["window"]
    uses_launcher(op)
    op(np.arange(3, dtype=F32), np.ones(2, F32))  # compiled here, whichever test ran first
    calls = []
    binder = op._binder
    original = binder.prepared
    op._launcher = None  # a launcher whose Python side we watch
    launcher = launcher_module(op.options).module.Launcher(
        op._kernel.launch_address, *binder.launcher_spec(),
        lambda sizes: calls.append(sizes) or original(sizes), op._call_through_binder,
        op._kernel.fail)
    w = np.ones(2, F32)
    for n in (5, 5, 7, 5, 5):
        expected = np.convolve(np.arange(n, dtype=np.float64), [1, 1], "valid")
        np.testing.assert_array_equal(launcher.call((np.arange(n, dtype=F32), w), None),
                                      expected)
    assert calls == [(5, 2), (7, 2), (5, 2)]


def test_gathers_checked_in_the_kernel_report_the_same_error():
    # `idx(2 * i)` reads part of idx: the kernel checks it and reports after the call.
    op = polyc.define("def every2(float(N) T, int32(M) idx) -> (G) "
                      "{ G(i) = T(idx(2 * i)) where i in 0:(M + 1) / 2 }")
    reference = op.with_options(launcher=False)
    bad = (X, np.array([0, 9, 100, 1], np.int32))
    assert outcome(op, bad) == outcome(reference, bad)
    assert outcome(op, bad)[0] == "ArgumentError"
    uses_launcher(op)


def test_bound_calls_through_the_launcher():
    op = OPS["accumulate"]
    run = op.bind(np.ones((2, 3), F32))
    if uses_launcher(op):
        assert type(run).__name__ == "BoundCall"
    first = run()
    assert run() is first and first.tolist() == [3.0, 3.0]  # zeroed again each run
    assert repr(run) == "<polyc bound call of accumulate>"
    with pytest.raises(TypeError):
        run(1)
    gather = OPS["gather"].bind(X, idx := np.array([0, 1]))
    idx[1] = 6  # the kernel checks every run
    with pytest.raises(ArgumentError, match=re.escape("idx[1] = 6 but T has 6 entries")):
        gather()


def test_calls_from_several_threads_with_different_sizes():
    op = OPS["window"]
    w = np.ones(2, F32)
    failures = []

    def worker(n):
        x = np.arange(n, dtype=F32)
        expected = np.convolve(x.astype(np.float64), [1, 1], "valid")
        for _ in range(300):
            if not np.array_equal(op(x, w), expected):
                failures.append(n)
                return

    threads = [threading.Thread(target=worker, args=(n,)) for n in (4, 9, 17, 33)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_without_the_launcher_calls_go_through_ctypes_and_say_so(monkeypatch):
    monkeypatch.setattr(launcher_module_, "_MODULES", {})
    monkeypatch.setattr(launcher_module_, "_missing_headers",
                        lambda: "Python's headers are not installed (test)")
    op = polyc.define(SOURCES["axpy"])
    with pytest.warns(LauncherWarning, match="headers are not installed"):
        result = op(2.0, X, X)
    np.testing.assert_array_equal(result, 3 * X)
    assert op._launcher is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once
        op.with_options(fusion="min")(2.0, X, X)
    assert "calls: through ctypes: Python's headers are not installed (test)" in \
        str(op.explain(2.0, X, X))


def test_explain_names_the_launcher():
    op = OPS["axpy"]
    uses_launcher(op)
    assert "calls: through the C launcher (" in str(op.explain(2.0, X, X))


SHAPES = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=SHAPES, dtype=st.sampled_from([np.float32, np.float64]),
       layout=st.sampled_from(["c", "f", "strided"]), with_out=st.booleans(),
       out_shape=st.sampled_from(["right", "wrong"]))
def test_the_launcher_agrees_with_the_binder(shapes, dtype, layout, with_out, out_shape):
    m, k, n = shapes
    a = np.arange(m * k, dtype=dtype).reshape(m, k)
    b = np.ones((k + 1, n), dtype)[:k] if layout != "strided" else np.ones((2 * k, n), dtype)[::2]
    if layout == "f":
        a = np.asfortranarray(a)
    shape = (m, n) if out_shape == "right" else (n, m + 1)
    out = (lambda: np.empty(shape, F32)) if with_out else None
    same("mm", (a, b), out)


def test_an_operator_with_more_arguments_than_the_launcher_takes_still_runs():
    count = 70
    inputs = ", ".join(f"float(N) a{k}" for k in range(count))
    total = " + ".join(f"a{k}(i)" for k in range(count))
    op = polyc.define(f"def many({inputs}) -> (y) {{ y(i) = {total} }}")
    args = [np.full(3, k, np.float32) for k in range(count)]
    np.testing.assert_array_equal(op(*args), np.full(3, sum(range(count))))
    assert op._launcher is None and op(*args).tolist() == [2415.0] * 3
