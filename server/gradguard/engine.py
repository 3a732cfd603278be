"""The pipeline: Source -> blocks -> cached CST per block -> one Facts pass -> rules -> findings."""
from __future__ import annotations

import dataclasses
import gc
import logging
import os
import re
import stat
from pathlib import Path

import libcst as cst

from .config import Config
from .facts.analysis import FileAnalysis
from .findings import Finding, ParseNote, Report, edits_overlap
from .noqa import suppressed_codes
from .parse import ParseCache, ParsedBlock, block_shape, screen_blocks
from .project import LinkedProgram, ProjectIndex, ProjectLinker, index_blocks, may_import_project, relabel
from .rules import RuleContext, all_rules
from .source import Block, Source, Span, split_blocks, split_blocks_after_edit, split_statements

log = logging.getLogger("gradguard")
# Call sites (`train(`), not `def train(`. `\b` first, so the lookbehinds run at word starts only; the word is
# taken whole by a lookahead (atomic), so a word not followed by `(` is not retried letter by letter: half the time.
CALLED_NAME = re.compile(r"\b(?<!def )(?<!class )(?=([A-Za-z_][A-Za-z0-9_]*))\1\s*\(")

from .parse import WRITE_HINT  # noqa: E402,F401  (defined next to the cache that remembers it per block)


