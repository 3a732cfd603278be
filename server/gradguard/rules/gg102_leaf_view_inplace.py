"""GG102: in-place write through a view of a leaf that requires grad (including `w[0] = v`)."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from ..source import Span
from ._common import copy_before_write, created_line, leaf_view_error, made_each_call, name_of

RULE = Rule(
    code="GG102",
    name="leaf-view-inplace",
    family="leaf",
    fix_kind="safe/unsafe",
    summary={
        "en": "In-place write through a view of a leaf tensor that requires grad (`w[0] = v`, `w[:2].mul_(2)`).",
        "zh": "通过需要梯度的叶子张量的视图做原地写入（`w[0] = v`、`w[:2].mul_(2)`）。",
    },
    what={
        "en": "Flags item assignment on a leaf that requires grad (`w[i] = v`, which is a view plus `copy_`) and in-place "
              "ops on its views (`w[:2]`, `w.view(...)`, `w.t()`, ...) while grad mode is on.",
        "zh": "检查启用梯度时对需要梯度的叶子张量做下标赋值（`w[i] = v`，即视图加 `copy_`），以及对其视图"
              "（`w[:2]`、`w.view(...)`、`w.t()` 等）做原地操作。",
    },
    why={
        "en": "A view shares its base's storage and version counter (版本计数器). Writing the view writes the leaf, which "
              "autograd forbids in grad mode for the same reason as GG101; torch raises immediately.",
        "zh": "视图与其基张量共享存储和版本计数器（`_version`）。写视图就是写叶子张量，启用梯度时 autograd 出于与 GG101 "
              "相同的原因禁止这样做，torch 会立刻报错。",
    },
    autograd={
        "en": "`w[0] = v` runs `w[0].copy_(v)`: the view `w[0]` has `_base is w`; the in-place op on the view would rebase "
              "the leaf's history. Under `torch.no_grad()` the write is allowed and bumps `w._version`.",
        "zh": "`w[0] = v` 实际执行 `w[0].copy_(v)`：视图 `w[0]` 的 `_base` 是 `w`；对视图的原地操作会改写叶子张量的历史。"
              "在 `torch.no_grad()` 中写入是允许的，`w._version` 会加一。",
    },
    fix_safety={
        "en": "Parameter updates (the statement uses `.grad`, or the leaf is a parameter) are wrapped in "
              "`with torch.no_grad():` (safe). Other writes get the same wrap marked unsafe: the write is then not "
              "recorded, so gradients treat the written values as constants of the leaf. A helper that writes a "
              "slice of a tensor it was passed and returns it, whose every call binds the result to another name "
              "(`cache = slice_update(kernel, ...)`, a functional update), writes into a copy instead: "
              "`inputs = inputs.clone()` before the write (unsafe: the tensor passed in is no longer modified). An index "
              "write into a leaf the training loop does not backpropagate through again, or that the writing function "
              "made itself (a hooked layer's output in `forward`), goes into a copy too: `h = h.clone()` before "
              "`h[:2] = v` (unsafe: `h` then names a non-leaf copy; the write is recorded, so what it writes keeps its "
              "gradient, and the leaf gets its own through the copy).",
        "zh": "参数更新（语句用到 `.grad`，或叶子是参数）会被放进 `with torch.no_grad():`（安全修复）。其他写入给出同样的"
              "修改但标为不安全修复：写入不再被记录，梯度把写入的值当作叶子张量本身的数据。辅助函数写入传入张量的一个切片并"
              "返回它、且文件中每次调用都把结果绑定到另一个名字时（`cache = slice_update(kernel, ...)`，函数式更新），改为写入"
              "副本：在写入之前加 `inputs = inputs.clone()`（不安全：传入的张量不再被修改）。对训练循环不会再次经过的叶子张量，"
              "或由写入它的函数自己创建的叶子张量（`forward` 中被钩子设为需要梯度的层输出）按索引写入时，同样写入副本："
              "在 `h[:2] = v` 之前加 `h = h.clone()`（不安全：`h` 随后指向非叶子副本；写入被记录，写入的值保留梯度，"
              "叶子张量经由副本得到自己的梯度）。",
    },
    runtime_error="a view of a leaf Variable that requires grad is being used in an in-place operation.",
)


def _copy_in_functional_helper(ctx, write, hint):
    """A helper that takes a tensor, writes a slice of it and returns it (`def slice_update(inputs, start, updates):
    ...; inputs[idx] = updates; return inputs`), whose every call in the file binds the result to another name
    (`cache = slice_update(kernel.value, ...)`): it is meant as a functional update, so the copy is written
    (`inputs = inputs.clone()` before the write) and the leaf passed in is left alone. A call that re-binds what it
    passed (`w = slice_update(w, ...)`) means an in-place update instead: no such fix then."""
    from ..findings import Edit
    from ..fixes_order import _assigned_in, _callee_name, _dotted, _function_of, _parents, _statement_of, _tree_of, \
        _whole_module

    stmt = write.stmt
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Subscript):
        return None
    root = small.targets[0].target
    while isinstance(root, cst.Subscript):
        root = root.value
    if not isinstance(root, cst.Name):
        return None
    name = root.value
    tree = _tree_of(ctx, [stmt], write.top or hint)
    parents = _parents(tree) if tree is not None else {}
    func = _function_of(stmt, parents)
    if func is None or parents.get(id(stmt)) is not func.body:
        return None
    params = [p.name.value for p in func.params.params]
    body = list(func.body.body)
    i_w = next(i for i, st in enumerate(body) if st is stmt)
    returns = [st for st in body[i_w + 1:] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
               and isinstance(st.body[0], cst.Return) and isinstance(st.body[0].value, cst.Name)
               and st.body[0].value.value == name]
    if name not in params or not returns or any(name in _assigned_in(st) for st in body[i_w + 1:]):
        return None
    whole = _whole_module(ctx)
    calls = []
    for node in _walk(whole) if whole is not None else ():
        if isinstance(node, cst.Call) and _callee_name(node) == func.name.value:
            calls.append(node)
    all_parents = _parents(whole) if whole is not None else {}
    position = params.index(name)
    for call in calls:
        caller = _statement_of(call, all_parents)
        top_small = caller.body[0] if isinstance(caller, cst.SimpleStatementLine) and len(caller.body) == 1 else None
        if not isinstance(top_small, cst.Assign) or top_small.value is not call or position >= len(call.args):
            return None
        passed = _dotted(call.args[position].value) or ctx.code(call.args[position].value)
        if any((_dotted(t.target) or ctx.code(t.target)) == passed for t in top_small.targets):
            return None  # `w = slice_update(w, ...)`: the caller keeps updating what it passed
    if not calls:
        return None
    span = ctx.span(stmt, write.top or hint)
    if span is None:
        return None
    indent = ctx.source.line_text(span.start_line)[:span.start_col]
    if indent.strip():
        return None
    line = f"{name} = {name}.clone()"
    return Edit(Span(span.start_line, 0, span.start_line, 0), f"{indent}{line}\n"), {
        "line": line, "before": span.start_line + 1, "function": func.name.value}


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("leaf-view-write"):
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor)
        line = created_line(ctx, tensor, hint)
        update = (tensor.is_parameter or tensor.module_params is not None or tensor.grad_read
                  or ".grad" in ctx.code(write.stmt))
        functional = _copy_in_functional_helper(ctx, write, hint)
        if functional is not None:
            edit, info = functional
            fix = make_fix("unsafe", ctx.t(
                f"Write into a copy: add `{info['line']}` before line {info['before']} (unsafe: the tensor passed to "
                f"`{info['function']}` is no longer modified; it returns the written copy)",
                f"写入副本：在第 {info['before']} 行之前加上 `{info['line']}`（不安全：传给 `{info['function']}` 的张量"
                f"不再被修改；它返回写入后的副本）"), edit)
        elif not update and (copied := copy_before_write(ctx, write, hint)) and (
                not problem.detail.get("loop_backward") or made_each_call(ctx, tensor, write, hint)):
            # a leaf made by the code that writes it (a hooked layer's output): the write goes into a copy and is
            # recorded, so what it writes keeps its gradient
            fix = make_fix("unsafe", ctx.t(
                f"Write into a copy: add `{copied[1]}` before line {ctx.line(write.stmt, hint)} (unsafe: {name} then "
                "names a non-leaf copy whose `.grad` stays `None`; the leaf gets its gradient through the copy)",
                f"写入副本：在第 {ctx.line(write.stmt, hint)} 行之前加上 `{copied[1]}`（不安全：{name} 随后指向非叶子副本，"
                f"其 `.grad` 保持 `None`；叶子张量经由副本得到梯度）"), copied[0])
        else:
            fix = make_fix("safe" if update else "unsafe",
                           ctx.t("Do the write under `torch.no_grad()`" + ("" if update else " (unsafe: it is then not recorded in the graph)"),
                                 "在 `torch.no_grad()` 中写入" + ("" if update else "（不安全：写入不再记录到计算图）")),
                           ctx.wrap_no_grad(write.stmt, hint))
        message = ctx.t(
            f"`{write.op}` writes into a view of {name}, a leaf tensor that requires grad (line {line}); torch raises at once.",
            f"`{write.op}` 写入了 {name} 的视图，而 {name} 是需要梯度的叶子张量（第 {line} 行）；torch 会立刻报错。")
        explanation = ctx.t(
            f"1. {name} is a leaf created on line {line} (`requires_grad=True`).\n"
            f"2. Line {ctx.line(write.node, hint)} writes a view of it in place (`{write.op}`); the view shares {name}'s storage and version counter.\n"
            "3. torch raises there: a view of a leaf that requires grad cannot be modified in place in grad mode.",
            f"1. {name} 是第 {line} 行创建的叶子张量（`requires_grad=True`）。\n"
            f"2. 第 {ctx.line(write.node, hint)} 行原地写入它的视图（`{write.op}`）；视图与 {name} 共享存储和版本计数器。\n"
            "3. torch 在这里报错：启用梯度时不能原地修改需要梯度的叶子张量的视图。")
        related = [ctx.related(tensor.origin, hint, ctx.t(f"{name} created here", f"{name} 在这里创建"))] if tensor.origin is not None else []
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, hint, message, related=related,
                        fix=fix, explanation=explanation, runtime_error=leaf_view_error(write))
        if f:
            yield f
