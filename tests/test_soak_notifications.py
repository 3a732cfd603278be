"""The server's memory stays flat over 10,000 edits (issue 33, item 6).

pygls 2.1.1 keeps the future of every notification whose handler is a generator (its own didOpen/didChange/
didClose wrappers) in `_request_futures` under a fresh uuid and never pops it: 99 -> 174 MB over 15,000 edits,
not freed when the document closes. The real server over stdio (the raw driver: a test client library would
add its own memory per message) takes 10,000 didChange notifications and its resident memory is measured.
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.raw import RawServer  # noqa: E402

PROGRAM = "import torch\n\nw = torch.zeros(3, requires_grad=True)\ny = w.sigmoid()\nw.add_(1)\n"


def resident_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def edit(server: RawServer, uri: str, version: int) -> None:
    # Type a character at the end of line 4 and take it back: the text keeps its size, only the edits count.
    text = "1" if version % 2 else ""
    start = {"line": 4, "character": 9}
    end = {"line": 4, "character": 9 if version % 2 else 10}
    server.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": {"start": start, "end": end}, "text": text}]}})


def settle(server: RawServer, request_id: int) -> None:
    """Every notification sent so far is handled once a later request is answered (messages run in order)."""
    server.send({"id": request_id, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///nowhere/never_opened.py"}, "position": {"line": 0, "character": 0}}})
    server.response(request_id)


def test_ten_thousand_edits_leave_the_server_memory_flat(tmp_path: Path):
    server = RawServer()
    try:
        # Analysis waits until typing stops (a long debounce), so what grows is what each message leaves behind.
        server.initialize({"globalSettings": {"debounceMs": 60_000, "jedi": {"enable": False}}})
        uri = (tmp_path / "train.py").as_uri()
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": PROGRAM}}})
        version = 1
        for _ in range(2_000):  # warm-up: the server's caches, allocator arenas and pygls's own structures
            version += 1
            edit(server, uri, version)
        settle(server, 10)
        before = resident_mb(server.proc.pid)
        started = time.monotonic()
        for _ in range(10_000):
            version += 1
            edit(server, uri, version)
            if version % 1_000 == 0:
                settle(server, version)  # keep the pipe from filling while the server catches up
        settle(server, 11)
        after = resident_mb(server.proc.pid)
        assert time.monotonic() - started < 90
        # 10,000 leaked futures with their callbacks and uuids were about 50 MB; allocator noise is a few MB.
        assert after - before < 8, (before, after)
        server.send({"id": 12, "method": "shutdown"})
        server.response(12)
        server.send({"method": "exit"})
        assert server.proc.wait(20) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
