"""polyc.grad: the API, exact adjoints, reductions, and second order."""
import functools

import islpy as isl
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import polyc
from gradcheck import check_grad, f32
from polyc.poly.program import isl_items

MATMUL = "def matmul(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
CONV = """def conv(float(N, C, H, W) I, float(M, C, KH, KW) Wt) -> (O) {
  O(n, m, h, w) +=! I(n, c, h + kh, w + kw) * Wt(m, c, kh, kw)
}"""


@functools.lru_cache(maxsize=None)
def define(source: str, **options) -> polyc.Operator:
    return polyc.define(source, **options)


# ----------------------------------------------------------------- the API


def test_the_backward_operator_is_printed_as_tc():
    assert str(polyc.grad(define(MATMUL))) == (
        "def matmul_grad(float32(M, K) A, float32(K, N) B, float32(M, N) d_C) "
        "-> (float32 d_A, float32 d_B) {\n"
        "  d_A(m, k) +=! d_C(m, n) * B(k, n) where m in 0:M, k in 0:K, n in 0:N\n"
        "  d_B(k, n) +=! d_C(m, n) * A(m, k) where k in 0:K, n in 0:N, m in 0:M\n"
        "}\n")


def test_the_printed_backward_operator_is_the_operator():
    grad = polyc.grad(define(CONV))
    assert polyc.define(str(grad)).ir == grad.ir


def test_borders_of_a_convolution_adjoint_bound_its_rows_and_pad_its_columns():
    # rows: the window index kh bounded, so that no row of zeros is summed; columns (the
    # innermost dimension, where a vector loop runs): a cotangent padded with zeros
    lines = str(polyc.grad(define(CONV))).splitlines()
    assert "float32(N, M, H - KH + 1, W - KW + 1) d_O" in lines[0]
    assert lines[1] == (
        "  d_O_padded(i0, i1, i2, i3) = i3 - (KW - 1) >= 0 && i3 - (KW - 1) < W - KW + 1 ? "
        "d_O(i0, i1, i2, i3 - (KW - 1)) : 0.0 "
        "where i0 in 0:N, i1 in 0:M, i2 in 0:H - KH + 1, i3 in 0:KW + W - 1")
    assert lines[2] == (
        "  d_I(n, c, h, w) +=! d_O_padded(n, m, h - kh, w - kw + (KW - 1)) * Wt(m, c, kh, kw) "
        "where n in 0:N, c in 0:C, h in 0:H, w in 0:W, m in 0:M, "
        "kh in max(0, h + (KH - H)):min(KH, h + 1), kw in 0:KW")


def test_a_channels_last_convolution_adjoint_pads_the_columns_its_register_block_runs_along():
    # NHWC: the vector runs along c, which the cotangent's read lacks; the innermost index
    # it has is w, along which a register block runs: w is padded, h bounded
    text = str(polyc.grad(define(
        "def conv(float(N, H, W, C) I, float(KH, KW, C, M) F) -> (O) {\n"
        "  O(n, h, w, m) +=! I(n, h + kh, w + kw, c) * F(kh, kw, c, m)\n}"), wrt="I"))
    assert "d_O(i0, i1, i2 - (KW - 1), i3)" in text
    assert "d_O_padded(n, h - kh, w - kw + (KW - 1), m)" in text
    assert "kh in max(0, h + (KH - H)):min(KH, h + 1), kw in 0:KW" in text


def _summed_points(op, sizes: dict, tensor: str) -> int:
    """The points of the update of ``tensor`` that has reduction indices, at ``sizes``."""
    program = op.compilation().program
    for part in isl_items(program.domain.get_set_list()):
        stmt = program.statement(part.get_tuple_name())
        if stmt.is_init or stmt.statement.tensor != tensor or \
                not stmt.statement.reduction_indices:
            continue
        for k in range(part.dim(isl.dim_type.param)):
            value = sizes[part.get_dim_name(isl.dim_type.param, k)]
            part = part.fix_val(isl.dim_type.param, k, isl.Val(value))
        return part.count_val().to_python()
    raise AssertionError(f"no summed update of {tensor}")


