"""Classes of the user's code: what calling them builds, and a summary for classes whose body is not run.

A class of this file is instantiated by running its `__init__` as code (see calls.py); the summary here
(how many parameter-holding layers `__init__` assigns) is only the fallback for classes imported from the
user's other files and for calls past the interpretation budget.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .names import canonical, dotted

MODULE_BASES = {"torch.nn.Module", "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
                "lightning.LightningModule", "pytorch_lightning.LightningModule",
                "lightning.pytorch.LightningModule", "pytorch_lightning.core.LightningModule",
                "pytorch_lightning.core.lightning.LightningModule"}
LIGHTNING_BASES = {b for b in MODULE_BASES if "ightning" in b}
FUNCTION_BASES = {"torch.autograd.Function", "torch.autograd.function.Function"}


@dataclass
class ClassInfo:
    """A class of the user's code."""

    name: str
    node: cst.ClassDef
    is_module: bool
    attrs: dict[str, cst.BaseExpression] = field(default_factory=dict)  # self.<attr> = <expr> in __init__
    param_layers: int = 0
    unknown_children: int = 0
    bases: list[str] = field(default_factory=list)  # resolved: "torch.nn.Module", or a class name of this file
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    external: bool = False  # read from another file: summarised, never interpreted
    is_function: bool = False  # a torch.autograd.Function subclass
    is_lightning: bool = False
    torch_base: str = ""  # the torch.nn class it extends ("torch.nn.Sequential"), if any
    # a `@dataclass` whose generated `__init__` we can spell: (field, default expression or None) in order
    dataclass_fields: list | None = None


# Torch layers whose call returns something other than one tensor, or whose kind their call reads: a subclass of one
# is left an unknown module (a subclass of nn.LSTM returning one tensor would unpack as views of it).
_LAYER_BASES_NOT_MODELLED = {"torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU", "torch.nn.LSTMCell",
                             "torch.nn.MultiheadAttention", "torch.nn.Embedding"}


def layer_base(analysis, base: str) -> bool:
    """`base` is a torch layer of the op table that a class of this file may extend and stay that layer."""
    row = analysis.ops.by_name.get(base)
    return row is not None and row.kind == "module" and base not in _LAYER_BASES_NOT_MODELLED


def collect_class(analysis, node: cst.ClassDef) -> ClassInfo:
    """Read a class statement: its bases, methods and the `self.<attr> = ...` lines of `__init__`."""
    bases = []
    for arg in node.bases:
        if arg.keyword is not None:
            continue
        q = analysis.resolve_dotted(arg.value)
        bases.append(canonical(q) if q else (dotted(arg.value) or ""))
    info = ClassInfo(node.name.value, node, False, bases=bases)
    for base in bases:
        if base in MODULE_BASES:
            info.is_module = True
            info.torch_base = base if base.startswith("torch.nn.") else "torch.nn.Module"
            info.is_lightning = base in LIGHTNING_BASES
        elif base in FUNCTION_BASES:
            info.is_function = True
        elif layer_base(analysis, base):
            # `class KDLoss(nn.KLDivLoss)`, `class ClampedLinear(nn.Linear)`: a module that is that torch layer
            info.is_module = True
            info.torch_base = base
        elif base in analysis.classes:
            other = analysis.classes[base]
            info.is_module = info.is_module or other.is_module
            info.is_function = info.is_function or other.is_function
            info.is_lightning = info.is_lightning or other.is_lightning
            info.torch_base = info.torch_base or other.torch_base
    for item in node.body.body:
        if type(item) is cst.FunctionDef:
            info.methods[item.name.value] = item
    init = info.methods.get("__init__")
    if init is None and not info.is_module and not info.is_function:
        info.dataclass_fields = _dataclass_fields(analysis, node, bases)
    if init is not None:
        for stmt in walk_statements(init.body.body):
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if type(small) is cst.Assign and len(small.targets) == 1:
                        target = small.targets[0].target
                        if (type(target) is cst.Attribute and type(target.value) is cst.Name
                                and target.value.value == "self"):
                            info.attrs[target.attr.value] = small.value
    return info


_DATACLASS = {"dataclasses.dataclass"}
_FIELD = {"dataclasses.field"}
_NO_DEFAULT = None


