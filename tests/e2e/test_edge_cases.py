"""Zero sizes, NaN and infinities, and concurrent calls behave as numpy would."""
import threading

import numpy as np
import pytest

import polyc
from polyc.codegen.translation_unit import kernel_code

MATMUL = polyc.define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }")
ROW_MAX = polyc.define("def rmax(float(N, D) X) -> (Y) { Y(n) max=! X(n, d) }")
ROW_MIN = polyc.define("def rmin(float(N, D) X) -> (Y) { Y(n) min=! X(n, d) }")
TOTAL = polyc.define("def total(double(N) X) -> (s) { s +=! X(i) }")


@pytest.mark.needs_cc
@pytest.mark.parametrize("m, k, n", [(0, 3, 4), (3, 0, 4), (3, 4, 0), (0, 0, 0)])
def test_zero_sizes_give_numpy_shapes_and_identities(m, k, n):
    A = np.ones((m, k), np.float32)
    B = np.ones((k, n), np.float32)
    C = MATMUL(A, B)
    assert C.shape == (m, n)
    np.testing.assert_array_equal(C, A @ B)  # a sum over nothing is 0


@pytest.mark.needs_cc
def test_reductions_over_nothing_are_their_identities():
    assert TOTAL(np.zeros(0)) == 0.0
    assert np.all(ROW_MAX(np.zeros((3, 0), np.float32)) == -np.inf)
    assert np.all(ROW_MIN(np.zeros((3, 0), np.float32)) == np.inf)


@pytest.mark.needs_cc
def test_nan_and_infinities_propagate_like_numpy():
    X = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -1.0], [-np.inf, -np.inf, 0.0],
                  [np.nan, np.inf, -np.inf]] * 8, np.float32)
    np.testing.assert_array_equal(ROW_MAX(X), X.max(axis=1))
    np.testing.assert_array_equal(ROW_MIN(X), X.min(axis=1))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(TOTAL(X.astype(np.float64).ravel()),
                                      X.astype(np.float64).sum())
    A = np.array([[np.inf, 1.0], [np.nan, 0.0]], np.float32)
    B = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(MATMUL(A, B), A @ B)


@pytest.mark.needs_cc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorised_max_and_min_see_a_nan_anywhere_in_a_long_row(dtype):
    """Rows long enough for the SIMD loop: a NaN in the first vector, the middle,
    the scalar tail, or nowhere (then infinities and signed values decide)."""
    row_max = polyc.define(str(ROW_MAX).replace("float32", np.dtype(dtype).name))
    row_min = polyc.define(str(ROW_MIN).replace("float32", np.dtype(dtype).name))
    X = np.random.default_rng(5).standard_normal((6, 67)).astype(dtype)
    X[0, 0] = X[1, 33] = X[2, 66] = np.nan
    X[3, 10], X[3, 50] = np.inf, -np.inf
    X[4, :] = -np.inf
    X[5, 20] = np.nan
    X[5, 21] = np.inf
    np.testing.assert_array_equal(row_max(X), X.max(axis=1))
    np.testing.assert_array_equal(row_min(X), X.min(axis=1))
    # the NaN flags kept in lanes beside the partial maxima, folded with them
    assert "polyc_nans0[polyc_lane] |= polyc_nans0[polyc_lane + " in \
        row_max.compilation().c_source.text


@pytest.mark.needs_cc
@pytest.mark.parametrize("dtype", ["float", "double"])
def test_elementwise_fmax_and_fmin_take_the_number_over_a_nan(dtype):
    # Inline compare-and-select in the C, not libm's fmax: same rule (C99 F.9.9.2).
    op = polyc.define(f"""def mm(%s(N) A, %s(N) B) -> (O, P, Q, R) {{
      O(i) = fmax(A(i), B(i))
      P(i) = fmin(A(i), B(i))
      Q(i) = max(A(i), B(i))
      R(i) = min(A(i), B(i))
    }}""" % (dtype, dtype))
    values = [np.nan, 1.0, -1.0, 0.0, -0.0, np.inf, -np.inf]
    pairs = [(a, b) for a in values for b in values] * 3  # long enough to vectorise
    np_type = np.float32 if dtype == "float" else np.float64
    A = np.array([a for a, _ in pairs], np_type)
    B = np.array([b for _, b in pairs], np_type)
    O, P, Q, R = op(A, B)
    np.testing.assert_array_equal(O, np.fmax(A, B))
    np.testing.assert_array_equal(P, np.fmin(A, B))
    np.testing.assert_array_equal(Q, np.fmax(A, B))
    np.testing.assert_array_equal(R, np.fmin(A, B))


