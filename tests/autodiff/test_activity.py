"""Values the outputs are invariant to (softmax's row maximum) are constants of the
backward: proven by polyc.autodiff.activity, checked here on what it proves and
refuses, and on the gradients against finite differences."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

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


# ---------------------------------------------------------------- soundness, at random

# Values over (n, d) and over rows (n), each as TC text and as a numpy function of the
# inputs X (N, D), P (N) and the row tensors defined before; ``m = max(X) + P`` is the
# perturbed value: wherever the proof calls it a constant, the output must not change
# with P.
_LEAVES = (
    ("X(n, d)", lambda v: v["X"]),
    ("m(n)", lambda v: v["m"][:, None]),
    ("exp(X(n, d) - m(n))", lambda v: np.exp(v["X"] - v["m"][:, None])),
    ("0.5", lambda v: 0.5),
)
_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}
_UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "-": np.negative}


@st.composite
def _elements(draw, rows: tuple[str, ...], depth: int = 2):
    """An expression over (n, d): (TC, numpy function of the values)."""
    choices = len(_LEAVES) + len(rows)
    if depth == 0 or draw(st.booleans()):
        k = draw(st.integers(0, choices - 1))
        if k < len(_LEAVES):
            return _LEAVES[k]
        row = rows[k - len(_LEAVES)]
        return f"{row}(n)", lambda v, row=row: v[row][:, None]
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(_UNARY)))
        text, f = draw(_elements(rows, depth - 1))
        spelled = f"-({text})" if name == "-" else f"{name}({text})"
        return spelled, lambda v, g=_UNARY[name], f=f: g(f(v))
    op = draw(st.sampled_from(sorted(_BINARY) + ["fmax", "?"]))
    (a, fa), (b, fb) = draw(_elements(rows, depth - 1)), draw(_elements(rows, depth - 1))
    if op == "fmax":
        return f"fmax({a}, {b})", lambda v, fa=fa, fb=fb: np.fmax(fa(v), fb(v))
    if op == "?":  # the greater of the two, as a ternary
        return (f"({a}) > ({b}) ? ({a}) : ({b})",
                lambda v, fa=fa, fb=fb: np.where(fa(v) > fb(v), fa(v), fb(v)))
    return f"({a}) {op} ({b})", lambda v, g=_BINARY[op], fa=fa, fb=fb: g(fa(v), fb(v))


@st.composite
def _shifted_programs(draw):
    lines = ["m(n) = mx(n) + P(n)"]
    rows: tuple[str, ...] = ()
    steps = []
    for k in range(draw(st.integers(0, 2))):
        reduce = draw(st.sampled_from(["+", "max"]))
        text, f = draw(_elements(rows))
        name = f"s{k}"
        assume("d)" in text)  # a reduction over d
        lines.append(f"{name}(n) {reduce}=! {text}")
        steps.append((name, reduce, f))
        rows += (name,)
    text, f = draw(_elements(rows))
    assume("d)" in text)  # the output's d is read
    lines.append(f"Y(n, d) = {text}")
    source = ("def f(double(N, D) X, double(N) P) -> (Y) {\n  mx(n) max=! X(n, d)\n"
              + "".join(f"  {line}\n" for line in lines) + "}")

    def evaluate(x, p):
        values = {"X": x, "m": x.max(axis=1) + p}
        for name, reduce, g in steps:
            terms = np.broadcast_to(g(values), x.shape)
            values[name] = terms.sum(axis=1) if reduce == "+" else terms.max(axis=1)
        return np.broadcast_to(f(values), x.shape)
    return source, evaluate


@settings(max_examples=80, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_shifted_programs(), st.integers(0, 2**16))
def test_a_value_proven_constant_does_not_change_the_outputs(program, seed):
    source, evaluate = program
    proven = "m" in constants(source)
    event("m proven constant" if proven else "m differentiated")
    if not proven:
        return
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (3, 5))
    with np.errstate(all="ignore"):
        before, after = evaluate(x, np.zeros(3)), evaluate(x, rng.uniform(-1, 1, 3))
    np.testing.assert_allclose(after, before, rtol=1e-8, atol=1e-10, equal_nan=True,
                               err_msg=source)


def test_the_random_programs_reach_the_proof():
    """The generator's softmax-like programs are proven (so the test above checks
    claims, not only refusals)."""
    source = """def f(double(N, D) X, double(N) P) -> (Y) {
      mx(n) max=! X(n, d)
      m(n) = mx(n) + P(n)
      s0(n) +=! exp(X(n, d) - m(n))
      Y(n, d) = (exp(X(n, d) - m(n))) / (s0(n))
    }"""
    assert constants(source) == {"mx", "m"}
