"""What the rules' fixes look up in a file, indexed once per check instead of walked once per finding.

A file whose N rows each hold a finding made every fix walk the whole module (libcst's `children` re-visits a node
to list them): N findings cost N walks of N rows. Each index here is built on first use by one walk over the
file's blocks (or over one class, one top-level statement) and kept on the rule context, which lives for one
check of one file.
"""
from __future__ import annotations

import libcst as cst


def file_index(ctx) -> "FileIndex":
    """The index of the file `ctx` checks (made on first use, kept for the rest of the check)."""
    index = ctx.__dict__.get("_file_index")
    if index is None:
        index = ctx.__dict__["_file_index"] = FileIndex(ctx)
    return index


def walk(root):
    """Every node under `root` (itself included), children after their parent."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in node.children if isinstance(c, cst.CSTNode))


def dotted_name(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    return ""


class FileIndex:
    """Lazily built lookups over one file's parsed blocks and its Facts."""

    def __init__(self, ctx):
        self._ctx = ctx
        self._tops = None
        self._nodes_of: dict[int, list] = {}
        self._sequential_items = None
        self._classes = None
        self._statements_of: dict[int, dict] = {}
        self._counters = None
        self._holders_of: dict[int, list] = {}
        self._selected: dict[tuple, list] = {}
        self._self_attributes = None
        self._layer_sites: dict[int, tuple] = {}
        self._class_of = None
        self._calls_by_name = None
        self._mentions: dict[str, bool] = {}
        self._function_of: dict[int, dict] = {}
        self._enclosing_lines = None
        self._memos: dict[str, dict] = {}

    def memo(self, kind: str) -> dict:
        """A dictionary of this check's own, for results computed once per file (`kind` names what it holds)."""
        return self._memos.setdefault(kind, {})

    def function_holding(self, top, stmt):
        """The innermost def inside `top` whose own body (not a nested def's) holds statement `stmt`."""
        if top is None:
            return None
        found = self._function_of.get(id(top))
        if found is None:
            found = {}
            stack = [(top, None)]
            while stack:
                node, holder = stack.pop()
                found.setdefault(id(node), holder)
                if isinstance(node, cst.BaseExpression):
                    continue
                inner = node if isinstance(node, cst.FunctionDef) else holder
                stack.extend((child, inner) for child in node.children)
            self._function_of[id(top)] = found
        return found.get(id(stmt))

    def enclosing_line(self, line: int) -> int | None:
        """The nearest line above `line` indented less than it (blank lines and comments aside): the header of the
        block the line is in, by the text alone; None for a line at the margin or with no such line."""
        if self._enclosing_lines is None:
            enclosing: list = []
            stack: list[tuple[int, int]] = []  # (indentation, line) of lines each indented more than the one below
            for i, text in enumerate(self._ctx.source.lines):
                stripped = text.lstrip()
                level = len(text) - len(stripped)
                if not stripped or stripped.startswith("#"):
                    enclosing.append(stack[-1][1] if stack else None)  # not asked of these
                    continue
                while stack and stack[-1][0] >= level:
                    stack.pop()
                enclosing.append(stack[-1][1] if stack else None)
                stack.append((level, i))
            self._enclosing_lines = enclosing
        if 0 <= line < len(self._enclosing_lines):
            return self._enclosing_lines[line]
        return None

    def mentions(self, text: str) -> bool:
        """Whether the file's text holds `text` anywhere (code, strings or comments)."""
        found = self._mentions.get(text)
        if found is None:
            found = self._mentions[text] = text in self._ctx.source.text
        return found

    def tops(self) -> list:
        """The file's top-level statements, in order."""
        if self._tops is None:
            self._tops = [top for pb in self._ctx.locator.blocks for top in pb.module.body]
        return self._tops

    def nodes(self, root) -> list:
        """Every node under `root` (a top-level statement or a class), walked once."""
        found = self._nodes_of.get(id(root))
        if found is None:
            found = self._nodes_of[id(root)] = list(walk(root))
        return found

    def all_nodes(self):
        for top in self.tops():
            yield from self.nodes(top)

    def sequential_items(self) -> dict:
        """id(layer constructor) -> (the arguments of the first `Sequential(...)` call holding it, its position among
        them, whether that call spreads `*args`). The arguments are one list shared by all of them."""
        if self._sequential_items is None:
            items: dict[int, tuple] = {}
            for node in self.all_nodes():
                if isinstance(node, cst.Call) and dotted_name(node.func).split(".")[-1] == "Sequential":
                    values = [a.value for a in node.args]
                    starred = any(a.star for a in node.args)
                    for i, value in enumerate(values):
                        items.setdefault(id(value), (values, i, starred))
            self._sequential_items = items
        return self._sequential_items

    def classes(self) -> list:
        """(top-level statement, class) for every class of the file, nested ones included."""
        if self._classes is None:
            self._classes = [(top, node) for top in self.tops() for node in self.nodes(top)
                             if isinstance(node, cst.ClassDef)]
        return self._classes

    def statement_holders(self, top) -> dict:
        """id(node) -> the simple statement line holding it, for every node of `top` that `statement_of` finds
        (expressions only inside simple statements: a compound statement's header is not searched)."""
        found = self._statements_of.get(id(top))
        if found is None:
            found = {}
            stack = [(top, None)]
            while stack:
                current, holder = stack.pop()
                if isinstance(current, cst.SimpleStatementLine):
                    holder = current
                found.setdefault(id(current), holder)
                if not isinstance(current, cst.BaseExpression) or holder is not None:
                    stack.extend((c, holder) for c in current.children if isinstance(c, cst.CSTNode))
            self._statements_of[id(top)] = found
        return found

    def tensors_on_counter(self, counter) -> list:
        """The tensors the analysis recorded at expressions that share `counter` (in no particular order)."""
        if self._counters is None:
            by_counter: dict[int, list] = {}
            for tensor in self._ctx.facts.expr_values.values():
                by_counter.setdefault(id(tensor.counter), []).append(tensor)
            self._counters = by_counter
        return self._counters.get(id(counter), [])

    def saves_by_op(self, node) -> list:
        """The saves the analysis recorded at the op `node` (its input, its weight, ...)."""
        by_op = self.memo("saves_by_op")
        if not by_op:
            for save in getattr(self._ctx.facts, "saves", ()) or ():
                by_op.setdefault(id(save.node), []).append(save)
            by_op[None] = []  # built, even for a file without saves
        return by_op.get(id(node), [])

    def nodes_with_holders(self, root) -> list:
        """(node, the simple statement line holding it) for every node under `root`, walked once."""
        found = self._holders_of.get(id(root))
        if found is None:
            found = []
            stack = [(root, None)]
            while stack:
                node, holder = stack.pop()
                if isinstance(node, cst.SimpleStatementLine):
                    holder = node
                found.append((node, holder))
                stack.extend((c, holder) for c in node.children if isinstance(c, cst.CSTNode))
            self._holders_of[id(root)] = found
        return found

    def select(self, root, kind: str, predicate) -> list:
        """The nodes under `root` that `predicate` accepts, in walk order; `kind` names the predicate."""
        key = (id(root), kind)
        found = self._selected.get(key)
        if found is None:
            found = self._selected[key] = [n for n in self.nodes(root) if predicate(n)]
        return found

    def self_attribute(self, value):
        """(top, class, attr) for `self.<attr> = value` in a class of the file (the outermost class first)."""
        if self._self_attributes is None:
            found: dict[int, tuple] = {}
            for top, cls in self.classes():
                for node in self.nodes(cls):
                    if isinstance(node, cst.Assign) and len(node.targets) == 1:
                        target = node.targets[0].target
                        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                                target.value.value == "self":
                            found.setdefault(id(node.value), (top, cls, target.attr.value))
            self._self_attributes = found
        return self._self_attributes.get(id(value))

    def layer_sites(self, cls) -> tuple:
        """({attr: [(the `self.<attr>(...)` call, its statement line)]}, the attrs read any other way in `cls`)."""
        found = self._layer_sites.get(id(cls))
        if found is None:
            nodes = self.nodes(cls)
            called_or_assigned = {id(n.func) for n in nodes if isinstance(n, cst.Call)} | {
                id(n.target) for n in nodes if isinstance(n, cst.AssignTarget)}
            sites: dict[str, list] = {}
            other: set[str] = set()
            for node, holder in self.nodes_with_holders(cls):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                        isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
                    sites.setdefault(node.func.attr.value, []).append((node, holder))
                elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and \
                        node.value.value == "self" and id(node) not in called_or_assigned:
                    other.add(node.attr.value)
            found = self._layer_sites[id(cls)] = (sites, other)
        return found

    def class_holding(self, node):
        """The first class (outermost first) whose code holds `node`; None outside classes."""
        if self._class_of is None:
            found: dict[int, object] = {}
            for _, cls in self.classes():
                for inner in self.nodes(cls):
                    found.setdefault(id(inner), cls)
            self._class_of = found
        return self._class_of.get(id(node))

    def calls_named(self, name: str) -> list:
        """Every call `name(...)` of a plain name, in the file's order of top-level statements."""
        if self._calls_by_name is None:
            found: dict[str, list] = {}
            for top in self.tops():
                for node in self.nodes(top):
                    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                        found.setdefault(node.func.value, []).append(node)
            self._calls_by_name = found
        return self._calls_by_name.get(name, [])
