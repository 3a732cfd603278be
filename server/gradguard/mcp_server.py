"""`gradguard mcp`: an MCP server over stdio for coding agents (Claude Code, Cursor, VS Code's agent mode).

Three tools, each a thin call into what the CLI runs: `check` (checking.check_paths on files and folders, as
`gradguard check` runs it; checking.check_one on pasted source),
`explain` (gradguard.explain on a traceback, as `gradguard explain` prints it) and `rule` (a rule's docs, as
`gradguard rule CODE` prints them). Built on the official `mcp` SDK: `pip install 'gradguard[mcp]'`.

Arguments come from a model and are treated as hostile: `check` reads only regular files with a Python or
notebook suffix, inside the project folders (`--root`, default the working directory), at most --max-file-bytes.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import Annotated, Any, Literal, Optional

from . import agent
from .checking import _engine, check_one, check_paths, internal_error
from .config import ConfigError, ConfigResolver
from .fileio import DEFAULT_MAX_BYTES

try:  # at module level: the SDK reads the tools' annotations (strings here) in this module's globals
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field
except ImportError:  # main() says how to install it
    CallToolResult = TextContent = ToolAnnotations = None

    def Field(**_kwargs):  # noqa: N802 (stands in for pydantic's, which comes with the SDK)
        return None

_MAX_SOURCE_CHARS = 10 * 1024 * 1024  # pasted source, as the CLI's default --max-file-bytes
_MAX_TRACEBACK_CHARS = 1024 * 1024
# libcst's native parser recurses on the C stack of the thread that calls it; the SDK runs tools on worker threads.
_THREAD_STACK_BYTES = 64 * 1024 * 1024

INSTRUCTIONS = (
    "gradguard finds PyTorch autograd in-place errors without running the code (a tensor saved for backward and "
    "then written in place, a leaf that requires grad written in place, an optimizer step before backward, ...). "
    "Call `check` with `paths` listing the files you wrote or changed that build or train a model (or `path`, a "
    "folder), then apply the fixes' edits; call `explain` with a traceback "
    "that says 'modified by an inplace operation' or 'a leaf Variable that requires grad'; call `rule` for the "
    "documentation of a code such as GG202."
)

Lang = Annotated[Optional[Literal["en", "zh"]], Field(description="language of the answer (default: the project's "
                                                                  "`language` setting, else the locale)")]
Path = Annotated[Optional[str], Field(description="a .py, .pyi or .ipynb file, or a folder, absolute or relative to "
                                                  "the project")]
Paths = Annotated[Optional[list[str]], Field(description="several files and folders, checked together (instead of "
                                                         "`path`)")]
Source = Annotated[Optional[str], Field(description="Python code to check instead of a file (for example unsaved)")]
Filename = Annotated[Optional[str], Field(description="the name `source` is checked under (default snippet.py)")]
Traceback = Annotated[str, Field(description="the traceback or error message, as printed")]
Code = Annotated[str, Field(description="a rule code such as GG202")]


class ToolInputError(Exception):
    """A tool argument gradguard refuses (the message says why); the SDK's ToolError once the server runs."""


class Tools:
    """The tools' work, without the SDK (the server wraps each in one MCP tool)."""

    def __init__(self, roots: list[str], max_bytes: int) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.max_bytes = max_bytes
        # The CLI's engine is one object: calls that arrive together take turns.
        self.lock = threading.Lock()

    def _config(self, path: str, lang: str | None):
        from .i18n import locale_language

        try:
            config = ConfigResolver({"language": lang}, None, False).for_path(path)
        except ConfigError as exc:
            raise ToolInputError(f"configuration error: {exc}") from None
        return config, lang or config.language or locale_language()

    def check(self, path: str | None = None, source: str | None = None, filename: str | None = None,
              lang: str | None = None, paths: list[str] | None = None) -> dict[str, Any]:
        """Findings for a file (`path`), for folders or several files (`path` a folder, or `paths`: the project
        record, capped for an agent), or for unsaved code (`source`, named `filename` for config and messages)."""
        if sum(x is not None for x in (path, source, paths)) != 1:
            raise ToolInputError("give one of `path` (a file or folder to check), `paths` (files and folders) or "
                                 "`source` (code to check)")
        if paths is not None or (path is not None and os.path.isdir(self._resolve(path))):
            return self._check_project(paths if paths is not None else [path], lang)
        if source is not None:
            if len(source) > _MAX_SOURCE_CHARS:
                raise ToolInputError(f"`source` is {len(source)} characters, above the limit of {_MAX_SOURCE_CHARS}")
            name = filename or "snippet.py"
            if name.endswith(".ipynb"):
                raise ToolInputError("`source` is Python code; check a notebook by its `path`")
            if "\x00" in name or len(name) > 4096 or os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
                raise ToolInputError("`filename` must be a relative name inside the project, such as train.py")
            shown, where = name, os.path.join(self.roots[0], name)  # its config is found from there
        else:
            where = self._resolve(path)
            shown = path
        config, lang = self._config(where, lang)
        with self.lock:
            _engine().read_roots = tuple(self.roots)  # imported classes are read from the project only
            try:
                if source is not None:
                    result = check_one(where, source, config, lang, "none", self.max_bytes)
                else:
                    [result] = check_paths([where], self._resolver(lang), lang, "none", self.max_bytes)
            except Exception as exc:  # the CLI's words (exit 2 there), not the SDK's bare "Error executing tool"
                result = internal_error(where, exc)
        if result.error or result.skipped:
            raise ToolInputError(f"{shown}: {result.error or result.skipped}")
        return agent.check_record(shown, result.findings, result.notes, result, self.roots)

    def _resolve(self, path: str) -> str:
        try:
            return agent.resolve_inside(path, self.roots)
        except agent.PathRefused as exc:
            raise ToolInputError(str(exc)) from None

    def _resolver(self, lang: str | None):
        return ConfigResolver({"language": lang}, None, False)

    def _check_project(self, paths, lang: str | None) -> dict[str, Any]:
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ToolInputError("`paths` must be a list of file or folder paths")
        with self.lock:
            _engine().read_roots = tuple(self.roots)
            try:
                return agent.check_paths_for_agent(paths, self.roots, lang, self.max_bytes)
            except agent.PathRefused as exc:
                raise ToolInputError(str(exc)) from None
            except ConfigError as exc:
                raise ToolInputError(f"configuration error: {exc}") from None

    def explain(self, traceback: str, lang: str | None = None) -> str:
        """What `gradguard explain` prints for `traceback` (files it names are read inside the roots only)."""
        from .explain import explain, render_text
        from .i18n import default_language

        if len(traceback) > _MAX_TRACEBACK_CHARS:
            traceback = traceback[-_MAX_TRACEBACK_CHARS:]  # the error comes last
        lang = lang or default_language(self.roots[0])
        with self.lock:
            return render_text(explain(traceback, lang=lang, roots=self.roots), lang)

    def rule(self, code: str, lang: str | None = None) -> str:
        """What `gradguard rule CODE` prints: the rule's documentation as Markdown."""
        from .i18n import default_language
        from .rules import all_rules, get_rule

        found = get_rule(str(code).strip())
        if found is None:
            raise ToolInputError(f"unknown rule {code!r}; the rules are " + ", ".join(r.code for r in all_rules()))
        return found.docs(lang or default_language(self.roots[0]))


