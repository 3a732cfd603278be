"""Hover texts: a finding's runtime error and fix, a tensor's facts, an autograd API,
or a rule's docs for a code inside a suppression comment."""
from __future__ import annotations

import re

from ..findings import Finding
from .documents import Snapshot
from .explanations import topic_for

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE = re.compile(r"[A-Z]+[0-9]+")
_SUPPRESSION = re.compile(r"#\s*(?:noqa\s*:\s*[A-Z0-9 ,]+|gradguard\s*:\s*ignore\[[^\]]*\])", re.IGNORECASE)

_T = {
    "en": {
        "runtime": "**At runtime** torch raises:",
        "silent": "**At runtime** no error is raised: the gradients are silently wrong.",
        "why": "**Why**",
        "fix_safe": "**Fix** (safe):",
        "fix_unsafe": "**Fix** (unsafe):",
        "tensor": "tensor",
        "leaf": "leaf",
        "nonleaf": "non-leaf (in the graph)",
        "leaf_unknown": "leaf or not: unknown",
        "rg_unknown": "requires_grad unknown",
        "created": "created on {where}",
        "created_by": " by `{by}`",
        "saved": "saved for backward by `{op}` on {where}",
        "written": "written in place by `{op}` on {where} → version {version}",
        "not_written": "not written in place",
    },
    "zh": {
        "runtime": "**运行时** torch 会报错：",
        "silent": "**运行时** 不会报错：梯度会悄悄出错。",
        "why": "**原因**",
        "fix_safe": "**快速修复**（安全修复）：",
        "fix_unsafe": "**快速修复**（不安全修复）：",
        "tensor": "张量",
        "leaf": "叶子张量（叶子节点）",
        "nonleaf": "非叶子张量（在计算图中）",
        "leaf_unknown": "是否为叶子张量：未知",
        "rg_unknown": "requires_grad 未知",
        "created": "创建于{where}",
        "created_by": "，由 `{by}` 创建",
        "saved": "在{where}被 `{op}` 为反向传播保存",
        "written": "在{where}被 `{op}` 原地修改 → 版本 {version}",
        "not_written": "没有被原地修改",
    },
}


def word_at(line: str, col: int) -> tuple[str, int, int] | None:
    """The identifier touching code-point column `col`, with its start and end."""
    for m in _IDENT.finditer(line):
        if m.start() <= col <= m.end():
            return m.group(), m.start(), m.end()
    return None


def suppression_code_at(line: str, col: int) -> tuple[str, int, int] | None:
    """A rule code under the cursor inside `# noqa: ...` or `# gradguard: ignore[...]`."""
    for m in _SUPPRESSION.finditer(line):
        if not (m.start() <= col <= m.end()):
            continue
        for code in _CODE.finditer(line, m.start(), m.end()):
            if code.start() <= col <= code.end() and code.group().upper() != "NOQA":
                return code.group(), code.start(), code.end()
    return None


def finding_markdown(finding: Finding, lang: str) -> str:
    t = _T[lang]
    parts = [f"**{finding.code}** `{finding.name}` — {finding.message}"]
    if finding.runtime_error:
        error = finding.runtime_error
        if not error.startswith("RuntimeError"):
            error = "RuntimeError: " + error
        parts.append(f"{t['runtime']}\n\n```text\n{error}\n```")
    elif finding.severity == "warning":
        parts.append(t["silent"])
    if finding.explanation:
        parts.append(f"{t['why']}\n\n{finding.explanation}")
    if finding.fix is not None:
        label = t["fix_safe"] if finding.fix.applicability == "safe" else t["fix_unsafe"]
        parts.append(f"{label}{'' if lang == 'zh' else ' '}{finding.fix.message}")
    return "\n\n".join(parts)


def tensor_markdown(facts, snapshot: Snapshot, lang: str) -> str:
    """What the analysis proved about one tensor name (TensorFacts from the engine)."""
    t = _T[lang]
    where = lambda span: snapshot.describe_line(span.start_line, lang)  # noqa: E731
    head = [t["tensor"]]
    if facts.is_leaf is True:
        head.append(t["leaf"])
    elif facts.is_leaf is False:
        head.append(t["nonleaf"])
    else:
        head.append(t["leaf_unknown"])
    if facts.requires_grad is None:
        head.append(t["rg_unknown"])
    else:
        head.append(f"requires_grad={facts.requires_grad}")
    lines = [f"**`{facts.name}`** — " + " · ".join(head), ""]
    if facts.created is not None:
        item = t["created"].format(where=where(facts.created))
        if facts.created_by:
            item += t["created_by"].format(by=facts.created_by)
        lines.append(f"- {item}")
    for op, span, _version in facts.saves or ():
        lines.append("- " + t["saved"].format(op=op, where=where(span)))
    writes = list(facts.writes or ())
    for op, span, version in writes:
        lines.append("- " + t["written"].format(op=op, where=where(span), version=version))
    if not writes:
        lines.append("- " + t["not_written"])
    return "\n".join(lines)


def topic_markdown(line: str, col: int, lang: str) -> tuple[str, int, int] | None:
    found = word_at(line, col)
    if found is None:
        return None
    word, start, end = found
    hit = topic_for(word, line[:start], line[end:])
    if hit is None:
        return None
    topic, heading = hit
    return topic.markdown(lang, heading), start, end
