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


def test_line_numbers_in_messages_name_the_cell(gg, train):
    # The engine numbers the joined program's lines (the save is its line 7); the user sees cell 3, line 2.
    _, out, _ = gg("train.ipynb")
    assert "read by `sin` on line 2 of cell 3 and saved for backward; `backward()` on line 4 of cell 3" in out
    assert "1. Line 2 of cell 3: `sin` saves its input" in out
    assert "line 7" not in out and "Line 7" not in out
    _, out, _ = gg("--lang", "zh", "--format", "json", "train.ipynb")
    [d] = json.loads(out)
    assert "在第 3 个单元格第 2 行被 `sin` 读取" in d["message"] and "第 7 行" not in d["message"]


def test_relabel_leaves_code_spans_and_other_files_alone():
    from gradguard.notebook import CellMap

    cmap = CellMap([2, 4], [0, 5])  # cell 2 holds lines 1-5 of the joined program, cell 4 lines 6-
    assert cmap.relabel("saved on line 7; `# line 7` stays; lines 2-7 cross", "en") == \
        "saved on line 2 of cell 4; `# line 7` stays; line 2 of cell 2 to line 2 of cell 4 cross"
    assert cmap.relabel("defined in `model.py` line 7", "en") == "defined in `model.py` line 7"
    assert cmap.relabel("第 6 行的 `backward()`", "zh") == "第 4 个单元格第 1 行的 `backward()`"


def test_a_syntax_error_in_a_cell_names_the_cell_in_its_note(gg, tmp_path):
    nb = notebook([["import torch\n"], ["x = (1,\n"]])
    (tmp_path / "s.ipynb").write_text(dump(nb), encoding="utf-8")
    status, out, _ = gg("s.ipynb")
    assert status == 1 and out.startswith("s.ipynb:cell 3:1:5: parse ")
    assert "of cell 3 not analysed)" in out


def test_ipython_syntax_is_blanked_only_where_a_statement_starts(gg, tmp_path):
    cells = [
        ["import torch\n", "files = !ls\n", "t = %timeit -o 1\n", "torch.sin?\n", "??torch.cos\n"],
        ["loss, acc = 1.0, 2.0\n", "print(\"loss %f acc %f\"\n", "      % (loss, acc))\n"],  # `%` continues
        ["for f in [1]:\n", "    !echo $f\n"],  # the loop's body stays a body
        ["%%time\n", "w = torch.rand(3, requires_grad=True)\n", "w += 1\n"],  # %%time runs its body as Python
    ]
    (tmp_path / "i.ipynb").write_text(dump(notebook(cells)), encoding="utf-8")
    status, out, _ = gg("--concise", "i.ipynb")
    assert out.splitlines()[0].startswith("i.ipynb:cell 5:3:1: GG101 ")
    assert status == 1 and "parse" not in out


def test_python_lines_keep_strings_and_continuations():
    from gradguard.notebook import python_lines

    assert python_lines('s = """\n!not a shell line\n"""\n!echo hi\n') == ['s = """', "!not a shell line", '"""', ""]
    assert python_lines("x = 1 + \\\n  % 2\n") == ["x = 1 + \\", "  % 2"]
    assert python_lines("%%bash\nls\n") == ["", ""]
    assert python_lines("%%capture out\nx = 1\n") == ["", "x = 1"]  # %%time and %%capture run Python


# A notebook as other writers leave it (VS Code's JSON.stringify: floats as 0.000021, `\/`, Windows line
# endings inside the cell's strings): --fix must change the fixed line's string and nothing else.
FOREIGN = '''{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {"papermill": {"duration": 0.000021, "start_time": 1e21}, "url": "a\\/b \\u00e9"},
   "outputs": [],
   "source": [
    "import torch\\r\\n",
    "x = torch.zeros(4)\\r\\n",
    "w = torch.rand(4, requires_grad=True)\\r\\n",
    "for i in range(3):\\r\\n",
    "    x[i+1] = torch.sin(x[i]) * w[i]  # café\\r\\n",
    "x.sum().backward()"
   ]
  }
 ],
 "metadata": {"language_info": {"name": "python"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
'''


def test_fix_rewrites_only_the_fixed_source_string(gg, tmp_path):
    path = tmp_path / "vs.ipynb"
    path.write_bytes(FOREIGN.encode("utf-8"))
    status, _, err = gg("--fix", "vs.ipynb")
    assert status == 0, err
    expected = FOREIGN.replace("torch.sin(x[i]) * w[i]  # café", "torch.sin(x[i].clone()) * w[i]  # café")
    assert path.read_bytes() == expected.encode("utf-8") != FOREIGN.encode("utf-8")


def test_fix_of_a_cell_stored_as_one_string(gg, tmp_path):
    nb = notebook([["import torch\n"], "".join(LOOP)])
    raw = dump(nb)
    (tmp_path / "s.ipynb").write_text(raw, encoding="utf-8")
    assert gg("--fix", "s.ipynb")[0] == 0
    after = (tmp_path / "s.ipynb").read_text(encoding="utf-8")
    assert json.loads(after)["cells"][2]["source"] == "".join(LOOP).replace("sin(x[i])", "sin(x[i].clone())")
    assert after.replace("sin(x[i].clone())", "sin(x[i])") == raw


