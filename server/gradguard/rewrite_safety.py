"""Is re-binding a name instead of writing its tensor in place unobservable? A proof, or the reason it fails.

`p /= s` changes the tensor that every reference to it sees; `p = p / s` changes only what the name `p` sees. The
two agree when no other reference can reach the tensor at the write: the name is a local of the scope holding the
write, every binding of it there makes a fresh tensor (an arithmetic result, a non-view torch op), and before the
write (or anywhere in a loop that repeats the write on the same tensor) it is only read in ways that make new
tensors. Anything else (a loop variable over a list, a dict item, an attribute, a parameter, a name bound to a view,
a tensor passed to a call or stored in a container) is an alias the rewrite would leave unmodified.
"""
from __future__ import annotations

import bisect

import libcst as cst

from .file_index import file_index

# Tensor methods and attributes whose result may be the tensor itself or share its storage: reading `p` through
# them makes an alias. The op table adds the view ops it knows; a trailing `_` (an in-place method) returns self.
_ALIAS_METHODS = frozenset({
    "to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long", "short", "bool", "byte", "char",
    "cpu", "cuda", "contiguous", "reshape", "reshape_as", "flatten", "unflatten", "view", "view_as", "expand",
    "expand_as", "permute", "transpose", "t", "squeeze", "unsqueeze", "narrow", "select", "unbind", "split", "chunk",
    "tensor_split", "hsplit", "vsplit", "dsplit", "unfold", "diagonal", "detach", "as_strided", "movedim", "moveaxis",
    "swapaxes", "swapdims", "view_as_real", "view_as_complex", "conj", "resolve_conj", "resolve_neg", "positive",
    "align_as", "align_to", "rename", "refine_names", "indices", "values", "crow_indices", "col_indices", "numpy",
    "share_memory_", "requires_grad_", "masked_scatter_", "__getitem__", "untyped_storage", "storage", "data_ptr",
    "split_with_sizes", "unsafe_split", "unsafe_chunk", "expand_copy", "as_subclass", "coalesce", "register_hook",
})
_ALIAS_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})
# Functions of torch that return their argument or a view of it.
_ALIAS_FUNCTIONS = _ALIAS_METHODS | frozenset({"as_tensor", "from_numpy", "broadcast_tensors", "atleast_1d",
                                               "atleast_2d", "atleast_3d", "meshgrid", "asarray"})
# Builtins that only read a tensor. Not `min`/`max`/`sorted`/`next`...: they return one of their arguments (or a
# row of it), so what they return is the tensor itself.
_READING_BUILTINS = frozenset({"print", "len", "float", "int", "bool", "str", "repr", "format", "isinstance", "type",
                               "id", "hash", "round", "abs", "sum", "any", "all", "math.isnan", "math.isfinite"})
# Methods whose effect stays with the tensor object: after a re-binding the new tensor would not have it.
_IDENTITY_METHODS = frozenset({"retain_grad"})
_TORCH_PREFIXES = ("torch.nn.functional.", "torch.", "F.", "nn.functional.", "torch.linalg.", "torch.special.")
_LOOPS = (cst.For, cst.While)
_BUDGET = 20_000  # statements walked by all proofs of one file
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""


def _torch_function(func) -> str | None:
    """`torch.exp` / `F.relu` / `torch.nn.functional.softmax` -> the function's last name; else None."""
    dotted = _dotted(func)
    for prefix in _TORCH_PREFIXES:
        if dotted.startswith(prefix) and "." not in dotted[len(prefix):]:
            return dotted[len(prefix):]
    return None


def _aliasing_method(name: str) -> bool:
    return name in _ALIAS_METHODS or (name.endswith("_") and not name.startswith("__"))


