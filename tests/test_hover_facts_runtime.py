"""Hover's requires_grad / is_leaf claims are what torch has at that point of the program.

tests/real_world/facts_oracle.py checks every claim of every corpus program against a run under torch; these tests
pin the mechanisms it found wrong, each on a program whose runtime values are asserted too.
"""
import textwrap

from gradguard.engine import Engine


def claims(source: str, name: str) -> list[tuple[int, bool | None, bool | None]]:
    """(1-based line, requires_grad, is_leaf) hover shows for every occurrence of `name`."""
    source = textwrap.dedent(source)
    facts = Engine(editor=True).check(source, "t.py").facts
    out = []
    for i, line in enumerate(source.splitlines()):
        col = 0
        while (col := line.find(name, col)) >= 0:
            before = line[col - 1] if col else " "
            after = line[col + len(name)] if col + len(name) < len(line) else " "
            if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
                described = facts.tensor_at(i, col)
                if described is not None:
                    out.append((i + 1, described.requires_grad, described.is_leaf))
            col += len(name)
    return out


def run(source: str) -> dict:
    import torch  # installed by `make setup`: a missing torch fails here rather than skipping

    namespace = {"torch": torch}
    exec(textwrap.dedent(source), namespace)
    return namespace


INDEX_WRITE = """
    import torch
    w = torch.ones(3, requires_grad=True)
    A = torch.zeros(3)
    rg_before = A.requires_grad
    A[0] = w[0] * 2
    rg_after = A.requires_grad
"""


def test_a_tensor_later_written_with_a_graph_value_is_shown_as_it_was_where_it_was_bound():
    ns = run(INDEX_WRITE)
    assert (ns["rg_before"], ns["rg_after"]) == (False, True)
    shown = claims(INDEX_WRITE, "A")
    assert shown[0] == (4, False, True)  # `A = torch.zeros(3)`
    assert shown[-1] == (7, True, False)  # `rg_after = A.requires_grad`, after the write


REQUIRES_GRAD_OFF = """
    import torch
    p = torch.ones(3, requires_grad=True)
    was = p.requires_grad
    p.requires_grad_(False)
    now = p.requires_grad
"""


def test_a_name_read_before_requires_grad_is_switched_off_still_requires_grad_there():
    ns = run(REQUIRES_GRAD_OFF)
    assert (ns["was"], ns["now"]) == (True, False)
    assert claims(REQUIRES_GRAD_OFF, "p") == [(3, True, True), (4, True, True), (5, True, True), (6, False, True)]


LOSS_IN_A_FUNCTION = """
    import torch
    from torch import nn


    def train(model, data):
        y = torch.randn(2, 1)
        for x in data:
            pred = model(x)
            loss = nn.functional.mse_loss(pred, y)
            loss.backward()
        return loss.requires_grad


    trained = train(nn.Linear(4, 1), [torch.randn(2, 4)])
"""


def test_a_loss_of_a_model_passed_in_is_shown_requiring_grad_not_as_a_constant():
    # run on its own, `model(x)` is unknown: a loss of it and of `y` may require grad (it was shown as a
    # leaf with requires_grad=False); the call on the last line passes a model, and there it requires grad
    assert run(LOSS_IN_A_FUNCTION)["trained"] is True
    assert claims(LOSS_IN_A_FUNCTION, "loss") == [(10, True, False), (11, True, False), (12, True, False)]


UNKNOWN_OPERAND = """
    import torch


    def scaled(f, x):
        y = torch.randn(2)
        z = f(x) * y
        z.add_(1)
        return z
"""


def test_an_op_on_an_unknown_value_claims_nothing():
    assert claims(UNKNOWN_OPERAND, "y") == [(6, False, True), (7, False, True)]
    assert claims(UNKNOWN_OPERAND, "z") == [(7, None, None), (8, None, None), (9, None, None)]


NO_GRAD_VIEW = """
    import torch
    w = torch.randn(3, 5, requires_grad=True)
    h = torch.randn(4, 3) @ w
    with torch.no_grad():
        flat = h.view(-1)
        kept = h.clone()
    view_state = (flat.requires_grad, flat.is_leaf)
    clone_state = (kept.requires_grad, kept.is_leaf)
    h.sum().backward()
"""


def test_a_view_made_under_no_grad_keeps_requires_grad_and_is_a_leaf_and_a_clone_there_is_a_leaf():
    ns = run(NO_GRAD_VIEW)
    assert ns["view_state"] == (True, True) and ns["clone_state"] == (False, True)
    assert claims(NO_GRAD_VIEW, "flat")[0] == (6, True, True)
    assert claims(NO_GRAD_VIEW, "kept")[0] == (7, False, True)


SAMPLED_ACTION = """
    import torch
    from torch.distributions import Categorical, Normal
    logits = torch.randn(3, requires_grad=True)
    dist = Categorical(logits=logits)
    action = dist.sample()
    logp = dist.log_prob(action)
    mu = Normal(logits, 1.0).rsample()
    states = [(t.requires_grad, t.is_leaf) for t in (action, logp, mu)]
    (logp + mu.sum()).backward()
"""


def test_a_sampled_action_has_no_graph_and_its_log_prob_and_an_rsample_have_one():
    assert run(SAMPLED_ACTION)["states"] == [(False, True), (True, False), (True, False)]
    assert claims(SAMPLED_ACTION, "action")[0] == (6, False, True)
    assert claims(SAMPLED_ACTION, "logp")[0] == (7, True, False)
    assert claims(SAMPLED_ACTION, "mu")[0] == (8, True, False)


def test_every_claim_hover_makes_on_the_rule_examples_is_what_torch_has_there():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "real_world"))
    import facts_oracle

    files = sorted((Path(facts_oracle.ROOT) / "server" / "gradguard" / "rules" / "examples").glob("*/*.py"))
    assert len(files) > 200
    seen = facts_oracle.observe(files)
    assert sum(1 for p in files if seen[p]) > 200  # the programs ran and were observed
    contradicted = [c for p in files for c in facts_oracle.contradictions(p, seen[p])]
    assert contradicted == []


STATUS_OUTPUTS = """
    import torch
    A = (torch.randn(3, 3) @ torch.randn(3, 3).T + 3 * torch.eye(3)).requires_grad_()
    L, info = torch.linalg.cholesky_ex(A)
    P, lo, up = torch.linalg.lu(A)
    states = [(t.requires_grad, t.is_leaf) for t in (L, info, P, up)]
    (L.sum() + up.sum() + lo.sum()).backward()
"""


def test_the_status_and_permutation_outputs_of_linalg_ops_have_no_graph():
    assert run(STATUS_OUTPUTS)["states"] == [(True, False), (False, True), (False, True), (True, False)]
    assert claims(STATUS_OUTPUTS, "info")[0] == (4, False, True)
    assert claims(STATUS_OUTPUTS, "P")[0] == (5, False, True)
    assert claims(STATUS_OUTPUTS, "up")[0] == (5, True, False)
