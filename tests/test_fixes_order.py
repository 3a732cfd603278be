"""GG401's repair, exactly: after `step()`, recompute the forward the later backward needs, and detach what crosses
into the stepped model for its own loss. One edit per repair; the fixed GAN trains like the textbook loop."""
from __future__ import annotations

import torch

from gradguard.checking import check_one
from gradguard.config import Config
from gradguard.engine import Engine
from gradguard.source import Source

ENGINE = Engine()

GAN_LOOP = """\
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(8, 2)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
for step in range(3):
    fake = G(torch.randn(8, 4))
{body}"""

GAN_BUG = GAN_LOOP.format(body="""\
    d_fake = D(fake)  # D's verdict on the fakes
    d_loss = bce(D(real), ones) + bce(d_fake, zeros)
    g_loss = bce(d_fake, ones)
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""")

# The loop as the PyTorch DCGAN example writes it.
GAN_TEXTBOOK = GAN_LOOP.format(body="""\
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""")


def gg401(text: str):
    found = [f for f in ENGINE.check(text, "t.py").findings if f.code == "GG401"]
    assert len(found) == 1, found
    return found[0]


def apply(text: str, fix) -> str:
    source = Source(text)
    out = source.text
    for e in sorted(fix.edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        out = out[:source.offset(e.span.start_line, e.span.start_col)] + e.new_text + out[
            source.offset(e.span.end_line, e.span.end_col):]
    return out


def trained(text: str) -> dict:
    ns = {"__name__": "__main__"}
    exec(compile(text, "t.py", "exec"), ns)
    return {f"{m}.{k}": v.detach().clone() for m in ("G", "D") for k, v in ns[m].state_dict().items()}


def test_gan_discriminator_first_is_detached_for_d_and_recomputed_for_g():
    finding = gg401(GAN_BUG)
    assert finding.message == (
        "`opt_d.step()` (line 19) modifies the parameters of `nn.Linear` in place, but the graph built on line 14 "
        "saved them and `backward()` on line 21 still needs it. Recompute lines 14 and 16 after the step, and detach "
        "what crosses into the stepped model for its own loss (`fake.detach()`). Moving that backward before the "
        "step instead would make the step use its gradient too.")
    fix = finding.fix
    assert fix.applicability == "unsafe"
    assert fix.message == ("Recompute lines 14 and 16 after `opt_d.step()` and give the step's own loss "
                           "`fake.detach()` (unsafe: the recomputed forward sees the new weights; dropout and "
                           "BatchNorm statistics run again)")
    assert len(fix.edits) == 1  # one code action carries the whole repair
    assert apply(GAN_BUG, fix) == GAN_LOOP.format(body="""\
    d_fake = D(fake.detach())  # D's verdict on the fakes
    d_loss = bce(D(real), ones) + bce(d_fake, zeros)
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    d_fake = D(fake)  # D's verdict on the fakes
    g_loss = bce(d_fake, ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""")


def test_fixed_gan_trains_like_the_textbook_loop():
    fixed = trained(apply(GAN_BUG, gg401(GAN_BUG).fix))
    textbook = trained(GAN_TEXTBOOK)
    assert fixed.keys() == textbook.keys()
    for name, value in textbook.items():
        assert torch.allclose(fixed[name], value, rtol=1e-6, atol=1e-7), name


GENERATOR_FIRST = """\
import torch
from torch import nn

torch.manual_seed(0)
G, D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)), nn.Linear(2, 1)
opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)
for step in range(2):
    fake = G(torch.randn(8, 4))
    d_fake = D(fake)
    g_loss = -d_fake.mean()
    d_loss = d_fake.mean() - D(torch.randn(8, 2)).mean()
    opt_g.zero_grad()
    g_loss.backward(retain_graph=True)
    opt_g.step()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
"""


def test_generator_first_reads_the_fakes_detached_instead_of_running_g_again():
    fix = gg401(GENERATOR_FIRST).fix
    assert fix.message == ("Recompute lines 9 and 11 after `opt_g.step()` from `fake.detach()` (unsafe: the later "
                           "loss no longer back-propagates into the model that just stepped)")
    fixed = apply(GENERATOR_FIRST, fix)
    assert fixed == GENERATOR_FIRST.replace(
        "    d_loss = d_fake.mean() - D(torch.randn(8, 2)).mean()\n", "").replace(
        "    opt_g.step()\n", "    opt_g.step()\n    d_fake = D(fake.detach())\n"
        "    d_loss = d_fake.mean() - D(torch.randn(8, 2)).mean()\n")
    result = check_one("t.py", GENERATOR_FIRST, Config(), "en", "unsafe", 10**7)
    assert result.fixed_text == fixed and not [f for f in result.findings if f.code.startswith("GG4")]
    exec(compile(fixed, "t.py", "exec"), {"__name__": "__main__"})


ACTOR_CRITIC = """\
import torch
from torch import nn


def update(actor, critic, actor_opt, critic_opt, obs, target):
    q = critic(torch.cat([obs, actor(obs).detach()], 1))
    critic_loss = (q - target).pow(2).mean()
    actor_loss = -critic(torch.cat([obs, actor(obs)], 1)).mean()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()


torch.manual_seed(0)
actor, critic = nn.Linear(3, 2), nn.Linear(5, 1)
update(actor, critic, torch.optim.SGD(actor.parameters(), lr=0.1), torch.optim.SGD(critic.parameters(), lr=0.1),
       torch.randn(4, 3), torch.randn(4, 1))
"""


def test_actor_loss_that_nothing_before_the_step_reads_is_moved_after_it():
    fix = gg401(ACTOR_CRITIC).fix
    line = "    actor_loss = -critic(torch.cat([obs, actor(obs)], 1)).mean()\n"
    assert apply(ACTOR_CRITIC, fix) == ACTOR_CRITIC.replace(line, "").replace(
        "    critic_opt.step()\n", "    critic_opt.step()\n" + line)


HELPER_STEP = """\
import torch
from torch import nn


def step_d(opt, loss):
    loss.backward(retain_graph=True)
    opt.step()


torch.manual_seed(0)
G, D = nn.Linear(4, 2), nn.Linear(2, 1)
opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)
fake = G(torch.randn(8, 4))
d_fake = D(fake)
step_d(opt_d, d_fake.mean())
g_loss = -d_fake.mean()
g_loss.backward()
opt_g.step()
"""


def test_a_step_inside_a_helper_is_repaired_at_the_call_of_the_helper():
    finding = gg401(HELPER_STEP)
    assert finding.fix.message == (
        "Recompute line 14 after `step_d(opt_d, d_fake.mean())` and give the step's own loss `fake.detach()` "
        "(unsafe: the recomputed forward sees the new weights; dropout and BatchNorm statistics run again)")
    fixed = apply(HELPER_STEP, finding.fix)
    assert fixed == HELPER_STEP.replace(
        "d_fake = D(fake)\nstep_d(opt_d, d_fake.mean())\n",
        "d_fake = D(fake.detach())\nstep_d(opt_d, d_fake.mean())\nd_fake = D(fake)\n")
    exec(compile(fixed, "t.py", "exec"), {"__name__": "__main__"})  # runs clean under torch


# SAC-style: one helper zeroes, back-propagates and steps; the policy loss was computed before the critics' updates.
HELPER_UPDATES = """\
import torch
from torch import nn


def update(opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()


torch.manual_seed(0)
policy, q1, q2 = nn.Linear(3, 1), nn.Linear(4, 1), nn.Linear(4, 1)
opt_p, opt_q1, opt_q2 = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (policy, q1, q2))
for _ in range(2):
    s, a, r = torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1)
    q1_loss = (q1(torch.cat([s, a], 1)) - r).pow(2).mean()
    q2_loss = (q2(torch.cat([s, a], 1)) - r).pow(2).mean()
    sa = torch.cat([s, policy(s)], 1)
    policy_loss = -torch.min(q1(sa), q2(sa)).mean()
    update(opt_q1, q1_loss)
    update(opt_q2, q2_loss)
    update(opt_p, policy_loss)
"""


def test_a_backward_inside_a_helper_is_found_at_the_later_call_of_that_helper():
    text = HELPER_UPDATES
    for _ in range(3):  # one step at a time, as `gradguard check --fix` applies them
        found = [f for f in ENGINE.check(text, "t.py").findings if f.code == "GG401"]
        if not found:
            break
        assert found[0].fix is not None, found[0].message
        text = apply(text, found[0].fix)
    assert text == HELPER_UPDATES.replace(
        "    policy_loss = -torch.min(q1(sa), q2(sa)).mean()\n    update(opt_q1, q1_loss)\n    update(opt_q2, q2_loss)\n",
        "    update(opt_q1, q1_loss)\n    update(opt_q2, q2_loss)\n    policy_loss = -torch.min(q1(sa), q2(sa)).mean()\n")
    exec(compile(text, "t.py", "exec"), {"__name__": "__main__"})


STEP_IN_IF = """\
import torch
from torch import nn

torch.manual_seed(0)
G, V = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)), nn.Linear(3, 1)
opt_g, opt_v = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(V.parameters(), lr=0.1)
for k in range(2):
    fake = G(torch.randn(8, 4))
    loss_g = -fake.mean()
    loss_v = (V(fake) - 1).pow(2).mean()
    if k % 1 == 0:
        loss_g.backward(retain_graph=True)
        opt_g.step()
    if k % 1 == 0:
        loss_v.backward()
        opt_v.step()
"""


def test_a_step_inside_an_if_recomputes_at_the_top_of_the_later_backwards_if():
    fix = gg401(STEP_IN_IF).fix
    fixed = apply(STEP_IN_IF, fix)
    assert fixed == STEP_IN_IF.replace("    loss_v = (V(fake) - 1).pow(2).mean()\n", "").replace(
        "    if k % 1 == 0:\n        loss_v.backward()\n",
        "    if k % 1 == 0:\n        loss_v = (V(fake.detach()) - 1).pow(2).mean()\n        loss_v.backward()\n")
    exec(compile(fixed, "t.py", "exec"), {"__name__": "__main__"})


# Two losses of one model, each summed over a loop, each stepped: the minimax of the Anomaly Transformer.
ACCUMULATED = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 3)
out = model(x)
loss_a = 0.0
loss_b = 0.0
for u in range(2):
    loss_a += out[:, u].pow(2).mean()
    loss_b += out[:, u].abs().mean()
