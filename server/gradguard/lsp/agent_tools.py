"""The language server's side of the VS Code extension's Language Model Tools (`gradguard_check`,
`gradguard_explain`): two `workspace/executeCommand` commands that answer with what `gradguard mcp` answers
(gradguard.agent), for the documents as the editor holds them (unsaved edits included).

- `gradguard.agentCheck` [uri]: the findings of an open file or notebook (the last analysis when it is current,
  else a fresh one), as {"text", "record"}; the client opens the document first.
- `gradguard.agentCheckPaths` [{"paths": [...]}]: the files and folders named (inside the workspace folders),
  checked as saved on disk by the CLI's checking.check_paths, as {"text", "record"}: agent.project_record, capped
  for a model's context.
- `gradguard.agentExplain` [traceback]: `gradguard explain`'s text for a pasted traceback, as {"text"}; files it
  names are read only inside the workspace folders.
"""
from __future__ import annotations

import asyncio
import os
from typing import Any

from .. import agent
from ..checking import FileResult, _engine
from ..config import ConfigError
from ..notebook import CellMap
from .documents import key_for_uri, snapshot_for

MAX_TRACEBACK_CHARS = 1024 * 1024
OPEN_WAIT_S = 5.0  # the client's didOpen can arrive just after the request that follows it


def _argument(args: tuple, name: str) -> str:
    first = args[0] if args else ""
    if isinstance(first, dict):
        first = first.get(name, "")
    return first if isinstance(first, str) else ""


def _shown_path(ls, path: str) -> str:
    """The path relative to its workspace folder, as a person names it in a chat."""
    for root in ls.workspace_roots():
        if path.startswith(root.rstrip(os.sep) + os.sep):
            return os.path.relpath(path, root)
    return path


def register(server) -> None:
    @server.command("gradguard.agentCheck")
    async def agent_check(ls, *args: Any) -> dict[str, Any]:
        uri = _argument(args, "uri")
        key = key_for_uri(ls.workspace, uri)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OPEN_WAIT_S
        snap = snapshot_for(ls.workspace, key)
        while snap is None and loop.time() < deadline:
            await asyncio.sleep(0.05)
            key = key_for_uri(ls.workspace, uri)
            snap = snapshot_for(ls.workspace, key)
        if snap is None:
            return {"error": f"{uri} is not open in the editor"}
        settings = ls.settings_for(key)

        def skipped() -> str:  # the reasons _analyse reports nothing: said, not passed off as "no findings"
            if not ls.in_workspace(snap):
                return f"{snap.path}: outside the workspace folders; gradguard does not check it"
            if os.path.isabs(snap.path) and ls.excluded(snap.path, ls.config_for(snap.path, settings)):
                return f"{snap.path}: excluded (site-packages, or `exclude` in [tool.gradguard]); not checked"
            return ""

        reason = await loop.run_in_executor(ls.engine_pool, skipped)  # reads pyproject.toml: off the event loop
        if reason:
            return {"error": reason}
        analysis = ls.current(key)
        if analysis is None:
            analysis = await loop.run_in_executor(ls.engine_pool, ls._analyse, snap, settings)
        analysed = analysis.snapshot  # the cells as they were when the findings were made
        cells = None
        if analysed.is_notebook:
            cells = CellMap([p.cell for p in analysed.pieces], [p.start_line for p in analysed.pieces])
        shown = _shown_path(ls, snap.path)
        report = analysis.report
        record = agent.check_record(shown, report.findings, report.parse_notes, FileResult(shown, cells=cells),
                                    [os.path.realpath(r) for r in ls.workspace_roots()])
        return {"text": agent.findings_text(record), "record": record}

    @server.command("gradguard.agentCheckPaths")
    async def agent_check_paths(ls, *args: Any) -> dict[str, Any]:
        first = args[0] if args else None
        paths = first.get("paths") if isinstance(first, dict) else None
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            return {"error": "pass {\"paths\": [files and folders]}"}
        settings = ls.settings.global_settings
        lang = ls.lang_for(settings)
        roots = [os.path.realpath(r) for r in ls.workspace_roots()]
        if not roots:
            return {"error": "no workspace folder is open: gradguard checks files inside one"}

        def work() -> dict[str, Any]:  # on the engine thread: reads files and runs the batch engine
            _engine().read_roots = tuple(roots)  # imported classes are read from the workspace only
            try:
                record = agent.check_paths_for_agent(paths, roots, lang, settings.max_file_bytes)
            except (agent.PathRefused, ConfigError) as exc:
                return {"error": str(exc)}
            return {"text": agent.project_text(record), "record": record}

        return await asyncio.get_running_loop().run_in_executor(ls.engine_pool, work)

    @server.command("gradguard.agentExplain")
    async def agent_explain(ls, *args: Any) -> dict[str, Any]:
        from ..explain import explain, render_text

        text = _argument(args, "traceback")[-MAX_TRACEBACK_CHARS:]  # the error comes last
        lang = ls.lang_for(ls.settings.global_settings)
        roots = ls.workspace_roots()

        def work() -> str:  # on the engine thread: explain runs the static engine on the files it names
            return render_text(explain(text, lang=lang, roots=roots), lang)

        return {"text": await asyncio.get_running_loop().run_in_executor(ls.engine_pool, work)}
