"""The system C compiler: where it is, what it is, and running it safely.

``compiler_identity(options)`` names the compiler precisely enough to key the
kernel cache on it: a different compiler, version or target must never reuse
another's shared objects. It is computed once per ``options.cc`` string::

    /usr/bin/cc
    cc (Debian 12.2.0-14+deb12u1) 12.2.0
    x86_64-linux-gnu

``POLYC_CC`` may be a program (``gcc-13``, ``/opt/gcc/bin/gcc``) or a program
with leading arguments (``ccache gcc``).
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from polyc.errors import CompileError, CompileTimeout
from polyc.machine.memo import read_memo, write_memo

_IDENTITIES: dict[str, str] = {}
_FLOAT16: dict[str, bool] = {}
_COMMANDS: dict[str, tuple[str, ...]] = {}
_LOCK = threading.Lock()


def compiler_command(options) -> tuple[str, ...]:
    """The compiler as an argument-vector prefix with its program resolved to an absolute path.

    Raises :class:`CompileError` when the program cannot be found.
    """
    cached = _COMMANDS.get(options.cc)
    if cached is not None:
        return cached
    command = _resolve(options.cc)
    _COMMANDS[options.cc] = command
    return command


def _resolve(cc: str) -> tuple[str, ...]:
    whole = shutil.which(cc)
    if whole is not None:  # a path that may contain spaces
        return (os.path.abspath(whole),)
    try:
        words = shlex.split(cc)
    except ValueError:
        words = []
    program = shutil.which(words[0]) if words else None
    if program is None:
        raise CompileError(f"C compiler {cc!r} not found (set POLYC_CC)")
    return (os.path.abspath(program), *words[1:])


def compiler_identity(options) -> str:
    """The resolved compiler path, the first line of ``--version`` and ``-dumpmachine``.

    Memoised per ``options.cc`` in the process and, for a compiler that is one program
    (not a wrapper such as ``ccache gcc``), in the cache directory: keyed by the
    program's real path, size, modification time and inode, so that an upgraded or
    switched compiler is asked again. Raises :class:`CompileError` when the compiler
    is missing or hangs.
    """
    cached = _IDENTITIES.get(options.cc)
    if cached is not None:
        return cached
    command = compiler_command(options)
    memo = _memo_path(command, Path(options.cache_dir))
    identity = (read_memo(memo) or {}).get("identity") if memo is not None else None
    if not isinstance(identity, str):
        version = _first_line(run_compiler([*command, "--version"], options.cc_timeout))
        machine = _first_line(run_compiler([*command, "-dumpmachine"], options.cc_timeout))
        identity = "\n".join([shlex.join(command), version, machine])
        if memo is not None:
            write_memo(memo, {"identity": identity})
    with _LOCK:
        _IDENTITIES[options.cc] = identity
    return identity


def _memo_path(command: tuple[str, ...], cache_dir: Path) -> Path | None:
    """Where the identity of ``command`` is remembered; ``None`` for a wrapper command."""
    if len(command) != 1:
        return None
    try:
        program = os.path.realpath(command[0])
        info = os.stat(program)
    except OSError:
        return None
    key = "\0".join([command[0], program, str(info.st_size), str(info.st_mtime_ns),
                     str(info.st_ino)])
    return cache_dir / "compilers" / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def supports_float16(options) -> bool:
    """Whether the C compiler has ``_Float16``, the C type of float16 tensors: GCC 12
    and clang 15 or later do on x86-64, clang 14 does not. Asked once per compiler in
    a process, by compiling a two-line probe. Raises :class:`CompileError` when the
    compiler is missing or hangs."""
    known = _FLOAT16.get(options.cc)
    if known is None:
        command = compiler_command(options)
        with tempfile.TemporaryDirectory(prefix="polyc-probe-") as directory:
            probe = Path(directory) / "float16.c"
            probe.write_text("_Float16 polyc_twice(_Float16 x) { return x + x; }\n",
                             encoding="utf-8")
            result = run_compiler([*command, "-fsyntax-only", str(probe)], options.cc_timeout)
        known = _FLOAT16[options.cc] = result.returncode == 0
    return known


def run_compiler(argv: list[str], timeout: float, cwd: Path | None = None
                 ) -> subprocess.CompletedProcess:
    """Run the compiler; a run longer than ``timeout`` seconds is killed with all its
    children (``cc1``, ``as``, ``ld``...) and raises :class:`CompileTimeout`.

    Killing only the direct child is not enough: a grandchild that keeps the output pipes
    open would make the wait hang, so the compiler gets its own process group.
    """
    try:
        process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
    except OSError as error:
        raise CompileError(f"cannot run C compiler {argv[0]!r}: {error} (set POLYC_CC)") from None
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        _reap(process)
        raise CompileTimeout(f"C compiler timed out after {timeout:g} s: {shlex.join(argv)} "
                             f"(set POLYC_CC_TIMEOUT to allow longer)") from None
    except BaseException:  # KeyboardInterrupt: leave no compiler behind
        _kill_group(process)
        process.wait()
        raise
    return subprocess.CompletedProcess(argv, process.returncode,
                                       stdout.decode(errors="replace"),
                                       stderr.decode(errors="replace"))


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def _reap(process: subprocess.Popen) -> None:
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a descendant left the group and holds the pipes
        for pipe in (process.stdout, process.stderr):
            pipe.close()
        process.wait()


def _first_line(result: subprocess.CompletedProcess) -> str:
    for text in (result.stdout, result.stderr):
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return f"(exit status {result.returncode}, no output)"
