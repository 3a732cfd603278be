"""GG402: state carried across iterations keeps an old graph whose weights step() then modifies."""
from __future__ import annotations

from . import Rule, make_fix
from ..fixes_order import detach_carry_at_read
from ._common import carry_fix_title, STALE_ERROR, STALE_MATCH, detach_carry_fix, stale_error, stale_timeline, weight_save_notes

RULE = Rule(
    code="GG402",
    name="carried-state-step",
    family="graph-lifetime",
    fix_kind="unsafe",
    summary={
        "en": "A tensor carried into the next loop iteration keeps the previous graph alive, and `optimizer.step()` "
              "modifies the weights that graph saved.",
        "zh": "带入下一次循环迭代的张量让上一轮的计算图继续存活，而 `optimizer.step()` 修改了这张图保存的权重。",
    },
    what={
        "en": "Flags `h = h_next` (hidden state, running output) inside a training loop that calls "
              "`backward(retain_graph=True)` and `step()`: the next iteration's backward goes through the previous "
              "iteration's retained graph, whose saved weights `step()` has since modified.",
        "zh": "检查训练循环中的 `h = h_next`（隐藏状态、累积输出），而循环中调用了 `backward(retain_graph=True)` 和 `step()`："
              "下一轮的反向传播会经过上一轮保留的计算图，而 `step()` 已经修改了那张图保存的权重。",
    },
    why={
        "en": "`h = h_next` is an ordinary assignment, not an in-place operation. What fails is that `h_next` still carries "
              "the previous iteration's graph; `retain_graph=True` keeps its saved weights, `step()` modifies them in "
              "place, and the next backward, reaching the old graph through `h`, finds them at a newer version.",
        "zh": "`h = h_next` 只是普通赋值，并不是原地操作。出错的原因是 `h_next` 仍携带上一轮的计算图；`retain_graph=True` "
              "保留了它保存的权重，`step()` 原地修改了这些权重，下一轮的反向传播通过 `h` 回到旧图时发现版本已经变新。",
    },
    autograd={
        "en": "`detach()` returns a tensor with the same data but no `grad_fn`: the graph stops there (truncated "
              "backpropagation through time), so no backward reaches the old weights. `retain_graph=True` is then "
              "usually unnecessary.",
        "zh": "`detach()` 返回数据相同但没有 `grad_fn` 的张量：计算图在这里截断（截断的时间反向传播），反向传播不会再到达旧的"
              "权重。此时通常也不再需要 `retain_graph=True`。",
    },
    fix_safety={
        "en": "The carried state is detached where it passes into the next iteration, never the value the loss is "
              "computed from: `h = h_next` becomes `h = h_next.detach()`; `out, h = rnn(x, h)` gets a line `h = "
              "h.detach()` after it (`h, c = h.detach(), c.detach()` after `y, (h, c) = lstm(...)`; `state = "
              "tuple(s.detach() for s in state)` for LSTM state, so a `state = None` start still works); when the "
              "rest of the iteration still computes the loss from `h` (`h = cell(x, h)`), that line goes at the "
              "end of the loop body, so every iteration's gradients still reach the model. State kept on the "
              "object across calls (`self.hidden` re-bound in `forward`) is detached right after that line. When a `continue` "
              "could skip that line, the method returns the state, or a running statistic is updated in "
              "place of a re-binding, the state is detached where the next iteration first reads it "
              "(`self.rnn(x, self.hidden.detach())`); no fix for a tuple or `None` start there, nor for a "
              "learned initial state. "
              "Unsafe: gradients no longer flow into earlier iterations (which the "
              "original could never compute anyway, because it raises).",
        "zh": "在携带的状态进入下一轮迭代的地方调用 `detach()`，而不是对计算损失所用的值：`h = h_next` 改为 `h = h_next.detach()`；"
              "`out, h = rnn(x, h)` 之后加一行 `h = h.detach()`（`y, (h, c) = lstm(...)` 之后加 `h, c = h.detach(), c.detach()`；"
              "LSTM 状态用 `state = tuple(s.detach() for s in state)`，因此从 `state = None` 开始也能运行）；"
              "如果本轮之后的代码仍用 `h` 计算损失（`h = cell(x, h)`），这一行放在循环体末尾，每一轮的梯度仍能到达模型。"
              "保存在对象上、跨调用携带的状态（在 `forward` 中重新绑定的 `self.hidden`）在那一行之后立即调用 `detach()`。"
              "若 `continue` 可能跳过那一行、方法返回了该状态，或者是就地更新的滑动统计量，则在下一轮第一次读取该状态的地方调用 `detach()`（`self.rnn(x, self.hidden.detach())`）；那里若是元组或以 `None` 开始，或者是可学习的初始状态，则不提供修复。"
              "不安全修复：梯度不再流入之前的迭代（原代码也算不出这些梯度，因为它会报错）。",
    },
    runtime_error=STALE_ERROR,
    match=STALE_MATCH,
)


def claims(problem) -> bool:
    return problem.kind == "stale-save" and problem.write.kind == "step" and problem.carry is not None


@RULE.checker
def check(ctx):
    for problem in ctx.problems("stale-save"):
        if not claims(problem):
            continue
        save, write, hint = problem.save, problem.write, problem.top
        detached = detach_carry_fix(ctx, problem) or detach_carry_at_read(ctx, problem)
        new = detached[1] if detached else f"{problem.carry_target}.detach()"
        fix = make_fix("unsafe", carry_fix_title(ctx, detached, new), detached[0] if detached else None)
        s_line, save_notes = weight_save_notes(ctx, problem, hint)
        w_line = ctx.line(write.node, write.top or hint)
        b_line = ctx.line(problem.use, hint) if problem.use is not None else 0
        name = problem.carry_target
        message = ctx.t(
            f"`{name}` carries this iteration's graph into the next one; `{write.op}` on line {w_line} modifies the "
            f"weights that graph saved on line {s_line}, so the next `backward()` (line {b_line}) fails. "
            f"Carry `{new}`. (`=` is not in-place; the old graph is the problem.)",
            f"`{name}` 把这一轮的计算图带进下一轮；第 {w_line} 行的 `{write.op}` 修改了这张图在第 {s_line} 行保存的权重，"
            f"所以下一轮的 `backward()`（第 {b_line} 行）会失败。请把传给下一轮的状态改为 `{new}`。（`=` 不是原地操作，问题在于旧的计算图。）")
        related = [
            ctx.related(write.node, write.top or hint, ctx.t("the optimizer modifies the weights here", "优化器在这里修改权重")),
            *save_notes,
        ]
        if problem.use is not None:
            related.append(ctx.related(problem.use, hint, ctx.t("the next iteration's backward fails here",
                                                                "下一轮的反向传播在这里失败")))
        explanation = stale_timeline(ctx, problem) + ctx.t(
            f"\n4. The old graph is reached through `{name}`, assigned on line {ctx.line(problem.carry, hint)} and used in the next iteration.",
            f"\n4. 旧的计算图是通过 `{name}` 到达的：它在第 {ctx.line(problem.carry, hint)} 行被赋值，并在下一轮中使用。")
        f = ctx.finding(RULE, problem.carry, hint, message, related=related, fix=fix, explanation=explanation, runtime_error=stale_error(problem.save, problem.write, ctx))
        if f:
            yield f
