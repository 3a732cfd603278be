"""GG503-GG505: gradient hooks, custom `autograd.Function` forward and backward writing tensors in place.

Static behaviour on small programs (what is reported, what stays silent, the fix text), then the claims the
rules' docs make, executed under torch.
"""
from __future__ import annotations

import textwrap

import pytest
import torch
from torch import nn

from gradguard.checking import check_one
from gradguard.config import Config
from gradguard.engine import Engine
from gradguard.rules import get_rule

ENGINE = Engine()
CODES = ("GG503", "GG504", "GG505")


def found(code: str) -> list[tuple[str, int]]:
    report = ENGINE.check(textwrap.dedent(code) + SHARED_USE, "t.py")
    return [(f.code, f.span.start_line + 1) for f in report.findings if f.code in CODES]


def fixed(code: str) -> str:
    text = textwrap.dedent(code) + SHARED_USE
    return check_one("t.py", text, Config(), "en", "unsafe", 10**7).fixed_text


# appended to every program: `h` feeds an addition, so its gradient is the other operand's too
SHARED_USE = "out = x * 1 + h\n"
PRELUDE = """\
import functools
import torch
from torch import nn
x = torch.ones(2, requires_grad=True)
h = x * 3
"""


# ---------------------------------------------------------------- GG503: which hooks
@pytest.mark.parametrize("hook,line", [
    ("h.register_hook(lambda g: g.mul_(0.5))", 6),
    ("h.register_hook(lambda g: g.clamp_(-1, 1).mul_(2))", 6),
    ("d = 1\nh.register_hook(lambda g: torch.clamp(g, -1, 1, out=g))", 7),
    ("h.register_hook(lambda g: g.detach().zero_())", 6),
    ("h.register_hook(lambda g: g.data.mul_(2))", 6),
    ("h.register_hook(lambda g: g[0].mul_(2))", 6),
    ("h.register_hook(lambda g: torch.nn.functional.relu(g, inplace=True))", 6),
])
def test_gg503_lambda_tensor_hooks_writing_their_gradient(hook, line):
    assert found(PRELUDE + hook + "\n") == [("GG503", line)]


@pytest.mark.parametrize("hook", [
    "h.register_hook(lambda g: g * 0.5)",
    "h.register_hook(lambda g: g.clone().mul_(0.5))",
    "h.register_hook(lambda g: g[torch.tensor([0])].mul_(2))",  # advanced indexing copies
    "acc = torch.zeros(2)\nh.register_hook(lambda g: acc.add_(g))",  # writes another tensor
    "buf = torch.zeros(2)\nh.register_hook(lambda g: buf.resize_as_(g))",
    "x.register_post_accumulate_grad_hook(lambda p: None)",
])
def test_gg503_hooks_that_leave_their_gradient_alone_are_silent(hook):
    assert found(PRELUDE + hook + "\n") == []


def test_gg503_def_hook_followed_through_aliases_and_rebinding():
    code = PRELUDE + """\
def alias(grad):
    view = grad.view(-1)
    view[0] = 0
def rebound(grad):
    grad = grad * 2
    grad.mul_(3)
    return grad
def augmented(grad):
    grad *= 2
    return grad
h.register_hook(alias)
h.register_hook(rebound)
h.register_hook(augmented)
"""
    assert found(code) == [("GG503", 8), ("GG503", 14)]


def test_gg503_partial_and_bound_method_hooks():
    code = PRELUDE + """\
def scaled(scale, grad):
    grad.mul_(scale)
h.register_hook(functools.partial(scaled, 2.0))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
        self.w.register_hook(self._clip)

    def _clip(self, grad):
        grad.clamp_(-1, 1)

    def forward(self, x):
        return x + self.w
"""
    assert found(code) == [("GG503", 7), ("GG503", 17)]


def test_gg503_module_hooks_grad_output_flagged_grad_input_not():
    code = PRELUDE + """\
lin = nn.Linear(2, 2)
def full(module, grad_input, grad_output):
    grad_input[0].mul_(2)
    for g in grad_output:
        g.mul_(2)
def pre(module, grad_output):
    g, = grad_output
    g.zero_()
lin.register_full_backward_hook(full)
lin.register_full_backward_pre_hook(pre)
y = x + lin(x)
"""
    assert found(code) == [("GG503", 10), ("GG503", 13)]


def test_gg503_node_and_multi_grad_hooks():
    code = PRELUDE + """\
def post(grad_inputs, grad_outputs):
    grad_inputs[0].mul_(2)
    grad_outputs[0].mul_(2)
def prehook(grad_outputs):
    grad_outputs[0].mul_(2)
def many(grads):
    grads[0].zero_()
h.grad_fn.register_hook(post)
h.grad_fn.register_prehook(prehook)
torch.autograd.graph.register_multi_grad_hook((h,), many)
"""
    assert found(code) == [("GG503", 8), ("GG503", 10), ("GG503", 12)]


