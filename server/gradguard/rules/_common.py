"""Wording and fix helpers shared by several rules (the rules themselves stay one file each)."""
from __future__ import annotations

import re

import libcst as cst

from .. import fixes
from ..file_index import file_index
from ..findings import Edit
from ..fixes_order import _parents
from ..source import Span
from ..rewrite_safety import argument_handed_on, inplace_receiver, unobservable_rebinding, zh_reason
from . import RuleContext


def name_of(tensor, fallback: str = "the tensor") -> str:
    if tensor is None or not tensor.name:
        return fallback
    # labels the analysis makes ("the parameters of `G`") already carry their code spans
    return tensor.name if "`" in tensor.name else f"`{tensor.name}`"


def creation_site(tensor, hint):
    """(node, its top) where a tensor was made: for a layer's parameter, the layer's constructor (not the
    `model.weight` expression the write reads it through)."""
    if tensor is None:
        return None, hint
    module = tensor.module_params
    if module is not None and module.ctor is not None:
        return module.ctor, module.top or hint
    return tensor.origin, hint


def created_line(ctx: RuleContext, tensor, hint) -> int:
    node, top = creation_site(tensor, hint)
    if node is None:
        return 0
    return ctx.line(node, top)


def use_phrase(ctx: RuleContext, problem) -> str:
    """'`backward()` on line 7' or 'the caller's `backward()` (the value is returned on line 9)'."""
    if problem.use is None:
        return ctx.t("backward()", "backward()")
    line = ctx.line(problem.use, problem.top)
    if isinstance(problem.use, cst.Return):
        return ctx.t(f"the caller's `backward()` (the value is returned on line {line})",
                     f"调用方的 `backward()`（该值在第 {line} 行返回）")
    return ctx.t(f"`backward()` on line {line}", f"第 {line} 行的 `backward()`")


# In-place methods whose out-of-place twin exists on torch.Tensor (`fill_`, `zero_`, `uniform_` ... have none).
OUT_OF_PLACE = set(
    "add sub mul div true_divide floor_divide pow clamp clamp_min clamp_max clip abs neg exp log log1p log2 log10 "
    "expm1 sqrt rsqrt sigmoid tanh relu sin cos tan atan asin acos sinh cosh erf erfc floor ceil round trunc frac "
    "sign masked_fill masked_scatter index_add index_fill index_copy index_put scatter scatter_add lerp addcmul "
    "addcdiv addmm addmv baddbmm fmod remainder reciprocal square logit nan_to_num hypot atan2 t transpose squeeze "
    "unsqueeze tril triu renorm".split()
)


def _chained_on(outer, inner) -> bool:
    """`outer` is a method call on the result of `inner` (`w.mul_(d).add_(x)`: add_ on what mul_ returned)."""
    node = outer
    while type(node) is cst.Call and type(node.func) is cst.Attribute:
        node = node.func.value
        if node is inner:
            return True
    return False


def first_of_chains(problems) -> tuple[list, dict]:
    """The problems left when a chained write (`ema_p.mul_(decay).add_(...)`) counts once: torch raises at the first
    write of the chain, so the later ones are never reached; and, per kept problem, the ops chained after it."""
    kept, later = [], {}
    for problem in problems:
        first = next((other for other in problems if other is not problem and other.write.stmt is problem.write.stmt
                      and _chained_on(problem.write.node, other.write.node)), None)
        if first is None:
            kept.append(problem)
    for problem in kept:
        later[id(problem)] = [other.write.op for other in problems if other is not problem
                              and other.write.stmt is problem.write.stmt
                              and _chained_on(other.write.node, problem.write.node)]
    return kept, later


def made_each_call(ctx, tensor, write, hint) -> bool:
    """The leaf is made in the def that writes it, in the same pass of that def's loops (`result =
    self.base_layer(x)` then `result += ...` in a `forward` whose output a hook made require grad): re-binding its
    name there changes nothing another call or iteration sees, however often a training loop backpropagates."""
    origin, top = tensor.origin, write.top or hint
    if origin is None or top is None:
        return False
    parents = _parents(top)

    def frame(node):  # (the innermost def holding node, the loops inside that def holding it), or None
        loops = []
        node = parents.get(id(node))
        while node is not None:
            if isinstance(node, cst.FunctionDef):
                return node, loops
            if isinstance(node, (cst.For, cst.While)):
                loops.append(node)
            node = parents.get(id(node))
        return None

    if id(origin) not in parents or id(write.stmt) not in parents:
        return False
    made, written = frame(origin), frame(write.stmt)
    return made is not None and written is not None and made[0] is written[0] and \
        [id(n) for n in made[1]] == [id(n) for n in written[1]]


def copy_before_write(ctx, write, hint) -> tuple[Edit, str] | None:
    """`x[mask] = v` on a leaf `x` or `x[0] = v` on a view of it (a layer output a hook made require grad): `x =
    x.clone()` on a line of its own before the write, which then changes the copy and is recorded; the gradient
    reaches the leaf through it."""
    stmt = write.stmt
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else (
        small.target if isinstance(small, cst.AugAssign) else None)
    if not isinstance(target, cst.Subscript):
        return None
    root = target.value
    while isinstance(root, cst.Subscript):
        root = root.value
    if not isinstance(root, cst.Name) or root.value != write.target_name:
        return None
    span = ctx.span(stmt, hint)
    if span is None:
        return None
    indent = ctx.source.line_text(span.start_line)[:span.start_col]
    if indent.strip():
        return None
    line = f"{root.value} = {root.value}.clone()"
    return Edit(Span(span.start_line, 0, span.start_line, 0), f"{indent}{line}\n"), line


def out_of_place_rewrite(ctx: RuleContext, write, hint) -> tuple[Edit, str] | None:
    """`y.add_(1)` -> `y = y.add(1)`; `y += 1` -> `y = y + 1`, for a statement writing a plain name (see fixes.py)."""
    return fixes.out_of_place(ctx, write, hint, OUT_OF_PLACE)


def _root_name(node) -> str | None:
    """`tensor` of `tensor[0]`, `x[0, :][1]`; None for anything else."""
    while isinstance(node, cst.Subscript):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


_VIEW_METHODS = frozenset({"unsqueeze", "squeeze", "view", "reshape", "transpose", "permute", "t", "expand",
                           "flatten", "contiguous", "narrow", "select", "unflatten", "view_as", "expand_as",
                           "movedim", "swapaxes"})


