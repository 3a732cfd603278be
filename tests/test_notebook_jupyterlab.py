"""JupyterLab's notebook document (jupyterlab-lsp sends every cell joined into one Python document under
`.virtual_documents/`): its messages and hover name `line L of cell N` like every other surface, with the cells
read from the saved notebook and matched with the document line by line."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from gradguard.jupyter.virtual_documents import cell_map, saved_notebook

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

SETUP = ["import torch", "w = torch.rand(3, requires_grad=True)", "y = torch.sigmoid(w)", "z = y * 2"]
BUG = ["y.mul_(2)", "z.sum().backward()"]
CELLS = [("markdown", ["# Sigmoid, then in place", "", "two lines of prose"]), ("code", SETUP),
         ("markdown", ["The bug:"]), ("code", BUG)]


def notebook_json(cells) -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": "\n".join(lines),
                   **({"execution_count": None, "outputs": []} if kind == "code" else {})}
                  for i, (kind, lines) in enumerate(cells)],
        "metadata": {"kernelspec": {"name": "python3", "language": "python"}, "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5})


def lab_document(cells) -> str:
    """The document @jupyterlab/lsp makes of the cells (VirtualDocument.value): each cell's lines and a newline,
    joined by two blank lines; a markdown cell goes to a document of its own and leaves one empty line."""
    return "\n\n".join(("\n".join(lines) if kind == "code" else "") + "\n" for kind, lines in cells)


def saved(tmp_path, cells=CELLS) -> str:
    (tmp_path / "train.ipynb").write_text(notebook_json(cells))
    return str(tmp_path / ".virtual_documents" / "train.ipynb")


def test_the_document_as_jupyterlab_sent_it_in_the_e2e_run():
    # textDocument/didOpen of tests/e2e/jupyterlab_e2e.js's pgd.ipynb, as the proxy's trace logged it (JupyterLab 4.6)
    sent = ("\n\n\nimport torch\nfrom torch import nn\n\nmodel = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
            "x = torch.rand(5, 4)\ntarget = torch.tensor([0, 1, 0, 1, 1])\neps, alpha = 0.1, 0.02\n"
            "delta = torch.zeros_like(x, requires_grad=True)\n\n\nfor step in range(3):\n"
            "    loss = nn.functional.cross_entropy(model(x + delta), target)\n    loss.backward()\n"
            "    delta.add_(alpha * delta.grad.sign())\n    delta.grad.zero_()\n")
    code = sent.strip("\n").split("\n\n\n")
    assert lab_document([("markdown", ["# PGD attack on a small classifier"]), ("code", code[0].split("\n")),
                         ("code", code[1].split("\n"))]) == sent


def test_cells_start_where_jupyterlab_puts_them_and_count_the_markdown_cells(tmp_path):
    cells = cell_map(saved(tmp_path), lab_document(CELLS))
    assert (cells.numbers, cells.starts) == ([2, 4], [3, 12])
    assert cells.relabel("saved on line 6; `backward()` on line 14", "en") == \
        "saved on line 3 of cell 2; `backward()` on line 2 of cell 4"


def test_lines_added_inside_a_cell_and_not_saved_move_the_cells_after_it(tmp_path):
    edited = [CELLS[0], ("code", ["# a comment", *SETUP[:2], "", *SETUP[2:]]), CELLS[2], CELLS[3]]
    cells = cell_map(saved(tmp_path), lab_document(edited))
    assert (cells.numbers, cells.starts) == ([2, 4], [3, 14])
    assert cells.relabel("line 16", "en") == "line 2 of cell 4"


def test_a_line_added_at_the_end_of_a_cell_is_that_cells(tmp_path):
    edited = [CELLS[0], ("code", [*SETUP, "print(z)"]), CELLS[2], CELLS[3]]
    assert cell_map(saved(tmp_path), lab_document(edited)).starts == [3, 13]


def test_a_blank_line_added_beside_the_padding_gives_no_map(tmp_path):
    # one more blank line between two cells: the end of the one or the top of the other, the text cannot tell
    edited = [("code", [*SETUP, ""]), ("code", BUG)]
    assert cell_map(saved(tmp_path, [("code", SETUP), ("code", BUG)]), lab_document(edited)) is None


def test_a_first_cell_of_code_starts_the_document(tmp_path):
    cells = [("code", SETUP), ("code", BUG)]
    assert cell_map(saved(tmp_path, cells), lab_document(cells)).starts == [0, 6]


def test_a_line_rewritten_as_two_moves_the_cells_after_it(tmp_path):
    edited = [CELLS[0], ("code", ["import torch", "w = torch.rand(3,", "    requires_grad=True)", *SETUP[2:]]), *CELLS[2:]]
    assert cell_map(saved(tmp_path), lab_document(edited)).starts == [3, 13]


def test_code_cells_moved_among_themselves_are_numbered_by_their_new_places(tmp_path):
    # cells are numbered by place, as the editor shows them: the bug's cell, moved up, is now cell 2
    cells = cell_map(saved(tmp_path), lab_document([CELLS[0], CELLS[3], CELLS[2], CELLS[1]]))
    assert (cells.numbers, cells.starts) == ([2, 4], [3, 10])
    assert cells.relabel("line 5", "en") == "line 2 of cell 2"  # z.sum().backward()


def test_a_line_edited_in_place_keeps_the_map(tmp_path):
    edited = [CELLS[0], ("code", ["import torch as T", *SETUP[1:]]), CELLS[2], CELLS[3]]
    assert cell_map(saved(tmp_path), lab_document(edited)).starts == [3, 12]


@pytest.mark.parametrize("cells", [
    pytest.param([*CELLS[:2], ("code", ["x = 1"]), *CELLS[2:]], id="a cell added"),
    pytest.param([CELLS[0], CELLS[1], CELLS[3]], id="a cell removed"),
    pytest.param([CELLS[0], CELLS[2], CELLS[1], CELLS[3]], id="a markdown cell moved past a code cell"),
    pytest.param([CELLS[0], CELLS[1], ("code", ["print(z)"]), CELLS[3]], id="a markdown cell made code"),
])
def test_cells_changed_and_not_saved_give_no_map(tmp_path, cells):
    assert cell_map(saved(tmp_path), lab_document(cells)) is None


def test_jupyterlab_notebook_documents_are_mapped_with_or_without_virtual_documents(tmp_path):
    (tmp_path / "train.ipynb").write_text(notebook_json(CELLS))
    assert saved_notebook(str(tmp_path / ".virtual_documents" / "sub" / "train.ipynb")) == str(tmp_path / "sub" / "train.ipynb")
    assert saved_notebook(str(tmp_path / "train.py")) is None
    # gradguard alone (no pylsp, or GRADGUARD_JUPYTER_SERVER=none): jupyterlab-lsp opens the notebook's own path
    assert saved_notebook(str(tmp_path / "train.ipynb")) == str(tmp_path / "train.ipynb")
    cells = cell_map(str(tmp_path / "train.ipynb"), lab_document(CELLS))
    assert (cells.numbers, cells.starts) == ([2, 4], [3, 12])
    assert cell_map(str(tmp_path / ".virtual_documents" / "missing.ipynb"), lab_document(CELLS)) is None
    assert cell_map(str(tmp_path / "missing.ipynb"), lab_document(CELLS)) is None


# ---- the real server over stdio, as jupyter-lsp starts it -------------------------------------------------

ROOT = Path(tempfile.mkdtemp(prefix="gg-jupyterlab-"))
(ROOT / "train.ipynb").write_text(notebook_json(CELLS))
VIRTUAL_URI = (ROOT / ".virtual_documents" / "train.ipynb").as_uri()

pytestmark_server = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params(root=ROOT))
    yield
    await lsp_client.shutdown_session()


@pytestmark_server
@pytest.mark.parametrize("uri", [VIRTUAL_URI, (ROOT / "train.ipynb").as_uri()], ids=["beside-pylsp", "alone"])
async def test_the_server_names_cells_in_the_message_and_the_hover(client: LanguageClient, uri):
    """Beside pylsp jupyterlab-lsp opens `.virtual_documents/train.ipynb`; alone, `train.ipynb` itself."""
    mark = open_doc(client, uri, lab_document(CELLS))
    published = await wait_publish(client, uri, mark, timeout=60)
    [diagnostic] = [d for d in published.diagnostics if d.source == "gradguard"]
    assert diagnostic.code == "GG201" and diagnostic.range.start.line == 12  # the document's own line: y.mul_(2)
    assert "on line 3 of cell 2" in diagnostic.message and "on line 2 of cell 4" in diagnostic.message
    related = [(r.location.range.start.line, r.message) for r in diagnostic.related_information or []]
    assert related and all(line in (5, 13) for line, _ in related)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=12, character=0)))
    text = hover.contents.value
    assert "line 3 of cell 2" in text and "line 6" not in text.replace("line 6 of", "")
