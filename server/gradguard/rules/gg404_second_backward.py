"""GG404: a second backward() runs through a graph that an earlier backward() already freed."""
from __future__ import annotations

from . import Rule, make_fix
from ..fixes_order import (clear_kept_list, detach_at_source, detach_crossing, recompute_after_freeing_step,
                           recompute_in_loop, restart_accumulated_loss, retain_first_graph, retain_graph_at,
                           detach_read_before_loop, detach_snapshot_in_loop, drop_backward_of_term)

RULE = Rule(
    code="GG404",
    name="second-backward",
    family="graph-lifetime",
    fix_kind="unsafe",
    summary={
        "en": "`backward()` runs through part of a graph that an earlier `backward()` (without `retain_graph=True`) "
              "already freed.",
        "zh": "`backward()` 经过了一段已被之前的 `backward()`（没有 `retain_graph=True`）释放的计算图。",
    },
    what={
        "en": "Flags a `backward()` (or `torch.autograd.grad`) whose graph shares saved tensors with a graph that an "
              "earlier backward freed: two losses computed from one forward and back-propagated one after the other, "
              "a tensor computed once before a loop and back-propagated through in every iteration, or a GAN's "
              "discriminator step that back-propagates into the generator before the generator's own backward.",
        "zh": "检查这样的 `backward()`（或 `torch.autograd.grad`）：它的计算图与一张已被之前的反向传播释放的图共享保存的张量。"
              "例如由同一次前向计算得到的两个损失先后反向传播；在循环之前只计算一次的张量在每一轮都被反向传播；"
              "或者 GAN 的判别器更新先反向传播进生成器，之后生成器自己的 `backward()` 再次经过那里。",
    },
    why={
        "en": "`backward()` frees the tensors each node saved for backward as soon as it has used them, unless "
              "`retain_graph=True`. The next backward that reaches those nodes finds their saved tensors gone.",
        "zh": "除非指定 `retain_graph=True`，`backward()` 用完每个节点为反向传播保存的张量后会立刻释放它们。"
              "下一次到达这些节点的反向传播会发现保存的张量已经不在了。",
    },
    autograd={
        "en": "Sum the losses and call `backward()` once, recompute the shared part (inside the loop), or `detach()` "
              "what the second loss should not back-propagate into. `retain_graph=True` on the first backward also "
              "works, but keeps the whole graph in memory and turns into GG401/GG402 as soon as an optimizer step "
              "runs in between.",
        "zh": "把损失相加后只调用一次 `backward()`，或者（在循环里）重新计算共享的部分，或者对第二个损失不该反向传播进去的部分调用 "
              "`detach()`。在第一次反向传播时加 `retain_graph=True` 也可以，但会让整张图留在内存中，并且一旦中间有优化器的 "
              "`step()`，就会变成 GG401/GG402。",
    },
    fix_safety={
        "en": "Which repair is offered depends on the shape, and each is unsafe (it changes what the program "
              "computes, which the original never could because it raises). A graph built before the loop and "
              "back-propagated in every iteration: when its parameters are updated in the loop, the forward moves "
              "to the top of the loop body (each iteration builds its graph from the current weights; in a notebook, "
              "where the forward's cell and the loop's differ, it is copied there and its cell is left as it is), "
              "unless the "
              "loop already runs that forward on the same inputs or on rows of them (PPO's old log-probs beside the "
              "new ones, `actor(obs[idx])` over minibatches of the rollout: moved, "
              "the two would be equal and the ratio always 1), where the value before the loop is a snapshot and is "
              "read detached in the loop (`old.detach()`); when nothing "
              "ever updates them (labels from a teacher, targets from a leaf that requires grad), the value is "
              "detached where it is made. A sum that the second backward continues from the first (`loss = 0; "
              "for ...: loss += l; loss.backward()`, then `loss += l` again: SAM's second pass): the line that "
              "started it (`loss = 0`) is copied before the second sum. Two losses back-propagated one after the "
              "other: where a loss reads another model's output that the step after its backward does not update "
              "(D's loss reading `fake`, followed by `opt_d.step()`), it reads `fake.detach()`; with a `step()` "
              "between them, the forward the second needs is recomputed after that step (as GG401's repair); "
              "otherwise the first backward gets `retain_graph=True`, because the second one really needs that "
              "graph again. Its cost: every tensor the graph saved stays in memory until the second backward. "
              "Entries with graphs appended to a list that is never cleared (REINFORCE's `log_probs`) are "
              "cleared after the backward that uses them (`del self.log_probs[:]`; module-level lists filled by the "
              "episode loop too), with the lists filled beside them in the same loop that the loss reads "
              "(`del rewards[:]`: otherwise the next episode's log-probs would meet the old episode's returns). "
              "No fix after a custom step "
              "(`first_step()`) whose effect cannot be told, or a graph kept on an object in another shape: the "
              "message names it.",
        "zh": "提供哪种修复取决于代码的形态，每种都是不安全修复（它改变了程序的计算，而原程序因报错根本算不出结果）。"
              "在循环之前构建、每一轮都反向传播的计算图：如果循环会更新它的参数，前向传播移到循环体开头（每一轮都用当前权重"
              "建图；在 notebook 中，若前向传播与循环不在同一个单元格，则复制到循环开头，原单元格不变），除非循环已经对相同的输入或其中的若干行运行同一个前向传播（PPO 中旧的 log-prob 与新的并列：移进循环后两者相等，比值恒为 1），"
              "这时循环之前的值是快照，在循环中改为读取 `old.detach()`；如果从来没有代码更新这些参数（教师模型给出的标签、来自需要梯度的叶子张量的目标），就在产生该值的地方"
              "调用 `detach()`。第二次反向传播所用的和在第一次的基础上继续累加（`loss = 0; for ...: loss += l; "
              "loss.backward()`，之后再次 `loss += l`：SAM 的第二遍）：把开始求和的那一行（`loss = 0`）复制到第二次求和之前。"
              "先后反向传播的两个损失：如果一个损失读取了另一个模型的输出，而它反向传播之后的 step 并不更新"
              "那个模型（D 的损失读取 `fake`，之后是 `opt_d.step()`），它改为读取 `fake.detach()`；两者之间有 `step()` 时，"
              "在该 step 之后重新计算第二次所需的前向传播（与 GG401 的修复相同）；否则第一次反向传播加上 "
              "`retain_graph=True`，因为第二次确实需要再次使用这张图。代价：这张图保存的所有张量在第二次反向传播之前都留在"
              "内存中。追加到从不清空的列表中、带计算图的条目（REINFORCE 的 `log_probs`）在使用它们的反向传播之后清空"
              "（`del self.log_probs[:]`；由回合循环填充的模块级列表也一样），同一个循环中一起填充、且损失会读取的列表也一并"
              "清空（`del rewards[:]`：否则下一回合的 log-prob 会与上一回合的回报配对）。自定义 step（`first_step()`）之后效果无法判断，或以其他形态保存在对象上的计算图，"
              "不提供修复：消息会指出它。",
    },
    runtime_error="Trying to backward through the graph a second time (or directly access saved tensors after they have "
                  "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
                  "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
                  "if you need to access saved tensors after calling backward.",
    match="Trying to backward through the graph a second time",
)


