"""After incremental edits, the server's diagnostics equal those of a fresh open of the same text.

The real server over stdio (pytest-lsp). An edited document reuses what the engine kept from its earlier
versions (the block split after the edit, parses of unchanged blocks, per-block facts and indexes); a fresh
document of the same text, under another URI, reuses nothing of that document. Each step edits one place
(inside a method, inside a helper another block calls, a new block, a deleted block, a half-typed line) and
the two publishes must agree, fixes included, and so must hover at every name. The fresh document shares the
server's per-block caches (keyed by block, not by document), so each step is also checked in one process against
a new Engine.

The module-level run is reused across edits when it could read nothing that changed (FileAnalysis._module_run):
the second program's steps edit a helper module-level code calls (directly and through another function), one no
one calls, a module-level binding a function reads, and add, rename and delete the definitions code names.
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import fresh_uri, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

ON_SERVER_LOOP = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)

PROGRAM = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.Sigmoid()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = self.act(self.fc1(x))
        return self.fc2(h)


def scale(t):
    return t * 2


def train_step(model, opt, batch):
    x, y = batch
    out = model(x)
    loss = ((out - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    batch = (torch.rand(4, 8), torch.rand(4, 4))
    train_step(model, opt, batch)
w = torch.rand(3, requires_grad=True)
'''

# (old text, new text) replaced once each, in order: every step changes what the file's findings are or where.
STEPS = [
    ("        h = self.act(self.fc1(x))\n", "        h = self.act(self.fc1(x))\n        h.mul_(2)\n"),
    ("    return t * 2\n", "    t.add_(1)\n    return t * 2\n"),
    ("    out = model(x)\n", "    out = scale(model(x))\n"),
    ("w = torch.rand(3, requires_grad=True)\n", "w = torch.rand(3, requires_grad=True)\nw += 1\n"),
    ("        h.mul_(2)\n", "        h.mul_(\n"),  # half-typed: that block does not parse
    ("        h.mul_(\n", "        h = h * 2\n"),
    ("    opt.step()\n    return loss\n", "    opt.step()\n    loss.backward()\n    return loss\n"),
    ("def scale(t):\n    t.add_(1)\n    return t * 2\n\n\n", ""),  # a block deleted; its caller now calls nothing
    ("for epoch in range(2):\n", "\n\ndef extra(v):\n    v[0] = 1\n    return v\n\n\nfor epoch in range(2):\n"),
]


# Module-level code that calls `helper` and `outer` (which calls `inner`), and functions it never calls.
MODULE_PROGRAM = '''import torch


def helper(t):
    return t * 2


def inner(t):
    return t.sigmoid()


def outer(t):
    return inner(t) + 1


def unused(t):
    return t + 1


def bump():
    w.add_(1)
    return w


w = torch.rand(3, requires_grad=True)
a = torch.rand(3, requires_grad=True)
y = helper(a)
z = outer(a)
z.sum().backward()
'''

# (old text, new text, whether module-level code must run again)
MODULE_STEPS = [
    ("    return t + 1\n", "    s = torch.rand(2, requires_grad=True)\n    s.add_(1)\n    return t + 1\n", False),  # unused
    ("    w.add_(1)\n    return w\n", "    w.add_(2)\n    return w\n", False),  # bump: reads `w`, not called
    ("    return t * 2\n", "    t.add_(1)\n    return t * 2\n", True),  # helper, called by module code
    ("    return t.sigmoid()\n", "    s = t.sigmoid()\n    s.mul_(2)\n    return s\n", True),  # inner, via outer
    ("w = torch.rand(3, requires_grad=True)\n", "w = torch.rand(3)\n", True),  # the binding bump reads
    ("z.sum().backward()\n", "z.sum().backward()\nprepare(a)\n", True),  # calls a name nothing defines yet
    ("def bump():\n", "def prepare(t):\n    t.mul_(3)\n\n\ndef bump():\n", True),  # now defined
    ("def helper(t):\n", "def helper_old(t):\n", True),  # `helper(a)` reaches nothing now
    ("    s = torch.rand(2, requires_grad=True)\n", "    s = torch.rand(4, requires_grad=True)\n", False),
    ("def unused(t):\n    s = torch.rand(4, requires_grad=True)\n    s.add_(1)\n    return t + 1\n\n\n", "", True),
    # bump, run on its own, calls a name nothing defines; then it is defined (bump's cached run must go)
    ("    w.add_(2)\n", "    v = torch.rand(3, requires_grad=True).sigmoid()\n    grow(v)\n    v.sum().backward()\n"
     "    w.add_(2)\n", False),
    ("def bump():\n", "def grow(t):\n    t.mul_(2)\n\n\ndef bump():\n", True),
]


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params(settings={"debounceMs": 0, "jedi": {"enable": False}}))
    yield
    await lsp_client.shutdown_session()


def _position(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    return types.Position(line, len(before) - (before.rfind("\n") + 1))  # ASCII program: UTF-16 = code points


def _comparable(params: types.PublishDiagnosticsParams, uri: str) -> list:
    """The diagnostics as JSON, the document's URI replaced (related locations and fix data name it) and the
    document version a fix was made for left out (the two documents' versions differ)."""
    out = []
    for d in params.diagnostics:
        item = _to_json(d)
        if isinstance(item.get("data"), dict):
            item["data"].pop("version", None)
        raw = json.dumps(item, sort_keys=True)
        out.append(raw.replace(uri, "<doc>"))
    return sorted(out)


def _to_json(diagnostic: types.Diagnostic):
    from lsprotocol import converters

    return converters.get_converter().unstructure(diagnostic)


async def _hovers(client: LanguageClient, uri: str, text: str) -> list:
    """Hover at every identifier of the text (markdown, the URI replaced), in document order."""
    places = [(i, m.start()) for i, line in enumerate(text.split("\n")) for m in re.finditer(r"[A-Za-z_]\w*", line)]
    results = await asyncio.gather(*(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(line, col))) for line, col in places))
    return [(place, result.contents.value.replace(uri, "<doc>") if result is not None else None)
            for place, result in zip(places, results)]


