"""GG103: in-place write on an output of unbind/split/chunk (multi-output views)."""
from __future__ import annotations

from . import Rule, make_fix
from ._common import MULTI_VIEW_TAIL, multi_view_error, name_of, out_of_place_rewrite

RULE = Rule(
    code="GG103",
    name="multi-output-view-inplace",
    family="views",
    fix_kind="unsafe",
    summary={
        "en": "In-place write on a view returned by `unbind`, `split` or `chunk` of a tensor that requires grad.",
        "zh": "对 `unbind`、`split`、`chunk` 返回的视图（其基张量需要梯度）做原地操作。",
    },
    what={
        "en": "Flags `a.mul_(2)`, `a += 1`, `a[0] = 0` where `a` came from `y.unbind()`, `y.split(n)`, `y.chunk(n)` "
              "(or from iterating `y`), and `y` requires grad, in grad mode.",
        "zh": "检查在启用梯度时对来自 `y.unbind()`、`y.split(n)`、`y.chunk(n)`（或遍历 `y`）的 `a` 做 `a.mul_(2)`、"
              "`a += 1`、`a[0] = 0` 等原地操作，且 `y` 需要梯度。",
    },
    why={
        "en": "These functions return several views of one base. Autograd cannot rebase several views' histories at once, "
              "so it forbids in-place writes on them and raises immediately.",
        "zh": "这些函数返回同一基张量的多个视图。autograd 无法同时改写多个视图的历史，所以禁止对它们原地写入，并立刻报错。",
    },
    autograd={
        "en": "Each piece shares `y`'s storage and version counter. Under `torch.no_grad()` the write is allowed, but any "
              "later backward through the pieces fails (`... its base or another view of its base has been modified inplace`).",
        "zh": "每一块都与 `y` 共享存储和版本计数器。在 `torch.no_grad()` 中写入是允许的，但之后经过这些块的反向传播会失败"
              "（`... its base or another view of its base has been modified inplace`）。",
    },
    fix_safety={
        "en": "`a.mul_(2)` becomes `a = a.mul(2)` — unsafe: `y` (the base) is no longer modified.",
        "zh": "`a.mul_(2)` 改为 `a = a.mul(2)`——不安全修复：基张量 `y` 不再被修改。",
    },
    match="is a view and is being modified inplace. This view is the output of a function that returns multiple views.",
    runtime_error=f"Output <i> of <op> {MULTI_VIEW_TAIL}",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("multi-view-write"):
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor)
        rewrite = out_of_place_rewrite(ctx, write, hint)
        fix = make_fix("unsafe", ctx.t(f"Rewrite as `{rewrite[1]}` (the base tensor is no longer modified)",
                                       f"改写为 `{rewrite[1]}`（基张量不再被修改）"), rewrite[0]) if rewrite else None
        base_line = ctx.line(tensor.origin, hint) if tensor.origin is not None else 0
        message = ctx.t(
            f"{name} is one of several views returned on line {base_line} (unbind/split/chunk); the in-place `{write.op}` raises at once. Use an out-of-place op.",
            f"{name} 是第 {base_line} 行返回的多个视图之一（unbind/split/chunk）；原地操作 `{write.op}` 会立刻报错。请改用非原地操作。")
        explanation = ctx.t(
            f"1. Line {base_line} splits a tensor that requires grad into views that share its storage and version counter.\n"
            f"2. Line {ctx.line(write.node, hint)} modifies one of them in place (`{write.op}`).\n"
            "3. torch raises there: outputs of functions returning several views cannot be modified in place.",
            f"1. 第 {base_line} 行把需要梯度的张量拆成共享存储和版本计数器的多个视图。\n"
            f"2. 第 {ctx.line(write.node, hint)} 行原地修改其中之一（`{write.op}`）。\n"
            "3. torch 在这里报错：返回多个视图的函数的输出不能被原地修改。")
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, hint, message, fix=fix,
                        explanation=explanation, runtime_error=multi_view_error(ctx, tensor),
                        related=[ctx.related(tensor.origin, hint, ctx.t("views created here", "视图在这里创建"))] if tensor.origin is not None else [])
        if f:
            yield f