class _Scan:
    """One walk over the scope holding the write, in source order."""

    def __init__(self, name: str, write_stmt, tensors, new_tensor):
        self.name = name
        self.tensors = tensors  # node -> whether the analysis knows it as a tensor
        self.new_tensor = new_tensor  # call node -> whether the analysis knows its result as a tensor of its own
        self.write_stmt = write_stmt
        self.reason: str | None = None
        self.write_loops: tuple = ()  # loops (outermost first) around the write
        self.events: list = []  # (position, loops, kind, detail): kind "bind-fresh" | "alias"
        self.position = 0
        self.seen_write = False
        self.module_level = False
        self.spent = None  # the file's shared count of statements walked
        self.fails: list = []  # (position, reason), in walk order
        self.statement_at: dict = {}  # id(statement) -> (position, loops, conditional)
        self._bind_events = None  # the bind events, their positions, the unconditional ones', the alias events

    # -------------------------------------------------------------- the walk
    def statements(self, body, loops: tuple, conditional: bool) -> None:
        for stmt in body:
            self.statement(stmt, loops, conditional)

    def statement(self, stmt, loops: tuple, conditional: bool) -> None:
        self.position += 1
        if self.spent is not None:
            self.spent[0] += 1
        self.statement_at[id(stmt)] = (self.position, loops, conditional)
        if stmt is self.write_stmt:
            self.seen_write = True
            self.write_loops = loops
            self.write_position = self.position
            self.write_conditional = conditional
            return  # the rewrite replaces this statement whole: its own reads and binding are the rewrite's
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, loops, conditional)
            return
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            if stmt.name.value == self.name:
                self.fail(f"`{self.name}` is also the name of a {'function' if isinstance(stmt, cst.FunctionDef) else 'class'}")
            kept = "`{name}` is kept by a decorator or a default value"
            for deco in stmt.decorators:
                self.expression(deco.decorator, loops, kept)
            if isinstance(stmt, cst.FunctionDef):
                for param in _params(stmt.params):
                    if param.default is not None:
                        self.expression(param.default, loops, kept)
            self.inner_scope(stmt)
            return
        if isinstance(stmt, cst.For):
            self.expression(stmt.iter, loops, "`{name}` is iterated (its rows are views)")
            if _binds(stmt.target, self.name):
                self.fail(f"`{self.name}` is a loop variable (the tensor is also an item of what the loop walks)")
            inner = loops + (stmt,)
            self.suite(stmt.body, inner, False)  # conditional means: not run on every pass of the innermost loop
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, loops, True)
            return
        if isinstance(stmt, cst.While):
            inner = loops + (stmt,)
            self.expression(stmt.test, inner)
            self.suite(stmt.body, inner, False)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, loops, True)
            return
        if isinstance(stmt, cst.If):
            self.expression(stmt.test, loops)
            self.suite(stmt.body, loops, True)
            orelse = stmt.orelse
            while orelse is not None:
                if isinstance(orelse, cst.If):
                    self.expression(orelse.test, loops)
                    self.suite(orelse.body, loops, True)
                    orelse = orelse.orelse
                else:
                    self.suite(orelse.body, loops, True)
                    orelse = None
            return
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self.expression(item.item, loops, "`{name}` is used as a context manager")
                if item.asname is not None and _binds(item.asname.name, self.name):
                    self.fail(f"`{self.name}` is bound by a `with` statement")
            self.suite(stmt.body, loops, conditional)
            return
        if isinstance(stmt, cst.Try):
            self.suite(stmt.body, loops, True)
            for handler in stmt.handlers:
                if handler.name is not None and _binds(handler.name.name, self.name):
                    self.fail(f"`{self.name}` is bound by an `except` clause")
                self.suite(handler.body, loops, True)
            for part in (stmt.orelse, stmt.finalbody):
                if part is not None:
                    self.suite(part.body, loops, True)
            return
        self.fail("the statement around it is not one the proof follows")

    def suite(self, suite, loops: tuple, conditional: bool) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.statements(suite.body, loops, conditional)
        else:  # `if c: x = 1` on one line
            for small in suite.body:
                self.small(small, loops, conditional)

    def small(self, small, loops: tuple, conditional: bool) -> None:
        name = self.name
        if isinstance(small, (cst.Global, cst.Nonlocal)):
            if any(n.name.value == name for n in small.names):
                self.fail(f"`{name}` is a {'global' if isinstance(small, cst.Global) else 'nonlocal'} variable")
            return
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            names = small.names if not isinstance(small.names, cst.ImportStar) else ()
            if isinstance(small.names, cst.ImportStar):
                self.fail("a `from ... import *` may bind it")
            for alias in names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name) and bound.value == name:
                    self.fail(f"`{name}` is bound by an import")
            return
        bound = "`{name}` is bound to another name or an attribute"
        if isinstance(small, cst.Assign):
            self.expression(small.value, loops, bound)
            for target in small.targets:
                self.target(target.target, small.value, loops, conditional)
            if len(small.targets) > 1 and any(_binds(t.target, name) for t in small.targets):
                # `p = q = torch.exp(x)`: every target holds the one tensor (recorded after the binding, so only a
                # later fresh binding of `p` clears it)
                self.events.append((self.position, loops, "alias",
                                    f"`{name}` is one of the targets of a chained assignment (the others hold the "
                                    "same tensor)"))
            return
        if isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.expression(small.value, loops, bound)
                self.target(small.target, small.value, loops, conditional)
            return
        if isinstance(small, cst.AugAssign):
            self.expression(small.value, loops)
            if not (isinstance(small.target, cst.Name) and small.target.value == name):
                self.attribute_store(small.target, loops)
                self.expression(small.target, loops)  # `q[p] += 1` reads p; `p += 1` writes the same tensor
            return
        if isinstance(small, (cst.Del, cst.Pass, cst.Break, cst.Continue)):
            return
        if isinstance(small, cst.Expr):
            self.expression(small.value, loops)
            return
        if isinstance(small, cst.Assert):
            self.expression(small.test, loops)
            return
        if isinstance(small, cst.Return):
            if small.value is not None:
                self.expression(small.value, loops, "`{name}` is returned")
            return
        for child in small.children:
            if isinstance(child, cst.BaseExpression):
                self.expression(child, loops, "`{name}` is used in a way the proof cannot follow")

    def target(self, target, value, loops: tuple, conditional: bool) -> None:
        if isinstance(target, cst.Name):
            if target.value == self.name:
                fresh = _fresh(value, self.new_tensor, self.tensors)
                if fresh is not True:
                    self.fail(fresh)
                self.events.append((self.position, loops, "bind", conditional))
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            if _binds(target, self.name):
                self.fail(f"`{self.name}` is unpacked from another value (it may be one of its views)")
            return
        self.attribute_store(target, loops)
        self.expression(target, loops)  # `d[k] = ...`, `self.a = ...`: their parts are read

    def attribute_store(self, target, loops: tuple) -> None:
        """`p.tag = ...`, `p.grad = ...`: the attribute stays on the old tensor; the re-bound name has none."""
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                target.value.value == self.name:
            self.events.append((self.position, loops, "alias",
                                f"`{self.name}.{target.attr.value}` is set (the new tensor would not have it)"))

    def inner_scope(self, node) -> None:
        """A def or lambda. In a function, reading the name there captures it (the closure keeps a reference). At
        module level a function reads the global when it runs, which sees the re-binding, unless it keeps the
        tensor somewhere or declares the name global."""
        if not self.module_level:
            if any(inner.value == self.name for inner in _names_in(node)):
                self.fail(f"`{self.name}` is captured by a nested function or lambda")
            return
        inner = _Scan(self.name, None, self.tensors, self.new_tensor)
        inner.module_level = False
        body = node.body
        if isinstance(node, cst.Lambda):
            inner.expression(body, (), "`{name}` is returned by a lambda")
        elif isinstance(body, cst.IndentedBlock):
            inner.statements(body.body, (), False)
        else:
            for small in body.body:
                inner.small(small, (), False)
        escapes = [e for e in inner.events if e[2] == "alias"]
        if inner.reason is not None or escapes:
            self.fail(f"a function of this module reads `{self.name}` and may keep it"
                      f" ({inner.reason or escapes[0][3]})")

    def expression(self, expr, loops: tuple, context: str | None = None) -> None:
        stack = [(expr, ())]
        while stack:
            node, parents = stack.pop()
            if isinstance(node, cst.Name):
                if node.value == self.name:
                    self.load(node, parents, loops, context)
                continue
            if isinstance(node, cst.Lambda):
                self.inner_scope(node)
                continue
            if isinstance(node, cst.Attribute):
                stack.append((node.value, parents + (node,)))  # `p.shape`: the attribute name is not a read of p
                continue
            for child in node.children:
                if isinstance(child, cst.CSTNode):
                    stack.append((child, parents + (node,)))

    def load(self, name_node, parents: tuple, loops: tuple, context) -> None:
        """A read of the name: harmless (it makes a new tensor) or an alias/escape recorded with its position."""
        escape = _escape(name_node, parents, context, self.tensors)
        if escape is not None:
            self.events.append((self.position, loops, "alias", escape))

    def fail(self, reason: str) -> None:
        self.fails.append((self.position, reason))
        if self.reason is None:
            self.reason = reason

    # -------------------------------------------------------------- the verdict
    def verdict(self) -> str | None:
        if self.reason is not None:
            return self.reason
        if not self.seen_write:
            return "the write is not in the scope the proof walked"
        return self._judge()

    def verdict_at(self, write_stmt) -> str | None:
        """The verdict for a write statement (a simple statement line) of a scan made without one: what the
        statement itself does is left out, as if the walk had skipped it."""
        at = self.statement_at.get(id(write_stmt))
        if at is None:
            return self.reason or "the write is not in the scope the proof walked"
        reason = next((r for position, r in self.fails if position != at[0]), None)
        if reason is not None:
            return reason
        self.write_position, self.write_loops, self.write_conditional = at
        return self._judge()

    def _judge(self) -> str | None:
        """Events at the write's own position are the write statement's (a scan shared by several writes walked
        it): they are left out. Bind positions are sorted (events are recorded in walk order), so each question
        about them is a bisection, and many writes of one name cost no walk of its events each."""
        if self._bind_events is None:
            self._bind_events = [e for e in self.events if e[2] == "bind"]
            self._bind_positions = [e[0] for e in self._bind_events]
            self._fresh_positions = [e[0] for e in self._bind_events if not e[3]]
            self._aliases = [e for e in self.events if e[2] == "alias"]
        at = self.write_position
        if bisect.bisect_left(self._bind_positions, at) == 0:
            return f"`{self.name}` is not bound in this scope before the write"
        for position, loops, kind, detail in self._aliases:
            if position == at:
                continue
            if position < at and not self._rebound_between(position):
                return detail
            shared = [loop for loop in loops if loop in self.write_loops]
            if shared and not self._rebound_in_loop(shared[-1], self._bind_events):
                return detail + " in a loop that writes it again"
        return None

    def _rebound_between(self, position: int) -> bool:
        """An unconditional fresh binding between an alias and the write: the alias holds an older tensor."""
        after = bisect.bisect_right(self._fresh_positions, position)
        return after < len(self._fresh_positions) and self._fresh_positions[after] < self.write_position

    def _rebound_in_loop(self, loop, binds) -> bool:
        """The loop body binds a fresh tensor before the write on every pass (the alias of a pass is never
        written in the next one)."""
        return any(loop in b[1] and b[0] < self.write_position and not b[3]
                   and self.write_loops[:len(b[1])] == b[1] for b in binds)


