"""What the last pass of a loop nest does for memory is decided in the schedule tree:
which SIMD loops stream their stores (polyc/scheduling/stream_stores.py) and which row
loops prefetch the next row (polyc/scheduling/row_prefetch.py); code generation carries
out exactly those decisions."""
import dataclasses
import re

import pytest

from polyc.compiler import frontend, generate
from polyc.options import Options
from polyc.scheduling.marks import PrefetchNextRow, StreamedStores, marks_by_statement

ADD = "def add(float(M, N) A, float(M, N) B) -> (C) { C(m, n) = A(m, n) + B(m, n) }"
SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  mx(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - mx(n))
  s(n) +=! e(n, d)
  Y(n, d) = e(n, d) / s(n)
}"""
# B is read again; C shares its SIMD loop with B's statement (its stores are not alone).
READ_AGAIN = """def twice(float(M, N) A) -> (B, C) {
  B(m, n) = A(m, n) * 2
  C(m, n) = B(m, n) + 1
}"""
ACCUMULATED = "def rows(float(M, N) A) -> (S) { S(m) +=! A(m, n) }"


def decided(source: str, kind: type, **options) -> tuple[set[str], str]:
    """The tensors the decisions of ``kind`` name in the schedule, and the C."""
    compilation = generate(frontend(source), Options().with_(**options))
    marks = marks_by_statement(compilation.schedule.tree)
    tensors = {tensor for values in marks.values() for mark in values
               if isinstance(mark, kind)
               for tensor in ((*mark.tensors, *mark.stores) if kind is PrefetchNextRow
                              else (mark.tensor,))}
    return tensors, compilation.c_source.text


@pytest.mark.parametrize("source, tensors", [(ADD, {"C"}), (SOFTMAX, {"Y"}),
                                             (READ_AGAIN, set()), (ACCUMULATED, set())])
def test_outputs_written_once_along_their_rows_stream(source, tensors, machine):
    decided_tensors, c = decided(source, StreamedStores, machine=machine)
    assert decided_tensors == tensors
    assert ("polyc_stream(" in c) == bool(tensors)     # codegen stages exactly those
    for tensor in tensors:
        assert f"polyc_stream(polyc_to" in c and f"polyc_to = &{tensor}[" in c


def test_no_decision_where_the_machine_has_no_streaming_stores(machine):
    generic = dataclasses.replace(machine, isa="generic", name="generic")
    tensors, c = decided(ADD, StreamedStores, machine=generic)
    assert tensors == set() and "polyc_stream(" not in c


def test_nothing_streams_without_optimisation():
    tensors, c = decided(ADD, StreamedStores, optimize=False)
    assert tensors == set() and "polyc_stream(" not in c


# ----------------------------------------------------------------- row prefetches

LAYERNORM = """def layernorm(float(N, D) X) -> (Y) {
  mean(n) +=! X(n, d)
  mean(n) = mean(n) / D
  var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n))
  var(n) = var(n) / D
  Y(n, d) = (X(n, d) - mean(n)) / sqrt(var(n) + 1e-5)
}"""


# A softmax's backward: its second pass reads the row of d_Y, which the first did not.
SOFTMAX_BACKWARD = """def softmax_backward(float(N, D) X, float(N, D) d_Y) -> (d_X) {
  mx(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - mx(n))
  s(n) +=! e(n, d)
  g(n) +=! d_Y(n, d) * e(n, d)
  d_X(n, d) = e(n, d) * (d_Y(n, d) - g(n) / s(n)) / s(n)
}"""


@pytest.mark.parametrize("source, tensors, stores", [
    (SOFTMAX, {"X"}, {"Y"}), (LAYERNORM, {"X"}, {"Y"}),
    (SOFTMAX_BACKWARD, {"X", "d_Y"}, {"d_X"}), (ADD, set(), set()),
    (ACCUMULATED, set(), set())])
def test_row_loops_prefetch_what_their_passes_read(source, tensors, stores, machine):
    # and, for writing, the output their last pass alone stores
    decided_tensors, c = decided(source, PrefetchNextRow, machine=machine)
    assert decided_tensors == tensors | stores
    fetched = set(re.findall(r"__builtin_prefetch\(&(\w+)\[[^;]*, 0, 3\)", c))
    assert fetched == tensors          # codegen fetches exactly the decided tensors
    written = set(re.findall(r"__builtin_prefetch\(&(\w+)\[[^;]*, 1, 3\)", c))
    assert written == stores