@RULE.checker
def check(ctx):
    groups: dict = {}
    for problem in ctx.problems("second-backward"):
        groups.setdefault((id(problem.use), id(problem.detail.get("freed_by"))), []).append(problem)
    for problem in ctx.problems("second-backward"):
        hint = problem.top
        freed_by = problem.detail.get("freed_by")
        freed_hint = problem.detail.get("freed_top") or hint
        save = problem.save
        b_line = ctx.line(problem.use, hint)
        f_line = ctx.line(freed_by, freed_hint) if freed_by is not None else 0
        forward = problem.detail.get("forward")
        s_line = ctx.line(*forward) if forward is not None else (
            ctx.line(save.node, save.top or hint) if save is not None else 0)
        op = save.op if save is not None else "an op"
        same = freed_by is problem.use
        if problem.detail.get("earlier_pass"):
            message = ctx.t(
                f"In the loop's next iteration this `backward()` (line {b_line}) runs again through the graph built on "
                f"line {s_line} in an earlier iteration (`{op}` saved a tensor there): that graph was kept (in a list "
                f"or on an object) and the earlier iteration's `backward()` freed it. Clear what holds it after each "
                f"`backward()` (for example `del self.log_probs[:]`), or keep detached values.",
                f"在循环的下一轮，这个 `backward()`（第 {b_line} 行）再次经过第 {s_line} 行在之前某一轮建立的计算图"
                f"（`{op}` 在那里保存了张量）：这张图被保留了下来（在列表里或对象上），而那一轮的 `backward()` 已经把它释放了。"
                f"请在每次 `backward()` 之后清空保存它的容器（例如 `del self.log_probs[:]`），或者只保留 detach 之后的值。")
        elif same:
            message = ctx.t(
                f"In the loop's next iteration this `backward()` runs again through the graph built on line {s_line} "
                f"before the loop (`{op}` saved a tensor there), which its first run freed. Compute it inside the loop.",
                f"在循环的下一轮，这个 `backward()` 再次经过第 {s_line} 行在循环之前建立的计算图（`{op}` 在那里保存了张量），"
                f"而第一轮已经把它释放了。请在循环内重新计算它。")
        elif problem.detail.get("site") is not None:
            message = ctx.t(
                f"The `backward()` this call runs (line {b_line}) goes through the graph built on line {s_line} (`{op}` "
                f"saved a tensor there), which `backward()` on line {f_line} already freed. Sum the losses and call "
                f"`backward()` once, or recompute the shared part.",
                f"这次调用执行的 `backward()`（第 {b_line} 行）经过第 {s_line} 行建立的计算图（`{op}` 在那里保存了张量），"
                f"而第 {f_line} 行的 `backward()` 已经释放了它。请把损失相加后只调用一次 `backward()`，或者重新计算共享的部分。")
        else:
            message = ctx.t(
                f"This `backward()` runs through the graph built on line {s_line} (`{op}` saved a tensor there), which "
                f"`backward()` on line {f_line} already freed. Sum the losses and call `backward()` once, or recompute "
                f"the shared part.",
                f"这个 `backward()` 经过第 {s_line} 行建立的计算图（`{op}` 在那里保存了张量），而第 {f_line} 行的 "
                f"`backward()` 已经释放了它。请把损失相加后只调用一次 `backward()`，或者重新计算共享的部分。")
        fix = _fix(ctx, groups[(id(problem.use), id(problem.detail.get("freed_by")))])
        if fix is not None and problem.detail.get("earlier_pass") and "`del " in fix.message:
            # the container this program keeps, not the example's
            message = message.replace("`del self.log_probs[:]`", fix.message[fix.message.index("`del "):].split(" after")[0])
        if fix is not None:
            message = message.rstrip(".。") + ctx.t(f". Fix: {fix.message[:1].lower()}{fix.message[1:]}.",
                                                     f"。修复：{fix.message}。")
        related = []
        if freed_by is not None and not same:
            related.append(ctx.related(freed_by, freed_hint, ctx.t("this backward frees the graph", "这次反向传播释放了计算图")))
        if forward is not None:
            related.append(ctx.related(*forward, ctx.t("graph built here", "计算图在这里建立")))
        if save is not None:
            related.append(ctx.related(save.node, save.top or hint,
                                       ctx.t("by this layer", "由这一层保存") if forward is not None else
                                       ctx.t("saved for backward here", "在这里为反向传播保存")))
        explanation = ctx.t(
            f"1. Line {s_line}: `{op}` saves a tensor for backward.\n"
            f"2. `backward()` on line {f_line} uses it and frees it (no `retain_graph=True`).\n"
            f"3. `backward()` on line {b_line} reaches the same node{' in a later iteration' if same else ''}, "
            f"finds its saved tensor freed, and raises.",
            f"1. 第 {s_line} 行：`{op}` 为反向传播保存了一个张量。\n"
            f"2. 第 {f_line} 行的 `backward()` 用到了它并将其释放（没有 `retain_graph=True`）。\n"
            f"3. 第 {b_line} 行的 `backward()`{'在下一轮' if same else ''}到达同一个节点，发现保存的张量已被释放，于是报错。")
        where, where_top = problem.detail.get("site") or (problem.use, hint)
        if where is not problem.use:
            related.append(ctx.related(problem.use, hint, ctx.t("the second backward runs here", "第二次反向传播在这里执行")))
        f = ctx.finding(RULE, where, where_top, message, related=related, fix=fix, explanation=explanation)
        if f:
            yield f


