"""No file of the checked project is ever imported by a process gradguard starts (issue 33, item 1).

multiprocessing starts its children (a spawn or forkserver worker, its resource tracker) as
`python -c "from multiprocessing.spawn import ..."`, and `-c` puts the working directory first on `sys.path`
before the child imports `socket`, `pickle`, `struct`... A workspace file named like one of those then ran inside
gradguard. Editors other than VS Code (and jupyter-lsp) start the server in the workspace, and `check` runs in
the project. So the workspace below holds stdlib-named files that each leave a marker when imported, and the real
server (every launch form) and `check -j` (every start method) run with it as their working directory.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.raw import RawServer  # noqa: E402

from gradguard.jupyter import spec_v1  # noqa: E402
from gradguard.processes import python_module  # noqa: E402

# Modules a multiprocessing child or the resource tracker imports on its way up, and startup hooks.
PLANTED = ("socket", "pickle", "struct", "multiprocessing", "random", "site", "sitecustomize", "usercustomize",
           "selectors", "copyreg", "signal", "tempfile", "runpy", "base64", "hmac", "secrets", "weakref")

PROGRAM = "import torch\n\nw = torch.zeros(3, requires_grad=True)\ny = w.sigmoid()\nw.add_(1)\ny.sum().backward()\n"


def planted_workspace(tmp_path: Path) -> tuple[Path, Path]:
    workspace, markers = tmp_path / "workspace", tmp_path / "markers"
    workspace.mkdir()
    markers.mkdir()
    for name in PLANTED:
        (workspace / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(markers)!r}, '{name}-' + str(os.getpid())), 'w').close()\n")
    for i in range(8):  # `check -j` starts workers only for 8 or more files
        (workspace / f"train_{i}.py").write_text(PROGRAM)
    return workspace, markers


def imported(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


class ServerIn(RawServer):
    """The raw driver, for a server started by `command` in `cwd`."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.buffer = b""


class NoOtherServers:
    """A jupyter-lsp manager that found no other Python language server."""

    _language_servers_from_config: dict = {}
    conf_d_language_servers: dict = {}


SERVER_LAUNCHES = {
    "console script": [str(Path(sys.executable).with_name("gradguard")), "server"],
    "-m gradguard": [sys.executable, "-m", "gradguard", "server"],
    "-m gradguard.jupyter": [sys.executable, "-m", "gradguard.jupyter"],
    "jupyter-lsp spec": spec_v1(NoOtherServers())["gradguard"]["argv"],
    # the proxy, started as the spec starts it when the user has another Python server (here: a second gradguard)
    "jupyter-lsp spec with a second server": python_module("gradguard.jupyter", "--with", "other", "--",
                                                          sys.executable, "-m", "gradguard", "server"),
}


@pytest.mark.parametrize("launch", SERVER_LAUNCHES)
def test_the_server_and_its_jedi_worker_import_no_workspace_file(tmp_path: Path, launch: str):
    workspace, markers = planted_workspace(tmp_path)
    server = ServerIn(SERVER_LAUNCHES[launch], workspace)
    try:
        server.send({"id": 1, "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"globalSettings": {"jedi": {"enable": True, "warmup": []}}}}})
        assert "result" in server.response(1)
        server.send({"method": "initialized", "params": {}})
        uri = (workspace / "train_0.py").as_uri()
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": PROGRAM}}})
        # The jedi worker (a spawned child, with multiprocessing's resource tracker) has run once it says so.
        deadline, warm, codes = time.monotonic() + 60, False, None
        while time.monotonic() < deadline and not (warm and codes is not None):
            message = server.receive()
            if message.get("method") == "window/logMessage" and "jedi warm" in message["params"]["message"]:
                warm = True
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                codes = [d.get("code") for d in message["params"]["diagnostics"]]
        assert warm, "the jedi worker never started"
        assert set(codes) == {"GG101"}  # with a second gradguard behind the proxy, each server's GG101
        server.send({"id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 2, "character": 5}}})
        assert "result" in server.response(2)
        server.send({"id": 3, "method": "shutdown"})
        server.response(3)
        server.send({"method": "exit"})
        assert server.proc.wait(30) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert imported(markers) == []


DRIVER = """\
import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.set_start_method(sys.argv[1])
    from gradguard.cli import entry

    sys.argv = ["gradguard", *sys.argv[2:]]
    sys.exit(entry())
"""


@pytest.mark.parametrize("method", multiprocessing.get_all_start_methods())
def test_check_j_workers_import_no_project_file_under_any_start_method(tmp_path: Path, method: str):
    workspace, markers = planted_workspace(tmp_path)
    # `gradguard check -j 2` with the start method of macOS and Windows (spawn), of Linux from Python 3.14
    # (forkserver) and of Linux before it (fork). The driver lives outside the project, like the console script.
    driver = tmp_path / "driver" / "check_with.py"
    driver.parent.mkdir()
    driver.write_text(DRIVER)
    done = subprocess.run([sys.executable, str(driver), method, "check", "-j", "2", "--no-cache",
                           "--format", "json", "."],
                          cwd=workspace, capture_output=True, text=True, timeout=300)
    assert imported(markers) == []
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)
    assert sorted({(f["filename"], f["code"]) for f in findings}) == [(f"train_{i}.py", "GG101") for i in range(8)]