async def _edit_and_compare(client: LanguageClient, program: str, steps: list) -> set:
    """Apply each step to one document and compare its publish and hovers with a fresh open of the same text."""
    uri = fresh_uri("edited")
    mark = open_doc(client, uri, program)
    await wait_publish(client, uri, mark, version=1, timeout=60)
    text = program
    codes_seen = set()
    for version, (old, new, *_) in enumerate(steps, start=2):
        at = text.index(old)
        start, end = _position(text, at), _position(text, at + len(old))
        text = text[:at] + new + text[at + len(old):]
        mark = len(client.published)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start, end), text=new)],
            )
        )
        edited = await wait_publish(client, uri, mark, version=version, timeout=60)
        fresh = fresh_uri("fresh")
        mark = open_doc(client, fresh, text)
        opened = await wait_publish(client, fresh, mark, version=1, timeout=60)
        assert _comparable(edited, uri) == _comparable(opened, fresh), f"after step {version - 1}: {new!r}"
        assert await _hovers(client, uri, text) == await _hovers(client, fresh, text), f"hover after step {version - 1}"
        codes_seen.update(str(d.code) for d in edited.diagnostics if d.code)
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(fresh)))
    return codes_seen


@ON_SERVER_LOOP
async def test_incremental_edits_publish_what_a_fresh_open_of_the_same_text_publishes(client: LanguageClient):
    codes_seen = await _edit_and_compare(client, PROGRAM, STEPS)
    # the steps made findings appear and go (the comparison was not of empty lists only)
    assert len(codes_seen) >= 2, codes_seen


@ON_SERVER_LOOP
async def test_edits_around_module_level_code_publish_what_a_fresh_open_publishes(client: LanguageClient):
    codes_seen = await _edit_and_compare(client, MODULE_PROGRAM, MODULE_STEPS)
    assert {"GG101", "GG201"} <= codes_seen, codes_seen


def _engine_view(report) -> list:
    """What a check tells a user (findings with their fixes, notes, each tensor name's hover facts): the view
    benchmarks/edit_fuzz.py compares on random edits."""
    return _EDIT_FUZZ.view(report)


_spec = importlib.util.spec_from_file_location(
    "edit_fuzz", Path(__file__).resolve().parent.parent / "benchmarks" / "edit_fuzz.py")
_EDIT_FUZZ = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_EDIT_FUZZ)


@pytest.mark.parametrize("program, steps", [(PROGRAM, STEPS), (MODULE_PROGRAM, MODULE_STEPS)], ids=["net", "module"])
def test_an_edited_document_checks_as_a_fresh_engine_does(program, steps):
    """In one process against a new Engine (the server's fresh document above shares the per-block caches)."""
    from gradguard.engine import Engine

    engine = Engine()
    engine.check(program, "/project/train.py")
    text = program
    for number, (old, new, *_) in enumerate(steps, start=1):
        text = text.replace(old, new, 1)
        edited = _engine_view(engine.check(text, "/project/train.py"))
        assert edited == _engine_view(Engine().check(text, "/project/train.py")), f"after step {number}: {new!r}"


