"""Fixed programs still train: every fix of every bad rule example keeps the gradients flowing.

A fix that makes the program run clean but cuts the model off the loss (`h = cell(x, h).detach()` with the loss
computed from `h`) is as wrong as one that crashes. For each bad example of a rule that has a fix, the program is
fixed with `--fix --unsafe-fixes`, run under torch with `torch.autograd.backward` instrumented, and compared with
what should get a gradient:
- every parameter or leaf that a `backward()` of the *bad* program reached (walking the graph from the loss before
  torch raises, identified by its global name, `model.weight`, or `w`), and
- every tensor that a module-level optimizer of the fixed program updates (for bad programs that raise before
  any backward, this is what the program means to train),
must hold a non-None `.grad` right after some `backward()` of the fixed program.
"""
from __future__ import annotations

import contextlib
import io

import pytest
import torch
from torch import nn

from gradguard.checking import check_one
from gradguard.config import Config
from gradguard.rules import all_rules

def fixable_bad_examples():
    for rule in all_rules():
        if rule.fix_kind != "none":
            for path in rule.examples("bad"):
                yield pytest.param(rule.code, path, id=f"{rule.code}/{path.name}")


class Run:
    """One program run under torch with every backward() recorded."""

    def __init__(self, code: str, filename: str):
        self.reached: list[torch.Tensor] = []  # leaves some backward's graph reached (kept alive: ids stay unique)
        self.graded: list[torch.Tensor] = []  # leaves holding a .grad right after a backward that returned
        self.error: BaseException | None = None
        self.namespace = {"__name__": "__main__", "__file__": filename}
        real = torch.autograd.backward

        def recording_backward(tensors, *args, **kwargs):
            roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
            leaves = _leaves_reached(roots)
            self.reached.extend(leaves)
            result = real(tensors, *args, **kwargs)
            self.graded.extend(t for t in leaves if t.grad is not None)
            return result

        torch.manual_seed(0)
        torch.set_grad_enabled(True)
        torch.autograd.backward = recording_backward
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, filename, "exec"), self.namespace)
        except Exception as exc:  # the bad programs raise torch's RuntimeError
            self.error = exc
        finally:
            torch.autograd.backward = real
            torch.set_grad_enabled(True)

    def names(self, tensors) -> set[str]:
        """Global names of the given tensors: `model.fc.weight` for parameters of module-level modules, `w`."""
        ids = {id(t) for t in tensors}
        out = set()
        for global_name, value in self.namespace.items():
            if isinstance(value, nn.Module):
                out |= {f"{global_name}.{p}" for p, t in value.named_parameters() if id(t) in ids}
            elif isinstance(value, torch.Tensor) and id(value) in ids:
                out.add(global_name)
        return out

    def optimized(self) -> set[str]:
        """Names of the tensors the program's module-level optimizers update: what it means to train."""
        held = [p for value in self.namespace.values() if isinstance(value, torch.optim.Optimizer)
                for group in value.param_groups for p in group["params"]]
        return self.names(held)


def _leaves_reached(roots) -> list[torch.Tensor]:
    seen, leaves = set(), []
    stack = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        variable = getattr(fn, "variable", None)  # AccumulateGrad: the leaf it accumulates into
        if isinstance(variable, torch.Tensor):
            leaves.append(variable)
        stack.extend(next_fn for next_fn, _ in fn.next_functions)
    return leaves


@pytest.mark.parametrize("code,path", list(fixable_bad_examples()))
def test_fixed_bad_example_still_trains(code, path):
    text = path.read_text(encoding="utf-8")
    fixed = check_one(str(path), text, Config(), "en", "unsafe", 10**7).fixed_text
    assert fixed and fixed != text, f"{code} documents a fix but offers none for {path.name}"
    bad, good = Run(text, str(path)), Run(fixed, str(path))
    assert good.error is None, f"{good.error!r}\n--- fixed program ---\n{fixed}"
    expected = bad.names(bad.reached) | good.optimized()
    missing = expected - good.names(good.graded)
    assert not missing, f"no gradient after the fix for {sorted(missing)}\n--- fixed program ---\n{fixed}"


def test_a_fix_that_detaches_the_loss_value_is_caught():
    """The check itself fails on the old GG403 fix `h = cell(x, h).detach()` (the cell never gets gradients)."""
    program = (
        "import torch\nfrom torch import nn\n"
        "cell = nn.RNNCell(2, 4)\nhead = nn.Linear(4, 1)\n"
        "opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)\n"
        "h = torch.zeros(1, 4)\n"
        "for x in torch.randn(3, 1, 2):\n"
        "    h = cell(x, h).detach()\n"
        "    loss = head(h).pow(2).sum()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n")
    run = Run(program, "<detached>")
    assert run.error is None
    assert run.optimized() - run.names(run.graded) == {"cell.weight_ih", "cell.weight_hh", "cell.bias_ih",
                                                       "cell.bias_hh"}
