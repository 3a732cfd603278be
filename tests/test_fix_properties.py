"""Every fix gradguard offers is correct code: a property test over every fix it offers on a corpus.

The corpus: the fuzz seeds (tests/fuzz_corpus/), every rule example (bad and good), the demo programs (examples/),
every bad example again tab-indented and with CRLF line ends, and hostile variants below
(backslash continuations, comments inside the rewritten span, `not`/comparison/ternary operands, tabs, CRLF,
multi-line strings, carried state in its awkward forms). For each fix, applied alone:
1. the fixed file compiles;
2. its AST differs from the original only in the statements the fix's edits touch (compared statement by
   statement, a compound statement by its header only);
3. the fix converges: re-checking the fixed file reports nothing more for that problem (same code, same place).
"""
from __future__ import annotations

import ast
import difflib
from pathlib import Path

import pytest

from gradguard.engine import Engine
from gradguard.rules import EXAMPLES_DIR
from gradguard.source import Source

ROOT = Path(__file__).parent
ENGINE = Engine()

HEAD = "import torch\nfrom torch import nn\nx = torch.randn(3, requires_grad=True)\nm = torch.rand(3) > 0.5\nd = 2.0\n"
HOSTILE = {
    "backslash_augassign": HEAD + "scores = x.exp()\nscores /= \\\n    d\nscores.sum().backward()\n",
    "comment_in_call": HEAD + "scores = x.exp()\nscores.div_(d,  # by the temperature\n    )\nscores.sum().backward()\n",
    "comment_before_argument": HEAD + "scores = x.exp()\nscores.div_(  # temperature\n    d)\nscores.sum().backward()\n",
    "not_operand": HEAD + "scores = x.exp()\nscores *= not d\nscores.sum().backward()\n",
    "comparison_operand": HEAD + "scores = x.exp()\nscores *= scores > 0\nscores.sum().backward()\n",
    "ternary_operand": HEAD + "scores = x.exp()\nscores -= d if d > 1 else 0.5\nscores.sum().backward()\n",
    "same_precedence": HEAD + "scores = x.exp()\nscores -= d - 1.0\nscores.sum().backward()\n",
    "power_operand": HEAD + "scores = x.exp()\nscores **= -d\nscores.sum().backward()\n",
    "bitwise_mask": HEAD + "scores = x.exp()\nscores *= m | (scores > 1)\nscores.sum().backward()\n",
    "function_form": HEAD + "import torch.nn.functional as F\nscores = x.sigmoid()\nF.relu_(scores)\n"
                     "scores.sum().backward()\n",
    "function_form_assigned": HEAD + "scores = x.sigmoid()\nscores = torch.relu_(scores)\nscores.sum().backward()\n",
    "multiline_call": HEAD + "scores = x.exp()\nscores.clamp_(\n    min=0.1,\n    max=d,\n)\nscores.sum().backward()\n",
    "leaf_ternary": HEAD + "w = torch.ones(3, requires_grad=True)\nw *= 2.0 if d else 3.0\n(w * x).sum().backward()\n",
    "leaf_backslash": HEAD + "w = torch.ones(3, requires_grad=True)\nw += \\\n    1.0\n(w * x).sum().backward()\n",
    "update_multiline_string": HEAD + "w = torch.ones(3, requires_grad=True)\n(w * x).sum().backward()\n"
                                      "w -= 0.1 * w.grad * len('''a\nb''')\n",
    "update_tabs": "import torch\nw = torch.ones(3, requires_grad=True)\nx = torch.randn(3)\nfor _ in range(2):\n"
                   "\tloss = (w * x).sum()\n\tloss.backward()\n\tw -= 0.1 * w.grad  # step\n\tw.grad = None\n",
    "update_crlf": "import torch\r\nw = torch.ones(3, requires_grad=True)\r\nx = torch.randn(3)\r\n"
                   "(w * x).sum().backward()\r\nw -= 0.1 * w.grad\r\n",
    "update_backslash": HEAD + "w = torch.ones(3, requires_grad=True)\n(w * x).sum().backward()\nw -= \\\n    0.1 * w.grad\n",
    "out_with_comment": HEAD + "y = torch.empty(3)\ntorch.sin(x,  # into the buffer\n          out=y)\n",
    "carry_value_expression": HEAD + "cell = nn.RNNCell(2, 4)\nopt = torch.optim.SGD(cell.parameters(), lr=0.1)\n"
                              "h = torch.zeros(1, 4)\nfor t in range(3):\n    h_next = cell(torch.randn(1, 2), h)\n"
                              "    loss = h_next.sum()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
                              "    h = h_next * 0.5 + \\\n        h_next * 0.5\n",
    "carry_read_after": HEAD + "cell = nn.RNNCell(2, 4)\nopt = torch.optim.SGD(cell.parameters(), lr=0.1)\n"
                        "h = torch.zeros(1, 4)\nfor t in range(3):\n    h = cell(torch.randn(1, 2), h)\n"
                        "    loss = h.pow(2).sum()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n",
    "carry_read_after_continue": HEAD + "cell = nn.RNNCell(2, 4)\nopt = torch.optim.SGD(cell.parameters(), lr=0.1)\n"
                                 "h = torch.zeros(1, 4)\nfor t in range(3):\n    h = cell(torch.randn(1, 2), h)\n"
                                 "    loss = h.pow(2).sum()\n    opt.zero_grad()\n    loss.backward()\n"
                                 "    opt.step()\n    if t == 1:\n        continue\n    print(t)\n",
    "carry_state_none": HEAD + "lstm = nn.LSTM(3, 4)\nopt = torch.optim.SGD(lstm.parameters(), lr=0.1)\nstate = None\n"
                        "for t in range(3):\n    out, state = lstm(torch.randn(2, 1, 3), state)\n"
                        "    loss = out.sum()\n    opt.zero_grad()\n    loss.backward(retain_graph=True)\n    opt.step()\n",
    "carry_nested_tuple": HEAD + "lstm = nn.LSTM(3, 4)\nopt = torch.optim.SGD(lstm.parameters(), lr=0.1)\n"
                          "h = torch.zeros(1, 1, 4)\nc = torch.zeros(1, 1, 4)\nfor t in range(3):\n"
                          "    y, (h, c) = lstm(torch.randn(2, 1, 3), (h, c))  # step\n    loss = y.sum()\n"
                          "    opt.zero_grad()\n    loss.backward(retain_graph=True)\n    opt.step()\n",
    "carry_tabs": "import torch\nfrom torch import nn\ncell = nn.RNNCell(2, 4)\n"
                  "opt = torch.optim.SGD(cell.parameters(), lr=0.1)\nh = torch.zeros(1, 4)\nfor t in range(3):\n"
                  "\th = cell(torch.randn(1, 2), h)\n\tloss = h.sum()\n\topt.zero_grad()\n\tloss.backward()\n"
                  "\topt.step()\n",
    "carry_object_state": "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n"
                          "        super().__init__()\n        self.lstm = nn.LSTM(3, 4)\n        self.h0 = torch.zeros(1, 1, 4)\n"
                          "        self.c0 = torch.zeros(1, 1, 4)\n    def forward(self, x):\n"
                          "        f, _ = self.lstm(x, (self.h0, self.c0))\n        (self.h0, self.c0) = _\n"
                          "        return f[-1]\nmodel = Net()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                          "for x in torch.randn(3, 2, 1, 3):\n    loss = model(x).sum()\n    opt.zero_grad()\n"
                          "    loss.backward()\n    opt.step()\n",
    "carry_crlf": "import torch\r\nfrom torch import nn\r\ncell = nn.RNNCell(2, 4)\r\n"
                  "opt = torch.optim.SGD(cell.parameters(), lr=0.1)\r\nh = torch.zeros(1, 4)\r\nfor t in range(3):\r\n"
                  "    h_next = cell(torch.randn(1, 2), h)\r\n    loss = h_next.sum()\r\n    opt.zero_grad()\r\n"
                  "    loss.backward()\r\n    opt.step()\r\n    h = h_next\r\n",
}


