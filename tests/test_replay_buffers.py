"""Replay buffers drawn with `random.sample`/`choices`/`choice`: a draw holds the very objects stored, so a buffer of
log-probs kept with their graphs reaches, in the second update, graphs the first update's backward freed (GG404).
These programs are not rule examples because no rewrite is offered: the honest repair (keep states, recompute the
log-prob in each update, as the good program does) changes what the buffer stores."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.engine import Engine
from torch_exec import run_program

PROGRAMS = Path(__file__).parent / "replay_programs"


def test_sampled_log_probs_are_reported_at_the_backward_and_raise():
    path = PROGRAMS / "bad_log_probs_sampled.py"
    text = path.read_text(encoding="utf-8")
    findings = Engine().check(text, str(path)).findings
    marked = next(i + 1 for i, line in enumerate(text.splitlines()) if "# <- GG404" in line)
    assert [(f.code, f.span.start_line + 1) for f in findings] == [("GG404", marked)]
    assert findings[0].fix is None
    result = run_program(text, str(path))
    assert result.error_type == "RuntimeError" and "backward through the graph a second time" in result.error


def test_sampled_states_recomputed_are_clean_and_run():
    path = PROGRAMS / "good_states_sampled.py"
    text = path.read_text(encoding="utf-8")
    assert Engine().check(text, str(path)).findings == []
    assert run_program(text, str(path)).clean


@pytest.mark.parametrize("draw", ["random.sample(buffer, 4)", "random.choices(buffer, k=4)", "[random.choice(buffer)]"])
def test_every_draw_keeps_the_stored_graphs(draw):
    text = (PROGRAMS / "bad_log_probs_sampled.py").read_text(encoding="utf-8")
    text = text.replace("random.sample(buffer, batch_size)", draw)
    assert draw in text
    assert [f.code for f in Engine().check(text, "draw.py").findings] == ["GG404"]
    # choice/choices may draw an entry the first update did not use; under seed 0 each one repeats an entry
    result = run_program(text, "draw.py")
    assert result.error_type == "RuntimeError" and "backward through the graph a second time" in result.error
