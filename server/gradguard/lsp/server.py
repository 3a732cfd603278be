"""`gradguard server`: the pygls 2 language server over stdio.

Thin over the engine: it keeps the documents, debounces analysis per document,
runs the engine off the event loop, drops results for old versions, and converts
findings into diagnostics, code actions and hovers. It decides nothing itself.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import logging
import os
import queue
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from ..discovery import config_excludes
from ..facts.model import AnalysisCancelled
from ..findings import Report
from ..jupyter.virtual_documents import cell_map as jupyter_cell_map
from ..notebook import CellMap
from ..processes import safe_path_for_children
from . import actions as act
from . import agent_tools
from . import hover as hov
from .convert import Positions, finding_diagnostic, markup_message_support, parse_note_diagnostic
from .documents import (Snapshot, doc_key, key_for_uri, open_keys, snapshot_for, text_document, uri_path,
                        use_lsp_lines)
from .jedi_support import JediService, jedi_markdown
from .trace_results import TraceResults
from .settings import Settings, SettingsStore

SERVER_NAME = "gradguard"
STATUS = "gradguard/status"
IMPORTER_RUNS = 8  # project files that import a document, run from disk for what they put in it
PARSE_CACHE_SLACK = 128  # superseded blocks kept beyond the open documents' (undo, quick re-edits)
log = logging.getLogger("gradguard.lsp")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("gradguard")
    except Exception:
        return "0"


class DaemonExecutor(concurrent.futures.Executor):
    """One worker on a daemon thread, so that `exit` ends the process even while an analysis runs
    (ThreadPoolExecutor's threads are joined at interpreter exit). Its stack is large: libcst's native
    parser recurses on the C stack of the thread that calls it."""

    STACK_BYTES = 64 * 1024 * 1024

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        previous = threading.stack_size(self.STACK_BYTES)
        try:
            self._thread = threading.Thread(target=self._work, name=name, daemon=True)
            self._thread.start()
        finally:
            threading.stack_size(previous)

    def submit(self, fn, /, *args, **kwargs) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((future, fn, args, kwargs))
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the awaiting coroutine
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._queue.put(None)
        if wait:
            self._thread.join()


_TEXT_DOCUMENT_NOTIFICATIONS = (types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_SAVE,
                                types.TEXT_DOCUMENT_DID_CLOSE)
_NOTEBOOK_NOTIFICATIONS = (types.NOTEBOOK_DOCUMENT_DID_CHANGE, types.NOTEBOOK_DOCUMENT_DID_SAVE,
                           types.NOTEBOOK_DOCUMENT_DID_CLOSE)


class GradguardProtocol(LanguageServerProtocol):
    """pygls, plus the lifecycle as the spec says it: after `shutdown` every request but `exit` gets an
    InvalidRequest error (pygls drops them unanswered, so clients wait for ever); notifications about documents
    that are not open are logged and ignored (pygls raised KeyError, which the editor showed as an error popup);
    cancelling a request that was answered already is quiet; a finished handler's future is let go."""

    markup_messages = False  # the client takes Markdown diagnostic messages (LSP 3.18, read from the raw JSON)

    def structure_message(self, data):
        if isinstance(data, dict) and data.get("method") == types.INITIALIZE:
            self.markup_messages = markup_message_support(data.get("params"))
        return super().structure_message(data)

    def handle_message(self, message):
        if self._shutdown and getattr(message, "method", types.EXIT) != types.EXIT:
            if getattr(message, "id", None) is not None:
                self._send_response(message.id, error=types.ResponseError(
                    code=types.ErrorCodes.InvalidRequest, message="gradguard: the server is shutting down"))
            else:  # a notification: pygls would warn in the output channel; the spec says to drop it
                log.debug("%s after shutdown, dropped", getattr(message, "method", "a notification"))
            return
        super().handle_message(message)

    def _handle_notification(self, method_name, params):
        if self._workspace is None:  # before `initialize`: pygls answers that itself
            pass
        elif method_name in _TEXT_DOCUMENT_NOTIFICATIONS:
            uri = params.text_document.uri
            if doc_key(uri) not in self.workspace.text_documents:
                return self._ignored(method_name, [uri])
        elif method_name in _NOTEBOOK_NOTIFICATIONS:
            uri = params.notebook_document.uri
            if doc_key(uri) not in self.workspace.notebook_documents:
                return self._ignored(method_name, [uri])
            if method_name == types.NOTEBOOK_DOCUMENT_DID_CHANGE:
                self._drop_edits_of_unknown_cells(params.change.cells)
        super()._handle_notification(method_name, params)

    def _ignored(self, method_name: str, uris: list[str]) -> None:
        self._server.log(f"gradguard: {method_name} for a document that is not open, ignored: {', '.join(uris)}")

    def _drop_edits_of_unknown_cells(self, cells) -> None:
        """A notebook change that edits the text of a cell that is not open loses that edit only."""
        if cells is None or not cells.text_content:
            return
        opened = {doc_key(cell.uri) for cell in (cells.structure.did_open or [])} if cells.structure else set()
        kept, unknown = [], []
        for content in cells.text_content:
            key = doc_key(content.document.uri)
            (kept if key in self.workspace.text_documents or key in opened else unknown).append(content)
        if unknown:
            cells.text_content = kept
            self._ignored(types.NOTEBOOK_DOCUMENT_DID_CHANGE, [c.document.uri for c in unknown])

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        """Forget a handler's future once it is done. pygls 2.1.1 files the future of every coroutine, thread or
        generator handler in `_request_futures`, but pops only a request's: a notification (its didChange is a
        generator) left one future behind per message, for the life of the process."""

        def forget_then(future):
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, forget_then, args, kwargs)

    def _handle_cancel_notification(self, msg_id):
        """Cancel a request still running (its client gets a RequestCancelled error). A request that has been
        answered already is the common case (the editor cancels a hover when the cursor moves on), not worth
        the warning pygls writes into the editor's output channel for it."""
        future = self._request_futures.pop(msg_id, None)
        if future is not None:
            future.cancel()
        else:
            log.debug("cancel for request %s, answered already", msg_id)


