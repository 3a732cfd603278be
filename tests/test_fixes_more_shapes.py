"""Repairs for shapes the first fixes left without one (issue 19): each bad program raises under torch, the fix is
the exact edit its title names, and the fixed program runs and computes what the hand-written repair computes."""
from __future__ import annotations

import pytest
import torch

from gradguard.engine import Engine
from gradguard.source import Source

ENGINE = Engine()


def only(text: str, code: str):
    found = [f for f in ENGINE.check(text, "t.py").findings if f.code == code]
    assert len(found) == 1, found
    return found[0]


def apply(text: str, fix) -> str:
    source = Source(text)
    out = source.text
    for e in sorted(fix.edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        out = out[:source.offset(e.span.start_line, e.span.start_col)] + e.new_text + out[
            source.offset(e.span.end_line, e.span.end_col):]
    return out


def run(text: str) -> dict:
    ns = {"__name__": "__main__"}
    exec(compile(text, "t.py", "exec"), ns)
    return ns


def raises(text: str) -> None:
    with pytest.raises(RuntimeError, match="modified by an inplace operation|Trying to backward through the graph"):
        run(text)


# ---------------------------------------------------------------- GG201: an unpacked output of a tuple-returning op
EIGH_CLAMPED = """\
import torch

torch.manual_seed(0)


def project_psd(m):
    d, v = torch.linalg.eigh(m)
    for i in range(d.shape[0]):
        if d[i] <= 0:
            d[i] = 1e-6
    return v @ torch.diag(d) @ v.T


a = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
out = project_psd(a + a.T)
out.sum().backward()
"""


def test_an_unpacked_saved_output_is_copied_on_the_next_line():
    raises(EIGH_CLAMPED)
    finding = only(EIGH_CLAMPED, "GG201")
    assert finding.fix.applicability == "safe"
    assert finding.fix.message == "Write a copy of what `eigh` saved: add `d = d.clone()` after line 7"
    fixed = apply(EIGH_CLAMPED, finding.fix)
    assert fixed == EIGH_CLAMPED.replace("    d, v = torch.linalg.eigh(m)\n",
                                         "    d, v = torch.linalg.eigh(m)\n    d = d.clone()\n")
    ns = run(fixed)
    hand = run(EIGH_CLAMPED.replace("    for i in range(d.shape[0]):\n        if d[i] <= 0:\n            d[i] = 1e-6\n",
                                    "    d = d.clamp(min=1e-6)\n"))
    assert torch.allclose(ns["out"], hand["out"]) and torch.allclose(ns["a"].grad, hand["a"].grad)


# ---------------------------------------------------------------- GG201: a helper saving the state it later updates
ROLLING_STATE = """\
import torch

torch.manual_seed(0)


def conv_step(x, state, weight):
    state.copy_(torch.roll(state, shifts=-1, dims=1))
    state[:, -1:, :] = x
    y = torch.sum(state * weight, dim=1, keepdim=True)
    return y, state


w = torch.randn(3, 2, requires_grad=True)
state = torch.zeros(1, 3, 2)
loss = 0.0
for t in range(3):
    y, state = conv_step(torch.randn(1, 1, 2), state, w)
    loss = loss + y.pow(2).sum()
loss.backward()
"""


def test_a_state_the_helper_saves_and_then_updates_is_read_through_a_copy_where_it_is_saved():
    raises(ROLLING_STATE)
    finding = only(ROLLING_STATE, "GG201")
    assert finding.fix.applicability == "safe"
    assert finding.fix.message == "Let `*` save a copy: `state.clone()`"
    fixed = apply(ROLLING_STATE, finding.fix)
    assert fixed == ROLLING_STATE.replace("torch.sum(state * weight", "torch.sum(state.clone() * weight")
    ns = run(fixed)
    hand = run(ROLLING_STATE.replace(
        "    state.copy_(torch.roll(state, shifts=-1, dims=1))\n    state[:, -1:, :] = x\n",
        "    state = torch.cat([torch.roll(state, shifts=-1, dims=1)[:, :-1, :], x], dim=1)\n"))
    assert torch.allclose(ns["loss"], hand["loss"]) and torch.allclose(ns["w"].grad, hand["w"].grad)


SQUARED_LOOP_ITEM = """\
import torch

ts = [torch.rand(3, requires_grad=True) * 1 for _ in range(2)]
out = []
for t in ts:
    y = t * t
    t /= t.sum()
    out.append(y)
sum(o.sum() for o in out).backward()
"""


def test_both_operands_copied_are_named_once_in_the_title():
    raises(SQUARED_LOOP_ITEM)
    finding = only(SQUARED_LOOP_ITEM, "GG201")
    assert finding.fix.applicability == "safe"
    assert finding.fix.message == "Let `*` save a copy: `t.clone()`"  # was "`t.clone()`, `t.clone()`"
    fixed = apply(SQUARED_LOOP_ITEM, finding.fix)
    assert fixed == SQUARED_LOOP_ITEM.replace("y = t * t", "y = t.clone() * t.clone()")
    ns = run(fixed)
    # The loop items are still normalised in place, as before the fix (the list sees it), and y is t*t before it.
    assert all(torch.allclose(t.sum(), torch.tensor(1.0)) for t in ns["ts"])


# ---------------------------------------------------------------- GG404: a sum that starts from the freed one
SAM_TWO_PASSES = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
x, y = torch.randn(4, 3), torch.randn(4, 2)
losses = []
out = model(x)
loss = 0
for t in range(2):
    loss += (out[:, t] - y[:, t]).pow(2).mean()
loss.backward()
with torch.no_grad():
    for p in model.parameters():
        p.add_(0.05 * p.grad / (p.grad.norm() + 1e-12))
out = model(x)
for t in range(2):
    loss += (out[:, t] - y[:, t]).pow(2).mean()
loss.backward()
losses.append(loss.item())
"""


def test_a_second_sum_that_starts_from_the_first_starts_again():
    raises(SAM_TWO_PASSES)
    finding = only(SAM_TWO_PASSES, "GG404")
    assert finding.fix.applicability == "unsafe"
    assert finding.fix.message == (
        "Start `loss` again before line 17: `loss = 0` (unsafe: the second backward no longer includes the terms "
        "the first one already back-propagated)")
    fixed = apply(SAM_TWO_PASSES, finding.fix)
    assert fixed == SAM_TWO_PASSES.replace("out = model(x)\nfor t in range(2):\n    loss += (out[:, t] - y[:, t]).pow(2)"
                                           ".mean()\nloss.backward()\nlosses",
                                           "out = model(x)\nloss = 0\nfor t in range(2):\n    loss += (out[:, t] - y[:, t])"
                                           ".pow(2).mean()\nloss.backward()\nlosses")
    ns = run(fixed)
    with torch.no_grad():
        second = (ns["model"](ns["x"]) - ns["y"]).pow(2).mean(0).sum()
    assert ns["losses"] == [pytest.approx(second.item(), rel=1e-6)]


def test_a_sum_that_starts_from_a_loss_term_is_not_restarted():
    text = SAM_TWO_PASSES.replace("loss = 0\nfor t in range(2):\n    loss += (out[:, t] - y[:, t]).pow(2).mean()\n"
                                  "loss.backward()\nwith",
                                  "loss = (out[:, 0] - y[:, 0]).pow(2).mean()\nloss.backward()\nwith")
    raises(text)
    finding = only(text, "GG404")
    assert finding.fix is None or not finding.fix.message.startswith("Start `loss` again")


# ---------------------------------------------------------------- GG502: a fused step before a later backward
FUSED_GAN = (__import__("pathlib").Path(__file__).resolve().parents[1]
             / "server/gradguard/rules/examples/GG502/bad_2_gan_fused_adam.py").read_text(encoding="utf-8")


def _g_grad(text: str) -> torch.Tensor:
    ns = run(text.split("\n# G's gradient")[0])
    return ns["G"][0].weight.grad


def test_a_fused_step_gets_gradient_through_the_new_weights_as_the_textbook_loop():
    finding = only(FUSED_GAN, "GG502")
    assert finding.fix.message == (
        "Recompute line 12 after `opt_d.step()` and give the step's own loss `fake.detach()` (unsafe: the later "
        "backward's gradient is the one at the new weights; dropout and BatchNorm statistics run again)")
    fixed = apply(FUSED_GAN, finding.fix)
    assert fixed == FUSED_GAN.replace("d_fake = D(fake)\n", "d_fake = D(fake.detach())\n", 1).replace(
        "opt_d.step()  # <- GG502\n", "opt_d.step()  # <- GG502\nd_fake = D(fake)\n")
    textbook = FUSED_GAN.replace("d_fake = D(fake)\nd_loss = bce(D(real), ones) + bce(d_fake, zeros)\n",
                                 "d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)\n").replace(
        "g_loss = bce(d_fake, ones)\n", "g_loss = bce(D(fake), ones)\n")
    assert torch.allclose(_g_grad(fixed), _g_grad(textbook), rtol=1e-6, atol=1e-7)
    # the bad program's gradient is silently another one: what the fix changes
    assert not torch.allclose(_g_grad(FUSED_GAN), _g_grad(textbook), rtol=1e-4, atol=1e-6)


def test_dropping_fused_would_not_repair_it_the_same_program_raises_with_foreach():
    raises(FUSED_GAN.replace(", fused=True", ", foreach=True"))
    raises(FUSED_GAN.replace(", fused=True", ", foreach=False"))


FUSED_CARRY = """\
import torch
from torch import nn

torch.manual_seed(0)
w_ih, w_hh = nn.Linear(2, 4), nn.Linear(4, 4, bias=False)
opt = torch.optim.SGD([*w_ih.parameters(), *w_hh.parameters()], lr=0.5, fused=True)
xs = torch.randn(3, 1, 2)
h = torch.zeros(1, 4)
for t in range(3):
    h_next = torch.tanh(w_ih(xs[t]) + w_hh(h))
    loss = h_next.pow(2).sum()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    h = h_next
"""


def test_a_fused_step_with_carried_state_carries_it_detached():
    finding = only(FUSED_CARRY, "GG502")
    assert finding.fix.message == "Carry `h_next.detach()` (unsafe: cuts the graph, no gradient into earlier iterations)"
    fixed = apply(FUSED_CARRY, finding.fix)
    assert fixed == FUSED_CARRY.replace("    h = h_next\n", "    h = h_next.detach()\n")
    ns = run(fixed)
    hand = run(FUSED_CARRY.replace("fused=True", "fused=False").replace("    h = h_next\n", "    h = h_next.detach()\n"))
    assert torch.allclose(ns["w_hh"].weight, hand["w_hh"].weight, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- GG401: a loop stepping what an earlier loop built
SINGAN_LOOPS = """\
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)
noise, real = torch.randn(8, 4), torch.randn(8, 2)
for j in range(2):
    D.zero_grad()
    fake = G(noise)
    (D(fake.detach()).mean() - D(real).mean()).backward()
    opt_d.step()
