"""libcst parsing per top-level block, cached by the block's text.

An edit inside one function changes one block's text, so only that block is
parsed again. Positions are computed per block and only for blocks that have
something to report (libcst's PositionProvider costs more than the parse).
"""
from __future__ import annotations

import ast
import re
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .source import Block, Span, common_prefix, common_suffix, line_offsets


# Text that any problem needs somewhere in its block: an in-place write (`x_(`, `+=`, `x[i] =`, `out=`,
# `inplace`), an optimizer step, a backward() or `.data`. Blocks without it are parsed but not interpreted.
# Each alternative starts with a literal character, so the regex engine skips ahead to candidates (a leading
# `[A-Za-z0-9]` or `\b` was tried at every letter): `x_(` is found at its `_`, `out =` at its `o`.
WRITE_HINT = re.compile(r"_(?<=[A-Za-z0-9]_)\(|[-+*/@%&|^]=|\]\s*=[^=]|out(?<!\wout)\s*=|inplace|\.step\(|backward"
                        r"|\.data\b")


# Beyond WRITE_HINT, what the analysis keys on to find or shape a problem: its per-function hints (in-place
# layers by position, autograd.grad, retain/create_graph) and what makes a layer or a tensor special
# (requires_grad, inference mode, grad modes, hooks). A def/class block with none of these nor WRITE_HINT, that
# no analysed block names, cannot take part in a finding (see `screen_blocks`).
REACH_EXTRA = re.compile(
    r"<<=|>>=|_(?<=[A-Za-z0-9]_)\s*\(|retain_graph|create_graph|requires_grad|inference_mode|no_grad|enable_grad"
    r"|set_grad_enabled|_hook|autograd|detach|step(?<!\wstep)(?!\w)|grad(?<!\wgrad)(?!\w)|data(?<!\wdata)(?!\w)"
    r"|copy(?<!\wcopy)(?!\w)"
    # layers in place by a positional flag; a name that only ends so (`GELU(`, `PReLU(`) counts too
    r"|(?:ReLU6?|LeakyReLU|ELU|SELU|CELU|RReLU|Hardtanh|Threshold|Dropout[123]?d?|AlphaDropout|SiLU|Hardswish"
    r"|Hardsigmoid|Mish)\(\s*[^)\s]")


def reaches(text: str) -> bool:
    """Whether a block's text has anything a problem needs or the analysis keys on (WRITE_HINT or REACH_EXTRA)."""
    return bool(WRITE_HINT.search(text) or REACH_EXTRA.search(text))


class _Parsed:
    """A parse result shared by every occurrence of the same block text."""

    __slots__ = ("module", "error", "error_at", "positions", "_hot", "member_lines")

    def __init__(self, module: cst.Module | None, error: str | None, error_at: tuple[int, int] = (0, 0)):
        self.module = module
        self.error = error
        self.error_at = error_at  # (0-based line within the block, column) of a syntax error
        self.positions = None  # computed on first use: only blocks with something to report pay for it
        self._hot: bool | None = None
        self.member_lines: tuple | None = None  # a class block's (first member's line, lines of each member)

    def hot(self, text: str) -> bool:
        """Whether the block's text (the text this entry was parsed from) has a WRITE_HINT; remembered."""
        if self._hot is None:
            self._hot = bool(WRITE_HINT.search(text))
        return self._hot