def test_gg503_a_hook_object_of_another_library_is_not_a_gradient_hook():
    code = PRELUDE + """\
class LoggerHook:
    def after_iter(self, runner):
        runner.buffer.mul_(0)
runner = object()
runner.register_hook(LoggerHook())
def star(*args):
    args[0].mul_(2)
h.register_hook(star)
"""
    assert found(code) == []


def test_gg503_custom_backward_writing_grad_output():
    code = """\
import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, grad_output):
        grad_output.mul_(2)
        return grad_output
class Fine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bank):
        ctx.bank = bank
        return x * 2
    @staticmethod
    def backward(ctx, grad_output):
        ctx.bank.add_(grad_output)
        buf = grad_output.new_zeros(2)
        torch.pow(buf, 2, out=buf).mul_(grad_output)
        return grad_output * 2, None
x = torch.ones(2, requires_grad=True)
h = Scale.apply(x) + Fine.apply(x, torch.zeros(2))
"""
    assert found(code) == [("GG503", 8)]


def test_gg503_fixes_return_a_new_tensor():
    code = PRELUDE + """\
h.register_hook(lambda g: g.mul_(0.5))
def clip(grad):
    grad.clamp_(-1, 1)
def twice(grad):
    grad *= 2
    return grad
h.register_hook(clip)
h.register_hook(twice)
"""
    out = fixed(code)
    assert "h.register_hook(lambda g: g.mul(0.5))" in out
    assert "def clip(grad):\n    return grad.clamp(-1, 1)\n" in out
    assert "def twice(grad):\n    grad = grad * 2\n    return grad\n" in out


def test_gg503_no_fix_for_tuple_hooks_or_aliases():
    code = PRELUDE + """\
lin = nn.Linear(2, 2)
def pre(module, grad_output):
    grad_output[0].mul_(2)
def alias(grad):
    view = grad.view(-1)
    view.mul_(2)
    return grad
lin.register_full_backward_pre_hook(pre)
h.register_hook(alias)
"""
    assert fixed(code) == textwrap.dedent(code) + SHARED_USE


def test_gg503_a_gradient_no_other_node_receives_is_not_reported():
    # a layer's weight and a hook on a value feeding a matmul get fresh gradients: writing them changes
    # nothing else (the sparseml gradient-mask pruner), so torch shows nothing wrong
    code = """\
import torch
from torch import nn
lin = nn.Linear(2, 2)
lin.weight.register_hook(lambda g: g.mul_(0.5))
def pre(module, grad_output):
    grad_output[0].mul_(2)
lin.register_full_backward_pre_hook(pre)
x = torch.ones(2, requires_grad=True)
h = x * 3
h.register_hook(lambda g: g.mul_(0.5))
lin(h).pow(2).sum().backward()
"""
    report = ENGINE.check(code, "t.py")
    assert [f.code for f in report.findings if f.code in CODES] == []
    # after `sum()` the layer's output gradient is expanded: the pre-hook's write raises, and is reported
    report = ENGINE.check(code.replace("lin(h).pow(2).sum()", "lin(h).sum()"), "t.py")
    assert [(f.code, f.span.start_line + 1) for f in report.findings if f.code in CODES] == [("GG503", 6)]


# ---------------------------------------------------------------- GG504
FUNCTION = """\
import torch
from torch import nn
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, buf):
{body}
    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None
layer = nn.Linear(2, 2)
h = layer(torch.randn(3, 2))
y = F.apply(h, torch.zeros(2))
"""


def _function(body: str) -> str:
    return FUNCTION.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


@pytest.mark.parametrize("body,expected", [
    ("x.mul_(2)\nreturn x", [("GG504", 6)]),
    ("x[0] = 0\nreturn x", [("GG504", 6)]),
    ("x.data.mul_(2)\nreturn x", [("GG504", 6)]),
    ("x.mul_(2)\nctx.mark_dirty(x)\nreturn x", []),
    ("x = x.clone()\nx.mul_(2)\nreturn x", []),
    ("buf.add_(1)\nreturn x * 2", []),  # a buffer that does not require grad, not returned
    ("x.mul_(2)\nreturn x * 2", [("GG504", 6)]),  # not returned, but the call passes a tensor requiring grad
])
def test_gg504_forward_writing_an_input(body, expected):
    assert found(_function(body)) == expected


def test_gg504_fix_adds_mark_dirty_only_for_a_returned_input():
    assert "        x.mul_(2)\n        ctx.mark_dirty(x)\n        return x\n" in fixed(_function("x.mul_(2)\nreturn x"))
    not_returned = _function("x.mul_(2)\nreturn x * 2")
    assert fixed(not_returned) == not_returned + SHARED_USE


