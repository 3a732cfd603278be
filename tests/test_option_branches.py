"""Code behind a bool option is reachable: `if flag:` with `flag=False` by default runs when a caller passes one
argument, so its bugs are reported, with the condition in the message. A branch the file turns off at every call
(an explicit `flag=False`, a module constant) stays silent. Each program is also run under torch with the option on.

The motivating case: lucidrains/vit-pytorch, vit_pytorch/vit_nd_pope.py, GoldenGatePoPENd.__init__ writes
`self.learned_bias.uniform_(-2. * pi, 0.)` on its nn.Parameter under `if init_learned_bias_uniform:` (default False,
forwarded from ViTND's `pope_init_learned_bias_uniform=False`): building the model with the option on raises.
"""
from __future__ import annotations

from gradguard.engine import Engine
from torch_exec import run_program

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."

POPE = '''\
from math import pi

import torch
from torch import nn


class PolarEmbedding(nn.Module):
    def __init__(self, heads, dim_head, init_learned_bias_uniform=False):
        super().__init__()
        self.learned_bias = nn.Parameter(torch.zeros(heads, dim_head))
        if init_learned_bias_uniform:
            self.learned_bias.uniform_(-2.0 * pi, 0.0)

    def forward(self, theta):
        return theta + self.learned_bias.clamp(-2.0 * pi, 0.0)


class Model(nn.Module):
    def __init__(self, heads=2, dim_head=4, pope_init_learned_bias_uniform=False):
        super().__init__()
        self.pope = PolarEmbedding(heads, dim_head, init_learned_bias_uniform=pope_init_learned_bias_uniform)

    def forward(self, x):
        return self.pope(x).sum()


model = Model()
model(torch.randn(2, 4)).backward()
'''


def findings(text: str):
    return [(f.code, f.span.start_line + 1, f.message) for f in Engine().check(text, "prog.py").findings]


def test_a_write_behind_an_option_left_at_its_default_is_reported_with_its_condition():
    (code, line, message), = findings(POPE)
    assert (code, line) == ("GG101", 12)
    assert message.endswith("This runs when `init_learned_bias_uniform` is true (not the default).")
    assert run_program(POPE).clean  # as written, the default hides it
    turned_on = run_program(POPE.replace("model = Model()", "model = Model(pope_init_learned_bias_uniform=True)"))
    assert turned_on.error_type == "RuntimeError" and LEAF_ERROR in turned_on.error


def test_an_option_turned_on_explicitly_is_reported_without_a_condition():
    text = POPE.replace("model = Model()", "model = Model(pope_init_learned_bias_uniform=True)")
    (code, line, message), = findings(text)
    assert (code, line) == ("GG101", 12) and "not the default" not in message


def test_an_option_every_call_turns_off_is_not_claimed_as_an_option():
    # The explicit `False` is not a default a caller flips; (the class is still checked on its own, with its
    # argument unknown, as before this mechanism)
    text = POPE.replace("init_learned_bias_uniform=pope_init_learned_bias_uniform",
                        "init_learned_bias_uniform=False")
    assert not any("not the default" in message for _, _, message in findings(text))
    assert run_program(text).clean


def test_a_module_constant_turned_off_stays_silent():
    text = POPE.replace("        if init_learned_bias_uniform:", "        if INIT_UNIFORM:").replace(
        "from math import pi\n", "from math import pi\n\nINIT_UNIFORM = False\n")
    assert findings(text) == []


def test_not_flag_with_a_true_default_names_the_false_condition():
    text = '''\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, zero_init=True):
        super().__init__()
        self.proj = nn.Linear(4, 2)
        if not zero_init:
            self.proj.weight.normal_(0.0, 0.02)

    def forward(self, x):
        return self.proj(x)


Head()(torch.randn(3, 4)).sum().backward()
'''
    (code, line, message), = findings(text)
    assert (code, line) == ("GG101", 10)
    assert message.endswith("This runs when `zero_init` is false (not the default).")
    turned_on = run_program(text.replace("Head()(", "Head(zero_init=False)("))
    assert turned_on.error_type == "RuntimeError" and LEAF_ERROR in turned_on.error
