"""`.gradguard_cache/`: the results of unchanged files, so that a re-run costs one read and one hash per file.

An entry is valid for one file path when all of these are unchanged: the file's bytes, gradguard (its version
and the files of the installed package), the Python version, the file's effective configuration and language,
and the content of every project file the check read for imported classes (a model class defined in
another file). Entries are JSON (never pickle), one file per checked path, written atomically. The folder ignores
itself through a `.gitignore` inside.

The folder is untrusted input: a repository can commit one, and CI checkout paths are predictable. So an entry
counts only when it carries an HMAC made with a per-user secret kept outside any repository (in the user's cache
directory, `$XDG_CACHE_HOME/gradguard/cache-key`), so a planted entry cannot hide a finding; entries are read
without following symlinks, only as regular files below a size cap, and validated against the schema, and any
entry that fails is a miss, never an error. The folder, `v1/` and the marker files are created without
following symlinks (a dangling link committed as `.gitignore` creates nothing anywhere).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

from . import __version__
from .checking import FileResult
from .decoding import Decoded
from .fileio import (DEFAULT_MAX_BYTES, SourceError, clean_stale_tmp, content_hash, create_marker,  # noqa: F401
                     open_folder, open_subfolder, private_key, read_in_folder, read_regular, replace_in_folder)
from .findings import Edit, Finding, Fix, ParseNote, Related
from .notebook import CellMap
from .source import Span

CACHE_FORMAT = 1
MAGIC = b"gradguard-cache-1 "
MAX_DEPTH = 12  # the deepest a valid entry nests (result -> findings -> fix -> edits -> span)


def key_folder() -> Path:
    """Where the per-user secret lives: the user's cache directory, never the checked repository."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gradguard"


