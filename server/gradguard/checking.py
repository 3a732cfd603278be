"""One file's check: read, decode, analyse, and with --fix or --add-noqa the fixed text (written by fixwrite); and
the check of a list of paths (`check_paths`) that the command line, MCP and the editor's agent tools share."""
from __future__ import annotations

import io
import os
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from .config import Config, ConfigResolver
from .decoding import Decoded, decode_python
from .discovery import NOTEBOOK_SUFFIX, discover
from .fileio import DEFAULT_MAX_BYTES, SourceError, content_hash, read_regular
from .findings import SAFE, Edit, Finding, Fix, ParseNote
from .fixwrite import apply_edits
from .i18n import locale_language
from .notebook import CellMap, Notebook, NotebookError
from .source import Span


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[ParseNote] = field(default_factory=list)
    error: str = ""  # could not read or decode
    skipped: str = ""  # deliberately not checked (a notebook in another language)
    fixed_text: str | None = None  # after --fix (for a notebook: the joined program)
    original_text: str = ""  # the analysed text (for a notebook: the joined program)
    applied: int = 0
    noqa_added: int = 0
    applied_codes: Counter = field(default_factory=Counter)
    lines: int = 0
    suppressed: list[Finding] = field(default_factory=list)
    cells: CellMap | None = None  # a notebook's cell layout
    decoded: Decoded | None = None
    notebook: Notebook | None = None
    deps: dict = field(default_factory=dict)  # files read for imported classes -> their content hash
    digest: str = ""  # content hash of the bytes read (the cache key)
    unfixed_findings: list[Finding] | None = None  # a Python file's findings before --fix (a write can fail)
    cached: bool = False
    # Findings this file's run puts in other project files (project.py): [(path, Finding)], placed by
    # `place_project_findings` in those files' results
    elsewhere: list = field(default_factory=list)

    def where(self, line: int) -> tuple[int | None, int]:
        """(cell number or None, line) as users count them, for a 0-based analysed line."""
        if self.cells is None:
            return None, line
        return self.cells.locate(line)


_ENGINE = None


def _engine():
    global _ENGINE
    if _ENGINE is None:
        from .engine import Engine

        class RecordingEngine(Engine):
            """Remembers which project files a check read for imported classes (the cache's dependencies)."""

            read: set

            def _classes_of(self, path):
                self.read.add(str(path))
                return super()._classes_of(path)

            def note_read(self, paths):
                self.read.update(paths)

            def import_candidates(self, importer, qualified):
                # Every candidate the engine looks at, found or not: a model.py created later must invalidate
                # the importer's entry too.
                for candidate in super().import_candidates(importer, qualified):
                    self.read.add(str(candidate))
                    yield candidate

        _ENGINE = RecordingEngine(editor=False)
        _ENGINE.read = set()
    return _ENGINE


def _edits_of(f: Finding):
    return [(e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col, e.new_text) for e in f.fix.edits]


def apply_fixes(text: str, findings: list[Finding]) -> tuple[str, int]:
    """Apply non-overlapping fixes (whole fixes only), last first so offsets stay valid."""
    ordered = sorted(findings, key=lambda f: (f.span.start_line, f.span.start_col))
    text, applied = apply_edits(text, [(f, _edits_of(f)) for f in ordered])
    return text, len(applied)


def _run_engine(text: str, path: str, config: Config, lang: str, deps: set):
    engine = _engine()
    engine.read = set()
    report = engine.check(text, path, config, lang)
    deps |= engine.read
    return report


def check_one(path: str, text: str | None, config: Config, lang: str, fix_mode: str, max_bytes: int,
              add_noqa: bool = False, data: bytes | None = None) -> FileResult:
    """Check one file (a .py file or a notebook); with fix_mode 'safe' or 'unsafe', also compute the fixed text.

    `text` is given for code that is not on disk (tests, stdin); else `data` (stdin bytes) or the file is read.
    """
    result = FileResult(path)
    try:
        if text is None:
            if data is None:
                data = read_regular(path, max_bytes)
            result.digest = content_hash(data)
            if path.endswith(NOTEBOOK_SUFFIX):
                return _check_notebook(result, data, config, lang, fix_mode, add_noqa)
            result.decoded = decode_python(data)
            text = result.decoded.text
        else:
            result.decoded = Decoded(text)
    except (SourceError, NotebookError) as exc:
        result.error = str(exc)
        return result
    if "\x00" in text:
        result.error = "contains NUL bytes (binary?); not analysed"
        return result
    result.original_text = text
    result.lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1  # = len(fixwrite._raw_line_starts(text))
    deps: set = set()
    report = _run_engine(text, path, config, lang, deps)
    _take(result, report)
    if fix_mode != "none" or add_noqa:
        result.unfixed_findings = list(result.findings)
        current = text
        for _ in range(5):  # fixes can expose further fixes; stop when nothing applies
            fixable = _fixable(report.findings, fix_mode)
            if not fixable:
                break
            current, applied = apply_edits(current, [(f, _edits_of(f)) for f in fixable])
            if not applied:
                break
            _count(result, applied)
            report = _run_engine(current, path, config, lang, deps)
        if add_noqa and report.findings:
            current, added = apply_edits(current, _noqa_edits(current, report.findings))
            result.noqa_added = len(added)
            if added:
                report = _run_engine(current, path, config, lang, deps)
        result.fixed_text = current
        _take(result, report)
    result.deps = _hash_files(deps)
    return result


