"""Next-row prefetches in the last pass of a row (polyc/codegen/prefetch.py).

A prefetch never changes a value, so the values tests here are about what the
chunked last pass computes: every element once, with passes of different
lengths and on the last row; the structure tests pin what is fetched and where.
Calls prefetch where the fetched tensors hold half the last-level cache: the value
tests run under the host's model with a last-level cache of 2 bytes, so that their
small tensors take the prefetching path.
"""
import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from corpus import CORPUS
from polyc.machine import host_machine
from polyc.machine.model import size_text
from polyc.machine.rules import row_prefetch_threshold, streaming_threshold

SOFTMAX = next(entry.source for entry in CORPUS if entry.name == "softmax")
# The first pass walks D values of a row, the last E: a row's passes of different lengths.
SHIFTED = """
def shifted(float(N, D) X, float(N, E) Z) -> (Y) {
  m(n) max=! X(n, d)
  Y(n, j) = Z(n, j) - m(n)
}
"""
GATHERED = """
def gathered(float(R, D) X, int32(N) rows) -> (Y) {
  m(n) max=! X(rows(n), d)
  Y(n, d) = X(rows(n), d) - m(n)
}
"""


def _c(source: str, **options) -> str:
    return polyc.define(source, **options).compilation().c_source.text


def _prefetching_everywhere():
    """The host's model with a last-level cache of 2 bytes: every call prefetches."""
    return dataclasses.replace(host_machine(), l3=2)


def test_the_last_pass_fetches_the_next_rows_first_pass_reads():
    text = _c(SOFTMAX)
    fetches = re.findall(r"__builtin_prefetch\(&(\w+)\[[^;]*, 0, 3\)", text)
    assert fetches and set(fetches) == {"X"}  # the input, never the temporary e
    # in the last pass (the division), once per line of the next row, on rows that exist
    last_pass = text[text.index(", 0, 3)"):]
    assert "/ s[0]" in last_pass and "exp" not in last_pass.split("/ s[0]")[0]
    assert "&& (c0 + 1) < N)" in text
    assert "const int64_t c0 = polyc_next_row;" in text


def test_calls_prefetch_where_the_fetched_tensors_hold_half_the_cache(machine):
    # X read and Y stored: the chunks with their prefetches where the two hold at least
    # half the last-level cache, the last pass as one loop where they hold less.
    text = _c(SOFTMAX, machine=machine)
    threshold = row_prefetch_threshold(machine)
    assert threshold == machine.l3 // 2
    size = "(int64_t)sizeof(float) * polyc_extent(N) * polyc_extent(C)"
    fetching = f"({size} + {size}) >= {threshold}"
    assert f"if ({fetching} && (c0 + 1) < N)" in text
    # the last pass, chunked with its prefetches, or else as one loop
    last = text[text.index(f"if ({fetching})\n"):]
    chunked, plain = last.split("\n", 1)[1].split("else", 1)
    assert "__builtin_prefetch(&X[" in chunked and "polyc_chunk" in chunked
    plain = plain[:plain.index("}")]
    assert "#pragma omp simd" in plain and "polyc_chunk" not in plain


def test_no_prefetch_without_a_row_of_passes_or_through_a_gather():
    assert "__builtin_prefetch" not in _c("def f(float(N, D) A) -> (B) { B(n, d) = A(n, d) * 2 }")
    assert "__builtin_prefetch" not in _c(SOFTMAX, optimize=False)
    text = _c(GATHERED)
    assert "__builtin_prefetch" not in text  # its address would read rows(n + 1)


@pytest.mark.needs_cc
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 200), st.integers(1, 200))
def test_passes_of_different_lengths_compute_every_element(rows, first, last):
    op = polyc.define(SHIFTED, machine=_prefetching_everywhere())
    assert "__builtin_prefetch" in op.compilation().c_source.text
    rng = np.random.default_rng(rows * 40000 + first * 200 + last)
    X = rng.standard_normal((rows, first)).astype(np.float32)
    Z = rng.standard_normal((rows, last)).astype(np.float32)
    np.testing.assert_array_equal(op(X, Z), Z - X.max(axis=1, keepdims=True))


@pytest.mark.needs_cc
@settings(max_examples=20, deadline=None)
@given(st.integers(1, 9), st.integers(1, 300))
def test_softmax_with_prefetches_matches_numpy(rows, cols):
    op = polyc.define(SOFTMAX, machine=_prefetching_everywhere())
    X = np.random.default_rng(rows * 1000 + cols).standard_normal((rows, cols))
    X = X.astype(np.float32)
    expected = np.exp(X.astype(np.float64) - X.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(op(X), expected, rtol=1e-5, atol=1e-7)


# Y stored by an earlier pass, then scaled in place by the last: its lines are cached.
SOFTMAX_IN_PLACE = """
def softmax(float(N, D) X) -> (Y) {
  m(n) max=! X(n, d)
  Y(n, d) = exp(X(n, d) - m(n))
  s(n) +=! Y(n, d)
  Y(n, d) = Y(n, d) / s(n)
}
"""


def test_an_output_only_the_last_pass_stores_is_fetched_for_writing(machine):
    # Softmax's Y, stored by the last pass alone, is fetched for writing after the first
    # pass (the maximum, which reads X from memory), before the exponentials; where its
    # stores may stream past the cache, only when they do not.
    text = _c(SOFTMAX, machine=machine)
    writes = re.findall(r"__builtin_prefetch\(&(\w+)\[[^;]*, 1, 3\)", text)
    assert writes == ["Y"]
    at = text.index(", 1, 3)")
    before = text[:at]
    assert "polyc_nans0" in before and "exp" not in before[before.rindex("polyc_nans0"):]
    assert "exp" in text[at:]
    if machine.streaming_stores:
        assert f"< {streaming_threshold(machine)})" in before[before.rindex("polyc_nans0"):]
    in_place = _c(SOFTMAX_IN_PLACE, machine=machine)
    assert ", 1, 3)" not in in_place and ", 0, 3)" in in_place


def test_explain_shows_the_prefetch_and_the_size_it_starts_from(machine):
    text = polyc.define(SOFTMAX, machine=machine).explain().section("fusion")
    threshold = size_text(row_prefetch_threshold(machine))   # "16 MiB" for 32 MiB of L3
    assert (f"prefetch of the next row during the last pass, where the tensors fetched "
            f"hold at least {threshold}: X; for writing: Y") in text
