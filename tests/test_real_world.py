"""The real-world corpus (tests/real_world/) behaves under torch 2.13 as its manifests say.

Every bug raises its manifest's error (silent family: prints its wrong gradient), every .fixed.py and every correct
program runs clean, and the manifests are well-formed; that holds for every form (single-file reductions and long
scripts, multi-file projects run from their entry script, notebooks run cell by cell). All programs run in one worker
subprocess (verify.py). gradguard's scores on this corpus are `make recall`, not a test.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch  # the corpus is verified under real torch; a missing torch must fail, not skip

sys.path.insert(0, str(Path(__file__).parent / "real_world"))
import verify  # noqa: E402

ENTRIES = [e for e in verify.load_manifests() if e.get("kind") in verify.KINDS and "id" in e]


CANARY_CLEAN = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
CANARY_RAISING = "import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n"
# Two projects with a module of the same name: each must import its own (the worker drops a project's modules).
# The second one's write is in one file and the save in another; its entry sits in a sub-folder (PYTHONPATH=.).
PROJECT_A = {"helpers.py": "SCALE = 2.0\n",
             "train.py": "import torch\nfrom helpers import SCALE\nx = torch.ones(2, requires_grad=True)\n"
                         "(x * SCALE).sum().backward()\nprint('grad', x.grad.tolist())\n"}
PROJECT_B = {"helpers.py": "import torch\n\ndef squash(t):\n    return torch.sigmoid(t)\n",
             "pkg/__init__.py": "from helpers import squash\n",
             "pkg/post.py": "def widen_(p):\n    p.mul_(1.002).sub_(0.001)\n    return p\n",
             "scripts/train.py": "import torch\nfrom pkg import squash\nfrom pkg.post import widen_\n"
                                 "w = torch.zeros(3, requires_grad=True)\ny = widen_(squash(w))\ny.sum().backward()\n"}
# A notebook: a markdown cell, a magic and a shell line (skipped), and a bug spanning cells.
NOTEBOOK_CELLS = [("markdown", "# Training\n"), ("code", "%matplotlib inline\nimport torch\n!nvidia-smi\n"),
                  ("code", "w = torch.zeros(3, requires_grad=True)\ny = torch.exp(w)\n"),
                  ("markdown", "Rescale, then train:\n"), ("code", "y += 1\ny.sum().backward()\n")]


def write_project(folder, files):
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def write_notebook(path, cells):
    import json

    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": kind, "metadata": {}, "source": text.splitlines(True),
         **({"outputs": [], "execution_count": None} if kind == "code" else {})} for kind, text in cells]}))
    return path


@pytest.fixture(scope="module")
def canaries(tmp_path_factory):
    d = tmp_path_factory.mktemp("canaries")
    clean, raising = d / "clean.py", d / "raising.py"
    clean.write_text(CANARY_CLEAN)
    raising.write_text(CANARY_RAISING)
    return clean, raising


@pytest.fixture(scope="module")
def form_canaries(tmp_path_factory):
    d = tmp_path_factory.mktemp("form_canaries")
    a = write_project(d / "a", PROJECT_A)
    b = write_project(d / "b", PROJECT_B)
    nb = write_notebook(d / "nb.ipynb", NOTEBOOK_CELLS)
    return verify.Program(str(a), "train.py"), verify.Program(str(b), "scripts/train.py"), nb


@pytest.fixture(scope="module")
def notebooks_with_packages(tmp_path_factory):
    """Two notebooks side by side, each importing `helpers` from its own package folder through a relative
    sys.path entry, as the corpus's notebooks do."""
    d = tmp_path_factory.mktemp("notebooks")
    out = []
    for name, value in (("nba", 1), ("nbb", 2)):
        write_project(d / f"{name}_pkg", {"helpers.py": f"VALUE = {value}\n"})
        out.append(write_notebook(d / f"{name}.ipynb", [
            ("code", f"import sys\nsys.path.insert(0, '{name}_pkg')\n"), ("code", "from helpers import VALUE\n"),
            ("code", "display('value', VALUE)\n")]))
    return out


@pytest.fixture(scope="module")
def results(canaries, form_canaries, notebooks_with_packages):
    """Every corpus program and the canaries, in one worker subprocess (torch is imported once)."""
    return verify.run_programs(verify.entry_programs(ENTRIES) + list(canaries) + list(form_canaries)
                               + notebooks_with_packages)


def test_torch_is_the_pinned_build():
    assert torch.__version__.split("+")[0] == "2.13.0"


def test_manifests_are_well_formed():
    assert verify.check_manifests(verify.load_manifests()) == []


