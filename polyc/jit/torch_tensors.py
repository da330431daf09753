"""torch CPU tensors as a call's arguments: numpy views in, torch tensors out, no copies.

An operator called with torch tensors (inputs or ``out=``) runs on numpy views of
their memory (``Tensor.numpy()``) and returns torch tensors sharing the outputs'
memory (``torch.from_numpy``), or the caller's own ``out=`` tensors. What a
plain call cannot take gets an :class:`~polyc.errors.ArgumentError` that says what
to do: a tensor on another device (polyc runs on the CPU), one that requires grad
(a plain call records no gradient), a non-contiguous one (numpy arrays are copied;
a tensor is not, so that writing through ``out=`` is never silently lost), and a
dtype polyc has no type for (bfloat16, complex).

torch is optional: nothing here imports it. A call looks for tensors only when the
caller's process has imported torch. The first call with tensors also hands torch's
objects to the C launcher (:func:`torch_objects`), which from then on takes the plain
case itself (contiguous CPU tensors that need no gradient) and leaves the rest here.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import numpy as np

from polyc.errors import ArgumentError
from polyc.lang import types as ty

_NUMPY_DTYPES = frozenset(t.numpy_name for t in ty.ALL_TYPES)
_KNOWN: dict[object, bool] = {}  # torch dtype -> whether polyc has a type for it


@dataclass(frozen=True)
class TorchCall:
    """A call's arguments with its torch tensors replaced by numpy views."""

    args: tuple
    out: object
    user_out: object  # the caller's out= (tensors returned as they are)

    def results(self, result):
        """The call's result as torch tensors: the caller's ``out=`` when given."""
        import torch

        if self.user_out is not None:
            if isinstance(self.user_out, (tuple, list)):
                return self.user_out[0] if len(self.user_out) == 1 else tuple(self.user_out)
            return self.user_out
        if isinstance(result, tuple):
            return tuple(torch.from_numpy(array) for array in result)
        return torch.from_numpy(result)


class TorchBound:
    """A bound call (:meth:`polyc.Operator.bind`) made with torch tensors: each run
    returns torch tensors."""

    __slots__ = ("_bound", "_call")

    def __init__(self, bound, call: TorchCall):
        self._bound, self._call = bound, call

    def __call__(self):
        return self._call.results(self._bound())

    def __repr__(self) -> str:
        return repr(self._bound)


@functools.lru_cache(maxsize=1)
def torch_objects() -> tuple:
    """``(torch.Tensor, torch.strided, {torch dtype: numpy dtype}, torch.from_numpy)``
    for the C launcher's ``use_torch``; only called once the caller imported torch."""
    torch = sys.modules["torch"]
    dtypes = {getattr(torch, name): np.dtype(name) for name in sorted(_NUMPY_DTYPES)
              if isinstance(getattr(torch, name, None), torch.dtype)}
    return torch.Tensor, torch.strided, dtypes, torch.from_numpy


def torch_call(names: tuple[str, ...], args: tuple, out) -> TorchCall | None:
    """``args`` and ``out`` with torch tensors as numpy views; ``None`` when there are
    none. ``names``: the operator's input names, for messages."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tensor = torch.Tensor
    outs = out if isinstance(out, (tuple, list)) else (out,)
    arrays, found = [], False
    for k, arg in enumerate(args):  # a plain loop: this runs on every call with tensors
        if isinstance(arg, tensor):
            arg, found = _view(arg, names[k] if k < len(names) else f"argument {k}"), True
        arrays.append(arg)
    if out is None:
        return TorchCall(tuple(arrays), None, None) if found else None
    if not found and not any(isinstance(o, tensor) for o in outs):
        return None
    arrays = tuple(arrays)
    labels = ("out",) if not isinstance(out, (tuple, list)) else \
        tuple(f"out[{k}]" for k in range(len(out)))
    views = tuple(_view(o, label) if isinstance(o, tensor) else o
                  for o, label in zip(outs, labels))
    return TorchCall(arrays, views if isinstance(out, (tuple, list)) else views[0], out)


def _view(tensor, name: str):
    """The numpy array sharing ``tensor``'s memory, or the ArgumentError saying why not."""
    message = None
    try:  # numpy() refuses most of what polyc would: other devices, grad, bfloat16
        if tensor.is_contiguous():
            array = tensor.numpy()
            if array.dtype.kind != "c":  # numpy has complex types, polyc has none
                return array
    except (RuntimeError, TypeError) as error:  # also a conjugate or negative view
        message = str(error)
    known = _KNOWN.get(tensor.dtype)
    if known is None:
        known = _KNOWN[tensor.dtype] = \
            str(tensor.dtype).removeprefix("torch.") in _NUMPY_DTYPES
    if tensor.device.type != "cpu":
        raise ArgumentError(f"{name}: a tensor on {tensor.device}: polyc runs on the CPU; "
                            f"pass {name}.cpu()")
    if tensor.requires_grad:
        raise ArgumentError(f"{name} requires grad: a plain polyc call records no gradient; "
                            f"pass {name}.detach()")
    if not known:
        dtype = str(tensor.dtype).removeprefix("torch.")
        raise ArgumentError(f"{name}: polyc has no type for torch.{dtype} (convert with "
                            f"{name}.float() or {name}.double())")
    if message is not None:
        raise ArgumentError(f"{name}: {message}")
    raise ArgumentError(f"{name}: a non-contiguous tensor (strides {tuple(tensor.stride())}): "
                        f"pass {name}.contiguous()")
