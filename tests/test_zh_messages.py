"""Chinese output is Chinese: no English sentence fragments, code in code spans, one spacing rule.

Checked on everything a zh user reads for every rule example: each finding's message, related notes, explanation
and fix title, its hover, and every rule's docs. Allowed outside code spans: single English words (torch, autograd,
the glossary's bracketed terms such as `in-place`, `requires_grad`), never two English words in a row.

Spacing (the glossary's convention, `.data` 属性): one space between a Chinese character and a code span, none
between full-width punctuation and a code span.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gradguard.engine import check_text  # noqa: E402
from gradguard.lsp.hover import finding_markdown  # noqa: E402
from gradguard.rules import all_rules  # noqa: E402

CJK = "\u4e00-\u9fff"
FULL_WIDTH = "，。：；（）、！？「」《》—"
FENCED = re.compile(r"```.*?```", re.S)
CODE_SPAN = re.compile(r"`[^`\n]+`")
WORD = r"[A-Za-z][A-Za-z0-9_\-]*"
FRAGMENT = re.compile(rf"\b{WORD}(?:[ ,]+{WORD})+\b")
# Python outside a code span: attribute access, calls, keywords-as-values, assignments.
LOOSE_CODE = re.compile(r"(?<![\w`])(?:\.\w+|\w+\(\)|None|True|False|\w+=\w+)(?![\w`])")
HEADING = re.compile(r"^#+ .*$", re.M)  # `# GG101 (leaf-inplace)`: the rule's code and English name


def texts_of(markdown: str) -> str:
    """The prose: fenced blocks, code spans, headings with the rule's name, URLs and rule codes removed."""
    text = FENCED.sub(" ", markdown)
    text = re.sub(r"^# GG\d+ \([a-z\-]+\)$", " ", text, flags=re.M)
    text = re.sub(r"https?://\S+", " ", text)
    return CODE_SPAN.sub(" ", text)


def problems(text: str) -> list[str]:
    found = []
    prose = texts_of(text)
    found += [f"English fragment {m[0]!r}" for m in FRAGMENT.finditer(prose)]
    found += [f"code outside a code span {m[0]!r}" for m in LOOSE_CODE.finditer(prose)]
    stripped = FENCED.sub(" ", text)
    for m in CODE_SPAN.finditer(stripped):
        before = stripped[m.start() - 2: m.start()]
        after = stripped[m.end(): m.end() + 2]
        if re.search(f"[{CJK}]\\Z", before) or re.match(f"[{CJK}]", after):
            found.append(f"no space between a Chinese character and {m[0]}")
        if re.fullmatch(f"[{FULL_WIDTH}] ", before) or re.fullmatch(f" [{FULL_WIDTH}]", after):
            found.append(f"space between full-width punctuation and {m[0]}")
        if before == "\n " or (m.start() == 1 and stripped[0] == " "):
            found.append(f"space at the start of a line before {m[0]}")
    return found


def zh_texts():
    """(where, text) for every zh text a user reads about every rule example."""
    for rule in all_rules():
        yield f"{rule.code} docs", rule.docs("zh")
        for path in rule.examples("bad") + rule.examples("good"):
            report = check_text(path.read_text(encoding="utf-8"), str(path), lang="zh")
            for f in report.findings:
                where = f"{path.parent.name}/{path.name}:{f.span.start_line + 1} {f.code}"
                yield f"{where} message", f.message
                for r in f.related:
                    yield f"{where} note", r.message
                yield f"{where} explanation", f.explanation
                if f.fix is not None:
                    yield f"{where} fix", f.fix.message
                yield f"{where} hover", finding_markdown(f, "zh")


ZH_TEXTS = list(zh_texts())


def test_every_rule_example_gives_zh_texts():
    assert len({w.split()[0] for w, _ in ZH_TEXTS}) >= 16
    assert sum(1 for w, _ in ZH_TEXTS if w.endswith(" message")) >= 60


@pytest.mark.parametrize("where,text", ZH_TEXTS, ids=[w for w, _ in ZH_TEXTS])
def test_zh_text_has_no_english_fragment_and_one_spacing_rule(where: str, text: str):
    assert problems(text) == [], text