def test_corpus_is_not_empty():
    assert any(e["kind"] == "bug" for e in ENTRIES) and any(e["kind"] == "correct" for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_program_behaves_as_manifest_says(entry, results):
    assert verify.verify_entries([entry], results) == []


def test_checks_can_fail(canaries, results):
    """The checks reject a bug that runs clean, a fixed program that raises and a wrong error text."""
    clean, raising = canaries
    res = results
    assert res[str(clean)].clean and res[str(clean)].trained == ["(2,):float32"]
    assert res[str(raising)].error_type == "RuntimeError"
    assert "leaf Variable that requires grad" in res[str(raising)].first_line
    bug = {"id": "t_x_01", "kind": "bug", "family": "leaf-inplace", "error": "leaf Variable",
           "torch_message": res[str(raising)].first_line}
    orig = verify.bug_path, verify.fixed_path
    try:
        verify.bug_path, verify.fixed_path = (lambda e: raising), (lambda e: clean)
        assert verify.verify_entries([bug], res) == []
        assert verify.verify_entries([dict(bug, error="modified by an inplace operation")], res)
        verify.bug_path, verify.fixed_path = (lambda e: clean), (lambda e: raising)
        assert len(verify.verify_entries([bug], res)) == 2
    finally:
        verify.bug_path, verify.fixed_path = orig


def test_a_project_runs_from_its_entry_with_its_own_modules(form_canaries, results):
    """Project a and project b both have helpers.py; each imports its own, b from a script in a sub-folder with the
    project folder on sys.path, and b's write in one file on a tensor saved in another raises as under python."""
    a, b, _ = form_canaries
    assert results[a.key].clean and "grad [2.0, 2.0]" in results[a.key].stdout
    assert results[a.key].trained == ["(2,):float32"]
    assert results[b.key].error_type == "RuntimeError"
    assert results[b.key].first_line.startswith("one of the variables needed for gradient computation has been "
                                                 "modified by an inplace operation: [torch.FloatTensor [3]], which "
                                                 "is output 0 of Sigmoid, is at version 2; expected version 0")


def test_a_notebook_runs_its_code_cells_in_one_namespace(form_canaries, results):
    """The magic and shell lines are skipped, the markdown cells ignored, and `y` from cell 3 is written in cell 5."""
    _, _, nb = form_canaries
    r = results[str(nb)]
    assert r.error_type == "RuntimeError"
    assert r.first_line.startswith("one of the variables needed for gradient computation has been modified by an "
                                   "inplace operation: [torch.FloatTensor [3]], which is output 0 of Exp, is at "
                                   "version 1")


def test_each_notebook_imports_its_own_package(notebooks_with_packages, results):
    a, b = notebooks_with_packages
    assert results[str(a)].clean and results[str(a)].stdout == "value 1\n"
    assert results[str(b)].clean and results[str(b)].stdout == "value 2\n"


def test_project_and_notebook_places_are_checked(tmp_path):
    """A project's bug place must name a file of the project and a line in it; a notebook's a code cell and a line
    in that cell."""
    entry = {"id": "sst_proj_x_01", "kind": "bug", "form": "project", "source": "https://example.org/x",
             "family": "saved-tensor-modified", "shape": "function", "batch": "p99", "manifest": "p99.toml",
             "notes": "n", "entry": "train.py", "error": "inplace", "torch_message": "m", "expected_code": "GG201",
             "bug_locations": [["losses.py", 99], ["nothere.py", 1]], "save_locations": [["train.py", 1]]}
    problems = verify.check_manifests([entry], whole_corpus=False)
    assert "p99.toml:sst_proj_x_01: missing projects/sst_proj_x_01/bug" in problems
    assert "p99.toml:sst_proj_x_01: bug_locations ['losses.py', 99]: no file projects/sst_proj_x_01/bug/losses.py" \
        in problems
    nb_entry = dict(entry, id="sst_nb_x_01", form="notebook", batch="n99", manifest="n99.toml",
                    bug_locations=[["sst_nb_x_01.ipynb", 1, 1]], save_locations=[])
    orig = verify.NOTEBOOKS
    try:
        verify.NOTEBOOKS = tmp_path
        write_notebook(tmp_path / "sst_nb_x_01.ipynb", NOTEBOOK_CELLS)
        problems = verify._check_places("w", nb_entry)
        assert problems == ["w: bug_locations ['sst_nb_x_01.ipynb', 1, 1]: cell 1 is not a code cell"]
        assert verify._check_places("w", dict(nb_entry, bug_locations=[["sst_nb_x_01.ipynb", 5, 1]])) == []
        assert verify._check_places("w", dict(nb_entry, bug_locations=[["sst_nb_x_01.ipynb", 5, 3]])) == [
            "w: bug_locations ['sst_nb_x_01.ipynb', 5, 3]: line outside 1..2"]
        write_project(tmp_path / "sst_nb_x_01_pkg", {"ops.py": "def f(t):\n    return t.mul_(2)\n"})
        assert verify._check_places("w", dict(nb_entry, bug_locations=[["sst_nb_x_01_pkg/ops.py", 2]])) == []
        assert verify._check_places("w", dict(nb_entry, bug_locations=[["sst_nb_x_01_pkg/ops.py", 3]])) == [
            "w: bug_locations ['sst_nb_x_01_pkg/ops.py', 3] outside 1..2"]
        assert verify._check_places("w", dict(nb_entry, bug_locations=[["sst_nb_x_01.ipynb", 5]])) == [
            "w: bug_locations ['sst_nb_x_01.ipynb', 5]: a place in the notebook is [notebook, cell, line], "
            "one in a module beside it [module, line]"]
    finally:
        verify.NOTEBOOKS = orig