def test_gg504_setup_context_style():
    code = """\
import torch
class F(torch.autograd.Function):
    @staticmethod
    def forward(x):
        x.mul_(2)
        return x
    @staticmethod
    def setup_context(ctx, inputs, output):
        pass
    @staticmethod
    def backward(ctx, grad):
        return grad * 2
"""
    assert found(code) == [("GG504", 5)]
    assert fixed(code) == code + SHARED_USE  # no ctx in forward to mark the input with


# ---------------------------------------------------------------- GG505
SAVING = """\
import torch
from torch import nn
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bank):
        tmp = torch.sigmoid(x)
        out = x * tmp
        ctx.save_for_backward(x, tmp, out)
        ctx.x = x
        ctx.bank = bank
        return out
    @staticmethod
    def backward(ctx, grad):
{body}
        return grad, None
w = nn.Parameter(torch.ones(2))
y = F.apply(w, torch.zeros(2))
"""


@pytest.mark.parametrize("body,expected", [
    ("x, tmp, out = ctx.saved_tensors\nx.mul_(2)", [("GG505", 15)]),
    ("x, tmp, out = ctx.saved_tensors\nout.mul_(2)", [("GG505", 15)]),
    ("x, tmp, out = ctx.saved_tensors\ntmp.mul_(2)", []),  # a temporary only forward and backward hold
    ("ctx.saved_tensors[0].mul_(2)", [("GG505", 14)]),
    ("x = ctx.saved_variables[0]\nx += 1", [("GG505", 15)]),
    ("ctx.x.mul_(2)", [("GG505", 14)]),  # the call passes a parameter
    ("ctx.bank.add_(grad)", []),  # a plain buffer updated on purpose
    ("x, tmp, out = ctx.saved_tensors\nx = x.clone()\nx.mul_(2)", []),
])
def test_gg505_backward_writing_what_forward_saved(body, expected):
    code = SAVING.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))
    assert found(code) == expected


def test_gg505_fix_rewrites_out_of_place():
    code = SAVING.format(body="        x, tmp, out = ctx.saved_tensors\n        x.mul_(2)")
    assert "        x = x.mul(2)\n" in fixed(code)


# ---------------------------------------------------------------- the docs' claims, under torch
def _residual_x_grad(hook):
    x = torch.tensor([1., 2.], requires_grad=True)
    h0 = x * 1
    h = h0 * 3
    h.register_hook(hook)
    ((h0 + h) * torch.ones(2)).sum().backward()
    return x.grad.tolist()


def test_gg503_claim_residual_branch_receives_the_changed_gradient():
    assert "`x.grad` is 2.0 instead of 2.5" in get_rule("GG503").autograd["en"]
    assert _residual_x_grad(lambda g: g.mul_(0.5)) == [2.0, 2.0]
    assert _residual_x_grad(lambda g: g * 0.5) == [2.5, 2.5]


def test_gg503_claim_other_operand_and_user_gradient_change():
    w = torch.tensor([1., 2.], requires_grad=True)
    v = torch.tensor([1., 2.], requires_grad=True)
    w.register_hook(lambda g: g.mul_(10))
    ((w + v) * torch.tensor([2., 3.])).sum().backward()
    assert v.grad.tolist() == [20.0, 30.0]  # 10 times its true gradient [2, 3]
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 1
    h.register_hook(lambda g: g.mul_(10))
    gout = torch.ones(2)
    h.backward(gout)
    assert gout.tolist() == [10.0, 10.0]


def test_gg503_claim_after_sum_the_write_raises():
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 1
    h.register_hook(lambda g: g.mul_(10))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        h.sum().backward()


def _other_branch(register):
    a = torch.tensor([[1., 2.]], requires_grad=True)
    x = torch.tensor([[1., 2.]], requires_grad=True)
    b = a * 1
    lin = nn.Linear(2, 2)
    register(lin)
    ((b + lin(x)) * torch.ones(1, 2)).sum().backward()
    return a.grad.tolist(), x.grad


def _zero(t):
    t.mul_(0)


def test_gg503_claim_module_hooks_writing_grad_output_zero_the_other_branch():
    assert _other_branch(lambda m: m.register_full_backward_pre_hook(lambda mod, go: _zero(go[0])))[0] == [[0.0, 0.0]]
    assert _other_branch(lambda m: m.register_full_backward_hook(lambda mod, gi, go: _zero(go[0])))[0] == [[0.0, 0.0]]
    assert _other_branch(lambda m: None)[0] == [[1.0, 1.0]]