def test_a_convolution_adjoint_sums_no_row_of_zeros():
    # rows bounded: the data gradient sums the forward's terms, plus the padded columns'
    # zeros (each of the W input columns sums KW terms, the forward's W - KW + 1 output
    # columns as many: W / (W - KW + 1) = 8 / 7 of the forward's points)
    sizes = dict(N=2, C=3, H=9, W=8, M=4, KH=3, KW=2)
    forward = _summed_points(define(CONV), sizes, "O")
    data = _summed_points(polyc.grad(define(CONV), wrt="I"), sizes, "d_I")
    assert forward == 2 * 3 * 4 * 7 * 7 * 3 * 2
    assert data == forward * 8 // 7


def test_a_read_whose_terms_are_one_value_gets_it_doubled():
    # (X - m) * (X - m) sends d_T * (X - m) to each read of X: a + a is 2 * a exactly
    text = str(polyc.grad(define(
        "def sq(float(N, D) X, float(N) m) -> (T) "
        "{ T(n) +=! (X(n, d) - m(n)) * (X(n, d) - m(n)) }")))
    assert "d_X(n, d) = 2.0 * (d_T(n) * (X(n, d) - m(n))) where" in text
    assert "d_m(n) +=! 2.0 * -(d_T(n) * (X(n, d) - m(n))) where" in text


def test_guards_stay_where_padding_would_not_do_their_job():
    # the guard k < N - 1 also keeps X(k + 1) inside X: no padding of the cotangent helps
    text = str(polyc.grad(define("def f(float(N) X) -> (T) { T +=! X(k) * X(k + 1) }")))
    assert "d_X(k) = k < N - 1 ? d_T * X(k + 1) : 0.0 where k in 0:N" in text
    # a stride's guard is a divisibility
    strided = str(polyc.grad(define("def f(float(N) X) -> (T) { T(i) +=! X(2 * i + k) "
                                    "where k in 0:3 }"), wrt="X"))
    assert "(i - k) % 2 == 0" in strided


def test_wrt_picks_inputs_in_the_operators_order():
    grad = polyc.grad(define(MATMUL), wrt=("B",))
    assert [t.name for t in grad.ir.outputs] == ["d_B"]
    assert [t.name for t in grad.ir.inputs] == ["A", "B", "d_C"]


def test_an_operator_without_floating_inputs_has_no_gradient():
    with pytest.raises(polyc.SemanticError, match="no floating-point input"):
        polyc.grad(define("def f(int32(N) X) -> (Y) { Y(i) = X(i) * 2 }"))
    with pytest.raises(polyc.SemanticError, match="wrt names no input"):
        polyc.grad(define(MATMUL), wrt=())


@pytest.mark.parametrize("wrt, message", [
    (("Z",), "`Z` is not an input of `gather`"),
    (("I",), "cannot differentiate with respect to `I`: it is int32"),
])
def test_wrt_names_floating_inputs(wrt, message):
    gather = define("def gather(float(N, D) T, int32(B) I) -> (O) { O(b, d) = T(I(b), d) }")
    with pytest.raises(polyc.SemanticError, match=message):
        polyc.grad(gather, wrt=wrt)


def test_what_polyc_cannot_differentiate_is_a_semantic_error_naming_it():
    with pytest.raises(polyc.SemanticError, match=r"no derivative of `lgamma`"):
        polyc.grad(define("def f(float(N) X) -> (Y) { Y(i) = lgamma(X(i)) }"))
    with pytest.raises(polyc.SemanticError, match=r"reads `Y\(i - 1\)` while it overwrites"):
        polyc.grad(define("def f(float(N) X) -> (Y) { Y(i) = X(i)  "
                          "Y(i) = i >= 1 ? Y(i - 1) : 0.0 where i in 0:N }"))
    with pytest.raises(TypeError, match="polyc operator"):
        polyc.grad(lambda x: x)


# ----------------------------------------------------------------- values


