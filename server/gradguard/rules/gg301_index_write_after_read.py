"""GG301: an index write into a tensor whose elements were read into the graph earlier."""
from __future__ import annotations

from . import Rule, make_fix
from ._common import STALE_ERROR, STALE_MATCH, stale_error, clone_argument, stale_timeline, use_phrase

RULE = Rule(
    code="GG301",
    name="index-write-after-read",
    family="index",
    fix_kind="safe",
    summary={
        "en": "`x[j] = ...` writes into a tensor whose element `x[i]` an op saved for backward earlier.",
        "zh": "`x[j] = ...` 写入了一个张量，而它的元素 `x[i]` 先前已被某个运算保存用于反向传播。",
    },
    what={
        "en": "Flags item assignment (`x[i+1] = f(x[i])`, typical of recurrences filled into a preallocated tensor) when an "
              "element or slice of the same tensor was read by an op that saves its input (`sin`, `mul`, `matmul`, ...).",
        "zh": "检查下标赋值（如 `x[i+1] = f(x[i])`，常见于把递推结果填进预先分配的张量），且同一张量的元素或切片先前被"
              "保存输入的运算（`sin`、`mul`、`matmul` 等）读取。",
    },
    why={
        "en": "`x[i]` is a view: it shares `x`'s version counter. Every later `x[j] = ...` bumps that counter, so the saved "
              "`x[i]` looks modified even though element i was never touched, and backward raises "
              "(torch reports the saved view as `output 0 of AsStrided` or `Select`).",
        "zh": "`x[i]` 是视图：它与 `x` 共享版本计数器。之后每次 `x[j] = ...` 都会让计数器加一，所以即使第 i 个元素从未被改动，"
              "保存的 `x[i]` 也被视为已修改，反向传播报错（torch 把保存的视图报告为 `output 0 of AsStrided` 或 `Select`）。",
    },
    autograd={
        "en": "Version counters belong to the whole storage, not to elements. Reading `x[i].clone()` gives the op its own counter.",
        "zh": "版本计数器属于整块存储，而不是单个元素。读取 `x[i].clone()` 会给运算一个独立的计数器。",
    },
    fix_safety={
        "en": "The read at the saving op becomes `x[i].clone()` — safe: same values, and the original could only raise.",
        "zh": "在保存它的运算处改为读取 `x[i].clone()`——安全修复：值相同，而原代码只会报错。",
    },
    runtime_error=STALE_ERROR,
    match=STALE_MATCH,
)


def claims(problem) -> bool:
    return problem.kind == "stale-save" and problem.write.kind == "setitem" and problem.save.via_index


@RULE.checker
def check(ctx):
    for problem in ctx.problems("stale-save"):
        if not claims(problem):
            continue
        save, write, hint = problem.save, problem.write, problem.top
        cloned = clone_argument(ctx, save)
        fix = make_fix("safe", ctx.t(f"Read a copy: {cloned[1]}", f"读取副本：{cloned[1]}"), *cloned[0]) if cloned else None
        s_line = ctx.line(save.node, save.top or hint)
        target = f"`{write.target_name}`" if write.target_name else ctx.t("this tensor", "这个张量")
        arm_en = arm_zh = ""
        if save.read_at is not None:  # saved as one arm of `a if c else b`: on the runs that take it
            a_line, arm = ctx.line(*save.read_at), ctx.code(save.read_at[0])
            arm_en, arm_zh = f" when line {a_line} takes `{arm}`", f"（当第 {a_line} 行取 `{arm}` 时）"
        message = ctx.t(
            f"This index write bumps the version counter of {target}, whose element was read by `{save.op}` on line {s_line} "
            f"and saved for backward{arm_en}; {use_phrase(ctx, problem)} will fail. Read it with `.clone()`.",
            f"这次下标写入让 {target} 的版本计数器加一，而它的元素在第 {s_line} 行被 `{save.op}` 读取并保存用于反向传播{arm_zh}；"
            f"{use_phrase(ctx, problem)}会失败。请用 `.clone()` 读取。")
        related = [ctx.related(save.node, save.top or hint, ctx.t(f"element read and saved by `{save.op}` here",
                                                                  f"元素在这里被 `{save.op}` 读取并保存"))]
        if save.read_at is not None:
            related.append(ctx.related(*save.read_at, ctx.t("the arm that reads it", "读取它的分支")))
        if problem.use is not None:
            related.append(ctx.related(problem.use, hint, ctx.t("backward fails here", "反向传播在这里失败")))
        f = ctx.finding(RULE, write.stmt, write.top or hint, message, related=related, fix=fix,
                        explanation=stale_timeline(ctx, problem), runtime_error=stale_error(problem.save, problem.write, ctx, problem))
        if f:
            yield f