class Engine:
    """Checks files; holds the per-block parse cache, so one Engine per process or server."""

    def __init__(self, cache: ParseCache | None = None, editor: bool = True, project: bool = True):
        # An editor re-checks the same files: keep thousands of parsed blocks. A batch run checks each file
        # once: cached CST nodes would only make every garbage collection walk millions of live objects
        # (measured on timm: +27% CPU with 256 cached blocks).
        self.editor = editor
        self.prescreen = not editor  # leave out of the analysis the blocks no finding can involve (parse.screen_blocks)
        self.cache = cache or ParseCache(5000 if editor else 16)
        # (id(block module), file context) -> (module, Facts of that block's functions); the module is kept
        # in the value so that an id is never reused for another module while its entry lives.
        self.block_facts = _LRU(4000 if editor else 1)
        # id(block module) -> (module, what FileAnalysis indexes of that block and the names it calls): an edit
        # re-indexes only the blocks it re-parsed (re-walking 5,000 lines per keystroke cost ~30 ms)
        self.block_index = _LRU(2000 if editor else 1)
        # path -> the last module-level run of that document and what it could read (FileAnalysis._module_run): an
        # edit inside a function that module-level code does not reach reuses it. Not kept by a batch run.
        self.module_runs = _LRU(64) if editor else None
        self.module_code_runs = 0  # how many checks interpreted module-level code (tests count the reuses)
        self.members_ran: list[str] = []  # the class members the last check interpreted anew (tests count them)
        self._imported = _LRU(512)  # (path, mtime, size) -> classes of a user module imported by checked files
        self._last_source = _LRU(64)  # path -> the Source last checked there (edits re-split only what changed)
        # When set (the language server sets its workspace folders), project files beside a checked file are
        # read only inside these folders: a repository's symlink to /dev/zero or ~/.ssh is never opened.
        self.read_roots: tuple[str, ...] | None = None
        self._cancelled = None  # the running check's cancellation poll (see check)
        # A file is analysed with the definitions it imports from the user's other files (project.py): the
        # project is one program. Off, each file is analysed alone (imported classes summarised).
        self.project = project
        self.linker = ProjectLinker(self._project_text, lambda p: self._readable(p) is not None)
        self._last_entry = _LRU(64)  # path -> the entry's own Source last checked (its blocks re-split per edit)
        self._entry_imports: dict = {}  # statement group text -> its index (project.index_blocks)
        self._chunk_blocks = _LRU(4096)  # linked chunk text -> its blocks
        self._project_texts = _LRU(512)  # (path, mtime, size) -> text of a project file read for linking
        self._class_texts = _LRU(64)  # the same, for files read for an imported class (their blocks are cached)
        self.index = ProjectIndex(self.linker, self._project_text)
        # real path -> the text an editor holds for an open project file (read instead of the disk's)
        self.overlay: dict[str, str] = {}

    def check(self, text: str, path: str = "<stdin>", config: Config | None = None, lang: str | None = None,
              cancelled=None) -> Report:
        """Analyse one file's text and return its findings (suppressions and config applied). `cancelled() -> bool`
        is polled between interpreted statements; when it says so, `AnalysisCancelled` is raised (an editor's newer
        edit of the same document)."""
        # Garbage collection while a file is checked (measured on timm): a full collection walks every live
        # object, parsed trees and the imported classes' trees kept across files (~100k nodes), and the ~30 of a
        # run cost 2-3 s, 25% of the parsing; they are put off (an editor restores the thresholds between
        # checks; a batch run, file after file, still collects every 100 middle-generation collections).
        # Young collections run every 10,000 allocations rather than 700: parsing and interpreting make many
        # objects that live briefly (1.9 -> 1.1 s of collection).
        thresholds = gc.get_threshold()
        gc.set_threshold(max(thresholds[0], 10_000), thresholds[1], max(thresholds[2], 1_000 if self.editor else 100))
        try:
            self._cancelled = cancelled
            return self._check(text, path, config, lang)
        finally:
            self._cancelled = None
            gc.set_threshold(*thresholds)

    def _check(self, text: str, path: str, config: Config | None, lang: str | None) -> Report:
        config = config or Config()
        lang = lang or config.language or "en"
        source = Source(text, path)
        previous_entry = self._last_entry.get(path)
        if previous_entry is not None:
            blocks = split_blocks_after_edit(previous_entry.text, previous_entry.blocks, source.text)
            if blocks is not None:
                source.blocks = blocks  # fills the cached property
        self._last_entry[path] = source
        program = self._link(path, source) if self.project else None
        if program is not None:
            source = self._joined_source(source, program)
        previous = self._last_source.get(path)
        before = {}
        if previous is not None:
            before = self._replaced_parses(previous, source)
            self._drop_superseded(path, previous, source)
        self._last_source[path] = source
        if self.editor:
            self._fit_caches(len(source.blocks))
        report = Report(path)
        report.source = source
        # Blocks that cannot take part in a finding are checked by CPython's parser only (a batch run; an editor
        # parses every block: hover describes the names of code that cannot go wrong too).
        left_out = screen_blocks(source.blocks) if self.prescreen else {}
        parsed, lazy = [], []
        for i, block in enumerate(source.blocks):
            entry = left_out.get(i)
            if entry is not None:
                entry.on_failure = lambda failed, block=block: _note(report, block, failed)
                lazy.append(ParsedBlock(block, entry))
            else:
                parsed.extend(self._parse_block(block, before.get(block.text)))
        for pb in parsed:
            if pb.module is None:
                _note(report, pb.block, pb.parsed)
        good = [pb for pb in parsed if pb.module is not None]
        analysis = self._facts(path, good, report, [pb.block.text for pb in lazy],
                               linked_from=program.entry_lines if program is not None else None,
                               linked=program.linked if program is not None else None)
        if analysis is None:
            return report
        facts = analysis.facts
        if lazy:
            good = sorted(good + lazy, key=lambda pb: pb.block.start_line)
        locator = Locator(source, good, None)
        facts.locator = locator
        report.facts = facts
        report.parse_notes.extend(_budget_notes(facts, locator, program.entry_lines if program is not None else None))
        ctx = RuleContext(source=source, facts=facts, locator=locator, lang=lang, program=program)
        findings: list[Finding] = []
        for rule in all_rules():
            if not config.is_enabled(rule.code, path):
                continue
            try:
                findings.extend(rule.check(ctx))
            except RecursionError:  # a tree deeper than the guard's estimate: say so, never drop silently
                log.warning("%s: rule %s: too deeply nested", path, rule.code)
                report.parse_notes.append(ParseNote(Span(0, 0, 0, 0), f"too deeply nested for {rule.code}; "
                                                    f"{rule.code} not checked in this file"))
            except Exception:  # one rule's bug must not hide the others' findings
                log.exception("%s: rule %s failed", path, rule.code)
        for i, f in enumerate(findings):
            if f.fix is not None and edits_overlap(f.fix.edits):
                log.warning("%s: %s at line %d: a fix with overlapping edits is not offered", path, f.code,
                            f.span.start_line + 1)
                findings[i] = dataclasses.replace(f, fix=None)
        kept = []
        for f in findings:  # the suppressed ones are kept aside for the CLI's unused-noqa report
            (report.suppressed if f.code in suppressed_codes(source, f.span.start_line) else kept).append(f)
        findings = kept
        findings.sort(key=lambda f: (f.span.start_line, f.span.start_col, f.code))
        findings = _dedupe(findings)
        if program is not None:
            report.program = program
            findings, report.elsewhere = _place_findings(findings, program, lang)
            report.parse_notes = [n for n in report.parse_notes if n.span.start_line < program.entry_lines]
            report.parse_notes.extend(ParseNote(Span(line, 0, line, 0), message) for line, message in program.budget_notes)
        report.findings = findings
        if not self.editor:
            # The interpreter's scopes and values refer to each other, so they are freed only by a full
            # collection, and they hold the file's parsed trees: dropped now, the trees go by reference count.
            # (An editor keeps them: its caches reuse them on the next keystroke.)
            analysis.release()
            self.block_facts.clear()  # its values referred to the released scopes
            # Nor does the report keep the Facts (hover is an editor's): their problems hold the file's trees,
            # which the collections right after the check then walked (timm: 2.7 -> 1.1 s of collection).
            report.facts = None
        return report

    def _fit_caches(self, blocks: int) -> None:
        """An editor's caches hold at least every block of the file being edited, plus slack: a file of
        more than 5,000 top-level blocks was otherwise fully re-parsed (LRU order) on every keystroke."""
        needed = blocks + 512
        if self.cache._max < needed:
            self.cache._max = needed
        if self.block_facts.size < needed:
            self.block_facts.size = needed
        if self.block_index.size < 2 * needed:
            self.block_index.size = 2 * needed  # two entries per block

    def _facts(self, path: str, good: list[ParsedBlock], report: Report,
               left_out: list[str] = (), linked_from: int | None = None, linked=None) -> FileAnalysis | None:
        """One Facts pass over the parsed blocks; returns the analysis that ran it, its `facts` filled in. A block
        too deep for the recursive interpreter (a RecursionError) is left out with a note and the pass re-run,
        deepest block first, so one deep expression costs its own block, not the file's findings. Removes
        left-out blocks from `good`. `left_out`: the texts of blocks the pre-screen kept out of the pass (the
        names they call still count: a problem escaping to a caller is not reported where the file calls it)."""
        left_out_calls = set().union(*(CALLED_NAME.findall(text) for text in left_out))
        for _attempt in range(12):
            modules = [pb.parsed.module for pb in good]
            hot = [pb.parsed.hot(pb.block.text) for pb in good]
            quiet = {id(module) for module, is_hot in zip(modules, hot) if not is_hot}
            if linked_from is not None:  # linked definitions run when this file's code calls them, not on their own
                linked_blocks = {id(pb.parsed.module) for pb in good if pb.block.start_line >= linked_from}
                if linked_blocks - quiet:
                    # as in one file, module-level code runs when any block can go wrong: `train(G(), D(), x)`
                    # reaches the linked loop that steps and back-propagates only through that run
                    quiet -= {id(pb.parsed.module) for pb in good
                              if pb.block.start_line < linked_from and not pb.block.is_definition}
                quiet |= linked_blocks
                hot = [is_hot and pb.block.start_line < linked_from for pb, is_hot in zip(good, hot)]
            hot_text = "".join(pb.block.text for pb, is_hot in zip(good, hot) if is_hot)
            try:
                called = set().union(left_out_calls, *(self._called_in(pb) for pb in good))
                analysis = FileAnalysis(modules, quiet, self.block_facts, block_index=self.block_index,
                                        external_classes=lambda full: self.imported_class(path, full),
                                        hot_text=hot_text, called_names=called, describe_quiet=self.editor,
                                        texts={id(pb.parsed.module): pb.block.text for pb in good},
                                        module_runs=self.module_runs, document=path, linked=linked,
                                        cancelled=self._cancelled)
                analysis.run()
                self.module_code_runs += analysis.module_code_ran
                self.members_ran = analysis.members_ran
                return analysis
            except RecursionError:
                if not good:
                    break
                deepest = max(good, key=lambda pb: block_shape(pb.block.text).depth)
                at = good.index(deepest)
                if not deepest.block.is_definition:
                    parts = [self.cache.parse(b) for b in split_statements(deepest.block)]
                    if len(parts) > 1 and all(p.module is not None for p in parts):
                        good[at:at + 1] = parts  # leave out only the deep statement, not the imports beside it
                        continue
                del good[at]
                block = deepest.block
                log.warning("%s: lines %d-%d too deeply nested to analyse", path, block.start_line + 1, block.end_line)
                report.parse_notes.append(ParseNote(
                    Span(block.start_line, 0, block.start_line, 0),
                    f"too deeply nested to analyse ({_lines(block)} not analysed)"))
        log.warning("%s: too deeply nested to analyse", path)
        good.clear()
        report.parse_notes.append(ParseNote(Span(0, 0, 0, 0), "too deeply nested to analyse; the file is not analysed"))
        return None

    def _called_in(self, pb) -> set:
        """The names a block calls (`train(`, `.step(`), remembered with the block's parsed module."""
        module = pb.parsed.module
        entry = self.block_index.get(("called", id(module)))
        if entry is None or entry[0] is not module:
            entry = self.block_index[("called", id(module))] = (module, set(CALLED_NAME.findall(pb.block.text)))
        return entry[1]

    def _parse_block(self, block, before=None) -> list:
        pb = self.cache.parse(block, before)
        if pb.module is None and not block.is_definition:
            # keep the statements that do parse (the imports above a broken line, say)
            return [self.cache.parse(sub) for sub in split_statements(block)]
        return [pb]

    def retain(self, live_block_texts: set[str], slack: int = 200) -> None:
        """Drop cached parses and block facts of superseded text: keep the live blocks and `slack` others.

        A server calls this after each analysis with the blocks of its open documents; every keystroke
        inside a function makes a new block text, which would otherwise stay cached.
        """
        entries = self.cache._entries
        if len(entries) > len(live_block_texts) + 2 * slack:
            for text in list(entries):  # oldest first
                if len(entries) <= len(live_block_texts) + slack:
                    break
                if text not in live_block_texts:
                    del entries[text]
        kept = {id(entry.module) for entry in entries.values()}
        for cache in (self.block_facts, self.block_index):
            for key in [k for k, v in cache.items() if id(v[0]) not in kept]:
                del cache[key]
        if self.module_runs is not None:
            for key in [k for k, v in self.module_runs.items()
                        if any(type(m) is not int and id(m) not in kept for m in v[1])]:
                del self.module_runs[key]

    def _replaced_parses(self, previous: Source, source: Source) -> dict:
        """New block text -> (text, parse) of the definition block that stood at its line before the edit, for
        each block the edit made (parse.splice_member builds on it)."""
        entries = self.cache._entries
        new = [b for b in source.blocks if b.is_definition and b.text not in entries]
        if not new or len(new) > 4:  # not a keystroke (a paste, a new file): its blocks are parsed whole
            return {}
        old_at = {b.start_line: b for b in previous.blocks if b.is_definition and b.text in entries}
        out = {}
        for block in new:
            old = old_at.get(block.start_line)
            entry = entries[old.text] if old is not None else None
            # (a block the pre-screen left unparsed is not parsed for this)
            if entry is not None and getattr(entry, "parsed_yet", True) and entry.module is not None:
                out[block.text] = (old.text, entry)
        return out

    def _drop_superseded(self, path: str, previous: Source, source: Source) -> None:
        """Blocks of this path's previous text that the edit replaced, and that no other checked path
        still has, will not be asked for again: drop their parses and facts (an editor session would
        otherwise cache every keystroke's version of the edited function)."""
        current = {b.text for b in source.blocks}
        gone = {b.text for b in previous.blocks} - current
        if not gone:
            return
        for other_path, other in self._last_source.items():
            if other_path != path:
                gone -= {b.text for b in other.blocks}
        dropped = set()
        for text in gone:
            entry = self.cache._entries.get(text)
            if entry is not None:
                dropped.add(id(entry.module))
                self.cache.drop(text)
        if dropped:
            for key in [k for k in self.block_facts if k[0] in dropped]:
                del self.block_facts[key]
            for key in [k for k in self.block_index if k[1] in dropped]:
                del self.block_index[key]

    def forget(self, path: str) -> None:
        """A closed document: its last text is no longer needed for incremental splitting."""
        self._last_source.pop(path, None)
        self._last_entry.pop(path, None)
        if self.module_runs is not None:
            self.module_runs.pop(path, None)

    def _link(self, path: str, source: Source) -> LinkedProgram | None:
        """The project definitions this file imports (project.ProjectLinker), or None."""
        if path.startswith("<") or not may_import_project(source.text):
            return None
        index = index_blocks(path, source.blocks, self._entry_imports)
        # Entry points link: scripts, notebooks, test files. A library module is checked on its own (its callers'
        # runs reach it), which keeps a library's check as cheap as before.
        if not index.imports or not (index.runs_code or path.endswith(".ipynb")):
            return None
        program = self.linker.link(path, source.text, index)
        if program is not None:
            self.note_read(program.files)
        return program

    def _joined_source(self, entry: Source, program: LinkedProgram) -> Source:
        """The entry's text and the linked chunks as one Source; its blocks are the entry's and each chunk's
        (a chunk's split is cached by its text)."""
        joined = Source(program.joined(entry.text), entry.path)
        blocks = list(entry.blocks)
        if not entry.text.endswith("\n") and blocks:
            last = blocks[-1]
            blocks[-1] = Block(last.start_line, last.end_line, last.text + "\n", last.is_definition)
        line = program.entry_lines
        for chunk in program.chunks:
            own = self._chunk_blocks.get(chunk.text)
            if own is None:
                own = self._chunk_blocks[chunk.text] = split_blocks(chunk.text)
            blocks.extend(Block(b.start_line + line, b.end_line + line, b.text, b.is_definition) for b in own)
            line += chunk.lines
        joined.blocks = blocks
        return joined

    def _project_text(self, path) -> str | None:
        """A project file's text for linking: an editor's open document, else a regular file inside the read roots,
        size-capped, UTF-8."""
        real = self._readable(path)
        if real is None:
            return None
        held = self.overlay.get(str(real))
        if held is not None:
            return held
        read = self._file_text(real, self._project_texts)
        return read[1] if read is not None else None

    def _file_text(self, path: Path, cache: "_LRU") -> tuple | None:
        """((path, mtime, size), text) of a project file read for its definitions: UTF-8, at most MAX_IMPORTED_BYTES,
        newlines normalised; `cache` keeps the text by that key. None when it cannot be read."""
        try:
            info = path.stat()
            key = (str(path), info.st_mtime_ns, info.st_size)
        except OSError:
            return None
        text = cache.get(key)
        if text is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read(MAX_IMPORTED_BYTES + 1)
                if len(data) > MAX_IMPORTED_BYTES:
                    return None
                text = decode_source(data)
            except (OSError, UnicodeDecodeError):
                return None
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            cache[key] = text
        return key, text

    def importers_of(self, path: str) -> list[str]:
        """The project files whose run may put findings in `path` (they import it, directly or through a package)."""
        if not self.project or path.startswith("<") or not path.endswith(".py"):
            return []
        return self.index.importers_of(path)

    def note_read(self, paths) -> None:
        """Project files a check read or looked for (a caching caller records them as dependencies)."""

    def imported_class(self, importer: str, qualified: str):
        """The ClassInfo of `pkg.module.Class` when that module is a file of the user's project beside `importer`.

        Only reads and parses the file (never imports it). Searches the importer's folder and its parents up to
        the folder holding pyproject.toml or .git.
        """
        name = qualified.rpartition(".")[2]
        for candidate in self.import_candidates(importer, qualified):
            real = self._readable(candidate)
            if real is not None:
                return self._classes_of(real).get(name)
        return None

    def import_candidates(self, importer: str, qualified: str):
        """The files that may define the class `qualified`, in the order they are looked for: `pkg/module.py`
        or `pkg/module/__init__.py` beside the importer and in its parents up to the project root; for a
        relative import (`from .models.gen import Gen`: `.models.gen.Gen`) only where the dots point."""
        module, _, name = qualified.rpartition(".")
        if not module or not name[:1].isupper() or importer.startswith("<"):
            return
        folder = Path(importer).resolve().parent
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            base = folder
            for _ in range(dots - 1):
                base = base.parent
            rest = module[dots:]
            if not rest:
                yield base / "__init__.py"  # `from . import Gen`: the package's own __init__
                return
            rel = Path(*rest.split("."))
            yield base / rel.with_suffix(".py")
            yield base / rel / "__init__.py"
            return
        rel = Path(*module.split("."))
        for base in [folder, *folder.parents][:6]:
            yield base / rel.with_suffix(".py")
            yield base / rel / "__init__.py"
            if (base / "pyproject.toml").exists() or (base / ".git").exists():
                return

    def _readable(self, path: Path) -> Path | None:
        """`path` resolved, if it is a regular file of at most MAX_IMPORTED_BYTES inside the read roots."""
        try:
            real = os.path.realpath(path)
            if self.read_roots is not None and not any(_inside(real, root) for root in self.read_roots):
                return None
            info = os.stat(real)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IMPORTED_BYTES:
            return None
        return Path(real)

    def _classes_of(self, path: Path) -> "_ModuleClasses":
        """The classes a project file defines, read lazily: its text is split into blocks once and only the block
        of a class asked for is parsed (parsing every imported module whole cost ~20% of a check of timm, whose
        files import each other's layers)."""
        read = self._file_text(path, self._class_texts)
        if read is None:
            return _ModuleClasses(self, [])
        key, text = read
        cached = self._imported.get(key)
        if cached is None:
            cached = self._imported[key] = _ModuleClasses(self, Source(text, str(path)).blocks)
        return cached

    def check_file(self, path: str | Path, config: Config | None = None, lang: str | None = None) -> Report:
        data = Path(path).read_bytes()
        return self.check(decode_source(data), str(path), config, lang)


