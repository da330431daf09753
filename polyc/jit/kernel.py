"""A compiled kernel: the loaded C entry point and how to call it on numpy arrays."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from polyc.codegen.c_names import (STATUS_GATHER_OUT_OF_RANGE, STATUS_NO_MEMORY, STATUS_OK,
                                   launch_name)
from polyc.errors import ArgumentError, InternalError
from polyc.jit.arguments import BoundCall
from polyc.jit.gathers import gather_message
from polyc.lang import ir
from polyc.lang import types as ty

_CTYPES = {
    ty.BOOL: ctypes.c_bool, ty.UINT8: ctypes.c_uint8, ty.UINT16: ctypes.c_uint16,
    ty.UINT32: ctypes.c_uint32, ty.UINT64: ctypes.c_uint64, ty.INT8: ctypes.c_int8,
    ty.INT16: ctypes.c_int16, ty.INT32: ctypes.c_int32, ty.INT64: ctypes.c_int64,
    ty.FLOAT16: ctypes.c_float, ty.FLOAT32: ctypes.c_float, ty.FLOAT64: ctypes.c_double,
}


@dataclass(frozen=True)
class Kernel:
    """The compiled form of one operator; one kernel serves every shape."""

    op: ir.Op
    c_source: str
    schedule: str
    so_path: Path
    function: object  # the ctypes function
    cache_hit: str
    compile_seconds: float
    launch_address: int  # the uniform entry point (polyc.jit.launcher calls it)

    @staticmethod
    def load(op: ir.Op, library, entry: str, c_source: str, schedule: str) -> Kernel:
        function = getattr(library.cdll, entry)
        argtypes = [ctypes.c_int64] * len(op.sizes)
        for tensor in op.inputs:
            argtypes.append(_CTYPES[tensor.type] if tensor.rank == 0 else ctypes.c_void_p)
        argtypes += [ctypes.c_void_p] * len(op.outputs)
        function.argtypes = argtypes
        function.restype = ctypes.c_int
        launch = ctypes.cast(getattr(library.cdll, launch_name(entry)), ctypes.c_void_p)
        return Kernel(op, c_source, schedule, Path(library.so_path), function,
                      library.cache_hit, library.compile_seconds, launch.value)

    def run(self, sizes: dict[str, int], inputs, outputs) -> None:
        """Call the C entry point on bound arguments (see ``polyc.jit.arguments``)."""
        status = self.function(*self._arguments(sizes, inputs, outputs))
        if status != STATUS_OK:
            self.fail(status, inputs)

    def bind(self, call: BoundCall, args: tuple) -> BoundKernel:
        """The kernel with the arguments of ``call`` fixed: ``args`` are the caller's
        inputs, whose copies in ``call`` (non-contiguous, or overlapping an output) are
        refreshed before each run."""
        copy_in = tuple((user, mine) for user, mine in zip(args, call.inputs)
                        if isinstance(user, np.ndarray) and user.ndim and mine is not user)
        return BoundKernel(self, tuple(self._arguments(call.sizes, call.inputs, call.outputs)),
                           call.inputs, copy_in, call.zeroed, call.copy_back, call.results)

    def _arguments(self, sizes: dict[str, int], inputs, outputs) -> list:
        args = list(sizes.values())  # the binder lists them in op.sizes order
        for tensor, value in zip(self.op.inputs, inputs):
            if tensor.rank == 0:
                args.append(value.item() if isinstance(value, (np.ndarray, np.generic))
                            else value)
            else:
                args.append(value.__array_interface__["data"][0])
        args += [array.__array_interface__["data"][0] for array in outputs]
        return args

    def fail(self, status: int, inputs) -> None:
        """Raise the error a kernel's status other than 0 reports."""
        if status == STATUS_NO_MEMORY:
            raise MemoryError(f"{self.op.name}: out of memory allocating temporaries")
        if status == STATUS_GATHER_OUT_OF_RANGE:
            raise ArgumentError(_gather_message(self.op, inputs))
        raise InternalError(f"kernel {self.op.name} returned unknown status {status}")


class BoundKernel:
    """A kernel with its arguments fixed (:meth:`polyc.Operator.bind`): each call runs it
    on the same arrays, reading their current contents, and returns the same output
    arrays. Not for concurrent calls: they share those arrays."""

    __slots__ = ("kernel", "_function", "_args", "_inputs", "_copy_in", "_zeroed",
                 "_copy_back", "_results")

    def __init__(self, kernel: Kernel, args: tuple, inputs: tuple, copy_in: tuple,
                 zeroed: tuple, copy_back: tuple, results: tuple):
        self.kernel = kernel
        self._function = kernel.function
        self._args = args
        self._inputs = inputs
        self._copy_in = copy_in      # (caller's array, the contiguous copy the kernel reads)
        self._zeroed = zeroed        # fresh outputs that accumulate from zero
        self._copy_back = copy_back  # (kernel's array, caller's non-contiguous out=)
        self._results = results[0] if len(results) == 1 else results

    def __call__(self):
        for user, mine in self._copy_in:
            np.copyto(mine, user)
        for array in self._zeroed:
            array.fill(0)
        status = self._function(*self._args)
        if status:
            self.kernel.fail(status, self._inputs)
        for mine, user in self._copy_back:
            np.copyto(user, mine)
        return self._results

    def __repr__(self) -> str:
        return f"<polyc bound call of {self.kernel.op.name}>"


def _gather_message(op: ir.Op, inputs) -> str:
    """Name the index tensor, position and value that fell outside the gathered extent."""
    values = {t.name: v for t, v in zip(op.inputs, inputs)}
    for stmt in op.statements:
        for read in (e for e in ir.walk(stmt.rhs) if isinstance(e, ir.Read)):
            tensor = op.tensor(read.tensor)
            # Only the extent of inputs is known here without re-running: report those.
            if tensor.role != ir.INPUT:
                continue
            for dim, index in enumerate(read.indices):
                if isinstance(index, ir.Read) and index.tensor in values:
                    message = gather_message(op, read, dim, np.asarray(values[index.tensor]),
                                             values[tensor.name].shape[dim])
                    if message is not None:
                        return message
    return f"{op.name}: a gather index was out of range (data-dependent read outside its tensor)"
