"""Compiled kernels, cached in memory and on disk.

``get_library(c_source, options)`` gives a loaded shared object for a C
translation unit, compiling it only when no valid copy exists::

    memory:  key -> LoadedLibrary              (a warm call touches no file)
    disk:    <cache_dir>/<key[:2]>/<key>.so
             <cache_dir>/<key[:2]>/<key>.sha256   sha256 of the .so's bytes
             <cache_dir>/headers/...              precompiled headers (polyc.jit.headers)

``key`` is the sha256 of the C source (less its leading comment, which names the
operator and the options for a reader and changes no byte the compiler emits: the
same C under ``fusion="max"`` and the default is one kernel), the compiler's
identity, the flags, the host CPU (``-march=native``) and polyc's version.

An operator compiled once is found again without regenerating its C
(:func:`load_operator`): its record, keyed by the checked IR and every option that
shapes the C (:func:`operator_key`), names the kernel's key and entry point and
keeps the C and the schedule for ``Kernel.c_source`` and ``Kernel.schedule``::

    memory:  operator key -> CompiledOperator
    disk:    <cache_dir>/operators/<key[:2]>/<key>.json

so that a process that has seen an operator before runs no polyhedral stage and no
C compiler. The operator key includes a hash of polyc's own source, so that a
changed compiler never serves a kernel an older one generated. A record that does
not parse, or names a kernel that is missing, fails its checksum or lacks the
entry point, is deleted and the operator compiled again.

Disk entries are trusted only when the checksum file matches the .so and the
.so loads; anything else is deleted and rebuilt. Both files are installed
with ``os.replace`` from private temporary names, so several processes may
compile the same kernel at once: each loads its own build and the last
``os.replace`` wins. Files are never written in place (that would corrupt
the mapping of a process that has the library loaded).

A cache directory that is writable by group or others, or owned by another
user, is refused: loading a shared object runs its code, so such a directory
would let anyone run code in this process. So is one under a parent that
someone else could rename it in (another owner, or group/world-writable
without the sticky bit). Refused or unwritable
directories fall back to a private temporary directory, with a
:class:`CacheWarning`.
"""
from __future__ import annotations

import atexit
import ctypes
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from polyc.codegen.c_names import after_leading_comment, launch_name
from polyc.codegen.vector_math import simd_math_functions
from polyc.errors import CompileError
from polyc.jit.build import build_shared_object, keep_failed_source, source_stem
from polyc.jit.checked_files import checksum_line, discard, read_checked, write_atomically
from polyc.jit.toolchain import compiler_identity
from polyc.machine import host_fingerprint
from polyc.machine.memo import private_directory
from polyc.version import __version__

MEMORY, DISK, MISS = "memory", "disk", "miss"
_KEY_MEMO_LIMIT = 1024


class CacheWarning(RuntimeWarning):
    """polyc cannot use the configured kernel cache directory and compiles elsewhere."""


@dataclass(frozen=True)
class CompiledOperator:
    """What calling an operator compiled before needs: its kernel's cache key and entry
    point, and the C and schedule that made it."""

    key: str
    entry: str
    c_source: str
    schedule: str


@dataclass(frozen=True)
class LoadedLibrary:
    """A loaded kernel library and how it was obtained.

    ``cache_hit`` is ``"memory"``, ``"disk"`` or ``"miss"`` (compiled by this
    call, taking ``compile_seconds``).
    """

    cdll: ctypes.CDLL
    so_path: Path
    key: str
    cache_hit: str
    compile_seconds: float


def cache_key(c_source: str, options) -> str:
    """The sha256 naming the shared object built from ``c_source`` under ``options``."""
    parts = [_compiled_text(c_source), compiler_identity(options), list(options.cflags),
             host_fingerprint(), options.machine.key, __version__]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _compiled_text(c_source: str) -> str:
    """``c_source`` less its leading comment: a comment is one space to the compiler,
    and the C polyc emits names no line number (no ``__LINE__``, no ``assert``)."""
    return c_source[after_leading_comment(c_source):]


