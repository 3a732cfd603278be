"""Trace results that find the editor (issue 32): `cd simclr && gradguard trace train.py` writes
`simclr/.gradguard/trace.json`, and the editor, whose workspace is the repository, shows its marks; the
`.gradguard/` folder ignores itself, so `git status` does not list it. The trace really runs under torch."""
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
from lsp_fixtures.harness import init_params, make_client, open_doc, server_command  # noqa: E402
from test_lsp_trace import traced, wait_traced  # noqa: E402

from gradguard.lsp.trace_results import TraceResults  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REPO = Path(__file__).parent / "lsp_fixtures" / "trace_subfolder_repo"
SUB = REPO / "simclr"
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)


def setup_module():
    shutil.rmtree(REPO, ignore_errors=True)
    SUB.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "rnn_retain_graph.py", SUB / "rnn.py")
    subprocess.run(["git", "init", "-q"], cwd=REPO, check=True, timeout=60)
    run = subprocess.run([sys.executable, "-m", "gradguard", "trace", "rnn.py"], cwd=SUB, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 1 and (SUB / ".gradguard" / "trace.json").is_file(), run.stderr


def teardown_module():
    shutil.rmtree(REPO, ignore_errors=True)


def test_the_trace_folder_ignores_itself():
    assert (SUB / ".gradguard" / ".gitignore").read_text() == "# Created by gradguard: the last `gradguard trace` run.\n*\n"
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                            text=True, timeout=60, check=True)
    assert status.stdout == "?? simclr/rnn.py\n"


def test_the_results_of_a_trace_run_in_a_subfolder_are_read_for_the_workspace():
    results = TraceResults()
    results.reload([str(REPO)])
    assert sorted(m.line + 1 for m in results.marks[str((SUB / "rnn.py").resolve())]) == [11, 14]


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params(root=REPO))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_editor_shows_the_marks_of_a_trace_run_in_a_subfolder(client: LanguageClient):
    uri = (SUB / "rnn.py").as_uri()
    published = await wait_traced(client, uri, open_doc(client, uri, (SUB / "rnn.py").read_text()), 1)
    error = types.DiagnosticSeverity.Error
    assert traced(published) == [(11, error, [14]), (14, error, [11])]
