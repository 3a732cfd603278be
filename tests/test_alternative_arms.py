"""A value that may be either of two tensors (`x = a if c else b`, or `x` bound in both arms of an `if`) with `c`
unknown (random teacher forcing): a save of it watches both tensors' version counters, so a later index write into
one arm's base fails backward on the runs that took that arm (GG301). Each program runs under torch with a seed
whose draws take the arm that raises; the repaired one runs clean."""
from __future__ import annotations

import textwrap

import pytest
from torch_exec import run_program

from gradguard.engine import Engine

PROGRAM = textwrap.dedent("""\
    import random

    import torch
    import torch.nn as nn

    random.seed(0)
    torch.manual_seed(0)
    cell = nn.GRUCell(2, 8)
    head = nn.Linear(8, 2)


    def decode(x, h, trg, ratio=0.5):
        outputs = torch.zeros(trg.shape)
        for t in range(trg.shape[0]):
            h = cell(x, h)
            outputs[t] = head(h)
    {choice}
        return outputs


    trg = torch.randn(4, 3, 2)
    loss = (decode(torch.randn(3, 2), torch.zeros(3, 8), trg) - trg).pow(2).mean()
    loss.backward()
    """)

CHOICES = {
    "expression": "        x = trg[t] if random.random() < ratio else outputs[t]",
    "statement": "        if random.random() < ratio:\n            x = trg[t]\n        else:\n            x = outputs[t]",
}


@pytest.mark.parametrize("form", sorted(CHOICES))
def test_either_arm_is_watched_and_the_fix_reads_a_copy(form):
    program = PROGRAM.format(choice=CHOICES[form])
    assert "modified by an inplace operation" in run_program(program).error
    report = Engine().check(program, "seq2seq.py")
    assert [(f.code, f.span.start_line + 1) for f in report.findings] == [("GG301", 16)]
    finding = report.findings[0]
    assert "when line" in finding.message and "takes `outputs[t]`" in finding.message
    fixed = program.replace("else outputs[t]", "else outputs[t].clone()").replace(
        "x = outputs[t]\n", "x = outputs[t].clone()\n")
    assert fixed != program
    from gradguard.checking import check_one
    from gradguard.config import Config

    assert check_one("seq2seq.py", program, Config(), "en", "safe", 10**7).fixed_text == fixed
    assert run_program(fixed).clean


@pytest.mark.parametrize("form", sorted(CHOICES))
def test_two_fresh_tensors_are_not_an_alias(form):
    """Both arms are tensors of their own: writing `outputs` touches neither."""
    program = PROGRAM.format(choice=CHOICES[form].replace("outputs[t]", "head(h).detach()"))
    assert run_program(program).clean
    assert Engine().check(program, "seq2seq.py").findings == []
