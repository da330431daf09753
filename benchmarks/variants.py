"""Equivalent spellings of one operator, for ``run.py``'s "spellings" section.

Each group is one operator written several ways a user might write it: the division
inside the sum or after it, temporaries or none, a select or ``fmax``. polyc should
run them all at the speed of the best; the section reports each spelling's time and
its ratio to the fastest. Inputs and the float64 reference come from the benchmark
kernel of the same name (``kernels.py``) unless the group brings its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from textwrap import dedent

from kernels import BY_NAME, Bench, _d, _f32


def _tc(text: str) -> str:
    return dedent(text).strip() + "\n"


def kernel_key(op) -> str:
    """``op``'s C up to its comments and the names of its tensors and of itself: variants
    with the same key run the same kernel (one spelling's temporary ``e`` is another's
    ``exp_S1``, which polyc introduced; a fusion strategy is named in a comment)."""
    compilation = op.compilation()
    text = re.sub(r"/\*.*?\*/", "", compilation.c_source.text, flags=re.S)
    text = text.replace(op.name, "\0op")
    tensors = set(compilation.program.op.tensors)
    placeholders: dict[str, str] = {}
    return re.sub(r"[A-Za-z_]\w*", lambda m: placeholders.setdefault(
        m.group(0), f"\0t{len(placeholders)}") if m.group(0) in tensors else m.group(0), text)


def alike(variants: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """``(label, operator)`` variants, one per distinct kernel (:func:`kernel_key`): those
    that compile to the same C share the first one's operator under their labels joined
    by ``" = "`` (``"default = max"``), so that timing noise never tells identical
    kernels apart (two copies of one softmax kernel, timed apart, differed by 1.19 on a
    2-core VM)."""
    kernels: dict[str, list] = {}
    for label, op in variants:
        kernels.setdefault(kernel_key(op), [[], op])[0].append(label)
    return [(" = ".join(labels), op) for labels, op in kernels.values()]


@dataclass(frozen=True)
class Spellings:
    name: str
    bench: Bench                          # sizes, inputs, outputs, reference
    sources: tuple[tuple[str, str], ...]  # (label, TC source)


SCALED_MATMUL = Bench(
    name="scaled_matmul",
    formula="C = alpha A B",
    source="",
    sizes=dict(M=1024, N=1024, K=1024),
    quick_sizes=dict(M=256, N=256, K=256),
    tiny_sizes=dict(M=7, N=13, K=5),
    inputs=lambda s, rng: (1.5, _f32(rng, s["M"], s["K"]), _f32(rng, s["K"], s["N"])),
    outputs=lambda s: [(s["M"], s["N"])],
    numpy=lambda a, o: None,
    reference=lambda alpha, A, B: (alpha * (_d(A) @ _d(B)),),
    kind="compute",
    work=lambda s: 2 * s["M"] * s["N"] * s["K"],
)

SPELLINGS = (
    Spellings("layernorm", BY_NAME["layernorm"], (
        ("benchmark's", BY_NAME["layernorm"].source),
        ("/ D in the sums, rsqrt", _tc("""
            def layernorm(float(N, D) X, float(D) gamma, float(D) beta, float eps) -> (Y) {
              mean(n) +=! X(n, d) / D
              var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) / D
              Y(n, d) = (X(n, d) - mean(n)) * rsqrt(var(n) + eps) * gamma(d) + beta(d)
            }""")),
        ("/ D in the sums, / sqrt", _tc("""
            def layernorm(float(N, D) X, float(D) gamma, float(D) beta, float eps) -> (Y) {
              mean(n) +=! X(n, d) / D
              var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) / D
              Y(n, d) = (X(n, d) - mean(n)) / sqrt(var(n) + eps) * gamma(d) + beta(d)
            }""")),
        ("centred temporary", _tc("""
            def layernorm(float(N, D) X, float(D) gamma, float(D) beta, float eps) -> (Y) {
              mean(n) +=! X(n, d) / D
              xc(n, d) = X(n, d) - mean(n)
              var(n) +=! xc(n, d) * xc(n, d) / D
              Y(n, d) = xc(n, d) * rsqrt(var(n) + eps) * gamma(d) + beta(d)
            }""")),
    )),
    Spellings("moments", BY_NAME["moments"], (
        ("benchmark's", BY_NAME["moments"].source),
        ("/ D in the sums", _tc("""
            def moments(float(N, D) X) -> (mean, var) {
              mean(n) +=! X(n, d) / D
              var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) / D
            }""")),
        ("* (1.0 / D) in the sums", _tc("""
            def moments(float(N, D) X) -> (mean, var) {
              mean(n) +=! X(n, d) * (1.0 / D)
              var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) * (1.0 / D)
            }""")),
    )),
    Spellings("softmax", BY_NAME["softmax"], (
        ("benchmark's", BY_NAME["softmax"].source),
        ("exp twice, no temporary", _tc("""
            def softmax(float(N, D) X) -> (Y) {
              row_max(n) max=! X(n, d)
              row_sum(n) +=! exp(X(n, d) - row_max(n))
              Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
            }""")),
        ("written into Y, then divided", _tc("""
            def softmax(float(N, D) X) -> (Y) {
              row_max(n) max=! X(n, d)
              Y(n, d) = exp(X(n, d) - row_max(n))
              row_sum(n) +=! Y(n, d)
              Y(n, d) = Y(n, d) / row_sum(n)
            }""")),
    )),
    Spellings("mlp", BY_NAME["mlp"], (
        ("benchmark's", BY_NAME["mlp"].source),
        ("relu as a select", _tc("""
            def mlp(float(M, K) X, float(K, N) W, float(N) b) -> (Y) {
              Y(m, n) +=! X(m, k) * W(k, n)
              Y(m, n) = Y(m, n) + b(n) > 0 ? Y(m, n) + b(n) : 0
            }""")),
        ("product in a temporary", _tc("""
            def mlp(float(M, K) X, float(K, N) W, float(N) b) -> (Y) {
              T(m, n) +=! X(m, k) * W(k, n)
              Y(m, n) = fmax(T(m, n) + b(n), 0)
            }""")),
    )),
    Spellings("scaled_matmul", SCALED_MATMUL, (
        ("alpha in the sum", _tc("""
            def smm(float alpha, float(M, K) A, float(K, N) B) -> (C) {
              C(m, n) +=! alpha * A(m, k) * B(k, n)
            }""")),
        ("alpha after the sum", _tc("""
            def smm(float alpha, float(M, K) A, float(K, N) B) -> (C) {
              C(m, n) +=! A(m, k) * B(k, n)
              C(m, n) = alpha * C(m, n)
            }""")),
        ("alpha on B", _tc("""
            def smm(float alpha, float(M, K) A, float(K, N) B) -> (C) {
              C(m, n) +=! A(m, k) * (alpha * B(k, n))
            }""")),
    )),
)

SPELLINGS_BY_NAME: dict[str, Spellings] = {s.name: s for s in SPELLINGS}
FUSION_STRATEGIES = ("default", "min", "max")
