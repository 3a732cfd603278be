"""Small CST readers shared by GG503-GG505: which gradient hooks and custom `autograd.Function` methods a file
defines, and which in-place writes their bodies make on a given parameter (followed through aliases).

These rules look at code torch runs inside backward (hooks, `Function.backward`) or with recording off
(`Function.forward`), which the Facts pass does not interpret, so they match the function bodies directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

# Methods ending in `_` that change autograd flags or memory placement, not the values.
NOT_VALUE_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "detach_", "pin_memory_",
                              "record_stream_", "grad_"})
# Methods that always return a view of (or the same data as) their receiver. `reshape`, `flatten` and
# `contiguous` copy or not depending on the layout, so a write after them is not claimed.
VIEW_METHODS = frozenset({"view", "view_as", "detach", "squeeze", "unsqueeze", "t", "transpose", "permute",
                          "expand", "expand_as", "narrow", "select", "unflatten", "as_strided", "movedim",
                          "swapaxes", "swapdims", "diagonal", "unfold", "mT", "T"})
# What the function forms of in-place ops are called through (`torch.relu_(g)`, `F.relu(g, inplace=True)`).
TORCH_MODULES = frozenset({"torch", "F", "nn.functional", "torch.nn.functional", "functional", "nn.init",
                           "torch.nn.init", "init"})
FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                            "torch.autograd.function.InplaceFunction"})


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_VALUE_WRITES


@dataclass
class GradWrite:
    """One in-place write on a watched tensor: the expression or statement that writes and its statement."""

    node: cst.CSTNode
    stmt: cst.CSTNode  # the simple statement (or compound header) holding it
    name: str  # the name it writes through (`g`, `grad_output`)
    op: str  # "mul_", "*=", "[]=", "out="
    direct: bool  # the write is `name.op_(...)` / `name op= ...` on the watched name itself, at no alias
    receiver: cst.CSTNode | None = None  # the expression written through (`ctx.x`, `grad_input[0]`)


@dataclass
class Aliases:
    """Names bound to the watched tensors (`tensors`) or to tuples of them (`tuples`), as the body runs."""

    tensors: set = field(default_factory=set)
    tuples: set = field(default_factory=set)
    roots: set = field(default_factory=set)  # the watched parameter names themselves
    rebound: bool = False  # some alias other than a root was made (a fix rewriting the root is then refused)
    # `ctx.x` (dotted) -> "tensor"; `ctx.saved_tensors` -> which of its items are watched (True/False each)
    attrs: dict = field(default_factory=dict)
    items: dict = field(default_factory=dict)
    observer: object = None  # called with (call node, aliases) at every call (what forward saves)

    def copy(self) -> "Aliases":
        return Aliases(set(self.tensors), set(self.tuples), set(self.roots), self.rebound, self.attrs, self.items,
                       self.observer)

    def merge(self, other: "Aliases") -> None:
        """After a branch or loop: a name may refer to what either path bound; it is a root only if on both."""
        self.tensors |= other.tensors
        self.tuples |= other.tuples
        self.roots &= other.roots
        self.rebound = self.rebound or other.rebound


def _basic_index(sub: cst.Subscript) -> bool:
    """`g[0]`, `g[:, 1:]`, `g[..., None]`: indexing that returns a view (a mask or index tensor copies)."""
    for element in sub.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        value = index.value
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
        if isinstance(value, (cst.Integer, cst.Ellipsis)) or (isinstance(value, cst.Name) and value.value == "None"):
            continue
        return False
    return True


def item_flags(expr, aliases: Aliases):
    """Which items of a partly watched tuple (`ctx.saved_tensors`) are watched, or None."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return aliases.items.get(dotted(expr))
    return None


def kind_of(expr, aliases: Aliases) -> str | None:
    """"tensor" when `expr` is (a view of) a watched tensor, "tuple" when it is a watched tuple, else None."""
    if isinstance(expr, cst.Attribute) and aliases.attrs.get(dotted(expr)) == "tensor":
        return "tensor"
    flags = item_flags(expr, aliases)
    if flags is not None:
        return "tuple" if flags and all(flags) else None
    if isinstance(expr, cst.Subscript) and item_flags(expr.value, aliases) is not None:
        flags = item_flags(expr.value, aliases)
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        value = getattr(index, "value", None)
        if isinstance(value, cst.Integer) and int(value.value) < len(flags):
            return "tensor" if flags[int(value.value)] else None
        return None
    if isinstance(expr, cst.Name):
        if expr.value in aliases.tensors:
            return "tensor"
        if expr.value in aliases.tuples:
            return "tuple"
        return None
    if isinstance(expr, cst.Subscript):
        inner = kind_of(expr.value, aliases)
        if inner == "tuple":
            return "tensor"
        if inner == "tensor" and _basic_index(expr):
            return "tensor"
        return None
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in ("data", "mT", "T") and kind_of(expr.value, aliases) == "tensor":
            return "tensor"
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if (method in VIEW_METHODS or is_inplace_method(method)) and kind_of(expr.func.value, aliases) == "tensor":
            return "tensor"  # an in-place method returns its receiver
    return None


