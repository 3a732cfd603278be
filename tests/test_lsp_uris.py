"""Document URIs as real clients spell them: percent-encoded drive letters, spaces, non-ASCII folders, `+`.

pygls 2 keys its documents by `unquote(uri)`; VS Code sends `file:///c%3A/...` for every file on Windows.
Each URI style must get diagnostics (published under the URI the client sent), hover, code actions, and an
empty publish on close, and must work again after a re-open and after a settings change.
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures import programs as P  # noqa: E402
from lsp_fixtures.harness import WORKSPACE, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)
WINDOWS_FOLDER = "file:///c%3A/Users/me/proj"  # how VS Code on Windows sends C:\Users\me\proj

URIS = {
    "windows-drive": WINDOWS_FOLDER + "/train.py",
    "space": WORKSPACE.as_uri() + "/my%20project/train.py",
    "non-ascii": WORKSPACE.as_uri() + "/%E4%B8%AD%E6%96%87/train.py",
    "plus": WORKSPACE.as_uri() + "/a+b/train.py",
    "encoded-plus": WORKSPACE.as_uri() + "/a%2Bb/train%5B1%5D.py",
}


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    params = init_params()
    params.workspace_folders.append(types.WorkspaceFolder(uri=WINDOWS_FOLDER, name="proj"))
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def published_for(client, since: int, uri: str) -> list[types.PublishDiagnosticsParams]:
    return [p for _, p in client.published[since:] if p.uri == uri]


async def quick_fixes(client, uri: str, diagnostics) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=[types.CodeActionKind.QuickFix]),
        )
    )


@pytest.mark.parametrize("style", list(URIS))
async def test_encoded_uri_gets_diagnostics_hover_actions_close_and_reopen(client: LanguageClient, style: str):
    uri = URIS[style]
    mark = open_doc(client, uri, P.LEAF_INPLACE)
    published = await wait_publish(client, uri, mark, version=1)
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GG101", 2)]
    assert (published.diagnostics[0].data or {}).get("version") == 1

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(2, 0))
    )
    assert hover is not None and "a leaf Variable that requires grad" in hover.contents.value

    actions = await quick_fixes(client, uri, published.diagnostics)
    titles = [a.title for a in actions]
    assert any(t.startswith("gradguard (GG101, unsafe): Rewrite as `w = w + 1`") for t in titles), titles
    fix = next(a for a in actions if a.title.startswith("gradguard (GG101, unsafe)"))
    (change,) = fix.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == 1

    mark = len(client.published)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    assert list((await wait_publish(client, uri, mark)).diagnostics) == []

    mark = open_doc(client, uri, P.LEAF_INPLACE.replace("w += 1", "w.mul_(2)"), version=1)
    again = await wait_publish(client, uri, mark, version=1)
    assert [(d.code, d.range.start.line) for d in again.diagnostics] == [("GG101", 2)]
    if unquote(uri) != uri:
        assert not published_for(client, 0, unquote(uri)), "diagnostics published under the decoded URI"


async def test_settings_change_republishes_under_the_uri_the_client_sent(client: LanguageClient):
    uri = WORKSPACE.as_uri() + "/settings%20change/%E4%B8%AD.py"
    mark = open_doc(client, uri, P.LEAF_INPLACE)
    await wait_publish(client, uri, mark, version=1)
    mark = len(client.published)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"gradguard": {"severity": {"GG101": "warning"}}})
    )
    republished = await wait_publish(client, uri, mark, version=1)
    assert [d.severity for d in republished.diagnostics] == [types.DiagnosticSeverity.Warning]
    await asyncio.sleep(0.3)  # anything published under another spelling would have arrived by now
    others = {p.uri for _, p in client.published[mark:]} - {uri} - {u for u in URIS.values()}
    assert unquote(uri) not in others, others