loss_b = loss_b / 2
loss_a.backward(retain_graph=True)
opt.step()
loss_b.backward()
opt.step()
"""


def test_a_loop_adding_to_the_later_loss_is_run_again_with_its_starting_value():
    fix = gg401(ACCUMULATED).fix
    assert fix.message.startswith("Recompute lines 8, 9, 10, 11 and 14 after `opt.step()`")
    fixed = apply(ACCUMULATED, fix)
    assert fixed == ACCUMULATED.replace("loss_b = loss_b / 2\n", "").replace(
        "opt.step()\nloss_b.backward()",
        "opt.step()\nout = model(x)\nloss_a = 0.0\nloss_b = 0.0\nfor u in range(2):\n"
        "    loss_a += out[:, u].pow(2).mean()\n    loss_b += out[:, u].abs().mean()\nloss_b = loss_b / 2\n"
        "loss_b.backward()", 1)
    ns = {"__name__": "__main__"}
    exec(compile(fixed, "t.py", "exec"), ns)
    out = ns["out"].detach()  # the recomputed loss_b starts from 0.0 again: the mean over the two columns, once
    assert torch.allclose(ns["loss_b"].detach(), (out[:, 0].abs().mean() + out[:, 1].abs().mean()) / 2)


FORWARD_ELSEWHERE = """\
import torch
from torch import nn

