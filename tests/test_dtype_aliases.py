"""What the Facts assume about dtypes and devices is what torch 2.13 does: the factories the analysis marks make
float32 CPU tensors, the layers of SAME_DTYPE_LAYERS compute in their input's dtype and device, and the
conversions `Calls.converts_to_itself` answers with the tensor itself return `self` (an alias: a write through
the result reaches the tensor and its saves)."""
from __future__ import annotations

import pytest
import torch

from gradguard.facts.calls import DEFAULT_DTYPE_FACTORIES
from gradguard.facts.modules import SAME_DTYPE_LAYERS

LAYERS = {
    "torch.nn.Linear": (lambda: torch.nn.Linear(4, 3), [(2, 4)]),
    "torch.nn.Bilinear": (lambda: torch.nn.Bilinear(4, 4, 3), [(2, 4), (2, 4)]),
    "torch.nn.Conv1d": (lambda: torch.nn.Conv1d(2, 3, 3), [(1, 2, 8)]),
    "torch.nn.Conv2d": (lambda: torch.nn.Conv2d(2, 3, 3), [(1, 2, 6, 6)]),
    "torch.nn.Conv3d": (lambda: torch.nn.Conv3d(2, 3, 3), [(1, 2, 5, 5, 5)]),
    "torch.nn.ConvTranspose1d": (lambda: torch.nn.ConvTranspose1d(2, 3, 3), [(1, 2, 8)]),
    "torch.nn.ConvTranspose2d": (lambda: torch.nn.ConvTranspose2d(2, 3, 3), [(1, 2, 6, 6)]),
    "torch.nn.ConvTranspose3d": (lambda: torch.nn.ConvTranspose3d(2, 3, 3), [(1, 2, 4, 4, 4)]),
    "torch.nn.BatchNorm1d": (lambda: torch.nn.BatchNorm1d(4), [(5, 4)]),
    "torch.nn.BatchNorm2d": (lambda: torch.nn.BatchNorm2d(2), [(3, 2, 4, 4)]),
    "torch.nn.BatchNorm3d": (lambda: torch.nn.BatchNorm3d(2), [(3, 2, 3, 3, 3)]),
    "torch.nn.InstanceNorm1d": (lambda: torch.nn.InstanceNorm1d(2), [(3, 2, 5)]),
    "torch.nn.InstanceNorm2d": (lambda: torch.nn.InstanceNorm2d(2, affine=True), [(3, 2, 4, 4)]),
    "torch.nn.InstanceNorm3d": (lambda: torch.nn.InstanceNorm3d(2), [(3, 2, 3, 3, 3)]),
    "torch.nn.LayerNorm": (lambda: torch.nn.LayerNorm(4), [(5, 4)]),
    "torch.nn.GroupNorm": (lambda: torch.nn.GroupNorm(2, 4), [(3, 4, 5)]),
    "torch.nn.ReLU": (lambda: torch.nn.ReLU(), [(5, 4)]),
    "torch.nn.LeakyReLU": (lambda: torch.nn.LeakyReLU(0.01), [(5, 4)]),
    "torch.nn.GELU": (lambda: torch.nn.GELU(), [(5, 4)]),
    "torch.nn.SiLU": (lambda: torch.nn.SiLU(), [(5, 4)]),
    "torch.nn.Tanh": (lambda: torch.nn.Tanh(), [(5, 4)]),
    "torch.nn.Sigmoid": (lambda: torch.nn.Sigmoid(), [(5, 4)]),
    "torch.nn.ELU": (lambda: torch.nn.ELU(), [(5, 4)]),
    "torch.nn.Dropout": (lambda: torch.nn.Dropout(0.5), [(5, 4)]),
}


def test_every_same_dtype_layer_is_probed():
    assert set(LAYERS) == set(SAME_DTYPE_LAYERS)


