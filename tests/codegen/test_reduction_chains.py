"""A vector reduction over a row keeps several vectors of partial results
(polyc/codegen/vector_reductions.py, ``_reduction_loop``): independent chains of
additions, the steps left over added into the first lanes, the lanes folded in a tree.
The number of chains comes from the machine model's rule (``rules.reduction_chains``),
the values are checked against numpy in float64 for row lengths on both sides of a
chain's lanes."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from polyc.machine.rules import (REDUCTION_CHAINS, joined_accumulators, reduction_chains,
                                 vector_lanes)

from c_text import accumulators, reduction_loops, vector_loops

ROW_SUM = "def rs(float(N, D) X) -> (s) { s(n) +=! X(n, d) }"
MOMENTS = """def moments(float(N, D) X) -> (mean, var) {
  mean(n) +=! X(n, d)
  mean(n) = mean(n) / D
  var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n))
  var(n) = var(n) / D
}"""
TWO_SUMS = """def two(double(N, D) X) -> (a, b) {
  a(n) +=! X(n, d)
  b(n) +=! X(n, d) * X(n, d)
}"""


def _c(source: str, machine) -> str:
    return polyc.define(source, machine=machine).compilation().c_source.text


def _lanes(machine, element_bytes: int, reductions: int) -> int:
    return reduction_chains(machine, reductions) * vector_lanes(machine, element_bytes)


def test_the_rule_keeps_the_chains_within_the_joined_accumulators(machine):
    assert reduction_chains(machine, 1) == min(REDUCTION_CHAINS, joined_accumulators(machine))
    for reductions in range(1, 2 * joined_accumulators(machine)):
        chains = reduction_chains(machine, reductions)
        assert chains >= 1
        assert chains == 1 or chains * reductions <= joined_accumulators(machine)


def test_a_row_sum_keeps_the_rules_number_of_vectors(machine):
    lanes = _lanes(machine, 4, 1)
    text = _c(ROW_SUM, machine)
    assert f"float polyc_part0[{lanes}];" in text
    assert f"for (; polyc_from + {lanes} <= D; polyc_from += {lanes})" in text
    # the steps left over update the first lanes; the lanes fold in halves, the last
    # into the accumulator, and no OpenMP reduction adds lanes up one by one
    assert re.search(r"for \(int64_t (c\d+) = polyc_from; \1 < D; \1 \+= 1\)\s*\{[^}]*"
                     r"polyc_part0\[\1 - polyc_from\] = \(polyc_part0\[\1 - polyc_from\] \+ ",
                     text)
    halves = [int(n) for n in re.findall(
        r"polyc_part0\[polyc_lane\] = \(polyc_part0\[polyc_lane\] \+ "
        r"polyc_part0\[polyc_lane \+ (\d+)\]\)", text)]
    assert halves == [lanes >> k for k in range(1, lanes.bit_length())]
    assert "polyc_acc = (polyc_acc + polyc_part0[0]);" in text
    assert "reduction(" not in text


def test_sums_joined_in_one_loop_share_the_chains(machine):
    lanes = _lanes(machine, 8, 2)
    text = _c(TWO_SUMS, machine)
    assert f"double polyc_part0[{lanes}];" in text and f"double polyc_part1[{lanes}];" in text
    assert "polyc_acc1 = (polyc_acc1 + polyc_part1[0]);" in text
    assert reduction_loops(text) == [("polyc_part0", "polyc_part1")]


def test_a_loop_that_also_stores_along_the_row_keeps_one_vector(machine):
    # The temporary's values are stored in the loop that sums them: the loop is bound by
    # its loads and stores, not by the additions' latency. Its lanes still fold in a
    # tree.
    source = """def var2(float(N, D) X) -> (v) {
      m(n) +=! X(n, d)
      c(n, d) = X(n, d) - m(n)
      v(n) +=! c(n, d) * c(n, d)
    }"""
    text = polyc.define(source, canonicalize=False, machine=machine).compilation() \
        .c_source.text
    (joined,) = [body for body in vector_loops(text) if "c[" in body and accumulators(body)]
    assert accumulators(joined) == {"polyc_part0"}
    # the mean's loop alone keeps the rule's chains, the joined loop one vector
    assert text.count(f"float polyc_part0[{_lanes(machine, 4, 1)}];") == 1
    assert text.count(f"float polyc_part0[{vector_lanes(machine, 4)}];") == 1
    assert "reduction(" not in text


def test_a_max_tracking_nans_keeps_lanes_of_flags_beside_its_partial_results(machine):
    # A float max keeps a NaN flag beside each lane of partial maxima: two vectors a
    # chain, counted against the accumulators the rule allows.
    lanes = reduction_chains(machine, 2) * vector_lanes(machine, 4)
    text = _c("def rm(float(N, D) X) -> (m) { m(n) max=! X(n, d) }", machine)
    assert f"float polyc_part0[{lanes}];" in text and f"int polyc_nans0[{lanes}];" in text
    assert "polyc_nan |= polyc_nans0[0];" in text and "reduction(" not in text


@pytest.mark.needs_cc
@pytest.mark.parametrize("D", [1, 7, 31, 32, 33, 64, 95, 1000])
def test_moments_over_rows_of_every_length(D):
    X = np.random.default_rng(D).standard_normal((6, D)).astype(np.float32) + 3
    mean, var = polyc.define(MOMENTS)(X)
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(mean, X64.mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, X64.var(axis=1), rtol=1e-4, atol=1e-6)


@pytest.mark.needs_cc
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.integers(1, 200), st.integers(0, 2**32 - 1))
def test_joined_double_sums_match_numpy(N, D, seed):
    X = np.random.default_rng(seed).standard_normal((N, D))
    a, b = polyc.define(TWO_SUMS)(X)
    np.testing.assert_allclose(a, X.sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, (X * X).sum(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.needs_cc
@pytest.mark.parametrize("D", [5, 40, 129])
def test_integer_products_and_minima_in_chains(D):
    # Reductions other than sums start their partial results at their identity.
    source = """def pm(int32(N, D) X) -> (p, lo) {
      p(n) *=! X(n, d)
      lo(n) min=! X(n, d)
    }"""
    X = np.random.default_rng(D).integers(-3, 4, size=(3, D)).astype(np.int32)
    X[X == 0] = 1
    p, lo = polyc.define(source)(X)
    np.testing.assert_array_equal(p, np.prod(X, axis=1, dtype=np.int32))
    np.testing.assert_array_equal(lo, X.min(axis=1))


FIVE_SUMS = """def five(double(N, D) X, double(N, D) Y) -> (a, b, c, d, e) {
  a(n) +=! X(n, j)
  b(n) +=! Y(n, j)
  c(n) +=! X(n, j) * Y(n, j)
  d(n) +=! X(n, j) * X(n, j)
  e(n) +=! Y(n, j) * Y(n, j)
}"""


def test_the_fold_adds_every_lane_once_whatever_their_number(machine):
    # Five sums joined in one loop share the accumulators the rule allows: three chains
    # each with 32 vector registers, 24 lanes of doubles, not a power of two. Replay the
    # fold's steps (lane i of the lower part takes lane i + offset) on sets of lanes.
    text = _c(FIVE_SUMS, machine)
    (parts,) = reduction_loops(text)
    lanes = _lanes(machine, 8, len(parts))
    assert parts == tuple(f"polyc_part{k}" for k in range(5))
    steps = [(int(count), int(offset)) for count, offset in re.findall(
        r"for \(int64_t polyc_lane = 0; polyc_lane < (\d+); polyc_lane \+= 1\)\s*\{\s*"
        r"polyc_part0\[polyc_lane\] = \(polyc_part0\[polyc_lane\] \+ "
        r"polyc_part0\[polyc_lane \+ (\d+)\]\);", text)]
    held = [{lane} for lane in range(lanes)]
    for count, offset in steps:
        for lane in range(count):
            assert held[lane + offset], "a lane folded twice"
            held[lane] |= held[lane + offset]
            held[lane + offset] = set()
    assert held[0] == set(range(lanes)) and not any(held[1:])
    assert len(steps) == (lanes - 1).bit_length()  # a tree: log2 levels


@pytest.mark.needs_cc
@pytest.mark.parametrize("D", [1, 47, 48, 49, 200])
def test_five_joined_sums_match_numpy(D):
    rng = np.random.default_rng(D)
    X, Y = rng.standard_normal((2, 3, D))
    results = polyc.define(FIVE_SUMS)(X, Y)
    for got, want in zip(results, (X, Y, X * Y, X * X, Y * Y)):
        np.testing.assert_allclose(got, want.sum(axis=1), rtol=1e-12, atol=1e-12)
