"""The `gradguard` command line, run as a real process on real files."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from torch_exec import run_program

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GRADGUARD = [sys.executable, "-m", "gradguard"]


def gg(*args, cwd=None, stdin: bytes | None = None):
    return subprocess.run(GRADGUARD + list(args), cwd=cwd, input=stdin, capture_output=True, timeout=120)


@pytest.fixture
def workdir(tmp_path):
    for f in EXAMPLES.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def test_json_reports_the_three_headline_bugs_on_their_lines(workdir):
    proc = gg("check", "--format", "json", "leaf_inplace.py", "index_write_loop.py", "rnn_retain_graph.py", cwd=workdir)
    assert proc.returncode == 1, proc.stderr
    found = {(d["filename"], d["code"], d["location"]["row"]) for d in json.loads(proc.stdout)}
    assert found == {
        ("leaf_inplace.py", "GG101", 3),
        ("index_write_loop.py", "GG301", 6),
        ("rnn_retain_graph.py", "GG402", 15),
    }


def test_json_uses_ruff_field_names_with_fix_and_related(workdir):
    proc = gg("check", "--format", "json", "rnn_retain_graph.py", cwd=workdir)
    [d] = json.loads(proc.stdout)
    assert {"filename", "code", "message", "location", "end_location", "fix", "url", "related"} <= set(d)
    assert d["location"] == {"row": 15, "column": 5}
    assert d["end_location"] == {"row": 15, "column": 19}
    assert d["fix"]["applicability"] == "unsafe"
    assert d["fix"]["edits"] == [{"content": "h_next.detach()", "location": {"row": 15, "column": 13},
                                  "end_location": {"row": 15, "column": 19}}]
    related_rows = sorted(r["location"]["row"] for r in d["related"])
    assert related_rows == [11, 13, 14]  # the save (rnn call), the backward, the step
    assert "opt.step()" in d["message"] and "not in-place" in d["message"]


def test_fix_with_unsafe_fixes_turns_each_program_into_one_that_runs(workdir):
    proc = gg("check", "--fix", "--unsafe-fixes", ".", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (workdir / "leaf_inplace.py").read_text().splitlines()[2] == "w = w + 1"
    assert "torch.sin(x[i].clone())" in (workdir / "index_write_loop.py").read_text()
    assert "h_cur = h_next.detach()" in (workdir / "rnn_retain_graph.py").read_text()
    for name in ("leaf_inplace.py", "index_write_loop.py", "rnn_retain_graph.py"):
        result = run_program((workdir / name).read_text(), name)
        assert result.clean, (name, result)
    assert gg("check", ".", cwd=workdir).returncode == 0


def test_fix_without_unsafe_applies_only_safe_fixes(workdir):
    proc = gg("check", "--fix", ".", cwd=workdir)
    assert proc.returncode == 1  # the unsafe ones remain
    assert "w += 1" in (workdir / "leaf_inplace.py").read_text()
    assert "torch.sin(x[i].clone())" in (workdir / "index_write_loop.py").read_text()


def test_fix_keeps_file_mode_and_crlf(workdir):
    path = workdir / "index_write_loop.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    path.chmod(0o640)
    gg("check", "--fix", str(path))
    assert b"x[i].clone()" in path.read_bytes() and b"\r\n" in path.read_bytes()
    assert b"\n" not in path.read_bytes().replace(b"\r\n", b"")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_diff_prints_the_fix_and_leaves_the_file(workdir):
    before = (workdir / "index_write_loop.py").read_text()
    proc = gg("check", "--diff", "index_write_loop.py", cwd=workdir)
    assert "+    x[i+1] = torch.sin(x[i].clone()) * w[i]" in proc.stdout.decode()
    assert (workdir / "index_write_loop.py").read_text() == before
    assert proc.returncode == 1


def test_exit_codes_clean_findings_and_usage(tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\nw = torch.rand(3, requires_grad=True)\nwith torch.no_grad():\n    w += 1\n")
    assert gg("check", str(clean)).returncode == 0
    assert gg("check", str(EXAMPLES / "leaf_inplace.py")).returncode == 1
    assert gg("check", "--format", "nope", str(clean)).returncode == 2
    assert gg("check", "--unsafe-fixes", str(clean)).returncode == 2


def test_noqa_and_ignore_comments_suppress(tmp_path):
    f = tmp_path / "s.py"
    src = (EXAMPLES / "leaf_inplace.py").read_text()
    f.write_text(src.replace("w += 1", "w += 1  # noqa: GG101"))
    assert gg("check", str(f)).returncode == 0
    f.write_text(src.replace("w += 1", "w += 1  # gradguard: ignore[GG101]"))
    assert gg("check", str(f)).returncode == 0
    f.write_text(src.replace("w += 1", "w += 1  # noqa: GG201"))
    assert gg("check", str(f)).returncode == 1


def test_select_ignore_and_pyproject_config(workdir):
    assert gg("check", "--ignore", "GG1", "leaf_inplace.py", cwd=workdir).returncode == 0
    assert gg("check", "--select", "GG3", "index_write_loop.py", "leaf_inplace.py", cwd=workdir).returncode == 1
    (workdir / "pyproject.toml").write_text(
        '[tool.gradguard]\nignore = ["GG402"]\n[tool.gradguard.per-file-ignores]\n"leaf_*.py" = ["GG101"]\n')
    proc = gg("check", "--format", "json", ".", cwd=workdir)
    assert {d["code"] for d in json.loads(proc.stdout)} == {"GG301"}


def test_bad_config_is_a_clear_error(workdir):
    (workdir / "pyproject.toml").write_text('[tool.gradguard]\nselect = "nonsense"\n')
    proc = gg("check", ".", cwd=workdir)
    assert proc.returncode == 2
    assert b"not a gradguard code" in proc.stderr


def test_chinese_messages_from_flag_and_config(workdir):
    proc = gg("check", "--lang", "zh", "leaf_inplace.py", cwd=workdir)
    out = proc.stdout.decode()
    assert "叶子张量" in out and "原地操作" in out and "不安全修复" in out
    (workdir / "pyproject.toml").write_text('[tool.gradguard]\nlanguage = "zh"\n')
    assert "叶子张量" in gg("check", "leaf_inplace.py", cwd=workdir).stdout.decode()


def test_rule_docs_and_list():
    proc = gg("rule", "GG101")
    doc = proc.stdout.decode()
    for heading in ("## What it does", "## Why is this bad?", "## Runtime error", "## How autograd sees it",
                    "## Example", "## Use instead", "## Fix safety"):
        assert heading in doc
    assert "a leaf Variable that requires grad is being used in an in-place operation." in doc
    listing = gg("rule", "--all").stdout.decode().splitlines()
    assert [line.split()[0] for line in listing] == sorted(line.split()[0] for line in listing)
    assert {"GG101", "GG201", "GG301", "GG401", "GG501"} <= {line.split()[0] for line in listing}
    assert "运行时错误" in gg("rule", "GG201", "--lang", "zh").stdout.decode()
    assert gg("rule", "GG999").returncode == 2


def test_unreadable_and_undecodable_files_get_one_line_and_the_run_goes_on(tmp_path):
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\nx = 1\n")
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    shutil.copy(EXAMPLES / "leaf_inplace.py", tmp_path / "bug.py")
    proc = gg("check", str(tmp_path))
    err = proc.stderr.decode()
    assert "latin1.py: not UTF-8 (byte 0xe9 at offset 5)" in err
    out = proc.stdout.decode()
    assert "broken.py:1:" in out and "syntax error" in out
    assert "bug.py:3:1: GG101" in out
    assert proc.returncode == 1  # findings were reported: 1, even with a path unread (issue 23)


def test_directories_skip_venvs_site_packages_and_gitignored(tmp_path):
    for sub in ("src", ".venv/lib", "env/lib/python3.11/site-packages/pkg", "generated"):
        (tmp_path / sub).mkdir(parents=True)
        shutil.copy(EXAMPLES / "leaf_inplace.py", tmp_path / sub / "m.py")
    (tmp_path / ".gitignore").write_text("generated/\n")
    proc = gg("check", "--format", "json", str(tmp_path))
    files = {Path(d["filename"]).relative_to(tmp_path).as_posix() for d in json.loads(proc.stdout)}
    assert files == {"src/m.py"}
    proc = gg("check", "--format", "json", "--no-default-excludes", str(tmp_path))
    assert len(json.loads(proc.stdout)) == 4


def test_jobs_give_the_same_result_as_one_process(workdir):
    one = json.loads(gg("check", "--format", "json", ".", cwd=workdir).stdout)
    two = json.loads(gg("check", "--format", "json", "--jobs", "2", ".", cwd=workdir).stdout)
    assert one == two and len(one) == 3


def test_stdin_with_stdin_filename(workdir):
    proc = gg("check", "--format", "json", "--stdin-filename", "train.py", "-",
              stdin=(EXAMPLES / "leaf_inplace.py").read_bytes())
    [d] = json.loads(proc.stdout)
    assert d["filename"] == "train.py" and d["code"] == "GG101"
    fixed = gg("check", "--fix", "--unsafe-fixes", "-", stdin=(EXAMPLES / "leaf_inplace.py").read_bytes())
    assert fixed.stdout.decode().splitlines()[2] == "w = w + 1"


def test_sarif_and_github_formats(workdir):
    sarif = json.loads(gg("check", "--format", "sarif", "index_write_loop.py", cwd=workdir).stdout)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0"
    [result] = run["results"]
    assert result["ruleId"] == "GG301"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    assert any(r["id"] == "GG301" for r in run["tool"]["driver"]["rules"])
    gh = gg("check", "--format", "github", "index_write_loop.py", cwd=workdir).stdout.decode()
    assert gh.startswith("::error title=gradguard (GG301),file=index_write_loop.py,line=6,col=5,")


def test_file_changed_on_disk_during_fix_is_not_overwritten(workdir):
    from gradguard.fixwrite import write_atomically

    path = workdir / "index_write_loop.py"
    original = path.read_text()
    path.write_text(original + "# edited by the user meanwhile\n")
    problem = write_atomically(str(path), original.replace("x[i])", "x[i].clone())"), original)
    assert problem and "changed on disk" in problem
    assert path.read_text().endswith("# edited by the user meanwhile\n")


def test_model_class_imported_from_another_file_of_the_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\n\n"
        "class Gen(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))\n\n"
        "    def forward(self, z):\n"
        "        return self.net(z)\n")
    train = tmp_path / "train.py"
    train.write_text(
        "import torch\nfrom model import Gen\nG = Gen()\nD = torch.nn.Linear(2, 1)\n"
        "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\nfake = G(torch.randn(4, 2))\n"
        "g_loss = D(fake).mean()\nopt_g.zero_grad()\ng_loss.backward(retain_graph=True)\nopt_g.step()\n"
        "d_loss = D(fake).mean()\nd_loss.backward()\n")
    proc = gg("check", "--format", "json", str(train))
    assert [(d["code"], d["location"]["row"]) for d in json.loads(proc.stdout)] == [("GG401", 10)]
    result = subprocess.run([sys.executable, str(train)], cwd=tmp_path, capture_output=True, text=True)
    assert "modified by an inplace operation" in result.stderr  # the finding is real


def test_json_lists_unparsable_code_like_ruff_with_a_null_code(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    [entry] = json.loads(gg("check", "--format", "json", str(tmp_path / "broken.py")).stdout)
    assert entry["code"] is None and entry["name"] == "syntax-error"
    assert entry["location"] == {"row": 2, "column": 7} and "invalid syntax" in entry["message"]


def test_model_class_imported_relatively_inside_a_package(tmp_path):
    """`from .models.nets import Disc, Gen` in pkg/gan.py: the classes are read from pkg/models/nets.py."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    models = tmp_path / "pkg" / "models"
    models.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (models / "__init__.py").write_text("")
    (models / "nets.py").write_text(
        "from torch import nn\n\n"
        "class Gen(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n"
        "    def forward(self, z):\n"
        "        return self.fc(z)\n\n"
        "class Disc(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc1 = nn.Linear(4, 8)\n"
        "        self.fc2 = nn.Linear(8, 1)\n\n"
        "    def forward(self, x):\n"
        "        return self.fc2(self.fc1(x).relu())\n")
    gan = tmp_path / "pkg" / "gan.py"
    gan.write_text(
        "import torch\nimport torch.nn.functional as F\n\nfrom .models.nets import Disc, Gen\n\n\n"
        "def train(steps=2):\n"
        "    G, D = Gen(), Disc()\n"
        "    g_opt = torch.optim.Adam(G.parameters())\n"
        "    d_opt = torch.optim.Adam(D.parameters())\n"
        "    for _ in range(steps):\n"
        "        d_fake = D(G(torch.randn(8, 4)))\n"
        "        d_opt.zero_grad()\n"
        "        F.softplus(d_fake).mean().backward(retain_graph=True)\n"
        "        d_opt.step()\n"
        "        g_opt.zero_grad()\n"
        "        F.softplus(-d_fake).mean().backward()\n"
        "        g_opt.step()\n\n\n"
        "if __name__ == '__main__':\n"
        "    train()\n")
    proc = gg("check", "--no-cache", "--format", "json", str(gan))
    assert [(d["code"], d["location"]["row"]) for d in json.loads(proc.stdout)] == [("GG401", 15)]
    result = subprocess.run([sys.executable, "-m", "pkg.gan"], cwd=tmp_path, capture_output=True, text=True)
    assert "modified by an inplace operation" in result.stderr  # the finding is real
