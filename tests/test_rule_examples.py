"""Every rule's example programs are its specification, checked statically and executed under torch.

- bad_*.py: gradguard reports exactly the `# <- GGnnn` markers (code and line); run under torch it raises the
  rule's runtime error (silent rules: the program prints `wrong gradient:` after comparing with the true one);
  after `--fix --unsafe-fixes` it has no finding left and runs clean.
- good_*.py: no finding, and it runs clean through backward().
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradguard.checking import check_one
from gradguard.config import Config
from gradguard.engine import Engine
from gradguard.rules import EXAMPLES_DIR, all_rules, get_rule
from torch_exec import run_program

MARKER = re.compile(r"#\s*<-\s*(GG\d{3})")
ENGINE = Engine()


def examples(kind: str):
    for rule in all_rules():
        for path in rule.examples(kind):
            yield pytest.param(rule.code, path, id=f"{rule.code}/{path.name}")


def markers(text: str) -> set[tuple[str, int]]:
    return {(m.group(1), i + 1) for i, line in enumerate(text.splitlines()) for m in MARKER.finditer(line)}


def findings(text: str, path: Path) -> set[tuple[str, int]]:
    report = ENGINE.check(text, str(path))
    assert not report.parse_notes, report.parse_notes
    return {(f.code, f.span.start_line + 1) for f in report.findings}


def test_every_rule_has_examples_and_docs():
    codes = [r.code for r in all_rules()]
    assert len(codes) == len(set(codes)), "duplicate rule codes"
    for rule in all_rules():
        assert len(rule.examples("bad")) >= 3, f"{rule.code} needs at least 3 bad examples"
        assert len(rule.examples("good")) >= 3, f"{rule.code} needs at least 3 good examples"
        for lang in ("en", "zh"):
            for part in (rule.summary, rule.what, rule.why, rule.autograd, rule.fix_safety):
                assert part.get(lang, "").strip(), f"{rule.code} lacks {lang} docs"
        assert (rule.runtime_error == "") == (rule.severity == "warning")
    folders = {p.name for p in EXAMPLES_DIR.iterdir() if p.is_dir()}
    assert folders <= set(codes), f"example folders without a rule: {folders - set(codes)}"


@pytest.mark.parametrize("code,path", list(examples("bad")))
def test_bad_example_is_reported_on_its_marked_lines(code, path):
    text = path.read_text(encoding="utf-8")
    expected = markers(text)
    assert any(c == code for c, _ in expected), f"{path.name} has no `# <- {code}` marker"
    assert findings(text, path) == expected


@pytest.mark.parametrize("code,path", list(examples("bad")))
def test_bad_example_fails_under_torch_as_documented(code, path):
    rule = get_rule(code)
    result = run_program(path.read_text(encoding="utf-8"), str(path))
    if rule.runtime_error:
        assert result.error_type == "RuntimeError", f"expected torch to raise, got {result}"
        assert rule.error_match in result.error, result.error
    else:
        assert result.clean, result
        assert "wrong gradient:" in result.stdout, result.stdout


def fixable_examples():
    for rule in all_rules():
        if rule.fix_kind != "none":
            for path in rule.examples("bad"):
                yield pytest.param(rule.code, path, id=f"{rule.code}/{path.name}")


@pytest.mark.parametrize("code,path", list(fixable_examples()))
def test_fixed_bad_example_runs_clean(code, path):
    text = path.read_text(encoding="utf-8")
    result = check_one(str(path), text, Config(), "en", "unsafe", 10**7)
    assert result.fixed_text != text, f"{code} documents a fix but offers none here"
    assert not [f for f in result.findings if f.code == code], result.fixed_text
    run = run_program(result.fixed_text, str(path))
    assert run.clean, f"{run}\n--- fixed program ---\n{result.fixed_text}"


@pytest.mark.parametrize("code,path", list(examples("bad")))
def test_rules_without_fixes_offer_none(code, path):
    if get_rule(code).fix_kind != "none":
        return
    text = path.read_text(encoding="utf-8")
    result = check_one(str(path), text, Config(), "en", "unsafe", 10**7)
    assert result.fixed_text == text


@pytest.mark.parametrize("code,path", list(examples("good")))
def test_good_example_is_quiet(code, path):
    text = path.read_text(encoding="utf-8")
    assert findings(text, path) == set()


@pytest.mark.parametrize("code,path", list(examples("good")))
def test_good_example_runs_clean_through_backward(code, path):
    text = path.read_text(encoding="utf-8")
    assert "backward(" in text or "autograd.grad(" in text, "a good example must run backward"
    result = run_program(text, str(path))
    assert result.clean, result


def test_the_readme_table_shows_each_rules_fix_kind():
    """The README's "What it catches" table is what users read first: its fix column is the rule's own fix_kind
    (it said `none` for GG401 and GG404 after their repairs landed)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    shown = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| \[(GG\d+)\]\([^)]*\) \|[^|]*\|[^|]*\|([^|]*)\|",
                                                                    readme, re.M)}
    assert shown == {rule.code: rule.fix_kind.replace("/", " / ") for rule in all_rules()}