torch.manual_seed(0)
G, D = nn.Linear(4, 2), nn.Linear(2, 1)
opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)


def losses(z):
    fake = G(z)
    return -D(fake).mean(), D(fake.detach()).mean()


def backward(g_loss, d_loss):
    d_loss.backward()
    opt_d.step()
    g_loss.backward()
    opt_g.step()


g_loss, d_loss = losses(torch.randn(8, 4))
backward(g_loss, d_loss)
"""


def test_a_forward_outside_the_function_that_steps_gets_the_recipe_with_the_programs_names():
    finding = gg401(FORWARD_ELSEWHERE)
    assert finding.fix is None
    assert finding.message == (
        "`opt_d.step()` (line 16) modifies the parameters of `D` in place, but the graph built on line 21 saved them "
        "and `backward()` on line 17 still needs it. After the step, compute `losses(torch.randn(8, 4))` again and "
        "`g_loss` from it; where the stepped model's own loss reads another model's output, pass it `.detach()`. "
        "(`.detach()` alone still raises; moving the backward before the step makes the step use its gradient too.)")


# ---------------------------------------------------------------- GG404: a backward through a freed graph
def gg404(text: str):
    found = [f for f in ENGINE.check(text, "t.py").findings if f.code == "GG404"]
    assert len(found) == 1, found
    return found[0]


def fixed_clean(text: str) -> str:
    """`--fix --unsafe-fixes` leaves no GG4xx finding and the program runs."""
    result = check_one("t.py", text, Config(), "en", "unsafe", 10**7)
    assert not [f for f in result.findings if f.code.startswith("GG4")], result.fixed_text
    exec(compile(result.fixed_text, "t.py", "exec"), {"__name__": "__main__"})
    return result.fixed_text


FEATURES_BEFORE_LOOP = """\
import torch
from torch import nn

