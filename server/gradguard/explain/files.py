"""Opening files named by untrusted text (a pasted traceback, a repository's trace.json).

Only regular files inside an allowed folder are read, with a size cap: never a device (/dev/zero), a FIFO
or /proc/self/fd/0 (which would hang on our own stdin), never through a symlink that leads out.
"""
from __future__ import annotations

import os
import stat

MAX_SOURCE_BYTES = 2 * 1024 * 1024


def inside(root_real: str, path: str) -> str | None:
    """`path` with symlinks resolved, if it stays inside the folder `root_real` (already resolved)."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    root = root_real.rstrip(os.sep) or os.sep
    if real == root or real.startswith(root if root.endswith(os.sep) else root + os.sep):
        return real
    return None


def read_capped(real: str, cap: int) -> bytes | None:
    """The bytes of a regular file of at most `cap` bytes, else None. Opened without blocking (a FIFO
    cannot hang us) and without following a symlink swapped in after `real` was resolved."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(real, flags)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        chunks, total = [], 0
        while total <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return None if total > cap else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_source(path: str, roots: list[str], cap: int = MAX_SOURCE_BYTES) -> str | None:
    """The text of `path` if it is a regular file of at most `cap` bytes inside one of `roots`."""
    if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
        return None
    for root in roots:
        try:
            root_real = os.path.realpath(root)
        except (OSError, ValueError):
            continue
        real = inside(root_real, path if os.path.isabs(path) else os.path.join(root_real, path))
        if real is not None:
            data = read_capped(real, cap)
            return data.decode("utf-8", errors="replace") if data is not None else None
    return None
