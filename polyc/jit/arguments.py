"""A call's Python arguments, checked against an operator and made ready for its kernel.

For ``def matmul(float(M,K) A, float(K,N) B) -> (C)``, ``matmul(A, B)`` with
``A`` of shape (3, 5) and ``B`` of shape (5, 4) binds::

    sizes   {"M": 3, "K": 5, "N": 4}
    inputs  (A, B)             C-contiguous, exactly float32
    outputs (C,)               the arrays the kernel writes
    results (C,)               what the caller gets back

Rules (each violation is an :class:`~polyc.errors.ArgumentError` naming the
parameter, the values and the fix):

* no silent casts: tensors must have exactly the declared dtype; scalars
  (0-rank inputs) take Python numbers that fit the declared type, or numpy
  scalars and 0-d arrays of exactly that dtype;
* a size variable takes its value from the first input dimension it
  appears in; every other appearance must agree; an extent derived from
  sizes (``float(N, H - KH + 1) d_O``) must equal its value; the operator's
  preconditions on sizes must hold;
* gather indices read whole from an input are checked against the gathered
  extent (:mod:`polyc.jit.gathers`), unless ``check_gathers=False``;
* non-contiguous inputs are copied, as are inputs sharing memory with an
  ``out=`` array; a non-contiguous ``out=`` array gets a contiguous
  temporary that :meth:`BoundCall.finish` copies back;
* without ``out=``, an output whose first write accumulates without ``!``
  (``+=``, ``max=``...) starts at zero; other outputs start uninitialised.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import islpy as isl
import numpy as np

from polyc.errors import ArgumentError, InternalError
from polyc.jit.gathers import active_gathers, check_gathers, whole_gathers
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.poly.program import isl_name

_TooHardError = getattr(getattr(np, "exceptions", np), "TooHardError")
_MEMO_LIMIT = 4096
_SHARES_MEMORY_WORK = 100_000


@dataclass(frozen=True)
class BoundCall:
    """A call's arguments as the kernel takes them.

    ``inputs`` holds C-contiguous arrays (tensors) and numpy scalars (0-rank
    inputs) of the declared dtypes, in ``op.inputs`` order; ``outputs`` the
    C-contiguous arrays the kernel writes; ``results`` what the caller gets
    (the ``out=`` arrays themselves, or fresh ones); ``copy_back`` the
    ``(kernel_array, user_array)`` pairs to copy after the kernel ran; ``zeroed`` the
    fresh outputs that start at zero (they accumulate without ``!``).
    """

    sizes: dict[str, int]
    inputs: tuple
    outputs: tuple[np.ndarray, ...]
    results: tuple[np.ndarray, ...]
    copy_back: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    zeroed: tuple[np.ndarray, ...] = ()

    def finish(self) -> tuple[np.ndarray, ...]:
        """After the kernel ran: copy temporaries into non-contiguous ``out=`` arrays and
        return ``results``."""
        for kernel_array, user_array in self.copy_back:
            np.copyto(user_array, kernel_array)
        return self.results


@dataclass(frozen=True)
class _Input:
    name: str
    dtype: np.dtype
    kind: str
    # Per dimension: (size variable, None) or (None, constant extent); a derived extent
    # binds a slot named like "d_O.shape[2]" that :class:`ArgumentBinder` then checks.
    dims: tuple[tuple[str | None, int | None], ...]
    dims_text: str  # "(M, K)"
    float_max: float  # the largest finite value of a floating type


@dataclass(frozen=True)
class _Output:
    name: str
    dtype: np.dtype
    shape: tuple[sz.SizeExpr, ...]
    starts_at_zero: bool


class ArgumentBinder:
    """Checks and prepares the arguments of calls to one operator; build once per op.

    Everything that depends only on the operator is worked out here, so that
    :meth:`bind` does little more than compare shapes and dtypes.
    """

    def __init__(self, op: ir.Op, check_gathers: bool = True):
        self.op = op
        self._gathers = whole_gathers(op) if check_gathers else ()
        self._input_positions = {tensor.name: k for k, tensor in enumerate(op.inputs)}
        self._inputs = tuple(_input_spec(tensor) for tensor in op.inputs)
        self._outputs = tuple(_Output(t.name, t.type.dtype, t.shape, _starts_at_zero(op, t.name))
                              for t in op.outputs)
        self._size_names = op.sizes
        # derived extents: (slot, extent); the launcher binds their slots after the sizes
        self._derived = tuple((f"{t.name}.shape[{d}]", extent) for t in op.inputs
                              for d, extent in enumerate(t.shape) if _is_derived(extent))
        bound = {name for spec in self._inputs for name, _ in spec.dims if name is not None}
        unbound = [name for name in op.sizes if name not in bound]
        if unbound:
            raise InternalError(f"{op.name}: sizes {', '.join(unbound)} appear in no input shape")
        self._isl_size_names = {isl_name(name): name for name in op.sizes}
        self._condition_sets: list[isl.Set] | None = None
        self._precondition_memo: dict[tuple[int, ...], str | None] = {}
        self._shape_memo: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}
        names = ", ".join(t.name for t in op.inputs)
        count = len(op.inputs)
        self._signature = f"{op.name} takes {count} input{'s' if count != 1 else ''} ({names})"
        self._output_names = ", ".join(t.name for t in op.outputs)

    def bind(self, args: tuple, out=None) -> BoundCall:
        """Check ``args`` and ``out`` against the operator; raise ArgumentError if they do
        not fit."""
        self.check_count(len(args))
        sizes: dict[str, int] = {}
        origins: dict[str, str] = {}
        inputs = []
        for spec, value in zip(self._inputs, args):
            if not spec.dims:
                inputs.append(_scalar(spec, value))
                continue
            array = _tensor(spec, value)
            _bind_dims(spec, array.shape, sizes, origins)
            if not (array.flags.c_contiguous and array.flags.aligned):
                array = np.array(array, order="C")  # a copy, aligned too
            inputs.append(array)
        if self._derived:
            self._check_derived(sizes)
        sizes = {name: sizes[name] for name in self._size_names}  # declaration order
        if self.op.preconditions:
            self._check_preconditions(sizes)
        if self._gathers:
            arrays = {spec.name: array for spec, array in zip(self._inputs, inputs)}
            message = check_gathers(self.op, self._gathers, sizes, arrays)
            if message is not None:
                raise ArgumentError(message)
        outputs, results, copy_back, zeroed = self._bind_outputs(sizes, out)
        if out is not None:
            _unshare_inputs(inputs, outputs)
        return BoundCall(sizes, tuple(inputs), outputs, results, copy_back, zeroed)

    def check_count(self, given: int) -> None:
        """Raise the ArgumentError of a call with ``given`` inputs, unless that is right."""
        if given != len(self._inputs):
            raise ArgumentError(f"{self._signature} but {given} "
                                f"{'was' if given == 1 else 'were'} given")

    def sizes_of(self, shapes: tuple) -> tuple[dict[str, int], dict[str, str]]:
        """The sizes that the inputs' ``shapes`` bind (``None`` for 0-rank inputs), in
        declaration order, and where each came from (``"A.shape[1]"``): :meth:`bind`'s
        rules and errors without the arrays (``explain()`` given shapes)."""
        self.check_count(len(shapes))
        sizes: dict[str, int] = {}
        origins: dict[str, str] = {}
        for spec, shape in zip(self._inputs, shapes):
            if spec.dims:
                _bind_dims(spec, tuple(shape), sizes, origins)
        if self._derived:
            self._check_derived(sizes)
        return {name: sizes[name] for name in self._size_names if name in sizes}, origins

    def check_sizes(self, sizes: dict[str, int]) -> None:
        """Raise :meth:`bind`'s ArgumentError when ``sizes`` (all of them) violate a
        precondition or give an output a negative extent."""
        if self.op.preconditions:
            self._check_preconditions(sizes)
        for spec, shape in zip(self._outputs, self._output_shapes(sizes)):
            if any(extent < 0 for extent in shape):
                raise ArgumentError(f"{self.op.name}: the sizes {_sizes_text(sizes)} give "
                                    f"{spec.name} the shape {shape}")

    # ------------------------------------------------------------- the C launcher

    def launcher_spec(self) -> tuple[int, tuple, tuple]:
        """The operator's arguments as :mod:`polyc.jit.launcher` takes them: the number of
        sizes; per input ``(dtype, kind, float_max, dims)`` with ``dims`` a
        ``(size position or -1, constant)`` per dimension; per output ``(dtype, rank,
        starts at zero)``."""
        slots = self._size_names + tuple(slot for slot, _ in self._derived)
        position = {name: k for k, name in enumerate(slots)}
        inputs = tuple((spec.dtype, spec.kind, spec.float_max,
                        tuple((-1, constant) if name is None else (position[name], 0)
                              for name, constant in spec.dims))
                       for spec in self._inputs)
        outputs = tuple((spec.dtype, len(spec.shape), spec.starts_at_zero)
                        for spec in self._outputs)
        return len(slots), inputs, outputs

    def _check_derived(self, bound: dict[str, int]) -> None:
        """Raise the ArgumentError of the first derived extent that ``bound`` (sizes and
        derived slots) gets wrong."""
        message = self._derived_message(bound)
        if message is not None:
            raise ArgumentError(message)

    def _derived_message(self, bound: dict[str, int]) -> str | None:
        for slot, extent in self._derived:
            expected = sz.evaluate(extent, bound)
            if bound[slot] != expected:
                name = slot[:slot.index(".")]
                spec = next(spec for spec in self._inputs if spec.name == name)
                return (f"{name}: expected shape {spec.dims_text} but {slot} is {bound[slot]}: "
                        f"it must be {sz.to_tc(extent)} = {expected}")
        return None

    def prepared(self, sizes: tuple[int, ...]):
        """What the launcher needs for a call with these sizes, decided as :meth:`bind`
        decides it: ``(shapes, gathers)``, the outputs' extents one after the other and
        ``(input position, extent)`` for each gather whose indices it must check; ``None``
        when :meth:`bind` would raise (a precondition fails, an output's extent is
        negative), so that the launcher lets it."""
        named = dict(zip(self._size_names, sizes))
        if self._derived:
            slots = dict(named, **dict(zip((slot for slot, _ in self._derived),
                                           sizes[len(self._size_names):])))
            if self._derived_message(slots) is not None:
                return None
        if self.op.preconditions and self._precondition_message(named) is not None:
            return None
        shapes = [extent for shape in self._output_shapes(named) for extent in shape]
        if any(extent < 0 for extent in shapes):
            return None
        gathers = [value for gather, extent in active_gathers(self.op, self._gathers, named)
                   for value in (self._input_positions[gather.index], extent)]
        return tuple(shapes), tuple(gathers)

    # ------------------------------------------------------------- outputs

    def _output_shapes(self, sizes: dict[str, int]) -> tuple[tuple[int, ...], ...]:
        key = tuple(sizes.values())
        shapes = self._shape_memo.get(key)
        if shapes is None:
            shapes = tuple(tuple(sz.evaluate(extent, sizes) for extent in spec.shape)
                           for spec in self._outputs)
            if len(self._shape_memo) >= _MEMO_LIMIT:
                self._shape_memo.clear()
            self._shape_memo[key] = shapes
        return shapes

    def _bind_outputs(self, sizes: dict[str, int], out):
        user_arrays, labels = self._split_out(out)
        outputs, results, copy_back, zeroed = [], [], [], []
        shapes = self._output_shapes(sizes)
        for spec, shape, user, label in zip(self._outputs, shapes, user_arrays, labels):
            if any(extent < 0 for extent in shape):
                extents = ", ".join(sz.to_tc(extent) for extent in spec.shape)
                raise ArgumentError(f"{self.op.name}: output {spec.name} would have shape "
                                    f"({extents}) = {shape} for {_sizes_text(sizes)}: the "
                                    f"inputs are too small for this operator")
            if user is None:
                array = (np.zeros if spec.starts_at_zero else np.empty)(shape, spec.dtype)
                if spec.starts_at_zero:
                    zeroed.append(array)
                outputs.append(array)
                results.append(array)
                continue
            where = f"{label} ({spec.name})"
            if not isinstance(user, np.ndarray):
                raise ArgumentError(f"{where}: expected a numpy array of shape {shape} "
                                    f"{spec.dtype} but got {type(user).__name__}")
            if user.shape != shape or user.dtype != spec.dtype:
                raise ArgumentError(f"{where}: expected shape {shape} {spec.dtype} but got "
                                    f"{user.shape} {user.dtype}")
            if not user.flags.writeable:
                raise ArgumentError(f"{where} is read-only")
            results.append(user)
            if user.flags.c_contiguous and user.flags.aligned:
                outputs.append(user)
            else:
                # A copy, not np.empty: accumulating outputs start from the user's values.
                kernel_array = np.array(user, order="C", copy=True)
                outputs.append(kernel_array)
                copy_back.append((kernel_array, user))
        if out is not None:
            _check_outputs_disjoint(results, labels, self._outputs)
        return tuple(outputs), tuple(results), tuple(copy_back), tuple(zeroed)

    def _split_out(self, out) -> tuple[tuple, tuple[str, ...]]:
        count = len(self._outputs)
        if out is None:
            return (None,) * count, ("out",) * count
        if isinstance(out, np.ndarray):
            if count != 1:
                raise ArgumentError(f"out: {self.op.name} has {count} outputs "
                                    f"({self._output_names}): pass a tuple of {count} arrays")
            return (out,), ("out",)
        if isinstance(out, (tuple, list)):
            if len(out) != count:
                raise ArgumentError(f"out: expected {count} array{'s' if count != 1 else ''} "
                                    f"({self._output_names}) but got {len(out)}")
            return tuple(out), tuple(f"out[{k}]" for k in range(count))
        raise ArgumentError(f"out: expected a numpy array or a tuple of arrays "
                            f"({self._output_names}) but got {type(out).__name__}")

    # ------------------------------------------------------------- preconditions

    def _check_preconditions(self, sizes: dict[str, int]) -> None:
        message = self._precondition_message(sizes)
        if message is not None:
            raise ArgumentError(message)

    def _precondition_message(self, sizes: dict[str, int]) -> str | None:
        key = tuple(sizes[name] for name in self._size_names)
        try:
            return self._precondition_memo[key]
        except KeyError:
            message = self._failed_precondition(sizes)
            if len(self._precondition_memo) >= _MEMO_LIMIT:
                self._precondition_memo.clear()
            self._precondition_memo[key] = message
            return message

    def _failed_precondition(self, sizes: dict[str, int]) -> str | None:
        """The error message for the first precondition the sizes violate, or None."""
        if self._condition_sets is None:
            self._condition_sets = [isl.Set(p.condition) for p in self.op.preconditions]
        for precondition, condition in zip(self.op.preconditions, self._condition_sets):
            point = condition
            for position in range(condition.dim(isl.dim_type.param)):
                isl_param = condition.get_dim_name(isl.dim_type.param, position)
                name = self._isl_size_names.get(isl_param)
                if name is None:
                    raise InternalError(f"{self.op.name}: precondition {precondition.condition}"
                                        f" names {isl_param}, which is not a size")
                point = point.fix_val(isl.dim_type.param, position, sizes[name])
            if point.is_empty():
                return (f"{self.op.name}: the sizes {_sizes_text(sizes)} do not fit: "
                        f"{precondition.description}")
        return None


def bind_arguments(op: ir.Op, args: tuple, out=None) -> BoundCall:
    """:meth:`ArgumentBinder.bind` for a one-off call (prefer one binder per operator)."""
    return ArgumentBinder(op).bind(args, out)


# ----------------------------------------------------------------- per argument


def _is_derived(extent: sz.SizeExpr) -> bool:
    """Whether an input extent is neither a constant nor a size variable."""
    return not ((isinstance(extent, sz.Affine) and extent.is_constant)
                or sz.plain_name(extent) is not None)


def _input_spec(tensor: ir.Tensor) -> _Input:
    dims = []
    for d, extent in enumerate(tensor.shape):
        if _is_derived(extent):
            dims.append((f"{tensor.name}.shape[{d}]", None))
        elif extent.is_constant:
            dims.append((None, extent.const))
        else:
            dims.append((sz.plain_name(extent), None))
    text = "(" + ", ".join(sz.to_tc(extent) for extent in tensor.shape) + ")"
    dtype = tensor.type.dtype
    float_max = float(np.finfo(dtype).max) if tensor.type.is_float else 0.0
    return _Input(tensor.name, dtype, tensor.type.kind, tuple(dims), text, float_max)


def _bind_dims(spec: _Input, shape: tuple[int, ...], sizes: dict[str, int],
               origins: dict[str, str]) -> None:
    """Check ``shape`` against the input's declared dimensions and bind the sizes it
    names first (``sizes`` and ``origins`` grow)."""
    rank = len(spec.dims)
    if len(shape) != rank:
        raise ArgumentError(f"{spec.name}: expected {rank} dimension{'s' if rank != 1 else ''} "
                            f"{spec.dims_text} but got shape {shape}")
    for d, ((name, constant), extent) in enumerate(zip(spec.dims, shape)):
        where = f"{spec.name}.shape[{d}]"
        if name is None:
            if extent != constant:
                raise ArgumentError(f"{spec.name}: expected shape {spec.dims_text} but got "
                                    f"{shape}: {where} must be {constant}")
            continue
        known = sizes.get(name)
        if known is None:
            sizes[name] = extent
            origins[name] = where
        elif known != extent:
            raise ArgumentError(f"size {name} is {known} from {origins[name]} but {extent} "
                                f"from {where}")


def _tensor(spec: _Input, value) -> np.ndarray:
    """``value`` if it is a numpy array of exactly the declared dtype."""
    if not isinstance(value, np.ndarray):
        raise ArgumentError(f"{spec.name}: expected a numpy array of {spec.dtype} with shape "
                            f"{spec.dims_text} but got {type(value).__name__} (convert with "
                            f"np.asarray({spec.name}, dtype=np.{spec.dtype.name}))")
    if value.dtype != spec.dtype:
        raise ArgumentError(f"{spec.name}: expected {spec.dtype} but got {value.dtype} "
                            f"(convert with {spec.name}.astype(np.{spec.dtype.name}))")
    return value


def _scalar(spec: _Input, value):
    """A numpy scalar of exactly the declared dtype, from a Python number that fits or a
    numpy scalar / 0-d array of that dtype."""
    dtype = spec.dtype
    if isinstance(value, (np.ndarray, np.generic)):  # before float: np.float64 is a float
        if value.ndim != 0:
            raise ArgumentError(f"{spec.name}: expected a {dtype} scalar but got an array of "
                                f"shape {value.shape}")
        if value.dtype != dtype:
            raise ArgumentError(f"{spec.name}: expected {dtype} but got {value.dtype} "
                                f"(convert with np.{dtype.name}({spec.name}))")
        return value[()] if isinstance(value, np.ndarray) else value
    if isinstance(value, bool):
        return dtype.type(value)  # a bool fits every type as 0 or 1
    if isinstance(value, int):
        if spec.kind == "bool":
            raise ArgumentError(f"{spec.name}: expected a bool but got int {value}")
        if spec.kind in ("int", "uint"):
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise ArgumentError(f"{spec.name}: {value} does not fit in {dtype} "
                                    f"({info.min} to {info.max})")
            return dtype.type(value)
        return _float_scalar(spec, value)
    if isinstance(value, float):
        if spec.kind != "float":
            raise ArgumentError(f"{spec.name}: expected {dtype} but got float {value!r} "
                                f"(an integer scalar takes an int, e.g. int({spec.name}))")
        return _float_scalar(spec, value)
    raise ArgumentError(f"{spec.name}: expected a {dtype} scalar (a Python number or a 0-d "
                        f"array) but got {type(value).__name__}")


def _float_scalar(spec: _Input, value: int | float):
    try:
        fits = not (math.isfinite(value) and abs(value) > spec.float_max)  # inf, NaN fit
    except OverflowError:  # an int beyond float64's range
        fits = False
    if not fits:
        raise ArgumentError(f"{spec.name}: {value!r} is too large for {spec.dtype}")
    return spec.dtype.type(value)


def _starts_at_zero(op: ir.Op, name: str) -> bool:
    """Whether the first statement writing ``name`` accumulates into it without ``!``."""
    for stmt in op.statements:
        if stmt.tensor == name:
            return stmt.op != "=" and not stmt.init
    return True  # never written: zeros rather than leaking uninitialised memory


def _unshare_inputs(inputs: list, outputs: tuple[np.ndarray, ...]) -> None:
    """Copy inputs that the kernel would overwrite while reading them (``op(A, out=A)``)."""
    for k, array in enumerate(inputs):
        if isinstance(array, np.ndarray) and array.ndim and any(
                _shares_memory(array, output) for output in outputs):
            inputs[k] = array.copy()


def _check_outputs_disjoint(results: list, labels, specs) -> None:
    for a in range(len(results)):
        for b in range(a + 1, len(results)):
            if _shares_memory(results[a], results[b]):
                raise ArgumentError(f"{labels[a]} ({specs[a].name}) and {labels[b]} "
                                    f"({specs[b].name}) share memory: each output needs its "
                                    f"own array")


def _shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    if not np.may_share_memory(a, b):  # disjoint address ranges: cheap and certain
        return False
    try:
        return np.shares_memory(a, b, max_work=_SHARES_MEMORY_WORK)
    except _TooHardError:
        return True  # cannot tell: assume the worst


def _sizes_text(sizes: dict[str, int]) -> str:
    return ", ".join(f"{name} = {value}" for name, value in sizes.items())
