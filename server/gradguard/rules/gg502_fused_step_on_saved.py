"""GG502: a fused optimizer step modifies weights a live graph saved (silently wrong gradients)."""
from __future__ import annotations

from . import Rule
from ._common import use_phrase

RULE = Rule(
    code="GG502",
    name="fused-step-on-saved",
    family="silent",
    severity="warning",
    fix_kind="none",
    summary={
        "en": "`optimizer.step()` with `fused=True` modifies weights that a graph still to be backpropagated saved: no error, wrong gradients.",
        "zh": "`fused=True` 的 `optimizer.step()` 修改了仍要反向传播的计算图所保存的权重：不报错，但梯度是错的。",
    },
    what={
        "en": "The same situation as GG401/GG402, with an optimizer built with `fused=True`.",
        "zh": "与 GG401/GG402 相同的情形，但优化器以 `fused=True` 构造。",
    },
    why={
        "en": "Fused optimizer kernels do not bump the parameters' version counters (checked on torch 2.13, CPU), so "
              "the later backward uses the updated weights silently.",
        "zh": "融合优化器的内核不会增加参数的版本计数器（在 torch 2.13 CPU 上验证），所以之后的反向传播会悄悄使用更新后的权重。",
    },
    autograd={
        "en": "With `foreach=False` or `foreach=True` the same program raises the version error; with `fused=True` it "
              "returns a gradient computed with the new weights.",
        "zh": "使用 `foreach=False` 或 `foreach=True` 时同一程序会报版本错误；使用 `fused=True` 时返回用新权重算出的梯度。",
    },
    fix_safety={"en": "No automatic fix: run every backward that needs the weights before `step()`, or detach carried state.",
                "zh": "没有自动修复：在 `step()` 之前执行所有需要这些权重的反向传播，或对携带的状态调用 `detach()`。"},
    runtime_error="",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("silent-write"):
        write, save, hint = problem.write, problem.save, problem.top
        if write.kind != "step":
            continue
        s_line = ctx.line(save.node, save.top or hint)
        message = ctx.t(
            f"`{write.op}` (fused) modifies {write.target_name}, saved for backward on line {s_line}, without bumping "
            f"their version: {use_phrase(ctx, problem)} will silently use the new weights.",
            f"`{write.op}`（fused）修改了第 {s_line} 行保存用于反向传播的 {write.target_name}，且不增加版本号："
            f"{use_phrase(ctx, problem)}会悄悄使用新的权重。")
        f = ctx.finding(RULE, write.node, write.top or hint, message,
                        related=[ctx.related(save.node, save.top or hint, ctx.t("weights saved here", "权重在这里被保存"))],
                        explanation=message)
        if f:
            yield f
