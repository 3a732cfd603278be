"""The wheel a user installs (`pip install <wheel>` / `pipx install <path>`): built from this checkout's packaging
files as `make dist` and pip build it, it carries the LICENSE and everything `gradguard check` reads at run time.

The wheel is built by pip (`pip wheel --no-deps`, an isolated build with setuptools from the index, as a user's
`pip install <path>` does) and installed without its dependencies into a folder that comes first on the path, so
the check below runs the installed copy, not this checkout (the dependencies are the test venv's). About 30 s.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_the_license_and_checks_a_project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "server" / "gradguard", src / "server" / "gradguard",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(pip + ["wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, timeout=600)
    [wheel] = (tmp_path / "dist").glob("gradguard-*-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        assert zf.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert "gradguard = gradguard.cli:entry" in zf.read(f"{dist_info}/entry_points.txt").decode()
    assert {"gradguard/ops/op_table.csv", "gradguard/rules/examples/GG101/bad_1_leaf_add.py"} <= names

    site = tmp_path / "site"
    subprocess.run(pip + ["install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "examples" / "leaf_inplace.py", project / "train.py")
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1", "LC_ALL": "C.UTF-8"}
    where = subprocess.run([sys.executable, "-c", "import gradguard; print(gradguard.__file__)"], cwd=project,
                           env=env, capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(site)  # the installed copy, not this checkout
    proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--format", "json"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert [(d["filename"], d["code"], d["location"]["row"]) for d in json.loads(proc.stdout)] == [("train.py", "GG101", 3)]
    rule = subprocess.run([sys.executable, "-m", "gradguard", "rule", "GG101", "--lang", "zh"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    assert rule.returncode == 0 and "运行时错误" in rule.stdout  # rule docs and their examples are in the wheel
