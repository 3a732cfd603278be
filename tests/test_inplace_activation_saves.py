"""The Facts' list of in-place activations that save their result (facts/tensors.py INPLACE_SAVES_RESULT) is what
torch 2.13 does: writing the activation's result again in place makes backward fail, for exactly those."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from gradguard.facts.tensors import INPLACE_SAVES_RESULT, _activation_key

IN_PLACE_FORMS = {
    "relu": lambda y: F.relu(y, inplace=True),
    "leaky_relu": lambda y: F.leaky_relu(y, 0.2, inplace=True),
    "elu": lambda y: F.elu(y, inplace=True),
    "selu": lambda y: F.selu(y, inplace=True),
    "celu": lambda y: F.celu(y, inplace=True),
    "rrelu": lambda y: F.rrelu(y, training=False, inplace=True),
    "hardtanh": lambda y: F.hardtanh(y, inplace=True),
    "relu6": lambda y: F.relu6(y, inplace=True),
    "threshold": lambda y: F.threshold(y, 0.1, 0.0, inplace=True),
    "silu": lambda y: F.silu(y, inplace=True),
    "hardswish": lambda y: F.hardswish(y, inplace=True),
    "hardsigmoid": lambda y: F.hardsigmoid(y, inplace=True),
    "dropout": lambda y: F.dropout(y, 0.5, training=True, inplace=True),
}


def saves_its_result(activation) -> bool:
    x = torch.randn(8, requires_grad=True)
    y = x * 1
    activation(y)
    y.mul_(2)
    try:
        y.sum().backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return True
    return False


@pytest.mark.parametrize("name", sorted(IN_PLACE_FORMS))
def test_list_matches_torch(name):
    assert saves_its_result(IN_PLACE_FORMS[name]) == (_activation_key(name) in INPLACE_SAVES_RESULT)


def test_module_and_method_spellings_share_a_key():
    assert {_activation_key(n) for n in ("LeakyReLU(inplace=True)", "leaky_relu_", "torch.nn.functional.leaky_relu",
                                         "RReLU(inplace=True)")} == {"leakyrelu", "rrelu"}


def test_layers_with_parameters_their_forward_does_not_save():
    from gradguard.facts.modules import PARAMS_NOT_SAVED
    from gradguard.ops import load_op_table

    table = load_op_table()
    for qualified in PARAMS_NOT_SAVED:
        layer = eval(qualified)(10, 3)
        assert any(p.requires_grad for p in layer.parameters())
        assert table.by_name[qualified].params is False  # the op table: forward saves no weight
        out = layer(torch.tensor([1, 2]))
        with torch.no_grad():
            layer.weight.add_(1)  # a weight the forward saved would make this backward fail
        out.sum().backward()


LAYERS_WITH_BIAS = {
    "torch.nn.Linear": (lambda: torch.nn.Linear(4, 3), (2, 4)),
    "torch.nn.Bilinear": (lambda: torch.nn.Bilinear(4, 4, 3), (2, 4)),
    "torch.nn.Conv1d": (lambda: torch.nn.Conv1d(2, 3, 3), (1, 2, 8)),
    "torch.nn.Conv2d": (lambda: torch.nn.Conv2d(2, 3, 3), (1, 2, 6, 6)),
    "torch.nn.Conv3d": (lambda: torch.nn.Conv3d(2, 3, 3), (1, 2, 5, 5, 5)),
    "torch.nn.ConvTranspose1d": (lambda: torch.nn.ConvTranspose1d(2, 3, 3), (1, 2, 8)),
    "torch.nn.ConvTranspose2d": (lambda: torch.nn.ConvTranspose2d(2, 3, 3), (1, 2, 6, 6)),
    "torch.nn.ConvTranspose3d": (lambda: torch.nn.ConvTranspose3d(2, 3, 3), (1, 2, 4, 4, 4)),
    "torch.nn.BatchNorm1d": (lambda: torch.nn.BatchNorm1d(4), (5, 4)),
    "torch.nn.BatchNorm2d": (lambda: torch.nn.BatchNorm2d(2), (3, 2, 4, 4)),
    "torch.nn.BatchNorm3d": (lambda: torch.nn.BatchNorm3d(2), (3, 2, 3, 3, 3)),
    "torch.nn.GroupNorm": (lambda: torch.nn.GroupNorm(2, 4), (3, 4, 5)),
    "torch.nn.LayerNorm": (lambda: torch.nn.LayerNorm(4), (3, 4)),
}


@pytest.mark.parametrize("qualified", sorted(LAYERS_WITH_BIAS))
def test_layers_saving_their_weight_not_their_bias(qualified):
    """facts/modules.py SAVES_WEIGHT_NOT_BIAS: backward reads the weight's values and not the bias's, so a `.data`
    write on the bias between forward and backward changes no gradient (GG501 does not report it)."""
    from gradguard.facts.modules import SAVES_WEIGHT_NOT_BIAS

    assert set(LAYERS_WITH_BIAS) == set(SAVES_WEIGHT_NOT_BIAS)
    make, shape = LAYERS_WITH_BIAS[qualified]
    torch.manual_seed(0)
    layer = make()
    inputs = [torch.randn(shape, requires_grad=True) for _ in range(2 if "Bilinear" in qualified else 1)]
    saved = []

    def pack(t):
        saved.append(t.untyped_storage().data_ptr())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = layer(*inputs)
    assert layer.weight.untyped_storage().data_ptr() in saved
    # LayerNorm saves its bias too (an in-place write would fail the version check), but backward reads only
    # whether it is defined: its values, which a `.data` write changes, enter no gradient (checked below)
    assert (layer.bias.untyped_storage().data_ptr() in saved) == (qualified == "torch.nn.LayerNorm")
    weights = torch.linspace(0.3, 1.7, out.numel()).view_as(out)
    reference = torch.autograd.grad((layer(*inputs) * weights).pow(2).sum(), [*layer.parameters(), *inputs])
    loss = (layer(*inputs) * weights).pow(2).sum()
    layer.bias.data.mul_(3.0).add_(0.5)
    got = torch.autograd.grad(loss, [*layer.parameters(), *inputs])
    assert all(torch.allclose(a, b) for a, b in zip(reference, got))
