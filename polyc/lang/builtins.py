"""The builtin functions of the TC language: names, arities, C spellings.

Math functions follow C99 ``<math.h>``: ``exp`` computes in the argument's
floating type (``expf`` for float32, ``exp`` for float64). Integer arguments
are converted to float32 first, as TC's ``float`` default. ``min``/``max``
work on any type (integers stay integers); ``rsqrt`` is ``1/sqrt``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Builtin:
    name: str
    arity: int
    kind: str  # "math": floating result; "minmax": generic; "int": returns int


_MATH_UNARY = (
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "cbrt",
    "tanh", "sinh", "cosh", "asinh", "acosh", "atanh", "sin", "cos", "tan", "asin",
    "acos", "atan", "erf", "erfc", "fabs", "floor", "ceil", "round", "trunc", "rint",
    "nearbyint", "lgamma", "tgamma",
)
_MATH_BINARY = ("pow", "atan2", "fmax", "fmin", "fmod", "hypot", "copysign", "fdim",
                "remainder", "nextafter")
_MATH_TERNARY = ("fma",)

BUILTINS: dict[str, Builtin] = {}
for _name in _MATH_UNARY:
    BUILTINS[_name] = Builtin(_name, 1, "math")
for _name in _MATH_BINARY:
    BUILTINS[_name] = Builtin(_name, 2, "math")
for _name in _MATH_TERNARY:
    BUILTINS[_name] = Builtin(_name, 3, "math")
BUILTINS["min"] = Builtin("min", 2, "minmax")
BUILTINS["max"] = Builtin("max", 2, "minmax")
BUILTINS["abs"] = Builtin("abs", 1, "minmax")


# The builtins that compile to instructions with -march=native (fmax and fmin as
# polyc's inline compare and select); the other math builtins are calls into the
# math library.
_INSTRUCTIONS = frozenset({"sqrt", "rsqrt", "fabs", "floor", "ceil", "trunc", "rint",
                           "nearbyint", "fmax", "fmin", "copysign", "fma", "min", "max",
                           "abs"})


def is_library_call(name: str) -> bool:
    """Whether builtin ``name`` is a call into the math library (``exp``, ``tanh``),
    which clobbers every vector register, vectorised or not."""
    return name in BUILTINS and name not in _INSTRUCTIONS


def c_math_name(name: str, is_double: bool) -> str:
    """The C function computing builtin ``name`` (``expf`` for float32)."""
    return name if is_double else name + "f"