def clone_argument(ctx: RuleContext, save, write=None) -> tuple[tuple[Edit, ...], str] | None:
    """At the call that saved a tensor, read it through `.clone()`: `torch.sin(x[i])` -> `torch.sin(x[i].clone())`.
    With `write`: an operand that is the very name the write writes, in the same function (a state a helper both
    saves and, at its next call, updates in place), counts too when the analysis ran that function in more than one
    context (the node then maps to another run's tensor). Reading a copy never changes a value."""
    if save.read_at is not None:  # saved as one arm of `a if c else b`: that arm is read through a copy
        cloned = fixes.with_method(ctx, *save.read_at, "clone")
        return ((cloned[0],), f"`{cloned[1]}`") if cloned is not None else None
    call = save.node
    if not isinstance(call, (cst.Call, cst.BinaryOperation)):
        return None
    target_counter = save.counter
    facts = ctx.facts
    candidates = []
    if isinstance(call, cst.BinaryOperation):
        candidates = [call.left, call.right]
    elif isinstance(call, cst.Call):
        if isinstance(call.func, cst.Attribute):
            candidates.append(call.func.value)
        candidates += [a.value for a in call.args if a.keyword is None]
        # never the tensor an in-place op writes (`t.sigmoid_()`, `torch.relu_(p)`): its copy would be written
        # instead, and `t` would silently keep its old values
        receiver = inplace_receiver(call)
        candidates = [c for c in candidates if c is not receiver]
    # Every operand on the counter is saved (`p * p` saves both): each is read through its own copy. A view of
    # it (`v[i - 1].unsqueeze(-1)`) is copied where it is read: `v[i - 1].clone().unsqueeze(-1)`.
    found = []
    for expr in candidates:
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value in _VIEW_METHODS:
            expr = expr.func.value
        if isinstance(expr, (cst.Subscript, cst.Name, cst.Attribute)):
            tensor = facts.expr_values.get(id(expr))
            # the same name the save was made through, when the file's calls interpreted it more than once (the
            # node then maps to the last run's tensor)
            same = expr is save.expr or (tensor is not None and (tensor.counter is target_counter or (
                isinstance(expr, cst.Name) and save.tensor_name == expr.value and save.what == "input"))) or (
                save.via_index and save.what == "input" and isinstance(expr, cst.Subscript)
                and _root_name(expr) is not None and _root_name(expr) == _root_name(save.expr))
            if not same and write is not None and isinstance(expr, cst.Name) and save.what == "input":
                same = _written_root(write) == expr.value and _same_function(ctx, save, write)
            if not same and write is not None and write.kind == "setitem" and isinstance(expr, cst.Attribute) \
                    and save.what == "input":
                # `q @ self.queue`, then `self.queue[:, i:j] = k.T` in the same method (a queue enqueued in forward)
                root = _written_expr(write)
                same = root is not None and ctx.code(root) == ctx.code(expr) and _same_function(ctx, save, write)
            if same:
                cloned = fixes.with_method(ctx, expr, save.top, "clone")
                if cloned is None:
                    return None
                found.append(cloned)
    if not found:
        return None
    # `t * t` clones both operands: the title names `t.clone()` once (it read "`t.clone()`, `t.clone()`")
    return tuple(edit for edit, _ in found), ", ".join(f"`{text}`" for text in dict.fromkeys(t for _, t in found))


def _written_expr(write):
    """The expression a write changes, with its index taken off: `self.queue` of `self.queue[:, i:j] = v`, of
    `self.queue.mul_(m)` and of `self.queue += v`; None for other writes."""
    node = write.node
    if isinstance(node, cst.AugAssign):
        node = node.target
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        node = node.func.value
    while isinstance(node, cst.Subscript):
        node = node.value
    return node if isinstance(node, (cst.Name, cst.Attribute)) else None


def _written_root(write) -> str | None:
    """The plain name a write changes: `c` of `c.copy_(...)`, `c += 1`, `c[:, -1:] = x`."""
    name = written_name(write)
    if name is not None:
        return name.value
    stmt = write.stmt
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return _root_name(small.targets[0].target) if isinstance(small.targets[0].target, cst.Subscript) else None
    return None


def _same_function(ctx: RuleContext, save, write) -> bool:
    """The save and the write are in one def (and the same top-level statement)."""
    top = save.top
    if top is None or top is not write.top:
        return False
    stmt = write.stmt
    found = []
    for node, in_def in _defs_holding(top, (save.node, stmt)):
        found.append(in_def)
    return len(found) == 2 and found[0] is not None and found[0] is found[1]


def _defs_holding(top, nodes):
    """(node, the innermost def holding it) for each of `nodes` found under `top`."""
    wanted = {id(n): n for n in nodes}
    out = []
    stack = [(top, None)]
    while stack:
        node, holder = stack.pop()
        if isinstance(node, cst.FunctionDef):
            holder = node
        if id(node) in wanted:
            out.append((node, holder))
        stack.extend((c, holder) for c in node.children)
    return out


def clone_unpacked_output(ctx: RuleContext, save) -> tuple[Edit, str] | None:
    """An op returning a tuple whose saved output is unpacked into a name of its own (`d, V = torch.linalg.eigh(M)`,
    then `d[i] = eps`): `d = d.clone()` on the next line, so every later reference reaches the copy and the saved
    output is never written. The tuple was never bound, so nothing else can reach the original."""
    if save.what != "output" or getattr(save, "tuple_index", None) is None:
        return None
    stmt, top = statement_of(ctx, save.node, save.top)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or small.value is not save.node:
        return None
    target = small.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    if save.tuple_index >= len(target.elements) or not isinstance(target.elements[save.tuple_index].value, cst.Name):
        return None
    name = target.elements[save.tuple_index].value.value
    others = [e.value for i, e in enumerate(target.elements) if i != save.tuple_index]
    if any(isinstance(o, cst.Name) and o.value == name for o in others):
        return None
    span = ctx.span(stmt, top)
    if span is None:
        return None
    indent = ctx.source.line_text(span.start_line)[:span.start_col]
    if indent.strip():
        return None
    end = len(ctx.source.line_text(span.end_line))
    line = f"{name} = {name}.clone()"
    return Edit(Span(span.end_line, end, span.end_line, end), f"\n{indent}{line}"), line


