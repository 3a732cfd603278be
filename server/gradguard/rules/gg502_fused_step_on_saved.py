"""GG502: a fused optimizer step modifies weights a live graph saved (silently wrong gradients)."""
from __future__ import annotations

from types import SimpleNamespace

from . import Rule, make_fix
from ..fixes_order import detach_carried_name, move_update_after, recompute_after_step
from ._common import carry_fix_title, use_phrase

RULE = Rule(
    code="GG502",
    name="fused-step-on-saved",
    family="silent",
    severity="warning",
    fix_kind="unsafe",
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
    fix_safety={
        "en": "The fix is GG401's: the forward the later backward needs is recomputed right after the fused `step()`, "
              "and what crosses into the stepped model for its own loss is detached, so the later backward goes "
              "through a graph built from the weights it will see (`logits = model(x)` copied after `opt.step()`). "
              "Unsafe: that backward's gradient is now the one at the new weights, as in the standard loop (the "
              "original silently mixed the new weights into the old graph), and randomness and BatchNorm statistics "
              "in the recomputed forward run again. Dropping `fused=True` is not offered as a fix: with `foreach` or "
              "the for-loop implementation the same program raises the version error (GG401) at the later backward, "
              "which is louder but not repaired. State carried across iterations (the fused form of GG402, "
              "`h = h_next` at the end of the loop body, `h` read before it) is detached where it is carried: "
              "`h = h_next.detach()` (unsafe: no gradient into earlier iterations). No fix where GG401's repair is "
              "refused and no carried name is found.",
        "zh": "修复与 GG401 相同：在融合的 `step()` 之后立即重新计算之后的反向传播所需的前向传播，并在被更新模型自己的损失中对"
              "跨模型传入的张量调用 detach，使之后的反向传播经过用它将看到的权重构建的计算图（把 `logits = model(x)` "
              "复制到 `opt.step()` 之后）。不安全修复：那次反向传播的梯度变为新权重处的梯度，与标准训练循环相同（原程序"
              "悄悄把新权重混进旧计算图），重新计算的前向传播中的随机性和 BatchNorm 统计量会再运行一次。不提供“去掉 "
              "`fused=True`”的修复：改用 `foreach` 或逐参数实现后，同一程序会在之后的反向传播处报版本错误（GG401），"
              "更明显但并未修复。跨迭代携带的状态（GG402 的融合形式：循环体末尾的 "
              "`h = h_next`，且 `h` 在此之前被读取）在携带处调用 detach：`h = h_next.detach()`（不安全：梯度不再流入之前的"
              "迭代）。GG401 的修复被拒绝且找不到携带的名字时不提供修复。",
    },
    runtime_error="",
)


def _forward_site(ctx, save, step_top):
    """Where the forward that made `save` ran, as GG401's problems carry it: of the container call of a layer (whose
    save node is its constructor) and the same-file calls that led to it, the innermost one in the step's top-level
    statement (`self.qf1(obs, act)` in the trainer, not `self.net(...)` in the Q function's forward)."""
    sites = [save.layer_call] if save.layer_call is not None else []
    sites += [(node, top) for node, top, *_ in save.call_chain]  # inner first: the first in the step's statement
    for node, top in sites:
        if top is step_top:
            return (node, top)
    return save.layer_call


def _move(ctx, problems):
    memo = ctx.__dict__.setdefault("_gg502_moves", {})
    key = (id(problems[0].write.node), id(problems[0].use))
    if key not in memo:
        memo[key] = move_update_after(ctx, problems)
    return memo[key]


def _repair(ctx, problems):
    memo = ctx.__dict__.setdefault("_gg502_fixes", {})
    key = (id(problems[0].write.node), id(problems[0].use))
    if key not in memo:
        shaped = []
        for p in problems:
            site = _forward_site(ctx, p.save, p.write.top or p.top)
            if site is None and p.save.call_chain:
                memo[key] = None  # made inside a helper called elsewhere: no forward here to run again
                return None
            shaped.append(SimpleNamespace(write=p.write, use=p.use, top=p.top, save=p.save,
                                          detail={"forward": site} if site is not None else {}))
        memo[key] = recompute_after_step(ctx, shaped)
    return memo[key]


@RULE.checker
def check(ctx):
    mine = [p for p in ctx.problems("silent-write") if p.write.kind == "step"]
    groups: dict = {}
    for p in mine:
        groups.setdefault((id(p.write.node), id(p.use)), []).append(p)  # one step writes once per layer
    for problem in mine:
        write, save, hint = problem.write, problem.save, problem.top
        s_line = ctx.line(save.node, save.top or hint)
        group = groups[(id(write.node), id(problem.use))]
        moved = _move(ctx, group) if problem.use is not None else None
        repaired = _repair(ctx, group) if problem.use is not None and moved is None else None
        fix, recipe = None, ""
        if moved is not None:
            edit, info = moved
            fix = make_fix("unsafe", ctx.t(
                f"Move lines {info['first']}-{info['last']} (the update of `{info['optimizer']}`) after line "
                f"{info['after']} (unsafe: the two updates run in the other order)",
                f"把第 {info['first']}-{info['last']} 行（`{info['optimizer']}` 的更新）移到第 {info['after']} 行之后"
                f"（不安全：两次更新的顺序互换）"), edit)
            recipe = ctx.t(f" Run the update of `{info['optimizer']}` (lines {info['first']}-{info['last']}) after "
                           f"line {info['after']}.",
                           f"请把 `{info['optimizer']}` 的更新（第 {info['first']}-{info['last']} 行）放到第 "
                           f"{info['after']} 行之后。")
        elif repaired is not None:
            edit, info = repaired
            nums = [str(n) for n in info["lines"]]
            redo = f"line {nums[0]}" if len(nums) == 1 else f"lines {', '.join(nums[:-1])} and {nums[-1]}"
            detached = "; ".join(f"`{d}`" for d in info["detached"])
            fix = make_fix("unsafe", ctx.t(
                f"Recompute {redo} after `{info.get('step_call') or write.op}`"
                + (f" and give the step's own loss {detached}" if detached else "")
                + " (unsafe: the later backward's gradient is the one at the new weights; dropout and BatchNorm "
                  "statistics run again)",
                f"在 `{info.get('step_call') or write.op}` 之后重新计算第 {'、'.join(nums)} 行"
                + (f"，并让 step 自己的损失使用 {detached}" if detached else "")
                + "（不安全：之后的反向传播得到新权重处的梯度；dropout 和 BatchNorm 统计量会再运行一次）"), edit)
            recipe = ctx.t(f" Recompute {redo} after the step.", f"请在 step 之后重新计算第 {'、'.join(nums)} 行。")
        elif (carried := detach_carried_name(ctx, problem)) is not None:
            edit, new = carried
            fix = make_fix("unsafe", carry_fix_title(ctx, carried, new), edit)
            recipe = ctx.t(f" Carry `{new}`.", f"请把传给下一轮的状态改为 `{new}`。")
        message = ctx.t(
            f"`{write.op}` (fused) modifies {write.target_name}, saved for backward on line {s_line}, without bumping "
            f"their version: {use_phrase(ctx, problem)} will silently use the new weights.{recipe}",
            f"`{write.op}`（fused）修改了第 {s_line} 行保存用于反向传播的 {write.target_name}，且不增加版本号："
            f"{use_phrase(ctx, problem)}会悄悄使用新的权重。{recipe}")
        f = ctx.finding(RULE, write.node, write.top or hint, message, fix=fix,
                        related=[ctx.related(save.node, save.top or hint, ctx.t("weights saved here", "权重在这里被保存"))],
                        explanation=message)
        if f:
            yield f
