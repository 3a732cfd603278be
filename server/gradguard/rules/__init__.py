"""Rules: small readers of Facts. One module per rule (`ggNNN_name.py`), discovered, not registered.

Each module defines `RULE = Rule(...)` (code, name, docs in English and Simplified
Chinese, the runtime error it prevents, fix safety) and decorates its check
function with `@RULE.checker`. Its example programs live in `examples/GGNNN/`
(`bad_*.py`, `good_*.py`): they are the documentation's examples and the tests,
parsed for findings and executed under torch.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from ..findings import Edit, Finding, Fix, Related
from ..i18n import zh_spacing, zh_text
from ..source import Source, Span

EXAMPLES_DIR = Path(__file__).with_name("examples")
DOCS_URL = ""  # no website: `gradguard rule CODE` and the editor's rule-docs command show the docs offline

HEADINGS = {
    "en": ("What it does", "Why is this bad?", "Runtime error", "How autograd sees it", "Example", "Use instead",
           "Fix safety", "References"),
    "zh": ("它检查什么", "为什么有问题", "运行时错误", "autograd 如何看待它", "错误示例", "正确写法", "修复的安全性",
           "参考"),
}


@dataclass
class Rule:
    code: str
    name: str
    family: str
    summary: dict[str, str]
    what: dict[str, str]
    why: dict[str, str]
    autograd: dict[str, str]
    fix_safety: dict[str, str]
    runtime_error: str = ""  # exact torch text of one instance ("" for silent wrong gradients)
    match: str = ""  # the part of the error text every instance shares (tests match it); default: runtime_error
    severity: str = "error"
    fix_kind: str = "none"  # "safe", "unsafe", "safe/unsafe", "none": what the docs table shows
    references: tuple[str, ...] = ()
    check: Callable[["RuleContext"], Iterable[Finding]] = field(default=lambda ctx: ())

    @property
    def error_match(self) -> str:
        return self.match or self.runtime_error

    def checker(self, fn):
        self.check = fn
        return fn

    def examples(self, kind: str) -> list[Path]:
        folder = EXAMPLES_DIR / self.code
        return sorted(folder.glob(f"{kind}_*.py")) if folder.is_dir() else []

    def docs(self, lang: str = "en") -> str:
        """The rule's documentation as Markdown, with ruff-style fixed headings."""
        lang = lang if lang in HEADINGS else "en"
        h = HEADINGS[lang]
        parts = [f"# {self.code} ({self.name})", "", self.summary[lang], "", f"## {h[0]}", self.what[lang], "",
                 f"## {h[1]}", self.why[lang], ""]
        if self.runtime_error:
            parts += [f"## {h[2]}", "```text", "RuntimeError: " + self.runtime_error, "```", ""]
            note = form_note(self.runtime_error, lang)
            if note:
                parts += [note, ""]
        else:
            parts += [f"## {h[2]}", "(none: the gradient is silently wrong)" if lang == "en" else "（没有报错：梯度悄悄地算错了）", ""]
        parts += [f"## {h[3]}", self.autograd[lang], ""]
        bad = self.examples("bad")
        good = self.examples("good")
        if bad:
            parts += [f"## {h[4]}", "```python", _strip_markers(bad[0].read_text(encoding="utf-8")).rstrip(), "```", ""]
        if good:
            parts += [f"## {h[5]}", "```python", good[0].read_text(encoding="utf-8").rstrip(), "```", ""]
        parts += [f"## {h[6]}", self.fix_safety[lang], ""]
        if self.references:
            parts += [f"## {h[7]}"] + [f"- {r}" for r in self.references] + [""]
        text = "\n".join(parts)
        return zh_spacing(text) if lang == "zh" else text


# The parts of a documented message that depend on the program, in the order the note names them.
FORM_PARTS = {
    "en": (("<op>", "the node torch names"), ("<i>", "the output index"), ("<n>", "the version now"),
           ("<m>", "the version backward expected"), ("[...]", "the shape")),
    "zh": (("<op>", "torch 给出的节点名"), ("<i>", "输出序号"), ("<n>", "当前版本"), ("<m>", "反向传播期望的版本"),
           ("[...]", "形状")),
}


