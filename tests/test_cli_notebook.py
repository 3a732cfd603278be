"""Jupyter notebooks in the CLI: checked by default, cells as one program, locations per cell, fixes written back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradguard import cli

ROOT = Path(__file__).resolve().parents[1]
LOOP = (ROOT / "examples" / "index_write_loop.py").read_text().splitlines(keepends=True)  # GG301 on line 6


def notebook(cells: list[list[str]], **extra) -> dict:
    out = [{"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]}]
    for i, source in enumerate(cells):
        out.append({"cell_type": "code", "execution_count": i + 1, "metadata": {"tags": [f"t{i}"]},
                    "outputs": [{"name": "stdout", "output_type": "stream", "text": [f"out {i}\n"]}],
                    "source": source})
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.11.7"}}
    meta.update(extra)
    return {"cells": out, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}


def dump(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"  # as Jupyter writes it


@pytest.fixture
def gg(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")

    def run(*args: str):
        capsys.readouterr()
        status = cli.main(["check", "--no-cache", *args])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def train(tmp_path) -> Path:
    # The bug's save (cell 3, line 2) and its backward (cell 3, line 4) come after the set-up in cell 2,
    # which starts with a line magic.
    path = tmp_path / "train.ipynb"
    path.write_text(dump(notebook([["%matplotlib inline\n", *LOOP[:4]], LOOP[4:]])), encoding="utf-8")
    return path


def test_folders_include_notebooks_and_locations_are_per_cell(gg, train):
    status, out, _ = gg("--concise", ".")
    assert status == 1
    assert out.startswith("train.ipynb:cell 3:2:5: GG301 ")
    assert "1 file(s) checked" in out


def test_json_gives_the_cell_and_rows_inside_it(gg, train):
    _, out, _ = gg("--format", "json", "train.ipynb")
    [d] = json.loads(out)
    assert d["cell"] == 3 and d["location"] == {"row": 2, "column": 5}
    assert d["fix"]["edits"][0]["location"] == {"row": 2, "column": 24}


def test_fix_writes_the_cell_back_and_keeps_outputs_and_metadata(gg, train):
    before = train.read_text(encoding="utf-8")
    status, _, err = gg("--fix", "train.ipynb")
    assert status == 0, err
    after = train.read_text(encoding="utf-8")
    expected = before.replace('"    x[i+1] = torch.sin(x[i]) * w[i]\\n"', '"    x[i+1] = torch.sin(x[i].clone()) * w[i]\\n"')
    assert after == expected != before  # byte for byte, apart from the fixed line
    nb = json.loads(after)
    assert nb["cells"][1]["source"][0] == "%matplotlib inline\n"  # the magic is kept
    assert nb["cells"][2]["outputs"] == [{"name": "stdout", "output_type": "stream", "text": ["out 1\n"]}]


def test_diff_shows_the_cell(gg, train):
    status, out, _ = gg("--diff", "train.ipynb")
    assert status == 1
    assert "--- a/train.ipynb:cell 3" in out and "+    x[i+1] = torch.sin(x[i].clone()) * w[i]" in out


def test_magics_and_cell_magics_do_not_break_parsing(gg, tmp_path):
    nb = notebook([["%%bash\n", "echo hi ((\n"], ["!pip install torch\n", "import torch\n", "x = 1\n"]])
    (tmp_path / "m.ipynb").write_text(dump(nb), encoding="utf-8")
    assert gg("m.ipynb") == (0, "All checks passed (1 file(s) checked).\n", "")


def test_a_notebook_in_another_language_is_skipped_with_a_note(gg, tmp_path):
    nb = notebook([["x <- 1\n"]], language_info={"name": "R"})
    (tmp_path / "r.ipynb").write_text(dump(nb), encoding="utf-8")
    status, out, err = gg("r.ipynb")
    assert status == 0 and "r.ipynb: a notebook in r, not Python; skipped" in err
    assert "All checks passed" not in out


def test_broken_notebook_json_is_an_error(gg, tmp_path):
    (tmp_path / "bad.ipynb").write_text('{"cells": [', encoding="utf-8")
    status, _, err = gg("bad.ipynb")
    assert status == 2 and "bad.ipynb: not valid notebook JSON" in err


def test_add_noqa_goes_into_the_cell(gg, train):
    status, out, _ = gg("--add-noqa", "train.ipynb")
    assert status == 0 and "Added 1 noqa comment(s) in 1 file(s)." in out
    cell = json.loads(train.read_text(encoding="utf-8"))["cells"][2]["source"]
    assert cell[1] == "    x[i+1] = torch.sin(x[i]) * w[i]  # noqa: GG301\n"
    assert gg("train.ipynb")[0] == 0