@dataclass
class Analysis:
    snapshot: Snapshot
    report: Report
    lang: str
    positions: Positions
    diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)


class GradguardServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            SERVER_NAME,
            _version(),
            # Every cell is synced, markdown too (only code cells are analysed): a cell's number counts them all,
            # as the editor shows it ('Cell 6 of 6') and the CLI says it. With python cells only, VS Code sent the
            # code cells alone and the server numbered them among themselves.
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithNotebook(notebook="*")],
                save=True,
            ),
            protocol_cls=GradguardProtocol,
        )
        from ..engine import Engine

        self.engine = Engine()
        self.engine_pool = DaemonExecutor("gg-engine")
        self.exit_status = 0  # 1 when the client sends `exit` without `shutdown`, as the spec says
        self.exit_received = False
        self.settings = SettingsStore()
        self.locale: str | None = None
        self.root_path: str | None = None
        self.tasks: dict[str, asyncio.Task] = {}
        self.analyses: dict[str, Analysis] = {}
        self.published: dict[str, set[str]] = {}  # key -> URIs that got diagnostics
        self.cell_diagnostics: dict[str, tuple] = {}  # notebook cell URI -> (version, diagnostics) last published
        self.size_noticed: set[str] = set()
        self.config_cache: dict[str, Any] = {}  # directory -> Config
        self.config_errors: set[str] = set()
        self.live_blocks: dict[str, set[str]] = {}  # key -> block texts of its last analysis
        # key -> {real path of another project file: the findings this document's run put there} (a write in an
        # open losses.py that an open train.py's run reaches is shown in losses.py)
        self.placed_from: dict[str, dict[str, list]] = {}
        self.importer_runs: dict[str, tuple] = {}  # closed importer -> (its text, what it read, what it placed)
        self.cancel_events: dict[str, threading.Event] = {}  # key -> the flag its running analysis polls
        self.following: set[str] = set()  # keys re-analysed because a file their run links changed (no further ripple)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.jedi = JediService(lambda msg: self.log(msg))
        self.trace = TraceResults()

    # ---- helpers --------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # the client may be gone; logging must never raise
            log.warning("%s", message)

    def settings_for(self, key: str) -> Settings:
        """Settings for an analysis key (key_for_uri())."""
        return self.settings.for_uri(key)

    def config_for(self, path: str, settings: Settings):
        """`[tool.gradguard]` from the nearest pyproject.toml (cached per folder until a
        pyproject.toml changes), with the client's settings laid over it. A broken config is
        reported once and replaced by the defaults: it must not cost the user all diagnostics."""
        from ..config import Config, ConfigError, load_config

        config = Config()
        if os.path.isabs(path):
            directory = os.path.dirname(path)
            config = self.config_cache.get(directory)
            if config is None:
                try:
                    config = load_config(path)
                except ConfigError as exc:
                    self.config_problem(str(exc))
                    config = Config()
                self.config_cache[directory] = config
        overrides = settings.config_overrides()
        if overrides:
            try:
                config = config.merged(overrides)
            except ConfigError as exc:
                self.config_problem(f"gradguard settings: {exc}")
        return config

    def config_problem(self, message: str) -> None:
        """Runs on the engine thread: hand the message to the event loop."""
        if message in self.config_errors:
            return
        self.config_errors.add(message)

        def report() -> None:
            self.log(message, types.MessageType.Error)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

        self.loop.call_soon_threadsafe(report)

    @staticmethod
    def excluded(path: str, config) -> bool:
        """Library files opened by go-to-definition, and paths the config excludes (as `gradguard check` reads
        `exclude`: compiled once per config, so 60,000 entries cost an edit nothing)."""
        from pathlib import PurePath

        parts = PurePath(path).parts
        if "site-packages" in parts or "dist-packages" in parts:
            return True
        return config_excludes(Path(path), config)

    def workspace_roots(self) -> list[str]:
        """The workspace folders as normalised file system paths (the root path if there are none)."""
        roots = [to_fs_path(f.uri) for f in list(self.workspace.folders.values())]
        if not roots and self.root_path:
            roots = [self.root_path]
        return [os.path.normpath(r) for r in roots if r]

    def in_workspace(self, snap: Snapshot) -> bool:
        """Files outside every workspace folder get no diagnostics (a repository's symlinks and editors
        opening system files must not make the server read and report on them). Without folders (a
        single file opened) everything is in; so are buffers that are not files (untitled:)."""
        if not snap.pieces or not snap.pieces[0].uri.startswith("file:"):
            return True
        roots = self.workspace_roots()
        if not roots:
            return True
        path = os.path.normpath(snap.path)
        return any(path == root or path.startswith(root.rstrip("/\\") + "/") or path.startswith(root.rstrip("/\\") + os.sep)
                   for root in roots)

    def lang_for(self, settings: Settings, config=None) -> str:
        if settings.language in ("en", "zh"):
            return settings.language
        if self.locale:
            return "zh" if self.locale.lower().startswith("zh") else "en"
        language = getattr(config, "language", "en")
        return language if language in ("en", "zh") else "en"

    def current(self, key: str) -> Analysis | None:
        """The last analysis of `key` if the documents have not changed since."""
        analysis = self.analyses.get(key)
        if analysis is None:
            return None
        snap = snapshot_for(self.workspace, key)
        if snap is None or snap.versions != analysis.snapshot.versions:
            return None
        return analysis

    def document_changes(self) -> bool:
        caps = self.client_capabilities.workspace
        return bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)

    def status(self, key: str, state: str, ms: float, findings: int = 0) -> None:
        self.protocol.notify(STATUS, {"state": state, "analysedMs": round(ms, 2), "uri": key, "findings": findings})

    # ---- analysis -------------------------------------------------------------------

    def schedule(self, key: str, delay: float | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        old = self.tasks.pop(key, None)
        if old is not None:
            old.cancel()
        running = self.cancel_events.pop(key, None)
        if running is not None:
            running.set()  # the engine stops that analysis at its next statement (a newer text replaces it)
        if delay is None:
            delay = self.settings_for(key).debounce_ms / 1000
        self.tasks[key] = asyncio.ensure_future(self._analyse_later(key, delay))

    def schedule_all(self) -> None:
        for key in open_keys(self.workspace):
            self.schedule(key, 0)

    async def _analyse_later(self, key: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        snap = snapshot_for(self.workspace, key)
        if snap is None:
            return
        settings = self.settings_for(key)
        started = time.perf_counter()
        if not settings.enable:
            self.publish(key, snap, {})
            self.status(key, "disabled", 0)
            return
        if len(snap.text) * 4 > settings.max_file_bytes and len(snap.text.encode("utf-8")) > settings.max_file_bytes:
            self.publish(key, snap, {})
            if key not in self.size_noticed:
                self.size_noticed.add(key)
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Info,
                        message=f"gradguard: {os.path.basename(snap.path)} is larger than maxFileBytes "
                        f"({settings.max_file_bytes} bytes); it is not analysed.",
                    )
                )
            self.status(key, "skipped", 0)
            return
        loop = asyncio.get_running_loop()
        cancel = self.cancel_events[key] = threading.Event()
        try:
            analysis = await loop.run_in_executor(self.engine_pool, self._analyse, snap, settings, cancel.is_set)
        except AnalysisCancelled:
            return  # a newer edit's analysis publishes
        except Exception:
            # One bad analysis costs that document its diagnostics, never the server.
            self.log(f"gradguard: analysis of {key} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            latest = snapshot_for(self.workspace, key)
            if latest is not None and latest.versions == snap.versions:
                self.analyses.pop(key, None)
                self.publish(key, snap, {})
                self.status(key, "error", (time.perf_counter() - started) * 1000)
            return
        latest = snapshot_for(self.workspace, key)
        if latest is None or latest.versions != snap.versions:
            return  # the documents changed while we worked: a newer task publishes
        self.analyses[key] = analysis
        self.publish(key, snap, analysis.diagnostics)
        self._place_elsewhere(key, analysis.report)
        if key in self.following:
            self.following.discard(key)
        else:
            self._rerun_dependents(key, snap)
        self.status(key, "ok", (time.perf_counter() - started) * 1000, len(analysis.report.findings))

    def _analyse(self, snap: Snapshot, settings: Settings, cancelled=None) -> Analysis:
        """Runs on the engine thread. `cancelled() -> bool`: a newer edit replaced this snapshot."""
        if not self.in_workspace(snap):  # before reading any pyproject.toml above that file
            return Analysis(snap, Report(snap.path), self.lang_for(settings), Positions(snap, self.workspace.position_codec))
        config = self.config_for(snap.path, settings)
        lang = self.lang_for(settings, config)
        if os.path.isabs(snap.path) and self.excluded(snap.path, config):
            return Analysis(snap, Report(snap.path), lang, Positions(snap, self.workspace.position_codec))
        self.engine.read_roots = tuple(self.workspace_roots()) or None
        if not snap.is_notebook and os.path.isabs(snap.path):  # other documents' runs link this text, not the disk's
            self.engine.overlay[os.path.realpath(snap.path)] = snap.text
        report = self.engine.check(snap.text, snap.path, config, lang, cancelled=cancelled)
        if not snap.is_notebook and os.path.isabs(snap.path):
            report.findings = report.findings + self._importer_findings(snap, config, lang, report.findings, cancelled)
        self._trim_parse_cache(snap.key, report)
        positions = Positions(snap, self.workspace.position_codec)
        diagnostics: dict[str, list[types.Diagnostic]] = {}
        cells = None
        if snap.is_notebook:  # messages name the cell and its line, as the CLI says them
            cells = CellMap([p.cell for p in snap.pieces], [p.start_line for p in snap.pieces])
        elif snap.path.endswith(".ipynb"):  # JupyterLab's notebook as one document: its cells from the saved file
            cells = snap.jupyter_cells = jupyter_cell_map(snap.path, snap.text)
        if cells is not None:
            report.findings = cells.relabel_findings(report.findings, lang)
            report.parse_notes = [replace(n, message=cells.relabel(n.message, lang)) for n in report.parse_notes]
        for finding in report.findings:
            converted = finding_diagnostic(finding, positions, settings, self.protocol.markup_messages, lang)
            if converted is not None:
                diagnostics.setdefault(converted[0], []).append(converted[1])
        for note in report.parse_notes:
            converted = parse_note_diagnostic(note, positions, lang)
            if converted is not None:
                diagnostics.setdefault(converted[0], []).append(converted[1])
        return Analysis(snap, report, lang, positions, diagnostics)

    def _importer_findings(self, snap: Snapshot, config, lang: str, own: list, cancelled=None) -> list:
        """What the runs of project files that import this document, and are not open, put in it (read from disk;
        an open importer's own analysis places its findings, see `placed_diagnostics`)."""
        real = os.path.realpath(snap.path)
        open_paths = {os.path.realpath(a.snapshot.path) for a in list(self.analyses.values())}
        seen = {(f.code, f.span) for f in own}
        out = []
        for importer in self.engine.importers_of(snap.path)[:IMPORTER_RUNS]:
            if os.path.realpath(importer) in open_paths:
                continue
            text = self.engine._project_text(importer)
            if text is None:
                continue
            for path, finding in self._importer_run(importer, text, config, lang, cancelled):
                if os.path.realpath(path) == real and (finding.code, finding.span) not in seen:
                    seen.add((finding.code, finding.span))
                    out.append(finding)
        return out

    def _importer_run(self, importer: str, text: str, config, lang: str, cancelled) -> list:
        """What a closed importer's run puts in other files, reused while its text and every text it linked are
        as they were (opening a project's modules one by one ran each script once per module)."""
        memo = self.importer_runs.get(importer)
        if memo is not None and memo[0] == (hash(text), lang, repr(config)) and all(
                hash(self.engine._project_text(path) or "") == digest for path, digest in memo[1].items()):
            return memo[2]
        report = self.engine.check(text, importer, config, lang, cancelled=cancelled)
        program = getattr(report, "program", None)
        read = dict(program.read_texts) if program is not None else {}
        if len(self.importer_runs) >= 64:
            self.importer_runs.pop(next(iter(self.importer_runs)))
        self.importer_runs[importer] = ((hash(text), lang, repr(config)), read, list(report.elsewhere))
        return self.importer_runs[importer][2]

    def placed_diagnostics(self, key: str, snap: Snapshot) -> list[types.Diagnostic]:
        """Diagnostics for this document from the runs of other open documents (their `Report.elsewhere`)."""
        if snap.is_notebook or not self.placed_from:
            return []
        real = os.path.realpath(snap.path)
        positions = Positions(snap, self.workspace.position_codec)
        settings = self.settings_for(key)
        own = self.analyses.get(key)
        seen = {(f.code, f.span) for f in own.report.findings} if own is not None else set()
        out = []
        for other, placed in self.placed_from.items():
            if other == key:
                continue
            for finding in placed.get(real, ()):
                if (finding.code, finding.span) in seen:
                    continue
                seen.add((finding.code, finding.span))
                converted = finding_diagnostic(finding, positions, settings, self.protocol.markup_messages,
                                               own.lang if own is not None else self.lang_for(settings))
                if converted is not None:
                    out.append(converted[1])
        return out

    def _place_elsewhere(self, key: str, report: Report) -> None:
        """Remember what this document's run put in other files, and re-publish the open ones whose share changed."""
        placed: dict[str, list] = {}
        for path, finding in getattr(report, "elsewhere", []):
            placed.setdefault(os.path.realpath(path), []).append(finding)
        before = self.placed_from.get(key, {})
        if placed:
            self.placed_from[key] = placed
        else:
            self.placed_from.pop(key, None)
        changed = {p for p in set(before) | set(placed) if before.get(p) != placed.get(p)}
        if changed:
            self._republish(changed, skip=key)

    def _rerun_dependents(self, key: str, snap: Snapshot) -> None:
        """Open documents whose last run linked another text of this one's file run again (once: their runs do not
        ripple on)."""
        real, digest = os.path.realpath(snap.path), hash(snap.text)
        for other, analysis in list(self.analyses.items()):
            program = getattr(analysis.report, "program", None)
            if other == key or program is None:
                continue
            # only a run that read another text of this file (opening a file as it is on disk changes nothing)
            if any(os.path.realpath(p) == real and read != digest for p, read in program.read_texts.items()):
                self.following.add(other)
                self.schedule(other)

    def _republish(self, paths: set, skip: str | None = None) -> None:
        for other, analysis in list(self.analyses.items()):
            if other != skip and os.path.realpath(analysis.snapshot.path) in paths:
                latest = snapshot_for(self.workspace, other)
                if latest is not None and latest.versions == analysis.snapshot.versions:
                    self.publish(other, latest, analysis.diagnostics)

    def _trim_parse_cache(self, key: str, report: Report) -> None:
        """Keep the engine's parse cache to the blocks of open documents plus a little slack.

        Every keystroke inside a function makes a new block text; the engine's LRU (20,000
        blocks, ~35 KB each) would otherwise keep every superseded version for hours.
        Runs on the engine thread, the only thread that touches the cache.
        """
        source = report.source
        if source is not None:
            self.live_blocks[key] = {block.text for block in source.blocks}
        live = set().union(*self.live_blocks.values()) if self.live_blocks else set()
        self.engine.retain(live, slack=PARSE_CACHE_SLACK)

    def publish(self, key: str, snap: Snapshot, diagnostics: dict[str, list[types.Diagnostic]]) -> None:
        uris = {p.uri: p.version for p in snap.pieces}
        for uri in self.published.get(key, set()) - set(uris):
            self.cell_diagnostics.pop(uri, None)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        traced = self.trace_diagnostics(snap) if self.trace.marks and not snap.is_notebook else []
        placed = self.placed_diagnostics(key, snap)
        for uri, version in uris.items():
            published = diagnostics.get(uri, []) + traced + placed
            if snap.is_notebook:
                # A keystroke in one cell of a 3,000-cell notebook re-published every cell; send the changed ones.
                if self.cell_diagnostics.get(uri) == (version, published):
                    continue
                self.cell_diagnostics[uri] = (version, published)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=published)
            )
        self.published[key] = set(uris)

    def trace_diagnostics(self, snap: Snapshot) -> list[types.Diagnostic]:
        """`gradguard trace` results for this file, for the lines still as the trace saw them."""
        codec = self.workspace.position_codec
        return self.trace.diagnostics(snap.path, snap.text.split("\n"), lambda text, col: codec.client_num_units(text[:col]),
                                      self.lang_for(self.settings.global_settings))

    def reload_trace(self) -> None:
        roots = [to_fs_path(f.uri) for f in self.workspace.folders.values()] or ([self.root_path] if self.root_path else [])
        loop = asyncio.get_running_loop()  # read off the event loop; re-publish once the marks are in
        self.trace.reload_in_background([r for r in roots if r], self.lang_for(self.settings.global_settings),
                                        lambda: loop.call_soon_threadsafe(self.schedule_all))

    def forget(self, key: str, uris: list[str], path: str) -> None:
        task = self.tasks.pop(key, None)
        if task is not None:
            task.cancel()
        self.analyses.pop(key, None)
        self.live_blocks.pop(key, None)
        dropped = self.placed_from.pop(key, None)
        self.following.discard(key)
        self.engine.overlay.pop(os.path.realpath(path), None)  # runs that link it read the disk again
        # the engine's last text and module-level run of a closed document would stay until its blocks left the cache
        self.engine.forget(path)
        for uri in set(uris) | self.published.pop(key, set()):
            self.cell_diagnostics.pop(uri, None)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        if dropped:  # the files it placed findings in: what it kept goes; their analysis reads the disk's importers
            for other, analysis in list(self.analyses.items()):
                if os.path.realpath(analysis.snapshot.path) in dropped:
                    self.schedule(other, 0)

    # ---- fix-all --------------------------------------------------------------------

    async def fix_all_edits(self, uri: str, include_unsafe: bool = False
                            ) -> tuple[dict[str, list[types.TextEdit]], dict[str, int | None]]:
        key = key_for_uri(self.workspace, uri)
        snap = snapshot_for(self.workspace, key)
        if snap is None:
            return {}, {}
        analysis = self.current(key)
        if analysis is None:
            settings = self.settings_for(key)
            loop = asyncio.get_running_loop()
            analysis = await loop.run_in_executor(self.engine_pool, self._analyse, snap, settings)
        positions = analysis.positions
        fixes = []
        for finding in analysis.report.findings:
            fix = finding.fix
            if fix is None or (fix.applicability != "safe" and not include_unsafe) or not fix.edits:
                continue
            spans = sorted((e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col) for e in fix.edits)
            fixes.append((spans, fix))
        fixes.sort(key=lambda item: item[0][0])
        kept_spans: list[tuple[int, int, int, int]] = []
        edits: dict[str, list[types.TextEdit]] = {}
        for spans, fix in fixes:
            if any(s[:2] < k[2:] and k[:2] < s[2:] or s[:2] == k[:2] for s in spans for k in kept_spans):
                continue  # overlaps a fix already taken; the next fix-all run picks it up
            located = [positions.range(e.span) for e in fix.edits]
            if any(loc is None for loc in located):
                continue
            kept_spans.extend(spans)
            for edit, (edit_uri, rng) in zip(fix.edits, located):
                edits.setdefault(edit_uri, []).append(types.TextEdit(range=rng, new_text=edit.new_text))
        versions = {p.uri: p.version for p in snap.pieces}
        return edits, versions


