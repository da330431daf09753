"""Compiling a piece of polyc's C on its own in tests (the preamble's helpers, the thread
grid), to call its functions through ctypes."""
import ctypes
import subprocess
from pathlib import Path

from polyc.options import Options


def compile_probe(source: str, folder: Path) -> ctypes.CDLL:
    """``source`` compiled into a shared library in ``folder`` (with the kernels' own
    semantics flags: OpenMP, GNU C11, wrapping signed arithmetic) and loaded."""
    path, library = folder / "probe.c", folder / "probe.so"
    path.write_text(source)
    subprocess.run([Options().cc, "-O2", "-fopenmp", "-fPIC", "-shared", "-std=gnu11",
                    "-fwrapv", str(path), "-o", str(library)], check=True,
                   capture_output=True)
    return ctypes.CDLL(str(library))
