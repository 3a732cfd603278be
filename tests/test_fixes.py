"""Fix text, exactly: the defects reported in issues 10 and 14, reproduced, and what each fix is now.

Out-of-place rewrites keep their meaning (precedence), are refused around comments and backslash continuations;
carried state is detached at the carry and the model keeps training; `--fix` keeps line endings and the BOM
byte for byte outside the fix.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from gradguard.engine import Engine
from gradguard.source import Source
from torch_exec import run_program

ENGINE = Engine()
HEAD = "import torch\nx = torch.randn(3, requires_grad=True)\nm = torch.rand(3) > 0.5\nd = 2.0\nscores = x.exp()\n"
TAIL = "scores.sum().backward()\n"


def only(text: str, code: str):
    found = [f for f in ENGINE.check(text, "t.py").findings if f.code == code]
    assert len(found) == 1, found
    return found[0]


def fixed_with(text: str, finding) -> str:
    source = Source(text)
    out = source.text
    for e in sorted(finding.fix.edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        out = out[:source.offset(e.span.start_line, e.span.start_col)] + e.new_text + out[
            source.offset(e.span.end_line, e.span.end_col):]
    return out


# ---------------------------------------------------------------- GG201 out-of-place rewrites
@pytest.mark.parametrize("write,rewritten", [
    ("scores *= not d", "scores = scores * (not d)"),
    ("scores *= scores > 0", "scores = scores * (scores > 0)"),
    ("scores -= d - 1.0", "scores = scores - (d - 1.0)"),
    ("scores *= d + 1.0", "scores = scores * (d + 1.0)"),
    ("scores += d * 2.0", "scores = scores + d * 2.0"),
    ("scores /= d if d > 1 else 0.5", "scores = scores / (d if d > 1 else 0.5)"),
    ("scores *= -d", "scores = scores * -d"),
    ("scores **= 2", "scores = scores ** 2"),
    ("scores *= m | (scores > 1)", "scores = scores * (m | (scores > 1))"),
    ("scores *= (d + 1.0)", "scores = scores * (d + 1.0)"),
    ("scores.div_(d)", "scores = scores.div(d)"),
    ("scores.clamp_(\n    min=0.1,\n    max=d,\n)", "scores = scores.clamp(\n    min=0.1,\n    max=d,\n)"),
    ("scores.add_(d, alpha=-1.0)", "scores = scores.add(d, alpha=-1.0)"),
])
def test_out_of_place_rewrite_keeps_the_meaning(write, rewritten):
    text = HEAD + write + "\n" + TAIL
    finding = only(text, "GG201")
    assert finding.fix.applicability == "safe"
    assert [e.new_text for e in finding.fix.edits] == [rewritten]
    fixed = fixed_with(text, finding)
    assert run_program(fixed).clean, fixed


@pytest.mark.parametrize("write", [
    "scores /= \\\n    d",  # was `scores = scores /= \ d`: a SyntaxError
    "scores.div_(d,  # by the temperature\n    )",  # was `scores = scores.div(d,  # by the temperature)`
    "scores.div_(  # temperature\n    d)",  # the comment was dropped
    "scores.div_(d \\\n    )",
])
def test_no_rewrite_across_comments_or_backslashes(write):
    finding = only(HEAD + write + "\n" + TAIL, "GG201")  # still reported
    # the write is left as it is; the saved output of `exp` is copied where it is made instead
    assert [e.new_text for e in finding.fix.edits] == ["x.exp().clone()"]
    assert finding.fix.applicability == "safe"


# ---------------------------------------------------------------- GG101 / GG102 / GG104
def test_leaf_rewrite_parenthesises_and_refuses_backslashes():
    text = "import torch\nw = torch.ones(3, requires_grad=True)\nd = 2.0\nw *= 2.0 if d else 3.0\n"
    assert [e.new_text for e in only(text, "GG101").fix.edits] == ["w = w * (2.0 if d else 3.0)"]
    text = "import torch\nw = torch.ones(3, requires_grad=True)\nw += \\\n    1.0\n"
    fix = only(text, "GG101").fix
    # no re-binding across the backslash: the write is done under no_grad, the statement's text kept as it is
    assert [e.new_text for e in fix.edits] == ["with torch.no_grad():\n    w += \\\n    1.0"]
    assert compile(fixed_with(text, only(text, "GG101")), "t.py", "exec")


def test_no_grad_wrap_keeps_strings_and_uses_the_block_indentation():
    text = ("import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).sum().backward()\n"
            "for _ in range(1):\n\tw -= 0.1 * w.grad * len('''a\nb''')  # step\n")
    finding = only(text, "GG101")
    assert [e.new_text for e in finding.fix.edits] == [
        "\twith torch.no_grad():\n\t\tw -= 0.1 * w.grad * len('''a\nb''')  # step"]
    fixed = fixed_with(text, finding)
    assert "len('''a\nb''')" in fixed  # the string's second line is not re-indented
    assert run_program(fixed).clean, fixed


# A frozen embedding whose output a forward hook makes require grad (PEFT's `enable_input_require_grads`): the
# output is a leaf made afresh by every forward, so the fix may re-bind it although the training loop
# backpropagates through the forward again; the trainable layers must keep their gradients (no no_grad()).
HOOKED_FORWARD = """import torch
from torch import nn

