"""The public API: ``polyc.define``, ``@polyc.op``, :class:`Operator`.

    op = polyc.define(TC_SOURCE)              # checks the program; compiles nothing
    C = op(A, B)                              # compiles once (cached), then runs
    op(A, B, out=C)                           # fills C in place
    k = op.compile(A, B)                      # .c_source, .schedule, .so_path
    print(op.explain(A, B))                   # every stage
"""
from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, NamedTuple

from polyc.errors import ArgumentError, InternalError, PolycError
from polyc.frontend import check, frontend
from polyc.jit.arguments import ArgumentBinder
from polyc.jit.cache import CompiledOperator, load_operator
from polyc.jit.kernel import BoundKernel, Kernel
from polyc.jit.launcher import launcher_module, make_launcher, take_torch_tensors
from polyc.jit.torch_tensors import TorchBound, torch_call
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.printer import to_tc
from polyc.options import Options

if TYPE_CHECKING:
    from polyc.compiler import Compilation

_ENVIRONMENT_OPTIONS: Options | None = None


def environment_options() -> Options:
    """Options from the environment, read once per process."""
    global _ENVIRONMENT_OPTIONS
    if _ENVIRONMENT_OPTIONS is None:
        _ENVIRONMENT_OPTIONS = Options.from_environment()
    return _ENVIRONMENT_OPTIONS


