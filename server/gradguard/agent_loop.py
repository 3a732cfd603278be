"""`gradguard agent`: what makes a coding agent run the checker, not only able to.

A skill file or an AGENTS.md note alone does not make a current agent call a checker (Pyrefly's agent guide,
April 2026); a Stop hook does: when the agent is about to finish, `gradguard agent hook` checks the files changed
since the last commit, and on findings exits 2 with them on stderr, which Claude Code and Codex hand back to the
agent as the reason to go on. So:

- `gradguard agent init` writes the skill file and a marked section of AGENTS.md (both replaced in place when run
  again), and prints the Stop-hook recipes for Claude Code, Codex and Cursor; it writes no hook itself (a hook
  runs commands, so the user adds it).
- `gradguard agent hook [PATH...]`: the hook. Exit 0: nothing found (or nothing to check); exit 2: findings, on
  stderr as the MCP `check` answer's text (places, fixes with their edits). With `--cursor`, Cursor's contract
  instead: exit 0 and `{"followup_message": ...}` on stdout. A stop that the hook already sent back once
  (`stop_hook_active`, Cursor's `loop_count`) is let go with exit 0: an agent that cannot fix a finding is never
  held in a loop.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from . import agent
from .checking import _engine, check_paths
from .config import ConfigError
from .fileio import (DEFAULT_MAX_BYTES, Roots, SourceError, open_folder, open_subfolder, read_regular,
                     replace_in_folder)

EXIT_CLEAN, EXIT_FINDINGS = 0, 2
SKILL_PATH = (".claude", "skills", "gradguard", "SKILL.md")
AGENTS_FILE = "AGENTS.md"
SECTION_START, SECTION_END = "<!-- gradguard:start -->", "<!-- gradguard:end -->"
MAX_PAYLOAD_BYTES = 1024 * 1024
HOOK_COMMAND = "gradguard agent hook"

SKILL = """\
---
name: gradguard
description: Check PyTorch code for autograd in-place errors (a tensor saved for backward then written in place, \
in-place writes to leaves that require grad, optimizer steps or backward() on a stale graph) without running it. \
Use after writing or changing code that builds or trains a model, and when a run fails with "modified by an \
inplace operation" or "a leaf Variable that requires grad".
---

# gradguard