def test_gg503_claim_full_hook_writing_grad_input_acts_like_returning_it():
    torch.manual_seed(0)
    _, in_place = _other_branch(lambda m: m.register_full_backward_hook(lambda mod, gi, go: _zero(gi[0])))
    torch.manual_seed(0)
    _, returned = _other_branch(lambda m: m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0,)))
    assert torch.equal(in_place, returned)


def test_gg503_claim_post_accumulate_hook_changes_only_its_parameter():
    w = torch.tensor([1., 2.], requires_grad=True)
    v = torch.tensor([1., 2.], requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda p: _zero(p.grad))
    ((w + v) * torch.tensor([2., 3.])).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0] and v.grad.tolist() == [2.0, 3.0]


class _MulTwo(torch.autograd.Function):
    dirty = False

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        if _MulTwo.dirty:
            ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def _mul_two_grad(dirty):
    _MulTwo.dirty = dirty
    w = torch.tensor([1., 2.], requires_grad=True)
    h = w * 3
    y = _MulTwo.apply(h)
    (y * h).sum().backward()
    return w.grad.tolist()


def test_gg504_claim_without_mark_dirty_the_gradient_is_wrong():
    assert "`w.grad == [54, 108]` without `mark_dirty`" in get_rule("GG504").autograd["en"]
    assert _mul_two_grad(False) == [54.0, 108.0]
    assert _mul_two_grad(True) == [72.0, 144.0]


def test_gg504_claim_leaf_modified_silently_and_mark_dirty_raises():
    _MulTwo.dirty = False
    w = torch.tensor([1., 2.], requires_grad=True)
    _MulTwo.apply(w).sum().backward()
    assert w.tolist() == [2.0, 4.0]
    _MulTwo.dirty = True
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation."):
        _MulTwo.apply(torch.tensor([1., 2.], requires_grad=True))


def test_gg504_claim_mark_dirty_on_an_input_not_returned_raises():
    class WritesNotReturned(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x + 0

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not returned"):
        WritesNotReturned.apply(torch.ones(2, requires_grad=True) * 3)


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        x.mul_(2)
        return grad * x


def test_gg505_claim_backward_changes_the_leaf_and_a_second_backward_raises():
    w = torch.tensor([1., 2.], requires_grad=True)
    y = _Square.apply(w)
    y.sum().backward(retain_graph=True)
    assert w.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\] is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_gg505_claim_a_ctx_stash_is_never_version_checked():
    class StashedSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x = ctx.x
            x.mul_(2)
            return grad * x

    assert "through `ctx.x = x` changes `w` and never raises" in get_rule("GG505").autograd["en"]
    w = torch.tensor([1., 2.], requires_grad=True)
    y = StashedSquare.apply(w)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert w.grad.tolist() == [6.0, 12.0]  # true: [4, 8]
    assert w.tolist() == [4.0, 8.0]


def test_gg503_hook_in_a_helper_that_returns_the_hooked_value():
    # MuZero's scale_gradient(tensor, scale): the callers' sum hands the same gradient to every term
    code = """\
import torch
def scale_gradient(tensor, scale):
    tensor.register_hook(lambda grad: grad.mul_(scale))
    return tensor
def fresh_only(tensor, scale):
    tensor.register_hook(lambda grad: grad.mul_(scale))
    return tensor
w = torch.ones(2, requires_grad=True)
loss = (w * 2).sum() + scale_gradient((w * 3).sum(), 0.5)
other = torch.nn.functional.linear(fresh_only(w * 3, 0.5), torch.ones(1, 2))
"""
    report = ENGINE.check(code, "t.py")
    assert [(f.code, f.span.start_line + 1) for f in report.findings if f.code in CODES] == [("GG503", 3)]


def test_gg505_a_write_used_as_a_value_drops_its_suffix_when_the_name_is_not_read_again():
    # EfficientNet's swish made "memory efficient": `sigmoid_i = i.sigmoid_()` on the saved input
    body = "i = ctx.saved_tensors[0]\nsigmoid_i = i.sigmoid_()\nreturn grad * sigmoid_i, None"
    code = SAVING.format(body=textwrap.indent(body, " " * 8)).replace("        return grad, None\n", "", 1)
    assert found(code) == [("GG505", 15)]
    assert "        sigmoid_i = i.sigmoid()\n" in fixed(code)
    read_again = code.replace("return grad * sigmoid_i, None", "return grad * sigmoid_i * i, None")
    assert fixed(read_again) == textwrap.dedent(read_again) + SHARED_USE


def test_gg504_a_number_passed_in_is_not_a_tensor_written():
    code = """\
import torch
class Count(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, n):
        n += 1
        ctx.n = n
        return x * n, n
    @staticmethod
    def backward(ctx, grad, _):
        return grad * ctx.n, None
w = torch.ones(2, requires_grad=True)
y, k = Count.apply(w, 3)
"""
    assert found(code) == []
