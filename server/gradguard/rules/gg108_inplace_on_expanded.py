"""GG108: an in-place write on the result of `expand()` that broadcasts a dimension."""
from __future__ import annotations

from ..fixes import with_method
from . import Rule, make_fix
from ._common import name_of, write_desc

RULE = Rule(
    code="GG108",
    name="inplace-on-expanded",
    family="views",
    fix_kind="safe",
    summary={
        "en": "In-place write on an `expand()` result whose elements share memory.",
        "zh": "对 `expand()` 的结果做原地写入，而它的多个元素共享同一块内存。",
    },
    what={
        "en": "Flags `y.add_(1)`, `y += 1`, `y.uniform_()` ... when `y = x.expand(...)` (or `expand_as`) turns a size-1 "
              "dimension into a larger one — shapes the code spells out with literal sizes (`torch.zeros(1, 4)`, "
              "`.unsqueeze(0)`, `.expand(3, 4)`). Scalar fills (`fill_`, `zero_`, `masked_fill_`) and item "
              "assignment are left alone: torch accepts some of them on expanded tensors.",
        "zh": "检查 `y = x.expand(...)`（或 `expand_as`）把大小为 1 的维度扩展后，对 `y` 的 `y.add_(1)`、`y += 1`、`y.uniform_()` "
              "等原地写入——仅限代码用字面量写明形状的情况（`torch.zeros(1, 4)`、`.unsqueeze(0)`、`.expand(3, 4)`）。"
              "标量填充（`fill_`、`zero_`、`masked_fill_`）和下标赋值不检查：torch 对扩展张量接受其中一部分。",
    },
    why={
        "en": "`expand` copies nothing: every row of the result is the same memory (stride 0). Writing one element "
              "would write all of them, so torch refuses, with or without autograd and even under `no_grad()`.",
        "zh": "`expand` 不复制数据：结果的每一行都是同一块内存（步长为 0）。写一个元素就等于写所有元素，所以无论是否使用 autograd、"
              "即使在 `no_grad()` 中，torch 都会拒绝。",
    },
    autograd={
        "en": "The expanded tensor is a view of `x` (same storage and version counter). `.clone()` (or `repeat`) "
              "materialises independent elements that can be written.",
        "zh": "扩展后的张量是 `x` 的视图（共享存储和版本计数器）。`.clone()`（或 `repeat`）会生成可以写入的独立元素。",
    },
    fix_safety={
        "en": "`.expand(...)` becomes `.expand(...).clone()` — safe: the same values in their own memory, and the "
              "original could only raise.",
        "zh": "把 `.expand(...)` 改为 `.expand(...).clone()`——安全修复：值相同但内存独立，而原代码只会报错。",
    },
    runtime_error="unsupported operation: more than one element of the written-to tensor refers to a single memory "
                  "location. Please clone() the tensor before performing the operation.",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("expand-write"):
        tensor, write, hint = problem.tensor, problem.write, problem.top
        name = name_of(tensor, ctx.t("this tensor", "这个张量"))
        origin = tensor.origin
        fix = None
        cloned = with_method(ctx, origin, hint, "clone") if origin is not None else None
        if cloned:
            fix = make_fix("safe", ctx.t(f"Clone it: `{cloned[1]}`", f"复制它：`{cloned[1]}`"), cloned[0])
        e_line = ctx.line(origin, hint) if origin is not None else 0
        message = ctx.t(
            f"{name} comes from `expand` on line {e_line}: its rows share one memory location, so the in-place "
            f"`{write_desc(ctx, write)}` raises. Clone it first.",
            f"{name} 来自第 {e_line} 行的 `expand`：它的各行共享同一块内存，所以原地操作 `{write_desc(ctx, write)}` 会报错。"
            "请先 clone。")
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, write.top or hint, message,
                        related=[ctx.related(origin, hint, ctx.t("expanded here", "在这里扩展"))] if origin is not None else [],
                        fix=fix, explanation=message)
        if f:
            yield f