@functools.lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """sha256 of the names, sizes and modification times of polyc's Python sources: a
    changed compiler is another compiler (stat, not contents: a few files' metadata
    costs far less than reading them on every process start)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path, size, mtime in sorted(_python_sources(str(root))):
        digest.update(f"{os.path.relpath(path, root)}\0{size}\0{mtime}\n".encode())
    return digest.hexdigest()


def _python_sources(directory: str) -> list[tuple[str, int, int]]:
    """``(path, size, mtime_ns)`` of the ``.py`` files under ``directory`` (os.scandir:
    a fifth of what Path.rglob and stat cost)."""
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    found += _python_sources(entry.path)
            elif entry.name.endswith(".py"):
                info = entry.stat()
                found.append((entry.path, info.st_size, info.st_mtime_ns))
    return found


def operator_key(op, options) -> str:
    """The sha256 naming an operator's record: its checked IR (``repr`` of the frozen
    records, complete and the same in every process), every option that shapes its C,
    and what :func:`cache_key` adds (compiler, flags, host, version), with polyc's
    own source."""
    vector_math = (options.vector_math if options.vector_math is not None
                   else simd_math_functions())
    parts = [repr(op), options.summary(), sorted(vector_math), options.machine.key,
             compiler_identity(options), list(options.cflags), host_fingerprint(),
             __version__, source_fingerprint()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


class KernelCache:
    """The memory cache of loaded kernels in front of the disk cache. Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._operators: dict[str, CompiledOperator] = {}
        self._loaded: dict[str, LoadedLibrary] = {}
        self._keys: dict[tuple, str] = {}
        self._key_locks: dict[str, threading.Lock] = {}
        self._private_dir: Path | None = None
        self._warned: set[tuple[str, Path]] = set()

    def get_library(self, c_source: str, options) -> LoadedLibrary:
        """The loaded shared object for ``c_source``; compiles it when no valid copy exists.

        Raises :class:`~polyc.errors.CompileError` when the compiler fails.
        """
        # Hashing a large C source costs tens of microseconds; a str caches its hash().
        memo = (c_source, options.cc, options.cflags)
        key = self._keys.get(memo)
        if key is None:
            key = cache_key(c_source, options)
            with self._lock:
                if len(self._keys) >= _KEY_MEMO_LIMIT:
                    self._keys.clear()
                self._keys[memo] = key
        library = self._loaded.get(key)
        if library is not None:
            return library
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # one build per key among this process's threads
            library = self._loaded.get(key)
            if library is not None:
                return library
            library = self._load_or_build(c_source, key, options)
            if "cc" in options.debug:
                print(f"polyc[cc]: kernel cache {library.cache_hit}: {library.so_path}",
                      file=sys.stderr)
            with self._lock:
                self._loaded[key] = dataclasses.replace(library, cache_hit=MEMORY,
                                                        compile_seconds=0.0)
                self._key_locks.pop(key, None)
            return library

    def clear_memory(self) -> None:
        """Forget loaded libraries (they stay loaded in the process; tests use this)."""
        with self._lock:
            self._loaded.clear()
            self._keys.clear()
            self._operators.clear()

    # ------------------------------------------------------------- operators

    def load_operator(self, op, options, generate: Callable[[], CompiledOperator]
                      ) -> tuple[LoadedLibrary, CompiledOperator]:
        """The kernel of ``op`` under ``options`` and its record: the one remembered when
        it is still valid, else the one ``generate()`` describes (its C built or found
        by :meth:`get_library`), remembered from then on. ``generate`` returns a record
        whose ``key`` is not yet known (any string)."""
        key = operator_key(op, options)
        found = self._remembered(key, options)
        if found is not None:
            return found
        compiled = generate()
        library = self.get_library(compiled.c_source, options)
        compiled = dataclasses.replace(compiled, key=library.key)
        with self._lock:
            self._operators[key] = compiled
        directory = self._trusted_directory(Path(options.cache_dir))
        if directory is not None:
            try:
                path = _record_path(directory, key)
                private_directory(path.parent)
                write_atomically(path, json.dumps(dataclasses.asdict(compiled)))
            except OSError:
                pass  # the kernel is loaded; the next process generates its C again
        return library, compiled

    def _remembered(self, key: str, options) -> tuple[LoadedLibrary, CompiledOperator] | None:
        compiled = self._operators.get(key)
        if compiled is not None:
            library = self._loaded.get(compiled.key)
            if library is not None:
                return library, compiled
        directory = self._trusted_directory(Path(options.cache_dir))
        if directory is None:
            return None
        path = _record_path(directory, key)
        if compiled is None:
            compiled = _read_record(path)
            if compiled is None:
                return None
        library = self._loaded.get(compiled.key) or self._load_verified(directory, compiled.key)
        if library is None or not all(hasattr(library.cdll, name) for name in
                                      (compiled.entry, launch_name(compiled.entry))):
            discard(path)
            return None
        if "cc" in options.debug:
            print(f"polyc[cc]: kernel cache {library.cache_hit}: {library.so_path} (found by "
                  f"the operator's record {path})", file=sys.stderr)
        with self._lock:
            self._operators[key] = compiled
            self._loaded.setdefault(compiled.key, dataclasses.replace(
                library, cache_hit=MEMORY, compile_seconds=0.0))
        return library, compiled

    # ------------------------------------------------------------- disk

    def _load_or_build(self, c_source: str, key: str, options) -> LoadedLibrary:
        directory = self._trusted_directory(Path(options.cache_dir))
        if directory is not None:
            library = self._load_verified(directory, key)
            if library is not None:
                return library
            try:
                return self._build(c_source, key, options, directory, directory / "failed")
            except OSError as error:
                self._warn("write", Path(options.cache_dir),
                           f"cannot write to the kernel cache {options.cache_dir} ({error})")
        private = self._private_directory()
        library = self._load_verified(private, key)
        if library is not None:
            return library
        return self._build(c_source, key, options, private, None)

    def _trusted_directory(self, cache_dir: Path) -> Path | None:
        """``cache_dir``, created if needed, or ``None`` (after a warning) when unusable."""
        try:
            private_directory(cache_dir)
            info = os.stat(cache_dir)
        except OSError as error:
            self._warn("create", cache_dir, f"cannot create the kernel cache {cache_dir} "
                                            f"({error})")
            return None
        if info.st_uid != os.getuid():
            self._warn("owner", cache_dir,
                       f"refusing the kernel cache {cache_dir}: it is owned by user "
                       f"{info.st_uid}, not by you (loading a kernel runs its code)")
            return None
        if info.st_mode & 0o022:
            self._warn("mode", cache_dir,
                       f"refusing the kernel cache {cache_dir}: it is writable by group or "
                       f"others (mode {stat.S_IMODE(info.st_mode):o}), which would let them "
                       f"run code in this process; fix with `chmod 700 {cache_dir}`")
            return None
        unsafe = _unsafe_parent(cache_dir)
        if unsafe is not None:
            self._warn("parent", cache_dir, f"refusing the kernel cache {cache_dir}: {unsafe}")
            return None
        return cache_dir

    def _load_verified(self, directory: Path, key: str) -> LoadedLibrary | None:
        """The cached library if its checksum matches and it loads; a bad entry is deleted."""
        so_path, sum_path = _entry_paths(directory, key)
        if not so_path.exists():
            return None
        if read_checked(so_path, sum_path) is None:
            discard(so_path, sum_path)
            return None
        try:
            cdll = ctypes.CDLL(str(so_path))
        except OSError:
            discard(so_path, sum_path)
            return None
        return LoadedLibrary(cdll, so_path, key, DISK, 0.0)

    def _build(self, c_source: str, key: str, options, directory: Path,
               failed_dir: Path | None) -> LoadedLibrary:
        so_path, sum_path = _entry_paths(directory, key)
        private_directory(so_path.parent)
        # A name of our own: another process replacing so_path cannot touch what we load.
        handle, private_name = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".so",
                                                dir=so_path.parent)
        os.close(handle)
        private = Path(private_name)
        try:
            seconds = build_shared_object(c_source, private, options, failed_dir=failed_dir,
                                          headers_dir=directory / "headers")
            checksum = checksum_line(private.read_bytes())
            try:
                cdll = ctypes.CDLL(str(private))
            except OSError as error:
                kept = keep_failed_source(c_source, source_stem(c_source), failed_dir)
                raise CompileError(f"the compiled kernel does not load: {error}\n"
                                   f"C source: {kept}") from None
            os.replace(private, so_path)
        finally:
            private.unlink(missing_ok=True)
        try:
            write_atomically(sum_path, checksum)
        except OSError:
            pass  # the kernel is loaded; without a checksum the entry is rebuilt next time
        return LoadedLibrary(cdll, so_path, key, MISS, seconds)

    def _private_directory(self) -> Path:
        with self._lock:
            if self._private_dir is None:
                self._private_dir = Path(tempfile.mkdtemp(prefix="polyc-kernels-"))
                atexit.register(shutil.rmtree, self._private_dir, ignore_errors=True)
            return self._private_dir

    def _warn(self, reason: str, cache_dir: Path, message: str) -> None:
        with self._lock:
            if (reason, cache_dir) in self._warned:
                return
            self._warned.add((reason, cache_dir))
        warnings.warn(f"polyc: {message}; compiling kernels into a private temporary "
                      f"directory instead (set POLYC_CACHE_DIR)", CacheWarning, stacklevel=2)


