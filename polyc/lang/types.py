"""Scalar element types of the TC language and their promotion rules.

Promotion follows C's usual arithmetic conversions on *strong* types (tensor
elements, scalar parameters, casts) with one change that users of numpy 2
expect: literals and index/size variables are *weak* — they take the type of
the strong operand they meet (``2.0 * A(i)`` stays ``float32`` for a float32
``A``). On their own, an integer literal or an index is ``int32`` and a
floating literal is ``float32`` (TC's ``float``).

``float16`` is a storage type: arithmetic on it happens in ``float32``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ScalarType:
    """One element type: its TC name, C spelling, numpy dtype and kind."""

    name: str
    c_type: str
    numpy_name: str
    kind: str  # "bool", "int", "uint" or "float"
    bits: int

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.numpy_name)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integral(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    @property
    def compute_type(self) -> ScalarType:
        """The type arithmetic on this type happens in (float16 computes in float32)."""
        return FLOAT32 if self is FLOAT16 else self

    def __str__(self) -> str:
        return self.name


BOOL = ScalarType("bool", "_Bool", "bool", "bool", 8)
UINT8 = ScalarType("uint8", "uint8_t", "uint8", "uint", 8)
UINT16 = ScalarType("uint16", "uint16_t", "uint16", "uint", 16)
UINT32 = ScalarType("uint32", "uint32_t", "uint32", "uint", 32)
UINT64 = ScalarType("uint64", "uint64_t", "uint64", "uint", 64)
INT8 = ScalarType("int8", "int8_t", "int8", "int", 8)
INT16 = ScalarType("int16", "int16_t", "int16", "int", 16)
INT32 = ScalarType("int32", "int32_t", "int32", "int", 32)
INT64 = ScalarType("int64", "int64_t", "int64", "int", 64)
FLOAT16 = ScalarType("float16", "_Float16", "float16", "float", 16)
FLOAT32 = ScalarType("float32", "float", "float32", "float", 32)
FLOAT64 = ScalarType("float64", "double", "float64", "float", 64)

ALL_TYPES = (BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64,
             FLOAT16, FLOAT32, FLOAT64)

# TC spellings, including the aliases TC's documentation uses.
TYPE_NAMES: dict[str, ScalarType] = {t.name: t for t in ALL_TYPES}
TYPE_NAMES.update({"float": FLOAT32, "double": FLOAT64, "half": FLOAT16,
                   "int": INT32, "long": INT64, "byte": UINT8})

_BY_DTYPE = {t.dtype: t for t in ALL_TYPES}


def from_dtype(dtype) -> ScalarType | None:
    """The polyc type of a numpy dtype, or ``None`` when polyc has no such type."""
    return _BY_DTYPE.get(np.dtype(dtype))


def _rank(t: ScalarType) -> tuple[int, int, int]:
    kind_order = {"bool": 0, "int": 1, "uint": 1, "float": 2}
    return (kind_order[t.kind], t.bits, 1 if t.kind == "uint" else 0)


def promote(a: ScalarType, a_weak: bool, b: ScalarType, b_weak: bool) -> tuple[ScalarType, bool]:
    """The type of a binary arithmetic result and whether it is still weak.

    >>> promote(FLOAT32, False, INT32, True)
    (FLOAT32, False)
    """
    a, b = a.compute_type, b.compute_type
    if a_weak and not b_weak:
        return _absorb_weak(weak=a, strong=b), False
    if b_weak and not a_weak:
        return _absorb_weak(weak=b, strong=a), False
    result = _c_promote(a, b)
    return result, a_weak and b_weak


def _absorb_weak(weak: ScalarType, strong: ScalarType) -> ScalarType:
    """A weak operand adopts the strong type unless it needs a wider kind."""
    if weak.is_float and not strong.is_float:
        return FLOAT32
    if strong.kind == "bool":
        return weak
    return strong


def _c_promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """C's usual arithmetic conversions on two strong types (bool and small ints become int32)."""
    if a.is_float or b.is_float:
        return max((t for t in (a, b) if t.is_float), key=_rank)
    a, b = (INT32 if _rank(t) < _rank(INT32) else t for t in (a, b))
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == "uint" else b
