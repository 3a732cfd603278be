"""`gradguard mcp` driven by the MCP SDK's own client over stdio, as Claude Code or Cursor would drive it:
list the tools, check a rule's bad example (by path and as pasted source), explain the traceback that example
prints under torch, read a rule's docs, and refuse paths a model should not make gradguard read."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info < (3, 10):  # the SDK's floor; on 3.10+ `make setup` installs it (the test extra has gradguard[mcp])
    pytest.skip("gradguard[mcp] needs Python 3.10+", allow_module_level=True)

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "server" / "gradguard" / "rules" / "examples"
SIGMOID_RELU = EXAMPLES / "GG202" / "bad_1_sequential_sigmoid_relu.py"  # nn.ReLU(inplace=True) after nn.Sigmoid
LEAF_ADD = EXAMPLES / "GG101" / "bad_1_leaf_add.py"  # w += 1 on a leaf that requires grad


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(SIGMOID_RELU, folder / SIGMOID_RELU.name)
    return folder


@contextlib.asynccontextmanager
async def gradguard_mcp(cwd: Path, *args: str):
    """A session with `python -m gradguard mcp` started in `cwd` (the project folder, as agents start it)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "gradguard", "mcp", *args], cwd=str(cwd))
    with open(cwd.parent / "mcp-server.stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result) -> str:
    assert [c.type for c in result.content] == ["text"]
    return result.content[0].text


async def test_the_server_lists_check_explain_and_rule_as_read_only_tools(project):
    async with gradguard_mcp(project) as session:
        listed = (await session.list_tools()).tools
    tools = {t.name: t for t in listed}
    assert sorted(tools) == ["check", "explain", "rule"]
    assert set(tools["check"].input_schema["properties"]) == {"path", "paths", "source", "filename", "lang"}
    assert tools["explain"].input_schema["required"] == ["traceback"]
    assert tools["rule"].input_schema["required"] == ["code"]
    assert tools["check"].input_schema["properties"]["lang"]["anyOf"][0]["enum"] == ["en", "zh"]
    assert all(t.annotations.read_only_hint and not t.annotations.open_world_hint for t in listed)
    assert "autograd" in tools["check"].description and "traceback" in tools["explain"].description


async def test_check_a_file_gives_code_line_column_message_and_the_fix_edits(project):
    async with gradguard_mcp(project) as session:
        result = await session.call_tool("check", {"path": SIGMOID_RELU.name})
    assert not result.is_error
    record = result.structured_content
    assert record["path"] == SIGMOID_RELU.name and record["not_analysed"] == []
    [finding] = record["findings"]
    assert (finding["code"], finding["name"], finding["severity"]) == ("GG202", "inplace-activation-on-saved", "error")
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (8, 5, 8, 26)
    assert finding["message"].startswith("`ReLU(inplace=True)` overwrites the output of `nn.Sigmoid` inside `model`, which `nn.Sigmoid` saved")
    [fix] = finding["fixes"]
    assert fix["title"].startswith("Use `inplace=False`") and fix["safety"] == "safe"
    assert fix["edits"] == [{"line": 8, "column": 21, "end_line": 8, "end_column": 25, "new_text": "False"}]
    assert [(r["message"], r["line"]) for r in finding["related"]] == [
        ("saved by `nn.Sigmoid` here", 7), ("built with `inplace=True` here", 8)]
    assert "modified by an inplace operation" in finding["runtime_error"]
    lines = text_of(result).splitlines()
    assert lines[0] == "bad_1_sequential_sigmoid_relu.py: 1 finding."
    assert lines[1].startswith("bad_1_sequential_sigmoid_relu.py:8:5: GG202 (inplace-activation-on-saved, error) ")
    assert lines[2] == f"  fix (safe): {fix['title']}: replace 8:21-8:25 with 'False'"
    assert lines[3].startswith("  1. Line 7: `nn.Sigmoid`")


async def test_check_pasted_source_that_is_not_on_disk(project):
    async with gradguard_mcp(project) as session:
        result = await session.call_tool("check", {"source": LEAF_ADD.read_text(), "filename": "train.py"})
        clean = await session.call_tool("check", {"source": "import torch\nw = torch.zeros(3)\nw += 1\n"})
    [finding] = result.structured_content["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("GG101", 3, 1)
    assert finding["fixes"][0]["edits"][0]["new_text"] == "w = w + 1"
    assert text_of(result).startswith("train.py: 1 finding.\ntrain.py:3:1: GG101 ")
    assert text_of(clean) == "snippet.py: no findings."
    assert not (project / "train.py").exists()


async def test_check_a_notebook_names_the_cell_of_each_place(project):
    cells = [["import torch\n", "w = torch.rand(4, requires_grad=True)\n"], ["w += 1\n"]]
    (project / "split.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells],
        "metadata": {"kernelspec": {"name": "python3", "language": "python"}, "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5}))
    async with gradguard_mcp(project) as session:
        result = await session.call_tool("check", {"path": "split.ipynb"})
    [finding] = result.structured_content["findings"]
    assert (finding["code"], finding["cell"], finding["line"], finding["column"]) == ("GG101", 2, 1, 1)
    assert finding["fixes"][0]["edits"] == [{"line": 1, "column": 1, "end_line": 1, "end_column": 7, "cell": 2,
                                             "new_text": "w = w + 1"}]
    assert text_of(result).splitlines()[1].startswith("split.ipynb:cell 2:1:1: GG101 (leaf-inplace, error) ")


async def test_check_refuses_paths_outside_the_project_other_files_fifos_and_large_files(project, tmp_path):
    outside = tmp_path / "elsewhere.py"
    shutil.copy(LEAF_ADD, outside)
    (project / "escape.py").symlink_to(outside)
    os.mkfifo(project / "pipe.py")  # a read would block forever
    (project / "big.py").write_text("x = 1\n" * 400)
    (project / "notes.txt").write_text("w += 1\n")
    async with gradguard_mcp(project, "--max-file-bytes", "1000") as session:
        answers = {name: await session.call_tool("check", {"path": name})
                   for name in (str(outside), "escape.py", "pipe.py", "big.py", "notes.txt", "missing.py")}
        both = await session.call_tool("check", {"path": "big.py", "source": "x = 1\n"})
        named_out = await session.call_tool("check", {"source": "x = 1\n", "filename": "../../etc/train.py"})
    assert all(r.is_error for r in answers.values()) and both.is_error
    said = {name: text_of(r) for name, r in answers.items()}
    assert f"{outside}: outside the project folder ({project.resolve()}); not checked" in said[str(outside)]
    assert "escape.py: outside the project folder" in said["escape.py"]
    assert "pipe.py: not a regular file; not analysed" in said["pipe.py"]
    assert "big.py: file is 2400 bytes, above the limit of 1000" in said["big.py"]
    assert "notes.txt: not a Python file or notebook (.py, .pyi, .ipynb) or a folder; not checked" in said["notes.txt"]
    assert "missing.py: cannot read: No such file or directory" in said["missing.py"]
    assert "give one of `path` (a file or folder to check), `paths`" in text_of(both)
    assert named_out.is_error and "`filename` must be a relative name inside the project" in text_of(named_out)


async def test_check_a_folder_checks_every_file_in_it_and_lists_the_files_with_findings(project, tmp_path):
    """`{"path": "simclr"}` was "not a Python file" (issue 32), so an agent checked one file and heard "no findings"."""
    package = project / "simclr"
    package.mkdir()
    shutil.copy(LEAF_ADD, package / "losses.py")
    (package / "clean.py").write_text("import torch\nx = torch.ones(2) * 2\n")
    (package / ".venv").mkdir()
    shutil.copy(LEAF_ADD, package / ".venv" / "vendored.py")  # skipped as `gradguard check` skips it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(LEAF_ADD, elsewhere / "leaf.py")
    (package / "escape.py").symlink_to(elsewhere / "leaf.py")  # a committed link out of the project
    async with gradguard_mcp(project) as session:
        folder = await session.call_tool("check", {"path": "simclr"})
        listed = await session.call_tool("check", {"paths": ["simclr/losses.py", SIGMOID_RELU.name]})
        outside = await session.call_tool("check", {"paths": ["simclr", str(elsewhere)]})
    assert not folder.is_error and not listed.is_error
    record = folder.structured_content
    assert (record["paths"], record["files_checked"], record["findings"]) == (["simclr"], 2, 1)
    [file_record] = record["files"]
    assert file_record["path"] == os.path.join("simclr", "losses.py")
    assert [(f["code"], f["line"], f["column"]) for f in file_record["findings"]] == [("GG101", 3, 1)]
    assert record["left_out"] == {"findings": 0, "files": [], "not_checked": [], "outside": 1}
    lines = text_of(folder).splitlines()
    assert lines[0] == "simclr: 1 finding in 1 file (2 files checked)."
    assert lines[1] == "simclr/losses.py: 1 finding."
    assert lines[2].startswith("simclr/losses.py:3:1: GG101 (leaf-inplace, error) ")
    assert lines[-1] == "Not checked: 1 file found through a symlink that leads outside the project."
    assert [(f["path"], [x["code"] for x in f["findings"]]) for f in listed.structured_content["files"]] == [
        ("simclr/losses.py", ["GG101"]), (SIGMOID_RELU.name, ["GG202"])]
    assert text_of(listed).startswith(f"simclr/losses.py, {SIGMOID_RELU.name}: 2 findings in 2 files (2 files checked).")
    assert outside.is_error and f"{elsewhere}: outside the project folder" in text_of(outside)


SIMCLR = ROOT / "tests" / "projects" / "simclr"  # losses.py writes in place what train.py back-propagates through


async def test_the_simclr_folder_and_losses_py_alone_are_checked_as_one_program(tmp_path):
    """Issue 32: `{"path": "simclr"}` was "not a Python file", and `losses.py` alone got "no findings"."""
    project = tmp_path / "work"
    shutil.copytree(SIMCLR, project / "simclr")
    async with gradguard_mcp(project) as session:
        folder = (await session.call_tool("check", {"path": "simclr"})).structured_content
        alone = (await session.call_tool("check", {"path": "simclr/losses.py"})).structured_content
        listed = (await session.call_tool("check", {"paths": ["simclr/losses.py"]})).structured_content
    [file_record] = folder["files"]
    assert file_record["path"] == "simclr/losses.py"
    [finding] = file_record["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("GG201", 6, 5)
    assert "on line 18 of train.py will fail" in finding["message"]
    assert [(r["path"], r["line"]) for r in finding["related"] if "path" in r] == [("simclr/train.py", 18)]
    assert [(f["code"], f["line"]) for f in alone["findings"]] == [("GG201", 6)]
    assert [(f["path"], [x["code"] for x in f["findings"]]) for f in listed["files"]] == [("simclr/losses.py", ["GG201"])]


async def test_a_long_answer_is_capped_and_says_which_findings_it_left_out(project):
    for i in range(120):
        shutil.copy(LEAF_ADD, project / f"leaf_{i:03}.py")
    async with gradguard_mcp(project) as session:
        result = await session.call_tool("check", {"path": "."})
        whole = await session.call_tool("check", {"path": "leaf_119.py"})
    record = result.structured_content
    shown = sum(len(f["findings"]) for f in record["files"])
    assert record["files_checked"] == 121 and record["findings"] == 121
    assert 0 < shown < 121 and record["left_out"]["findings"] == 121 - shown
    assert record["left_out"]["files"][-1] == "leaf_119.py" and len(record["left_out"]["files"]) == 121 - shown
    text = text_of(result)
    assert len(text) <= 41_000  # MAX_ANSWER_CHARS, and the closing line
    assert text.splitlines()[-1] == (f"Left out to keep this answer short: {121 - shown} findings in "
                                     f"{', '.join(record['left_out']['files'])}; check those files by `path` for all of them.")
    assert [f["code"] for f in whole.structured_content["findings"]] == ["GG101"]


async def test_explain_a_traceback_the_example_printed_under_torch(project):
    run = subprocess.run([sys.executable, SIGMOID_RELU.name], cwd=project, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "RuntimeError: one of the variables needed" in run.stderr
    async with gradguard_mcp(project) as session:
        result = await session.call_tool("explain", {"traceback": run.stderr, "lang": "en"})
    cli = subprocess.run([sys.executable, "-m", "gradguard", "explain", "--lang", "en", "-"], cwd=project,
                         input=run.stderr, capture_output=True, text=True, timeout=120)
    assert not result.is_error
    assert text_of(result) + "\n" == cli.stdout
    text = text_of(result)
    assert text.startswith("gradguard explain: a tensor saved for backward was modified in place\n")
    assert "raised at      bad_1_sequential_sigmoid_relu.py:17  loss.backward()" in text
    assert "    bad_1_sequential_sigmoid_relu.py:8  nn.ReLU(inplace=True),  # <- GG202\n        [static GG202]" in text


async def test_rule_prints_what_gradguard_rule_prints_and_names_the_codes_for_an_unknown_one(project):
    async with gradguard_mcp(project) as session:
        docs = await session.call_tool("rule", {"code": "gg202", "lang": "en"})
        unknown = await session.call_tool("rule", {"code": "GG999"})
    cli = subprocess.run([sys.executable, "-m", "gradguard", "rule", "GG202", "--lang", "en"], cwd=project,
                         capture_output=True, text=True, timeout=60)
    assert text_of(docs) + "\n" == cli.stdout
    assert text_of(docs).startswith("# GG202 (inplace-activation-on-saved)")
    assert unknown.is_error and "unknown rule 'GG999'; the rules are GG101, GG102" in text_of(unknown)


def test_without_the_sdk_gradguard_mcp_says_how_to_install_it(tmp_path):
    hide_sdk = "import sys; sys.modules['mcp'] = None; from gradguard.cli import main; sys.exit(main(['mcp']))"
    run = subprocess.run([sys.executable, "-c", hide_sdk], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("gradguard mcp: the MCP SDK is not installed in this Python; install it with "
                          "`pip install 'gradguard[mcp]'` (Python 3.10 or newer)\n")
    probe = "import sys; sys.modules['mcp'] = None; from gradguard.cli import main; sys.exit(main(['mcp', '--probe']))"
    without = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (without.returncode, without.stderr) == (2, run.stderr)


def test_the_probe_an_editor_runs_before_offering_the_server_exits_0_when_it_can_serve(tmp_path):
    run = subprocess.run([sys.executable, "-m", "gradguard", "mcp", "--probe"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