def form_note(runtime_error: str, lang: str) -> str:
    """What the docs say under a message with parts that depend on the program: those parts only ("" if none)."""
    present = [(part, what) for part, what in FORM_PARTS[lang] if part in runtime_error]
    if not present:
        return ""
    if lang == "zh":
        listed = "、".join(f"`{part}`（{what}）" for part, what in present)
        return f"以上是报错信息的格式：{listed}取决于具体程序；gradguard 会为每条报告填入它能证明的部分。"
    listed = ", ".join(f"`{part}` ({what})" for part, what in present)
    return (f"The form of the message: {listed} depend{'s' if len(present) == 1 else ''} on the program; gradguard "
            f"fills in what it can prove for each finding.")


def _strip_markers(text: str) -> str:
    import re

    return re.sub(r"\s*# <- GG\d+", "", text)


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith("gg"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            rules.append(module.RULE)
    return tuple(sorted(rules, key=lambda r: r.code))


def get_rule(code: str) -> Rule | None:
    code = code.upper()
    return next((r for r in all_rules() if r.code == code), None)


class RuleContext:
    """What a rule may read: the Facts, the source and a way to locate nodes."""

    def __init__(self, source: Source, facts, locator, lang: str, program=None):
        self.source = source
        self.facts = facts
        self.locator = locator
        self.lang = lang if lang in HEADINGS else "en"
        self.program = program  # a project run's LinkedProgram: which file each line of `source` comes from
        self._imports_by_file: dict | None = None
        self._torch_added: set = set()  # files a fix names `torch` in although they do not bind it

    def t(self, en: str, zh: str) -> str:
        return zh if self.lang == "zh" else en

    def problems(self, kind: str) -> list:
        return [p for p in self.facts.problems if p.kind == kind]

    def span(self, node, hint=None) -> Span | None:
        return self.locator.span(node, hint)

    def line(self, node, hint=None) -> int:
        """1-based line of a node, for messages."""
        span = self.span(node, hint)
        return span.start_line + 1 if span else 0

    def code(self, node) -> str:
        return self.locator.code(node)

    def torch_name(self, node=None, hint=None) -> str | None:
        """The local name bound to the `torch` module, if any (fixes that add torch calls need it). In a project
        run, the name the file holding `node` binds: the joined program may bind `torch` only in another file (a
        `model.py` with `import torch.nn as nn` alone). A file that binds none gets `torch`, and `finding` adds
        `import torch` to it with the fix; None when no place for that import is known."""
        if self.program is None or node is None:
            imports = getattr(self.facts, "imports", {})
            for local, full in imports.items():
                if full == "torch":
                    return local
            return None
        span = self.span(node, hint)
        if span is None:
            return None
        path = self.program.locate(span.start_line)[0]
        imports = self._file_imports().get(path)
        if imports is not None and imports.torch_names:
            return imports.torch_names[0]
        if imports is None or imports.insert_at is None:
            return None
        self._torch_added.add(path)
        return "torch"

    def _file_imports(self) -> dict:
        """path -> the `_FileImports` of each file of a project run, from the top-level import lines of the entry
        and of the linked chunks (parsed with `ast`, once per check)."""
        if self._imports_by_file is None:
            self._imports_by_file = file_imports(self.source, self.program)
        return self._imports_by_file

    def _with_torch_import(self, fix: Fix) -> Fix | None:
        """The fix with `import torch` added to each file where its new text names `torch` that the file does not
        bind (see `torch_name`)."""
        added = []
        for edit in fix.edits:
            path = self.program.locate(edit.span.start_line)[0]
            if path in self._torch_added and _NAMES_TORCH.search(edit.new_text) and path not in added:
                added.append(path)
        if not added:
            return fix
        imports = self._file_imports()
        edits = list(fix.edits)
        for path in added:
            line, after = imports[path].insert_at
            if after:  # after `from __future__ import ...`, which must stay first
                end = len(self.source.line_text(line))
                edits.append(Edit(Span(line, end, line, end), "\nimport torch"))
            else:
                edits.append(Edit(Span(line, 0, line, 0), "import torch\n"))
        return Fix(fix.applicability, fix.message, tuple(edits))

    def indent_of(self, line: int) -> str:
        text = self.source.line_text(line)
        return text[: len(text) - len(text.lstrip())]

    def finding(self, rule: Rule, node, hint, message: str, *, related=(), fix=None, explanation="",
                runtime_error: str | None = None) -> Finding | None:
        """`runtime_error`: torch's error for this program (default: the rule's)."""
        span = self.span(node, hint)
        if span is None:
            return None
        related = tuple(r for r in related if r)
        condition = getattr(self.facts, "option_conditions", {}).get(id(node))
        if condition:  # behind a bool parameter's default: reachable with one argument, and said so
            message += self.t(f" This runs when {condition} (not the default).",
                              f" 这段代码在 {condition.replace(' is true', ' 为 True').replace(' is false', ' 为 False')} 时运行（非默认值）。")
        if fix is not None and self.program is not None and self._torch_added:
            fix = self._with_torch_import(fix)
        if self.lang == "zh":  # Chinese labels and one spacing rule around code spans, whoever wrote the text
            message, explanation = zh_text(message), zh_text(explanation)
            related = tuple(Related(r.span, zh_text(r.message)) for r in related)
            if fix is not None:
                fix = Fix(fix.applicability, zh_text(fix.message), fix.edits)
        return Finding(rule.code, rule.name, message, span, rule.severity, related, fix,
                       rule.runtime_error if runtime_error is None else runtime_error, explanation)

    def related(self, node, hint, message: str) -> Related | None:
        span = self.span(node, hint)
        return Related(span, message) if span else None

    # ---- fix edits --------------------------------------------------------
    def replace_node(self, node, hint, new_text: str) -> Edit | None:
        span = self.span(node, hint)
        return Edit(span, new_text) if span else None

    def wrap_no_grad(self, stmt, hint) -> Edit | None:
        """Put a statement of its own inside `with torch.no_grad():` (built and checked in gradguard.fixes)."""
        from ..fixes import wrap_no_grad

        return wrap_no_grad(self, stmt, hint)

    def wrap_enable_grad(self, stmt, hint) -> Edit | None:
        """Put a statement of its own inside `with torch.enable_grad():`."""
        from ..fixes import wrap_enable_grad

        return wrap_enable_grad(self, stmt, hint)


_NAMES_TORCH = re.compile(r"(?<![\w.])torch\.")


@dataclass
class _FileImports:
    torch_names: list  # local names the file binds to the `torch` module, in order
    insert_at: tuple | None  # (joined line, after it?) where `import torch` may go; None when unknown


def file_imports(source: Source, program) -> dict:
    """path -> `_FileImports` of each file of a linked program: the entry's top-level import statements (the lines
    before `program.entry_lines`) and the linked import chunks. `import torch.nn` binds `torch`;
    `import torch.nn as nn` and `from torch import nn` do not."""
    pieces = []  # (path, joined first line, text) of top-level code that may hold imports
    for block in source.blocks:
        if block.start_line < program.entry_lines and not block.text.lstrip().startswith(("def ", "class ", "@", "async ")):
            pieces.append((program.entry_path, block.start_line, block.text))
    line = program.entry_lines
    for chunk in program.chunks:
        if chunk.text.lstrip().startswith(("import ", "from ")):
            pieces.append((chunk.path, line, chunk.text))
        line += chunk.lines
    found: dict = {}
    firsts: dict = {}  # path -> (file line, joined line) of the first line of the file's first linked chunk
    line = program.entry_lines
    for chunk in program.chunks:
        if chunk.path not in firsts or chunk.start_line < firsts[chunk.path][0]:
            firsts[chunk.path] = (chunk.start_line, line)
        line += chunk.lines
    for path, start, text in pieces:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        imports = found.setdefault(path, _FileImports([], None))
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "torch" or (alias.asname is None and alias.name.startswith("torch.")):
                        imports.torch_names.append(alias.asname or "torch")
            if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            first, last = start + stmt.lineno - 1, start + (stmt.end_lineno or stmt.lineno) - 1
            future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
            place = (last, True) if future else (first, False)
            current = imports.insert_at
            if current is None or (current[1] and (not future or place[0] > current[0])) or (
                    not current[1] and not future and place[0] < current[0]):
                imports.insert_at = place
    for path, (_, joined) in firsts.items():
        imports = found.setdefault(path, _FileImports([], None))
        if imports.insert_at is None:
            imports.insert_at = (joined, False)  # before the file's first linked definition (it starts a line)
    return found


def make_fix(applicability: str, message: str, *edits) -> Fix | None:
    edits = tuple(e for e in edits if e is not None)
    return Fix(applicability, message, edits) if edits else None