def _params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


def _binds(target, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False


def _names_in(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            yield n
        stack.extend(c for c in n.children if isinstance(c, cst.CSTNode))


def _fresh(value, new_tensor, tensors) -> bool | str:
    """True when `value` makes a new tensor with a counter of its own; else why it may not."""
    if isinstance(value, (cst.BinaryOperation, cst.Comparison)):
        return True
    if isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Plus):
        return True
    if isinstance(value, cst.Call):
        func = value.func
        if any(a.keyword is not None and a.keyword.value == "out" for a in value.args):
            return "it is bound to an `out=` tensor"
        function = _torch_function(func)
        if function is not None:
            if function in _ALIAS_FUNCTIONS or function.endswith("_"):
                return f"it is bound to the result of `{_dotted(func)}`, which may share its argument's memory"
            return True
        if isinstance(func, cst.Attribute) and (tensors(func.value) or isinstance(
                func.value, (cst.BinaryOperation, cst.Call, cst.Subscript, cst.UnaryOperation))):
            method = func.attr.value
            if _aliasing_method(method):
                return f"it is bound to `.{method}()` of another tensor, which may share its memory"
            return True
        if new_tensor(value):
            return True
        return f"it is bound to what `{_dotted(func) or 'a call'}` returns, which may be a tensor kept elsewhere"
    if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
        what = {cst.Name: "another name", cst.Attribute: "an attribute", cst.Subscript: "an item or a slice"}[type(value)]
        return f"it is bound to {what} (`{_code(value)}`), which still refers to the same tensor"
    return f"it is bound to `{_code(value)}`, which the proof cannot follow"


def _code(node) -> str:
    text = cst.Module([]).code_for_node(node)
    return text if len(text) <= 40 else text[:37] + "..."


_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "put", "push",
                                "register_buffer", "register_parameter", "copy_", "set_", "__setitem__"})