torch.manual_seed(0)
encoder, head = nn.Linear(4, 6), nn.Linear(6, 1)
opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
x = torch.randn(5, 4)
z = torch.sigmoid(encoder(x))  # features
for y in [torch.randn(5, 1) for _ in range(3)]:
    loss = ((head(z) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_forward_before_the_loop_moves_into_it_when_the_loop_trains_it():
    fix = gg404(FEATURES_BEFORE_LOOP).fix
    assert fix.message == ("Move line 8 into the loop on line 9 (unsafe: every iteration runs that forward again, "
                           "from the current weights)")
    line = "z = torch.sigmoid(encoder(x))  # features\n"
    expected = FEATURES_BEFORE_LOOP.replace(line, "").replace(
        "for y in [torch.randn(5, 1) for _ in range(3)]:\n",
        "for y in [torch.randn(5, 1) for _ in range(3)]:\n    " + line)
    assert apply(FEATURES_BEFORE_LOOP, fix) == expected
    assert fixed_clean(FEATURES_BEFORE_LOOP) == expected


TEACHER_LABELS = """\
import torch
from torch import nn

torch.manual_seed(0)
teacher, student = nn.Linear(3, 1), nn.Linear(3, 1)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
inputs = torch.randn(8, 3)
labels = teacher(inputs)
for _ in range(3):
    loss = ((student(inputs) - labels) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_labels_from_a_model_nothing_trains_keep_their_graph_and_the_title_names_the_lighter_detach():
    fix = gg404(TEACHER_LABELS).fix
    assert fix.message == ("Keep that graph for every iteration: `loss.backward(retain_graph=True)` (unsafe: its "
                           "saved tensors stay in memory; if nothing should train what made it, "
                           "`teacher(inputs).detach()` is lighter)")
    assert fixed_clean(TEACHER_LABELS) == TEACHER_LABELS.replace("    loss.backward()\n",
                                                                 "    loss.backward(retain_graph=True)\n")


TWO_HEADS = """\
import torch
from torch import nn

torch.manual_seed(0)
trunk, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
opt = torch.optim.SGD([*trunk.parameters(), *head_a.parameters(), *head_b.parameters()], lr=0.1)
feats = torch.tanh(trunk(torch.randn(3, 4)))
loss_a = head_a(feats).pow(2).mean()
loss_b = head_b(feats).abs().mean()
opt.zero_grad()
loss_a.backward()
loss_b.backward()
opt.step()
"""


def test_two_losses_on_one_trunk_keep_the_graph_for_the_second_and_say_what_it_costs():
    finding = gg404(TWO_HEADS)
    assert finding.fix.message == ("Keep the graph for the second backward: `loss_a.backward(retain_graph=True)` "
                                   "(unsafe: its saved tensors stay in memory until then)")
    assert fixed_clean(TWO_HEADS) == TWO_HEADS.replace("loss_a.backward()\n", "loss_a.backward(retain_graph=True)\n")


GAN_D_THEN_G = """\
import torch
from torch import nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
optG, optD = torch.optim.Adam(netG.parameters()), torch.optim.Adam(netD.parameters())
for _ in range(2):
    fake = netG(torch.randn(4, 4))
    netD.zero_grad()
    d_loss = netD(fake).mean() - netD(torch.randn(4, 2)).mean()
    d_loss.backward()
    optD.step()
    netG.zero_grad()
    g_loss = -netD(fake).mean()
    g_loss.backward()
    optG.step()
"""


def test_the_discriminator_loss_reads_the_fakes_detached():
    fix = gg404(GAN_D_THEN_G).fix
    assert fix.message == ("Read `fake.detach()` (unsafe: that loss no longer back-propagates into the model whose "
                           "output it reads)")
    assert fixed_clean(GAN_D_THEN_G) == GAN_D_THEN_G.replace("d_loss = netD(fake).mean()",
                                                             "d_loss = netD(fake.detach()).mean()")


POLICY_GRADIENT = """\
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Softmax(dim=-1))
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
log_probs = []
for episode in range(3):
    for t in range(4):
        dist = torch.distributions.Categorical(policy(torch.randn(4)))
        log_probs.append(dist.log_prob(dist.sample()))
    loss = -torch.stack(log_probs).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_log_probs_kept_across_episodes_are_cleared_after_the_backward():
    finding = gg404(POLICY_GRADIENT)
    assert "Clear what holds it after each `backward()` (for example `del log_probs[:]`)" in finding.message
    assert finding.fix.message == ("Add `del log_probs[:]` after this backward (unsafe: later backwards no longer "
                                   "reach earlier episodes' entries)")
    assert fixed_clean(POLICY_GRADIENT) == POLICY_GRADIENT.replace(
        "    loss.backward()\n", "    loss.backward()\n    del log_probs[:]\n")


HESSIAN_EVERY_OTHER_STEP = """\
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(4):
    x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if it % 2 == 1:
        sampled = torch.distributions.Categorical(logits=logits).sample()
        nn.functional.cross_entropy(logits, sampled).backward()
        opt.zero_grad()
"""


def test_a_backward_every_other_step_gets_the_forward_again_inside_its_if():
    finding = gg404(HESSIAN_EVERY_OTHER_STEP)
    assert finding.fix.message == (
        "Recompute line 9 after line 12, at the top of the `if` on line 14 (unsafe: the recomputed forward sees the "
        "new weights; dropout and BatchNorm statistics run again)")
    assert fixed_clean(HESSIAN_EVERY_OTHER_STEP) == HESSIAN_EVERY_OTHER_STEP.replace(
        "    if it % 2 == 1:\n", "    if it % 2 == 1:\n        logits = model(x)\n")