torch.manual_seed(0)


def output_requires_grad(module, inputs, output):
    output.requires_grad_(True)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.embed.weight.requires_grad_(False)
        self.embed.register_forward_hook(output_requires_grad)
        self.proj = nn.Linear(3, 4)

    def forward(self, ids, feats):
        h = self.embed(ids)
        mask = ids == 1
        {write}
        return h.sum()


model = Tagger()
opt = torch.optim.SGD(model.proj.parameters(), lr=0.1)
ids = torch.arange(2, 8)
ids[:2] = 1
feats = torch.randn(2, 3)
for _ in range(2):
    loss = model(ids, feats)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(model.proj.weight.grad.abs().sum().item() > 0)
"""


@pytest.mark.parametrize("write,edits", [
    ("h[mask] = self.proj(feats)", ["        h = h.clone()\n"]),  # written by index: the write goes into a copy
    ("h += self.proj(feats).sum()", ["h = h + self.proj(feats).sum()"]),
])
def test_leaf_made_in_each_forward_is_rewritten_not_written_under_no_grad(write, edits):
    text = HOOKED_FORWARD.format(write=write)
    assert "leaf Variable" in run_program(text).error
    finding = only(text, "GG101")
    assert finding.fix.applicability == "unsafe"
    assert [e.new_text for e in finding.fix.edits] == edits
    result = run_program(fixed_with(text, finding))
    assert result.clean and result.stdout == "True\n", result  # proj still trains


def test_a_view_of_a_leaf_made_in_each_forward_is_written_in_a_copy():
    # GG102's shape of the same forward: `h[:2] = ...` writes a view of the hooked output; under no_grad() the
    # projection would get no gradient
    text = HOOKED_FORWARD.format(write="h[:2] = self.proj(feats)")
    assert "view of a leaf Variable" in run_program(text).error
    finding = only(text, "GG102")
    assert finding.fix.applicability == "unsafe"
    assert [e.new_text for e in finding.fix.edits] == ["        h = h.clone()\n"]
    result = run_program(fixed_with(text, finding))
    assert result.clean and result.stdout == "True\n", result


CHAINED_ON_A_PIECE = """import torch
torch.manual_seed(0)
x = torch.randn(4, 6, requires_grad=True)
a, b = (x * 2).chunk(2, dim=1)
s, t = torch.randn(4, 3), torch.randn(4, 3)
{write}
torch.cat([a, b], dim=1).pow(2).sum().backward()
print(round(x.grad.sum().item(), 4))
"""


def test_a_chain_of_in_place_methods_is_rewritten_on_its_receiver():
    # RealNVP's coupling: the rewrite was `t = b.mul_(torch.exp(s)).add(t)`, the function form (`F.relu_(h)`) taken
    # for a method on the chain's first call: still in place, and `t` re-bound; torch raises at the first write of
    # the chain, so the chain is one finding
    text = CHAINED_ON_A_PIECE.format(write="b.mul_(torch.exp(s)).add_(t)")
    finding = only(text, "GG103")
    assert [e.new_text for e in finding.fix.edits] == ["b = b.mul(torch.exp(s)).add(t)"]
    fixed = run_program(fixed_with(text, finding))
    by_hand = run_program(CHAINED_ON_A_PIECE.format(write="b = b * torch.exp(s) + t"))
    assert fixed.clean and by_hand.clean and fixed.stdout == by_hand.stdout


def test_out_rewrite_is_refused_around_comments():
    text = ("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.empty(3)\n"
            "torch.sin(x,  # into the buffer\n          out=y)\n")
    assert only(text, "GG104").fix is None
    text = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.empty(3)\ntorch.sin(x, out=y)\n"
    assert [e.new_text for e in only(text, "GG104").fix.edits] == ["y = torch.sin(x)"]


# ---------------------------------------------------------------- carried state (GG402 / GG403)
RNN_CELL = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\ncell = nn.RNNCell(2, 4)\nhead = nn.Linear(4, 1)\n"
            "opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)\nh = torch.zeros(1, 4)\n"
            "for x in torch.randn(4, 1, 2):\n")
LSTM = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\nlstm = nn.LSTM(3, 4, batch_first=True)\n"
        "opt = torch.optim.SGD(lstm.parameters(), lr=0.1)\nh = torch.zeros(1, 1, 4)\nc = torch.zeros(1, 1, 4)\n"
        "state = None\nfor x in torch.randn(3, 1, 4, 3):\n")
STEP = "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
STEP_RETAIN = "    opt.zero_grad()\n    loss.backward(retain_graph=True)\n    opt.step()\n"


COMPRESSIVE_MEMORY = """import torch
from torch import nn

