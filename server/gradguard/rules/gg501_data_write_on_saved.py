"""GG501: an in-place write through `.data` on a tensor that backward needs (silently wrong gradients)."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from .. import fixes
from ._common import saved_name, statement_of, use_phrase, written_name

RULE = Rule(
    code="GG501",
    name="data-write-on-saved",
    family="silent",
    severity="warning",
    fix_kind="unsafe",
    summary={
        "en": "An in-place write through `.data` changes a tensor saved for backward: no error, wrong gradients.",
        "zh": "通过 `.data` 原地写入了为反向传播保存的张量：不报错，但梯度是错的。",
    },
    what={
        "en": "Flags `y.data.mul_(0)`, `y.data[...] = v`, `y.data.copy_(...)` when `y` (or its storage) was saved by an "
              "op whose graph a later `backward()` uses.",
        "zh": "检查 `y.data.mul_(0)`、`y.data[...] = v`、`y.data.copy_(...)`，其中 `y`（或其存储）被某个运算保存，"
              "且之后的 `backward()` 会用到那张计算图。",
    },
    why={
        "en": "`.data` shares storage with `y` but has its own version counter, so autograd cannot notice the write: "
              "backward computes with the new values and returns a wrong gradient without any error.",
        "zh": "`.data` 与 `y` 共享存储，但有自己的版本计数器，所以 autograd 无法察觉这次写入：反向传播使用新值计算，"
              "悄悄返回错误的梯度，没有任何报错。",
    },
    autograd={
        "en": "Checked on torch 2.13: `w = torch.tensor([1., 2.], requires_grad=True); e = w.exp(); e.data.mul_(0); "
              "e.sum().backward()` gives `w.grad == [0., 0.]` instead of `[2.7183, 7.3891]`. `detach()` shares the "
              "counter, so the same write through `e.detach()` raises instead of corrupting.",
        "zh": "在 torch 2.13 上验证：`w = torch.tensor([1., 2.], requires_grad=True); e = w.exp(); e.data.mul_(0); "
              "e.sum().backward()` 得到 `w.grad == [0., 0.]`，而正确值是 `[2.7183, 7.3891]`。`detach()` 共享计数器，"
              "所以通过 `e.detach()` 做同样的写入会报错，而不是悄悄算错。",
    },
    fix_safety={
        "en": "`y.data.mul_(0.9)` becomes `y = y.clone()` followed by `y.mul_(0.9)` (unsafe: the gradient changes, on "
              "purpose). The saving op keeps its values, and the write is recorded in the graph, so backward returns "
              "the gradient of the values the program goes on to use. Other references to the old `y` no longer see "
              "the write. Not offered for parameters and other leaves (re-binding them would detach them from their "
              "module): such a write (or the loop or branch holding it, as in a weight-only max-norm over "
              "`named_parameters()`) is moved after `backward()` (or belongs before the forward) instead. "
              "Replacing `.data` with `.detach()` alone turns the silent error into a loud one (GG201).",
        "zh": "`y.data.mul_(0.9)` 改为 `y = y.clone()` 再 `y.mul_(0.9)`（不安全修复：梯度会改变，这正是目的）。保存它的运算保留原值，"
              "写入被记录到计算图中，所以反向传播返回程序之后所用值的梯度。其他指向旧 `y` 的引用不再看到这次写入。"
              "对参数和其他叶子张量不提供此修复（重新绑定会使它们脱离模块）：这类写入（或包含它的循环、分支，例如遍历 "
              "`named_parameters()` 只约束权重的最大范数）会被移到 `backward()` 之后（或本应在前向之前）。"
              "只把 `.data` 换成 `.detach()` 会把静默错误变成显式报错（GG201）。",
    },
    runtime_error="",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("silent-write"):
        write, save, hint = problem.write, problem.save, problem.top
        if write.via != "data":
            continue
        s_line = ctx.line(save.node, save.top or hint)
        message = ctx.t(
            f"`{write.op}` through `.data` changes {saved_name(save, ctx)}, which `{save.op}` saved for backward on line {s_line}; "
            f"{use_phrase(ctx, problem)} will silently use the new values (wrong gradient, no error).",
            f"通过 `.data` 的 `{write.op}` 修改了 {saved_name(save, ctx)}，它在第 {s_line} 行被 `{save.op}` 保存用于反向传播；"
            f"{use_phrase(ctx, problem)}会悄悄使用新值（梯度错误，但不报错）。")
        explanation = ctx.t(
            f"1. Line {s_line}: `{save.op}` saves {saved_name(save, ctx)} (version {save.version}).\n"
            f"2. Line {ctx.line(write.node, write.top or hint)}: the write goes through `.data`, which shares the storage but has its own version counter, so the saved version still reads {save.version}.\n"
            f"3. {use_phrase(ctx, problem)} unpacks the saved tensor without noticing and computes a wrong gradient.",
            f"1. 第 {s_line} 行：`{save.op}` 保存了 {saved_name(save, ctx)}（版本 {save.version}）。\n"
            f"2. 第 {ctx.line(write.node, write.top or hint)} 行：写入经过 `.data`，它共享存储但有自己的版本计数器，所以保存的版本仍是 {save.version}。\n"
            f"3. {use_phrase(ctx, problem)}取出保存的张量时察觉不到变化，算出错误的梯度。")
        fix = None
        tensor = save.tensor
        if tensor is None or not (tensor.is_parameter or (tensor.is_leaf is not False and tensor.requires_grad is not False)):
            copied = fixes.data_write_on_copy(ctx, write.stmt, write.top or hint)
            if copied is not None:
                fix = make_fix("unsafe", ctx.t(
                    f"Write a tracked copy: `{copied[1]}` (unsafe: backward then differentiates the written values, "
                    "and other references to the old tensor no longer see the write)",
                    f"写入被记录的副本：`{copied[1]}`（不安全：反向传播将对写入后的值求导，其他指向旧张量的引用不再看到这次写入）"),
                    copied[0])
        if fix is None:
            fix = _copy_at_alias(ctx, write, hint) or _after_backward(ctx, problem, save, write, hint)
        f = ctx.finding(RULE, write.node, write.top or hint, message, fix=fix,
                        related=[ctx.related(save.node, save.top or hint, ctx.t("saved for backward here", "在这里被保存用于反向传播"))],
                        explanation=explanation)
        if f:
            yield f


def _copy_at_alias(ctx, write, hint):
    """`c = out.data` then `c.zero_()`: the alias is made a copy, `c = out.data.clone()`."""
    receiver = written_name(write)
    if receiver is None:
        return None
    facts = ctx.facts
    alias = facts.name_values.get(id(receiver)) or facts.expr_values.get(id(receiver))
    if alias is None or alias.data_of is None or not isinstance(alias.origin, cst.Attribute) \
            or alias.origin.attr.value != "data":
        return None
    _, top = statement_of(ctx, alias.origin, write.top or hint)
    copied = fixes.with_method(ctx, alias.origin, top, "clone")
    if copied is None:
        return None
    return make_fix("unsafe", ctx.t(
        f"Make `{receiver.value}` a copy: `{copied[1]}` (unsafe: writes through `{receiver.value}` no longer reach "
        "the tensor it was taken from)",
        f"让 `{receiver.value}` 成为副本：`{copied[1]}`（不安全：经 `{receiver.value}` 的写入不再作用到原张量）"), copied[0])


def _after_backward(ctx, problem, save, write, hint):
    """`x.data *= 100` between the forward and its `backward()`: the write is moved after the backward. A write
    inside a helper (`clip_weights(netD, lo, hi)` doing `p.data.clamp_(lo, hi)`) moves as the call of that helper
    in the backward's block, when nothing between mentions any name it passes."""
    use = problem.use
    if use is None:
        return None
    backward_stmt, backward_top = statement_of(ctx, use, hint)
    if backward_stmt is None:
        return None
    receiver = write.target_name.removesuffix(".data")
    moving, moving_top, names, what = write.stmt, write.top or hint, [receiver], "this write"
    if not receiver or not receiver.isidentifier() or \
            fixes.move_after(ctx, write.stmt, write.top or hint, backward_stmt, backward_top, receiver) is None:
        moving = None
        enclosing = _enclosing_statement(ctx, write, hint, backward_stmt, backward_top)
        if enclosing is not None:  # `for name, p in model.named_parameters(): if ...: p.data.mul_(...)`
            moving, moving_top, names, what = enclosing
        for node, top, *_ in write.call_chain if moving is None else ():  # inner first: the first call beside it
            stmt, stmt_top = statement_of(ctx, node, top)
            args = getattr(node, "args", ())
            if stmt is None or any(a.star for a in args) or not isinstance(stmt, cst.SimpleStatementLine) \
                    or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr) or stmt.body[0].value is not node:
                continue
            if stmt_top is backward_top or ctx.span(stmt, backward_top) is not None:
                arg_names = {n.value for a in args for n in _names(a.value)}
                moving, moving_top, names, what = stmt, stmt_top, sorted(arg_names), f"`{ctx.code(node)}`"
                break
        if moving is None:
            found = _helper_call_before(ctx, write, hint, use)
            if found is not None:
                moving, moving_top, names, what = found
        if moving is None or not names:
            return None
    moved = None
    for name in names:  # every name it passes: nothing between the two may read or write it
        moved = fixes.move_after(ctx, moving, moving_top, backward_stmt, backward_top, name)
        if moved is None:
            return None
    edits, line = moved
    return make_fix("unsafe", ctx.t(
        f"Move {what} after the `backward()` on line {line} (unsafe: the forward's gradient is then computed "
        "with the values it used; if the write was meant to come before the forward, move it there instead)",
        f"把{'这次写入' if what == 'this write' else what}移到第 {line} 行的 `backward()` 之后（不安全：梯度按前向传播"
        "所用的值计算；若写入本应在前向传播之前，请改为移到那里）"), *edits)


