"""The language server's commands behind the VS Code extension's Language Model Tools (gradguard_check,
gradguard_explain), through the real server process over stdio: the same records `gradguard mcp` gives, for
documents as the editor holds them (unsaved text, notebooks cell by cell)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import WORKSPACE, fresh_uri, init_params, make_client, open_doc, server_command  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)

ROOT = Path(__file__).resolve().parents[1]
SIGMOID_RELU = (ROOT / "server/gradguard/rules/examples/GG202/bad_1_sequential_sigmoid_relu.py").read_text()


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params())
    yield
    await lsp_client.shutdown_session()


async def command(client: LanguageClient, name: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(arguments)))


async def test_agent_check_answers_for_the_unsaved_text_right_after_the_open(client: LanguageClient):
    uri = fresh_uri("agent")
    open_doc(client, uri, SIGMOID_RELU)  # no wait for diagnostics: the command analyses it itself
    answer = await command(client, "gradguard.agentCheck", uri)
    name = Path(uri).name
    record = answer["record"]
    assert record["path"] == name  # relative to the workspace folder
    [finding] = record["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("GG202", 8, 5)
    [fix] = finding["fixes"]
    assert fix["title"].startswith("Use `inplace=False`") and fix["safety"] == "safe"
    assert fix["edits"] == [{"line": 8, "column": 21, "end_line": 8, "end_column": 25, "new_text": "False"}]
    assert answer["text"].splitlines()[:3] == [
        f"{name}: 1 finding.",
        f"{name}:8:5: GG202 (inplace-activation-on-saved, error) " + finding["message"],
        f"  fix (safe): {fix['title']}: replace 8:21-8:25 with 'False'",
    ]


async def test_agent_check_names_the_cell_of_a_notebook_finding(client: LanguageClient):
    nb = (WORKSPACE / "_agent_split.ipynb").as_uri()
    cells = [("import torch\nw = torch.rand(4, requires_grad=True)\n", f"{nb}#C0"), ("w += 1\n", f"{nb}#C1")]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=nb, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for _, u in cells]),
        cell_text_documents=[types.TextDocumentItem(uri=u, language_id="python", version=1, text=t) for t, u in cells]))
    answer = await command(client, "gradguard.agentCheck", nb)
    [finding] = answer["record"]["findings"]
    assert (finding["code"], finding["cell"], finding["line"], finding["column"]) == ("GG101", 2, 1, 1)
    assert finding["fixes"][0]["edits"] == [{"line": 1, "column": 1, "end_line": 1, "end_column": 7, "cell": 2,
                                             "new_text": "w = w + 1"}]
    assert answer["text"].splitlines()[1].startswith("_agent_split.ipynb:cell 2:1:1: GG101 ")


async def test_agent_check_of_a_document_that_is_not_open_says_so(client: LanguageClient):
    uri = fresh_uri("never_opened")
    assert await command(client, "gradguard.agentCheck", uri) == {"error": f"{uri} is not open in the editor"}


async def test_agent_check_of_a_file_outside_the_workspace_says_it_is_not_checked(client: LanguageClient, tmp_path):
    uri = (tmp_path / "elsewhere.py").as_uri()
    open_doc(client, uri, SIGMOID_RELU)
    answer = await command(client, "gradguard.agentCheck", uri)
    assert answer == {"error": f"{tmp_path / 'elsewhere.py'}: outside the workspace folders; gradguard does not check it"}


async def test_agent_explain_gives_the_text_of_gradguard_explain(client: LanguageClient):
    traceback = (ROOT / "tests/e2e/fixtures/traceback.txt").read_text()
    answer = await command(client, "gradguard.agentExplain", traceback)
    from gradguard.explain import explain, render_text

    assert answer == {"text": render_text(explain(traceback, lang="en", roots=[str(WORKSPACE)]), "en")}
    assert answer["text"].startswith("gradguard explain: a tensor saved for backward was modified in place")


async def test_agent_check_paths_checks_a_folder_on_disk_and_refuses_paths_outside_the_workspace(client: LanguageClient,
                                                                                                 tmp_path):
    import os
    import shutil

    folder = WORKSPACE / f"_agent_project_{os.getpid()}"
    folder.mkdir()
    try:
        (folder / "losses.py").write_text(SIGMOID_RELU)
        (folder / "clean.py").write_text("import torch\nx = torch.ones(2) * 2\n")
        answer = await command(client, "gradguard.agentCheckPaths", {"paths": [str(folder)]})
        refused = await command(client, "gradguard.agentCheckPaths", {"paths": [str(folder), str(tmp_path)]})
    finally:
        shutil.rmtree(folder)
    record = answer["record"]
    assert (record["files_checked"], record["findings"]) == (2, 1)
    [file_record] = record["files"]
    assert file_record["path"] == f"{folder.name}/losses.py"
    assert [(f["code"], f["line"], f["column"]) for f in file_record["findings"]] == [("GG202", 8, 5)]
    assert answer["text"].splitlines()[:2] == [f"{folder.name}: 1 finding in 1 file (2 files checked).",
                                               f"{folder.name}/losses.py: 1 finding."]
    assert refused["error"].startswith(f"{tmp_path}: outside the project folder")
