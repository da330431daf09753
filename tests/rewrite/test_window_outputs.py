"""A contraction whose output ends in a window index is computed transposed
(polyc.rewrite.layout.transpose_window_outputs)."""
import numpy as np
import pytest

import polyc
from polyc.compiler import frontend
from polyc.rewrite.layout import transpose_window_outputs

WEIGHT_GRADIENT = """def dW(float(N, C, H, W) I, float(K, C, R, S) F, float(N, K, H - R + 1, W - S + 1) d_O)
    -> (d_F) {
  d_F(k, c, r, s) +=! d_O(n, k, h, w) * I(n, c, h + r, w + s) where r in 0:R, s in 0:S
}"""


def _statements(source: str) -> list[str]:
    return str(transpose_window_outputs(frontend(source))).splitlines()[1:-1]


def test_a_weight_gradient_is_computed_with_its_windows_outermost():
    assert _statements(WEIGHT_GRADIENT) == [
        "  d_F_w(r, s, k, c) +=! d_O(n, k, h, w) * I(n, c, h + r, w + s) where r in 0:R, "
        "s in 0:S, k in 0:K, c in 0:C, n in 0:N, h in 0:H - R + 1, w in 0:W - S + 1",
        "  d_F(k, c, r, s) = d_F_w(r, s, k, c) where k in 0:K, c in 0:C, r in 0:R, s in 0:S"]


@pytest.mark.parametrize("source", [
    # the convolution itself ends in w, whose range is derived from the window's
    "def f(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) "
    "{ O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s) }",
    "def f(float(H, W) I) -> (O) { O(h, w) max=! I(2 * h + r, 2 * w + s) where r in 0:2, s in 0:2 }",
    "def f(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }",
    # only windows left: nothing to vectorise along instead
    "def f(float(W) X, float(S) Y) -> (C) { C(s) +=! X(w + s) * Y(s) where w in 0:W - S + 1 }",
])
def test_what_stays_as_written(source):
    op = frontend(source)
    assert transpose_window_outputs(op) == op


@pytest.mark.needs_cc
def test_weight_gradient_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    f = np.zeros((4, 3, 3, 2), np.float32)
    d_o = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
    expected = np.zeros((4, 3, 3, 2))
    for r in range(3):
        for s in range(2):
            expected[:, :, r, s] = np.einsum("nkhw,nchw->kc", d_o, x[:, :, r:r + 5, s:s + 5])
    np.testing.assert_allclose(polyc.define(WEIGHT_GRADIENT)(x, f, d_o), expected,
                               rtol=1e-4, atol=1e-4)
