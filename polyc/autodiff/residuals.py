"""The backward with saved forward values: a forward that also returns what the backward
would recompute at the price of a reduction, and a backward that takes it with the
outputs it reads.

``polyc.grad``'s backward recomputes every forward value it reads, so that it needs
nothing but the inputs; for the mlp's mask that is the whole matrix product again.
Where the forward runs anyway (a training step through :func:`polyc.to_torch`), its
values can be kept instead, as torch keeps its saved tensors::

    def mlp_forward(X, W, b) -> (Y, Y_0) {          Y_0: the product, before bias and relu
      Y_0(m, n) +=! X(m, k) * W(k, n) ...
      Y(m, n) = fmax(Y_0(m, n) + b(n), 0.0) ...
    }
    def mlp_backward(X, W, b, d_Y, Y_0) -> (d_X, d_W, d_b) { ... no product ... }

What the backward takes, besides the inputs and the cotangents:

- **The outputs it reads**, from the forward's own results (nothing more to write):
  an output the backward reads directly, and the values an output determines
  (:func:`_read_outputs`). Where an output is the last value of a statement
  ``Y = n / w`` whose recomputation would call the math library (softmax: ``n`` is
  ``exp(X - max)``), the backward reads ``Y`` for ``n / w`` and ``Y * w`` for ``n``
  instead of recomputing it, as torch's softmax backward reads its output. Only a
  quotient: ``n = Y * w`` is exact to two roundings, while ``Y / w`` for ``Y = n * w``
  fails where ``w`` is zero and ``Y - w`` for ``Y = n + w`` cancels.
- **The residuals**: the forward values it reads, or recomputes another from, that a
  statement summing over indices computes (the product, layer norm's mean and sum of
  squares, softmax's sum), and that are not outputs. Elementwise values are
  recomputed from the inputs, the outputs and the residuals, which costs about what
  reading them back would.
"""
from __future__ import annotations

import dataclasses

from polyc.autodiff.adjoint import ReverseSweep
from polyc.autodiff.derivatives import mul
from polyc.lang import ir
from polyc.lang.builtins import is_library_call


def residual_ops(op: ir.Op, wrt=None) -> tuple[ir.Op, ir.Op]:
    """``(forward, backward)``: ``forward`` takes ``op``'s inputs and returns its outputs,
    then the residuals; ``backward`` takes ``op``'s inputs, one cotangent per output, the
    outputs it reads (in ``op``'s order, under their names), then the residuals, and
    returns what ``polyc.grad(op, wrt)`` returns. Not yet checked."""
    sweep = ReverseSweep(op, wrt)
    gradients = sweep.sweep()
    final = {version: output for output, version in sweep.final.items()}
    _read_outputs(sweep)
    recomputed, saved = sweep.recomputed(save=lambda version: version in final or any(
        s.reduction_indices for s in sweep.recompute[version]))
    names = dict(final)  # each output's last version takes the output's name
    outputs = {t.name for t in op.outputs}
    for step in sweep.steps:  # an earlier version named after an output is renamed
        version = step.version.name
        if version in outputs and version not in final:
            names[version] = sweep.fresh(f"{version}_0")
    taken = tuple(dataclasses.replace(t, role=ir.INPUT) for t in op.outputs
                  if sweep.final[t.name] in saved)
    residuals = tuple(dataclasses.replace(sweep.tensors[v], name=names.get(v, v),
                                          role=ir.INPUT) for v in saved if v not in final)
    backward = [_renamed(s, names) for s in recomputed + sweep.helpers + sweep.backward]
    forward = [_renamed(s, names) for s in sweep.forward()]
    return (ir.Op(name=f"{op.name}_forward", sizes=op.sizes, inputs=op.inputs,
                  outputs=op.outputs + tuple(dataclasses.replace(r, role=ir.OUTPUT)
                                             for r in residuals),
                  temporaries=(), statements=tuple(forward)),
            ir.Op(name=f"{op.name}_backward", sizes=op.sizes,
                  inputs=op.inputs + sweep.cotangents + taken + residuals,
                  outputs=gradients, temporaries=(), statements=tuple(backward)))


