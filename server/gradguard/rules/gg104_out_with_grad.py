"""GG104: `out=` with an argument that requires grad."""
from __future__ import annotations

from ..fixes import out_arg_copy_no_grad, out_arg_rewrite
from . import Rule, make_fix
from ._common import out_error

RULE = Rule(
    code="GG104",
    name="out-arg-requires-grad",
    family="leaf",
    fix_kind="unsafe",
    summary={
        "en": "A torch function called with `out=` while one of its arguments requires grad.",
        "zh": "调用带 `out=` 的 torch 函数，而某个参数需要梯度。",
    },
    what={
        "en": "Flags `torch.sin(w, out=o)`, `torch.add(w, 1, out=o)` and similar calls in grad mode when `w` (or `o`) requires grad.",
        "zh": "检查启用梯度时 `torch.sin(w, out=o)`、`torch.add(w, 1, out=o)` 等调用，其中 `w`（或 `o`）需要梯度。",
    },
    why={
        "en": "`out=` writes the result into an existing tensor in place; autograd cannot record that, so torch refuses at the call.",
        "zh": "`out=` 把结果原地写入已有张量；autograd 无法记录这种写入，所以 torch 在调用处拒绝执行。",
    },
    autograd={
        "en": "The write bumps `o._version`; functions with `out=` have no derivative formula. Under `torch.no_grad()` the call works.",
        "zh": "写入会让 `o._version` 加一；带 `out=` 的函数没有求导公式。在 `torch.no_grad()` 中调用可以正常工作。",
    },
    fix_safety={
        "en": "`torch.sin(w, out=o)` becomes `o = torch.sin(w)` — unsafe: `o` is re-bound, so other references to the old `o` (views, a preallocated buffer) no longer see the result. "
              "A parameter filled through `out=` (`torch.arange(1, n + 1, out=self.freq)`) is filled by `self.freq.copy_(...)` under `torch.no_grad()` instead — unsafe too: the values are "
              "written without autograd (what an initialiser wants). Wrapping the `out=` call itself in `no_grad()` is not offered: `arange(out=p)` there silently sets `p.requires_grad` to `False`.",
        "zh": "`torch.sin(w, out=o)` 改为 `o = torch.sin(w)`——不安全修复：`o` 被重新绑定，其他引用旧 `o` 的地方（视图、预分配缓冲区）看不到结果。"
              "通过 `out=` 填充的参数（`torch.arange(1, n + 1, out=self.freq)`）改为在 `torch.no_grad()` 中用 `self.freq.copy_(...)` 填充——同样是不安全修复："
              "数值的写入不经过 autograd（初始化正需要如此）。不提供把 `out=` 调用本身放进 `no_grad()` 的修复：那样 `arange(out=p)` 会悄悄把 `p.requires_grad` 设为 `False`。",
    },
    match="functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
    runtime_error=out_error(""),
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("out-grad"):
        call, hint = problem.node, problem.top
        op = problem.detail.get("op", "")
        fix = None
        stmt = problem.stmt
        out = problem.tensor
        if out is not None and out.base.is_leaf is True and out.base.requires_grad is True:
            rewrite = out_arg_copy_no_grad(ctx, stmt, call, hint)  # a parameter: re-binding it would drop it
        else:
            rewrite = out_arg_rewrite(ctx, stmt, call, hint)
        if rewrite:
            fix = make_fix("unsafe", ctx.t(f"Rewrite as `{rewrite[1]}` (unsafe: the tensor passed as `out=` is no longer "
                                           "filled, and other references to it keep the old values)",
                                           f"改写为 `{rewrite[1]}`（不安全：作为 `out=` 传入的张量不再被填充，其他指向它的"
                                           "引用保留旧值）"), rewrite[0])
        elif out is not None and out.base.is_leaf is True and out.base.requires_grad is True:
            # `torch.arange(1, n + 1, out=self.freq).mul_(PI)`: a parameter filled in place, as initialisation is
            wrapped = ctx.wrap_no_grad(stmt, hint)
            fix = make_fix("unsafe", ctx.t(
                "Fill the parameter under `torch.no_grad()` (unsafe: the write is then not recorded in the graph)",
                "在 `torch.no_grad()` 中填充参数（不安全：写入不再记录到计算图）"), wrapped)
        message = ctx.t(f"`{op}(..., out=...)` with an argument that requires grad raises: autograd cannot record `out=` writes.",
                        f"`{op}(..., out=...)` 的参数需要梯度，会报错：autograd 无法记录 `out=` 写入。")
        f = ctx.finding(RULE, call, hint, message, fix=fix, runtime_error=out_error(problem.detail.get("error_op", op)),
                        explanation=ctx.t("`out=` writes the result in place into an existing tensor; with grad enabled and an input that requires grad, torch refuses.",
                                          "`out=` 把结果原地写入已有张量；启用梯度且输入需要梯度时，torch 拒绝执行。"))
        if f:
            yield f
