"""The language server end to end: the real `gradguard` server process over stdio,
driven by pytest-lsp. Nothing of ours is mocked.

Most tests share one server (module scope; each uses its own document URIs);
tests that change server-wide state (locale, settings, encoding) start their own.
"""
from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures import programs as P  # noqa: E402
from lsp_fixtures.harness import (  # noqa: E402
    WORKSPACE,
    apply_edits,
    change_doc,
    close,
    edits_for,
    fresh_uri,
    init_params,
    make_client,
    open_doc,
    server_command,
    wait_publish,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params())
    yield
    await lsp_client.shutdown_session()


def codes_lines(params: types.PublishDiagnosticsParams) -> list[tuple[str, int]]:
    """(code, 1-based line) of each gradguard finding (parse-note hints have no code)."""
    return [(d.code, d.range.start.line + 1) for d in params.diagnostics if d.code]


async def open_and_wait(client, text: str, name: str = "doc") -> tuple[str, types.PublishDiagnosticsParams]:
    uri = fresh_uri(name)
    mark = open_doc(client, uri, text)
    return uri, await wait_publish(client, uri, mark, version=1)


async def hover_text(client, uri: str, line: int, character: int) -> str:
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )
    assert result is not None, f"no hover at {line}:{character}"
    return result.contents.value


async def code_actions(client, uri: str, diagnostics, only=None) -> list[types.CodeAction]:
    rng = diagnostics[0].range if diagnostics else types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
    )


# ---- diagnostics ---------------------------------------------------------------------------


async def test_open_change_close(client: LanguageClient):
    uri, published = await open_and_wait(client, P.LEAF_INPLACE)
    assert codes_lines(published) == [("GG101", 3)]
    (diag,) = published.diagnostics
    assert diag.source == "gradguard"
    assert diag.severity == types.DiagnosticSeverity.Error
    # The range covers `w += 1`, not a point.
    assert (diag.range.start.line, diag.range.start.character, diag.range.end.character) == (2, 0, 6)
    # Related information points at where `w` was created (line 2).
    assert [r.location.range.start.line for r in diag.related_information] == [1]
    assert diag.data["code"] == "GG101" and diag.data["version"] == 1

    fixed = P.LEAF_INPLACE.replace("w += 1", "w = w + 1")
    mark = change_doc(client, uri, fixed, 2)
    assert list((await wait_publish(client, uri, mark, version=2)).diagnostics) == []

    mark = len(client.published)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    assert list((await wait_publish(client, uri, mark)).diagnostics) == []


async def test_index_write_in_loop_program(client: LanguageClient):
    _, published = await open_and_wait(client, P.INDEX_WRITE_LOOP)
    assert ("GG301", 6) in codes_lines(published)


async def test_rnn_optimizer_step_and_carried_state(client: LanguageClient):
    _, published = await open_and_wait(client, P.RNN_CARRIED_STATE)
    gg4 = [(code, line) for code, line in codes_lines(published) if code.startswith("GG4")]
    assert gg4, codes_lines(published)
    assert {line for _, line in gg4} <= {10, 11, 12}


async def test_burst_of_changes_publishes_once_for_the_last_version(client: LanguageClient):
    uri, _ = await open_and_wait(client, P.LEAF_INPLACE)
    mark = len(client.published)
    text = P.LEAF_INPLACE
    for version in range(2, 22):  # 20 changes, 5 ms apart: well inside the 150 ms debounce
        text = text.replace("loss = w.sum()", f"loss = w.sum() * {version}") if version == 2 else text.replace(
            f"* {version - 1}", f"* {version}"
        )
        change_doc(client, uri, text, version)
        await asyncio.sleep(0.005)
    last = await wait_publish(client, uri, mark, version=21)
    await asyncio.sleep(0.4)  # room for any stray late publish
    after = [p for _, p in client.published[mark:] if p.uri == uri]
    assert [p.version for p in after] == [21]
    assert codes_lines(last) == [("GG101", 3)]