for j in range(3):
    G.zero_grad()
    err_g = -D(fake).mean()
    err_g.backward(retain_graph=True)
    opt_g.step()
"""


def test_a_forward_from_an_earlier_loop_is_copied_to_the_top_of_the_loop_that_steps_it():
    raises(SINGAN_LOOPS)
    finding = only(SINGAN_LOOPS, "GG401")
    assert finding.fix.message == (
        "Copy line 11 to the top of the loop on line 14 (unsafe: every pass runs that forward again, from the "
        "current weights; dropout and BatchNorm statistics run again)")
    fixed = apply(SINGAN_LOOPS, finding.fix)
    assert fixed == SINGAN_LOOPS.replace("for j in range(3):\n", "for j in range(3):\n    fake = G(noise)\n")
    run(fixed)


def test_a_forward_whose_input_the_loop_changes_is_not_copied():
    text = SINGAN_LOOPS.replace("    opt_g.step()\n", "    opt_g.step()\n    noise = noise * 0.5\n")
    raises(text)
    fix = only(text, "GG401").fix
    assert fix is None or "to the top of the loop" not in fix.message


# ---------------------------------------------------------------- GG401: a graph built in __init__ and kept
KEPT_FROM_INIT = """\
import torch
from torch import nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Sequential(nn.Embedding(10, 4), nn.LayerNorm(4))
        self.head = nn.Linear(4, 1)
        self.mask_e = self.embed(torch.tensor([3]))

    def forward(self, ids):
        return self.head(self.embed(ids) + self.mask_e)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = model(torch.randint(0, 10, (5,))).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
"""


def test_a_value_computed_in_init_and_kept_is_detached_where_it_is_made_not_rebuilt_in_the_loop():
    raises(KEPT_FROM_INIT)
    finding = only(KEPT_FROM_INIT, "GG401")
    assert finding.fix.message == ("Keep `self.embed(torch.tensor([3])).detach()` (unsafe: the forward no longer "
                                   "trains what computed it in `__init__`)")
    fixed = apply(KEPT_FROM_INIT, finding.fix)
    assert fixed == KEPT_FROM_INIT.replace("self.mask_e = self.embed(torch.tensor([3]))",
                                           "self.mask_e = self.embed(torch.tensor([3])).detach()")
    assert "model = Net()" not in fixed.split("for step in range(2):")[1]
    run(fixed)


# ---------------------------------------------------------------- GG403: tuple state kept on the object
STATE_ON_OBJECT = """\
import torch
from torch import nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.lstm = nn.LSTM(4, 4, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out = self.proj(x)
        out, self.hidden = self.lstm(out, self.hidden)
        return out[:, -1]


model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 5, 3)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_tuple_state_on_the_object_is_detached_after_the_line_that_rebinds_it_even_beside_a_local():
    raises(STATE_ON_OBJECT)
    finding = only(STATE_ON_OBJECT, "GG403")
    assert finding.fix.message == ("Add `self.hidden = tuple(s.detach() for s in self.hidden)` after line 16 (unsafe: "
                                   "cuts the graph, no gradient into earlier iterations)")
    fixed = apply(STATE_ON_OBJECT, finding.fix)
    assert fixed == STATE_ON_OBJECT.replace(
        "        out, self.hidden = self.lstm(out, self.hidden)\n",
        "        out, self.hidden = self.lstm(out, self.hidden)\n"
        "        self.hidden = tuple(s.detach() for s in self.hidden)\n")
    run(fixed)


