"""Bad input through the real CLI: every case has a clear outcome, and no user file is ever lost.

Most tests run `python -m gradguard check ...` as a subprocess (as a user or CI would); the
atomic-write tests call the CLI in-process so that they can interrupt it at chosen points.
Exit statuses: 0 clean, 1 something reported (findings, code not analysed, a fix not written), 2 nothing could be
reported for a path (unreadable, undecodable, too large).
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradguard import checking, cli

LEAF = "import torch\nw = torch.zeros(3, requires_grad=True)\nw += 1\n"
LEAF_FIXED = "import torch\nw = torch.zeros(3, requires_grad=True)\nw = w + 1\n"  # the unsafe fix


def gradguard(*args: str, cwd: Path, timeout: float = 60, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    # NO_COLOR and a pipe: plain text. `-m gradguard` from the user's folder, as the VS Code client runs it.
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "gradguard", *args], cwd=cwd, capture_output=True, timeout=timeout, env=env, input=stdin
    )


def out(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout.decode("utf-8", "replace")


def err(proc: subprocess.CompletedProcess) -> str:
    return proc.stderr.decode("utf-8", "replace")


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in err(proc) + out(proc), err(proc)
    assert proc.returncode in (0, 1, 2), f"status {proc.returncode} (a signal?)\n{err(proc)[-2000:]}"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".gradguard-tmp"))


# ---- encodings and odd text --------------------------------------------------------------


def test_latin1_file_is_reported_not_analysed_and_left_alone(tmp_path: Path):
    path = tmp_path / "legacy.py"
    data = "# caf\xe9\n".encode("latin-1") + LEAF.encode()
    path.write_bytes(data)
    proc = gradguard("check", "--fix", "legacy.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2
    assert err(proc).strip() == "legacy.py: not UTF-8 (byte 0xe9 at offset 5); not analysed"
    assert path.read_bytes() == data


def test_binary_file_with_nul_bytes_is_reported_not_analysed(tmp_path: Path):
    path = tmp_path / "blob.py"
    data = bytes(range(256)) * 4
    path.write_bytes(data)
    proc = gradguard("check", "--fix", "blob.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2 and "not UTF-8" in err(proc) and "not analysed" in err(proc)
    # A UTF-8 file with NUL bytes is binary too.
    path.write_bytes(b"import torch\x00\x00\nw = 1\n")
    proc = gradguard("check", "blob.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert err(proc).strip() == "blob.py: contains NUL bytes (binary?); not analysed"
    assert path.read_bytes() == b"import torch\x00\x00\nw = 1\n"


def test_non_utf8_on_stdin(tmp_path: Path):
    proc = gradguard("check", "-", cwd=tmp_path, stdin=b"x = '\xff'\n")
    no_traceback(proc)
    assert proc.returncode == 2 and "not UTF-8" in err(proc)


def test_utf8_bom_file_is_checked_and_keeps_its_bom_when_fixed(tmp_path: Path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + LEAF.encode())
    proc = gradguard("check", "--format", "json", "bom.py", cwd=tmp_path)
    assert proc.returncode == 1
    (finding,) = json.loads(out(proc))
    assert finding["code"] == "GG101" and finding["location"] == {"row": 3, "column": 1}
    gradguard("check", "--fix", "--unsafe-fixes", "bom.py", cwd=tmp_path)
    assert path.read_bytes() == b"\xef\xbb\xbf" + LEAF_FIXED.encode()


def test_empty_file(tmp_path: Path):
    (tmp_path / "empty.py").write_bytes(b"")
    proc = gradguard("check", "--fix", "empty.py", cwd=tmp_path)
    assert proc.returncode == 0 and "All checks passed (1 file(s) checked)." in out(proc)
    assert (tmp_path / "empty.py").read_bytes() == b""


def test_only_cjk_and_emoji(tmp_path: Path):
    (tmp_path / "words.py").write_text("# 训练 🚀🔥\n'''张量 👩‍👩‍👧‍👦 𝔘𝔫𝔦𝔠𝔬𝔡𝔢'''\n中文变量 = '😀' * 3\n", encoding="utf-8")
    (tmp_path / "junk.py").write_text("张量梯度🚀🚀 ？？\n👩‍👩‍👧‍👦\n", encoding="utf-8")  # not Python at all
    proc = gradguard("check", "words.py", "junk.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1  # junk.py's note is reported: never a pass (issue 14), exit 1 (issue 23)
    assert "junk.py:1:" in out(proc) and "not analysed" in out(proc) and "All checks passed" not in out(proc)


def test_columns_after_cjk_and_emoji_are_code_points(tmp_path: Path):
    (tmp_path / "wide.py").write_text(
        "import torch\n权重 = torch.zeros(3, requires_grad=True)\n'🚀'; 权重 += 1\n", encoding="utf-8"
    )
    proc = gradguard("check", "--format", "json", "wide.py", cwd=tmp_path)
    (finding,) = json.loads(out(proc))
    # `'🚀'; ` is 5 code points: the write starts at column 6 (1-based), ends after `1`.
    assert finding["location"] == {"row": 3, "column": 6}
    assert finding["end_location"] == {"row": 3, "column": 13}


def test_crlf_file_reports_lines_and_keeps_crlf_when_fixed(tmp_path: Path):
    path = tmp_path / "dos.py"
    path.write_bytes(LEAF.replace("\n", "\r\n").encode())
    proc = gradguard("check", "--format", "json", "dos.py", cwd=tmp_path)
    (finding,) = json.loads(out(proc))
    assert finding["location"] == {"row": 3, "column": 1} and finding["end_location"] == {"row": 3, "column": 7}
    proc = gradguard("check", "--fix", "--unsafe-fixes", "dos.py", cwd=tmp_path)
    assert proc.returncode == 0, err(proc)
    assert path.read_bytes() == LEAF_FIXED.replace("\n", "\r\n").encode()


def test_warnings_from_the_parser_do_not_leak_into_the_output(tmp_path: Path):
    # `1if` is valid but deprecated: CPython warns "invalid decimal literal" when the block that holds it
    # is compiled to locate a syntax error elsewhere in the block.
    (tmp_path / "warn.py").write_text("x = (1if True else 2\ny = 3\n", encoding="utf-8")
    proc = gradguard("check", "warn.py", cwd=tmp_path)
    assert proc.returncode == 1  # the unclosed bracket: not analysed, and said so
    assert "SyntaxWarning" not in err(proc) + out(proc), err(proc)


# ---- size and nesting --------------------------------------------------------------------


def test_a_20_mb_file_gets_one_notice_and_no_analysis(tmp_path: Path):
    path = tmp_path / "huge.py"
    line = b"x = torch.zeros(3, requires_grad=True); x += 1  # padding padding padding\n"
    with path.open("wb") as fh:
        fh.write(b"import torch\n" + line * (20 * 1024 * 1024 // len(line) + 1))
    size = path.stat().st_size
    proc = gradguard("check", "--fix", "huge.py", cwd=tmp_path, timeout=30)
    no_traceback(proc)
    assert proc.returncode == 2
    assert err(proc).splitlines() == [
        f"huge.py: file is {size} bytes, above the limit of {10 * 1024 * 1024} (--max-file-bytes); not analysed"
    ]
    assert "All checks passed" not in out(proc) and "1 path(s) could not be checked" in out(proc)
    assert path.stat().st_size == size
    # The limit is a setting.
    proc = gradguard("check", "--max-file-bytes", "100", "--concise", "huge.py", cwd=tmp_path, timeout=30)
    assert "above the limit of 100" in err(proc)


@pytest.mark.parametrize("opening,closing", [("(", ")"), ("[", "]"), ("f(", ")")], ids=["parens", "lists", "calls"])
def test_5000_nested_brackets_are_a_parse_note_not_a_crash(tmp_path: Path, opening: str, closing: str):
    # CPython itself refuses more than 200 nested brackets ("too many nested parentheses").
    (tmp_path / "deep.py").write_text(
        "import torch\nw = torch.zeros(3, requires_grad=True)\nx = " + opening * 5000 + "w" + closing * 5000
        + "\n\n\ndef f():\n    v = torch.ones(2, requires_grad=True)\n    v += 1\n",
        encoding="utf-8",
    )
    proc = gradguard("check", "--concise", "deep.py", cwd=tmp_path, timeout=30)
    no_traceback(proc)
    # The deep block is one parse note; the function after it is still checked.
    assert "deep.py:3:1: parse brackets nested 5000 deep" in out(proc) and "deep.py:8:5: GG101" in out(proc)


def test_10000_term_chain_finishes_quickly(tmp_path: Path):
    (tmp_path / "chain.py").write_text(
        "import torch\nw = torch.zeros(3, requires_grad=True)\nx = " + "+".join(["w"] * 10000) + "\nw += 1\n",
        encoding="utf-8",
    )
    try:
        proc = gradguard("check", "--concise", "chain.py", cwd=tmp_path, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("still checking a 10,000-term expression after 10 s")
    no_traceback(proc)


def test_3000_term_chain_is_reported_as_too_deeply_nested(tmp_path: Path):
    (tmp_path / "chain.py").write_text(
        "import torch\nw = torch.zeros(3, requires_grad=True)\nx = " + "+".join(["w"] * 3000) + "\nw += 1\n",
        encoding="utf-8",
    )
    proc = gradguard("check", "--concise", "chain.py", cwd=tmp_path, timeout=60)
    no_traceback(proc)
    assert proc.returncode == 1  # one statement was not analysed; the ones around it are still checked:
    assert "chain.py:4:1: GG101" in out(proc)
    assert ("chain.py:3:1: parse an expression or statement nested or chained about 3000 levels deep "
            "(more than 200) (line 3 not analysed)") in out(proc)


def test_deeply_nested_blocks(tmp_path: Path):
    # 95 nested `if`s (CPython's limit is 100 indentation levels), the write at the bottom is still found.
    body = "".join("    " * i + "if x:\n" for i in range(95)) + "    " * 95 + "w += 1\n"
    (tmp_path / "ifs.py").write_text("import torch\nw = torch.zeros(3, requires_grad=True)\n" + body, encoding="utf-8")
    proc = gradguard("check", "--concise", "ifs.py", cwd=tmp_path)
    no_traceback(proc)
    assert "ifs.py:98:381: GG101" in out(proc)


# ---- paths -------------------------------------------------------------------------------


def test_a_path_that_does_not_exist(tmp_path: Path):
    (tmp_path / "real.py").write_text(LEAF, encoding="utf-8")
    proc = gradguard("check", "--concise", "missing.py", "real.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1  # a finding was reported; the unread path is said on stderr (issue 23)
    assert err(proc).strip() == "missing.py: cannot read: No such file or directory"
    assert "real.py:3:1: GG101" in out(proc)  # the other file is still checked


def test_a_directory_with_symlink_loops(tmp_path: Path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "train.py").write_text(LEAF, encoding="utf-8")
    (project / "pkg" / "again").symlink_to(project, target_is_directory=True)  # a directory loop
    (project / "self").symlink_to(project / "self")  # a link to itself
    (project / "a.py").symlink_to(project / "b.py")  # a.py -> b.py -> a.py
    (project / "b.py").symlink_to(project / "a.py")
    proc = gradguard("check", "--concise", "project", cwd=tmp_path, timeout=30)
    no_traceback(proc)
    assert "project/pkg/train.py:3:1: GG101" in out(proc)
    assert out(proc).count("GG101") == 1  # the loop is not followed
    assert "project/a.py: cannot read: Too many levels of symbolic links" in err(proc)


def test_fix_through_a_symlink_keeps_the_link(tmp_path: Path):
    real = tmp_path / "real.py"
    real.write_text(LEAF, encoding="utf-8")
    (tmp_path / "link.py").symlink_to(real)
    proc = gradguard("check", "--fix", "--unsafe-fixes", "link.py", cwd=tmp_path)
    assert proc.returncode == 0, err(proc)
    assert (tmp_path / "link.py").is_symlink(), "the symlink was replaced by a regular file"
    assert real.read_text(encoding="utf-8") == LEAF_FIXED


def test_fix_on_a_read_only_file_refuses_and_keeps_it(tmp_path: Path):
    path = tmp_path / "locked.py"
    path.write_text(LEAF, encoding="utf-8")
    path.chmod(0o444)
    proc = gradguard("check", "--fix", "--unsafe-fixes", "locked.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1  # not fixed, so the finding is still reported
    assert "locked.py:3:1: GG101" in out(proc)
    assert "read-only" in err(proc)
    assert path.read_text(encoding="utf-8") == LEAF
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


# ---- --fix writes atomically -------------------------------------------------------------


def run_main(args: list[str]) -> int:
    return cli.main(["check", *args])


def test_fix_keeps_the_permissions(tmp_path: Path):
    path = tmp_path / "script.py"
    path.write_text(LEAF, encoding="utf-8")
    path.chmod(0o750)
    assert run_main(["--fix", "--unsafe-fixes", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == LEAF_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert leftovers(tmp_path) == []


def test_a_failed_rename_leaves_the_file_intact_and_no_temporary_file(tmp_path: Path, monkeypatch, capsys):
    path = tmp_path / "script.py"
    path.write_text(LEAF, encoding="utf-8")

    def refuse(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "replace", refuse)
    assert run_main(["--fix", "--unsafe-fixes", str(path)]) == 1  # not fixed: the finding is reported
    assert path.read_text(encoding="utf-8") == LEAF
    assert leftovers(tmp_path) == []
    assert f"{path}: cannot write: No space left on device" in capsys.readouterr().err


def test_a_failed_write_leaves_the_file_intact_and_no_temporary_file(tmp_path: Path, monkeypatch):
    path = tmp_path / "script.py"
    path.write_text(LEAF, encoding="utf-8")

    def disk_full(_fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "fsync", disk_full)
    assert run_main(["--fix", "--unsafe-fixes", str(path)]) == 1  # not fixed: the finding is reported
    assert path.read_text(encoding="utf-8") == LEAF
    assert leftovers(tmp_path) == []


def test_ctrl_c_during_the_write_leaves_the_file_intact_and_no_temporary_file(tmp_path: Path, monkeypatch):
    path = tmp_path / "script.py"
    path.write_text(LEAF, encoding="utf-8")

    def interrupted(_fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_main(["--fix", "--unsafe-fixes", str(path)])
    assert path.read_text(encoding="utf-8") == LEAF
    assert leftovers(tmp_path) == []


def test_a_file_that_changes_on_disk_during_fix_is_not_overwritten(tmp_path: Path, monkeypatch, capsys):
    path = tmp_path / "script.py"
    path.write_text(LEAF, encoding="utf-8")
    real_check_one = checking.check_one

    def check_then_user_saves(*args, **kwargs):
        result = real_check_one(*args, **kwargs)
        path.write_text(LEAF + "print('saved by the editor meanwhile')\n", encoding="utf-8")
        return result

    monkeypatch.setattr(checking, "check_one", check_then_user_saves)
    assert run_main(["--fix", "--unsafe-fixes", str(path)]) == 1  # not fixed: the finding is reported
    assert path.read_text(encoding="utf-8") == LEAF + "print('saved by the editor meanwhile')\n"
    assert "file changed on disk while gradguard was checking it; not fixed" in capsys.readouterr().err
    assert leftovers(tmp_path) == []


def test_a_file_deleted_during_fix_is_not_recreated(tmp_path: Path, monkeypatch, capsys):
    path = tmp_path / "script.py"
    path.write_text(LEAF, encoding="utf-8")
    real_check_one = checking.check_one

    def check_then_user_deletes(*args, **kwargs):
        result = real_check_one(*args, **kwargs)
        path.unlink()
        return result

    monkeypatch.setattr(checking, "check_one", check_then_user_deletes)
    assert run_main(["--fix", "--unsafe-fixes", str(path)]) == 1  # not fixed: the finding is reported
    assert not path.exists()
    assert "cannot re-read before writing" in capsys.readouterr().err


# ---- configuration -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "section,message",
    [
        ("select = 5", "`select` must be a list of rule codes"),
        ('select = ["E501"]', "is not a gradguard code"),
        ('language = "fr"', "`language` must be one of en, zh, auto"),
        ("colour = true", "unknown key `colour`"),
        ("[tool.gradguard", "cannot read"),
    ],
)
def test_bad_configuration_values_give_a_clear_error(tmp_path: Path, section: str, message: str):
    header = "" if section.startswith("[") else "[tool.gradguard]\n"
    (tmp_path / "pyproject.toml").write_text(header + section + "\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(LEAF, encoding="utf-8")
    proc = gradguard("check", "train.py", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2
    assert err(proc).startswith("gradguard: configuration error: ") and message in err(proc), err(proc)


# ---- security: checking never runs the user's code ---------------------------------------

EVIL_MODULE = """\
import pathlib
pathlib.Path({marker!r}).write_text("imported " + __name__)
"""


def evil_project(tmp_path: Path, module_names: tuple[str, ...] = ("helpers",)) -> tuple[Path, Path]:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "MARKER"
    for name in module_names:
        (project / f"{name}.py").write_text(EVIL_MODULE.format(marker=str(marker)), encoding="utf-8")
    (project / "train.py").write_text(
        textwrap.dedent(
            f"""\
            import pathlib
            pathlib.Path({str(marker)!r}).write_text("ran train.py")
            import helpers
            from helpers import *
            __import__("helpers")
            import torch
            w = torch.zeros(3, requires_grad=True)
            w += 1
            """
        ),
        encoding="utf-8",
    )
    (project / "conftest.py").write_text(EVIL_MODULE.format(marker=str(marker)), encoding="utf-8")
    (project / "setup.py").write_text(EVIL_MODULE.format(marker=str(marker)), encoding="utf-8")
    return project, marker


def test_check_and_fix_never_run_or_import_the_users_code(tmp_path: Path):
    project, marker = evil_project(tmp_path)
    proc = gradguard("check", "--concise", ".", cwd=project)
    assert "train.py:8:1: GG101" in out(proc), err(proc)
    gradguard("check", "--fix", "--unsafe-fixes", "train.py", cwd=project)
    gradguard("check", "--diff", "-", "--stdin-filename", "train.py", cwd=project,
              stdin=(project / "train.py").read_bytes())
    assert not marker.exists(), marker.read_text()


@pytest.mark.parametrize("shadowed", ["random", "queue"])
def test_a_project_file_named_like_a_dependency_is_not_imported(tmp_path: Path, shadowed: str):
    # The VS Code client starts `python -m gradguard server` (and `explain`) with the workspace folder as cwd.
    project, marker = evil_project(tmp_path, ("helpers", shadowed))
    gradguard("check", "--concise", "train.py", cwd=project)
    assert not marker.exists(), marker.read_text()
