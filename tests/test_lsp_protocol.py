"""The language server's protocol edges over real stdio (issues 22 and 23): notifications about documents that
are not open, cancelled requests, a 3,000-cell notebook, and cell numbers as the editor shows them.

The real `gradguard server` process, driven by pytest-lsp, or by the raw JSON-RPC driver where the server's
stderr (the editor's output channel) is what is checked.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures import programs as P  # noqa: E402
from lsp_fixtures.harness import (  # noqa: E402
    WORKSPACE,
    fresh_uri,
    init_params,
    make_client,
    open_doc,
    server_command,
    wait_publish,
)
from lsp_fixtures.raw import RawServer  # noqa: E402

CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)
module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    lsp_client.initialize_result = await lsp_client.initialize_session(init_params())
    yield
    await lsp_client.shutdown_session()


def text_id(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def open_notebook(client: LanguageClient, uri: str, cells: list[tuple[str, str, str]]) -> int:
    """Open a notebook of (kind, cell URI, text) cells, kind "code" or "markdown"; the publish mark."""
    mark = len(client.published)
    kinds = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kinds[kind], document=cell) for kind, cell, _ in cells]),
        cell_text_documents=[
            types.TextDocumentItem(uri=cell, language_id="python" if kind == "code" else "markdown", version=1,
                                   text=text)
            for kind, cell, text in cells]))
    return mark


def edit_cell(cell: str, version: int, text: str) -> types.NotebookDocumentCellContentChanges:
    return types.NotebookDocumentCellContentChanges(
        document=types.VersionedTextDocumentIdentifier(uri=cell, version=version),
        changes=[types.TextDocumentContentChangeWholeDocument(text=text)])


# ---- notifications about documents that are not open --------------------------------------------------


@module_loop
async def test_notifications_about_documents_that_are_not_open_are_logged_never_shown(client: LanguageClient):
    # didChange for a URI never opened raised KeyError inside pygls: "Error in server: KeyError" in the editor.
    never = fresh_uri("never_opened")
    notebook = (WORKSPACE / "_never_opened.ipynb").as_uri()
    shown, logged = len(client.messages), len(client.log_messages)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=never, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="w += 1\n")]))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=text_id(never)))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=text_id(never)))
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[edit_cell(f"{notebook}#C0", 2, "w += 1\n")]))))
    client.notebook_document_did_save(types.DidSaveNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=notebook)))
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=notebook), cell_text_documents=[]))

    # An open notebook's change that edits one of its cells and one cell that is not open: the known edit lands.
    nb = (WORKSPACE / "_half_known.ipynb").as_uri()
    cells = [("code", f"{nb}#C0", "import torch\nw = torch.rand(4, requires_grad=True)\n"),
             ("code", f"{nb}#C1", "y = w * 2\n")]
    mark = open_notebook(client, nb, cells)
    assert list((await wait_publish(client, cells[1][1], mark)).diagnostics) == []
    mark = len(client.published)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[edit_cell(f"{nb}#C9", 2, "pass\n"), edit_cell(cells[1][1], 2, "w += 1\n")]))))
    published = await wait_publish(client, cells[1][1], mark, version=2)
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GG101", 0)]

    assert [m.message for m in client.messages[shown:]] == []
    ignored = [m.message for m in client.log_messages[logged:] if "not open, ignored" in m.message]
    assert ignored == [
        f"gradguard: textDocument/didChange for a document that is not open, ignored: {never}",
        f"gradguard: textDocument/didSave for a document that is not open, ignored: {never}",
        f"gradguard: textDocument/didClose for a document that is not open, ignored: {never}",
        f"gradguard: notebookDocument/didChange for a document that is not open, ignored: {notebook}",
        f"gradguard: notebookDocument/didSave for a document that is not open, ignored: {notebook}",
        f"gradguard: notebookDocument/didClose for a document that is not open, ignored: {notebook}",
        f"gradguard: notebookDocument/didChange for a document that is not open, ignored: {nb}#C9",
    ]


# ---- cancellation ---------------------------------------------------------------------------------------


def test_cancelled_requests_are_answered_and_leave_no_warning_on_stderr(tmp_path: Path):
    # pygls wrote 'Cancel notification for unknown message id' into the editor's output channel each time the
    # editor cancelled a request already answered (a hover, once the cursor moved on).
    stderr = open(tmp_path / "stderr.txt", "wb")
    server = RawServer(stderr=stderr)
    try:
        server.initialize({"settings": {"jedi": {"warmup": []}}})
        uri = fresh_uri("cancel")
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": P.LEAF_INPLACE}}})
        while server.receive().get("method") != "textDocument/publishDiagnostics":
            pass
        hover = {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 0}}
        server.send({"id": 2, "method": "textDocument/hover", "params": hover})
        assert "a leaf Variable" in server.response(2)["result"]["contents"]["value"]
        server.send({"method": "$/cancelRequest", "params": {"id": 2}})  # answered already
        server.send({"method": "$/cancelRequest", "params": {"id": 77}})  # never sent

        # A request still waiting (fix-all behind a long first analysis) gets RequestCancelled.
        long_uri = fresh_uri("cancel_long")
        long_text = P.LEAF_INPLACE + "".join(f"def f{i}(x):\n    x.add_(1)\n    return x * {i}\n\n" for i in range(3000))
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": long_uri, "languageId": "python", "version": 1, "text": long_text}}})
        server.send({"id": 3, "method": "workspace/executeCommand", "params": {
            "command": "gradguard.applyFixAll", "arguments": [{"uri": long_uri}]}})
        time.sleep(0.2)
        server.send({"method": "$/cancelRequest", "params": {"id": 3}})
        assert server.response(3)["error"]["code"] == -32800  # RequestCancelled

        server.send({"id": 4, "method": "textDocument/hover", "params": hover})  # the server carries on
        assert "a leaf Variable" in server.response(4)["result"]["contents"]["value"]
        server.send({"id": 5, "method": "shutdown"})
        server.response(5)
        server.send({"method": "$/cancelRequest", "params": {"id": 5}})  # notifications after shutdown: dropped
        server.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        server.send({"method": "exit"})
        assert server.proc.wait(timeout=20) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        stderr.close()
    assert (tmp_path / "stderr.txt").read_text() == ""


# ---- cell numbers -----------------------------------------------------------------------------------------

MARKDOWN_BETWEEN = [
    ("markdown", "#M0", "# Setup\n"),
    ("code", "#C1", "import torch\nw = torch.rand(4, requires_grad=True)\n"),
    ("markdown", "#M2", "Now the bug:\n"),
    ("markdown", "#M3", "(it raises at once)\n"),
    ("code", "#C4", "y = w * 2\nw += 1\n"),
]


def notebook_json(cells: list[tuple[str, str, str]]) -> str:
    return json.dumps({"cells": [
        {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
         **({"execution_count": None, "outputs": []} if kind == "code" else {})} for kind, _, text in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


@module_loop
async def test_notebook_cells_are_numbered_as_the_editor_shows_them_markdown_included(client: LanguageClient,
                                                                                       tmp_path: Path):
    # The editor's status bar says 'Cell 5 of 5' for the last cell; the CLI said 'cell 5', the hover 'cell 2'.
    # The server asks for every cell (no cell languages in its notebook selector), markdown too, to count them.
    (selector,) = client.initialize_result.capabilities.notebook_document_sync.notebook_selector
    assert (selector.notebook, getattr(selector, "cells", None)) == ("*", None)
    nb = (WORKSPACE / "_markdown_between.ipynb").as_uri()
    cells = [(kind, nb + fragment, text) for kind, fragment, text in MARKDOWN_BETWEEN]
    mark = open_notebook(client, nb, cells)
    published = await wait_publish(client, cells[4][1], mark)
    (diag,) = published.diagnostics
    assert (diag.code, diag.range.start.line) == ("GG101", 1)
    assert "(created on line 2 of cell 2)" in diag.message
    assert [(r.location.uri, r.location.range.start.line) for r in diag.related_information] == [(cells[1][1], 1)]

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=text_id(cells[4][1]), position=types.Position(line=0, character=4)))  # `w` in `y = w * 2`
    assert "created on line 2 of cell 2" in hover.contents.value, hover.contents.value

    # The CLI on the same notebook: the same cell, line and message.
    (tmp_path / "nb.ipynb").write_text(notebook_json(cells))
    run = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--format", "json", "nb.ipynb"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    (cli,) = json.loads(run.stdout)
    assert (cli["code"], cli["location"]["row"], cli["fix"]["edits"][0]["cell"]) == ("GG101", 2, 5)
    assert diag.message == cli["message"]


# ---- a 3,000-cell notebook ----------------------------------------------------------------------------------


@module_loop
async def test_a_3000_cell_notebook_opens_and_edits_with_each_cell_named_as_the_editor_numbers_it(
        client: LanguageClient):
    nb = (WORKSPACE / "_3000_cells.ipynb").as_uri()
    cells = [("code", f"{nb}#C0", "import torch\nw = torch.rand(4, requires_grad=True)\n")]
    for i in range(1, 2999):
        if i % 10 == 0:
            cells.append(("markdown", f"{nb}#M{i}", f"## Part {i // 10}\n"))
        else:
            cells.append(("code", f"{nb}#C{i}", f"x{i} = w * {i}\nprint(x{i}.shape)\n"))
    cells.append(("code", f"{nb}#C2999", "w += 1\n"))
    started = len(client.published)
    mark = open_notebook(client, nb, cells)
    published = await wait_publish(client, cells[-1][1], mark, timeout=120)
    (diag,) = published.diagnostics
    assert diag.code == "GG101" and "(created on line 2 of cell 1)" in diag.message
    code_cells = {uri for kind, uri, _ in cells if kind == "code"}
    assert {p.uri for _, p in client.published[started:]} == code_cells  # markdown cells get nothing
    assert all(list(p.diagnostics) == [] for _, p in client.published[started:] if p.uri != cells[-1][1])

    # Fixing the last cell clears it; the notebook is analysed again as a whole.
    mark = len(client.published)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[edit_cell(cells[-1][1], 2, "with torch.no_grad():\n    w += 1\n")]))))
    assert list((await wait_publish(client, cells[-1][1], mark, version=2, timeout=120)).diagnostics) == []
    assert [p.uri for _, p in client.published[mark:]] == [cells[-1][1]]  # the cells that did not change: nothing
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=text_id(cells[-1][1]), position=types.Position(line=1, character=4)))
    assert "created on line 2 of cell 1" in hover.contents.value
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=nb),
        cell_text_documents=[text_id(uri) for _, uri, _ in cells]))
