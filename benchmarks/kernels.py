"""The benchmark kernels: TC source, input generator, numpy and torch idioms, work counts.

Each :class:`Bench` holds

* ``source``: the operator in TC (one ``def``);
* ``sizes`` / ``quick_sizes`` / ``tiny_sizes``: size assignments for the full
  run, ``--quick`` and the (non-timing) test;
* ``inputs(sizes, rng)``: the arguments in TC order (scalars as Python floats);
* ``outputs(sizes)``: the output shapes, in ``->`` order (all float32);
* ``numpy(args, outs)`` / ``torch(args, outs)``: *prepare* a contestant and
  return a zero-argument callable that computes the outputs into ``outs``
  (preallocated; any scratch is allocated here, outside the timed call).
  Where torch has no ``out=`` for the idiom, the callable allocates its
  result (noted in ``torch_note``).  A torch callable returns its outputs
  in ``->`` order (a tensor or a tuple), or None when it filled ``outs``;
* ``reference(args)``: the outputs in float64;
* ``work(sizes)``: FLOPs (``kind == "compute"``) or compulsory bytes
  (``kind == "memory"``: each input read once, each output written once).

This module imports numpy but never torch or polyc; torch tensors come in
already built by the caller.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from textwrap import dedent
from typing import Callable

import numpy as np

F32 = 4  # bytes per float32 element


@dataclass(frozen=True)
class Bench:
    name: str
    formula: str
    source: str
    sizes: dict
    quick_sizes: dict
    tiny_sizes: dict
    inputs: Callable
    outputs: Callable
    numpy: Callable
    reference: Callable
    kind: str  # "compute" (GFLOP/s) or "memory" (GB/s)
    work: Callable
    torch: Callable | None = None
    torch_note: str = ""
    numpy_note: str = ""
    size_text: Callable = field(default=lambda s: " ".join(f"{k}={v}" for k, v in s.items()))


def _f32(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


def _d(x):
    return np.asarray(x, dtype=np.float64)


def _tc(text: str) -> str:
    return dedent(text).strip() + "\n"


BENCHES: list[Bench] = []


def _add(**kw) -> None:
    BENCHES.append(Bench(**kw))


# ----------------------------------------------------------------- compute-bound

_add(
    name="gemm",
    formula="C[i,j] = sum_k A[i,k] B[k,j]",
    source=_tc("""
        def gemm(float(M, K) A, float(K, N) B) -> (C) {
          C(m, n) +=! A(m, k) * B(k, n)
        }
    """),
    sizes=dict(M=1024, N=1024, K=1024),
    quick_sizes=dict(M=256, N=256, K=256),
    tiny_sizes=dict(M=7, N=13, K=5),
    inputs=lambda s, rng: (_f32(rng, s["M"], s["K"]), _f32(rng, s["K"], s["N"])),
    outputs=lambda s: [(s["M"], s["N"])],
    numpy=lambda a, o: (lambda: np.matmul(a[0], a[1], out=o[0])),
    torch=lambda a, o: (lambda: _torch().matmul(a[0], a[1], out=o[0])),
    reference=lambda A, B: (_d(A) @ _d(B),),
    kind="compute",
    work=lambda s: 2 * s["M"] * s["N"] * s["K"],
)

_add(
    name="mlp",
    formula="Y = relu(X W + b)",
    source=_tc("""
        def mlp(float(M, K) X, float(K, N) W, float(N) b) -> (Y) {
          Y(m, n) +=! X(m, k) * W(k, n)
          Y(m, n) = fmax(Y(m, n) + b(n), 0)
        }
    """),
    sizes=dict(M=512, K=1024, N=1024),
    quick_sizes=dict(M=128, K=256, N=256),
    tiny_sizes=dict(M=5, K=7, N=3),
    inputs=lambda s, rng: (_f32(rng, s["M"], s["K"]), _f32(rng, s["K"], s["N"]),
                           _f32(rng, s["N"])),
    outputs=lambda s: [(s["M"], s["N"])],
    numpy=lambda a, o: (lambda: np.maximum(np.add(np.matmul(a[0], a[1], out=o[0]), a[2],
                                                  out=o[0]), 0, out=o[0])),
    torch=lambda a, o: (lambda: _torch().addmm(a[2], a[0], a[1], out=o[0]).relu_()),
    reference=lambda X, W, b: (np.maximum(_d(X) @ _d(W) + _d(b), 0),),
    kind="compute",
    work=lambda s: 2 * s["M"] * s["N"] * s["K"],
)

_add(
    name="linear3d",
    formula="Y[b,l,n] = sum_k X[b,l,k] W[k,n]  (a linear layer on a batch of sequences)",
    source=_tc("""
        def linear3d(float(B, L, K) X, float(K, N) W) -> (Y) {
          Y(b, l, n) +=! X(b, l, k) * W(k, n)
        }
    """),
    sizes=dict(B=8, L=512, K=512, N=512),
    quick_sizes=dict(B=2, L=64, K=128, N=128),
    tiny_sizes=dict(B=2, L=3, K=5, N=4),
    inputs=lambda s, rng: (_f32(rng, s["B"], s["L"], s["K"]), _f32(rng, s["K"], s["N"])),
    outputs=lambda s: [(s["B"], s["L"], s["N"])],
    numpy=lambda a, o: (lambda: np.matmul(a[0], a[1], out=o[0])),
    numpy_note="np.matmul broadcasts W: one product per image",
    torch=lambda a, o: (lambda: _torch().matmul(a[0], a[1], out=o[0])),
    torch_note="torch.matmul folds the batch into the rows: one product",
    reference=lambda X, W: (_d(X) @ _d(W),),
    kind="compute",
    work=lambda s: 2 * s["B"] * s["L"] * s["K"] * s["N"],
)

_add(
    name="tbmm",
    formula="Z[b,m,n] = sum_k X[b,m,k] Y[b,n,k]",
    source=_tc("""
        def tbmm(float(B, M, K) X, float(B, N, K) Y) -> (Z) {
          Z(b, m, n) +=! X(b, m, k) * Y(b, n, k)
        }
    """),
    sizes=dict(B=64, M=128, N=128, K=128),
    quick_sizes=dict(B=8, M=64, N=64, K=64),
    tiny_sizes=dict(B=3, M=5, N=4, K=7),
    inputs=lambda s, rng: (_f32(rng, s["B"], s["M"], s["K"]), _f32(rng, s["B"], s["N"], s["K"])),
    outputs=lambda s: [(s["B"], s["M"], s["N"])],
    numpy=lambda a, o: (lambda: np.matmul(a[0], a[1].transpose(0, 2, 1), out=o[0])),
    torch=lambda a, o: (lambda: _torch().bmm(a[0], a[1].transpose(1, 2), out=o[0])),
    reference=lambda X, Y: (np.matmul(_d(X), _d(Y).transpose(0, 2, 1)),),
    kind="compute",
    work=lambda s: 2 * s["B"] * s["M"] * s["N"] * s["K"],
)


CONV2D_SOURCE = _tc("""
    def conv2d(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
      O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
    }