def _enclosing_statement(ctx, write, hint, backward_stmt, backward_top):
    """The loop or branch holding the write (`for name, p in ...: if "bias" not in name: p.data.mul_(...)`), written
    in the backward's block before it: (statement, top, every name it mentions, what to call it), or None."""
    from ..fixes_order import _parents, _tree_of

    top = write.top or hint
    tree = _tree_of(ctx, [write.stmt], top)
    if tree is None:
        return None
    parents = _parents(tree)
    node = parents.get(id(write.stmt))
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(node, (cst.For, cst.If, cst.While)) and ctx.span(node, top) is not None:
            span = ctx.span(node, top)
            kind = {cst.For: "loop", cst.While: "loop", cst.If: "branch"}[type(node)]
            lines = f"{span.start_line + 1}" + (f"-{span.end_line + 1}" if span.end_line > span.start_line else "")
            what = ctx.t(f"the {kind} on line{'s' if span.end_line > span.start_line else ''} {lines}",
                         f"第 {lines} 行的{'循环' if kind == 'loop' else '分支'}")
            names = sorted({n.value for n in _names(node)})
            if all(fixes.move_after(ctx, node, top, backward_stmt, backward_top, name) is not None for name in names):
                return node, top, names, what
        node = parents.get(id(node))
    return None


