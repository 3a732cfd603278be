"""The language server sees the project (issue 29): the real server over stdio, a copy of tests/projects/simclr as
the workspace. `losses.py` writes `z1` in place; only `train.py`'s run (which passes the projections in) shows it.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import (  # noqa: E402
    change_doc,
    init_params,
    make_client,
    open_doc,
    server_command,
    wait_publish,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)
SIMCLR = Path(__file__).parent / "projects" / "simclr"
FIXED = "    z1 = z1 / z1.norm(dim=1, keepdim=True)\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lsp_project") / "simclr"
    shutil.copytree(SIMCLR, folder)
    return folder


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, workspace):
    await lsp_client.initialize_session(init_params(root=workspace))
    yield
    await lsp_client.shutdown_session()


def close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))


def codes_lines(params) -> list[tuple[str, int]]:
    return [(d.code, d.range.start.line + 1) for d in params.diagnostics if d.code]


async def latest(client, uri: str, since: int, settle: float = 1.5):
    """The last publish for `uri` after `since`, once publishes stop arriving for `settle` seconds."""
    import asyncio

    params = await wait_publish(client, uri, since)
    count = len(client.published)
    while True:
        await asyncio.sleep(settle)
        if len(client.published) == count:
            break
        count = len(client.published)
    mine = [p for _, p in client.published[since:] if p.uri == uri]
    return mine[-1] if mine else params


async def test_opening_the_module_alone_shows_what_the_script_on_disk_does_to_it(client: LanguageClient, workspace):
    losses = workspace / "losses.py"
    uri = losses.as_uri()
    mark = open_doc(client, uri, losses.read_text(encoding="utf-8"))
    params = await latest(client, uri, mark)
    assert codes_lines(params) == [("GG201", 6)]
    diagnostic = next(d for d in params.diagnostics if d.code)
    assert "line 18 of train.py" in diagnostic.message
    elsewhere = [r for r in diagnostic.related_information or [] if r.location.uri != uri]
    assert [(Path(r.location.uri).name, r.location.range.start.line + 1) for r in elsewhere] == [("train.py", 18)]
    close(client, uri)


async def test_with_both_open_the_finding_is_shown_once_and_an_edit_in_the_module_clears_it(client, workspace):
    losses, train = workspace / "losses.py", workspace / "train.py"
    text = losses.read_text(encoding="utf-8")
    mark = open_doc(client, losses.as_uri(), text)
    await wait_publish(client, losses.as_uri(), mark)
    mark = open_doc(client, train.as_uri(), train.read_text(encoding="utf-8"))
    assert codes_lines(await latest(client, train.as_uri(), mark)) == []
    assert codes_lines(await latest(client, losses.as_uri(), 0)) == [("GG201", 6)]
    mark = change_doc(client, losses.as_uri(), text.replace("    z1 /= z1.norm(dim=1, keepdim=True)\n", FIXED), 2)
    assert codes_lines(await latest(client, losses.as_uri(), mark)) == []
    close(client, train.as_uri())
    close(client, losses.as_uri())
