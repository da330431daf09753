"""The C launcher: operator calls with no Python between the caller and the kernel.

``launcher.c`` is a CPython extension, one for every operator: for a compiled
operator, :func:`make_launcher` gives an object whose ``call(args, out)`` checks
the arguments, binds the sizes, allocates the outputs and calls the kernel's
uniform entry point (``polyc_<op>_launch``, see
:mod:`polyc.codegen.translation_unit`) with the GIL released::

    op(A, B)  ->  Operator.__call__  ->  Launcher.call  ->  polyc_matmul_launch

It takes only the common case, where the checks pass and no copy is needed; any
other call goes to the Python binder (:class:`~polyc.jit.arguments.ArgumentBinder`),
which raises today's :class:`~polyc.errors.ArgumentError` or makes the copies and
calls the kernel through ctypes. What depends on the sizes alone (preconditions,
output shapes, the gathers to check) comes from the binder's ``prepared`` once per
distinct sizes.

The extension is built once per polyc version, Python ABI, numpy version and C
compiler, with the kernels' flags, and cached like a kernel (:mod:`polyc.jit.cache`).
Where it cannot be built (no ``Python.h``, free-threaded Python, a compiler that
fails on it) or ``POLYC_LAUNCHER=0``, calls go through ctypes: about 20 µs each
instead of 1; a :class:`LauncherWarning` says so once and ``explain()`` says why.
"""
from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sys
import sysconfig
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from polyc.errors import CompileError
from polyc.jit.cache import get_library
from polyc.jit.torch_tensors import torch_objects

MODULE_NAME = "_polyc_launcher"
SOURCE = Path(__file__).with_name("launcher.c")


class LauncherWarning(RuntimeWarning):
    """polyc calls kernels through ctypes, not its C launcher (slower calls)."""


@dataclass(frozen=True)
class LauncherModule:
    """The loaded extension, or why there is none (``reason``)."""

    module: ModuleType | None
    path: Path | None = None
    reason: str = ""

    def describe(self) -> str:
        """One line for ``explain()``."""
        if self.module is not None:
            return f"through the C launcher ({self.path})"
        return f"through ctypes: {self.reason}"


_MODULES: dict[tuple, LauncherModule] = {}
_LOCK = threading.Lock()


def launcher_module(options) -> LauncherModule:
    """The launcher for ``options``' compiler, built or found in the kernel cache the
    first time a process asks; memoised per compiler and flags."""
    if not options.launcher:
        return LauncherModule(None, reason="turned off (POLYC_LAUNCHER=0)")
    memo = (options.cc, options.cflags)
    found = _MODULES.get(memo)
    if found is None:
        with _LOCK:
            found = _MODULES.get(memo)
            if found is None:
                found = _load(options)
                _MODULES[memo] = found
                if found.module is None:
                    warnings.warn(f"polyc: calls go through ctypes, about 20 µs each instead "
                                  f"of 1: {found.reason}", LauncherWarning, stacklevel=4)
    return found


def make_launcher(module: LauncherModule, kernel, binder, fallback):
    """The launcher object of one compiled operator, or ``None`` without the extension
    or for an operator with more sizes or arguments than it takes (64 each).

    ``fallback(args, out)`` is the Python binder's call, for whatever the launcher does
    not take; ``kernel.fail(status, args)`` raises a kernel's error."""
    if module.module is None:
        return None
    sizes, inputs, outputs = binder.launcher_spec()
    try:
        return module.module.Launcher(kernel.launch_address, sizes, inputs, outputs,
                                      binder.prepared, fallback, kernel.fail)
    except ValueError:  # beyond the launcher's fixed arrays: the Python binder calls it
        return None


def take_torch_tensors(module: LauncherModule) -> None:
    """Let ``module`` take torch CPU tensors itself from now on in this process (called
    when a call with tensors reached the Python binder: polyc never imports torch)."""
    if module.module is not None:
        module.module.use_torch(*torch_objects())


def _load(options) -> LauncherModule:
    missing = _missing_headers()
    if missing:
        return LauncherModule(None, reason=missing)
    includes = (f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}")
    build_options = options.with_(extra_cflags=(*options.extra_cflags, *includes))
    try:
        library = get_library(_source(), build_options)
    except CompileError as error:
        first = str(error).splitlines()[0]
        return LauncherModule(None, reason=f"the launcher did not compile ({first})")
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, str(library.so_path))
    spec = importlib.util.spec_from_loader(MODULE_NAME, loader)
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError as error:
        return LauncherModule(None, reason=f"the launcher does not load ({error})")
    return LauncherModule(module, library.so_path)


def _missing_headers() -> str:
    """Why this Python cannot have the launcher, or ``""``."""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "free-threaded Python (the launcher relies on the GIL)"
    if sys.implementation.name != "cpython":
        return f"{sys.implementation.name} is not CPython"
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        return (f"Python's headers are not installed (no Python.h in {include}; install "
                f"your distribution's python3-dev or python3-devel)")
    if not (Path(np.get_include()) / "numpy" / "arrayobject.h").is_file():
        return f"numpy's headers are missing (no numpy/arrayobject.h in {np.get_include()})"
    return ""


@functools.lru_cache(maxsize=1)
def _source() -> str:
    """launcher.c, headed by what it is built against: another Python ABI or numpy is
    another cache key."""
    abi = sysconfig.get_config_var("EXT_SUFFIX") or sys.implementation.cache_tag
    return (f"/* for {sys.implementation.cache_tag} {abi}, numpy {np.__version__} */\n"
            + SOURCE.read_text(encoding="utf-8"))
