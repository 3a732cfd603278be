"""--fix writes a file whose name is as long as the file system allows (issue 33, item 13).

The temporary sibling was `.<name>.<8 hex>.gradguard-tmp`, 24 bytes longer than the name: a name of about
232 bytes or more could not be fixed ("File name too long"). The temporary name now keeps only as much of the
name as fits, and a run still finds its own leftovers by it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gradguard.fileio import clean_stale_tmp, is_tmp_name, replace_in_folder

PROGRAM = "import torch\n\nw = torch.zeros(3, requires_grad=True)\nw.add_(1)\n"


def test_fix_writes_a_file_with_a_255_byte_name(tmp_path: Path):
    name = "训练" * 40 + "t" * 12 + ".py"  # 240 bytes of CJK in UTF-8, then 15 more: the longest name ext4 holds
    assert len(name.encode()) == 255
    (tmp_path / name).write_text(PROGRAM, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--fix", "--unsafe-fixes", "."],
                          cwd=tmp_path, capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert f"{name}: fixed 1 finding(s)" in done.stderr, done.stderr
    assert (tmp_path / name).read_text(encoding="utf-8").endswith("w = w.add(1)\n")
    assert os.listdir(tmp_path) == [name]


def test_a_leftover_temporary_file_of_a_long_name_is_found_by_that_name(tmp_path: Path):
    name = "m" * 252 + ".py"
    (tmp_path / name).write_text("x = 1\n")
    leftover = tmp_path / ("." + "m" * 231 + ".a1b2c3d4.gradguard-tmp")  # what a killed run of that name leaves
    leftover.write_text("x = ")
    assert is_tmp_name(leftover.name)
    folder = os.open(tmp_path, os.O_RDONLY)
    try:
        assert clean_stale_tmp(folder, name) == 1
        replace_in_folder(folder, name, b"x = 2\n")
    finally:
        os.close(folder)
    assert os.listdir(tmp_path) == [name]
    assert (tmp_path / name).read_text() == "x = 2\n"