# ---------------------------------------------------------------- GG502: the fused update moved after the later one
FUSED_Q_FIRST = """\
import copy

import torch
from torch import nn

torch.manual_seed(0)
policy, qf = nn.Linear(5, 2), nn.Sequential(nn.Linear(7, 16), nn.ReLU(), nn.Linear(16, 1))
policy_ref, qf_ref = copy.deepcopy(policy), copy.deepcopy(qf)
opt_p = torch.optim.Adam(policy.parameters(), lr=3e-4)
opt_q = torch.optim.Adam(qf.parameters(), lr=1e-1, fused=True)
obs, act, rew = torch.randn(16, 5), torch.rand(16, 2), torch.randn(16, 1)
policy_loss = -qf(torch.cat([obs, torch.tanh(policy(obs))], 1)).mean()
q_loss = (qf(torch.cat([obs, act], 1)) - rew).pow(2).mean()
opt_q.zero_grad()
q_loss.backward()
opt_q.step()
opt_p.zero_grad()
policy_loss.backward()
opt_p.step()
"""


def test_a_fused_update_before_a_backward_through_its_weights_moves_after_the_later_update():
    finding = only(FUSED_Q_FIRST, "GG502")
    assert finding.fix.message == ("Move lines 14-16 (the update of `opt_q`) after line 19 (unsafe: the two updates "
                                   "run in the other order)")
    fixed = apply(FUSED_Q_FIRST, finding.fix)
    assert fixed == FUSED_Q_FIRST.replace("opt_q.zero_grad()\nq_loss.backward()\nopt_q.step()\n", "").replace(
        "opt_p.step()\n", "opt_p.step()\nopt_q.zero_grad()\nq_loss.backward()\nopt_q.step()\n")
    ns = run(fixed)
    # the policy's gradient is the one through Q's weights as the policy loss's graph saved them
    (-ns["qf_ref"](torch.cat([ns["obs"], torch.tanh(ns["policy_ref"](ns["obs"]))], 1)).mean()).backward()
    moved = run(fixed.replace("opt_p.step()\n", "grads = [p.grad.clone() for p in policy.parameters()]\nopt_p.step()\n"))
    assert all(torch.allclose(g, r.grad, atol=1e-6) for g, r in zip(moved["grads"], ns["policy_ref"].parameters()))
    # and Q's update is its own loss's alone: the moved zero_grad() clears what the policy's backward left there
    hand = run(FUSED_Q_FIRST.replace(", fused=True", "").replace(
        "opt_q.zero_grad()\nq_loss.backward()\nopt_q.step()\nopt_p.zero_grad()\npolicy_loss.backward()\nopt_p.step()\n",
        "opt_p.zero_grad()\npolicy_loss.backward()\nopt_p.step()\nopt_q.zero_grad()\nq_loss.backward()\nopt_q.step()\n"))
    for a, b in zip(ns["qf"].parameters(), hand["qf"].parameters()):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- GG201: an attribute updated in place
