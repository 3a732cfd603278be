"""Hover's creation site for a value a call returned is the caller's own line (issue 31): `d_fake = self.D(fake)` in
the training step, not a line inside `forward`; the line inside the callee comes second, as where it was made."""
from __future__ import annotations

from gradguard.engine import check_text
from gradguard.lsp.documents import Piece, Snapshot
from gradguard.lsp.hover import tensor_markdown

PROGRAM = """\
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(2, 4)

    def forward(self, x):
        h = self.body(x)
        return h.view(-1, 2)


G = nn.Linear(4, 2)
D = Critic()


def train_step(z):
    fake = G(z)
    d_fake = D(fake)
    return d_fake.sum()


train_step(torch.randn(3, 4)).backward()
"""


def created_line(line: int, name: str, lang: str = "en") -> str:
    report = check_text(PROGRAM, "gan.py", lang=lang)
    facts = report.facts.tensor_at(line - 1, PROGRAM.splitlines()[line - 1].index(name))
    snap = Snapshot("u", PROGRAM, "gan.py", [Piece("u", 0, len(PROGRAM.splitlines()), 1)])
    return next(row for row in tensor_markdown(facts, snap, lang).splitlines() if "created" in row or "创建" in row)


def test_a_value_a_call_returned_is_created_on_the_caller_s_line():
    assert created_line(21, "d_fake") == "- created on line 21 by `D(fake)` (returned; made on line 12 by a view)"
    assert created_line(22, "d_fake") == "- created on line 21 by `D(fake)` (returned; made on line 12 by a view)"


def test_inside_the_callee_the_value_is_where_the_callee_made_it():
    assert created_line(12, "h") == "- created on line 11 by `self.body(...)`"


def test_a_torch_layer_s_output_is_made_on_the_calling_line_itself():
    assert created_line(20, "fake") == "- created on line 20 by `G(...)`"


def test_in_chinese():
    assert created_line(21, "d_fake", "zh") == "- 创建于第 21 行，由 `D(fake)` 创建（返回值；在第 12 行，由视图创建）"
