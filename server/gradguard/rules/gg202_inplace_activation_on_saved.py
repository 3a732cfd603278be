"""GG202: an `inplace=True` activation/dropout overwrites a tensor saved for backward."""
from __future__ import annotations

from . import Rule, make_fix
from ._common import (indirect_inplace_flag, inplace_flag_risk, STALE_ERROR, STALE_MATCH, inplace_false, stale_error, saved_name, stale_timeline, use_phrase,
                      value_dropped)

RULE = Rule(
    code="GG202",
    name="inplace-activation-on-saved",
    family="saved",
    fix_kind="safe/unsafe",
    summary={
        "en": "`nn.ReLU(inplace=True)`, `F.relu(x, inplace=True)` or an in-place dropout overwrites a tensor saved for backward.",
        "zh": "`nn.ReLU(inplace=True)`、`F.relu(x, inplace=True)` 或原地 dropout 覆盖了为反向传播保存的张量。",
    },
    what={
        "en": "Flags an in-place activation or dropout (a module built with `inplace=True` in `__init__` and applied in "
              "`forward`, or a functional call with `inplace=True`) applied to the output of an op that saved it "
              "(`sigmoid`, `tanh`, `exp`, `softmax`, ...) or to an input another op saved (`sin`, `mul`, ...).",
        "zh": "检查原地激活或 dropout（在 `__init__` 中以 `inplace=True` 构造、在 `forward` 中调用的模块，或带 `inplace=True` "
              "的函数调用）作用在被保存的张量上：保存输出的运算（`sigmoid`、`tanh`、`exp`、`softmax` 等）的输出，"
              "或被其他运算（`sin`、`mul` 等）保存的输入。",
    },
    why={
        "en": "The in-place activation changes the saved value, so backward raises. After ops that save nothing the user "
              "can touch (`conv`, `linear`, batch norm's output, `+`) the same in-place activation is fine, which is "
              "why it works in most ResNets and breaks after a sigmoid.",
        "zh": "原地激活改变了被保存的值，因此反向传播报错。在不保存用户可修改张量的运算（`conv`、`linear`、批归一化的输出、`+`）"
              "之后，同样的原地激活没有问题，所以它在大多数 ResNet 中能用，而接在 sigmoid 后就会出错。",
    },
    autograd={
        "en": "`relu_` bumps the version counter of its input; `SigmoidBackward0` saved its output at the previous version.",
        "zh": "`relu_` 让输入的版本计数器加一；`SigmoidBackward0` 保存的是上一个版本的输出。",
    },
    fix_safety={
        "en": "`inplace=True` becomes `inplace=False` — safe: the activation computes the same values into a new tensor. "
              "A call whose result was dropped (`F.relu(h, inplace=True)` on a line of its own) is re-bound: "
              "`h = F.relu(h, inplace=False)`. A module applied on a line of its own (`act(h)`) gets no fix: "
              "`inplace=False` there would drop the activation. The fix is unsafe, and says why, when the activation's "
              "input is reachable another way (an attribute, a container element, a parameter: it would keep the values "
              "before the activation), when something between the op that saved it and the activation can hand the "
              "tensor on (a forward hook anywhere in the file, a module that returns its input such as an empty "
              "`nn.Sequential()` or `nn.Identity()`, a layer built elsewhere), when the layer's calls cannot all be "
              "seen, or when the flag is set elsewhere "
              "(`m.inplace = True` over `self.modules()`): every layer that flag reaches stops working in place.",
        "zh": "把 `inplace=True` 改为 `inplace=False`——安全修复：激活函数把同样的值写到新张量中。"
              "结果被丢弃的调用（单独一行的 `F.relu(h, inplace=True)`）会被改写为重新绑定：`h = F.relu(h, inplace=False)`。"
              "单独一行调用的模块（`act(h)`）不提供修复：在那里改为 `inplace=False` 会丢掉激活。"
              "当激活的输入还能经别的途径访问（属性、容器元素、参数：它会保留激活之前的值）、"
              "保存它的运算与激活之间有东西可能把张量传出（文件中任何前向钩子、原样返回输入的模块如空的 "
              "`nn.Sequential()` 或 `nn.Identity()`、在别处构建的层）、看不到该层的所有调用，"
              "或标志在别处设置（遍历 `self.modules()` 设 `m.inplace = True`）时，修复是不安全的，并说明原因："
              "该标志影响到的每一层都不再原地计算。",
    },
    runtime_error=STALE_ERROR,
    match=STALE_MATCH,
)