1. After changing PyTorch code, check the files you changed, together (a bug can span files):
   `gradguard check --concise PATH...` in a shell, or the MCP tool `check` with `paths` when the `gradguard`
   MCP server is connected (its answer carries each fix's edits as 1-based ranges and new text).
2. Apply the fixes. A fix marked `safe` keeps what the program computes; read an `unsafe` one before applying it
   (`gradguard check --fix --unsafe-fixes PATH` applies both).
3. For a traceback from a failed run, run `gradguard explain` with the traceback on stdin (or the MCP tool
   `explain`): it names the tensor, the line that saved it and the line that wrote it.
4. `gradguard rule GG202` prints a rule's documentation.

Exit status of `gradguard check`: 0 nothing found, 1 findings, 2 a path could not be checked.
"""

SECTION = f"""\
{SECTION_START}
## gradguard (PyTorch autograd checks)
This project checks PyTorch code with gradguard. After changing code that builds or trains a model, run
`gradguard check --concise` on the files you changed (or the MCP tool `check` with `paths`) and fix what it
reports before finishing; `gradguard explain` reads an autograd traceback. A Stop hook (`{HOOK_COMMAND}`) may
check the changed files when you finish: exit 2 means findings, listed on stderr with their fixes.
{SECTION_END}
"""

RECIPES = f"""\
Stop hooks (gradguard writes none: a hook runs commands, so add the one for your agent yourself).
The hook checks the Python files and notebooks changed since the last commit (`git status`), or the PATHs given.
Exit-code contract: 0 nothing found; 2 findings, printed on stderr with their fixes (Claude Code and Codex give
that text back to the agent, which goes on working); a stop the hook already sent back once is let go (0).

Claude Code, .claude/settings.json:
{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{HOOK_COMMAND}", "timeout": 120}}]}}]}}}}

Codex, .codex/hooks.json (hooks on by default since May 2026; earlier: `[features] codex_hooks = true`):
{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{HOOK_COMMAND}", "timeout": 120}}]}}]}}}}

Cursor, .cursor/hooks.json (Cursor's contract: exit 0 and a followup_message on stdout):
{{"version": 1, "hooks": {{"stop": [{{"command": "{HOOK_COMMAND} --cursor", "loop_limit": 1}}]}}}}
"""


# ---------------------------------------------------------------- init
def _write_in(root: str, parts: tuple[str, ...], text: str) -> None:
    """Write `text` to root/parts..., creating the folders; no component is followed through a symlink."""
    fds = [open_folder(root)]
    try:
        for name in parts[:-1]:
            fds.append(open_subfolder(fds[-1], name, create=True))
        replace_in_folder(fds[-1], parts[-1], text.encode("utf-8"))
    finally:
        for fd in fds:
            os.close(fd)


def with_section(existing: str, section: str = SECTION) -> str:
    """AGENTS.md with gradguard's section replaced in place, or appended when it has none."""
    start, end = existing.find(SECTION_START), existing.find(SECTION_END)
    if start != -1 and end > start:
        return existing[:start] + section.rstrip("\n") + existing[end + len(SECTION_END):]
    if not existing:
        return section
    return existing.rstrip("\n") + "\n\n" + section


def init(root: str, out=None) -> int:
    out = out or sys.stdout
    existing = ""
    agents_file = os.path.join(root, AGENTS_FILE)
    if os.path.lexists(agents_file):
        try:  # a symlink out of the project is refused: its target would be copied into AGENTS.md
            existing = read_regular(agents_file, DEFAULT_MAX_BYTES, Roots([root])).decode("utf-8")
        except (SourceError, UnicodeDecodeError) as exc:
            print(f"gradguard agent init: {AGENTS_FILE}: {exc}; nothing written", file=sys.stderr)
            return 1
    try:
        _write_in(root, SKILL_PATH, SKILL)
        _write_in(root, (AGENTS_FILE,), with_section(existing))
    except OSError as exc:
        print(f"gradguard agent init: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {os.path.join(*SKILL_PATH)} (a skill: when and how to run gradguard)", file=out)
    print(f"wrote the gradguard section of {AGENTS_FILE}", file=out)
    print("", file=out)
    print(RECIPES, end="", file=out)
    return 0


# ---------------------------------------------------------------- hook
def _payload(stream) -> dict:
    """The hook's JSON input (Claude Code, Codex and Cursor send one on stdin); {} when there is none."""
    try:
        if stream is None or stream.isatty():
            return {}
        data = stream.buffer.read(MAX_PAYLOAD_BYTES) if hasattr(stream, "buffer") else stream.read().encode()
        value = json.loads(data or b"{}")
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def changed_files(root: str) -> list[str] | None:
    """Python files and notebooks changed or added since the last commit, from `git status` (None outside a git
    repository). The repository is untrusted: no fsmonitor hook of its config runs."""
    try:
        run = subprocess.run(["git", "-c", "core.fsmonitor=false", "status", "--porcelain=v1", "-z",
                              "--untracked-files=all"], cwd=root, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if run.returncode != 0:
        return None
    entries = run.stdout.decode("utf-8", "surrogateescape").split("\0")
    out, skip_next = [], False
    for entry in entries:
        if skip_next:  # a rename's old name
            skip_next = False
            continue
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        skip_next = "R" in status or "C" in status
        if "D" in status or not path.endswith(agent.CHECKED_SUFFIXES):
            continue
        if os.path.isfile(os.path.join(root, path)):
            out.append(path)
    return sorted(out)


def hook(paths: list[str], cursor: bool, stdin=None, stdout=None, stderr=None) -> int:
    stdin = sys.stdin if stdin is None else stdin
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    payload = _payload(stdin)
    if payload.get("stop_hook_active") is True or (isinstance(payload.get("loop_count"), int) and payload["loop_count"] > 0):
        return EXIT_CLEAN  # sent back once already: never a loop
    root = os.path.realpath(os.getcwd())
    if not paths:
        changed = changed_files(root)
        paths = changed if changed is not None else ["."]
    if not paths:
        return EXIT_CLEAN
    _engine().read_roots = (root,)
    try:
        record = agent.check_paths_for_agent(paths, [root], None, DEFAULT_MAX_BYTES)
    except (agent.PathRefused, ConfigError) as exc:
        print(f"gradguard agent hook: {exc}", file=stderr)
        return 1  # not a finding: the agent is not held
    if not record["findings"]:
        return EXIT_CLEAN
    n = record["findings"]
    text = (f"gradguard found {n} PyTorch autograd problem{'s' if n != 1 else ''} in the files changed since the "
            f"last commit. Fix {'them' if n != 1 else 'it'} before finishing: apply the fix edits below (a `safe` "
            f"fix keeps what the program computes), or `gradguard check --fix PATH`.\n" + agent.project_text(record))
    if cursor:
        print(json.dumps({"followup_message": text}), file=stdout)
        return EXIT_CLEAN
    print(text, file=stderr)
    return EXIT_FINDINGS


def main(argv: list[str]) -> int:
    """Entry point for `gradguard agent`."""
    parser = argparse.ArgumentParser(prog="gradguard agent", description="Make coding agents run gradguard.")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    init_parser = sub.add_parser("init", help="write a skill file and an AGENTS.md section; print Stop-hook recipes")
    init_parser.add_argument("--root", default=".", metavar="DIR", help="the project folder (default: here)")
    hook_parser = sub.add_parser(
        "hook", help="check the changed files: exit 2 with the findings on stderr, 0 when there are none",
        description="A Stop hook for coding agents: checks the Python files and notebooks changed since the last "
                    "commit (or PATHs). Exit 0: nothing found; 2: findings, on stderr. Reads the hook's JSON from "
                    "stdin; a stop already sent back once (stop_hook_active) exits 0.")
    hook_parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the changed files)")
    hook_parser.add_argument("--cursor", action="store_true",
                             help="Cursor's contract: exit 0 with {\"followup_message\": ...} on stdout")
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:
        return 1 if exc.code else 0  # never 2: a hook's usage error must not read as findings
    if opts.action == "init":
        if not os.path.isdir(opts.root):
            print(f"gradguard agent init: --root {opts.root}: not a folder", file=sys.stderr)
            return 1
        return init(opts.root)
    if opts.action == "hook":
        return hook(opts.paths, opts.cursor)
    parser.print_help()
    return 1
