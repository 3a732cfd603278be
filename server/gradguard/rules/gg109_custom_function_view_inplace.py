"""GG109: in-place write on a view a custom Function returned (a module's output through its full backward hook)."""
from __future__ import annotations

from dataclasses import replace

import libcst as cst

from . import Rule, make_fix
from ._common import (indirect_inplace_flag, inplace_false, inplace_flag_risk, name_of, out_of_place_rewrite,
                      rebinding_risk, write_desc)

CUSTOM_VIEW_TAIL = ("is a view and is being modified inplace. This view was created inside a custom Function (or "
                    "because an input was returned as-is) and the autograd logic to handle view+inplace would "
                    "override the custom backward associated with the custom Function, leading to incorrect "
                    "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom "
                    "Function.")

RULE = Rule(
    code="GG109",
    name="custom-function-view-inplace",
    family="views",
    fix_kind="safe/unsafe",
    summary={
        "en": "In-place write on the output of a module with a full backward hook (or on a view a custom "
              "`autograd.Function` returned), in grad mode.",
        "zh": "在启用梯度时，对注册了完整反向钩子的模块的输出（或自定义 `autograd.Function` 返回的视图）做原地操作。",
    },
    what={
        "en": "Flags `out += x`, `out.relu_()`, `out[0] = 0`, or a following `nn.ReLU(inplace=True)`, when `out` comes "
              "from calling a module after `module.register_full_backward_hook(...)` or "
              "`register_full_backward_pre_hook(...)` (Grad-CAM, pruning, second-order optimisers install these), "
              "or is a view of an input that a custom `Fn.apply(...)` returned; only while the hook is registered "
              "(a removed handle ends it), in grad mode, and when the output requires grad.",
        "zh": "检查在 `module.register_full_backward_hook(...)` 或 `register_full_backward_pre_hook(...)` 之后调用该模块"
              "得到的 `out`（Grad-CAM、剪枝、二阶优化器常注册这种钩子），或自定义 `Fn.apply(...)` 返回的输入的视图，"
              "对它做 `out += x`、`out.relu_()`、`out[0] = 0` 或紧随其后的 `nn.ReLU(inplace=True)`；仅限钩子仍在（句柄被 "
              "remove 后不再检查）、启用梯度且输出需要梯度的情况。",
    },
    why={
        "en": "With a full backward hook torch passes the module's outputs through `BackwardHookFunction`, a custom "
              "Function that returns its inputs as views. Autograd cannot rebase the history of such a view without "
              "bypassing the Function's own backward, so it refuses every in-place write on it (or on a view of "
              "it) and raises at the write.",
        "zh": "注册完整反向钩子后，torch 会让模块的输出经过 `BackwardHookFunction`——一个把输入作为视图返回的自定义 "
              "Function。autograd 无法在不绕过该 Function 自身反向计算的前提下改写这种视图的历史，所以拒绝对它（或它的视图）"
              "做任何原地写入，并在写入处立刻报错。",
    },
    autograd={
        "en": "The hooked output shares storage and version counter with what `forward` returned, but its `grad_fn` is "
              "`BackwardHookFunctionBackward`, whose backward calls the hook. A `.clone()` is an ordinary tensor that "
              "may be modified; under `torch.no_grad()` nothing is wrapped. `module.forward(x)` called directly runs "
              "no hooks.",
        "zh": "被钩住的输出与 `forward` 返回的张量共享存储和版本计数器，但它的 `grad_fn` 是 "
              "`BackwardHookFunctionBackward`，其反向计算会调用钩子。`.clone()` 得到的是可以修改的普通张量；在 "
              "`torch.no_grad()` 中不会包装。直接调用 `module.forward(x)` 不会运行钩子。",
    },
    fix_safety={
        "en": "An `inplace=True` activation gets `inplace=False` — safe when nothing else can see its input "
              "(a later layer of an `nn.Sequential`, a re-bound name), unsafe otherwise. `out += x` becomes "
              "`out = out + x` — safe when no other reference to the output is read afterwards, else unsafe: that "
              "reference keeps the old values.",
        "zh": "`inplace=True` 的激活改为 `inplace=False`——当没有其他代码能看到它的输入时（`nn.Sequential` 中靠后的层、"
              "被重新绑定的名字）是安全修复，否则不安全。`out += x` 改为 `out = out + x`——之后不再读取输出的其他引用时"
              "是安全修复，否则不安全：那个引用保留旧值。",
    },
    match="is a view and is being modified inplace. This view was created inside a custom Function",
    runtime_error=f"Output <i> of <op> {CUSTOM_VIEW_TAIL}",
    references=("https://pytorch.org/docs/stable/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook",),
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("custom-view-write"):
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor, ctx.t("this tensor", "这个张量"))
        origin = tensor.origin
        line = ctx.line(origin, hint) if origin is not None else 0
        op = write_desc(ctx, write)
        hook = tensor.hooked_by
        related = []
        if hook is not None:
            hook_line = ctx.line(hook[0], hook[1])
            message = ctx.t(
                f"{name} is an output of the module called on line {line}, which has a full backward hook "
                f"(line {hook_line}): torch returns it through `BackwardHookFunction`, a custom Function, and refuses "
                f"the in-place `{op}` on it. Use an out-of-place op or clone it first.",
                f"{name} 是第 {line} 行调用的模块的输出，该模块注册了完整反向钩子（第 {hook_line} 行）：torch 通过自定义 "
                f"Function `BackwardHookFunction` 返回它，并拒绝对它做原地操作 `{op}`。请改用非原地操作，或先 clone。")
            related.append(ctx.related(hook[0], hook[1], ctx.t("full backward hook registered here",
                                                               "在这里注册完整反向钩子")))
            error_op = "BackwardHookFunction" if tensor.view_of is not None and tensor.view_of.hooked_by is None \
                and _is_call(origin) else "<op>"
        else:
            message = ctx.t(
                f"{name} is a view returned by the custom Function called on line {line}; torch refuses the in-place "
                f"`{op}` on it. Use an out-of-place op or clone the Function's output first.",
                f"{name} 是第 {line} 行调用的自定义 Function 返回的视图；torch 拒绝对它做原地操作 `{op}`。请改用非原地操作，"
                "或先 clone 该 Function 的输出。")
            error_op = "<op>"
            if tensor.view_of is not None and tensor.view_of.view_kind != "custom_function" and _is_call(origin) \
                    and isinstance(origin.func, cst.Attribute) and origin.func.attr.value == "apply" \
                    and isinstance(origin.func.value, (cst.Name, cst.Attribute)):
                # torch names the Function's class: `Output 0 of Flatten is a view ...`
                error_op = origin.func.value.attr.value if isinstance(origin.func.value, cst.Attribute) \
                    else origin.func.value.value
        if origin is not None:
            related.append(ctx.related(origin, hint, ctx.t("the wrapped output is made here", "被包装的输出在这里产生")))
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, write.top or hint, message,
                        fix=_fix(ctx, write, tensor, hint), explanation=message, related=related,
                        runtime_error=f"Output 0 of {error_op} {CUSTOM_VIEW_TAIL}" if error_op != "<op>" else None)
        if f:
            yield f


