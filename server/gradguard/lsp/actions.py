"""Code actions: the finding's own fix, "Disable GGxxx for this line", and fix-all.

Edits come from the finding (carried in Diagnostic.data) or, for fix-all, from a
fresh engine run on the current text. Every WorkspaceEdit names the document version.
"""
from __future__ import annotations

import io
import re
import tokenize
from typing import Any

from lsprotocol import types

from .convert import range_from_json

FIX_ALL_KIND = "source.fixAll.gradguard"

_NOQA_CODES = re.compile(r"#\s*noqa\s*:\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*", re.IGNORECASE)
_NOQA_BARE = re.compile(r"#\s*noqa\b(?!\s*:)", re.IGNORECASE)
_IGNORE_CODES = re.compile(r"#\s*gradguard\s*:\s*ignore\[([^\]]*)\]")


def comment_start(line: str) -> int | None:
    """Code-point column of the `#` that starts the line's comment, if any (strings aware)."""
    if "#" not in line:
        return None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    # Unbalanced brackets or an open string: fall back to the last '#' outside quotes we can see.
    in_str: str | None = None
    for i, ch in enumerate(line):
        if in_str:
            if ch == in_str:
                in_str = None
        elif ch in "'\"":
            in_str = ch
        elif ch == "#":
            return i
    return None


def noqa_edit(line: str, code: str) -> tuple[int, int, str]:
    """(start col, end col, new text) that suppresses `code` on this line, in code points.

    Extends `# noqa: A, B` or `# gradguard: ignore[A]`, turns a bare `# noqa` into
    `# noqa: CODE`, and otherwise adds `  # noqa: CODE` before any existing comment.
    """
    hash_at = comment_start(line)
    if hash_at is not None:
        comment = line[hash_at:]
        m = _NOQA_CODES.search(comment)
        if m:
            end = hash_at + m.end()
            return end, end, f", {code}"
        m = _IGNORE_CODES.search(comment)
        if m:
            end = hash_at + m.end(1)
            sep = ", " if m.group(1).strip() else ""
            return end, end, f"{sep}{code}"
        m = _NOQA_BARE.search(comment)
        if m:
            end = hash_at + m.end()
            return end, end, f": {code}"
        code_end = len(line[:hash_at].rstrip())
        return code_end, hash_at, f"  # noqa: {code}  "
    code_end = len(line.rstrip())
    return code_end, code_end, f"  # noqa: {code}"


def versioned_edit(
    edits_by_uri: dict[str, list[types.TextEdit]], versions: dict[str, int | None], document_changes: bool
) -> types.WorkspaceEdit:
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions.get(uri)),
                    edits=edits,
                )
                for uri, edits in edits_by_uri.items()
            ]
        )
    return types.WorkspaceEdit(changes=edits_by_uri)


def fix_title(code: str, fix: dict[str, Any], lang: str) -> str:
    if lang == "zh":  # full-width punctuation, as in the rest of a zh title
        label = code if fix["applicability"] == "safe" else f"{code}，不安全修复"
        return f"gradguard（{label}）：{fix['message']}"
    if fix["applicability"] == "safe":
        return f"gradguard ({code}): {fix['message']}"
    return f"gradguard ({code}, unsafe): {fix['message']}"


def fix_action(
    diagnostic: types.Diagnostic,
    fix: dict[str, Any],
    versions: dict[str, int | None],
    document_changes: bool,
    lang: str,
) -> types.CodeAction:
    edits_by_uri: dict[str, list[types.TextEdit]] = {}
    for edit in fix["edits"]:
        edits_by_uri.setdefault(edit["uri"], []).append(
            types.TextEdit(range=range_from_json(edit["range"]), new_text=edit["newText"])
        )
    return types.CodeAction(
        title=fix_title(str(diagnostic.code), fix, lang),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=fix["applicability"] == "safe",
        edit=versioned_edit(edits_by_uri, versions, document_changes),
    )


def disable_action(
    diagnostic: types.Diagnostic,
    uri: str,
    line_no: int,
    line_text: str,
    client_units,  # callable: str -> int, the codec's unit counter
    version: int | None,
    document_changes: bool,
    lang: str,
) -> types.CodeAction:
    code = str(diagnostic.code)
    start, end, new_text = noqa_edit(line_text, code)
    rng = types.Range(
        start=types.Position(line=line_no, character=client_units(line_text[:start])),
        end=types.Position(line=line_no, character=client_units(line_text[:end])),
    )
    title = f"gradguard（{code}）：对此行禁用" if lang == "zh" else f"gradguard ({code}): Disable {code} for this line"
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=versioned_edit({uri: [types.TextEdit(range=rng, new_text=new_text)]}, {uri: version}, document_changes),
    )


def docs_action(diagnostic: types.Diagnostic, lang: str) -> types.CodeAction:
    code = str(diagnostic.code)
    title = f"gradguard（{code}）：查看规则文档" if lang == "zh" else f"gradguard ({code}): Show documentation"
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        command=types.Command(title=title, command="gradguard.ruleDocs", arguments=[code]),
    )


def fix_all_action(uri: str, version: int | None, lang: str) -> types.CodeAction:
    title = "gradguard: 应用所有安全修复" if lang == "zh" else "gradguard: Fix all (safe fixes)"
    return types.CodeAction(
        title=title,
        kind=FIX_ALL_KIND,
        data={"fixAll": True, "uri": uri, "version": version},
    )


def non_overlapping(edits: list[tuple[tuple[int, int, int, int], Any]]) -> list[Any]:
    """Keep edits in document order, dropping any that overlaps an earlier one."""
    kept = []
    last_end = (-1, -1)
    for key, edit in sorted(edits, key=lambda e: e[0]):
        start = key[:2]
        if start < last_end:
            continue
        kept.append(edit)
        last_end = key[2:]
    return kept
