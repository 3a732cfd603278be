"""`gradguard trace` writes `.gradguard/trace.json` through no symlink a repository commits (issue 33, item 5).

A cloned repository can hold `.gradguard` as a symlink to a folder outside it, or `.gradguard/trace.json` as a
symlink to a file outside it (`~/.bashrc`); the trace document went through either. Now every folder of the
output path is opened without following links and an existing target must be a regular file.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "trace_programs" / "rnn_retained_step.py"


def trace(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradguard", "trace", str(PROGRAM)], cwd=cwd,
                          capture_output=True, text=True, timeout=180)


def test_a_symlinked_gradguard_folder_is_not_written_through(tmp_path: Path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / ".gradguard").symlink_to(outside, target_is_directory=True)
    done = trace(repo)
    assert done.returncode == 1  # the program's finding
    assert list(outside.iterdir()) == []
    assert "gradguard trace: cannot write .gradguard/trace.json" in done.stderr


def test_a_symlinked_trace_json_is_neither_followed_nor_replaced(tmp_path: Path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".gradguard").mkdir(parents=True)
    outside.mkdir()
    bashrc = outside / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n")
    (repo / ".gradguard" / "trace.json").symlink_to(bashrc)
    done = trace(repo)
    assert done.returncode == 1
    assert bashrc.read_text() == "export PATH=$HOME/bin:$PATH\n"
    assert (repo / ".gradguard" / "trace.json").is_symlink()
    assert "gradguard trace: cannot write .gradguard/trace.json" in done.stderr


def test_the_trace_document_is_written_in_a_plain_folder(tmp_path: Path):
    done = trace(tmp_path)
    assert done.returncode == 1
    doc = json.loads((tmp_path / ".gradguard" / "trace.json").read_text())
    assert sorted(f["write"]["line"] for f in doc["findings"]) == [14]
