"""polyc.grad_with_residuals: a forward that keeps the reductions its backward reads, and a
backward that takes them with the outputs it reads, against polyc.grad (which recomputes
them) in float64."""
import numpy as np
import pytest

import polyc

pytestmark = pytest.mark.needs_cc

LAYERS = {
    # the product before bias and relu: the mask's value
    "mlp": ("""def mlp(double(M, K) X, double(K, N) W, double(N) b) -> (Y) {
      Y(m, n) +=! X(m, k) * W(k, n)
      Y(m, n) = fmax(Y(m, n) + b(n), 0.0)
    }""", [(5, 7), (7, 3), (3,)], ["Y_0"], []),
    # the mean's sum and the sum of squares; rstd and the mean are recomputed from them
    "layernorm": ("""def layernorm(double(N, D) X, double(D) g, double(D) b) -> (Y) {
      mu(n) +=! X(n, d)
      mu(n) = mu(n) / D
      ss(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n))
      Y(n, d) = (X(n, d) - mu(n)) * rsqrt(ss(n) / D + 1e-5) * g(d) + b(d)
    }""", [(4, 9), (9,), (9,)], ["mu", "ss"], []),
    # the output holds exp(X - m) / s: the backward reads it, and the sum, not X and m
    "softmax": ("""def softmax(double(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      s(n) +=! exp(X(n, d) - m(n))
      Y(n, d) = exp(X(n, d) - m(n)) / s(n)
    }""", [(3, 8)], ["s"], ["Y"]),
    # the same through a temporary, whose exp the backward reads as Y * s
    "softmax_e": ("""def softmax_e(double(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      e(n, d) = exp(X(n, d) - m(n))
      s(n) +=! e(n, d)
      Y(n, d) = e(n, d) / s(n)
    }""", [(3, 8)], ["s"], ["Y"]),
    # normalised in place: the exp is an earlier version of Y, read back from the last
    "softmax_in_place": ("""def softmax_in_place(double(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      Y(n, d) = exp(X(n, d) - m(n))
      s(n) +=! Y(n, d)
      Y(n, d) = Y(n, d) / s(n)
    }""", [(3, 8)], ["s"], ["Y"]),
    # a quotient whose numerator is cheap to recompute: X is read, not Y
    "normalized": ("""def normalized(double(N, D) X) -> (Y) {
      s(n) +=! X(n, d) * X(n, d)
      Y(n, d) = X(n, d) / sqrt(s(n))
    }""", [(3, 8)], ["s"], []),
    # an earlier version of an output is kept under a name of its own
    "norm": ("""def norm(double(N) X) -> (r) {
      r +=! X(n) * X(n)
      r = sqrt(r)
    }""", [(6,)], ["r_0"], []),
    # an output the backward reads is taken, not recomputed
    "scaled": ("""def scaled(double(N, D) X) -> (s, Y) {
      s(n) +=! X(n, d)
      Y(n, d) = X(n, d) * s(n)
    }""", [(3, 4)], [], ["s"]),
    # nothing to keep: the residuals are none
    "matmul": ("""def matmul(double(M, K) A, double(K, N) B) -> (C) {
      C(m, n) +=! A(m, k) * B(k, n)
    }""", [(4, 5), (5, 3)], [], []),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_the_backward_from_residuals_equals_the_recomputing_one(name):
    source, shapes, residuals, taken = LAYERS[name]
    op = polyc.define(source)
    pair = polyc.grad_with_residuals(op)
    forward, backward = pair
    assert [t.name for t in forward.ir.outputs[len(op.ir.outputs):]] == residuals
    saved = backward.ir.inputs[len(op.ir.inputs) + len(op.ir.outputs):]
    assert [t.name for t in saved] == taken + residuals
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal(shape) for shape in shapes]
    outputs = op(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    kept = forward(*inputs)
    kept = kept if isinstance(kept, tuple) else (kept,)
    for ours, theirs in zip(kept, outputs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-13)
    cotangents = [rng.standard_normal(np.shape(o)) for o in outputs]
    expected = polyc.grad(op)(*inputs, *cotangents)
    by_name = dict(zip([t.name for t in forward.ir.outputs], kept))
    picked = pair.saved(kept if len(kept) > 1 else kept[0])
    assert [id(v) for v in picked] == [id(by_name[t.name]) for t in saved]
    got = backward(*inputs, *cotangents, *picked)
    for ours, theirs in zip(got if isinstance(got, tuple) else (got,),
                            expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_the_mlp_backward_from_residuals_has_no_product_left():
    forward, backward = polyc.grad_with_residuals(polyc.define(LAYERS["mlp"][0]))
    assert "X(m, k) * W(k, n)" in str(forward)
    assert "X(m, k) * W(k, n)" not in str(backward)
    assert "X(m, k) * W(k, n)" in str(polyc.grad(polyc.define(LAYERS["mlp"][0])))


def test_wrt_and_the_same_pair_for_the_same_operator():
    op = polyc.define(LAYERS["layernorm"][0])
    pair = polyc.grad_with_residuals(op, wrt="g")
    assert pair is polyc.grad_with_residuals(op, wrt=("g",))
    assert [t.name for t in pair[1].ir.outputs] == ["d_g"]
    with pytest.raises(TypeError, match="takes a polyc operator"):
        polyc.grad_with_residuals(lambda x: x)


def test_saved_needs_every_result_of_the_forward():
    pair = polyc.grad_with_residuals(polyc.define(LAYERS["softmax"][0]))
    Y, s = pair.forward(np.ones((2, 3)))
    assert [v is w for v, w in zip(pair.saved((Y, s)), (Y, s))] == [True, True]
    with pytest.raises(polyc.ArgumentError, match=r"returns 2 results \(Y, s\); got 1"):
        pair.saved(Y)


def test_the_softmax_backward_reads_its_output_and_calls_no_exp():
    for name in ("softmax", "softmax_e", "softmax_in_place"):
        _, backward = polyc.grad_with_residuals(polyc.define(LAYERS[name][0]))
        read = set().union(*(s.tensors_read for s in backward.ir.statements))
        assert "exp(" not in str(backward) and "X" not in read and "Y" in read, str(backward)
