"""The error gradguard predicts ("torch raises: ...") is the error torch raises for that program.

Every bad rule example, and every tests/real_world bug program gradguard reports, runs under torch; its real
message is compared with each finding's `runtime_error`:
- the same error family (the predicted text up to its first program-specific part is in torch's message);
- the same `which is output 0 of X` when gradguard names an X, and none when torch names none but gradguard does;
- a predicted shape or version is torch's (unknown ones are left as `[...]`, `<n>`, `<m>`: never invented);
- never cut: the text ends with a full sentence.
"""
from __future__ import annotations

import re
import signal
import sys
from pathlib import Path

import pytest

import torch  # noqa: F401  (installed by the Makefile: a missing torch must fail, not skip)

sys.path.insert(0, str(Path(__file__).parent))
from torch_exec import run_program  # noqa: E402

from gradguard.engine import check_text  # noqa: E402
from gradguard.rules import all_rules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "server" / "gradguard" / "rules" / "examples"
REAL_WORLD_BUGS = ROOT / "tests" / "real_world" / "bugs"

OUTPUT_OF = re.compile(r"which is output (\d+) of ([^,]+),")
TENSOR = re.compile(r"\[torch\.(\w+) \[([^\]]*)\]\]")
VERSIONS = re.compile(r"is at version (\S+); expected version (\S+) instead")
MULTI_VIEW = re.compile(r"Output (\S+) of (\S+) is a view")
PLACEHOLDERS = ("[...]", "<n>", "<m>", "<op>", "<i>")


def programs() -> list[Path]:
    files = sorted(p for rule in all_rules() for p in rule.examples("bad"))
    if REAL_WORLD_BUGS.is_dir():
        files += sorted(p for p in REAL_WORLD_BUGS.glob("**/*.py") if not p.name.endswith(".fixed.py"))
    return files


def family(predicted: str) -> str:
    """The part of the predicted text every instance shares: up to the first program-specific part."""
    cut = min([i for i in (predicted.find(p) for p in (": [",) + PLACEHOLDERS) if i >= 0] or [len(predicted)])
    fam = predicted[:cut].rstrip(" :.")
    if len(fam) < 20:  # `Output <i> of Split is a view ...`, `<op>(): functions with out=...`: from the fixed tail
        fam = MULTI_VIEW.sub("", predicted).split(". ")[0].strip() if MULTI_VIEW.search(predicted) else \
            predicted.split("(): ", 1)[-1][:60]
    return fam


def compare(predicted: str, actual: str) -> list[str]:
    """What the prediction claims that torch's message contradicts ([] when they agree)."""
    problems = []
    fam = family(predicted)
    if fam not in actual:
        return [f"family {fam!r} not in torch's message"]
    said, real = OUTPUT_OF.search(predicted), OUTPUT_OF.search(actual)
    if said and (real is None or said.groups() != real.groups()):
        problems.append(f"predicted `output {said[1]} of {said[2]}`, torch: {real[0] if real else 'no node'}")
    said, real = MULTI_VIEW.search(predicted), MULTI_VIEW.search(actual)
    if said and said[2] != "<op>" and (real is None or said[2] != real[2]):
        problems.append(f"predicted `{said[0]}`, torch: {real[0] if real else 'none'}")
    said, real = TENSOR.search(predicted), TENSOR.search(actual)
    if said and said[2] != "...":
        if real is None or said.groups() != real.groups():
            problems.append(f"predicted tensor {said[0]}, torch: {real[0] if real else 'none'}")
    said, real = VERSIONS.search(predicted), VERSIONS.search(actual)
    if said:
        for i, what in ((1, "now"), (2, "expected")):
            if said[i] not in ("<n>", "<m>") and (real is None or said[i] != real[i]):
                problems.append(f"predicted version ({what}) {said[i]}, torch: {real[i] if real else 'none'}")
    if not predicted.rstrip().endswith((".", ")")):
        problems.append("the text is cut")
    return problems


def run_bounded(text: str, filename: str, seconds: int = 60):
    """run_program with a time limit: a real-world program that hangs fails its case instead of the suite."""
    def timeout(signum, frame):
        raise TimeoutError(f"{filename} ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        return run_program(text, filename)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def reported(path: Path) -> list:
    return [f for f in check_text(path.read_text(encoding="utf-8"), str(path)).findings if f.runtime_error]


CASES = [p for p in programs() if reported(p)]


def test_the_cases_cover_every_rule_that_predicts_an_error():
    codes = {f.code for p in CASES for f in reported(p)}
    assert codes >= {r.code for r in all_rules() if r.runtime_error}


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(ROOT)))
def test_predicted_error_is_the_error_torch_raises(path: Path):
    findings = reported(path)
    result = run_bounded(path.read_text(encoding="utf-8"), str(path))
    assert result.error is not None, "the program ran clean under torch"
    # torch raises once, for the first stale save backward unpacks. One finding of that family must be that save's
    # and agree in every detail; when there are several (several saves made stale), the others are about saves
    # torch never reached, so they cannot be checked against this message.
    matching = [f for f in findings if family(f.runtime_error) in result.error]
    assert matching, (f"no finding predicts torch's error:\n  torch: {result.error[:200]}\n"
                      + "\n".join(f"  {f.code}: {f.runtime_error[:200]}" for f in findings))
    disagreements = [compare(f.runtime_error, result.error) for f in matching]
    assert [] in disagreements, (result.error, [(f.code, f.runtime_error, d) for f, d in zip(matching, disagreements)])


