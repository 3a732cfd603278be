"""A raw JSON-RPC driver for the server over stdio, for the lifecycle and protocol tests where a test client
library would hide the details (exit status, requests after `shutdown`, cancellations, stderr)."""
from __future__ import annotations

import json
import os
import re
import select
import subprocess
import time

from .harness import WORKSPACE, server_command


class RawServer:
    def __init__(self, stderr=subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr)
        self.buffer = b""

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
        assert ready, "no message from the server within 30 s (a request left unanswered?)"
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        assert chunk, "the server closed its output"
        self.buffer += chunk

    def receive(self) -> dict:
        deadline = time.monotonic() + 30
        while b"\r\n\r\n" not in self.buffer:
            self._read(deadline)
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", header).group(1))
        while len(rest) < length:
            self.buffer = header + b"\r\n\r\n" + rest
            self._read(deadline)
            header, _, rest = self.buffer.partition(b"\r\n\r\n")
        self.buffer = rest[length:]
        return json.loads(rest[:length])

    def response(self, msg_id: int) -> dict:
        while True:
            message = self.receive()
            if message.get("id") == msg_id and "method" not in message:
                return message

    def initialize(self, options: dict | None = None) -> None:
        self.send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": WORKSPACE.as_uri(),
                                                                "capabilities": {}, "initializationOptions": options}})
        assert "result" in self.response(1)
        self.send({"method": "initialized", "params": {}})
