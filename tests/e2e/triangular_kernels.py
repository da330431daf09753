"""Triangular and banded operators written with index-dependent ``where`` ranges, their
float64 numpy references and the sizes the tests run them at (shared by the tests of
:mod:`tests.e2e.test_triangular` and the benchmarks)."""
from __future__ import annotations

import numpy as np

TRMM = """
def trmm(float alpha, float(M, M) A, float(M, N) B) -> (Out) {
  Out(i, j) +=! A(k, i) * B(k, j) where k in i + 1:M
  Out(i, j) = alpha * (Out(i, j) + B(i, j))
}
"""

SYRK = """
def syrk(float alpha, float beta, float(N, M) A, float(N, N) C) -> (D) {
  D(i, j) +=! A(i, k) * A(j, k) where j in 0:i + 1
  D(i, j) = alpha * D(i, j) + beta * C(i, j) where j in 0:i + 1
}
"""

SYR2K = """
def syr2k(float alpha, float beta, float(N, M) A, float(N, M) B, float(N, N) C) -> (D) {
  D(i, j) +=! A(j, k) * B(i, k) + B(j, k) * A(i, k) where j in 0:i + 1
  D(i, j) = alpha * D(i, j) + beta * C(i, j) where j in 0:i + 1
}
"""

SYMM = """
def symm(float alpha, float beta, float(M, M) A, float(M, N) B, float(M, N) C) -> (D) {
  D(i, j) +=! A(i, k) * B(k, j) where k in 0:i + 1
  D(i, j) += A(k, i) * B(k, j) where k in i + 1:M
  D(i, j) = alpha * D(i, j) + beta * C(i, j)
}
"""

BANDED = """
def banded(float(N, K) Band, float(N) x) -> (y) {
  y(i) +=! Band(i, j - i + K / 2) * x(j) where j in max(0, i - K / 2):min(N, i + K - K / 2)
}
"""

CAUSAL = """
def causal_attention(float(T, D) Q, float(T, D) K, float(T, E) V) -> (O) {
  S(i, j) +=! Q(i, d) * K(j, d) where j in 0:i + 1
  m(i) max=! S(i, j) where j in 0:i + 1
  P(i, j) = exp(S(i, j) - m(i)) where j in 0:i + 1
  l(i) +=! P(i, j) where j in 0:i + 1
  O(i, e) +=! P(i, j) * V(j, e) where j in 0:i + 1
  O(i, e) = O(i, e) / l(i)
}
"""


def _d(x):
    return np.asarray(x, dtype=np.float64)


def trmm_reference(alpha, A, B):
    return (alpha * (np.tril(_d(A), -1).T @ _d(B) + _d(B)),)


def syrk_reference(alpha, beta, A, C):
    return (np.tril(alpha * _d(A) @ _d(A).T + beta * _d(C)),)


def syr2k_reference(alpha, beta, A, B, C):
    A, B = _d(A), _d(B)
    return (np.tril(alpha * (A @ B.T + B @ A.T) + beta * _d(C)),)


def symm_reference(alpha, beta, A, B, C):
    A = _d(A)
    S = np.tril(A) + np.tril(A, -1).T
    return (alpha * S @ _d(B) + beta * _d(C),)


def banded_reference(Band, x):
    n, k = Band.shape
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(max(0, i - k // 2), min(n, i + k - k // 2)):
            A[i, j] = Band[i, j - i + k // 2]
    return (A @ _d(x),)


def causal_reference(Q, K, V):
    S = _d(Q) @ _d(K).T
    t = S.shape[0]
    S[np.triu_indices(t, 1)] = -np.inf
    P = np.exp(S - S.max(axis=1, keepdims=True)) if t else S
    return ((P / P.sum(axis=1, keepdims=True)) @ _d(V) if t else P @ _d(V),)


def inputs(name: str, sizes: dict, rng) -> tuple:
    """The arguments of kernel ``name`` at ``sizes`` (float32, scalars as floats)."""
    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    s = sizes
    return {
        "trmm": lambda: (1.5, f32(s["M"], s["M"]), f32(s["M"], s["N"])),
        "syrk": lambda: (1.5, 1.2, f32(s["N"], s["M"]), f32(s["N"], s["N"])),
        "syr2k": lambda: (1.5, 1.2, f32(s["N"], s["M"]), f32(s["N"], s["M"]),
                          f32(s["N"], s["N"])),
        "symm": lambda: (1.5, 1.2, f32(s["M"], s["M"]), f32(s["M"], s["N"]),
                         f32(s["M"], s["N"])),
        "banded": lambda: (f32(s["N"], s["K"]), f32(s["N"])),
        "causal_attention": lambda: (f32(s["T"], s["D"]), f32(s["T"], s["D"]),
                                     f32(s["T"], s["E"])),
    }[name]()


KERNELS = {
    "trmm": (TRMM, trmm_reference, ("M", "N")),
    "syrk": (SYRK, syrk_reference, ("N", "M")),
    "syr2k": (SYR2K, syr2k_reference, ("N", "M")),
    "symm": (SYMM, symm_reference, ("M", "N")),
    "banded": (BANDED, banded_reference, ("N", "K")),
    "causal_attention": (CAUSAL, causal_reference, ("T", "D", "E")),
}
