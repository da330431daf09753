"""Array contraction: temporaries living within one parallel iteration shrink, stay right."""
import numpy as np
import pytest

import polyc
from polyc.codegen.translation_unit import kernel_code
from polyc import compiler
from polyc.compiler import frontend, generate
from polyc.options import Options
from polyc.rewrite.merged_updates import merge_updates
from polyc.scheduling.contraction import contract_temporaries

SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  row_sum(n) +=! exp(X(n, d) - row_max(n))
  Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
}"""
ROW_BUFFER = """def normalise(float(N, D) X) -> (Y) {
  E(n, d) = exp(X(n, d))
  total(n) +=! E(n, d)
  Y(n, d) = E(n, d) / total(n)
}"""


def test_row_temporaries_become_private_scalars():
    # As written (canonicalized, the exponentials shared by two statements become a
    # row buffer too: tests/rewrite/test_common_values.py).
    compilation = generate(frontend(SOFTMAX), Options(canonicalize=False))
    assert {name: c.kept for name, c in compilation.contractions.items()} == {
        "row_max": (False,), "row_sum": (False,)}
    c = compilation.c_source.text
    assert "float row_max[1];" in c and "polyc_alloc" not in kernel_code(c)


def test_a_row_buffer_keeps_its_symbolic_dimension_per_iteration():
    compilation = generate(frontend(ROW_BUFFER), Options())
    assert compilation.contractions["E"].kept == (False, True)
    body = kernel_code(compilation.c_source.text)
    assert "float *restrict E = (float *)polyc_alloc" in body and "free(E)" in body


@pytest.mark.needs_cc
def test_contracted_kernels_compute_the_same():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((37, 129)).astype(np.float32)
    expected = np.exp(X.astype(np.float64))
    expected /= expected.sum(1, keepdims=True)
    for source in (SOFTMAX, ROW_BUFFER):
        contracted = polyc.define(source)(X)
        plain = polyc.define(source, optimize=False)(X)
        np.testing.assert_allclose(contracted, expected, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(plain, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.needs_cc
def test_temporaries_used_across_iterations_are_not_contracted():
    source = """def f(float(N) X) -> (Y) {
      T(i) = X(i) * 2
      Y(i) = T(i) + T(N - 1 - i)
    }"""
    compilation = generate(frontend(source), Options())
    assert compilation.contractions == {}
    X = np.arange(7, dtype=np.float32)
    np.testing.assert_allclose(polyc.define(source)(X), 2 * X + 2 * X[::-1])


@pytest.mark.needs_cc
def test_contracted_temporary_in_every_piece_of_a_split_parallel_loop():
    # Found by the fuzzer: isl emits the I = 1 case of this loop without a `for`; the
    # contracted temporary must be declared there too.
    source = """def f(float(I, J) X0, float(K) X3) -> (T2) {
      T0 +=! X0(i, j)
      T1(i, j) +=! X0(i, j) + X3(k)
      T2 = T0
    }"""
    rng = np.random.default_rng(0)
    for sizes in ((2, 2, 2), (1, 3, 2), (3, 1, 1)):
        X0 = rng.standard_normal(sizes[:2]).astype(np.float32)
        X3 = rng.standard_normal(sizes[2]).astype(np.float32)
        for options in ({}, {"fusion": "max"}, {"fusion": "min"}):
            result = polyc.define(source, **options)(X0, X3)
            np.testing.assert_allclose(result, X0.astype(np.float64).sum(), rtol=1e-5)


def test_a_temporary_written_by_a_piece_of_its_own_keeps_its_memory(monkeypatch):
    # isl emits d_Y_2(0) = 0 apart, before the parallel loop whose first iteration adds
    # to d_Y_2(0): two pieces at one iteration, each with storage of its own, would lose
    # the zero (the backward operator of an update with a partial write). The updates
    # stay apart as written (merged, d_X's two statements make another schedule).
    monkeypatch.setattr(compiler, "CANONICAL_FORM", tuple(
        rewrite for rewrite in compiler.CANONICAL_FORM if rewrite is not merge_updates))
    source = """def f(float(N) X, float(N) Z, float(N) d_Y) -> (d_X) {
      d_Y_1(i) = d_Y(i)
      d_Y_2(i) = i >= 1 ? d_Y_1(i) * 2.0 : 0.0
      d_Y_2(i) += i >= 1 && i < N ? 0.0 : d_Y_1(i)
      d_X(i) = d_Y(i) * Z(i)
      d_X(i) += d_Y_2(i) * X(i) + d_Y_2(i) * X(i)
    }"""
    compilation = generate(frontend(source), Options())
    assert "d_Y_2" in contract_temporaries(compilation.program, compilation.schedule)
    assert "d_Y_2" not in compilation.contractions
    x, z, w = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
    want = w * z + 2 * np.where(np.arange(5) >= 1, 2 * w, w) * x
    np.testing.assert_allclose(polyc.define(source)(x, z, w), want, rtol=1e-5)