class _LazyParsed(_Parsed):
    """A block the pre-screen left out of the analysis: CPython's parser accepted it, and libcst parses it only if
    a rule asks for its tree (rules walk every block of a file to word a finding or prove a fix safe)."""

    __slots__ = ("text", "_module", "on_failure")

    def __init__(self, text: str):
        super().__init__(None, None)
        self.text = text
        self._module = None
        self.on_failure = None  # called with this entry if libcst refuses what CPython accepted

    @property
    def module(self) -> cst.Module | None:
        if self._module is None:
            module, error, *at = _parse_text(self.text)
            if module is None:
                self.error = error
                self.error_at = at[0] if at else (0, 0)
                if self.on_failure is not None:
                    self.on_failure(self)
                module = cst.Module(body=[])
            self._module = module
        return self._module

    @module.setter
    def module(self, value) -> None:  # _Parsed.__init__ sets it
        self._module = value

    @property
    def parsed_yet(self) -> bool:
        return self._module is not None


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
        self.splices = 0  # how many were made by parsing one member of a class (splice_member)

    def parse(self, block: Block, before: tuple[str, _Parsed] | None = None) -> ParsedBlock:
        """`before`: the text and parse of the block this one replaced in an edit (see `splice_member`)."""
        entry = self._entries.get(block.text)
        if entry is None:
            entry = splice_member(before[1], before[0], block.text) if before is not None else None
            if entry is None:
                entry = _Parsed(*_parse_text(block.text))
                self.parses += 1
            else:
                self.splices += 1
            self._entries[block.text] = entry
            if len(self._entries) > self._max:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(block.text)
        return ParsedBlock(block, entry)

    def drop(self, text: str) -> None:
        self._entries.pop(text, None)


MAX_NESTING = 150  # brackets; CPython refuses 200, libcst's native parser overflows the C stack near 1,000
MAX_DEPTH = 200  # estimated CST depth (block_shape); our recursive passes fail near 700, libcst crashes later
MAX_BLOCK_CHARS = 800_000  # libcst needs ~1.3 KB and ~17 us per character of a literal (1 MB: 1.5 GB, 20 s)

# The tokens of the depth scan (it runs on every parsed block); names, numbers and blanks are skipped.
# Strings and comments are matched whole, so brackets and operators inside them never count; an unterminated
# string runs to the end of its line (or of the text, if triple-quoted).
_TOKEN = re.compile(
    # Names and blanks first, as tokens of their own, so that the scan steps over them in one match (the other
    # branches tried at every character cost 60% of the scan); not a keyword the scan counts, not a string prefix.
    r"(?P<skip>[ \t]+|(?![rRbBuUfFtT]{0,2}[\x27\x22])(?!(?:and|or|not|if|lambda|await|for|yield|else)(?!\w))\w+)"
    r"|(?P<s>(?<![\w])(?:[rRbBuUfFtT]{1,2})?(?:\x27\x27\x27(?:[^\\]|\\.)*?(?:\x27\x27\x27|\Z)|\x22\x22\x22(?:[^\\]|\\.)*?(?:\x22\x22\x22|\Z)"
    r"|\x27(?:[^\x27\\\n]|\\.)*(?:\x27|$)|\x22(?:[^\x22\\\n]|\\.)*(?:\x22|$)))"
    r"|(?P<c>\#[^\n]*)"
    r"|(?P<open>[(\[{])|(?P<close>[)\]}])"
    r"|(?P<nl>\\?\r?\n)"
    r"|(?P<kw>(?<![\w])(?:and|or|not|if|lambda|await|for|yield)(?![\w]))"
    r"|(?P<sep>(?:\*\*|//|>>|<<|[-+*/%@&|^])=|=(?!=)|[,;])"
    r"|(?P<flat>[<>!=]=|[<>]|->|:=?|\.\.\.|(?<![\w])else(?![\w]))"
    r"|(?P<op>\*\*|//|<<|>>|[-+*/%@&|^~]|\.(?!\d))",
    re.MULTILINE | re.DOTALL,
)
_LINE_HEAD = re.compile(r"[ \t\f]*(?:(elif|else)(?![\w]))?")
_OPERAND_END = re.compile(r"[\w)\]\x27\x22]")


@dataclass(frozen=True)
class BlockShape:
    """A token-level estimate of how deep libcst's tree for a block would be."""

    depth: int  # estimated CST depth: brackets, operator/keyword/trailer chains, elif chains, indentation
    brackets: int  # deepest bracket nesting


