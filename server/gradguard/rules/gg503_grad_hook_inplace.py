"""GG503: a gradient hook (or a custom `backward`) modifies the gradient it receives in place (silently wrong
gradients elsewhere in the graph)."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from .. import fixes
from ._common import OUT_OF_PLACE
from ._grad_writes import (Aliases, Frames, body_writes, distinct, dotted, expression_writes, free_parameters,
                           function_classes, op_text, parameters, resolve, shares_gradient)

RULE = Rule(
    code="GG503",
    name="grad-hook-inplace",
    family="silent",
    severity="warning",
    fix_kind="unsafe",
    summary={
        "en": "A gradient hook or a custom `backward` modifies the gradient it receives in place: other parts of the "
              "graph receive the changed gradient, with no error.",
        "zh": "梯度钩子（hook）或自定义 `backward` 原地修改了它收到的梯度：计算图的其他部分也会收到被修改的梯度，且不报错。",
    },
    what={
        "en": "Flags in-place writes (`g.mul_(s)`, `g.clamp_(...)`, `g *= s`, `g[mask] = 0`, `out=g`) on the gradient "
              "passed to `t.register_hook(fn)`, to `module.register_full_backward_pre_hook(fn)` (`grad_output`), to "
              "`module.register_full_backward_hook(fn)` (`grad_output` only), to a node's `grad_fn.register_prehook` "
              "/ `grad_fn.register_hook` (`grad_outputs`), to `torch.autograd.graph.register_multi_grad_hook`, and "
              "on the `grad_output` arguments of a custom `torch.autograd.Function.backward`, followed through "
              "views, `.data`, `detach()`, unpacking and `for g in grad_output`. Reported where the hooked value (the "
              "tensor, the layer's output, the function's result) feeds an addition or subtraction, "
              "`backward(gradient)` or `sum()` in the code that registers it: only there does another node receive "
              "the same gradient tensor. Hooks that return a new tensor (`lambda g: g * s`, `g.clone().mul_(s)`), "
              "hooks on a value whose gradient is its own (a layer's weight, an input to a matmul) and "
              "`register_post_accumulate_grad_hook` hooks that write `p.grad` are not flagged.",
        "zh": "检查对传入梯度的原地写入（`g.mul_(s)`、`g.clamp_(...)`、`g *= s`、`g[mask] = 0`、`out=g`）：该梯度传给了 "
              "`t.register_hook(fn)`、`module.register_full_backward_pre_hook(fn)`（`grad_output`）、"
              "`module.register_full_backward_hook(fn)`（仅 `grad_output`）、节点的 `grad_fn.register_prehook` / "
              "`grad_fn.register_hook`（`grad_outputs`）、`torch.autograd.graph.register_multi_grad_hook`，或者是自定义 "
              "`torch.autograd.Function.backward` 的 `grad_output` 参数；经由视图、`.data`、`detach()`、解包和 "
              "`for g in grad_output` 追踪。仅当被挂钩子的值（张量、层的输出、函数的结果）在注册它的代码中流入加法或减法、"
              "`backward(gradient)` 或 `sum()` 时报告：只有这时另一个节点会收到同一个梯度张量。返回新张量的钩子"
              "（`lambda g: g * s`、`g.clone().mul_(s)`）、挂在梯度只属于自己的值上的钩子（层的权重、矩阵乘法的输入）以及写 "
              "`p.grad` 的 `register_post_accumulate_grad_hook` 钩子不会被报告。",
    },
    why={
        "en": "Autograd does not copy a gradient before handing it to a hook: an addition passes one gradient tensor "
              "to both of its operands, `backward(gradient)` passes the caller's tensor, and a residual branch receives "
              "the same tensor as the block beside it. A hook that writes its argument therefore also changes the "
              "gradient of the other operand or branch when that one runs later, and nothing checks it (gradients "
              "carry no saved-version check). After `sum()` the gradient is an expanded tensor and the write raises "
              "instead. torch's docs: the hook \"should not modify its argument, but it can optionally return a new "
              "gradient which will be used in place of grad\".",
        "zh": "autograd 把梯度交给钩子之前不会复制它：加法把同一个梯度张量传给两个操作数，`backward(gradient)` 传入的是调用方的张量，"
              "残差分支收到的也是与旁边模块相同的张量。因此写入参数的钩子也会改变另一个操作数或分支（之后才运行的那个）的梯度，"
              "而且没有任何检查（梯度没有保存版本的校验）。在 `sum()` 之后梯度是一个扩展（expand）张量，此时写入会直接报错。"
              "torch 文档：钩子“不应修改它的参数，但可以返回一个新的梯度来代替 grad”。",
    },
    autograd={
        "en": "Checked on torch 2.13 (`autograd-facts-scripts/grad_hooks_inplace.py`): with `x0 = x * 1`, `h = 3 * x0`, "
              "`h.register_hook(lambda g: g.mul_(0.5))` and `out = x0 + h`, `x.grad` is 2.0 instead of 2.5 (the identity "
              "branch was halved too); with `w.register_hook(lambda g: g.mul_(10))` and `(w + v)`, `v.grad` is "
              "multiplied by 10 as well; `h.backward(gout)` leaves `gout` multiplied. A full backward pre-hook, a full "
              "backward hook writing `grad_output`, node hooks, a multi-grad hook and a custom `backward` writing "
              "`grad_output` all zero the other branch's gradient the same way. Where the gradient is a fresh tensor "
              "(a `nn.Linear` weight's only use) the write happens to be harmless; a full backward hook writing "
              "`grad_input` acts like returning it, and writing `p.grad` in a post-accumulate-grad hook changes only "
              "`p`: those are not flagged or are the documented way.",
        "zh": "在 torch 2.13 上验证（`autograd-facts-scripts/grad_hooks_inplace.py`）：`x0 = x * 1`、`h = 3 * x0`、"
              "`h.register_hook(lambda g: g.mul_(0.5))` 且 `out = x0 + h` 时，`x.grad` 为 2.0 而不是 2.5（恒等分支也被减半）；"
              "`w.register_hook(lambda g: g.mul_(10))` 且计算 `(w + v)` 时，`v.grad` 也被乘以 10；`h.backward(gout)` 之后 "
              "`gout` 被改变。全反向预钩子、写 `grad_output` 的全反向钩子、节点钩子、多梯度钩子以及写 `grad_output` 的自定义 "
              "`backward` 都会同样把另一分支的梯度清零。梯度是新张量时（`nn.Linear` 权重的唯一用途）这次写入碰巧无害；"
              "全反向钩子写 `grad_input` 等同于返回它，`register_post_accumulate_grad_hook` 钩子写 `p.grad` 只改变 `p`："
              "这些不会被报告，或者正是文档推荐的写法。",
    },
    fix_safety={
        "en": "A one-call lambda `lambda g: g.mul_(s)` becomes `lambda g: g.mul(s)`; in a `def` hook that returns the "
              "gradient (or ends with the write), each write on it becomes `g = g.mul(s)` (the last one `return "
              "g.mul(s)`); in a custom `backward`, `grad_output.mul_(2)` becomes `grad_output = grad_output.mul(2)`. "
              "Unsafe: the hooked tensor receives the same gradient as before, but the other branches no longer "
              "receive the changed one, so their gradients change (to their own, unscaled values); where the write raised (after `sum()`) it no longer does. "
              "No fix when the gradient is reached through another name, for tuple hooks (return a new tuple), or "
              "for methods without an out-of-place twin (`zero_`, `fill_`).",
        "zh": "只有一个调用的 lambda `lambda g: g.mul_(s)` 改为 `lambda g: g.mul(s)`；在返回梯度（或以写入结尾）的 `def` "
              "钩子中，每次对梯度的写入改为 `g = g.mul(s)`（最后一次改为 `return g.mul(s)`）；在自定义 `backward` 中，"
              "`grad_output.mul_(2)` 改为 `grad_output = grad_output.mul(2)`。不安全修复：被挂钩子的张量收到的梯度与之前相同，"
              "但其他分支不再收到被修改的梯度，所以它们的梯度会变（变回它们自己未被缩放的值）；原先会报错的写入（`sum()` 之后）不再报错。通过其他名字访问梯度、"
              "元组钩子（请返回新的元组）、或方法没有非原地版本（`zero_`、`fill_`）时不提供修复。",
    },
    runtime_error="",
    references=("https://pytorch.org/docs/stable/generated/torch.Tensor.register_hook.html",
                "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook"),
)

# (gradient parameter's index, "tensor" or "tuple", number of parameters) of each kind of hook
_MODULE_HOOKS = {
    "register_full_backward_pre_hook": (1, "tuple", 2, "pre"),
    "register_full_backward_hook": (2, "tuple", 3, "full"),
    "register_prehook": (0, "tuple", 1, "node_pre"),
}
_KIND = {
    "tensor": ("tensor hook", "张量钩子"),
    "pre": ("full backward pre-hook", "全反向预钩子（full backward pre-hook）"),
    "full": ("full backward hook", "全反向钩子（full backward hook）"),
    "node_pre": ("autograd node pre-hook", "autograd 节点预钩子"),
    "node_post": ("autograd node hook", "autograd 节点钩子"),
    "multi": ("multi-grad hook", "多梯度钩子（multi-grad hook）"),
}


class _Sites(cst.CSTVisitor):
    """Hook registrations in one top-level statement: (registration call, hook function, watched names, kind)."""

    def __init__(self, ctx, top, out):
        self.frames = Frames(ctx)
        self.top = top
        self.out = out

    def visit_ClassDef(self, node):
        self.frames.stack.append(("class", node))

    def leave_ClassDef(self, node):
        self.frames.stack.pop()

    def visit_FunctionDef(self, node):
        self.frames.stack.append(("function", node))

    def leave_FunctionDef(self, node):
        self.frames.stack.pop()

    def visit_Call(self, node: cst.Call):
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if method not in _MODULE_HOOKS and method not in ("register_hook", "register_multi_grad_hook"):
            return
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        keyword = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if method == "register_multi_grad_hook":
            if not isinstance(func, cst.Name) and not dotted(func).endswith("autograd.graph.register_multi_grad_hook"):
                return
            hook = positional[1] if len(positional) > 1 else keyword.get("fn")
        else:
            if not isinstance(func, cst.Attribute):
                return
            hook = positional[0] if positional else keyword.get("hook")
        if hook is None:
            return
        resolved = self.frames.resolve_function(hook)
        if resolved is None:
            return
        fn, bound, keywords = resolved
        params = free_parameters(fn, bound, keywords)
        if not params:
            return
        required = [name for name, has_default in params if not has_default]
        if method == "register_hook":
            on_node = dotted(func.value).endswith("grad_fn")
            if len(params) == 2 and len(required) == 2:
                index, kind, label = 1, "tuple", "node_post"  # Node.register_hook(fn(grad_inputs, grad_outputs))
            elif len(required) == 1 and not on_node and params[0][1] is False:
                index, kind, label = 0, "tensor", "tensor"
            else:
                return
        elif method == "register_multi_grad_hook":
            mode = keyword.get("mode")
            any_mode = isinstance(mode, cst.SimpleString) and mode.evaluated_value == "any"
            if len(required) != 1:
                return
            index, kind, label = 0, "tensor" if any_mode else "tuple", "multi"
        else:
            index, kind, count, label = _MODULE_HOOKS[method]
            if len(params) != count or len(required) != count:
                return
        if not self._shared(node, func, positional, label):
            return
        self.out.append((node, fn, params[index][0], kind, label, self.top))

    def _shared(self, node, func, positional, label) -> bool:
        """The hooked value feeds an op that hands its gradient on unchanged (see shares_gradient)."""
        if label == "multi":
            group = positional[0] if positional else None
            targets = [e.value for e in group.elements] if isinstance(group, (cst.Tuple, cst.List)) else []
        elif label in ("node_pre", "node_post"):
            receiver = func.value
            targets = [receiver.value] if isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad_fn" else []
        else:
            targets = [func.value]
        names = [dotted(t) for t in targets if dotted(t)]
        if not names:
            return False
        layer_call = label in ("pre", "full")
        scope = self._scope(names[0])
        if scope is None:
            return False

        def matches(expr) -> bool:
            if layer_call:
                return isinstance(expr, cst.Call) and dotted(expr.func) in names
            return isinstance(expr, (cst.Name, cst.Attribute)) and dotted(expr) in names

        resolve_name = lambda f: resolve(self.frames.ctx, f)  # noqa: E731
        if shares_gradient(scope, matches, resolve_name):
            return True
        return self._returned_to_callers(names[0], layer_call, resolve_name)

    def _returned_to_callers(self, name: str, layer_call: bool, resolve_name) -> bool:
        """`def scale_gradient(t, s): t.register_hook(...); return t`: the hooked value is what callers get, so
        the calls of the helper are looked at in the whole file."""
        functions = [node for kind, node in self.frames.stack if kind == "function"]
        if layer_call or not functions or name not in parameters(functions[-1]):
            return False
        helper = functions[-1]
        returns = [r for stmt in helper.body.body if isinstance(stmt, cst.SimpleStatementLine)
                   for r in stmt.body if isinstance(r, cst.Return)]
        if not any(isinstance(r.value, cst.Name) and r.value.value == name for r in returns):
            return False
        helper_name = helper.name.value
        tops = [top for pb in self.frames.ctx.locator.blocks if helper_name in pb.block.text for top in pb.module.body]

        def called(expr) -> bool:
            return isinstance(expr, cst.Call) and (dotted(expr.func) == helper_name
                                                   or dotted(expr.func).endswith("." + helper_name))

        return shares_gradient(tops, called, resolve_name)

    def _scope(self, name: str):
        """Where the hooked value's uses are looked for: its class for `self.x`, else its function, else the
        module's own statements."""
        stack = self.frames.stack
        if name.startswith("self."):
            classes = [node for kind, node in stack if kind == "class"]
            return list(classes[-1].body.body) if classes else None
        functions = [node for kind, node in stack if kind == "function"]
        if functions:
            return list(functions[-1].body.body)
        return [top for pb in self.frames.ctx.locator.blocks for top in pb.module.body
                if not isinstance(top, (cst.FunctionDef, cst.ClassDef))]