class Operator:
    """A checked operator; compiles on first use and then calls the cached kernel."""

    def __init__(self, op_ir: ir.Op, options: Options | None = None):
        self.ir = op_ir
        self.options = options or environment_options()
        self._binder = ArgumentBinder(op_ir, check_gathers=self.options.check_gathers)
        self._input_names = tuple(tensor.name for tensor in op_ir.inputs)
        self._lock = threading.Lock()
        self._compilation: Compilation | None = None
        self._kernel: Kernel | None = None
        self._launcher = None  # the C launcher's object, once compiled (polyc.jit.launcher)
        self._call = self._call_through_binder  # the launcher's call, once compiled
        self._grads: dict = {}  # wrt -> the backward operator (polyc.grad)

    @property
    def name(self) -> str:
        return self.ir.name

    @property
    def binder(self) -> ArgumentBinder:
        """How this operator's calls are checked and bound (:mod:`polyc.jit.arguments`)."""
        return self._binder

    def output_shapes(self, *shapes, minimum=min, maximum=max) -> tuple[tuple, ...]:
        """The outputs' shapes for inputs of these ``shapes`` (``()`` for a 0-rank input),
        from the sizes they bind, without checking them; symbolic extents (torch's
        SymInts) work given their ``minimum`` and ``maximum``."""
        sizes: dict = {}
        for tensor, shape in zip(self.ir.inputs, shapes):
            for extent, value in zip(tensor.shape, shape):
                name = sz.plain_name(extent)
                if name is not None and name not in sizes:
                    sizes[name] = value
        return tuple(tuple(sz.evaluate(extent, sizes, minimum, maximum) for extent in t.shape)
                     for t in self.ir.outputs)

    def __repr__(self) -> str:
        return f"<polyc.Operator {self.name}>"

    def __str__(self) -> str:
        return to_tc(self.ir)

    def with_options(self, **changes) -> Operator:
        """The same operator compiled with other options (e.g. ``fusion="max"``)."""
        return Operator(self.ir, self.options.with_(**changes))

    # ------------------------------------------------------------- compiling

    def compilation(self) -> Compilation:
        """The polyhedral stages and C source (no C compiler involved)."""
        from polyc.compiler import generate  # the optimising half loads on first use

        with self._lock:
            if self._compilation is None:
                self._compilation = generate(self.ir, self.options)
            return self._compilation

    def compile(self, *args, out=None) -> Kernel:
        """The kernel (one serves every shape); arguments, if given, are checked.

        An operator compiled before, in this process or another with the same cache, is
        found by its checked IR and options: no polyhedral stage, no C compiler."""
        if args:
            converted = torch_call(self._input_names, args, out)
            if converted is not None:
                args, out = converted.args, converted.out
            self._binder.bind(args, out)
        kernel = self._kernel
        if kernel is None:
            library, compiled = load_operator(self.ir, self.options, self._generated)
            loaded = Kernel.load(self.ir, library, compiled.entry, compiled.c_source,
                                 compiled.schedule)
            launcher = make_launcher(launcher_module(self.options), loaded, self._binder,
                                     self._call_through_binder)
            with self._lock:
                if self._kernel is None:
                    self._kernel = loaded
                    self._launcher = launcher
                    if launcher is not None:
                        self._call = launcher.call
                kernel = self._kernel
        return kernel

    def _generated(self) -> CompiledOperator:
        """The C and schedule of this operator, generated (its kernel key not yet known)."""
        compilation = self.compilation()
        return CompiledOperator("", compilation.c_source.entry, compilation.c_source.text,
                                str(compilation.schedule))

    # ------------------------------------------------------------- calling

    def __call__(self, *args, out=None):
        return self._call(args, out)

    def _call_through_binder(self, args: tuple, out):
        """A call the Python way: the arguments checked (copied where needed) before the
        first compile, the kernel run through ctypes. The launcher's fallback; torch
        tensors become numpy views here (:mod:`polyc.jit.torch_tensors`)."""
        converted = torch_call(self._input_names, args, out)
        if converted is not None:
            results = self._call(converted.args, converted.out)  # compiles on a first call
            if self._launcher is not None:  # from now on, plain tensors stay in C
                take_torch_tensors(launcher_module(self.options))
            return converted.results(results)
        bound = self._binder.bind(args, out)
        kernel = self._kernel or self.compile()
        kernel.run(bound.sizes, bound.inputs, bound.outputs)
        results = bound.finish()
        return results[0] if len(results) == 1 else tuple(results)

    def bind(self, *args, out=None) -> BoundKernel:
        """A call with its arguments fixed, for loops that run the operator on the same
        buffers again and again: ``run = op.bind(A, B, out=C)``, then ``run()``. The
        arguments are checked once, here; each ``run()`` reads the arrays' current
        contents and returns the same output arrays (fresh ones allocated here when no
        ``out=`` is given, refilled by every run). Gather indices are still checked by
        the kernel on every run. Given torch tensors, each run returns torch tensors."""
        converted = torch_call(self._input_names, args, out)
        if converted is not None:
            return TorchBound(self.bind(*converted.args, out=converted.out), converted)
        bound = self._binder.bind(args, out)
        kernel = self._kernel or self.compile()
        if self._launcher is not None:
            launched = self._launcher.bind(args, out, self.name)
            if launched is not None:
                return launched
        return kernel.bind(bound, args)

    def explain(self, *args):
        from polyc.explain import explain

        return explain(self, args)


def define(source: str, name: str | None = None, *, filename: str = "<string>",
           options: Options | None = None, **option_changes) -> Operator:
    """The operator ``name`` (or the only one) of TC ``source``, checked but not compiled.

    Raises :class:`polyc.ParseError` or :class:`polyc.SemanticError` for a bad program.
    """
    op_ir = frontend(source, name, filename)
    options = options or environment_options()
    if option_changes:
        options = options.with_(**option_changes)
    return Operator(op_ir, options)


def op(fn=None, *, options: Options | None = None, **option_changes):
    """Decorator: the operator written as a Python function's body (never executed)."""
    if fn is None:
        return functools.partial(op, options=options, **option_changes)
    from polyc.lang.pyfront import program_from_function

    program, name = program_from_function(fn)
    op_ir = check(program, name)
    chosen = options or environment_options()
    if option_changes:
        chosen = chosen.with_(**option_changes)
    operator = Operator(op_ir, chosen)
    operator._polyc_program = (program, name)
    functools.update_wrapper(operator, fn, updated=())
    return operator