KALMAN = """\
import torch
from torch import nn

torch.manual_seed(0)


class Filter(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_r = nn.Parameter(torch.zeros(2))
        self.P = torch.eye(2)

    def update(self):
        K = self.P @ torch.linalg.inv(self.P + torch.diag(self.log_r.exp()))
        self.P -= K @ self.P

    def forward(self, steps):
        self.P = torch.eye(2)
        for _ in range(steps):
            self.update()
        return self.P.sum()


kf = Filter()
kf(3).backward()
"""


def test_an_attribute_updated_in_place_is_rebound_out_of_place_and_says_why_it_is_unsafe():
    raises(KALMAN)
    finding = only(KALMAN, "GG201")
    assert finding.fix.applicability == "unsafe"
    assert finding.fix.message == ("Rewrite as `self.P = self.P - K @ self.P` (unsafe: `self.P` is an attribute, and "
                                   "other references to its tensor would keep the old values)")
    fixed = apply(KALMAN, finding.fix)
    assert fixed == KALMAN.replace("self.P -= K @ self.P", "self.P = self.P - K @ self.P")
    assert run(fixed)["kf"].log_r.grad is not None


# ---------------------------------------------------------------- GG501: a `.data` write inside a helper
WGAN_CLIP = """\
import torch
from torch import nn

torch.manual_seed(0)


def clip_weights(net, lower, upper):
    for p in net.parameters():
        p.data.clamp_(lower, upper)


net_d = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_d = torch.optim.RMSprop(net_d.parameters(), lr=5e-5)
real, fake = torch.randn(8, 2) + 2, torch.randn(8, 2)
err_d = net_d(fake).mean() - net_d(real).mean()
clip_weights(net_d, -0.05, 0.05)
opt_d.zero_grad()
err_d.backward()
opt_d.step()
"""


def test_a_data_write_inside_a_helper_moves_as_the_call_of_that_helper():
    finding = only(WGAN_CLIP, "GG501")
    assert finding.fix.message.startswith(
        "Move `clip_weights(net_d, -0.05, 0.05)` after the `backward()` on line 18 (unsafe: the forward's gradient")
    fixed = apply(WGAN_CLIP, finding.fix)
    assert fixed == WGAN_CLIP.replace("clip_weights(net_d, -0.05, 0.05)\n", "").replace(
        "err_d.backward()\n", "err_d.backward()\nclip_weights(net_d, -0.05, 0.05)\n")
    ns = run(fixed)
    # the gradient is the one at the weights the forward used: an unclipped copy gives the same
    ref = run(WGAN_CLIP.replace("clip_weights(net_d, -0.05, 0.05)\n", "").replace("opt_d.step()\n", ""))
    for p, q in zip(ns["net_d"].parameters(), ref["net_d"].parameters()):
        assert torch.allclose(p.grad, q.grad)


# ---------------------------------------------------------------- GG404: a term back-propagated before its total
TERM_TWICE = """\
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
enc, dec, disc = nn.Linear(6, 4), nn.Linear(4, 6), nn.Linear(6, 2)
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-3)
x, c = torch.randn(3, 6), torch.tensor([0, 1, 1])
recon = dec(torch.tanh(enc(x)))
recon_loss = (recon - x).pow(2).mean()
attr_loss = F.cross_entropy(disc(recon), c)
opt.zero_grad()
attr_loss.backward()
total = recon_loss + 0.1 * attr_loss
total.backward()
opt.step()
"""


def test_a_backward_of_a_term_the_total_adds_again_is_removed():
    raises(TERM_TWICE)
    finding = only(TERM_TWICE, "GG404")
    assert finding.fix.message == ("Remove `attr_loss.backward()` on line 13: `total` already adds `attr_loss` "
                                   "(unsafe: its gradient is no longer counted twice)")
    fixed = apply(TERM_TWICE, finding.fix)
    assert fixed == TERM_TWICE.replace("attr_loss.backward()\n", "")
    run(fixed)


