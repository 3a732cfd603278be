"""GG505: a custom `autograd.Function.backward` modifies a saved input or output in place (the caller's tensor
changes silently; a second use of it is wrong or raises)."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from .. import fixes
from ._common import OUT_OF_PLACE
from ._grad_writes import (Aliases, body_writes, dotted, function_classes, inherited_method, op_text, parameters)

RULE = Rule(
    code="GG505",
    name="function-backward-writes-saved",
    family="silent",
    severity="warning",
    fix_kind="unsafe",
    summary={
        "en": "A custom `autograd.Function.backward` modifies a tensor it saved from `forward` (an input or the "
              "output) in place: the caller's tensor changes silently.",
        "zh": "自定义 `autograd.Function.backward` 原地修改了它从 `forward` 保存的张量（输入或输出）：调用方的张量被悄悄改变。",
    },
    what={
        "en": "Flags in-place writes in `backward` on tensors taken from `ctx.saved_tensors` / `ctx.saved_variables` "
              "(`x, w = ctx.saved_tensors`, `ctx.saved_tensors[0]`) or stashed on `ctx` (`ctx.x = x` in forward), when "
              "what forward saved there is one of its inputs or a tensor it returns. An input that every `Fn.apply(...)` "
              "of the file passes without requires_grad (a buffer, a memory bank updated on purpose) is not flagged, "
              "and a `ctx.x` stash only where a call passes a tensor that requires grad. A temporary that only forward "
              "and backward see may be reused in place and is not flagged; a copy (`x = x.clone()`) is not flagged.",
        "zh": "检查 `backward` 中对取自 `ctx.saved_tensors` / `ctx.saved_variables`（`x, w = ctx.saved_tensors`、"
              "`ctx.saved_tensors[0]`）或存放在 `ctx` 上（forward 中的 `ctx.x = x`）的张量的原地写入，前提是 forward "
              "在那里保存的是它的某个输入或它返回的张量。文件中每个 `Fn.apply(...)` 都传入不需要梯度的张量（缓冲区、有意更新的记忆库）"
              "的输入不会被报告；`ctx.x` 只在某个调用传入需要梯度的张量时才报告。只有 forward 和 backward 能看到的临时张量可以原地复用，不会被报告；"
              "副本（`x = x.clone()`）也不会被报告。",
    },
    why={
        "en": "A saved tensor is the caller's tensor itself, not a copy. Backward runs with recording off, so a write "
              "there is allowed even on a parameter: after `backward()` the input (or the output the caller holds) has "
              "new values, and the next forward, the optimizer step and any other use read them. A second backward "
              "through the same graph, or another node that saved the same tensor and runs later, raises the version "
              "error instead; through `ctx.x` there is no version check at all.",
        "zh": "保存的张量就是调用方的张量本身，而不是副本。backward 在不记录计算图的状态下运行，所以即使是参数也允许在这里写入："
              "`backward()` 之后输入（或调用方持有的输出）已是新值，下一次前向、优化器更新和其他任何使用都会读到它们。"
              "对同一计算图的第二次反向传播、或之后运行的另一个保存了同一张量的节点会报版本错误；而经由 `ctx.x` 则完全没有版本检查。",
    },
    autograd={
        "en": "Checked on torch 2.13 (`autograd-facts-scripts/function_inplace.py`): a square function whose backward "
              "does `x, = ctx.saved_tensors; x.mul_(2); return grad * x` leaves the leaf `w = [1., 2.]` at `[2., 4.]` "
              "after one `backward()`, without an error; after a `backward(retain_graph=True)`, a second one raises \"one of the "
              "variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor "
              "[2]] is at version 1; expected version 0 instead.\" The same through `ctx.x = x` changes `w` and never "
              "raises. `x = x.clone()` before the write keeps `w` at `[1., 2.]`.",
        "zh": "在 torch 2.13 上验证（`autograd-facts-scripts/function_inplace.py`）：一个平方函数的 backward 执行 "
              "`x, = ctx.saved_tensors; x.mul_(2); return grad * x`，一次 `backward()` 之后叶子张量 `w = [1., 2.]` 变成 "
              "`[2., 4.]`，且不报错；在 `backward(retain_graph=True)` 之后，第二次反向传播报错 `one of the variables needed for gradient "
              "computation has been modified by an inplace operation: [torch.FloatTensor [2]] is at version 1; expected "
              "version 0 instead.`。经由 `ctx.x = x` 同样会改变 `w`，且永远不会报错。在写入前 `x = x.clone()` 会让 `w` "
              "保持 `[1., 2.]`。",
    },
    fix_safety={
        "en": "`x.mul_(2)`, a statement of its own on the name unpacked from `ctx.saved_tensors`, becomes `x = "
              "x.mul(2)`, and `s = x.sigmoid_()` (or `return x.mul_(g)`) where `x` is not read afterwards becomes "
              "`s = x.sigmoid()` (unsafe: backward computes the same values, but the caller's tensor keeps its old values, "
              "which later code then reads, and backward uses more memory). No fix when the saved tensor is reached "
              "through another name or `ctx.x`, or the method has no out-of-place twin (`zero_`, `fill_`).",
        "zh": "对从 `ctx.saved_tensors` 解包出的名字单独成行的 `x.mul_(2)` 改为 `x = x.mul(2)`；之后不再读取 `x` 时，"
              "`s = x.sigmoid_()`（或 `return x.mul_(g)`）改为 `s = x.sigmoid()`（不安全修复：backward 计算的值相同，"
              "但调用方的张量保持旧值，之后的代码读到的是旧值，且 backward 占用更多内存）。通过其他名字或 `ctx.x` 访问保存的张量，"
              "或方法没有非原地版本（`zero_`、`fill_`）时不提供修复。",
    },
    runtime_error="",
    references=("https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",),
)


class _Rebind:
    def __init__(self, stmt, name):
        self.stmt, self.target_name = stmt, name


def _visible_in_forward(forward, inputs: list, ctx_name: str, returned: set):
    """What forward hands to backward that the caller also holds: for the one plain `save_for_backward` call, each
    item's input index, "output" (a tensor forward returns) or None (a temporary); None when there is not exactly
    one such call. And the `ctx.<attr> = <input>` stashes: attr -> input index."""
    from ._grad_writes import _walk  # the same walk, observing calls

    saves: list = []
    stashed: dict = {}
    aliases = Aliases()
    for param in inputs:
        aliases.tensors.add(param)
        aliases.roots.add(param)

    def observe(call, current):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "save_for_backward" and \
                isinstance(func.value, cst.Name) and func.value.value == ctx_name:
            if any(a.star or a.keyword is not None for a in call.args):
                saves.append(None)
            else:
                saves.append(tuple(_origin(a.value, current, inputs, returned) for a in call.args))

    aliases.observer = observe
    _walk(forward.body.body, aliases, [])
    for stmt in forward.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                            target.value.value == ctx_name and isinstance(small.value, cst.Name) and \
                            small.value.value in inputs:
                        stashed[target.attr.value] = inputs.index(small.value.value)
    return (saves[0] if len(saves) == 1 else None), stashed


def _origin(expr, aliases, inputs, returned):
    if isinstance(expr, cst.Name):
        if expr.value in inputs and expr.value in aliases.roots:
            return inputs.index(expr.value)
        if expr.value in returned:
            return "output"
    return None


def _returned(forward) -> set:
    from .gg504_function_forward_inplace_undirty import _returned_names

    return _returned_names(forward)


def _input_requires_grad(ctx, cls_name):
    from .gg504_function_forward_inplace_undirty import _apply_sites, _requires_grad_at

    sites = _apply_sites(ctx, cls_name)
    return lambda index: _requires_grad_at(ctx, sites, index)


@RULE.checker
def check(ctx):
    classes = function_classes(ctx)
    entries = {id(entry[0]): entry for entry in classes}
    for entry in classes:
        cls, methods, top, _bases = entry
        backward = methods.get("backward")
        forward = inherited_method(entry, "forward", entries)
        if backward is None or forward is None or inherited_method(entry, "setup_context", entries) is not None:
            continue
        fparams, bparams = parameters(forward), parameters(backward)
        if not fparams or not bparams:
            continue
        inputs = [p for p in fparams[1:] if not p.startswith("*")]
        origins, stashed = _visible_in_forward(forward, inputs, fparams[0], _returned(forward))
        if origins is None and not stashed:
            continue
        requires_grad = _input_requires_grad(ctx, cls.name.value)
        bctx = bparams[0]
        aliases = Aliases()
        # An input that every call passes without requires_grad (a buffer, a memory bank) may be updated in
        # backward on purpose; a `ctx.x` stash counts only where a call proves the input requires grad.
        flags = tuple(o == "output" or (isinstance(o, int) and requires_grad(o) is not False) for o in origins or ())
        if any(flags):
            for attr in ("saved_tensors", "saved_variables"):
                aliases.items[f"{bctx}.{attr}"] = flags
        for attr, index in stashed.items():
            if requires_grad(index) is True:
                aliases.attrs[f"{bctx}.{attr}"] = "tensor"
        if not aliases.items and not aliases.attrs:
            continue
        writes = body_writes(backward.body.body, aliases)
        for write in writes:
            yield from _report(ctx, cls, write, aliases, top, backward)


def _read_after(backward, stmt, name: str) -> bool:
    """`name` is read in a statement of backward's body after `stmt` (or `stmt` is not one of its statements)."""
    body = backward.body.body
    if stmt not in body:
        return True
    for later in body[body.index(stmt) + 1:]:
        stack = [later]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name) and node.value == name:
                return True
            stack.extend(node.children)
    return False


