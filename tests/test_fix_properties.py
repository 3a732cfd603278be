"""Every fix gradguard offers is correct code: a property test over every fix it offers on a corpus.

The corpus: the fuzz seeds (tests/fuzz_corpus/), every rule example (bad and good), the demo programs (examples/),
every bad example again tab-indented and with CRLF line ends, and hostile variants below
(backslash continuations, comments inside the rewritten span, `not`/comparison/ternary operands, tabs, CRLF,
multi-line strings, carried state in its awkward forms). For each fix, applied alone:
1. the fixed file compiles;
2. its AST differs from the original only in the statements the fix's edits touch (compared statement by
   statement, a compound statement by its header only);
3. no fix creates or changes an expression statement: a bare call is there for its effect, and `F.relu(h,
   inplace=True)` made `F.relu(h, inplace=False)` computes a value and drops it (the program silently changes);
   inside those statements the user's expressions survive whole: every expression of the original that lies
   inside an edit (or on an edited line outside it) is a subtree of the fixed code, except the in-place call
   being rewritten (`y.add_(1)`, `torch.sin(x, out=y)`) and expressions that enclose an edit. So
   `scores *= scores > 0` may become `scores = scores * (scores > 0)`, never `scores = scores * scores > 0`;
4. the fix converges: re-checking the fixed file reports nothing more for that problem (same code, same place).
Applied to the file's bytes the way `--fix` writes them, a fix keeps every byte outside its edits: the BOM, CRLF,
lone CR and mixed line ends (`test_fix_keeps_every_byte_outside_its_edits`).
"""
from __future__ import annotations

import ast
import difflib
from pathlib import Path

import pytest

from gradguard.decoding import decode_python, encode_python
from gradguard.fixwrite import apply_edits
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
    # An in-place activation whose result is not used: `inplace=False` alone would drop the activation.
    "inplace_arg_bare": HEAD + "import torch.nn.functional as F\nh = torch.tanh(x)\nF.relu(h, inplace=True)\n"
                        "h.sum().backward()\n",
    "inplace_arg_bare_positional": HEAD + "import torch.nn.functional as F\nh = torch.tanh(x)\nF.relu(h, True)\n"
                                   "h.sum().backward()\n",
    "inplace_arg_bare_subscript": HEAD + "import torch.nn.functional as F\nhs = [torch.tanh(x)]\n"
                                  "F.relu(hs[0], inplace=True)\nhs[0].sum().backward()\n",
    "inplace_module_bare": HEAD + "act = nn.ReLU(inplace=True)\nh = torch.sigmoid(x)\nact(h)\nh.sum().backward()\n",
    "leaf_inplace_arg_bare_loop": HEAD + "import torch.nn.functional as F\nw = torch.randn(3, requires_grad=True)\n"
                                  "for _ in range(2):\n    F.relu(w, inplace=True)\n    (w * x).sum().backward()\n",
    # A walrus cannot be the iterable of a comprehension: `tuple(s.detach() for s in (s2 := new))` does not compile.
    "carry_tuple_walrus": HEAD + "lstm = nn.LSTM(3, 4)\nopt = torch.optim.SGD(lstm.parameters(), lr=0.1)\nstate = None\n"
                          "for t in range(3):\n    out, new = lstm(torch.randn(2, 1, 3), state)\n    loss = out.sum()\n"
                          "    opt.zero_grad()\n    loss.backward(retain_graph=True)\n    opt.step()\n"
                          "    state = (s2 := new)\n",
    "carry_list_walrus": HEAD + "lstm = nn.LSTM(3, 4)\nopt = torch.optim.SGD(lstm.parameters(), lr=0.1)\nstate = None\n"
                         "for t in range(3):\n    out, new = lstm(torch.randn(2, 1, 3), state)\n    loss = out.sum()\n"
                         "    opt.zero_grad()\n    loss.backward(retain_graph=True)\n    opt.step()\n"
                         "    state = [*(s2 := new)]\n",
    # issue 33: shapes whose safe fix used to change a value (now a copy at the op, or an unsafe fix)
    "chained_targets": HEAD + "p = q = torch.exp(x)\np /= p.sum()\n(p.sum() + q.sum()).backward()\n",
    "retained_grad": HEAD + "p = torch.exp(x)\np.retain_grad()\np /= p.sum()\np.sum().backward()\nprint(p.grad)\n",
    "attribute_on_tensor": HEAD + "p = torch.exp(x)\np.tag = 2.0\np /= p.sum()\n(p * p.tag).sum().backward()\n",
    "builtin_max": HEAD + "p = torch.exp(x)\nq = max(p, torch.zeros(3), key=lambda t: t.sum().item())\np /= 2\n"
                   "(q.sum() + p.sum()).backward()\n",
    "inplace_receiver_method": HEAD + "t = x * 2\np = t.sigmoid_()\np /= p.sum()\n(t.sum() + p.sum()).backward()\n",
    "inplace_receiver_function": HEAD + "t = x * 2\np = torch.relu_(t)\np /= 2\n(t.sum() + p.sum()).backward()\n",
    "hooked_sequential": HEAD + "act = nn.Tanh()\nact.register_forward_hook(lambda m, i, o: None)\n"
                         "net = nn.Sequential(nn.Linear(3, 3), act, nn.ReLU(inplace=True))\n"
                         "net(x.unsqueeze(0)).sum().backward()\n",
    "empty_sequential": HEAD + "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                        "        self.pre = nn.Sequential()\n        self.relu = nn.ReLU(inplace=True)\n"
                        "    def forward(self, x):\n        t = torch.tanh(x)\n        h = self.pre(t)\n"
                        "        h = self.relu(h)\n        return h, t\na, b = Block()(x)\n(a.sum() + b.sum()).backward()\n",
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
    """A statement's first line: its first decorator's for a decorated def or class (a fix may edit the decorator)."""
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        return min(d.lineno for d in decorators)
    return node.lineno if hasattr(node, "lineno") else node.pattern.lineno  # match_case has no position