def test_module_level_code_runs_again_only_when_what_it_can_read_changed():
    from gradguard.engine import Engine

    engine = Engine()
    engine.check(MODULE_PROGRAM, "/project/train.py")
    text, ran = MODULE_PROGRAM, []
    for old, new, _expected in MODULE_STEPS:
        text = text.replace(old, new, 1)
        before = engine.module_code_runs
        engine.check(text, "/project/train.py")
        ran.append(engine.module_code_runs - before)
    assert ran == [int(expected) for _old, _new, expected in MODULE_STEPS]


# An edit inside one method of a class re-parses that method alone (parse.splice_member): each step is (old, new,
# blocks spliced). The class has seven members: the docstring, a class attribute and five methods.
CLASS_PROGRAM = '''import torch
from torch import nn


class Net(nn.Module):
    """Two layers."""

    scale = 2

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def act(self, h):
        return torch.sigmoid(h)

    def forward(self, x):
        h = self.act(self.fc1(x))
        return self.fc2(h)

    def reset(self):
        with torch.no_grad():
            self.fc1.weight.mul_(0.5)

    def shrink(self, factor=0.9):
        for p in self.parameters():
            p.data.mul_(factor)
        # the end of shrink


def train(net, opt, x, y):
    out = net(x)
    loss = ((out - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
'''

CLASS_STEPS = [
    ("mul_(0.5)", "mul_(0.7)", 1),  # a digit in a method
    # an in-place write on what sigmoid saved, in a method forward runs: forward says so
    ("        return torch.sigmoid(h)\n", "        s = torch.sigmoid(h)\n        s.mul_(2)\n        return s\n", 1),
    ("        s = torch.sigmoid(h)\n        s.mul_(2)\n        return s\n", "        return torch.sigmoid(h)\n", 1),
    ("nn.Linear(16, 4)", "nn.Linear(16, 5)", 1),  # `__init__`
    ("scale = 2", "scale = 3", 1),  # a class attribute
    ("def shrink(", "def shrunk(", 1),  # a method renamed
    ("# the end of shrink", "# the end of shrunk", 1),  # a comment in the last member's body
    # a line before a method's first line of code may belong to the member before it: the block is parsed whole
    ("    def reset(self):", "        # deeper\n    def reset(self):", 0),
    ("        # deeper\n", "", 0),
    ("        p.data.mul_(factor)\n", "        p.data.mul_(factor)\n    x = 1\n", 0),  # a new member
    ("\n    x = 1\n", "\n", 0),
    ("    def act(self, h):", "def act(self, h):", 0),  # the class ends before it: blocks split anew
]


# The members each CLASS_STEPS step re-runs (issue 30): the edited method and the members that read it; an edit of
# `__init__`, of a class attribute or of a member's name re-runs them all (every method's instance runs `__init__`).
ALL_MEMBERS = ["Net.__init__", "Net.act", "Net.forward", "Net.reset"]
MEMBERS_RERUN = {
    1: ["Net.reset"],
    2: ["Net.act", "Net.forward"],  # forward calls act
    3: ["Net.act", "Net.forward"],
    4: ALL_MEMBERS + ["Net.shrink"],
    5: ALL_MEMBERS + ["Net.shrink"],
    6: ALL_MEMBERS + ["Net.shrunk"],
    7: ["Net.shrunk"],
}


def test_an_edit_in_one_method_re_runs_that_method_and_the_members_reading_it():
    from gradguard.engine import Engine

    engine = Engine()
    engine.check(CLASS_PROGRAM, "/project/net.py")
    assert engine.members_ran == ALL_MEMBERS + ["Net.shrink"]
    text = CLASS_PROGRAM
    for number, (old, new, _spliced) in enumerate(CLASS_STEPS, start=1):
        text = text.replace(old, new, 1)
        edited = engine.check(text, "/project/net.py")
        if number in MEMBERS_RERUN:
            assert engine.members_ran == MEMBERS_RERUN[number], f"step {number}"
        assert _engine_view(edited) == _engine_view(Engine().check(text, "/project/net.py")), f"step {number}"


def test_an_edit_in_one_method_parses_that_method_alone():
    from gradguard.engine import Engine

    engine = Engine()
    engine.check(CLASS_PROGRAM, "/project/net.py")
    text = CLASS_PROGRAM
    for number, (old, new, spliced) in enumerate(CLASS_STEPS, start=1):
        assert old in text
        text = text.replace(old, new, 1)
        splices = engine.cache.splices
        edited = engine.check(text, "/project/net.py")
        assert engine.cache.splices - splices == spliced, f"step {number}"
        fresh = Engine().check(text, "/project/net.py")
        assert _engine_view(edited) == _engine_view(fresh), f"after step {number}: {new!r}"
        if number == 2:
            assert {f.code for f in edited.findings} & {"GG201", "GG202"}, "the write on sigmoid's output is found"
