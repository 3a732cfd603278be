"""A newer edit stops the running analysis between two statements (issue 30): `Engine.check(..., cancelled=...)`
raises AnalysisCancelled, and the engine's caches stay exact: the next check of any text finds what a fresh engine
finds. The language server passes each document's flag, set by the next didChange of that document."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.engine import Engine
from gradguard.facts.model import AnalysisCancelled

EXAMPLES = Path(__file__).resolve().parent.parent / "server" / "gradguard" / "rules" / "examples"
PROGRAMS = [EXAMPLES / "GG301" / "bad_1_recurrence_fill.py", EXAMPLES / "GG301" / "bad_3_rnn_hidden_buffer.py"]


def polls_until(n: int):
    count = [0]

    def cancelled() -> bool:
        count[0] += 1
        return count[0] >= n

    return cancelled, count


def findings(report):
    return [(f.code, f.span, f.message, f.fix) for f in report.findings]


@pytest.mark.parametrize("program", PROGRAMS,
                         ids=lambda p: p.name)
@pytest.mark.parametrize("after", [1, 2, 5])
def test_a_cancelled_check_leaves_the_engine_exact(program, after):
    text = program.read_text(encoding="utf-8")
    expected = findings(Engine().check(text, str(program)))
    assert expected, "the program must have findings for this test to mean anything"
    engine = Engine()
    cancelled, polls = polls_until(after)
    long_text = text + "\nfor _ in range(16):\n" + "".join(f"    _a{i} = [j * 2 for j in range(8)]\n" for i in range(200))
    with pytest.raises(AnalysisCancelled):
        engine.check(long_text, str(program), cancelled=cancelled)
    assert polls[0] == after
    assert findings(engine.check(text, str(program))) == expected  # the edit's check, on the same engine
    assert findings(engine.check(long_text, str(program))) == findings(Engine().check(long_text, str(program)))


def test_an_uncancelled_check_polls_and_finishes():
    program = sorted(EXAMPLES.glob("GG201/bad_*.py"))[0]
    text = program.read_text(encoding="utf-8")
    cancelled, polls = polls_until(10**9)
    long_text = text + "\nfor _ in range(16):\n" + "".join(f"    _a{i} = 1\n" for i in range(200))
    assert findings(Engine().check(long_text, str(program), cancelled=cancelled)) == \
        findings(Engine().check(long_text, str(program)))
    assert polls[0] > 0