def _hook_sites(ctx):
    sites = []
    for pb in ctx.locator.blocks:
        text = pb.block.text
        if "register_" not in text or "hook" not in text:
            continue
        for top in pb.module.body:
            top.visit(_Sites(ctx, top, sites))
    return sites


class _Rebind:
    """A write shaped for `fixes.out_of_place` (a statement of its own writing a plain name)."""

    def __init__(self, stmt, name):
        self.stmt, self.target_name = stmt, name


def _watched(fn, name, kind) -> Aliases:
    aliases = Aliases(roots={name})
    (aliases.tensors if kind == "tensor" else aliases.tuples).add(name)
    return aliases


def _returns(body) -> list:
    out = []
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, cst.SimpleStatementLine):
            out.extend(s for s in stmt.body if isinstance(s, cst.Return))
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        else:
            for child in stmt.children:
                if isinstance(child, cst.BaseSuite):
                    stack.extend(child.body)
                elif isinstance(child, (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.Finally)):
                    stack.append(child)
    return out


def _rebind_edit(ctx, write, top):
    """`g.mul_(s)` / `g *= s`, a statement of its own -> (`g = g.mul(s)` edit, its text)."""
    stmt = write.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    return fixes.out_of_place(ctx, _Rebind(stmt, write.name), top, OUT_OF_PLACE)


