"""Jupyter notebooks for the command line: code cells analysed as one program, in order.

The language server gets cells from the client; the CLI reads the `.ipynb` JSON. Both turn a cell into
analysed lines with `python_lines` (IPython syntax blanked so the cell still parses and lines stay put).
Fix edits are mapped back to the cell they fall in and applied to that cell's own source; only the changed
cells' `source` values are rewritten in the file's text, so outputs, metadata, magics and every other byte
stay as they were.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field, replace

from .fixwrite import apply_edits  # the same non-overlapping, last-first application as for files

# IPython syntax at the start of a logical line: a line magic or shell escape (`%matplotlib inline`,
# `!pip install torch`), a magic or shell command assigned to names (`files = !ls`, `t = %timeit -o f()`),
# and help (`torch.sin?`, `??model`). IPython only reads these where a statement starts, so a `%` that
# continues an expression (`"%d" \n % n` inside brackets) stays Python.
_MAGIC = re.compile(r"[ \t]*[%!]")
_ASSIGNED_MAGIC = re.compile(r"[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[%!]")
_HELP = re.compile(r"[ \t]*(?:\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*\?{1,2})[ \t]*$")
# Cell magics whose body IPython runs as Python in the notebook's namespace: the body is analysed.
_PYTHON_CELL_MAGICS = ("time", "capture")


def _ipython_line(line: str) -> bool:
    return bool(_MAGIC.match(line) or _ASSIGNED_MAGIC.match(line) or _HELP.match(line))


def _blanked(line: str) -> str:
    """An IPython line as analysed: empty, or `pass` at its indentation inside a block (the block stays valid)."""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    return indent + "pass" if indent else ""


class _LineState:
    """Whether the next line starts a logical line: outside brackets, strings and backslash continuations."""

    def __init__(self):
        self.depth = 0
        self.quote = ""  # the open string's quote ('"""', "'''", or a single-line quote continued by `\`)
        self.continued = False

    @property
    def at_statement(self) -> bool:
        return self.depth == 0 and not self.quote and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.continued = False
        while i < n:
            if self.quote:
                end = line.find(self.quote, i)
                while end != -1 and _escaped(line, end):
                    end = line.find(self.quote, end + 1)
                if end == -1:
                    if len(self.quote) == 1 and not line.endswith("\\"):
                        self.quote = ""  # an unterminated one-line string ends with its line
                    return
                i = end + len(self.quote)
                self.quote = ""
                continue
            ch = line[i]
            if ch == "#":
                return
            if ch in "\"'":
                self.quote = ch * 3 if line.startswith(ch * 3, i) else ch
                i += len(self.quote)
                continue
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch == "\\" and i == n - 1:
                self.continued = True
            i += 1


