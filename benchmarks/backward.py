"""Backward operators, for ``run.py``'s "backward" section: ``polyc.grad`` of the benchmark
kernels against torch autograd (the backward alone, activations saved by the forward;
and forward + backward) and numpy where a direct formula exists.

``polyc.grad(op)(*inputs, *cotangents)`` recomputes the forward values the backward
needs (its signature takes no activations), so its fair peer is torch's forward +
backward; torch's backward alone is the bound a saved-activations API could reach.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from kernels import BY_NAME, Bench, _f32, _tc


@dataclass(frozen=True)
class Backward:
    name: str
    bench: Bench                  # the forward: source, sizes, inputs
    torch_forward: Callable       # torch tensors -> the output
    numpy: Callable | None = None  # (inputs, cotangent) -> gradients, a direct formula
    note: str = ""
    wrt: tuple[str, ...] | None = None  # polyc.grad's wrt (None: every floating input)


def _relu_mask_grads(x, w, b, dy):
    """The mlp's gradients by hand: the forward product again for the mask."""
    y = x @ w
    y += b
    g = dy * (y > 0)
    return g @ w.T, x.T @ g, g.sum(axis=0)


EMBEDDING = Bench(
    name="embedding",
    formula="O[b,d] = sum_l E[I[b,l], d]",
    source=_tc("""
        def embedding(float(V, D) E, int64(B, L) I) -> (O) {
          O(b, d) +=! E(I(b, l), d)
        }
    """),
    sizes=dict(V=2000, D=64, B=32, L=16),
    quick_sizes=dict(V=500, D=64, B=16, L=8),
    tiny_sizes=dict(V=7, D=3, B=2, L=2),
    inputs=lambda s, rng: (_f32(rng, s["V"], s["D"]),
                           rng.integers(0, s["V"], size=(s["B"], s["L"]))),
    outputs=lambda s: [(s["B"], s["D"])],
    numpy=lambda a, o: None,
    reference=lambda E, I: (np.asarray(E, np.float64)[I].sum(axis=1),),
    kind="memory",
    work=lambda s: 4 * s["B"] * s["L"] * s["D"],
)


def _torch():
    import torch

    return torch


BACKWARD = (
    Backward("gemm", BY_NAME["gemm"], lambda a, b: a @ b,
             numpy=lambda args, dy: (dy @ args[1].T, args[0].T @ dy)),
    Backward("mlp", BY_NAME["mlp"], lambda x, w, b: _torch().relu(x @ w + b),
             numpy=lambda args, dy: _relu_mask_grads(*args, dy),
             note="polyc and numpy recompute X W for the mask"),
    Backward("conv2d", BY_NAME["conv2d"],
             lambda x, f: _torch().nn.functional.conv2d(x, f),
             note="data and weight gradients"),
    Backward("conv2d data", BY_NAME["conv2d"],
             lambda x, f: _torch().nn.functional.conv2d(x, f), wrt=("I",),
             note="the data gradient alone (wrt=I): window rows bounded, columns read a "
                  "zero-padded cotangent"),
    Backward("conv2d weight", BY_NAME["conv2d"],
             lambda x, f: _torch().nn.functional.conv2d(x, f), wrt=("F",),
             note="the weight gradient alone (wrt=F): computed with its windows outermost"),
    Backward("softmax", BY_NAME["softmax"], lambda x: _torch().softmax(x, dim=1)),
    Backward("layernorm", BY_NAME["layernorm"],
             lambda x, g, b, eps: _torch().nn.functional.layer_norm(
                 x, (x.shape[1],), g, b, eps),
             note="polyc also differentiates eps"),
    Backward("embedding", EMBEDDING,
             lambda e, i: _torch().nn.functional.embedding(i, e).sum(dim=1),
             note="polyc's gather adjoint runs as a scatter-add (selected indices)"),
)
BACKWARD_BY_NAME = {b.name: b for b in BACKWARD}
