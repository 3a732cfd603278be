"""`model.named_parameters()` as torch names them (facts/modules.py `named_parameters`): a loop that filters on the
name (`if "bias" not in name`, `name.endswith("weight")`, `name == "fc.weight"`) writes exactly the parameters
torch's loop would. The names are taken from torch itself: for each weight, a program writes only the parameter of
that name through `.data` between the forward and the backward, and gradguard must report it (GG501: the layer
saved its weight); a name torch does not have must match nothing. Each program also runs under torch, and GG501
is expected exactly where the write changes a gradient."""
from __future__ import annotations

import textwrap

import pytest
import torch

from gradguard.engine import Engine

MODELS = {
    "sequential": "nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))",
    "class": "Net()",
}

CLASSES = textwrap.dedent("""\
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(4)
            self.proj = nn.Linear(4, 4, bias=False)

        def forward(self, x):
            return self.proj(self.norm(x))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(4))
            self.stem = nn.Linear(4, 4)
            self.blocks = nn.Sequential(Block(), Block())
            self.head = nn.Linear(4, 4)

        def forward(self, x):
            return self.head(self.blocks(self.stem(x) * self.scale))
    """)


def _program(model: str, test: str) -> str:
    return textwrap.dedent(f"""\
        import torch
        import torch.nn as nn

        """) + CLASSES + textwrap.dedent(f"""

        torch.manual_seed(0)
        model = {model}
        x = torch.randn(3, 4, requires_grad=True)
        loss = model(x).pow(2).sum()
        for name, param in model.named_parameters():
            if {test}:
                param.data.mul_(0.5)
        loss.backward()
        """)


def _torch_names(model: str) -> list[str]:
    namespace = {"torch": torch, "nn": torch.nn}
    exec(CLASSES, namespace)
    return [name for name, _ in eval(model, namespace).named_parameters()]


def _codes(text: str) -> list[str]:
    """gradguard's codes for the program, after checking torch agrees: GG501 exactly when the write changes a
    gradient (the same program without the write is the reference)."""
    codes = [f.code for f in Engine(editor=False).check(text, "train.py").findings]
    assert (codes == ["GG501"]) == (_grads(text) != _grads(text.replace("param.data.mul_(0.5)", "pass")))
    return codes


def _grads(text: str) -> list:
    namespace: dict = {}
    exec(compile(text, "train.py", "exec"), namespace)
    tensors = [namespace["x"], *namespace["model"].parameters()]
    return [t.grad.tolist() if t.grad is not None else None for t in tensors]


@pytest.mark.parametrize("model", ["sequential", "class"])
def test_each_weight_torch_names_is_the_one_the_loop_writes(model):
    names = _torch_names(MODELS[model])
    weights = [n for n in names if n.endswith("weight") and "norm" not in n]
    assert weights
    for name in weights:
        assert _codes(_program(MODELS[model], f"name == {name!r}")) == ["GG501"], name


@pytest.mark.parametrize("model", ["sequential", "class"])
def test_a_name_torch_does_not_have_matches_nothing(model):
    assert "proj.bias" not in _torch_names(MODELS[model])  # bias=False registers no bias
    for name in ("weight", "0.weight.x", "blocks.0.proj.bias", "stem"):
        assert name not in _torch_names(MODELS[model])
        assert _codes(_program(MODELS[model], f"name == {name!r}")) == [], name


def test_biases_only_is_silent_and_weights_only_is_reported():
    model = MODELS["class"]
    assert _codes(_program(model, '"bias" in name')) == []
    assert _codes(_program(model, 'name.endswith(("bias",))')) == []
    assert _codes(_program(model, 'name.endswith("norm.weight")')) == ["GG501"]  # LayerNorm reads its weight
    assert _codes(_program(model, 'name == "scale"')) == ["GG501"]  # `* self.scale` saved it
    assert _codes(_program(model, '"bias" not in name and "norm" not in name')) == ["GG501"]
    assert _codes(_program(model, "param.dim() > 1")) == ["GG501"]
    assert _codes(_program(model, "param.ndim == 1")) == ["GG501"]  # the scale and the LayerNorm weights
    assert _codes(_program(MODELS["sequential"], "param.ndim == 1")) == []  # the biases
    assert _codes(_program(MODELS["sequential"], "param.dim() == 2")) == ["GG501"]




