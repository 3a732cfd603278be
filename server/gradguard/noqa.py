"""Suppression comments: `# noqa: GG101`, `# noqa` (all codes) and `# gradguard: ignore[GG101, GG201]`."""
from __future__ import annotations

import re

from .source import Source

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*gradguard:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
ALL = frozenset({"*"})


class _AllCodes(frozenset):
    def __contains__(self, code) -> bool:  # a bare `# noqa` suppresses every code
        return True


def suppressed_codes(source: Source, line: int) -> frozenset:
    """Codes suppressed on a 0-based line."""
    text = source.line_text(line)
    if "#" not in text:
        return frozenset()
    codes: set[str] = set()
    for pattern in (_NOQA, _IGNORE):
        for m in pattern.finditer(text):
            if m.group("codes") is None:
                return _AllCodes()
            codes.update(c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c)
    return frozenset(codes)


def add_noqa(line_text: str, code: str) -> str:
    """The line with `code` added to its `# noqa:` comment (or a new one)."""
    m = _NOQA.search(line_text)
    if m and m.group("codes"):
        existing = re.split(r"[\s,]+", m.group("codes"))
        if code in existing:
            return line_text
        return line_text[: m.end("codes")] + ", " + code + line_text[m.end("codes"):]
    if m:  # a bare `# noqa` already suppresses everything
        return line_text
    return line_text.rstrip() + f"  # noqa: {code}"