MAX_IMPORTED_BYTES = 2 * 1024 * 1024  # a project module read for its classes (never imported)


def _inside(path: str, root: str) -> bool:
    root = root.rstrip("/\\") or root
    return path == root or path.startswith(root + os.sep) or path.startswith(root + "/")


def _note(report: Report, block, parsed) -> None:
    """The parse note of a block that did not parse: where CPython (or libcst) says, and the lines left out."""
    line, col = parsed.error_at
    start = block.start_line + line
    report.parse_notes.append(ParseNote(Span(start, col, start, col), f"{parsed.error} ({_lines(block)} not analysed)"))


def _budget_notes(facts, locator, entry_lines: int | None = None) -> list[ParseNote]:
    """A note at each line where a run's budget ran out: what follows was not checked in full, so the file never
    passes as clean. A cut inside a definition linked from another file (past `entry_lines`) is said on line 1.
    One note per budget and file, the first cut's (each function run on its own may meet the same limit: a chain
    of N helpers deeper than 8 would give N notes, and place N blocks)."""
    notes = []
    said = set()
    for node, top, message in facts.budget_cuts:
        if message in said:
            continue
        said.add(message)
        span = locator.span(node, top)
        line = span.start_line if span is not None else 0
        if entry_lines is not None and line >= entry_lines:
            line, message = 0, "in code linked from another file, " + message.replace(" ran out at this line", " ran out")
        notes.append(ParseNote(Span(line, 0, line, 0), message))
    return notes