def grad(operator: Operator, wrt=None) -> Operator:
    """The backward operator of ``operator``: ``grad(op)(*inputs, *cotangents)`` returns
    the gradients of ``op``'s floating-point inputs (or of those named in ``wrt``), each
    ``d_<input>``, for one cotangent ``d_<output>`` per output (:mod:`polyc.autodiff`).
    An ordinary operator: it prints as TC, explains, compiles and caches like any
    other, and ``grad`` applies to it again."""
    from polyc.autodiff import adjoint_op

    if not isinstance(operator, Operator):
        raise TypeError(f"polyc.grad takes a polyc operator, not {type(operator).__name__}")
    key = _wrt_key(wrt)
    known = operator._grads.get(key)
    if known is not None:
        return known  # derived once per operator: its kernel compiles once too
    backward = _derived(adjoint_op(operator.ir, wrt), operator)
    return operator._grads.setdefault(key, backward)


class GradWithResiduals(NamedTuple):
    """What :func:`grad_with_residuals` returns: ``forward(*inputs)`` returns the
    operator's outputs, then the residuals; ``backward(*inputs, *cotangents, *saved)``
    returns the gradients, where ``saved`` (:meth:`saved`) is what it reads of those
    results: the outputs it takes (in the operator's order), then the residuals.
    Unpacks as ``forward, backward``."""

    forward: Operator
    backward: Operator

    def saved(self, results) -> tuple:
        """The values of ``forward``'s ``results`` (what a call returned) that
        ``backward`` takes after the cotangents, in its order."""
        values = results if isinstance(results, tuple) else (results,)
        outputs = self.forward.ir.outputs
        if len(values) != len(outputs):
            raise ArgumentError(f"{self.forward.name} returns {len(outputs)} results "
                                f"({', '.join(t.name for t in outputs)}); got {len(values)}")
        by_name = {t.name: value for t, value in zip(outputs, values)}
        inputs = self.backward.ir.inputs[len(self.forward.ir.inputs):]
        cotangents = 0  # one `d_<output>` per output of the operator, before the saved
        while cotangents < len(inputs) and cotangents < len(outputs) and \
                inputs[cotangents].name == f"d_{outputs[cotangents].name}":
            cotangents += 1
        return tuple(by_name[t.name] for t in inputs[cotangents:])


def grad_with_residuals(operator: Operator, wrt=None) -> GradWithResiduals:
    """``(forward, backward)``: ``forward(*inputs)`` returns ``operator``'s outputs, then
    the forward values its backward would recompute with a reduction (the residuals);
    ``backward(*inputs, *cotangents, *saved)`` returns what ``grad(operator, wrt)``
    returns, without recomputing them (:mod:`polyc.autodiff.residuals`), where
    ``saved``, from :meth:`GradWithResiduals.saved`, is the outputs it reads, then the
    residuals. Where the backward reads no such value, the residuals are none."""
    from polyc.autodiff.residuals import residual_ops

    if not isinstance(operator, Operator):
        raise TypeError(f"polyc.grad_with_residuals takes a polyc operator, not "
                        f"{type(operator).__name__}")
    key = ("residuals", _wrt_key(wrt))
    known = operator._grads.get(key)
    if known is None:
        forward, backward = residual_ops(operator.ir, wrt)
        known = operator._grads.setdefault(key, GradWithResiduals(
            _derived(forward, operator), _derived(backward, operator)))
    return known


def _wrt_key(wrt) -> tuple[str, ...] | None:
    return (wrt,) if isinstance(wrt, str) else (None if wrt is None else tuple(wrt))


def _derived(op_ir, operator: Operator) -> Operator:
    """The operator of IR that polyc derived from ``operator``, printed as TC and checked
    like a user's."""
    text = to_tc(op_ir)
    try:
        checked = frontend(text, filename=f"<the gradient of {operator.name}>")
    except PolycError as error:
        raise InternalError(f"polyc derived a backward operator it cannot check "
                            f"({error}):\n{text}") from error
    return Operator(checked, operator.options)


__all__ = ["GradWithResiduals", "Operator", "define", "grad", "grad_with_residuals", "op",
           "PolycError"]