def _take(result: FileResult, report) -> None:
    result.findings = report.findings
    result.elsewhere = list(getattr(report, "elsewhere", []))
    result.notes = report.parse_notes
    result.suppressed = list(getattr(report, "suppressed", []))


def _fixable(findings, fix_mode: str) -> list[Finding]:
    if fix_mode == "none":
        return []
    ordered = sorted(findings, key=lambda f: (f.span.start_line, f.span.start_col))
    return [f for f in ordered if f.fix and (fix_mode == "unsafe" or f.fix.applicability == SAFE)]


def _count(result: FileResult, applied: list[Finding]) -> None:
    result.applied += len(applied)
    result.applied_codes.update(f.code for f in applied)


def fixes_within_cells(findings: list[Finding], text: str, cmap: CellMap) -> list[Finding]:
    """A notebook's fixes with every edit inside one code cell. An edit that spans cells (a forward moved from
    cell 4 to after the step in cell 6 rewrites the text between) becomes the line hunks it changes, each in its
    cell; a fix with an edit that still spans cells is not offered: no cell can take it."""
    import bisect
    import difflib

    from .findings import edits_overlap

    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset) - 1
        return line, offset - starts[line]

    def one_cell(span: Span) -> bool:
        return cmap.index(span.start_line) == cmap.index(span.end_line)

    def hunks(edit: Edit) -> list[Edit] | None:
        span = edit.span
        if span.start_line >= len(starts) or span.end_line >= len(starts):
            return None
        a, b = starts[span.start_line] + span.start_col, starts[span.end_line] + span.end_col
        old, new = text[a:b].splitlines(keepends=True), edit.new_text.splitlines(keepends=True)
        out, at = [], [a]
        for piece in old:
            at.append(at[-1] + len(piece))
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            lo, hi, put = at[i1], at[i2], "".join(new[j1:j2])
            gone = text[lo:hi]
            same = len(os.path.commonprefix([gone, put]))
            lo, gone, put = lo + same, gone[same:], put[same:]
            same = len(os.path.commonprefix([gone[::-1], put[::-1]]))
            hi, put = hi - same, put[:len(put) - same]
            piece = Edit(Span(*position(lo), *position(hi)), put)
            if not one_cell(piece.span) and text[lo:hi].endswith("\n") and (put.endswith("\n") or not put) \
                    and lo > 0 and text[lo - 1] == "\n":
                # a whole last line of a cell: take the newline before it instead of the one after it
                piece = Edit(Span(*position(lo - 1), *position(hi - 1)), "\n" + put[:-1] if put else "")
            if not one_cell(piece.span):
                return None
            out.append(piece)
        return out

    placed = []
    for f in findings:
        if f.fix is None or all(one_cell(e.span) for e in f.fix.edits):
            placed.append(f)
            continue
        edits: list | None = []
        for e in f.fix.edits:
            split = [e] if one_cell(e.span) else hunks(e)
            if split is None:
                edits = None
                break
            edits.extend(split)
        fix = replace(f.fix, edits=tuple(edits)) if edits and not edits_overlap(edits) else None
        placed.append(replace(f, fix=fix))
    return placed


