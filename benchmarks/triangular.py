"""Triangular and banded operators for run.py's "triangular" section and the tests.

Each kernel is written twice: with index-dependent ``where`` ranges (the triangle is
the domain) and with a select on the indices (the triangle chosen by value, which
polyc splits into the same domains: polyc.rewrite.split_selects). Peers: numpy's
full-matrix product (twice the work of the triangle), SciPy's BLAS routine where
SciPy is installed (strmm, ssyrk, ssyr2k, ssymm, sgbmv), and torch's causal attention.
Sizes: PolyBench's LARGE data set for the BLAS kernels.
"""
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
    y = np.zeros(n)
    for d in range(k):  # diagonal d of the band holds A[i, i + d - k // 2]
        shift = d - k // 2
        lo, hi = max(0, -shift), min(n, n - shift)
        y[lo:hi] += _d(Band[lo:hi, d]) * _d(x[lo + shift:hi + shift])
    return (y,)


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


# ---------------------------------------------------------------- the same, by value

TERNARY = {
    "trmm": """
def trmm(float alpha, float(M, M) A, float(M, N) B) -> (Out) {
  Out(i, j) +=! (k > i ? A(k, i) : 0.0) * B(k, j)
  Out(i, j) = alpha * (Out(i, j) + B(i, j))
}
""",
    "syrk": """
def syrk(float alpha, float beta, float(N, M) A, float(N, N) C) -> (D) {
  D(i, j) +=! j <= i ? A(i, k) * A(j, k) : 0.0
  D(i, j) = j <= i ? alpha * D(i, j) + beta * C(i, j) : 0.0
}
""",
    "syr2k": """
def syr2k(float alpha, float beta, float(N, M) A, float(N, M) B, float(N, N) C) -> (D) {
  D(i, j) +=! j <= i ? A(j, k) * B(i, k) + B(j, k) * A(i, k) : 0.0
  D(i, j) = j <= i ? alpha * D(i, j) + beta * C(i, j) : 0.0
}
""",
    "symm": """
def symm(float alpha, float beta, float(M, M) A, float(M, N) B, float(M, N) C) -> (D) {
  D(i, j) +=! (k <= i ? A(i, k) : A(k, i)) * B(k, j)
  D(i, j) = alpha * D(i, j) + beta * C(i, j)
}
""",
    "banded": """
def banded(float(N, K) Band, float(N) x) -> (y) {
  y(i) +=! j >= i - K / 2 && j < i + K - K / 2 ? Band(i, j - i + K / 2) * x(j) : 0.0
}
""",
}

# PolyBench's LARGE sizes; the band and the attention at sizes of their own.
SIZES = {
    "trmm": dict(M=1000, N=1200),
    "syrk": dict(N=1200, M=1000),
    "syr2k": dict(N=1200, M=1000),
    "symm": dict(M=1000, N=1200),
    "banded": dict(N=1_000_000, K=9),
    "causal_attention": dict(T=1024, D=64, E=64),
}
QUICK_SIZES = {
    "trmm": dict(M=200, N=240), "syrk": dict(N=240, M=200), "syr2k": dict(N=240, M=200),
    "symm": dict(M=200, N=240), "banded": dict(N=10_000, K=9),
    "causal_attention": dict(T=128, D=32, E=32),
}


def work(name: str, s: dict) -> int:
    """The FLOPs of the triangle (what polyc computes), for GFLOP/s."""
    return {
        "trmm": lambda: s["M"] * (s["M"] - 1) * s["N"] + 2 * s["M"] * s["N"],
        "syrk": lambda: s["N"] * (s["N"] + 1) * s["M"] + 3 * s["N"] * (s["N"] + 1) // 2,
        "syr2k": lambda: 2 * s["N"] * (s["N"] + 1) * s["M"] + 3 * s["N"] * (s["N"] + 1) // 2,
        "symm": lambda: 2 * s["M"] * s["M"] * s["N"] + 3 * s["M"] * s["N"],
        "banded": lambda: 2 * s["N"] * s["K"],
        "causal_attention": lambda: 2 * s["T"] * (s["T"] + 1) // 2 * (s["D"] + s["E"]),
    }[name]()


# ---------------------------------------------------------------- peers