def block_shape(text: str) -> BlockShape:
    """Estimate the depth of the CST of `text` without parsing it (linear; never fails on broken code).

    libcst nests a node per operator of a chain (`a and b and c`, `a + b + c`, `not not a`, `-~a`, `a.b.c`,
    `f()()`, `a[0][0]` (the trailers of one operand: `a.b.c + d.e.f` is 4 deep, not 6), `a if b else c if ...`, `a ** b ** c`, `lambda: lambda: ...`, `'a' 'b' 'c'`), per
    bracket, per `elif` and per indented block, whether the chain is on one line or split over lines; its
    native parser and our own recursive passes overflow on deep trees. A chain's count restarts at a
    comma, `=` or `;` (siblings, not nesting) and at the end of a logical line, except inside a lambda's
    parameter list (`lambda a, b=lambda c=0: 0: ...` nests through its defaults and its body); comparisons
    are flat in libcst and do not count. Close to the real depth for every shape in tests/hostile_inputs.py, and an
    upper bound for them.
    """
    chains = [0]  # operator/keyword chain count per open bracket level; [0] is the logical line
    runs = [0]  # per bracket level: trailers (`.a`, `(...)`, `[...]`) of the operand being read
    lambdas = [0]  # per bracket level: lambdas whose parameter list is still open (their `:` not yet seen)
    total = 0  # sum(chains) + sum(runs)
    deepest = 0
    deepest_brackets = 0
    indents = [0]
    elif_runs: dict[int, int] = {}
    base = 1  # indentation and elif nesting of the current logical line
    prev_string = False  # the previous token was a string: another one now is an implicit concatenation
    line_start = True
    pos = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if line_start and len(chains) == 1:
            line_start = False
            head = _LINE_HEAD.match(text, pos)
            keyword = head.group(1)
            width = head.end() - (len(keyword) if keyword else 0) - pos
            while width < indents[-1]:
                indents.pop()
            if width > indents[-1]:
                indents.append(width)
            if elif_runs:
                for w in [w for w in elif_runs if w > width]:
                    del elif_runs[w]
            if keyword == "elif":
                elif_runs[width] = elif_runs.get(width, 0) + 1
            elif keyword is None:
                elif_runs.pop(width, None)
            base = len(indents) + sum(elif_runs.values())  # CPython allows 100 levels
            if base > deepest:
                deepest = base
        if kind == "skip":
            continue
        if kind == "nl":
            if len(chains) == 1 and m.group()[0] != "\\":
                pos = m.end()
                total -= chains[0] + runs[0]
                chains[0] = runs[0] = 0
                lambdas[0] = 0
                line_start = True
                prev_string = False
            continue
        if kind == "c":
            continue
        if kind == "s":
            token = m.group()
            if "{" in token and token[0] not in "\x27\x22" and ("f" in token[:2].lower() or "t" in token[:2].lower()):
                # an f-string (its prefix is at most 2 letters): its replacement fields are code that libcst
                # parses (FormattedString nodes)
                field_depth, field_brackets = _fstring_shape(token)
                here = base + 2 * (len(chains) - 1) + total + field_depth
                if here > deepest:
                    deepest = here
                if len(chains) - 1 + field_brackets > deepest_brackets:
                    deepest_brackets = len(chains) - 1 + field_brackets
            if prev_string:
                chains[-1] += 1
                total += 1 - runs[-1]
                runs[-1] = 0
                depth = base + 2 * (len(chains) - 1) + total
                if depth > deepest:
                    deepest = depth
            prev_string = True
            continue
        prev_string = False
        if kind == "open":
            at = m.start()
            before = text[at - 1] if at else ""
            if before in " \t\r\n\\\f":  # rare: `f (x)`, or a call split over lines
                before = text[max(0, at - 64):at].rstrip(" \t\r\n\\\f")[-1:]
            if before and m.group() != "{" and _OPERAND_END.match(before):
                runs[-1] += 1  # a call or subscript trailer: one more node around what came before
                total += 1
            chains.append(0)
            runs.append(0)
            lambdas.append(0)
            if len(chains) - 1 > deepest_brackets:
                deepest_brackets = len(chains) - 1
        elif kind == "close":
            if len(chains) > 1:
                total -= chains.pop() + runs.pop()
                lambdas.pop()
            continue
        elif kind == "sep":
            if lambdas[-1] and m.group() in ",=":
                # Between a lambda's parameters the chain goes on through the defaults and the body; a default
                # sits two nodes below its lambda (Parameters, Param).
                if m.group() == "=":
                    chains[-1] += 2
                    total += 2
                    depth = base + 2 * (len(chains) - 1) + total
                    if depth > deepest:
                        deepest = depth
                continue
            total -= chains[-1] + runs[-1]
            chains[-1] = runs[-1] = 0
            continue
        elif kind == "flat":
            # A comparison, `:`, `else`: siblings of a flat node; the operand before it is complete.
            total -= runs[-1]
            runs[-1] = 0
            if lambdas[-1] and m.group() == ":":
                lambdas[-1] -= 1  # the innermost open parameter list ends; its body nests under the lambda
            continue
        elif kind == "op" and m.group() == ".":
            runs[-1] += 1  # an attribute trailer of the operand being read
            total += 1
        else:  # an operator or keyword: the operand before it is complete, its trailers nest no deeper
            chains[-1] += 1
            total += 1 - runs[-1]
            runs[-1] = 0
            if kind == "kw" and m.group() == "lambda":
                lambdas[-1] += 1
        depth = base + 2 * (len(chains) - 1) + total
        if depth > deepest:
            deepest = depth
    return BlockShape(deepest, deepest_brackets)