# ---------------------------------------------------------------- GG404: a value from an untrained graph, every pass
PPO_OLD_LOGPROBS = """\
import torch
from torch import nn
from torch.distributions import Categorical

torch.manual_seed(0)


class Memory:
    def __init__(self):
        self.states, self.actions, self.logprobs = [], [], []


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2), nn.Softmax(dim=-1))

    def act(self, state, memory):
        dist = Categorical(self.layer(state))
        action = dist.sample()
        memory.states.append(state)
        memory.actions.append(action)
        memory.logprobs.append(dist.log_prob(action))
        return action.item()


class PPO:
    def __init__(self):
        self.policy, self.policy_old = Policy(), Policy()
        self.policy_old.load_state_dict(self.policy.state_dict())
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-3)

    def update(self, memory):
        states, actions = torch.stack(memory.states), torch.stack(memory.actions)
        old_logprobs = torch.stack(memory.logprobs)
        for _ in range(3):
            logprobs = Categorical(self.policy.layer(states)).log_prob(actions)
            loss = -torch.exp(logprobs - old_logprobs).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


ppo, memory = PPO(), Memory()
for t in range(6):
    ppo.policy_old.act(torch.randn(4), memory)
ppo.update(memory)
"""


def test_a_value_from_a_graph_no_optimizer_trains_is_read_detached_before_the_loop():
    raises(PPO_OLD_LOGPROBS)
    finding = only(PPO_OLD_LOGPROBS, "GG404")
    assert finding.fix.message == (
        "Read it as a constant in every iteration: `torch.stack(memory.logprobs).detach()` (unsafe: nothing "
        "back-propagates into what computed it; no optimizer trains that)")
    fixed = apply(PPO_OLD_LOGPROBS, finding.fix)
    assert fixed == PPO_OLD_LOGPROBS.replace("old_logprobs = torch.stack(memory.logprobs)\n",
                                             "old_logprobs = torch.stack(memory.logprobs).detach()\n")
    run(fixed)


def test_a_value_from_a_trained_graph_is_not_detached_before_the_loop():
    text = PPO_OLD_LOGPROBS.replace("torch.optim.Adam(self.policy.parameters(), lr=1e-3)",
                                    "torch.optim.Adam([*self.policy.parameters(), *self.policy_old.parameters()], lr=1e-3)")
    raises(text)
    fix = only(text, "GG404").fix
    assert fix is None or "Read it as a constant" not in fix.message


# ---------------------------------------------------------------- GG403: a literal nest of state on the object
NESTED_STATE = STATE_ON_OBJECT.replace(
    "        out, self.hidden = self.lstm(out, self.hidden)\n        return out[:, -1]\n",
    "        h, c = (None, None) if self.hidden is None else self.hidden[0]\n"
    "        out, (h, c) = self.lstm(out, None if h is None else (h, c))\n"
    "        self.hidden = [(h, c)]\n        return out[:, -1] + h[-1]\n")


def test_state_kept_as_a_literal_nest_is_detached_leaf_by_leaf_and_the_loss_keeps_its_graph():
    raises(NESTED_STATE)
    finding = only(NESTED_STATE, "GG403")
    assert finding.fix.message == "Carry `[(h.detach(), c.detach())]` (unsafe: cuts the graph, no gradient into earlier iterations)"
    fixed = apply(NESTED_STATE, finding.fix)
    assert fixed == NESTED_STATE.replace("self.hidden = [(h, c)]", "self.hidden = [(h.detach(), c.detach())]")
    ns = run(fixed)
    assert ns["model"].lstm.weight_hh_l0.grad is not None  # `h[-1]` in the loss still reaches the LSTM


# ---------------------------------------------------------------- GG103: a loop item of unbind written through a view
PATCH_BRIGHTNESS = """\
import torch

torch.manual_seed(0)
w = torch.randn(2, 3, 8, 8, requires_grad=True)
images = torch.tanh(w) * 1.0
brightness = torch.rand(2) + 0.5
out = []
for i, img in enumerate(images.unbind(0)):
    patch = img[:, 1:4, 2:5]
    patch.mul_(brightness[i])
    out.append(img)
torch.stack(out).sum().backward()
"""