def root_name(expr) -> str | None:
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            return None


class _ExpressionWrites(cst.CSTVisitor):
    """In-place calls on watched tensors inside one expression (not inside lambdas or nested comprehensions'
    own bindings, except `for g in grad_output` over a watched tuple)."""

    def __init__(self, aliases: Aliases, stmt, out: list):
        self.aliases = aliases
        self.stmt = stmt
        self.out = out

    def visit_Lambda(self, node) -> bool:
        return False

    def _comprehension(self, node) -> bool:
        inner = self.aliases.copy()
        comp = node.for_in
        while comp is not None:
            comp.iter.visit(_ExpressionWrites(self.aliases, self.stmt, self.out))
            _bind(comp.target, comp.iter, inner, loop=True)
            comp = comp.inner_for_in
        elements = [node.elt] if hasattr(node, "elt") else [node.key, node.value]
        for element in elements:
            element.visit(_ExpressionWrites(inner, self.stmt, self.out))
        return False

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        aliases = self.aliases
        if aliases.observer is not None:
            aliases.observer(node, aliases)
        if isinstance(func, cst.Attribute) and is_inplace_method(func.attr.value):
            if kind_of(func.value, aliases) == "tensor":
                direct = isinstance(func.value, cst.Name) and func.value.value in aliases.roots
                self.out.append(GradWrite(node, self.stmt, root_name(func.value) or "", func.attr.value, direct,
                                          func.value))
                return True
        name = func.attr.value if isinstance(func, cst.Attribute) else ""
        first = node.args[0] if node.args else None
        if first is not None and first.keyword is None and not first.star and kind_of(first.value, aliases) == "tensor" \
                and isinstance(func, cst.Attribute) and dotted(func.value) in TORCH_MODULES:
            if is_inplace_method(name):  # torch.relu_(g), nn.init.zeros_(g)
                self.out.append(GradWrite(node, self.stmt, root_name(first.value) or "", name, False, first.value))
                return True
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "inplace" and \
                        isinstance(arg.value, cst.Name) and arg.value.value == "True":
                    self.out.append(GradWrite(node, self.stmt, root_name(first.value) or "", f"{name}(inplace=True)",
                                              False, first.value))
                    return True
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out" and kind_of(arg.value, aliases) == "tensor":
                self.out.append(GradWrite(node, self.stmt, root_name(arg.value) or "", "out=", False, arg.value))
        return True


def expression_writes(expr, aliases: Aliases, stmt, out: list) -> None:
    expr.visit(_ExpressionWrites(aliases, stmt, out))


def distinct(writes: list) -> list:
    """One write per chain: `g.clamp_(-1, 1).mul_(2)` is reported at the outer call only."""
    inner = {id(w.receiver) for w in writes if w.receiver is not None}
    return [w for w in writes if id(w.node) not in inner]


def _bind(target, value, aliases: Aliases, loop: bool = False) -> None:
    """Bind `target` to `value` (or, for a loop, to each item of `value`)."""
    kind = kind_of(value, aliases)
    if loop:
        if kind == "tuple":
            kind = "tensor"
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "enumerate" \
                and value.args and kind_of(value.args[0].value, aliases) == "tuple" \
                and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            _unbind(target.elements[0].value, aliases)
            _bind_name(target.elements[1].value, "tensor", aliases)
            return
        else:
            kind = None
    if isinstance(target, cst.Name):
        direct_item = isinstance(value, cst.Subscript) and item_flags(value.value, aliases) is not None
        _bind_name(target, kind, aliases, root=direct_item)
    elif isinstance(target, (cst.Tuple, cst.List)):
        values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and not loop else None
        flags = item_flags(value, aliases) if not loop else None
        if flags is not None and len(flags) == len(target.elements) and \
                not any(isinstance(e, cst.StarredElement) for e in target.elements):
            for flag, element in zip(flags, target.elements):
                _bind_name(element.value, "tensor" if flag else None, aliases, root=True)
            return
        for i, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                _unbind(element.value, aliases)
                continue
            if values is not None and len(values) == len(target.elements):
                _bind(element.value, values[i].value, aliases)
            else:
                _bind_name(element.value, "tensor" if kind == "tuple" else None, aliases)