def _fstring_shape(token: str) -> tuple[int, int]:
    """(depth, brackets) of the replacement fields of an f-string token (prefix and quotes included)."""
    start = 0
    while start < len(token) and token[start] not in "\x27\x22":
        start += 1
    quote = token[start:start + 3] if token[start:start + 3] in ("\x27\x27\x27", "\x22\x22\x22") else token[start:start + 1]
    body = token[start + len(quote):]
    if body.endswith(quote):
        body = body[: -len(quote)]
    return _fields_shape(body)


def _fields_shape(body: str) -> tuple[int, int]:
    """(depth, brackets) of the `{...}` fields of an f-string's body; `{{` and `}}` are literal braces.

    A field's expression ends at its closing `}`, at a `!r`-style conversion or at the `:` of its format spec
    (outside brackets and strings); a format spec is itself an f-string body, one level deeper.
    """
    depth = brackets = 0
    i, n = 0, len(body)
    while i < n:
        if body[i] != "{":
            i += 1
            continue
        if body.startswith("{{", i):
            i += 2
            continue
        j, level, quote = i + 1, 0, ""
        expr_end = spec_start = -1
        while j < n:
            ch = body[j]
            if quote:
                if ch == "\\":
                    j += 2
                elif body.startswith(quote, j):
                    j += len(quote)
                    quote = ""
                else:
                    j += 1
                continue
            if ch in "\x27\x22":
                quote = body[j:j + 3] if body[j:j + 3] in ("\x27\x27\x27", "\x22\x22\x22") else ch
                j += len(quote)
                continue
            if ch in "([{":
                level += 1
            elif ch in ")]}":
                if level == 0:
                    break  # the field's closing brace
                level -= 1
            elif level == 0 and ch == "!" and body[j + 1:j + 2] != "=" and expr_end < 0:
                expr_end = j
            elif level == 0 and ch == ":":
                expr_end = j if expr_end < 0 else expr_end
                spec_start = j + 1
                # the spec runs to the field's closing brace; its own fields nest one level deeper
                k, inner = spec_start, 0
                while k < n and not (body[k] == "}" and inner == 0):
                    inner += 1 if body[k] == "{" else -1 if body[k] == "}" else 0
                    k += 1
                j = k
                break
            j += 1
        expr = body[i + 1:expr_end if expr_end >= 0 else j]
        shape = block_shape("(" + expr + "\n)")  # the field's braces stand in for the parentheses
        depth = max(depth, 2 + shape.depth)  # FormattedString > FormattedStringExpression > ...
        brackets = max(brackets, shape.brackets)
        if spec_start >= 0:
            spec_depth, spec_brackets = _fields_shape(body[spec_start:j])
            depth = max(depth, 2 + spec_depth)
            brackets = max(brackets, 1 + spec_brackets)
        i = j + 1
    return depth, brackets