def _lines(block) -> str:
    """'lines 3-7' or 'line 3' (1-based, as users count)."""
    # trailing blank lines (and the empty line after the last newline) belong to the block but hold no code
    first = block.start_line + 1
    last = first + block.text.rstrip().count("\n")
    return f"line {first}" if first == last else f"lines {first}-{last}"


_CLASS_HEAD = re.compile(r"(?:@[^\n]*\n\s*)*class\s+([A-Za-z_]\w*)")


class _ModuleClasses:
    """`get(name)`: the ClassInfo of a top-level class of an imported file, parsing only that class's block."""

    def __init__(self, engine: "Engine", blocks):
        self._engine = engine
        self._blocks = {}
        self._imports = []  # the blocks of simple statements that import (what the class's names refer to)
        for block in blocks:
            head = _CLASS_HEAD.match(block.text.lstrip())
            if head is not None:
                self._blocks.setdefault(head.group(1), block)
            elif not block.is_definition and "import" in block.text:
                self._imports.append(block)
        self._infos: dict = {}
        self._import_modules: list | None = None

    def get(self, name: str):
        if name not in self._infos:
            block = self._blocks.get(name)
            info = None
            if block is not None:
                if self._import_modules is None:  # parsed once per file, for every class asked of it
                    parsed = (self._engine.cache.parse(b) for b in self._imports)
                    self._import_modules = [pb.module for pb in parsed if pb.module is not None]
                own = self._engine.cache.parse(block).module
                if own is not None:
                    info = FileAnalysis([*self._import_modules, own]).classes.get(name)
            self._infos[name] = info
        return self._infos[name]