def test_compare_catches_an_invented_node_shape_or_version():
    actual = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
              "[torch.FloatTensor [64, 32]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
              "instead. Hint: ...")
    canned = actual.replace("[64, 32]], which is output 0 of Sigmoid", "[3]], which is output 0 of Add")
    assert len(compare(canned, actual)) == 2
    assert compare(actual.replace("version 1;", "version 2;"), actual) == ["predicted version (now) 2, torch: 1"]
    form = actual.replace("[64, 32]", "[...]").replace("version 1;", "version <n>;").replace("version 0", "version <m>")
    assert compare(form, actual) == []
    assert compare(form[:170], actual) == ["the text is cut"]


# Cases the examples do not cover, each checked the same way: an alias write keeps the creating op's node, a write
# under no_grad leaves the node unknown (torch keeps the old one), two writes outside loops give the version torch
# finds at backward (the last write's), a shape the code spells out is torch's shape.
INLINE = {
    "detach_alias_write": "x = w * 2\ny = x.sin()\nx.detach().mul_(2)\n",
    "detach_name_write": "x = torch.sigmoid(w)\ny = x.sin()\nd = x.detach()\nd.zero_()\n",
    "write_under_no_grad": "x = w + 2\ny = x.sin()\nwith torch.no_grad():\n    x.mul_(2)\n",
    "two_writes": "x = w * 2\ny = x.sin()\nx.add_(1)\nx.mul_(2)\n",
    "literal_shape": "x = torch.rand(4, 3)\ny = w * x\nx.add_(1)\n",
}


@pytest.mark.parametrize("name", sorted(INLINE))
def test_predicted_error_on_small_programs(name: str):
    text = "import torch\nw = torch.rand(4, 3, requires_grad=True)\n" + INLINE[name] + "y.sum().backward()\n"
    (finding,) = [f for f in check_text(text, f"{name}.py").findings if f.runtime_error]
    result = run_bounded(text, f"{name}.py")
    assert compare(finding.runtime_error, result.error) == [], (finding.runtime_error, result.error)
    expected_node = {"detach_alias_write": "Mul", "detach_name_write": "Sigmoid"}.get(name)
    said = OUTPUT_OF.search(finding.runtime_error)
    assert (said[2] if said else None) == expected_node


def test_two_writes_outside_loops_quote_the_version_backward_finds():
    """The hover's timeline knew 0 -> 2; the message said `<n>`/`<m>`: both now say what torch will print."""
    text = "import torch\nw = torch.rand(4, 3, requires_grad=True)\n" + INLINE["two_writes"] + "y.sum().backward()\n"
    errors = {f.runtime_error for f in check_text(text, "two_writes.py").findings if f.runtime_error}
    assert len(errors) == 1 and "is at version 2; expected version 0 instead." in errors.pop()
    assert "is at version 2; expected version 0 instead." in run_bounded(text, "two_writes.py").error


LOOP = ("import torch\nx = torch.zeros(4)\nw = torch.rand(4, requires_grad=True)\nx[0] = torch.rand(1) * w[0]\n"
        "for i in range({passes}):\n    x[i+1] = torch.sin(x[i]) * w[i]\nx.sum().backward()\n")


def test_versions_of_a_save_in_a_loop_are_those_of_the_pass_they_name():
    """A save in a loop is made once per pass, each at its own version. The explanation gives one pass's numbers
    and names the pass; torch's message gives those of the pass it unpacks first (here the last one)."""
    for passes, torch_versions in ((1, ("2", "1")), (3, ("4", "3"))):
        text = LOOP.format(passes=passes)
        [finding] = [f for f in check_text(text, "loop.py").findings if f.runtime_error]
        assert "at version 1 (pass 1 of the loop)" in finding.explanation
        assert "finds a newer version than it saved (2 instead of 1 on pass 1)" in finding.explanation
        assert VERSIONS.search(finding.runtime_error).groups() == ("<n>", "<m>")  # torch's numbers vary per run
        actual = run_bounded(text, "loop.py").error
        assert VERSIONS.search(actual).groups() == torch_versions


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rule_docs_name_the_parts_of_their_own_message_that_depend_on_the_program(lang: str):
    for rule in all_rules():
        docs = rule.docs(lang)
        note = next((line for line in docs.splitlines() if "form of the message" in line or "报错信息的格式" in line), "")
        shown = {p for p in PLACEHOLDERS if f"`{p}`" in note}
        assert shown == {p for p in PLACEHOLDERS if p in (rule.runtime_error or "")}, (rule.code, note)


@pytest.mark.parametrize("made, torch_type", [
    ("torch.rand(4, 3, dtype=torch.float64)", "DoubleTensor"),
    ("torch.zeros(4, 3, dtype=torch.half).float().double()", None),  # converted: the code no longer spells it
    ("torch.full((4, 3), 2.0)", "FloatTensor"),
    ("torch.rand(4, 3).detach().clone()", "FloatTensor"),
])
def test_a_shape_is_shown_with_the_dtype_torch_prints_or_not_at_all(made: str, torch_type: str | None):
    text = f"import torch\nw = torch.rand(4, 3, dtype=torch.float64, requires_grad=True)\nx = {made}\ny = w * x\n" \
           "x.add_(1)\ny.sum().backward()\n"
    [finding] = [f for f in check_text(text, "dtype.py").findings if f.runtime_error]
    said = TENSOR.search(finding.runtime_error)
    assert said.groups() == ((torch_type, "4, 3") if torch_type else ("FloatTensor", "...")), finding.runtime_error
    assert compare(finding.runtime_error, run_bounded(text, "dtype.py").error) == []
