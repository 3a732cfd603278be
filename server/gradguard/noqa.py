"""Suppression comments: `# noqa: GG101`, `# noqa` (all codes), `# gradguard: ignore[GG101, GG201]`, and for a
whole file a comment line `# gradguard: noqa` (all codes) or `# gradguard: noqa: GG101, GG201`."""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache

from .source import Source

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*gradguard:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_FILE_NOQA = re.compile(r"^[ \t]*#\s*gradguard:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?[ \t]*$",
                        re.IGNORECASE | re.MULTILINE)
_FILE_NOQA_HINT = re.compile(r"gradguard:\s*noqa", re.IGNORECASE)
ALL = frozenset({"*"})


class _AllCodes(frozenset):
    def __contains__(self, code) -> bool:  # a bare `# noqa` suppresses every code
        return True


def _split(codes: str) -> set[str]:
    return {c.upper() for c in re.split(r"[\s,]+", codes) if c}


@lru_cache(maxsize=8)
def file_suppressed_codes(text: str) -> frozenset:
    """Codes suppressed in the whole file by a `# gradguard: noqa[: CODES]` comment line."""
    if not _FILE_NOQA_HINT.search(text):
        return frozenset()
    codes: set[str] = set()
    for m in _FILE_NOQA.finditer(text):
        if m.group("codes") is None:
            return _AllCodes()
        codes |= _split(m.group("codes"))
    return frozenset(codes)


def suppressed_codes(source: Source, line: int) -> frozenset:
    """Codes suppressed on a 0-based line (by its own comment or by a file-level one)."""
    whole = file_suppressed_codes(source.text)
    if isinstance(whole, _AllCodes):
        return whole
    text = source.line_text(line)
    if "#" not in text:
        return whole
    codes: set[str] = set(whole)
    for pattern in (_NOQA, _IGNORE):
        for m in pattern.finditer(text):
            if m.group("codes") is None:
                return _AllCodes()
            codes |= _split(m.group("codes"))
    return frozenset(codes)


@dataclass(frozen=True)
class Directive:
    line: int  # 0-based
    col: int
    kind: str  # "noqa", "ignore" or "file"
    codes: tuple[str, ...] | None  # None: every code
    text: str

    @property
    def file_level(self) -> bool:
        return self.kind == "file"


def directives(text: str) -> list[Directive]:
    """The suppression comments of a file, found in real comments only (not in strings)."""
    out: list[Directive] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        line, col = tok.start[0] - 1, tok.start[1]
        comment = tok.string
        m = _FILE_NOQA.match(comment)
        if m and tok.line[:col].strip() == "":
            codes = m.group("codes")
            out.append(Directive(line, col, "file", None if codes is None else tuple(sorted(_split(codes))), comment))
            continue
        for kind, pattern in (("noqa", _NOQA), ("ignore", _IGNORE)):
            for m in pattern.finditer(comment):
                codes = m.group("codes")
                out.append(Directive(line, col + m.start(), kind,
                                     None if codes is None else tuple(sorted(_split(codes))), m.group(0)))
    return out


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