@lru_cache(maxsize=1)
def secret() -> bytes:
    """The per-user HMAC key; when it cannot be kept, a key for this run only (entries then last one run)."""
    return private_key(key_folder()) or secrets.token_bytes(32)


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """gradguard's version, the Python version and the size and mtime of every file of the package
    (an edited rule in a development checkout invalidates the cache too)."""
    package = Path(__file__).resolve().parent
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{CACHE_FORMAT}|{__version__}|{sys.version}".encode())
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".csv", ".json")):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                h.update(f"{folder}/{name}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()


# ---------------------------------------------------------------- JSON form of results
def _span(s: Span) -> list:
    return [s.start_line, s.start_col, s.end_line, s.end_col]


def _finding(f: Finding) -> dict:
    return {
        "code": f.code, "name": f.name, "message": f.message, "span": _span(f.span), "severity": f.severity,
        "related": [[_span(r.span), r.message] + ([r.path] if r.path else []) for r in f.related],
        "fix": None if f.fix is None else [f.fix.applicability, f.fix.message,
                                           [[_span(e.span), e.new_text] for e in f.fix.edits]],
        "runtime_error": f.runtime_error, "explanation": f.explanation,
    }


def _unfinding(d: dict) -> Finding:
    fix = d["fix"]
    return Finding(
        d["code"], d["name"], d["message"], Span(*d["span"]), d["severity"],
        tuple(Related(Span(*r[0]), r[1], *r[2:]) for r in d["related"]),
        None if fix is None else Fix(fix[0], fix[1], tuple(Edit(Span(*s), t) for s, t in fix[2])),
        d["runtime_error"], d["explanation"],
    )


def result_to_json(result) -> dict:
    return {
        "path": result.path,
        "findings": [_finding(f) for f in result.findings],
        "elsewhere": [[path, _finding(f)] for path, f in result.elsewhere],
        "suppressed": [_finding(f) for f in result.suppressed],
        "notes": [[_span(n.span), n.message] for n in result.notes],
        "text": result.original_text,
        "lines": result.lines,
        "cells": None if result.cells is None else [result.cells.numbers, result.cells.starts],
        "decoded": None if result.decoded is None else [result.decoded.encoding, result.decoded.bom],
        "skipped": result.skipped,
    }


def result_from_json(d: dict):
    r = FileResult(d["path"])
    r.findings = [_unfinding(f) for f in d["findings"]]
    r.suppressed = [_unfinding(f) for f in d["suppressed"]]
    r.elsewhere = [(path, _unfinding(f)) for path, f in d["elsewhere"]]
    r.notes = [ParseNote(Span(*s), m) for s, m in d["notes"]]
    r.original_text = d["text"]
    r.lines = d["lines"]
    r.cells = None if d["cells"] is None else CellMap(*d["cells"])
    r.decoded = None if d["decoded"] is None else Decoded("", *d["decoded"])
    r.skipped = d["skipped"]
    r.applied_codes = Counter()
    r.cached = True
    return r


# ---------------------------------------------------------------- validation
def _depth(value, limit: int) -> int:
    """How deep `value` nests, counting no further than `limit` + 1 (iterative: no recursion to exhaust)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            todo.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _is_span(v) -> bool:
    return isinstance(v, list) and len(v) == 4 and all(type(n) is int and n >= 0 for n in v)


def _is_finding(f) -> bool:
    if not isinstance(f, dict) or not _is_span(f.get("span")):
        return False
    if not all(isinstance(f.get(k), str) for k in ("code", "name", "message", "severity", "runtime_error",
                                                    "explanation")):
        return False
    related = f.get("related")
    if not isinstance(related, list) or not all(isinstance(r, list) and len(r) in (2, 3) and _is_span(r[0])
                                                and all(isinstance(x, str) for x in r[1:]) for r in related):
        return False
    fix = f.get("fix")
    return fix is None or (isinstance(fix, list) and len(fix) == 3 and fix[0] in ("safe", "unsafe")
                           and isinstance(fix[1], str) and isinstance(fix[2], list)
                           and all(isinstance(e, list) and len(e) == 2 and _is_span(e[0]) and isinstance(e[1], str)
                                   for e in fix[2]))


def valid_entry(entry) -> bool:
    """Whether a decoded entry has exactly the shape `put` writes."""
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return False
    deps, r = entry.get("deps"), entry.get("result")
    if not isinstance(deps, dict) or not all(isinstance(k, str) and (v is None or isinstance(v, str))
                                             for k, v in deps.items()):
        return False
    if not isinstance(r, dict) or not isinstance(r.get("path"), str) or not isinstance(r.get("text"), str):
        return False
    if type(r.get("lines")) is not int or not isinstance(r.get("skipped"), str):
        return False
    if not all(isinstance(r.get(k), list) and all(_is_finding(f) for f in r[k]) for k in ("findings", "suppressed")):
        return False
    elsewhere = r.get("elsewhere")
    if not isinstance(elsewhere, list) or not all(isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)
                                                  and _is_finding(e[1]) for e in elsewhere):
        return False
    notes = r.get("notes")
    if not isinstance(notes, list) or not all(isinstance(n, list) and len(n) == 2 and _is_span(n[0])
                                              and isinstance(n[1], str) for n in notes):
        return False
    cells, decoded = r.get("cells"), r.get("decoded")
    if cells is not None and not (isinstance(cells, list) and len(cells) == 2
                                  and all(isinstance(c, list) and all(type(n) is int for n in c) for c in cells)):
        return False
    return decoded is None or (isinstance(decoded, list) and len(decoded) == 2 and isinstance(decoded[0], str)
                               and isinstance(decoded[1], bool))


# ---------------------------------------------------------------- the store
class Cache:
    def __init__(self, folder: Path, entries_fd: int):
        self.folder = folder
        self.entries = folder / f"v{CACHE_FORMAT}"
        self._entries_fd = entries_fd
        self._dep_hashes: dict[str, str | None] = {}
        self.hits = self.misses = 0

    @classmethod
    def open(cls, folder: str | os.PathLike) -> "Cache | None":
        """The cache in `folder` (created with its .gitignore), or None when it cannot be created or is not a
        real folder (a symlink in its place, or in place of `v1/`)."""
        path = Path(folder)
        try:
            folder_fd = open_folder(path, create=True)
        except OSError:
            return None
        try:
            create_marker(folder_fd, ".gitignore", "# Created by gradguard: results of unchanged files.\n*\n")
            create_marker(folder_fd, "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                                     "# This file is a cache directory tag created by gradguard.\n")
            entries_fd = open_subfolder(folder_fd, f"v{CACHE_FORMAT}", create=True)
        except OSError:
            return None
        finally:
            os.close(folder_fd)
        clean_stale_tmp(entries_fd)  # entries a killed run was writing
        return cls(path, entries_fd)

    def _name(self, path: str) -> str:
        name = hashlib.blake2b(os.path.abspath(path).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
        return f"{name}.json"

    def _entry(self, path: str) -> Path:
        return self.entries / self._name(path)

    @staticmethod
    def key(path: str, digest: str, config, lang: str) -> str:
        return json.dumps([tool_fingerprint(), os.path.abspath(path), digest, repr(config), lang])

    @staticmethod
    def _mac(name: str, payload: bytes) -> bytes:
        return hmac.new(secret(), name.encode() + b"\0" + payload, hashlib.sha256).hexdigest().encode()

    def _dep_hash(self, path: str) -> str | None:
        if path not in self._dep_hashes:
            try:
                self._dep_hashes[path] = content_hash(read_regular(path, DEFAULT_MAX_BYTES))
            except SourceError:
                self._dep_hashes[path] = None
        return self._dep_hashes[path]

    def _load(self, name: str, max_bytes: int):
        """The entry stored under `name` when it is ours and well formed, else None."""
        try:
            raw = read_in_folder(self._entries_fd, name, 16 * max_bytes + (1 << 20))
        except SourceError:
            return None
        head, sep, payload = raw.partition(b"\n")
        if not sep or not head.startswith(MAGIC) or not hmac.compare_digest(head[len(MAGIC):],
                                                                              self._mac(name, payload)):
            return None  # not written by this user's gradguard: planted, copied or corrupt
        try:
            entry = json.loads(payload.decode("utf-8"))
        except (ValueError, RecursionError, MemoryError):
            return None
        if _depth(entry, MAX_DEPTH) > MAX_DEPTH or not valid_entry(entry):
            return None
        return entry

    def get(self, path: str, config, lang: str, max_bytes: int):
        """The cached result for this file as it is now, or None."""
        try:
            data = read_regular(path, max_bytes)
        except SourceError:
            return None  # the real check reports it
        entry = self._load(self._name(path), max_bytes)
        try:
            if entry is None or entry["key"] != self.key(path, content_hash(data), config, lang):
                raise KeyError("stale")
            if any(self._dep_hash(dep) != digest for dep, digest in entry["deps"].items()):
                raise KeyError("a dependency changed")
            result = result_from_json(entry["result"])
        except (ValueError, KeyError, TypeError, IndexError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, path: str, config, lang: str, result) -> None:
        if not result.digest:
            return
        entry = {"key": self.key(path, result.digest, config, lang), "deps": result.deps,
                 "result": result_to_json(result)}
        name = self._name(path)
        payload = json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogateescape")
        try:
            replace_in_folder(self._entries_fd, name, MAGIC + self._mac(name, payload) + b"\n" + payload,
                              0o600, sync=False)
        except (OSError, UnicodeEncodeError):
            pass  # a cache that cannot be written only costs time

    def close(self) -> None:
        if self._entries_fd >= 0:
            os.close(self._entries_fd)
            self._entries_fd = -1