def _hook_fix(ctx, fn, name, kind, writes, aliases, top):
    """The out-of-place rewrite of a tensor hook, or None."""
    if kind != "tensor" or aliases.rebound or not all(w.direct and w.name == name for w in writes):
        return None
    if isinstance(fn, cst.Lambda):
        if len(writes) != 1 or writes[0].node is not fn.body:
            return None
        dropped = fixes.drop_inplace_suffix(ctx, fn.body, top)
        return ((dropped[0],), dropped[1]) if dropped else None
    body = fn.body.body
    if not body or any(w.stmt not in body for w in writes):
        return None
    last = body[-1]
    returns = _returns(body)
    ends_with_return = (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
                        and isinstance(last.body[0], cst.Return) and isinstance(last.body[0].value, cst.Name)
                        and last.body[0].value.value == name)
    if ends_with_return and len(returns) != 1:
        return None
    if not ends_with_return and (returns or writes[-1].stmt is not last):
        return None
    edits, texts = [], []
    for i, write in enumerate(writes):
        built = _rebind_edit(ctx, write, top)
        if built is None:
            return None
        edit, text = built
        if not ends_with_return and i == len(writes) - 1:
            prefix = f"{name} = "
            if not text.startswith(prefix):
                return None
            text = "return " + text[len(prefix):]
            edit = type(edit)(edit.span, text)
        edits.append(edit)
        texts.append(text)
    return tuple(edits), "; ".join(texts)


