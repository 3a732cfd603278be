"""GG403: state carried across iterations makes backward go through an already freed graph."""
from __future__ import annotations

import re

import libcst as cst

from . import Rule, make_fix
from .. import fixes
from ..fixes_order import detach_carry_at_read
from ._common import carry_fix_title, detach_carry_fix

RULE = Rule(
    code="GG403",
    name="backward-through-freed-graph",
    family="graph-lifetime",
    fix_kind="unsafe",
    summary={
        "en": "A tensor carried into the next loop iteration makes `backward()` run through a graph that the previous "
              "`backward()` already freed.",
        "zh": "带入下一次循环迭代的张量使 `backward()` 经过上一次 `backward()` 已经释放的计算图。",
    },
    what={
        "en": "Flags `h = h_next` in a loop whose `backward()` has no `retain_graph=True`: the next iteration's backward "
              "reaches the previous iteration's graph through `h`, whose saved tensors were freed.",
        "zh": "检查循环中的 `h = h_next`，而循环里的 `backward()` 没有 `retain_graph=True`：下一轮的反向传播通过 `h` "
              "到达上一轮的计算图，而那张图保存的张量已经被释放。",
    },
    why={
        "en": "`backward()` frees the saved tensors of the graph it ran through. Carrying a tensor that still points into "
              "that graph makes the next backward need them again.",
        "zh": "`backward()` 会释放它经过的计算图中保存的张量。携带仍指向那张图的张量，会让下一次反向传播再次需要它们。",
    },
    autograd={
        "en": "Adding `retain_graph=True` only trades this error for GG402 once an optimizer modifies the weights; "
              "`detach()` the carried state instead (truncated backpropagation through time).",
        "zh": "加上 `retain_graph=True` 只会在优化器修改权重后把这个错误换成 GG402；应当对携带的状态调用 `detach()`（截断的时间反向传播）。",
    },
    fix_safety={
        "en": "The carried state is detached where it passes into the next iteration, never the value the loss is "
              "computed from: `h = h_next` becomes `h = h_next.detach()`; `out, h = rnn(x, h)` gets a line `h = "
              "h.detach()` after it (`h, c = h.detach(), c.detach()` after `y, (h, c) = lstm(...)`; `state = "
              "tuple(s.detach() for s in state)` for LSTM state, so a `state = None` start still works); when the "
              "rest of the iteration still computes the loss from `h` (`h = cell(x, h)`), that line goes at the "
              "end of the loop body, so every iteration's gradients still reach the model. State kept on the "
              "object across calls (`self.hidden` re-bound in `forward`) is detached right after that line, and so is "
              "every other attribute that method re-binds from itself and from the same arguments (`self.z = self.z + "
              "k.sum(0)` beside `self.M = self.M + k.T @ v`): it carries the same iteration's graph. When a `continue` "
              "could skip that line, the method returns the state, or a running statistic is updated in "
              "place of a re-binding, the state is detached where the next iteration first reads it "
              "(`self.rnn(x, self.hidden.detach())`); no fix for a tuple or `None` start there, nor for a "
              "learned initial state. When the loop already calls a detaching helper on the state and drops its "
              "result (`repackage_hidden(hidden)` alone on its line, or `hidden.detach()`), that call is the "
              "mistake: the finding is on it, and the fix assigns the result (`hidden = repackage_hidden(hidden)`). "
              "Unsafe: gradients no longer flow into earlier iterations.",
        "zh": "在携带的状态进入下一轮迭代的地方调用 `detach()`，而不是对计算损失所用的值：`h = h_next` 改为 `h = h_next.detach()`；"
              "`out, h = rnn(x, h)` 之后加一行 `h = h.detach()`（`y, (h, c) = lstm(...)` 之后加 `h, c = h.detach(), c.detach()`；"
              "LSTM 状态用 `state = tuple(s.detach() for s in state)`，因此从 `state = None` 开始也能运行）；"
              "如果本轮之后的代码仍用 `h` 计算损失（`h = cell(x, h)`），这一行放在循环体末尾，每一轮的梯度仍能到达模型。"
              "保存在对象上、跨调用携带的状态（在 `forward` 中重新绑定的 `self.hidden`）在那一行之后立即调用 `detach()`；"
              "该方法中由自身和相同参数重新绑定的其他属性（与 `self.M = self.M + k.T @ v` 并列的 `self.z = self.z + k.sum(0)`）"
              "携带同一轮的计算图，也一并调用 `detach()`。"
              "若 `continue` 可能跳过那一行、方法返回了该状态，或者是就地更新的滑动统计量，则在下一轮第一次读取该状态的地方调用 `detach()`（`self.rnn(x, self.hidden.detach())`）；那里若是元组或以 `None` 开始，或者是可学习的初始状态，则不提供修复。不安全修复：梯度不再流入之前的迭代。",
    },
    runtime_error="Trying to backward through the graph a second time (or directly access saved tensors after they have "
                  "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
                  "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
                  "if you need to access saved tensors after calling backward.",
)


