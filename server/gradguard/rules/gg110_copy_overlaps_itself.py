"""GG110: an in-place copy whose source is the written elements in another order (`x[1] = x[1].mT`)."""
from __future__ import annotations

from ..fixes import with_method
from . import Rule, make_fix
from ._common import name_of, write_desc

RULE = Rule(
    code="GG110",
    name="copy-overlaps-itself",
    family="views",
    fix_kind="safe",
    summary={
        "en": "In-place copy of a transposed view of the very elements being written (`x[1] = x[1].mT`).",
        "zh": "把正在写入的那些元素的转置视图原地复制回它们自己（`x[1] = x[1].mT`）。",
    },
    what={
        "en": "Flags `x[i] = x[i].transpose(a, b)`, `x[i] = x[i].mT`, `x[i] = x[i].permute(...)` and "
              "`m.copy_(m.transpose(0, 1))`: the source is written as the same expression as the target (names, "
              "attributes, literal or named indices), so it is the same memory read in another order. A copy from "
              "other elements (`x[0] = x[1].mT`) is not flagged, nor `.t()` / `.T` (on a 1-D row they change "
              "nothing and torch allows the copy).",
        "zh": "检查 `x[i] = x[i].transpose(a, b)`、`x[i] = x[i].mT`、`x[i] = x[i].permute(...)` 和 "
              "`m.copy_(m.transpose(0, 1))`：源与目标写法相同（名字、属性、字面量或变量下标），所以源就是同一块内存按另一种"
              "顺序读取。从其他元素复制（`x[0] = x[1].mT`）不检查，`.t()` / `.T` 也不检查（对一维的行它们什么也不改变，"
              "torch 允许这样的复制）。",
    },
    why={
        "en": "The copy would read elements it has already overwritten. torch checks that the source and the "
              "written-to tensor do not partially overlap and refuses, with or without autograd and under "
              "`no_grad()` too.",
        "zh": "这样的复制会读到它已经覆盖的元素。torch 会检查源和被写入的张量是否部分重叠并拒绝执行，与是否使用 autograd "
              "无关，在 `no_grad()` 中也一样。",
    },
    autograd={
        "en": "`x[1].mT` is a view: same storage, other strides, no copy. `.clone()` gives the transposed values "
              "their own memory, which can then be copied in.",
        "zh": "`x[1].mT` 是视图：存储相同、步长不同，没有复制。`.clone()` 让转置后的值拥有独立的内存，之后就可以复制进去。",
    },
    fix_safety={
        "en": "The source gets `.clone()`: `x[1] = x[1].mT.clone()` — safe: the same values from memory of their "
              "own, and the original could only raise.",
        "zh": "给源加上 `.clone()`：`x[1] = x[1].mT.clone()`——安全修复：值相同但内存独立，而原代码只会报错。",
    },
    runtime_error="unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                  "single memory location. Please clone() the tensor before performing the operation.",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("overlap-write"):
        write, tensor, hint = problem.write, problem.tensor, problem.top
        top = write.top or hint
        source = problem.detail["source"]  # the reordered view the write copies (facts.tensors)
        name = name_of(tensor, ctx.t("this tensor", "这个张量"))
        fix = None
        cloned = with_method(ctx, source, top, "clone")
        if cloned:
            fix = make_fix("safe", ctx.t(f"Clone the source: `{cloned[1]}`", f"先复制源：`{cloned[1]}`"), cloned[0])
        source_text = ctx.code(source)
        message = ctx.t(
            f"`{write_desc(ctx, write)}` copies `{source_text}`, a view of the same elements of {name} in another "
            "order, back into them: torch refuses a copy whose source overlaps what it writes. Clone the source.",
            f"`{write_desc(ctx, write)}` 把 `{source_text}`（{name} 中同一批元素按另一种顺序的视图）复制回这些元素："
            "torch 拒绝源与写入目标重叠的复制。请先 clone 源。")
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, top, message, fix=fix,
                        explanation=message)
        if f:
            yield f
