"""The JupyterLab proxy (`python -m gradguard.jupyter`) in front of two real servers, and the jupyter-lsp spec.

The second server here is a second `gradguard server` (named "theirs"), so that each answer the editor gets can
be counted: every diagnostic and hover must come once from each side. The browser test with pylsp behind the
proxy is tests/e2e/jupyterlab_e2e.js.
"""

import asyncio
import json
import sys

import gradguard.jupyter
from gradguard.jupyter import spec_v1
from gradguard.jupyter.proxy import frame, read_message

PROGRAM = "import torch\n\nw = torch.ones(3, requires_grad=True)\n\n\nw.add_(1)\n"


class Editor:
    """The editor's side of the proxy's stdio, answering the servers' requests as jupyterlab-lsp does."""

    def __init__(self, process):
        self.process = process
        self.next_id = 1

    def send(self, message: dict) -> None:
        self.process.stdin.write(frame({"jsonrpc": "2.0", **message}))

    async def receive(self, predicate) -> dict:
        while True:
            message = await asyncio.wait_for(read_message(self.process.stdout), 60)
            assert message is not None, "the proxy closed its output"
            if "method" in message and "id" in message:  # configuration, registrations
                items = message.get("params", {}).get("items", [])
                self.send({"id": message["id"], "result": [None] * len(items) if items else None})
                continue
            if predicate(message):
                return message

    async def request(self, method: str, params: dict) -> dict:
        request_id, self.next_id = self.next_id, self.next_id + 1
        self.send({"id": request_id, "method": method, "params": params})
        return await self.receive(lambda m: m.get("id") == request_id and "method" not in m)


async def test_the_editor_gets_both_servers_diagnostics_and_hovers_and_both_shut_down(tmp_path):
    argv = [sys.executable, "-m", "gradguard.jupyter", "--virtual-dir", ".virtual_documents",
            "--with", "theirs", "--", sys.executable, "-m", "gradguard", "server"]
    process = await asyncio.create_subprocess_exec(*argv, stdin=-1, stdout=-1, cwd=tmp_path)
    editor = Editor(process)
    # As jupyterlab-lsp starts a server that reads files from disk once a notebook opens: rooted in the virtual
    # documents folder. No jedi: its torch warm-up would cost each server seconds of CPU, and no hover asks it.
    root = tmp_path.as_uri()
    URI = f"{root}/.virtual_documents/nb.ipynb"
    init = await editor.request("initialize", {"processId": None, "rootUri": f"{root}/.virtual_documents", "capabilities": {},
                                               "initializationOptions": {"settings": {"jedi": {"enable": False}}}})
    assert init["result"]["serverInfo"] == {"name": "gradguard + gradguard"}
    assert init["result"]["capabilities"]["hoverProvider"]
    assert "notebookDocumentSync" not in init["result"]["capabilities"]  # jupyterlab-lsp sends one joined text
    editor.send({"method": "initialized", "params": {}})
    editor.send({"method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": PROGRAM}}})

    codes = []
    while len(codes) < 2:  # the first publish carries one server's finding, the second both
        published = await editor.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        codes = [(d["code"], d["range"]["start"]["line"]) for d in published["params"]["diagnostics"]]
    assert codes == [("GG101", 5), ("GG101", 5)]

    hover = await editor.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 5, "character": 0}})
    parts = hover["result"]["contents"]["value"].split("\n\n---\n\n")
    assert hover["result"]["contents"]["kind"] == "markdown"
    assert sum(part.startswith("**GG101** `leaf-inplace`") for part in parts) == 2
    assert hover["result"]["range"] == {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 1}}

    # a file of the project (the file editor's): gradguard's server is rooted in the Jupyter root above the
    # virtual documents, so it reports; the other, rooted as jupyterlab-lsp said, takes it for an outside file
    editor.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": f"{root}/train.py", "languageId": "python", "version": 1, "text": PROGRAM}}})
    published = await editor.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                     and m["params"]["uri"].endswith("/train.py") and m["params"]["diagnostics"])
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["GG101"]

    # an edit that removes the bug clears it from both sides
    editor.send({"method": "textDocument/didChange",
                 "params": {"textDocument": {"uri": URI, "version": 2},
                            "contentChanges": [{"text": PROGRAM.replace("w.add_(1)", "w = w + 1")}]}})
    await editor.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics" and not m["params"]["diagnostics"])

    assert (await editor.request("shutdown", {}))["result"] is None
    editor.send({"method": "exit"})
    assert await asyncio.wait_for(process.wait(), 20) == 0


