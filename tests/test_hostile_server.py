"""The language server against hostile documents, settings, positions and lifecycles (issue 14).

The real `gradguard server` over stdio (pytest-lsp), plus a raw JSON-RPC driver for the lifecycle
tests (exit status, requests after `shutdown`), where a test client library would hide the details.
"""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from gradguard.lsp.documents import LspTextDocument

sys.path.insert(0, str(Path(__file__).parent))
from hostile_inputs import CRASH_SIZES, FLAT, FOLLOWER_FINDING, program  # noqa: E402
from lsp_fixtures import programs as P  # noqa: E402
from lsp_fixtures.processes import descendants, running, survivors  # noqa: E402
from lsp_fixtures.raw import RawServer  # noqa: E402
from lsp_fixtures.harness import (  # noqa: E402
    WORKSPACE,
    close,
    fresh_uri,
    init_params,
    make_client,
    open_doc,
    server_command,
    wait_publish,
)

CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)
module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params())
    yield
    await lsp_client.shutdown_session()


def server_peak_mb(client: LanguageClient) -> float:
    status = Path(f"/proc/{client._server.pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


# ---- hostile documents -------------------------------------------------------------------------


@module_loop
async def test_the_server_survives_every_hostile_shape_and_reports_the_rest(client: LanguageClient):
    # At the sizes that crashed the server (SIGSEGV), hung it or took gigabytes before the guard.
    for shape, n in CRASH_SIZES.items():
        uri = fresh_uri(shape)
        mark = open_doc(client, uri, program(shape, n))
        published = await wait_publish(client, uri, mark, version=1, timeout=60)
        codes = [d.code for d in published.diagnostics if d.code]
        hints = [d.message for d in published.diagnostics if not d.code]
        assert FOLLOWER_FINDING in codes, (shape, codes, hints)
        if shape not in FLAT:
            assert len(hints) == 1 and "not analysed" in hints[0], (shape, hints)
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    assert client._server.returncode is None
    assert server_peak_mb(client) < 600  # the 1.2 MB literal alone once took 1.5 GB


@module_loop
async def test_one_change_with_5000_edits_is_applied_in_one_pass(client: LanguageClient):
    # A Replace All: 5,000 edits in one didChange (once 70 s of rebuilding the text per edit).
    lines = [f"x{i} = {i}\n" for i in range(5000)]
    text = "import torch\nw = torch.zeros(3, requires_grad=True)\n" + "".join(lines) + "w += 1\n"
    uri = fresh_uri("replace_all")
    mark = open_doc(client, uri, text)
    await wait_publish(client, uri, mark, version=1, timeout=60)
    changes = [
        types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(2 + i, 0), end=types.Position(2 + i, 1)), text="renamed_")
        for i in range(5000)
    ]
    mark = len(client.published)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2), content_changes=changes))
    published = await wait_publish(client, uri, mark, version=2, timeout=30)
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GG101", 5002)]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(5002, 0)))
    assert hover is not None and "a leaf Variable that requires grad" in hover.contents.value


@module_loop
async def test_positions_past_the_line_end_are_clamped_without_a_phantom_line_in_crlf(client: LanguageClient):
    text = "import torch\r\nw = torch.zeros(3, requires_grad=True)\r\nx = 1\r\nw += 1\r\n"
    uri = fresh_uri("crlf_clamp")
    mark = open_doc(client, uri, text)
    assert [d.range.start.line for d in (await wait_publish(client, uri, mark, version=1)).diagnostics] == [3]

    def change(version: int, line: int, character: int, new_text: str) -> int:
        mark = len(client.published)
        pos = types.Position(line, character)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=pos, end=pos), text=new_text)]))
        return mark

    # Character 6 on `x = 1` (5 characters) means the line end: before the CRLF, not between \r and \n.
    mark = change(2, 2, 6, "  # note")
    published = await wait_publish(client, uri, mark, version=2)
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GG101", 3)]
    # A line past the last one means the end of the text.
    mark = change(3, 99, 0, "w.add_(1)\r\n")
    published = await wait_publish(client, uri, mark, version=3)
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GG101", 3), ("GG101", 4)]


