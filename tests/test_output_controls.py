"""Terminal control sequences from a repository never reach the terminal raw (issue 33, item 9).

A file name or a line of code can hold ESC sequences: set the window title, clear the screen, or (OSC 52) write
the clipboard on some terminals. The text report printed them as they were, and `--format github` put them into
the CI log. Every C0 and C1 control but tab (and, in GitHub's messages, the line ends it escapes itself) is
shown as a Python escape instead: `\\x1b`.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# A clear-screen in the name; a clipboard write (OSC 52) and a title change in a comment of the reported line.
NAME = "train\x1b[2J\x1b[H.py"
PROGRAM = ("import torch\n\nw = torch.zeros(3, requires_grad=True)\n"
           "w.add_(1)  # \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \x1b]0;owned\x07 \x9b31m\x7f\n")
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tab and newline are the report's own


def run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    (tmp_path / NAME).write_text(PROGRAM, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", *options, "."], cwd=tmp_path,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_the_text_report_shows_controls_escaped(tmp_path: Path):
    done = run(tmp_path)
    assert done.returncode == 1
    assert RAW_CONTROL.findall(done.stdout + done.stderr) == []
    assert "train\\x1b[2J\\x1b[H.py:4:1: GG101 " in done.stdout
    assert "4 | w.add_(1)  # \\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07 \\x1b]0;owned\\x07 \\x9b31m\\x7f\n" in done.stdout


def test_the_concise_report_shows_controls_escaped(tmp_path: Path):
    done = run(tmp_path, "--concise")
    assert done.returncode == 1
    assert RAW_CONTROL.findall(done.stdout + done.stderr) == []
    assert done.stdout.startswith("train\\x1b[2J\\x1b[H.py:4:1: GG101 ")


def test_github_annotations_show_controls_escaped(tmp_path: Path):
    done = run(tmp_path, "--format", "github")
    assert done.returncode == 1
    assert RAW_CONTROL.findall(done.stdout + done.stderr) == []
    assert done.stdout.startswith("::error title=gradguard (GG101),file=train\\x1b[2J\\x1b[H.py,line=4,")


def test_what_fix_says_about_a_file_shows_its_name_escaped(tmp_path: Path):
    done = run(tmp_path, "--fix", "--unsafe-fixes")
    assert RAW_CONTROL.findall(done.stdout + done.stderr) == []
    assert "train\\x1b[2J\\x1b[H.py: fixed 1 finding(s)\n" in done.stderr
    assert "w = w.add(1)" in (tmp_path / NAME).read_text(encoding="utf-8")
