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
                           "GG201": {"detected": 1, "fix": 1, "clean": 1, "trains": 1},
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


def _notebook(cells: list[str]) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": c,
                                  "execution_count": None, "outputs": []} for i, c in enumerate(cells)],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})


SETUP = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\nx = torch.randn(32, 3)\ny = x.sum(1, keepdim=True)\n"
         "model = nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)")
FORWARD = "pred = model(x)\nloss = (pred - y).pow(2).mean()"
DESCENT = "for step in range(5):\n    opt.zero_grad()\n    loss.backward()\n    opt.step()"
HAND = ("for step in range(5):\n    pred = model(x)\n    loss = (pred - y).pow(2).mean()\n    opt.zero_grad()\n"
        "    loss.backward()\n    opt.step()")


def test_a_notebook_forward_in_one_cell_and_descent_in_a_later_cell_is_fixed_in_the_loop_s_cell(tmp_path):
    """The forward runs once in cell 2; cell 3's loop only calls backward(). The fix copies the forward into the
    loop (an edit may not span two cells), and the fixed notebook, run cell by cell, trains like the hand fix."""
    sys.path.insert(0, str(CORPUS))
    import fixcheck

    nb = tmp_path / "descent.ipynb"
    nb.write_text(_notebook([SETUP, FORWARD, DESCENT]))
    [f] = check_text("\n".join([SETUP, FORWARD, DESCENT]) + "\n", str(nb)).findings
    assert f.fix.message == ("Copy lines 8, 9 into the loop on line 10 (unsafe: every iteration runs that forward "
                             "again, from the current weights)")
    done = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--fix", "--unsafe-fixes", str(nb)],
                          capture_output=True, text=True, timeout=300)
    assert "Fixed 1 problem(s)" in done.stdout, done.stdout + done.stderr
    cells = ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"]]
    assert cells == [SETUP, FORWARD, HAND]
    fixed, hand = tmp_path / "fixed.py", tmp_path / "hand.py"
    fixed.write_text("\n".join(cells) + "\n")
    hand.write_text("\n".join([SETUP, HAND]) + "\n")
    runs = fixcheck.run_traced([fixed, hand], timeout=120)
    assert runs[str(fixed)].clean and runs[str(hand)].clean
    assert fixcheck.compare(runs[str(fixed)], runs[str(hand)], "same") is None


def test_a_queue_enqueued_in_forward_is_named_and_read_through_a_copy():
    path = CORPUS / "bugs" / "saved_gh_moco_queue_01.py"
    [f] = check_text(path.read_text(), str(path)).findings
    assert f.message == ("`self.queue` was saved for backward by `@` on line 19; this in-place `[]=` changes it, so "
                         "`backward()` on line 35 will fail.")
    assert (f.fix.applicability, f.fix.message) == ("safe", "Let `@` save a copy: `self.queue.clone()`")