torch.manual_seed(0)


class Memory(nn.Module):
    def __init__(self):
        super().__init__()
        self.kv = nn.Linear(4, 8)
        self.M = torch.zeros(4, 4)
        self.z = torch.zeros(4)

    def forward(self, x):
        k, v = self.kv(x).chunk(2, dim=-1)
        k = torch.nn.functional.elu(k) + 1
        out = (k @ self.M) / (k @ self.z + 1e-6)[..., None]
        self._update(k, v)
        return out + v

    def _update(self, k, v):
        self.M = self.M + k.T @ v
        self.z = self.z + k.sum(0)


mem = Memory()
opt = torch.optim.SGD(mem.parameters(), lr=0.1)
for x in torch.randn(3, 2, 4):
    loss = mem(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(round(loss.item(), 4))
"""


def test_every_attribute_carrying_the_freed_graph_is_detached_in_the_method():
    # Infini-attention's memory: `self.M` and `self.z` are both re-bound from themselves with this segment's graph;
    # the analysis names the first, and detaching it alone left `self.z` to raise at the next backward()
    finding = only(COMPRESSIVE_MEMORY, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["(self.M + k.T @ v).detach()", "(self.z + k.sum(0)).detach()"]
    fixed = fixed_with(COMPRESSIVE_MEMORY, finding)
    by_hand = COMPRESSIVE_MEMORY.replace("self.M + k.T @ v\n", "(self.M + k.T @ v).detach()\n").replace(
        "self.z + k.sum(0)\n", "(self.z + k.sum(0)).detach()\n")
    assert fixed == by_hand
    assert run_program(fixed).clean


def test_a_count_kept_beside_the_carried_memory_is_not_detached():
    # `self.n = self.n + k.shape[0]` reads the same argument but holds an int: `.detach()` there would raise
    text = COMPRESSIVE_MEMORY.replace("        self.z = torch.zeros(4)\n", "        self.z = torch.zeros(4)\n        self.n = 0\n"
                                      ).replace("        self.z = self.z + k.sum(0)\n",
                                                "        self.z = self.z + k.sum(0)\n        self.n = self.n + k.shape[0]\n")
    finding = only(text, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["(self.M + k.T @ v).detach()", "(self.z + k.sum(0)).detach()"]
    assert run_program(fixed_with(text, finding)).clean


def trains(program: str) -> None:
    """The program runs clean and every tensor its optimizer updates has a gradient at every step."""
    checked = program.replace("    opt.step()\n", "    assert all(p.grad is not None for g in opt.param_groups "
                              "for p in g['params'])\n    opt.step()\n")
    assert checked != program
    result = run_program(checked)
    assert result.clean, f"{result}\n{checked}"


def test_carry_read_for_the_loss_is_detached_at_the_end_of_the_iteration():
    # was `h = cell(x, h).detach()`: the program ran, but the cell never got a gradient
    text = RNN_CELL + "    h = cell(x, h)\n    loss = head(h).pow(2).sum()\n" + STEP
    finding = only(text, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["\n    h = h.detach()"]
    fixed = fixed_with(text, finding)
    assert fixed.endswith("    opt.step()\n    h = h.detach()\n")
    trains(fixed)


def test_carry_not_read_again_is_detached_where_it_is_rebound():
    text = RNN_CELL + "    h_next = cell(x, h)\n    loss = head(h_next).pow(2).sum()\n" + STEP + "    h = h_next\n"
    finding = only(text, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["h_next.detach()"]
    trains(fixed_with(text, finding))


def test_carry_expression_is_parenthesised():
    text = RNN_CELL + ("    h_next = cell(x, h)\n    loss = head(h_next).pow(2).sum()\n" + STEP
                       + "    h = 0.5 * h_next + \\\n        0.5 * h\n")
    finding = only(text, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["(0.5 * h_next + \\\n        0.5 * h).detach()"]
    trains(fixed_with(text, finding))


def test_state_starting_as_none_is_detached_after_the_call():
    # was `lstm(x, tuple(s.detach() for s in state))`: TypeError on the first iteration (state is None)
    text = LSTM + "    out, state = lstm(x, state)\n    loss = out.pow(2).sum()\n" + STEP_RETAIN
    finding = only(text, "GG402")
    assert [e.new_text for e in finding.fix.edits] == ["\n    state = tuple(s.detach() for s in state)"]
    fixed = fixed_with(text, finding)
    trains(fixed)
    assert not [f for f in ENGINE.check(fixed, "t.py").findings]


def test_unpacked_lstm_pair_is_detached_whole_in_one_pass():
    # was `(h.detach().detach().detach().detach().detach(), c)`: no convergence, c kept the graph
    text = LSTM + "    y, (h, c) = lstm(x, (h, c))\n    loss = y.pow(2).sum()\n" + STEP_RETAIN
    finding = only(text, "GG402")
    assert [e.new_text for e in finding.fix.edits] == ["\n    h, c = h.detach(), c.detach()"]
    fixed = fixed_with(text, finding)
    assert not ENGINE.check(fixed, "t.py").findings  # one pass: nothing more to fix
    trains(fixed)


def test_when_a_continue_could_skip_the_end_of_the_body_the_state_is_detached_where_it_is_read():
    text = (RNN_CELL + "    h = cell(x, h)\n    loss = head(h).pow(2).sum()\n" + STEP
            + "    if loss.item() > 1e9:\n        continue\n    print(loss.item())\n")
    finding = only(text, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["h.detach()"]
    fixed = fixed_with(text, finding)
    assert "    h = cell(x, h.detach())\n" in fixed
    assert not ENGINE.check(fixed, "t.py").findings
    trains(fixed)


def test_learned_initial_state_keeps_its_gradient():
    """The initial state is never detached: a learned h0 still gets a gradient from the first iteration."""
    text = ("import torch\nfrom torch import nn\ncell = nn.RNNCell(2, 4)\nhead = nn.Linear(4, 1)\n"
            "h0 = nn.Parameter(torch.zeros(1, 4))\n"
            "opt = torch.optim.SGD([h0, *cell.parameters(), *head.parameters()], lr=0.1)\nh = h0\n"
            "for x in torch.randn(4, 1, 2):\n    h = cell(x, h)\n    loss = head(h).pow(2).sum()\n" + STEP)
    finding = only(text, "GG403")
    fixed = "seen = []\n" + fixed_with(text, finding).replace(
        "    opt.step()\n", "    seen.append(h0.grad is not None)\n    opt.step()\n", 1) + "assert seen[0], seen\n"
    assert run_program(fixed).clean, fixed


# ---------------------------------------------------------------- line endings and BOM through --fix
def _gradguard(*args, stdin: bytes | None = None, cwd=None):
    return subprocess.run([sys.executable, "-m", "gradguard", "check", *args], input=stdin, capture_output=True,
                          cwd=cwd, timeout=120)


MIXED = (b"\xef\xbb\xbfimport torch\r\nfrom torch import nn\n\rcell = nn.RNNCell(2, 4)\r\n"
         b"opt = torch.optim.SGD(cell.parameters(), lr=0.1)\r\nh = torch.zeros(1, 4)\r\n"
         b"for x in torch.randn(3, 1, 2):\r\n    h = cell(x, h)\r\n    loss = h.sum()\n"
         b"    opt.zero_grad()\r\n    loss.backward()\r\n    opt.step()\r\n"
         b"y = torch.randn(3, requires_grad=True).exp()\ny *= y > 0\ny.sum().backward()\r\n")


def _expected_mixed() -> bytes:
    return (MIXED.replace(b"    opt.step()\r\n", b"    opt.step()\r\n    h = h.detach()\r\n")
            .replace(b"y *= y > 0\n", b"y = y * (y > 0)\n"))


def test_fix_keeps_line_endings_and_bom_byte_for_byte(tmp_path):
    target = tmp_path / "train.py"
    target.write_bytes(MIXED)
    _gradguard("--fix", "--unsafe-fixes", str(target), cwd=tmp_path)
    assert target.read_bytes() == _expected_mixed()


def test_fix_through_stdin_keeps_line_endings_and_bom():
    out = _gradguard("--fix", "--unsafe-fixes", "--stdin-filename", "train.py", "-", stdin=MIXED)
    assert out.stdout == _expected_mixed()


def test_list_state_stays_a_list():
    text = RNN_CELL.replace("h = torch.zeros(1, 4)\n", "hs = [torch.zeros(1, 4), torch.zeros(1, 4)]\n") + (
        "    a = cell(x, hs[0])\n    b = cell(x, hs[1])\n    loss = head(a + b).sum()\n" + STEP + "    hs = [a, b]\n")
    finding = only(text, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["[s.detach() for s in [a, b]]"]
    trains(fixed_with(text, finding))


def test_bare_tuple_state_is_parenthesised():
    # `tuple(s.detach() for s in h_n, c_n)` would be a SyntaxError
    text = LSTM.replace("state = None\n", "state = (h, c)\n") + (
        "    out, (h_n, c_n) = lstm(x, state)\n    loss = out.pow(2).sum()\n" + STEP_RETAIN + "    state = h_n, c_n\n")
    finding = only(text, "GG402")
    assert [e.new_text for e in finding.fix.edits] == ["tuple(s.detach() for s in (h_n, c_n))"]
    trains(fixed_with(text, finding))


STATEFUL = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\n\n\nclass Tagger(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.lstm = nn.LSTM(3, 4, batch_first=True)\n"
            "        self.head = nn.Linear(4, 1)\n        self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n\n"
            "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
            "        return self.head(out[:, -1])\n\n\n"
            "model = Tagger()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for x in torch.randn(3, 2, 5, 3):\n    loss = model(x).pow(2).sum()\n" + STEP)


def test_object_state_is_detached_in_the_method_that_rebinds_it():
    """State kept on the module across calls (`self.hidden`): detached right after the method re-binds it."""
    finding = only(STATEFUL, "GG403")
    assert [e.new_text for e in finding.fix.edits] == ["\n        self.hidden = tuple(s.detach() for s in self.hidden)"]
    fixed = fixed_with(STATEFUL, finding)
    assert not ENGINE.check(fixed, "t.py").findings
    trains(fixed)


def test_no_fix_when_the_method_returns_the_state_it_rebinds():
    """The caller may compute its loss from the returned state: detaching it in the method could cut that off."""
    text = STATEFUL.replace("        return self.head(out[:, -1])\n", "        return self.head(out[:, -1]), self.hidden\n")
    text = text.replace("    loss = model(x).pow(2).sum()\n", "    y, _ = model(x)\n    loss = y.pow(2).sum()\n")
    assert only(text, "GG403").fix is None


@pytest.mark.parametrize("write,rewritten", [
    ("F.relu_(h)", "h = F.relu(h)"),  # was `F = F.relu(h)`: re-bound the functional module
    ("torch.relu_(h)", "h = torch.relu(h)"),  # was `torch = torch.relu(h)`
    ("h = torch.relu_(h)", "h = torch.relu(h)"),  # was no fix
    ("F.leaky_relu_(h, 0.1)", "h = F.leaky_relu(h, 0.1)"),
])
def test_function_form_in_place_rewrites_the_tensor_not_the_module(write, rewritten):
    text = ("import torch\nimport torch.nn.functional as F\nx = torch.randn(3, requires_grad=True)\n"
            f"h = torch.sigmoid(x)\n{write}\nh.sum().backward()\n")
    finding = only(text, "GG201")
    assert [e.new_text for e in finding.fix.edits] == [rewritten]
    fixed = fixed_with(text, finding)
    assert run_program(fixed).clean, fixed


# ---------------------------------------------------------------- GG105
def test_no_grad_view_is_built_with_grad_enabled_and_trains_like_both_outside():
    """The fix tracks the view: the program then learns what it does with view and write both outside no_grad."""
    import torch

    from gradguard.rules import EXAMPLES_DIR

    text = (EXAMPLES_DIR / "GG105" / "bad_1_logged_slice.py").read_text()
    finding = only(text, "GG105")
    assert finding.fix.applicability == "unsafe" and "enable_grad" in finding.fix.message
    assert [e.new_text for e in finding.fix.edits] == [
        "    with torch.enable_grad():\n        first_logit = logits[:, 0]"]
    hand = text.replace("with torch.no_grad():\n    first_logit = logits[:, 0]\n",
                        "first_logit = logits[:, 0]\nwith torch.no_grad():\n")
    runs = []
    for code in (fixed_with(text, finding), hand):
        namespace = {"__name__": "__main__"}
        torch.manual_seed(0)
        exec(compile(code, "<p>", "exec"), namespace)
        runs.append((namespace["loss"].item(), namespace["model"].weight.grad.clone()))
    assert runs[0][0] == pytest.approx(runs[1][0], rel=1e-6)
    assert torch.allclose(runs[0][1], runs[1][1], rtol=1e-5)


# ---------------------------------------------------------------- GG501
@pytest.mark.parametrize("name", ["bad_1_smoothed_probs.py", "bad_2_tanh_data_relu.py", "bad_3_exp_rescale.py",
                                  "bad_4_input_normalize_data.py", "bad_5_alias_of_data.py",
                                  "bad_6_scale_before_backward.py"])
def test_data_write_fix_gives_the_gradient_the_program_checks_for(name):
    """Each bad example checks its own gradient against the one of the values it goes on to use, and prints
    "wrong gradient" when they differ: it does, and the fixed program does not."""
    from gradguard.rules import EXAMPLES_DIR

    text = (EXAMPLES_DIR / "GG501" / name).read_text()
    finding = only(text, "GG501")
    assert finding.fix.applicability == "unsafe"
    expected = {"bad_5_alias_of_data.py": ["out.data.clone()"],
                "bad_6_scale_before_backward.py": ["", "x.data *= 10  # <- GG501\n"]}.get(name)
    if expected is None:  # the write goes to a tracked copy
        (edit,) = finding.fix.edits
        assert edit.new_text.split("\n")[0].endswith(".clone()")
    else:  # a copy at the alias; the write moved after backward()
        assert [e.new_text for e in finding.fix.edits] == expected
    assert "wrong gradient" in run_program(text).stdout
    fixed = run_program(fixed_with(text, finding))
    assert fixed.clean and fixed.stdout == "", fixed


def test_a_fix_whose_edits_overlap_is_not_offered_rather_than_garbling_the_line():
    # the fuzzer's GAN with `import torch` spliced away: GG404's detach fix named `self.D(fake)` and the `fake`
    # inside it, and --fix wrote `self.D(fake).detach()detach())`
    from gradguard.engine import check_text
    from gradguard.findings import Edit, edits_overlap
    from gradguard.source import Span

    source = GAN_WITHOUT_TORCH_IMPORT
    report = check_text(source, "gan.py")
    assert [f.code for f in report.findings] == ["GG404"]
    for f in report.findings:
        assert f.fix is None or not edits_overlap(f.fix.edits)
    outer, inner = Edit(Span(14, 22, 14, 34), "a"), Edit(Span(14, 29, 14, 33), "b")
    assert edits_overlap([outer, inner]) and edits_overlap([inner, outer])
    assert not edits_overlap([Edit(Span(14, 22, 14, 29), "a"), Edit(Span(14, 29, 14, 33), "b")])


GAN_WITHOUT_TORCH_IMPORT = '''from torch import nn


class GAN:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
        self.D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.bce = nn.BCEWithLogitsLoss()

    def train_step(self, real):
        fake = self.G(torch.randn(real.size(0), 2))
        d_loss = self.bce(self.D(real), torch.ones(real.size(0), 1)) + \\
            self.bce(self.D(fake), torch.zeros(real.size(0), 1))
        self.opt_d.zero_grad()
        d_loss.backward()
        g_loss = self.bce(self.D(fake), torch.ones(real.size(0), 1))
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_d.step()
        self.opt_g.step()


torch.manual_seed(0)
GAN().train_step(torch.randn(4, 2))
'''
