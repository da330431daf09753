"""Reduction-invariant factors leave the sum: ``tmp +=! alpha * A * B`` becomes
``tmp +=! A * B`` then ``tmp = alpha * tmp`` (polyc.rewrite.invariant_factors)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.options import Options
from polyc.rewrite.invariant_factors import hoist_invariant_factors

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


def test_a_sum_whose_terms_wait_on_another_reduction_splits_into_sums_per_term():
    # d(n) scales its term and comes from the sum r: as written, the second sum must wait
    # for r; split, its partial sums need only the inputs and move up beside r
    source = """def f(float(N, D) X, float(N, D) G) -> (T) {
      r(n) +=! X(n, d) * G(n, d)
      q(n) = r(n) * 0.5
      T(n) +=! G(n, d) - q(n) * X(n, d) - q(n) * X(n, d)
    }"""
    assert _statements(source) == [
        "  T_part(n) +=! G(n, d) where n in 0:N, d in 0:D",
        "  T_part1(n) +=! X(n, d) where n in 0:N, d in 0:D",
        "  r(n) +=! X(n, d) * G(n, d) where n in 0:N, d in 0:D",
        "  q(n) = r(n) * 0.5 where n in 0:N",
        "  T(n) = T_part(n) - q(n) * T_part1(n) - q(n) * T_part1(n) where n in 0:N"]
    # a factor that is an input waits on nothing: the sum stays whole
    whole = "def f(float(N, D) X, float(N) s) -> (T) { T(n) +=! X(n, d) - s(n) * X(n, d) }"
    assert _statements(whole) == [
        "  T(n) +=! X(n, d) - s(n) * X(n, d) where n in 0:N, d in 0:D"]


@pytest.mark.needs_cc
def test_split_sums_compute_what_the_sum_did():
    rng = np.random.default_rng(3)
    X, G = rng.standard_normal((5, 19)), rng.standard_normal((5, 19))
    op = polyc.define("""def f(double(N, D) X, double(N, D) G) -> (T) {
      r(n) +=! X(n, d) * G(n, d)
      T(n) +=! G(n, d) - r(n) * X(n, d)
    }""")
    r = (X * G).sum(axis=1)
    np.testing.assert_allclose(op(X, G), (G - r[:, None] * X).sum(axis=1), rtol=1e-12)


def test_factors_of_output_indices_leave_in_source_order():
    source = ("def f(float alpha, float(M, K) A, float(K, N) B, float(M) s) -> (C) "
              "{ C(m, n) +=! s(m) * A(m, k) * alpha * B(k, n) }")
    assert _statements(source) == [
        "  C(m, n) +=! A(m, k) * B(k, n) where m in 0:M, n in 0:N, k in 0:K",
        "  C(m, n) = s(m) * alpha * C(m, n) where m in 0:M, n in 0:N"]


def test_a_negation_leaves_with_the_invariant_factors():
    """``-x`` is ``-1 * x``: the adjoint of a mean subtracted inside a sum is spelled so
    (``d_mu(n) +=! -(d_Y(n, d) * gamma(d) * rstd(n))``)."""
    source = ("def f(float(N, D) d_Y, float(D) gamma, float(N) rstd) -> (d_mu) "
              "{ d_mu(n) +=! -(d_Y(n, d) * gamma(d) * rstd(n)) }")
    assert _statements(source) == [
        "  d_mu(n) +=! d_Y(n, d) * gamma(d) where n in 0:N, d in 0:D",
        "  d_mu(n) = -(rstd(n) * d_mu(n)) where n in 0:N"]
    twice = source.replace("-(d_Y(n, d) * gamma(d)", "-(-d_Y(n, d) * gamma(d)")
    assert _statements(twice)[1] == "  d_mu(n) = rstd(n) * d_mu(n) where n in 0:N"


NOT_HOISTED = [
    "C(m, n) +=! A(m, k) * B(k, n)",                  # nothing invariant
    "C(m, n) max=! alpha * A(m, k) * B(k, n)",        # not a sum
    "C(m, n) +=! (alpha + A(m, k)) * B(k, n)",        # no product at the top
    "C(m, n) +=! k * A(m, k) * B(k, n)",              # an index as a factor: int64
    "C(m, n) +=! A(m, ix(n)) * B(k, n) * s(ix(m))",   # a gather stays where it was
    "C(m, n) +=! d * A(m, k) * B(k, n)",              # float64 factor, float32 sum
    "C(m, n) +=! -(A(m, k) * B(k, n))",               # a sign alone stays
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
    "-(alpha * A(m, k)) * B(k, n)": lambda a, s, A, B: -a * (A @ B),
    "-(s(m) * -A(m, k)) * B(k, n)": lambda a, s, A, B: s[:, None] * (A @ B),
}


@pytest.mark.needs_cc
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


@pytest.mark.needs_cc
def test_integer_sums_scale_exactly():
    op = polyc.define("def f(int32 c, int32(M, K) A, int32(K, N) B) -> (C) "
                      "{ C(m, n) +=! c * A(m, k) * B(k, n) }")
    assert "C(m, n) = c * C(m, n)" in str(op.compilation().op)
    rng = np.random.default_rng(3)
    A = rng.integers(-50, 50, (9, 13)).astype(np.int32)
    B = rng.integers(-50, 50, (13, 11)).astype(np.int32)
    np.testing.assert_array_equal(op(7, A, B), 7 * (A.astype(np.int64) @ B))


MOMENTS = """def moments(float(N, D) X) -> (mean, var) {
  mean(n) +=! X(n, d) / D
  var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) / D
}"""


def test_a_divisor_divides_the_finished_sum():
    # The natural spelling of a mean and a variance: one division per row, not per term.
    assert _statements(MOMENTS) == [
        "  mean(n) +=! X(n, d) where n in 0:N, d in 0:D",
        "  mean(n) = mean(n) / D where n in 0:N",
        "  var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) where n in 0:N, d in 0:D",
        "  var(n) = var(n) / D where n in 0:N"]
    source = "def f(float a, float(N, D) X) -> (m) { m(n) +=! a * X(n, d) / D / a }"
    assert _statements(source)[1] == "  m(n) = a * m(n) / D / a where n in 0:N"


def test_a_reciprocal_factor_leaves_no_factor_one_behind():
    # X * (1.0 / D) is X * 1.0 / D to the rewrite: the 1.0 scales nothing, so the
    # scaling is the plain spelling's
    source = "def f(float(N, D) X) -> (m) { m(n) +=! X(n, d) * (1.0 / D) }"
    assert _statements(source) == [
        "  m(n) +=! X(n, d) where n in 0:N, d in 0:D",
        "  m(n) = m(n) / D where n in 0:N"]
    alone = "def f(float(N, D) X) -> (m) { m(n) +=! 1.0 * X(n, d) }"
    assert hoist_invariant_factors(frontend(alone)) == frontend(alone)


DIVISOR_KEPT = [
    "C(m) +=! A(m, k) / (k + 1)",       # the divisor changes with the reduction index
    "C(m) +=! A(m, k) / s(ix(m))",      # a gather stays where it was
    "C(m) +=! A(m, k) / d",             # a float64 quotient in a float32 sum
    "C(m) +=! alpha / A(m, k)",         # the dividend is invariant: nothing varies to sum
    "C(m) +=! alpha * A(m, k) / (k + 1)",  # one divisor varies: the term stays whole
]


@pytest.mark.parametrize("body", DIVISOR_KEPT)
def test_what_divisions_stay_in_the_sum(body):
    source = (f"def f(float alpha, double d, float(M, K) A, float(M) s, int64(M) ix) -> "
              f"(float C) {{ {body} }}")
    op = frontend(source)
    assert hoist_invariant_factors(op) == op


def test_integer_sums_keep_their_divisions():
    # Integer division does not distribute: (7 / 2) + (7 / 2) is not (7 + 7) / 2.
    op = frontend("def f(int32(M, K) A) -> (C) { C(m) +=! A(m, k) / K }")
    assert hoist_invariant_factors(op) == op


@pytest.mark.needs_cc
@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 9), d=st.integers(1, 300), canonicalize=st.booleans(),
       fusion=st.sampled_from(["default", "min"]))
def test_moments_and_layer_norm_spelled_naturally_match_numpy(n, d, canonicalize, fusion):
    rng = np.random.default_rng(n * 1000 + d)
    X = (rng.standard_normal((n, d)) + 3).astype(np.float32)
    X64 = X.astype(np.float64)
    op = polyc.define(MOMENTS, canonicalize=canonicalize, fusion=fusion)
    mean, var = op(X)
    np.testing.assert_allclose(mean, X64.mean(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var, X64.var(axis=1), rtol=1e-4, atol=1e-5)
    layernorm = polyc.define("""def ln(float(N, D) X, float(D) g, float(D) b) -> (Y) {
      mu(n) +=! X(n, d) / D
      var(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n)) / D
      Y(n, d) = (X(n, d) - mu(n)) / sqrt(var(n) + 1e-5) * g(d) + b(d)
    }""", canonicalize=canonicalize, fusion=fusion)
    g, b = rng.standard_normal(d).astype(np.float32), rng.standard_normal(d).astype(np.float32)
    centred = X64 - X64.mean(axis=1, keepdims=True)
    want = centred / np.sqrt(X64.var(axis=1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(layernorm(X, g, b), want, rtol=1e-4, atol=1e-3)


def test_explain_shows_the_rewrite_and_it_can_be_switched_off():
    ir_section = polyc.define(MOMENTS).explain((4, 5)).section("ir")
    assert "S0: mean(n) +=! X(n, d) / D" in ir_section
    assert "  → mean(n) +=! X(n, d) where" in ir_section
    assert "mean(n) = mean(n) * (1.0 / D) where n in 0:N" in ir_section
    kept = polyc.define(MOMENTS, canonicalize=False)
    assert "mean(n) +=! X(n, d) / D" in str(kept.compilation().op)
    assert "rewritten" not in kept.explain((4, 5)).section("ir")