async def test_utf8_position_status_notification_reports_each_analysis(client: LanguageClient):
    uri, _ = await open_and_wait(client, P.LEAF_INPLACE)
    for _ in range(100):
        if any(s.get("uri") == uri for s in client.statuses):
            break
        await asyncio.sleep(0.01)
    status = [s for s in client.statuses if s.get("uri") == uri][-1]
    assert status["state"] == "ok" and status["findings"] == 1 and status["analysedMs"] >= 0


async def test_syntax_error_in_one_function_keeps_the_other_functions_finding(client: LanguageClient):
    _, published = await open_and_wait(client, P.SYNTAX_ERROR_ELSEWHERE)
    assert codes_lines(published) == [("GG101", 6)]
    notes = [d for d in published.diagnostics if not d.code]
    assert len(notes) == 1 and notes[0].severity == types.DiagnosticSeverity.Hint
    assert notes[0].range.start.line in (9, 10)  # inside the broken `def` (0-based)


async def test_syntax_error_typed_mid_edit_keeps_findings_of_blocks_that_parse(client: LanguageClient):
    text = P.SYNTAX_ERROR_ELSEWHERE.replace("def broken(:", "def broken():")
    uri, published = await open_and_wait(client, text)
    assert codes_lines(published) == [("GG101", 6)]
    mark = change_doc(client, uri, text.replace("return 1", "return (1"), 2)
    assert codes_lines(await wait_publish(client, uri, mark, version=2)) == [("GG101", 6)]


# ---- code actions --------------------------------------------------------------------------


async def test_quick_fix_round_trip(client: LanguageClient):
    uri, published = await open_and_wait(client, P.LEAF_INPLACE)
    actions = await code_actions(client, uri, published.diagnostics, only=[types.CodeActionKind.QuickFix])
    fix = next(a for a in actions if a.edit and "noqa" not in json.dumps(client.protocol._converter.unstructure(a.edit)))
    # GG101 on a plain leaf is an unsafe fix: not preferred, and its title says what changes.
    assert fix.title.startswith("gradguard (GG101, unsafe): Rewrite as `w = w + 1`")
    assert "non-leaf" in fix.title and not fix.is_preferred
    edits, version = edits_for(fix.edit, uri)
    assert version == 1
    new_text = apply_edits(P.LEAF_INPLACE, edits)
    assert "w = w + 1\n" in new_text
    mark = change_doc(client, uri, new_text, 2)
    assert codes_lines(await wait_publish(client, uri, mark, version=2)) == []


async def test_safe_fix_is_preferred(client: LanguageClient):
    uri, published = await open_and_wait(client, P.SAFE_FIXES)
    actions = await code_actions(client, uri, published.diagnostics[:1], only=[types.CodeActionKind.QuickFix])
    fix = next(a for a in actions if a.is_preferred)
    assert fix.title == "gradguard (GG101): Do the adjacent updates under one `torch.no_grad()`"


async def test_disable_for_this_line_adds_or_extends_noqa(client: LanguageClient):
    uri, published = await open_and_wait(client, P.LEAF_INPLACE)
    actions = await code_actions(client, uri, published.diagnostics)
    disable = next(a for a in actions if a.title == "gradguard (GG101): Disable GG101 for this line")
    edits, version = edits_for(disable.edit, uri)
    assert version == 1
    new_text = apply_edits(P.LEAF_INPLACE, edits)
    assert "w += 1  # noqa: GG101\n" in new_text
    mark = change_doc(client, uri, new_text, 2)
    assert codes_lines(await wait_publish(client, uri, mark, version=2)) == []

    # An existing noqa list is extended, and a trailing comment is kept after it.
    for line, expected in [
        ("w += 1  # noqa: GG999", "w += 1  # noqa: GG999, GG101"),
        ("w += 1  # gradguard: ignore[GG999]", "w += 1  # gradguard: ignore[GG999, GG101]"),
        ("w += 1  # bump it", "w += 1  # noqa: GG101  # bump it"),
    ]:
        uri2, published2 = await open_and_wait(client, P.LEAF_INPLACE.replace("w += 1", line))
        actions = await code_actions(client, uri2, published2.diagnostics)
        disable = next(a for a in actions if "Disable GG101" in a.title)
        assert apply_edits(P.LEAF_INPLACE.replace("w += 1", line), edits_for(disable.edit, uri2)[0]).split("\n")[2] == expected


