"""The agent loop (issue 32): `gradguard agent init` writes the skill file and the AGENTS.md section and prints
the Stop-hook recipes; `gradguard agent hook` is the Stop hook (exit 2 with the findings on stderr, 0 otherwise).
The end-to-end test is a scripted agent: it writes a bug into a git project, its Stop hook exits 2 naming it, it
asks `gradguard mcp` (through the official MCP client) for the changed files, applies the fix edits of the answer,
and the hook then exits 0."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "server" / "gradguard" / "rules" / "examples"
SIGMOID_RELU = EXAMPLES / "GG202" / "bad_1_sequential_sigmoid_relu.py"  # nn.ReLU(inplace=True) after nn.Sigmoid
LEAF_ADD = EXAMPLES / "GG101" / "bad_1_leaf_add.py"
CLEAN = "import torch\n\nx = torch.ones(3) * 2\n"


def gradguard(*args: str, cwd: Path, payload: dict | None = None) -> subprocess.CompletedProcess:
    stdin = json.dumps(payload) if payload is not None else ""
    return subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=300)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "data.py").write_text(CLEAN)
    git("init", "-q", cwd=folder)
    git("add", ".", cwd=folder)
    git("commit", "-q", "-m", "start", cwd=folder)
    return folder


def apply_edits(text: str, edits: list[dict]) -> str:
    """What an agent does with an MCP answer's edits: 1-based line/column ranges, last first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    for e in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        text = text[:offset(e["line"], e["column"])] + e["new_text"] + text[offset(e["end_line"], e["end_column"]):]
    return text


def test_the_hook_exits_0_when_nothing_changed_and_for_a_clean_change(project):
    quiet = gradguard("agent", "hook", cwd=project, payload={"stop_hook_active": False})
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    (project / "data.py").write_text(CLEAN + "y = x * 3\n")
    clean = gradguard("agent", "hook", cwd=project, payload={"stop_hook_active": False})
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")


def test_the_hook_checks_only_the_changed_files_and_exits_2_with_the_findings_on_stderr(project):
    shutil.copy(LEAF_ADD, project / "committed_bug.py")
    git("add", ".", cwd=project)
    git("commit", "-q", "-m", "an old bug the agent did not touch", cwd=project)
    (project / "notes.txt").write_text("w += 1\n")
    shutil.copy(SIGMOID_RELU, project / "model.py")  # the agent's new file
    run = gradguard("agent", "hook", cwd=project, payload={"session_id": "s", "stop_hook_active": False})
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert lines[0].startswith("gradguard found 1 PyTorch autograd problem in the files changed since the last commit.")
    assert lines[1] == "model.py: 1 finding in 1 file (1 file checked)."
    assert lines[3].startswith("model.py:8:5: GG202 (inplace-activation-on-saved, error) ")
    assert lines[4].startswith("  fix (safe): Use `inplace=False`") and lines[4].endswith("replace 8:21-8:25 with 'False'")
    assert "committed_bug.py" not in run.stderr


def test_a_stop_the_hook_already_sent_back_is_let_go(project):
    shutil.copy(SIGMOID_RELU, project / "model.py")
    again = gradguard("agent", "hook", cwd=project, payload={"stop_hook_active": True})
    assert (again.returncode, again.stderr) == (0, "")


def test_with_cursor_the_findings_are_a_followup_message_on_stdout(project):
    shutil.copy(SIGMOID_RELU, project / "model.py")
    run = gradguard("agent", "hook", "--cursor", cwd=project, payload={"loop_count": 0, "status": "completed"})
    assert run.returncode == 0 and run.stderr == ""
    message = json.loads(run.stdout)["followup_message"]
    assert "model.py:8:5: GG202 " in message
    assert gradguard("agent", "hook", "--cursor", cwd=project, payload={"loop_count": 1}).stdout == ""


def test_init_writes_the_skill_and_a_section_of_agents_md_it_replaces_when_run_again(project):
    (project / "AGENTS.md").write_text("# Project notes\n\nUse uv.\n")
    first = gradguard("agent", "init", cwd=project)
    assert first.returncode == 0
    skill = (project / ".claude" / "skills" / "gradguard" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: gradguard\ndescription: Check PyTorch code for autograd in-place errors")
    agents = (project / "AGENTS.md").read_text()
    assert agents.startswith("# Project notes\n\nUse uv.\n\n<!-- gradguard:start -->\n## gradguard (PyTorch autograd")
    assert agents.endswith("<!-- gradguard:end -->\n")
    assert gradguard("agent", "init", cwd=project).returncode == 0
    assert (project / "AGENTS.md").read_text() == agents  # replaced in place, not appended twice
    out = first.stdout
    assert "Exit-code contract: 0 nothing found; 2 findings, printed on stderr" in out
    recipes = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    claude, codex, cursor = recipes
    assert claude["hooks"]["Stop"][0]["hooks"][0] == {"type": "command", "command": "gradguard agent hook", "timeout": 120}
    assert codex == claude
    assert cursor == {"version": 1, "hooks": {"stop": [{"command": "gradguard agent hook --cursor", "loop_limit": 1}]}}


def test_init_refuses_an_agents_md_that_links_out_of_the_project(project, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("token=abc\n")
    (project / "AGENTS.md").symlink_to(secret)
    run = gradguard("agent", "init", cwd=project)
    assert run.returncode == 1 and "AGENTS.md: a symlink to a file outside the checked folders" in run.stderr
    assert secret.read_text() == "token=abc\n" and (project / "AGENTS.md").is_symlink()


@pytest.mark.skipif(sys.version_info < (3, 10), reason="gradguard[mcp] needs Python 3.10+")
async def test_a_scripted_agent_writes_a_bug_is_stopped_applies_the_mcp_fix_and_is_let_finish(project):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    # 1. The agent writes code with a bug, and tries to finish.
    shutil.copy(SIGMOID_RELU, project / "model.py")
    stop = gradguard("agent", "hook", cwd=project, payload={"hook_event_name": "Stop", "stop_hook_active": False})
    assert stop.returncode == 2 and "model.py:8:5: GG202 " in stop.stderr
    # 2. Sent back, it asks gradguard's MCP server about the files it changed and applies the safe fixes' edits.
    params = StdioServerParameters(command=sys.executable, args=["-m", "gradguard", "mcp"], cwd=str(project))
    with open(project.parent / "mcp.stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            answer = (await session.call_tool("check", {"paths": ["model.py", "data.py"]})).structured_content
    [file_record] = answer["files"]
    edits = [e for f in file_record["findings"] for fix in f["fixes"] if fix["safety"] == "safe" for e in fix["edits"]]
    assert edits == [{"line": 8, "column": 21, "end_line": 8, "end_column": 25, "new_text": "False"}]
    path = project / file_record["path"]
    path.write_text(apply_edits(path.read_text(), edits))
    assert "nn.ReLU(inplace=False)" in path.read_text()
    # 3. The next stop is let through: nothing left.
    done = gradguard("agent", "hook", cwd=project, payload={"hook_event_name": "Stop", "stop_hook_active": False})
    assert (done.returncode, done.stderr) == (0, "")
    # And the fixed program trains: torch agrees.
    run = subprocess.run([sys.executable, "model.py"], cwd=project, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
