"""The generated C of every corpus operator, under fixed options: the golden files.

Moves inside the compiler must keep the C byte for byte
(``tests/codegen/test_golden_c.py``); a change that means to alter it regenerates the
files with ``make golden`` and shows the difference in its commit. The options fix
everything the host would otherwise decide: the machine model (a Zen 3 AVX2 part) and
the C library's vector math functions.

    python -m tests.golden.regenerate        # rewrite tests/golden/c/*.c
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from corpus import CORPUS  # noqa: E402
from polyc.compiler import frontend, generate  # noqa: E402
from polyc.options import Options  # noqa: E402

DIRECTORY = HERE / "c"
MACHINE = "zen3"
# glibc 2.36's libmvec (single and double precision); fixed so the C is the same on
# every host.
VECTOR_MATH = frozenset(
    name + suffix
    for name in ("acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "cos",
                 "cosh", "erf", "erfc", "exp", "exp10", "exp2", "expm1", "hypot", "log",
                 "log10", "log1p", "log2", "pow", "sin", "sinh", "tan", "tanh")
    for suffix in ("", "f"))


def golden_options() -> Options:
    return Options(machine=MACHINE, vector_math=VECTOR_MATH)


def golden_c(entry) -> str:
    """The C polyc generates for a corpus operator under :func:`golden_options`."""
    return generate(frontend(entry.source, entry.def_name), golden_options()).c_source.text


def path_of(entry) -> Path:
    return DIRECTORY / f"{entry.name}.c"


def main() -> int:
    DIRECTORY.mkdir(exist_ok=True)
    names = set()
    for entry in CORPUS:
        path_of(entry).write_text(golden_c(entry))
        names.add(path_of(entry).name)
    for stale in DIRECTORY.glob("*.c"):
        if stale.name not in names:
            stale.unlink()
    print(f"wrote {len(names)} files to {DIRECTORY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