_CONTAINERS = (cst.Element, cst.DictElement, cst.StarredElement, cst.List, cst.Tuple, cst.Set, cst.Dict,
               cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.CompFor)


def _escape(name_node, parents: tuple, context: str | None, tensors) -> str | None:
    """None when this read only makes new tensors; else how another reference comes to hold the tensor.

    `parents` runs from the walked expression's root to the read's parent; `context` says what the statement
    does with the root: None (it is only read), or the reason it escapes there ("bound to another name").
    """
    name = name_node.value
    cur = name_node
    i = len(parents) - 1
    while i >= 0:
        parent = parents[i]
        if isinstance(parent, cst.Attribute):
            grand = parents[i - 1] if i > 0 else None
            attr = parent.attr.value
            if isinstance(grand, cst.Call) and grand.func is parent:
                if attr in _IDENTITY_METHODS:
                    return f"`{name}.{attr}()` is called (the new tensor would not keep its gradient)"
                if not _aliasing_method(attr):
                    return None  # `p.sum()`, `p.exp()`: a new tensor
                cur, i = grand, i - 2  # `p.view(-1)`: an alias, followed further up
                continue
            if attr in _ALIAS_ATTRIBUTES:
                cur, i = parent, i - 1
                continue
            return None  # `p.shape`, `p.grad`
        if isinstance(parent, cst.Subscript):
            if parent.value is cur:
                cur, i = parent, i - 1  # `p[0]`: a view
                continue
            return None  # `x[p]`: p is an index
        if isinstance(parent, (cst.Index, cst.SubscriptElement, cst.Slice, cst.BinaryOperation, cst.Comparison,
                               cst.ComparisonTarget, cst.FormattedStringExpression, cst.FormattedString)):
            return None
        if isinstance(parent, cst.UnaryOperation):
            if not isinstance(parent.operator, cst.Plus):
                return None
            cur, i = parent, i - 1
            continue
        if isinstance(parent, cst.IfExp) and parent.test is cur:
            return None
        if isinstance(parent, (cst.BooleanOperation, cst.IfExp)):
            cur, i = parent, i - 1  # `p or q` evaluates to p itself
            continue
        if isinstance(parent, cst.Arg):
            call = parents[i - 1] if i > 0 else None
            if not isinstance(call, cst.Call):
                return f"`{name}` is used in a way the proof cannot follow"
            return _passed(name, call, tensors)
        if isinstance(parent, _CONTAINERS):
            j = i
            while j >= 0 and isinstance(parents[j], _CONTAINERS):
                j -= 1
            if j >= 1 and isinstance(parents[j], cst.Arg) and isinstance(parents[j - 1], cst.Call) and \
                    _torch_copies(parents[j - 1]):
                return None  # `torch.cat([p, q])`, `torch.stack((p, q))`: a copy
            return f"`{name}` is stored in a container"
        if isinstance(parent, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield)):
            return f"`{name}` is bound to another name or handed on"
        return f"`{name}` is used in a way the proof cannot follow"
    return context.format(name=name) if context is not None else None


