"""Reads under a guard are proven in bounds where the guard holds (polyc.lang.guards)."""
import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyc
from polyc.compiler import frontend
from polyc.lang.guards import guarded_reads
from polyc.poly.program import build_poly_program


def _preconditions(body: str, params: str = "float(N) A") -> list[str]:
    op = frontend(f"def f({params}) -> (B) {{ {body} }}")
    return [p.description for p in op.preconditions]


@pytest.mark.parametrize("body", [
    "B(i) = (i >= 1) ? A(i - 1) : 0.0 where i in 0:N",
    "B(i) = (i < 1) ? 0.0 : A(i - 1) where i in 0:N",
    "B(i) = !(i < 1) ? A(i - 1) : 0.0 where i in 0:N",
    "B(i) = i >= 1 && i + 1 < N ? A(i - 1) + A(i + 1) : 0.0 where i in 0:N",
    "B(i) = i < 1 || i + 1 >= N ? 0.0 : A(i - 1) + A(i + 1) where i in 0:N",
    # && and || evaluate their right operand only when the left one decides nothing
    "B(i) = i >= 1 && A(i - 1) > 0.0 ? 1.0 : 0.0 where i in 0:N",
    "B(i) = i < 1 || A(i - 1) > 0.0 ? 1.0 : 0.0 where i in 0:N",
    # strides: a divisibility guard
    "B(i) = i % 2 == 0 && i / 2 < N ? A(i / 2) : 0.0 where i in 0:2 * N",
    "B(i) = i >= N ? A(i - N) : A(i) where i in 0:2 * N",
])
def test_a_guarded_read_needs_no_precondition(body):
    assert _preconditions(body) == []


@pytest.mark.parametrize("body", [
    # a guard on data says nothing about where the read happens
    "B(i) = A(i) > 0.0 ? A(i - 1) : 0.0 where i in 0:N",
    # the guard is on the other branch
    "B(i) = (i >= 1) ? 0.0 : A(i - 1) where i in 0:N",
    # an || whose left side may hold says nothing about its right side's operands
    "B(i) = i >= 1 || A(i - 1) > 0.0 ? 1.0 : 0.0 where i in 0:N",
])
def test_an_unguarded_read_is_still_proven_in_bounds(body):
    # only N = 0 keeps A(i - 1) inside A: no size that gives the statement work does
    with pytest.raises(polyc.SemanticError, match=r"`A\(i - 1\)` reads or writes outside `A`"):
        _preconditions(body)


def test_the_read_relation_holds_only_the_guarded_points():
    op = frontend("def f(float(N) A) -> (B) { B(i) = (i >= 2) ? A(i - 2) : 0.0 where i in 0:N }")
    reads = build_poly_program(op).reads
    assert reads.is_equal(reads.__class__(
        "[N] -> { S0[i] -> A[i - 2] : 2 <= i < N }"))


def test_guards_of_nested_conditions_are_conjunctions():
    op = frontend("def f(float(N) A) -> (B) { B(i) = i >= 1 ? (i + 1 < N ? A(i + 1) : A(i - 1)) "
                  ": 0.0 where i in 0:N }")
    guards = {str(read.indices[0]): guard for read, guard in guarded_reads(op.statements[0].rhs)}
    assert len(guards) == 2 and all("and" in g for g in guards.values())


SHIFT = """def shift(float(N) A) -> (B) { B(i) = (i >= 1) ? A(i - 1) : 0.0 where i in 0:N }"""
# TC's WaveNet layer reads Data(b, c, rf - DILATION) under a guard
DILATED = """def dilated(float(B, C, RF) Data) -> (Out) {
  Out(b, c, rf) = Data(b, c, rf) + (rf - 2 >= 0 ? Data(b, c, rf - 2) : 0.0)
}"""


def test_a_guarded_read_ranges_an_index_only_when_nothing_else_does():
    # rf from Data(b, c, rf); the guarded Data(b, c, rf - 2) would start it at 2
    assert str(frontend(DILATED)).splitlines()[1].endswith("rf in 0:RF")
    # nothing else ranges i: the guarded read does, and sema says what it would leave out
    with pytest.raises(polyc.SemanticError, match="make `i` start at 0"):
        frontend("def f(float(N) A) -> (B) { B(i) = i >= 1 ? A(i - 1) : 0.0 }")


@pytest.mark.needs_cc
def test_guarded_reads_run_for_every_size():
    shift = polyc.define(SHIFT)
    for n in (0, 1, 2, 9):
        a = np.arange(n, dtype=np.float32) + 1
        np.testing.assert_array_equal(shift(a), np.concatenate([[0.0], a[:-1]])[:n])
    dilated = polyc.define(DILATED)
    data = np.random.default_rng(0).standard_normal((2, 3, 7)).astype(np.float32)
    expected = data.copy()
    expected[:, :, 2:] += data[:, :, :-2]
    np.testing.assert_allclose(dilated(data), expected, rtol=1e-6)


@pytest.mark.needs_cc
@settings(max_examples=15, deadline=None)
@given(shift=st.integers(-3, 3), stride=st.integers(1, 3), n=st.integers(0, 9))
def test_shifted_and_strided_reads_under_their_guards(shift, stride, n):
    """B(i) = <A's element at stride * i + shift, where it exists> else -1, for any shift,
    stride and length: proven in bounds for every N, equal to numpy."""
    op = _shifted(shift, stride)
    a = np.arange(n, dtype=np.float32) + 1
    expected = [a[stride * i + shift] if 0 <= stride * i + shift < n else -1.0
                for i in range(n)]
    np.testing.assert_array_equal(op(a), np.asarray(expected, np.float32))


@functools.lru_cache(maxsize=None)
def _shifted(shift: int, stride: int) -> polyc.Operator:
    at = f"{stride} * i + {shift}" if shift >= 0 else f"{stride} * i - {-shift}"
    op = polyc.define(f"def f(float(N) A) -> (B) {{ B(i) = {at} >= 0 && {at} < N ? "
                      f"A({at}) : -1.0 where i in 0:N }}")
    assert op.ir.preconditions == ()
    return op
