"""`.gradguard_cache/`: the results of unchanged files, so that a re-run costs one read and one hash per file.

An entry is valid for one file path when all of these are unchanged: the file's bytes, gradguard (its version
and the files of the installed package), the Python version, the file's effective configuration and language,
and the content of every project file the check read for imported classes (a model class defined in
another file). Entries are JSON (never pickle: a cloned repository could ship a hostile cache), one file per
checked path, written atomically. The folder ignores itself through a `.gitignore` inside.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path

from . import __version__
from .findings import Edit, Finding, Fix, ParseNote, Related
from .source import Span

CACHE_FORMAT = 1


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


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
        "related": [[_span(r.span), r.message] for r in f.related],
        "fix": None if f.fix is None else [f.fix.applicability, f.fix.message,
                                           [[_span(e.span), e.new_text] for e in f.fix.edits]],
        "runtime_error": f.runtime_error, "explanation": f.explanation,
    }


def _unfinding(d: dict) -> Finding:
    fix = d["fix"]
    return Finding(
        d["code"], d["name"], d["message"], Span(*d["span"]), d["severity"],
        tuple(Related(Span(*s), m) for s, m in d["related"]),
        None if fix is None else Fix(fix[0], fix[1], tuple(Edit(Span(*s), t) for s, t in fix[2])),
        d["runtime_error"], d["explanation"],
    )


def result_to_json(result) -> dict:
    return {
        "path": result.path,
        "findings": [_finding(f) for f in result.findings],
        "suppressed": [_finding(f) for f in result.suppressed],
        "notes": [[_span(n.span), n.message] for n in result.notes],
        "text": result.original_text,
        "lines": result.lines,
        "cells": None if result.cells is None else [result.cells.numbers, result.cells.starts],
        "decoded": None if result.decoded is None else [result.decoded.encoding, result.decoded.bom],
        "skipped": result.skipped,
    }


def result_from_json(d: dict):
    from .cli import Decoded, FileResult
    from .notebook import CellMap

    r = FileResult(d["path"])
    r.findings = [_unfinding(f) for f in d["findings"]]
    r.suppressed = [_unfinding(f) for f in d["suppressed"]]
    r.notes = [ParseNote(Span(*s), m) for s, m in d["notes"]]
    r.original_text = d["text"]
    r.lines = d["lines"]
    r.cells = None if d["cells"] is None else CellMap(*d["cells"])
    r.decoded = None if d["decoded"] is None else Decoded("", *d["decoded"])
    r.skipped = d["skipped"]
    r.applied_codes = Counter()
    r.cached = True
    return r


# ---------------------------------------------------------------- the store
class Cache:
    def __init__(self, folder: Path):
        self.folder = folder
        self.entries = folder / f"v{CACHE_FORMAT}"
        self._dep_hashes: dict[str, str | None] = {}
        self.hits = self.misses = 0

    @classmethod
    def open(cls, folder: str | os.PathLike) -> "Cache | None":
        """The cache in `folder` (created with its .gitignore), or None when it cannot be created."""
        path = Path(folder)
        try:
            (path / f"v{CACHE_FORMAT}").mkdir(parents=True, exist_ok=True)
            ignore = path / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Created by gradguard: results of unchanged files.\n*\n", encoding="utf-8")
            tag = path / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n"
                               "# This file is a cache directory tag created by gradguard.\n", encoding="utf-8")
        except OSError:
            return None
        return cls(path)

    def _entry(self, path: str) -> Path:
        name = hashlib.blake2b(os.path.abspath(path).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
        return self.entries / f"{name}.json"

    @staticmethod
    def key(path: str, digest: str, config, lang: str) -> str:
        return json.dumps([tool_fingerprint(), os.path.abspath(path), digest, repr(config), lang])

    def _dep_hash(self, path: str) -> str | None:
        if path not in self._dep_hashes:
            from .cli import SourceError, read_regular

            try:
                self._dep_hashes[path] = content_hash(read_regular(path, 10 * 1024 * 1024))
            except SourceError:
                self._dep_hashes[path] = None
        return self._dep_hashes[path]

    def get(self, path: str, config, lang: str, max_bytes: int):
        """The cached result for this file as it is now, or None."""
        from .cli import SourceError, read_regular

        try:
            data = read_regular(path, max_bytes)
        except SourceError:
            return None  # the real check reports it
        try:
            entry = json.loads(self._entry(path).read_text(encoding="utf-8"))
            if entry["key"] != self.key(path, content_hash(data), config, lang):
                raise KeyError("stale")
            if any(self._dep_hash(dep) != digest for dep, digest in entry["deps"].items()):
                raise KeyError("a dependency changed")
            result = result_from_json(entry["result"])
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, path: str, config, lang: str, result) -> None:
        if not result.digest:
            return
        entry = {"key": self.key(path, result.digest, config, lang), "deps": result.deps,
                 "result": result_to_json(result)}
        target = self._entry(path)
        try:
            fd, tmp = tempfile.mkstemp(prefix=".entry.", dir=str(self.entries))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh, ensure_ascii=False)
            os.replace(tmp, target)
        except OSError:
            try:
                os.unlink(tmp)
            except (OSError, UnboundLocalError):
                pass

    def close(self) -> None:
        pass
