"""Issue 31's shapes, reduced into tests/real_world (batch r31), repaired by gradguard's fix and trained beside
the hand fix by `make fixcheck`'s own script (each fix applied with `--fix --unsafe-fixes`, run under the same
seeds, compared on every backward() value and the gradients after the first)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gradguard.engine import check_text

CORPUS = Path(__file__).parent / "real_world"
SCRIPT = CORPUS / "fixcheck.py"


def test_every_r31_shape_gets_a_fix_that_trains_like_the_hand_fix():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--batch", "r31", "--json"], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["rows"] == {"GG101": {"detected": 1, "fix": 1, "clean": 1, "trains": 1},
                           "GG403": {"detected": 1, "fix": 1, "clean": 1, "trains": 1},
                           "GG404": {"detected": 1, "fix": 1, "clean": 1, "trains": 1}}


def test_reinforce_module_level_lists_are_cleared_together():
    path = CORPUS / "bugs" / "bt_gh_examples_reinforce_01.py"
    [f] = check_text(path.read_text(), str(path)).findings
    assert (f.code, f.span.start_line + 1) == ("GG404", 16)
    assert f.fix.message == ("Add `del log_probs[:]; del rewards[:]` after this backward (unsafe: later backwards no "
                             "longer reach earlier episodes' entries)")
    [edit] = f.fix.edits
    assert edit.new_text == "\n    del log_probs[:]\n    del rewards[:]"
