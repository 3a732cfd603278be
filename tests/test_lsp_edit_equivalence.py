"""After incremental edits, the server's diagnostics equal those of a fresh open of the same text.

The real server over stdio (pytest-lsp). An edited document reuses what the engine kept from its earlier
versions (the block split after the edit, parses of unchanged blocks, per-block facts and indexes); a fresh
document of the same text, under another URI, reuses nothing of that document. Each step edits one place
(inside a method, inside a helper another block calls, a new block, a deleted block, a half-typed line) and
the two publishes must agree, fixes included.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import fresh_uri, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")
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


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params(settings={"debounceMs": 0}))
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


async def test_incremental_edits_publish_what_a_fresh_open_of_the_same_text_publishes(client: LanguageClient):
    uri = fresh_uri("edited")
    mark = open_doc(client, uri, PROGRAM)
    await wait_publish(client, uri, mark, version=1, timeout=60)
    text = PROGRAM
    codes_seen = set()
    for version, (old, new) in enumerate(STEPS, start=2):
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
        codes_seen.update(str(d.code) for d in edited.diagnostics if d.code)
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(fresh)))
    # the steps made findings appear and go (the comparison was not of empty lists only)
    assert len(codes_seen) >= 2, codes_seen
