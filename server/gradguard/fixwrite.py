"""How --fix and --add-noqa put fixed text on disk: re-read, compare, encode as the file was, write atomically
inside the checked folders (fileio does the writing)."""
from __future__ import annotations

import codecs
import os

from .decoding import Decoded, decode_python, encode_python
from .discovery import NOTEBOOK_SUFFIX
from .fileio import Roots, SourceError, read_regular, write_file


def write_atomically(path: str, text: str, expected_original: str, decoded: Decoded | None = None,
                     roots: Roots | None = None) -> str | None:
    """Replace the file's content via a temporary file and rename; None on success, else the reason.

    Writes through symlinks to the real file, but only when that file lies inside `roots` (the checked folders;
    a committed symlink to a file elsewhere is refused). Keeps the file's mode, encoding and BOM (the text carries
    its own line endings), refuses read-only files and files that changed since they were read, and never leaves
    a truncated file or a temporary file behind (also on Ctrl-C).
    """
    target = os.path.realpath(path)
    if roots is not None and not roots.contains(target):
        return "a symlink to a file outside the checked folders; not fixed"
    try:
        raw = read_regular(target, 1 << 40)
        mode = os.stat(target).st_mode
    except (OSError, SourceError) as exc:
        return f"cannot re-read before writing: {exc}"
    try:
        if path.endswith(NOTEBOOK_SUFFIX):
            current = raw.decode("utf-8-sig")
            decoded = decoded or Decoded("", "utf-8", raw.startswith(codecs.BOM_UTF8))
        else:
            now = decode_python(raw)
            current, decoded = now.text, decoded or now
    except (SourceError, UnicodeDecodeError) as exc:
        return f"cannot re-read before writing: {exc}"
    if current.replace("\r\n", "\n") != expected_original.replace("\r\n", "\n"):
        return "file changed on disk while gradguard was checking it; not fixed"
    if not mode & 0o222:
        return "file is read-only; not fixed"
    try:
        data = encode_python(text, decoded)
    except UnicodeEncodeError:
        return f"the fixed text cannot be written in the file's encoding ({decoded.encoding}); not fixed"
    try:
        write_file(target, data, roots, mode)
    except PermissionError as exc:
        if exc.errno is not None and exc.strerror and "checked folders" in exc.strerror:
            return f"{exc.strerror}; not fixed"
        return f"cannot write: {exc.strerror or exc}"
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None