def _torch_copies(call) -> bool:
    function = _torch_function(call.func)
    return function is not None and function not in _ALIAS_FUNCTIONS and not function.endswith("_")


def _passed(name: str, call, tensors) -> str | None:
    """`p` is an argument of `call`: a read when the call only computes with it."""
    callee = _dotted(call.func)
    if callee in _READING_BUILTINS or _torch_copies(call):
        return None
    func = call.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        receiver = func.value
        if method not in _CONTAINER_METHODS and not _aliasing_method(method) and tensors(receiver):
            return None  # `q.mul(p)`: another tensor's op reads p
    return f"`{name}` is passed to `{callee or 'a call'}` (it may keep a reference)"


def inplace_receiver(node):
    """The tensor an in-place call writes, when it is not a temporary: `t` of `t.sigmoid_()`, `p` of
    `torch.relu_(p)`, `t.view(-1)` of `t.view(-1).exp_()`; None for a temporary (`torch.exp(x).sigmoid_()`) and
    for anything but an in-place call. Its result is that tensor itself."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    function = _torch_function(func)
    name = function or (func.attr.value if isinstance(func, cst.Attribute) else
                        func.value if isinstance(func, cst.Name) else "")
    if not name.endswith("_") or name.startswith("_"):
        return None
    if function is None and isinstance(func, cst.Attribute):
        receiver = func.value
    else:
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        receiver = positional[0] if positional else None
    if receiver is None or _fresh(receiver, lambda call: False, lambda expr: True) is True:
        return None
    return receiver


def argument_handed_on(facts, call):
    """The argument of `call` whose tensor the call returns, by the analysis's values (`drop(h)` of a dropout with
    p=0, an empty `nn.Sequential`, an in-place layer); None when it returns a tensor of its own, or is no call."""
    if not isinstance(call, cst.Call):
        return None
    made = facts.expr_values.get(id(call))
    if made is None:
        return None
    for arg in call.args:
        value = facts.expr_values.get(id(arg.value)) or facts.name_values.get(id(arg.value))
        if value is not None and (value is made or value.counter is made.counter):
            return arg.value
    return None


def shares_counter(ctx, made) -> bool:
    """Another tensor made elsewhere shares the counter of `made` (a view of it, or it of another)."""
    return any(t is not made and t.origin is not made.origin
               for t in file_index(ctx).tensors_on_counter(made.counter))


def unobservable_rebinding(ctx, write, hint, name: str) -> str | None:
    """None when re-binding `name` instead of the in-place `write` is proven unobservable; else the reason.

    Reasons read as a clause: "`p` is a loop variable (the tensor is also an item of what the loop walks)".
    """
    stmt = write.stmt
    holder = file_index(ctx).function_holding(write.top or hint, stmt)
    facts = ctx.facts

    def tensors(node) -> bool:
        return facts.expr_values.get(id(node)) is not None or facts.name_values.get(id(node)) is not None

    def new_tensor(call, depth: int = 0) -> bool:
        """The analysis ran the call (a layer, a function of this file) and got a tensor no other value shares; a
        call handing an argument on (`drop(act(h))`) is as new as that argument."""
        made = facts.expr_values.get(id(call))
        if made is None or made.view_of is not None or made.data_of is not None:
            return False
        passed = argument_handed_on(facts, call)
        if passed is not None:
            return depth < 64 and _fresh(passed, lambda inner: new_tensor(inner, depth + 1), tensors) is True
        return not shares_counter(ctx, made)

    if holder is not None and any(p.name.value == name for p in _params(holder.params)):
        return f"`{name}` is a parameter (the caller's tensor would no longer be modified)"
    if holder is None and write.call_chain:
        return "the write runs inside a function called from here"
    blocks = getattr(ctx.locator, "blocks", None)
    if holder is None and not blocks:
        return "the module's other statements are not known"
    if holder is None and any(pb.module is None for pb in blocks):
        return "part of the file did not parse"
    if holder is not None and not isinstance(holder.body, cst.IndentedBlock):
        return "the function is written on one line"
    # One walk of the scope per name, shared by every write of that name there (a write statement is left out
    # of the verdict as the walk would have skipped it); the walks of one file are bounded, so a file of many
    # scopes stays linear (past the budget a rewrite is simply not proven safe).
    spent = ctx.__dict__.setdefault("_rebinding_budget", [0])
    if not isinstance(stmt, cst.SimpleStatementLine):  # a compound statement: skipped whole by a walk of its own
        if spent[0] > _BUDGET:
            return "the file is too large for the proof"
        return _walk_scope(_Scan(name, stmt, tensors, new_tensor), spent, holder, blocks).verdict()
    scans = file_index(ctx).memo("rebinding scans")
    key = (id(holder) if holder is not None else "module", name)
    scan = scans.get(key)
    if scan is None:
        if spent[0] > _BUDGET:
            return "the file is too large for the proof"
        scan = scans[key] = _walk_scope(_Scan(name, None, tensors, new_tensor), spent, holder, blocks)
    return scan.verdict_at(stmt)


def _walk_scope(scan: _Scan, spent: list, holder, blocks) -> _Scan:
    """Walk the function holding the write, or the whole module's statements."""
    scan.spent = spent
    if holder is not None:
        scan.statements(holder.body.body, (), False)
    else:
        scan.module_level = True
        for pb in blocks:
            scan.statements(pb.module.body, (), False)
    return scan


