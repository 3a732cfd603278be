"""CLI items of issue 14: regular files only, escaped github/SARIF output, PEP 263, byte-exact --fix."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import cli

ROOT = Path(__file__).resolve().parents[1]
SAFE_BUG = (ROOT / "examples" / "index_write_loop.py").read_text()  # GG301 on line 6, safe fix `x[i].clone()`
LEAF = "import torch\nw = torch.zeros(3, requires_grad=True)\nw += 1\n"  # GG101, unsafe fix `w = w + 1`
# GG102's unsafe fix wraps the write in `with torch.no_grad():`: its new text has line breaks.
VIEW = "import torch\nx = torch.rand(5, requires_grad=True)\nfor i in range(3):\n    x[i+1] = x[i] * 2\n"


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


def subprocess_check(*args: str, cwd: Path, stdin: bytes = b""):
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=60, env={**os.environ, "NO_COLOR": "1"})


# ---- only regular files are read ---------------------------------------------------------------------


def test_folder_walk_skips_links_to_devices_and_proc(tmp_path):
    (tmp_path / "train.py").write_text(LEAF, encoding="utf-8")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "stdin.py").symlink_to("/proc/self/fd/0")
    os.mkfifo(tmp_path / "fifo.py")
    proc = subprocess_check("--concise", ".", cwd=tmp_path)  # would hang or eat memory if any were read
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr
    assert "train.py:3:1: GG101" in out and "1 file(s) checked" in out
    assert b"zero.py" not in proc.stdout + proc.stderr and b"fifo.py" not in proc.stdout + proc.stderr


def test_a_device_named_on_the_command_line_is_refused_unread(gg, tmp_path):
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    status, out, err = gg("zero.py")
    assert status == 2 and "zero.py: not a regular file; not analysed" in err
    assert "All checks passed" not in out


def test_a_gitignore_that_links_to_a_device_is_not_read(tmp_path):
    (tmp_path / "train.py").write_text(LEAF, encoding="utf-8")
    (tmp_path / ".gitignore").symlink_to("/dev/zero")
    proc = subprocess_check("--concise", ".", cwd=tmp_path)
    assert proc.returncode == 1 and b"train.py:3:1: GG101" in proc.stdout


# ---- output escaping ------------------------------------------------------------------------------------


def test_github_annotations_escape_properties_and_data(gg, tmp_path):
    (tmp_path / "a,b:c%.py").write_text(LEAF, encoding="utf-8")
    status, out, _ = gg("--format", "github", "a,b:c%.py")
    assert status == 1
    [line] = out.splitlines()
    assert line.startswith("::error title=gradguard (GG101),file=a%2Cb%3Ac%25.py,line=3,col=1,")
    head, _, message = line.partition("::GG101 ")
    assert "\n" not in message and message.startswith("`w` is a leaf tensor")


def test_sarif_uris_are_percent_encoded(gg, tmp_path):
    folder = tmp_path / "my dir"
    folder.mkdir()
    (folder / "中 #1.py").write_text(LEAF, encoding="utf-8")
    _, out, _ = gg("--format", "sarif", "my dir/中 #1.py", str(folder / "中 #1.py"))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(out)["runs"][0]["results"]]
    assert uris[0] == "my%20dir/%E4%B8%AD%20%231.py"
    assert uris[1] == (folder / "中 #1.py").as_uri() and uris[1].startswith("file:///") and " " not in uris[1]


# ---- PEP 263 ---------------------------------------------------------------------------------------------


def test_a_latin1_coding_cookie_is_decoded_and_kept_by_fix(gg, tmp_path):
    path = tmp_path / "legacy.py"
    path.write_bytes("# -*- coding: latin-1 -*-\n# café\n".encode("latin-1") + LEAF.encode())
    status, out, _ = gg("--concise", "legacy.py")
    assert status == 1 and "legacy.py:5:1: GG101" in out
    assert gg("--fix", "--unsafe-fixes", "legacy.py")[0] == 0
    assert path.read_bytes() == "# -*- coding: latin-1 -*-\n# café\n".encode("latin-1") + LEAF.replace(
        "w += 1", "w = w + 1").encode()


def test_an_unknown_coding_cookie_is_an_error(gg, tmp_path):
    (tmp_path / "odd.py").write_bytes(b"# coding: klingon\nx = 1\n")
    status, out, err = gg("odd.py")
    assert status == 2 and "odd.py: unknown encoding: klingon; not analysed" in err
    assert "All checks passed" not in out


# ---- --fix changes only the fix ----------------------------------------------------------------------------


def test_fix_keeps_mixed_line_endings_byte_for_byte(gg, tmp_path):
    lines = SAFE_BUG.splitlines(keepends=True)
    mixed = "".join(ln.replace("\n", "\r\n") if i % 2 else ln for i, ln in enumerate(lines))
    path = tmp_path / "mixed.py"
    path.write_bytes(mixed.encode())
    assert gg("--fix", "mixed.py")[0] == 0
    assert path.read_bytes() == mixed.replace("torch.sin(x[i])", "torch.sin(x[i].clone())").encode()


def test_a_multiline_fix_in_a_crlf_file_uses_crlf(gg, tmp_path):
    path = tmp_path / "dos.py"
    path.write_bytes(VIEW.replace("\n", "\r\n").encode())
    assert gg("--fix", "--unsafe-fixes", "dos.py")[0] == 0
    data = path.read_bytes()
    assert b"    x = x.clone()\r\n" in data  # the line the fix inserts (the leaf is cloned before the index write)
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_fix_keeps_the_bom_on_files_and_on_stdin(gg, tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + LEAF.encode())
    assert gg("--fix", "--unsafe-fixes", "bom.py")[0] == 0
    assert path.read_bytes() == b"\xef\xbb\xbf" + LEAF.replace("w += 1", "w = w + 1").encode()
    proc = subprocess_check("--fix", "--unsafe-fixes", "-", cwd=tmp_path, stdin=b"\xef\xbb\xbf" + LEAF.replace("\n", "\r\n").encode())
    assert proc.stdout == b"\xef\xbb\xbf" + LEAF.replace("w += 1", "w = w + 1").replace("\n", "\r\n").encode()


def test_fix_on_stdin_echoes_input_it_cannot_read(tmp_path):
    data = "# caf\xe9\nx = 1\n".encode("latin-1")  # not UTF-8 and no coding cookie
    proc = subprocess_check("--fix", "-", cwd=tmp_path, stdin=data)
    assert proc.returncode == 2 and proc.stdout == data
    assert b"not UTF-8 (byte 0xe9 at offset 5)" in proc.stderr


def test_sarif_reports_what_was_not_analysed(gg, tmp_path):
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n    pass\n", encoding="utf-8")
    status, out, _ = gg("--format", "sarif", "broken.py", "missing.py")
    assert status == 1  # the syntax error is reported (issue 23); missing.py alone would be 2
    [invocation] = json.loads(out)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    texts = [(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], n["message"]["text"])
             for n in invocation["toolExecutionNotifications"]]
    assert ("missing.py", "cannot read: No such file or directory") in texts
    assert any(uri == "broken.py" and "not analysed" in text for uri, text in texts)
