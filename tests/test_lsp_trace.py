"""The server shows `gradguard trace` results (.gradguard/trace.json) on the save and write lines.

The trace file is produced by really running the RNN program under `gradguard trace --lang zh` (torch,
CPU); the server renders it in its own language. trace.json comes from the repository, so it is also fed
hostile content: devices, FIFOs, symlinks out of the workspace, malformed and duplicated entries.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import change_doc, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

from gradguard.lsp import trace_results  # noqa: E402
from gradguard.lsp.trace_results import TraceResults, read_trace_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORKDIR = Path(__file__).parent / "lsp_fixtures" / "trace_workspace"
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)
CJK = re.compile(r"[\u4e00-\u9fff]")


def setup_module():
    WORKDIR.mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / "rnn_retain_graph.py", WORKDIR / "rnn.py")
    run = subprocess.run([sys.executable, "-m", "gradguard", "trace", "--lang", "zh", "rnn.py"], cwd=WORKDIR,
                         capture_output=True, text=True, timeout=300)
    trace_json = WORKDIR / ".gradguard" / "trace.json"
    assert run.returncode == 1 and trace_json.is_file(), run.stderr
    doc = json.loads(trace_json.read_text())
    # One malformed entry and one about a file outside the workspace: skipped, the rest still shown.
    doc["findings"] = [{"kind": "stale-save", "save": {"file": 3, "line": "x"}, "write": []},
                       {"kind": "stale-save", "save": {"file": "/etc/hostname", "line": 1, "node": "X"}},
                       *doc["findings"]]
    trace_json.write_text(json.dumps(doc))


def teardown_module():
    shutil.rmtree(WORKDIR, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Through the server


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params(root=WORKDIR))
    yield
    await lsp_client.shutdown_session()


def traced(params):
    return sorted((d.range.start.line + 1, d.severity, [r.location.range.start.line + 1 for r in d.related_information or []])
                  for d in params.diagnostics if d.source == "gradguard-trace")


async def wait_traced(client, uri, since, version, timeout=30):
    """The first publish of `version` that carries the trace marks (they are read off the event loop)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, params in client.published[since:]:
            if params.uri == uri and params.version == version and traced(params):
                return params
        await asyncio.sleep(0.02)
    raise AssertionError(f"no trace diagnostics for {uri} v{version}")


@pytest.mark.asyncio(loop_scope="module")
async def test_trace_findings_mark_the_save_and_the_write_linked_to_each_other(client: LanguageClient):
    uri = (WORKDIR / "rnn.py").as_uri()
    text = (WORKDIR / "rnn.py").read_text()
    published = await wait_traced(client, uri, open_doc(client, uri, text), 1)
    error = types.DiagnosticSeverity.Error
    assert traced(published) == [(11, error, [14]), (14, error, [11])]  # rnn(...) saved, opt.step() wrote
    assert any(d.source == "gradguard" and d.code == "GG402" for d in published.diagnostics)
    # The trace ran with --lang zh; this editor is English: English only, no mixed languages.
    for d in published.diagnostics:
        if d.source == "gradguard-trace":
            assert not CJK.search(d.message), d.message
            assert "opt.step()" not in d.message or "rnn.py:14" in d.message
            assert not CJK.search(d.related_information[0].message)
    # Editing the write line drops its runtime mark (the run no longer describes it); the save mark stays.
    edited = text.replace("    opt.step()", "    opt.step()  # moved below?")
    published = await wait_publish(client, uri, change_doc(client, uri, edited, 2), version=2)
    assert traced(published) == [(11, error, [14])]


# ---------------------------------------------------------------------------------------------
# Rendering and reading, without a server


def real_marks(lang="en"):
    return read_trace_file(WORKDIR / ".gradguard" / "trace.json", lang)


def rendered(marks, lang):
    results = TraceResults()
    results.marks = {os.path.normpath(m.path): [m] for m in marks}
    path = marks[0].path
    lines = Path(path).read_text().split("\n")
    return [d.message for m in marks for d in results.diagnostics(m.path, lines, lambda text, col: col, lang)]