def test_an_unbound_loop_item_written_through_a_view_is_copied_at_the_top_of_the_loop():
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        run(PATCH_BRIGHTNESS)
    finding = only(PATCH_BRIGHTNESS, "GG103")
    assert finding.fix.message == (
        "Add `img = img.clone()` at the top of the loop (unsafe: the tensor it was split from is no longer modified; "
        "the item and what is built from it are)")
    fixed = apply(PATCH_BRIGHTNESS, finding.fix)
    assert fixed == PATCH_BRIGHTNESS.replace("    patch = img[", "    img = img.clone()\n    patch = img[")
    ns = run(fixed)
    mask = torch.ones(2, 3, 8, 8)
    mask[:, :, 1:4, 2:5] = ns["brightness"].view(-1, 1, 1, 1)
    w = ns["w"].detach().clone().requires_grad_()
    (torch.tanh(w) * mask).sum().backward()
    assert torch.allclose(ns["w"].grad, w.grad)


# ---------------------------------------------------------------- GG102: a functional update helper writing a leaf
SLICE_UPDATE = """\
import torch

torch.manual_seed(0)


def slice_update(inputs, start, updates):
    idx = tuple(slice(s, s + n) for s, n in zip(start, updates.shape))
    inputs[idx] = updates
    return inputs


kernel = torch.nn.Parameter(torch.zeros(4, 4))
cache = slice_update(kernel, [1, 1], torch.ones(2, 2))
cache.sum().backward()
"""


def test_a_helper_returning_the_leaf_it_writes_writes_a_copy_when_its_callers_keep_the_result_apart():
    raises_leaf = pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad")
    with raises_leaf:
        run(SLICE_UPDATE)
    finding = only(SLICE_UPDATE, "GG102")
    assert finding.fix.message == (
        "Write into a copy: add `inputs = inputs.clone()` before line 8 (unsafe: the tensor passed to `slice_update` "
        "is no longer modified; it returns the written copy)")
    fixed = apply(SLICE_UPDATE, finding.fix)
    assert fixed == SLICE_UPDATE.replace("    inputs[idx] = updates\n", "    inputs = inputs.clone()\n    inputs[idx] = updates\n")
    ns = run(fixed)
    assert torch.equal(ns["kernel"].detach(), torch.zeros(4, 4))  # the parameter is left alone
    expected = torch.ones(4, 4)
    expected[1:3, 1:3] = 0  # the written slice no longer depends on the kernel
    assert torch.equal(ns["kernel"].grad, expected)


def test_a_helper_whose_caller_rebinds_what_it_passed_keeps_the_no_grad_write():
    text = SLICE_UPDATE.replace("cache = slice_update(kernel, [1, 1], torch.ones(2, 2))\ncache.sum().backward()\n",
                                "kernel = slice_update(kernel, [1, 1], torch.ones(2, 2))\n")
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        run(text)
    assert only(text, "GG102").fix.message.startswith("Do the write under `torch.no_grad()`")


# ---------------------------------------------------------------- GG404: a snapshot the loop compares with
PPO_SNAPSHOT = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(4, 3)
opt = torch.optim.SGD(policy.parameters(), lr=0.1)
states = torch.randn(8, 4)
advantage = torch.randn(8, 3)
old = policy(states).log_softmax(-1)
losses = []
for epoch in range(3):
    new = policy(states).log_softmax(-1)
    loss = -((new - old).exp() * advantage).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