def _check_notebook(result: FileResult, data: bytes, config: Config, lang: str, fix_mode: str,
                    add_noqa: bool) -> FileResult:
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"notebook is not UTF-8 (offset {exc.start}); not analysed") from None
    nb = Notebook.from_text(raw)
    if nb.language != "python":
        result.skipped = f"a notebook in {nb.language}, not Python; skipped"
        return result
    text, cmap = nb.program()
    result.notebook, result.cells, result.original_text = nb, cmap, text
    result.lines = text.count("\n")
    deps: set = set()
    report = _run_engine(text, result.path, config, lang, deps)
    report.findings = fixes_within_cells(report.findings, text, cmap)
    _take(result, report)
    if fix_mode != "none" or add_noqa:
        for _ in range(5):
            fixable = _fixable(report.findings, fix_mode)
            if not fixable:
                break
            applied = nb.apply(fixable, cmap)
            if not applied:
                break
            _count(result, applied)
            text, cmap = nb.program()
            report = _run_engine(text, result.path, config, lang, deps)
            report.findings = fixes_within_cells(report.findings, text, cmap)
        if add_noqa and report.findings:
            added = nb.apply(_noqa_findings(text, report.findings), cmap)
            result.noqa_added = len(added)
            if added:
                text, cmap = nb.program()
                report = _run_engine(text, result.path, config, lang, deps)
        result.cells, result.fixed_text = cmap, text
        _take(result, report)
    _say_cell_lines(result, cmap, lang)
    result.deps = _hash_files(deps)
    return result


def place_project_findings(results: list[FileResult], max_bytes: int = DEFAULT_MAX_BYTES,
                           fix_mode: str = "none") -> list[FileResult]:
    """Each finding a file's run put in another project file (a write in `losses.py` that `train.py`'s run
    reached) joins that file's result, once; a file that was not among those checked gets a result of its own
    (after the checked ones, in path order). With `fix_mode`, their fixes are applied to that file's text (the fix
    belongs where the write is)."""
    import os

    by_path = {os.path.realpath(r.path): r for r in results if not r.error and not r.skipped}
    added: dict[str, FileResult] = {}
    placed: dict[int, tuple] = {}  # id(result) -> (result, the findings placed in it)
    # When a script and a notebook reach the same write, the script's run words it (notebooks last)
    for r in sorted(results, key=lambda r: r.path.endswith(NOTEBOOK_SUFFIX)):
        for path, finding in r.elsewhere:
            real = os.path.realpath(path)
            target = by_path.get(real)
            if target is None:
                target = FileResult(path)
                try:
                    data = read_regular(path, max_bytes)
                    target.decoded = decode_python(data)
                    target.original_text = target.decoded.text
                    target.digest = content_hash(data)
                except SourceError:
                    continue
                target.lines = target.original_text.count("\n") + 1
                by_path[real] = added[real] = target
            if all((f.code, f.span) != (finding.code, finding.span) for f in target.findings):
                target.findings.append(finding)
                target.findings.sort(key=lambda f: (f.span.start_line, f.span.start_col, f.code))
                placed.setdefault(id(target), (target, []))[1].append(finding)
    if fix_mode != "none":
        for target, findings in placed.values():
            _apply_placed_fixes(target, findings, fix_mode)
    return results + [added[k] for k in sorted(added)]


def _apply_placed_fixes(result: FileResult, findings: list, fix_mode: str) -> None:
    """Apply the fixes of findings other files' runs placed here to this file's (possibly already fixed) text; the
    fixed ones leave the file's findings."""
    fixable = _fixable(findings, fix_mode)
    if not fixable or result.notebook is not None:
        return
    if result.unfixed_findings is None:
        result.unfixed_findings = list(result.findings)
    base = result.fixed_text if result.fixed_text is not None else result.original_text
    if base != result.original_text:
        return  # the file's own fixes moved its lines: the placed spans no longer fit (a later run fixes them)
    text, applied = apply_edits(base, [(f, _edits_of(f)) for f in fixable])
    if applied:
        result.fixed_text = text
        _count(result, applied)
        done = {id(f) for f in applied}
        result.findings = [f for f in result.findings if id(f) not in done]


MAX_IMPORTER_RUNS = 64  # scripts run only for what they put in the checked files (a check of `losses.py` alone)


_INDEX = None


def _project_index():
    """Who imports whom, read with the same guards as checked files (no engine: a warm run imports no libcst)."""
    global _INDEX
    if _INDEX is None:
        from .project import ProjectIndex, ProjectLinker

        def read(path):
            try:
                return decode_python(read_regular(str(path), DEFAULT_MAX_BYTES)).text
            except (SourceError, ValueError):
                return None

        def is_file(path):
            import os
            import stat

            try:
                return stat.S_ISREG(os.stat(path).st_mode)
            except (OSError, ValueError):
                return False

        _INDEX = ProjectIndex(ProjectLinker(read, is_file), read)
    return _INDEX


