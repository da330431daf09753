"""polyc operators as torch ops: ``torch.library`` custom ops with shapes and gradients.

    f = polyc.to_torch(op)                 # the custom op polyc::<name> (an OpOverload)
    Y = f(X, W, b)                         # eager; Y.backward() works
    torch.library.opcheck(f, (X, W, b))
    torch.compile(model, fullgraph=True, dynamic=True)

What is registered, from the operator alone:

- the kernel: the operator called on the tensors (detached, made contiguous; polyc's CPU
  kernel through its launcher, :mod:`polyc.jit.torch_tensors`);
- a fake implementation: the outputs' shapes from the sizes the inputs' shapes bind,
  symbolically (``torch.sym_min``/``sym_max`` for ``min``/``max`` extents), so that
  ``torch.compile(dynamic=True)`` traces once for all shapes;
- the autograd formula: the forward keeps the inputs, the outputs the backward reads
  (softmax's, instead of its exponentials again) and the values the backward would
  recompute with a reduction (the mlp's product, layer norm's statistics): it runs
  ``polyc::<name>_forward`` and the backward ``polyc::<name>_backward``
  (:func:`polyc.grad_with_residuals`), for the inputs that require grad in that call
  only (other subsets get ops of their own, numbered: ``polyc::<name>_backward_2``).
  A backward that must be differentiable again (``create_graph=True``: double
  backward) runs :func:`polyc.grad` of the operator instead, registered as
  ``polyc::<name>_grad`` with its own formula, which recomputes what it needs from
  the inputs.

The op is defined and its kernels registered with ``torch.library``'s low-level
API (``Library.define``/``impl``, ``register_fake``, an autograd kernel of its own), not
with ``torch.library.custom_op``, whose Python wrapper checks every call's outputs for
aliasing (polyc's kernels always return fresh tensors) and whose autograd kernel keeps
per-call records: the same op cost 21-23 µs a call that way, 10-11 µs this way. The
kernel is registered for every backend (``CompositeExplicitAutograd``), so that a CUDA
tensor reaches polyc and gets its :class:`~polyc.errors.ArgumentError`, not torch's
"could not run" message.

Schema: a tensor input is ``Tensor``, a 0-rank one a ``float``, ``int`` or ``bool``
argument; outputs are ``Tensor``\\ s. Gradients flow to floating-point tensor inputs
(scalars are Python numbers in torch's schema and get none). The same op object is
returned for the same operator; a different operator with a name already taken gets a
numbered name (``polyc::matmul_2``).

torch stays optional: importing polyc never imports torch; this module does, on first
use, and says how to install it when it is missing.
"""
from __future__ import annotations

import threading

from polyc.errors import ConfigurationError
from polyc.lang import ir

_LOCK = threading.RLock()
_OPS: dict[str, object] = {}    # the operator's TC text -> its custom op
_NAMES: set[str] = set()
_LIBRARIES: list = []           # the torch.library.Library: its registrations live with it


def to_torch(operator, eager_backward: bool = True):
    """The ``torch.library`` custom op of ``operator`` (see the module docstring).
    ``eager_backward``: register the backward op now (else on the first backward, which
    is how the backward's own backward is registered: each order when first needed)."""
    return _to_torch(operator, eager_backward, frozenset())


def _to_torch(operator, eager_backward: bool, tensor_numbers: frozenset[str]):
    """:func:`to_torch`, with the 0-rank inputs named in ``tensor_numbers`` taken as
    0-dimensional tensors rather than numbers (a backward's cotangent of a 0-rank
    output: torch passes a tensor, which a traced graph cannot turn into a number)."""
    torch = _import_torch()
    with _LOCK:
        key = str(operator) + repr(operator.options) + repr(sorted(tensor_numbers))
        op = _OPS.get(key)
        if op is None:
            op = _OPS[key] = _register(torch, operator, eager_backward, tensor_numbers)
        return op


def _import_torch():
    try:
        import torch
    except ImportError as error:
        raise ConfigurationError(f"polyc.to_torch needs torch ({error}): pip install "
                                 f"'polyc[torch]'") from None
    return torch