@pytest.mark.parametrize("test,expected", [("param.dim() > 1", ["GG501"]), ("param.dim() == 1", [])])
def test_a_parameters_loop_visits_each_parameter_when_torch_names_are_known(test, expected):
    """`for p in model.parameters(): if p.dim() > 1:` (weight-only constraints): each parameter on its own."""
    program = _program(MODELS["sequential"], test).replace(
        "for name, param in model.named_parameters():", "for param in model.parameters():")
    assert "model.parameters()" in program
    assert _codes(program) == expected


LAYERS = [
    ("Linear", (4, 3), {}), ("Linear", (4, 3, False), {}), ("Linear", (4, 3), {"bias": False}),
    ("Conv1d", (2, 3, 3), {}), ("Conv2d", (2, 3, 3, 1, 0, 1, 1, False), {}), ("Conv3d", (2, 3, 3), {"bias": False}),
    ("ConvTranspose1d", (2, 3, 3), {}), ("ConvTranspose2d", (2, 3, 3, 1, 0, 0, 1, False), {}),
    ("ConvTranspose3d", (2, 3, 3), {}),
    ("BatchNorm1d", (4,), {}), ("BatchNorm2d", (4, 1e-5, 0.1, False), {}), ("BatchNorm3d", (4,), {"affine": False}),
    ("GroupNorm", (2, 4), {}), ("GroupNorm", (2, 4, 1e-5, False), {}),
    ("LayerNorm", (4,), {}), ("LayerNorm", (4, 1e-5, False), {}), ("LayerNorm", (4,), {"bias": False}),
    ("LayerNorm", (4, 1e-5, True, False), {}),
    ("LayerNorm", ((2, 4),), {}), ("Embedding", (10, 4), {}),
    ("GRU", (4, 8), {"batch_first": True}), ("LSTM", (4, 8, 2), {}), ("RNN", (4, 8, 1, "relu", False), {}),
    ("GRU", (4, 8, 1, True, True, 0.0, True), {}), ("LSTM", (4, 8, 2, False, False, 0.0, True), {}),
    ("GRU", (4, 8), {"num_layers": 2, "bidirectional": True}), ("LSTM", (4, 8), {"bias": False, "num_layers": 3}),
]


@pytest.mark.parametrize("kind,args,kwargs", LAYERS, ids=[f"{k}{a}{w}" for k, a, w in LAYERS])
def test_the_layer_table_registers_what_torch_registers(kind, args, kwargs):
    """facts/modules.py LAYER_PARAMS against torch 2.13: which parameters, in which order, with how many dimensions
    (None where the analysis does not claim it: a LayerNorm over a tuple shape)."""
    from gradguard.facts.model import Literal
    from gradguard.facts.modules import layer_param_attrs

    layer = getattr(torch.nn, kind)(*args, **kwargs)
    expected = [(name, p.dim()) for name, p in layer.named_parameters()]
    to_value = lambda v: Literal(v) if not isinstance(v, tuple) else None  # noqa: E731 (a tuple shape: unknown)
    claimed = layer_param_attrs(f"torch.nn.{kind}", [to_value(a) for a in args],
                                {k: (to_value(v),) for k, v in kwargs.items()})
    assert claimed is not None
    assert [name for name, _ in claimed] == [name for name, _ in expected]
    for (_, ndim), (_, real) in zip(claimed, expected):
        assert ndim in (None, real)
    if kind != "LayerNorm" or not isinstance(args[0], tuple):
        assert [ndim for _, ndim in claimed] == [real for _, real in expected]