def clone_output(ctx: RuleContext, save) -> tuple[tuple[Edit, ...], str] | None:
    """At the op whose output was saved, keep a copy for the program: `p = torch.sigmoid(x)` ->
    `p = torch.sigmoid(x).clone()`. Every later reference reaches the copy, so the saved output is never written
    and every value the program computes stays the same, whatever aliases it has."""
    if save.what != "output":
        return None
    if getattr(save, "tuple_index", None) is not None:
        return None  # `torch.linalg.eigh(a).clone()`: the op returns a tuple, which has no clone
    node, top = save.node, save.top
    if save.layer_call is not None:  # a layer of a container saved it: its output is the container's, copied there
        node, top = save.layer_call
    if not isinstance(node, (cst.Call, cst.BinaryOperation)):
        return None
    cloned = fixes.with_method(ctx, node, top, "clone")
    return ((cloned[0],), f"`{cloned[1]}`") if cloned else None


def copied_output_risk(ctx: RuleContext, save) -> str | None:
    """None when copying what an op saved at the op changes no value; else why it may. The output of an in-place op
    is the tensor it wrote (`p = t.sigmoid_()`): with a copy, later writes through `p` no longer reach `t`."""
    receiver = inplace_receiver(save.node)
    if receiver is None:
        return None
    code = _short(ctx.code(receiver))
    return ctx.t(f"`{save.op}` writes `{code}` itself, and later writes through the copy would no longer reach it",
                 f"`{save.op}` 写入的就是 `{code}` 本身，之后经由副本的写入不再到达它")


def rebinding_risk(ctx: RuleContext, write, hint, rewrite_text: str) -> str | None:
    """None when an out-of-place rewrite (`p = p / s` for `p /= s`) is proven unobservable; else why it is not."""
    if write.via:
        return ctx.t(f"the write goes through a `{write.via}` alias, which would no longer be modified",
                     f"写入经过 `{write.via}` 别名，该别名不再被修改")
    name = rewrite_text.split(" = ", 1)[0]
    if all(part.isidentifier() for part in name.split(".")) and "." in name:
        return ctx.t(f"`{name}` is an attribute, and other references to its tensor would keep the old values",
                     f"`{name}` 是属性，其他指向该张量的引用会保留旧值")
    if not name.isidentifier():
        return ctx.t(f"`{name}` is an item of a list, and other references to its tensor would keep the old values",
                     f"`{name}` 是列表的元素，其他指向该张量的引用会保留旧值")
    reason = unobservable_rebinding(ctx, write, hint, name)
    if reason is None:
        return None
    return ctx.t(f"{reason}, and that reference would keep the old values",
                 f"{zh_reason(reason)}，那个引用会保留旧值")


def written_name(write) -> cst.Name | None:
    """The plain name a statement of its own writes in place: `c` of `c.zero_()` / `c *= 2`."""
    stmt = write.stmt
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    receiver = None
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute):
        receiver = small.value.func.value
    elif isinstance(small, cst.AugAssign):
        receiver = small.target
    return receiver if isinstance(receiver, cst.Name) else None


def statement_of(ctx: RuleContext, node, hint):
    """(the simple statement line holding `node`, its top-level statement); the hint's block is searched first."""
    if node is None:
        return None, None
    index = file_index(ctx)
    tops = [hint] if hint is not None else []
    tops += [top for top in index.tops() if top is not hint]
    for top in tops:
        holders = index.statement_holders(top)
        if id(node) in holders:
            return holders[id(node)], top
    return None, None


class _Site:
    """A call site of an in-place layer, shaped like a Write for the re-binding proof."""

    def __init__(self, stmt, top):
        self.stmt, self.top, self.call_chain, self.via = stmt, top, (), ""


def inplace_flag_risk(ctx: RuleContext, write, hint) -> str | None:
    """None when `inplace=False` changes nothing another reference sees; else why it may.

    With `inplace=False` the activation's input keeps its old values. That is unobservable when the input is a
    temporary (`F.relu(self.bn(x), inplace=True)`, a layer after the first in an `nn.Sequential`) or a name the
    call re-binds (`h = self.act(h)`) that has no alias. A constructor's flag covers every call of the layer.
    A forward hook anywhere in the file may have been handed the input (or the output) and kept it."""
    hooked = _forward_hooks_risk(ctx)
    if hooked is not None:
        return hooked
    if write.kind == "inplace_module":
        ctor = write.module_ctor
        if _inside_sequential_not_first(ctx, ctor, hint):
            return None
        sites = _layer_call_sites(ctx, ctor)
        if sites is None:
            return ctx.t("the layer is built where its calls cannot all be seen", "无法看到该层的所有调用")
        if not sites:
            return ctx.t("the layer's calls cannot be found", "找不到该层的调用")
        for call, stmt, top in sites:
            risk = _call_input_risk(ctx, call, stmt, top)
            if risk is not None:
                return risk
        return None
    return _call_input_risk(ctx, write.node, write.stmt, write.top or hint)


def _call_input_risk(ctx: RuleContext, call, stmt, top) -> str | None:
    if not isinstance(call, cst.Call) or not call.args:
        return ctx.t("its input cannot be told", "无法确定它的输入")
    first = call.args[0].value
    # a call that hands an argument on (`self.pre(t)` of an empty `nn.Sequential`, an in-place layer): the input
    # is that argument, followed down to a name or a tensor made there
    for _ in range(64):
        passed = argument_handed_on(ctx.facts, first)
        if passed is None:
            break
        first = passed
    if not isinstance(first, cst.Name):
        if isinstance(first, (cst.Call, cst.BinaryOperation)):
            return None  # a temporary: nothing else holds it
        return ctx.t(f"its input `{ctx.code(first)}` is reachable another way and would keep the values before the activation",
                     f"它的输入 `{ctx.code(first)}` 还能通过别的途径访问，将保留激活之前的值")
    name = first.value
    rebound = isinstance(stmt, cst.SimpleStatementLine) and any(
        (isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1
         and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name)
        or (isinstance(small, cst.Expr) and small.value is call) for small in stmt.body)
    if not rebound:
        return ctx.t(f"`{name}` would keep the values before the activation", f"`{name}` 将保留激活之前的值")
    reason = unobservable_rebinding(ctx, _Site(stmt, top), top, name)
    if reason is None:
        return None
    return ctx.t(f"{reason}, and that reference would keep the values before the activation",
                 f"{zh_reason(reason)}，那个引用将保留激活之前的值")


