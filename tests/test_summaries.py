"""Constructor summaries (issue 21; facts/summaries.py): a model class built again in the same call context is a copy
of the first build, with parameters of its own; where a copy would not be what running `__init__` does (arguments
the instance can share, module-level names re-bound, events in `__init__`), the constructor runs again.

Each program is run under torch too, so what the findings claim is what torch does."""
from __future__ import annotations

import libcst as cst
import pytest
from torch_exec import run_program

from gradguard.engine import Engine
from gradguard.facts.calls import Calls

HEADER = "import torch\nimport torch.nn as nn\n\n"
# A backward at module level: module code that neither writes nor steps nor back-propagates is not interpreted.
BACKWARD = "\ntorch.ones(1, requires_grad=True).sum().backward()\n"

BLOCK = HEADER + '''
class Block(nn.Module):
    def __init__(self, dim, act=nn.ReLU):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act()

    def forward(self, x):
        return self.act(self.fc(x))

'''


def _codes(text: str) -> list[str]:
    return sorted(f.code for f in Engine(editor=False).check(text, "model.py").findings)


@pytest.fixture
def constructed(monkeypatch):
    """The names of the classes whose `__init__` ran as code for a call in the program (not copied from a summary;
    not the abstract instance a method analysed on its own runs with), in order."""
    names = []
    run = Calls._construct

    def counting(self, scope, info, obj, init, owner, positional, keywords, node):
        if type(node) is cst.Call:
            names.append(info.name)
        return run(self, scope, info, obj, init, owner, positional, keywords, node)

    monkeypatch.setattr(Calls, "_construct", counting)
    return names


STEP_BLOCK = BLOCK + '''
blocks = nn.Sequential(*[Block(4) for _ in range(12)])
opt = torch.optim.SGD(blocks[{stepped}].parameters(), lr=0.1)
x = torch.randn(2, 4)
blocks(x).sum().backward()
y = blocks(x).sum()
opt.step()
y.backward()
'''


def test_twelve_identical_blocks_run_their_init_once(constructed):
    assert _codes(STEP_BLOCK.format(stepped=11)) == ["GG401"]
    assert constructed.count("Block") == 1


@pytest.mark.parametrize("stepped", [1, 11])
def test_a_step_on_a_copied_block_is_a_write_on_its_own_weights(stepped):
    program = STEP_BLOCK.format(stepped=stepped)
    assert "modified by an inplace operation" in run_program(program).error
    assert _codes(program) == ["GG401"]


def test_the_copies_do_not_share_version_counters():
    """Block 0's weights are not saved (its input does not require grad); the later blocks' are. Stepping block 0
    writes only its own counter, so nothing saved is stale."""
    program = STEP_BLOCK.format(stepped=0)
    assert run_program(program).clean
    assert _codes(program) == []


def test_different_arguments_are_different_contexts(constructed):
    program = BLOCK + '''
a, b, c = Block(4), Block(8), Block(4, act=nn.Tanh)
d = Block(4)
''' + BACKWARD
    assert _codes(program) == []
    assert constructed.count("Block") == 3


SHARED_LAYER = HEADER + '''
class Wrapper(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


shared = nn.Linear(4, 4)
a, b = Wrapper(shared), Wrapper(shared)
opt = torch.optim.SGD(a.parameters(), lr=0.1)
x = torch.randn(2, 4, requires_grad=True)
b(x).sum().backward()
y = b(x).sum()
opt.step()
y.backward()
'''


def test_a_layer_passed_in_is_shared_not_copied(constructed):
    assert "modified by an inplace operation" in run_program(SHARED_LAYER).error
    assert _codes(SHARED_LAYER) == ["GG401"]
    assert constructed.count("Wrapper") == 2


def test_a_module_level_name_rebound_between_builds_runs_init_again(constructed):
    program = HEADER + '''
WIDTH = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)


a = Net()
b = Net()
WIDTH = 8
c = Net()
''' + BACKWARD
    assert run_program(program).clean
    assert _codes(program) == []
    assert constructed.count("Net") == 2


def test_a_module_level_model_read_in_init_is_shared(constructed):
    program = HEADER + '''
backbone = nn.Linear(4, 4)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        return self.backbone(x)


a, b = Head(), Head()
opt = torch.optim.SGD(a.parameters(), lr=0.1)
x = torch.randn(2, 4, requires_grad=True)
b(x).sum().backward()
y = b(x).sum()
opt.step()
y.backward()
'''
    assert "modified by an inplace operation" in run_program(program).error
    assert _codes(program) == ["GG401"]
    assert constructed.count("Head") == 2