# The reasons in Chinese: each English clause above, its code spans kept.
_C = r"(`[^`]*`)"
_ZH = [
    (rf"^{_C} is a loop variable \(the tensor is also an item of what the loop walks\)", r"\1 是循环变量（该张量也是循环所遍历对象的元素）"),
    (rf"^{_C} is bound to another name or an attribute", r"\1 被绑定到另一个名字或属性"),
    (rf"^{_C} is one of the targets of a chained assignment \(the others hold the same tensor\)",
     r"\1 是链式赋值的目标之一（其他目标持有同一个张量）"),
    (rf"^{_C} is set \(the new tensor would not have it\)", r"\1 被赋值（新张量没有这个属性）"),
    (rf"^{_C} is called \(the new tensor would not keep its gradient\)", r"调用了 \1（新张量不会保留它的梯度）"),
    (rf"^{_C} is bound to another name or handed on", r"\1 被绑定到另一个名字或被传出"),
    (rf"^{_C} is iterated \(its rows are views\)", r"\1 被遍历（它的各行是视图）"),
    (rf"^{_C} is kept by a decorator or a default value", r"\1 被装饰器或默认值保存"),
    (rf"^{_C} is returned by a lambda", r"\1 被 lambda 返回"),
    (rf"^{_C} is returned", r"\1 被返回"),
    (rf"^{_C} is used as a context manager", r"\1 被用作上下文管理器"),
    (rf"^{_C} is used in a way the proof cannot follow", r"\1 的用法无法被证明跟踪"),
    (rf"^{_C} is a parameter \(the caller's tensor would no longer be modified\)", r"\1 是参数（调用方的张量将不再被修改）"),
    (rf"^{_C} is a global variable", r"\1 是全局变量"),
    (rf"^{_C} is a nonlocal variable", r"\1 是 nonlocal 变量"),
    (rf"^{_C} is bound by an import", r"\1 由 import 绑定"),
    (rf"^{_C} is passed to {_C} \(it may keep a reference\)", r"\1 被传给 \2（它可能保留引用）"),
    (rf"^{_C} is stored in a container", r"\1 被存入容器"),
    (rf"^{_C} is also the name of a function", r"\1 也是一个函数的名字"),
    (rf"^{_C} is also the name of a class", r"\1 也是一个类的名字"),
    (rf"^{_C} is bound by a `with` statement", r"\1 由 `with` 语句绑定"),
    (rf"^{_C} is bound by an `except` clause", r"\1 由 `except` 子句绑定"),
    (rf"^{_C} is captured by a nested function or lambda", r"\1 被嵌套函数或 lambda 捕获"),
    (rf"^{_C} is not bound in this scope before the write", r"\1 在写入之前没有在此作用域中绑定"),
    (rf"^{_C} is unpacked from another value \(it may be one of its views\)", r"\1 是从另一个值解包得到的（可能是它的视图之一）"),
    (rf"^a function of this module reads {_C} and may keep it", r"本模块的某个函数读取 \1 并可能保留它"),
    (r"^a `from \.\.\. import \*` may bind it", r"`from ... import *` 可能绑定它"),
    (r"^it is bound to an `out=` tensor", r"它被绑定到 `out=` 张量"),
    (rf"^it is bound to `\.([^`]*)\(\)` of another tensor, which may share its memory", r"它被绑定到另一个张量的 `.\1()`，可能共享内存"),
    (rf"^it is bound to the result of {_C}, which may share its argument's memory", r"它被绑定到 \1 的结果，可能与参数共享内存"),
    (rf"^it is bound to what {_C} returns, which may be a tensor kept elsewhere", r"它被绑定到 \1 的返回值，可能是保存在别处的张量"),
    (rf"^it is bound to another name \({_C}\), which still refers to the same tensor", r"它被绑定到另一个名字（\1），仍指向同一个张量"),
    (rf"^it is bound to an attribute \({_C}\), which still refers to the same tensor", r"它被绑定到属性（\1），仍指向同一个张量"),
    (rf"^it is bound to an item or a slice \({_C}\), which still refers to the same tensor", r"它被绑定到元素或切片（\1），仍指向同一个张量"),
    (rf"^it is bound to {_C}, which the proof cannot follow", r"它被绑定到 \1，证明无法跟踪"),
    (r"^the statement around it is not one the proof follows", r"它所在的语句不在证明能跟踪的范围内"),
    (r"^the write is not in the scope the proof walked", r"写入不在证明所检查的作用域中"),
    (r"^the function is written on one line", r"函数写在一行上"),
    (r"^the write runs inside a function called from here", r"写入发生在从这里调用的函数中"),
    (r"^the module's other statements are not known", r"模块的其他语句未知"),
    (r"^part of the file did not parse", r"文件的一部分无法解析"),
    (r"^the file is too large for the proof", r"文件太大，无法完成证明"),
    (r" in a loop that writes it again$", r"，且所在循环会再次写入它"),
]


def zh_reason(reason: str) -> str:
    """The reason in Chinese (its leading clause and the loop suffix; code spans kept as they are)."""
    import re

    out = reason
    for pattern, replacement in _ZH:
        out = re.sub(pattern, replacement, out)
    # a parenthesised detail after "may keep it (...)": translated the same way
    return re.sub(r" \((.*)\)$", lambda m: "（" + zh_reason(m.group(1)) + "）", out)