def _backward_fix(ctx, writes, aliases, top):
    """In a custom backward: `g.mul_(2)` -> `g = g.mul(2)`; `return g.mul_(2)` -> `return g.mul(2)`."""
    if aliases.rebound or not all(w.direct for w in writes):
        return None
    edits, texts = [], []
    for write in writes:
        stmt = write.stmt
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, cst.Return) and small.value is not None and isinstance(write.node, cst.Call) and (
                small.value is write.node or (isinstance(small.value, cst.Tuple)
                                              and any(e.value is write.node for e in small.value.elements))):
            built = fixes.drop_inplace_suffix(ctx, write.node, top)
        else:
            built = _rebind_edit(ctx, write, top)
        if built is None:
            return None
        edits.append(built[0])
        texts.append(built[1])
    return tuple(edits), "; ".join(texts)


@RULE.checker
def check(ctx):
    reported = set()
    for call, fn, name, kind, label, top in _hook_sites(ctx):
        aliases = _watched(fn, name, kind)
        if isinstance(fn, cst.Lambda):
            writes = []
            expression_writes(fn.body, aliases, fn, writes)
            writes = distinct(writes)
        else:
            writes = body_writes(fn.body.body, aliases)
        if not writes or id(fn) in reported:
            continue
        reported.add(id(fn))
        fix = _hook_fix(ctx, fn, name, kind, writes, aliases, top)
        kind_en, kind_zh = _KIND[label]
        reg_line = ctx.line(call, top)
        for write in writes:
            finding = _finding(ctx, write, top, kind_en, kind_zh, label, name, fix, call, reg_line)
            if finding:
                yield finding
            fix = None  # one fix carries the edits of every write in the hook
    yield from _backward_findings(ctx)


