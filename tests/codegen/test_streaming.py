"""Streaming stores for large outputs written once (polyc/codegen/streaming.py).

The staged path runs only for outputs of a quarter of the L3 cache or more;
tests force it on small arrays with a machine model whose L3 is one byte.
"""
import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import islpy as isl

import polyc
from polyc.codegen.isl_ast import coefficient as _coefficient
from polyc.machine import NAMED_MACHINES
from polyc.machine.rules import streaming_threshold
from polyc.options import Options
from polyc.rewrite.layout import write_once_outputs
from corpus import CORPUS, assert_close, make_inputs

SOFTMAX = """
def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - row_max(n))
  row_sum(n) +=! e(n, d)
  Y(n, d) = e(n, d) / row_sum(n)
}
"""
SCALE = "def scale({t}(M, N) A, {t}(N) b) -> (O) {{ O(i, j) = A(i, j) * b(j) }}"


# A machine model whose last-level cache is one byte: every output streams (a quarter
# of it is 0 bytes), whatever the size.
STREAM_EVERYTHING = dataclasses.replace(Options().machine, l3=1)


@pytest.fixture
def always_stream():
    """The machine under which every write-once output streams."""
    if not STREAM_EVERYTHING.streaming_stores:
        pytest.skip("no streaming stores on this machine")
    return STREAM_EVERYTHING


def _streamed(op: polyc.Operator) -> bool:
    return "polyc_stream(" in op.compilation().c_source.text


def test_only_outputs_written_once_by_an_assignment_and_never_read_stream():
    ops = {
        "softmax": (SOFTMAX, {"Y"}),
        "read_back": ("def f(float(N) A) -> (B, C) { B(i) = A(i) + 1  C(i) = B(i) * 2 }", {"C"}),
        "reduction": ("def f(float(N, M) A) -> (B) { B(i) +=! A(i, j) }", set()),
        "two_writers": ("def f(float(N) A) -> (B) { B(i) = A(i)  B(i) += A(i) }", set()),
    }
    for name, (source, expected) in ops.items():
        assert write_once_outputs(polyc.define(source).ir) == expected, name


def test_the_call_streams_only_outputs_of_a_quarter_of_l3_or_more():
    text = polyc.define(SOFTMAX, machine="zen3").compilation().c_source.text
    assert f">= {streaming_threshold(NAMED_MACHINES['zen3'])}" in text
    assert streaming_threshold(NAMED_MACHINES["zen3"]) == NAMED_MACHINES["zen3"].l3 // 4
    assert "polyc_stream_fence()" in text
    assert not _streamed(polyc.define(SOFTMAX, optimize=False))


def _functions(text: str) -> dict[str, str]:
    """The kernel's C functions by name (its entry and its regions), each its body."""
    found = {}
    for match in re.finditer(r"^(?:static .*\bvoid|int) (polyc_\w+)\([^;{]*\)\n\{", text,
                             flags=re.M):
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        found[match.group(1)] = text[match.end() - 1:end + 1]
    return found


@pytest.mark.parametrize("parallel", [True, False])
def test_a_kernel_fences_its_streaming_stores_once_where_the_code_that_streams_ends(
        parallel):
    # A fence after every streamed row cost a softmax 6%: each thread fences once, at
    # the end of its region's function (before the region's closing barrier), and
    # code that streams outside a region fences at the end of the entry function.
    text = polyc.define(SOFTMAX, machine="zen5", parallel=parallel).compilation() \
        .c_source.text
    streaming = {name: body for name, body in _functions(text).items()
                 if "polyc_stream(polyc_to" in body}
    assert streaming
    for name, body in streaming.items():
        assert body.count("polyc_stream_fence();") == 1, name
        head = body[:body.index("polyc_stream_fence();")]
        assert head.count("{") - head.count("}") == 1, name  # in no loop: the function's
    if parallel:
        assert all("_region" in name for name in streaming)
    else:
        assert list(streaming) == ["polyc_softmax"]


