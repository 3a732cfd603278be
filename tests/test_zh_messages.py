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


# ---- every other kind of zh text: topic hovers, the CLI's output and summary, explain, the tracer's reports -----

def fragments_and_spacing(text: str) -> list[str]:
    """The checks for terminal texts (explain, the tracer), which write code the way their English does, bare or
    in backticks: English fragments and the spacing rule, not code outside code spans."""
    return [p for p in problems(text) if not p.startswith("code outside a code span")]


def test_zh_topic_hovers():
    from gradguard.lsp.explanations import TOPICS

    found = [f"{key}: {p}" for key, topic in TOPICS.items() for p in problems(topic.markdown("zh"))]
    assert len(TOPICS) >= 10 and found == []


def test_zh_cli_output_of_every_rule_example(tmp_path):
    """`gradguard check --lang zh` as a user reads it: each finding's lines and the summary, also with
    `--statistics`, `--show-fixes` and `--fix` (source excerpts and torch's own message aside)."""
    import shutil
    import subprocess

    for rule in all_rules():
        folder = tmp_path / rule.code
        folder.mkdir()
        for path in rule.examples("bad") + rule.examples("good"):
            shutil.copy(path, folder)
    found = []
    for options in ([], ["--statistics"], ["--show-fixes"], ["--fix", "--unsafe-fixes"]):
        proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--lang", "zh", "--no-cache", *options, "."],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
        lines = []
        for line in (proc.stdout + proc.stderr).splitlines():
            if re.match(r"^\s*\d*\s*\|", line) or "torch 报错: " in line:
                continue  # the user's code, torch's English message
            line = re.sub(r"^\S+\.py(?::cell \d+)?:\d+:\d+: GG\d+ ", "", line)
            lines.append(re.sub(r"\S+\.py\b", " ", line))
        text = "\n".join(lines)
        assert re.search(r"在 \d+ 个文件中发现 \d+ 个问题|已修复", text), (options, text[-500:])
        found += [f"{' '.join(options) or 'check'}: {p}" for p in problems(text)]
    assert found == []


# One program per error kind of `gradguard explain`'s catalogue, run under torch for its real message.
EXPLAIN_PROGRAMS = {
    "saved-tensor-modified": "y = w.exp()\ny.add_(1)\ny.sum().backward()",
    "view-of-leaf-inplace": "w[0].mul_(2)",
    "leaf-inplace": "w.add_(1)",
    "multi-output-view-base": "x = w * 1\na, b = x.unbind()\nwith torch.no_grad():\n    x.mul_(2)\na.sum().backward()",
    "multi-output-view": "a, b = (w * 1).unbind()\na.mul_(2)",
    "no-grad-view": "y = w * 2\nwith torch.no_grad():\n    v = y[:1]\nv.mul_(2)",
    "out-argument": "torch.mul(w, 2, out=torch.empty(2))",
    "overlapping-write": "x = (w * 1)[:1].expand(3)\nx.mul_(2)",
    "custom-function-view": "m = torch.nn.Linear(2, 2)\nm.register_full_backward_hook(lambda *a: None)\nm(w).mul_(2)",
    "input-overlap": "x = torch.rand(2, 2, 2)\nx[1] = x[1].t()",
    "backward-twice": "y = (w * w).sum()\ny.backward()\ny.backward()",
    "inference-inplace": "with torch.inference_mode():\n    t = torch.ones(2)\nt.add_(1)",
    "inference-saved": "with torch.inference_mode():\n    t = torch.ones(2)\n(w * t).sum().backward()",
    "inference-requires-grad": "with torch.inference_mode():\n    t = torch.ones(2)\nt.requires_grad_()",
    "no-grad-fn": "torch.rand(2).sum().backward()",
    "non-scalar-backward": "(w * 2).backward()",
    # a warning, raised here as itself: one CPU process with the gloo backend, as a user can run it
    "fsdp2-view-output": (
        "import os, tempfile, uuid, warnings\nimport torch.distributed as dist\n"
        "from torch.distributed.fsdp import fully_shard\n"
        "dist.init_process_group('gloo', init_method='file://' + os.path.join(tempfile.gettempdir(), uuid.uuid4().hex), "
        "rank=0, world_size=1)\n"
        "try:\n    m = fully_shard(torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Unflatten(1, (2, 2))))\n"
        "    with warnings.catch_warnings(record=True) as seen:\n        warnings.simplefilter('always')\n"
        "        m(torch.rand(3, 2))\nfinally:\n    dist.destroy_process_group()\nraise seen[0].message"),
}