class _LRU(dict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def __setitem__(self, key, value):
        if len(self) >= self.size:
            del self[next(iter(self))]
        super().__setitem__(key, value)


def decode_source(data: bytes) -> str:
    """Python source bytes as text: UTF-8 (with or without BOM); raises UnicodeDecodeError otherwise."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8")


def _place_findings(findings: list[Finding], program: LinkedProgram, lang: str) -> tuple[list, list]:
    """The findings of a joined program, each in the file its primary span lies in: (this file's findings,
    [(other file, finding)]). Spans, related places and fix edits are put in their files' lines; a fix whose edits
    are not all in the finding's file is not offered; messages name other files' lines (`line 9 of losses.py`)."""
    own, elsewhere = [], []
    for f in findings:
        path, span = _place_span(f.span, program)
        if path is None:
            continue
        related = []
        for r in f.related:
            rpath, rspan = _place_span(r.span, program)
            if rpath is not None:
                related.append(dataclasses.replace(r, span=rspan, path="" if rpath == path else rpath,
                                                   message=relabel(r.message, program, path, lang)))
        fix = f.fix
        if fix is not None:
            edits = []
            for e in fix.edits:
                epath, espan = _place_span(e.span, program)
                if epath != path:
                    edits = None
                    break
                edits.append(dataclasses.replace(e, span=espan))
            fix = None if edits is None else dataclasses.replace(fix, edits=tuple(edits),
                                                                 message=relabel(fix.message, program, path, lang))
        placed = dataclasses.replace(f, span=span, related=tuple(related), fix=fix,
                                     message=relabel(f.message, program, path, lang),
                                     explanation=relabel(f.explanation, program, path, lang))
        if path == program.entry_path:
            own.append(placed)
        else:
            elsewhere.append((path, placed))
    return own, elsewhere


def _place_span(span: Span, program: LinkedProgram) -> tuple[str | None, Span]:
    start_path, start = program.locate(span.start_line)
    end_path, end = program.locate(span.end_line)
    if start_path != end_path:
        return None, span
    return start_path, Span(start, span.start_col, end, span.end_col)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in findings:
        key = (f.code, f.span)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


class Locator:
    """Finds a node's span: positions are computed per block, only for blocks that report."""

    def __init__(self, source: Source, blocks: list[ParsedBlock], modules: list[cst.Module]):
        self.source = source
        self.blocks = blocks
        self._top_block: dict[int, ParsedBlock] = {}
        self._code: dict[int, tuple[cst.CSTNode, str]] = {}  # id(node) -> (node, its code)
        self._unparsed = []  # blocks the pre-screen left out whose tree no rule has asked for yet
        for pb in blocks:
            if not getattr(pb.parsed, "parsed_yet", True):
                self._unparsed.append(pb)
                continue
            for stmt in pb.module.body:
                self._top_block[id(stmt)] = pb

    def _take_new_trees(self) -> None:
        """Index the left-out blocks a rule has parsed since (their nodes can be asked for now)."""
        still = []
        for pb in self._unparsed:
            if pb.parsed.parsed_yet:
                for stmt in pb.module.body:
                    self._top_block[id(stmt)] = pb
            else:
                still.append(pb)
        self._unparsed = still

    def span(self, node: cst.CSTNode, hint: cst.CSTNode | None = None) -> Span | None:
        if self._unparsed and id(node) not in self._top_block and (hint is None or id(hint) not in self._top_block):
            self._take_new_trees()
        if hint is not None:
            pb = self._top_block.get(id(hint))
            if pb is not None:
                found = pb.span(node)
                if found is not None:
                    return found
        pb = self._top_block.get(id(node))
        if pb is not None:
            return pb.span(node)
        for pb in self.blocks:
            if pb.parsed.positions is not None:
                found = pb.span(node)
                if found is not None:
                    return found
        for pb in self.blocks:
            if pb.parsed.positions is None and getattr(pb.parsed, "parsed_yet", True):
                found = pb.span(node)
                if found is not None:
                    return found
        return None

    def code(self, node: cst.CSTNode) -> str:
        """The node's code, generated once per node: rules ask for the same statement once per problem
        (2,000 writes on one line asked for its 22 KB 2,000 times: 62 s)."""
        cached = self._code.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1]
        code = cst.Module([]).code_for_node(node)
        self._code[id(node)] = (node, code)
        return code


_DEFAULT = Engine()


def check_text(text: str, path: str = "<stdin>", config: Config | None = None, lang: str | None = None) -> Report:
    return _DEFAULT.check(text, path, config, lang)


def check_file(path: str | Path, config: Config | None = None, lang: str | None = None) -> Report:
    return _DEFAULT.check_file(path, config, lang)
