"""op.bind(): a call with its arguments fixed. Each run reads the arrays' current
contents and behaves exactly like the same op(...) call; bad arguments fail at bind()
with op()'s errors, and gathers are still checked on every run."""
import numpy as np
import pytest

import polyc

pytestmark = pytest.mark.needs_cc

MATMUL = polyc.define("def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }")
ACCUMULATE = polyc.define("def acc(float(N, K) A) -> (s) { s(n) += A(n, k) }")  # no `!`
DOUBLE = polyc.define("def dbl(float(N) A) -> (B) { B(i) = A(i) * 2 }")
MOMENTS = polyc.define("""def moments(float(N, D) X) -> (mean, top) {
  mean(n) +=! X(n, d) / D
  top(n) max=! X(n, d)
}""")
GATHER = polyc.define("def gather(float(N) T, int64(M) idx) -> (G) { G(i) = T(idx(i)) }")


def test_each_run_reads_the_inputs_current_contents():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 7)).astype(np.float32)
    B = rng.standard_normal((7, 3)).astype(np.float32)
    C = np.empty((5, 3), np.float32)
    run = MATMUL.bind(A, B, out=C)
    assert run() is C
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
    A[...] = rng.standard_normal((5, 7))
    assert run() is C
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_fresh_outputs_are_the_same_arrays_and_start_over_each_run():
    A = np.ones((4, 6), np.float32)
    run = ACCUMULATE.bind(A)
    first = run()
    np.testing.assert_array_equal(first, np.full(4, 6.0))
    assert run() is first  # the same array, zeroed again: not 12
    np.testing.assert_array_equal(first, ACCUMULATE(A))
    mean, top = MOMENTS.bind(np.arange(6, dtype=np.float32).reshape(2, 3))()
    np.testing.assert_allclose(mean, [1.0, 4.0])
    np.testing.assert_array_equal(top, [2.0, 5.0])


def test_copies_are_refreshed_and_copied_back_each_run():
    base = np.arange(12, dtype=np.float32)
    strided = base[::2]                       # not contiguous: the kernel reads a copy
    out = np.zeros(12, np.float32)[::2]       # not contiguous: written through a copy
    run = DOUBLE.bind(strided, out=out)
    run()
    np.testing.assert_array_equal(out, base[::2].astype(np.float64) * 2)
    base[...] = 1
    run()
    np.testing.assert_array_equal(out, np.full(6, 2.0))


def test_an_input_that_is_also_the_output_behaves_like_op():
    A = np.arange(5, dtype=np.float32)
    expected = A.copy()
    run = DOUBLE.bind(A, out=A)
    for _ in range(3):
        run()
        DOUBLE(expected, out=expected)
        np.testing.assert_array_equal(A, expected)
    np.testing.assert_array_equal(A, np.arange(5) * 8.0)


def test_bad_arguments_fail_at_bind_with_the_errors_of_a_call():
    A = np.ones((5, 7), np.float32)
    for args in [(A, np.ones((6, 3), np.float32)), (A, np.ones((7, 3), np.float64)), (A,)]:
        with pytest.raises(polyc.ArgumentError) as called:
            MATMUL(*args)
        with pytest.raises(polyc.ArgumentError) as bound:
            MATMUL.bind(*args)
        assert str(bound.value) == str(called.value)


def test_gathers_are_checked_on_every_run():
    T = np.arange(4, dtype=np.float32)
    idx = np.array([3, 0, 1], np.int64)
    run = GATHER.bind(T, idx)
    np.testing.assert_array_equal(run(), [3.0, 0.0, 1.0])
    idx[1] = 4  # out of range after bind(): the kernel's own check refuses it
    with pytest.raises(polyc.ArgumentError, match="idx"):
        run()