def add_importer_findings(results: list[FileResult], config_for, lang: str, max_bytes: int = DEFAULT_MAX_BYTES,
                          only: set | None = None) -> None:
    """A checked module's findings include those of runs that start in another project file: each file that
    imports a checked module and was not checked itself is run, and only what its run puts in the checked files
    is kept (its own findings are not reported). `only`: the real paths to do this for (the files named on the
    command line; a checked folder holds its scripts already)."""
    import os

    checked = {os.path.realpath(r.path): r for r in results if not r.error and not r.skipped}
    wanted: dict[str, set] = {}
    for real, r in checked.items():
        if not r.path.endswith(".py") or (only is not None and real not in only):
            continue
        for importer in _project_index().importers_of(r.path):
            if os.path.realpath(importer) not in checked:
                wanted.setdefault(importer, set()).add(real)
    for importer in sorted(wanted)[:MAX_IMPORTER_RUNS]:
        try:
            run = check_one(importer, None, config_for(importer), lang, "none", max_bytes)
        except Exception:  # an importer's internal error must not end the check of the file asked for
            continue
        for path, finding in run.elsewhere:
            real = os.path.realpath(path)
            target = checked.get(real)
            if target is not None and real in wanted[importer] \
                    and all((f.code, f.span) != (finding.code, finding.span) for f in target.findings):
                target.findings.append(finding)
                target.findings.sort(key=lambda f: (f.span.start_line, f.span.start_col, f.code))


def _say_cell_lines(result: FileResult, cmap: CellMap, lang: str) -> None:
    """The engine numbers the lines of the joined program; in a notebook, messages name the cell and its line."""
    result.findings = cmap.relabel_findings(result.findings, lang)
    result.notes = [replace(n, message=cmap.relabel(n.message, lang)) for n in result.notes]
    name = Path(result.path).name

    def say(text: str) -> str:
        return cmap.relabel_in_other_file(text, name)

    result.elsewhere = [(path, replace(f, message=say(f.message), explanation=say(f.explanation),
                                       related=tuple(replace(r, message=say(r.message)) for r in f.related)))
                        for path, f in result.elsewhere]


def _hash_files(paths) -> dict:
    out = {}
    for p in sorted(paths):
        try:
            out[p] = content_hash(read_regular(p, DEFAULT_MAX_BYTES))
        except SourceError:
            out[p] = None
    return out


