"""Consecutive vector passes over one range fused into one loop
(polyc/scheduling/vector_passes.py)."""
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from polyc.machine.rules import joined_accumulators

from c_text import accumulators, reduction_loops, vector_loops

CENTERED = """def var2(float(N, D) X) -> (v) {
  m(n) +=! X(n, d) / D
  c(n, d) = X(n, d) - m(n)
  v(n) +=! c(n, d) * c(n, d)
}"""
SCALED_MAX = """def smax(double(N, D) X) -> (mx) {
  c(n, d) = 2 * X(n, d)
  mx(n) max=! c(n, d)
}"""
REVERSED = """def rev(float(N, D) X) -> (v) {
  c(n, d) = 2 * X(n, d)
  v(n) +=! c(n, d) * c(n, D - 1 - d)
}"""
SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - row_max(n))
  row_sum(n) +=! e(n, d)
  Y(n, d) = e(n, d) / row_sum(n)
}"""


def _vector_loops(op: polyc.Operator) -> list[str]:
    """The bodies of the SIMD loops of the operator's C, one string each."""
    return vector_loops(op.compilation().c_source.text)


def test_a_producer_and_the_reduction_of_its_values_share_one_vector_loop():
    # the temporary as written (the canonical form recomputes a cheap value at its reads)
    op = polyc.define(CENTERED, canonicalize=False)
    loops = _vector_loops(op)
    fused = [body for body in loops if "c[" in body and accumulators(body)]
    assert len(loops) == 2 and fused  # the mean's loop; one for c and v together
    assert "vectorised (simd-reduction): loop d of S1, S2" in str(op.explain())
    # The sum's initialisation moved before the fused loop.
    text = op.compilation().c_source.text
    assert text.index("v[n] = 0.0f") < text.index("X[(n) * D + d] - m[0]")


