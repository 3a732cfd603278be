"""The server shows `gradguard trace` results (.gradguard/trace.json) on the save and write lines.

The trace file is produced by really running the RNN program under `gradguard trace` (torch, CPU).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import change_doc, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORKDIR = Path(__file__).parent / "lsp_fixtures" / "trace_workspace"
pytestmark = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)


def setup_module():
    WORKDIR.mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / "rnn_retain_graph.py", WORKDIR / "rnn.py")
    run = subprocess.run([sys.executable, "-m", "gradguard", "trace", "rnn.py"], cwd=WORKDIR, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 1 and (WORKDIR / ".gradguard" / "trace.json").is_file(), run.stderr


def teardown_module():
    shutil.rmtree(WORKDIR, ignore_errors=True)


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params(root=WORKDIR))
    yield
    await lsp_client.shutdown_session()


def traced(params):
    return sorted((d.range.start.line + 1, d.severity, [r.location.range.start.line + 1 for r in d.related_information or []])
                  for d in params.diagnostics if d.source == "gradguard-trace")


async def test_trace_findings_mark_the_save_and_the_write_linked_to_each_other(client: LanguageClient):
    uri = (WORKDIR / "rnn.py").as_uri()
    text = (WORKDIR / "rnn.py").read_text()
    published = await wait_publish(client, uri, open_doc(client, uri, text), version=1)
    error = types.DiagnosticSeverity.Error
    assert traced(published) == [(11, error, [14]), (14, error, [11])]  # rnn(...) saved, opt.step() wrote
    assert any(d.source == "gradguard" and d.code == "GG402" for d in published.diagnostics)
    # Editing the write line drops its runtime mark (the run no longer describes it); the save mark stays.
    edited = text.replace("    opt.step()", "    opt.step()  # moved below?")
    published = await wait_publish(client, uri, change_doc(client, uri, edited, 2), version=2)
    assert traced(published) == [(11, error, [14])]
