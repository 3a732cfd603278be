"""GG404: a second backward() runs through a graph that an earlier backward() already freed."""
from __future__ import annotations

from . import Rule

RULE = Rule(
    code="GG404",
    name="second-backward",
    family="graph-lifetime",
    fix_kind="none",
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
        "en": "No automatic fix: which of the remedies is right depends on what the second loss should train.",
        "zh": "没有自动修复：哪种改法正确取决于第二个损失应该训练哪些参数。",
    },
    runtime_error="Trying to backward through the graph a second time (or directly access saved tensors after they have "
                  "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
                  "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
                  "if you need to access saved tensors after calling backward.",
    match="Trying to backward through the graph a second time",
)


@RULE.checker
def check(ctx):
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
        f = ctx.finding(RULE, where, where_top, message, related=related, explanation=explanation)
        if f:
            yield f