def _escaped(text: str, pos: int) -> bool:
    backslashes = 0
    while pos - backslashes - 1 >= 0 and text[pos - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def python_lines(cell_text: str) -> list[str]:
    """A code cell's lines as analysed (one per line of the cell, so positions stay put).

    IPython lines (see `_MAGIC`) are blanked where a statement starts; a `%%` cell magic blanks the whole cell,
    except `%%time` and `%%capture`, whose body is Python and is analysed.
    """
    lines = cell_text.split("\n")
    if cell_text.endswith("\n"):
        lines.pop()
    if not lines:
        return [""]
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(maxsplit=1)[0] if lines[first].strip() != "%%" else ""
        if name not in _PYTHON_CELL_MAGICS:
            return [""] * len(lines)  # a cell magic: the cell is not Python
        lines = list(lines)
        lines[first] = ""
    out: list[str] = []
    state = _LineState()
    for line in lines:
        if state.at_statement and _ipython_line(line):
            # inside a block (`for f in files:` / `    !wget $f`) an empty line would leave the block empty
            out.append(_blanked(line) if any(ln.strip() for ln in out) else "")
            continue
        state.feed(line)
        out.append(line)
    return out


class NotebookError(ValueError):
    """Not a notebook gradguard can read; the message says why."""


@dataclass
class CellMap:
    """Where each analysed code cell starts in the joined program (picklable, cached with results)."""

    numbers: list[int] = field(default_factory=list)  # 1-based cell number in the notebook (all cells count)
    starts: list[int] = field(default_factory=list)  # 0-based first line in the joined program

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, 0-based line in the cell) of a joined-program line."""
        i = max(0, bisect.bisect_right(self.starts, line) - 1)
        if not self.starts:
            return 1, line
        return self.numbers[i], line - self.starts[i]

    def index(self, line: int) -> int:
        return max(0, bisect.bisect_right(self.starts, line) - 1)

    def relabel(self, message: str, lang: str) -> str:
        """A message with its line numbers (of the joined program) said as users see them: 'line 3 of cell 4'
        (zh: 第 4 个单元格第 3 行). Text inside code spans and a line of another file (`model.py` line 5) are
        left alone."""
        if not self.starts or ("line" not in message.lower() and "行" not in message):
            return message
        parts = message.split("`")
        for i in range(0, len(parts), 2):
            after_file = i > 0 and parts[i - 1].endswith((".py", ".pyi", ".ipynb"))
            parts[i] = self._relabel_prose(parts[i], lang, after_file)
        return "`".join(parts)

    def relabel_findings(self, findings, lang: str) -> list:
        """The findings with every text that names a line of the joined program relabelled (see relabel)."""
        def say(text: str) -> str:
            return self.relabel(text, lang)

        return [replace(f, message=say(f.message), explanation=say(f.explanation),
                        related=tuple(replace(r, message=say(r.message)) for r in f.related),
                        fix=None if f.fix is None else replace(f.fix, message=say(f.fix.message))) for f in findings]

    def relabel_in_other_file(self, text: str, notebook_name: str) -> str:
        """A message of a finding in another project file that names this notebook's lines (`line 11 of
        x.ipynb`, zh `x.ipynb 第 11 行`): said with the cell, as in the notebook's own messages."""
        name = re.escape(notebook_name)

        def one(m: re.Match) -> str:
            cell, local = self.locate(int(m.group("a")) - 1)
            return f"{m.group('word')} {local + 1} of cell {cell} of {notebook_name}"

        def zh(m: re.Match) -> str:
            cell, local = self.locate(int(m.group("a")) - 1)
            return f"{notebook_name} 第 {cell} 个单元格第 {local + 1} 行"

        text = re.sub(r"\b(?P<word>[Ll]ine) (?P<a>\d+) of " + name, one, text)
        return re.sub(name + r" 第 ?(?P<a>\d+) ?行", zh, text)

    def _relabel_prose(self, text: str, lang: str, after_file: bool) -> str:
        def one(line: int) -> tuple[int, int]:
            cell, local = self.locate(line - 1)
            return cell, local + 1

        def span(m: re.Match) -> str:
            if after_file and m.start() <= 1:
                return m.group(0)
            word = m.group("word")
            (c1, l1), (c2, l2) = one(int(m.group("a"))), one(int(m.group("b")))
            if c1 == c2:
                return f"{word}s {l1}-{l2} of cell {c1}"
            return f"{word} {l1} of cell {c1} to line {l2} of cell {c2}"

        def single(m: re.Match) -> str:
            if after_file and m.start() <= 1:
                return m.group(0)
            cell, local = one(int(m.group("a")))
            return f"{m.group('word')} {local} of cell {cell}"

        def listed(m: re.Match) -> str:  # `lines 8, 9` / `lines 15 and 17` (a fix that moves statements)
            if after_file and m.start() <= 1:
                return m.group(0)
            numbers = [int(n) for n in re.findall(r"\d+", m.group("list"))]
            places = [one(n) for n in numbers]
            seps = re.split(r"\d+", m.group("list"))[1:-1]
            if len({cell for cell, _ in places}) == 1:
                locals_ = [str(local) for _, local in places]
                return f"{m.group('word')}s " + "".join(a + b for a, b in zip(locals_, seps + [""])) + \
                    f" of cell {places[0][0]}"
            return "".join(f"{m.group('word').lower() if i else m.group('word')} {local} of cell {cell}" + sep
                           for i, ((cell, local), sep) in enumerate(zip(places, seps + [""])))

        def zh_listed(m: re.Match) -> str:  # 第 8 行, 第 15、17 行
            if after_file and m.start() <= 1:
                return m.group(0)
            places = [one(int(n)) for n in re.findall(r"\d+", m.group("list"))]
            if len({cell for cell, _ in places}) == 1:
                return f"第 {places[0][0]} 个单元格第 {'、'.join(str(local) for _, local in places)} 行"
            return "、".join(f"第 {cell} 个单元格第 {local} 行" for cell, local in places)

        text = re.sub(r"\b(?P<word>[Ll]ine)s (?P<a>\d+)-(?P<b>\d+)\b", span, text)
        text = re.sub(r"\b(?P<word>[Ll]ine)s (?P<list>\d+(?:(?:, and |, | and )\d+)+)\b(?! of )", listed, text)
        text = re.sub(r"\b(?P<word>[Ll]ine) (?P<a>\d+)\b(?! of )", single, text)
        if lang == "zh" or "行" in text:
            text = re.sub(r"第 ?(?P<list>\d+(?:(?:、|, ?)\d+)*) ?行", zh_listed, text)
        return text


def _cell_text(source) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class Notebook:
    """A parsed `.ipynb`: its JSON, its code cells' sources (as in the file), and the joined program."""

    def __init__(self, data: dict, raw: str):
        self.data = data
        self.raw = raw
        cells = data.get("cells")
        if not isinstance(cells, list):
            raise NotebookError("not a notebook (no `cells` list); not analysed")
        self.code_cells: list[int] = [i for i, c in enumerate(cells)
                                      if isinstance(c, dict) and c.get("cell_type") == "code"]
        # Line endings as in the file: a fix changes only its own text (apply_edits keeps each line's ending).
        self.sources: list[str] = [_cell_text(cells[i].get("source", "")) for i in self.code_cells]

    def _spans(self) -> dict:
        if getattr(self, "_spans_of", (None,))[0] is not self.raw:
            self._spans_of = (self.raw, _source_spans(self.raw))
        return self._spans_of[1]

    @classmethod
    def from_text(cls, raw: str) -> "Notebook":
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise NotebookError(f"not valid notebook JSON ({exc}); not analysed") from exc
        if not isinstance(data, dict):
            raise NotebookError("not a notebook (the JSON is not an object); not analysed")
        return cls(data, raw)

    @property
    def language(self) -> str:
        meta = self.data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        info = meta.get("language_info")
        name = info.get("name") if isinstance(info, dict) else None
        if not name:
            spec = meta.get("kernelspec")
            name = spec.get("language") if isinstance(spec, dict) else None
        return str(name or "python").lower()

    def program(self) -> tuple[str, CellMap]:
        """The code cells joined into one program, and where each cell starts in it."""
        chunks: list[str] = []
        cmap = CellMap()
        line = 0
        for index, text in zip(self.code_cells, self.sources):
            lines = python_lines(_newlines(text))
            cmap.numbers.append(index + 1)
            cmap.starts.append(line)
            chunks.append("\n".join(lines) + "\n")
            line += len(lines)
        return "".join(chunks), cmap

    def apply(self, findings, cmap: CellMap) -> list:
        """Apply each finding's fix, each edit inside its cell; a fix with edits in several cells (a statement moved
        from one cell to another) is applied whole or not at all, and an edit spanning cells never. The findings
        applied."""
        taken: dict[int, list] = {}  # cell index -> the (finding, local edits) chosen there
        applied = []
        for f in findings:
            pieces: dict[int, list] | None = {}
            for e in f.fix.edits:
                i = cmap.index(e.span.start_line)
                if cmap.index(e.span.end_line) != i:
                    pieces = None
                    break
                start = cmap.starts[i]
                pieces.setdefault(i, []).append((e.span.start_line - start, e.span.start_col, e.span.end_line - start,
                                                 e.span.end_col, e.new_text))
            if not pieces:
                continue
            # it fits if each of its cells takes it beside the fixes chosen there (apply_edits keeps earlier ones)
            if all(apply_edits(self.sources[i], [*taken.get(i, []), (f, edits)])[1][-1:] == [f]
                   for i, edits in pieces.items()):
                for i, edits in pieces.items():
                    taken.setdefault(i, []).append((f, edits))
                applied.append(f)
        for i, items in taken.items():
            self.sources[i], _ = apply_edits(self.sources[i], items)
        return applied

    def dumps(self) -> str:
        """The notebook's text with the changed cells' sources: only those `source` values are rewritten,
        in the layout they had; every other byte of the file stays as it was."""
        cells = self.data["cells"]
        changed = {}
        for index, text in zip(self.code_cells, self.sources):
            if _cell_text(cells[index].get("source", "")) != text:
                changed[index] = text
        if not changed:
            return self.raw
        ascii_only = _ascii_only(self.raw)
        try:
            spans = self._spans()
            edits = [(spans[i], text) for i, text in changed.items()]
        except (ValueError, KeyError, IndexError):
            edits = None
        if edits is None:  # not expected for JSON that parsed; re-serialise the whole notebook then
            data = json.loads(self.raw)
            for index, text in changed.items():
                old = data["cells"][index].get("source", "")
                data["cells"][index]["source"] = text.splitlines(keepends=True) if isinstance(old, list) else text
            out = json.dumps(data, indent=_indent_of(self.raw), ensure_ascii=ascii_only)
            return out + ("\n" if self.raw.endswith("\n") else "")
        out = self.raw
        for (start, end, _), text in sorted(edits, key=lambda e: e[0][0], reverse=True):
            out = out[:start] + _source_value(out[start:end], text, ascii_only) + out[end:]
        return out

    def file_line(self, cell_number: int, line: int) -> int:
        """The 1-based line of the `.ipynb` text that holds 0-based `line` of a cell (for annotations that
        point into the file, as GitHub's and SARIF's do); 1 when it cannot be told."""
        try:
            start, end, elements = self._spans()[cell_number - 1]
        except (ValueError, KeyError, IndexError):
            return 1
        offset = start
        if elements:
            seen = 0
            for element_start, newlines in elements:
                offset = element_start
                if seen + newlines > line:
                    break
                seen += newlines
        return self.raw.count("\n", 0, offset) + 1


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _source_spans(raw: str) -> dict[int, tuple[int, int, list]]:
    """Where each cell's `source` value lies in the notebook's text: cell index -> (start, end, elements),
    elements being (offset, newlines in it) of each string of a list value. Duplicate keys: the last wins,
    as json.loads has it."""
    def ws(i: int) -> int:
        return _WS.match(raw, i).end()

    def expect(i: int, ch: str) -> int:
        if raw[i] != ch:
            raise ValueError(f"expected {ch!r} at {i}")
        return i + 1

    def value_end(i: int) -> int:
        return _DECODER.raw_decode(raw, i)[1]

    def members(i: int, on_member) -> int:
        i = ws(expect(i, "{"))
        if raw[i] == "}":
            return i + 1
        while True:
            key, i = json.decoder.scanstring(raw, expect(i, '"'))
            i = ws(expect(ws(i), ":"))
            i = ws(on_member(key, i))
            if raw[i] == "}":
                return i + 1
            i = ws(expect(i, ","))

    def items(i: int, on_item) -> int:
        i = ws(expect(i, "["))
        if raw[i] == "]":
            return i + 1
        n = 0
        while True:
            i = ws(on_item(n, i))
            n += 1
            if raw[i] == "]":
                return i + 1
            i = ws(expect(i, ","))

    spans: dict[int, tuple[int, int, list]] = {}

    def cell(n: int, i: int) -> int:
        if raw[i] != "{":
            return value_end(i)

        def member(key: str, j: int) -> int:
            if key != "source":
                return value_end(j)
            elements: list = []
            if raw[j] == "[":
                def element(_k: int, e: int) -> int:
                    text, end = _DECODER.raw_decode(raw, e)
                    elements.append((e, text.count("\n") if isinstance(text, str) else 0))
                    return end
                end = items(j, element)
            else:
                end = value_end(j)
            spans[n] = (j, end, elements)
            return end
        return members(i, member)

    def top(key: str, i: int) -> int:
        if key == "cells" and raw[i] == "[":
            spans.clear()
            return items(i, cell)
        return value_end(i)

    members(ws(0), top)
    return spans


def _source_value(old: str, text: str, ascii_only: bool) -> str:
    """The JSON for a cell's new source, in the form (string or list) and layout of the old value."""
    if not old.startswith("["):
        return json.dumps(text, ensure_ascii=ascii_only)
    lines = text.splitlines(keepends=True)
    layout = re.match(r"\[(\r?\n)([ \t]*)\S", old)
    closing = re.search(r"(\r?\n)([ \t]*)\]\Z", old)
    if not lines or not layout or not closing:  # `["a\n", "b"]` on one line (compact separators kept)
        separator = "," if '","' in old else ", "
        return json.dumps(lines, ensure_ascii=ascii_only, separators=(separator, ":"))
    nl, indent = layout.groups()
    items = ("," + nl).join(indent + json.dumps(line, ensure_ascii=ascii_only) for line in lines)
    return "[" + nl + items + closing.group(1) + closing.group(2) + "]"


def _indent_of(raw: str):
    m = re.match(r"\{\r?\n([ \t]+)", raw)
    if not m:
        return None if raw.lstrip().startswith("{") and "\n" not in raw.strip() else 1
    ws = m.group(1)
    return ws if "\t" in ws else len(ws)


def _ascii_only(raw: str) -> bool:
    """Keep `\\uXXXX` escapes if the file used them (and has no raw non-ASCII text)."""
    return "\\u" in raw and raw.isascii()