def build_server(tools: Tools):
    """The MCP server object with the three tools (needs the `mcp` package)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from . import __version__

    server = MCPServer("gradguard", version=__version__, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)

    def refused(fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=read_only)
    def check(path: Path = None, paths: Paths = None, source: Source = None, filename: Filename = None,
              lang: Lang = None) -> CallToolResult:
        """Check Python files and Jupyter notebooks for PyTorch autograd in-place errors, without running them.

        Give `path` (a .py, .pyi or .ipynb file, or a folder, in the project; absolute or relative to it), `paths`
        (several files and folders: check every file you changed in one call, since a bug can span files) or
        `source` (unsaved Python code; `filename` names it, default snippet.py). Returns each finding with its
        file, rule code, 1-based line and column (and cell, for a notebook), message, and fixes: a title, a safety
        ("safe" keeps what the program computes; "unsafe" changes it, read it first) and the edits (1-based ranges
        and the new text). For folders and lists only files with findings are listed, and a long answer says
        which findings it left out (check those files by `path`).
        """
        record = refused(tools.check, path=path, paths=paths, source=source, filename=filename, lang=lang)
        text = agent.project_text(record) if "files" in record else agent.findings_text(record)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=record)

    @server.tool(annotations=read_only)
    def explain(traceback: Traceback, lang: Lang = None) -> str:
        """Explain a PyTorch autograd error from a pasted traceback or error message (for example "one of the
        variables needed for gradient computation has been modified by an inplace operation"): what it means,
        which tensor and operation, the likely lines in the project's files, and how to fix it."""
        return refused(tools.explain, traceback, lang)

    @server.tool(annotations=read_only)
    def rule(code: Code, lang: Lang = None) -> str:
        """The documentation of a gradguard rule (for example GG202): what it catches, why it fails, an example,
        the fix and its safety, and the exact runtime error torch prints."""
        return refused(tools.rule, code, lang)

    return server


def main(argv: list[str]) -> int:
    """Entry point for `gradguard mcp`: serves until the client closes stdin."""
    parser = argparse.ArgumentParser(prog="gradguard mcp",
                                     description="Run gradguard's MCP server over stdio (tools: check, explain, rule).")
    parser.add_argument("--root", action="append", metavar="DIR",
                        help="a project folder `check` may read (repeatable; default: the working directory)")
    parser.add_argument("--max-file-bytes", type=int, default=DEFAULT_MAX_BYTES, metavar="N",
                        help=f"larger files are not checked (default: {DEFAULT_MAX_BYTES})")
    parser.add_argument("--probe", action="store_true",
                        help="exit 0 if this Python can serve (has the MCP SDK), else 2 saying why; serve nothing")
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if CallToolResult is None:
        print("gradguard mcp: the MCP SDK is not installed in this Python; install it with "
              "`pip install 'gradguard[mcp]'` (Python 3.10 or newer)", file=sys.stderr)
        return 2
    if opts.probe:  # what an editor asks before it offers the server to its agents
        return 0
    roots = opts.root or [os.getcwd()]
    missing = [r for r in roots if not os.path.isdir(r)]
    if missing:
        print(f"gradguard mcp: --root {missing[0]}: not a folder", file=sys.stderr)
        return 2
    threading.stack_size(_THREAD_STACK_BYTES)
    build_server(Tools(roots, opts.max_file_bytes)).run("stdio")
    return 0
