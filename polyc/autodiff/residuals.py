"""The backward with saved forward values: a forward that also returns what the backward
would recompute at the price of a reduction, and a backward that takes it.

``polyc.grad``'s backward recomputes every forward value it reads, so that it needs
nothing but the inputs; for the mlp's mask that is the whole matrix product again.
Where the forward runs anyway (a training step through :func:`polyc.to_torch`), its
values can be kept instead, as torch keeps its saved tensors::

    def mlp_forward(X, W, b) -> (Y, Y_0) {          Y_0: the product, before bias and relu
      Y_0(m, n) +=! X(m, k) * W(k, n) ...
      Y(m, n) = fmax(Y_0(m, n) + b(n), 0.0) ...
    }
    def mlp_backward(X, W, b, d_Y, Y_0) -> (d_X, d_W, d_b) { ... no product ... }

A forward value is kept (a residual) when the backward reads it, or reads a value
recomputed from it, and a statement that sums over indices computes it (a reduction:
the product, layer norm's mean and sum of squares, softmax's maximum and sum);
elementwise values are recomputed from the inputs and the residuals, which costs about
what reading them back would. A value that is an output of the operator is recomputed
too, so that the forward's outputs stay the operator's own.
"""
from __future__ import annotations

import dataclasses

from polyc.autodiff.adjoint import ReverseSweep
from polyc.lang import ir


def residual_ops(op: ir.Op, wrt=None) -> tuple[ir.Op, ir.Op]:
    """``(forward, backward)``: ``forward`` takes ``op``'s inputs and returns its outputs,
    then the residuals; ``backward`` takes ``op``'s inputs, one cotangent per output, then
    the residuals, and returns what ``polyc.grad(op, wrt)`` returns. Not yet checked."""
    sweep = ReverseSweep(op, wrt)
    gradients = sweep.sweep()
    final = {version: output for output, version in sweep.final.items()}
    recomputed, saved = sweep.recomputed(save=lambda version: version not in final and any(
        s.reduction_indices for s in sweep.recompute[version]))
    names = dict(final)  # each output's last version takes the output's name
    outputs = {t.name for t in op.outputs}
    for step in sweep.steps:  # an earlier version named after an output is renamed
        version = step.version.name
        if version in outputs and version not in final:
            names[version] = sweep.fresh(f"{version}_0")
    residuals = tuple(dataclasses.replace(sweep.tensors[v], name=names.get(v, v),
                                          role=ir.INPUT) for v in saved)
    backward = [_renamed(s, names) for s in recomputed + sweep.helpers + sweep.backward]
    forward = [_renamed(s, names) for s in sweep.forward()]
    return (ir.Op(name=f"{op.name}_forward", sizes=op.sizes, inputs=op.inputs,
                  outputs=op.outputs + tuple(dataclasses.replace(r, role=ir.OUTPUT)
                                             for r in residuals),
                  temporaries=(), statements=tuple(forward)),
            ir.Op(name=f"{op.name}_backward", sizes=op.sizes,
                  inputs=op.inputs + sweep.cotangents + residuals, outputs=gradients,
                  temporaries=(), statements=tuple(backward)))


def _renamed(statement: ir.Statement, names: dict[str, str]) -> ir.Statement:
    return dataclasses.replace(statement, tensor=names.get(statement.tensor,
                                                           statement.tensor),
                               rhs=ir.renamed_reads(statement.rhs, names))
