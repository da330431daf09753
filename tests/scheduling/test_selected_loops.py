"""Loops over an index the data selects run one iteration: a gather's adjoint is a
scatter-add (polyc.lang.selections, polyc.scheduling.selected_loops,
polyc.codegen.selected_iteration)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend
from polyc.lang.printer import expr_to_tc
from polyc.lang.selections import selected_indices

pytestmark = pytest.mark.needs_cc

EMBEDDING = """def embedding(double(V, D) E, int64(B, L) I) -> (O) {
  O(b, d) +=! E(I(b, l), d)
}"""


def selected(source: str) -> dict[str, str]:
    statement = frontend(source).statements[-1]
    return {index: expr_to_tc(value) for index, value in selected_indices(statement).items()}


@pytest.mark.parametrize("source, expected", [
    ("def f(int64(B) I) -> (H) { H(v) +=! v == I(b) ? 1.0 : 0.0 where v in 0:9 }",
     {"v": "I(b)"}),
    ("def f(int64(B) I) -> (H) { H(v) +=! I(b) + 1 == v ? 2.0 : 0.0 where v in 0:9 }",
     {"v": "I(b) + 1"}),
    ("def f(int64(B) I, int64(B) J) -> (H) {"
     " H(u, v) +=! u == I(b) && v == J(b) ? 1.0 : 0.0 where u in 0:9, v in 0:9 }",
     {"u": "I(b)", "v": "J(b)"}),
    ("def f(int64(B) I, float(B) X) -> (H) {"
     " H(v) *=! v == I(b) ? X(b) : 1.0 where v in 0:9 }", {"v": "I(b)"}),
])
def test_a_reduction_whose_terms_vanish_off_one_value_selects_its_index(source, expected):
    assert selected(source) == expected


@pytest.mark.parametrize("source", [
    # not the identity off the selected value
    "def f(int64(B) I) -> (H) { H(v) +=! v == I(b) ? 1.0 : 2.0 where v in 0:9 }",
    # not a reduction: every v is written
    "def f(int64(N) I) -> (H) { H(v, n) = v == I(n) ? 1.0 : 0.0 where v in 0:9 }",
    # max has no literal identity
    "def f(int64(B) I) -> (H) { H(v) max=! v == I(b) ? 1.0 : 0.0 where v in 0:9 }",
    # the value reads what the statement writes
    "def f(float(B) X) -> (H) { H(v) = 1.0 where v in 0:9"
    " H(v) += v == int64(H(0)) ? X(b) : 0.0 where v in 0:9 }",
    # a float value
    "def f(float(B) X) -> (H) { H(v) +=! v == X(b) ? 1.0 : 0.0 where v in 0:9 }",
    # a gather that C evaluates only where the data condition before it holds
    "def f(int64(B) I, int64(B) J) -> (H) {"
    " H(v) +=! I(b) >= 0 && v == J(I(b)) ? 1.0 : 0.0 where v in 0:9 }",
])
def test_other_reductions_select_nothing(source):
    assert selected(source) == {}


def scattered(shape, indices, cotangent):
    expected = np.zeros(shape)
    np.add.at(expected, indices, cotangent)
    return expected


@pytest.mark.parametrize("v, d, b, l", [(1, 1, 1, 1), (7, 3, 2, 2), (200, 70, 9, 13),
                                        (130, 5, 40, 3)])
def test_the_gather_adjoint_is_one_pass_over_the_lookups(v, d, b, l):
    rng = np.random.default_rng(v + d + b + l)
    E, I = rng.standard_normal((v, d)), rng.integers(0, v, size=(b, l))
    I[0, :] = I[-1, -1]  # repeated rows
    d_O = rng.standard_normal((b, d))
    grad = polyc.grad(polyc.define(EMBEDDING))
    compilation = grad.compilation()
    assert "// selected" in compilation.ast_text
    assert "polyc_selected" in compilation.c_source.text
    np.testing.assert_allclose(grad(E, I, d_O), scattered(E.shape, I.reshape(-1),
                                                          np.repeat(d_O, l, axis=0)),
                               rtol=1e-12, atol=1e-12)


def test_two_gathered_dimensions_are_both_selected():
    source = """def pick(double(U, W, D) T, int32(B) I, int32(B) J) -> (O) {
      O(b, d) = T(I(b), J(b), d)
    }"""
    grad = polyc.grad(polyc.define(source))
    assert grad.compilation().ast_text.count("// selected") == 2
    rng = np.random.default_rng(3)
    T = rng.standard_normal((40, 50, 3))
    I, J = rng.integers(0, 40, 300).astype(np.int32), rng.integers(0, 50, 300).astype(np.int32)
    d_O = rng.standard_normal((300, 3))
    np.testing.assert_allclose(grad(T, I, J, d_O), scattered(T.shape, (I, J), d_O),
                               rtol=1e-12, atol=1e-12)


def test_an_index_outside_the_tensor_adds_nothing_as_the_loop_did():
    # The adjoint operator itself does not check indices (the forward gather does):
    # a value outside the rows runs no iteration, as the loop over the rows ran none.
    grad = polyc.grad(polyc.define(EMBEDDING))
    I = np.array([[0, -1, 5, 2], [70, 2, 1, 64]])
    d_O = np.arange(6.0).reshape(2, 3)
    kept = (I >= 0) & (I < 65)
    expected = scattered((65, 3), I[kept], np.repeat(d_O, 4, axis=0)[kept.reshape(-1)])
    np.testing.assert_array_equal(grad(np.zeros((65, 3)), I, d_O), expected)


def test_a_user_histogram_counts_repeated_and_ignores_outside_values():
    # b becomes a vector loop of its own, so the loop over v stays: the same counts.
    histogram = polyc.define("""def histogram(int64(B) I) -> (H) {
      H(v) +=! v == I(b) ? 1.0 : 0.0 where v in 0:50
    }""")
    I = np.random.default_rng(0).integers(-5, 55, 1000)
    inside = I[(I >= 0) & (I < 50)]
    np.testing.assert_array_equal(histogram(I), np.bincount(inside, minlength=50))


@settings(max_examples=15, deadline=None)
@given(v=st.integers(1, 150), d=st.integers(1, 40), b=st.integers(1, 20),
       l=st.integers(1, 20), seed=st.integers(0, 2**16))
def test_scatter_adds_agree_with_numpy(v, d, b, l, seed):
    rng = np.random.default_rng(seed)
    I = rng.integers(0, v, size=(b, l))
    d_O = rng.standard_normal((b, d))
    grad = polyc.grad(polyc.define(EMBEDDING))
    np.testing.assert_allclose(grad(np.zeros((v, d)), I, d_O),
                               scattered((v, d), I.reshape(-1), np.repeat(d_O, l, axis=0)),
                               rtol=1e-12, atol=1e-12)