"""


def test_a_value_the_loop_computes_again_from_the_same_inputs_is_read_detached_not_recomputed():
    """PPO's old log-probs: moving `old = policy(states)...` into the loop would make it equal to `new`, so the
    ratio would be 1 in every epoch; the hand fix computes it under no_grad, and the fix reads it detached."""
    raises(PPO_SNAPSHOT)
    finding = only(PPO_SNAPSHOT, "GG404")
    assert finding.fix.applicability == "unsafe"
    assert finding.fix.message.startswith("Read `old.detach()` in the loop (unsafe: ")
    fixed = apply(PPO_SNAPSHOT, finding.fix)
    assert fixed == PPO_SNAPSHOT.replace("(new - old).exp()", "(new - old.detach()).exp()")
    hand = run(PPO_SNAPSHOT.replace("old = policy(states).log_softmax(-1)",
                                    "with torch.no_grad():\n    old = policy(states).log_softmax(-1)"))
    ours = run(fixed)
    assert ours["losses"] == pytest.approx(hand["losses"], rel=1e-5)
    assert torch.allclose(ours["policy"].weight, hand["policy"].weight)
    # The claim in GG404's docs: moved into the loop, `old` equals `new` and the ratio is 1 in every epoch.
    moved = run(PPO_SNAPSHOT.replace("old = policy(states).log_softmax(-1)\n", "").replace(
        "    new = policy(states).log_softmax(-1)\n",
        "    old = policy(states).log_softmax(-1)\n    new = policy(states).log_softmax(-1)\n"
        "    assert torch.equal((new - old).exp(), torch.ones_like(new))\n"))
    assert len(moved["losses"]) == 3


def test_a_snapshot_the_loop_compares_with_on_minibatches_is_read_detached():
    """PPO over minibatches of one rollout (chainerrl's shape): the loop runs the policy on rows of the same states
    (`states[idx]`); copying the forward (and the sampling before it) into the loop trained on a new rollout every
    minibatch. The value before the loop is a snapshot, read detached, as the hand fix's `.detach()` at the source."""
    text = PPO_SNAPSHOT.replace("for epoch in range(3):\n", "for epoch in range(3):\n    idx = torch.randperm(8)[:4]\n"
                                ).replace("new = policy(states)", "new = policy(states[idx])").replace(
        "(new - old).exp() * advantage", "(new - old[idx]).exp() * advantage[idx]")
    raises(text)
    finding = only(text, "GG404")
    assert finding.fix.message.startswith("Read `old.detach()` in the loop (unsafe: "), finding.fix.message
    fixed = apply(text, finding.fix)
    assert fixed == text.replace("(new - old[idx])", "(new - old.detach()[idx])")
    hand = run(text.replace("old = policy(states).log_softmax(-1)", "old = policy(states).log_softmax(-1).detach()"))
    ours = run(fixed)
    assert ours["losses"] == pytest.approx(hand["losses"], rel=1e-5)
    assert torch.allclose(ours["policy"].weight, hand["policy"].weight)


PPO_EACH_UPDATE = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Linear(4, 3)
critic = nn.Linear(4, 1)
opt = torch.optim.SGD([*actor.parameters(), *critic.parameters()], lr=0.1)
losses = []
for update in range(2):
    states, actions, returns = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8)
    values = critic(states).squeeze(-1)
    advantages = returns - values
    for epoch in range(2):
        logp = actor(states).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
        value_loss = (critic(states).squeeze(-1) - returns).pow(2).mean()
        loss = -(logp * advantages).mean() + value_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
"""


def test_a_snapshot_made_again_in_every_update_is_read_detached():
    """MAPPO's shape: the critic's values (and the advantages from them) are computed before the mini-epochs of
    every update, and the mini-epochs run the critic again on the same states for its own loss. The Facts keep the
    last update's values, whose saves are the same ops' saves of another pass: they count as the snapshot's, and
    the advantages are read detached instead of moving the critic's forward into the mini-epochs (which trained the
    critic through the policy loss, against the hand fix's `.detach()`)."""
    raises(PPO_EACH_UPDATE)
    finding = only(PPO_EACH_UPDATE, "GG404")
    assert finding.fix.message.startswith("Read `advantages.detach()` in the loop (unsafe: "), finding.fix.message
    fixed = apply(PPO_EACH_UPDATE, finding.fix)
    assert fixed == PPO_EACH_UPDATE.replace("(logp * advantages)", "(logp * advantages.detach())")
    hand = run(PPO_EACH_UPDATE.replace("advantages = returns - values", "advantages = (returns - values).detach()"))
    ours = run(fixed)
    assert ours["losses"] == pytest.approx(hand["losses"], rel=1e-5)
    assert torch.allclose(ours["critic"].weight, hand["critic"].weight)


def test_a_forward_the_loop_runs_on_other_inputs_is_still_recomputed_in_the_loop():
    """Near miss: the loop runs the same policy on other states, so the value before the loop is not a snapshot
    of it; the forward moves into the loop as before."""
    other = PPO_SNAPSHOT.replace("new = policy(states)", "new = policy(states.flip(0))")
    raises(other)
    finding = only(other, "GG404")
    assert finding.fix.message.startswith("Move line 9 into the loop on line 11"), finding.fix.message