def test_chinese_rendering_has_no_english_sentence_fragment():
    marks = real_marks()
    assert len(marks) == 2  # the malformed and the outside-the-workspace entries are skipped
    for message in rendered(marks, "zh"):
        assert CJK.search(message)
        prose = re.sub(r"`[^`]*`|[\w./]+\.py:\d+|\w+Backward\d|\[[\d, ]*\]|float32|torch\.\w+(\.\w+)*|\w+_\b|"
                       r"\(in-place 操作\)|（[^（）]*[A-Za-z][^（）]*）", "", message)
        assert not re.search(r"[A-Za-z]{3,}(?:\s+[A-Za-z]{2,}){2,}", prose), message


def test_english_rendering_of_a_chinese_run_is_english():
    for message in rendered(real_marks(), "en"):
        assert not CJK.search(message) and "modified" in message


def test_an_old_trace_json_without_i18n_never_mixes_languages(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("y = f(x)\ny.add_(1)\n")
    (tmp_path / ".gradguard").mkdir()
    (tmp_path / ".gradguard" / "trace.json").write_text(json.dumps({"version": 1, "findings": [{
        "kind": "stale-save", "message": "在 p.py:1 为 ExpBackward0 保存的张量被原地修改",
        "save": {"file": str(program), "line": 1, "node": "ExpBackward0"},
        "write": {"file": str(program), "line": 2, "op": "add_"}}]}))
    marks = read_trace_file(tmp_path / ".gradguard" / "trace.json")
    english = rendered(marks, "en")
    assert english and all(not CJK.search(m) for m in english)  # only the English head
    assert all("在 p.py:1" in m for m in rendered(marks, "zh"))


def write_trace(root: Path, findings) -> Path:
    (root / ".gradguard").mkdir(exist_ok=True)
    path = root / ".gradguard" / "trace.json"
    path.write_text(json.dumps({"version": 1, "findings": findings}))
    return path


def finding(file, save=1, write=2):
    return {"kind": "stale-save", "severity": "error", "message": "m",
            "save": {"file": str(file), "line": save, "node": "ExpBackward0"},
            "write": {"file": str(file), "line": write, "op": "add_"}}


@pytest.fixture
def workspace(tmp_path):
    program = tmp_path / "train.py"
    program.write_text("y = x.exp()\ny.add_(1)\ny.sum().backward()\n")
    return tmp_path, program


@pytest.mark.timeout(20)
def test_devices_fifos_and_symlinks_out_are_never_read(workspace):
    root, program = workspace
    os.symlink("/dev/zero", root / "zero.py")
    os.symlink("/proc/self/fd/0", root / "stdin.py")
    os.mkfifo(root / "fifo.py")
    outside = root.parent / f"{root.name}-outside.py"
    outside.write_text("y = x.exp()\ny.add_(1)\n")
    os.symlink(outside, root / "out.py")
    hostile = ["/proc/self/fd/0", "/dev/zero", str(root / "zero.py"), str(root / "stdin.py"), str(root / "fifo.py"),
               str(outside), str(root / "out.py"), "../" + outside.name, str(root)]
    trace = write_trace(root, [finding(path) for path in hostile] + [finding(program)])
    marks = read_trace_file(trace)
    assert sorted((Path(m.path).name, m.line) for m in marks) == [("train.py", 0), ("train.py", 1)]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/fd/0", "fifo", "outside"])
def test_a_trace_json_that_is_not_a_regular_file_inside_the_workspace_gives_nothing(workspace, target):
    root, program = workspace
    (root / ".gradguard").mkdir()
    trace = root / ".gradguard" / "trace.json"
    if target == "fifo":
        os.mkfifo(trace)
    elif target == "outside":
        elsewhere = root.parent / f"{root.name}-trace.json"
        elsewhere.write_text(json.dumps({"version": 1, "findings": [finding(program)]}))
        os.symlink(elsewhere, trace)
    else:
        os.symlink(target, trace)
    assert read_trace_file(trace) == []


def test_an_oversized_trace_json_is_not_read(workspace, monkeypatch):
    root, program = workspace
    trace = write_trace(root, [finding(program)])
    monkeypatch.setattr(trace_results, "MAX_TRACE_BYTES", trace.stat().st_size - 1)
    assert read_trace_file(trace) == []


def test_each_entry_is_validated_on_its_own(workspace):
    root, program = workspace
    bad = [None, 3, "x", [], {"kind": "nonsense"}, {"kind": "stale-save", "save": "train.py"},
           {"kind": "stale-save", "save": {"file": str(program), "line": True}},
           {"kind": "stale-save", "save": {"file": str(program), "line": -4}},
           {"kind": "stale-save", "save": {"file": str(program), "line": 10**12}},
           {"kind": "stale-save", "save": {"file": "a\x00b", "line": 1}},
           {"kind": "stale-save", "save": {"file": str(program), "line": 99}},  # past the end of the file
           {"kind": "stale-save", "save": {"file": str(program), "line": 1, "node": {"x": 1}}, "i18n": 5}]
    marks = read_trace_file(write_trace(root, bad + [finding(program)]))
    assert sorted(m.line for m in marks) == [0, 0, 1]  # the good entry, and the last bad one's valid save line


def test_duplicates_are_dropped_and_the_count_is_capped(workspace):
    root, program = workspace
    lines = [f"y{i} = x.exp()" for i in range(2000)]
    program.write_text("\n".join(lines) + "\n")
    duplicates = [finding(program)] * 20_000
    assert len(read_trace_file(write_trace(root, duplicates))) == 2
    distinct = [finding(program, save=i, write=i + 1) for i in range(1, 1500)]
    marks = read_trace_file(write_trace(root, distinct))
    assert len(marks) <= trace_results.MAX_MARKS_PER_FILE


def test_paths_outside_the_workspace_get_nothing(workspace, tmp_path_factory):
    root, program = workspace
    other = tmp_path_factory.mktemp("other") / "train.py"
    other.write_text(program.read_text())
    assert read_trace_file(write_trace(root, [finding(other)])) == []
    # A relative path is taken from the workspace folder and must stay inside it.
    assert [m.line for m in read_trace_file(write_trace(root, [finding("train.py")]))] == [0, 1]
    assert read_trace_file(write_trace(root, [finding("../" + other.parent.name + "/train.py")])) == []


def test_reload_in_background_reads_off_the_calling_thread_and_reports_when_done(workspace):
    root, program = workspace
    write_trace(root, [finding(program)])
    results = TraceResults()
    done = threading.Event()
    readers = []
    original = results._read

    def spy(roots):
        readers.append(threading.current_thread())
        return original(roots)

    results._read = spy
    thread = results.reload_in_background([str(root)], "zh", done.set)
    assert done.wait(20)
    thread.join(5)
    assert readers and readers[0] is not threading.main_thread()
    assert sum(len(v) for v in results.marks.values()) == 2 and results.lang == "zh"


def test_torch_errors_and_backward_twice_mark_their_lines_in_the_servers_language(workspace):
    root, program = workspace
    program.write_text("w = leaf()\nw.add_(1)\nfor i in range(3):\n    h = cell(h)\n    h.sum().backward()\n")
    findings = [
        {"kind": "torch-error", "severity": "error", "error": "leaf-inplace",
         "raised": {"file": str(program), "line": 2, "op": "add_"}, "write": {"file": str(program), "line": 2, "op": "add_"},
         "i18n": {"en": {"message": "in-place write on a leaf at train.py:2"}, "zh": {"message": "train.py:2：叶子张量"}}},
        {"kind": "backward-twice", "severity": "error", "save": {"file": str(program), "line": 4, "node": "X"},
         "backward": {"file": str(program), "line": 5, "call": 2}, "carry": {"file": str(program), "line": 4, "code": "h = cell(h)"},
         "i18n": {"en": {"message": "backward() at train.py:5 (call #2) went through a freed graph"},
                  "zh": {"message": "train.py:5 的 backward()（第 2 次调用）经过了已释放的计算图"}}},
    ]
    marks = read_trace_file(write_trace(root, findings))
    assert sorted(m.line + 1 for m in marks) == [2, 4, 5]
    results = TraceResults()
    results.marks = {os.path.normpath(program): marks}
    lines = program.read_text().split("\n")
    en = {d.range.start.line + 1: d.message for d in results.diagnostics(str(program), lines, lambda t, c: c, "en")}
    zh = {d.range.start.line + 1: d.message for d in results.diagnostics(str(program), lines, lambda t, c: c, "zh")}
    assert en[2].startswith("at runtime: torch raised here: in-place write on a leaf tensor that requires grad")
    assert "without .detach()" in en[4] and "earlier backward() freed" in en[5]
    assert not any(CJK.search(m) for m in en.values())
    assert zh[2].startswith("运行时：torch 在这里报错：对需要梯度的叶子张量") and all(CJK.search(m) for m in zh.values())