def corpus():
    for path in sorted((ROOT / "fuzz_corpus").glob("*.py")):
        yield pytest.param(path.read_bytes().decode("utf-8-sig"), str(path), id=f"fuzz/{path.name}")
    for path in sorted(EXAMPLES_DIR.glob("*/*.py")):
        yield pytest.param(path.read_text(encoding="utf-8"), str(path), id=f"{path.parent.name}/{path.name}")
    for path in sorted((ROOT.parent / "examples").glob("*.py")):
        yield pytest.param(path.read_text(encoding="utf-8"), str(path), id=f"examples/{path.name}")
    for name, text in HOSTILE.items():
        yield pytest.param(text, f"<{name}>", id=f"hostile/{name}")
    # Every bad example again, tab-indented and with CRLF line ends: fixes must follow the file's own style.
    for path in sorted(EXAMPLES_DIR.glob("*/bad_*.py")):
        text = path.read_text(encoding="utf-8")
        yield pytest.param(_tabs(text), f"<tabs {path.name}>", id=f"tabs/{path.parent.name}/{path.name}")
        yield pytest.param(text.replace("\n", "\r\n"), f"<crlf {path.name}>", id=f"crlf/{path.parent.name}/{path.name}")


def _tabs(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        lines.append("\t" * ((len(line) - len(body)) // 4) + " " * ((len(line) - len(body)) % 4) + body)
    return "\n".join(lines)


def apply(text: str, edits):
    """Apply one fix's edits; return the new text and each edit's line range before and after (0-based, inclusive)."""
    source = Source(text)
    out = source.text
    ranges = []
    shift = 0
    placed = []
    for e in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col)):
        a = source.offset(e.span.start_line, e.span.start_col)
        b = source.offset(e.span.end_line, e.span.end_col)
        placed.append((a, b, e))
    for a, b, e in sorted(placed, key=lambda p: p[0], reverse=True):
        out = out[:a] + e.new_text + out[b:]
    for a, b, e in placed:  # in order: each later edit's start moves by the earlier edits' growth
        new_start = out.count("\n", 0, a + shift)
        ranges.append(((e.span.start_line, e.span.end_line), (new_start, new_start + e.new_text.count("\n"))))
        shift += len(e.new_text) - (b - a)
    return out, ranges


BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def rows(tree: ast.AST):
    """(depth, statement without its bodies, first line, last header line) for every statement, in order."""
    out = []

    def walk(node, depth):
        for child in [c for f in BODIES for c in getattr(node, f, []) or []]:
            header = ast.dump(_without_bodies(child), include_attributes=False)
            inner = [c for f in BODIES for c in getattr(child, f, []) or []]
            first = _line(child)
            last = min(_line(c) for c in inner) - 1 if inner else child.end_lineno
            out.append(((depth, header), first - 1, max(first, last) - 1))
            walk(child, depth + 1)

    walk(tree, 0)
    return out


def _line(node) -> int:
    return node.lineno if hasattr(node, "lineno") else node.pattern.lineno  # match_case has no position


def _without_bodies(node):
    import copy

    node = copy.copy(node)
    for f in BODIES:
        if hasattr(node, f) and isinstance(getattr(node, f), list):
            setattr(node, f, [])
    return node


def fixes_of(text: str, path: str):
    report = ENGINE.check(text, path)
    return [f for f in report.findings if f.fix is not None]


@pytest.mark.parametrize("text,path", list(corpus()))
def test_every_fix_compiles_changes_only_its_statements_and_converges(text, path):
    normalized = Source(text).text
    before = rows(ast.parse(normalized))
    for finding in fixes_of(text, path):
        fixed, ranges = apply(text, finding.fix.edits)
        label = f"{finding.code} fix on line {finding.span.start_line + 1} of {path}:\n{fixed}"
        assert all("\r" not in e.new_text for e in finding.fix.edits), label
        tree = ast.parse(fixed)  # raises SyntaxError on broken code
        compile(tree, path, "exec")
        after = rows(tree)
        matcher = difflib.SequenceMatcher(a=[r[0] for r in before], b=[r[0] for r in after], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            for _, first, last in before[i1:i2]:
                assert any(first <= b and a <= last for (a, b), _ in ranges), f"changed outside the fix: {label}"
            for _, first, last in after[j1:j2]:
                assert any(first <= b and a <= last for _, (a, b) in ranges), f"new code outside the fix: {label}"
        assert matcher.get_opcodes() != [("equal", 0, len(before), 0, len(after))], f"the fix changes nothing: {label}"
        # One pass: the problem is gone from the fixed file (its line moves by the lines the fix added above it).
        line = finding.span.start_line
        moved = {line + sum(nb - na - (ob - oa) for (oa, ob), (na, nb) in ranges if ob < line)}
        for (oa, ob), (na, nb) in ranges:
            if oa <= line <= ob:
                moved |= set(range(na, nb + 1))
        again = {f.span.start_line for f in ENGINE.check(fixed, path).findings if f.code == finding.code}
        assert not again & moved, f"the fix does not converge: {label}"


def test_the_corpus_exercises_every_kind_of_fix():
    """The property test is not vacuous: it sees fixes of every rule that has one, and refusals."""
    codes, refused = {}, set()
    for param in corpus():
        text, path = param.values
        for f in ENGINE.check(text, path).findings:
            if f.fix is not None:
                codes[f.code] = codes.get(f.code, 0) + 1
            elif path.startswith("<") and " " not in path:
                refused.add(path)
    assert set(codes) == {"GG101", "GG102", "GG103", "GG104", "GG106", "GG107", "GG108", "GG201", "GG202", "GG301",
                          "GG402", "GG403"}, codes
    assert sum(codes.values()) >= 80, codes
    assert refused == {"<backslash_augassign>", "<comment_in_call>", "<comment_before_argument>",
                       "<carry_read_after_continue>", "<out_with_comment>"}, refused


@pytest.mark.parametrize("path", sorted(EXAMPLES_DIR.glob("*/bad_*.py")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_tabs_and_crlf_get_the_same_fixes(path):
    """Indentation style and line ends never cost a fix; new lines follow the file's indentation (tabs or spaces)."""
    text = path.read_text(encoding="utf-8")
    plain = [(f.code, [e.new_text for e in f.fix.edits]) for f in fixes_of(text, str(path))]
    crlf = [(f.code, [e.new_text for e in f.fix.edits]) for f in fixes_of(text.replace("\n", "\r\n"), str(path))]
    tabs = [(f.code, [e.new_text for e in f.fix.edits]) for f in fixes_of(_tabs(text), str(path))]
    assert crlf == plain
    if any(line.startswith("    ") for line in text.split("\n")):
        assert [(c, [_tabs(t) for t in edits]) for c, edits in plain] == tabs
    else:  # nothing indented to follow: one level is 4 spaces either way
        assert plain == tabs

