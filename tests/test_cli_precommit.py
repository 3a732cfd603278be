"""`.pre-commit-hooks.yaml`, run by pre-commit itself (`pre-commit try-repo`) against a project in tmp_path.

The hook repository is a git repository built in tmp_path from this checkout's packaging files and package,
so pre-commit installs gradguard exactly as a user's pre-commit would (a fresh virtualenv, `pip install .`;
the dependencies come from PyPI). `try-repo` builds that environment in a temporary store for each of the two
runs; the test takes one to three minutes.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GIT = ["git", "-c", "user.email=test@example.invalid", "-c", "user.name=test", "-c", "commit.gpgsign=false",
       "-c", "init.defaultBranch=main"]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(GIT + list(args), cwd=cwd, check=True, capture_output=True)


def hook_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "hooks"
    repo.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, repo / name)
    shutil.copytree(ROOT / "server" / "gradguard", repo / "server" / "gradguard",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "hooks", cwd=repo)
    return repo


def try_repo(repo: Path, hook: str, project: Path, home: Path) -> subprocess.CompletedProcess:
    pre_commit = Path(sys.executable).with_name("pre-commit")
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1", "PRE_COMMIT_COLOR": "never"}
    return subprocess.run([str(pre_commit), "try-repo", str(repo), hook, "--all-files"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)


def test_pre_commit_runs_both_hooks_with_force_exclude(tmp_path):
    repo = hook_repo(tmp_path)
    project = tmp_path / "project"
    (project / "legacy").mkdir(parents=True)
    shutil.copy(EXAMPLES / "index_write_loop.py", project / "train.py")  # GG301, a safe fix
    shutil.copy(EXAMPLES / "leaf_inplace.py", project / "leaf.py")  # GG101, an unsafe fix only
    shutil.copy(EXAMPLES / "leaf_inplace.py", project / "legacy" / "old.py")  # excluded by the config
    loop = (EXAMPLES / "index_write_loop.py").read_text(encoding="utf-8").splitlines(keepends=True)
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                           "source": loop}],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (project / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")  # `types_or: jupyter`
    (project / "pyproject.toml").write_text('[tool.gradguard]\nexclude = ["legacy/*"]\n', encoding="utf-8")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    home = tmp_path / "pre-commit-home"

    check = try_repo(repo, "gradguard", project, home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "train.py:6:5: GG301" in check.stdout and "leaf.py:3:1: GG101" in check.stdout
    assert "nb.ipynb:cell 1:6:5: GG301" in check.stdout
    assert "legacy/old.py" not in check.stdout  # pre-commit names it; --force-exclude skips it
    assert "Found 3 problem(s) in 3 file(s) (3 file(s) checked)." in check.stdout

    before_leaf = (project / "leaf.py").read_text(encoding="utf-8")
    fix = try_repo(repo, "gradguard-fix", project, home)
    assert fix.returncode == 1, fix.stdout + fix.stderr  # files were modified, and GG101 remains
    assert "torch.sin(x[i].clone())" in (project / "train.py").read_text(encoding="utf-8")
    assert "torch.sin(x[i].clone())" in json.loads((project / "nb.ipynb").read_text(encoding="utf-8"))["cells"][0]["source"][5]
    assert (project / "leaf.py").read_text(encoding="utf-8") == before_leaf  # unsafe: not applied
    assert "leaf.py:3:1: GG101" in fix.stdout and "train.py:6:5" not in fix.stdout