_SPLICE_HEAD = "class _:\n"


def splice_member(old: _Parsed, old_text: str, new_text: str) -> _Parsed | None:
    """The parse of `new_text` made from `old`'s tree when the edit changed the lines of one member of a class (a
    method, say): those lines alone are parsed inside a class of the same indentation and put in the old
    member's place, so a keystroke in a 600-line class costs one method's parse. Every other member keeps its very
    node. None when the edit is not of that shape or the lines do not make one member in the same layout (the
    caller parses the whole block); tests/test_splice.py compares the two on random edits."""
    module = old.module
    if module is None or len(module.body) != 1 or type(module.body[0]) is not cst.ClassDef \
            or len(new_text) > MAX_BLOCK_CHARS:
        return None
    cls = module.body[0]
    body = cls.body
    if type(body) is not cst.IndentedBlock or len(body.body) < 2:
        return None
    if old.member_lines is None:
        counts = tuple(_EMPTY.code_for_node(stmt).count("\n") for stmt in body.body)
        head = cls.with_changes(body=body.with_changes(body=[_PASS], footer=()))
        first = len(module.header) + _EMPTY.code_for_node(head).count("\n") - 1
        # the lines add up, or the block is not laid out as assumed (no newline at its end, say): never spliced
        whole = first + sum(counts) + len(body.footer) + len(module.footer) == old_text.count("\n") \
            and old_text.endswith("\n") and module.has_trailing_newline
        old.member_lines = (first, counts) if whole else ()
    if not old.member_lines or not new_text.endswith("\n"):
        return None
    first, counts = old.member_lines
    n = min(len(old_text), len(new_text))
    prefix = common_prefix(old_text, new_text, n)
    suffix = common_suffix(old_text, new_text, n - prefix)
    starts = line_offsets(old_text)
    line = first
    for k, count in enumerate(counts):
        code_start = starts[line + len(body.body[k].leading_lines)]  # the member's first line of code
        start = starts[line]
        line += count
        end = starts[line] if line < len(starts) else len(old_text)
        if prefix < code_start or len(old_text) - suffix >= end:
            continue
        # A blank or comment line at either end of a member may belong to the member before it (libcst puts a
        # comment indented into a body in that body's footer): the edit keeps the member's leading lines, and
        # no comment follows it before the next code.
        following = body.body[k + 1].leading_lines if k + 1 < len(body.body) else (*body.footer, *module.footer)
        if any(empty.comment is not None for empty in following):
            return None
        new_end = end + len(new_text) - len(old_text)
        region = new_text[start:new_end]
        if not region.endswith("\n") or _unsafe_for_libcst(_SPLICE_HEAD + region) is not None:
            return None
        try:
            alone = _parse_module_unvalidated(_SPLICE_HEAD + region)
        except Exception:  # noqa: BLE001 - a syntax error or odd input: the whole block is parsed, and says so
            return None
        inner = alone.body[0] if len(alone.body) == 1 and not alone.header and not alone.footer else None
        if type(inner) is not cst.ClassDef or type(inner.body) is not cst.IndentedBlock \
                or len(inner.body.body) != 1 or inner.body.footer or inner.body.indent != body.indent \
                or alone.default_indent != module.default_indent or alone.default_newline != module.default_newline:
            return None
        member = inner.body.body[0]
        if len(member.leading_lines) != len(body.body[k].leading_lines):
            return None
        members = list(body.body)
        members[k] = member
        spliced = module.with_changes(body=[cls.with_changes(body=body.with_changes(body=members))])
        entry = _Parsed(spliced, None)
        entry.member_lines = (first, counts[:k] + (region.count("\n"),) + counts[k + 1:])
        return entry
    return None