# torch layers that may return their input itself (or a view of it): after one of them the activation's input is
# the tensor the layer was given
_PASS_THROUGH_LAYERS = frozenset({"Identity", "Flatten", "Unflatten",
                                  "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"})


def _forward_hooks_risk(ctx: RuleContext) -> str | None:
    """Forward hooks (and pre-hooks) are handed a layer's input or output, and may keep it: `register_forward_hook`,
    `register_module_forward_hook`, `register_forward_pre_hook`, `_forward_hooks`."""
    if file_index(ctx).mentions("forward_hook") or file_index(ctx).mentions("forward_pre_hook"):
        return ctx.t("a forward hook of this file may keep the tensor the activation writes",
                     "本文件的前向钩子可能保留激活所写的张量")
    return None


def _inside_sequential_not_first(ctx: RuleContext, ctor, hint) -> bool:
    """`nn.Sequential(nn.Conv2d(...), nn.ReLU(inplace=True))`: the ReLU's input is a tensor an earlier torch layer
    of the same Sequential made, and only torch layers that hand it on unchanged or write it in place stand
    between (`nn.Dropout()`, an empty `nn.Sequential()`); not a module built elsewhere or by this file's own class,
    which may keep its input."""
    if ctor is None:
        return False
    found = file_index(ctx).sequential_items().get(id(ctor))
    if found is None or found[2]:
        return False
    values, at, _ = found
    for layer in reversed(values[max(0, at - 64):at]):  # the nearest 64 before it (a longer run passing on: refused)
        kind = _torch_layer_kind(ctx, layer)
        if kind == "new":
            return True
        if kind != "passes-on":
            return False
    return False  # the Sequential's own input: the caller's tensor


def _torch_layer_kind(ctx: RuleContext, layer) -> str | None:
    """"new" for a torch layer built here whose output is a tensor of its own (`nn.Linear(4, 4)`, `nn.Sigmoid()`),
    "passes-on" for one that returns its input or writes it in place (`nn.Dropout()`, `nn.ReLU(inplace=True)`,
    an empty `nn.Sequential()`), None for anything else (a name, a class of this file, a container of layers)."""
    if not isinstance(layer, cst.Call):
        return None
    name = call_qualname(ctx, layer) or ""
    head, _, last = name.rpartition(".")
    if head != "torch.nn":
        return None
    if last in ("Sequential", "ModuleList", "ModuleDict"):
        return "passes-on" if not layer.args else None
    in_place = any((arg.keyword is not None and arg.keyword.value == "inplace" and not _is_false(arg.value))
                   or (arg.keyword is None and _is_true(arg.value)) for arg in layer.args)
    if last in _PASS_THROUGH_LAYERS or in_place:
        return "passes-on"
    return "new"


def _layer_call_sites(ctx: RuleContext, ctor):
    """Every `self.<attr>(...)` call of the layer built by `self.<attr> = ctor` in the same class; None when the
    constructor is not such an assignment."""
    index = file_index(ctx)
    found = index.self_attribute(ctor)
    if found is None:
        return None
    top, cls, attr = found
    sites, other = index.layer_sites(cls)
    if attr in other:
        return None  # `layer = self.act` / passed on: calls elsewhere
    return [(call, holder, top) for call, holder in sites.get(attr, [])]


def indirect_inplace_flag(ctx: RuleContext, write) -> tuple[Edit, str] | None:
    """Where an `inplace=True` layer gets its flag from somewhere else: `m.inplace = True` set on the modules of a
    class after they were built, or `inplace=True` passed to a factory that builds the layer with `**params`
    (`MLP(..., inplace=True)`). Returns the edit of that flag and the line it is on."""
    if write.kind != "inplace_module" or write.module_ctor is None:
        return None
    ctor = write.module_ctor
    index = file_index(ctx)
    holder = index.class_holding(ctor)
    holders = [holder] if holder is not None else []
    for scope in holders + index.tops():  # the layer's own class first
        for node in index.select(scope, "inplace = True", _sets_inplace_true):
            target = node.targets[0].target
            edit = ctx.replace_node(node.value, None, "False")
            if edit is not None:
                return edit, ctx.t(f"`{ctx.code(target)} = False` on line {edit.span.start_line + 1}",
                                   f"第 {edit.span.start_line + 1} 行的 `{ctx.code(target)} = False`")
    calls = [call for call, _, _ in write.call_chain]
    if write.top is not None:
        calls += index.select(write.top, "call", lambda n: isinstance(n, cst.Call))
    if holders:  # where the class is built: `MLP(3, [3, 3], inplace=True)`
        calls += index.calls_named(holders[0].name.value)
    for call in calls:
        if not isinstance(call, cst.Call):
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "inplace" and _is_true(arg.value):
                edit = ctx.replace_node(arg.value, None, "False")
                if edit is not None:
                    return edit, ctx.t(f"`inplace=False` in the call on line {edit.span.start_line + 1}",
                                       f"第 {edit.span.start_line + 1} 行调用中的 `inplace=False`")
    return None


def _sets_inplace_true(node) -> bool:
    """`m.inplace = True`."""
    return isinstance(node, cst.Assign) and len(node.targets) == 1 and _is_true(node.value) and isinstance(
        node.targets[0].target, cst.Attribute) and node.targets[0].target.attr.value == "inplace"


def _is_true(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_false(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def set_inplace_false(ctx: RuleContext, call, hint) -> Edit | None:
    """`nn.ReLU(inplace=True)` / `F.relu(x, inplace=True)` / `nn.ReLU(True)` -> inplace=False."""
    if not isinstance(call, cst.Call):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace":
            return ctx.replace_node(arg.value, hint, "False")
    positional = [a for a in call.args if a.keyword is None]
    trues = [a for a in positional if isinstance(a.value, cst.Name) and a.value.value == "True"]
    if len(trues) == 1:
        return ctx.replace_node(trues[0].value, hint, "False")
    return None


def value_dropped(write) -> bool:
    """The writing call is a statement of its own (`F.relu(h, inplace=True)`, `act(h)`): its value is dropped."""
    stmt = write.stmt
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Expr) and small.value is write.node for small in stmt.body)


