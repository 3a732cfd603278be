"""A long script's options are their defaults when it runs with no options (issue 29: long scripts): `args.dropout`
is the literal its `add_argument` gives, so `nn.Dropout(args.dropout)` with a default of 0 returns its input and
the in-place `h += 1.0` after it reaches the sigmoid's saved output. Each program runs under torch."""
from __future__ import annotations

import pytest

from gradguard.engine import Engine
from torch_exec import run_program

SCRIPT = '''import argparse

import torch
from torch import nn


def get_args():
    p = argparse.ArgumentParser()
    g = p.add_argument_group("model")
    g.add_argument("--dropout", type=float, default={dropout})
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--verbose", action="store_true")
    {extra}
    return p.parse_args([])


args = get_args()
torch.manual_seed(0)
fc = nn.Linear(8, 8)
drop = nn.Dropout(args.dropout)
opt = torch.optim.SGD(fc.parameters(), lr=0.1)
for epoch in range(args.epochs):
    h = drop(torch.sigmoid(fc(torch.randn(4, 8))))
    h += 1.0
    opt.zero_grad()
    h.sum().backward()
    opt.step()
'''


def codes(text: str) -> list[tuple[str, int]]:
    return [(f.code, f.span.start_line + 1) for f in Engine(editor=False).check(text, "train.py").findings]


@pytest.mark.parametrize("dropout, extra, raises", [
    ("0.0", "", True),  # the default: dropout returns the sigmoid's output itself
    ("0.1", "", False),  # a real dropout makes a new tensor
    ('"0.0"', "", True),  # a string default goes through type=float: 0.0
    ("{}", "", None),  # a computed default: not read (no claim)
    ("0.0", "p.set_defaults(dropout=0.5)", False),  # set_defaults wins over the argument's default
])
def test_options_are_their_defaults(dropout, extra, raises):
    text = SCRIPT.format(dropout=dropout if dropout != "{}" else "float(len(__name__) * 0)", extra=extra)
    result = run_program(text)
    found = codes(text)
    if raises is None:
        assert found == []
        return
    assert (not result.clean) == raises, result.error
    assert found == ([("GG201", 24)] if raises else [])


def test_an_option_assigned_later_is_not_its_default():
    text = SCRIPT.format(dropout="0.0", extra="").replace("args = get_args()\n", "args = get_args()\nargs.dropout = 0.2\n")
    assert run_program(text).clean and codes(text) == []