def test_zh_explanation_of_every_error_kind():
    import torch

    from gradguard import explain
    from gradguard.explain import catalog

    assert set(EXPLAIN_PROGRAMS) == {kind.id for kind in catalog.KINDS}
    found = []
    for kind, code in EXPLAIN_PROGRAMS.items():
        try:
            exec(code, {"torch": torch, "w": torch.rand(2, requires_grad=True)})
        except (RuntimeError, UserWarning) as exc:
            message = f"{type(exc).__name__}: {exc}"
        [ex] = explain.explain(message, "zh", run_static=False)
        assert ex.kind == kind
        text = explain.render_text([ex], "zh")
        text = "\n".join(line for line in text.splitlines() if not line.startswith("  错误 "))  # torch's message
        found += [f"{kind}: {p}" for p in fragments_and_spacing(text.replace("gradguard explain", ""))]
    assert found == []


def test_zh_tracer_reports_of_every_trace_program(tmp_path, capsys):
    """The full reports and the warnings `gradguard trace --lang zh` prints, for every program of
    tests/trace_programs (the program's own lines, locations and torch's message aside)."""
    from gradguard import trace

    programs = sorted((Path(__file__).parent / "trace_programs").glob("*.py"))
    found, reports = [], 0
    for path in programs:
        trace.main(["--lang", "zh", "--output", str(tmp_path / "trace.json"), str(path)])
        err = capsys.readouterr().err
        ours, in_report = [], False
        for line in err.splitlines():
            if line.startswith("gradguard"):
                in_report = line.startswith(("gradguard trace: 错误", "gradguard trace: 警告 [silent-write]：为"))
                reports += in_report
                ours.append(line.split(":", 1)[1] if line.startswith("gradguard:") else line[len("gradguard trace:"):])
            elif in_report and line.startswith("  ") and not line.startswith("  报错"):
                ours.append(line)
            else:
                in_report = False
        text = "\n".join(ours)
        for source_line in sorted({s.strip() for s in path.read_text().splitlines() if s.strip()}, key=len, reverse=True):
            text = text.replace(source_line, " ")
        text = re.sub(r"[\w./-]+\.py:\d+", " ", text)
        found += [f"{path.name}: {p}" for p in fragments_and_spacing(text)]
    assert reports >= 15 and found == []


def test_zh_code_action_titles_use_full_width_punctuation():
    """The quick-fix titles the editor lists: `gradguard（GG101，不安全修复）：改写为 …`, no ASCII parentheses or colon
    outside code spans (they once read `gradguard (GG101, 不安全修复): …`)."""
    from gradguard.lsp.actions import fix_title

    found, titles = [], 0
    for rule in all_rules():
        for path in rule.examples("bad"):
            for f in check_text(path.read_text(encoding="utf-8"), str(path), lang="zh").findings:
                if f.fix is None:
                    continue
                titles += 1
                title = fix_title(f.code, {"applicability": f.fix.applicability, "message": f.fix.message}, "zh")
                prose = CODE_SPAN.sub(" ", title)
                found += [f"{path.name}: {title}" for mark in "():" if mark in prose]
                found += [f"{path.name}: {p}" for p in problems(title)]
    assert titles >= 40 and found == []


def test_a_tensor_made_to_require_grad_later_reads_as_chinese_in_the_hover():
    from gradguard.i18n import created_by

    made = "torch.zeros(...) made to require grad with `requires_grad_()`"
    assert created_by(made, "zh") == "`torch.zeros(...)`，再用 `requires_grad_()` 设为需要梯度"
    assert created_by("a tensor made to require grad with `requires_grad_()`", "zh") == \
        "一个张量，再用 `requires_grad_()` 设为需要梯度"
    assert created_by(made, "en") == "`torch.zeros(...)` made to require grad with `requires_grad_()`"