""")


def _conv_numpy(a, o):
    I, F = a
    R, S = F.shape[2], F.shape[3]

    def run():
        windows = np.lib.stride_tricks.sliding_window_view(I, (R, S), axis=(2, 3))
        np.einsum("nchwrs,kcrs->nkhw", windows, F, out=o[0], optimize=True)
    return run


def _conv_ref(I, F):
    R, S = F.shape[2], F.shape[3]
    windows = np.lib.stride_tricks.sliding_window_view(_d(I), (R, S), axis=(2, 3))
    return (np.einsum("nchwrs,kcrs->nkhw", windows, _d(F), optimize=True),)


# What both convolutions share: the source, the peers, the reference.
_CONV = dict(
    source=CONV2D_SOURCE,
    inputs=lambda s, rng: (_f32(rng, s["N"], s["C"], s["H"], s["W"]),
                           _f32(rng, s["K"], s["C"], s["R"], s["S"])),
    outputs=lambda s: [(s["N"], s["K"], s["H"] - s["R"] + 1, s["W"] - s["S"] + 1)],
    numpy=_conv_numpy,
    numpy_note="sliding_window_view + einsum(optimize=True)",
    torch=lambda a, o: (lambda: _torch().nn.functional.conv2d(a[0], a[1])),
    torch_note="F.conv2d allocates its output (no out=)",
    reference=_conv_ref,
    kind="compute",
    work=lambda s: (2 * s["N"] * s["K"] * (s["H"] - s["R"] + 1) * (s["W"] - s["S"] + 1)
                    * s["C"] * s["R"] * s["S"]),
)

_add(
    name="conv2d",
    formula="O[n,k,h,w] = sum_{c,r,s} I[n,c,h+r,w+s] W[k,c,r,s]",
    sizes=dict(N=8, C=64, K=64, H=56, W=56, R=3, S=3),
    quick_sizes=dict(N=2, C=16, K=16, H=28, W=28, R=3, S=3),
    tiny_sizes=dict(N=2, C=3, K=4, H=7, W=6, R=3, S=2),
    **_CONV,
)

# The same convolution where a network has narrowed the image and widened the channels
# (a late layer): output rows of 14 columns, under half a register block.
_add(
    name="conv2d_late",
    formula="conv2d at 14 x 14 outputs, 256 channels",
    sizes=dict(N=8, C=256, K=256, H=16, W=16, R=3, S=3),
    quick_sizes=dict(N=2, C=64, K=64, H=16, W=16, R=3, S=3),
    tiny_sizes=dict(N=2, C=5, K=6, H=9, W=7, R=3, S=3),
    **_CONV,
)

_add(
    name="contraction",
    formula="C[a,b,c,d] = sum_{e,f} A[a,e,b,f] B[d,f,c,e]",
    source=_tc("""
        def contraction(float(SA, SE, SB, SF) A, float(SD, SF, SC, SE) B) -> (C) {
          C(a, b, c, d) +=! A(a, e, b, f) * B(d, f, c, e)
        }
    """),
    sizes=dict(SA=24, SB=24, SC=24, SD=24, SE=24, SF=24),
    quick_sizes=dict(SA=12, SB=12, SC=12, SD=12, SE=12, SF=12),
    tiny_sizes=dict(SA=2, SB=3, SC=5, SD=4, SE=7, SF=2),
    inputs=lambda s, rng: (_f32(rng, s["SA"], s["SE"], s["SB"], s["SF"]),
                           _f32(rng, s["SD"], s["SF"], s["SC"], s["SE"])),
    outputs=lambda s: [(s["SA"], s["SB"], s["SC"], s["SD"])],
    numpy=lambda a, o: (lambda: np.einsum("aebf,dfce->abcd", a[0], a[1], out=o[0],
                                          optimize=True)),
    torch=lambda a, o: (lambda: _torch().einsum("aebf,dfce->abcd", a[0], a[1])),
    torch_note="torch.einsum allocates its output (no out=)",
    reference=lambda A, B: (np.einsum("aebf,dfce->abcd", _d(A), _d(B), optimize=True),),
    kind="compute",
    work=lambda s: 2 * s["SA"] * s["SB"] * s["SC"] * s["SD"] * s["SE"] * s["SF"],
    size_text=lambda s: "all extents " + str(s["SA"]) if len(set(s.values())) == 1 else
    " ".join(f"{k}={v}" for k, v in s.items()),
)


def _mm2_numpy(a, o):
    alpha, beta, A, B, C, D = a
    tmp = np.empty((A.shape[0], B.shape[1]), np.float32)
    scaled = np.empty_like(D)

    def run():
        np.matmul(A, B, out=tmp)
        np.multiply(tmp, np.float32(alpha), out=tmp)
        np.matmul(tmp, C, out=o[0])
        np.multiply(D, np.float32(beta), out=scaled)
        np.add(o[0], scaled, out=o[0])
    return run


def _mm2_torch(a, o):
    torch = _torch()
    alpha, beta, A, B, C, D = a
    tmp = torch.empty((A.shape[0], B.shape[1]), dtype=torch.float32)

    def run():
        torch.mm(A, B, out=tmp)
        torch.addmm(D, tmp, C, beta=beta, alpha=alpha, out=o[0])
    return run


_add(
    name="2mm",
    formula="E = alpha A B C + beta D  (PolyBench 2mm)",
    source=_tc("""
        def mm2(float alpha, float beta, float(NI, NK) A, float(NK, NJ) B,
                float(NJ, NL) C, float(NI, NL) D) -> (E) {
          tmp(i, j) +=! alpha * A(i, k) * B(k, j)
          E(i, l) +=! tmp(i, j) * C(j, l)
          E(i, l) = E(i, l) + beta * D(i, l)
        }
    """),
    sizes=dict(NI=800, NJ=900, NK=1100, NL=1200),
    quick_sizes=dict(NI=160, NJ=180, NK=220, NL=240),
    tiny_sizes=dict(NI=5, NJ=7, NK=3, NL=11),
    inputs=lambda s, rng: (1.5, 1.2, _f32(rng, s["NI"], s["NK"]), _f32(rng, s["NK"], s["NJ"]),
                           _f32(rng, s["NJ"], s["NL"]), _f32(rng, s["NI"], s["NL"])),
    outputs=lambda s: [(s["NI"], s["NL"])],
    numpy=_mm2_numpy,
    numpy_note="two matmuls",
    torch=_mm2_torch,
    reference=lambda alpha, beta, A, B, C, D: (alpha * (_d(A) @ _d(B)) @ _d(C) + beta * _d(D),),
    kind="compute",
    work=lambda s: 2 * s["NI"] * s["NJ"] * s["NK"] + 2 * s["NI"] * s["NJ"] * s["NL"],
)


def _kron_numpy(a, o):
    X, W = a
    R, D = X.shape[-1], W.shape[0]
    X2 = X.reshape(-1, R)
    Y2 = o[0].reshape(-1, D)
    assert np.shares_memory(Y2, o[0])
    WT = W.T
    return lambda: np.matmul(X2, WT, out=Y2)


def _kron_torch(a, o):
    torch = _torch()
    X, W = a
    X2 = X.reshape(-1, X.shape[-1])
    Y2 = o[0].view(-1, W.shape[0])
    WT = W.t()

    def run():
        torch.matmul(X2, WT, out=Y2)  # fills o[0]; returns None so o[0] is checked
    return run


_add(
    name="kronecker3",
    formula="Y[m,n0,n1,d] = sum_r X[m,n0,n1,r] W[d,r]",
    source=_tc("""
        def kronecker3(float(M, N0, N1, R) X, float(D, R) W) -> (Y) {
          Y(m, n0, n1, d) +=! X(m, n0, n1, r) * W(d, r)
        }
    """),
    sizes=dict(M=256, N0=64, N1=64, R=16, D=16),
    quick_sizes=dict(M=32, N0=32, N1=32, R=16, D=16),
    tiny_sizes=dict(M=2, N0=3, N1=5, R=7, D=4),
    inputs=lambda s, rng: (_f32(rng, s["M"], s["N0"], s["N1"], s["R"]),
                           _f32(rng, s["D"], s["R"])),
    outputs=lambda s: [(s["M"], s["N0"], s["N1"], s["D"])],
    numpy=_kron_numpy,
    numpy_note="matmul on a (M*N0*N1, R) reshape",
    torch=_kron_torch,
    reference=lambda X, W: (np.einsum("mabr,dr->mabd", _d(X), _d(W)),),
    kind="compute",
    work=lambda s: 2 * s["M"] * s["N0"] * s["N1"] * s["R"] * s["D"],
)

# PolyBench kernels as PolyBench writes them (LARGE sizes): a triangle selected by a
# ternary or a transposed read, feeding a product, where fusing had cost 20-45x.

def _symm_numpy(a, o):
    alpha, beta, A, B, C = a
    (D,) = o
    S = np.empty_like(A)

    def run():
        np.copyto(S, A)
        upper = np.triu_indices(A.shape[0], 1)
        S[upper] = A.T[upper]
        np.matmul(S, B, out=D)
        np.multiply(D, np.float32(alpha), out=D)
        np.add(D, np.float32(beta) * C, out=D)
    return run


def _trmm_numpy(a, o):
    alpha, A, B = a
    (out,) = o
    L = np.empty_like(A)

    def run():
        np.copyto(L, np.tril(A, -1).T)
        np.matmul(L, B, out=out)
        np.add(out, B, out=out)
        np.multiply(out, np.float32(alpha), out=out)
    return run


_add(
    name="bicg",
    formula="s = r A, q = A p (two sums walking A along different dimensions)",
    source=_tc("""
        def bicg(float(N, M) A, float(N) r, float(M) p) -> (s, q) {
          s(j) +=! r(i) * A(i, j)
          q(i) +=! A(i, j) * p(j)
        }
    """),
    sizes=dict(N=1900, M=2100),
    quick_sizes=dict(N=400, M=500),
    tiny_sizes=dict(N=5, M=7),
    inputs=lambda s, rng: (_f32(rng, s["N"], s["M"]), _f32(rng, s["N"]), _f32(rng, s["M"])),
    outputs=lambda s: [(s["M"],), (s["N"],)],
    numpy=lambda a, o: (lambda: (np.matmul(a[1], a[0], out=o[0]),
                                 np.matmul(a[0], a[2], out=o[1]))),
    # A vector times a matrix is computed as a 1 × N matrix; an out of that shape keeps
    # torch from resizing (and warning about) the 1-D output.
    torch=lambda a, o: (lambda: (_torch().matmul(a[1][None], a[0], out=o[0][None]),
                                 _torch().matmul(a[0], a[2], out=o[1]))),
    reference=lambda A, r, p: (_d(r) @ _d(A), _d(A) @ _d(p)),
    kind="memory",
    work=lambda s: (s["N"] * s["M"] + 2 * (s["N"] + s["M"])) * F32,
)

_add(
    name="symm",
    formula="D = alpha S B + beta C, S symmetric from A's lower triangle (a ternary)",
    source=_tc("""
        def symm(float alpha, float beta, float(M, M) A, float(M, N) B,
                 float(M, N) C) -> (D) {
          S(i, k) = k <= i ? A(i, k) : A(k, i)
          Cout(i, j) +=! S(i, k) * B(k, j)
          D(i, j) = alpha * Cout(i, j) + beta * C(i, j)
        }
    """),
    sizes=dict(M=1000, N=1200),
    quick_sizes=dict(M=200, N=240),
    tiny_sizes=dict(M=5, N=7),
    inputs=lambda s, rng: (1.5, 1.2, _f32(rng, s["M"], s["M"]), _f32(rng, s["M"], s["N"]),
                           _f32(rng, s["M"], s["N"])),
    outputs=lambda s: [(s["M"], s["N"])],
    numpy=_symm_numpy,
    numpy_note="copy the triangle, matmul, scale; all out=",
    reference=lambda alpha, beta, A, B, C: (
        alpha * ((np.tril(_d(A)) + np.tril(_d(A), -1).T) @ _d(B)) + beta * _d(C),),
    kind="compute",
    work=lambda s: 2 * s["M"] * s["M"] * s["N"],
)

_add(
    name="trmm",
    formula="B' = alpha (L B + B), L = A's strict lower triangle transposed (a ternary)",
    source=_tc("""
        def trmm(float alpha, float(M, M) A, float(M, N) B) -> (Bout) {
          Lt(i, k) = k > i ? A(k, i) : 0
          P(i, j) +=! Lt(i, k) * B(k, j)
          Bout(i, j) = alpha * (P(i, j) + B(i, j))
        }
    """),
    sizes=dict(M=1000, N=1200),
    quick_sizes=dict(M=200, N=240),
    tiny_sizes=dict(M=5, N=7),
    inputs=lambda s, rng: (1.5, _f32(rng, s["M"], s["M"]), _f32(rng, s["M"], s["N"])),
    outputs=lambda s: [(s["M"], s["N"])],
    numpy=_trmm_numpy,
    numpy_note="copy the triangle, matmul, add, scale; all out=",
    reference=lambda alpha, A, B: (alpha * (np.tril(_d(A), -1).T @ _d(B) + _d(B)),),
    kind="compute",
    work=lambda s: 2 * s["M"] * s["M"] * s["N"],
)


# ----------------------------------------------------------------- memory-bound


def _softmax_numpy(a, o):
    (X,) = a
    (Y,) = o
    rows = np.empty((X.shape[0], 1), np.float32)

    def run():
        np.max(X, axis=1, keepdims=True, out=rows)
        np.subtract(X, rows, out=Y)
        np.exp(Y, out=Y)
        np.sum(Y, axis=1, keepdims=True, out=rows)
        np.divide(Y, rows, out=Y)
    return run


def _softmax_torch(a, o):
    torch = _torch()
    (X,) = a
    (Y,) = o
    try:
        torch.softmax(X, 1, out=Y)
        return lambda: torch.softmax(X, 1, out=Y)
    except Exception:  # no out= overload in this torch version
        return lambda: torch.softmax(X, 1)


def _softmax_ref(X):
    X = _d(X)
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True),)


_add(
    name="softmax",
    formula="Y = softmax(X) row-wise, max-subtracted; temporaries for max, exp and sum",
    source=_tc("""
        def softmax(float(N, D) X) -> (Y) {
          row_max(n) max=! X(n, d)
          e(n, d) = exp(X(n, d) - row_max(n))
          row_sum(n) +=! e(n, d)
          Y(n, d) = e(n, d) / row_sum(n)
        }
    """),
    sizes=dict(N=4096, D=1024),
    quick_sizes=dict(N=512, D=1024),
    tiny_sizes=dict(N=5, D=11),
    inputs=lambda s, rng: (_f32(rng, s["N"], s["D"]),),
    outputs=lambda s: [(s["N"], s["D"])],
    numpy=_softmax_numpy,
    torch=_softmax_torch,
    reference=_softmax_ref,
    kind="memory",
    work=lambda s: 2 * s["N"] * s["D"] * F32,
)


def _layernorm_numpy(a, o):
    X, gamma, beta, eps = a
    (Y,) = o
    N, D = X.shape
    mu = np.empty((N, 1), np.float32)
    rstd = np.empty((N, 1), np.float32)

    def run():
        np.mean(X, axis=1, keepdims=True, out=mu)
        np.subtract(X, mu, out=Y)
        np.einsum("ij,ij->i", Y, Y, out=rstd[:, 0])       # sum of squares, no temporary
        np.multiply(rstd, np.float32(1.0 / D), out=rstd)
        np.add(rstd, np.float32(eps), out=rstd)
        np.sqrt(rstd, out=rstd)
        np.divide(np.float32(1.0), rstd, out=rstd)
        np.multiply(Y, rstd, out=Y)
        np.multiply(Y, gamma, out=Y)
        np.add(Y, beta, out=Y)
    return run


def _layernorm_torch(a, o):
    torch = _torch()
    X, gamma, beta, eps = a
    D = X.shape[1]
    return lambda: torch.nn.functional.layer_norm(X, (D,), gamma, beta, eps)


def _layernorm_ref(X, gamma, beta, eps):
    X = _d(X)
    mu = X.mean(axis=1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=1, keepdims=True)
    return ((X - mu) / np.sqrt(var + eps) * _d(gamma) + _d(beta),)


_add(
    name="layernorm",
    formula="Y = (X - mean) / sqrt(var + eps) * gamma + beta, per row",
    source=_tc("""
        def layernorm(float(N, D) X, float(D) gamma, float(D) beta, float eps) -> (Y) {
          mu(n) +=! X(n, d)
          mu(n) = mu(n) / D
          ss(n) +=! (X(n, d) - mu(n)) * (X(n, d) - mu(n))
          rstd(n) = rsqrt(ss(n) / D + eps)
          Y(n, d) = (X(n, d) - mu(n)) * rstd(n) * gamma(d) + beta(d)
        }
    """),
    sizes=dict(N=4096, D=1024),
    quick_sizes=dict(N=512, D=1024),
    tiny_sizes=dict(N=5, D=11),
    inputs=lambda s, rng: (_f32(rng, s["N"], s["D"]), _f32(rng, s["D"]), _f32(rng, s["D"]),
                           1e-5),
    outputs=lambda s: [(s["N"], s["D"])],
    numpy=_layernorm_numpy,
    numpy_note="mean, subtract, einsum sum of squares, scale; all out=",
    torch=_layernorm_torch,
    torch_note="F.layer_norm allocates its output (no out=)",
    reference=_layernorm_ref,
    kind="memory",
    work=lambda s: (2 * s["N"] * s["D"] + 2 * s["D"]) * F32,
)


def _layernorm_backward_inputs(s, rng):
    """X, gamma, eps, the cotangent d_Y, and what layer norm's forward keeps: each row's
    sum and its sum of squares about the mean."""
    X, dY = _f32(rng, s["N"], s["D"]), _f32(rng, s["N"], s["D"])
    centred = X - X.mean(axis=1, keepdims=True, dtype=np.float64).astype(np.float32)
    return (X, _f32(rng, s["D"]), 1e-5, dY, X.sum(axis=1, dtype=np.float32),
            np.einsum("ij,ij->i", centred, centred))


def _layernorm_backward_statistics(X, mu, ss, eps):
    """(X - mean, 1 / sqrt(var + eps)) in the arrays' precision, rows as columns."""
    D = X.shape[1]
    mean = (mu / X.dtype.type(D))[:, None]
    return X - mean, (1 / np.sqrt(ss / X.dtype.type(D) + X.dtype.type(eps)))[:, None]