def test_github_and_sarif_point_at_the_notebook_file_lines(gg, train):
    line = next(i for i, text in enumerate(train.read_text(encoding="utf-8").splitlines(), 1)
                if "torch.sin(x[i])" in text)
    _, out, _ = gg("--format", "github", "train.ipynb")
    assert out == (f"::error title=gradguard (GG301) cell 3%3A2%3A5,file=train.ipynb,line={line},endLine={line}::"
                   + out.split("::", 2)[2])
    _, out, _ = gg("--format", "sarif", "train.ipynb")
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": line, "endLine": line}
    assert result["properties"] == {"cell": 3, "cellLine": 2, "cellColumn": 5}
    assert "fixes" not in result  # a cell's edit cannot be said in the JSON text's columns


def test_json_related_places_and_edits_name_their_own_cell(gg, tmp_path):
    nb = notebook([["import torch\n", "w = torch.rand(4, requires_grad=True)\n"], ["w += 1\n"]])
    (tmp_path / "leaf.ipynb").write_text(dump(nb), encoding="utf-8")
    _, out, _ = gg("--format", "json", "leaf.ipynb")
    [d] = json.loads(out)
    assert (d["cell"], d["location"]) == (3, {"row": 1, "column": 1})
    assert "(created on line 2 of cell 2)" in d["message"]
    [created] = d["related"]
    assert (created["cell"], created["location"]["row"]) == (2, 2)
    assert [(e["cell"], e["location"]["row"]) for e in d["fix"]["edits"]] == [(3, 1)]


@pytest.mark.parametrize("layout", [
    {"indent": 1}, {"indent": None}, {"indent": "\t"}, {"indent": 2, "ensure_ascii": True},
    {"separators": (",", ":")}, {"indent": 1, "sort_keys": True},
], ids=["jupyter", "one-line", "tabs", "ascii-escapes", "compact", "sorted"])
def test_fix_changes_only_the_fixed_line_in_any_json_layout(gg, tmp_path, layout):
    cells = [["x = 'é'\n"], [*LOOP[:5], LOOP[5].replace("\n", "  # é\n"), *LOOP[6:]]]
    nb = notebook(cells)
    nb["metadata"]["papermill"] = {"duration": 2.5e-05, "float": 1.0}
    raw = json.dumps(nb, ensure_ascii=layout.pop("ensure_ascii", False), **layout) + "\n"
    (tmp_path / "nb.ipynb").write_text(raw, encoding="utf-8")
    assert gg("--fix", "nb.ipynb")[0] == 0
    after = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    old_line, new_line = cells[1][5], cells[1][5].replace("sin(x[i])", "sin(x[i].clone())")
    assert old_line != new_line
    ascii_only = raw.isascii()
    assert after == raw.replace(json.dumps(old_line, ensure_ascii=ascii_only), json.dumps(new_line, ensure_ascii=ascii_only))
    assert json.loads(after)["cells"][2]["source"][5] == new_line


GAN_CELLS = [
    ["import torch\n", "import torch.nn as nn\n", "\n", "torch.manual_seed(0)\n",
     "G = nn.Linear(4, 1)\n", "D = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))\n",
     "opt_D = torch.optim.SGD(D.parameters(), lr=0.1)\n", "opt_G = torch.optim.SGD(G.parameters(), lr=0.1)\n"],
    ["fake = G(torch.randn(8, 4))\n", "pred_fake = D(fake)\n", "ones = torch.ones(8, 1)\n"],
    ["loss_D = D(fake.detach()).pow(2).mean()\n", "opt_D.zero_grad()\n", "loss_D.backward()\n", "opt_D.step()\n",
     "print(loss_D.item())\n"],
    ["loss_G = (pred_fake - ones).pow(2).mean()\n", "opt_G.zero_grad()\n", "loss_G.backward()\n", "opt_G.step()\n"],
]


def test_a_fix_moving_a_forward_from_one_cell_to_another_is_applied_in_both(gg, tmp_path):
    # GG401's fix moves `pred_fake = D(fake)` (cell 3) after `opt_D.step()` (cell 4): one edit over the text between
    # was offered and never applied (a notebook applies edits inside a cell); it is the two line edits it makes
    path = tmp_path / "gan.ipynb"
    path.write_text(dump(notebook(GAN_CELLS)), encoding="utf-8")
    status, out, _ = gg("--format", "json", "gan.ipynb")
    found = json.loads(out)
    assert [(f["code"], f["cell"]) for f in found] == [("GG401", 4)]
    assert [(e["cell"], e["location"]["row"], e["end_location"]["row"], e["content"]) for e in found[0]["fix"]["edits"]] \
        == [(3, 2, 3, ""), (4, 4, 4, "\npred_fake = D(fake)")]
    status, _, _ = gg("--fix", "--unsafe-fixes", "gan.ipynb")
    assert status == 0
    cells = [c["source"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert cells[1] == ["fake = G(torch.randn(8, 4))\n", "ones = torch.ones(8, 1)\n"]
    assert cells[2] == GAN_CELLS[2][:4] + ["pred_fake = D(fake)\n", GAN_CELLS[2][4]]
    namespace: dict = {}
    for source in cells:  # the fixed notebook runs
        exec("".join(source), namespace)
