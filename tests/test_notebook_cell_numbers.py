"""One notebook convention: every surface names a place in a notebook as `line L of cell N`, N counting every
cell of the notebook (markdown too) as VS Code's status bar ('Cell 4 of 4') and Jupyter number them.

The checker, the language server and the agents' text are tested here on one notebook; the in-place tracer
(`%load_ext gradguard`) on the same notebook, saved, in IPython's InteractiveShell running real torch code.
tests/e2e/vscode_e2e.js compares the hover and the Problems panel with VS Code's own status bar.
"""
from __future__ import annotations

import json

import pytest
import torch  # noqa: F401 - the cells use it; a missing torch fails here
from IPython.core.interactiveshell import InteractiveShell

from gradguard import agent
from gradguard.cli import main as cli_main
from gradguard.lsp.documents import Piece, Snapshot
from gradguard.output.common import _line_said

SETUP = "import torch\nw = torch.rand(3, requires_grad=True)\n"
BUG = "y = torch.sigmoid(w)\nz = y * 2\ny.mul_(2)\nz.sum().backward()"


def notebook(cells) -> str:
    """nbformat 4.5 JSON; `cells` are (type, id, source)."""
    return json.dumps({
        "cells": [{"cell_type": kind, "id": cid, "metadata": {}, "source": source,
                   **({"execution_count": None, "outputs": []} if kind == "code" else {})} for kind, cid, source in cells],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1)


# markdown, set-up, markdown, the bug: the bug is cell 4 as the editor counts, the second code cell
CELLS = [("markdown", "title", "# Sigmoid, then in place\n"), ("code", "setup", SETUP),
         ("markdown", "note", "The bug:\n"), ("code", "bug", BUG)]


@pytest.fixture
def nb_path(tmp_path):
    path = tmp_path / "train.ipynb"
    path.write_text(notebook(CELLS))
    return path


def test_the_checker_names_the_cell_as_the_editor_counts_it_in_the_header_the_message_and_the_notes(nb_path, capsys):
    cli_main(["check", "--no-cache", str(nb_path)])
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert head.startswith(f"{nb_path}:cell 4:3:1: GG201 ")
    assert "on line 1 of cell 4" in head and "on line 4 of cell 4" in head
    assert "    = note: line 1 of cell 4: saved for backward by `sigmoid` here" in out
    assert "cell 4, line" not in out


def test_the_checker_says_it_in_chinese_the_way_the_server_does(nb_path, capsys):
    cli_main(["check", "--no-cache", "--lang", "zh", str(nb_path)])
    out = capsys.readouterr().out
    assert "= 注: 第 4 个单元格第 1 行: " in out


def test_the_json_output_and_the_agent_text_name_the_same_cell(nb_path, capsys):
    cli_main(["check", "--no-cache", "--format", "json", str(nb_path)])
    [finding] = json.loads(capsys.readouterr().out)
    assert (finding["cell"], finding["location"]["row"]) == (4, 3)
    assert [r["cell"] for r in finding["related"]] == [4, 4]
    record = {"path": "train.ipynb", "not_analysed": [], "findings": [{
        "code": "GG201", "name": "saved-tensor-modified", "severity": "error", "message": "m", "cell": 4, "line": 3,
        "column": 1, "explanation": "", "fixes": [{"title": "t", "safety": "safe", "edits": [
            {"cell": 4, "line": 3, "column": 1, "end_line": 3, "end_column": 10, "new_text": "y = y.mul(2)"}]}]}]}
    lines = agent.findings_text(record).splitlines()
    assert lines[1].startswith("train.ipynb:cell 4:3:1: GG201 ")
    assert lines[2] == "  fix (safe): t: replace 3:1-3:10 of cell 4 with 'y = y.mul(2)'"


def test_the_server_and_the_checker_word_a_line_of_a_cell_alike():
    # the server's analysed text: the code cells only, each at its number among all cells (as VS Code sends them)
    snap = Snapshot("nb", SETUP + BUG + "\n", "/x/train.ipynb",
                    [Piece("cell-2", 0, 2, 1, cell=2), Piece("cell-4", 2, 4, 1, cell=4)], notebook_version=1)
    for lang in ("en", "zh"):
        assert snap.describe_line(2, lang) == _line_said(4, 0, lang)
        assert snap.describe_line(1, lang) == _line_said(2, 1, lang)
    assert snap.describe_line(5, "en") == "line 4 of cell 4"


# ---- the tracer, in IPython, on the same notebook saved beside the kernel -----------------------------------


@pytest.fixture
def shell(capsys):
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance()
    ip.run_cell("%colors nocolor", store_history=False)
    capsys.readouterr()
    yield ip
    ip.run_cell("%unload_ext gradguard", store_history=False)
    InteractiveShell.clear_instance()


def run(ip, capsys, code: str, cell_id: str | None = None) -> str:
    ip.run_cell(code, store_history=True, cell_id=cell_id)
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_jupyterlab_the_tracer_finds_the_cell_by_the_id_the_frontend_sent(shell, capsys, nb_path):
    # ipykernel sets __session__ to the notebook's path (JupyterLab); JupyterLab sends each cell's id
    shell.user_ns["__session__"] = str(nb_path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, SETUP, cell_id="setup")
    out = run(shell, capsys, BUG, cell_id="bug")
    assert out.count("error [stale-save]") == 1
    assert "saved    line 1 of cell 4  y = torch.sigmoid(w)" in out
    assert "written  line 3 of cell 4  y.mul_(2)" in out
    assert "In[" not in out.split("error [stale-save]")[1]


def test_jupyterlab_an_edited_cell_not_saved_yet_is_still_found_by_its_id(shell, capsys, nb_path):
    shell.user_ns["__session__"] = str(nb_path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, SETUP, cell_id="setup")
    out = run(shell, capsys, "# edited, not saved\n" + BUG, cell_id="bug")
    assert "written  line 4 of cell 4  y.mul_(2)" in out


def test_vscode_the_tracer_finds_the_cell_by_its_code(shell, capsys, nb_path):
    # VS Code's kernels get __vsc_ipynb_file__; the cell ids VS Code sends are its own URIs, not the file's
    shell.user_ns["__vsc_ipynb_file__"] = str(nb_path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, SETUP, cell_id="vscode-notebook-cell:/x/train.ipynb#W1sZmlsZQ%3D%3D")
    out = run(shell, capsys, BUG, cell_id="vscode-notebook-cell:/x/train.ipynb#W3sZmlsZQ%3D%3D")
    assert "written  line 3 of cell 4  y.mul_(2)" in out


def test_the_tracer_and_the_checker_agree_on_the_cell(shell, capsys, nb_path):
    cli_main(["check", "--no-cache", "--format", "json", str(nb_path)])
    [finding] = json.loads(capsys.readouterr().out)
    shell.user_ns["__session__"] = str(nb_path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, SETUP, cell_id="setup")
    out = run(shell, capsys, BUG, cell_id="bug")
    row = finding["location"]["row"]
    assert f"written  line {row} of cell {finding['cell']}  y.mul_(2)" in out


def test_a_cell_the_saved_notebook_does_not_hold_is_named_by_its_execution_count(shell, capsys, nb_path):
    shell.user_ns["__vsc_ipynb_file__"] = str(nb_path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, SETUP)
    count = shell.execution_count
    out = run(shell, capsys, "y = torch.sigmoid(w)\ny.mul_(2)\ny.sum().backward()")
    assert f"written  line 2 of In[{count}]  y.mul_(2)" in out


def test_two_saved_cells_with_the_same_code_and_no_id_name_neither(shell, capsys, tmp_path):
    path = tmp_path / "twice.ipynb"
    path.write_text(notebook([("code", "a", SETUP), ("code", "b", BUG), ("code", "c", BUG)]))
    shell.user_ns["__vsc_ipynb_file__"] = str(path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, SETUP)
    count = shell.execution_count
    out = run(shell, capsys, BUG)
    assert f"written  line 3 of In[{count}]  y.mul_(2)" in out and "of cell" not in out


def test_the_tracer_says_it_in_chinese_as_the_checker_does(shell, capsys, nb_path):
    shell.user_ns["__session__"] = str(nb_path)
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, "%gradguard zh")
    run(shell, capsys, SETUP, cell_id="setup")
    out = run(shell, capsys, BUG, cell_id="bug")
    assert "第 4 个单元格第 3 行  y.mul_(2)" in out


