"""Claims in rule docs that no example program shows on its own, executed under torch."""
from __future__ import annotations

import pytest
import torch

from gradguard.rules import get_rule


def _versions_after_one_step(make_opt):
    layer = torch.nn.Linear(2, 2)
    opt = make_opt(layer.parameters())
    layer(torch.randn(3, 2)).sum().backward()
    before = layer.weight._version
    opt.step()
    return layer.weight._version - before


def test_gg401_each_step_bumps_the_version_sgd_and_adam_by_one_adamw_by_two():
    doc = get_rule("GG401").autograd["en"]
    assert "SGD/Adam by 1, AdamW by 2" in doc
    assert _versions_after_one_step(lambda p: torch.optim.SGD(p, lr=0.1)) == 1
    assert _versions_after_one_step(lambda p: torch.optim.Adam(p)) == 1
    assert _versions_after_one_step(lambda p: torch.optim.AdamW(p)) == 2


def test_gg401_a_step_after_zero_grad_without_backward_modifies_nothing():
    layer = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    opt.zero_grad()
    before = layer.weight._version
    opt.step()
    assert layer.weight._version == before


def _retained_graph_then_step(**opt_kwargs):
    torch.manual_seed(0)
    layer = torch.nn.Linear(1, 1)
    x = torch.ones(1, 1, requires_grad=True)
    out = layer(x).sum()
    out.backward(retain_graph=True)
    torch.optim.SGD(layer.parameters(), lr=1.0, **opt_kwargs).step()
    x.grad = None
    out.backward()  # needs the weight as it was at forward time
    return x.grad


@pytest.mark.parametrize("foreach", [False, True])
def test_gg502_foreach_steps_raise_the_version_error(foreach):
    assert "`foreach=False` or `foreach=True` the same program raises" in get_rule("GG502").autograd["en"]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _retained_graph_then_step(foreach=foreach)


def test_gg502_fused_steps_are_silent_and_use_the_new_weights():
    torch.manual_seed(0)
    forward_time_weight = torch.nn.Linear(1, 1).weight.detach().clone()
    grad = _retained_graph_then_step(fused=True)
    assert not torch.allclose(grad, forward_time_weight)  # no error, and not the forward-time gradient


def test_gg104_arange_out_of_a_parameter_under_no_grad_clears_requires_grad_copy_keeps_it():
    doc = get_rule("GG104").fix_safety["en"]
    assert "`arange(out=p)` there silently sets `p.requires_grad` to `False`" in doc
    p = torch.nn.Parameter(torch.zeros(4))
    with pytest.raises(RuntimeError, match=r"^aten::arange\(\): functions with out=\.\.\. arguments"):
        torch.arange(1, 5, out=p)
    with torch.no_grad():
        torch.arange(1, 5, out=p)
    assert p.requires_grad is False
    q = torch.nn.Parameter(torch.zeros(4))
    with torch.no_grad():
        q.copy_(torch.arange(1, 5))
    assert q.requires_grad is True and q.is_leaf and q.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_gg109_direct_forward_runs_no_hook_and_no_grad_wraps_nothing():
    doc = get_rule("GG109").autograd["en"]
    assert "`module.forward(x)` called directly runs no hooks" in doc and "under `torch.no_grad()` nothing is wrapped" in doc
    layer = torch.nn.Linear(3, 3)
    layer.register_full_backward_hook(lambda module, grad_in, grad_out: None)
    direct = layer.forward(torch.randn(2, 3))
    direct.relu_()  # an ordinary non-leaf: allowed
    assert type(direct.grad_fn).__name__ == "ReluBackward0"
    with torch.no_grad():
        layer(torch.randn(2, 3)).relu_()
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        layer(torch.randn(2, 3)).relu_()
