"""libcst parsing per top-level block, cached by the block's text.

An edit inside one function changes one block's text, so only that block is
parsed again. Positions are computed per block and only for blocks that have
something to report (libcst's PositionProvider costs more than the parse).
"""
from __future__ import annotations

import ast
import re
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .source import Block, Span


class _Parsed:
    """A parse result shared by every occurrence of the same block text."""

    __slots__ = ("module", "error", "error_at", "positions")

    def __init__(self, module: cst.Module | None, error: str | None, error_at: tuple[int, int] = (0, 0)):
        self.module = module
        self.error = error
        self.error_at = error_at  # (0-based line within the block, column) of a syntax error
        self.positions = None  # computed on first use: only blocks with something to report pay for it


@dataclass
class ParsedBlock:
    block: Block
    parsed: _Parsed

    @property
    def module(self) -> cst.Module | None:
        return self.parsed.module

    @property
    def error(self) -> str | None:
        return self.parsed.error

    def span(self, node: cst.CSTNode) -> Span | None:
        """The node's span in file coordinates (lines shifted by the block's start), or None if not in this block."""
        if self.parsed.module is None:
            return None
        if self.parsed.positions is None:
            wrapper = MetadataWrapper(self.parsed.module, unsafe_skip_copy=True)
            self.parsed.positions = wrapper.resolve(PositionProvider)
        pos = self.parsed.positions.get(node)
        if pos is None:
            return None
        # libcst lines are 1-based, columns 0-based code points.
        return Span(
            pos.start.line - 1 + self.block.start_line,
            pos.start.column,
            pos.end.line - 1 + self.block.start_line,
            pos.end.column,
        )


class ParseCache:
    """An LRU of parsed blocks keyed by block text. Modules are immutable, so
    sharing one parsed block between documents and edits is safe."""

    def __init__(self, max_blocks: int = 5000):
        self._entries: OrderedDict[str, _Parsed] = OrderedDict()
        self._max = max_blocks
        self.parses = 0  # how many blocks were actually parsed (tests and benchmarks read it)

    def parse(self, block: Block) -> ParsedBlock:
        entry = self._entries.get(block.text)
        if entry is None:
            entry = _Parsed(*_parse_text(block.text))
            self.parses += 1
            self._entries[block.text] = entry
            if len(self._entries) > self._max:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(block.text)
        return ParsedBlock(block, entry)

    def drop(self, text: str) -> None:
        self._entries.pop(text, None)


_BRACKETS = re.compile(r"[()\[\]{}]")
_OPERATORS = re.compile(r"[-+*/%@&|^]")
MAX_NESTING = 150  # CPython refuses 200; libcst's native parser overflows the C stack near 1,000
MAX_CHAIN = 1000  # operators on one line: libcst's time grows quadratically and it overflows near 10,000


def _unsafe_for_libcst(text: str) -> str | None:
    """Why libcst must not see this text (it would crash the process or take minutes), or None."""
    if text.count("(") + text.count("[") + text.count("{") > MAX_NESTING:
        depth = deepest = 0
        for m in _BRACKETS.finditer(text):
            depth += 1 if m.group() in "([{" else -1
            deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            return f"brackets nested {deepest} deep (more than {MAX_NESTING}); not analysed"
    if len(text) > 4 * MAX_CHAIN:
        for line in text.split("\n"):
            if len(line) > 2 * MAX_CHAIN and len(_OPERATORS.findall(line)) > MAX_CHAIN:
                return f"an expression with more than {MAX_CHAIN} operators on one line; not analysed"
    return None


def _parse_text(text: str):
    unsafe = _unsafe_for_libcst(text)
    if unsafe is not None:
        return None, unsafe
    try:
        return cst.parse_module(text), None
    except cst.ParserSyntaxError as exc:
        # CPython's own parser names the place and the reason better than libcst's message does.
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarnings of the user's code are not ours to print
                compile(text, "<block>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as syntax:
            line = max((syntax.lineno or 1) - 1, 0)
            return None, f"syntax error: {syntax.msg}", (line, max((syntax.offset or 1) - 1, 0))
        except (ValueError, RecursionError, MemoryError):
            pass
        message = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
        return None, f"syntax error: {message}", (max(exc.raw_line - 1, 0), max(exc.raw_column, 0))
    except RecursionError:
        return None, "too deeply nested to parse"
    except Exception as exc:  # libcst raises a few other types on odd input
        return None, f"cannot parse: {type(exc).__name__}: {exc}"