def test_the_server_s_related_locations_say_the_cell():
    """VS Code labels a related location `train.ipynb(1, 5)`, without the cell: the note itself names it."""
    from pygls.workspace.position_codec import PositionCodec

    from gradguard.engine import check_text
    from gradguard.lsp.convert import Positions, finding_diagnostic
    from gradguard.lsp.settings import Settings

    text = SETUP + BUG + "\n"
    snap = Snapshot("nb", text, "/x/train.ipynb",
                    [Piece("cell-2", 0, 2, 1, cell=2), Piece("cell-4", 2, 4, 1, cell=4)], notebook_version=1)
    for lang, note in (("en", "line 1 of cell 4: saved for backward by `sigmoid` here"),
                       ("zh", "第 4 个单元格第 1 行：在这里被 `sigmoid` 保存用于反向传播")):
        [finding] = check_text(text, "/x/train.ipynb", lang=lang).findings
        uri, diagnostic = finding_diagnostic(finding, Positions(snap, PositionCodec()), Settings(), lang=lang)
        first = diagnostic.related_information[0]
        assert (uri, first.location.uri, first.location.range.start.line) == ("cell-4", "cell-4", 0)
        assert first.message == note


def test_a_list_of_lines_is_said_with_its_cells():
    """A fix that moves or recomputes several statements names them as a list (`lines 8, 9`, `lines 15 and 17`)."""
    from gradguard.notebook import CellMap

    cells = CellMap([2, 4], [0, 10])
    assert cells.relabel("Copy lines 8, 9 into the loop on line 11", "en") == \
        "Copy lines 8, 9 of cell 2 into the loop on line 1 of cell 4"
    assert cells.relabel("Recompute lines 3 and 12 after the step", "en") == \
        "Recompute line 3 of cell 2 and line 2 of cell 4 after the step"
    assert cells.relabel("把第 8, 9 行复制到第 11 行的循环里", "zh") == "把第 2 个单元格第 8、9 行复制到第 4 个单元格第 1 行的循环里"
    assert cells.relabel("重新计算第 3、12 行", "zh") == "重新计算第 2 个单元格第 3 行、第 4 个单元格第 2 行"
