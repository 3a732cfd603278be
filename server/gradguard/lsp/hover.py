"""Hover texts: a finding's runtime error and fix, a tensor's facts, an autograd API,
or a rule's docs for a code inside a suppression comment."""
from __future__ import annotations

import re
import weakref

import libcst as cst

from ..findings import Finding
from ..i18n import created_by, zh_spacing
from ..rules._common import is_form
from .documents import Snapshot
from .explanations import topic_for

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BACKTICKS = re.compile(r"`+")
_INLINE_MARKUP = re.compile(r"([\\\[\]<>])")


def code_span(code: str) -> str:
    """`code` as a markdown code span that nothing inside it can end: the fence is one backtick longer
    than the longest backtick run in the code (CommonMark), padded with a space where the code starts
    or ends with a backtick. User code in hovers goes through here (a string literal holding a backtick
    once ended the span and the rest rendered as markdown: images, links)."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(code)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def code_span_body(code: str) -> str:
    """code_span(code) without its outermost backtick on each side, for templates written as "`{code}`"."""
    return code_span(code)[1:-1]


def safe_inline(text: str) -> str:
    """Text that uses the backtick convention (rule messages, fix titles, explanations) made safe to render:
    its code spans are found as CommonMark finds them, and outside them the characters that make links,
    images and HTML (`[`, `]`, `<`, `>`, `\\`) are escaped, so code that broke out of a span is shown
    as text, never rendered."""
    out = []
    pos = 0
    runs = list(_BACKTICKS.finditer(text))
    i = 0
    while i < len(runs):
        opening = runs[i]
        closing = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opening.group())), None)
        if closing is None:
            i += 1
            continue
        out.append(_INLINE_MARKUP.sub(r"\\\1", text[pos:opening.start()]))
        out.append(text[opening.start():runs[closing].end()])
        pos = runs[closing].end()
        i = closing + 1
    rest = text[pos:]
    out.append(_INLINE_MARKUP.sub(r"\\\1", rest.replace("`", "\\`")))
    return "".join(out)
_CODE = re.compile(r"[A-Z]+[0-9]+")
_SUPPRESSION = re.compile(r"#\s*(?:noqa\s*:\s*[A-Z0-9 ,]+|gradguard\s*:\s*ignore\[[^\]]*\])", re.IGNORECASE)

_T = {
    "en": {
        "runtime": "**At runtime** torch raises:",
        "runtime_form": "**At runtime** torch raises ({parts}: what depends on the run):",
        "silent": "**At runtime** no error is raised: the gradients are silently wrong.",
        "why": "**Why**",
        "fix_safe": "**Fix** (safe):",
        "fix_unsafe": "**Fix** (unsafe):",
        "tensor": "tensor",
        "leaf": "leaf",
        "nonleaf": "non-leaf (in the graph)",
        "leaf_unknown": "leaf or not: unknown",
        "rg_unknown": "requires_grad unknown",
        "made_in": " (returned; made on {where}{by})",
        "rg_depends": "requires_grad depends on `{flag}`",
        "arm_on": "with `{flag}` true (grad enabled): {state}",
        "arm_off": "with `{flag}` false (`set_grad_enabled(False)`, no graph): {state}",
        "created": "created on {where}",
        "created_by": " by {by}",
        "saved": "saved for backward by `{op}` on {where}",
        "written": "written in place by `{op}` on {where} → version {version}",
        "not_written": "not written in place",
        "timeline": "**Versions** (`_version`, as the analysis follows them):",
        "v_created": "{line}: created{by}, version {v}",
        "v_saved": "{line}: `{op}` saves {what} for backward at version {v}",
        "v_saved_alias": "{line}: `{op}` saves {alias} (the same storage) for backward at version {v} of {alias}'s counter",
        "what_input": "it (an input)",
        "what_output": "it (its output)",
        "what_parameters": "the parameters",
        "what_view": "`{code}` (a view of it)",
        "v_written": "{line}: `{op}` writes it in place → version {v}",
        "v_written_via": {"detach": "{line}: `{op}` writes it through a `.detach()` alias (same version counter) → version {v}",
                          "view": "{line}: `{op}` writes it through a view (same version counter) → version {v}"},
        "v_raises": "{line}: `{op}` would write it in place, but torch raises at this line instead (the version stays {v})",
        "v_data": "{line}: `{op}` writes the same storage through `.data`: the values change, the version counter does not, so backward does not notice (silently wrong gradients)",
        "v_repeats": " (repeats in the loop)",
        "v_repeats_first": " (the first pass; it repeats in the loop, at later versions)",
        "v_stale": "{line}: `backward()` reads what `{op}` saved and expects version {then}, but {wline} already made it {now}: it raises",
        "v_stale_loop": "{line}: `backward()` reads what `{op}` saved on every pass; the first pass's save expects version {then}, but {wline} already made it {now}: it raises",
        "v_read": "{line}: `backward()` reads what `{op}` saved at version {then}, as expected",
        "v_read_silent": "{line}: `backward()` reads what `{op}` saved: version {then}, as it expects, but with the values {wline} wrote without a version bump (a wrong gradient, no error)",
        "v_pending": "a `backward()` through this graph would read what `{op}` saved and expect version {then}",
        "v_freed": "{line}: `backward()` needs what `{op}` saved again, but the `backward()` of {fline} already freed it: it raises",
        "alias_detach": "`{name}` is `{base}.detach()`: same storage and the same version counter as `{base}`, so an in-place write on either bumps the version that `{base}`'s saves check.",
        "alias_view": "`{name}` is a view of `{base}`: same storage and version counter.",
        "alias_data": "`{name}` is `{base}.data`: same storage but its own version counter, so in-place writes on `{name}` change what backward reads without torch noticing.",
    },
    "zh": {
        "runtime": "**运行时** torch 会报错：",
        "runtime_form": "**运行时** torch 会报错（{parts} 取决于实际运行）：",
        "silent": "**运行时** 不会报错：梯度会悄悄出错。",
        "why": "**原因**",
        "fix_safe": "**安全修复**：",
        "fix_unsafe": "**不安全修复**：",
        "tensor": "张量",
        "leaf": "叶子张量（叶子节点）",
        "nonleaf": "非叶子张量（在计算图中）",
        "leaf_unknown": "是否为叶子张量：未知",
        "rg_unknown": "requires_grad 未知",
        "made_in": "（返回值；在{where}{by}）",
        "rg_depends": "requires_grad 取决于 `{flag}`",
        "arm_on": "`{flag}` 为真（启用梯度）时：{state}",
        "arm_off": "`{flag}` 为假（`set_grad_enabled(False)`，不建计算图）时：{state}",
        "created": "创建于{where}",
        "created_by": "，由 {by} 创建",
        "saved": "在{where}被 `{op}` 为反向传播保存",
        "written": "在{where}被 `{op}` 原地修改 → 版本 {version}",
        "not_written": "没有被原地修改",
        "timeline": "**版本**（`_version`，按分析推得）：",
        "v_created": "{line}：创建{by}，版本 {v}",
        "v_saved": "{line}：`{op}` 为反向传播保存了{what}，版本 {v}",
        "v_saved_alias": "{line}：`{op}` 为反向传播保存了 {alias}（同一存储），{alias} 的版本 {v}",
        "what_input": "它（作为输入）",
        "what_output": "它（作为输出）",
        "what_parameters": "参数",
        "what_view": " `{code}`（它的视图）",
        "v_written": "{line}：`{op}` 原地修改了它 → 版本 {v}",
        "v_written_via": {"detach": "{line}：`{op}` 通过 `.detach()` 得到的别名（同一个版本计数器）原地修改了它 → 版本 {v}",
                          "view": "{line}：`{op}` 通过视图（同一个版本计数器）原地修改了它 → 版本 {v}"},
        "v_raises": "{line}：`{op}` 本应原地修改它，但 torch 会在这一行直接报错（版本仍为 {v}）",
        "v_data": "{line}：`{op}` 通过 `.data` 属性写入同一存储：数值变了，版本计数器不变，反向传播察觉不到（梯度悄悄出错）",
        "v_repeats": "（在循环中重复）",
        "v_repeats_first": "（第一轮；之后每轮重复，版本更高）",
        "v_stale": "{line}：`backward()` 读取 `{op}` 保存的张量，期望版本 {then}，但{wline}已把它变为 {now}：报错",
        "v_stale_loop": "{line}：`backward()` 读取 `{op}` 在每一轮保存的张量；第一轮的保存期望版本 {then}，但{wline}已把它变为 {now}：报错",
        "v_read": "{line}：`backward()` 读取 `{op}` 保存的张量，版本 {then} 与期望一致",
        "v_read_silent": "{line}：`backward()` 读取 `{op}` 保存的张量，版本 {then} 与期望一致，但数值已被{wline}在不增加版本的情况下改写（梯度错误，不报错）",
        "v_pending": "经过这张计算图的 `backward()` 会读取 `{op}` 保存的张量，并期望版本 {then}",
        "v_freed": "{line}：`backward()` 再次需要 `{op}` 保存的张量，但{fline}的 `backward()` 已经释放了它：报错",
        "alias_detach": "`{name}` 是 `{base}.detach()`：与 `{base}` 共享存储和版本计数器，原地修改任一个都会增加 `{base}` 的已保存张量所检查的版本。",
        "alias_view": "`{name}` 是 `{base}` 的视图（view）：共享存储和版本计数器。",
        "alias_data": "`{name}` 是 `{base}.data`：共享存储，但有自己的版本计数器，所以对 `{name}` 的原地修改会改变反向传播读取的值，而 torch 不会察觉。",
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
    # The editor shows the diagnostic's message right above the hover: explain it, do not repeat it.
    parts = [f"**{finding.code}** `{finding.name}`"]
    if finding.runtime_error:
        error = finding.runtime_error
        if not error.startswith("RuntimeError"):
            error = "RuntimeError: " + error
        label = t["runtime"]
        if is_form(error):
            parts_ = [f"`{p}`" for p in ("[...]", "<op>", "<i>", "<n>", "<m>") if p in error]
            label = t["runtime_form"].format(parts=("、" if lang == "zh" else ", ").join(parts_))
        parts.append(f"{label}\n\n```text\n{error}\n```")
    elif finding.severity == "warning":
        parts.append(t["silent"])
    if finding.explanation:
        parts.append(f"{t['why']}\n\n{safe_inline(finding.explanation)}")
    if finding.fix is not None:
        label = t["fix_safe"] if finding.fix.applicability == "safe" else t["fix_unsafe"]
        parts.append(f"{label}{'' if lang == 'zh' else ' '}{safe_inline(finding.fix.message)}")
    text = "\n\n".join(parts)
    return zh_spacing(text) if lang == "zh" else text


def _made_by(t: dict, lang: str, by: str) -> str:
    """` by X`; in Chinese `，由 X 创建` with a space only beside a code span (no space between Chinese words)."""
    if lang != "zh":
        return t["created_by"].format(by=by)
    return "，由" + (" " if by.startswith("`") else "") + by + (" " if by.endswith("`") else "") + "创建"


def tensor_markdown(facts, snapshot: Snapshot, lang: str, analysis=None, position=None) -> str:
    """What the analysis proved about one tensor name (TensorFacts from the engine), and, given the file's Facts
    and the hovered position, the version timeline of what it saved and what wrote it."""
    t = _T[lang]
    where = lambda span: snapshot.describe_line(span.start_line, lang)  # noqa: E731
    head = [t["tensor"]]
    arms = []
    if getattr(facts, "grad_flag", ""):
        # under `set_grad_enabled(flag)`, run with both values: what each arm makes, not a join that says "unknown"
        head.append(t["rg_depends"].format(flag=facts.grad_flag))
        for mode in ("on", "off"):
            requires_grad, is_leaf, _by = facts.by_mode[mode]
            state = [t["leaf"] if is_leaf is True else t["nonleaf"] if is_leaf is False else t["leaf_unknown"],
                     t["rg_unknown"] if requires_grad is None else f"`requires_grad={requires_grad}`"]
            arms.append("- " + t["arm_" + mode].format(flag=facts.grad_flag, state=" · ".join(state)))
    else:
        if facts.is_leaf is True:
            head.append(t["leaf"])
        elif facts.is_leaf is False:
            head.append(t["nonleaf"])
        else:
            head.append(t["leaf_unknown"])
        if facts.requires_grad is None:
            head.append(t["rg_unknown"])
        else:
            head.append(f"`requires_grad={facts.requires_grad}`")
    lines = [f"**`{facts.name}`** — " + " · ".join(head), "", *arms]
    if facts.created is not None:
        item = t["created"].format(where=where(facts.created))
        if facts.created_by:
            raw = facts.created_by
            by = created_by(raw, lang)  # labels in `lang`, code the analysis left bare in a code span
            item += _made_by(t, lang, code_span(raw) if by == f"`{raw}`" else safe_inline(by))
        made = getattr(facts, "made_in_call", None)
        if made is not None:  # the caller's line first, then where the callee made it
            inner_by = created_by(made[1], lang) if made[1] else ""
            item += t["made_in"].format(where=where(made[0]), by=_made_by(
                t, lang, code_span(made[1]) if inner_by == f"`{made[1]}`" else safe_inline(inner_by)) if made[1] else "")
        lines.append(f"- {item}")
    value = _value_at(analysis, *position) if analysis is not None and position is not None else None
    timeline = version_timeline(value, facts.name, analysis, where, lang) if value is not None else None
    if timeline:
        text = "\n".join(lines + timeline)
        return zh_spacing(text) if lang == "zh" else text
    for op, span, _version in facts.saves or ():
        lines.append("- " + t["saved"].format(op=op, where=where(span)))
    writes = list(facts.writes or ())
    for op, span, version in writes:
        lines.append("- " + t["written"].format(op=op, where=where(span), version=version))
    if not writes:
        lines.append("- " + t["not_written"])
    return "\n".join(lines)


# Names per line of each hovered block, built once per (Facts, block): `Facts.tensor_at` walks every position of
# the block on each hover, which made hovering every name of a file quadratic in the block's size.
_NAME_INDEX: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _name_at(analysis, line: int, col: int):
    """(the analysis' Tensor value, its name, the Name node) for the name at a 0-based (line, code-point column), or None."""
    locator = getattr(analysis, "locator", None)
    values = getattr(analysis, "name_values", None)
    if locator is None or values is None:
        return None
    try:
        per_block = _NAME_INDEX.setdefault(analysis, {})
    except TypeError:  # not weak-referenceable: no cache
        per_block = {}
    for pb in locator.blocks:
        if not (pb.block.start_line <= line < pb.block.end_line):
            continue
        index = per_block.get(id(pb))
        if index is None:
            pb.span(pb.module)  # positions are computed lazily, per block
            index = {}
            for node, pos in pb.parsed.positions.items():
                if isinstance(node, cst.Name) and id(node) in values:
                    index.setdefault(pos.start.line - 1 + pb.block.start_line, []).append(
                        (pos.start.column, pos.end.column, node))
            per_block[id(pb)] = index
        for start, end, node in index.get(line, ()):
            if start <= col <= end:
                value = values.get(id(node))
                return (value, node.value, node) if hasattr(value, "counter") else None
    return None


def tensor_at(analysis, line: int, col: int):
    """What hover shows about the tensor named at (line, col): `Facts.describe` of the indexed name."""
    if not hasattr(analysis, "describe"):
        return analysis.tensor_at(line, col) if hasattr(analysis, "tensor_at") else None
    found = _name_at(analysis, line, col)
    return analysis.describe(found[0], found[1], node=found[2]) if found is not None else None


def _value_at(analysis, line: int, col: int):
    found = _name_at(analysis, line, col)
    return found[0] if found is not None else None


def _at(locator, node, top):
    return locator.span(node, top) if node is not None else None


def version_timeline(value, name: str, analysis, where, lang: str) -> list[str]:
    """Markdown lines: each save of the tensor's version counter (op, line, version), each in-place write (line,
    version after), the backward that reads the save (the version it expects), and what `.detach()` / a view /
    `.data` share with their base. Loops are interpreted more than once: each place is listed once."""
    t = _T[lang]
    loc = analysis.locator
    counter, storage = value.counter, value.storage

    def v(n: int) -> str:
        if counter.known_start:
            return str(n)
        base = min([s.version for s in saves] or [n])
        return "v" if n == base else f"v+{n - base}"

    saves = [s for s in analysis.saves if s.counter is counter]
    other_saves = [s for s in analysis.saves if s.storage is storage and s.counter is not counter]
    events: list[tuple[int, str, object]] = []  # (seq, text, span)
    seen: dict[tuple, int] = {}
    repeats: dict[tuple, bool] = {}  # key -> whether a later pass gave another text (another version)
    tops: list = []  # the top-level statements of everything listed (tells whether line order is run order)

    def add(seq: int, key: tuple, text: str, top=None) -> None:
        # A loop's body is interpreted once per pass: its places are listed once, with the first pass's versions
        # (said so when later passes differ).
        tops.append(top)
        if key in seen:
            repeats[key] = repeats.get(key, False) or text != events[seen[key]][1]
            return
        seen[key] = len(events)
        events.append((seq, text, key[2]))

    for s in saves:
        span = _at(loc, s.node, s.top)
        if span is None:
            continue
        what = t.get(f"what_{s.what}", s.what)
        if s.via_index and s.expr is not None:
            what = t["what_view"].format(code=code_span_body(" ".join(loc.code(s.expr).split())))
        add(s.seq, ("save", s.op, span), t["v_saved"].format(line=where(span), op=s.op, what=what, v=v(s.version)),
            s.top)
    for w in counter.writes:
        span = _at(loc, w.node, w.top)
        if span is None:
            continue
        if w.raises:  # a leaf, a multi-output view, `out=`: torch refuses the write, nothing is written
            add(w.seq, ("write", w.op, span), t["v_raises"].format(line=where(span), op=w.op,
                                                                    v=v(w.version_after - 1)), w.top)
            continue
        template = t["v_written_via"].get(w.via, t["v_written"])
        add(w.seq, ("write", w.op, span), template.format(line=where(span), op=w.op, v=v(w.version_after)), w.top)
    own = {id(w.node) for w in counter.writes}
    for w in storage.silent_writes:
        span = _at(loc, w.node, w.top)
        if span is not None and id(w.node) not in own:
            add(w.seq, ("data", w.op, span), t["v_data"].format(line=where(span), op=w.op), w.top)
    for s in other_saves:  # `.data` aliases: the saves of the tensor whose storage this one shares
        span = _at(loc, s.node, s.top)
        if span is not None and value.data_of is not None:
            add(s.seq, ("save", s.op, span), t["v_saved_alias"].format(
                line=where(span), op=s.op, alias=f"`{value.data_of.name}`", v=s.version), s.top)
    for key, varies in repeats.items():
        i = seen[key]
        events[i] = (events[i][0], events[i][1] + t["v_repeats_first" if varies else "v_repeats"], events[i][2])
    events.sort(key=lambda e: e[0])
    reads: list[tuple[object, str]] = []  # (span of the backward, text)
    loops = bool(repeats) or any(s.loop is not None for s in saves + other_saves) or \
        any(w.loops for w in list(counter.writes) + list(storage.silent_writes))
    # The backward that reads each save: the one a stale-save problem names, else the one that freed the graph.
    read: set[tuple] = set()
    stale = [p for p in analysis.problems if p.kind == "stale-save" and p.save is not None and p.save.counter is counter]
    for p in stale:
        use, save_span = _at(loc, p.use, p.top), _at(loc, p.save.node, p.save.top)
        if use is None or save_span is None or ("stale", save_span, use) in read:
            continue
        read.add(("stale", save_span, use))
        w_span = _at(loc, p.write.node, p.write.top)
        in_loop = repeats.get(("save", p.save.op, save_span)) or repeats.get(("write", p.write.op, w_span))
        tops.append(p.top)
        reads.append((use, t["v_stale_loop" if in_loop else "v_stale"].format(
            line=where(use), op=p.save.op, then=v(p.save.version), now=v(p.write.version_after),
            wline=where(w_span) if w_span else "?")))
    # A save whose storage was overwritten without a version bump (`.data`, a fused step): the version matches, the
    # values do not.
    silent = [p for p in analysis.problems if p.kind == "silent-write" and p.save is not None
              and p.save.storage is storage and p.write is not None]
    for p in silent:
        use, save_span = _at(loc, p.use, p.top), _at(loc, p.save.node, p.save.top)
        w_span = _at(loc, p.write.node, p.write.top)
        if use is None or save_span is None or w_span is None or ("silent", save_span, use) in read:
            continue
        read.add(("silent", save_span, use))
        then = v(p.save.version) if p.save.counter is counter else str(p.save.version)  # a `.data` alias: x's counter
        tops.append(p.top)
        reads.append((use, t["v_read_silent"].format(line=where(use), op=p.save.op, then=then, wline=where(w_span))))
    # A backward through the graph after an earlier one freed it (a second backward, state carried into the next
    # iteration): after the read that freed it.
    freed_problems = [p for p in analysis.problems if p.kind in ("second-backward", "freed-graph")
                      and p.save is not None and p.save.counter is counter and p.detail.get("freed_by") is not None]
    second: list[tuple[object, str]] = []
    for p in freed_problems:
        use = _at(loc, p.use, p.top)
        f_span = _at(loc, p.detail["freed_by"], p.detail.get("freed_top") or p.top)
        if use is None or f_span is None or ("freed", use, f_span) in read:
            continue
        read.add(("freed", use, f_span))
        tops.append(p.top)
        second.append((use, t["v_freed"].format(line=where(use), op=p.save.op, fline=where(f_span))))
    for s in saves:
        save_span = _at(loc, s.node, s.top)
        if save_span is None or any(key[1] == save_span for key in read):
            continue
        freed = _at(loc, s.freed_by, s.freed_top or s.top) if s.freed_by is not None else None
        key = ("read", save_span, freed)
        if key in read:
            continue
        read.add(key)
        if freed is not None:
            tops.append(s.freed_top)
            loops = loops or bool(s.freed_loops)
            reads.append((freed, t["v_read"].format(line=where(freed), op=s.op, then=v(s.version))))
        else:
            reads.append((None, t["v_pending"].format(op=s.op, then=v(s.version))))
    reads += second
    # Each backward in its place among the saves and writes when the lines run in their order (module-level code
    # outside loops, functions and classes); otherwise after them, as what backward will find.
    if _runs_in_line_order(tops, loops):
        placed = [((span.start_line, 0, i), text) for i, (_, text, span) in enumerate(events)]
        placed += [((span.start_line if span is not None else 1 << 30, 1, i), text) for i, (span, text) in enumerate(reads)]
        out = [f"- {text}" for _, text in sorted(placed, key=lambda item: item[0])]
    else:
        out = [f"- {text}" for _, text, _ in events] + [f"- {text}" for _, text in reads]
    alias = ""
    if value.view_kind == "detach" and value.view_of is not None and value.view_of.name:
        alias = t["alias_detach"].format(name=name, base=value.view_of.name)
    elif value.view_of is not None and value.view_of.name and value.view_kind in ("view", "index"):
        alias = t["alias_view"].format(name=name, base=value.view_of.name)
    elif value.data_of is not None and value.data_of.name:
        alias = t["alias_data"].format(name=name, base=value.data_of.name)
    if not out and not alias:
        return []
    return ["", t["timeline"], ""] + out + ([f"\n{alias}"] if alias else [])


def _runs_in_line_order(tops: list, loops: bool) -> bool:
    """Do these top-level statements run in the order of their lines? Module-level statements do, outside loops;
    code in a def or class runs when it is called, and a loop runs its lines again."""
    if loops or any(top is None for top in tops):
        return False
    return not any(isinstance(top, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While)) for top in tops)


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
