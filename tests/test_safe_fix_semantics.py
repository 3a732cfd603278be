"""A safe fix changes no value the program computes: a property test over programs where the tensor has aliases.

A safe fix of an in-place write must be unobservable until the point where the original crashed. Programs are
generated from shapes in which the written tensor is also reachable another way (a loop variable over a list,
a dict item, an attribute, a function parameter, a mutator helper that returns nothing, a view, an item stored in a
list before the write) and from shapes where it is not (a local bound by the op). For every safe fix gradguard
offers, the original and the fixed program run under torch with the same seed, and every tensor the program can
reach (its names, the items of its lists and dicts, the attributes of its objects) is recorded at every line;
until the original raises, the fixed program must record the same values, and after that it must run clean.
Unsafe fixes are checked too: their titles must say why they are unsafe.
"""
from __future__ import annotations

import sys

import pytest
import torch

from gradguard.engine import Engine
from gradguard.source import Source

ENGINE = Engine(editor=False)

HEAD = "import torch\ntorch.manual_seed(0)\nx = torch.randn(4, requires_grad=True)\n"

# {make} produces the tensor (`torch.sigmoid(x)` saves its output, so the write below makes backward fail).
SHAPES = {
    "local": "p = {make}\n{write}\nloss = p.sum()\n",
    "loop_variable": "ps = [{make} for _ in range(2)]\nfor p in ps:\n    {write}\nloss = sum(q.sum() for q in ps)\n",
    "dict_item": "d = {{'a': {make}}}\np = d['a']\n{write}\nloss = d['a'].sum() + p.sum()\n",
    "attribute": "class Box:\n    pass\nbox = Box()\nbox.t = {make}\np = box.t\n{write}\nloss = box.t.sum()\n",
    "parameter": "def normalize(p):\n    {write}\n    return p\nq = {make}\nout = normalize(q)\nloss = q.sum() + out.sum()\n",
    "mutator": "def normalize(p):\n    {write}\nq = {make}\nnormalize(q)\nloss = q.sum()\n",
    "view": "p = {make}\nv = p.view(2, 2)\n{write}\nloss = v.sum() + p.sum()\n",
    "stored": "keep = []\np = {make}\nkeep.append(p)\n{write}\nloss = keep[0].sum() + p.sum()\n",
    "rebound_before": "q = {make}\np = q\n{write}\nloss = q.sum() + p.sum()\n",
    "function_local": "def f(x):\n    p = {make}\n    {write}\n    return p\nloss = f(x).sum()\n",
    "loop_fresh": "total = 0\nfor i in range(2):\n    p = {make}\n    {write}\n    total = total + p.sum()\nloss = total\n",
    "loop_kept": "keep = []\np = {make}\nfor i in range(2):\n    {write}\n    keep.append(p)\nloss = sum(k.sum() for k in keep)\n",
    # issue 33: each a second reference the re-binding would leave behind
    "chained": "p = q = {make}\n{write}\nloss = q.sum() + p.sum()\n",
    "chained_second": "q = p = {make}\n{write}\nloss = q.sum() + p.sum()\n",
    "walrus": "p = {make}\nif (q := p) is not None:\n    pass\n{write}\nloss = q.sum() + p.sum()\n",
    "walrus_bound": "if (p := {make}) is not None:\n    pass\n{write}\nloss = p.sum()\n",
    "star_unpacked": "p = {make}\nfirst, *rest = [p, p * 2]\n{write}\nloss = first.sum() + rest[0].sum()\n",
    "attribute_set": "p = {make}\np.tag = 2.0\n{write}\nloss = p.sum() * p.tag\n",
    "retain_grad": "p = {make}\np.retain_grad()\n{write}\nloss = p.sum()\n",
    "builtin_max": "p = {make}\nq = max(p, torch.zeros(4), key=lambda t: t.sum().item())\n{write}\nloss = q.sum() + p.sum()\n",
    "builtin_min": "p = {make}\nq = min([p], key=len)\n{write}\nloss = q.sum() + p.sum()\n",
    "builtin_sorted": "p = {make}\nq = sorted([p], key=len)[0]\n{write}\nloss = q.sum() + p.sum()\n",
    # the saved tensor is the one an in-place op wrote: a copy of its receiver (or of its output) leaves `t` behind
    "inplace_method_receiver": "t = {make} * 2\np = t.sigmoid_()\n{write}\nloss = t.sum() + p.sum()\n",
    "inplace_function_receiver": "t = {make} * 2\np = torch.relu_(t)\n{write}\nloss = t.sum() + p.sum()\n",
}
MAKES = ["torch.sigmoid(x)", "x.exp()", "torch.tanh(x * 2)"]
WRITES = ["p /= p.sum()", "p.div_(p.sum())", "p += 1", "p.mul_(2)", "p.clamp_(max=0.5)"]
TAIL = "loss.backward()\ndone = True\n"  # a line after backward: its record holds the gradients


