"""Parallel regions outlined into functions (polyc/codegen/outlining.py): the kernel
calls each one on a team of threads when the work is large and directly, with no
OpenMP, when it is small; both give numpy's answer, for every kind of region."""
import re

import cgen
import numpy as np
import pytest

import polyc
from polyc.codegen.outlining import Outliner, Variables
from polyc.machine.rules import PARALLEL_WORK_THRESHOLD

REGIONS = {
    # an OpenMP loop (`omp for simd`)
    "add": ("def add(float(N) a, float(N) b) -> (c) { c(i) = a(i) + b(i) }",
            lambda a, b: a + b, lambda n: [(n ** 3,), (n ** 3,)]),
    # thread boxes over a register-blocked matmul
    "mm": ("def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }",
           lambda A, B: A @ B, lambda n: [(n, n), (n, n)]),
    # private accumulators (atax's y) and an `omp critical` combine
    "atax": ("""def atax(float(M, N) A, float(N) x) -> (y) {
      tmp(i) +=! A(i, j) * x(j)
      y(j) +=! A(i, j) * tmp(i)
    }""", lambda A, x: A.T @ (A @ x), lambda n: [(n * 4, n * 4), (n * 4,)]),
    # private row buffers (softmax's exponentials)
    "softmax": ("""def softmax(float(N, D) X) -> (Y) {
      mx(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - mx(n))
      s(n) +=! e(n, d)
      Y(n, d) = e(n, d) / s(n)
    }""", lambda X: np.exp(X - X.max(1, keepdims=True))
        / np.exp(X - X.max(1, keepdims=True)).sum(1, keepdims=True),
        lambda n: [(n * 4, n * 4)]),
}


@pytest.mark.parametrize("name", sorted(REGIONS))
def test_every_region_is_called_with_and_without_a_team(name):
    source = REGIONS[name][0]
    text = polyc.define(source).compilation().c_source.text
    regions = re.findall(r"static __attribute__\(\(noinline\)\) void (polyc_\w+_region\d+)\(",
                         text)
    assert regions
    kernel = text[text.index(f"\nint polyc_{name}("):]
    for region in regions:
        calls = re.findall(rf"\b{region}\(&polyc_status[^;]*;", kernel)
        assert len(calls) == 2 and calls[0] == calls[1]
        call = re.escape(calls[0])
        assert re.search(rf"if \(polyc_work >= {PARALLEL_WORK_THRESHOLD}\)\s*\{{\s*"
                         rf"#pragma omp parallel\s*{call}\s*\}}\s*else\s*\{{\s*{call}\s*\}}",
                         kernel)
    assert "#pragma omp parallel" not in text[:text.index(f"\nint polyc_{name}(")]
    assert kernel.count("#pragma omp parallel\n") == len(regions)


@pytest.mark.needs_cc
@pytest.mark.parametrize("name", sorted(REGIONS))
@pytest.mark.parametrize("work", ["small", "large"])
def test_both_sides_of_the_threshold_agree_with_numpy(name, work):
    source, reference, shapes = REGIONS[name]
    op = polyc.define(source)
    n = 4 if work == "small" else 64  # n ** 3 = 4 * the threshold: threads start
    assert 64 ** 3 >= 4 * PARALLEL_WORK_THRESHOLD > 4 * 4 ** 3
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in shapes(n)]
    got = op(*args)
    expected = reference(*(a.astype(np.float64) for a in args))
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("size", [8, 4 * PARALLEL_WORK_THRESHOLD])
def test_a_region_sets_the_kernels_status_on_either_side(size):
    # A gather read only in part is checked inside the outlined region, which reports
    # through the kernel's status pointer.
    op = polyc.define("def every2(float(N) T, int32(M) idx) -> (G) "
                      "{ G(i) = T(idx(2 * i)) where i in 0:(M + 1) / 2 }")
    text = op.compilation().c_source.text
    assert "polyc_gather_index(" in text[text.index("_region0("):text.index("#undef")]
    idx = np.zeros(size, np.int32)
    idx[size - 2] = 9
    with pytest.raises(polyc.ArgumentError, match="gather index out of range"):
        op(np.ones(5, np.float32), idx)