def _instead(name, op) -> tuple[str, str]:
    """(`grad.clamp(...)`, `grad.clamp_(...)`): the out-of-place twin of the write, for the message."""
    if op.endswith("_") and op[:-1] in OUT_OF_PLACE:
        return f"{name}.{op[:-1]}(...)", f"{name}.{op}(...)"
    return f"{name} * s", f"{name}.mul_(s)"


def _advice(ctx, label, name, op=""):
    new, old = _instead(name, op)
    if label == "tensor":
        return ctx.t(f"Return a new tensor instead (`return {new}`, not `{old}`).",
                     f"请改为返回新张量（`return {new}`，而不是 `{old}`）。")
    if label in ("pre", "node_pre"):
        return ctx.t(f"Return a new tuple instead (`return ({name}[0] * s,)`).",
                     f"请改为返回新的元组（`return ({name}[0] * s,)`）。")
    if label in ("full", "node_post"):
        return ctx.t("Change gradients by returning a new `grad_input` tuple instead.",
                     "请改为返回新的 `grad_input` 元组来改变梯度。")
    if label == "multi":
        return ctx.t("Leave it unchanged: to change a gradient, register a hook on that tensor that returns a new one.",
                     "请不要修改它：要改变梯度，请在该张量上注册返回新张量的钩子。")
    return ctx.t(f"Compute a new tensor instead (`{new}`, not `{old}`).",
                 f"请改为计算新张量（`{new}`，而不是 `{old}`）。")


