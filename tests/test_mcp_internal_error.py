"""`gradguard mcp` answers an internal error with the CLI's words (issue 33, item 13).

A notebook whose metadata nests deeper than json can follow stops the check with RecursionError. The CLI
reports it for that path ("internal error (RecursionError: ...); please report it", exit 2); the MCP tool
answered a bare "Error executing tool check" and wrote a traceback on the server's stderr.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info < (3, 10):  # the MCP SDK's floor
    pytest.skip("gradguard[mcp] needs Python 3.10+", allow_module_level=True)

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

DEPTH = 100_000


def nested_notebook(folder: Path) -> Path:
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": ["import torch\n", "w = torch.zeros(3, requires_grad=True)\n", "w += 1\n"]}
    text = json.dumps({"cells": [cell], "metadata": {"deep": "@"}, "nbformat": 4, "nbformat_minor": 5})
    path = folder / "deep.ipynb"
    path.write_text(text.replace('"@"', "[" * DEPTH + "]" * DEPTH))
    return path


async def test_a_deeply_nested_notebook_gets_the_cli_s_words(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    nested_notebook(project)
    cli = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "deep.ipynb"], cwd=project,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2
    (said,) = [line for line in cli.stderr.splitlines() if line.startswith("deep.ipynb: ")]
    assert said.startswith("deep.ipynb: internal error (RecursionError: ") and said.endswith("; please report it")
    params = StdioServerParameters(command=sys.executable, args=["-m", "gradguard", "mcp"], cwd=str(project))
    errlog_path = tmp_path / "mcp-server.stderr"
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("check", {"path": "deep.ipynb"})
    assert result.is_error
    assert [c.text for c in result.content] == [f"Error executing tool check: {said}"]  # the SDK's frame
    assert "Traceback" not in errlog_path.read_text()