def _layernorm_backward_numpy(a, o):
    X, gamma, eps, dY, mu, ss = a
    d_X, d_gamma, d_beta = o
    N, D = X.shape
    xhat, g = np.empty_like(X), np.empty_like(X)
    row = np.empty((N, 1), np.float32)

    def run():
        centred, rstd = _layernorm_backward_statistics(X, mu, ss, eps)
        np.multiply(centred, rstd, out=xhat)
        np.multiply(dY, gamma, out=g)
        np.einsum("ij,ij->i", g, xhat, out=row[:, 0])
        np.multiply(xhat, row / np.float32(D), out=d_X)
        np.subtract(g, d_X, out=d_X)
        np.subtract(d_X, g.mean(axis=1, keepdims=True), out=d_X)
        np.multiply(d_X, rstd, out=d_X)
        np.einsum("ij,ij->j", dY, xhat, out=d_gamma)
        np.sum(dY, axis=0, out=d_beta)
    return run


def _layernorm_backward_torch(a, o):
    """torch's own layer norm backward kernel, given the mean and 1/std its forward
    keeps (computed once, outside the timing)."""
    torch = _torch()
    X, gamma, eps, dY, mu, ss = a
    D = X.shape[1]
    mean = (mu / D).reshape(-1, 1)
    rstd = torch.rsqrt(ss / D + eps).reshape(-1, 1)
    beta = torch.zeros_like(gamma)  # unread; without it torch cannot make d_beta
    backward = torch.ops.aten.native_layer_norm_backward.default
    return lambda: backward(dY, X, [D], mean, rstd, gamma, beta, [True, True, True])


