"""Files the kernel cache trusts by their checksum: the kernels' shared objects and the
precompiled headers (:mod:`polyc.jit.cache`, :mod:`polyc.jit.headers`).

Each such file has a ``.sha256`` beside it holding the sha256 of its bytes, and is read
only when the two match. Both are installed with ``os.replace`` from private names, so
another process sees either the old file or the new one, never half of one.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def checksum_line(data: bytes) -> str:
    """The text of the ``.sha256`` file that vouches for ``data``."""
    return hashlib.sha256(data).hexdigest() + "\n"


def read_checked(path: Path, sum_path: Path) -> bytes | None:
    """``path``'s bytes when ``sum_path`` holds their sha256; ``None`` when either file
    is missing or unreadable, or they disagree."""
    try:
        data = path.read_bytes()
        expected = sum_path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return data if expected.strip() == checksum_line(data).strip() else None


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` under a private name in its folder, then rename it."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="ascii") as file:
            file.write(text)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def discard(*paths: Path) -> None:
    """Delete ``paths``, those already gone or not deletable left as they are."""
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass
