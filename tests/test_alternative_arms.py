"""A value that may be either of two tensors (`x = a if c else b`, or `x` bound in both arms of an `if`) with `c`
unknown (random teacher forcing): a save of it watches both tensors' version counters, so a later index write into
one arm's base fails backward on the runs that took that arm (GG301). The programs are GG301's bad_9 example in both
forms; each runs under torch with a seed whose draws take the arm that raises, and the repaired one runs clean."""
from __future__ import annotations

from pathlib import Path

import pytest
from torch_exec import run_program

from gradguard.checking import check_one
from gradguard.config import Config
from gradguard.engine import Engine

EXAMPLE = Path(__file__).parents[1] / "server/gradguard/rules/examples/GG301/bad_9_teacher_forcing_reads_outputs.py"
EXPRESSION = "        x = trg[t] if teacher_force else outputs[t]\n"
STATEMENT = "        if teacher_force:\n            x = trg[t]\n        else:\n            x = outputs[t]\n"


def _program(form: str) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert EXPRESSION in text
    return text if form == "expression" else text.replace(EXPRESSION, STATEMENT)


@pytest.mark.parametrize("form", ["expression", "statement"])
def test_either_arm_is_watched_and_the_fix_reads_a_copy(form):
    program = _program(form)
    marked = next(i + 1 for i, line in enumerate(program.splitlines()) if "# <- GG301" in line)
    assert "modified by an inplace operation" in run_program(program).error
    report = Engine().check(program, "seq2seq.py")
    assert [(f.code, f.span.start_line + 1) for f in report.findings] == [("GG301", marked)]
    assert "takes `outputs[t]`" in report.findings[0].message
    fixed = program.replace("else outputs[t]\n", "else outputs[t].clone()\n").replace(
        "x = outputs[t]\n", "x = outputs[t].clone()\n")
    assert fixed != program
    assert check_one("seq2seq.py", program, Config(), "en", "safe", 10**7).fixed_text == fixed
    assert run_program(fixed).clean


@pytest.mark.parametrize("form", ["expression", "statement"])
def test_two_tensors_of_their_own_are_not_an_alias(form):
    """Both arms are tensors of their own: writing `outputs` touches neither."""
    program = _program(form).replace("else outputs[t]\n", "else head(h).detach()\n").replace(
        "x = outputs[t]\n", "x = head(h).detach()\n")
    assert "outputs[t]\n" not in program.split("# <- GG301")[1]
    assert run_program(program).clean
    assert Engine().check(program, "seq2seq.py").findings == []
