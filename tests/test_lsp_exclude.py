"""The language server reads `exclude` as `gradguard check` does, compiled once per config (issue 33, item 4).

The server matched each `exclude` pattern with fnmatch against the path and each of its parts on every
analysis: 60,000 entries (a pull request can add them) cost every keystroke seconds, past fnmatch's cache.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.raw import RawServer  # noqa: E402
from work_count import calls_of  # noqa: E402

from gradguard.config import config_from_pyproject  # noqa: E402
from gradguard.lsp.server import GradguardServer  # noqa: E402

BUG = "import torch\n\nw = torch.zeros(3, requires_grad=True)\nw.add_(1)\n"


def project(root: Path, entries: int) -> Path:
    root.mkdir()
    generated = ", ".join(f'"runs/r{i}.py"' for i in range(entries))
    (root / "pyproject.toml").write_text(f'[tool.gradguard]\nexclude = ["/legacy", "*_old.py", {generated}]\n')
    return root / "pyproject.toml"


def test_an_excluded_path_costs_the_same_with_60000_entries_as_with_600(tmp_path: Path):
    small = config_from_pyproject(project(tmp_path / "small", 600))
    large = config_from_pyproject(project(tmp_path / "large", 60_000))
    counts = []
    for config in (small, large):
        path = str(Path(config.root) / "src" / "models" / "train.py")
        assert GradguardServer.excluded(path, config) is False  # compiles the config's patterns once
        counts.append(calls_of(lambda: GradguardServer.excluded(path, config)))
    assert counts[0] == counts[1], counts


def test_the_server_excludes_what_check_excludes(tmp_path: Path):
    config = config_from_pyproject(project(tmp_path / "p", 10))
    root = Path(config.root)
    server = RawServer()
    try:
        server.send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": root.as_uri(),
                                                                 "capabilities": {}}})
        server.response(1)
        server.send({"method": "initialized", "params": {}})
        published: dict[str, list] = {}
        names = ("legacy/train.py", "src/legacy/train.py", "src/train_old.py", "runs/r7.py", "src/train.py")
        for version, name in enumerate(names, 1):
            server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": (root / name).as_uri(), "languageId": "python", "version": version, "text": BUG}}})
        deadline = time.monotonic() + 60
        while len(published) < len(names) and time.monotonic() < deadline:
            message = server.receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                uri = message["params"]["uri"]
                published[uri[len(root.as_uri()) + 1:]] = [d.get("code") for d in message["params"]["diagnostics"]]
        # "/legacy" is anchored at the config's folder (so src/legacy is checked), "*_old.py" matches any folder
        assert published == {"legacy/train.py": [], "src/legacy/train.py": ["GG101"], "src/train_old.py": [],
                             "runs/r7.py": [], "src/train.py": ["GG101"]}
    finally:
        server.proc.kill()
        server.proc.wait()
