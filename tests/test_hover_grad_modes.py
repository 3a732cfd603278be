"""Hover under `with torch.set_grad_enabled(flag):` in a function called for training and for evaluation (issue 31):
the facts depend on `flag`, and hover shows both arms, each what torch has there, never "made under no_grad" alone
for a tensor the training call back-propagates through."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gradguard.engine import check_text
from gradguard.lsp.documents import Piece, Snapshot
from gradguard.lsp.hover import tensor_markdown

sys.path.insert(0, str(Path(__file__).parent / "real_world"))
import facts_oracle  # noqa: E402

PROGRAM = """\
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def run(batches, train):
    with torch.set_grad_enabled(train):
        for x, y in batches:
            out = model(x)
            loss = (out - y).pow(2).mean()
            if train:
                opt.zero_grad()
                loss.backward()
                opt.step()


batches = [(torch.randn(4, 4), torch.randn(4, 1)) for _ in range(2)]
run(batches, {first})
run(batches, {second})
"""


def hover(source: str, line: int, name: str, lang: str = "en") -> str:
    report = check_text(source, "epoch.py", lang=lang)
    text = source.splitlines()[line - 1]
    facts = report.facts.tensor_at(line - 1, text.index(name))
    snap = Snapshot("u", source, "epoch.py", [Piece("u", 0, len(source.splitlines()), 1)])
    return tensor_markdown(facts, snap, lang)


@pytest.mark.parametrize("first, second", [("True", "False"), ("False", "True")])
def test_both_arms_are_shown_whichever_call_runs_last(first, second):
    text = hover(PROGRAM.format(first=first, second=second), 12, "loss")
    assert text.splitlines()[:4] == [
        "**`loss`** — tensor · requires_grad depends on `train`",
        "",
        "- with `train` true (grad enabled): non-leaf (in the graph) · `requires_grad=True`",
        "- with `train` false (`set_grad_enabled(False)`, no graph): leaf · `requires_grad=False`"]
    assert "- created on line 12 by `mean`" in text
    assert "no_grad" not in text.replace("set_grad_enabled", "")


def test_each_arm_is_what_torch_has_there(tmp_path):
    program = tmp_path / "epoch.py"
    program.write_text(PROGRAM.format(first="False", second="True"))
    seen = facts_oracle.observe([program], jobs=1)[program]
    runtime = sorted({tuple(state) for state in seen["bound:12"]["loss"]})
    assert runtime == [(False, True), (True, False)]  # (requires_grad, is_leaf): the evaluation call, the training one
    assert facts_oracle.contradictions(program, seen) == []


def test_the_arms_in_chinese():
    text = hover(PROGRAM.format(first="True", second="False"), 12, "loss", "zh")
    assert "requires_grad 取决于 `train`" in text
    assert "- `train` 为真（启用梯度）时：非叶子张量（在计算图中） · `requires_grad=True`" in text


def test_a_literal_mode_has_no_arms():
    source = PROGRAM.format(first="True", second="True").replace("set_grad_enabled(train)", "set_grad_enabled(True)")
    assert hover(source, 12, "loss").startswith("**`loss`** — tensor · non-leaf (in the graph) · `requires_grad=True`")
