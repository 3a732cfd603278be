"""A run whose budget runs out says where, never passes as clean, and still checks the rest (issue 33 item 3).

Each run of the Facts pass interprets at most 60,000 statements and 1,000 calls. Past that the run used to skip
the rest silently: a 278-line file (a 250-line function called 16 times in a 16-pass loop, then the bug) printed
"All checks passed", and 3,000 loop-body pairs lost all 3,000 findings. Now the first cut of a run is a note at
the line where it happened, so the CLI exits 1 and never prints the pass, and the rest of the run goes on with
loops run once (a loop already running finishes its pass), on a second allowance of as many statements.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gradguard import cli
from gradguard.engine import Engine

_spec = importlib.util.spec_from_file_location(
    "bench_scaling", Path(__file__).resolve().parent.parent / "benchmarks" / "bench_scaling.py")
bench_scaling = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_scaling)

STEPS_NOTE = ("the analysis budget (60,000 interpreted statements) ran out at this line: the rest of this block was "
              "not checked in full (its loops ran once from here)")


def heavy_program(bug: bool) -> str:
    """A 250-line function (lines 4-253), called 16 times in each of 16 passes: 64,000 statements."""
    body = "".join(f"    y = y * 1.0{i % 10}\n" for i in range(248))
    calls = "".join("    w = heavy(w)\n" for _ in range(16))
    # without the bug the file still back-propagates (code with no write, step or backward is not interpreted)
    tail = "z = torch.randn(3, requires_grad=True).exp()\n" + ("z.add_(1)\n" if bug else "") + "z.sum().backward()\n"
    return (f"import torch\n\n\ndef heavy(x):\n    y = x\n{body}    return y\n\n\nw = torch.ones(3)\n"
            f"for i in range(16):\n{calls}{tail}")


@pytest.fixture
def gg(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")

    def run(*args: str):
        capsys.readouterr()
        status = cli.main(["check", "--no-cache", *args])
        return status, capsys.readouterr().out

    return run


def test_the_278_line_file_reports_its_bug_and_where_the_budget_ran_out(gg, tmp_path):
    text = heavy_program(bug=True)
    assert text.count("\n") == 277
    (tmp_path / "train.py").write_text(text)
    status, out = gg("--concise", "train.py")
    assert status == 1
    assert out.splitlines()[:2] == [
        f"train.py:11:1: parse {STEPS_NOTE}",  # the 7th line of `heavy`, on its 241st call
        "train.py:276:1: GG201 `z` was saved for backward by `exp` on line 275; this in-place `add_()` changes it, "
        "so `backward()` on line 277 will fail.",
    ]
    assert "All checks passed" not in out


def test_a_spent_budget_is_never_a_clean_pass(gg, tmp_path):
    (tmp_path / "train.py").write_text(heavy_program(bug=False))
    status, out = gg("train.py")
    assert status == 1
    assert f"train.py:11:1: parse {STEPS_NOTE}" in out
    assert "All checks passed" not in out


@pytest.mark.parametrize("pairs", [2_000, 3_000])
def test_every_loop_body_pair_keeps_its_finding(pairs):
    """3,000 pairs spend the budget in the loop's 10th pass: the pass finishes, its backward runs, and every
    write is reported (they all vanished before)."""
    report = Engine(editor=False).check(bench_scaling.loop_pairs(pairs), "pairs.py")
    assert [f.code for f in report.findings] == ["GG201"] * pairs
    notes = [(n.span.start_line + 1, n.message) for n in report.parse_notes]
    assert notes == ([] if pairs == 2_000 else [(5_957, STEPS_NOTE)])


def test_the_call_budget_is_noted_at_the_call_it_refused():
    calls = "".join("    w = step(w)\n" for _ in range(70))
    text = (f"import torch\n\n\ndef step(x):\n    return x * 2\n\n\nw = torch.ones(3)\nfor i in range(16):\n{calls}"
            "z = torch.randn(3, requires_grad=True).exp()\nz.add_(1)\nz.sum().backward()\n")
    report = Engine(editor=False).check(text, "calls.py")  # 14 passes of 70 calls, then the 21st call of pass 15
    assert [(f.code, f.span.start_line + 1) for f in report.findings] == [("GG201", 81)]
    assert [(n.span.start_line + 1, n.message) for n in report.parse_notes] == [
        (30, "the analysis budget (1,000 interpreted calls) ran out at this line: the calls after it in this block "
             "were not followed")]


def test_a_call_too_deep_to_follow_is_noted_at_the_call():
    """Calls nested more than 8 deep are not followed (a chain of helpers): the call where that happened is named,
    so a write in the helper that was not followed is not passed over as clean."""
    helpers = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n\n\n" for i in range(9))
    text = (f"import torch\n\n\n{helpers}def f9(x):\n    y = x.exp()\n    y.add_(1)\n    return y\n\n\n"
            "out = f0(torch.randn(3, requires_grad=True))\nout.sum().backward()\n")
    report = Engine(editor=False).check(text, "deep.py")
    assert [(n.span.start_line + 1, n.message) for n in report.parse_notes] == [
        (33, "calls nested more than 8 deep are not followed: what this call does was not checked")]
    assert text.splitlines()[32] == "    return f8(x)"


def test_a_cut_in_a_function_linked_from_another_file_is_said_on_line_one(gg, tmp_path):
    """`heavy` lives in heavy.py of the same project: its lines are not train.py's, so the note goes to line 1."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    program = heavy_program(bug=True)
    definition, _, rest = program.partition("\n\n\nw = ")
    (tmp_path / "heavy.py").write_text(definition + "\n")
    (tmp_path / "train.py").write_text("import torch\nfrom heavy import heavy\n\nw = " + rest)
    status, out = gg("--concise", "train.py")
    assert status == 1
    assert out.splitlines()[:2] == [
        "train.py:1:1: parse in code linked from another file, the analysis budget (60,000 interpreted statements) "
        "ran out: the rest of this block was not checked in full (its loops ran once from here)",
        "train.py:23:1: GG201 `z` was saved for backward by `exp` on line 22; this in-place `add_()` changes it, "
        "so `backward()` on line 24 will fail.",
    ]