def test_the_checks_catch_what_they_are_for():
    assert problems("`opt.step()` 原地修改了 the parameters of G") == ["English fragment 'the parameters of G'"]
    assert problems("它的 .grad 保持 None") == ["code outside a code span '.grad'", "code outside a code span 'None'"]
    assert problems("被`exp`保存") == ["no space between a Chinese character and `exp`"]
    assert problems("梯度， `w` 是叶子张量") == ["space between full-width punctuation and `w`"]
    assert problems("## 为什么有问题\n `step()` 原地更新参数") == ["space at the start of a line before `step()`"]
    assert problems("原地操作（in-place 操作）改写为 `w = w + 1`（`w` 变成非叶子张量）") == []


def test_cli_text_names_the_fix_safety_once():
    import subprocess

    example = next(p for p in all_rules()[0].examples("bad") if "leaf_add" in p.name)
    out = subprocess.run([sys.executable, "-m", "gradguard", "check", "--lang", "zh", str(example)],
                         capture_output=True, text=True).stdout
    assert "= 不安全修复: 改写为 `w = w + 1`" in out
    assert "快速修复 (" not in out and "快速修复（" not in out


def test_zh_tensor_hovers_of_every_rule_example():
    """The version timeline of every tensor name in every rule example, in Chinese."""
    import io
    import tokenize

    from gradguard.lsp.documents import Snapshot
    from gradguard.lsp.hover import tensor_at, tensor_markdown

    found, hovers = [], 0
    for rule in all_rules():
        for path in rule.examples("bad") + rule.examples("good"):
            text = path.read_text(encoding="utf-8")
            report = check_text(text, str(path), lang="zh")
            snapshot = Snapshot("k", text, str(path), [])
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type != tokenize.NAME:
                    continue
                line, col = tok.start[0] - 1, tok.start[1]
                facts = tensor_at(report.facts, line, col)
                if facts is None:
                    continue
                hovers += 1
                markdown = tensor_markdown(facts, snapshot, "zh", report.facts, (line, col))
                found += [f"{path.parent.name}/{path.name}:{line + 1} {p}" for p in problems(markdown)]
    assert hovers > 500
    assert found == []


def run_gradguard(args: list[str], cwd: Path, **locale: str):
    """`gradguard ARGS` in `cwd` with exactly the locale variables given (the test runner's own are removed)."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")}
    env.update(locale)
    return subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


LEAF_WRITE = "import torch\nw = torch.rand(3, requires_grad=True)\nw.add_(1)\n"
ZH = re.compile(f"[{CJK}]")


@pytest.mark.parametrize("locale, expected", [
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),  # LC_ALL wins
    ({}, "en"),
])
def test_language_auto_follows_the_locale_in_every_command(locale, expected, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nlanguage = "auto"\n', encoding="utf-8")
    (tmp_path / "train.py").write_text(LEAF_WRITE, encoding="utf-8")
    (tmp_path / "error.txt").write_text(
        "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n", encoding="utf-8")
    outputs = {
        "check": run_gradguard(["check", "train.py"], tmp_path, **locale).stdout,
        "rule": run_gradguard(["rule", "GG101"], tmp_path, **locale).stdout,
        "rule --all": run_gradguard(["rule", "--all"], tmp_path, **locale).stdout,
        "explain": run_gradguard(["explain", "--no-static", "error.txt"], tmp_path, **locale).stdout,
    }
    for command, out in outputs.items():
        assert out and bool(ZH.search(out)) == (expected == "zh"), (command, out)


def test_language_auto_follows_the_locale_in_the_tracer(tmp_path):
    (tmp_path / "train.py").write_text(LEAF_WRITE, encoding="utf-8")
    zh = run_gradguard(["trace", "--output", "-", "train.py"], tmp_path, LANG="zh_CN.UTF-8").stderr
    assert "错误 [leaf-inplace]" in zh, zh
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nlanguage = "en"\n', encoding="utf-8")
    en = run_gradguard(["trace", "--output", "-", "train.py"], tmp_path, LANG="zh_CN.UTF-8").stderr
    assert "error [leaf-inplace]" in en and not ZH.search(en), en  # the config's language wins over the locale
