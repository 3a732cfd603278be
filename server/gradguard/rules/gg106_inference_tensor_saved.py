"""GG106: a tensor created under `torch.inference_mode()` is used by an op that saves it for backward."""
from __future__ import annotations

from . import Rule, make_fix
from ._common import name_of


def inference_fix(ctx, tensor):
    """`torch.inference_mode()` -> `torch.no_grad()` where the tensor was created (safe: same values)."""
    torch = ctx.torch_name(tensor.inference_call, tensor.inference_top) if tensor.inference_call is not None else None
    if torch is None:
        return None
    return make_fix("safe", ctx.t(f"Create it under `{torch}.no_grad()` instead of `inference_mode()`",
                                  f"改在 `{torch}.no_grad()` 中创建，而不是 `inference_mode()`"),
                    ctx.replace_node(tensor.inference_call, tensor.inference_top, f"{torch}.no_grad()"))


RULE = Rule(
    code="GG106",
    name="inference-tensor-saved",
    family="leaf",
    fix_kind="safe",
    summary={
        "en": "A tensor created under `torch.inference_mode()` is used, with grad enabled, by an op that saves it for backward.",
        "zh": "在 `torch.inference_mode()` 中创建的张量，在启用梯度时被一个需要为反向传播保存它的运算使用。",
    },
    what={
        "en": "Flags ops like `w * t`, `torch.sin(t)`, `layer(t)` outside inference mode when `t` was created inside "
              "`with torch.inference_mode():` and the op would save `t` for backward.",
        "zh": "检查在推理模式之外的 `w * t`、`torch.sin(t)`、`layer(t)` 等运算，其中 `t` 是在 `with torch.inference_mode():` "
              "中创建的，并且该运算需要为反向传播保存 `t`。",
    },
    why={
        "en": "Inference tensors have no version counter, so autograd cannot check them later: torch refuses to save "
              "them and raises at the forward op. Ops that save nothing (`w + t`) work.",
        "zh": "推理张量没有版本计数器，autograd 之后无法检查它们：torch 拒绝保存它们，并在前向运算处报错。不保存张量的运算（`w + t`）可以正常工作。",
    },
    autograd={
        "en": "`torch.no_grad()` gives the same values with a normal tensor (it has a version counter), which can be saved.",
        "zh": "`torch.no_grad()` 得到相同的值，但张量是普通张量（有版本计数器），可以被保存。",
    },
    fix_safety={
        "en": "`torch.inference_mode()` becomes `torch.no_grad()` where the tensor was created — safe: the values are "
              "the same and the original could only raise. No fix when that `inference_mode()` is not "
              "in this file as a `with` or decorator the analysis can rewrite (the tensor comes from another module "
              "or is made where the file cannot be rewritten): there, copy it outside inference mode before using it, `t = "
              "t.clone()` (a clone made outside inference mode is a normal tensor); only the author knows which "
              "references should see the copy.",
        "zh": "在创建张量的地方把 `torch.inference_mode()` 改为 `torch.no_grad()`——安全修复：值相同，而原代码只会报错。若该 `inference_mode()` 不在本文件中、不是分析能改写的 `with` 或装饰器"
              "（张量来自其他模块，或在无法改写的地方创建），则不提供修复：请在推理模式之外先复制再使用，"
              "`t = t.clone()`（在推理模式之外 clone 得到的是普通张量）；哪些引用应看到副本只有作者知道。",
    },
    runtime_error="Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                  "in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                  "tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("inference-save"):
        tensor, hint = problem.tensor, problem.top
        name = name_of(tensor)
        made_at = tensor.inference_origin or tensor.origin
        c_line = ctx.line(made_at, tensor.inference_top or hint) if made_at is not None else 0
        message = ctx.t(
            f"{name} was created under `inference_mode()` (line {c_line}); `{problem.detail.get('op', '')}` here must save it "
            "for backward, which torch refuses for inference tensors. Create it under `no_grad()`, or clone it.",
            f"{name} 是在 `inference_mode()` 中创建的（第 {c_line} 行）；这里的 `{problem.detail.get('op', '')}` 需要为反向传播保存它，"
            "而 torch 拒绝保存推理张量。请改在 `no_grad()` 中创建，或先 clone。")
        related = [ctx.related(made_at, tensor.inference_top or hint,
                               ctx.t("created in inference mode here", "在这里于推理模式中创建"))] if tensor.origin is not None else []
        where, where_top = problem.detail.get("site") or (problem.node, hint)
        if where is not problem.node:
            related.append(ctx.related(problem.node, hint, ctx.t("saved for backward here", "在这里为反向传播保存")))
        for call, call_top in problem.detail.get("passed_in", ()):
            related.append(ctx.related(call, call_top, ctx.t("the tensor is passed in here", "张量在这里被传入")))
        f = ctx.finding(RULE, where, where_top, message, related=related, fix=inference_fix(ctx, tensor),
                        explanation=message)
        if f:
            yield f
