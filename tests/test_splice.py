"""parse.splice_member: a block made by parsing one member of a class alone is the tree a parse of the whole block
makes (`deep_equals`, and the same code), for random edits to the classes of this repository's own files. Edits
at a member's edge (blank lines, comments indented into the member before, a dedent that ends the class) are the
shapes that differ when handled carelessly: libcst puts a comment indented into a body in that body's footer."""
from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from gradguard.parse import _parse_text, _Parsed, splice_member
from gradguard.source import Source

ROOT = Path(__file__).resolve().parent.parent
EDITS = ("digit", "delete", "statement", "comment", "blank", "dedent", "join", "indent", "docstring")


def _edit(lines: list[str], rng: random.Random) -> list[str]:
    lines = list(lines)
    i = rng.randrange(1, max(2, len(lines) - 1))
    line, kind = lines[i], rng.choice(EDITS)
    indent = line[:len(line) - len(line.lstrip())]
    if kind == "digit":
        j = rng.randrange(len(line) + 1)
        lines[i] = line[:j] + str(rng.randrange(10)) + line[j:]
    elif kind == "delete" and line:
        j = rng.randrange(len(line))
        lines[i] = line[:j] + line[j + 1:]
    elif kind == "statement":
        lines.insert(i, indent + "x = 1")
    elif kind == "comment":
        lines.insert(i, rng.choice(("# c", "    # c", "  # odd", "        # deep", "            # deeper")))
    elif kind == "blank":
        lines.insert(i, rng.choice(("", "    ", "  ")))
    elif kind == "dedent":
        lines[i] = line.lstrip()
    elif kind == "join" and i + 1 < len(lines):
        lines[i] = line + lines.pop(i + 1)
    elif kind == "indent":
        lines[i] = "  " + line
    elif kind == "docstring":
        lines.insert(i, '    """doc\nx\n"""')
    return lines


def _class_blocks():
    files = sorted((ROOT / "tests" / "real_world").rglob("*.py")) + sorted((ROOT / "server" / "gradguard").glob("*.py"))
    for path in files:
        for block in Source(path.read_text(encoding="utf-8")).blocks:
            if block.text.startswith(("class ", "@")) and block.end_line - block.start_line < 200:
                yield path, block.text


@pytest.mark.parametrize("seed", [1, 2])
def test_a_spliced_block_is_the_block_parsed_whole(seed):
    rng = random.Random(seed)
    edits = spliced = 0
    blocks = list(_class_blocks())
    for path, text in rng.sample(blocks, min(len(blocks), 250)):
        module, error, *_ = _parse_text(text)
        if module is None:
            continue
        old = _Parsed(module, None)
        for _ in range(3):
            new = "\n".join(_edit(text.split("\n"), rng))
            whole, whole_error, *_ = _parse_text(new)
            entry = splice_member(old, text, new)
            edits += 1
            if entry is not None:
                spliced += 1
                assert whole is not None, (path, whole_error, new)
                assert entry.module.deep_equals(whole) and entry.module.code == new, (path, new)
                old = entry  # the next edit splices into the spliced tree, as an editor's next keystroke does
            elif whole is None:
                break
            else:
                old = _Parsed(whole, None)
            text = new
    assert edits > 400 and spliced > edits // 10, (edits, spliced)


def test_an_edit_at_a_member_edge_parses_the_block_whole():
    text = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n\n    def h(self):\n        return 3\n"
    old = _Parsed(cst.parse_module(text), None)
    inside = text.replace("return 2", "return 22")
    assert splice_member(old, text, inside).module.deep_equals(cst.parse_module(inside))
    # a comment indented into f's body belongs to f's footer, not to g: refused
    assert splice_member(old, text, text.replace("\n\n    def g", "\n\n        # deep\n    def g")) is None
    # f's body re-indented to the depth of the comment after it: the comment becomes f's footer
    between = text.replace("\n\n    def g", "\n\n      # between\n    def g")
    reindented = between.replace("        return 1\n", "      return 1\n")
    assert splice_member(_Parsed(cst.parse_module(between), None), between, reindented) is None
    # a new member, and a block not ending in a newline, are not one member's edit
    assert splice_member(old, text, text.replace("        return 2\n", "        return 2\n    x = 1\n")) is None
    assert splice_member(old, text, text.rstrip("\n").replace("return 2", "return 22")) is None
