"""Helpers for the Chinese texts: one spacing rule around code spans, English labels the analysis produces.

Spacing follows the glossary (/work/shared/zh-glossary.md: "`.data` 属性"): one space between a Chinese character and
a code span, none between full-width punctuation and a code span. Fenced code blocks are left alone.
"""
from __future__ import annotations

import os
import re

CJK = "\u4e00-\u9fff"
FULL_WIDTH = "，。：；（）、！？「」《》—"
_FENCED = re.compile(r"(```.*?```)", re.S)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_CJK_END = re.compile(f"[{CJK}]\\Z")
_CJK_START = re.compile(f"[{CJK}]")
_PUNCT_SPACES_END = re.compile(f"([{FULL_WIDTH}]) +\\Z")
_SPACES_PUNCT = re.compile(f" +(?=[{FULL_WIDTH}])")


def _space(segment: str) -> str:
    out: list[str] = []
    last = 0
    for m in _CODE_SPAN.finditer(segment):
        before = segment[last:m.start()]
        if _PUNCT_SPACES_END.search(before):
            before = before.rstrip(" ")
        elif _CJK_END.search(before) or (not before and out and _CJK_END.search(out[-1])):
            before += " "
        out += [before, m.group()]
        last = m.end()
        rest = segment[last:]
        spaces = len(rest) - len(rest.lstrip(" "))
        if spaces and _SPACES_PUNCT.match(rest):
            last += spaces
        elif _CJK_START.match(rest):
            out.append(" ")
    out.append(segment[last:])
    return "".join(out)


def zh_spacing(text: str) -> str:
    """`被`exp`保存` -> `被 `exp` 保存`; `梯度， `w`` -> `梯度，`w``; fenced blocks unchanged."""
    return "".join(part if part.startswith("```") else _space(part) for part in _FENCED.split(text))


_PARAMETERS_OF = re.compile(r"the parameters of (`[^`]+`)")


def zh_name(name: str) -> str:
    """English labels the analysis gives tensors, in Chinese: `the parameters of `G`` -> `` `G` 的参数 ``."""
    name = _PARAMETERS_OF.sub(r"\1 的参数", name)
    return {"the parameters": "参数", "the tensor": "该张量", "a tensor": "一个张量"}.get(name, name)


_ZH_CREATED_BY = {
    "a parameter of the function": "函数的参数",
    "a view": "视图",
    "indexing (a view)": "下标（得到视图）",
    "indexing": "下标",
    "an augmented assignment": "增强赋值",
    "an op under no_grad": "`no_grad` 下的运算",
    "an op": "一个运算",
    "a tensor": "一个张量",
}
_A_PARAMETER_OF = re.compile(r"^a parameter of (`[^`]+`)$")
_REQUIRES_GRAD_SUFFIX = " made to require grad with `requires_grad_()`"


def created_by(by: str, lang: str) -> str:
    """How the analysis says a tensor was made (`torch.rand(...)`, "a view", "a parameter of `model`"), as prose
    in `lang` with code in code spans."""
    if by.endswith(_REQUIRES_GRAD_SUFFIX) and len(by) > len(_REQUIRES_GRAD_SUFFIX):
        # `torch.zeros(...)` made to require grad with `requires_grad_()`: the maker as code, the rest as prose
        maker = created_by(by[:-len(_REQUIRES_GRAD_SUFFIX)], lang)
        return maker + ("，再用 `requires_grad_()` 设为需要梯度" if lang == "zh" else _REQUIRES_GRAD_SUFFIX)
    if lang == "zh":
        if by in _ZH_CREATED_BY:
            return _ZH_CREATED_BY[by]
        m = _A_PARAMETER_OF.match(by)
        if m:
            return f"{m[1]} 的参数"
    if by.startswith("`") or by in _ZH_CREATED_BY or _A_PARAMETER_OF.match(by):
        return by
    return f"`{by}`"  # code the analysis quoted without backticks: `torch.rand(...)`, `nn.Parameter`


_LABELS = [
    (re.compile(r"the parameters of (`[^`]+`)"), r"\1 的参数"),
    (re.compile(r"a parameter of (`[^`]+`)"), r"\1 的参数"),
    (re.compile(r"\bthe parameters\b"), "参数"),
    (re.compile(r"\bthe tensor\b"), "该张量"),
    (re.compile(r"\ba tensor\b"), "一个张量"),
]


def zh_labels(text: str) -> str:
    """Replace the English labels the analysis gives tensors ("the parameters of `G`") inside a Chinese text."""
    for pattern, replacement in _LABELS:
        text = pattern.sub(replacement, text)
    return text


def zh_text(text: str) -> str:
    """A Chinese text as users read it: analysis labels in Chinese, one spacing rule around code spans."""
    return zh_spacing(zh_labels(text))


def locale_language(environ=None) -> str:
    """`language = "auto"`: zh when the locale (LC_ALL, then LC_MESSAGES, then LANG) is Chinese, else en."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def default_language(start: str = ".", environ=None) -> str:
    """The language of a command given no `--lang` (`gradguard rule`, `trace`, `explain`): the `language` of the
    nearest `[tool.gradguard]` above `start`, else (none, or `auto`) the locale. A configuration that cannot be
    read does not stop these commands: the locale decides then."""
    from ..config import ConfigError, load_config

    try:
        language = load_config(start).language
    except (ConfigError, OSError, ValueError):
        language = ""
    return language or locale_language(environ)
