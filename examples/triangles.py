"""Triangular and banded operators: ranges that depend on other indices.

A symmetric rank-k update computes only the lower triangle of ``alpha * A @ A.T +
beta * C``; a causal attention scores only the keys at or before each query. Written
with ``where`` bounds in the other indices, polyc's domains are those triangles: half
the work of the full matrix, tiled, register-blocked and shared between threads as
they finish. The same triangle chosen by value, with a select on the indices, compiles
to the same C. Run with ``python examples/triangles.py [N]``.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import polyc

# The lower triangle as the domain: j runs up to the diagonal.
SYRK = """
def syrk(float alpha, float beta, float(N, M) A, float(N, N) C) -> (D) {
  D(i, j) +=! A(i, k) * A(j, k) where j in 0:i + 1
  D(i, j) = alpha * D(i, j) + beta * C(i, j) where j in 0:i + 1
}
"""

# The same triangle by value: polyc splits the selects at j <= i and drops the zeros.
SYRK_BY_VALUE = """
def syrk(float alpha, float beta, float(N, M) A, float(N, N) C) -> (D) {
  D(i, j) +=! j <= i ? A(i, k) * A(j, k) : 0.0
  D(i, j) = j <= i ? alpha * D(i, j) + beta * C(i, j) : 0.0
}
"""


# Causal attention in Python: each query i sees the keys j <= i.
@polyc.op
def causal_attention(Q: polyc.f32["T", "D"], K: polyc.f32["T", "D"], V: polyc.f32["T", "E"]):
    with polyc.where(j in range(0, i + 1)):
        S[i, j] += Q[i, d] * K[j, d]
        m[i] = polyc.max(S[i, j])
        P[i, j] = exp(S[i, j] - m[i])
        l[i] += P[i, j]
        O[i, e] += P[i, j] * V[j, e]
    O[i, e] = O[i, e] / l[i]
    return O


def median_ms(fn, repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * sorted(times)[repeat // 2]


def main(n: int = 600) -> dict[str, float]:
    """Check both syrk spellings and the attention against numpy in float64 and
    return the largest relative errors."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n // 2 + 1)).astype(np.float32)
    C = rng.standard_normal((n, n)).astype(np.float32)
    want = np.tril(1.5 * A.astype(np.float64) @ A.T.astype(np.float64) + 1.2 * C)
    errors = {}
    for label, source in (("where", SYRK), ("select", SYRK_BY_VALUE)):
        syrk = polyc.define(source)
        got = syrk(1.5, 1.2, A, C)
        errors[f"syrk ({label})"] = float(np.abs(got - want).max() / np.abs(want).max())
        print(f"syrk, {label:6} spelling, N = {n}: {median_ms(lambda: syrk(1.5, 1.2, A, C)):7.2f} ms")
    full = lambda: 1.5 * A @ A.T + 1.2 * C  # noqa: E731  (numpy: the whole matrix)
    print(f"numpy's full-matrix formula:       {median_ms(full):7.2f} ms")

    t = max(1, n // 4)
    Q, K, V = (rng.standard_normal((t, 32)).astype(np.float32) for _ in range(3))
    scores = Q.astype(np.float64) @ K.T.astype(np.float64)
    scores[np.triu_indices(t, 1)] = -np.inf
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    want = (weights / weights.sum(axis=1, keepdims=True)) @ V.astype(np.float64)
    got = causal_attention(Q, K, V)
    errors["causal attention"] = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"causal attention, T = {t}: {median_ms(lambda: causal_attention(Q, K, V)):7.2f} ms")
    print("\nhow polyc sees the triangle:")
    explained = str(polyc.define(SYRK).explain())
    for line in explained.splitlines():
        if "S0[i, j, k]" in line and "->" in line and ":" in line and "{" in line:
            print(" ", line.strip())
            break
    for stage, error in errors.items():
        print(f"{stage}: largest error {error:.1e} of the largest element")
    return errors


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 600)