@pytest.mark.needs_cc
def test_many_threads_call_one_operator_at_once():
    rng = np.random.default_rng(3)
    cases = [(rng.standard_normal((n, 17)).astype(np.float32),
              rng.standard_normal((17, n + 1)).astype(np.float32)) for n in range(1, 33)]
    results = [None] * len(cases)
    fresh = polyc.define(str(MATMUL))  # a new Operator: first compile happens under load

    def work(index):
        A, B = cases[index]
        results[index] = fresh(A, B)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(cases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for (A, B), C in zip(cases, results):
        np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-5)


GATHER = "def emb(float(E, D) LUT, int32(B, L) I) -> (O) { O(b, d) +=! LUT(I(b, l), d) }"


def test_gather_out_of_range_names_tensor_position_and_value():
    op = polyc.define(GATHER)
    LUT = np.ones((5, 3), np.float32)
    I = np.array([[0, 4], [1, 5]], np.int32)
    with pytest.raises(polyc.ArgumentError, match=r"I\[1, 1\] = 5.*LUT has 5 entries"):
        op(LUT, I)
    I[1, 1] = -1
    with pytest.raises(polyc.ArgumentError, match=r"I\[1, 1\] = -1"):
        op(LUT, I)


def test_gather_indices_are_checked_before_the_kernel_touches_the_output():
    op = polyc.define(GATHER)
    LUT = np.ones((5, 3), np.float32)
    out = np.full((2, 3), 42.0, np.float32)
    with pytest.raises(polyc.ArgumentError, match=r"I\[0, 1\] = 9"):
        op(LUT, np.array([[0, 9], [1, 2]], np.int32), out=out)
    assert np.all(out == 42.0)  # the pre-pass raised: the kernel never ran


@pytest.mark.needs_cc
def test_gathers_over_part_of_the_index_tensor_are_checked_in_the_kernel():
    # Only I[0 .. N-2] is read: an out-of-range value in the unused last element is no
    # error; one in a used element is (reported by the kernel's own check).
    op = polyc.define("""def shifted(float(V) T, int32(N) I) -> (O) {
      O(l) = T(I(l)) where l in 0:N-1
    }""")
    T = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(op(T, np.array([3, 1, 99], np.int32)), [3.0, 1.0])
    with pytest.raises(polyc.ArgumentError, match=r"I\[1\] = 99"):
        op(T, np.array([3, 99, 0], np.int32))


@pytest.mark.needs_cc
def test_a_gather_that_never_runs_checks_nothing():
    op = polyc.define(GATHER)
    LUT = np.ones((5, 0), np.float32)   # no columns: the statement has no instances
    assert op(LUT, np.array([[0, 9]], np.int32)).shape == (1, 0)


@pytest.mark.needs_cc
def test_gather_checks_can_be_switched_off_visibly():
    checked = polyc.define(GATHER)
    unchecked = polyc.define(GATHER, check_gathers=False)
    assert "polyc_gather_index(" in kernel_code(checked.compile().c_source)
    assert "polyc_gather_index(" not in kernel_code(unchecked.compile().c_source)
    assert "check_gathers=False" in unchecked.compile().c_source
    LUT = np.arange(15, dtype=np.float32).reshape(5, 3)
    I = np.array([[0, 4], [1, 2]], np.int32)
    np.testing.assert_array_equal(unchecked(LUT, I), checked(LUT, I))


@pytest.mark.needs_cc
def test_offsets_beyond_2_to_the_31_use_64_bit_arithmetic():
    rows, columns = 2**16 + 3, 2**15 + 5   # 2.1e9 elements, 2 GiB of uint8
    X = np.zeros((rows, columns), np.uint8)
    X[-1, -1] = 7                           # element 2**31 + ...: beyond int32 offsets
    X[rows // 2, -1] = 3
    X[0, 0] = 1
    op = polyc.define("def rowsum(uint8(R, C) X) -> (O) { O(r) +=! X(r, c) }")
    O = op(X)
    assert O.shape == (rows,) and O.dtype == np.uint8
    assert (O[-1], O[rows // 2], O[0]) == (7, 3, 1)
    assert int(O.sum()) == 11