def _finding(ctx, write, top, kind_en, kind_zh, label, name, fix, call, reg_line):
    op = op_text(write)
    where_en = f"the {kind_en} registered on line {reg_line}" if call is not None else kind_en
    where_zh = f"第 {reg_line} 行注册的{kind_zh}" if call is not None else kind_zh
    message = ctx.t(
        f"`{op}` modifies the gradient `{name}` that {where_en} receives, in place: torch passes the same tensor to "
        "other parts of the graph (both operands of an addition, a residual branch, the tensor given to `backward()`), "
        f"so their gradients silently change too. {_advice(ctx, label, name, op)}",
        f"`{op}` 原地修改了{where_zh}收到的梯度 `{name}`：torch 把同一个张量传给计算图的其他部分（加法的两个操作数、"
        f"残差分支、传给 `backward()` 的张量），所以它们的梯度也会悄悄改变。{_advice(ctx, label, name, op)}")
    explanation = ctx.t(
        f"1. Autograd hands `{name}` to {where_en} without copying it.\n"
        f"2. Line {ctx.line(write.node, top)} writes it in place with `{op}`.\n"
        "3. Any other node that received the same gradient tensor and runs later (the other operand of an addition, "
        "a residual branch) now computes with the changed values: a wrong gradient, and no error.",
        f"1. autograd 把 `{name}` 交给{where_zh}时没有复制它。\n"
        f"2. 第 {ctx.line(write.node, top)} 行用 `{op}` 原地写入了它。\n"
        "3. 收到同一个梯度张量、且之后才运行的其他节点（加法的另一个操作数、残差分支）会用修改后的值计算：梯度错误，且不报错。")
    made = None
    if fix is not None:
        edits, text = fix
        made = make_fix("unsafe", ctx.t(
            f"Compute a new tensor: `{text}` (unsafe: the other branches no longer receive the changed gradient, so "
            "their gradients change)",
            f"计算新张量：`{text}`（不安全：其他分支不再收到被修改的梯度，它们的梯度会改变）"), *edits)
    related = [ctx.related(call, top, ctx.t("hook registered here", "钩子在这里注册"))] if call is not None else []
    return ctx.finding(RULE, write.node, top, message, fix=made, related=related, explanation=explanation)


def _backward_findings(ctx):
    for cls, methods, top, _bases in function_classes(ctx):
        backward = methods.get("backward")
        if backward is None:
            continue
        params = parameters(backward)[1:]  # after ctx
        if not params:
            continue
        aliases = Aliases()
        for param in params:
            if param.startswith("*"):
                aliases.tuples.add(param[1:])
            else:
                aliases.tensors.add(param)
                aliases.roots.add(param)
        writes = body_writes(backward.body.body, aliases)
        if not writes or not _apply_result_shared(ctx, cls.name.value):
            continue
        fix = _backward_fix(ctx, writes, aliases, top)
        kind_en, kind_zh = f"`{cls.name.value}.backward`", f"`{cls.name.value}.backward`"
        for write in writes:
            finding = _finding(ctx, write, top, kind_en, kind_zh, "backward", write.name or params[0], fix, None, 0)
            if finding:
                yield finding
            fix = None


def _apply_result_shared(ctx, cls_name: str) -> bool:
    """Some `Cls.apply(...)` result feeds an addition, a subtraction, `backward(gradient)` or `sum()`: only then
    is the gradient its backward receives another node's too."""
    tops = [top for pb in ctx.locator.blocks if cls_name in pb.block.text for top in pb.module.body]

    def matches(expr) -> bool:
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "apply" \
            and dotted(expr.func.value).split(".")[-1] == cls_name

    return shares_gradient(tops, matches, lambda f: resolve(ctx, f))