def _bind_name(target, kind, aliases: Aliases, root: bool = False) -> None:
    """`root`: the name is bound to a watched item itself (`x, = ctx.saved_tensors`), not to another alias."""
    if not isinstance(target, cst.Name):
        _unbind(target, aliases)
        return
    name = target.value
    aliases.tensors.discard(name)
    aliases.tuples.discard(name)
    aliases.roots.discard(name)
    if kind == "tensor" and root:
        aliases.tensors.add(name)
        aliases.roots.add(name)
    elif kind == "tensor":
        aliases.tensors.add(name)
        aliases.rebound = True
    elif kind == "tuple":
        aliases.tuples.add(name)
        aliases.rebound = True


def _unbind(target, aliases: Aliases) -> None:
    if isinstance(target, cst.Name):
        _bind_name(target, None, aliases)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _unbind(element.value, aliases)


def body_writes(body, aliases: Aliases) -> list[GradWrite]:
    """In-place writes on watched tensors in a function body, in order, following re-bindings."""
    out: list[GradWrite] = []
    _walk(body, aliases, out)
    return distinct(out)


def _walk(statements, aliases: Aliases, out: list) -> None:
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                _simple(small, stmt, aliases, out)
        elif isinstance(stmt, (cst.If, cst.While)):
            expression_writes(stmt.test, aliases, stmt, out)
            branch = aliases.copy()
            _walk(stmt.body.body, branch, out)
            other = aliases.copy()
            if stmt.orelse is not None:
                orelse = stmt.orelse
                _walk([orelse] if isinstance(orelse, cst.If) else orelse.body.body, other, out)
            branch.merge(other)
            aliases.tensors, aliases.tuples, aliases.roots = branch.tensors, branch.tuples, branch.roots
            aliases.rebound = branch.rebound
        elif isinstance(stmt, cst.For):
            expression_writes(stmt.iter, aliases, stmt, out)
            inner = aliases.copy()
            _bind(stmt.target, stmt.iter, inner, loop=True)
            _walk(stmt.body.body, inner, out)
            aliases.merge(inner)
            if stmt.orelse is not None:
                _walk(stmt.orelse.body.body, aliases, out)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                expression_writes(item.item, aliases, stmt, out)
            _walk(stmt.body.body, aliases, out)
        elif isinstance(stmt, cst.Try):
            _walk(stmt.body.body, aliases, out)
            for handler in stmt.handlers:
                _walk(handler.body.body, aliases, out)
            for part in (stmt.orelse, stmt.finalbody):
                if part is not None:
                    _walk(part.body.body, aliases, out)
        # nested defs and classes do not run here


def _simple(small, stmt, aliases: Aliases, out: list) -> None:
    if isinstance(small, cst.Assign):
        expression_writes(small.value, aliases, stmt, out)
        for target in small.targets:
            t = target.target
            if isinstance(t, cst.Subscript) and kind_of(t.value, aliases) == "tensor":
                out.append(GradWrite(small, stmt, root_name(t) or "", "[]=", False, t.value))
            elif isinstance(t, (cst.Name, cst.Tuple, cst.List)):
                _bind(t, small.value, aliases)
    elif isinstance(small, cst.AugAssign):
        expression_writes(small.value, aliases, stmt, out)
        t = small.target
        if kind_of(t, aliases) == "tensor" or (isinstance(t, cst.Subscript) and kind_of(t.value, aliases) == "tensor"):
            direct = isinstance(t, cst.Name) and t.value in aliases.roots
            out.append(GradWrite(small, stmt, root_name(t) or "", small.operator.__class__.__name__, direct,
                                 t.value if isinstance(t, cst.Subscript) else t))
    elif isinstance(small, cst.AnnAssign):
        if small.value is not None:
            expression_writes(small.value, aliases, stmt, out)
            _bind(small.target, small.value, aliases)
    elif isinstance(small, (cst.Expr, cst.Return)):
        if small.value is not None:
            expression_writes(small.value, aliases, stmt, out)
    elif isinstance(small, cst.Del):
        _unbind(small.target, aliases)


AUG_SYMBOL = {"AddAssign": "+=", "SubtractAssign": "-=", "MultiplyAssign": "*=", "DivideAssign": "/=",
              "PowerAssign": "**=", "FloorDivideAssign": "//=", "ModuloAssign": "%=", "MatrixMultiplyAssign": "@=",
              "BitAndAssign": "&=", "BitOrAssign": "|=", "BitXorAssign": "^=", "LeftShiftAssign": "<<=",
              "RightShiftAssign": ">>="}


