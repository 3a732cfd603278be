"""One language server made of two: gradguard's and the user's own Python server.

JupyterLab connects each notebook or file to a single language server per language (the one ranked
highest; jupyterlab-lsp has no way to attach a second). So that gradguard adds its diagnostics without
taking away the user's completion, hover and linting, jupyter-lsp starts this proxy: it starts both
servers, sends each of them every notification, answers the editor's requests from the user's server
(`initialize`, hover and code actions from both, merged), and publishes the union of both servers'
diagnostics. Requests that a server sends the editor get ids of the proxy's own, so their answers find
their way back. Without a second server the proxy only relays gradguard's.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ..processes import python_module

GRADGUARD = "gradguard"
MERGED_REQUESTS = ("initialize", "shutdown", "textDocument/hover", "textDocument/codeAction")
# What the user's server lacks and gradguard offers is added to the capabilities the editor sees.
BORROWED_CAPABILITIES = ("hoverProvider", "codeActionProvider")


async def read_message(reader: asyncio.StreamReader) -> Optional[dict]:
    """One JSON-RPC message in LSP framing, or None at end of stream."""
    length = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        return None
    return json.loads(await reader.readexactly(length))


def frame(message: dict) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@dataclass
class Backend:
    """A language server the proxy started."""

    name: str
    process: asyncio.subprocess.Process
    capabilities: dict = field(default_factory=dict)
    alive: bool = True

    def send(self, message: dict) -> None:
        if self.alive and self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.write(frame(message))


# A hover or code action does not wait long for the other server once one has answered: the user's server
# may take 20 s on its first hover over torch code (jedi), and gradguard's finding should not wait behind it.
GRACE_AFTER_GRADGUARD_S = 1.0
GRACE_AFTER_PRIMARY_S = 0.5


@dataclass
class PendingRequest:
    """An editor request waiting for the answers of the backends it was sent to."""

    message: dict
    waiting: set
    answers: dict = field(default_factory=dict)
    timer: Optional[asyncio.TimerHandle] = None


def jupyter_root(params: dict, virtual_dir: str) -> dict:
    """initialize params with jupyter-lsp's virtual documents folder replaced by the Jupyter root above it.

    jupyterlab-lsp gives a server that reads files from disk (pylsp does) the virtual documents folder as its root
    when a notebook opens first; gradguard would then take every real file (the file editor's) for one outside
    the workspace and say nothing about it.
    """
    root_uri = params.get("rootUri") or ""
    if not virtual_dir or not root_uri.rstrip("/").endswith("/" + virtual_dir.strip("/")):
        return params
    parent_uri = root_uri.rstrip("/")[: -len(virtual_dir.strip("/")) - 1]
    fixed = {**params, "rootUri": parent_uri}
    if params.get("rootPath"):
        fixed["rootPath"] = params["rootPath"].rstrip("/\\")[: -len(virtual_dir.strip("/")) - 1]
    return fixed


class Proxy:
    def __init__(self, backends: list[Backend], write_to_client, virtual_dir: str = "") -> None:
        self.virtual_dir = virtual_dir
        self.backends = {b.name: b for b in backends}
        self.primary = next((b.name for b in backends if b.name != GRADGUARD), GRADGUARD)
        self.write_to_client = write_to_client
        self.pending: dict[Any, PendingRequest] = {}
        self.server_requests: dict[int, tuple[str, Any]] = {}  # proxy id -> (backend, its own id)
        self.ids = itertools.count(1)
        self.diagnostics: dict[str, dict[str, list]] = {}  # uri -> backend -> its latest list

    def live(self) -> list[Backend]:
        return [b for b in self.backends.values() if b.alive]

    # ---- editor -> servers ----------------------------------------------------------

    def from_client(self, message: dict) -> None:
        method = message.get("method")
        if method is None:  # the editor's answer to a request a backend made
            backend_name, own_id = self.server_requests.pop(message.get("id"), (None, None))
            backend = self.backends.get(backend_name)
            if backend is not None:
                backend.send({**message, "id": own_id})
            return
        if "id" not in message:
            if method == "$/cancelRequest":
                pending = self.pending.get(message.get("params", {}).get("id"))
                for name in pending.waiting if pending else ():
                    self.backends[name].send(message)
                return
            for backend in self.live():
                backend.send(message)
            return
        targets = self.targets(message)
        if not targets:
            self.write_to_client({"jsonrpc": "2.0", "id": message["id"], "result": None})
            return
        self.pending[message["id"]] = PendingRequest(message, {b.name for b in targets})
        for backend in targets:
            if method == "initialize" and backend.name == GRADGUARD:
                backend.send({**message, "params": jupyter_root(message.get("params") or {}, self.virtual_dir)})
            else:
                backend.send(message)

    def targets(self, message: dict) -> list[Backend]:
        method = message["method"]
        live = self.live()
        if method in ("initialize", "shutdown"):
            return live
        if method == "textDocument/hover":
            return [b for b in live if b.capabilities.get("hoverProvider")]
        if method == "textDocument/codeAction":
            return [b for b in live if b.capabilities.get("codeActionProvider")]
        if method == "workspace/executeCommand":
            command = message.get("params", {}).get("command")
            owners = [b for b in live if command in b.capabilities.get("executeCommandProvider", {}).get("commands", [])]
            if owners:
                return owners[:1]
        primary = self.backends.get(self.primary)
        return [primary] if primary is not None and primary.alive else live[:1]

    # ---- servers -> editor ----------------------------------------------------------

    def from_backend(self, backend: Backend, message: dict) -> None:
        method = message.get("method")
        if method is None:
            self.answer(backend.name, message)
        elif "id" in message:  # a request to the editor (configuration, registrations, progress)
            proxy_id = next(self.ids)
            self.server_requests[proxy_id] = (backend.name, message["id"])
            self.write_to_client({**message, "id": proxy_id})
        elif method == "textDocument/publishDiagnostics":
            params = message.get("params", {})
            uri = params.get("uri")
            per_backend = self.diagnostics.setdefault(uri, {})
            per_backend[backend.name] = params.get("diagnostics", [])
            merged = [d for name in sorted(per_backend, key=lambda n: n != GRADGUARD) for d in per_backend[name]]
            self.write_to_client({**message, "params": {**params, "diagnostics": merged}})
        else:
            self.write_to_client(message)

    def answer(self, name: str, message: dict) -> None:
        pending = self.pending.get(message.get("id"))
        if pending is None or name not in pending.waiting:
            return
        pending.waiting.discard(name)
        pending.answers[name] = message
        if not pending.waiting:
            self.finish(message["id"])
        elif pending.timer is None and pending.message["method"] in ("textDocument/hover", "textDocument/codeAction"):
            if name == GRADGUARD and message.get("result"):
                grace = GRACE_AFTER_GRADGUARD_S
            elif name == self.primary:
                grace = GRACE_AFTER_PRIMARY_S
            else:
                return
            pending.timer = asyncio.get_running_loop().call_later(grace, self.finish, message["id"])

    def finish(self, request_id) -> None:
        """Answers the editor with what came in; an answer arriving later finds nothing pending and is dropped."""
        pending = self.pending.pop(request_id, None)
        if pending is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        self.write_to_client(self.merge(pending))

    def backend_gone(self, name: str) -> None:
        """A backend that exited answers nothing more: the requests it owed go out with what the others said."""
        self.backends[name].alive = False
        for request_id in list(self.pending):
            pending = self.pending[request_id]
            if name in pending.waiting:  # an error, so that its missing capabilities and hovers are left out
                self.answer(name, {"jsonrpc": "2.0", "id": request_id,
                                   "error": {"code": -32603, "message": f"{name} exited"}})
        for uri, per_backend in list(self.diagnostics.items()):
            if per_backend.get(name):  # its squiggles go; the other server's stay
                self.from_backend(self.backends[name], {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                                                        "params": {"uri": uri, "diagnostics": []}})

    def merge(self, pending: PendingRequest) -> dict:
        request_id = pending.message["id"]
        method = pending.message["method"]
        answers = pending.answers
        results = {name: a.get("result") for name, a in answers.items() if "error" not in a}
        if not results:  # every backend failed: the primary's error (or any) is the answer
            return answers.get(self.primary) or next(iter(answers.values()))
        if method == "initialize":
            result = self.merge_initialize(results)
        elif method == "textDocument/hover":
            result = merge_hovers([results.get(GRADGUARD)] + [r for n, r in results.items() if n != GRADGUARD])
        elif method == "textDocument/codeAction":
            result = [action for r in results.values() for action in (r or [])] or None
        else:
            result = results.get(self.primary, next(iter(results.values())))
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def merge_initialize(self, results: dict) -> dict:
        for name, result in results.items():
            self.backends[name].capabilities = (result or {}).get("capabilities", {})
        for name in set(self.backends) - set(results):  # it failed to initialize: leave it out
            self.backends[name].alive = False
        if self.primary not in results:
            self.primary = GRADGUARD
        merged = copy.deepcopy(results.get(self.primary) or {})
        capabilities = merged.setdefault("capabilities", {})
        ours = (results.get(GRADGUARD) or {}).get("capabilities", {})
        if self.primary != GRADGUARD:
            for key in BORROWED_CAPABILITIES:
                if ours.get(key) and not capabilities.get(key):
                    capabilities[key] = ours[key]
            commands = ours.get("executeCommandProvider", {}).get("commands", [])
            if commands:
                provider = capabilities.setdefault("executeCommandProvider", {"commands": []})
                provider["commands"] = list(dict.fromkeys(provider.get("commands", []) + commands))
            names = [(results[n] or {}).get("serverInfo", {}).get("name", n) for n in (GRADGUARD, self.primary)]
            merged["serverInfo"] = {"name": " + ".join(names)}
        capabilities.pop("notebookDocumentSync", None)  # jupyterlab-lsp sends one joined document, not cells
        return merged


def markdown_of(contents) -> str:
    """Hover contents (MarkupContent, a MarkedString or a list of them) as Markdown."""
    if contents is None:
        return ""
    if isinstance(contents, str):
        return contents
    if isinstance(contents, list):
        return "\n\n".join(filter(None, (markdown_of(c) for c in contents)))
    if "kind" in contents:
        return contents.get("value", "")
    return f"```{contents.get('language', '')}\n{contents.get('value', '')}\n```"


def merge_hovers(hovers: list) -> Optional[dict]:
    """gradguard's hover first, then the user's server's, under one rule."""
    present = [h for h in hovers if h and markdown_of(h.get("contents")).strip()]
    if not present:
        return None
    merged: dict = {"contents": {"kind": "markdown",
                                 "value": "\n\n---\n\n".join(markdown_of(h["contents"]) for h in present)}}
    ranged = next((h["range"] for h in present if h.get("range")), None)
    if ranged is not None:
        merged["range"] = ranged
    return merged


async def run(primary_name: str = "", primary_argv: Optional[list] = None, virtual_dir: str = "") -> int:
    """Relays between the editor on stdin/stdout and gradguard's server (plus `primary_argv`, if given)."""
    loop = asyncio.get_running_loop()
    # The editor's stdin is read on a thread: asyncio cannot watch a console or pipe stdin on Windows.
    client_in = asyncio.StreamReader()

    def read_stdin() -> None:  # os.read: a thread blocked in sys.stdin's reader would hold its lock at exit
        fd = sys.stdin.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(client_in.feed_eof)
                return
            loop.call_soon_threadsafe(client_in.feed_data, chunk)

    threading.Thread(target=read_stdin, name="editor-stdin", daemon=True).start()
    out = sys.stdout.buffer

    trace_path = os.environ.get("GRADGUARD_JUPYTER_TRACE")  # a file to log the traffic to, for debugging
    trace = open(trace_path, "a", encoding="utf-8") if trace_path else None

    def traced(direction: str, message: dict) -> None:
        if trace is not None:
            trace.write(f"{time.time():.3f} {direction} {json.dumps(message, ensure_ascii=False)}\n")
            trace.flush()

    def write_to_client(message: dict) -> None:
        traced("<-", message)
        out.write(frame(message))
        out.flush()

    commands = [(GRADGUARD, python_module("gradguard", "server"))]  # in the Jupyter root: no `-m` (processes.py)
    if primary_argv:
        commands.append((primary_name if primary_name not in ("", GRADGUARD) else "primary", primary_argv))
    backends = []
    for name, argv in commands:
        try:
            process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                           stdout=asyncio.subprocess.PIPE, stderr=None)
        except OSError as error:  # the user's server is gone since jupyter-lsp found it: gradguard alone
            print(f"gradguard jupyter proxy: cannot start {argv}: {error}", file=sys.stderr)
            continue
        backends.append(Backend(name, process))
    proxy = Proxy(backends, write_to_client, virtual_dir)

    async def pump(backend: Backend) -> None:
        while True:
            try:
                message = await read_message(backend.process.stdout)
            except (asyncio.IncompleteReadError, ValueError):
                message = None
            if message is None:
                break
            traced(f"<{backend.name}", message)
            proxy.from_backend(backend, message)
        proxy.backend_gone(backend.name)

    pumps = [asyncio.ensure_future(pump(b)) for b in backends]
    while True:
        try:
            message = await read_message(client_in)
        except (asyncio.IncompleteReadError, ValueError):
            message = None
        if message is None:
            break
        traced("->", message)
        proxy.from_client(message)
        if message.get("method") == "exit":
            break
    for backend in backends:
        if backend.process.stdin is not None:
            backend.process.stdin.close()
    try:
        await asyncio.wait_for(asyncio.gather(*(b.process.wait() for b in backends)), 5)
    except asyncio.TimeoutError:
        for backend in backends:
            if backend.process.returncode is None:
                backend.process.kill()
    for task in pumps:
        task.cancel()
    return 0