def inplace_false(ctx: RuleContext, write, hint) -> tuple[Edit, str | None] | None:
    """The fix of an `inplace=True` write: `inplace=False` at the call or at the module's constructor, and the text
    of the re-binding statement when the call stood alone (`F.relu(h, inplace=True)` -> `h = F.relu(h,
    inplace=False)`). None when the write's value is dropped and no re-binding can be written: a module applied
    on a line of its own (`act(h)`) would compute its output and throw it away after `inplace=False`."""
    stmt, node = write.stmt, write.node
    dropped = value_dropped(write)
    if write.kind == "inplace_module":
        edit = None if dropped else set_inplace_false(ctx, write.module_ctor, hint)
        return (edit, None) if edit is not None else None
    if dropped:
        return fixes.rebind_inplace_false(ctx, stmt, node, hint)
    edit = set_inplace_false(ctx, node, hint)
    return (edit, None) if edit is not None else None


STALE_MATCH = "one of the variables needed for gradient computation has been modified by an inplace operation"
STALE_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
              "torch.autograd.set_detect_anomaly(True, check_nan=False).")
# The form of torch's message (rule docs, README): `<op>`, `<n>`, `<m>` and the shape depend on the program.
STALE_ERROR = (f"{STALE_MATCH}: [torch.FloatTensor [...]], which is output 0 of <op>, is at version <n>; "
               f"expected version <m> instead. {STALE_HINT}")

# What torch calls a tensor after `x[i] = ...` wrote it (not a view): its grad_fn is a CopySlices node.
_SETITEM_OUTPUT_OF = "torch::autograd::CopySlices"
_AUG_DUNDER = {"+=": "__add__", "-=": "__sub__", "*=": "__mul__", "/=": "__truediv__", "**=": "__pow__",
               "@=": "__matmul__"}
_BINARY_DUNDER = {cst.Add: "__add__", cst.Subtract: "__sub__", cst.Multiply: "__mul__", cst.Divide: "__truediv__",
                  cst.Power: "__pow__", cst.MatrixMultiply: "__matmul__"}


def _printed(names, column: str) -> str | None:
    """What the op table says torch prints for the first of `names` it knows; None when unknown or none."""
    from ..ops import load_op_table

    table = load_op_table()
    for name in names:
        row = table.get(name)
        if row is not None:
            return row.printed(column, name)
    return None


def _short_op_names(op: str) -> list[str]:
    """Qualified names an op label of the analysis can stand for: `sigmoid` -> torch.sigmoid, Tensor.sigmoid, ...;
    `nn.ReLU` -> torch.nn.ReLU; `*` -> Tensor.__mul__."""
    if op.startswith("nn."):
        return ["torch." + op]
    symbol = {"+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__", "**": "__pow__", "@": "__matmul__"}
    if op in symbol:
        return [f"Tensor.{symbol[op]}"]
    # torch.linalg's names too: `cholesky` may be torch.cholesky (Cholesky) or torch.linalg.cholesky (LinalgCholeskyEx)
    return [f"torch.{op}", f"Tensor.{op}", f"torch.nn.functional.{op}", f"torch.linalg.{op}"]


def _agreed(values) -> str | None:
    """The one value every candidate gives (None when they disagree or any is unknown)."""
    values = set(values)
    return values.pop() if len(values) == 1 and None not in values else None


def _output_of_op(op: str, column: str) -> str | None:
    names = _short_op_names(op)
    from ..ops import load_op_table

    table = load_op_table()
    known = [table.get(n).printed(column, n) for n in names if table.get(n) is not None]
    return _agreed(known) if known else None


def _written_as(write) -> str | None:
    """What torch calls a (non-view) tensor after this in-place write: the grad_fn the write gives it."""
    op = write.op
    if write.kind == "method" and op.endswith("_()"):
        return _printed([f"Tensor.{op[:-3]}"], "inplace_output_of")
    if write.kind == "augassign" and op in _AUG_DUNDER:
        return _printed([f"Tensor.{_AUG_DUNDER[op]}"], "inplace_output_of")
    if write.kind in ("inplace_arg", "inplace_module") and op.endswith("(inplace=True)"):
        name = op[: -len("(inplace=True)")]
        if write.kind == "inplace_module":
            return _printed([f"torch.nn.{name}"], "inplace_output_of")
        return _output_of_op(name, "inplace_output_of")
    if write.kind == "setitem":
        return _SETITEM_OUTPUT_OF
    return None


_GRAD_OFF = re.compile(r"\b(no_grad|inference_mode|set_grad_enabled|enable_grad)\b")


def maybe_grad_off(ctx: RuleContext | None, write) -> bool:
    """Could grad mode be off at this write (inside `with torch.no_grad():`, a `@torch.no_grad()` function, ...)?
    Read from the enclosing headers' text; True when it cannot be told. A write under no_grad leaves the tensor's
    grad_fn alone."""
    if ctx is None:
        return True
    span = ctx.span(write.node, write.top)
    if span is None:
        return True
    index = file_index(ctx)
    line = span.start_line
    text = ctx.source.line_text(line)
    indent = len(text) - len(text.lstrip())
    while indent > 0:
        header = index.enclosing_line(line)  # an enclosing header: `with ...:`, `def ...:`, `for ...:`
        if header is None:
            break
        text = ctx.source.line_text(header)
        stripped = text.lstrip()
        if stripped.startswith(("with ", "async with ")) and _GRAD_OFF.search(stripped):
            return True
        if stripped.startswith(("def ", "async def ")):
            j = header - 1  # its decorators above it
            while j >= 0 and ctx.source.line_text(j).lstrip().startswith("@"):
                if _GRAD_OFF.search(ctx.source.line_text(j)):
                    return True
                j -= 1
        line, indent = header, len(text) - len(stripped)
    return False


def _creation_output_of(ctx: RuleContext | None, tensor) -> str | None:
    """What torch calls the tensor as its creating op left it: `x = w * 2` -> Mul, `torch.sigmoid(...)` -> Sigmoid."""
    node = getattr(tensor, "origin", None)
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _BINARY_DUNDER:
        return _printed([f"Tensor.{_BINARY_DUNDER[type(node.operator)]}"], "output_of")
    if ctx is not None and isinstance(node, cst.Call):
        name = call_qualname(ctx, node)
        return _printed([name], "output_of") if name else None
    return None


# Tensors the analysis made up for values that came from elsewhere (a function's argument, `x += ...` on one):
# neither their node (the argument may be a view) nor their versions are this code's.
_FOREIGN = ("an augmented assignment", "a parameter of the function")


