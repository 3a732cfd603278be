"""The advice `gradguard trace` and `gradguard explain` print is the rules' own recipe, and applied as printed it
trains like the hand fix (issue 31).

Each program of tests/trace_programs is copied to a temporary folder and traced there; the command the report
prints is run as printed (`gradguard check --fix ... FILE`, through the CLI's own `main`), and the fixed copy is
trained beside the hand fix (tests/trace_programs/hand_fixes/) under the same seeds by `make fixcheck`'s runner,
which compares the value of every backward() and the gradients after the first.
"""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from gradguard import cli, explain, trace

sys.path.insert(0, str(Path(__file__).parent / "real_world"))
import fixcheck  # noqa: E402

PROGRAMS = Path(__file__).parent / "trace_programs"
HAND = PROGRAMS / "hand_fixes"


def traced(program: Path, tmp_path: Path, capsys, *options: str) -> tuple[Path, dict, str]:
    copy = tmp_path / program.name
    copy.write_text(program.read_text())
    out = tmp_path / "trace.json"
    trace.main([*options, "--output", str(out), str(copy)])
    err = capsys.readouterr().err
    [finding] = json.loads(out.read_text())["findings"]
    return copy, finding, err


def apply_printed(command: list[str], capsys) -> None:
    assert command[:2] == ["gradguard", "check"]
    cli.main(command[1:])
    capsys.readouterr()


def trains_like_hand_fix(fixed: Path, hand: Path) -> str | None:
    runs = fixcheck.run_traced([fixed, hand], timeout=120)
    ours, ref = runs[str(fixed)], runs[str(hand)]
    assert ours.clean, ours.error
    assert ref.clean, ref.error
    return fixcheck.compare(ours, ref, "same")


@pytest.mark.parametrize("name, code, fix", [
    ("gan_wrong_order", "GG401",
     "Recompute lines 15 and 17 after `opt_g.step()` from `fake.detach()` (unsafe: the later loss no longer "
     "back-propagates into the model that just stepped)"),
    ("two_losses_step_between", "GG401",
     "Recompute lines 8 and 10 after `opt.step()` (unsafe: the recomputed forward sees the new weights; dropout "
     "and BatchNorm statistics run again)"),
    ("rnn_retained_step", "GG402",
     "Carry `h_next.detach()` (unsafe: cuts the graph, no gradient into earlier iterations)"),
])
def test_tracer_prints_the_rule_recipe_and_applied_it_trains_like_the_hand_fix(name, code, fix, tmp_path, capsys):
    copy, finding, err = traced(PROGRAMS / f"{name}.py", tmp_path, capsys)
    command = ["gradguard", "check", "--fix", "--unsafe-fixes", "--select", code, str(copy)]
    assert finding["rule"]["code"] == code
    assert finding["rule"]["fix"] == fix
    assert finding["rule"]["command"] == command
    printed = f"{fix} ({code}, line {finding['rule']['line']}; `{shlex.join(command)}` applies it)"
    assert finding["fix"] == printed
    assert f"  fix      {printed}\n" in err
    assert "before step()" not in finding["fix"]
    apply_printed(finding["rule"]["command"], capsys)
    assert trains_like_hand_fix(copy, HAND / f"{name}.py") is None


def test_the_old_gan_advice_applied_trains_differently():
    """Why the advice changed: every backward() before the steps runs clean, but D's step takes G's gradient."""
    reason = trains_like_hand_fix(HAND / "gan_every_backward_first.py", HAND / "gan_wrong_order.py")
    assert reason is not None and reason.startswith("backward #")


def test_explain_gives_the_tracer_s_advice_for_a_plain_traceback(tmp_path, capsys, monkeypatch):
    copy, finding, _ = traced(PROGRAMS / "gan_wrong_order.py", tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    error = ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
             "operation: [torch.FloatTensor [8, 2]], which is output 0 of AsStrided, is at version 2; expected "
             "version 1 instead.")
    text = (f'Traceback (most recent call last):\n  File "{copy}", line 22, in <module>\n    d_loss.backward()\n'
            + error + "\n")
    [ex] = explain.explain(text)
    assert ex.rule == finding["rule"]
    assert ex.fix == finding["fix"]
    assert "usual fix      " + finding["fix"] in explain.render_text([ex])