def _is_call(node) -> bool:
    return isinstance(node, cst.Call)


def _fix(ctx, write, tensor, hint):
    if write.kind in ("inplace_arg", "inplace_module"):
        flag = inplace_false(ctx, write, hint)
        if flag is None:
            indirect = indirect_inplace_flag(ctx, write)
            return make_fix("unsafe", ctx.t(f"Set {indirect[1]} (unsafe: the hooked output is no longer modified)",
                                            f"改为 {indirect[1]}（不安全：被钩住的输出不再被修改）"),
                            indirect[0]) if indirect else None
        risk = inplace_flag_risk(ctx, write, hint)
        unsafe = ctx.t(f" (unsafe: {risk})", f"（不安全：{risk}）") if risk else ""
        text = flag[1] and ctx.t(f"Rewrite as `{flag[1]}`", f"改写为 `{flag[1]}`")
        return make_fix("safe" if risk is None else "unsafe",
                        (text or ctx.t("Use `inplace=False`", "改为 `inplace=False`")) + unsafe, flag[0])
    rewrite = out_of_place_rewrite(ctx, write, hint)
    if rewrite:
        # the written name holds the wrapped output itself (a view only in torch's bookkeeping): what matters is
        # whether another reference to it is read afterwards
        direct = tensor.view_of is not None and tensor.view_of.view_of is None
        risk = rebinding_risk(ctx, replace(write, via="") if direct else write, hint, rewrite[1])
        unsafe = ctx.t(f" (unsafe: {risk})", f"（不安全：{risk}）") if risk else ""
        return make_fix("safe" if risk is None else "unsafe",
                        ctx.t(f"Rewrite as `{rewrite[1]}`", f"改写为 `{rewrite[1]}`") + unsafe, rewrite[0])
    return None