def _foreign(tensor) -> bool:
    return tensor is None or getattr(tensor, "created_by", "") in _FOREIGN or getattr(tensor, "origin", 1) is None


def _made_by_plain_op(ctx: RuleContext | None, tensor) -> bool:
    """Was the tensor made by an op the table knows returns no view (`a * b`, `torch.sigmoid(...)`)? A module's
    output can be a view (`nn.Linear` on a 3-D input returns one), and an in-place write on a view leaves it named
    `AsStrided`, whatever the write."""
    node = getattr(tensor, "origin", None)
    if isinstance(node, cst.BinaryOperation):
        return type(node.operator) in _BINARY_DUNDER
    if ctx is None or not isinstance(node, cst.Call):
        return False
    from ..ops import load_op_table

    name = call_qualname(ctx, node)
    row = load_op_table().get(name) if name else None
    return row is not None and row.kind == "function" and row.view == "none"


def stale_output_of(save, write, ctx: RuleContext | None = None) -> str | None:
    """The X of torch's `which is output 0 of X` for this stale save, when the analysis knows it; None when torch
    prints no X (a saved leaf, an LSTM weight) or the analysis cannot tell which X."""
    if save.what == "parameters":
        return _printed([f"torch.{save.op}"] if save.op.startswith("nn.") else [], "params_output_of")
    if save.what == "output":
        # A saved output keeps the node of the op that saved it, whatever writes it later.
        if save.op.endswith("(inplace=True)"):
            name = save.op[: -len("(inplace=True)")]
            if name[:1].isupper():
                return _printed([f"torch.nn.{name}"], "inplace_output_of")
            return _output_of_op(name, "inplace_output_of")
        return _output_of_op(save.op, "output_of")
    tensor = save.tensor
    if tensor is None or not hasattr(tensor, "counter"):
        return None
    if save.via_index or tensor.view_kind in ("index", "view"):
        # A view whose base was written in place gets a regenerated as_strided grad_fn. In a loop the failing save
        # is a later iteration's, whose base the earlier writes already put in the graph.
        if write.kind == "setitem" and (tensor.requires_grad is True or save.loop is not None):
            return "AsStrided"
        return None
    if tensor.is_leaf is not False or tensor.requires_grad is not True or _foreign(tensor):
        return None  # a leaf prints no node; a foreign tensor may be a view (AsStrided) or anything
    if not _made_by_plain_op(ctx, tensor):
        return None
    writes = tensor.counter.writes
    if any(maybe_grad_off(ctx, w) for w in writes if not w.via):
        return None  # a write under no_grad leaves the grad_fn as it was: cannot tell which write was last
    if all(w.via in ("detach", "data") for w in writes):
        # Writes through `.detach()` leave the tensor's own grad_fn alone: still its creating op's.
        return _creation_output_of(ctx, tensor)
    if any(w.via for w in writes):
        return None
    # The tensor's grad_fn at backward is the last in-place write's: known when all its writes agree.
    return _agreed(_written_as(w) for w in writes)


# What torch prints for a tensor of each floating dtype (`[torch.DoubleTensor [4, 3]]`), by the dtype's torch names.
_TENSOR_TYPES = {"float32": "FloatTensor", "float": "FloatTensor", "float64": "DoubleTensor", "double": "DoubleTensor",
                 "float16": "HalfTensor", "half": "HalfTensor", "bfloat16": "BFloat16Tensor"}
_FLOAT_FACTORIES = {"torch.rand", "torch.randn", "torch.zeros", "torch.ones", "torch.empty", "torch.eye", "torch.full"}
_DEFAULT_DTYPE_CHANGED = re.compile(r"\bset_default_(?:dtype|tensor_type)\b")


def tensor_type(ctx: RuleContext | None, tensor) -> str | None:
    """The type torch prints for `tensor` (`FloatTensor`, `DoubleTensor`, ...) when the code that made it says it: a
    factory's `dtype=`, or the default dtype for `torch.rand(4, 3)`; followed through views, `.clone()` and
    `nn.Parameter(...)`. None when the code does not say (`.double()`, `.to(...)`, an argument, `full` of an int)."""
    if ctx is None:
        return None
    for _ in range(32):
        if tensor is None:
            return None
        if tensor.view_of is not None:  # views and `.detach()` keep their base's dtype
            tensor = tensor.view_of
            continue
        node = tensor.origin
        if not isinstance(node, cst.Call):
            return None
        name = call_qualname(ctx, node)
        positional = [a.value for a in node.args if a.keyword is None]
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "clone" and not node.args:
            tensor = ctx.facts.expr_values.get(id(node.func.value))
            continue
        if name == "torch.nn.Parameter" and positional:
            tensor = ctx.facts.expr_values.get(id(positional[0]))
            continue
        if name not in _FLOAT_FACTORIES:
            return None
        dtype = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if dtype is not None:
            from ..facts.names import dotted

            spelled = dotted(dtype) or ""
            head, _, last = spelled.rpartition(".")
            return _TENSOR_TYPES.get(last) if head and ctx.facts.imports.get(head.split(".")[0]) == "torch" else None
        if name == "torch.full" and not (len(positional) > 1 and isinstance(positional[1], cst.Float)):
            return None  # `torch.full(size, 1)` is an integer tensor
        return None if _DEFAULT_DTYPE_CHANGED.search(ctx.source.text) else "FloatTensor"
    return None


def stale_error(save, write, ctx: RuleContext | None = None, problem=None) -> str:
    """torch's error for this stale save, with what the analysis knows filled in and the rest as a form:
    `[torch.FloatTensor [...]]` when the shape or the dtype is unknown, `<n>`/`<m>` when the versions depend on
    the run."""
    tensor = save.tensor
    shape = getattr(tensor, "shape", None) if save.what != "parameters" and not save.via_index else None
    kind = tensor_type(ctx, tensor) if shape is not None else None
    if kind is None:  # a shape without its dtype would be half a guess: the form, as when neither is known
        shape, kind = None, "FloatTensor"
    sizes = ", ".join(str(n) for n in shape) if shape is not None else "..."
    text = f"{STALE_MATCH}: [torch.{kind} [{sizes}]]"
    output_of = stale_output_of(save, write, ctx)
    if output_of and ctx is not None and _another_stale_save_of_the_op(save, write, ctx):
        output_of = None  # the op saved another tensor the same write made stale: torch may unpack that one first
    if output_of:
        text += f", which is output {getattr(save, 'tuple_index', None) or 0} of {output_of},"
    counter = save.counter
    # Versions are the program's own only when the counter starts in this code (not a parameter or an argument)
    # and nothing repeats: one save outside loops, one write (a loop's write is interpreted more than once).
    at_use = problem.detail.get("version_at_use") if problem is not None else None
    straight = all(not w.loops for w in counter.writes)  # each write interpreted once: its count is the run's
    known = (counter.known_start and save.loop is None and save.what != "parameters"
             and not (save.what == "input" and _foreign(tensor))
             and (len(counter.writes) == 1 or (at_use is not None and straight)))
    now = at_use if at_use is not None and straight else write.version_after
    now, then = (now, save.version) if known else ("<n>", "<m>")
    return f"{text} is at version {now}; expected version {then} instead. {STALE_HINT}"