@pytest.mark.parametrize("qualified", sorted(LAYERS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layer_output_has_its_inputs_dtype_and_device(qualified, dtype):
    make, shapes = LAYERS[qualified]
    layer = make().to(dtype)
    out = layer(*[torch.randn(s, dtype=dtype) for s in shapes])
    assert (out.dtype, out.device.type) == (dtype, "cpu")


@pytest.mark.parametrize("name", sorted(DEFAULT_DTYPE_FACTORIES))
def test_factories_make_float32_cpu_tensors(name):
    t = getattr(torch, name)(2, 3)
    assert (t.dtype, t.device.type) == (torch.float32, "cpu")
    like = getattr(torch, name + "_like")(torch.zeros(2, dtype=torch.float64))
    assert like.dtype == torch.float64  # `_like` keeps its input's dtype


CONVERSIONS_TO_SELF = {
    "x.float()": lambda x: x.float(),
    "x.cpu()": lambda x: x.cpu(),
    "x.to('cpu')": lambda x: x.to("cpu"),
    "x.to(torch.device('cpu'))": lambda x: x.to(torch.device("cpu")),
    "x.to(torch.float32)": lambda x: x.to(torch.float32),
    "x.to(torch.float)": lambda x: x.to(torch.float),
    "x.to(dtype=torch.float32)": lambda x: x.to(dtype=torch.float32),
    "x.to(device='cpu')": lambda x: x.to(device="cpu"),
    "x.to('cpu', torch.float32)": lambda x: x.to("cpu", torch.float32),
    "x.to('cpu', non_blocking=True)": lambda x: x.to("cpu", non_blocking=True),
    "x.type(torch.float32)": lambda x: x.type(torch.float32),
    "x.type('torch.FloatTensor')": lambda x: x.type("torch.FloatTensor"),
    "x.type(torch.FloatTensor)": lambda x: x.type(torch.FloatTensor),
}


@pytest.mark.parametrize("spelling", sorted(CONVERSIONS_TO_SELF))
def test_conversions_of_a_float32_cpu_tensor_return_it(spelling):
    x = torch.randn(3) * 1
    assert CONVERSIONS_TO_SELF[spelling](x) is x
    with torch.inference_mode():
        y = torch.randn(3)
    assert CONVERSIONS_TO_SELF[spelling](y) is y


def test_other_conversions_copy():
    x = torch.randn(3)
    assert x.double() is not x and x.to(torch.float64) is not x and x.to("cpu", copy=True) is not x
    with torch.autocast("cpu"):
        out = torch.nn.Linear(4, 3)(torch.randn(2, 4))
    assert out.dtype == torch.bfloat16 and out.float() is not out  # why a file mentioning autocast claims no dtype


def _findings(text):
    from gradguard.engine import Engine

    return [(f.code, f.span.start_line + 1) for f in Engine().check(text, "prog.py").findings]


PROGRAM = """import torch
from torch import nn
{setup}
head = nn.Linear(6, 10)
hidden = torch.randn(4, 6{kw})
logits = head(hidden)
z = torch.logsumexp(logits, dim=-1).mean()
alias = logits.{conversion}
alias -= 1
z.backward()
"""


@pytest.mark.parametrize("setup, kw, conversion, reported", [
    ("", "", "float()", True),
    ("", "", "to('cpu')", True),
    ("", "", "to(torch.float32)", True),
    ("", "", "type(torch.FloatTensor)", True),
    ("", "", "double()", False),
    ("", "", "to(torch.float64)", False),
    ("", ", dtype=torch.float64", "float()", False),  # dtype= makes the dtype unknown (here: float64)
    ("", ", device=dev", "cpu()", False),
    ("torch.set_default_dtype(torch.float64)", "", "float()", False),
    ("torch.set_default_device('cpu')", "", "cpu()", False),
])
def test_an_alias_is_claimed_only_on_a_proven_dtype_and_device(setup, kw, conversion, reported):
    text = PROGRAM.format(setup=setup + ("\ndev = 'cpu'" if "dev" in kw else ""), kw=kw, conversion=conversion)
    findings = _findings(text)
    line = text.splitlines().index("alias -= 1") + 1
    assert (("GG201", line) in findings) is reported, findings


EDITED = '''import torch


def setup():
    pass


def train():
    lin = torch.nn.Linear(3, 3)
    y = lin(torch.randn(2, 3))
    z = y.sin()
    a = y.float()
    a += 1
    z.sum().backward()


setup()
train()
'''


@pytest.mark.parametrize("edit", [
    ("import torch\n", "import torch\ntorch.set_default_dtype(torch.float64)\n"),
    ("    pass\n", "    torch.set_default_dtype(torch.float64)\n"),  # in a function module code calls
    ("def train():\n", "@torch.autocast('cpu')\ndef train():\n"),
    ("setup()\n", "with torch.device('meta'):\n    pass\n"),
])
def test_defaults_follow_execution_and_edits(edit):
    """What changes the defaults counts where it runs (module-level code and the calls it makes), so an editor that
    re-uses cached runs across the edit agrees with a new Engine; a function run on its own claims no dtype."""
    from gradguard.engine import Engine

    editor = Engine(editor=True)
    assert [(f.code, f.span.start_line + 1) for f in editor.check(EDITED, "p.py").findings] == [("GG201", 13)]
    edited = EDITED.replace(*edit)
    assert editor.check(edited, "p.py").findings == [] and Engine(editor=True).check(edited, "p.py").findings == []
    assert Engine().check(EDITED.replace("\nsetup()\ntrain()\n", ""), "p.py").findings == []
