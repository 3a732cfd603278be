"""The default text report, `--statistics`, `--show-fixes` and the closing summary lines."""
from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from ..findings import SAFE
from .common import _color, _line_said, _place, _shorten, _unused_message, printable

if TYPE_CHECKING:
    from ..checking import FileResult, UnusedNoqa  # noqa: F401


def format_text(results: list[FileResult], concise: bool, color: bool, lang: str,
                unused: dict | None = None) -> str:
    paint = _color(color)
    out: list[str] = []
    for r in results:
        text = r.fixed_text if r.fixed_text is not None else r.original_text
        lines = re.split(r"\r\n|\r|\n", text)
        path = printable(r.path)  # a repository's names, code and quotes of it: no raw ESC sequence on the terminal
        for note in r.notes:
            out.append(f"{path}:{_place(r, note.span.start_line, note.span.start_col)}: "
                       f"{paint('未分析' if lang == 'zh' else 'parse', '33')} "
                       f"{printable(note.message)}")
        for f in r.findings:
            head = (f"{paint(path, '1')}:{_place(r, f.span.start_line, f.span.start_col)}: {paint(f.code, '31;1')} "
                    f"{printable(f.message)}")
            out.append(head)
            if concise:
                continue
            width = len(str(r.where(f.span.end_line)[1] + 1))
            for ln in range(f.span.start_line, min(f.span.end_line, f.span.start_line + 3) + 1):
                line_text = lines[ln] if ln < len(lines) else ""
                out.append(f"  {str(r.where(ln)[1] + 1).rjust(width)} | {printable(line_text)}")
                if ln == f.span.start_line:
                    end = f.span.end_col if f.span.end_line == ln else len(line_text)
                    start = len(printable(line_text[:f.span.start_col]))  # under the escaped text
                    marks = len(printable(line_text[f.span.start_col:end]))
                    out.append(f"  {' ' * width} | {' ' * start}{paint('^' * max(1, marks), '31')}")
            note = "注" if lang == "zh" else "note"
            for rel in f.related:
                place = f"{printable(rel.path)}:{rel.span.start_line + 1}" if rel.path else \
                    _line_said(*r.where(rel.span.start_line), lang)
                out.append(f"  {' ' * width} = {paint(note, '36')}: {place}: {printable(rel.message)}")
            if f.explanation:
                label = "why" if lang != "zh" else "原因"
                out.append(f"  {' ' * width} = {paint(label, '36')}:")
                out.extend(f"  {' ' * width}     {printable(line)}" for line in f.explanation.splitlines())
            if f.runtime_error:
                label = "torch raises" if lang != "zh" else "torch 报错"
                out.append(f"  {' ' * width} = {label}: RuntimeError: {printable(_shorten(f.runtime_error))}")
            if f.fix:
                kind = f.fix.applicability if lang != "zh" else {"safe": "安全修复", "unsafe": "不安全修复"}[f.fix.applicability]
                if lang == "zh":  # 安全修复 / 不安全修复 already say "fix"
                    out.append(f"  {' ' * width} = {paint(kind, '32')}: {printable(f.fix.message)}")
                else:
                    out.append(f"  {' ' * width} = {paint('fix', '32')} ({kind}): {printable(f.fix.message)}")
            out.append("")
        for u in (unused or {}).get(r.path, []):
            out.append(f"{path}:{_place(r, u.line, u.col)}: {paint('unused-noqa', '33')} "
                       + printable(_unused_message(u, lang)))
    return "\n".join(out)


