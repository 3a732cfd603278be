"""GG102: in-place write through a view of a leaf that requires grad (including `w[0] = v`)."""
from __future__ import annotations

from . import Rule, make_fix
from ._common import leaf_view_error, created_line, name_of

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
              "recorded, so gradients treat the written values as constants of the leaf.",
        "zh": "参数更新（语句用到 `.grad`，或叶子是参数）会被放进 `with torch.no_grad():`（安全修复）。其他写入给出同样的"
              "修改但标为不安全修复：写入不再被记录，梯度把写入的值当作叶子张量本身的数据。",
    },
    runtime_error="a view of a leaf Variable that requires grad is being used in an in-place operation.",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("leaf-view-write"):
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor)
        line = created_line(ctx, tensor, hint)
        update = (tensor.is_parameter or tensor.module_params is not None or tensor.grad_read
                  or ".grad" in ctx.code(write.stmt))
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
