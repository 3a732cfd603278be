"""What the engine reports: findings with ranges, related places and fix edits.

Output adapters (CLI formatters, the language server) only convert these.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .source import Span

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the text in `span` with `new_text` (positions as in `Span`)."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    applicability: str  # SAFE or UNSAFE
    message: str  # what the fix does; for unsafe fixes also what changes
    edits: tuple[Edit, ...]


def edits_overlap(edits) -> bool:
    """Whether two edits of a fix touch the same text (one inside another, or crossing): applied one after the
    other they would garble the line, so such a fix is not offered."""
    spans = sorted(((e.span.start_line, e.span.start_col), (e.span.end_line, e.span.end_col)) for e in edits)
    return any(later[0] < earlier[1] or later == earlier for earlier, later in zip(spans, spans[1:]))


@dataclass(frozen=True)
class Related:
    span: Span
    message: str
    path: str = ""  # another file of the project (the finding's own file when empty)


@dataclass(frozen=True)
class Finding:
    code: str  # "GG101"
    name: str  # "leaf-inplace"
    message: str  # one line, in the requested language
    span: Span  # the offending expression or statement
    severity: str = "error"  # "error" (raises at runtime) or "warning" (silently wrong)
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    runtime_error: str = ""  # the exact text torch raises (empty for silent bugs)
    explanation: str = ""  # Markdown: a short version timeline with this code's own lines


@dataclass(frozen=True)
class ParseNote:
    """A block that could not be parsed: reported once, never as a rule finding."""

    span: Span
    message: str


@dataclass
class Report:
    """Everything the engine found in one file."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    parse_notes: list[ParseNote] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)  # hidden by noqa comments
    facts: object | None = None  # gradguard.facts.Facts, for hover
    source: object | None = None  # gradguard.source.Source: the text as analysed, with its blocks
    # Findings this file's run puts in other project files (a write in `losses.py` reached from `train.py`)
    elsewhere: list = field(default_factory=list)  # [(path, Finding)]
    program: object | None = None  # gradguard.project.LinkedProgram: the definitions linked from other files