def test_parameters_are_the_variables_declared_outside_the_region():
    outliner = Outliner("polyc_f", Variables({"N": "int64_t", "A": "const float *restrict",
                                              "B": "float *restrict", "unused": "int64_t"}))
    body = cgen.For("int64_t c2 = 0", "c2 < N", "c2 += 1",
                    cgen.Statement("B[c0 * N + c2] = A[c2] + c11"))
    call = str(outliner.region(body, " schedule(static)"))
    (function,) = outliner.functions
    assert str(function.fdecl).startswith(
        "static __attribute__((noinline)) void polyc_f_region0(int * polyc_status_at, int64_t N, "
        "const float *restrict A, float *restrict B, int64_t c0, int64_t c11)")
    assert "#pragma omp for schedule(static) nowait" in str(function)
    assert call.count("polyc_f_region0(&polyc_status, N, A, B, c0, c11);") == 2


def test_regions_equal_up_to_their_names_are_one_function():
    outliner = Outliner("polyc_f", Variables({"N": "int64_t", "M": "int64_t",
                                              "A": "const float *restrict",
                                              "B": "const float *restrict",
                                              "X": "float *restrict", "Y": "float *restrict"}))

    def scaled(size, source, target, factor):
        return cgen.For("int64_t c0 = 0", f"c0 < {size}", "c0 += 1", cgen.Block([
            cgen.Initializer(cgen.Value("const float", f"v_{target}"), f"{source}[c0]"),
            cgen.Statement(f"{target}[c0] = v_{target} * {factor}")]))

    calls = [str(outliner.region(scaled(*args))) for args in
             [("N", "A", "X", "2.0f"), ("M", "B", "Y", "2.0f"), ("N", "A", "Y", "3.0f")]]
    # the second is the first under other names; the third multiplies by another constant
    assert [str(f.fdecl.subdecl.name) for f in outliner.functions] == [
        "polyc_f_region0", "polyc_f_region1"]
    assert "polyc_f_region0(&polyc_status, N, A, X);" in calls[0]
    assert "polyc_f_region0(&polyc_status, M, B, Y);" in calls[1]
    assert "polyc_f_region1(&polyc_status, N, A, Y);" in calls[2]


@pytest.mark.needs_cc
def test_the_two_products_of_3mm_share_one_function_and_keep_their_values():
    op = polyc.define("""def mm3(float(I, K) A, float(K, J) B, float(J, M) C, float(M, L) D)
                         -> (G) {
      E(i, j) +=! A(i, k) * B(k, j)
      F(j, l) +=! C(j, m) * D(m, l)
      G(i, l) +=! E(i, j) * F(j, l)
    }""")
    text = op.compilation().c_source.text
    kernel = text[text.index("\nint polyc_mm3("):]
    called = re.findall(r"\b(polyc_mm3_region\d+)\(&polyc_status, ([^;]*)\);", kernel)
    functions = re.findall(r"static __attribute__\(\(noinline\)\) void (polyc_mm3_region\d+)\(",
                           text)
    assert len(set(functions)) == len(functions) < len({args for _, args in called})
    shared = [name for name in functions if len({a for n, a in called if n == name}) > 1]
    assert shared
    rng = np.random.default_rng(1)
    A, B, C, D = (rng.standard_normal(s).astype(np.float32)
                  for s in [(37, 29), (29, 41), (41, 23), (23, 19)])
    expected = (A.astype(np.float64) @ B) @ (C.astype(np.float64) @ D)
    np.testing.assert_allclose(op(A, B, C, D), expected, rtol=2e-4, atol=2e-4 * np.abs(
        expected).max())