def _value_fix(ctx, write, top, backward):
    """`s = x.sigmoid_()` / `return x.mul_(g)`, where `x` is not read afterwards: `s = x.sigmoid()`."""
    stmt = write.stmt
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(write.node, cst.Call) or not (
            (isinstance(small, cst.Assign) and small.value is write.node and len(small.targets) == 1
             and isinstance(small.targets[0].target, cst.Name))
            or (isinstance(small, cst.Return) and small.value is write.node)):
        return None
    if isinstance(small, cst.Assign) and _read_after(backward, stmt, write.name):
        return None
    return fixes.drop_inplace_suffix(ctx, write.node, top)


def _report(ctx, cls, write, aliases, top, backward):
    op = op_text(write)
    cname = cls.name.value
    name = dotted(write.receiver) or write.name or "the saved tensor"
    message = ctx.t(
        f"`{op}` modifies `{name}` in place in `{cname}.backward`, but it is the tensor `forward` saved (an input or "
        f"an output the caller holds), not a copy: after `backward()` the caller's tensor silently has new values, and "
        f"a second backward through it raises. Compute a new tensor instead (`{name} = {name}.clone()` before the "
        "write, or an out-of-place op).",
        f"`{op}` 在 `{cname}.backward` 中原地修改了 `{name}`，但它是 `forward` 保存的张量（输入或调用方持有的输出），"
        f"而不是副本：`backward()` 之后调用方的张量悄悄变成了新值，再次经过它的反向传播会报错。请改为计算新张量"
        f"（写入前 `{name} = {name}.clone()`，或使用非原地运算）。")
    explanation = ctx.t(
        f"1. `{cname}.forward` saves one of its inputs or outputs for backward; the saved tensor is that tensor itself.\n"
        f"2. Line {ctx.line(write.node, top)} writes it in place with `{op}` while backward runs (recording off, so "
        "even a parameter may be written).\n"
        "3. The caller's tensor now holds the new values: later forwards and optimizer steps read them, and a second "
        "backward through the graph raises the version error.",
        f"1. `{cname}.forward` 为反向传播保存了它的某个输入或输出；保存的张量就是那个张量本身。\n"
        f"2. 第 {ctx.line(write.node, top)} 行在 backward 运行期间用 `{op}` 原地写入了它（不记录计算图，所以参数也能被写）。\n"
        "3. 调用方的张量现在是新值：之后的前向传播和优化器更新都会读到它们，再次经过该计算图的反向传播会报版本错误。")
    fix = None
    if write.direct and isinstance(write.stmt, cst.SimpleStatementLine) and len(write.stmt.body) == 1:
        small = write.stmt.body[0]
        target = small.targets[0].target.value if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
            isinstance(small.targets[0].target, cst.Name) else None
        # `s = x.sigmoid_()` makes `s` an alias of `x`; once the write is out of place, `s` is a new tensor
        others = aliases.tensors - aliases.roots - {target}
        built = None
        if not aliases.rebound:
            built = fixes.out_of_place(ctx, _Rebind(write.stmt, write.name), top, OUT_OF_PLACE)
        if built is None and not others and not aliases.tuples:
            built = _value_fix(ctx, write, top, backward)
        if built is not None:
            fix = make_fix("unsafe", ctx.t(
                f"Compute a new tensor: `{built[1]}` (unsafe: the caller's tensor keeps its old values, and backward "
                "uses more memory)",
                f"计算新张量：`{built[1]}`（不安全：调用方的张量保持旧值，且 backward 占用更多内存）"), built[0])
    finding = ctx.finding(RULE, write.node, top, message, fix=fix, explanation=explanation)
    if finding:
        yield finding