def numpy_peer(name: str, args: tuple):
    """numpy's formula on the full matrices: a zero-argument callable returning the
    outputs (scratch and masks made here, outside the timing)."""
    if name == "trmm":
        alpha, A, B = args
        L = np.ascontiguousarray(np.tril(A, -1).T)
        out = np.empty_like(B)

        def run():
            np.matmul(L, B, out=out)
            np.add(out, B, out=out)
            np.multiply(out, np.float32(alpha), out=out)
            return (out,)
        return run
    if name in ("syrk", "syr2k"):
        alpha, beta, A, *rest = args
        B, C = (rest[0], rest[1]) if name == "syr2k" else (None, rest[0])
        lower = np.tril(np.ones_like(C))
        out, scratch = np.empty_like(C), np.empty_like(C)
        other = A.copy()  # A @ A.T would take numpy's syrk path: the full product is the peer

        def run():
            if B is None:
                np.matmul(A, other.T, out=out)
            else:
                np.matmul(A, B.T, out=out)
                np.matmul(B, A.T, out=scratch)
                np.add(out, scratch, out=out)
            np.multiply(out, np.float32(alpha), out=out)
            np.multiply(C, np.float32(beta), out=scratch)
            np.add(out, scratch, out=out)
            np.multiply(out, lower, out=out)
            return (out,)
        return run
    if name == "symm":
        alpha, beta, A, B, C = args
        upper = np.triu_indices(A.shape[0], 1)
        S, out = np.empty_like(A), np.empty_like(C)

        def run():
            np.copyto(S, A)
            S[upper] = A.T[upper]
            np.matmul(S, B, out=out)
            np.multiply(out, np.float32(alpha), out=out)
            np.add(out, np.float32(beta) * C, out=out)
            return (out,)
        return run
    if name == "banded":
        Band, x = args
        n, k = Band.shape
        out = np.empty_like(x)

        def run():
            out[:] = 0
            for d in range(k):  # diagonal d holds A[i, i + d - k // 2]
                shift = d - k // 2
                lo, hi = max(0, -shift), min(n, n - shift)
                out[lo:hi] += Band[lo:hi, d] * x[lo + shift:hi + shift]
            return (out,)
        return run
    Q, K, V = args
    t = Q.shape[0]
    mask = np.triu(np.ones((t, t), dtype=bool), 1)

    def run():
        S = Q @ K.T
        S[mask] = -np.inf
        S -= S.max(axis=1, keepdims=True)
        np.exp(S, out=S)
        S /= S.sum(axis=1, keepdims=True)
        return (S @ V,)
    return run


def scipy_peer(name: str, args: tuple):
    """SciPy's BLAS routine for the kernel (``None`` where it has none or SciPy is not
    installed); its outputs masked like polyc's where the routine leaves the other
    triangle as it was."""
    try:
        from scipy.linalg import blas
    except ImportError:
        return None
    # BLAS is column-major: each routine gets its operands as column-major views (the
    # transposed problem where that avoids a copy per call), its result a C-order view.
    if name == "trmm":
        alpha, A, B = args
        Af = np.asfortranarray(A)

        def run():  # (alpha unit-lower(A)^T B)^T = alpha B^T unit-lower(A)
            return (blas.strmm(alpha, Af, B.T, side=1, lower=1, trans_a=0, diag=1).T,)
        return run
    if name in ("syrk", "syr2k"):
        alpha, beta, A, *rest = args
        B, C = (rest[0], rest[1]) if name == "syr2k" else (None, rest[0])
        lower = np.tril(np.ones_like(C))
        Cf = np.asfortranarray(C)

        def run():  # A A^T from A^T's column-major view: trans=1
            if B is None:
                out = blas.ssyrk(alpha, A.T, beta=beta, c=Cf, trans=1, lower=1)
            else:
                out = blas.ssyr2k(alpha, A.T, B.T, beta=beta, c=Cf, trans=1, lower=1)
            return (np.multiply(out, lower),)
        return run
    if name == "symm":
        alpha, beta, A, B, C = args
        Af = np.asfortranarray(A)

        def run():  # (alpha S B + beta C)^T = alpha B^T S + beta C^T
            return (blas.ssymm(alpha, Af, B.T, beta=beta, c=C.T, side=1, lower=1).T,)
        return run
    if name == "banded":
        Band, x = args
        n, k = Band.shape
        kl = ku = k // 2
        ab = np.zeros((kl + ku + 1, n), dtype=np.float32, order="F")
        for d in range(k):  # LAPACK band storage: ab[ku + i - j, j] = A[i, j]
            shift = d - k // 2
            lo, hi = max(0, -shift), min(n, n - shift)
            ab[ku - shift, lo + shift:hi + shift] = Band[lo:hi, d]

        def run():
            return (blas.sgbmv(n, n, kl, ku, 1.0, ab, x),)
        return run
    return None


def torch_peer(name: str, args: tuple, torch):
    """torch's own operator where it has one: causal attention
    (``scaled_dot_product_attention``, unscaled); ``None`` for the others."""
    if name != "causal_attention" or torch is None:
        return None
    Q, K, V = (torch.from_numpy(a)[None, None] for a in args)
    attend = torch.nn.functional.scaled_dot_product_attention

    def run():
        return (attend(Q, K, V, is_causal=True, scale=1.0)[0, 0].numpy(),)
    return run