def _without_bodies(node):
    import copy

    node = copy.copy(node)
    for f in BODIES:
        if hasattr(node, f) and isinstance(getattr(node, f), list):
            setattr(node, f, [])
    return node


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; spans count code points."""
    return len(lines[line].encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _expressions(tree: ast.AST, text: str):
    """(node, (start line, start col), (end line, end col)) of every expression, 0-based lines, code-point columns."""
    lines = text.split("\n")
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and getattr(node, "end_lineno", None) is not None:
            yield (node, (node.lineno - 1, _char_col(lines, node.lineno - 1, node.col_offset)),
                   (node.end_lineno - 1, _char_col(lines, node.end_lineno - 1, node.end_col_offset)))


def _rewritten(tree: ast.AST) -> set[int]:
    """ids of what a fix may rewrite inside an edit: an in-place call (`y.add_(1)`, `F.relu_(h)`), its callee, a
    call with `out=` (its `out` value becomes the assignment's target), the `True` of `inplace=True` /
    `nn.ReLU(True)`, `torch.inference_mode()` (GG106/GG107 make it `torch.no_grad()`), and the `y.data` a write
    goes through with what holds it (GG501 writes a tracked copy: `y.data[m] = 0` -> `y = y.clone(); y[m] = 0`), and
    the `True` of `m.inplace = True`."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        written = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "inplace"
                                                for t in node.targets):
            ids.add(id(node.value))  # `m.inplace = True` set after the layers were built (GG202)
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                base = target.value if isinstance(target, ast.Subscript) else target
                if isinstance(base, ast.Attribute) and base.attr == "data":
                    ids |= {id(target), id(base)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            written = node.func.value
            while isinstance(written, ast.Call) and isinstance(written.func, ast.Attribute):
                written = written.func.value
            if isinstance(written, ast.Attribute) and written.attr == "data" and node.func.attr.endswith("_"):
                ids.add(id(written))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        out = [k for k in node.keywords if k.arg == "out"]
        if name.endswith("_") and not name.endswith("__") or out:
            ids |= {id(node), id(func)} | {id(k.value) for k in out}
        if name == "inference_mode":
            ids |= {id(node), id(func)}
        if name == "backward":  # the call changes with the `retain_graph=True` added to it
            ids |= {id(node)}
        flags = [k.value for k in node.keywords if k.arg == "inplace"] or [
            a for a in node.args if isinstance(a, ast.Constant) and a.value is True]
        if flags:  # the call itself changes with its flag (`F.relu(h, inplace=True)` -> `h = F.relu(h, inplace=False)`)
            ids |= {id(node)} | {id(f) for f in flags}
    return ids


def new_bare_calls(original: str, fixed: str, ranges) -> list[str]:
    """Expression statements calling something, on the fixed code's edited lines, that the original did not have
    (an in-place method such as `p.copy_(...)` is called for its effect: its result is meant to be dropped; so is
    `loss.backward(...)` and `ctx.mark_dirty(...)`, which return None: `retain_graph=True` added to it drops
    nothing). A call statement the original had, with only its arguments rewritten (`h.register_hook(lambda g:
    g.mul(s))` for `... g.mul_(s)`), is not new."""
    def bare(text: str, lines) -> list[tuple[str, str]]:
        return [(ast.unparse(node), ast.unparse(node.value.func)) for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and not (isinstance(node.value.func, ast.Attribute) and node.value.func.attr.endswith("_")
                         and not node.value.func.attr.startswith("_"))
                and not (isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("backward", "mark_dirty"))
                and any(node.lineno - 1 <= b and a <= node.end_lineno - 1 for a, b in lines)]

    had = {func for _, func in bare(original, [a for a, _ in ranges])}
    return [call for call, func in bare(fixed, [b for _, b in ranges]) if func not in had]


def lost_expressions(original: str, fixed: str, edits, ranges) -> list[str]:
    """Expressions of the original, inside an edit or on an edited line, that are no subtree of the fixed code's
    edited lines (besides what `_rewritten` allows and the expressions enclosing an edit)."""
    old_tree, new_tree = ast.parse(original), ast.parse(fixed)
    spans = [((e.span.start_line, e.span.start_col), (e.span.end_line, e.span.end_col)) for e in edits]
    old_lines = [a for a, _ in ranges]
    new_lines = [b for _, b in ranges]
    allowed = _rewritten(old_tree)
    kept = {ast.dump(node) for node, start, end in _expressions(new_tree, fixed)
            if any(start[0] <= b and a <= end[0] for a, b in new_lines)}
    lost = []
    for node, start, end in _expressions(old_tree, original):
        if not any(start[0] <= b and a <= end[0] for a, b in old_lines) or id(node) in allowed:
            continue
        if any(start <= a and b <= end and (start, end) != (a, b) for a, b in spans):
            continue  # encloses an edit: it changes with it
        if ast.dump(node) not in kept:
            lost.append(ast.unparse(node))
    return lost


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
        made = new_bare_calls(normalized, fixed, ranges)
        assert not made, f"the fix makes a call whose result is dropped ({made}): {label}"
        lost = lost_expressions(normalized, fixed, finding.fix.edits, ranges)
        assert not lost, f"the fix does not keep {lost} whole: {label}"
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
    from gradguard.rules import all_rules

    # every rule that says it has a fix shows one here (its bad examples are in the corpus)
    assert set(codes) == {r.code for r in all_rules() if r.fix_kind != "none"}, codes
    assert sum(codes.values()) >= 80, codes
    # a write the rewrite refuses (a comment or a backslash inside it) gets a copy at the save instead
    assert refused == {"<out_with_comment>", "<carry_tuple_walrus>",
                       "<carry_list_walrus>", "<inplace_arg_bare_subscript>", "<inplace_module_bare>"}, refused


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



def _line_ends(data: bytes) -> list[bytes]:
    """The file's lines with their own terminators (\\n, \\r\\n or \\r), as bytes."""
    import re

    return re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", data)


def _byte_variants():
    """Every bad example as bytes with a BOM and CRLF, with lone CRs, and with mixed line ends."""
    for path in sorted(EXAMPLES_DIR.glob("*/bad_*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        mixed = "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines[:-1])) + lines[-1]
        for label, data in (("bom-crlf", b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()),
                            ("cr", text.replace("\n", "\r").encode()),
                            ("mixed", mixed.encode())):
            yield pytest.param(data, str(path), id=f"{label}/{path.parent.name}/{path.name}")


@pytest.mark.parametrize("data,path", list(_byte_variants()))
def test_fix_keeps_every_byte_outside_its_edits(data: bytes, path: str):
    """Each fix, applied to the bytes as `--fix` writes them (decode, apply, encode): the lines before the first
    edited line and after the last are byte for byte the original ones (BOM included), and the lines the fix
    writes end as the lines they replace."""
    decoded = decode_python(data)
    old = _line_ends(data)
    findings = [f for f in ENGINE.check(decoded.text, path).findings if f.fix is not None]
    plain = [f for f in ENGINE.check(Path(path).read_text(encoding="utf-8"), path).findings if f.fix is not None]
    assert len(findings) == len(plain), path  # no line-end style costs a fix
    for finding in findings:
        text, applied = apply_edits(decoded.text, [(finding, [(e.span.start_line, e.span.start_col, e.span.end_line,
                                                                   e.span.end_col, e.new_text)
                                                                  for e in finding.fix.edits])])
        assert applied == [finding]
        new = _line_ends(encode_python(text, decoded))
        first = min(e.span.start_line for e in finding.fix.edits)
        last = max(e.span.end_line for e in finding.fix.edits)
        label = f"{finding.code} fix on line {first + 1} of {path}"
        assert new[:first] == old[:first], label
        tail = len(old) - last - 1
        assert new[len(new) - tail:] == old[last + 1:] if tail else True, label
        # a fix that moves a statement spans the lines between; each line it writes ends as a line of that region
        endings = {line[len(line.rstrip(b"\r\n")):] for line in old[first:last + 1]} | {b""}
        for line in new[first:len(new) - tail]:
            assert line[len(line.rstrip(b"\r\n")):] in endings, (label, line, endings)
        assert new[0].startswith(b"\xef\xbb\xbf") == data.startswith(b"\xef\xbb\xbf"), label
