"""The names a Python-form operator refers to: tensor types and body markers.

A ``@polyc.op`` function is read, never run (``pyfront.py``), so most of these
objects only need to *exist* under the names users import. Tensor type specs
are real values because Python evaluates parameter annotations when it runs
the ``def``::

    def matmul(A: polyc.f32["M", "K"], B: polyc.f32["K", "N"]): ...
    # A's annotation is TensorTypeSpec("float32", ("M", "K"))

``polyc.f32`` alone is a 0-rank scalar (``float32 alpha`` in TC); calling a
spec in a body, ``polyc.i32(x)``, is a cast. The markers ``sum``, ``prod``,
``max``, ``min`` (reductions), ``where`` and ``exists`` raise when called:
they mean something only inside an operator body.

This module imports nothing of polyc, so ``import polyc`` stays cheap.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TensorTypeSpec", "bool_", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
           "f16", "f32", "f64", "sum", "prod", "max", "min", "where", "exists", "MARKERS"]


@dataclass(frozen=True)
class TensorTypeSpec:
    """An element type (a TC type name such as ``"float32"``) and optional dims.

    ``dims`` is ``None`` for the bare spec (``polyc.f32``: a 0-rank scalar, or an
    output type whose shape is inferred), else a tuple of size-variable names
    and non-negative ints (``polyc.f32["M", 3]``; ``polyc.f32[()]`` is ``()``).
    """

    elem: str
    dims: tuple[str | int, ...] | None = None

    def __getitem__(self, key) -> TensorTypeSpec:
        if self.dims is not None:
            raise TypeError(f"{self!r} already has dimensions; write {_short(self.elem)}[...] once")
        dims = key if isinstance(key, tuple) else (key,)
        for dim in dims:
            valid_int = isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0
            if not (valid_int or (isinstance(dim, str) and dim.isidentifier())):
                raise TypeError(f"a dimension of {_short(self.elem)}[...] must be a size name "
                                f"such as \"N\" or a non-negative int, not {dim!r}")
        return TensorTypeSpec(self.elem, tuple(dims))

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"the cast {_short(self.elem)}(...) is only meaningful inside the "
                           f"body of an @polyc.op function, which polyc reads but never runs")

    def __repr__(self) -> str:
        if self.dims is None:
            return f"polyc.{_short(self.elem)}"
        return f"polyc.{_short(self.elem)}[{', '.join(repr(d) for d in self.dims)}]"


_SHORT_NAMES = {"bool": "bool_", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                "uint64": "u64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                "float16": "f16", "float32": "f32", "float64": "f64"}


def _short(elem: str) -> str:
    return _SHORT_NAMES.get(elem, elem)


bool_ = TensorTypeSpec("bool")
u8 = TensorTypeSpec("uint8")
u16 = TensorTypeSpec("uint16")
u32 = TensorTypeSpec("uint32")
u64 = TensorTypeSpec("uint64")
i8 = TensorTypeSpec("int8")
i16 = TensorTypeSpec("int16")
i32 = TensorTypeSpec("int32")
i64 = TensorTypeSpec("int64")
f16 = TensorTypeSpec("float16")
f32 = TensorTypeSpec("float32")
f64 = TensorTypeSpec("float64")


# ----------------------------------------------------------------- markers


def _marker(name: str, usage: str):
    def marker(*args, **kwargs):
        raise RuntimeError(f"polyc.{name} is only meaningful inside the body of an @polyc.op "
                           f"function ({usage}), which polyc reads but never runs")

    marker.__name__ = marker.__qualname__ = name
    marker.__doc__ = f"Marker for the Python form of TC: {usage}."
    return marker


sum = _marker("sum", "`C[i] = polyc.sum(e)` is TC's `C(i) +=! e`; init=False gives `+=`")
prod = _marker("prod", "`C[i] = polyc.prod(e)` is TC's `C(i) *=! e`; init=False gives `*=`")
max = _marker("max", "`C[i] = polyc.max(e)` is TC's `C(i) max=! e`; init=False gives `max=`")
min = _marker("min", "`C[i] = polyc.min(e)` is TC's `C(i) min=! e`; init=False gives `min=`")
where = _marker("where", "`with polyc.where(i in range(0, N), t == e, polyc.exists(A[i])):`")
exists = _marker("exists", "`polyc.exists(A[i])` inside polyc.where(...)")

# The markers by name; pyexpr.marker_name recognises them by identity.
MARKERS = {"sum": sum, "prod": prod, "max": max, "min": min, "where": where, "exists": exists}