def op_text(write: GradWrite) -> str:
    return AUG_SYMBOL.get(write.op, write.op)


# ---------------------------------------------------------------- the file's functions and classes
def dotted(expr) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        inner = dotted(expr.value)
        return f"{inner}.{expr.attr.value}" if inner else ""
    return ""


def resolve(ctx, expr) -> str:
    """The full dotted name of `expr` through the file's imports (`Function` -> `torch.autograd.Function`)."""
    name = dotted(expr)
    if not name:
        return ""
    head, _, rest = name.partition(".")
    full = getattr(ctx.facts, "imports", {}).get(head)
    if full is None:
        return name
    return f"{full}.{rest}" if rest else full


def parameters(fn) -> list[str]:
    """Positional parameter names of a def or lambda, in order (a `*args` parameter is listed as `*args`)."""
    params = fn.params
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append("*" + params.star_arg.name.value)
    return names


def top_statements(ctx, texts: tuple[str, ...]):
    """(top-level statement, its block's text) of the blocks whose text mentions one of `texts`."""
    for pb in ctx.locator.blocks:
        text = pb.block.text
        if any(t in text for t in texts):
            for top in pb.module.body:
                yield top


# ---------------------------------------------------------------- where functions are defined
def defs_in(statements, name: str):
    """Defs named `name` in a body, looking into compound statements but not into nested defs or classes."""
    found = []
    for stmt in statements:
        if isinstance(stmt, cst.FunctionDef):
            if stmt.name.value == name:
                found.append(stmt)
        elif isinstance(stmt, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            bodies = [stmt.body.body]
            orelse = getattr(stmt, "orelse", None)
            if isinstance(orelse, cst.If):
                bodies.append([orelse])
            elif orelse is not None:
                bodies.append(orelse.body.body)
            for handler in getattr(stmt, "handlers", ()):
                bodies.append(handler.body.body)
            final = getattr(stmt, "finalbody", None)
            if final is not None:
                bodies.append(final.body.body)
            for body in bodies:
                found.extend(defs_in(body, name))
    return found


def module_defs(ctx) -> dict:
    """name -> the file's one top-level def of that name (a name defined twice is left out)."""
    cached = getattr(ctx, "_gg5_module_defs", None)
    if cached is not None:
        return cached
    seen: dict = {}
    for pb in ctx.locator.blocks:
        for top in pb.module.body:
            if isinstance(top, cst.FunctionDef):
                seen.setdefault(top.name.value, []).append(top)
    result = {name: defs[0] for name, defs in seen.items() if len(defs) == 1}
    ctx._gg5_module_defs = result
    return result


def is_staticmethod(fn: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) in ("staticmethod",) for d in fn.decorators)


def is_classmethod(fn: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) in ("classmethod",) for d in fn.decorators)