def test_an_init_that_writes_a_parameter_runs_each_time(constructed):
    program = HEADER + '''
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.w.mul_(2)


a = Scaled()
b = Scaled()
'''
    assert run_program(program).error_type == "RuntimeError"  # a leaf that requires grad, written in place
    assert _codes(program) == ["GG101"]  # one finding for the one line
    assert constructed.count("Scaled") == 2


def test_a_module_level_helper_rebound_between_builds_is_read_again(constructed):
    """Both builds read `make`; between them module code re-binds it, so the second build is not the first's copy."""
    program = HEADER + '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = make()


def make():
    return nn.Linear(4, 4)


a = Net()


def make():
    return nn.ReLU()


b = Net()
''' + BACKWARD
    assert run_program(program).clean
    assert _codes(program) == []
    assert constructed.count("Net") == 2


# ---- plain calls of same-file functions (SummaryStore.call_key / replay_call / run_call) ----------------------------

@pytest.fixture
def called(monkeypatch):
    """The names of the functions whose body ran for a call (not replayed from a summary), in order."""
    names = []
    run = Calls._call_function

    def counting(self, scope, fn, *args):
        names.append(getattr(getattr(fn.node, "name", None), "value", "<lambda>"))
        return run(self, scope, fn, *args)

    monkeypatch.setattr(Calls, "_call_function", counting)
    return names


LOADER = (HEADER + '''
def as_tensor(w, transpose=True):
    if transpose:
        w = w.T
    return torch.from_numpy(w)


layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
with torch.no_grad():
    for i, layer in enumerate(layers):
        layer.weight.copy_(as_tensor(np.ones((4, 4), dtype=np.float32)))
        layer.bias.copy_(as_tensor(np.zeros(4, dtype=np.float32), transpose=False))
x = torch.randn(2, 4)
for layer in layers:
    x = layer(x)
x.sum().backward()
''').replace("import torch\n", "import numpy as np\nimport torch\n", 1)


def test_a_helper_called_again_with_the_same_plain_arguments_runs_once(called):
    assert run_program(LOADER).clean
    assert _codes(LOADER) == []
    assert called.count("as_tensor") == 2  # one run per argument context: transpose=True and transpose=False


RETURNED = HEADER + '''
def make():
    return torch.zeros(3, requires_grad=True)


a = make()
b = make()
y = (a * a).sum()
{write}
y.backward()
'''


def test_replayed_results_have_counters_of_their_own(called):
    """`b` is a copy of the summarised result: writing it leaves `a`'s saved version alone; `a`'s own write is
    still a leaf write (GG101)."""
    clean = RETURNED.format(write="with torch.no_grad():\n    b.add_(1)")
    assert run_program(clean).clean
    assert _codes(clean) == []
    bad = RETURNED.format(write="with torch.no_grad():\n    a.add_(1)")
    assert "modified by an inplace operation" in run_program(bad).error
    assert _codes(bad) == ["GG201"]
    assert called.count("make") == 2  # one run per program: the second call is a replay


def test_a_replayed_result_keeps_its_proven_dtype():
    """`.float()` of a tensor proven float32 is the tensor itself; a replayed factory result is still proven."""
    program = RETURNED.format(write="b.float().add_(1)")
    assert "leaf Variable that requires grad" in run_program(program).error
    assert _codes(program) == ["GG101"]


def test_a_helper_with_an_event_runs_at_every_call(called):
    """A helper that writes a module-level tensor records events: it is never replayed."""
    program = HEADER + '''
state = torch.zeros(3)


def bump():
    state.add_(1)
    return 1


w = torch.ones(3, requires_grad=True)
y = (w * state).sum()
bump()
bump()
y.backward()
'''
    assert "modified by an inplace operation" in run_program(program).error
    assert _codes(program) == ["GG201"]
    assert called.count("bump") == 2


def test_a_closure_runs_again_when_what_it_reads_is_rebound(called):
    program = HEADER + '''
def outer(x):
    scale = 2

    def apply(t):
        return t * scale if scale == 2 else t.exp_()

    first = apply(None)
    scale = 3
    second = apply(None)
    return first, second


outer(1)
''' + BACKWARD
    assert _codes(program) == []
    assert called.count("apply") == 2
