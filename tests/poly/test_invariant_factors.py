"""Reduction-invariant factors leave the sum: ``tmp +=! alpha * A * B`` becomes
``tmp +=! A * B`` then ``tmp = alpha * tmp`` (polyc.fusion.invariant_factors)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.fusion.invariant_factors import hoist_invariant_factors
from polyc.options import Options

MM2 = """def mm2(float alpha, float beta, float(NI, NK) A, float(NK, NJ) B,
        float(NJ, NL) C, float(NI, NL) D) -> (E) {
  tmp(i, j) +=! alpha * A(i, k) * B(k, j)
  E(i, l) +=! tmp(i, j) * C(j, l)
  E(i, l) = E(i, l) + beta * D(i, l)
}"""


def _statements(source: str) -> list[str]:
    return str(hoist_invariant_factors(frontend(source))).splitlines()[1:-1]


def test_a_scalar_factor_scales_the_finished_sum():
    assert _statements(MM2) == [
        "  tmp(i, j) +=! A(i, k) * B(k, j) where i in 0:NI, j in 0:NJ, k in 0:NK",
        "  tmp(i, j) = alpha * tmp(i, j) where i in 0:NI, j in 0:NJ",
        "  E(i, l) +=! tmp(i, j) * C(j, l) where i in 0:NI, l in 0:NL, j in 0:NJ",
        "  E(i, l) = E(i, l) + beta * D(i, l) where i in 0:NI, l in 0:NL"]
    names = [s.name for s in hoist_invariant_factors(frontend(MM2)).statements]
    assert names == ["S0", "S0_scale", "S1", "S2"]


def test_factors_of_output_indices_leave_in_source_order():
    source = ("def f(float alpha, float(M, K) A, float(K, N) B, float(M) s) -> (C) "
              "{ C(m, n) +=! s(m) * A(m, k) * alpha * B(k, n) }")
    assert _statements(source) == [
        "  C(m, n) +=! A(m, k) * B(k, n) where m in 0:M, n in 0:N, k in 0:K",
        "  C(m, n) = s(m) * alpha * C(m, n) where m in 0:M, n in 0:N"]


NOT_HOISTED = [
    "C(m, n) +=! A(m, k) * B(k, n)",                  # nothing invariant
    "C(m, n) max=! alpha * A(m, k) * B(k, n)",        # not a sum
    "C(m, n) +=! (alpha + A(m, k)) * B(k, n)",        # no product at the top
    "C(m, n) +=! k * A(m, k) * B(k, n)",              # an index as a factor: int64
    "C(m, n) +=! A(m, ix(n)) * B(k, n) * s(ix(m))",   # a gather stays where it was
    "C(m, n) +=! d * A(m, k) * B(k, n)",              # float64 factor, float32 sum
]


@pytest.mark.parametrize("body", NOT_HOISTED)
def test_what_stays_in_the_sum(body):
    source = (f"def f(float alpha, double d, float(M, K) A, float(K, N) B, float(M) s, "
              f"int64(N) ix) -> (float C) {{ {body} }}")
    op = frontend(source)
    assert hoist_invariant_factors(op) == op


def test_an_accumulation_into_existing_values_keeps_its_factor():
    source = """def f(float alpha, float(M, K) A, float(K, N) B) -> (C) {
      C(m, n) +=! alpha * A(m, k) * B(k, n)
      C(m, n) += alpha * A(m, k) * B(k, n)
    }"""
    op = frontend(source)
    hoisted = hoist_invariant_factors(op)
    assert [s.name for s in hoisted.statements] == ["S0", "S0_scale", "S1"]
    assert hoisted.statements[2] == op.statements[1]


def test_the_scaling_runs_inside_the_contraction_tile():
    schedule = generate(frontend(MM2), Options()).schedule
    assert schedule.decision.startswith(
        "fusion in 2 groups: S0_init, S0, S0_scale | S1_init, S1, S2")
    tree = str(schedule)
    assert "pack S0 (alpha" not in tree  # alpha * A(i, k) is no longer a row factor
    assert "pack S0 B" in tree


FORMS = {
    "alpha * A(m, k) * B(k, n)": lambda a, s, A, B: a * (A @ B),
    "s(m) * A(m, k) * B(k, n) * alpha": lambda a, s, A, B: (s[:, None] * a) * (A @ B),
    "A(m, k) * s(m) * B(k, n)": lambda a, s, A, B: s[:, None] * (A @ B),
    "exp(A(m, k)) * alpha * B(k, n)": lambda a, s, A, B: a * (np.exp(A) @ B),
}


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(0, 70), n=st.integers(1, 90),
       form=st.sampled_from(sorted(FORMS)), dtype=st.sampled_from(["float", "double"]),
       fusion=st.sampled_from(["default", "min"]), optimize=st.booleans())
def test_values(m, k, n, form, dtype, fusion, optimize):
    source = (f"def f({dtype} alpha, {dtype}(M) s, {dtype}(M, K) A, {dtype}(K, N) B) -> (C) "
              f"{{ C(m, n) +=! {form} }}")
    numpy_type = np.float32 if dtype == "float" else np.float64
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    A = rng.standard_normal((m, k)).astype(numpy_type)
    B = rng.standard_normal((k, n)).astype(numpy_type)
    s = rng.standard_normal(m).astype(numpy_type)
    op = polyc.define(source, fusion=fusion, optimize=optimize)
    got = op(1.5, s, A, B)
    want = FORMS[form](1.5, s.astype(np.float64), A.astype(np.float64), B.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_integer_sums_scale_exactly():
    op = polyc.define("def f(int32 c, int32(M, K) A, int32(K, N) B) -> (C) "
                      "{ C(m, n) +=! c * A(m, k) * B(k, n) }")
    assert "C(m, n) = c * C(m, n)" in str(op.compilation().op)
    rng = np.random.default_rng(3)
    A = rng.integers(-50, 50, (9, 13)).astype(np.int32)
    B = rng.integers(-50, 50, (13, 11)).astype(np.int32)
    np.testing.assert_array_equal(op(7, A, B), 7 * (A.astype(np.int64) @ B))