def check(source: str, inputs: tuple, reference, seed: int = 0, forward=None,
          tolerance: float = 1e-3):
    """polyc.grad(op) against central differences of ``reference`` (float64)."""
    return check_grad(forward or define(source), inputs, reference, seed, tolerance)


@pytest.mark.needs_cc
@pytest.mark.parametrize("sizes", [(1, 1, 1), (3, 4, 5), (0, 2, 3)])
def test_matmul(sizes):
    rng = np.random.default_rng(1)
    m, k, n = sizes
    check(MATMUL, (f32(rng, m, k), f32(rng, k, n)), lambda a, b: a @ b)


def _conv_reference(x, w, stride=1, dilation=1):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    ho = (h - dilation * (kh - 1) - 1) // stride + 1
    wo = (wd - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, m, ho, wo))
    for r in range(kh):
        for s in range(kw):
            patch = x[:, :, r * dilation:r * dilation + stride * (ho - 1) + 1:stride,
                      s * dilation:s * dilation + stride * (wo - 1) + 1:stride]
            out += np.einsum("nchw,mc->nmhw", patch, w[:, :, r, s])
    return out


@pytest.mark.needs_cc
def test_convolution_gradients_are_exact_at_the_borders():
    rng = np.random.default_rng(2)
    x, w = f32(rng, 2, 3, 6, 5), f32(rng, 4, 3, 3, 2)
    d_x, d_w = check(CONV, (x, w), _conv_reference)
    # the data gradient is the full correlation: every border element gets its terms
    d_o = rng.standard_normal((2, 4, 4, 4)).astype(np.float32)
    d_x, _ = polyc.grad(define(CONV))(x, w, d_o)
    expected = np.zeros((2, 3, 6, 5))
    for r in range(3):
        for s in range(2):
            expected[:, :, r:r + 4, s:s + 4] += np.einsum("nmhw,mc->nchw", d_o, w[:, :, r, s])
    np.testing.assert_allclose(d_x, expected, rtol=1e-4, atol=1e-4)


AVERAGE_POOL = """
def pool(double(N, C, H, W) I) -> (O) {
  O(n, c, h, w) +=! I(n, c, h + kh, w + kw) / 9.0 where kh in 0:3, kw in 0:3
}"""


@pytest.mark.needs_cc
@pytest.mark.parametrize("optimize", [True, False])
def test_a_float64_pool_gradient_has_float64_precision_in_either_schedule(optimize):
    # its backward multiplies by the literal 1.0 / 9.0, once rounded to float32; and the
    # reference schedule's window sums (rows read in reverse) were vectorized wrongly by
    # GCC 11.3 and 12.2 (GCC PR 110381: a third off) before it kept the vectorizer out
    rng = np.random.default_rng(4)
    x, d_o = rng.standard_normal((2, 3, 7, 5)), rng.standard_normal((2, 3, 5, 3))
    d_x = polyc.grad(polyc.define(AVERAGE_POOL, optimize=optimize))(x, d_o)
    expected = np.zeros_like(x)
    for r in range(3):
        for s in range(3):
            expected[:, :, r:r + 5, s:s + 3] += d_o / 9.0
    np.testing.assert_allclose(d_x, expected, rtol=1e-14, atol=1e-15)


@pytest.mark.needs_cc
def test_a_float64_product_gradient_keeps_its_running_products_in_float64():
    # the backward's temporaries start from literals (`P(i) = 1.0`), which TC had typed
    # float32 when the derived operator was printed and read again
    forward = polyc.define("def row_prod(double(M, N) X) -> (O) { O(i) *=! X(i, j) }")
    backward = polyc.grad(forward)
    assert {t.type.name for t in backward.ir.temporaries} == {"float64"}
    x = np.random.default_rng(5).uniform(0.5, 1.5, (4, 9))
    x[1, 3], x[2, 4:6] = 0.0, 0.0   # one zero and two zeros in a row
    d_o = np.arange(1.0, 5.0)
    expected = np.array([[np.prod(np.delete(row, j)) for j in range(9)] for row in x])
    np.testing.assert_allclose(backward(x, d_o), expected * d_o[:, None], rtol=1e-14)