def _dataclass_fields(analysis, node: cst.ClassDef, bases) -> list | None:
    """The parameters of the `__init__` that `@dataclass` writes, in order: the annotated class-level names
    (a dataclass base's fields first), each with its default expression. None when the class is not a dataclass
    or the generated `__init__` is not that simple (`init=False`, `kw_only`, `InitVar`, `KW_ONLY`, a field with
    `init=False`, a base that is not a dataclass of this file)."""
    decorator = None
    for d in node.decorators:
        expr = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
        if analysis.resolve_dotted(expr) in _DATACLASS:
            decorator = d.decorator
    if decorator is None:
        return None
    if type(decorator) is cst.Call and any(
            a.keyword is None or a.keyword.value in ("init", "kw_only") for a in decorator.args):
        return None
    fields: list = []
    for base in bases:
        other = analysis.classes.get(base)
        if other is None or other.dataclass_fields is None:
            return None
        fields.extend(other.dataclass_fields)
    for stmt in node.body.body:
        if type(stmt) is not cst.SimpleStatementLine:
            continue
        for small in stmt.body:
            if type(small) is not cst.AnnAssign or type(small.target) is not cst.Name:
                continue
            annotation = dotted(small.annotation.annotation) or ""
            if type(small.annotation.annotation) is cst.Subscript:
                annotation = dotted(small.annotation.annotation.value) or ""
            last = annotation.rsplit(".", 1)[-1]
            if last == "ClassVar":
                continue
            if last in ("InitVar", "KW_ONLY"):
                return None
            default = small.value
            if type(default) is cst.Call and analysis.resolve_dotted(default.func) in _FIELD:
                keywords = {a.keyword.value: a.value for a in default.args if a.keyword is not None}
                init = keywords.get("init")
                if len(keywords) != len(default.args) or keywords.get("kw_only") is not None or (
                        init is not None and not (type(init) is cst.Name and init.value == "True")):
                    return None
                default = keywords.get("default", default)
            name = small.target.value
            known = [i for i, f in enumerate(fields) if f[0] == name]
            if known:
                fields[known[0]] = (name, default)  # a redefined field keeps its place
            else:
                fields.append((name, default))
    return fields


def summarise_layers(analysis, info: ClassInfo) -> None:
    """Count the parameter-bearing layers `__init__` assigns (for 'calling it saves its weights')."""
    if not info.is_module:
        return
    for expr in info.attrs.values():
        _count_layers(analysis, expr, info)


def _count_layers(analysis, expr, info: ClassInfo) -> None:
    q = analysis.callee_qualname(expr) if type(expr) is cst.Call else None
    if q is None:
        return
    if q == "torch.nn.Parameter":
        info.param_layers += 1
        return
    row = analysis.ops.by_name.get(q)
    if row is not None and row.kind == "module":
        info.param_layers += 1 if row.params else 0
    elif q in ("torch.nn.Sequential", "torch.nn.ModuleList"):
        for arg in expr.args:
            if type(arg.value) is cst.Call:
                _count_layers(analysis, arg.value, info)
            elif type(arg.value) in (cst.List, cst.Tuple):
                for element in arg.value.elements:
                    _count_layers(analysis, element.value, info)
            else:
                info.unknown_children += 1
    elif q in analysis.classes and q != info.name:
        other = analysis.classes[q]
        info.param_layers += other.param_layers
        info.unknown_children += other.unknown_children
    elif q.startswith("torch.nn."):
        info.unknown_children += 1


def find_method(analysis, info: ClassInfo, name: str, after: ClassInfo | None = None):
    """(method node, defining ClassInfo) along the user-class bases (depth first, as simple MROs are)."""
    seen = set()
    order = []

    def walk(c):
        if c.name in seen:
            return
        seen.add(c.name)
        order.append(c)
        for base in c.bases:
            other = analysis.classes.get(base)
            if other is not None:
                walk(other)

    walk(info)
    for c in order:
        if not c.external:
            analysis.touch(c.node)  # what the lookup found, or found missing, depends on each class it walked
    if after is not None:
        names = [c.name for c in order]
        order = order[names.index(after.name) + 1:] if after.name in names else []
    for c in order:
        if name in c.methods and not c.external:
            return c.methods[name], c
    return None, None


# (type checks by identity: libcst's node classes are ABCs, and a failing isinstance against one is slow)
_SUITES = frozenset({cst.IndentedBlock, cst.SimpleStatementSuite})
_NOT_ENTERED = frozenset({cst.FunctionDef, cst.ClassDef})  # nested scopes


def walk_statements(stmts):
    """Statements, recursing into compound statements (not into nested defs/classes)."""
    for stmt in stmts:
        yield stmt
        kind = type(stmt)
        if kind in _NOT_ENTERED:
            continue
        body = getattr(stmt, "body", None)
        if type(body) in _SUITES:
            yield from walk_statements(body.body)
        orelse = getattr(stmt, "orelse", None)
        while orelse is not None:
            inner = getattr(orelse, "body", None)
            if type(inner) in _SUITES:
                yield from walk_statements(inner.body)
                orelse = getattr(orelse, "orelse", None) if type(orelse) is cst.If else None
            else:
                break
        for handler in getattr(stmt, "handlers", ()):
            yield from walk_statements(handler.body.body)
        final = getattr(stmt, "finalbody", None)
        if final is not None:
            yield from walk_statements(final.body.body)
        for case in getattr(stmt, "cases", ()):
            yield from walk_statements(case.body.body)
