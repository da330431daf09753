"""Values the outputs are invariant to (softmax's row maximum) are constants of the
backward: proven by polyc.autodiff.activity, checked here on what it proves and
refuses, and on the gradients against finite differences."""
import numpy as np
import pytest

import polyc
from corpus import CORPUS, CORPUS_BY_NAME
from gradcheck import check_grad, f32
from polyc.autodiff.adjoint import ReverseSweep

SOFTMAX = CORPUS_BY_NAME["softmax"].source


def constants(source: str) -> frozenset[str]:
    return ReverseSweep(polyc.define(source).ir, None).constants


def test_corpus_constants_are_the_maxima_that_keep_exp_in_range():
    found = {}
    for op in CORPUS:
        forward = polyc.define(op.source, op.def_name).ir
        if any(t.type.is_float for t in forward.inputs):
            found[op.name] = ReverseSweep(forward, None).constants
    assert {name: c for name, c in found.items() if c} == {
        name: {"mx"} for name in ("softmax", "log_softmax", "attention", "cross_entropy")}


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _log_sum_exp(x):
    m = x.max(axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))


# ---------------------------------------------------------------- what is proven


@pytest.mark.parametrize("source", [
    # log-sum-exp: m + log(s)
    """def lse(float(N, D) X) -> (L) {
      m(n) max=! X(n, d)
      s(n) +=! exp(X(n, d) - m(n))
      L(n) = m(n) + log(s(n))
    }""",
    # any shift does, not only the maximum; a square root and a power of the sum too
    """def f(float(N, D) X) -> (Y) {
      mu(n) +=! X(n, d) / D
      e(n, d) = exp(X(n, d) - mu(n))
      s(n) +=! e(n, d) * e(n, d)
      Y(n, d) = e(n, d) * rsqrt(s(n)) + pow(e(n, d), 3.0) / (s(n) * sqrt(s(n)))
    }""",
])
def test_a_shift_the_outputs_do_not_see_is_a_constant(source):
    assert len(constants(source)) == 1


@pytest.mark.parametrize("source", [
    # the shift reaches the output
    "def f(float(N, D) X) -> (Y) { m(n) max=! X(n, d)  Y(n, d) = X(n, d) - m(n) }",
    # the maximum is an output itself
    """def f(float(N, D) X) -> (Y, m) {
      m(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - m(n))
      s(n) +=! e(n, d)
      Y(n, d) = e(n, d) / s(n)
    }""",
    # one added to the sum does not scale with it
    """def f(float(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - m(n))
      s(n) +=! e(n, d)
      Y(n, d) = e(n, d) / (s(n) + 1.0)
    }""",
    # a sum of squares scales twice
    """def f(float(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - m(n))
      s(n) +=! e(n, d) * e(n, d)
      Y(n, d) = e(n, d) / s(n)
    }""",
    # a sum over the rows adds terms that change by different shifts
    """def f(float(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - m(n))
      s +=! e(n, d)
      Y(n, d) = e(n, d) / s
    }""",
    # another row's shift
    """def f(float(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - m(n))
      s(n) +=! e(n, d)
      Y(n, d) = e(n, d) / s(N - 1 - n)
    }""",
    # a shift times a value
    """def f(float(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      Y(n, d) = exp(2.0 * (X(n, d) - m(n))) / exp(X(n, d) - m(n))
    }""",
])
def test_a_shift_the_outputs_see_is_differentiated(source):
    assert constants(source) == frozenset()


# ---------------------------------------------------------------- the backward


def test_the_softmax_backward_has_no_term_of_the_maximum():
    text = str(polyc.grad(polyc.define(SOFTMAX)))
    assert "  mx(n) max=! X(n, c)" in text  # still computed: e reads it
    assert "d_mx" not in text and "ties" not in text and "==" not in text


@pytest.mark.needs_cc
@pytest.mark.parametrize("source, reference", [
    (SOFTMAX, _softmax),
    ("""def lse(float(N, D) X) -> (L) {
      m(n) max=! X(n, d)
      s(n) +=! exp(X(n, d) - m(n))
      L(n) = m(n) + log(s(n))
    }""", _log_sum_exp),
    ("""def f(float(N, D) X) -> (Y) {
      mu(n) +=! X(n, d) / D
      e(n, d) = exp(X(n, d) - mu(n))
      s(n) +=! e(n, d)
      Y(n, d) = e(n, d) / s(n)
    }""", _softmax),
])
def test_gradients_without_the_shift_match_finite_differences(source, reference):
    rng = np.random.default_rng(31)
    check_grad(polyc.define(source), (f32(rng, 4, 7),), reference)


@pytest.mark.needs_cc
def test_rows_with_ties_at_the_maximum():
    x = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, 2.0, 2.0, 2.0]], np.float32)
    check_grad(polyc.define(SOFTMAX), (x,), _softmax)
