"""`gradguard mcp`: an MCP server over stdio for coding agents (Claude Code, Cursor, VS Code's agent mode).

Three tools, each a thin call into what the CLI runs: `check` (cli.check_one on a file or on pasted source),
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

try:  # at module level: the SDK reads the tools' annotations (strings here) in this module's globals
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field
except ImportError:  # main() says how to install it
    CallToolResult = TextContent = ToolAnnotations = None

    def Field(**_kwargs):  # noqa: N802 (stands in for pydantic's, which comes with the SDK)
        return None

_MAX_SOURCE_CHARS = 10 * 1024 * 1024  # pasted source, as the CLI's default --max-file-bytes
_MAX_TRACEBACK_CHARS = 1024 * 1024
_CHECKED_SUFFIXES = (".py", ".pyi", ".ipynb")
# libcst's native parser recurses on the C stack of the thread that calls it; the SDK runs tools on worker threads.
_THREAD_STACK_BYTES = 64 * 1024 * 1024

INSTRUCTIONS = (
    "gradguard finds PyTorch autograd in-place errors without running the code (a tensor saved for backward and "
    "then written in place, a leaf that requires grad written in place, an optimizer step before backward, ...). "
    "Call `check` on a file you wrote or changed that builds or trains a model; call `explain` with a traceback "
    "that says 'modified by an inplace operation' or 'a leaf Variable that requires grad'; call `rule` for the "
    "documentation of a code such as GG202."
)

Lang = Annotated[Optional[Literal["en", "zh"]], Field(description="language of the answer (default: the project's "
                                                                  "`language` setting, else the locale)")]
Path = Annotated[Optional[str], Field(description="a .py, .pyi or .ipynb file, absolute or relative to the project")]
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

    def _resolve(self, path: str) -> str:
        from .explain.files import inside

        if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
            raise ToolInputError("`path` must be a file path")
        if not path.endswith(_CHECKED_SUFFIXES):
            raise ToolInputError(f"{path}: not a Python file or notebook (.py, .pyi, .ipynb); not checked")
        candidate = path if os.path.isabs(path) else os.path.join(self.roots[0], path)
        for root in self.roots:
            real = inside(root, candidate)
            if real is not None:
                return real
        raise ToolInputError(f"{path}: outside the project folder{'s' if len(self.roots) > 1 else ''} "
                             f"({', '.join(self.roots)}); not checked (`gradguard mcp --root DIR` adds one)")

    def _config(self, path: str, lang: str | None):
        from .config import ConfigError, ConfigResolver
        from .i18n import locale_language

        try:
            config = ConfigResolver({"language": lang}, None, False).for_path(path)
        except ConfigError as exc:
            raise ToolInputError(f"configuration error: {exc}") from None
        return config, lang or config.language or locale_language()

    def check(self, path: str | None = None, source: str | None = None, filename: str | None = None,
              lang: str | None = None) -> dict[str, Any]:
        """Findings for a file (`path`) or for unsaved code (`source`, named `filename` for config and messages)."""
        from .checking import internal_error
        from .cli import _engine, check_one

        if (path is None) == (source is None):
            raise ToolInputError("give either `path` (a file to check) or `source` (code to check), not both")
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
                result = check_one(where, source, config, lang, "none", self.max_bytes)
            except Exception as exc:  # the CLI's words (exit 2 there), not the SDK's bare "Error executing tool"
                result = internal_error(where, exc)
        if result.error or result.skipped:
            raise ToolInputError(f"{shown}: {result.error or result.skipped}")
        return agent.check_record(shown, result.findings, result.notes, result)

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
    def check(path: Path = None, source: Source = None, filename: Filename = None, lang: Lang = None) -> CallToolResult:
        """Check a Python file or Jupyter notebook for PyTorch autograd in-place errors, without running it.

        Give `path` (a .py, .pyi or .ipynb file in the project, absolute or relative to it) or `source` (unsaved
        Python code; `filename` names it, default snippet.py). Returns each finding with its rule code, 1-based
        line and column (and cell, for a notebook), message, and fixes: a title, a safety ("safe" keeps what the
        program computes; "unsafe" changes it, read it first) and the edits (1-based ranges and the new text).
        """
        record = refused(tools.check, path=path, source=source, filename=filename, lang=lang)
        return CallToolResult(content=[TextContent(type="text", text=agent.findings_text(record))],
                              structured_content=record)

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
    from .cli import DEFAULT_MAX_BYTES

    parser = argparse.ArgumentParser(prog="gradguard mcp",
                                     description="Run gradguard's MCP server over stdio (tools: check, explain, rule).")
    parser.add_argument("--root", action="append", metavar="DIR",
                        help="a project folder `check` may read (repeatable; default: the working directory)")
    parser.add_argument("--max-file-bytes", type=int, default=DEFAULT_MAX_BYTES, metavar="N",
                        help=f"larger files are not checked (default: {DEFAULT_MAX_BYTES})")
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if CallToolResult is None:
        print("gradguard mcp: the MCP SDK is not installed in this Python; install it with "
              "`pip install 'gradguard[mcp]'` (Python 3.10 or newer)", file=sys.stderr)
        return 2
    roots = opts.root or [os.getcwd()]
    missing = [r for r in roots if not os.path.isdir(r)]
    if missing:
        print(f"gradguard mcp: --root {missing[0]}: not a folder", file=sys.stderr)
        return 2
    threading.stack_size(_THREAD_STACK_BYTES)
    build_server(Tools(roots, opts.max_file_bytes)).run("stdio")
    return 0
