"""GG107: an in-place write on a tensor created under `torch.inference_mode()`, outside inference mode."""
from __future__ import annotations

from . import Rule
from ._common import name_of, write_desc
from .gg106_inference_tensor_saved import inference_fix

RULE = Rule(
    code="GG107",
    name="inference-tensor-inplace",
    family="leaf",
    fix_kind="safe",
    summary={
        "en": "An in-place write, outside inference mode, on a tensor created under `torch.inference_mode()`.",
        "zh": "在推理模式之外，对在 `torch.inference_mode()` 中创建的张量做原地写入。",
    },
    what={
        "en": "Flags `t.add_(1)`, `t += 1`, `t[0] = 0` ... when `t` was created inside `with torch.inference_mode():` "
              "and the write is outside it (even under `no_grad()`).",
        "zh": "检查 `t.add_(1)`、`t += 1`、`t[0] = 0` 等写入，其中 `t` 是在 `with torch.inference_mode():` 中创建的，"
              "而写入发生在它之外（即使在 `no_grad()` 中）。",
    },
    why={
        "en": "Inference tensors skip version counting; outside inference mode torch cannot allow them to change and "
              "raises at the write.",
        "zh": "推理张量不做版本计数；在推理模式之外 torch 不允许修改它们，并在写入处报错。",
    },
    autograd={
        "en": "Tensors created under `torch.no_grad()` are normal tensors with a version counter and can be written anywhere.",
        "zh": "在 `torch.no_grad()` 中创建的张量是有版本计数器的普通张量，可以在任何地方写入。",
    },
    fix_safety={
        "en": "`torch.inference_mode()` becomes `torch.no_grad()` where the tensor was created — safe: same values, "
              "and the original could only raise. No fix when that `inference_mode()` is not "
              "in this file as a `with` or decorator the analysis can rewrite (the tensor comes from another module "
              "or is made where the file cannot be rewritten): there, copy it outside inference mode before using it, `t = "
              "t.clone()` (a clone made outside inference mode is a normal tensor); only the author knows which "
              "references should see the copy.",
        "zh": "在创建张量的地方把 `torch.inference_mode()` 改为 `torch.no_grad()`——安全修复：值相同，而原代码只会报错。若该 `inference_mode()` 不在本文件中、不是分析能改写的 `with` 或装饰器"
              "（张量来自其他模块，或在无法改写的地方创建），则不提供修复：请在推理模式之外先复制再使用，"
              "`t = t.clone()`（在推理模式之外 clone 得到的是普通张量）；哪些引用应看到副本只有作者知道。",
    },
    runtime_error="Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
                  "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("inference-write"):
        tensor, write, hint = problem.tensor, problem.write, problem.top
        name = name_of(tensor)
        c_line = ctx.line(tensor.origin, tensor.inference_top or hint) if tensor.origin is not None else 0
        message = ctx.t(
            f"{name} was created under `inference_mode()` (line {c_line}); the in-place `{write_desc(ctx, write)}` outside "
            "inference mode raises at once. Create it under `no_grad()`, or clone it first.",
            f"{name} 是在 `inference_mode()` 中创建的（第 {c_line} 行）；在推理模式之外的原地操作 `{write_desc(ctx, write)}` "
            "会立刻报错。请改在 `no_grad()` 中创建，或先 clone。")
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, write.top or hint, message,
                        related=[ctx.related(tensor.origin, tensor.inference_top or hint,
                                             ctx.t("created in inference mode here", "在这里于推理模式中创建"))]
                        if tensor.origin is not None else [],
                        fix=inference_fix(ctx, tensor), explanation=message)
        if f:
            yield f