def _another_stale_save_of_the_op(save, write, ctx: RuleContext) -> bool:
    """Did the op behind `save` save another tensor that `write` also made stale (`rec(memory_init)` saves its
    input and its weight; `opt.step()` writes both)?"""
    from ..file_index import file_index

    return any(other is not save and other.counter is not save.counter
               and any(w.node is write.node for w in other.counter.writes)
               for other in file_index(ctx).saves_by_op(save.node))


def is_form(runtime_error: str) -> bool:
    """Does the predicted text hold parts that depend on the run (`[...]`, `<n>`, `<op>`)?"""
    return any(part in runtime_error for part in ("[...]", "<n>", "<m>", "<op>", "<i>"))


def weight_save_notes(ctx: RuleContext, problem, hint) -> tuple[int, list]:
    """The line of the forward pass that saved the weights (`d_fake = self.D(fake)` in the training step, not the
    `nn.Linear(...)` built in the discriminator's `__init__` nor a line inside `forward`), and its related notes."""
    save = problem.save
    site = problem.detail.get("forward")
    node, top = site if site is not None else (save.node, save.top or hint)
    notes = [ctx.related(node, top, ctx.t("weights saved for backward here", "权重在这里被保存用于反向传播"))]
    if site is not None:
        notes.append(ctx.related(save.node, save.top or hint,
                                 ctx.t("by this layer", "由这一层保存")))
    return ctx.line(node, top), notes


def saved_name(save, ctx: RuleContext | None = None, write=None) -> str:
    """How the saved tensor is called: its name when saved, else its name where `write` changes it (a name
    bound later, after the write, would point the user at the wrong line), else the code that made it."""
    if save.what == "parameters":
        return save.tensor_name or "the parameters"
    if save.tensor_name:
        return f"`{save.tensor_name}`"
    if (write is not None and write.kind == "inplace_module" and save.what == "output" and ctx is not None
            and save.layer_call is not None and isinstance(save.layer_call[0], cst.Call)):
        # a layer of a container saved its output and a later layer of it (ReLU(inplace=True)) wrote it: an
        # intermediate inside the call, not what the call returned
        outer = _short(ctx.code(save.layer_call[0].func))
        return ctx.t(f"the output of `{save.op}` inside `{outer}`", f"`{outer}` 中 `{save.op}` 的输出")
    if write is not None and write.target_name:
        return f"`{write.target_name}`"
    if write is not None and ctx is not None and write.kind == "augassign" and isinstance(write.node, cst.AugAssign):
        return f"`{_short(ctx.code(write.node.target))}`"
    if save.tensor is not None and getattr(save.tensor, "name", "") and save.what != "parameters":
        return f"`{save.tensor.name}`"
    if write is not None and ctx is not None and save.what == "input" and write.kind == "setitem" \
            and isinstance(_written_expr(write), cst.Attribute):
        # `self.queue[:, i:j] = k.T`: the attribute the user writes, not the code that made it in `__init__`
        return f"`{_short(ctx.code(_written_expr(write)))}`"
    if ctx is not None and save.expr is not None:
        return f"`{_short(ctx.code(save.expr))}`"
    return "a tensor" if ctx is None or ctx.lang != "zh" else "一个张量"


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


def write_desc(ctx: RuleContext, write) -> str:
    """The write as the user wrote it: `x[i+1] = …`, `w += 1`, `y.add_(1)`, `opt.step()`."""
    if write.kind == "setitem":
        return f"{_short(ctx.code(write.node))} = …"
    if write.kind in ("augassign", "method"):
        return _short(ctx.code(write.node))
    return write.op


def version(save, n: int) -> str:
    """A version number as torch would print it when the counter started in this code; else relative to v."""
    if save.counter.known_start:
        return str(n)
    return "v" if n == save.version else f"v+{n - save.version}"


def stale_timeline(ctx: RuleContext, problem) -> str:
    """The version story of a stale save, with this code's own lines."""
    save, write, hint = problem.save, problem.write, problem.top
    s_line = ctx.line(save.node, save.top or hint)
    forward = problem.detail.get("forward")
    at = ""
    if forward is not None:  # the layer is built elsewhere: say where its forward ran
        f_line = ctx.line(*forward)
        at = ctx.t(f" (the forward on line {f_line})", f"（第 {f_line} 行的前向传播）")
    w_line = ctx.line(write.node, write.top or hint)
    what = {"input": ctx.t("its input", "它的输入"), "output": ctx.t("its output", "它的输出"),
            "parameters": ctx.t("the layer's weights", "该层的权重")}.get(save.what, save.what)
    via = {"detach": ctx.t(" through a `.detach()` alias (detach shares the version counter)",
                           "（通过 `.detach()` 得到的别名：detach 共享版本计数器）"),
           "view": ctx.t(" through a view (views share the version counter)", "（通过视图：视图共享版本计数器）")}.get(write.via, "")
    iteration = ""
    if save.loop is not None and write.seq > save.seq and write.version_after > save.version + 1:
        iteration = ctx.t(" (in a later loop iteration)", "（在之后的循环迭代中）")
    name = saved_name(save, ctx)
    if save.what == "parameters" or (write.kind == "inplace_module" and save.what == "output"
                                     and save.layer_call is not None):
        name = ""  # the weights; or an output inside a container, not what the container's call returned
    saved_v, now_v = version(save, save.version), version(save, write.version_after)
    use = use_phrase(ctx, problem)
    if problem.carry is not None:
        use += ctx.t(" in the next iteration", "（在下一轮迭代中）")
    desc = write_desc(ctx, write)
    # A save in a loop is made once per pass, each at its own version: absolute numbers are those of one pass
    # (torch reports the pass it unpacks first, usually the last one), and the text says which. (Relative ones,
    # v and v+1, hold on every pass.)
    k = save.iteration + 1
    pass_of = (ctx.t(f" (pass {k} of the loop)", f"（循环的第 {k} 轮）")
               if save.loop is not None and save.counter.known_start else "")
    found = (ctx.t(f"finds a newer version than it saved ({now_v} instead of {saved_v} on pass {k})",
                   f"发现版本比保存时新（第 {k} 轮：{now_v} 而不是 {saved_v}）") if pass_of else
             ctx.t(f"finds version {now_v} instead of {saved_v}", f"发现版本是 {now_v} 而不是 {saved_v}"))
    return ctx.t(
        f"1. Line {s_line}: `{save.op}`{at} saves {what}{', ' + name + ',' if name else ''} for backward at version "
        f"{saved_v}{pass_of}.\n"
        f"2. Line {w_line}: `{desc}` writes it in place{via}{iteration}: version {now_v}.\n"
        f"3. {use[0].upper() + use[1:]} unpacks the saved tensor, {found}, and raises.",
        f"1. 第 {s_line} 行：`{save.op}`{at}为反向传播保存了{what}{' ' + name if name else ''}，版本为 {saved_v}{pass_of}。\n"
        f"2. 第 {w_line} 行：`{desc}` 原地修改了它{via}{iteration}：版本变为 {now_v}。\n"
        f"3. {use}取出保存的张量时{found}，于是报错。")


