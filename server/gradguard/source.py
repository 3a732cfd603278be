"""The text of one file, held once: line starts, column maps and top-level blocks.

Positions inside gradguard are (line, column) with 0-based lines and 0-based
*code-point* columns, end exclusive. Converting to UTF-16 (VS Code) or UTF-8
(Neovim) columns happens only at the edge: the CLI prints code points + 1 like
ruff, the language server goes through pygls's position codec.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

# The characters that can start a token that matters for finding where a top-level statement ends: a string
# (single or triple quoted; a prefix such as `rb` changes neither where it starts nor where it ends), a comment,
# a bracket, a line continuation. One character class: the regex engine finds it fast, where an alternation of
# token patterns was tried at every character. Plain newlines are found by _TOP_LEVEL_LINE.
_SCAN = re.compile(r"[\'\"#()\[\]{}\\]")
_TOP_LEVEL_LINE = re.compile(r"\n(?=[^ \t\n#\f])")  # a newline, then a line with code at column 0
_COMPOUND_CONTINUATION = re.compile(r"(else|elif|except|finally|case)\b")
_DECORATOR = re.compile(r"@")
_COMPOUND_START = re.compile(r"(async\s+)?(def|class|for|while|if|with|try|match)\b")


@dataclass(frozen=True)
class Span:
    """A range in a source: 0-based lines, 0-based code-point columns, end exclusive."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        return (self.start_line, self.start_col) <= (line, col) <= (self.end_line, self.end_col)

    def shifted(self, lines: int) -> "Span":
        return Span(self.start_line + lines, self.start_col, self.end_line + lines, self.end_col)


class Block(NamedTuple):
    """A top-level statement group: a def/class with its decorators, a compound
    statement, or a run of simple module-level statements. (A named tuple: an edit in a file of 25,000 blocks
    re-makes every block after it with its lines shifted, and frozen dataclasses were slow to make.)"""

    start_line: int  # 0-based, inclusive
    end_line: int  # 0-based, exclusive
    text: str
    is_definition: bool  # def/class: its own scope, analysable on its own