_DETACHING = re.compile(r"detach|repackage", re.I)  # `repackage_hidden` of PyTorch's word_language_model example


def _discarded_detach(problem):
    """The statement in the carrying loop that detaches the carried name and drops the result: `hidden.detach()`,
    `repackage_hidden(hidden)` alone on its line (the user meant `hidden = repackage_hidden(hidden)`)."""
    carry = problem.detail.get("carry")
    name = problem.carry_target
    if carry is None or carry.loop is None or not isinstance(carry.loop.body, cst.IndentedBlock) or "." in name:
        return None
    for stmt in carry.loop.body.body:
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
            continue
        call = stmt.body[0].value
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "detach" and not call.args \
                and isinstance(func.value, cst.Name) and func.value.value == name:
            return call
        if isinstance(func, cst.Name) and _DETACHING.search(func.value) and len(call.args) == 1 \
                and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == name \
                and call.args[0].keyword is None and not call.args[0].star:
            return call
    return None


@RULE.checker
def check(ctx):
    for problem in ctx.problems("freed-graph"):
        hint = problem.top
        dropped = _discarded_detach(problem)
        if dropped is not None:
            f = _dropped_result(ctx, problem, dropped)
            if f:
                yield f
            continue
        detached = detach_carry_fix(ctx, problem) or detach_carry_at_read(ctx, problem)
        new = detached[1] if detached else f"{problem.carry_target}.detach()"
        siblings = fixes.detach_sibling_state(ctx, problem) if detached else []
        title = carry_fix_title(ctx, detached, new)
        if siblings:  # the same graph carried in other attributes too: all detached, or the next backward raises
            also = ", ".join(f"`{text}`" for _, text in siblings)
            title = ctx.t(f"Carry `{new}` and {also} (unsafe: cuts the graph, no gradient into earlier iterations)",
                          f"把传给下一轮的状态改为 `{new}`，以及 {also}（不安全：截断计算图，梯度不再流入之前的迭代）")
        fix = make_fix("unsafe", title, detached[0] if detached else None, *(edit for edit, _ in siblings))
        freed_by = problem.detail.get("freed_by")
        f_line = ctx.line(freed_by, hint) if freed_by is not None else 0
        b_line = ctx.line(problem.use, hint) if problem.use is not None else 0
        name = problem.carry_target
        message = ctx.t(
            f"`{name}` carries this iteration's graph into the next one, but `backward()` on line {f_line} frees it; the "
            f"next `backward()` (line {b_line}) goes through it again and fails. Carry `{new}`. (`retain_graph=True` "
            f"instead keeps every iteration's graph in memory, and the first `step()` turns this into GG402.)",
            f"`{name}` 把这一轮的计算图带进下一轮，但第 {f_line} 行的 `backward()` 释放了它；下一轮的 `backward()`（第 {b_line} 行）"
            f"再次经过它并失败。请把传给下一轮的状态改为 `{new}`。（若改用 `retain_graph=True`，每一轮的计算图都会留在内存中，"
            f"而第一次 `step()` 就会把它变成 GG402。）")
        related = []
        if freed_by is not None:
            related.append(ctx.related(freed_by, hint, ctx.t("this backward frees the graph", "这次反向传播释放了计算图")))
        explanation = ctx.t(
            f"1. `{name}` is assigned on line {ctx.line(problem.carry, hint)} a tensor that belongs to this iteration's graph.\n"
            f"2. `backward()` on line {f_line} frees that graph's saved tensors (no `retain_graph=True`).\n"
            f"3. The next iteration computes from `{name}`, so its `backward()` reaches the freed graph and raises.",
            f"1. 第 {ctx.line(problem.carry, hint)} 行把属于这一轮计算图的张量赋给 `{name}`。\n"
            f"2. 第 {f_line} 行的 `backward()` 释放了这张图保存的张量（没有 `retain_graph=True`）。\n"
            f"3. 下一轮从 `{name}` 开始计算，所以它的 `backward()` 到达已释放的计算图并报错。")
        f = ctx.finding(RULE, problem.carry, hint, message, related=related, fix=fix, explanation=explanation)
        if f:
            yield f