def format_statistics(results: list[FileResult], fix_mode: str, unused: dict | None = None) -> str:
    counts: Counter = Counter()
    names: dict[str, str] = {}
    fixable: set[str] = set()
    for r in results:
        for f in r.findings:
            counts[f.code] += 1
            names[f.code] = f.name
            if f.fix and f.fix.applicability == SAFE:
                fixable.add(f.code)
    n_unused = sum(len(u) for u in (unused or {}).values())
    if n_unused:  # --report-unused-noqa: not a rule, so no code
        counts["-"], names["-"] = n_unused, "unused-noqa"
    if not counts:
        return ""
    width = len(str(max(counts.values())))
    return "\n".join(f"{str(n).rjust(width)}\t{code}\t{'[*] ' if code in fixable else ''}{names[code]}"
                     for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def summary_lines(results: list[FileResult], lang: str, fix_mode: str, unused: dict | None = None) -> list[str]:
    """The closing lines; "All checks passed" only when every path was read, every line analysed and nothing
    reported (an unused suppression reported by --report-unused-noqa counts as a problem, as ruff's RUF100)."""
    zh = lang == "zh"
    unused = unused or {}
    checked = sum(1 for r in results if not r.error and not r.skipped)
    errors = sum(1 for r in results if r.error)
    unparsed = sum(1 for r in results if r.notes)
    problems = sum(len(r.findings) + len(unused.get(r.path, ())) for r in results)
    with_problems = sum(1 for r in results if r.findings or unused.get(r.path))
    fixed = sum(r.applied for r in results)
    fixed_files = sum(1 for r in results if r.applied)
    safe = sum(1 for r in results for f in r.findings if f.fix and f.fix.applicability == SAFE)
    unsafe = sum(1 for r in results for f in r.findings if f.fix and f.fix.applicability != SAFE)
    out = []
    added = sum(r.noqa_added for r in results)
    if added:
        files = sum(1 for r in results if r.noqa_added)
        out.append(f"在 {files} 个文件中添加了 {added} 条 noqa 注释。" if zh
                   else f"Added {added} noqa comment(s) in {files} file(s).")
    if fixed:
        out.append(f"已修复 {fixed_files} 个文件中的 {fixed} 个问题。" if zh
                   else f"Fixed {fixed} problem(s) in {fixed_files} file(s).")
    if problems:
        out.append(f"在 {with_problems} 个文件中发现 {problems} 个问题（共检查 {checked} 个文件）。" if zh
                   else f"Found {problems} problem(s) in {with_problems} file(s) ({checked} file(s) checked).")
        hidden = unsafe if fix_mode != "unsafe" else 0
        if safe and fix_mode == "none":
            line = f"[*] {safe} 个可用 --fix 修复" if zh else f"[*] {safe} fixable with --fix"
            if hidden:
                line += (f"（另有 {hidden} 个不安全修复，需加 --unsafe-fixes）" if zh
                         else f" ({hidden} hidden fix(es) can be enabled with --unsafe-fixes)")
            out.append(line + ("。" if zh else "."))
        elif hidden:
            flag = "--fix --unsafe-fixes" if fix_mode == "none" else "--unsafe-fixes"
            out.append(f"没有安全修复（另有 {hidden} 个不安全修复，需加 {flag}）。" if zh
                       else f"No safe fixes available ({hidden} hidden fix(es) can be enabled with {flag}).")
    elif not errors and not unparsed and checked:
        out.append(f"全部通过（检查了 {checked} 个文件）。" if zh else f"All checks passed ({checked} file(s) checked).")
    elif not errors and not unparsed:
        out.append("没有检查任何文件。" if zh else "No files were checked.")
    elif checked > unparsed:
        out.append(f"已分析的代码中没有发现问题（共检查 {checked} 个文件）。" if zh
                   else f"No problems found in the code that was analysed ({checked} file(s) checked).")
    if unparsed:
        out.append(f"{unparsed} 个文件中有未分析的代码（见上文；这些代码没有检查）。" if zh
                   else f"{unparsed} file(s) had code that was not analysed (reported above); that code was not checked.")
    if errors:
        out.append(f"{errors} 个路径无法检查（见上文）。" if zh
                   else f"{errors} path(s) could not be checked (reported above).")
    return out


def _fixes_listing(results: list[FileResult], fix_mode: str, lang: str) -> str:
    """--show-fixes: what --fix changed per file and code (or, without --fix, what it would change)."""
    zh = lang == "zh"
    rows: list[tuple[str, Counter]] = []
    if fix_mode != "none":
        rows = [(r.path, r.applied_codes) for r in results if r.applied_codes]
        head = "已应用的修复：" if zh else "Fixed:"
    else:
        for r in results:
            c = Counter(f.code for f in r.findings if f.fix and f.fix.applicability == SAFE)
            if c:
                rows.append((r.path, c))
        head = "--fix 会修复：" if zh else "Would fix with --fix:"
    if not rows:
        return "没有修复。" if zh else "No fixes."
    out = [head]
    for path, counts in rows:
        out.append(f"- {printable(path)}:")
        out.extend(f"    {n} × {code}" for code, n in sorted(counts.items()))
    return "\n".join(out)
