"""One source of truth for the advice `gradguard trace` and `gradguard explain` give: the static rule's own recipe.

A runtime report knows the lines (where the tensor was saved, written, needed by backward()), not the program's
intent; the rules know the program and carry fixes that are trained beside hand fixes (`make fixcheck`). So when
the program's file can be read and a rule finding covers the lines the runtime saw, the runtime report gives that
finding's recipe (its fix title, or its message when it has no fix) and the command that applies it, instead of a
generic text of its own. A fix is given only if it holds: the program with it applied, analysed again, has
fewer findings of that rule (`fix_holds`).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..checking import apply_edits
from ..rules import all_rules


@dataclass(frozen=True)
class RuleAdvice:
    """The rule finding whose recipe a runtime report gives."""

    code: str  # "GG401"
    path: str
    line: int  # 1-based: the finding's own line
    message: str  # the finding's message (the recipe with the program's names and lines)
    fix_title: str  # "" when the rule offers no fix
    unsafe: bool

    def command(self) -> list[str]:
        """The command that applies the fix (empty when there is none)."""
        if not self.fix_title:
            return []
        return ["gradguard", "check", "--fix", *(["--unsafe-fixes"] if self.unsafe else []), "--select", self.code,
                self.path]

    def text(self, lang: str) -> str:
        """The advice as one line: the fix's title and the command, or the rule's message."""
        if not self.fix_title:
            return f"{self.code}: {self.message}"
        command = " ".join(shlex.quote(part) for part in self.command())
        if lang == "zh":
            return f"{self.fix_title}（{self.code}，第 {self.line} 行；`{command}` 会应用这个修复）"
        return f"{self.fix_title} ({self.code}, line {self.line}; `{command}` applies it)"

    def to_json(self) -> dict:
        return {"code": self.code, "file": self.path, "line": self.line, "message": self.message,
                "fix": self.fix_title or None, "command": self.command() or None}


def _lines_of(finding) -> tuple[int, set[int]]:
    own = finding.span.start_line + 1
    lines = {own} | {r.span.start_line + 1 for r in finding.related}
    return own, lines


def match(findings, path: str, write: int | None, others: tuple[int, ...], source: str | None = None,
          lang: str = "en") -> RuleAdvice | None:
    """The finding of `findings` (one file's report, at `path`) that names the runtime's write line and one of
    its other lines (the save, the backward() that needed it): its own line on the write first, then one whose
    related places hold the write. Without other lines, only a finding on the write line itself. None when no
    finding names the write, or names it with none of the others."""
    best = None
    for finding in findings:
        own, lines = _lines_of(finding)
        if write is None or write not in lines:
            continue
        if others and not (set(others) & (lines - {write}) or own in others):
            continue
        if not others and own != write:  # the write line alone: only a finding of its own
            continue
        rank = (own != write, own)
        if best is None or rank < best[0]:
            best = (rank, finding, own)
    if best is None:
        return None
    return _advice(best[1], path, best[2], findings, source, lang)


def for_error(findings, path: str, error_text: str, line: int, source: str | None = None,
              lang: str = "en") -> RuleAdvice | None:
    """The finding of `findings` whose rule predicts `error_text` (its runtime error is in it) and that names `line`
    (where a traceback says the error was raised: the backward() for errors raised in backward): its own line on it
    first. None when none does."""
    predicts = {rule.code for rule in all_rules() if rule.error_match and rule.error_match in error_text}
    best = None
    for finding in findings:
        own, lines = _lines_of(finding)
        if finding.code not in predicts or line not in lines:
            continue
        rank = (own != line, own)
        if best is None or rank < best[0]:
            best = (rank, finding, own)
    return _advice(best[1], path, best[2], findings, source, lang) if best is not None else None


def _advice(finding, path: str, own: int, findings, source: str | None, lang: str) -> RuleAdvice:
    fix = finding.fix
    if fix is not None and source is not None and not fix_holds(source, path, finding, findings, lang):
        fix = None  # applied, it leaves the same rule's finding: the rule's message, not a command that fails
    return RuleAdvice(code=finding.code, path=path, line=own, message=finding.message,
                      fix_title=fix.message if fix is not None else "",
                      unsafe=fix is not None and fix.applicability != "safe")


def fix_holds(source: str, path: str, finding, findings, lang: str) -> bool:
    """The program with `finding`'s fix applied, analysed again, has fewer findings of the same rule: the fix
    removed the mechanism it names rather than moving it."""
    edits = [(e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col, e.new_text) for e in finding.fix.edits]
    fixed, applied = apply_edits(source, [(finding.code, edits)])
    if not applied:
        return False
    before = sum(1 for f in findings if f.code == finding.code)
    return sum(1 for f in findings_of(fixed, path, lang) if f.code == finding.code) < before


def findings_of(source: str, path: str, lang: str) -> list:
    """The static engine's findings for one file's text ([] when it cannot check it)."""
    # libcst loads only when a runtime report asks: the tracer imports this package before the program runs
    from ..engine import check_text

    try:
        return list(check_text(source, path, lang=lang).findings)
    except Exception:  # a file the engine cannot read is a report without rule advice, never a crash
        return []