def test_the_store_must_step_by_one_element_along_the_loop():
    it, size = (isl.AstExpr.from_id(isl.Id(name)) for name in ("c1", "D"))

    def const(value):
        return isl.AstExpr.from_val(isl.Val(value))

    assert _coefficient(it, "c1") == 1
    assert _coefficient(const(-2).mul(size).add(it), "c1") == 1  # (-2 * D) + c1
    assert _coefficient(it.sub(size), "c1") == 1
    assert _coefficient(const(2).mul(it), "c1") == 2
    assert _coefficient(it.neg(), "c1") == -1
    assert _coefficient(size, "c1") == 0
    assert _coefficient(it.mul(size), "c1") is None  # not affine in c1


def test_streaming_stores_need_no_intrinsics_header(always_stream):
    # Through the compilers' builtins: <immintrin.h> alone cost gcc about as long as a
    # whole small kernel (benchmarks/README.md, "Design measurements").
    text = polyc.define(SOFTMAX, machine=always_stream).compilation().c_source.text
    assert "polyc_stream(" in text and "#include <immintrin.h>" not in text
    assert "__builtin_ia32_sfence()" in text


@pytest.mark.needs_cc
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16",
                                   pytest.param("float16", marks=pytest.mark.needs_float16),
                                   "bool"])
def test_staged_stores_write_every_element_once(always_stream, dtype):
    source = SCALE.format(t=dtype)
    if dtype == "bool":
        source = "def f(bool(M, N) A, bool(N) b) -> (O) { O(i, j) = A(i, j) && b(j) }"
    op = polyc.define(source, machine=always_stream)
    assert _streamed(op)
    rng = np.random.default_rng(1)
    for m, n in [(1, 1), (3, 5), (4, 63), (2, 64), (5, 130), (3, 1000)]:
        A = (rng.standard_normal((m, n)) * 4).astype(dtype)
        b = (rng.standard_normal(n) * 4).astype(dtype)
        result = op(A, b)  # float16 arithmetic happens (and results are) in float32
        expected = (A & b) if dtype == "bool" else \
            A.astype(result.dtype) * b.astype(result.dtype)
        np.testing.assert_array_equal(result, expected)


@pytest.mark.needs_cc
@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 300), offset=st.integers(0, 17))
def test_streaming_into_out_arrays_at_any_alignment(rows, cols, offset):
    """``out=`` views starting anywhere in a buffer: the partial lines at either end
    are written with plain stores, the rest streamed, and nothing outside is touched."""
    op = polyc.define(SCALE.format(t="float32"), machine=STREAM_EVERYTHING)
    rng = np.random.default_rng(rows * 1000 + cols)
    A = rng.standard_normal((rows, cols)).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    buffer = np.full(rows * cols + 40, -7.0, np.float32)
    out = buffer[offset:offset + rows * cols].reshape(rows, cols)
    op(A, b, out=out)
    np.testing.assert_array_equal(out, A * b)
    assert np.all(buffer[:offset] == -7.0) and np.all(buffer[offset + rows * cols:] == -7.0)


@pytest.mark.needs_cc
def test_corpus_operators_that_stream_still_match_numpy(always_stream):
    streamed = []
    for entry in CORPUS:
        op = polyc.define(entry.source, entry.def_name, machine=always_stream)
        if not _streamed(op):
            continue
        streamed.append(entry.name)
        for shape_number, sizes in enumerate(entry.shapes):
            inputs = make_inputs(entry, sizes, np.random.default_rng(shape_number))
            result = op(*inputs)
            results = result if isinstance(result, tuple) else (result,)
            for k, (actual, reference) in enumerate(zip(results, entry.reference(*inputs))):
                assert_close(actual, reference, entry.tolerance,
                             what=f"{entry.name} output {k} at sizes {sizes}")
    assert {"softmax", "layernorm", "copy2d"} <= set(streamed) and len(streamed) >= 12