def _register(torch, operator, eager_backward: bool, tensor_numbers: frozenset[str]):
    library = _library(torch)
    name = _free_name(torch, operator.name)
    inputs, outputs = operator.ir.inputs, operator.ir.outputs
    schema = "(" + ", ".join(
        f"{'Tensor' if t.name in tensor_numbers else _schema_type(t)} {t.name}"
        for t in inputs) + ") -> " + (
        "Tensor" if len(outputs) == 1 else "(" + ", ".join("Tensor" for _ in outputs) + ")")
    tensor = torch.Tensor

    def kernel(*args):
        # below autograd: a tensor that requires grad is passed detached, a strided view
        # as a contiguous copy (the plain path refuses both, rightly, for the caller)
        return operator(*[a.detach().contiguous() if isinstance(a, tensor) and (
            a.requires_grad or not a.is_contiguous()) else a for a in args])

    library.define(name + schema)
    library.impl(name, kernel, "CompositeExplicitAutograd")
    torch.library.register_fake(f"polyc::{name}", _fake(torch, operator), lib=library)
    op = getattr(torch.ops.polyc, name).default
    differentiable = tuple(t.name for t in inputs if t.rank and t.type.is_float)
    if differentiable:
        _register_autograd(torch, op, operator, differentiable, eager_backward)
    return op


def _library(torch):
    if not _LIBRARIES:
        _LIBRARIES.append(torch.library.Library("polyc", "FRAGMENT"))
    return _LIBRARIES[0]


def _free_name(torch, base: str) -> str:
    """``base``, or ``base_2``, ``base_3``...: the first that neither this module nor
    anyone else in the process registered in the ``polyc`` namespace."""
    name, k = base, 2
    while name in _NAMES or hasattr(torch.ops.polyc, name):
        name, k = f"{base}_{k}", k + 1
    _NAMES.add(name)
    return name


def _schema_type(tensor: ir.Tensor) -> str:
    if tensor.rank:
        return "Tensor"
    if tensor.type.is_float:
        return "float"
    return "bool" if tensor.type.kind == "bool" else "int"


def _fake(torch, operator):
    """Outputs shaped by the sizes the inputs bind (symbolic under dynamic shapes).

    An output declared with the shape of an input (a gradient ``d_X`` and its ``X``, a
    layer's ``Y(N, D)`` and its ``X(N, D)``) takes that input's shape as it comes, and
    nothing is checked here: the kernel checks every call. Under ``torch.compile`` an
    error raised while tracing reaches the caller as torch's ``TorchRuntimeError``, and a
    gradient shaped by another binding of its sizes than its input's (``D`` from ``X``
    for ``d_g(D)`` beside ``g(D)``) fails torch's own check of gradient shapes; traced
    this way, the call runs and polyc's :class:`~polyc.errors.ArgumentError` reaches
    the caller from the kernel."""
    dtypes = [getattr(torch, t.type.numpy_name) for t in operator.ir.outputs]
    inputs = [t.shape if t.rank else None for t in operator.ir.inputs]  # 0-rank: numbers
    same = [next((k for k, shape in enumerate(inputs) if shape == t.shape), None)
            for t in operator.ir.outputs]

    def fake(*args):
        shapes = operator.output_shapes(
            *(a.shape if isinstance(a, torch.Tensor) else () for a in args),
            minimum=torch.sym_min, maximum=torch.sym_max)
        shapes = [shape if k is None else args[k].shape for shape, k in zip(shapes, same)]
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), "cpu")
        results = tuple(torch.empty(shape, dtype=dtype, device=device)
                        for shape, dtype in zip(shapes, dtypes))
        return results[0] if len(results) == 1 else results

    return fake