# ---------------------------------------------------------------- --add-noqa
def _unsafe_comment_lines(text: str) -> set[int]:
    """0-based lines whose end is inside a string or a backslash continuation: no comment can go there."""
    bad: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.start[0] != tok.end[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
                bad.update(range(tok.start[0] - 1, tok.end[0] - 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    lines = re.split(r"\r\n|\r|\n", text)
    bad.update(i for i, ln in enumerate(lines) if ln.endswith("\\"))
    return bad


def _noqa_lines(text: str, findings: list[Finding]) -> dict[int, str]:
    """Line -> the new content with `# noqa: CODE` for each finding's first line."""
    from .noqa import add_noqa

    lines = re.split(r"\r\n|\r|\n", text)
    bad = _unsafe_comment_lines(text)
    out: dict[int, str] = {}
    for f in sorted(findings, key=lambda f: (f.span.start_line, f.code)):
        line = f.span.start_line
        if line in bad or line >= len(lines):
            continue
        out[line] = add_noqa(out.get(line, lines[line]), f.code)
    return {ln: new for ln, new in out.items() if new != lines[ln]}


def _noqa_edits(text: str, findings: list[Finding]):
    lines = re.split(r"\r\n|\r|\n", text)
    return [(ln, [(ln, 0, ln, len(lines[ln]), new)]) for ln, new in _noqa_lines(text, findings).items()]


def _noqa_findings(text: str, findings: list[Finding]) -> list[Finding]:
    """`--add-noqa` edits for a notebook, shaped as findings with fixes (so they map to cells)."""
    lines = text.split("\n")
    return [Finding("noqa", "noqa", "", Span(ln, 0, ln, len(lines[ln])),
                    fix=Fix(SAFE, "add noqa", (Edit(Span(ln, 0, ln, len(lines[ln])), new),)))
            for ln, new in _noqa_lines(text, findings).items()]


def check_paths(paths: list[str], resolver: ConfigResolver, lang: str | None = None, fix_mode: str = "none",
                max_bytes: int = DEFAULT_MAX_BYTES, add_noqa: bool = False, default_excludes: bool = True,
                force_exclude: bool = False, jobs: int = 1, cache=None, progress=None) -> list[FileResult]:
    """Check the Python files and notebooks under `paths` (files or folders), in discovery's stable order.

    The one entry the command line, MCP `check` and the editor's Language Model Tool share. `lang` overrides each
    file's configured language; `cache` (a cache.Cache, opened by the caller) answers unchanged files and keeps the
    new results; `jobs` > 1 checks in worker processes; `progress(done, total)` is called as files finish.
    Raises ConfigError for a broken configuration.
    """
    files = discover(paths, resolver, default_excludes, force_exclude)
    configs = {str(p): resolver.for_path(p) for p in files}
    results: dict[int, FileResult] = {}
    tasks = []
    for i, p in enumerate(files):
        path = str(p)
        config = configs[path]
        file_lang = lang or config.language or locale_language()
        if cache is not None:
            hit = cache.get(path, config, file_lang, max_bytes)
            if hit is not None:
                results[i] = hit
                continue
        tasks.append((i, (path, config, file_lang, fix_mode, max_bytes, add_noqa)))
    jobs = min(max(1, jobs), max(1, len(tasks) // 4))  # a worker costs an interpreter: only worth it for several files
    done: list[FileResult] = []

    def finished(result: FileResult) -> None:
        done.append(result)
        if progress is not None:
            progress(len(files) - len(tasks) + len(done), len(files))

    if progress is not None:
        progress(len(files) - len(tasks), len(files))
    if jobs > 1:
        from .processes import worker_pool

        _engine()  # imported once here: forked workers inherit it
        with worker_pool(jobs) as pool:  # workers import no project file and die with this process
            for r in pool.map(_check_worker, [t for _, t in tasks], chunksize=max(1, len(tasks) // (jobs * 8))):
                finished(r)
    else:
        for _, t in tasks:
            finished(_check_worker(t))
    for (i, task), r in zip(tasks, done):
        results[i] = r
        if cache is not None and not r.error:
            cache.put(task[0], task[1], task[2], r)
    # A project is one program: what a file's run puts in another file is reported there; a module named alone
    # also gets what the scripts importing it put in it.
    checked = place_project_findings([results[i] for i in range(len(files))], max_bytes, fix_mode)
    named = {os.path.realpath(p) for p in paths if os.path.isfile(p)}
    if named and fix_mode == "none" and not add_noqa:
        run_lang = lang or resolver.for_path(".").language or locale_language()
        add_importer_findings(checked, resolver.for_path, run_lang, max_bytes, only=named)
    return checked


def _check_worker(args):
    path, config, lang, fix_mode, max_bytes, add_noqa = args
    try:
        return check_one(path, None, config, lang, fix_mode, max_bytes, add_noqa)
    except Exception as exc:  # one file's internal error must not end the run
        return internal_error(path, exc)


def internal_error(path: str, exc: Exception) -> FileResult:
    """What every front end says about a file whose check failed inside gradguard (the CLI, the MCP tool)."""
    import traceback

    where = traceback.extract_tb(exc.__traceback__)[-1]
    return FileResult(path, error=f"internal error ({type(exc).__name__}: {exc} at "
                                  f"{Path(where.filename).name}:{where.lineno}); please report it")


# ---------------------------------------------------------------- unused noqa
@dataclass(frozen=True)
class UnusedNoqa:
    line: int  # 0-based analysed line
    col: int
    codes: tuple[str, ...]  # the codes that suppressed nothing (empty: the whole directive)
    directive: str


def unused_noqa(result: FileResult, config: Config) -> list[UnusedNoqa]:
    """gradguard directives (`# noqa: GG...`, `# gradguard: ignore[...]`, `# gradguard: noqa`) that hide nothing.

    A bare `# noqa` is left alone: it may be meant for another tool. Codes of rules that are off for the
    file are not reported either (the comment may be for a configuration that turns them on).
    """
    from .noqa import directives

    text = result.fixed_text if result.fixed_text is not None else result.original_text
    by_line: dict[int, set[str]] = {}
    for f in result.suppressed:
        by_line.setdefault(f.span.start_line, set()).add(f.code)
    all_codes = {f.code for f in result.suppressed}
    out = []
    for d in directives(text):
        used = all_codes if d.file_level else by_line.get(d.line, set())
        if d.codes is None:
            if d.kind != "noqa" and not used:
                out.append(UnusedNoqa(d.line, d.col, (), d.text))
            continue
        codes = tuple(c for c in d.codes if c.startswith("GG") and c not in used
                      and (not _is_rule(c) or config.is_enabled(c, result.path)))
        if codes:
            out.append(UnusedNoqa(d.line, d.col, codes, d.text))
    return out


def _is_rule(code: str) -> bool:
    from .rules import get_rule

    return get_rule(code) is not None
