"""`.gradguard_cache/`: unchanged files are not re-analysed; any change that matters invalidates their entry."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradguard import checking, cli, output

ROOT = Path(__file__).resolve().parents[1]
LEAF = "import torch\nw = torch.zeros(3, requires_grad=True)\nw += 1\n"
CLEAN = "import torch\nw = torch.zeros(3, requires_grad=True)\nwith torch.no_grad():\n    w += 1\n"
MODEL = ("import torch.nn as nn\n\nclass Gen(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))\n\n    def forward(self, z):\n        return self.net(z)\n")
TRAIN = ("import torch\nfrom model import Gen\nG = Gen()\nD = torch.nn.Linear(2, 1)\n"
         "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\nfake = G(torch.randn(4, 2))\n"
         "g_loss = D(fake).mean()\nopt_g.zero_grad()\ng_loss.backward(retain_graph=True)\nopt_g.step()\n"
         "d_loss = D(fake).mean()\nd_loss.backward()\n")  # GG401 on line 10 only when Gen is an nn.Module


@pytest.fixture
def gg(tmp_path, monkeypatch, capsys):
    """Runs `gradguard check` in-process and counts the files the engine analysed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    analysed: list[str] = []
    real = checking._run_engine

    def counting(text, path, *args):
        analysed.append(Path(path).name)
        return real(text, path, *args)

    monkeypatch.setattr(checking, "_run_engine", counting)

    def run(*args: str):
        analysed.clear()
        capsys.readouterr()
        status = cli.main(["check", "--format", "json", *args])
        out = capsys.readouterr().out
        return status, json.loads(out) if out.strip() else [], sorted(analysed)

    return run


def test_a_warm_run_analyses_nothing_and_reports_the_same(gg, tmp_path):
    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    (tmp_path / "b.py").write_text(CLEAN, encoding="utf-8")
    cold = gg(".")
    assert cold[2] == ["a.py", "b.py"]
    warm = gg(".")
    assert warm[2] == [] and warm[:2] == cold[:2]
    assert (tmp_path / ".gradguard_cache" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_a_changed_file_is_analysed_again(gg, tmp_path):
    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    (tmp_path / "b.py").write_text(CLEAN, encoding="utf-8")
    gg(".")
    (tmp_path / "b.py").write_text(LEAF, encoding="utf-8")
    status, found, analysed = gg(".")
    assert analysed == ["b.py"] and {d["filename"] for d in found} == {"a.py", "b.py"}


def test_the_effective_config_is_part_of_the_key(gg, tmp_path):
    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    gg(".")
    status, found, analysed = gg("--ignore", "GG101", ".")
    assert analysed == ["a.py"] and found == [] and status == 0
    (tmp_path / "pyproject.toml").write_text('[tool.gradguard]\nlanguage = "zh"\n', encoding="utf-8")
    _, found, analysed = gg(".")
    assert analysed == ["a.py"] and "叶子张量" in found[0]["message"]


def test_changing_an_imported_model_class_invalidates_the_importer(gg, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    _, found, _ = gg("train.py")
    assert [(d["code"], d["location"]["row"]) for d in found] == [("GG401", 10)]
    assert gg("train.py")[2] == []
    (tmp_path / "model.py").write_text(MODEL.replace("class Gen(nn.Module)", "class Gen"), encoding="utf-8")
    _, found, analysed = gg("train.py")
    assert analysed == ["train.py"] and found == []  # no longer known to be a module with parameters


def test_no_cache_neither_reads_nor_writes(gg, tmp_path):
    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    gg("--no-cache", ".")
    assert not (tmp_path / ".gradguard_cache").exists()
    gg(".")
    assert gg("--no-cache", ".")[2] == ["a.py"]


def test_a_corrupt_or_hostile_cache_entry_is_ignored(gg, tmp_path):
    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    gg(".")
    for entry in (tmp_path / ".gradguard_cache").rglob("*.json"):
        entry.write_bytes(b"\x80\x04cos\nsystem\n")  # a pickle payload: never unpickled, just not JSON
    status, found, analysed = gg(".")
    assert analysed == ["a.py"] and status == 1 and found[0]["code"] == "GG101"


def test_fix_runs_do_not_use_stale_entries(gg, tmp_path):
    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    gg(".")
    assert gg("--fix", "--unsafe-fixes", ".")[0] == 0
    assert (tmp_path / "a.py").read_text(encoding="utf-8").endswith("w = w + 1\n")
    status, found, analysed = gg(".")
    assert analysed == ["a.py"] and found == [] and status == 0


def test_a_warm_run_never_imports_the_engine(tmp_path):
    import subprocess
    import sys

    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    probe = ("import sys; from gradguard import cli; status = cli.main(['check', '--format', 'json', '.']); "
             "print(status, 'libcst' in sys.modules, 'gradguard.engine' in sys.modules, file=sys.stderr)")
    cold = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert cold.stderr.split()[-3:] == ["1", "True", "True"]
    warm = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert warm.stderr.split()[-3:] == ["1", "False", "False"] and warm.stdout == cold.stdout


def test_the_docs_url_matches_the_rules():
    from gradguard.rules import DOCS_URL

    assert output.DOCS_URL == DOCS_URL


def test_creating_the_imported_module_later_invalidates_the_importer(gg, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    assert gg("train.py")[1] == []  # model.py is not there yet: nothing known about Gen
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    _, found, analysed = gg("train.py")
    assert analysed == ["train.py"] and [(d["code"], d["location"]["row"]) for d in found] == [("GG401", 10)]


@pytest.mark.parametrize("change", ["gradguard version", "python version"])
def test_another_gradguard_or_python_version_misses(gg, tmp_path, monkeypatch, change):
    from gradguard import cache

    (tmp_path / "a.py").write_text(LEAF, encoding="utf-8")
    gg(".")
    assert gg(".")[2] == []
    if change == "gradguard version":
        monkeypatch.setattr(cache, "__version__", "9.9.9")
    else:
        monkeypatch.setattr(cache.sys, "version", "3.99.0 (another build)")
    cache.tool_fingerprint.cache_clear()
    try:
        assert gg(".")[2] == ["a.py"]
    finally:
        monkeypatch.undo()
        cache.tool_fingerprint.cache_clear()