@module_loop
async def test_files_outside_the_workspace_get_no_diagnostics(client: LanguageClient, tmp_path: Path):
    outside = (tmp_path / "elsewhere.py").as_uri()
    mark = open_doc(client, outside, P.LEAF_INPLACE)
    assert list((await wait_publish(client, outside, mark, version=1)).diagnostics) == []
    inside = fresh_uri("inside")
    mark = open_doc(client, inside, P.LEAF_INPLACE)
    assert [d.code for d in (await wait_publish(client, inside, mark, version=1)).diagnostics] == ["GG101"]


@module_loop
async def test_a_backtick_in_a_string_literal_stays_inside_the_hover_code_span(client: LanguageClient):
    text = P.LEAF_INPLACE.replace("w += 1", "w.add_(len('`![x](http://evil/)`'))")
    uri = fresh_uri("backtick")
    mark = open_doc(client, uri, text)
    await wait_publish(client, uri, mark, version=1)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(2, 1)))
    assert hover is not None
    value = hover.contents.value
    # Outside the code spans (as CommonMark pairs backtick runs) nothing can form an image or a link.
    outside = re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", value, flags=re.S)
    assert "evil" in outside  # the literal's backtick did end a span: the rest must be inert text
    assert not re.search(r"(?<!\\)[\[\]<>]", outside.replace("\\\\", "")), value
    assert "!\\[x\\](http://evil/)" in outside


# ---- settings ------------------------------------------------------------------------------------


WRONG_TYPES = {
    "enable": "yes", "select": 5, "ignore": {"GG1": True}, "severity": ["error"], "language": 3,
    "debounceMs": float("inf"), "maxFileBytes": "big", "docsUrl": {"x": 1}, "jedi": {"timeoutMs": "slow", "warmup": 7},
}


@pytest.mark.asyncio
async def test_wrong_typed_settings_get_defaults_at_initialize_and_after_a_change():
    client = make_client()
    command = server_command()
    await client.start_io(command[0], *command[1:])
    try:
        await client.initialize_session(init_params(settings=dict(WRONG_TYPES)))  # int(inf) once failed it
        uri = fresh_uri("wrong_types")
        mark = open_doc(client, uri, P.LEAF_INPLACE)
        published = await wait_publish(client, uri, mark, version=1)
        assert [(d.code, d.severity) for d in published.diagnostics] == [("GG101", types.DiagnosticSeverity.Error)]
        # A folder's settings of the wrong type, and a docs URL that str.format would choke on.
        mark = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"gradguard": [
            {"workspace": WORKSPACE.as_uri(), "select": [1, 2], "debounceMs": -5, "maxFileBytes": 0,
             "docsUrl": "https://example.org/{lang}/{code}"}]}))
        published = await wait_publish(client, uri, mark, version=1)
        (diag,) = published.diagnostics
        assert diag.code == "GG101" and diag.code_description.href == "https://example.org/{lang}/GG101"
    finally:
        await close(client)


# ---- lifecycle (raw JSON-RPC) ----------------------------------------------------------------------