class Source:
    """One file's text with its line table and block split."""

    def __init__(self, text: str, path: str = "<stdin>"):
        # Normalise newlines once so that line numbers agree with every editor.
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        self.path = path

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def line_starts(self) -> list[int]:
        starts = [0]
        for m in re.finditer("\n", self.text):
            starts.append(m.end())
        return starts

    def line_text(self, line: int) -> str:
        lines = self.lines
        return lines[line] if 0 <= line < len(lines) else ""

    def offset(self, line: int, col: int) -> int:
        """Code-point offset into `text` of a (line, column) position."""
        starts = self.line_starts
        line = max(0, min(line, len(starts) - 1))
        return min(starts[line] + col, len(self.text))

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column) of a code-point offset."""
        import bisect

        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line, offset - self.line_starts[line]

    def utf16_col(self, line: int, col: int) -> int:
        """A code-point column as a UTF-16 column (what VS Code counts)."""
        prefix = self.line_text(line)[:col]
        return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)

    def slice(self, span: Span) -> str:
        return self.text[self.offset(span.start_line, span.start_col) : self.offset(span.end_line, span.end_col)]

    @cached_property
    def blocks(self) -> list[Block]:
        return split_blocks(self.text)


def _statement_starts(text: str, report_clean: list | None = None) -> list[tuple[int, bool]]:
    """Lines where a top-level logical line starts, each with 'is compound or decorated'.

    A light scanner (strings, comments, brackets, backslashes) rather than the
    tokenize module: it never fails on half-typed code and costs a few ms for
    thousands of lines. With `report_clean`, appends whether the scan ended
    outside any bracket, string or line continuation.

    Newlines are not tokens: between two tokens the bracket depth is fixed, and a top-level statement can only
    start at column 0, so one regex finds those lines (a token per newline was 60% of a block split).
    """
    starts: list[tuple[int, bool]] = []

    def line_start(pos: int, line: int) -> None:
        rest = text[pos : pos + 12]
        if not _COMPOUND_CONTINUATION.match(rest):
            starts.append((line, bool(_COMPOUND_START.match(rest) or _DECORATOR.match(rest))))

    open_string = False
    depth = 0
    line = 0  # the line of `pos`
    n = len(text)
    if n and text[0] not in " \t\n#\f":
        line_start(0, 0)
    pos = 0
    while True:
        m = _SCAN.search(text, pos)
        segment_end = m.start() if m is not None else n
        if depth == 0:
            counted = pos
            # the character after a newline at the segment's end is the next token's first: still looked at
            for nl in _TOP_LEVEL_LINE.finditer(text, pos, min(segment_end + 1, n)):
                line += text.count("\n", counted, nl.start()) + 1
                counted = nl.end()
                line_start(counted, line)
            line += text.count("\n", counted, segment_end)
        else:
            line += text.count("\n", pos, segment_end)
        if m is None:
            break
        ch = m.group()
        at = m.start()
        if ch == "\'" or ch == '"':
            quote = ch * 3 if text.startswith(ch * 3, at) else ch
            end = _string_end(text, at + len(quote), quote)
            if end >= n and len(quote) == 3:
                open_string = True
            line += text.count("\n", at, end)
            pos = end
        elif ch == "#":
            newline = text.find("\n", at)
            pos = newline if newline >= 0 else n
        elif ch in "([{":
            depth += 1
            pos = at + 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
            pos = at + 1
        elif text.startswith("\n", at + 1) or text.startswith("\r\n", at + 1):  # a line continuation
            line += 1  # the line it continues is no statement start
            pos = text.index("\n", at) + 1
        else:  # a backslash elsewhere (broken code)
            pos = at + 1
    if report_clean is not None:
        report_clean.append(depth == 0 and not open_string and not text.endswith("\\\n"))
    return starts


def _string_end(text: str, pos: int, quote: str) -> int:
    """Offset just past the string that starts with `quote` before `pos`."""
    if len(quote) == 3:
        end = text.find(quote, pos)
        while end != -1 and _escaped(text, end):
            end = text.find(quote, end + 1)
        return len(text) if end == -1 else end + 3
    i = _SINGLE_QUOTED_BODY[quote].match(text, pos).end()
    n = len(text)
    if i >= n:
        return n
    if text[i] == quote:
        return i + 1
    if text[i] == "\\":  # a backslash as the text's last character
        return n
    return i  # an unterminated single-quoted string ends at the line end


# A single-quoted string's body: no quote, backslash or newline, or any escaped character.
_SINGLE_QUOTED_BODY = {q: re.compile(r"[^%s\\\n]*(?:\\[\s\S][^%s\\\n]*)*" % (q, q)) for q in "\'\""}


def _escaped(text: str, pos: int) -> bool:
    backslashes = 0
    while pos - backslashes - 1 >= 0 and text[pos - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


# Simple statements per block at most, and their characters: a run of 5,000 assignments as one block cost its
# whole positions (3.7 s) whenever one of them reported, and its whole parse on every edit; a 200 KB literal
# beside `w = torch.zeros(...)` had its positions computed (36 s) for a finding that named that line.
MAX_RUN = 200
MAX_RUN_CHARS = 20_000


def split_blocks(text: str) -> list[Block]:
    """Split a module into top-level blocks.

    Each def/class (with its decorators) and each compound statement is one
    block; consecutive simple statements are grouped into blocks of up to
    MAX_RUN statements and MAX_RUN_CHARS characters (a longer statement is a
    block of its own), so a script-style file still parses in a few pieces and
    an edit inside one function re-parses that function only.
    """
    lines = text.split("\n")
    starts = _statement_starts(text)
    if not starts:
        return [Block(0, len(lines), text, False)] if text.strip() else []
    return _group(lines, starts, 0, len(lines))


def split_blocks_after_edit(old_text: str, old_blocks: list[Block], new_text: str) -> list[Block] | None:
    """The blocks of `new_text`, re-scanning only around what changed since `old_text`.

    Blocks wholly before the change are kept; the scan restarts at the block before the changed one and
    stops at the first later block that starts with a def/class/compound statement in the unchanged tail,
    provided the scan ends outside any string or bracket there. Returns None when it cannot be sure
    (the caller then splits the whole text); the result always equals `split_blocks(new_text)`.
    """
    if not old_blocks or old_text == new_text:
        return None if not old_blocks else list(old_blocks)
    n = min(len(old_text), len(new_text))
    prefix = common_prefix(old_text, new_text, n)
    suffix = common_suffix(old_text, new_text, n - prefix)
    changed_line = old_text.count("\n", 0, prefix)
    i = next((k for k, b in enumerate(old_blocks) if b.end_line > changed_line), len(old_blocks))
    i = max(0, i - 1)  # the block before may absorb new simple statements
    start_line = old_blocks[i].start_line
    delta = new_text.count("\n") - old_text.count("\n")
    old_line_starts = None
    tail_from = len(old_text) - suffix
    j = None
    for k in range(i + 1, len(old_blocks)):
        block = old_blocks[k]
        if old_line_starts is None:
            old_line_starts = line_offsets(old_text)
        if block.start_line >= len(old_line_starts) or old_line_starts[block.start_line] < tail_from:
            continue
        new_offset = old_line_starts[block.start_line] + len(new_text) - len(old_text)
        if new_offset > 0 and new_text[new_offset - 1] != "\n":
            continue  # the edit joined this block's first line to the text before it
        first = block.text.lstrip(" \t")
        if _COMPOUND_START.match(first) or first.startswith("@"):
            j = k
            break
    new_lines = new_text.split("\n")
    stop_line = old_blocks[j].start_line + delta if j is not None else len(new_lines)
    if stop_line <= start_line:
        return None
    region = "\n".join(new_lines[start_line:stop_line]) + ("\n" if stop_line < len(new_lines) else "")
    clean: list[bool] = []
    starts = [(line + start_line, compound) for line, compound in _statement_starts(region, clean)]
    if j is not None and not clean[0]:
        return None
    if not starts or starts[0][0] != start_line:
        return None
    if j is not None and new_lines[starts[-1][0]].lstrip().startswith("@"):
        return None  # a decorator right before the tail belongs to the tail's first block
    middle = _group(new_lines, starts, start_line, stop_line)
    if j is None:
        tail = []
    elif delta == 0:  # a keystroke that adds or removes no line: the blocks after it stay as they are
        tail = old_blocks[j:]
    else:
        tail = [Block(b.start_line + delta, b.end_line + delta, b.text, b.is_definition) for b in old_blocks[j:]]
    return list(old_blocks[:i]) + middle + tail


def split_statements(block: Block) -> list[Block]:
    """A block of simple statements cut into one block per statement (used when the group does not parse,
    so that its good statements, such as the imports, are still analysed)."""
    lines = block.text.split("\n")
    starts = [line for line, _ in _statement_starts(block.text)]
    if len(starts) < 2:
        return [block]
    out = []
    for i, line in enumerate(starts):
        start = 0 if i == 0 else line
        end = starts[i + 1] if i + 1 < len(starts) else len(lines)
        text = "\n".join(lines[start:end]) + ("\n" if end < len(lines) else "")
        out.append(Block(block.start_line + start, block.start_line + end, text, False))
    return out


def line_offsets(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def common_prefix(a: str, b: str, n: int) -> int:
    lo, hi = 0, n  # binary search on slice equality: C-speed comparisons
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str, n: int) -> int:
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _group(lines: list[str], starts: list[tuple[int, bool]], first_line: int, end_line: int) -> list[Block]:
    """Blocks from statement starts within lines [first_line, end_line)."""
    blocks: list[Block] = []
    # Leading comments/blank lines belong to the first block.
    boundaries: list[tuple[int, bool, bool]] = []  # (line, compound, is_definition)
    prev_compound = True
    prev_decorator = False
    run = run_chars = 0  # simple statements in the current block, and their characters
    for k, (line, compound) in enumerate(starts):
        stripped = lines[line].lstrip()
        is_decorator = stripped.startswith("@")
        is_definition = bool(re.match(r"(async\s+)?(def|class)\b", stripped)) or is_decorator
        if prev_decorator:
            # the def/class after a decorator stays in the decorator's block
            prev_decorator = is_decorator
            continue
        end = starts[k + 1][0] if k + 1 < len(starts) else end_line
        size = sum(len(lines[i]) + 1 for i in range(line, min(end, len(lines))))
        if (compound or prev_compound or not boundaries or run >= MAX_RUN
                or (run and run_chars + size > MAX_RUN_CHARS)):
            boundaries.append((line, compound, is_definition))
            run = run_chars = 0
        run += 1
        run_chars += size
        prev_compound = compound
        prev_decorator = is_decorator
    for i, (line, _compound, is_definition) in enumerate(boundaries):
        start = first_line if i == 0 else line
        end = boundaries[i + 1][0] if i + 1 < len(boundaries) else end_line
        chunk = "\n".join(lines[start:end])
        if end < len(lines):
            chunk += "\n"
        blocks.append(Block(start, end, chunk, is_definition))
    return blocks