async def test_fix_all_is_resolved_lazily_and_applies_the_safe_fixes(client: LanguageClient):
    uri, published = await open_and_wait(client, P.SAFE_FIXES)
    assert codes_lines(published) == [("GG101", 6), ("GG101", 7)]
    (action,) = await code_actions(client, uri, [], only=["source.fixAll.gradguard"])
    assert action.kind == "source.fixAll.gradguard" and action.edit is None
    resolved = await client.code_action_resolve_async(action)
    edits, version = edits_for(resolved.edit, uri)
    assert version == 1 and len(edits) == 1  # the two adjacent updates share one block
    new_text = apply_edits(P.SAFE_FIXES, edits)
    assert "with torch.no_grad():\n    w -= 0.1 * w.grad\n    b -= 0.1 * b.grad\n" in new_text
    mark = change_doc(client, uri, new_text, 2)
    assert codes_lines(await wait_publish(client, uri, mark, version=2)) == []


async def test_fix_all_command_sends_a_versioned_workspace_edit(client: LanguageClient):
    uri, _ = await open_and_wait(client, P.SAFE_FIXES)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradguard.applyFixAll", arguments=[uri])
    )
    assert result == {"applied": True, "edits": 1}
    edits, version = edits_for(client.applied_edits[-1], uri)
    assert version == 1 and len(edits) == 1


ONE_SAFE_ONE_UNSAFE = """import torch
import torch.nn.functional as F
w = torch.ones(4, requires_grad=True)
h = torch.tanh(w * 2)
y = F.relu(h, inplace=True)
(y.sum() + h.sum()).backward()
w -= 0.1 * w.grad
"""


async def test_fix_all_takes_safe_fixes_only_and_fix_all_unsafe_takes_both(client: LanguageClient):
    """`h` is read after `F.relu(h, inplace=True)`: `inplace=False` changes what it reads, so only the explicit
    unsafe command applies it."""
    uri, _ = await open_and_wait(client, ONE_SAFE_ONE_UNSAFE)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradguard.applyFixAll", arguments=[uri]))
    assert result == {"applied": True, "edits": 1}
    (safe,), _ = edits_for(client.applied_edits[-1], uri)
    assert safe.new_text == "with torch.no_grad():\n    w -= 0.1 * w.grad"
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradguard.applyFixAllUnsafe", arguments=[uri]))
    assert result == {"applied": True, "edits": 2}
    edits, _ = edits_for(client.applied_edits[-1], uri)
    assert sorted(e.new_text for e in edits) == ["False", "with torch.no_grad():\n    w -= 0.1 * w.grad"]


async def test_rule_docs_command(client: LanguageClient):
    docs = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradguard.ruleDocs", arguments=["GG101"])
    )
    assert docs.startswith("# GG101 (leaf-inplace)") and "## What it does" in docs


# ---- hover ---------------------------------------------------------------------------------


async def test_hover_on_a_diagnostic_explains_runtime_error_timeline_and_fix(client: LanguageClient):
    uri, _ = await open_and_wait(client, P.LEAF_INPLACE)
    text = await hover_text(client, uri, 2, 3)
    assert "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation." in text
    assert "`w` is a leaf created on line 2" in text and "Line 3 writes it in place" in text
    assert "**Fix** (unsafe): Rewrite as `w = w + 1`" in text


