"""polyc.grad against torch.autograd, where torch is installed (causal attention: a
triangle, whose adjoints are triangles too)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import polyc

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from triangular import KERNELS  # noqa: E402

CAUSAL_ATTENTION = KERNELS["causal_attention"][0]

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.needs_cc

LAYERS = {
    "softmax": ("""def softmax(float(N, D) X) -> (Y) {
      m(n) max=! X(n, d)
      s(n) +=! exp(X(n, d) - m(n))
      Y(n, d) = exp(X(n, d) - m(n)) / s(n)
    }""", lambda x: torch.softmax(x, dim=1), [(5, 7)]),
    "layernorm": ("""def layernorm(float(N, D) X, float(D) g, float(D) b) -> (Y) {
      mu(n) +=! X(n, d) / D
      var(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n)) / D
      Y(n, d) = (X(n, d) - mu(n)) * rsqrt(var(n) + 1e-5) * g(d) + b(d)
    }""", lambda x, g, b: torch.nn.functional.layer_norm(x, (x.shape[1],), g, b, 1e-5),
        [(4, 6), (6,), (6,)]),
    "conv2d": ("""def conv2d(float(N, C, H, W) I, float(M, C, KH, KW) Wt, float(M) B) -> (O) {
      O(n, m, h, w) +=! I(n, c, h + kh, w + kw) * Wt(m, c, kh, kw)
      O(n, m, h, w) = O(n, m, h, w) + B(m)
    }""", lambda x, w, b: torch.nn.functional.conv2d(x, w, b),
        [(2, 3, 7, 6), (4, 3, 3, 2), (4,)]),
    "strided_conv": ("""def conv(float(N, C, H, W) I, float(M, C, KH, KW) Wt) -> (O) {
      O(n, m, h, w) +=! I(n, c, 2 * h + kh, 2 * w + kw) * Wt(m, c, kh, kw)
    }""", lambda x, w: torch.nn.functional.conv2d(x, w, stride=2),
        [(1, 2, 9, 8), (3, 2, 3, 3)]),
    "mlp": ("""def mlp(float(B, K) X, float(N, K) W, float(N) b) -> (Y) {
      Y(i, n) +=! X(i, k) * W(n, k)
      Y(i, n) = tanh(Y(i, n) + b(n))
    }""", lambda x, w, b: torch.tanh(x @ w.T + b), [(4, 5), (3, 5), (3,)]),
    "maxpool": ("""def maxpool(float(N, C, H, W) X) -> (Y) {
      Y(n, c, h, w) max=! X(n, c, 2 * h + r, 2 * w + s) where r in 0:2, s in 0:2
    }""", lambda x: torch.nn.functional.max_pool2d(x, 2), [(2, 3, 6, 8)]),
    "embedding": ("""def embedding(float(V, D) E, int64(B, L) I) -> (O) {
      O(b, d) +=! E(I(b, l), d)
    }""", lambda e, i: torch.nn.functional.embedding(i, e).sum(1), [(6, 4), None]),
    "causal_attention": (CAUSAL_ATTENTION, lambda q, k, v:
                         torch.nn.functional.scaled_dot_product_attention(
                             q, k, v, is_causal=True, scale=1.0), [(7, 4), (7, 4), (7, 3)]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_gradients_equal_torch_autograd(name):
    source, layer, shapes = LAYERS[name]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(np.float32) if shape else
              rng.integers(0, 6, size=(3, 5)) for shape in shapes]
    op = polyc.define(source)
    output = op(*inputs)
    cotangent = rng.standard_normal(output.shape).astype(np.float32)
    gradients = polyc.grad(op)(*inputs, cotangent)
    gradients = gradients if isinstance(gradients, tuple) else (gradients,)
    tensors = [torch.tensor(x, requires_grad=x.dtype == np.float32) for x in inputs]
    layer(*tensors).backward(torch.tensor(cotangent))
    expected = [t.grad.numpy() for t in tensors if t.requires_grad]
    assert len(gradients) == len(expected)
    for ours, theirs in zip(gradients, expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)