class Frames:
    """The enclosing classes and functions of a node, innermost last: what a name in it can refer to."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.stack: list = []

    def resolve_function(self, expr, depth: int = 0):
        """(def or lambda, number of leading parameters already bound, keyword names bound) for the callable
        `expr` names, or None when it is not a function of this file."""
        if depth > 3:
            return None
        if isinstance(expr, cst.Lambda):
            return expr, 0, frozenset()
        if isinstance(expr, cst.Name):
            for kind, node in reversed(self.stack):
                if kind == "function":
                    defs = defs_in(node.body.body, expr.value)
                    if defs:
                        return (defs[-1], 0, frozenset()) if len(defs) == 1 else None
                    if expr.value in parameters(node) or _assigned_in(node.body.body, expr.value):
                        return None  # a parameter or a local: not a def we can see
            fn = module_defs(self.ctx).get(expr.value)
            return (fn, 0, frozenset()) if fn is not None else None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            method_owner = None
            for i in range(len(self.stack) - 1, -1, -1):
                kind, node = self.stack[i]
                if kind == "function":
                    params = parameters(node)
                    if not params or params[0] != "self":
                        return None
                    if i > 0 and self.stack[i - 1][0] == "class":
                        method_owner = self.stack[i - 1][1]
                    break
            if method_owner is None:
                return None
            methods = [item for item in method_owner.body.body
                       if isinstance(item, cst.FunctionDef) and item.name.value == expr.attr.value]
            if len(methods) != 1:
                return None
            fn = methods[0]
            return fn, 0 if is_staticmethod(fn) else 1, frozenset()
        if isinstance(expr, cst.Call) and dotted(expr.func) in ("functools.partial", "partial") and expr.args \
                and expr.args[0].keyword is None and not expr.args[0].star:
            inner = self.resolve_function(expr.args[0].value, depth + 1)
            if inner is None or any(a.star for a in expr.args[1:]):
                return None
            fn, bound, keywords = inner
            positional = sum(1 for a in expr.args[1:] if a.keyword is None)
            named = frozenset(a.keyword.value for a in expr.args[1:] if a.keyword is not None)
            return fn, bound + positional, keywords | named
        return None


def _assigned_in(statements, name: str) -> bool:
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                    return True
    return False


def free_parameters(fn, bound: int, keywords: frozenset) -> list | None:
    """The parameters a caller still passes: (name, has default). None with `*args` or `**kwargs`."""
    params = fn.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return None
    plain = [*params.posonly_params, *params.params][bound:]
    return [(p.name.value, p.default is not None) for p in plain if p.name.value not in keywords]


def function_classes(ctx):
    """(class, its methods by name, top) of every `torch.autograd.Function` subclass in the file, bases
    followed through the file's own classes."""
    classes = []
    for top in top_statements(ctx, ("Function",)):
        stack = [top]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.ClassDef):
                classes.append((node, top))
                stack.extend(node.body.body)
            elif isinstance(node, (cst.FunctionDef, cst.If, cst.Try, cst.With)):
                stack.extend(node.body.body)
    by_name = {c.name.value: c for c, _ in classes}
    known: dict = {}

    def is_function(cls, depth=0) -> bool:
        if id(cls) in known:
            return known[id(cls)]
        known[id(cls)] = False
        result = False
        for base in cls.bases:
            if base.keyword is not None:
                continue
            full = resolve(ctx, base.value)
            if full in FUNCTION_BASES or full in ("autograd.Function",):
                result = True
            elif isinstance(base.value, cst.Name) and base.value.value in by_name and depth < 8:
                result = is_function(by_name[base.value.value], depth + 1)
            if result:
                break
        known[id(cls)] = result
        return result

    out = []
    for cls, top in classes:
        if is_function(cls):
            methods = {item.name.value: item for item in cls.body.body if isinstance(item, cst.FunctionDef)}
            out.append((cls, methods, top, [by_name.get(b.value.value) for b in cls.bases
                                            if isinstance(b.value, cst.Name) and b.value.value in by_name]))
    return out


def inherited_method(cls_entry, name: str, entries: dict):
    """The method `name` of a Function class or of its same-file bases."""
    cls, methods, _top, bases = cls_entry
    if name in methods:
        return methods[name]
    for base in bases:
        entry = entries.get(id(base)) if base is not None else None
        if entry is not None:
            found = inherited_method(entry, name, entries)
            if found is not None:
                return found
    return None


# ---------------------------------------------------------------- where a gradient is shared
# A hook's gradient is another node's gradient too only where the hooked value feeds an op that passes its
# gradient on unchanged: an addition or subtraction (both operands get one tensor), `backward(gradient)` (the
# caller's tensor). After `sum()` it is an expanded tensor (the write raises). A layer's or matmul's own
# gradient is a fresh tensor, and writing it changes nothing else (torch 2.13, grad_hooks_inplace.py).
_PASS_METHODS = frozenset({"add", "sub", "add_", "sub_", "subtract", "subtract_"})
_PASS_FUNCTIONS = frozenset({"torch.add", "torch.sub", "torch.subtract"})


def _nodes(roots):
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def shares_gradient(roots, matches, resolve_name=None) -> bool:
    """Whether a value `matches` picks out (or a name bound to one) feeds an addition, a subtraction,
    `backward(gradient)` or `sum()` somewhere in `roots` (statements)."""
    names: set = set()
    for node in _nodes(roots):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and matches(node.value):
            names.add(node.targets[0].target.value)

    def hit(expr) -> bool:
        return matches(expr) or (isinstance(expr, cst.Name) and expr.value in names)

    for node in _nodes(roots):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
            if hit(node.left) or hit(node.right):
                return True
        elif isinstance(node, cst.AugAssign) and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            if hit(node.value) or hit(node.target):
                return True
        elif isinstance(node, cst.Call):
            func = node.func
            args = [a.value for a in node.args if a.keyword is None and not a.star]
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in _PASS_METHODS and (hit(func.value) or (args and hit(args[0]))):
                    return True
                if method == "backward" and node.args and hit(func.value):
                    return True
                if method == "sum" and not node.args and hit(func.value):
                    return True
            full = resolve_name(func) if resolve_name is not None else dotted(func)
            if full in _PASS_FUNCTIONS and any(hit(a) for a in args):
                return True
    return False