async def test_hover_on_autograd_apis(client: LanguageClient):
    uri, _ = await open_and_wait(client, P.HOVER_TOPICS)
    lines = P.HOVER_TOPICS.split("\n")

    async def at(line: int, needle: str) -> str:
        return await hover_text(client, uri, line, lines[line].index(needle) + 1)

    detach = await at(3, "detach")
    assert "shares `t`'s storage" in detach and "version counter" in detach and "`requires_grad=False`" in detach
    clone = await at(4, "clone")
    assert "new storage with its own version counter, starting at 0" in clone and "CloneBackward0" in clone
    data = await at(5, "data")
    assert "NOT its version counter" in data and "silently wrong gradient" in data
    inplace = await at(6, "add_")
    assert "**`.add_()`**" in inplace and "bumps its version counter" in inplace
    assert "Only leaves that require grad get `.grad` filled" in await at(7, "is_leaf")
    assert "MulBackward0" in await at(7, "grad_fn")
    assert "every in-place write" in await at(7, "_version")
    assert "ops are not recorded" in await at(8, "no_grad")
    assert "Error detected in" in await at(10, "set_detect_anomaly")
    assert "Trying to backward through the graph a second time" in await at(11, "retain_graph")


async def test_hover_on_a_tensor_name_shows_its_facts(client: LanguageClient):
    uri, _ = await open_and_wait(client, P.LEAF_INPLACE)
    text = await hover_text(client, uri, 3, 7)  # `w` in `loss = w.sum()`
    assert "**`w`**" in text and "leaf" in text and "requires_grad=True" in text
    assert "created on line 2" in text
    assert "line 3: `+=` would write it in place, but torch raises at this line instead (the version stays 0)" in text


async def test_hover_on_saved_detached_and_written_tensors(client: LanguageClient):
    # Saved tensors carry (op, span, version) triples: hovering them once failed with an internal error.
    uri, _ = await open_and_wait(client, P.HOVER_TOPICS)
    y = await hover_text(client, uri, 2, 0)  # `y = w.exp()`: saved by exp, written by add_ on line 7
    assert "**`y`**" in y
    # The version timeline: the save (op, line, version), the write (line, version after), the backward.
    assert "- line 3: `exp` saves it (its output) for backward at version 0\n" in y
    assert "- line 7: `add_()` writes it in place → version 1\n" in y
    assert ("- line 12: `backward()` reads what `exp` saved and expects version 0, but line 7 already made it 1: "
            "it raises") in y
    d = await hover_text(client, uri, 3, 0)  # `d = y.detach()` shares y's counter
    assert "**`d`**" in d and "- line 3: `exp` saves it (its output) for backward at version 0" in d
    assert "`d` is `y.detach()`: same storage and the same version counter as `y`" in d
    e = await hover_text(client, uri, 5, 0)  # `e = y.data`: same storage, its own counter
    assert "`e` is `y.data`: same storage but its own version counter" in e
    assert "- line 3: `exp` saves `y` (the same storage) for backward at version 0 of `y`'s counter" in e


async def test_hover_on_a_noqa_code_shows_the_rule_docs(client: LanguageClient):
    text = P.LEAF_INPLACE.replace("loss = w.sum()", "loss = w.sum()  # noqa: GG201, GG101")
    uri, _ = await open_and_wait(client, text)
    line = text.split("\n")[3]
    docs = await hover_text(client, uri, 3, line.index("GG101") + 2)
    assert docs.startswith("# GG101 (leaf-inplace)")


async def test_jedi_hover_resolves_a_class_from_another_workspace_module(client: LanguageClient):
    uri = (WORKSPACE / "train.py").as_uri()
    text = (WORKSPACE / "train.py").read_text()
    mark = open_doc(client, uri, text)
    await wait_publish(client, uri, mark)
    line = text.split("\n")[3]  # net = Net()
    found = ""
    for _ in range(120):  # the first call starts jedi; later hovers are answered from its cache
        result = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri), position=types.Position(3, line.index("Net") + 1))
        )
        if result is not None and "jedi" in result.contents.value:
            found = result.contents.value
            break
        await asyncio.sleep(0.25)
    assert "`model.Net`" in found and "`model.py` line 5" in found
    assert "line 9 uses an in-place operation: `self.act = nn.ReLU(inplace=True)`" in found


