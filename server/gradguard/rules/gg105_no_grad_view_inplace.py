"""GG105: a view created under no_grad is modified in place with grad enabled."""
from __future__ import annotations

from . import Rule
from ._common import name_of

RULE = Rule(
    code="GG105",
    name="no-grad-view-inplace",
    family="views",
    fix_kind="none",
    summary={
        "en": "A view created under `torch.no_grad()` is modified in place with grad mode enabled.",
        "zh": "在 `torch.no_grad()` 中创建的视图，在启用梯度时被原地修改。",
    },
    what={
        "en": "Flags `with torch.no_grad(): v = y[:2]` followed by `v.mul_(2)` outside the block, when `y` requires grad.",
        "zh": "检查 `with torch.no_grad(): v = y[:2]` 之后在块外执行 `v.mul_(2)`，且 `y` 需要梯度的情况。",
    },
    why={
        "en": "It is ambiguous whether the write should be tracked; torch forbids it and raises at the write.",
        "zh": "这次写入是否应被记录是不明确的；torch 禁止这样做，并在写入处报错。",
    },
    autograd={
        "en": "The view shares `y`'s storage and version counter but was created without graph recording. Move the view and the write both inside `no_grad` (untracked) or both outside (tracked).",
        "zh": "视图与 `y` 共享存储和版本计数器，但创建时没有记录计算图。请把创建视图和写入都放进 `no_grad`（不记录），或都放在外面（记录）。",
    },
    fix_safety={"en": "No automatic fix: only the author knows whether the write should be tracked.",
                "zh": "没有自动修复：只有作者知道这次写入是否应被记录。"},
    runtime_error="A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
                  "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
                  "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
                  "tracked) or both outside (if you want the inplace to be tracked).",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("no-grad-view-write"):
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor, "this view")
        line = ctx.line(tensor.origin, hint) if tensor.origin is not None else 0
        message = ctx.t(
            f"{name} was created under no_grad on line {line}; writing it in place with grad enabled (`{write.op}`) raises. Put both inside or both outside no_grad.",
            f"{name} 是第 {line} 行在 no_grad 中创建的视图；启用梯度时原地写入（`{write.op}`）会报错。请把两者都放进或都移出 no_grad。")
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, hint, message,
                        related=[ctx.related(tensor.origin, hint, ctx.t("view created under no_grad here", "视图在这里于 no_grad 中创建"))] if tensor.origin is not None else [],
                        explanation=message)
        if f:
            yield f