def claims(problem) -> bool:
    return problem.kind == "stale-save" and problem.write.kind in ("inplace_module", "inplace_arg")


@RULE.checker
def check(ctx):
    for problem in ctx.problems("stale-save"):
        if not claims(problem):
            continue
        save, write, hint = problem.save, problem.write, problem.top
        flag = inplace_false(ctx, write, hint)
        fix = None
        risk = inplace_flag_risk(ctx, write, hint) if flag is not None else None
        applicability = "safe" if risk is None else "unsafe"
        unsafe = ctx.t(f" (unsafe: {risk})", f"（不安全：{risk}）") if risk else ""
        where = ctx.t(" where the layer is built", "（在构造该层处）") if write.kind == "inplace_module" else ""
        if flag is not None and flag[1] is None:
            fix = make_fix(applicability, ctx.t(f"Use `inplace=False`{where}{unsafe}", f"改为 `inplace=False`{where}{unsafe}"),
                           flag[0])
        elif flag is not None:  # the call stood alone: its result is re-bound to the name
            fix = make_fix(applicability, ctx.t(f"Rewrite as `{flag[1]}`{unsafe}", f"改写为 `{flag[1]}`{unsafe}"), flag[0])
        elif (indirect := indirect_inplace_flag(ctx, write)) is not None:
            fix = make_fix("unsafe", ctx.t(
                f"Set {indirect[1]} (unsafe: every layer that flag reaches stops working in place; values stay the same)",
                f"改为 {indirect[1]}（不安全：该标志影响到的每一层都不再原地计算；数值不变）"), indirect[0])
        s_line = ctx.line(save.node, save.top or hint)
        dropout = "Dropout" in write.op or "dropout" in write.op
        when = ctx.t(" whenever dropout is active (training mode, p > 0)", "（只要 dropout 生效：训练模式且 p > 0）") if dropout else ""
        advice = ctx.t(" Use `inplace=False` here.", "请在这里使用 `inplace=False`。")
        if value_dropped(write):  # `act(h)` alone: with `inplace=False` its result must be kept
            advice = ctx.t(" Use `inplace=False` here and keep the result (this line drops it).",
                           "请在这里使用 `inplace=False` 并保留其结果（这一行丢弃了它）。")
        message = ctx.t(
            f"`{write.op}` overwrites {saved_name(save, ctx, write)}, which `{save.op}` saved for backward on line {s_line}; "
            f"{use_phrase(ctx, problem)} will fail{when}.{advice}",
            f"`{write.op}` 覆盖了 {saved_name(save, ctx, write)}，它在第 {s_line} 行被 `{save.op}` 保存用于反向传播；"
            f"{use_phrase(ctx, problem)}会失败{when}。{advice}")
        related = [ctx.related(save.node, save.top or hint, ctx.t(f"saved by `{save.op}` here", f"在这里被 `{save.op}` 保存"))]
        if write.module_ctor is not None:
            related.append(ctx.related(write.module_ctor, hint, ctx.t("built with `inplace=True` here", "在这里以 `inplace=True` 构造")))
        f = ctx.finding(RULE, write.node, write.top or hint, message, related=related, fix=fix,
                        explanation=stale_timeline(ctx, problem), runtime_error=stale_error(problem.save, problem.write, ctx, problem))
        if f:
            yield f