def _dropped_result(ctx, problem, call):
    """The finding on a detaching call whose result the loop drops: the user's actual mistake."""
    hint, name = problem.top, problem.carry_target
    code = ctx.code(call)
    assign = f"{name} = {code}"
    line = ctx.line(call, hint)
    freed_by = problem.detail.get("freed_by")
    f_line = ctx.line(freed_by, hint) if freed_by is not None else 0
    b_line = ctx.line(problem.use, hint) if problem.use is not None else 0
    c_line = ctx.line(problem.carry, hint)
    edit = ctx.replace_node(call, hint, assign)
    fix = make_fix("unsafe", ctx.t(f"Assign the result: `{assign}` (unsafe: cuts the graph, no gradient into earlier "
                                   f"iterations)",
                                   f"使用返回值：`{assign}`（不安全：截断计算图，梯度不再流入之前的迭代）"), edit) \
        if edit is not None else None
    message = ctx.t(
        f"`{code}` returns a detached copy of `{name}`, but its result is discarded: `{name}` still holds the graph "
        f"that line {c_line} built in the previous iteration, which `backward()` on line {f_line} freed, so the next "
        f"`backward()` (line {b_line}) fails. Assign it: `{assign}`.",
        f"`{code}` 返回 `{name}` 分离后的副本，但返回值被丢弃了：`{name}` 仍然持有上一轮第 {c_line} 行构建的计算图，"
        f"而第 {f_line} 行的 `backward()` 已经释放了它，所以下一次 `backward()`（第 {b_line} 行）会失败。"
        f"请使用返回值：`{assign}`。")
    related = [ctx.related(problem.carry, hint, ctx.t(f"`{name}` is re-bound here to this iteration's graph",
                                                     f"`{name}` 在这里重新绑定到这一轮的计算图"))]
    if freed_by is not None:
        related.append(ctx.related(freed_by, hint, ctx.t("this backward frees the graph", "这次反向传播释放了计算图")))
    explanation = ctx.t(
        f"1. Line {c_line} binds `{name}` to a tensor of this iteration's graph.\n"
        f"2. `backward()` on line {f_line} frees that graph's saved tensors.\n"
        f"3. In the next iteration, line {line} computes a detached copy and drops it; `{name}` is unchanged, so the "
        f"next `backward()` reaches the freed graph and raises.",
        f"1. 第 {c_line} 行把 `{name}` 绑定到这一轮计算图中的张量。\n"
        f"2. 第 {f_line} 行的 `backward()` 释放了这张图保存的张量。\n"
        f"3. 下一轮中，第 {line} 行算出分离后的副本却把它丢弃；`{name}` 没有改变，所以下一次 `backward()` 到达已释放的"
        f"计算图并报错。")
    return ctx.finding(RULE, call, hint, message, related=[r for r in related if r], fix=fix, explanation=explanation)
