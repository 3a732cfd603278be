"""`gradguard check -j`'s worker processes end with the command, however it ends (issue 33, item 8).

A worker holds both ends of its own task queue, so the queue never reaches EOF: when the parent was killed
(SIGKILL by a CI timeout, the OOM killer) its workers waited for ever. They now die with it, as the language
server's jedi worker does, under every start method.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.processes import descendants, survivors  # noqa: E402

DRIVER = """\
import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.set_start_method(sys.argv[1])
    from gradguard.cli import entry

    sys.argv = ["gradguard", *sys.argv[2:]]
    sys.exit(entry())
"""

# A training step that takes the analysis a while, so that the workers are still busy when the parent dies.
STEP = "w{i} = torch.zeros(3, requires_grad=True)\ny{i} = w{i}.sigmoid()\nw{i}.add_(1)\ny{i}.sum().backward()\n"


@pytest.mark.parametrize("method", multiprocessing.get_all_start_methods())
def test_check_j_workers_die_with_a_killed_parent(tmp_path: Path, method: str):
    project = tmp_path / "project"
    project.mkdir()
    body = "import torch\n\n" + "".join(STEP.format(i=i) for i in range(1500))
    for n in range(64):
        (project / f"train_{n}.py").write_text(body)
    driver = tmp_path / "check_with.py"
    driver.write_text(DRIVER)
    parent = subprocess.Popen([sys.executable, str(driver), method, "check", "-j", "2", "--no-cache", "."],
                              cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        started = 3 if method == "forkserver" else 2  # the two workers, and the fork server they come from
        children: list = []
        while time.monotonic() < deadline and len(children) < started:
            time.sleep(0.2)
            children = [p for p in descendants(parent.pid) if "resource_tracker" not in p.command]
        assert len(children) >= started, descendants(parent.pid)
        everything = descendants(parent.pid)  # the workers, and the resource tracker or fork server if any
        time.sleep(1.0)  # the workers are past their start and analysing
        assert parent.poll() is None, "the check ended before the parent could be killed"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        left = survivors(everything, within=10)
        for process in left:
            os.kill(process.pid, signal.SIGKILL)
        assert left == []
    finally:
        if parent.poll() is None:
            parent.kill()
