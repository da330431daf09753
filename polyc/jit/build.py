"""C source → shared object, with the system compiler.

``build_shared_object(c_source, out_path, options)`` runs, in a fresh private
directory next to ``out_path``::

    cc -pipe [-include <headers>/polyc_headers.h] -O3 -march=native -fopenmp -fPIC
       -shared ... -o polyc_<hash>.so polyc_<hash>.c -lm

or, for a kernel whose large parallel regions are worth compiling side by side
(:mod:`polyc.jit.units`), one ``cc ... -c`` per unit at once, then one link.

and moves the result to ``out_path`` with ``os.replace``, so ``out_path`` is
either absent or a complete shared object, never a half-written one. The
compiler runs in that directory on relative file names, which keeps its
output free of random temporary paths (the same source gives the same bytes).

When the compiler fails or hangs, the C source is kept (``failed_dir``, or a
temporary file) and the :class:`CompileError` names it.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from polyc.errors import CompileError, CompileTimeout
from polyc.jit.headers import PrecompiledHeader, precompiled_header, refuse
from polyc.jit.toolchain import compiler_command, run_compiler, supports_float16
from polyc.jit.units import compile_units
from polyc.lang.types import FLOAT16
from polyc.machine.memo import private_directory

MAX_OUTPUT_LINES = 60
MAX_OUTPUT_CHARS = 8000
# How the compiler runs, not what it makes (so not among the flags the cache key holds):
# its passes hand the assembly on through pipes instead of temporary files, 6% of the
# corpus's compile time on the Zen 3 VM (benchmarks/README.md, "Compile time").
RUN_FLAGS = ("-pipe",)


def build_shared_object(c_source: str, out_path: Path, options,
                        failed_dir: Path | None = None,
                        headers_dir: Path | None = None) -> float:
    """Compile ``c_source`` into the shared object ``out_path``; return the seconds spent.
    With ``headers_dir``, the standard headers it opens with are read from a precompiled
    header kept there (:mod:`polyc.jit.headers`).

    Raises :class:`CompileError` (compiler missing, failing or past
    ``options.cc_timeout``) and ``OSError`` (``out_path``'s directory not writable).
    """
    out_path = Path(out_path)
    command = compiler_command(options)
    stem = source_stem(c_source)
    work_dir = Path(tempfile.mkdtemp(prefix=".build-", dir=out_path.parent))
    try:
        start = time.perf_counter()
        header = precompiled_header(c_source, options, command, headers_dir)
        try:
            _compile(c_source, stem, failed_dir, options, work_dir, command, header)
        except CompileTimeout:
            raise
        except CompileError:
            if header is None:
                raise
            # Without the header, either it succeeds (the header was at fault) or it
            # fails with the kernel's own error, and keeps the kernel's C.
            _compile(c_source, stem, failed_dir, options, work_dir, command, None)
            refuse(header)
        seconds = time.perf_counter() - start
        if not (work_dir / f"{stem}.so").is_file():
            kept = keep_failed_source(c_source, stem, failed_dir)
            raise CompileError(f"C compiler made no shared object from {kept}")
        os.replace(work_dir / f"{stem}.so", out_path)
        return seconds
    except CompileError as error:
        # Said first where the compiler cannot have it: clang 14 rejects every use.
        if FLOAT16.c_type in c_source and not supports_float16(options):
            raise CompileError(f"float16 tensors need a C compiler with {FLOAT16.c_type} "
                               f"(GCC 12 or later, clang 15 or later): {options.cc!r} has "
                               f"none (set POLYC_CC)\n{error.message}") from None
        raise
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def _compile(c_source: str, stem: str, failed_dir: Path | None, options, work_dir: Path,
             command: tuple[str, ...], header: PrecompiledHeader | None) -> None:
    """``c_source`` into ``work_dir/<stem>.so``: as one translation unit, or as the units
    of :func:`compile_units` compiled at once and linked; each compile reads ``header``
    first where there is one. A build with a header keeps no C when the compiler fails
    (it is tried again without the header, which keeps it if it fails too), only when
    it times out (that is not tried again)."""
    libraries = [*linked_libraries(c_source), "-lm"]
    units = compile_units(c_source)
    leading = [*RUN_FLAGS, *(header.arguments if header is not None else [])]
    retried = header is not None

    def write(name: str, text: str) -> None:
        text = header.compiled_text(text) if header is not None else text
        (work_dir / name).write_text(text, encoding="utf-8")

    if len(units) == 1:
        write(f"{stem}.c", c_source)
        _run(c_source, stem, failed_dir, options, work_dir,
             [*command, *leading, *options.cflags, "-o", f"{stem}.so", f"{stem}.c",
              *libraries], retried)
        return
    commands = []
    for k, unit in enumerate(units):
        write(f"{stem}_{k}.c", unit.text)
        commands.append([*command, *leading, *options.cflags, "-c", "-o",
                         f"{stem}_{k}.o", f"{stem}_{k}.c"])
    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        list(pool.map(lambda argv: _run(c_source, stem, failed_dir, options, work_dir,
                                        argv, retried), commands))
    _run(c_source, stem, failed_dir, options, work_dir,
         [*command, *options.cflags, "-o", f"{stem}.so",
          *(f"{stem}_{k}.o" for k in range(len(units))), *libraries])


def _run(c_source: str, stem: str, failed_dir: Path | None, options, work_dir: Path,
         argv: list[str], retried: bool = False) -> None:
    """One compiler run in ``work_dir``; a failure keeps the whole C source and names it,
    except a failure that is ``retried`` (a timeout never is)."""
    start = time.perf_counter()
    try:
        result = run_compiler(argv, options.cc_timeout, cwd=work_dir)
    except CompileError as error:
        if retried and not isinstance(error, CompileTimeout):
            raise
        kept = keep_failed_source(c_source, stem, failed_dir)
        raise type(error)(f"{error.message}\nC source: {kept}") from None
    if "cc" in options.debug:
        print(f"polyc[cc]: {shlex.join(argv)}  ({time.perf_counter() - start:.3f} s)",
              file=sys.stderr)
    if result.returncode != 0:
        if retried:
            raise CompileError(f"C compiler failed (exit status {result.returncode})")
        kept = keep_failed_source(c_source, stem, failed_dir)
        raise CompileError(
            f"C compiler failed (exit status {result.returncode}) on {kept}\n"
            f"command: {shlex.join(argv)}\n"
            f"{_truncate(result.stderr + result.stdout)}")


LINK_DIRECTIVE = "// polyc-link: "


def linked_libraries(c_source: str) -> list[str]:
    """The libraries a generated C file asks for on ``// polyc-link: -lname`` lines."""
    return [flag for line in c_source.splitlines() if line.startswith(LINK_DIRECTIVE)
            for flag in line[len(LINK_DIRECTIVE):].split() if flag.startswith("-l")]


def source_stem(c_source: str) -> str:
    """The file name stem of ``c_source``'s C file and of its kept copy after a failure."""
    return "polyc_" + hashlib.sha256(c_source.encode()).hexdigest()[:16]


def keep_failed_source(c_source: str, stem: str, failed_dir: Path | None) -> Path:
    """Save the C source of a failed build where the user can read it after we exit
    (``failed_dir``, else a temporary file)."""
    if failed_dir is not None:
        try:
            private_directory(failed_dir)
            path = failed_dir / f"{stem}.c"
            path.write_text(c_source, encoding="utf-8")
            return path
        except OSError:
            pass
    handle, name = tempfile.mkstemp(prefix=f"{stem}-", suffix=".c")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(c_source)
    return Path(name)


def _truncate(output: str) -> str:
    """The compiler's output, cut to its first lines: the first error is what matters."""
    output = output.rstrip()
    if not output:
        return "(the compiler printed nothing)"
    lines = output.splitlines()
    kept = lines[:MAX_OUTPUT_LINES]
    text = "\n".join(kept)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS]
        kept = text.splitlines()
    omitted = len(lines) - len(kept)
    return text + (f"\n... ({omitted} more lines)" if omitted > 0 else "")