def _fix(ctx, group):
    """The repair for this shape (memoised per backward: each saved layer of one graph is a problem of its own)."""
    problem = group[0]
    memo = ctx.__dict__.setdefault("_gg404_fixes", {})
    key = (id(problem.use), id(problem.detail.get("freed_by")))
    if key in memo:
        return memo[key]
    fix = None
    if problem.detail.get("earlier_pass"):
        cleared = clear_kept_list(ctx, problem)
        if cleared is not None:
            edit, line = cleared
            fix = make_fix("unsafe", ctx.t(
                f"Add `{line}` after this backward (unsafe: later backwards no longer reach earlier episodes' entries)",
                f"在这次反向传播之后加上 `{line}`（不安全：之后的反向传播不再到达之前各回合的条目）"), edit)
    elif problem.detail.get("freed_by") is problem.use:
        # nothing updates what that graph saved: keeping it is sound; otherwise each iteration rebuilds it, unless
        # the loop already runs that forward on the same inputs (the value before the loop is a snapshot)
        at_source = detach_at_source(ctx, problem)
        snapshot = detach_snapshot_in_loop(ctx, problem) if at_source is None else None
        moved = recompute_in_loop(ctx, group) if at_source is None and snapshot is None else None
        if snapshot is not None:
            edits, texts = snapshot
            shown = ", ".join(f"`{t}`" for t in texts)
            fix = make_fix("unsafe", ctx.t(
                f"Read {shown} in the loop (unsafe: the value from before the loop becomes a constant; the loop's "
                f"own forward of the same inputs carries the gradient)",
                f"在循环中改为读取 {shown}（不安全：循环之前得到的值成为常量；由循环内对同一输入的前向传播传递梯度）"), *edits)
        elif moved is not None:
            edit, info = moved
            lines = ", ".join(str(n) for n in info["lines"])
            fix = make_fix("unsafe", ctx.t(
                f"{'Move' if info['moved'] else 'Copy'} line{'s' if len(info['lines']) > 1 else ''} {lines} into the "
                f"loop on line {info['loop']} (unsafe: every iteration runs that forward again, from the current "
                f"weights)",
                f"把第 {lines} 行{'移' if info['moved'] else '复制'}到第 {info['loop']} 行的循环里（不安全：每一轮都用当前权重"
                f"重新运行这段前向传播）"), edit)
        elif (constant := detach_read_before_loop(ctx, problem)) is not None:
            edit, new = constant
            fix = make_fix("unsafe", ctx.t(
                f"Read it as a constant in every iteration: `{new}` (unsafe: nothing back-propagates into what "
                f"computed it; no optimizer trains that)",
                f"在每一轮中把它当作常量读取：`{new}`（不安全：不再反向传播进计算它的部分；没有优化器训练那部分）"), edit)
        elif at_source is not None:
            # Nothing updates what built that graph, so keeping it for every iteration is sound; detaching it
            # where it is made is lighter, and the message says so, but cuts gradients some code may read.
            retained = retain_graph_at(ctx, problem.use, problem.top)
            if retained is not None:
                edit, new = retained
                made = at_source[1]
                fix = make_fix("unsafe", ctx.t(
                    f"Keep that graph for every iteration: `{new}` (unsafe: its saved tensors stay in memory; if "
                    f"nothing should train what made it, `{made}` is lighter)",
                    f"让每一轮都保留那张图：`{new}`（不安全：保存的张量一直留在内存中；如果产生它的部分不需要训练，"
                    f"`{made}` 更轻量）"), edit)
    else:
        restarted = restart_accumulated_loss(ctx, problem)
        crossing = detach_crossing(ctx, problem) if restarted is None else None
        redone = recompute_after_freeing_step(ctx, group) if crossing is None and restarted is None else None
        if restarted is not None:
            edit, info = restarted
            fix = make_fix("unsafe", ctx.t(
                f"Start `{info['name']}` again before line {info['before']}: `{info['line']}` (unsafe: the second "
                f"backward no longer includes the terms the first one already back-propagated)",
                f"在第 {info['before']} 行之前重新开始 `{info['name']}`：`{info['line']}`（不安全：第二次反向传播不再包含"
                f"第一次已经反向传播过的项）"), edit)
        elif redone is not None:
            edit, info = redone
            nums = [str(n) for n in info["lines"]]
            redo = f"line {nums[0]}" if len(nums) == 1 else f"lines {', '.join(nums[:-1])} and {nums[-1]}"
            fix = make_fix("unsafe", ctx.t(
                f"Recompute {redo} after line {info['after']}"
                + (f", at the top of the `if` on line {info['into']}" if info["into"] else "") + " (unsafe: the recomputed forward sees the new weights; "
                f"dropout and BatchNorm statistics run again)",
                f"在第 {info['after']} 行之后" + (f"（第 {info['into']} 行 `if` 的开头）" if info["into"] else "")
                + f"重新计算第 {'、'.join(nums)} 行（不安全：重新计算的前向传播看到新权重；dropout 和 "
                f"BatchNorm 统计量会再运行一次）"), edit)
        elif crossing is not None:
            edits, texts = crossing
            shown = "; ".join(f"`{t}`" for t in texts)
            fix = make_fix("unsafe", ctx.t(
                f"Read {shown} (unsafe: that loss no longer back-propagates into the model whose output it reads)",
                f"改为读取 {shown}（不安全：该损失不再反向传播进它所读取输出的那个模型）"), *edits)
        elif (dropped := drop_backward_of_term(ctx, problem)) is not None:
            edit, info = dropped
            fix = make_fix("unsafe", ctx.t(
                f"Remove `{info['text']}` on line {info['line']}: `{info['total']}` already adds `{info['term']}` "
                f"(unsafe: its gradient is no longer counted twice)",
                f"删除第 {info['line']} 行的 `{info['text']}`：`{info['total']}` 已经包含 `{info['term']}`"
                f"（不安全：它的梯度不再被计算两次）"), edit)
        else:
            retained = retain_first_graph(ctx, problem)
            if retained is not None:
                edit, new = retained
                fix = make_fix("unsafe", ctx.t(
                    f"Keep the graph for the second backward: `{new}` (unsafe: its saved tensors stay in memory until "
                    f"then)",
                    f"为第二次反向传播保留计算图：`{new}`（不安全：保存的张量会一直留在内存中直到那时）"), edit)
    memo[key] = fix
    return fix