def _read_outputs(sweep: ReverseSweep) -> None:
    """Rewrite the backward's statements to read the values the outputs determine (see
    the module docstring) instead of recomputing them with the math library."""
    for version in sweep.final.values():
        step = next(s for s in sweep.steps if s.version.name == version)
        quotient = _costly_quotient(sweep, step)
        if quotient is not None:
            replacement = _from_output(step, quotient)
            for statements in (sweep.helpers, sweep.backward):
                statements[:] = [dataclasses.replace(s, rhs=ir.rewrite(s.rhs, replacement))
                                 for s in statements]


def _from_output(step, quotient: ir.Binary):
    """For :func:`ir.rewrite`: ``n / w`` (at any indices) as the output ``Y``, ``n`` as
    ``Y * w``, where ``step`` computes ``Y = n / w``."""
    own = step.statement.indices
    free = frozenset(own)

    def replacement(e: ir.Expr) -> ir.Expr | None:
        for pattern in (quotient, quotient.lhs):
            binding: dict[str, ir.Expr] = {}
            if _match(pattern, e, free, binding) and len(binding) == len(own):
                stored = ir.Read(step.version.type, step.version.name,
                                 tuple(binding[i] for i in own))
                return stored if pattern is quotient else mul(
                    stored, ir.substitute_indices(quotient.rhs, binding))
        return None
    return replacement


def _costly_quotient(sweep: ReverseSweep, step) -> ir.Binary | None:
    """The right-hand side ``n / w`` of the statement that computes an output's last
    value, where the backward may read ``n`` back as ``Y * w``: the statement writes
    every element of the output elementwise, ``n`` reads a tensor of the output's shape
    at the statement's own indices (so that wherever the backward evaluates ``n``, the
    output holds its quotient), and recomputing ``n`` calls the math library."""
    statement, version = step.statement, step.version
    rhs = statement.rhs
    if not (statement.op == "=" and not statement.reduction_indices and step.covers
            and isinstance(rhs, ir.Binary) and rhs.op == "/"
            and version.type.is_float and rhs.type == rhs.lhs.type == version.type):
        return None
    anchored = any(isinstance(e, ir.Read) and len(e.indices) == len(statement.indices)
                   and all(isinstance(i, ir.Index) and i.name == name
                           for i, name in zip(e.indices, statement.indices))
                   and sweep.tensors[e.tensor].shape == version.shape
                   for e in ir.walk(rhs.lhs))
    return rhs if anchored and _calls_library(sweep, rhs.lhs) else None


def _calls_library(sweep: ReverseSweep, expr: ir.Expr) -> bool:
    """Whether evaluating ``expr`` calls the math library, directly or through the
    elementwise forward values it reads (which the backward would recompute)."""
    for e in ir.walk(expr):
        if isinstance(e, ir.Call) and is_library_call(e.function):
            return True
        if isinstance(e, ir.Read) and any(
                not s.reduction_indices and _calls_library(sweep, s.rhs)
                for s in sweep.recompute.get(e.tensor, ())):
            return True
    return False


_CHILDREN = frozenset({"indices", "operand", "lhs", "rhs", "cond", "then", "other", "args"})


def _match(pattern: ir.Expr, expr: ir.Expr, free: frozenset[str],
           binding: dict[str, ir.Expr]) -> bool:
    """Whether ``expr`` is ``pattern`` with each index named in ``free`` replaced by one
    expression throughout (recorded in ``binding``)."""
    if isinstance(pattern, ir.Index) and pattern.name in free:
        return binding.setdefault(pattern.name, expr) == expr
    if type(pattern) is not type(expr) or any(
            getattr(pattern, f.name) != getattr(expr, f.name)
            for f in dataclasses.fields(pattern) if f.name not in _CHILDREN):
        return False
    mine, theirs = ir.children(pattern), ir.children(expr)
    return len(mine) == len(theirs) and all(
        _match(p, e, free, binding) for p, e in zip(mine, theirs))


def _renamed(statement: ir.Statement, names: dict[str, str]) -> ir.Statement:
    return dataclasses.replace(statement, tensor=names.get(statement.tensor,
                                                           statement.tensor),
                               rhs=ir.renamed_reads(statement.rhs, names))