server = GradguardServer()


# ---- lifecycle --------------------------------------------------------------------------


@server.feature(types.INITIALIZE)
def initialize(ls: GradguardServer, params: types.InitializeParams) -> None:
    use_lsp_lines(ls.workspace)
    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    ls.settings.load(options.get("globalSettings"))
    ls.settings.load(options.get("settings"))
    ls.locale = params.locale
    root = params.root_uri or (params.workspace_folders[0].uri if params.workspace_folders else None)
    if root and root.startswith("file:"):
        from pygls.uris import to_fs_path

        ls.root_path = to_fs_path(root)
    elif params.root_path:
        ls.root_path = params.root_path


@server.feature(types.INITIALIZED)
async def initialized(ls: GradguardServer, _params: types.InitializedParams) -> None:
    ls.log(f"gradguard {_version()} started (position encoding {ls.workspace.position_encoding})")
    ls.reload_trace()
    settings = ls.settings.global_settings
    if settings.jedi_enable:
        ls.jedi.start(ls.root_path, settings.jedi_warmup)
    caps = ls.client_capabilities.workspace
    if caps and caps.did_change_watched_files and caps.did_change_watched_files.dynamic_registration:
        asyncio.ensure_future(_watch_pyproject(ls))


async def _watch_pyproject(ls: GradguardServer) -> None:
    params = types.RegistrationParams(
        registrations=[
            types.Registration(
                id="gradguard-pyproject",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                              types.FileSystemWatcher(glob_pattern="**/.gradguard/trace.json")]
                ),
            )
        ]
    )
    try:
        await asyncio.wait_for(ls.client_register_capability_async(params), 10)
    except Exception as exc:
        ls.log(f"gradguard: could not register a pyproject.toml watcher: {exc!r}")


