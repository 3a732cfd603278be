"""pytest-lsp plumbing shared by the language-server tests and the benchmark.

The client records every publishDiagnostics (with its version) and every
gradguard/status notification, answers workspace/applyEdit and
client/registerCapability, and offers small waiting helpers. No part of the
server is mocked: it runs as `python -m gradguard server` over stdio.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

HERE = Path(__file__).parent
REPO = HERE.parent.parent
WORKSPACE = HERE / "workspace"


def server_command() -> list[str]:
    """How editors start the server: `python -m gradguard server` (stdio)."""
    return [sys.executable, "-m", "gradguard", "server"]


def _publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append((time.perf_counter(), params))


def _status(client: LanguageClient, params):
    fields = ("state", "analysedMs", "uri", "findings")
    client.statuses.append({k: getattr(params, k, None) for k in fields})


def _apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams):
    client.applied_edits.append(params.edit)
    return types.ApplyWorkspaceEditResult(applied=True)


def _register(client: LanguageClient, params):
    client.registrations.extend(params.registrations)
    return None


def make_client(converter_factory=None) -> LanguageClient:
    from pygls.protocol import default_converter

    client = LanguageClient(converter_factory=converter_factory or default_converter)
    client.published = []
    client.statuses = []
    client.applied_edits = []
    client.registrations = []
    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _publish,
            "gradguard/status": _status,
            types.WORKSPACE_APPLY_EDIT: _apply_edit,
            types.CLIENT_REGISTER_CAPABILITY: _register,
        },
    )
    return client


def capabilities(position_encodings: list[str] | None = None) -> types.ClientCapabilities:
    """A modern VS Code-like client: versioned edits, lazy code-action resolve, notebooks."""
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=position_encodings)
        if position_encodings
        else None,
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            configuration=True,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            workspace_folders=True,
        ),
        text_document=types.TextDocumentClientCapabilities(
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(value_set=["quickfix", "source"])
                ),
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]),
                is_preferred_support=True,
            ),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True, code_description_support=True, data_support=True
            ),
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()
        ),
    )


def init_params(
    *,
    locale: str | None = None,
    settings: dict | list | None = None,
    position_encodings: list[str] | None = None,
    root: Path = WORKSPACE,
) -> types.InitializeParams:
    base = {"jedi": {"warmup": []}}  # tests never pay torch's 40 s cold jedi start
    if isinstance(settings, dict):
        base.update(settings)
    options = {"settings": settings if isinstance(settings, list) else base}
    if isinstance(settings, list):
        options["globalSettings"] = {"jedi": {"warmup": []}}
    return types.InitializeParams(
        capabilities=capabilities(position_encodings),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        locale=locale,
        initialization_options=options,
    )


_counter = iter(range(10**6))


def fresh_uri(name: str = "doc", folder: Path = WORKSPACE) -> str:
    """A URI no other test uses (the module's server is shared); the file need not exist."""
    return (folder / f"_{name}_{next(_counter)}_{os.getpid()}.py").as_uri()


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> int:
    mark = len(client.published)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return mark


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> int:
    mark = len(client.published)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    return mark


async def wait_publish(
    client: LanguageClient, uri: str, since: int = 0, version: int | None = None, timeout: float = 15
) -> types.PublishDiagnosticsParams:
    """The first publish for `uri` (and `version`, if given) recorded after index `since`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, params in client.published[since:]:
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.01)
    seen = [(p.uri, p.version) for _, p in client.published[since:]]
    raise TimeoutError(f"no publish for {uri} v{version} (seen {seen})")


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    """Apply LSP text edits (client units) to `text`, last edit first."""
    lines = text.split("\n")

    def units(ch: str) -> int:
        if encoding == "utf-16":
            return 2 if ord(ch) > 0xFFFF else 1
        if encoding == "utf-8":
            return len(ch.encode("utf-8"))
        return 1

    def offset(pos: types.Position) -> int:
        line = lines[pos.line] if pos.line < len(lines) else ""
        done = 0
        col = 0
        for ch in line:
            if done >= pos.character:
                break
            done += units(ch)
            col += 1
        return sum(len(ln) + 1 for ln in lines[: pos.line]) + col

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str) -> tuple[list[types.TextEdit], int | None]:
    """The text edits for `uri` in a versioned WorkspaceEdit, and the version it names."""
    for change in edit.document_changes or []:
        if change.text_document.uri == uri:
            return list(change.edits), change.text_document.version
    return list((edit.changes or {}).get(uri, [])), None


async def close(client: LanguageClient) -> None:
    """Shut the server down politely, or kill it (a failed assertion must not hang the run)."""
    try:
        await asyncio.wait_for(client.shutdown_session(), 5)
    except Exception:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
    await asyncio.wait_for(client.stop(), 10)
