"""The operator test corpus: TC operators with numpy references.

Each :class:`CorpusOp` is one TC source (possibly with several ``def``s; the one
under test is ``def_name``), a description of its inputs, two or three small
size assignments, the shapes its outputs must have, and a numpy reference that
computes the outputs in float64 (int64 for integer operators).

The module needs nothing from polyc; tests import it as a plain module
(``from corpus import CORPUS, make_inputs, assert_close``).

Conventions
-----------
* ``InputSpec.dims`` names size variables (strings) or fixed extents (ints), in
  the order of the TC signature; a 0-rank input has ``dims=()``.
* ``InputSpec.kind`` says how :func:`make_inputs` fills it:

  ``"normal"``          standard normal floats (integers in [-8, 8] for integral dtypes)
  ``"positive"``        uniform in [0.5, 2)
  ``"uniform:LO:HI"``   uniform in [LO, HI)
  ``"index:SIZE"``      integers in [0, sizes[SIZE]) (gather indices)
  ``"scalar"``          a Python float, uniform in [0.5, 2)
  ``"scalar:VALUE"``    the Python float VALUE

* ``reference(*inputs)`` takes the inputs in declaration order and returns a
  tuple of arrays, one per declared output (temporaries are not returned).
* ``tolerance`` is for :func:`assert_close`: the largest error allowed, relative
  to ``max(1, max|expected|)`` of the output. Integer operators use 0 (exact).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from textwrap import dedent
from typing import Callable

import numpy as np

__all__ = ["InputSpec", "CorpusOp", "CORPUS", "CORPUS_BY_NAME", "make_inputs",
           "resolve_dims", "assert_close"]


# ----------------------------------------------------------------- data model


@dataclass(frozen=True)
class InputSpec:
    """One input of an operator: its name, numpy dtype name, dims and fill kind."""

    name: str
    dtype: str
    dims: tuple[str | int, ...]
    kind: str = "normal"


@dataclass(frozen=True)
class CorpusOp:
    """One operator of the corpus (see the module docstring)."""

    name: str
    source: str
    def_name: str
    inputs: tuple[InputSpec, ...]
    shapes: tuple[dict[str, int], ...]
    expected_output_shapes: Callable[[dict], tuple[tuple[int, ...], ...]]
    reference: Callable[..., tuple[np.ndarray, ...]]
    tolerance: float = 1e-4
    tags: tuple[str, ...] = ()


def resolve_dims(spec: InputSpec, sizes: dict) -> tuple[int, ...]:
    """The concrete shape of ``spec`` under ``sizes``."""
    return tuple(d if isinstance(d, int) else int(sizes[d]) for d in spec.dims)


def _as_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def _make_one(spec: InputSpec, sizes: dict, rng: np.random.Generator):
    dtype = np.dtype(spec.dtype)
    shape = resolve_dims(spec, sizes)
    kind = spec.kind
    if kind == "scalar" or kind.startswith("scalar:"):
        value = float(rng.uniform(0.5, 2.0)) if kind == "scalar" else float(kind.split(":", 1)[1])
        if shape != ():
            raise ValueError(f"input {spec.name}: kind 'scalar' needs dims=()")
        return int(round(value)) if dtype.kind in "iub" else value
    if kind.startswith("index:"):
        bound = int(sizes[kind.split(":", 1)[1]])
        if dtype.kind not in "iu":
            raise ValueError(f"input {spec.name}: index inputs must be integral")
        return rng.integers(0, bound, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if kind == "normal":
        if dtype.kind in "iu":
            low = 0 if dtype.kind == "u" else -8
            return rng.integers(low, 9, size=shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)
    if kind == "positive":
        lo, hi = 0.5, 2.0
    elif kind.startswith("uniform:"):
        _, lo_text, hi_text = kind.split(":")
        lo, hi = float(lo_text), float(hi_text)
    else:
        raise ValueError(f"input {spec.name}: unknown kind {kind!r}")
    if dtype.kind in "iu":
        return rng.integers(math.ceil(lo), math.floor(hi) + 1, size=shape).astype(dtype)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def make_inputs(op: CorpusOp, sizes: dict, rng=None) -> tuple:
    """Random inputs for ``op`` under ``sizes``: numpy arrays of the declared
    dtypes (C-contiguous) and Python floats for scalar inputs.

    ``rng`` is a ``numpy.random.Generator`` or a seed.
    """
    rng = _as_rng(rng)
    return tuple(_make_one(spec, sizes, rng) for spec in op.inputs)


def assert_close(actual, expected, tol: float, *, what: str = "output") -> None:
    """Assert ``actual`` matches ``expected`` to ``tol``.

    Shapes must be equal. The error bound is ``tol * max(1, max|expected|)``
    (an absolute tolerance for small outputs, a relative one for large
    ones). ``tol == 0`` asks for exact equality. NaNs and infinities must
    appear at the same places.
    """
    a = np.asarray(actual)
    e = np.asarray(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {a.shape} != expected {e.shape}")
    if e.size == 0:
        return
    if tol == 0:
        if not np.array_equal(a, e):
            bad = np.argwhere(a != e)
            first = tuple(int(x) for x in bad[0]) if bad.size else ()
            raise AssertionError(
                f"{what}: {len(bad)} of {e.size} elements differ (exact comparison); "
                f"first at {first}: got {a[first]!r}, expected {e[first]!r}")
        return
    a64 = a.astype(np.float64)
    e64 = e.astype(np.float64)
    a_nan, e_nan = np.isnan(a64), np.isnan(e64)
    if not np.array_equal(a_nan, e_nan):
        raise AssertionError(f"{what}: NaN positions differ "
                             f"({int(a_nan.sum())} in actual, {int(e_nan.sum())} expected)")
    a_inf, e_inf = np.isinf(a64), np.isinf(e64)
    if not np.array_equal(np.where(a_inf, a64, 0), np.where(e_inf, e64, 0)):
        raise AssertionError(f"{what}: infinities differ")
    finite = np.isfinite(e64)
    if not finite.any():
        return
    scale = max(1.0, float(np.max(np.abs(e64[finite]))))
    err = np.abs(np.where(finite, a64, 0.0) - np.where(finite, e64, 0.0))  # no inf - inf
    bound = tol * scale
    if not np.all(err <= bound):
        worst = np.unravel_index(int(np.argmax(err)), err.shape)
        n_bad = int(np.count_nonzero(err > bound))
        raise AssertionError(
            f"{what}: {n_bad} of {e.size} elements off by more than {bound:.3g} "
            f"(tol {tol:g} x scale {scale:.3g}); worst at {tuple(int(i) for i in worst)}: "
            f"got {a64[worst]!r}, expected {e64[worst]!r} (error {err[worst]:.3g})")


# ----------------------------------------------------------------- helpers


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _i(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def _src(text: str) -> str:
    return dedent(text).strip() + "\n"


def _in(name: str, dtype: str, *dims, kind: str = "normal") -> InputSpec:
    return InputSpec(name, dtype, tuple(dims), kind)


def _scalar(name: str, dtype: str = "float32", value: float | None = None) -> InputSpec:
    return InputSpec(name, dtype, (), "scalar" if value is None else f"scalar:{value!r}")


def _conv2d(I, W, stride=1, dilation=1):
    """Valid (unpadded) NCHW convolution, float64: O(n,m,h,w) = sum I(n,c,s*h+d*kh,s*w+d*kw) W(m,c,kh,kw)."""
    I, W = _f(I), _f(W)
    N, C, H, Wd = I.shape
    M, C2, KH, KW = W.shape
    assert C == C2
    Ho = (H - dilation * (KH - 1) - 1) // stride + 1
    Wo = (Wd - dilation * (KW - 1) - 1) // stride + 1
    O = np.zeros((N, M, Ho, Wo))
    for kh in range(KH):
        for kw in range(KW):
            h0, w0 = kh * dilation, kw * dilation
            patch = I[:, :, h0:h0 + stride * (Ho - 1) + 1:stride,
                      w0:w0 + stride * (Wo - 1) + 1:stride]
            O += np.einsum("nchw,mc->nmhw", patch, W[:, :, kh, kw])
    return O


def _logsumexp_rows(X):
    mx = X.max(axis=-1, keepdims=True)
    return mx[..., 0] + np.log(np.exp(X - mx).sum(axis=-1))


_erf = np.vectorize(math.erf, otypes=[np.float64])


# ----------------------------------------------------------------- the operators

_ops: list[CorpusOp] = []


def _add(**kwargs) -> None:
    _ops.append(CorpusOp(**kwargs))


F32 = "float32"
F64 = "float64"
I32 = "int32"
I64 = "int64"

# ---- linear algebra -------------------------------------------------------

_add(
    name="matmul",
    source=_src("""
        def matmul(float(M, K) A, float(K, N) B) -> (C) {
          C(m, n) +=! A(m, k) * B(k, n)
        }
    """),
    def_name="matmul",
    inputs=(_in("A", F32, "M", "K"), _in("B", F32, "K", "N")),
    shapes=({"M": 7, "K": 13, "N": 5}, {"M": 1, "K": 1, "N": 1}, {"M": 24, "K": 3, "N": 17}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda A, B: (_f(A) @ _f(B),),
    tags=("linalg", "reduction"),
)

_add(
    name="matmul_trans_a",
    source=_src("""
        def matmul_trans_a(float(K, M) A, float(K, N) B) -> (C) {
          C(m, n) +=! A(k, m) * B(k, n)
        }
    """),
    def_name="matmul_trans_a",
    inputs=(_in("A", F32, "K", "M"), _in("B", F32, "K", "N")),
    shapes=({"M": 7, "K": 13, "N": 5}, {"M": 1, "K": 11, "N": 3}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda A, B: (_f(A).T @ _f(B),),
    tags=("linalg", "reduction"),
)

_add(
    name="matmul_trans_b",
    source=_src("""
        def matmul_trans_b(float(M, K) A, float(N, K) B) -> (C) {
          C(m, n) +=! A(m, k) * B(n, k)
        }
    """),
    def_name="matmul_trans_b",
    inputs=(_in("A", F32, "M", "K"), _in("B", F32, "N", "K")),
    shapes=({"M": 13, "K": 7, "N": 2}, {"M": 3, "K": 1, "N": 19}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda A, B: (_f(A) @ _f(B).T,),
    tags=("linalg", "reduction"),
)

_add(
    name="gemm",
    source=_src("""
        # C = alpha * A B + beta * C0 (BLAS gemm with a separate output)
        def gemm(float alpha, float beta, float(M, K) A, float(K, N) B, float(M, N) C0) -> (C) {
          C(m, n) +=! A(m, k) * B(k, n)
          C(m, n) = alpha * C(m, n) + beta * C0(m, n)
        }
    """),
    def_name="gemm",
    inputs=(_scalar("alpha"), _scalar("beta"), _in("A", F32, "M", "K"),
            _in("B", F32, "K", "N"), _in("C0", F32, "M", "N")),
    shapes=({"M": 5, "K": 7, "N": 11}, {"M": 1, "K": 13, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda alpha, beta, A, B, C0: (alpha * (_f(A) @ _f(B)) + beta * _f(C0),),
    tags=("linalg", "scalar", "multi_statement"),
)

_add(
    name="batch_matmul",
    source=_src("""
        def batch_matmul(float(B, M, K) X, float(B, K, N) Y) -> (Z) {
          Z(b, m, n) +=! X(b, m, k) * Y(b, k, n)
        }
    """),
    def_name="batch_matmul",
    inputs=(_in("X", F32, "B", "M", "K"), _in("Y", F32, "B", "K", "N")),
    shapes=({"B": 3, "M": 5, "K": 7, "N": 2}, {"B": 1, "M": 13, "K": 1, "N": 6}),
    expected_output_shapes=lambda s: ((s["B"], s["M"], s["N"]),),
    reference=lambda X, Y: (np.einsum("bmk,bkn->bmn", _f(X), _f(Y)),),
    tags=("linalg", "reduction"),
)

_add(
    name="batch_matmul_trans_b",
    source=_src("""
        def batch_matmul_trans_b(float(B, M, K) X, float(B, N, K) Y) -> (Z) {
          Z(b, m, n) +=! X(b, m, k) * Y(b, n, k)
        }
    """),
    def_name="batch_matmul_trans_b",
    inputs=(_in("X", F32, "B", "M", "K"), _in("Y", F32, "B", "N", "K")),
    shapes=({"B": 2, "M": 7, "K": 5, "N": 3}, {"B": 1, "M": 1, "K": 13, "N": 11}),
    expected_output_shapes=lambda s: ((s["B"], s["M"], s["N"]),),
    reference=lambda X, Y: (np.einsum("bmk,bnk->bmn", _f(X), _f(Y)),),
    tags=("linalg", "reduction"),
)

_add(
    name="grouped_matmul",
    source=_src("""
        # one independent matmul per group g; the group dim sits in the middle of A
        def grouped_matmul(float(M, G, K) A, float(G, K, N) B) -> (C) {
          C(m, g, n) +=! A(m, g, k) * B(g, k, n)
        }
    """),
    def_name="grouped_matmul",
    inputs=(_in("A", F32, "M", "G", "K"), _in("B", F32, "G", "K", "N")),
    shapes=({"M": 5, "G": 3, "K": 7, "N": 4}, {"M": 11, "G": 1, "K": 2, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["G"], s["N"]),),
    reference=lambda A, B: (np.einsum("mgk,gkn->mgn", _f(A), _f(B)),),
    tags=("linalg", "reduction"),
)

_add(
    name="fc_bias_relu",
    source=_src("""
        # fully connected layer, bias and relu: three statements on one output
        def fc_bias_relu(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {
          O1(b, n) +=! I(b, m) * W1(n, m)
          O1(b, n) = O1(b, n) + B1(n)
          O1(b, n) = fmax(O1(b, n), 0)
        }
    """),
    def_name="fc_bias_relu",
    inputs=(_in("I", F32, "B", "M"), _in("W1", F32, "N", "M"), _in("B1", F32, "N")),
    shapes=({"B": 3, "M": 13, "N": 7}, {"B": 1, "M": 1, "N": 5}, {"B": 16, "M": 24, "N": 1}),
    expected_output_shapes=lambda s: ((s["B"], s["N"]),),
    reference=lambda I, W1, B1: (np.maximum(_f(I) @ _f(W1).T + _f(B1), 0.0),),
    tags=("nn", "multi_statement"),
)

_add(
    name="mlp2",
    source=_src("""
        # two-layer perceptron; the hidden layer H is a temporary
        def mlp2(float(B, M) I, float(N, M) W1, float(N) B1, float(P, N) W2, float(P) B2) -> (O2) {
          H(b, n) +=! I(b, m) * W1(n, m)
          H(b, n) = fmax(H(b, n) + B1(n), 0)
          O2(b, p) +=! H(b, n) * W2(p, n)
          O2(b, p) = O2(b, p) + B2(p)
        }
    """),
    def_name="mlp2",
    inputs=(_in("I", F32, "B", "M"), _in("W1", F32, "N", "M"), _in("B1", F32, "N"),
            _in("W2", F32, "P", "N"), _in("B2", F32, "P")),
    shapes=({"B": 4, "M": 7, "N": 13, "P": 3}, {"B": 1, "M": 1, "N": 2, "P": 1}),
    expected_output_shapes=lambda s: ((s["B"], s["P"]),),
    reference=lambda I, W1, B1, W2, B2: (
        np.maximum(_f(I) @ _f(W1).T + _f(B1), 0.0) @ _f(W2).T + _f(B2),),
    tags=("nn", "temporaries", "multi_statement"),
)

# ---- convolutions and pooling ---------------------------------------------

_add(
    name="conv2d",
    source=_src("""
        # valid convolution, NCHW, stride 1
        def conv2d(float(N, C, H, W) I, float(M, C, KH, KW) W1) -> (O) {
          O(n, m, h, w) +=! I(n, c, h + kh, w + kw) * W1(m, c, kh, kw)
        }
    """),
    def_name="conv2d",
    inputs=(_in("I", F32, "N", "C", "H", "W"), _in("W1", F32, "M", "C", "KH", "KW")),
    shapes=({"N": 1, "C": 3, "H": 7, "W": 5, "M": 4, "KH": 3, "KW": 2},
            {"N": 2, "C": 1, "H": 5, "W": 13, "M": 1, "KH": 1, "KW": 3},
            {"N": 1, "C": 2, "H": 3, "W": 3, "M": 2, "KH": 3, "KW": 3}),
    expected_output_shapes=lambda s: ((s["N"], s["M"], s["H"] - s["KH"] + 1,
                                       s["W"] - s["KW"] + 1),),
    reference=lambda I, W1: (_conv2d(I, W1),),
    tags=("conv", "reduction"),
)

_add(
    name="conv2d_strided",
    source=_src("""
        # valid convolution with stride 2: h ranges over 0 : (H - KH)/2 + 1 (floor)
        def conv2d_strided(float(N, C, H, W) I, float(M, C, KH, KW) W1) -> (O) {
          O(n, m, h, w) +=! I(n, c, 2 * h + kh, 2 * w + kw) * W1(m, c, kh, kw)
        }
    """),
    def_name="conv2d_strided",
    inputs=(_in("I", F32, "N", "C", "H", "W"), _in("W1", F32, "M", "C", "KH", "KW")),
    shapes=({"N": 1, "C": 3, "H": 8, "W": 13, "M": 2, "KH": 3, "KW": 2},
            {"N": 2, "C": 1, "H": 7, "W": 6, "M": 3, "KH": 1, "KW": 1},
            {"N": 1, "C": 2, "H": 3, "W": 4, "M": 1, "KH": 3, "KW": 3}),
    expected_output_shapes=lambda s: ((s["N"], s["M"], (s["H"] - s["KH"]) // 2 + 1,
                                       (s["W"] - s["KW"]) // 2 + 1),),
    reference=lambda I, W1: (_conv2d(I, W1, stride=2),),
    tags=("conv", "reduction", "strided"),
)


def _group_conv_ref(I, W1):
    I, W1 = _f(I), _f(W1)
    return (np.stack([_conv2d(I[:, g], W1[g]) for g in range(I.shape[1])], axis=1),)


_add(
    name="conv2d_grouped",
    source=_src("""
        def conv2d_grouped(float(N, G, C, H, W) I, float(G, F, C, KH, KW) W1) -> (O) {
          O(n, g, f, h, w) +=! I(n, g, c, h + kh, w + kw) * W1(g, f, c, kh, kw)
        }
    """),
    def_name="conv2d_grouped",
    inputs=(_in("I", F32, "N", "G", "C", "H", "W"), _in("W1", F32, "G", "F", "C", "KH", "KW")),
    shapes=({"N": 1, "G": 2, "C": 3, "H": 6, "W": 5, "F": 2, "KH": 3, "KW": 2},
            {"N": 2, "G": 3, "C": 1, "H": 7, "W": 3, "F": 1, "KH": 2, "KW": 3}),
    expected_output_shapes=lambda s: ((s["N"], s["G"], s["F"], s["H"] - s["KH"] + 1,
                                       s["W"] - s["KW"] + 1),),
    reference=_group_conv_ref,
    tags=("conv", "reduction"),
)

_add(
    name="conv2d_dilated",
    source=_src("""
        # 3x3 kernel (fixed extents in the signature), dilation 2: h in 0 : H - 4
        def conv2d_dilated(float(N, C, H, W) I, float(M, C, 3, 3) W1) -> (O) {
          O(n, m, h, w) +=! I(n, c, h + 2 * kh, w + 2 * kw) * W1(m, c, kh, kw)
        }
    """),
    def_name="conv2d_dilated",
    inputs=(_in("I", F32, "N", "C", "H", "W"), _in("W1", F32, "M", "C", 3, 3)),
    shapes=({"N": 1, "C": 2, "H": 7, "W": 11, "M": 3},
            {"N": 2, "C": 1, "H": 5, "W": 5, "M": 1}),
    expected_output_shapes=lambda s: ((s["N"], s["M"], s["H"] - 4, s["W"] - 4),),
    reference=lambda I, W1: (_conv2d(I, W1, dilation=2),),
    tags=("conv", "reduction", "fixed_dims"),
)


def _maxpool_ref(I):
    I = _f(I)
    N, C, H, W = I.shape
    Ho, Wo = H // 2, W // 2
    return (I[:, :, :2 * Ho, :2 * Wo].reshape(N, C, Ho, 2, Wo, 2).max(axis=(3, 5)),)


_add(
    name="maxpool2x2",
    source=_src("""
        # 2x2 max pooling, stride 2 (odd extents drop the last row/column)
        def maxpool2x2(float(N, C, H, W) I) -> (O) {
          O(n, c, h, w) max=! I(n, c, 2 * h + kh, 2 * w + kw) where kh in 0:2, kw in 0:2
        }
    """),
    def_name="maxpool2x2",
    inputs=(_in("I", F32, "N", "C", "H", "W"),),
    shapes=({"N": 1, "C": 3, "H": 7, "W": 13}, {"N": 2, "C": 1, "H": 2, "W": 8},
            {"N": 1, "C": 1, "H": 24, "W": 3}),
    expected_output_shapes=lambda s: ((s["N"], s["C"], s["H"] // 2, s["W"] // 2),),
    reference=_maxpool_ref,
    tags=("pool", "reduction", "where", "strided"),
)


def _avgpool_ref(I):
    I = _f(I)
    N, C, H, W = I.shape
    O = np.zeros((N, C, H - 2, W - 2))
    for kh in range(3):
        for kw in range(3):
            O += I[:, :, kh:kh + H - 2, kw:kw + W - 2]
    return (O / 9.0,)


_add(
    name="avgpool3x3",
    source=_src("""
        # 3x3 average pooling, stride 1
        def avgpool3x3(float(N, C, H, W) I) -> (O) {
          O(n, c, h, w) +=! I(n, c, h + kh, w + kw) / 9.0 where kh in 0:3, kw in 0:3
        }
    """),
    def_name="avgpool3x3",
    inputs=(_in("I", F32, "N", "C", "H", "W"),),
    shapes=({"N": 1, "C": 2, "H": 7, "W": 5}, {"N": 3, "C": 1, "H": 3, "W": 13}),
    expected_output_shapes=lambda s: ((s["N"], s["C"], s["H"] - 2, s["W"] - 2),),
    reference=_avgpool_ref,
    tags=("pool", "reduction", "where"),
)

# ---- normalisation and softmax ----------------------------------------------


def _softmax_ref(X):
    X = _f(X)
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True),)


_add(
    name="softmax",
    source=_src("""
        # row softmax; mx, e and s are temporaries
        def softmax(float(N, C) X) -> (Y) {
          mx(n) max=! X(n, c)
          e(n, c) = exp(X(n, c) - mx(n))
          s(n) +=! e(n, c)
          Y(n, c) = e(n, c) / s(n)
        }
    """),
    def_name="softmax",
    inputs=(_in("X", F32, "N", "C"),),
    shapes=({"N": 3, "C": 7}, {"N": 1, "C": 1}, {"N": 13, "C": 24}),
    expected_output_shapes=lambda s: ((s["N"], s["C"]),),
    reference=_softmax_ref,
    tags=("nn", "temporaries", "reduction", "math"),
)

_add(
    name="log_softmax",
    source=_src("""
        def log_softmax(float(N, C) X) -> (Y) {
          mx(n) max=! X(n, c)
          s(n) +=! exp(X(n, c) - mx(n))
          Y(n, c) = X(n, c) - mx(n) - log(s(n))
        }
    """),
    def_name="log_softmax",
    inputs=(_in("X", F32, "N", "C"),),
    shapes=({"N": 5, "C": 11}, {"N": 1, "C": 1}, {"N": 2, "C": 17}),
    expected_output_shapes=lambda s: ((s["N"], s["C"]),),
    reference=lambda X: (_f(X) - _logsumexp_rows(_f(X))[:, None],),
    tags=("nn", "temporaries", "reduction", "math"),
)


def _layernorm_ref(X, gamma, beta, eps):
    X = _f(X)
    mu = X.mean(axis=1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=1, keepdims=True)
    return ((X - mu) * _f(gamma) / np.sqrt(var + eps) + _f(beta),)


_add(
    name="layernorm",
    source=_src("""
        # layer normalisation over the last dim; eps is a scalar input
        def layernorm(float(N, D) X, float(D) gamma, float(D) beta, float eps) -> (Y) {
          mu(n) +=! X(n, d) / D
          xc(n, d) = X(n, d) - mu(n)
          v(n) +=! xc(n, d) * xc(n, d) / D
          Y(n, d) = xc(n, d) * gamma(d) / sqrt(v(n) + eps) + beta(d)
        }
    """),
    def_name="layernorm",
    inputs=(_in("X", F32, "N", "D"), _in("gamma", F32, "D"), _in("beta", F32, "D"),
            _scalar("eps", value=1e-5)),
    shapes=({"N": 3, "D": 13}, {"N": 1, "D": 7}, {"N": 5, "D": 1}),
    expected_output_shapes=lambda s: ((s["N"], s["D"]),),
    reference=_layernorm_ref,
    tolerance=5e-4,
    tags=("nn", "temporaries", "scalar", "math"),
)


def _bn_stats_ref(X):
    X = _f(X)
    mean = X.mean(axis=(0, 2, 3))
    var = ((X - mean[None, :, None, None]) ** 2).mean(axis=(0, 2, 3))
    return (mean, var)


_add(
    name="batchnorm_stats",
    source=_src("""
        # per-channel mean and (biased) variance over batch and spatial dims
        def batchnorm_stats(float(N, C, H, W) X) -> (mean, var) {
          mean(c) +=! X(n, c, h, w)
          mean(c) = mean(c) / (N * H * W)
          var(c) +=! (X(n, c, h, w) - mean(c)) * (X(n, c, h, w) - mean(c))
          var(c) = var(c) / (N * H * W)
        }
    """),
    def_name="batchnorm_stats",
    inputs=(_in("X", F32, "N", "C", "H", "W"),),
    shapes=({"N": 2, "C": 3, "H": 5, "W": 7}, {"N": 1, "C": 1, "H": 1, "W": 13},
            {"N": 3, "C": 5, "H": 2, "W": 1}),
    expected_output_shapes=lambda s: ((s["C"],), (s["C"],)),
    reference=_bn_stats_ref,
    tags=("nn", "multi_output", "multi_statement", "reduction"),
)


def _attention_ref(Qm, Km, Vm):
    Qm, Km, Vm = _f(Qm), _f(Km), _f(Vm)
    sc = np.einsum("bqd,bsd->bqs", Qm, Km) / np.sqrt(Qm.shape[2])
    p = np.exp(sc - sc.max(axis=2, keepdims=True))
    p /= p.sum(axis=2, keepdims=True)
    return (np.einsum("bqs,bse->bqe", p, Vm),)


_add(
    name="attention",
    source=_src("""
        # scaled dot-product attention with a fused softmax
        def attention(float(B, Q, D) Qm, float(B, S, D) Km, float(B, S, E) Vm) -> (O) {
          sc(b, q, s) +=! Qm(b, q, d) * Km(b, s, d) / sqrt(float(D))
          mx(b, q) max=! sc(b, q, s)
          p(b, q, s) = exp(sc(b, q, s) - mx(b, q))
          z(b, q) +=! p(b, q, s)
          O(b, q, e) +=! p(b, q, s) * Vm(b, s, e) / z(b, q)
        }
    """),
    def_name="attention",
    inputs=(_in("Qm", F32, "B", "Q", "D"), _in("Km", F32, "B", "S", "D"),
            _in("Vm", F32, "B", "S", "E")),
    shapes=({"B": 2, "Q": 3, "D": 5, "S": 7, "E": 4}, {"B": 1, "Q": 1, "D": 13, "S": 1, "E": 2}),
    expected_output_shapes=lambda s: ((s["B"], s["Q"], s["E"]),),
    reference=_attention_ref,
    tags=("nn", "temporaries", "reduction", "math"),
)


def _cross_entropy_ref(X, T):
    X = _f(X)
    lse = _logsumexp_rows(X)
    picked = X[np.arange(X.shape[0]), _i(T)]
    return (np.asarray((lse - picked).mean()),)


_add(
    name="cross_entropy",
    source=_src("""
        # mean negative log-likelihood of the target classes T: a gather into a 0-rank output
        def cross_entropy(float(B, C) X, int32(B) T) -> (loss) {
          mx(b) max=! X(b, c)
          s(b) +=! exp(X(b, c) - mx(b))
          loss +=! (log(s(b)) + mx(b) - X(b, T(b))) / B
        }
    """),
    def_name="cross_entropy",
    inputs=(_in("X", F32, "B", "C"), _in("T", I32, "B", kind="index:C")),
    shapes=({"B": 5, "C": 7}, {"B": 1, "C": 1}, {"B": 13, "C": 3}),
    expected_output_shapes=lambda s: ((),),
    reference=_cross_entropy_ref,
    tags=("nn", "gather", "zero_rank", "temporaries", "math"),
)

# ---- tensor contractions ----------------------------------------------------

_add(
    name="kronecker3",
    source=_src("""
        # one factor of a Kronecker-structured linear layer
        def kronecker3(float(M, N0, N1, R) X, float(D, R) W) -> (Y) {
          Y(m, n0, n1, d) +=! X(m, n0, n1, r) * W(d, r)
        }
    """),
    def_name="kronecker3",
    inputs=(_in("X", F32, "M", "N0", "N1", "R"), _in("W", F32, "D", "R")),
    shapes=({"M": 2, "N0": 3, "N1": 5, "R": 7, "D": 4}, {"M": 1, "N0": 1, "N1": 2, "R": 1, "D": 13}),
    expected_output_shapes=lambda s: ((s["M"], s["N0"], s["N1"], s["D"]),),
    reference=lambda X, W: (np.einsum("mabr,dr->mabd", _f(X), _f(W)),),
    tags=("linalg", "reduction"),
)

_add(
    name="tensor_contraction",
    source=_src("""
        def tensor_contraction(float(SA, SE, SB, SF) A, float(SD, SF, SC, SE) B) -> (C) {
          C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e)
        }
    """),
    def_name="tensor_contraction",
    inputs=(_in("A", F32, "SA", "SE", "SB", "SF"), _in("B", F32, "SD", "SF", "SC", "SE")),
    shapes=({"SA": 2, "SB": 3, "SC": 5, "SD": 4, "SE": 7, "SF": 2},
            {"SA": 1, "SB": 1, "SC": 3, "SD": 1, "SE": 1, "SF": 5}),
    expected_output_shapes=lambda s: ((s["SA"], s["SB"], s["SC"], s["SD"]),),
    reference=lambda A, B: (np.einsum("aebf,dfce->abcd", _f(A), _f(B)),),
    tags=("linalg", "reduction"),
)

_add(
    name="outer_product",
    source=_src("""
        def outer_product(float(M) a, float(N) b) -> (O) {
          O(i, j) = a(i) * b(j)
        }
    """),
    def_name="outer_product",
    inputs=(_in("a", F32, "M"), _in("b", F32, "N")),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 5}, {"M": 24, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda a, b: (np.outer(_f(a), _f(b)),),
    tags=("linalg", "elementwise"),
)

_add(
    name="dot",
    source=_src("""
        def dot(float(N) a, float(N) b) -> (s) {
          s +=! a(i) * b(i)
        }
    """),
    def_name="dot",
    inputs=(_in("a", F32, "N"), _in("b", F32, "N")),
    shapes=({"N": 13}, {"N": 1}, {"N": 24}),
    expected_output_shapes=lambda s: ((),),
    reference=lambda a, b: (np.asarray(np.dot(_f(a), _f(b))),),
    tags=("linalg", "reduction", "zero_rank"),
)

# ---- gathers ----------------------------------------------------------------

_add(
    name="embedding_bag",
    source=_src("""
        # sum of L embedding rows per bag; I holds row numbers of LUT
        def embedding_bag(float(V, D) LUT, int32(B, L) I) -> (O) {
          O(b, d) +=! LUT(I(b, l), d)
        }
    """),
    def_name="embedding_bag",
    inputs=(_in("LUT", F32, "V", "D"), _in("I", I32, "B", "L", kind="index:V")),
    shapes=({"V": 11, "D": 5, "B": 3, "L": 4}, {"V": 1, "D": 1, "B": 1, "L": 1},
            {"V": 24, "D": 7, "B": 13, "L": 2}),
    expected_output_shapes=lambda s: ((s["B"], s["D"]),),
    reference=lambda LUT, I: (_f(LUT)[_i(I)].sum(axis=1),),
    tags=("gather", "reduction"),
)

_add(
    name="gather_rows",
    source=_src("""
        def gather_rows(float(V, D) T, int64(K) idx) -> (O) {
          O(k, d) = T(idx(k), d)
        }
    """),
    def_name="gather_rows",
    inputs=(_in("T", F32, "V", "D"), _in("idx", I64, "K", kind="index:V")),
    shapes=({"V": 7, "D": 3, "K": 13}, {"V": 1, "D": 5, "K": 1}, {"V": 19, "D": 1, "K": 4}),
    expected_output_shapes=lambda s: ((s["K"], s["D"]),),
    reference=lambda T, idx: (_f(T)[_i(idx)],),
    tags=("gather",),
)

# ---- PolyBench --------------------------------------------------------------

_add(
    name="atax",
    source=_src("""
        # y = A^T (A x); tmp is a temporary
        def atax(float(M, N) A, float(N) x) -> (y) {
          tmp(i) +=! A(i, j) * x(j)
          y(j) +=! A(i, j) * tmp(i)
        }
    """),
    def_name="atax",
    inputs=(_in("A", F32, "M", "N"), _in("x", F32, "N")),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 24, "N": 5}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda A, x: (_f(A).T @ (_f(A) @ _f(x)),),
    tags=("polybench", "temporaries", "reduction"),
)

_add(
    name="bicg",
    source=_src("""
        def bicg(float(N, M) A, float(N) r, float(M) p) -> (s, q) {
          s(j) +=! r(i) * A(i, j)
          q(i) +=! A(i, j) * p(j)
        }
    """),
    def_name="bicg",
    inputs=(_in("A", F32, "N", "M"), _in("r", F32, "N"), _in("p", F32, "M")),
    shapes=({"N": 7, "M": 13}, {"N": 1, "M": 5}, {"N": 17, "M": 1}),
    expected_output_shapes=lambda s: ((s["M"],), (s["N"],)),
    reference=lambda A, r, p: (_f(A).T @ _f(r), _f(A) @ _f(p)),
    tags=("polybench", "multi_output", "reduction"),
)

_add(
    name="mvt",
    source=_src("""
        # x1 = x1_0 + A y_1 ; x2 = x2_0 + A^T y_2
        def mvt(float(N, N) A, float(N) x1_0, float(N) x2_0, float(N) y_1, float(N) y_2) -> (x1, x2) {
          x1(i) +=! A(i, j) * y_1(j)
          x1(i) = x1(i) + x1_0(i)
          x2(i) +=! A(j, i) * y_2(j)
          x2(i) = x2(i) + x2_0(i)
        }
    """),
    def_name="mvt",
    inputs=(_in("A", F32, "N", "N"), _in("x1_0", F32, "N"), _in("x2_0", F32, "N"),
            _in("y_1", F32, "N"), _in("y_2", F32, "N")),
    shapes=({"N": 13}, {"N": 1}, {"N": 4}),
    expected_output_shapes=lambda s: ((s["N"],), (s["N"],)),
    reference=lambda A, x1_0, x2_0, y_1, y_2: (_f(x1_0) + _f(A) @ _f(y_1),
                                               _f(x2_0) + _f(A).T @ _f(y_2)),
    tags=("polybench", "multi_output", "multi_statement", "reduction"),
)


def _gemver_ref(alpha, beta, A, u1, v1, u2, v2, y, z):
    Ahat = _f(A) + np.outer(_f(u1), _f(v1)) + np.outer(_f(u2), _f(v2))
    x = beta * (Ahat.T @ _f(y)) + _f(z)
    w = alpha * (Ahat @ x)
    return (Ahat, x, w)


_add(
    name="gemver",
    source=_src("""
        def gemver(float alpha, float beta, float(N, N) A, float(N) u1, float(N) v1,
                   float(N) u2, float(N) v2, float(N) y, float(N) z) -> (Ahat, x, w) {
          Ahat(i, j) = A(i, j) + u1(i) * v1(j) + u2(i) * v2(j)
          x(i) +=! Ahat(j, i) * y(j)
          x(i) = beta * x(i) + z(i)
          w(i) +=! Ahat(i, j) * x(j)
          w(i) = alpha * w(i)
        }
    """),
    def_name="gemver",
    inputs=(_scalar("alpha"), _scalar("beta"), _in("A", F32, "N", "N"), _in("u1", F32, "N"),
            _in("v1", F32, "N"), _in("u2", F32, "N"), _in("v2", F32, "N"), _in("y", F32, "N"),
            _in("z", F32, "N")),
    shapes=({"N": 11}, {"N": 1}, {"N": 6}),
    expected_output_shapes=lambda s: ((s["N"], s["N"]), (s["N"],), (s["N"],)),
    reference=_gemver_ref,
    tags=("polybench", "multi_output", "multi_statement", "scalar", "reduction"),
)

_add(
    name="gesummv",
    source=_src("""
        # y = alpha A x + beta B x
        def gesummv(float alpha, float beta, float(N, N) A, float(N, N) B, float(N) x) -> (y) {
          t(i) +=! A(i, j) * x(j)
          y(i) +=! B(i, j) * x(j)
          y(i) = alpha * t(i) + beta * y(i)
        }
    """),
    def_name="gesummv",
    inputs=(_scalar("alpha"), _scalar("beta"), _in("A", F32, "N", "N"), _in("B", F32, "N", "N"),
            _in("x", F32, "N")),
    shapes=({"N": 13}, {"N": 1}, {"N": 8}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda alpha, beta, A, B, x: (alpha * (_f(A) @ _f(x)) + beta * (_f(B) @ _f(x)),),
    tags=("polybench", "temporaries", "multi_statement", "scalar", "reduction"),
)

_add(
    name="mm2",
    source=_src("""
        # PolyBench 2mm: E = alpha A B C + beta D
        def mm2(float alpha, float beta, float(NI, NK) A, float(NK, NJ) B, float(NJ, NL) C,
                float(NI, NL) D) -> (E) {
          tmp(i, j) +=! alpha * A(i, k) * B(k, j)
          E(i, l) +=! tmp(i, j) * C(j, l)
          E(i, l) = E(i, l) + beta * D(i, l)
        }
    """),
    def_name="mm2",
    inputs=(_scalar("alpha"), _scalar("beta"), _in("A", F32, "NI", "NK"),
            _in("B", F32, "NK", "NJ"), _in("C", F32, "NJ", "NL"), _in("D", F32, "NI", "NL")),
    shapes=({"NI": 5, "NJ": 7, "NK": 3, "NL": 11}, {"NI": 1, "NJ": 2, "NK": 1, "NL": 1}),
    expected_output_shapes=lambda s: ((s["NI"], s["NL"]),),
    reference=lambda alpha, beta, A, B, C, D: (
        alpha * (_f(A) @ _f(B)) @ _f(C) + beta * _f(D),),
    tags=("polybench", "temporaries", "multi_statement", "scalar", "reduction"),
)

_add(
    name="mm3",
    source=_src("""
        # PolyBench 3mm: G = (A B) (C D); E and F are temporaries
        def mm3(float(NI, NK) A, float(NK, NJ) B, float(NJ, NM) C, float(NM, NL) D) -> (G) {
          E(i, j) +=! A(i, k) * B(k, j)
          F(j, l) +=! C(j, m) * D(m, l)
          G(i, l) +=! E(i, j) * F(j, l)
        }
    """),
    def_name="mm3",
    inputs=(_in("A", F32, "NI", "NK"), _in("B", F32, "NK", "NJ"), _in("C", F32, "NJ", "NM"),
            _in("D", F32, "NM", "NL")),
    shapes=({"NI": 3, "NJ": 5, "NK": 7, "NL": 2, "NM": 4},
            {"NI": 1, "NJ": 1, "NK": 13, "NL": 3, "NM": 1}),
    expected_output_shapes=lambda s: ((s["NI"], s["NL"]),),
    reference=lambda A, B, C, D: ((_f(A) @ _f(B)) @ (_f(C) @ _f(D)),),
    tags=("polybench", "temporaries", "reduction"),
)

_add(
    name="doitgen",
    source=_src("""
        def doitgen(float(NR, NQ, NP) A, float(NP, NP) C4) -> (S) {
          S(r, q, p) +=! A(r, q, s) * C4(s, p)
        }
    """),
    def_name="doitgen",
    inputs=(_in("A", F32, "NR", "NQ", "NP"), _in("C4", F32, "NP", "NP")),
    shapes=({"NR": 3, "NQ": 5, "NP": 7}, {"NR": 1, "NQ": 2, "NP": 1}),
    expected_output_shapes=lambda s: ((s["NR"], s["NQ"], s["NP"]),),
    reference=lambda A, C4: (np.einsum("rqs,sp->rqp", _f(A), _f(C4)),),
    tags=("polybench", "reduction"),
)

# ---- elementwise ------------------------------------------------------------

_add(
    name="broadcast_affine",
    source=_src("""
        def broadcast_affine(float(M, N) A, float(N) b, float c) -> (O) {
          O(i, j) = (A(i, j) + b(j)) * c
        }
    """),
    def_name="broadcast_affine",
    inputs=(_in("A", F32, "M", "N"), _in("b", F32, "N"), _scalar("c")),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 24, "N": 3}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda A, b, c: ((_f(A) + _f(b)) * c,),
    tags=("elementwise", "broadcast", "scalar"),
)

_add(
    name="leaky_relu",
    source=_src("""
        def leaky_relu(float(M, N) X) -> (O) {
          O(i, j) = X(i, j) > 0 ? X(i, j) : 0.01 * X(i, j)
        }
    """),
    def_name="leaky_relu",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 5, "N": 13}, {"M": 1, "N": 1}, {"M": 11, "N": 2}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda X: (np.where(_f(X) > 0, _f(X), 0.01 * _f(X)),),
    tags=("elementwise", "ternary"),
)

_add(
    name="clamp",
    source=_src("""
        # clamp to [lo, hi] with nested ternaries on scalar inputs
        def clamp(float(N) X, float lo, float hi) -> (O) {
          O(i) = X(i) < lo ? lo : (X(i) > hi ? hi : X(i))
        }
    """),
    def_name="clamp",
    inputs=(_in("X", F32, "N"), _scalar("lo", value=-0.5), _scalar("hi", value=0.75)),
    shapes=({"N": 13}, {"N": 1}, {"N": 24}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda X, lo, hi: (np.clip(_f(X), lo, hi),),
    tags=("elementwise", "ternary", "scalar"),
)

_add(
    name="relu6",
    source=_src("""
        def relu6(float(M, N) X) -> (O) {
          O(i, j) = min(max(3 * X(i, j), 0), 6)
        }
    """),
    def_name="relu6",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 3, "N": 7}, {"M": 1, "N": 13}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda X: (np.clip(3 * _f(X), 0.0, 6.0),),
    tags=("elementwise", "minmax"),
)

_add(
    name="tril_mask",
    source=_src("""
        # lower triangle plus the column number; indices used as values
        def tril_mask(float(M, N) X) -> (O) {
          O(i, j) = i >= j ? X(i, j) + j : 0
        }
    """),
    def_name="tril_mask",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 7, "N": 5}, {"M": 1, "N": 3}, {"M": 13, "N": 13}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda X: (np.where(np.tri(*np.shape(X), dtype=bool),
                                  _f(X) + np.arange(np.shape(X)[1])[None, :], 0.0),),
    tags=("elementwise", "ternary", "index_values"),
)

_add(
    name="unary_math",
    source=_src("""
        # four independent outputs from C99 math builtins
        def unary_math(float(M, N) X, float(M, N) P) -> (T, E, S, L) {
          T(i, j) = tanh(X(i, j))
          E(i, j) = exp(X(i, j))
          S(i, j) = sqrt(P(i, j))
          L(i, j) = log(P(i, j))
        }
    """),
    def_name="unary_math",
    inputs=(_in("X", F32, "M", "N"), _in("P", F32, "M", "N", kind="positive")),
    shapes=({"M": 7, "N": 3}, {"M": 1, "N": 1}, {"M": 2, "N": 13}),
    expected_output_shapes=lambda s: tuple((s["M"], s["N"]) for _ in range(4)),
    reference=lambda X, P: (np.tanh(_f(X)), np.exp(_f(X)), np.sqrt(_f(P)), np.log(_f(P))),
    tags=("elementwise", "math", "multi_output"),
)

_add(
    name="gelu_erf",
    source=_src("""
        def gelu_erf(float(N) X) -> (O) {
          O(i) = 0.5 * X(i) * (1 + erf(X(i) / sqrt(2.0)))
        }
    """),
    def_name="gelu_erf",
    inputs=(_in("X", F32, "N"),),
    shapes=({"N": 13}, {"N": 1}, {"N": 24}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda X: (0.5 * _f(X) * (1.0 + _erf(_f(X) / math.sqrt(2.0))),),
    tags=("elementwise", "math"),
)

_add(
    name="pow_fabs",
    source=_src("""
        def pow_fabs(float(M, N) P, float(M, N) X) -> (O) {
          O(i, j) = pow(P(i, j), 1.5) + fabs(X(i, j)) - fmin(X(i, j), P(i, j))
        }
    """),
    def_name="pow_fabs",
    inputs=(_in("P", F32, "M", "N", kind="positive"), _in("X", F32, "M", "N")),
    shapes=({"M": 5, "N": 7}, {"M": 1, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda P, X: (np.power(_f(P), 1.5) + np.abs(_f(X)) - np.minimum(_f(X), _f(P)),),
    tags=("elementwise", "math"),
)

_add(
    name="copy2d",
    source=_src("""
        def copy2d(float(M, N) I) -> (O) {
          O(i, j) = I(i, j)
        }
    """),
    def_name="copy2d",
    inputs=(_in("I", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 24, "N": 2}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda I: (_f(I).copy(),),
    tolerance=0.0,
    tags=("elementwise", "data_movement"),
)

_add(
    name="transpose",
    source=_src("""
        def transpose(float(M, N) I) -> (O) {
          O(j, i) = I(i, j)
        }
    """),
    def_name="transpose",
    inputs=(_in("I", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 5}, {"M": 24, "N": 1}),
    expected_output_shapes=lambda s: ((s["N"], s["M"]),),
    reference=lambda I: (_f(I).T.copy(),),
    tolerance=0.0,
    tags=("data_movement",),
)

_add(
    name="permute3d",
    source=_src("""
        def permute3d(float(A, B, C) I) -> (O) {
          O(c, a, b) = I(a, b, c)
        }
    """),
    def_name="permute3d",
    inputs=(_in("I", F32, "A", "B", "C"),),
    shapes=({"A": 2, "B": 3, "C": 5}, {"A": 1, "B": 7, "C": 1}),
    expected_output_shapes=lambda s: ((s["C"], s["A"], s["B"]),),
    reference=lambda I: (np.transpose(_f(I), (2, 0, 1)).copy(),),
    tolerance=0.0,
    tags=("data_movement",),
)

_add(
    name="subsample3",
    source=_src("""
        # every third element: i ranges over 0 : (N - 1)/3 + 1
        def subsample3(float(N) I) -> (O) {
          O(i) = I(3 * i)
        }
    """),
    def_name="subsample3",
    inputs=(_in("I", F32, "N"),),
    shapes=({"N": 13}, {"N": 1}, {"N": 24}, ),
    expected_output_shapes=lambda s: (((s["N"] - 1) // 3 + 1,),),
    reference=lambda I: (_f(I)[::3].copy(),),
    tolerance=0.0,
    tags=("data_movement", "strided"),
)

_add(
    name="shift",
    source=_src("""
        # without the where clause i would range over -1 : N - 1
        def shift(float(B, N) I) -> (O) {
          O(b, i) = I(b, i + 1) where i in 0:N-1
        }
    """),
    def_name="shift",
    inputs=(_in("I", F32, "B", "N"),),
    shapes=({"B": 1, "N": 13}, {"B": 3, "N": 2}, {"B": 5, "N": 7}),
    expected_output_shapes=lambda s: ((s["B"], s["N"] - 1),),
    reference=lambda I: (_f(I)[:, 1:].copy(),),
    tolerance=0.0,
    tags=("data_movement", "where"),
)

# ---- reductions -------------------------------------------------------------

_add(
    name="row_max",
    source=_src("""
        def row_max(float(M, N) X) -> (O) {
          O(i) max=! X(i, j)
        }
    """),
    def_name="row_max",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 3, "N": 24}),
    expected_output_shapes=lambda s: ((s["M"],),),
    reference=lambda X: (_f(X).max(axis=1),),
    tolerance=0.0,
    tags=("reduction", "minmax"),
)

_add(
    name="col_min",
    source=_src("""
        def col_min(float(M, N) X) -> (O) {
          O(j) min=! X(i, j)
        }
    """),
    def_name="col_min",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 24, "N": 3}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda X: (_f(X).min(axis=0),),
    tolerance=0.0,
    tags=("reduction", "minmax"),
)

_add(
    name="row_prod",
    source=_src("""
        def row_prod(float(M, N) X) -> (O) {
          O(i) *=! X(i, j)
        }
    """),
    def_name="row_prod",
    inputs=(_in("X", F32, "M", "N", kind="uniform:0.8:1.25"),),
    shapes=({"M": 5, "N": 7}, {"M": 1, "N": 1}, {"M": 3, "N": 13}),
    expected_output_shapes=lambda s: ((s["M"],),),
    reference=lambda X: (_f(X).prod(axis=1),),
    tags=("reduction",),
)

_add(
    name="row_mean",
    source=_src("""
        # sum, then divide by the size variable N (float / int is float division)
        def row_mean(float(M, N) X) -> (O) {
          O(i) +=! X(i, j)
          O(i) = O(i) / N
        }
    """),
    def_name="row_mean",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 2, "N": 3}),
    expected_output_shapes=lambda s: ((s["M"],),),
    reference=lambda X: (_f(X).mean(axis=1),),
    tags=("reduction", "multi_statement", "size_value"),
)

_add(
    name="sum_all",
    source=_src("""
        def sum_all(float(N) X) -> (s) {
          s +=! X(i)
        }
    """),
    def_name="sum_all",
    inputs=(_in("X", F32, "N"),),
    shapes=({"N": 13}, {"N": 1}, {"N": 24}),
    expected_output_shapes=lambda s: ((),),
    reference=lambda X: (np.asarray(_f(X).sum()),),
    tags=("reduction", "zero_rank"),
)

_add(
    name="sum_squares",
    source=_src("""
        def sum_squares(float(M, N) X) -> (s) {
          s +=! X(i, j) * X(i, j)
        }
    """),
    def_name="sum_squares",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 24, "N": 2}),
    expected_output_shapes=lambda s: ((),),
    reference=lambda X: (np.asarray((_f(X) ** 2).sum()),),
    tags=("reduction", "zero_rank"),
)

# ---- other element types ----------------------------------------------------

_add(
    name="daxpy",
    source=_src("""
        def daxpy(double alpha, double(N) x, double(N) y) -> (z) {
          z(i) = alpha * x(i) + y(i)
        }
    """),
    def_name="daxpy",
    inputs=(_scalar("alpha", F64), _in("x", F64, "N"), _in("y", F64, "N")),
    shapes=({"N": 13}, {"N": 1}, {"N": 24}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda alpha, x, y: (alpha * _f(x) + _f(y),),
    tolerance=1e-12,
    tags=("double", "elementwise", "scalar"),
)

_add(
    name="dgemm",
    source=_src("""
        def dgemm(double(M, K) A, double(K, N) B) -> (C) {
          C(m, n) +=! A(m, k) * B(k, n)
        }
    """),
    def_name="dgemm",
    inputs=(_in("A", F64, "M", "K"), _in("B", F64, "K", "N")),
    shapes=({"M": 7, "K": 13, "N": 5}, {"M": 1, "K": 1, "N": 3}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda A, B: (_f(A) @ _f(B),),
    tolerance=1e-12,
    tags=("double", "linalg", "reduction"),
)

_add(
    name="int32_elementwise",
    source=_src("""
        def int32_elementwise(int32(M, N) X, int32(M, N) Y) -> (O) {
          O(i, j) = 3 * X(i, j) - Y(i, j) + max(X(i, j), Y(i, j))
        }
    """),
    def_name="int32_elementwise",
    inputs=(_in("X", I32, "M", "N"), _in("Y", I32, "M", "N")),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda X, Y: (3 * _i(X) - _i(Y) + np.maximum(_i(X), _i(Y)),),
    tolerance=0.0,
    tags=("int", "elementwise", "minmax"),
)

_add(
    name="int32_reductions",
    source=_src("""
        def int32_reductions(int32(M, N) X) -> (S, Mx) {
          S(i) +=! X(i, j)
          Mx(i) max=! X(i, j)
        }
    """),
    def_name="int32_reductions",
    inputs=(_in("X", I32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 3, "N": 24}),
    expected_output_shapes=lambda s: ((s["M"],), (s["M"],)),
    reference=lambda X: (_i(X).sum(axis=1), _i(X).max(axis=1)),
    tolerance=0.0,
    tags=("int", "reduction", "multi_output"),
)

_add(
    name="int_to_float_cast",
    source=_src("""
        # without the cast this would be integer division
        def int_to_float_cast(int32(M, N) X) -> (O) {
          O(i, j) = float(X(i, j)) / 4
        }
    """),
    def_name="int_to_float_cast",
    inputs=(_in("X", I32, "M", "N"),),
    shapes=({"M": 5, "N": 7}, {"M": 1, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda X: (_f(X) / 4.0,),
    tolerance=0.0,
    tags=("int", "cast", "elementwise"),
)

# ---- language features --------------------------------------------------------

_add(
    name="where_let_reduce",
    source=_src("""
        # sum of squared deviations from c, with a statement-local binding t
        def where_let_reduce(float(N, K) X, float(N) c) -> (O) {
          O(i) +=! t * t where t = X(i, k) - c(i)
        }
    """),
    def_name="where_let_reduce",
    inputs=(_in("X", F32, "N", "K"), _in("c", F32, "N")),
    shapes=({"N": 7, "K": 13}, {"N": 1, "K": 1}, {"N": 3, "K": 2}),
    expected_output_shapes=lambda s: ((s["N"],),),
    reference=lambda X, c: (((_f(X) - _f(c)[:, None]) ** 2).sum(axis=1),),
    tags=("where", "let", "reduction"),
)


def _softplus(x):
    x = _f(x)
    return np.where(x > 0, x + np.log1p(np.exp(-x)), np.log1p(np.exp(x)))


_add(
    name="softplus_let",
    source=_src("""
        # numerically stable softplus; t names the input element
        def softplus_let(float(M, N) X) -> (O) {
          O(i, j) = t > 0 ? t + log(1 + exp(-t)) : log(1 + exp(t)) where t = X(i, j)
        }
    """),
    def_name="softplus_let",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 5, "N": 7}, {"M": 1, "N": 1}),
    expected_output_shapes=lambda s: ((s["M"], s["N"]),),
    reference=lambda X: (_softplus(X),),
    tags=("where", "let", "ternary", "math", "elementwise"),
)

_add(
    name="exists_trim",
    source=_src("""
        # the exists access only narrows the range of i: 0 : N - 2
        def exists_trim(float(B, N) X) -> (O) {
          O(b, i) = 2 * X(b, i) where exists X(b, i + 2)
        }
    """),
    def_name="exists_trim",
    inputs=(_in("X", F32, "B", "N"),),
    shapes=({"B": 1, "N": 13}, {"B": 2, "N": 3}, {"B": 7, "N": 5}),
    expected_output_shapes=lambda s: ((s["B"], s["N"] - 2),),
    reference=lambda X: (2.0 * _f(X)[:, :-2],),
    tags=("where", "exists", "range_inference"),
)

_add(
    name="range_intersection",
    source=_src("""
        # i is bounded by both accesses: 0 : min(N, M)
        def range_intersection(float(N) X, float(M) Y) -> (O) {
          O(i) = X(i) + Y(i)
        }
    """),
    def_name="range_intersection",
    inputs=(_in("X", F32, "N"), _in("Y", F32, "M")),
    shapes=({"N": 7, "M": 13}, {"N": 13, "M": 7}, {"N": 1, "M": 1}),
    expected_output_shapes=lambda s: ((min(s["N"], s["M"]),),),
    reference=lambda X, Y: (_f(X)[:min(len(X), len(Y))] + _f(Y)[:min(len(X), len(Y))],),
    tags=("range_inference", "elementwise"),
)

_add(
    name="dim_specifier",
    source=_src("""
        # X.1 is the extent of X's dimension 1
        def dim_specifier(float(M, N) X) -> (O) {
          O(i) +=! X(i, j) / X.1
        }
    """),
    def_name="dim_specifier",
    inputs=(_in("X", F32, "M", "N"),),
    shapes=({"M": 7, "N": 13}, {"M": 1, "N": 1}, {"M": 2, "N": 5}),
    expected_output_shapes=lambda s: ((s["M"],),),
    reference=lambda X: (_f(X).mean(axis=1),),
    tags=("dim_specifier", "reduction", "size_value"),
)


def _call_simple_ref(A, v):
    Y = 2 * _f(A) + _f(v)[None, :]
    return (Y, Y.sum(axis=1))


_add(
    name="call_simple",
    source=_src("""
        def helper(float(N, M) X, float(M) b) -> (Y, Z) {
          Y(i, j) = X(i, j) * 2 + b(j)
          Z(i) +=! Y(i, j)
        }
        def main(float(R, S) A, float(S) v) -> (P, Q) {
          P, Q = helper(A, v)
        }
    """),
    def_name="main",
    inputs=(_in("A", F32, "R", "S"), _in("v", F32, "S")),
    shapes=({"R": 7, "S": 5}, {"R": 1, "S": 1}, {"R": 2, "S": 13}),
    expected_output_shapes=lambda s: ((s["R"], s["S"]), (s["R"],)),
    reference=_call_simple_ref,
    tags=("call", "multi_output"),
)


def _zscore_ref(X):
    X = _f(X)
    M = X.shape[1]
    S = X.sum(axis=1)
    Q = (X * X).sum(axis=1)
    m = S / M
    return ((X - m[:, None]) / np.sqrt(Q / M - m * m + 1.0)[:, None],)


_add(
    name="call_compose",
    source=_src("""
        def rowstats(float(N, M) X) -> (S, Q) {
          S(i) +=! X(i, j)
          Q(i) +=! X(i, j) * X(i, j)
        }
        # the call's results are temporaries of zscore
        def zscore(float(N, M) X) -> (Y) {
          S, Q = rowstats(X)
          Y(i, j) = (X(i, j) - S(i) / M) / sqrt(Q(i) / M - (S(i) / M) * (S(i) / M) + 1)
        }
    """),
    def_name="zscore",
    inputs=(_in("X", F32, "N", "M"),),
    shapes=({"N": 5, "M": 7}, {"N": 1, "M": 1}, {"N": 13, "M": 2}),
    expected_output_shapes=lambda s: ((s["N"], s["M"]),),
    reference=_zscore_ref,
    tolerance=5e-4,
    tags=("call", "temporaries", "math"),
)


CORPUS: tuple[CorpusOp, ...] = tuple(_ops)
CORPUS_BY_NAME: dict[str, CorpusOp] = {op.name: op for op in CORPUS}
del _ops