def test_explain_of_the_tracer_s_output_gives_the_same_advice(tmp_path, capsys, monkeypatch):
    copy, finding, err = traced(PROGRAMS / "gan_wrong_order.py", tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    [ex] = explain.explain(err)
    assert ex.fix == finding["fix"]


def test_chinese_advice_is_the_rule_s_chinese_recipe(tmp_path, capsys):
    copy, finding, err = traced(PROGRAMS / "gan_wrong_order.py", tmp_path, capsys, "--lang", "zh")
    zh = finding["i18n"]["zh"]["fix"]
    assert zh.startswith("在 `opt_g.step()` 之后重新计算第 15、17 行（读取 `fake.detach()`）")
    assert zh.endswith(f"（GG401，第 20 行；`gradguard check --fix --unsafe-fixes --select GG401 {copy}` 会应用这个修复）")
    assert finding["i18n"]["en"]["fix"].startswith("Recompute lines 15 and 17 after `opt_g.step()`")


def test_every_write_the_tracer_saw_is_a_finding_with_its_own_recipe(tmp_path, capsys):
    """`x += attn(ln1(x))` above the line backward() failed on is the same bug: a finding of its own (seen at the
    write), not only a stderr line; fixing what the report names makes the program train like the hand fix."""
    copy, doc, err = traced_doc(PROGRAMS / "residual_writes_in_place.py", tmp_path, capsys)
    first, seen = doc["findings"]
    assert (first["severity"], first["save"]["line"], first["write"]["line"]) == ("error", 13, 13)
    assert (seen["kind"], seen["severity"], seen["seen"]) == ("stale-save", "warning", "write")
    assert (seen["save"]["line"], seen["write"]["line"], seen["write"]["op"]) == (12, 12, "add_")
    assert seen["versions"] == {"saved": 0, "now": 1}
    assert seen["why"] == ("`x` was saved for backward by `nn.LayerNorm` on line 12; this in-place `+=` changes it, "
                           "so `backward()` on line 14 will fail.")
    assert seen["fix"].startswith("Rewrite as `x = x + attn(ln1(x))` (GG201, line 12;")
    assert f"  fix      {seen['fix']}" in err
    assert first["rule"]["command"] == seen["rule"]["command"]
    apply_printed(first["rule"]["command"], capsys)
    assert trains_like_hand_fix(copy, HAND / "residual_writes_in_place.py") is None


def test_the_editor_shows_the_write_seen_at_the_write(tmp_path, capsys):
    from gradguard.lsp.trace_results import read_trace_file

    copy = tmp_path / "residual.py"
    copy.write_text((PROGRAMS / "residual_writes_in_place.py").read_text())
    (tmp_path / ".gradguard").mkdir()
    trace.main(["--output", str(tmp_path / ".gradguard" / "trace.json"), str(copy)])
    capsys.readouterr()
    marks = read_trace_file(tmp_path / ".gradguard" / "trace.json", root=str(tmp_path))
    assert sorted((m.line + 1, m.severity.name) for m in marks) == [(12, "Warning"), (12, "Warning"),
                                                                    (13, "Error"), (13, "Error")]


@pytest.mark.parametrize("source, why", [
    ("import torch\nw = torch.randn(4, 3, requires_grad=True)\nz = w @ torch.randn(3, 5)\n"
     "z /= z.norm(dim=1, keepdim=True)\nz.sum().backward()\n",
     "on line 4, the right-hand side read the tensor and LinalgVectorNormBackward0 saved it for backward; then the "
     "augmented assignment (div_) wrote its result into that same tensor"),
    ("import torch\nw = torch.randn(4, 3, requires_grad=True)\nt = w * 2\ny = t.pow(2).sum() + t.add_(1).sum()\n"
     "y.backward()\n",
     "on line 4, PowBackward0 saved a tensor for backward and then add_ wrote into it in place"),
])
def test_a_save_and_a_write_on_one_line_are_explained_by_the_line_s_shape(source, why, tmp_path, capsys):
    """Without a rule's words (a `# noqa` hides the static finding), the tracer's own text says what the line does,
    never the `x[i+1] = f(x[i])` loop."""
    program = tmp_path / "same_line.py"
    program.write_text(source.replace("\nz.sum()", "  # noqa: GG201\nz.sum()").replace(
        ".sum()\ny.backward", ".sum()  # noqa: GG201\ny.backward"))
    out = tmp_path / "trace.json"
    trace.main(["--output", str(out), str(program)])
    err = capsys.readouterr().err
    [finding] = json.loads(out.read_text())["findings"]
    assert finding["why"] == why
    assert "rule" not in finding
    assert "x[i+1]" not in err and "torch.stack" not in err


def traced_doc(program: Path, tmp_path: Path, capsys) -> tuple[Path, dict, str]:
    copy = tmp_path / program.name
    copy.write_text(program.read_text())
    out = tmp_path / "trace.json"
    trace.main(["--output", str(out), str(copy)])
    return copy, json.loads(out.read_text()), capsys.readouterr().err


def test_a_fix_that_leaves_the_finding_is_not_given_as_the_command():
    """The advice is re-checked: the program with the fix applied is analysed again, and a fix that leaves the
    rule's finding (here one whose edit rewrites the line as it was) gives the rule's message, no command."""
    from dataclasses import replace

    from gradguard.explain import advice
    from gradguard.findings import Edit

    path = PROGRAMS / "saved_input_modified.py"
    source = path.read_text()
    findings = advice.findings_of(source, str(path), "en")
    [real] = findings
    line = real.span.start_line
    same = Edit(replace(real.span, start_col=0, end_col=len(source.splitlines()[line])), source.splitlines()[line])
    idle = replace(real, fix=replace(real.fix, edits=(same,)))
    found = advice.match([idle], str(path), line + 1, (), source, "en")
    assert (found.code, found.fix_title, found.command()) == ("GG201", "", [])
    assert found.text("en") == f"GG201: {real.message}"
    kept = advice.match(findings, str(path), line + 1, (), source, "en")
    assert kept.fix_title == real.fix.message and kept.command()[-1] == str(path)