@pytest.mark.needs_cc
@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 9), cols=st.integers(0, 70), seed=st.integers(0, 2 ** 16))
def test_fused_reduction_matches_numpy(rows, cols, seed):
    X = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    x = X.astype(np.float64)
    expected = ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) if cols else \
        np.zeros(rows)
    np.testing.assert_allclose(polyc.define(CENTERED)(X), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
@pytest.mark.parametrize("where", [None, 0, 17, 40])
def test_fused_max_keeps_nan(where):
    X = np.random.default_rng(1).standard_normal((3, 41))
    if where is not None:
        X[1, where] = np.nan
    # the temporary as written (the canonical form substitutes a value read once)
    op = polyc.define(SCALED_MAX, canonicalize=False)
    assert any("c[d] = " in body and "polyc_nan" in body for body in _vector_loops(op))
    np.testing.assert_array_equal(op(X), (2 * X).max(axis=1))


@pytest.mark.needs_cc
def test_a_consumer_reading_another_iterations_value_stays_apart():
    op = polyc.define(REVERSED)
    assert not any("c[d] = " in body and accumulators(body) for body in _vector_loops(op))
    X = np.random.default_rng(2).standard_normal((4, 9)).astype(np.float32)
    c = 2 * X.astype(np.float64)
    np.testing.assert_allclose(op(X), (c * c[:, ::-1]).sum(axis=1), rtol=1e-5)


@pytest.mark.needs_cc
def test_passes_over_different_ranges_stay_apart():
    source = """def part(float(N, D) X) -> (v) {
      c(n, d) = 2 * X(n, d)
      v(n) +=! c(n, d) * c(n, d) where d in 1:D
    }"""
    op = polyc.define(source)
    assert not any("c[d] = " in body and accumulators(body) for body in _vector_loops(op))
    X = np.random.default_rng(4).standard_normal((3, 11)).astype(np.float32)
    c = 2 * X.astype(np.float64)
    np.testing.assert_allclose(op(X), (c[:, 1:] ** 2).sum(axis=1), rtol=1e-5)


def test_a_library_call_stays_apart_from_a_reduction():
    # A vector exp clobbers every vector register: the sum's accumulator would spill.
    op = polyc.define(SOFTMAX)
    sums = [body for body in _vector_loops(op) if accumulators(body) and "e[" in body]
    assert sums and not any("expf" in body for body in sums)


STATISTICS = """def stats(float(N, D) X, float(N, D) Y) -> (s, q, mx, col) {
  s(n) +=! X(n, d) * X(n, d)
  scaled(n) = 2 * s(n)
  q(n) +=! X(n, d) * Y(n, d)
  mx(n) max=! Y(n, d)
  col(d) +=! X(n, d) * Y(n, d)
}"""
DEPENDENT = """def dep(float(N, D) X) -> (v) {
  m(n) +=! X(n, d)
  s(n) = m(n) * 2
  v(n) +=! (X(n, d) - s(n)) * (X(n, d) - s(n))
}"""


def test_independent_sums_of_a_row_share_one_loop_with_an_accumulator_each():
    # Three sums over the row walk one d loop: their chains of additions overlap and
    # the row is read once.
    op = polyc.define(STATISTICS)
    loops = [body for body in _vector_loops(op) if accumulators(body)]
    assert len(loops) == 1
    text = op.compilation().c_source.text
    assert reduction_loops(text) == [("polyc_part0", "polyc_part1", "polyc_part2")]
    assert "int polyc_nans2[" in text  # the max's NaN flags
    # The statement reading the first sum runs after the loop, not inside it.
    assert text.index("scaled[0] = ") > text.index("polyc_acc0 = (polyc_acc0 + polyc_part0[0])")


@pytest.mark.needs_cc
@settings(max_examples=20, deadline=None)
@given(rows=st.integers(0, 7), cols=st.integers(0, 40), nan_at=st.integers(-1, 39),
       seed=st.integers(0, 2 ** 16))
def test_sums_sharing_a_loop_match_numpy(rows, cols, nan_at, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((2, rows, cols)).astype(np.float32)
    if rows and 0 <= nan_at < cols:
        Y[rows // 2, nan_at] = np.nan
    x, y = X.astype(np.float64), Y.astype(np.float64)
    s, q, mx, col = polyc.define(STATISTICS)(X, Y)
    np.testing.assert_allclose(s, (x * x).sum(axis=1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(q, (x * y).sum(axis=1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(mx, y.max(axis=1) if cols else np.full(rows, -np.inf))
    np.testing.assert_allclose(col, (x * y).sum(axis=0), rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_a_sum_waiting_on_another_through_a_statement_stays_apart():
    op = polyc.define(DEPENDENT)
    assert "polyc_acc1" not in op.compilation().c_source.text
    assert len([body for body in _vector_loops(op) if accumulators(body)]) == 2
    X = np.random.default_rng(5).standard_normal((3, 13)).astype(np.float32)
    x = X.astype(np.float64)
    np.testing.assert_allclose(op(X), ((x - 2 * x.sum(axis=1, keepdims=True)) ** 2).sum(axis=1),
                               rtol=1e-4)


def test_whole_loop_nests_are_not_joined_across_another():
    # Without fusion the nests stay nests: the two row sums, each a loop nest of its
    # own, do not join across the loop nest between them.
    source = """def apart(float(N, D) X, float(N, D) Y) -> (a, b, Z) {
      a(n) +=! X(n, d)
      Z(n, d) = Y(n, d) * 2
      b(n) +=! X(n, d) * X(n, d)
    }"""
    text = polyc.define(source, fusion="min").compilation().c_source.text
    assert "polyc_acc1" not in text


def test_a_joined_loop_keeps_no_more_accumulators_than_the_machine_model_allows(machine):
    # One more independent sum over a row than the rule allows: each loop holds at most
    # the rule's number of accumulators, and every sum is in some loop.
    limit = joined_accumulators(machine)
    sums = limit + 1
    body = "\n".join(f"  s{k}(n) +=! X(n, d) * {k + 1}" for k in range(sums))
    outputs = ", ".join(f"s{k}" for k in range(sums))
    source = f"def many(float(N, D) X) -> ({outputs}) {{\n{body}\n}}"
    text = polyc.define(source, machine=machine).compilation().c_source.text
    held = [len(names) for names in reduction_loops(text)]
    assert max(held) == limit and sum(held) == sums


def test_a_pass_isl_offset_by_a_constant_joins_the_passes_over_the_same_values():
    # In the benchmark's layer norm backward isl schedules the column sums' pass at
    # d + D, after the row sums' at d: alone in its child of the sequence, the pass is
    # shifted back and joins them.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from kernels import BY_NAME

    bench = BY_NAME["layernorm_backward"]
    loops = _vector_loops(polyc.define(bench.source))
    (joined,) = [body for body in loops if "d_gamma[d]" in body]
    assert "d_beta[d]" in joined and "polyc_part0" in accumulators(joined)
    sizes = bench.tiny_sizes
    args = bench.inputs(sizes, np.random.default_rng(3))
    for got, expected in zip(polyc.define(bench.source)(*args), bench.reference(*args)):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
