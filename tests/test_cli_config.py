"""Configuration per checked file: the nearest pyproject.toml with [tool.gradguard], --config, --isolated, --force-exclude."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradguard import cli

ROOT = Path(__file__).resolve().parents[1]
BUG = (ROOT / "examples" / "leaf_inplace.py").read_text()  # GG101 on line 3


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


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def found(gg, *args) -> set[str]:
    status, out, err = gg("--format", "json", *args)
    assert status in (0, 1), err
    return {Path(d["filename"]).as_posix() for d in json.loads(out)}


def test_each_file_gets_its_nearest_config_whatever_the_argument_order(gg, tmp_path):
    write(tmp_path, {"a/train.py": BUG, "b/train.py": BUG, "b/pyproject.toml": '[tool.gradguard]\nignore = ["GG101"]\n'})
    assert found(gg, "b", "a") == {"a/train.py"}
    assert found(gg, "a", "b") == {"a/train.py"}
    assert found(gg, "b/train.py", "a/train.py") == {"a/train.py"}


def test_a_pyproject_without_a_gradguard_table_does_not_hide_the_parent_config(gg, tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.gradguard]\nignore = ["GG101"]\n',
                     "pkg/pyproject.toml": "[project]\nname = 'pkg'\n", "pkg/train.py": BUG})
    assert found(gg, "pkg") == set()


def test_exclude_is_relative_to_its_config_and_force_exclude_applies_it_to_named_files(gg, tmp_path):
    write(tmp_path, {"proj/pyproject.toml": '[tool.gradguard]\nexclude = ["old/*"]\n',
                     "proj/old/train.py": BUG, "proj/new/train.py": BUG})
    assert found(gg, "proj") == {"proj/new/train.py"}
    assert found(gg, "proj/old/train.py") == {"proj/old/train.py"}  # named explicitly: checked
    assert found(gg, "--force-exclude", "proj/old/train.py", "proj/new/train.py") == {"proj/new/train.py"}


def test_force_exclude_also_skips_default_excluded_folders(gg, tmp_path):
    write(tmp_path, {".venv/lib/site-packages/m.py": BUG, "src/m.py": BUG})
    assert found(gg, "--force-exclude", ".venv/lib/site-packages/m.py", "src/m.py") == {"src/m.py"}


def test_config_file_applies_to_every_file_and_isolated_ignores_all(gg, tmp_path):
    write(tmp_path, {"a/train.py": BUG, "a/pyproject.toml": '[tool.gradguard]\nignore = ["GG101"]\n',
                     "shared.toml": '[tool.gradguard]\nselect = ["GG3"]\n', "b/train.py": BUG})
    assert found(gg, "a", "b") == {"b/train.py"}
    assert found(gg, "--config", "shared.toml", "a", "b") == set()
    assert found(gg, "--isolated", "a", "b") == {"a/train.py", "b/train.py"}
    status, _, err = gg("--config", "missing.toml", "a")
    assert status == 2 and "missing.toml: no such configuration file" in err


@pytest.mark.parametrize("toml,message", [
    ("tool = 1\n", "`tool` must be a table"),
    ("[[tool.gradguard]]\nselect = ['GG1']\n", "[tool.gradguard] must be a table"),
    ("[tool.gradguard]\nper-file-ignores = 3\n", "`per-file-ignores` must be a table"),
    ("[tool.gradguard]\nexclude = [1, 2]\n", "`exclude` must be a list"),
    ("[tool.gradguard.per-file-ignores]\n'x.py' = {a = 1}\n", "must be a list of rule codes"),
    ("[tool.gradguard]\nlanguage = []\n", "`language` must be one of"),
])
def test_odd_tool_tables_are_configuration_errors_not_crashes(gg, tmp_path, toml, message):
    write(tmp_path, {"pyproject.toml": "# gradguard\n" + toml, "train.py": BUG})
    status, out, err = gg("train.py")
    assert status == 2, err
    assert err.startswith("gradguard: configuration error: ") and message in err
    assert "Traceback" not in err


def test_force_exclude_ignores_excluded_names_above_the_working_directory(gg, tmp_path, monkeypatch):
    project = tmp_path / "build" / "project"  # a checkout inside a folder called build/
    write(project, {"train.py": BUG})
    monkeypatch.chdir(project)
    assert found(gg, "--force-exclude", "train.py") == {"train.py"}


def test_stdin_uses_the_config_of_its_stdin_filename(tmp_path):
    import subprocess
    import sys

    write(tmp_path, {"sub/pyproject.toml": '[tool.gradguard]\nignore = ["GG101"]\n'})
    run = lambda name: subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--stdin-filename",
                                       name, "-"], cwd=tmp_path, input=BUG.encode(), capture_output=True, timeout=60)
    assert run("sub/train.py").returncode == 0
    assert run("train.py").returncode == 1