def _register_autograd(torch, op, operator, differentiable: tuple[str, ...],
                       eager: bool) -> None:
    """``op``'s gradient through ``polyc.grad(operator)``, registered as an op itself.

    The kernel at torch's ``Autograd`` key does what ``torch.library.register_autograd``'s
    does, less its per-call records: without a tensor that
    requires grad (or under ``no_grad``) it runs the op below autograd; else an
    ``autograd.Function`` runs it, keeps what the backward needs and calls the backward
    op."""
    from polyc.api import grad, grad_with_residuals

    made: dict = {}  # (kind, the inputs differentiated) -> its ops, each made once

    def backward_op(wrt: tuple[str, ...]):
        """The recomputing backward: differentiable again (double backward)."""
        if ("grad", wrt) not in made:
            gradient = grad(operator, wrt=wrt)
            made["grad", wrt] = _to_torch(gradient, False, cotangent_numbers(gradient))
        return made["grad", wrt]

    def cotangent_numbers(backward) -> frozenset[str]:
        """The backward's cotangents of 0-rank outputs (after the forward's inputs)."""
        cotangents = backward.ir.inputs[len(names):len(names) + count]
        return frozenset(t.name for t, o in zip(cotangents, operator.ir.outputs) if not o.rank)

    def residual_ops(wrt: tuple[str, ...]):
        """The forward that keeps residuals, the backward that takes them, and the pair
        (what picks the saved values from the forward's results); ``None`` where the
        backward takes nothing."""
        if ("residuals", wrt) not in made:
            pair = grad_with_residuals(operator, wrt=wrt)
            takes = len(pair.backward.ir.inputs) > len(names) + count
            made["residuals", wrt] = (
                to_torch(pair.forward, eager_backward=False),
                _to_torch(pair.backward, False, cotangent_numbers(pair.backward)),
                pair) if takes else None
        return made["residuals", wrt]

    names = [t.name for t in operator.ir.inputs]
    count = len(operator.ir.outputs)
    if eager:
        backward_op(differentiable)
        residual_ops(differentiable)
    tensor = torch.Tensor
    below_autograd = torch._C._AutoDispatchBelowAutograd  # as torch.library's own kernel

    def run_below_autograd(op, *args):
        with below_autograd():
            return op(*args)

    class Gradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            # the gradients asked for: a model's data, a frozen weight need none, and
            # their products are not computed (the mlp's d_X is a third of its backward)
            ctx.wrt = tuple(name for name, needed in zip(names, ctx.needs_input_grad)
                            if needed and name in differentiable) or differentiable
            residual = residual_ops(ctx.wrt)
            output = run_below_autograd(op if residual is None else residual[0], *args)
            results = output if isinstance(output, tuple) else (output,)
            outputs = results[:count]
            saved = () if residual is None else residual[2].saved(results)
            # tensors through save_for_backward (torch checks them: an output modified in
            # place before the backward is an error there); numbers as they are
            ctx.numbers = [None if isinstance(a, tensor) else a for a in args]
            ctx.outputs = [(o.shape, o.dtype) for o in outputs]
            ctx.save_for_backward(*(a for a in args if isinstance(a, tensor)), *saved)
            return outputs[0] if count == 1 else outputs

        @staticmethod
        def backward(ctx, *cotangents):
            saved = iter(ctx.saved_tensors)
            inputs = [next(saved) if number is None else number for number in ctx.numbers]
            taken = list(saved)
            cotangents = [torch.zeros(shape, dtype=dtype) if g is None else g
                          for g, (shape, dtype) in zip(cotangents, ctx.outputs)]
            if taken and not torch.is_grad_enabled():  # no double backward to come
                result = residual_ops(ctx.wrt)[1](*inputs, *cotangents, *taken)
            else:
                result = backward_op(ctx.wrt)(*inputs, *cotangents)
            result = iter(result if isinstance(result, tuple) else (result,))
            return tuple(next(result) if name in ctx.wrt else None for name in names)

    def autograd_kernel(*args):
        if torch.is_grad_enabled():
            for a in args:
                if isinstance(a, tensor) and a.requires_grad:
                    return Gradient.apply(*args)
        return run_below_autograd(op, *args)

    _library(torch).impl(op.name().split("::")[1], autograd_kernel, "Autograd")