@server.feature(types.SHUTDOWN)
def shutdown(ls: GradguardServer, *_args) -> None:
    ls.jedi.shutdown()


@server.feature(types.EXIT)
def exit_(ls: GradguardServer, *_args) -> None:
    ls.exit_status = 0 if ls.protocol._shutdown else 1
    ls.exit_received = True
    ls.jedi.shutdown()  # without `shutdown` its process pool (warming up torch) would keep the process alive


# ---- text documents ---------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GradguardServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(key_for_uri(ls.workspace, params.text_document.uri), 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GradguardServer, params: types.DidChangeTextDocumentParams) -> None:
    key = key_for_uri(ls.workspace, params.text_document.uri)
    if ls.settings_for(key).lint_run == "onSave":
        return  # gradguard.lint.run onSave: analysed on open and save only
    ls.schedule(key)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.TextDocumentSaveRegistrationOptions(include_text=False))
def did_save(ls: GradguardServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule(key_for_uri(ls.workspace, params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GradguardServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(doc_key(params.text_document.uri), [params.text_document.uri], uri_path(params.text_document.uri))


# ---- notebooks ------------------------------------------------------------------------


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: GradguardServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.schedule(doc_key(params.notebook_document.uri), 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: GradguardServer, params: types.DidChangeNotebookDocumentParams) -> None:
    key = doc_key(params.notebook_document.uri)
    if ls.settings_for(key).lint_run == "onSave":
        return
    ls.schedule(key)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: GradguardServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.schedule(doc_key(params.notebook_document.uri))


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: GradguardServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.forget(doc_key(params.notebook_document.uri), [cell.uri for cell in params.cell_text_documents],
              uri_path(params.notebook_document.uri))


# ---- configuration -----------------------------------------------------------------------


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GradguardServer, params: types.DidChangeConfigurationParams) -> None:
    raw = params.settings
    if isinstance(raw, dict) and raw:
        ls.settings.load(raw)
    else:
        caps = ls.client_capabilities.workspace
        if caps and caps.configuration:
            folders = list(ls.workspace.folders.values())
            items = [types.ConfigurationItem(section="gradguard")] + [
                types.ConfigurationItem(scope_uri=f.uri, section="gradguard") for f in folders
            ]
            try:
                result = await asyncio.wait_for(
                    ls.workspace_configuration_async(types.ConfigurationParams(items=items)), 10
                )
            except Exception as exc:
                ls.log(f"gradguard: workspace/configuration failed: {exc!r}")
                result = []
            if result:
                ls.settings.load(result[0])
                for folder, value in zip(folders, result[1:]):
                    if isinstance(value, dict):
                        ls.settings.set_folder(folder.uri, value)
    ls.log("gradguard: settings changed, re-analysing open documents")
    ls.schedule_all()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: GradguardServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("trace.json") for change in params.changes):
        ls.reload_trace()
        ls.log("gradguard: .gradguard/trace.json changed, showing the runtime trace findings")
        ls.schedule_all()
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.config_cache.clear()
        ls.config_errors.clear()
        ls.log("gradguard: pyproject.toml changed, reloading [tool.gradguard]")
        ls.schedule_all()


# ---- code actions ---------------------------------------------------------------------


def _kind_requested(only, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") for k in only)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, act.FIX_ALL_KIND], resolve_provider=True
    ),
)
async def code_action(ls: GradguardServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    doc = text_document(ls.workspace, uri)
    if doc is None:
        return None
    key = key_for_uri(ls.workspace, uri)
    settings = ls.settings_for(key)
    analysis = ls.analyses.get(key)
    lang = analysis.lang if analysis else ls.lang_for(settings)
    document_changes = ls.document_changes()
    only = params.context.only
    result: list[types.CodeAction] = []
    if _kind_requested(only, types.CodeActionKind.QuickFix):
        lines = doc.lines
        for diag in params.context.diagnostics:
            data = diag.data if isinstance(diag.data, dict) else None
            if diag.source != "gradguard" or data is None or not diag.code:
                continue
            if data.get("version") is not None and data["version"] != doc.version:
                continue  # published for an older text: its edits would land in the wrong place
            if data.get("fix"):
                versions = {e["uri"]: _doc_version(ls, e["uri"]) for e in data["fix"]["edits"]}
                result.append(act.fix_action(diag, data["fix"], versions, document_changes, lang))
            line_no = diag.range.start.line
            if line_no < len(lines):
                result.append(
                    act.disable_action(
                        diag,
                        uri,
                        line_no,
                        lines[line_no].rstrip("\r\n"),
                        doc.position_codec.client_num_units,
                        doc.version,
                        document_changes,
                        lang,
                    )
                )
            result.append(act.docs_action(diag, lang))
    if _kind_requested(only, act.FIX_ALL_KIND) and (only or _has_safe_fix(ls, uri)):
        action = act.fix_all_action(uri, doc.version, lang)
        if not _can_resolve_edit(ls):
            edits, versions = await ls.fix_all_edits(uri)
            action.edit = act.versioned_edit(edits, versions, document_changes)
        result.append(action)
    return result


def _has_safe_fix(ls: GradguardServer, uri: str) -> bool:
    analysis = ls.analyses.get(key_for_uri(ls.workspace, uri))
    if analysis is None:
        return False
    return any(f.fix is not None and f.fix.applicability == "safe" for f in analysis.report.findings)


def _can_resolve_edit(ls: GradguardServer) -> bool:
    td = ls.client_capabilities.text_document
    ca = td.code_action if td else None
    support = ca.resolve_support if ca else None
    return bool(support and "edit" in support.properties)


def _doc_version(ls: GradguardServer, uri: str) -> int | None:
    doc = text_document(ls.workspace, uri)
    return doc.version if doc else None


@server.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: GradguardServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    if data.get("fixAll") and action.edit is None:
        edits, versions = await ls.fix_all_edits(data["uri"])
        action.edit = act.versioned_edit(edits, versions, ls.document_changes())
    return action


# ---- hover ----------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: GradguardServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    doc = text_document(ls.workspace, uri)
    if doc is None:
        return None
    lines = doc.lines
    if params.position.line >= len(lines):
        return None
    key = key_for_uri(ls.workspace, uri)
    settings = ls.settings_for(key)
    analysis = ls.current(key)
    lang = analysis.lang if analysis else ls.lang_for(settings)
    codec = doc.position_codec
    line_no = params.position.line
    line = lines[line_no].rstrip("\r\n")
    col = codec.position_from_client_units(
        lines, types.Position(line=line_no, character=params.position.character)
    ).character

    def client_range(start: int, end: int) -> types.Range:
        return types.Range(
            start=types.Position(line=line_no, character=codec.client_num_units(line[:start])),
            end=types.Position(line=line_no, character=codec.client_num_units(line[:end])),
        )

    def answer(markdown: str, rng: types.Range | None) -> types.Hover:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown), range=rng)

    code = hov.suppression_code_at(line, col)
    if code is not None:
        from ..rules import get_rule

        rule = get_rule(code[0])
        if rule is not None:
            return answer(rule.docs(lang), client_range(code[1], code[2]))

    parts: list[str] = []
    rng: types.Range | None = None
    word = hov.word_at(line, col)
    if word is not None:
        rng = client_range(word[1], word[2])
    position = None
    if analysis is not None:
        position = analysis.positions.to_analysed(uri, params.position)
    if analysis is not None and position is not None:
        for finding in analysis.report.findings:
            if finding.span.contains(*position):
                parts.append(hov.finding_markdown(finding, lang))
                if rng is None:
                    located = analysis.positions.range(finding.span)
                    rng = located[1] if located else None
        facts = analysis.report.facts
        tensor = hov.tensor_at(facts, *position) if facts is not None else None
        if tensor is not None:
            parts.append(hov.tensor_markdown(tensor, analysis.snapshot, lang, facts, position))
    topic = hov.topic_markdown(line, col, lang)
    if topic is not None:
        parts.append(topic[0])
    if not parts and word is not None and settings.jedi_enable and not word[0].isdigit():
        snap = analysis.snapshot if analysis else snapshot_for(ls.workspace, key)
        if snap is not None:
            where = position
            if where is None:
                where = Positions(snap, codec).to_analysed(uri, params.position)
            if where is not None:
                path = snap.path if os.path.isabs(snap.path) else None
                # While jedi warms up (a minute with a cold cache) its queue is busy: ask, but do not wait, so the
                # hover answers at once and the same hover later finds jedi's answer in the cache.
                timeout = settings.jedi_timeout_ms / 1000 if ls.jedi.ready else 0.0
                info = await ls.jedi.describe(snap.text, path, where[0], where[1], timeout)
                if info is not None:
                    parts.append(jedi_markdown(info, lang))
    if not parts:
        return None
    return answer("\n\n---\n\n".join(parts), rng)