_EMPTY = cst.Module(body=[])
_PASS = cst.SimpleStatementLine([cst.Pass()])


def _unsafe_for_libcst(text: str) -> str | None:
    """Why libcst must not see this text (it would crash the process or take minutes), or None."""
    if len(text) > MAX_BLOCK_CHARS:
        return f"a block of {len(text):,} characters (more than {MAX_BLOCK_CHARS:,})"
    shape = block_shape(text)
    if shape.brackets > MAX_NESTING:
        return f"brackets nested {shape.brackets} deep (more than {MAX_NESTING})"
    if shape.depth > MAX_DEPTH:
        return (f"an expression or statement nested or chained about {shape.depth} levels deep "
                f"(more than {MAX_DEPTH})")
    return None


def _parse_module_unvalidated(text: str) -> cst.Module:
    """`libcst.parse_module` without each node's `_validate()`: the native parser builds only valid trees, and the
    checks run in every node's `__post_init__` cost 10-15% of the parse (timm: 12.8 -> 11.5 s). Trees compare equal
    (tests/test_prescreen.py)."""
    if _VALIDATE is None:  # a libcst that no longer validates this way
        return cst.parse_module(text)
    with _UNVALIDATED:  # one parse at a time: the server parses off its event loop, and restores must not cross
        cst.CSTNode.__post_init__ = _no_validation
        try:
            return cst.parse_module(text)
        finally:
            cst.CSTNode.__post_init__ = _VALIDATE


def _no_validation(self) -> None:
    pass


_VALIDATE = cst.CSTNode.__dict__.get("__post_init__")
_UNVALIDATED = threading.Lock()


def _parse_text(text: str):
    unsafe = _unsafe_for_libcst(text)
    if unsafe is not None:
        return None, unsafe
    try:
        return _parse_module_unvalidated(text), None
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


# Plain strings and comments (their text is no code); a string is matched from its quote, and its prefix, if
# any, read behind it: every alternative starting with a quote or `#` lets the regex engine skip ahead.
_STRING_OR_COMMENT = re.compile(
    r"\x27\x27\x27(?:[^\\]|\\.)*?\x27\x27\x27|\x22\x22\x22(?:[^\\]|\\.)*?\x22\x22\x22|\x27(?:[^\x27\\\n]|\\.)*\x27"
    r"|\x22(?:[^\x22\\\n]|\\.)*\x22|\#[^\n]*",
    re.DOTALL)
_FORMAT_PREFIX = re.compile(r"(?<!\w)[rR]?[fFtT][rR]?\Z")  # an f-string's (or t-string's) text holds code
_WORD = re.compile(r"(?<!\w)[^\W\d]\w*")
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t][^\n]*", re.MULTILINE)
_DEFINED_NAME = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+([^\W\d]\w*)", re.MULTILINE)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_GLOBAL = re.compile(r"\bglobal\s+([^\W\d]\w*(?:\s*,\s*[^\W\d]\w*)*)")


def code_words(text: str) -> set[str]:
    """The identifiers of `text` outside plain strings and comments: a superset of the names its code uses (a
    name only in `__all__`, a docstring or a config key calls nothing)."""

    def blank(m: re.Match) -> str:
        at = m.start()
        if m.group()[0] != "#" and at and text[at - 1] in "fFtTrR" and _FORMAT_PREFIX.search(text, max(0, at - 3), at):
            return m.group()
        return " "

    return set(_WORD.findall(_STRING_OR_COMMENT.sub(blank, text)))