def _helper_call_before(ctx, write, hint, use):
    """The write runs in a helper the analysis does not trace back (`clip_weights(netD, ...)`): the one call of
    that helper, as a statement of its own, before the backward in the backward's block."""
    from ..fixes_order import _callee_name, _function_of, _parents, _statement_of, _tree_of, _whole_module

    tree = _tree_of(ctx, [write.stmt], write.top or hint)
    helper = _function_of(write.stmt, _parents(tree)) if tree is not None else None
    use_tree = _tree_of(ctx, [use], hint)
    if helper is None or use_tree is None:
        return None
    parents = _parents(use_tree)
    b_stmt = _statement_of(use, parents)
    block = parents.get(id(b_stmt))
    if block is None:  # a module-level statement is its own top: its block is the file's module code
        use_tree = _whole_module(ctx)
        parents = _parents(use_tree) if use_tree is not None else {}
        block = parents.get(id(b_stmt))
    if block is None:
        return None
    body = list(block.body)
    calls = []
    for stmt in body[:next(i for i, st in enumerate(body) if st is b_stmt)]:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                and _callee_name(small.value) == helper.name.value and not any(a.star for a in small.value.args):
            calls.append((stmt, small.value))
    if len(calls) != 1:
        return None
    stmt, call = calls[0]
    names = sorted({n.value for a in call.args for n in _names(a.value)})
    return stmt, hint, names, f"`{ctx.code(call)}`"


def _names(node):
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.append(n)
        stack.extend(n.children)
    return out