def programs():
    for shape, body in SHAPES.items():
        for make in MAKES:
            for write in WRITES:
                yield pytest.param(HEAD + body.format(make=make, write=write) + TAIL,
                                   id=f"{shape}-{make}-{write}")


def _reachable(namespace: dict) -> dict:
    """Every tensor a program can reach from its globals, one level into lists, tuples, dicts and objects."""
    seen = {}
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        if isinstance(value, torch.Tensor):
            seen[name] = value
            if (value.is_leaf or value.retains_grad) and value.grad is not None:
                # `retain_grad()`: the gradient asked for is a value too
                seen[f"{name}.grad"] = value.grad
        elif isinstance(value, (list, tuple)):
            seen.update({f"{name}[{i}]": v for i, v in enumerate(value) if isinstance(v, torch.Tensor)})
        elif isinstance(value, dict):
            seen.update({f"{name}[{k!r}]": v for k, v in value.items() if isinstance(v, torch.Tensor)})
        elif hasattr(value, "__dict__") and not isinstance(value, type) and not callable(value):
            seen.update({f"{name}.{k}": v for k, v in vars(value).items() if isinstance(v, torch.Tensor)})
    return seen


def run_recording(code: str):
    """Run the program; return (the values reachable at each line event of module code, the error or None)."""
    namespace = {"__name__": "__main__"}
    records: list[dict] = []

    def tracer(frame, event, arg):
        name = frame.f_code.co_name
        if frame.f_code.co_filename != "<program>" or (name.startswith("<") and name != "<module>"):
            return None  # a comprehension a fix introduced is part of its line, not a line of its own
        if event == "line":
            reachable = _reachable(frame.f_globals)
            if frame.f_code.co_name != "<module>":  # a function's locals too
                reachable.update({f"{frame.f_code.co_name}.{k}": v for k, v in frame.f_locals.items()
                                  if isinstance(v, torch.Tensor)})
            records.append({k: v.detach().clone() for k, v in reachable.items()})
        return tracer

    torch.set_grad_enabled(True)
    error = None
    sys.settrace(tracer)
    try:
        exec(compile(code, "<program>", "exec"), namespace)
    except Exception as exc:  # noqa: BLE001 - a fix that breaks the program (AttributeError...) is an error too
        error = exc
    finally:
        sys.settrace(None)
    return records, error


