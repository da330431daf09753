"""Small JSON memos of what this machine is (its CPU, its C compiler), kept in the cache
directory so that a new process need not ask again.

A memo decides what code polyc generates and how kernels are keyed, so it is read
only when nobody else could have written it: a file of ours that neither group nor
others may write. Anything unreadable, malformed or untrusted reads as no memo;
writes go through a private temporary name and ``os.replace``, and a failed write
is ignored (the next process asks again).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def read_memo(path: Path) -> dict | None:
    """The JSON object at ``path`` if the file is ours alone; ``None`` otherwise."""
    try:
        info = path.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def private_directory(path: Path) -> None:
    """Make the directory ``path`` and every missing one above it, each private to this
    user (mode 0o700); existing directories stay as they are. ``mkdir(mode=0o700,
    parents=True)`` gives the parents it creates the default mode: a memo written
    first had made the kernel cache itself readable by everyone. Raises
    :class:`OSError`."""
    missing = []
    while not path.is_dir() and path.parent != path:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)


def write_memo(path: Path, value: dict) -> None:
    """Leave ``value`` at ``path`` (its directory made private), or nothing on failure."""
    try:
        private_directory(path.parent)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(value, file)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        pass