_AXES = "nhwc"


def _span(flipped: bool, k: int, extent: int, count: int) -> slice:
    """The elements window position ``k`` reads for ``count`` outputs."""
    start = extent - 1 - k if flipped else k
    return slice(start, start + count)


@pytest.mark.needs_cc
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(order=st.permutations(_AXES), flips=st.tuples(st.booleans(), st.booleans()),
       extents=st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 5),
                         st.integers(1, 3)),
       window=st.tuples(st.integers(1, 3), st.integers(1, 3)), seed=st.integers(0, 2**16))
def test_window_adjoints_in_any_layout_are_exact(order, flips, extents, window, seed):
    # a 2-D window over any order of (n, h, w, c), each window read forwards (h + kh) or
    # flipped (h - kh + KH - 1): bounds and padding must give the exact adjoint wherever
    # the innermost index the read has falls
    sizes = dict(zip(_AXES, extents))
    KH, KW = window
    assume(sizes["h"] >= KH and sizes["w"] >= KW)
    spans = {"n": "n", "c": "c",
             "h": "h - kh + KH - 1" if flips[0] else "h + kh",
             "w": "w - kw + KW - 1" if flips[1] else "w + kw"}
    shape = ", ".join(a.upper() for a in order)
    read = ", ".join(spans[a] for a in order)
    source = (f"def f(float64({shape}) X, float64(KH, KW) F) -> (O) {{\n"
              f"  O({', '.join(order)}) +=! X({read}) * F(kh, kw)\n}}")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(tuple(sizes[a] for a in order))
    f = rng.standard_normal((KH, KW))
    out = {"n": sizes["n"], "c": sizes["c"], "h": sizes["h"] - KH + 1, "w": sizes["w"] - KW + 1}
    d_o = rng.standard_normal(tuple(out[a] for a in order))
    d_x, d_f = polyc.grad(define(source))(x, f, d_o)
    expected_x, expected_f = np.zeros_like(x), np.zeros_like(f)
    for kh in range(KH):
        for kw in range(KW):
            at = {"n": slice(None), "c": slice(None),
                  "h": _span(flips[0], kh, KH, out["h"]), "w": _span(flips[1], kw, KW, out["w"])}
            window_of = tuple(at[a] for a in order)
            expected_x[window_of] += f[kh, kw] * d_o
            expected_f[kh, kw] = np.sum(d_o * x[window_of])
    np.testing.assert_allclose(d_x, expected_x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d_f, expected_f, rtol=1e-12, atol=1e-12)


@pytest.mark.needs_cc
def test_strided_and_dilated_convolutions():
    rng = np.random.default_rng(3)
    strided = """def conv(float(N, C, H, W) I, float(M, C, 3, 3) Wt) -> (O) {
      O(n, m, h, w) +=! I(n, c, 2 * h + kh, 2 * w + kw) * Wt(m, c, kh, kw)
    }"""
    check(strided, (f32(rng, 1, 2, 9, 8), f32(rng, 3, 2, 3, 3)),
          lambda x, w: _conv_reference(x, w, stride=2))
    dilated = """def conv(float(N, C, H, W) I, float(M, C, 3, 3) Wt) -> (O) {
      O(n, m, h, w) +=! I(n, c, h + 2 * kh, w + 2 * kw) * Wt(m, c, kh, kw)
    }"""
    check(dilated, (f32(rng, 1, 2, 9, 8), f32(rng, 3, 2, 3, 3)),
          lambda x, w: _conv_reference(x, w, dilation=2))


