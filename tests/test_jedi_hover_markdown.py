"""jedi's hover puts no workspace text into Markdown unescaped (issue 33, item 10).

The hover quotes the `inplace=True` lines of a definition in another workspace module, and names its file. A
comment holding a backtick ended the code span, and the rest rendered as Markdown: a remote image is fetched as
soon as the hover shows (a read beacon), a `command:` link runs an editor command when clicked. Each piece of
workspace text is now one code span that nothing inside it can end, on one line. The real server, over stdio.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.raw import RawServer  # noqa: E402

BEACON = "` ![seen](https://tracker.example/pixel.png) [run](command:workbench.action.terminal.new) `"
MODEL = f"""import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)  # {BEACON}\r\r![cr](https://tracker.example/cr.png)

    def forward(self, x):
        return self.act(self.fc(x))
"""
TRAIN = "import torch\nfrom model import Net\n\nnet = Net()\nout = net(torch.rand(2, 4))\n"


class ServerIn(RawServer):
    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "gradguard", "server"], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buffer = b""


def test_a_comment_in_a_quoted_workspace_line_renders_as_code(tmp_path: Path):
    (tmp_path / "model.py").write_text(MODEL, newline="")
    (tmp_path / "train.py").write_text(TRAIN)
    server = ServerIn(tmp_path)
    try:
        server.send({"id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "initializationOptions": {"globalSettings": {"jedi": {"warmup": []}}}}})
        server.response(1)
        server.send({"method": "initialized", "params": {}})
        uri = (tmp_path / "train.py").as_uri()
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": TRAIN}}})
        markdown, deadline, request = "", time.monotonic() + 60, 2
        while "jedi" not in markdown and time.monotonic() < deadline:  # the first hovers start jedi
            server.send({"id": request, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": uri}, "position": {"line": 3, "character": 7}}})
            result = server.response(request)["result"]
            markdown = result["contents"]["value"] if result else ""
            request += 1
            time.sleep(0.25)
        quoted = [line for line in markdown.split("\n") if "in-place" in line]
        assert quoted == ["- line 9 uses an in-place operation: ``self.act = nn.ReLU(inplace=True)  # "
                          + BEACON + "  ![cr](https://tracker.example/cr.png)``"]
        assert "`model.Net`" in markdown and "`model.py` line 5" in markdown
    finally:
        server.proc.kill()
        server.proc.wait()