def _layernorm_backward_ref(X, gamma, eps, dY, mu, ss):
    X, dY, gamma = _d(X), _d(dY), _d(gamma)
    centred, rstd = _layernorm_backward_statistics(X, _d(mu), _d(ss), eps)
    xhat = centred * rstd
    g = dY * gamma
    d_X = rstd * (g - g.mean(axis=1, keepdims=True)
                  - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return d_X, (dY * xhat).sum(axis=0), dY.sum(axis=0)


_add(
    name="layernorm_backward",
    formula="d_X, d_gamma, d_beta of layer norm, from X, d_Y and the forward's row sums",
    source=_tc("""
        def layernorm_backward(float(N, D) X, float(D) gamma, float eps, float(N, D) d_Y,
                               float(N) mu, float(N) ss) -> (d_X, d_gamma, d_beta) {
          mu_1(n) = mu(n) / D
          rstd(n) = rsqrt(ss(n) / D + eps)
          a(n) +=! d_Y(n, d) * gamma(d) * (X(n, d) - mu_1(n))
          g(n) +=! d_Y(n, d) * gamma(d)
          xs(n) +=! X(n, d) - mu_1(n)
          d_ss(n) = a(n) * (-0.5 * rstd(n) / (ss(n) / D + eps)) * (1.0 / D)
          d_mu(n) = (-(g(n) * rstd(n)) - 2.0 * d_ss(n) * xs(n)) * (1.0 / D)
          d_X(n, d) = d_Y(n, d) * gamma(d) * rstd(n) + 2.0 * d_ss(n) * (X(n, d) - mu_1(n))
                      + d_mu(n)
          d_gamma(d) +=! d_Y(n, d) * ((X(n, d) - mu_1(n)) * rstd(n))
          d_beta(d) +=! d_Y(n, d)
        }
    """),
    sizes=dict(N=4096, D=1024),
    quick_sizes=dict(N=512, D=1024),
    tiny_sizes=dict(N=5, D=11),
    inputs=_layernorm_backward_inputs,
    outputs=lambda s: [(s["N"], s["D"]), (s["D"],), (s["D"],)],
    numpy=_layernorm_backward_numpy,
    numpy_note="the textbook formula with einsum row and column sums; out= where it takes one",
    torch=_layernorm_backward_torch,
    torch_note="aten.native_layer_norm_backward: torch's backward kernel alone",
    reference=_layernorm_backward_ref,
    kind="memory",
    work=lambda s: (3 * s["N"] * s["D"] + 3 * s["D"] + 2 * s["N"]) * F32,
)


def _moments_numpy(a, o):
    (X,) = a
    mean, var = o
    return lambda: (np.mean(X, axis=1, out=mean), np.var(X, axis=1, out=var))


def _moments_torch(a, o):
    torch = _torch()
    (X,) = a
    return lambda: torch.var_mean(X, dim=1, correction=0)[::-1]  # (var, mean) -> (mean, var)


_add(
    name="moments",
    formula="mean[n], var[n] of each row (two outputs)",
    source=_tc("""
        def moments(float(N, D) X) -> (mean, var) {
          mean(n) +=! X(n, d)
          mean(n) = mean(n) / D
          var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n))
          var(n) = var(n) / D
        }
    """),
    sizes=dict(N=4096, D=1024),
    quick_sizes=dict(N=512, D=1024),
    tiny_sizes=dict(N=5, D=11),
    inputs=lambda s, rng: (_f32(rng, s["N"], s["D"]) + np.float32(1.0),),
    outputs=lambda s: [(s["N"],), (s["N"],)],
    numpy=_moments_numpy,
    numpy_note="np.mean + np.var with out=",
    torch=_moments_torch,
    torch_note="torch.var_mean allocates its outputs",
    reference=lambda X: (_d(X).mean(axis=1), _d(X).var(axis=1)),
    kind="memory",
    work=lambda s: (s["N"] * s["D"] + 2 * s["N"]) * F32,
)


def _elementwise_torch(a, o):
    torch = _torch()
    A, b, c = a
    (O,) = o
    return lambda: torch.add(A, b, out=O).mul_(c)


_add(
    name="elementwise",
    formula="O[i,j] = (a[i,j] + b[j]) * c",
    source=_tc("""
        def elementwise(float(M, N) a, float(N) b, float c) -> (O) {
          O(i, j) = (a(i, j) + b(j)) * c
        }
    """),
    sizes=dict(M=4096, N=4096),
    quick_sizes=dict(M=1024, N=1024),
    tiny_sizes=dict(M=5, N=11),
    inputs=lambda s, rng: (_f32(rng, s["M"], s["N"]), _f32(rng, s["N"]), 0.75),
    outputs=lambda s: [(s["M"], s["N"])],
    numpy=lambda a, o: (lambda: np.multiply(np.add(a[0], a[1], out=o[0]), np.float32(a[2]),
                                            out=o[0])),
    torch=_elementwise_torch,
    reference=lambda A, b, c: ((_d(A) + _d(b)) * c,),
    kind="memory",
    work=lambda s: (2 * s["M"] * s["N"] + s["N"]) * F32,
)


def _atax_numpy(a, o):
    A, x = a
    (y,) = o
    tmp = np.empty(A.shape[0], np.float32)
    AT = A.T

    def run():
        np.matmul(A, x, out=tmp)
        np.matmul(AT, tmp, out=y)
    return run


def _atax_torch(a, o):
    torch = _torch()
    A, x = a
    (y,) = o
    tmp = torch.empty(A.shape[0], dtype=torch.float32)
    AT = A.t()

    def run():
        torch.mv(A, x, out=tmp)
        torch.mv(AT, tmp, out=y)
    return run


_add(
    name="atax",
    formula="y = A^T (A x)",
    source=_tc("""
        def atax(float(M, N) A, float(N) x) -> (y) {
          tmp(i) +=! A(i, j) * x(j)
          y(j) +=! A(i, j) * tmp(i)
        }
    """),
    sizes=dict(M=4000, N=4000),
    quick_sizes=dict(M=1000, N=1000),
    tiny_sizes=dict(M=7, N=13),
    inputs=lambda s, rng: (_f32(rng, s["M"], s["N"]), _f32(rng, s["N"])),
    outputs=lambda s: [(s["N"],)],
    numpy=_atax_numpy,
    numpy_note="A.T @ (A @ x), reads A twice",
    torch=_atax_torch,
    reference=lambda A, x: (_d(A).T @ (_d(A) @ _d(x)),),
    kind="memory",
    work=lambda s: (s["M"] * s["N"] + s["M"] + s["N"]) * F32,
)

BY_NAME = {b.name: b for b in BENCHES}

_TORCH = None


def _torch():
    global _TORCH
    if _TORCH is None:
        import torch

        _TORCH = torch
    return _TORCH


def max_rel_error(got, ref) -> float:
    """max |got - ref| / max(max |ref|, tiny): the error relative to the output's scale."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return float("inf")
    if ref.size == 0:
        return 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    diff = np.abs(got - ref)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(diff)) / scale


TOLERANCE = 1e-3
