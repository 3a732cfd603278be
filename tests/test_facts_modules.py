"""Facts of the module model (facts/modules.py) that were wrong: a container of more than 16 modules, and a layer
called on a value the analysis knows nothing of. Each program also runs under torch."""
from __future__ import annotations

import textwrap

from test_hover_facts_runtime import claims
from torch_exec import run_program

from gradguard.engine import Engine


def _codes(text: str) -> list[str]:
    return sorted(f.code for f in Engine(editor=False).check(text, "model.py").findings)


def _layer_list(n: int) -> str:
    layers = ", ".join(["nn.Linear(4, 4)"] * n)
    return textwrap.dedent(f"""\
        import torch
        import torch.nn as nn

        layers = nn.ModuleList([{layers}])
        opt = torch.optim.SGD(layers[1].parameters(), lr=0.1)
        x = torch.randn(2, 4)
        for layer in layers:
            x = layer(x)
        x.sum().backward()
        y = torch.randn(2, 4)
        for layer in layers:
            y = layer(y)
        opt.step()
        y.sum().backward()
        """)


def test_a_module_list_of_seventeen_layers_keeps_its_children():
    """Layer 1's weights are saved by the second forward (its input requires grad); the step writes them. Before, a
    list of more than 16 modules (the loop unroll bound) left the container without children, and this was missed."""
    program = _layer_list(17)
    assert "modified by an inplace operation" in run_program(program).error
    assert _codes(program) == ["GG401"]


def test_a_module_list_of_sixteen_layers_is_found_as_before():
    program = _layer_list(16)
    assert "modified by an inplace operation" in run_program(program).error
    assert _codes(program) == ["GG401"]


CRITERION_IN_A_FUNCTION = """\
import torch
import torch.nn as nn


def train(model, x, y):
    criterion = nn.CrossEntropyLoss()
    logits = model(x)
    loss = criterion(logits, y)
    loss.backward()
    return loss.requires_grad, loss.is_leaf


print(train(nn.Linear(4, 3), torch.randn(2, 4), torch.tensor([0, 1])))
"""


def test_a_loss_of_a_model_passed_in_claims_nothing_rather_than_no_graph():
    """`model` is a parameter: `logits` is unknown, so `criterion(logits, y)` may require grad (here it does). It was
    shown as requires_grad=False, is_leaf=True."""
    assert run_program(CRITERION_IN_A_FUNCTION).stdout.strip() == "(True, False)"
    uncalled = CRITERION_IN_A_FUNCTION.rsplit("\n\n\nprint(", 1)[0] + "\n"
    assert claims(uncalled, "loss")[:2] == [(8, None, None), (9, None, None)]
    # called with a model of its own, the call's values decide: what torch has
    assert claims(CRITERION_IN_A_FUNCTION, "loss")[:2] == [(8, True, False), (9, True, False)]


def test_a_loss_of_a_model_built_in_the_function_requires_grad():
    program = CRITERION_IN_A_FUNCTION.replace("def train(model, x, y):\n",
                                              "def train(x, y):\n    model = nn.Linear(4, 3)\n").replace(
        "train(nn.Linear(4, 3), ", "train(")
    assert run_program(program).stdout.strip() == "(True, False)"
    assert claims(program, "loss")[:2] == [(9, True, False), (10, True, False)]


EVAL_IN_ANOTHER_METHOD = """\
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.Sigmoid()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


class Trainer:
    def __init__(self):
        self.encoder = Encoder()
        self.head = nn.Linear(8, 2)
        self.opt = torch.optim.SGD([*self.encoder.parameters(), *self.head.parameters()], lr=0.1)

    def validate(self, x):
        self.encoder.eval()
        x = x.clone().add_(1.0)
        with torch.no_grad():
            return self.head(self.encoder(x)).mean()

    def step(self, x):
        feats = self.encoder(x)
        feats += 0.5
        loss = self.head(feats).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


trainer = Trainer()
trainer.step(torch.randn(4, 8))
trainer.validate(torch.randn(4, 8))
"""


def test_eval_in_one_method_does_not_reach_another_methods_run():
    """Each method runs on its own on the class's abstract instance, restored before each reuse: `validate`'s
    `self.encoder.eval()` must not leave `step`'s dropout passing the sigmoid's output through (it did, and
    `feats += 0.5` was reported although the step runs in training mode, where dropout returns a new tensor)."""
    assert run_program(EVAL_IN_ANOTHER_METHOD).clean
    assert _codes(EVAL_IN_ANOTHER_METHOD) == []


def test_eval_before_the_step_makes_dropout_pass_its_input_through():
    program = EVAL_IN_ANOTHER_METHOD.replace("trainer.step(torch.randn(4, 8))\ntrainer.validate(torch.randn(4, 8))\n",
                                             "trainer.validate(torch.randn(4, 8))\ntrainer.step(torch.randn(4, 8))\n")
    assert "output 0 of Sigmoid" in run_program(program).error
    assert _codes(program) == ["GG201"]
