"""Temporaries read once, at the element they hold, are substituted into their reader
(polyc.rewrite.read_once)."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend
from polyc.lang import ir
from polyc.lang.types import FLOAT64, INT64
from polyc.rewrite.read_once import substitute_read_once

HEADER = "def f(float(N, D) X, float(N, D) G, float(N) s, int64(N) I) -> (O, R) {"


def _statements(body: str) -> list[str]:
    return str(substitute_read_once(frontend(f"{HEADER} {body} }}"))).splitlines()[1:-1]


def test_the_softmax_backward_adjoint_goes_into_its_reader():
    assert _statements("""
        e(n, d) = exp(X(n, d))
        R(n) +=! e(n, d)
        t(n, d) = G(n, d) / R(n) + s(n)
        O(n, d) = t(n, d) * e(n, d)
    """) == [
        "  e(n, d) = exp(X(n, d)) where n in 0:N, d in 0:D",
        "  R(n) +=! e(n, d) where n in 0:N, d in 0:D",
        "  O(n, d) = (G(n, d) / R(n) + s(n)) * e(n, d) where n in 0:N, d in 0:D"]


def test_a_reduction_reads_its_term_once_per_point_and_takes_it():
    # the reader's indices are renamed into the value, the store's own names gone
    assert _statements("""
        t(a, b) = X(a, b) * G(a, b)
        R(n) +=! t(n, d)
        O(n, d) = X(n, d)
    """) == [
        "  R(n) +=! X(n, d) * G(n, d) where n in 0:N, d in 0:D",
        "  O(n, d) = X(n, d) where n in 0:N, d in 0:D"]


def test_chains_are_substituted_to_the_end():
    assert _statements("""
        a(n, d) = X(n, d) + 1.0
        b(n, d) = a(n, d) * 2.0
        O(n, d) = b(n, d) - G(n, d)
        R(n) = s(n)
    """) == [
        "  O(n, d) = (X(n, d) + 1.0) * 2.0 - G(n, d) where n in 0:N, d in 0:D",
        "  R(n) = s(n) where n in 0:N"]


def test_a_cheap_value_read_several_times_is_computed_at_each_read():
    # one operation, one element that varies with every index: recomputing it costs
    # that operation and that load at each read, where the buffer costs a store and a load
    assert _statements("""
        c(n, d) = X(n, d) - s(n)
        R(n) +=! c(n, d) * c(n, d)
        O(n, d) = c(n, d) * G(n, d)
    """) == [
        "  R(n) +=! (X(n, d) - s(n)) * (X(n, d) - s(n)) where n in 0:N, d in 0:D",
        "  O(n, d) = (X(n, d) - s(n)) * G(n, d) where n in 0:N, d in 0:D"]


KEPT = [
    # read twice: stored once, read from the buffer
    "t(n, d) = exp(X(n, d))  O(n, d) = t(n, d) * t(n, d)",
    "t(n, d) = exp(X(n, d))  O(n, d) = t(n, d)  R(n) +=! t(n, d)",
    # read twice, and two operations, or two whole elements, to compute at each read
    "t(n, d) = X(n, d) * 2.0 + 1.0  O(n, d) = t(n, d) * t(n, d)",
    "t(n, d) = X(n, d) + G(n, d)  O(n, d) = t(n, d)  R(n) +=! t(n, d)",
    # read once per point, but the point repeats along another index: recomputed there
    "t(n) = exp(s(n))  O(n, d) = t(n) * X(n, d)",
    # read at another element than the point's (a shift)
    "t(n, d) = X(n, d)  O(n, d) = 0.0 where n in 0:N, d in 0:D"
    "  O(n, d) = t(n, d + 1) where d in 0:D - 1",
    # over other ranges: the store wrote more elements than the reader reads
    "t(n, d) = X(n, d)  O(n, d) = 0.0 where n in 0:N, d in 0:D"
    "  O(n, d) = t(n, d) where d in 0:D - 1",
    # a statement between changes what the value reads
    "R(n) = s(n)  t(n, d) = X(n, d) * R(n)  R(n) = 2.0 where n in 0:N  O(n, d) = t(n, d)",
    # the reader itself writes what the value reads
    "R(n) = s(n)  t(n) = R(n) * 2.0  R(n) = t(n) + 1.0",
    # a sum is no plain store
    "t(n) +=! X(n, d)  R(n) = t(n)",
    # a gather keeps its index check where the user wrote it
    "t(n, d) = X(I(n), d)  O(n, d) = t(n, d)",
    # the value would become a gather index
    "t(n) = I(n) + 0  R(n) = s(t(n))",
    # written twice
    "t(n, d) = X(n, d)  t(n, d) = t(n, d) * 2.0  O(n, d) = t(n, d)",
]


@pytest.mark.parametrize("body", KEPT)
def test_what_stays_a_temporary(body):
    # the outputs the body leaves unwritten are written last, from the inputs
    rest = ("" if "O(n, d) =" in body else "O(n, d) = X(n, d)  ") + (
        "" if "R(n) " in body else "R(n) = s(n)")
    op = frontend(f"{HEADER} {body}  {rest} }}")
    assert substitute_read_once(op) == op


def test_explain_says_where_the_value_went():
    op = polyc.define("""
        def f(float(N, D) X, float(N) s) -> (O) {
          t(n, d) = X(n, d) * s(n)
          O(n, d) = t(n, d) + 1.0
        }""")
    X, s = np.ones((3, 4), np.float32), np.ones(3, np.float32)
    ir_text = op.explain(X, s).section("ir")
    assert "gone: its value substituted into S1" in ir_text
    assert "O(n, d) = X(n, d) * s(n) + 1.0" in ir_text
    assert "t(n, d) = X(n, d) * s(n)" in str(op.with_options(canonicalize=False).explain(
        X, s).section("ir"))


def test_a_value_of_another_type_is_converted_as_the_store_did():
    # sema gives a temporary its value's type; an IR built otherwise (a float64 buffer
    # of a float32 value) keeps the store's conversion
    op = frontend("def f(float(N) A) -> (O) { t(i) = A(i) * 2.0  O(i) = t(i) + 1.0 }")
    wide = dataclasses.replace(op.temporaries[0], type=FLOAT64)
    read = ir.Read(FLOAT64, "t", (ir.Index(INT64, "i"),))
    reader = dataclasses.replace(op.statements[1], rhs=ir.Binary(
        FLOAT64, "+", read, ir.Const(FLOAT64, 1.0)))
    op = dataclasses.replace(op, temporaries=(wide,), statements=(op.statements[0], reader))
    (statement,) = substitute_read_once(op).statements
    converted = statement.rhs.lhs
    assert isinstance(converted, ir.Cast) and converted.type == FLOAT64
    assert converted.operand == op.statements[0].rhs


CHAIN = """def f(double(N, D) X, double(N, D) G, double(N) s) -> (O, R) {
  m(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - m(n))
  R(n) +=! e(n, d)
  t(n, d) = G(n, d) * e(n, d)
  q(n) +=! t(n, d)
  u(a, b) = G(a, b) / R(a) - q(a) * s(a)
  O(n, d) = u(n, d) * e(n, d)
}"""


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 5), d=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_substituted_operators_compute_what_the_temporaries_did(n, d, seed):
    rng = np.random.default_rng(seed)
    X, G, s = rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal(n)
    op = polyc.define(CHAIN)
    # t and u go into their readers; q is read along d by u: it stays
    assert [t.name for t in substitute_read_once(op.ir).temporaries] == ["m", "e", "q"]
    O, R = op(X, G, s)
    e = np.exp(X - X.max(axis=1, keepdims=True))
    r = e.sum(axis=1)
    q = (G * e).sum(axis=1)
    np.testing.assert_allclose(R, r, rtol=1e-12)
    np.testing.assert_allclose(O, (G / r[:, None] - (q * s)[:, None]) * e, rtol=1e-12,
                               atol=1e-12)
