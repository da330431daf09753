"""The standard headers at the top of every kernel, parsed once: GCC's precompiled headers.

Every kernel's C begins with the same lines: ``#define _GNU_SOURCE`` and the standard
headers of :data:`polyc.codegen.c_names.PREAMBLE`. For a small kernel, reading them is
half of what gcc takes (an empty function with the kernels' flags, gcc 12.2 on the Zen 3
VM: 113 ms with those lines, 57 without; benchmarks/README.md, "Compile time"). GCC can
save its state after them once, as a precompiled header, and start every later compile
from it (66 ms)::

    <directory>/<key>/polyc_headers.h            the kernel's leading lines
    <directory>/<key>/polyc_headers.h.gch        gcc -x c-header of them, same flags
    <directory>/<key>/polyc_headers.h.gch.sha256

``key`` hashes those lines, the compiler's identity and the flags. Kernels are compiled
with ``-include <key>/polyc_headers.h``: gcc reads the ``.gch`` in its place when the
same compiler built it with the same options, and the header's text otherwise. Only
the file handed to the compiler has the kernel's own copy of those lines blank: the C
that is cached, hashed and kept after a failed build stays a complete translation unit
that compiles the same without this module.

Only for GCC: the built file must start with GCC's magic (clang writes another format,
read through another option), and the compiler must be one program (not ``ccache
gcc``). A ``.gch`` is trusted as the kernels are: written under a private name and
installed with ``os.replace``, and read only when its checksum matches (checked once
per process). Where a header cannot be built, or a build that reads it fails where one
without it does not, kernels compile without it and the process does not try that
header again. A compiler that runs past its timeout on the header raises
:class:`~polyc.errors.CompileTimeout` at once (it would on the kernel too).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from polyc.codegen.c_names import after_leading_comment
from polyc.errors import CompileError, CompileTimeout
from polyc.jit.checked_files import checksum_line, discard, read_checked
from polyc.jit.toolchain import compiler_identity, run_compiler
from polyc.machine.memo import private_directory

HEADER_NAME = "polyc_headers.h"
# The first bytes of a precompiled header that GCC wrote ("gpch" and its version).
GCC_MAGIC = b"gpch"

_LOCK = threading.Lock()
# Header folders (one per cache directory and key) whose header failed to build or to
# be read, and those whose .gch matched its checksum, in this process.
_REFUSED: set[Path] = set()
_CHECKED: set[Path] = set()


def leading_lines(c_source: str) -> str | None:
    """The preprocessor lines that open ``c_source`` after its leading comment (the
    ``#define`` and ``#include`` block), or ``None`` where they include nothing."""
    start = after_leading_comment(c_source)
    lines = []
    for line in c_source[start:].splitlines(keepends=True):
        if not line.startswith("#"):
            break
        lines.append(line)
    if not any(line.startswith("#include") for line in lines):
        return None
    return "".join(lines)


@dataclass(frozen=True)
class PrecompiledHeader:
    """A header built for one compiler and set of flags (``header``, the text of
    ``lines``, with its ``.gch`` beside it); kernels compile with ``arguments`` ahead of
    their own."""

    header: Path
    lines: str

    @property
    def arguments(self) -> list[str]:
        return ["-include", str(self.header)]

    def compiled_text(self, text: str) -> str:
        """``text`` (a kernel or one of its units) as the compiler reads it after the
        header: its own opening lines blank, its line numbers unchanged (with them, gcc
        opens every header again to find its guard)."""
        start = after_leading_comment(text)
        if not text.startswith(self.lines, start):
            return text
        return text[:start] + "\n" * self.lines.count("\n") + text[start + len(self.lines):]


def precompiled_header(c_source: str, options, command: tuple[str, ...],
                       directory: Path | None) -> PrecompiledHeader | None:
    """The precompiled header of ``c_source``'s leading lines under ``directory``, built
    there first when missing; ``None`` where none applies or it cannot be built."""
    lines = leading_lines(c_source)
    if directory is None or lines is None or len(command) != 1:
        return None
    folder = directory / header_key(lines, options)[:32]
    if folder in _REFUSED:
        return None
    if folder not in _CHECKED:
        if not _verified(folder) and not _built(lines, options, command, folder):
            with _LOCK:
                _REFUSED.add(folder)
            return None
        with _LOCK:
            _CHECKED.add(folder)
    return PrecompiledHeader(folder / HEADER_NAME, lines)


def header_key(lines: str, options) -> str:
    """The sha256 naming the precompiled header of ``lines`` under ``options``."""
    parts = [lines, compiler_identity(options), list(options.cflags)]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def refuse(header: PrecompiledHeader) -> None:
    """A build that read ``header`` failed where one without it did not: the process
    compiles without it from now on, and the next one builds it again."""
    folder = header.header.parent
    with _LOCK:
        _REFUSED.add(folder)
        _CHECKED.discard(folder)
    discard(folder / f"{HEADER_NAME}.gch", folder / f"{HEADER_NAME}.gch.sha256")


def _verified(folder: Path) -> bool:
    data = read_checked(folder / f"{HEADER_NAME}.gch", folder / f"{HEADER_NAME}.gch.sha256")
    return data is not None and data.startswith(GCC_MAGIC) and (folder / HEADER_NAME).is_file()


def _built(lines: str, options, command: tuple[str, ...], folder: Path) -> bool:
    """Build the header of ``lines`` into ``folder``; whether it is there to use."""
    try:
        private_directory(folder)
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=folder))
    except OSError:
        return False
    try:
        (work / HEADER_NAME).write_text(lines, encoding="utf-8")
        result = run_compiler([*command, *options.cflags, "-x", "c-header", "-o",
                               f"{HEADER_NAME}.gch", HEADER_NAME], options.cc_timeout,
                              cwd=work)
        compiled = work / f"{HEADER_NAME}.gch"
        if result.returncode != 0 or not compiled.is_file():
            return False
        data = compiled.read_bytes()
        if not data.startswith(GCC_MAGIC):
            return False
        (work / f"{HEADER_NAME}.gch.sha256").write_text(checksum_line(data), encoding="ascii")
        # The text first: a .gch without its header is never looked for.
        for name in (HEADER_NAME, f"{HEADER_NAME}.gch", f"{HEADER_NAME}.gch.sha256"):
            os.replace(work / name, folder / name)
        return True
    except CompileTimeout:
        raise  # a compiler that hangs on the headers would hang on the kernel too
    except (OSError, CompileError):
        return False
    finally:
        shutil.rmtree(work, ignore_errors=True)
