"""Every sentence of the hover explanations (gradguard/lsp/explanations.py) is executed
here under torch: each Claim names one of the checks below, and a claim without a
passing check fails the suite. Run on torch 2.13 CPU."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import torch  # installed by the Makefile (torch==2.13.0, CPU): a missing torch must fail, not skip

from gradguard.lsp.explanations import TOPICS  # noqa: E402

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def leaf(n=3):
    return torch.rand(n, requires_grad=True)


def raises(fn, text: str) -> bool:
    try:
        fn()
    except RuntimeError as exc:
        return text in str(exc)
    return False


# ---- detach / clone / .data -------------------------------------------------------------


@check
def detach_shares_storage():
    y = leaf() * 2
    d = y.detach()
    d.add_(1)
    assert d.data_ptr() == y.data_ptr() and torch.equal(d, y)


@check
def detach_shares_version_counter():
    w = leaf()
    y = w.exp()
    y.detach().mul_(0)
    assert y._version == 1
    assert raises(lambda: y.sum().backward(), "modified by an inplace operation")


@check
def detach_is_leaf_without_grad():
    d = (leaf() * 2).detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None


@check
def clone_new_storage_and_counter():
    y = leaf() * 2
    y.add_(1)
    c = y.clone()
    assert c.data_ptr() != y.data_ptr() and c._version == 0 and y._version == 1


@check
def clone_stays_in_graph():
    w = leaf()
    y = w * 2
    c = y.clone()
    assert type(c.grad_fn).__name__ == "CloneBackward0"
    c.add_(1)
    assert y._version == 0
    c.sum().backward()
    assert torch.equal(w.grad, torch.full((3,), 2.0))


@check
def detach_clone_snapshot():
    y = leaf() * 2
    s = y.detach().clone()
    assert s.is_leaf and not s.requires_grad and s.grad_fn is None and s.data_ptr() != y.data_ptr()


@check
def data_shares_storage_not_counter():
    y = leaf() * 2
    before = y.clone()
    y.data.add_(1)
    assert y._version == 0 and torch.equal(y, before + 1)


@check
def data_silent_wrong_gradient():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    e = w.exp()
    e.data.mul_(0)
    e.sum().backward()  # no error
    assert torch.equal(w.grad, torch.zeros(2))  # the true gradient is exp(w)


@check
def no_grad_inplace_bumps_version():
    w = leaf()
    with torch.no_grad():
        w.mul_(2)
    assert w._version == 1 and w.is_leaf and w.requires_grad and w.grad_fn is None


# ---- requires_grad / is_leaf / grad_fn -----------------------------------------------------


@check
def requires_grad_leaf_gets_grad():
    w = leaf()
    assert w.is_leaf
    (w * 2).sum().backward()
    assert w.grad is not None


@check
def requires_grad_float_only():
    assert raises(lambda: torch.arange(3).requires_grad_(), "only Tensors of floating point")
    assert torch.zeros(2, dtype=torch.complex64).requires_grad_().requires_grad
    assert torch.zeros(2, dtype=torch.float16).requires_grad_().requires_grad


@check
def requires_grad_only_on_leaves():
    assert raises(
        lambda: (leaf() * 2).requires_grad_(False), "you can only change requires_grad flags of leaf variables"
    )
    t = torch.rand(3)
    t.requires_grad_()
    assert t._version == 0


@check
def leaf_inplace_raises():
    w = leaf()

    def write():
        w.add_(1)

    assert raises(write, "a leaf Variable that requires grad is being used in an in-place operation.")


@check
def is_leaf_cases():
    p = torch.nn.Parameter(torch.rand(2))
    with torch.no_grad():
        q = leaf() * 2
    assert leaf().is_leaf and torch.rand(2).is_leaf and p.is_leaf
    assert (leaf() * 2).detach().is_leaf and q.is_leaf


@check
def non_leaf_grad_none():
    w = leaf()
    y = w * 2
    z = w * 3
    z.retain_grad()
    assert not y.is_leaf and y.grad_fn is not None
    (y.sum() + z.sum()).backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert y.grad is None
    assert z.grad is not None


@check
def only_grad_leaves_get_grad():
    w = leaf()
    c = torch.rand(3)  # a leaf that does not require grad
    (w * c).sum().backward()
    assert w.grad is not None and c.grad is None
    leaf_inplace_raises()


@check
def grad_fn_none_for_leaves():
    assert leaf().grad_fn is None and (leaf() * 2).grad_fn is not None


@check
def grad_fn_rebased_by_inplace():
    y = leaf() * 2
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.add_(1)
    assert type(y.grad_fn).__name__ == "AddBackward0"
    y[0] = 0
    assert type(y.grad_fn).__name__ == "CopySlices"


# ---- retain_graph ---------------------------------------------------------------------------


@check
def second_backward_raises():
    w = leaf()
    loss = w.sin().sum()
    loss.backward()
    assert raises(loss.backward, "Trying to backward through the graph a second time")
    loss2 = w.sin().sum()
    loss2.backward(retain_graph=True)
    loss2.backward()  # kept: works


@check
def retain_graph_step_raises():
    def second_backward_after_step(layers: int) -> bool:
        torch.manual_seed(0)
        net = torch.nn.Sequential(*[torch.nn.Linear(2, 2) for _ in range(layers)])
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        loss = net(torch.rand(1, 2)).sum()
        loss.backward(retain_graph=True)
        opt.step()
        return raises(loss.backward, "modified by an inplace operation")

    # The second layer's input requires grad, so its weight is saved: the step breaks backward.
    assert second_backward_after_step(2)
    # A single layer on a plain input saves no weight: nothing to break.
    assert not second_backward_after_step(1)


@check
def carried_state_detach_works():
    torch.manual_seed(0)
    rnn = torch.nn.RNN(2, 3)
    x = torch.rand(4, 1, 1, 2)

    def run(detach: bool):
        h = torch.zeros(1, 1, 3)
        for i in range(4):
            out, h_next = rnn(x[i], h)
            out.sum().backward()
            h = h_next.detach() if detach else h_next

    assert raises(lambda: run(False), "Trying to backward through the graph a second time")
    run(True)


# ---- no_grad / inference_mode / anomaly ----------------------------------------------------


@check
def no_grad_not_recorded():
    with torch.no_grad():
        y = leaf() * 2
    assert not y.requires_grad and y.grad_fn is None


@check
def inference_tensor_restrictions():
    with torch.inference_mode():
        t = torch.rand(3)
    assert t.is_inference()

    def write():
        t.add_(1)

    assert raises(write, "Inplace update to inference tensor outside InferenceMode is not allowed")
    assert raises(lambda: leaf() * t, "Inference tensors cannot be saved for backward")


@check
def inference_clone_is_normal():
    with torch.inference_mode():
        t = torch.rand(3)
    c = t.clone()
    assert not c.is_inference()
    c.add_(1)
    (leaf() * c).sum().backward()


ANOMALY_PROGRAM = textwrap.dedent(
    """
    import torch
    torch.autograd.set_detect_anomaly(True)
    w = torch.rand(3, requires_grad=True)
    y = w * 2
    z = y.sin()  # FORWARD-LINE
    y.add_(1)  # WRITE-LINE
    z.sum().backward()
    """
)


def _anomaly_stderr(tmp_dir) -> str:
    script = tmp_dir / "anomaly.py"
    script.write_text(ANOMALY_PROGRAM)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    return run.stderr


@check
def anomaly_shows_forward_line(tmp_path):
    err = _anomaly_stderr(tmp_path)
    assert "Error detected in SinBackward0" in err and "# FORWARD-LINE" in err


@check
def anomaly_hides_write_line(tmp_path):
    err = _anomaly_stderr(tmp_path)
    assert "modified by an inplace operation" in err and "# WRITE-LINE" not in err


# ---- version counter / in-place methods ----------------------------------------------------


@check
def version_counts_writes():
    t = torch.zeros(3)
    t.add_(1)
    t += 1
    t[0] = 5
    torch.sin(torch.rand(3), out=t)
    assert t._version == 4


@check
def views_share_counter():
    x = torch.zeros(4)
    v = x.view(2, 2)
    d = x.detach()
    v.add_(1)
    assert x._version == v._version == d._version == 1
    d.add_(1)
    assert x._version == 2


@check
def saved_version_mismatch_raises():
    w = leaf()
    y = w * 2
    z = y.sin()  # saves y at version 0
    y.add_(1)
    y.add_(1)
    assert raises(
        lambda: z.sum().backward(),
        "one of the variables needed for gradient computation has been modified by an inplace operation",
    )
    assert raises(lambda: z.sum().backward(), "is at version 2; expected version 0 instead")


@check
def inplace_method_bumps_version():
    t = torch.zeros(3)
    storage = t.data_ptr()
    t.add_(1).mul_(2).clamp_(0, 1)
    assert t._version == 3 and t.data_ptr() == storage


@check
def inplace_method_errors():
    leaf_inplace_raises()
    w = leaf()
    with torch.no_grad():
        w.add_(1)  # allowed inside no_grad
    y = w * 2
    s = y.sin()  # saves y
    y[:2].mul_(2)  # an in-place write through a view of the saved tensor
    assert raises(lambda: s.sum().backward(), "modified by an inplace operation")


@check
def out_of_place_keeps_saved():
    w = leaf()
    y = w * 2
    z = y.sin()
    y = y.add(1)
    z.sum().backward()
    assert w.grad is not None


# ---- the tests -----------------------------------------------------------------------------

ALL_CLAIMS = [(topic.key, claim) for topic in TOPICS.values() for claim in topic.claims]


def test_every_claim_names_a_check():
    missing = sorted({c.check for _, c in ALL_CLAIMS} - set(CHECKS))
    assert not missing, f"claims without a check: {missing}"


def test_every_claim_has_both_languages():
    for key, claim in ALL_CLAIMS:
        assert claim.en.strip() and claim.zh.strip(), key
        assert any("\u4e00" <= ch <= "\u9fff" for ch in claim.zh), f"{key}: zh text has no Chinese"


@pytest.mark.parametrize("name", sorted({c.check for _, c in ALL_CLAIMS}))
def test_claim_holds_under_torch(name: str, tmp_path):
    fn = CHECKS[name]
    if fn.__code__.co_argcount:
        fn(tmp_path)
    else:
        fn()