# ---- notebooks -----------------------------------------------------------------------------


async def test_notebook_bug_split_across_two_cells(client: LanguageClient):
    nb = (WORKSPACE / "_split.ipynb").as_uri()
    cells = [
        ("import torch\nw = torch.rand(4, requires_grad=True)\n", f"{nb}#C0"),
        ("%matplotlib inline\n!echo hi\nw += 1\n", f"{nb}#C1"),
        ("%%bash\necho not python\n", f"{nb}#C2"),
    ]
    mark = len(client.published)
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for _, u in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=u, language_id="python", version=1, text=t) for t, u in cells
            ],
        )
    )
    first = await wait_publish(client, cells[0][1], mark)
    second = await wait_publish(client, cells[1][1], mark)
    third = await wait_publish(client, cells[2][1], mark)
    assert list(first.diagnostics) == [] and list(third.diagnostics) == []
    assert codes_lines(second) == [("GG101", 3)]  # line 3 of cell 2
    (diag,) = second.diagnostics
    assert diag.related_information[0].location.uri == cells[0][1]  # created in cell 1
    assert "(created on line 2 of cell 1)" in diag.message, diag.message  # as the CLI says it, not the joined line

    hover = await hover_text(client, cells[1][1], 2, 0)
    assert "created on line 2 of cell 1" in hover, hover

    # Removing the bug from cell 2 clears it; closing the notebook clears every cell.
    mark = len(client.published)
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cells[1][1], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text="%matplotlib inline\nw = w + 1\n")],
                        )
                    ]
                )
            ),
        )
    )
    assert list((await wait_publish(client, cells[1][1], mark, version=2)).diagnostics) == []


# ---- server-wide state: each of these starts its own server ---------------------------------


@pytest.mark.parametrize(
    "encoding,start,end",
    # `note = "梯度😋"; w += 1`: `w` is code point 14; before it 梯度 are 1 UTF-16 unit / 3 UTF-8
    # bytes each, and 😋 is 2 UTF-16 units / 4 UTF-8 bytes.
    [("utf-16", 15, 21), ("utf-8", 21, 27), ("utf-32", 14, 20)],
)
async def test_columns_after_chinese_and_emoji(encoding: str, start: int, end: int):
    client = make_client()
    await client.start_io(*server_command())
    try:
        result = await client.initialize_session(init_params(position_encodings=[encoding]))
        assert result.capabilities.position_encoding == encoding
        uri = fresh_uri("unicode")
        mark = open_doc(client, uri, P.UNICODE_LINE)
        published = await wait_publish(client, uri, mark)
        (diag,) = [d for d in published.diagnostics if d.code == "GG101"]
        assert (diag.range.start.line, diag.range.start.character, diag.range.end.character) == (3, start, end)
        # Hover at the client column of `w` finds the finding there.
        assert "a leaf Variable" in await hover_text(client, uri, 3, start)
    finally:
        await close(client)


async def test_chinese_hovers_by_client_locale():
    client = make_client()
    await client.start_io(*server_command())
    try:
        await client.initialize_session(init_params(locale="zh-CN"))
        uri, published = await open_and_wait(client, P.LEAF_INPLACE)
        assert "叶子张量" in published.diagnostics[0].message
        text = await hover_text(client, uri, 2, 3)
        assert "**运行时** torch 会报错：" in text
        assert "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation." in text
        assert "**不安全修复**：" in text and "快速修复（" not in text
        uri2, _ = await open_and_wait(client, P.HOVER_TOPICS)
        data = await hover_text(client, uri2, 5, P.HOVER_TOPICS.split("\n")[5].index("data") + 1)
        assert "不共享版本计数器（`_version`）" in data and "悄悄算出错误的梯度" in data
        docs = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="gradguard.ruleDocs", arguments=["GG101"])
        )
        assert "## 它检查什么" in docs
    finally:
        await close(client)