def test_requests_after_shutdown_get_invalid_request_and_exit_then_returns_0():
    server = RawServer()
    try:
        server.initialize()
        server.send({"id": 2, "method": "shutdown"})
        assert server.response(2).get("result", "missing") is None
        server.send({"id": 3, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": fresh_uri()}, "position": {"line": 0, "character": 0}}})
        error = server.response(3)["error"]
        assert error["code"] == -32600  # InvalidRequest
        server.send({"method": "exit"})
        assert server.proc.wait(timeout=20) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


def test_a_killed_server_leaves_no_process_behind():
    # SIGKILL, a segfault or the OOM killer end the server without `shutdown`: its jedi worker (300 MB) and
    # multiprocessing's resource tracker were orphaned and lived on, one more pair at every crash.
    server = RawServer()
    try:
        server.initialize({"settings": {"jedi": {"warmup": []}}})
        uri = fresh_uri("orphans")
        source = "import os\nos.path.join('a', 'b')\n"
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": source}}})
        for attempt in range(600):  # the first hovers start jedi; one of them brings its answer
            server.send({"id": 10 + attempt, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": uri}, "position": {"line": 1, "character": 9}}})
            result = server.response(10 + attempt).get("result")
            if result and "*jedi*" in result["contents"]["value"]:
                break
            time.sleep(0.1)
        assert "os.path.join" in result["contents"]["value"], result
        children = descendants(server.proc.pid)
        commands = " | ".join(p.command for p in children)
        assert "spawn_main" in commands and "resource_tracker" in commands, commands
        server.proc.kill()
        server.proc.wait(timeout=10)
        assert survivors(children, within=5) == []
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


WATCHED_CHILD = """
import multiprocessing, sys, time
from gradguard.processes import watch_parent

def child():
    watch_parent()
    time.sleep(600)

if __name__ == "__main__":
    process = multiprocessing.get_context("spawn").Process(target=child)
    process.start()
    print(process.pid, flush=True)
    time.sleep(600)
"""


def test_the_parent_watchdog_alone_ends_a_child_whose_parent_was_killed(tmp_path: Path):
    # Where prctl(PR_SET_PDEATHSIG) does not exist (macOS, Windows) the watchdog thread is all the worker has.
    script = tmp_path / "parent.py"
    script.write_text(WATCHED_CHILD)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child_pid = int(parent.stdout.readline())
        (child,) = [p for p in descendants(parent.pid) if p.pid == child_pid]
        time.sleep(0.5)  # let the child reach its sleep, past the watchdog's start
        assert running(child)
        parent.kill()
        parent.wait(timeout=10)
        left = survivors([child], within=5)
        for process in left:
            os.kill(process.pid, 9)
        assert left == []
    finally:
        if parent.poll() is None:
            parent.kill()


def test_exit_without_shutdown_returns_1():
    server = RawServer()
    try:
        server.initialize()
        server.send({"method": "exit"})
        assert server.proc.wait(timeout=20) == 1
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


# ---- the document model ---------------------------------------------------------------------------


def _reference_edit(text: str, l1: int, c1: int, l2: int, c2: int, new: str) -> str:
    """LSP semantics on code points: lines end at \\n, \\r\\n, \\r; a character past the line end is the line
    end (before its terminator); a line past the last is the end of the text."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)

    def offset(line: int, col: int) -> int:
        if line >= len(lines):
            return len(text)
        content = len(lines[line]) - len(re.search(r"(\r\n|\r|\n)?\Z", lines[line]).group())
        return sum(len(x) for x in lines[:line]) + min(col, content)

    a, b = sorted((offset(l1, c1), offset(l2, c2)))
    return text[:a] + new + text[b:]


def test_incremental_changes_match_the_lsp_semantics_on_random_edits():
    rng = random.Random(14)
    for _ in range(3000):
        text = "".join(rng.choice(["a", "b", "\n", "\r\n", "\r", "é", " "]) for _ in range(rng.randint(0, 30)))
        doc = LspTextDocument("file:///x.py", source=text)
        for step in range(6):
            l1, c1, l2, c2 = (rng.randint(0, 8), rng.randint(0, 6), rng.randint(0, 8), rng.randint(0, 6))
            if (l1, c1) > (l2, c2):
                l1, c1, l2, c2 = l2, c2, l1, c1
            new = rng.choice(["", "x", "\n", "\r", "\r\n", "yy\nz", "\n\r"])
            text = _reference_edit(text, l1, c1, l2, c2, new)
            doc.apply_change(types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(l1, c1), end=types.Position(l2, c2)), text=new))
            if step % 2:
                assert doc.source == text
            assert "".join(doc.lines) == text and all(re.fullmatch(r"[^\r\n]*(\r\n|\r|\n)?", x) for x in doc.lines)


def test_a_document_never_reads_the_disk(tmp_path: Path):
    secret = tmp_path / "on_disk.py"
    secret.write_text("w += 1\n")
    assert LspTextDocument(secret.as_uri()).source == ""


BIG = "import torch\n\n" + "".join(f"def f{i}(x):\n    x.add_(1)\n    return x * {i}\n\n" for i in range(25000))


@pytest.mark.parametrize("ending", ["shutdown-exit", "exit", "eof", "shutdown-eof"])
def test_the_process_ends_at_once_with_the_spec_status_in_the_middle_of_an_analysis(ending: str):
    # Two seconds in, the engine thread is inside libcst or the Facts pass: interpreter finalisation unwound it
    # through native frames (SIGABRT after shutdown + exit), and when the client vanished (stdin closed) it
    # joined jedi's process pool, so the server outlived its editor. Its jedi worker (warming up torch) and the
    # resource tracker end with it.
    server = RawServer()
    try:
        server.initialize()
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": fresh_uri("long_analysis"), "languageId": "python", "version": 1, "text": BIG}}})
        time.sleep(2)
        children = descendants(server.proc.pid)
        assert any("spawn_main" in p.command for p in children), children
        if ending.startswith("shutdown"):
            server.send({"id": 2, "method": "shutdown"})
            assert server.response(2).get("result", "missing") is None
        if ending.endswith("exit"):
            server.send({"method": "exit"})
        else:
            server.proc.stdin.close()
        expected = 0 if ending.startswith("shutdown") else 1
        assert server.proc.wait(timeout=20) == expected
        assert survivors(children, within=5) == []
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


def test_ending_at_once_leaves_nothing_for_the_resource_tracker_to_complain_about(tmp_path: Path):
    # The process ends with os._exit: jedi's process pool must have released its semaphores first, or
    # multiprocessing's resource tracker prints "leaked semaphore objects" into the editor's server log.
    log = open(tmp_path / "stderr.txt", "wb")
    server = RawServer(stderr=log)
    try:
        server.initialize()
        uri = fresh_uri("tracker")
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": P.LEAF_INPLACE}}})
        while server.receive().get("method") != "textDocument/publishDiagnostics":
            pass
        server.send({"id": 2, "method": "shutdown"})
        server.response(2)
        server.send({"method": "exit"})
        assert server.proc.wait(timeout=20) == 0
        time.sleep(1)  # the tracker outlives the server by a moment
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        log.close()
    assert "leaked" not in (tmp_path / "stderr.txt").read_text(), (tmp_path / "stderr.txt").read_text()


def test_exit_ends_the_process_while_an_analysis_is_still_running():
    # The first analysis of 100,000 lines takes tens of seconds; `exit` must not wait for it (the engine
    # thread was a ThreadPoolExecutor worker, which the interpreter joins at exit).
    server = RawServer()
    try:
        server.initialize()
        text = "import torch\n\n" + "".join(f"def f{i}(x):\n    x.add_(1)\n    return x * {i}\n\n" for i in range(25000))
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": fresh_uri("long_analysis"), "languageId": "python", "version": 1, "text": text}}})
        server.send({"id": 2, "method": "shutdown"})
        assert server.response(2).get("result", "missing") is None
        server.send({"method": "exit"})
        assert server.proc.wait(timeout=20) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


# ---- the repository's trace.json ------------------------------------------------------------------


def test_a_trace_json_of_20000_duplicates_resolves_each_named_path_once(tmp_path: Path, monkeypatch):
    # A repository can ship any trace.json: 20,000 copies of one finding once took 20,000 realpath() calls per
    # site (2.6 s of a reload); they give the two marks of that finding and resolve its one path once.
    from gradguard.lsp import trace_results

    program = tmp_path / "train.py"
    program.write_text("import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\n"
                       "y.sum().backward()\n")
    finding = {"kind": "stale-save", "save": {"file": str(program), "line": 3, "node": "ExpBackward0"},
               "write": {"file": str(program), "line": 4, "op": "add_"}}
    (tmp_path / ".gradguard").mkdir()
    (tmp_path / ".gradguard" / "trace.json").write_text(json.dumps({"version": 1, "findings": [finding] * 20000}))
    calls = []
    real_inside = trace_results._inside
    monkeypatch.setattr(trace_results, "_inside", lambda root, path: calls.append(path) or real_inside(root, path))
    marks = trace_results.read_trace_file(tmp_path / ".gradguard" / "trace.json")
    assert [(m.line, m.other_line) for m in marks] == [(2, 3), (3, 2)]
    assert len(calls) <= 2, len(calls)  # trace.json itself and train.py


# ---- converting many findings ----------------------------------------------------------------------


def test_2000_findings_on_one_line_measure_that_line_once():
    # 2,000 writes on one 22 KB line: every range asked the codec to count the units of the line up to its
    # column, character by character in Python (2,000 x 6 x 11,000 characters: 15 s of the server's analysis).
    from pygls.workspace.position_codec import PositionCodec

    from gradguard.engine import Engine
    from gradguard.lsp.convert import Positions, finding_diagnostic
    from gradguard.lsp.documents import Piece, Snapshot
    from gradguard.lsp.settings import Settings

    class CountingCodec(PositionCodec):
        counted = 0

        def client_num_units(self, string: str):
            CountingCodec.counted += len(string)
            return super().client_num_units(string)

    line = "; ".join(["w.add_(1)"] * 2000)
    for prefix in ("", "s = '中文 😀'; "):  # ASCII, and a line whose units differ from its code points
        text = "import torch\nw = torch.zeros(3, requires_grad=True)\n" + prefix + line + "\n"
        report = Engine().check(text, "writes.py")
        assert len(report.findings) == 2000
        snapshot = Snapshot("file:///writes.py", text, "/writes.py", [Piece("file:///writes.py", 0, 4, 1)])
        CountingCodec.counted = 0
        positions = Positions(snapshot, CountingCodec())
        diagnostics = [finding_diagnostic(f, positions, Settings())[1] for f in report.findings]
        assert CountingCodec.counted <= 2 * len(text), CountingCodec.counted
        last = diagnostics[-1].range
        emoji = 1 if prefix else 0  # 😀 is two UTF-16 units
        assert (last.start.line, last.start.character) == (2, len(prefix) + emoji + len(line) - len("w.add_(1)"))


# ---- jedi's on-disk cache ----------------------------------------------------------------------------


def test_jedi_worker_keeps_a_private_cache_and_recovers_from_a_truncated_pickle(tmp_path: Path, monkeypatch):
    # The server kills its jedi worker at shutdown, possibly while parso writes a pickle: a truncated pickle in
    # jedi's shared cache (~/.cache/jedi) broke hover here and every other jedi user with EOFError.
    import jedi
    import parso.cache

    from gradguard.lsp import jedi_support

    shared = tmp_path / "cache" / "jedi"
    monkeypatch.setattr(jedi.settings, "cache_directory", str(shared))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "layers.py").write_text("import math\n\ndef scale(x):\n    return math.sqrt(x)\n")
    source = "from layers import scale\nscale(2.0)\n"
    jedi_support._init_worker(str(workspace))
    private = Path(jedi.settings.cache_directory)
    assert private != shared and private.parent == shared.parent
    parso.cache.parser_cache.clear()
    info = jedi_support._describe(source, str(workspace / "train.py"), 1, 1)
    assert info is not None and info["name"] == "scale"
    pickles = list(private.rglob("*.pkl"))
    assert pickles and not shared.exists()
    for pickle_file in pickles:  # as a kill in the middle of a write leaves them
        pickle_file.write_bytes(pickle_file.read_bytes()[:100])
    parso.cache.parser_cache.clear()
    info = jedi_support._describe(source, str(workspace / "train.py"), 1, 1)
    assert info is not None and info["name"] == "scale" and info["in_workspace"]