def apply(text: str, fix) -> str:
    source = Source(text)
    out = source.text
    for e in sorted(fix.edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        out = out[:source.offset(e.span.start_line, e.span.start_col)] + e.new_text + out[
            source.offset(e.span.end_line, e.span.end_col):]
    return out


def _same_values(before: dict, after: dict) -> list[str]:
    return [k for k in before if k not in after or before[k].shape != after[k].shape
            or not torch.allclose(before[k], after[k], rtol=1e-6, atol=0)]


def reference(code: str) -> str | None:
    """The program as meant: the op's output copied where it is made, which changes no value (None when the shape
    writes what an in-place op made, where no copy keeps every value)."""
    for make in MAKES:
        if f"{make} * 2" in code:
            return None
        if make in code:
            return code.replace(make, f"({make}).clone()", 1)
    return None


@pytest.mark.parametrize("code", list(programs()))
def test_a_safe_fix_changes_no_value_before_the_old_crash(code):
    original, error = run_recording(code)
    assert isinstance(error, RuntimeError), "the generated program must raise (it is a bug)"
    meant = reference(code)
    meant_records = None
    if meant is not None:
        meant_records, meant_error = run_recording(meant)
        assert meant_error is None, meant
    findings = [f for f in ENGINE.check(code, "t.py").findings if f.fix is not None]
    assert findings, "every shape here gets a fix"
    for finding in findings:
        fixed_code = apply(code, finding.fix)
        if finding.fix.applicability != "safe":
            assert "(unsafe:" in finding.fix.message or "(" in finding.fix.message, finding.fix.message
            continue
        fixed, fixed_error = run_recording(fixed_code)
        assert fixed_error is None, (finding.fix.message, fixed_code, fixed_error)
        # each line event records the values before its line runs: all of them precede the crash
        for i, (a, b) in enumerate(zip(original, fixed)):
            changed = _same_values(a, b)
            assert not changed, (finding.fix.message, f"line event {i}", changed, fixed_code)
        # after the old crash: every value, gradients included, is the one the program meant
        if meant_records is not None:
            assert len(fixed) == len(meant_records), (finding.fix.message, fixed_code)
            for i, (a, b) in enumerate(zip(meant_records, fixed)):
                changed = _same_values(a, b)
                assert not changed, (finding.fix.message, f"line event {i}", changed, fixed_code)


def test_the_alias_shapes_are_not_rewritten_safely():
    """Where the tensor has an alias, the safe fix is a copy at the op (`.clone()`), never a re-binding."""
    for shape in ("loop_variable", "dict_item", "attribute", "parameter", "mutator", "view", "stored",
                  "rebound_before", "loop_kept"):
        code = HEAD + SHAPES[shape].format(make="torch.sigmoid(x)", write="p /= p.sum()") + TAIL
        (finding,) = [f for f in ENGINE.check(code, "t.py").findings if f.code == "GG201"]
        assert finding.fix.applicability == "safe", shape
        assert [e.new_text for e in finding.fix.edits] == ["torch.sigmoid(x).clone()"], (shape, finding.fix)


def test_a_local_bound_by_the_op_is_rewritten():
    for shape in ("local", "function_local", "loop_fresh"):
        code = HEAD + SHAPES[shape].format(make="torch.sigmoid(x)", write="p /= p.sum()") + TAIL
        (finding,) = [f for f in ENGINE.check(code, "t.py").findings if f.code == "GG201"]
        assert (finding.fix.applicability, [e.new_text for e in finding.fix.edits]) == (
            "safe", ["p = p / p.sum()"]), shape


def test_both_saved_operands_are_copied():
    """`p * p` saves p twice: copying one operand left the other saved, and the fixed program still raised."""
    code = ("import torch\nx = torch.randn(4, requires_grad=True)\nps = [torch.sin(x)]\nfor p in ps:\n"
            "    y = p * p\n    p /= 2\ny.sum().backward()\n")
    (finding,) = [f for f in ENGINE.check(code, "t.py").findings if f.code == "GG201"]
    assert finding.fix.applicability == "safe"
    assert [e.new_text for e in finding.fix.edits] == ["p.clone()", "p.clone()"]
    fixed, error = run_recording(apply(code, finding.fix))
    assert error is None


# `inplace=False` leaves the activation's input as it was: safe only when nothing else reads that input.
ACTIVATION_PROGRAMS = {
"resnet": '''
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(4, 4)
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        out = torch.tanh(self.conv(x))
        out = self.relu(out)
        return out
b = Block()
b(torch.randn(2, 4)).sum().backward()
''',
"param": '''
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        x = self.relu(x)
        return x
lin = nn.Linear(4, 4)
h = torch.tanh(lin(torch.randn(2, 4)))
b = Block()
(b(h).sum() + h.sum()).backward()
''',
"seq": '''
import torch
from torch import nn
net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.ReLU(inplace=True))
net(torch.randn(2, 4)).sum().backward()
''',
"arg_other": '''
import torch
import torch.nn.functional as F
x = torch.randn(4, requires_grad=True)
h = torch.tanh(x)
y = F.relu(h, inplace=True)
(y.sum() + h.sum()).backward()
''',
"arg_alone": '''
import torch
import torch.nn.functional as F
x = torch.randn(4, requires_grad=True)
h = torch.tanh(x)
F.relu(h, inplace=True)
h.sum().backward()
''',
}
# issue 33: a forward hook keeps the layer's output; an empty `nn.Sequential` hands its input on
ACTIVATION_PROGRAMS["seq_hooked"] = '''
import torch
from torch import nn
seen = []
def keep(module, args, out):
    seen.append(out)
act = nn.Tanh()  # not a sigmoid: relu would change none of its positive values
act.register_forward_hook(keep)
net = nn.Sequential(nn.Linear(4, 4), act, nn.ReLU(inplace=True))
out = net(torch.randn(2, 4) * 4)
out.sum().backward()
'''
ACTIVATION_PROGRAMS["seq_pass_through"] = '''
import torch
from torch import nn
net = nn.Sequential(nn.Sequential(), nn.ReLU(inplace=True))
h = torch.tanh(torch.randn(2, 4, requires_grad=True))
out = net(h)
(out.sum() + h.sum()).backward()
'''
ACTIVATION_PROGRAMS["empty_sequential"] = '''
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.pre = nn.Sequential()
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        t = torch.tanh(self.lin(x))
        h = self.pre(t)
        h = self.relu(h)
        return h, t
a, b = Block()(torch.randn(2, 4) * 4)
(a.sum() + b.sum()).backward()
'''
ACTIVATION_PROGRAMS["empty_sequential_temporary"] = '''
import torch
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.pre = nn.Sequential()
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        t = torch.tanh(self.lin(x))
        return self.relu(self.pre(t)), t
a, b = Block()(torch.randn(2, 4) * 4)
(a.sum() + b.sum()).backward()
'''
ACTIVATION_SAFETY = {"resnet": "safe", "param": "unsafe", "seq": "safe", "arg_other": "unsafe", "arg_alone": "safe",
                     "seq_hooked": "unsafe", "seq_pass_through": "unsafe", "empty_sequential": "unsafe",
                     "empty_sequential_temporary": "unsafe"}


@pytest.mark.parametrize("name", sorted(ACTIVATION_PROGRAMS))
def test_inplace_false_is_safe_only_when_the_input_is_not_read_again(name):
    code = "import torch\ntorch.manual_seed(0)\n" + ACTIVATION_PROGRAMS[name]
    (finding,) = [f for f in ENGINE.check(code, "t.py").findings if f.code == "GG202"]
    assert finding.fix.applicability == ACTIVATION_SAFETY[name], finding.fix.message
    original, error = run_recording(code)
    assert error is not None
    fixed, fixed_error = run_recording(apply(code, finding.fix))
    assert fixed_error is None
    changed = [(i, _same_values(a, b)) for i, (a, b) in enumerate(zip(original, fixed)) if _same_values(a, b)]
    if finding.fix.applicability == "safe":
        assert not changed, (finding.fix.message, changed)
    else:
        assert "(unsafe: " in finding.fix.message
        assert changed, "an unsafe fix here is one whose difference a reference really sees"


ROWS = """import torch
torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
y = w * 1.5
for row, scale in zip(y, [1.0, 2.0, 3.0]):
    row.mul_(scale)
loss = y.pow(2).sum()
loss.backward()
"""


def test_rows_taken_one_at_a_time_keep_every_value_and_the_writes_reach_the_tensor():
    """GG103's safe fix: iterating `y` made unbind views; single-view rows allow the writes, which still reach `y`."""
    (finding,) = [f for f in ENGINE.check(ROWS, "t.py").findings if f.code == "GG103"]
    assert finding.fix.applicability == "safe"
    assert [e.new_text for e in finding.fix.edits] == ["(v[i] for v in [y] for i in range(len(v)))"]
    original, error = run_recording(ROWS)
    assert error is not None
    fixed_code = apply(ROWS, finding.fix)
    fixed, fixed_error = run_recording(fixed_code)
    assert fixed_error is None
    assert not [i for i, (a, b) in enumerate(zip(original, fixed)) if _same_values(a, b)]
    namespace = {}
    exec(compile(fixed_code, "<fixed>", "exec"), namespace)
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    hand = (w * 1.5) * torch.tensor([1.0, 2.0, 3.0]).unsqueeze(1)  # what the loop meant
    assert torch.allclose(namespace["y"], hand)
    hand.pow(2).sum().backward()
    assert torch.allclose(namespace["w"].grad, w.grad)
