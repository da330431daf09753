"""Vectorised math functions: which ones the C library offers SIMD versions of.

Without ``-ffast-math`` (which polyc never uses: it breaks NaN and infinity
semantics) gcc vectorises a loop calling ``expf`` only if ``expf`` is declared
``#pragma omp declare simd`` and a vector version exists. glibc's libmvec has
them (accurate to 4 ulp), under names such as ``_ZGVeN16v_expf`` (AVX-512, 16
lanes). Which functions exist depends on the glibc version, so polyc asks the
library itself, once per process, and declares exactly those.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools

_LIBMVEC_SONAME = "libmvec.so.1"
# (variant letter, float lanes, double lanes): SSE, AVX, AVX2, AVX-512.
_VARIANTS = (("b", 4, 2), ("c", 8, 4), ("d", 8, 4), ("e", 16, 8))
_CANDIDATES = {
    "exp": 1, "exp2": 1, "exp10": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1,
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1,
    "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1, "erf": 1, "erfc": 1, "cbrt": 1,
    "pow": 2, "atan2": 2, "hypot": 2,
}


@functools.lru_cache(maxsize=1)
def simd_math_functions() -> frozenset[str]:
    """C names (``expf``, ``exp``, ...) with every SIMD variant present in libmvec."""
    try:  # glibc's soname: dlopen finds it without find_library's ldconfig subprocess
        library = ctypes.CDLL(_LIBMVEC_SONAME)
    except OSError:
        path = ctypes.util.find_library("mvec")
        if path is None:
            return frozenset()
        try:
            library = ctypes.CDLL(path)
        except OSError:
            return frozenset()
    found = set()
    for name, arity in _CANDIDATES.items():
        for c_name, lanes_at in ((name + "f", 1), (name, 2)):
            suffix = "v" * arity
            if all(hasattr(library, f"_ZGV{letter}N{variant[lanes_at]}{suffix}_{c_name}")
                   for variant in _VARIANTS for letter in (variant[0],)):
                found.add(c_name)
    return frozenset(found)


def declarations(used: set[str], available: frozenset[str]) -> str:
    """The ``declare simd`` prototypes for the math functions a kernel calls."""
    lines = []
    for name in sorted(used & available):
        double = name in _CANDIDATES  # `erf` is double, `erff` float
        base = "double" if double else "float"
        arity = _CANDIDATES[name if double else name[:-1]]
        params = ", ".join([base] * arity)
        lines.append(f"#pragma omp declare simd notinbranch\n{base} {name}({params});")
    if not lines:
        return ""
    return "// polyc-link: -lmvec\n" + "\n".join(lines)