@pytest.mark.needs_cc
def test_diagonals_transposes_and_broadcasts():
    rng = np.random.default_rng(4)
    check("def f(float(N, N) A, float(N) b) -> (Y) { Y(i, j) = A(i, i) * A(j, i) + b(j) }",
          (f32(rng, 4, 4), f32(rng, 4)),
          lambda a, b: np.diag(a)[:, None] * a.T + b[None, :])
    check("def f(float(N) x) -> (Y) { Y(i, j) = x(i) * x(j) where j in 0:N }",
          (f32(rng, 5),), lambda x: np.outer(x, x))
    check("def f(float(N, M) A) -> (s) { s +=! A(0, j) * A(N - 1, j) }",
          (f32(rng, 3, 4),), lambda a: np.asarray(a[0] @ a[-1]))


@pytest.mark.needs_cc
def test_max_splits_the_cotangent_among_ties():
    op = define("def f(float(N, M) X) -> (m) { m(i) max=! X(i, j) }")
    x = np.array([[1, 3, 3, 2], [5, 5, 5, 5], [0, -1, 2, 1]], np.float32)
    d_m = np.array([6, 4, 1], np.float32)
    (d_x,) = (polyc.grad(op)(x, d_m),)
    np.testing.assert_array_equal(d_x, [[0, 3, 3, 0], [1, 1, 1, 1], [0, 0, 1, 0]])
    mins = define("def f(float(N, M) X) -> (m) { m(i) min=! X(i, j) }")
    np.testing.assert_array_equal(polyc.grad(mins)(x, d_m), [[6, 0, 0, 0], [1, 1, 1, 1],
                                                            [0, 1, 0, 0]])


@pytest.mark.needs_cc
def test_products_with_zero_factors():
    op = define("def f(float(N, M) X) -> (p) { p(i) *=! X(i, j) }")
    x = np.array([[2, 3, 4], [2, 0, 4], [0, 3, 0]], np.float32)
    d_x = polyc.grad(op)(x, np.ones(3, np.float32))
    np.testing.assert_array_equal(d_x, [[12, 8, 6], [0, 8, 0], [0, 0, 0]])
    rng = np.random.default_rng(5)
    check("def f(float(N, M) X) -> (p) { p(i) *=! X(i, j) }", (f32(rng, 3, 4),),
          lambda x: np.prod(x, axis=1))


MLP = """def mlp(float(B, K) X, float(N, K) W, float(N) b) -> (Y) {
  Y(i, n) +=! X(i, k) * W(n, k)
  Y(i, n) = Y(i, n) + b(n)
  Y(i, n) = fmax(Y(i, n), 0.0)
}"""


@pytest.mark.needs_cc
def test_the_chain_rule_runs_through_updated_tensors():
    rng = np.random.default_rng(6)
    check(MLP, (f32(rng, 4, 5), f32(rng, 3, 5), f32(rng, 3)),
          lambda x, w, b: np.maximum(x @ w.T + b, 0))
    # a partial update and an accumulation without `!` keep the other elements' cotangents
    check("""def f(float(N) X, float(N) Z) -> (Y) {
      Y(i) = X(i) * X(i)
      Y(i) = 2.0 * Y(i) + Z(i) where i in 1:N
      Y(i) += Z(i) * X(i)
    }""", (f32(rng, 5), f32(rng, 5)),
        lambda x, z: np.concatenate([x[:1] ** 2, 2 * x[1:] ** 2 + z[1:]]) + z * x)


@pytest.mark.needs_cc
def test_scalars_get_zero_rank_gradients():
    rng = np.random.default_rng(7)
    source = "def f(float(N) X, float alpha) -> (Y) { Y(i) = alpha * exp(X(i)) }"
    d_x, d_alpha = check(source, (f32(rng, 5), 1.5), lambda x, a: a * np.exp(x))
    assert np.shape(d_alpha) == ()


SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  m(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - m(n))
  s(n) +=! e(n, d)
  Y(n, d) = e(n, d) / s(n)
}"""
LAYERNORM = """def layernorm(float(N, D) X, float(D) g, float(D) b) -> (Y) {
  mu(n) +=! X(n, d) / D
  var(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n)) / D
  Y(n, d) = (X(n, d) - mu(n)) * rsqrt(var(n) + 1e-5) * g(d) + b(d)
}"""


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(x, g, b):
    mu = x.mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5) * g + b


@pytest.mark.needs_cc
def test_second_order():
    """grad(grad(op)): the derivative of <grad(x, w), u> with respect to x."""
    rng = np.random.default_rng(8)
    for source, inputs in ((SOFTMAX, (f32(rng, 3, 4),)),
                           (LAYERNORM, (f32(rng, 3, 5), f32(rng, 5), f32(rng, 5))),
                           ("def f(float(N) X) -> (Y) { Y(i) = tanh(X(i)) * X(i) }",
                            (f32(rng, 6),))):
        forward = define(source, )
        first = polyc.grad(forward)
        outputs = forward(*inputs)
        cotangent = rng.standard_normal(outputs.shape).astype(np.float32)

        def first_order(*xs, first=first, cotangent=cotangent):
            return first(*(np.asarray(x, np.float64) for x in xs),
                         cotangent.astype(np.float64))

        # float64 versions for the finite differences of the first derivative
        forward64 = polyc.define(source.replace("float(", "double(").replace(
            "float ", "double "))
        first64 = polyc.grad(forward64)
        check(str(first64), tuple(np.asarray(x, np.float64) for x in inputs) +
              (cotangent.astype(np.float64),),
              lambda *xs, g=first64: tuple(np.asarray(r, np.float64) for r in
                                           (g(*xs) if isinstance(g(*xs), tuple) else (g(*xs),))),
              forward=first64, tolerance=1e-5)


@polyc.op
def _scaled_rows(X: polyc.f32["N", "D"], w: polyc.f32["D"]):
    Y[n, d] = X[n, d] * w[d] * polyc.exp(X[n, d])  # noqa: F821 (read with ast)
    return Y  # noqa: F821


@pytest.mark.needs_cc
def test_python_form_operators_differentiate_alike():
    rng = np.random.default_rng(9)
    check("", (f32(rng, 3, 4), f32(rng, 4)), lambda x, w: x * w * np.exp(x),
          forward=_scaled_rows)
    assert polyc.grad(_scaled_rows).ir == polyc.grad(define(
        "def _scaled_rows(float(N, D) X, float(D) w) -> (Y) "
        "{ Y(n, d) = X(n, d) * w(d) * exp(X(n, d)) }")).ir


def test_the_backward_operator_is_derived_once_per_operator():
    forward = polyc.define(MATMUL)
    assert polyc.grad(forward) is polyc.grad(forward)
    assert polyc.grad(forward, wrt="B") is polyc.grad(forward, wrt=("B",))
    assert polyc.grad(forward, wrt="B") is not polyc.grad(forward)


@pytest.mark.needs_cc
def test_a_read_whose_dimensions_share_indices():
    # A(i + j, i): dimension 0 solves i, dimension 1 then solves j through it
    rng = np.random.default_rng(10)

    def reference(a):
        n, m = a.shape
        return np.array([[a[i + j, i] for j in range(n - m + 1)] for i in range(m)])

    check("def f(float(N, M) A) -> (S) { S(i, j) = A(i + j, i) where i in 0:M, "
          "j in 0:N - M + 1 }", (f32(rng, 6, 3),), reference)


@pytest.mark.needs_cc
@pytest.mark.parametrize("op, reference", [
    ("max", lambda a, x: np.maximum(a, x.max(axis=1))),
    ("*", lambda a, x: a * x.prod(axis=1)),
])
def test_an_accumulation_onto_an_earlier_value(op, reference):
    """``m(i) = A(i)`` then ``m(i) max= X(i, j)``: the earlier value is one more term; the
    helpers (tie count, nonzero product and zero count) are made once for both shares."""
    source = f"def f(float(N) A, float(N, M) X) -> (m) {{ m(i) = A(i)  m(i) {op}= X(i, j) }}"
    rng = np.random.default_rng(12)
    check(source, (f32(rng, 4), f32(rng, 4, 3)), reference)
    text = str(polyc.grad(define(source)))
    assert "ties_1" not in text and "nonzero_product_1" not in text and "zeros_1" not in text