def screen_blocks(blocks) -> dict[int, "_LazyParsed"]:
    """The blocks (by index) that cannot take part in any finding, checked by CPython's parser instead of libcst.

    A def/class block is left out when its text has nothing a problem needs (`reaches`), no other block that is
    analysed names it outside strings and comments (so nothing calls, builds or subclasses it), and nothing of it
    that runs at definition time (decorators, base classes, class-level statements, calls in defaults) names
    something this file binds. A file where no block `reaches` runs no code that could go wrong: every block is
    left out. A block CPython or the depth guard refuses is never left out: libcst's path reports it as before
    (same note, same position). A left-out block gets a `_LazyParsed`: libcst parses it if a rule walks it."""
    hot = [reaches(b.text) for b in blocks]
    if not any(hot):
        trees = {i: t for i, t in ((i, _cpython_tree(b.text)) for i, b in enumerate(blocks)) if t is not None}
        return {i: _LazyParsed(blocks[i].text) for i in trees}
    names: dict[str, list[int]] = {}  # a candidate's name -> its blocks
    left_out = set()
    for i, b in enumerate(blocks):
        if b.is_definition and not hot[i]:
            head = _DEFINED_NAME.search(b.text)
            if head is not None:
                names.setdefault(head.group(1), []).append(i)
                left_out.add(i)
    if not left_out:
        return {}
    file_names = None
    trees: dict[int, ast.Module] = {}
    fresh = [i for i in range(len(blocks)) if i not in left_out]  # analysed blocks not yet read for names
    while fresh:
        reached = set()
        for i in fresh:
            text = blocks[i].text
            named = names.keys() & _WORD.findall(text)  # strings and comments too: only then is it worth a closer look
            if not named:
                continue
            for word in code_words(text) & named:
                reached.update(j for j in names[word] if j != i)
        reached &= left_out
        left_out -= reached
        fresh = list(reached)
        if fresh:
            continue
        # What is left out is checked by CPython, and must be one definition named as its head says, with nothing
        # run at definition time that reaches the file's own names.
        for i in sorted(left_out):
            if i in trees:
                continue
            tree = trees[i] = _cpython_tree(blocks[i].text)
            ok = (tree is not None and len(tree.body) == 1 and type(tree.body[0]) in _DEFINITIONS
                  and i in names.get(tree.body[0].name, ()))
            if ok:
                runs = _definition_time_names(tree.body[0])
                if runs:
                    if file_names is None:
                        file_names = _file_names(blocks, names)
                    ok = not (runs & file_names)
            if not ok:
                fresh.append(i)
        left_out.difference_update(fresh)
    return {i: _LazyParsed(blocks[i].text) for i in sorted(left_out)}


def _file_names(blocks, candidates: dict) -> set[str]:
    """A superset of the names the file binds at module level, bar names only imported: every def/class head, the
    code words of module-level statements that are not imports, and `global` names."""
    out = set(candidates)
    for b in blocks:
        if b.is_definition:
            head = _DEFINED_NAME.search(b.text)
            out.update([head.group(1)] if head is not None else code_words(b.text))
        else:
            out.update(code_words(_IMPORT_LINE.sub("", b.text)))
        if "global" in b.text:
            for m in _GLOBAL.finditer(b.text):
                out.update(_WORD.findall(m.group(1)))
    return out


def _cpython_tree(text: str) -> ast.Module | None:
    """CPython's tree of a block the depth guard lets libcst see, or None (refused: libcst's path says why)."""
    if _unsafe_for_libcst(text) is not None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = compile(text, "<block>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree


def _definition_time_names(node) -> set[str]:
    """Names that code of a def/class runs at definition time may reach: decorators, base classes and class
    keywords, class-level statements (nested classes and methods alike), and calls in defaults."""
    out: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        for deco in current.decorator_list:
            out.update(n.id for n in ast.walk(deco) if type(n) is ast.Name)
        if type(current) is ast.ClassDef:
            for expr in [*current.bases, *(k.value for k in current.keywords)]:
                out.update(n.id for n in ast.walk(expr) if type(n) is ast.Name)
            for stmt in current.body:
                if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                    stack.append(stmt)
                else:
                    out.update(n.id for n in ast.walk(stmt) if type(n) is ast.Name)
        else:
            for default in [*current.args.defaults, *current.args.kw_defaults]:
                if default is None:
                    continue
                for call in ast.walk(default):
                    if type(call) is ast.Call:
                        out.update(n.id for n in ast.walk(call) if type(n) is ast.Name)
    return out