class Manager:
    """What spec_v1 reads of jupyter-lsp's LanguageServerManager: the servers the user configured."""

    def __init__(self, configured):
        self._language_servers_from_config = configured
        self.conf_d_language_servers = {}


def test_the_spec_runs_the_proxy_in_front_of_the_users_python_server(monkeypatch):
    # only the configured servers: what jupyter-lsp autodetects depends on what else is installed (and its
    # finders take seconds), so the entry point group is one nothing is registered in
    monkeypatch.setattr(gradguard.jupyter, "SPEC_GROUP", "gradguard_tests_no_servers")
    monkeypatch.delenv("GRADGUARD_JUPYTER_SERVER", raising=False)
    theirs = {"version": 2, "argv": ["/opt/bin/pyright-langserver", "--stdio"], "languages": ["python"],
              "display_name": "pyright", "env": {"NODE_OPTIONS": "--max-old-space-size=512"}}
    markdown = {"version": 2, "argv": ["unified-language-server"], "languages": ["markdown"]}
    switched_off = {"version": 2, "argv": [], "languages": ["python"]}  # jupyter-lsp's way to disable one
    spec = spec_v1(Manager({"pyright-custom": theirs, "markdown": markdown, "a-disabled": switched_off}))
    assert list(spec) == ["gradguard"]
    # -P: jupyter-lsp runs it in the Jupyter root, which must not come first on sys.path (processes.python_module)
    assert spec["gradguard"]["argv"] == [sys.executable, "-P", "-m", "gradguard.jupyter", "--virtual-dir", ".virtual_documents",
                                         "--with", "pyright-custom", "--",
                                         "/opt/bin/pyright-langserver", "--stdio"]
    assert spec["gradguard"]["languages"] == ["python"]
    assert spec["gradguard"]["version"] == 2
    assert spec["gradguard"]["display_name"] == "gradguard + pyright"
    assert spec["gradguard"]["env"] == {"PYTHONUNBUFFERED": "1", "NODE_OPTIONS": "--max-old-space-size=512"}
    assert spec["gradguard"]["requires_documents_on_disk"] is True  # theirs may read the file

    monkeypatch.setenv("GRADGUARD_JUPYTER_SERVER", "none")  # the user's choice: gradguard alone
    alone = spec_v1(Manager({"pyright-custom": theirs}))["gradguard"]
    assert alone["argv"] == [sys.executable, "-P", "-m", "gradguard", "server"]
    assert alone["requires_documents_on_disk"] is False
    assert json.loads(json.dumps(alone)) == alone  # jupyter-lsp serves the spec as JSON


async def test_a_server_behind_that_exits_at_once_leaves_gradguard_answering(tmp_path):
    argv = [sys.executable, "-m", "gradguard.jupyter", "--with", "broken", "--", sys.executable, "-c", "raise SystemExit(3)"]
    process = await asyncio.create_subprocess_exec(*argv, stdin=-1, stdout=-1, cwd=tmp_path)
    editor = Editor(process)
    init = await editor.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                                               "initializationOptions": {"settings": {"jedi": {"enable": False}}}})
    assert init["result"]["serverInfo"]["name"] == "gradguard"  # its own answer, not the dead one's
    assert init["result"]["capabilities"]["hoverProvider"]
    editor.send({"method": "initialized", "params": {}})
    editor.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": f"{tmp_path.as_uri()}/train.py", "languageId": "python", "version": 1, "text": PROGRAM}}})
    published = await editor.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["diagnostics"])
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["GG101"]
    assert (await editor.request("shutdown", {}))["result"] is None
    editor.send({"method": "exit"})
    assert await asyncio.wait_for(process.wait(), 20) == 0
