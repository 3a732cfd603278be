"""GG105: a view created under no_grad is modified in place with grad enabled."""
from __future__ import annotations

from . import Rule, make_fix
from ._common import name_of, statement_of

RULE = Rule(
    code="GG105",
    name="no-grad-view-inplace",
    family="views",
    fix_kind="unsafe",
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
    fix_safety={"en": "The statement that builds the view is put inside `with torch.enable_grad():` (unsafe): the view "
                      "is then tracked, so the write changes the base tensor *and* is recorded in the graph, exactly as "
                      "when view and write are both outside `no_grad`. If the write should not be tracked, move it into "
                      "the `no_grad` block instead; if it should not reach the base tensor at all, build the view with "
                      "`.clone()`. Only the author knows which one the code means.",
                "zh": "把创建视图的语句放进 `with torch.enable_grad():`（不安全修复）：视图因此被记录，写入既修改基张量、也被记录到"
                      "计算图中，与视图和写入都在 `no_grad` 之外时完全相同。若写入不应被记录，请改为把写入移进 `no_grad` 块；"
                      "若写入根本不应影响基张量，请用 `.clone()` 创建副本。只有作者知道代码的本意。"},
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
        view_stmt, view_top = statement_of(ctx, tensor.origin, hint)
        edit = ctx.wrap_enable_grad(view_stmt, view_top) if view_stmt is not None else None
        fix = make_fix("unsafe", ctx.t(
            f"Build {name} with grad enabled: `with torch.enable_grad():` around line {line} (unsafe: the write is then "
            "recorded in the graph; move it into the `no_grad` block if it should not be)",
            f"在启用梯度时创建 {name}：在第 {line} 行外加 `with torch.enable_grad():`（不安全：写入会被记录到计算图；"
            "若不应记录，请把写入移进 `no_grad` 块）"), edit)
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, hint, message, fix=fix,
                        related=[ctx.related(tensor.origin, hint, ctx.t("view created under no_grad here", "视图在这里于 no_grad 中创建"))] if tensor.origin is not None else [],
                        explanation=message)
        if f:
            yield f