def _unsafe_parent(cache_dir: Path) -> str | None:
    """Why a parent of ``cache_dir`` would let someone else replace it, or ``None``.

    Whoever can rename entries of a parent can swap the cache for a directory of
    their own: each parent must belong to you or to root, and be writable by group
    or others only with the sticky bit (``/tmp``), which stops them renaming what
    is not theirs.
    """
    try:
        parents = cache_dir.resolve().parents
        for parent in parents:
            info = os.stat(parent)
            if info.st_uid not in (0, os.getuid()):
                return f"its parent {parent} is owned by user {info.st_uid}"
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                return (f"its parent {parent} is writable by group or others "
                        f"(mode {stat.S_IMODE(info.st_mode):o}) without the sticky bit, so "
                        f"they could replace the cache")
    except OSError as error:
        return f"cannot check its parents ({error})"
    return None


def _record_path(directory: Path, key: str) -> Path:
    return directory / "operators" / key[:2] / f"{key}.json"


def _read_record(path: Path) -> CompiledOperator | None:
    """The record at ``path``; ``None`` when there is none, and a damaged one is deleted."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        discard(path)
        return None
    try:
        fields = json.loads(text)
        compiled = CompiledOperator(**fields)
        if not all(isinstance(value, str) for value in fields.values()):
            raise TypeError("a field is not a string")
    except (ValueError, TypeError):
        discard(path)
        return None
    return compiled


def _entry_paths(directory: Path, key: str) -> tuple[Path, Path]:
    subdir = directory / key[:2]
    return subdir / f"{key}.so", subdir / f"{key}.sha256"


_DEFAULT_CACHE = KernelCache()


def get_library(c_source: str, options) -> LoadedLibrary:
    """The loaded shared object for ``c_source`` from the process-wide :class:`KernelCache`."""
    return _DEFAULT_CACHE.get_library(c_source, options)


def load_operator(op, options, generate: Callable[[], CompiledOperator]
                  ) -> tuple[LoadedLibrary, CompiledOperator]:
    """:meth:`KernelCache.load_operator` of the process-wide cache."""
    return _DEFAULT_CACHE.load_operator(op, options, generate)
