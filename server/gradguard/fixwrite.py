"""How fixes become text and text goes on disk: fix edits applied to a text (for files and notebook cells alike),
and for --fix and --add-noqa the fixed text re-read, compared, encoded as the file was and written atomically
inside the checked folders (fileio does the writing)."""
from __future__ import annotations

import codecs
import os
import re

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


def _raw_line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer(r"\r\n|\r|\n", text))
    return starts


def apply_edits(text: str, items) -> tuple[str, list]:
    """Apply whole fixes without overlaps, last first; keeps every line ending outside the edits.

    `items` are (tag, [(start_line, start_col, end_line, end_col, new_text), ...]); positions count lines
    ended by \\n, \\r\\n or \\r, as the engine does. A new text's `\\n` takes the line ending of the line it
    lands on. Returns the new text and the tags applied.
    """
    starts = _raw_line_starts(text)

    def offset(line: int, col: int) -> int:
        line = max(0, min(line, len(starts) - 1))
        end = starts[line + 1] if line + 1 < len(starts) else len(text)
        content_end = end
        while content_end > starts[line] and text[content_end - 1] in "\r\n":
            content_end -= 1
        return min(starts[line] + col, content_end if line + 1 < len(starts) else len(text))

    def ending(line: int) -> str:
        if line + 1 >= len(starts):
            line = len(starts) - 2
        if line < 0:
            return "\n"
        seg = text[starts[line]:starts[line + 1]]
        return "\r\n" if seg.endswith("\r\n") else seg[-1:] or "\n"

    chosen, taken, applied = [], [], []
    for tag, edits in items:
        ranges = [(offset(sl, sc), offset(el, ec)) for sl, sc, el, ec, _ in edits]
        if any((a < tb and ta < b) or a == ta for a, b in ranges for ta, tb in taken):
            continue
        taken.extend(ranges)
        nl = [ending(sl) for sl, _sc, _el, _ec, _new in edits]
        chosen.extend(((r, new.replace("\n", n) if n != "\n" else new) for r, (*_, new), n in zip(ranges, edits, nl)))
        applied.append(tag)
    for (start, end), new in sorted(chosen, key=lambda item: item[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text, applied
