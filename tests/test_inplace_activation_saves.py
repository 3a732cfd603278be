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