def carry_fix_title(ctx: RuleContext, detached, new: str) -> str:
    """The title of a carried-state detach, naming the edit: a line it adds (`Add `h, c = h.detach(), c.detach()`
    after line 12`) or the value it carries (`Carry `h_next.detach()``)."""
    edit = detached[0] if detached else None
    why_en, why_zh = "unsafe: cuts the graph, no gradient into earlier iterations", "不安全：截断计算图，梯度不再流入之前的迭代"
    span = edit.span if edit is not None else None
    added = edit.new_text.strip() if edit is not None else ""
    if span is not None and (span.start_line, span.start_col) == (span.end_line, span.end_col) and added \
            and "\n" not in added:
        return ctx.t(f"Add `{added}` after line {span.start_line + 1} ({why_en})",
                     f"在第 {span.start_line + 1} 行之后加上 `{added}`（{why_zh}）")
    return ctx.t(f"Carry `{new}` ({why_en})", f"把传给下一轮的状态改为 `{new}`（{why_zh}）")


def detach_carry_fix(ctx: RuleContext, problem) -> tuple[Edit, str] | None:
    """Cut the graph carried into the next iteration at the carry, keeping this iteration's gradients (fixes.py)."""
    return fixes.detach_carry(ctx, problem)


# ---- errors torch raises at the write itself --------------------------------------------------------------
LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
LEAF_VIEW_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation."
MULTI_VIEW_TAIL = ("is a view and is being modified inplace. This view is the output of a function that returns "
                   "multiple views. Such functions do not allow the output views to be modified inplace. You should "
                   "replace the inplace operation by an out-of-place one.")
OUT_TAIL = "functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."


def _whole(subscript) -> bool:
    """`t[:]`, `t[:, :]`, `t[...]`: indexing that returns the tensor itself, not a view."""
    if not isinstance(subscript, cst.Subscript):
        return False
    for element in subscript.slice:
        item = element.slice
        if isinstance(item, cst.Index) and isinstance(item.value, cst.Ellipsis):
            continue
        if isinstance(item, cst.Slice) and item.lower is None and item.upper is None and item.step is None:
            continue
        return False
    return True


def leaf_view_error(write) -> str:
    """`w[:] = v` writes the leaf itself (full slices give the tensor back, not a view): torch's leaf error."""
    node = write.node
    if write.kind == "method" and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        node = node.func.value
    return LEAF_ERROR if _whole(node) else LEAF_VIEW_ERROR


def call_qualname(ctx: RuleContext, node) -> str | None:
    """`torch.split(x, 2)` -> torch.split, `x.chunk(3)` -> Tensor.chunk (x a tensor), `F.relu` -> its torch name."""
    from ..facts.names import canonical, dotted

    if not isinstance(node, cst.Call):
        return None
    func = node.func
    name = dotted(func)
    if name is not None:
        head, _, rest = name.partition(".")
        imports = getattr(ctx.facts, "imports", {})
        if head in imports:
            return canonical(imports[head] + ("." + rest if rest else ""))
    if isinstance(func, cst.Attribute) and ctx.facts.expr_values.get(id(func.value)) is not None:
        return f"Tensor.{func.attr.value}"
    return None


def multi_view_error(ctx: RuleContext, tensor) -> str:
    """`Output <i> of Split is a view ...`: the node from the op table; which output it is, the analysis does not
    know."""
    from ..ops import load_op_table

    origin = tensor.origin if tensor is not None else None
    if isinstance(origin, cst.Subscript):
        origin = origin.value
    name = call_qualname(ctx, origin)
    if name in ("torch.split", "Tensor.split"):
        name = _split_kind(origin, name)
    row = load_op_table().get(name) if name else None
    node = row.printed("output_of", name) if row is not None else None
    if row is not None and row.view != "multi" and getattr(getattr(tensor, "view_of", None), "view_kind", "") != "multi":
        node = "Unbind"  # the views came from unpacking or iterating this op's single result: torch unbinds it
    # else a view made of a piece (`q.reshape(...).transpose(1, 2)`): torch names that op (`Output 0 of Transpose`)
    return f"Output <i> of {node or '<op>'} {MULTI_VIEW_TAIL}"


def _split_kind(call, name: str) -> str | None:
    """`split(2)` is torch's split; `split((1, 3))` is split_with_sizes; a size the code does not spell out: unknown."""
    positional = [a.value for a in call.args if a.keyword is None]
    keyword = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    index = 1 if name == "torch.split" else 0
    size = keyword.get("split_size_or_sections", keyword.get("split_size"))
    if size is None and len(positional) > index:
        size = positional[index]
    if isinstance(size, cst.Integer):
        return name
    if isinstance(size, (cst.Tuple, cst.List)):
        return name.replace("split", "split_with_sizes")
    return None


def out_error(op: str) -> str:
    return f"{op or '<op>'}(): {OUT_TAIL}"