# ---- commands -------------------------------------------------------------------------


@server.command("gradguard.ruleDocs")
def rule_docs(ls: GradguardServer, *args: Any) -> str:
    from ..rules import get_rule

    code = str(args[0]) if args else ""
    lang = str(args[1]) if len(args) > 1 and args[1] in ("en", "zh") else ls.lang_for(ls.settings.global_settings)
    rule = get_rule(code)
    if rule is None:
        return f"Unknown rule `{code}`." if lang == "en" else f"未知规则 `{code}`。"
    return rule.docs(lang)


@server.command("gradguard.applyFixAll")
async def fix_all_command(ls: GradguardServer, *args: Any) -> dict[str, Any]:
    uri = args[0]["uri"] if args and isinstance(args[0], dict) else (str(args[0]) if args else "")
    edits, versions = await ls.fix_all_edits(uri)
    count = sum(len(e) for e in edits.values())
    if count:
        edit = act.versioned_edit(edits, versions, ls.document_changes())
        result = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="gradguard: fix all")
        )
        return {"applied": bool(result and result.applied), "edits": count}
    return {"applied": False, "edits": 0}


@server.command("gradguard.applyFixAllUnsafe")
async def fix_all_unsafe_command(ls: GradguardServer, *args: Any) -> dict[str, Any]:
    """Every fix, unsafe ones included: only on the user's explicit request (fix-all and fix-on-save stay safe)."""
    uri = args[0]["uri"] if args and isinstance(args[0], dict) else (str(args[0]) if args else "")
    edits, versions = await ls.fix_all_edits(uri, include_unsafe=True)
    count = sum(len(e) for e in edits.values())
    if count:
        edit = act.versioned_edit(edits, versions, ls.document_changes())
        result = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="gradguard: fix all, unsafe fixes included")
        )
        return {"applied": bool(result and result.applied), "edits": count}
    return {"applied": False, "edits": 0}


agent_tools.register(server)  # gradguard.agentCheck and gradguard.agentExplain, for the editor's Language Model Tools


# ---- entry point ----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the language server (stdio by default); ends the process when the client is done (see `_end`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "server":
        argv = argv[1:]
    parser = argparse.ArgumentParser(prog="gradguard server", description="gradguard language server")
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", action="store_true", help="listen on a TCP port instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    parser.add_argument("--log-file", help="also write the server's own log to this file")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(
        filename=args.log_file,
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    safe_path_for_children()  # no child imports the workspace's socket.py (the cwd is often the workspace)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return _end(server)


def _end(ls: GradguardServer) -> int:
    """End the process now, with the status the spec asks for (0 after `shutdown`, else 1; a client that closed
    the connection without `exit` counts the same way).

    Interpreter finalisation must not run: it would join jedi's process pool (the server then outlived an
    editor that vanished) and end the daemon engine thread by unwinding it through libcst's native frames,
    which aborts the process (SIGABRT) when `exit` arrives in the middle of an analysis.
    """
    status = ls.exit_status if ls.exit_received else (0 if ls.protocol._shutdown else 1)
    ls.jedi.shutdown()
    try:
        ls.jedi.wait_closed(2.0)
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
    finally:
        os._exit(status)