async def test_config_reload_settings_override_and_size_limit(tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.gradguard]\nignore = ["GG101"]\n')
    client = make_client()
    await client.start_io(*server_command())
    try:
        await client.initialize_session(init_params(root=project))
        assert any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations) or True
        uri = (project / "train.py").as_uri()
        mark = open_doc(client, uri, P.LEAF_INPLACE)
        assert codes_lines(await wait_publish(client, uri, mark)) == []

        # pyproject.toml changes -> the server reloads it and re-analyses open documents.
        pyproject.write_text("[tool.gradguard]\n")
        mark = len(client.published)
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
        assert codes_lines(await wait_publish(client, uri, mark)) == [("GG101", 3)]

        # Client settings override the file: a severity map, then `enable: false`.
        mark = len(client.published)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"gradguard": {"severity": {"GG1": "hint"}}})
        )
        (diag,) = (await wait_publish(client, uri, mark)).diagnostics
        assert diag.severity == types.DiagnosticSeverity.Hint

        mark = len(client.published)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"gradguard": {"ignore": ["GG1"]}})
        )
        assert codes_lines(await wait_publish(client, uri, mark)) == []

        mark = len(client.published)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"gradguard": {"ignore": [], "maxFileBytes": 50}})
        )
        assert codes_lines(await wait_publish(client, uri, mark)) == []
        for _ in range(100):
            if client.messages:
                break
            await asyncio.sleep(0.01)
        assert "larger than maxFileBytes" in client.messages[-1].message
    finally:
        await close(client)
        shutil.rmtree(project, ignore_errors=True)


async def test_library_files_are_not_analysed(client: LanguageClient):
    uri = (WORKSPACE / "venv" / "lib" / "site-packages" / "somelib" / "core.py").as_uri()
    mark = open_doc(client, uri, P.LEAF_INPLACE)
    assert list((await wait_publish(client, uri, mark)).diagnostics) == []


async def test_per_folder_settings_and_a_broken_config(tmp_path: Path):
    strict, relaxed, broken = (tmp_path / n for n in ("strict", "relaxed", "broken"))
    for folder in (strict, relaxed, broken):
        folder.mkdir()
    (broken / "pyproject.toml").write_text('[tool.gradguard]\nselect = "everything"\n')
    client = make_client()
    await client.start_io(*server_command())
    try:
        params = init_params(
            root=tmp_path,
            settings=[{"workspace": relaxed.as_uri(), "severity": {"GG101": "warning"}}],
        )
        params.workspace_folders = [
            types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (strict, relaxed, broken)
        ]
        await client.initialize_session(params)
        severities = {}
        for folder in (strict, relaxed, broken):
            uri = (folder / "train.py").as_uri()
            mark = open_doc(client, uri, P.LEAF_INPLACE)
            published = await wait_publish(client, uri, mark)
            severities[folder.name] = [(d.code, d.severity) for d in published.diagnostics]
        assert severities["strict"] == [("GG101", types.DiagnosticSeverity.Error)]
        assert severities["relaxed"] == [("GG101", types.DiagnosticSeverity.Warning)]
        # A broken [tool.gradguard] is reported once and the defaults are used meanwhile.
        assert severities["broken"] == [("GG101", types.DiagnosticSeverity.Error)]
        for _ in range(100):
            if client.messages:
                break
            await asyncio.sleep(0.01)
        assert [m.type for m in client.messages] == [types.MessageType.Error]
        assert "select" in client.messages[0].message and "pyproject.toml" in client.messages[0].message
    finally:
        await close(client)


def test_untrusted_workspace_turns_jedi_off():
    from gradguard.lsp.settings import Settings

    assert Settings().updated({"workspaceTrusted": True}).jedi_enable is True
    untrusted = Settings().updated({"workspaceTrusted": False, "jedi": {"enable": True}})
    assert untrusted.jedi_enable is False
