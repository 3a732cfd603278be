"""GG401: optimizer.step() modifies weights that a later backward() still needs."""
from __future__ import annotations

from . import Rule, make_fix
from ..fixes_order import detach_carried_into_loop, detach_kept_from_init, recompute_after_step, recompute_at_loop_top
from ._common import STALE_ERROR, STALE_MATCH, stale_error, stale_timeline, use_phrase, weight_save_notes

RULE = Rule(
    code="GG401",
    name="step-before-backward",
    family="graph-lifetime",
    fix_kind="unsafe",
    summary={
        "en": "`optimizer.step()` runs between a forward pass and a later `backward()` through the same graph.",
        "zh": "`optimizer.step()` 在前向传播与之后经过同一计算图的 `backward()` 之间执行。",
    },
    what={
        "en": "Flags `opt.step()` when a graph built before it (and not yet freed by a backward without `retain_graph`) "
              "saved the parameters that this optimizer updates, and a later `backward()` goes through that graph — "
              "e.g. a GAN whose generator step comes before the discriminator's backward on the same `fake`.",
        "zh": "检查 `opt.step()`：在它之前构建、尚未被（不带 `retain_graph` 的）反向传播释放的计算图保存了该优化器要更新的参数，"
              "且之后有 `backward()` 经过这张图。例如 GAN 中生成器的 step 先于判别器对同一个 `fake` 的反向传播。",
    },
    why={
        "en": "`step()` updates parameters in place. Layers like `nn.Linear` save their weight (as a view, `weight.t()`) for "
              "backward, so the later backward finds a newer version and raises — torch names the tensor `output 0 of "
              "AsStrided`, never the `step()` line.",
        "zh": "`step()` 原地更新参数。`nn.Linear` 等层会为反向传播保存权重（以视图 `weight.t()` 的形式），所以之后的反向传播发现版本"
              "变新了并报错——torch 把它称为 `output 0 of AsStrided`，从不指出 `step()` 这一行。",
    },
    autograd={
        "en": "Each `step()` bumps every updated parameter's `_version` (SGD/Adam by 1, AdamW by 2). A `zero_grad()` "
              "before a misplaced `step()` makes the step a no-op (no gradients), and then nothing is modified.",
        "zh": "每次 `step()` 都让被更新参数的 `_version` 增加（SGD/Adam 加 1，AdamW 加 2）。如果错位的 `step()` 之前调用了 "
              "`zero_grad()`，step 因没有梯度而什么也不做，此时参数不会被修改。",
    },
    fix_safety={
        "en": "The fix recomputes, right after `step()`, the forward that the later backward needs, and detaches what "
              "crosses into the stepped model for its own loss (the standard GAN loop): `fake_out = netD(fake)` "
              "before `d_opt.step()` becomes `netD(fake.detach())` where D's own loss reads it, and a copy "
              "`fake_out = netD(fake)` goes after the step, so `g_loss` is computed from D's new weights. Only the "
              "statements that run the stepped model, or are computed from what it returned, are run again (the "
              "generator's own forward is not); one that nothing before the step reads is moved rather than "
              "copied. The whole repair is one edit. Unsafe: the recomputed forward sees the new weights (which is "
              "what the hand-written GAN loop does), and any randomness (dropout) and BatchNorm statistics in it run "
              "a second time. Neither half alone is a fix: `D(fake.detach())` alone still raises, and moving "
              "`g_loss.backward()` before `d_opt.step()` runs but makes D step on a gradient that includes G's loss. "
              "A step or backward inside a helper (`update(opt, loss)`) is repaired at the helper's calls: the "
              "recompute goes after the call that steps, for the later call whose arguments come from the graph. A "
              "step inside an `if` before a backward in another `if` recomputes at the top of that second `if`. A "
              "loop before the step that adds to the later loss (`for u in ...: loss += ...`) is run again whole, "
              "with the line that started the sum (`loss = 0.0`): every name a recomputed statement reads keeps "
              "the value it had. A forward built by an earlier loop (`for j in range(d_steps): fake = netG(z)`) "
              "and stepped by a later one is copied to the top of that loop, so every pass builds its own graph. "
              "A recurrent state computed before a loop and carried into it (a memory transformer's first segment, "
              "`logits, memory = model(inp, memory)` before `opt.step()`, then the loop reads `memory`) is cut after "
              "the step: `memory = memory.detach()` (unsafe: no gradient flows back into what came before the step; "
              "the values stay, as the loop's own carry does, GG402). "
              "A value computed by a layer in `__init__` and kept on the object (`self.mask_e = "
              "self.embedding(ids)`) is detached where it is made (unsafe: it no longer trains what computed it). "
              "No fix is offered when the forward runs in another function than the step (a helper returning the "
              "losses, called before a helper that steps), when the graph reaches the backward through a list "
              "built by another loop, when the later loss is built inside a `with`/`while`/`try` before the step, "
              "or when an input of the recomputed forward is re-bound before the step; the message then gives the "
              "recipe with the program's own names and lines. Moving the step after the last backward that needs "
              "the old weights is not offered: that backward also fills the stepped model's `.grad`, so the step "
              "would change.",
        "zh": "修复会在 `step()` 之后立即重新计算之后的反向传播所需的前向传播，并在被更新模型自己的损失中对跨模型传入的张量调用 "
              "`detach()`（标准的 GAN 训练循环）：`d_opt.step()` 之前的 `fake_out = netD(fake)` 在 D 自己的损失读取它的地方"
              "改为 `netD(fake.detach())`，并在 step 之后加一份 `fake_out = netD(fake)`，这样 `g_loss` 由 D 的新权重计算。"
              "只重新运行调用被更新模型的语句，或由它的返回值计算出的语句（生成器自己的前向传播不会重跑）；step 之前没有"
              "其他语句读取的语句会被移动而不是复制。整个修复是一次编辑。不安全修复：重新计算的前向传播看到的是新权重"
              "（手写的 GAN 循环正是这样做的），其中的随机性（dropout）和 BatchNorm 统计量会再运行一次。只做一半都不是修复："
              "只改成 `D(fake.detach())` 仍然报错；把 `g_loss.backward()` 移到 `d_opt.step()` 之前虽然能运行，但 D 的这一步"
              "用的梯度包含了 G 的损失。辅助函数中的 step 或反向传播（`update(opt, loss)`）在调用辅助函数的地方修复："
              "重新计算放在执行 step 的那次调用之后，服务于参数来自这张图的那次之后的调用。位于 `if` 中的 step 若在另一个 "
              "`if` 中的反向传播之前，则在第二个 `if` 的开头重新计算。step 之前向之后的损失累加的循环（`for u in ...: "
              "loss += ...`）连同开始求和的那一行（`loss = 0.0`）整体重新运行：每条重新计算的语句读取的名字都保持原来的值。"
              "由之前的循环构建（`for j in range(d_steps): fake = netG(z)`）、被之后的循环 step 的前向传播复制到该循环的开头，"
              "使每一轮构建自己的计算图。在循环之前计算并带入循环的循环状态（记忆 Transformer 的第一段："
              "`opt.step()` 之前的 `logits, memory = model(inp, memory)`，之后循环读取 `memory`）在 step 之后截断："
              "`memory = memory.detach()`（不安全：梯度不再流回 step 之前的部分；数值不变，与循环自己的携带状态相同，见 GG402）。"
              "在 `__init__` 中由层计算并保存在对象上的值（`self.mask_e = self.embedding(ids)`）"
              "在产生处调用 detach（不安全：不再训练计算它的部分）。若前向传播与 step 不在同一个函数中（返回损失的辅助函数在"
              "执行 step 的辅助函数之前调用）、计算图经由另一个循环构建的列表到达反向传播、之后的损失在 step 之前的 "
              "`with`/`while`/`try` 中构建，或重新计算的前向传播的输入在 step 之前被重新绑定，则不提供修复；此时消息会用程序"
              "自己的名字和行号给出做法。不提供“把 step 移到最后一次需要旧权重的反向传播之后”：那次反向传播也会填充被更新"
              "模型的 `.grad`，step 的结果会改变。",
    },
    runtime_error=STALE_ERROR,
    match=STALE_MATCH,
)


def claims(problem) -> bool:
    return problem.kind == "stale-save" and problem.write.kind == "step" and problem.carry is None


def _repair(ctx, group):
    """The recompute-after-step fix for one step and one later backward (memoised: every save of the group asks)."""
    memo = ctx.__dict__.setdefault("_gg401_fixes", {})
    key = (id(group[0].write.node), id(group[0].use))
    if key not in memo:
        memo[key] = recompute_after_step(ctx, group)
    return memo[key]


def _receiver_text(ctx, use) -> str:
    func = getattr(use, "func", None)
    if func is not None and getattr(getattr(func, "attr", None), "value", "") == "backward":
        return ctx.code(func.value)
    return ""


@RULE.checker
def check(ctx):
    mine = [p for p in ctx.problems("stale-save") if claims(p)]
    groups: dict = {}
    for p in mine:
        groups.setdefault((id(p.write.node), id(p.use)), []).append(p)  # one step writes once per layer
    for problem in mine:
        save, write, hint = problem.save, problem.write, problem.top
        group = groups[(id(write.node), id(problem.use))]
        s_line, related = weight_save_notes(ctx, problem, hint)
        w_line = ctx.line(write.node, write.top or hint)
        b_line = ctx.line(problem.use, hint) if problem.use is not None else 0
        loss = _receiver_text(ctx, problem.use) if problem.use is not None else ""
        site = problem.detail.get("forward")
        forward = ctx.code(site[0]) if site is not None else ""
        repaired = _repair(ctx, group)
        fix = None
        kept = detach_kept_from_init(ctx, group) if repaired is None else None
        at_top = recompute_at_loop_top(ctx, group) if repaired is None and kept is None else None
        entering = detach_carried_into_loop(ctx, problem) if repaired is None and kept is None and at_top is None \
            else None
        if kept is not None:
            edit, new = kept
            fix = make_fix("unsafe", ctx.t(
                f"Keep `{new}` (unsafe: the forward no longer trains what computed it in `__init__`)",
                f"改为保存 `{new}`（不安全：前向传播不再训练 `__init__` 中计算它的部分）"), edit)
            message = ctx.t(
                f"`{write.op}` (line {w_line}) modifies {write.target_name} in place, but the graph built in "
                f"`__init__` and kept on the object saved them, and {use_phrase(ctx, problem)} goes through it "
                f"again. Keep `{new}` instead: every call then reads a constant.",
                f"`{write.op}`（第 {w_line} 行）原地修改了 {write.target_name}，但在 `__init__` 中构建并保存在对象上的计算图"
                f"保存了它们，而{use_phrase(ctx, problem)}再次经过这张图。请改为保存 `{new}`：每次调用读取的都是常量。")
        elif at_top is not None:
            edit, info = at_top
            fix = make_fix("unsafe", ctx.t(
                f"Copy line {info['line']} to the top of the loop on line {info['loop']} (unsafe: every pass runs that "
                f"forward again, from the current weights; dropout and BatchNorm statistics run again)",
                f"把第 {info['line']} 行复制到第 {info['loop']} 行循环的开头（不安全：每一轮都用当前权重重新运行这段前向"
                f"传播；dropout 和 BatchNorm 统计量会再运行一次）"), edit)
            message = ctx.t(
                f"`{write.op}` (line {w_line}) modifies {write.target_name} in place, but the graph built on line "
                f"{s_line} saved them and {use_phrase(ctx, problem)} goes through it again in the next pass. Run "
                f"`{info['text']}` at the top of the loop on line {info['loop']}, so each pass builds its own graph.",
                f"`{write.op}`（第 {w_line} 行）原地修改了 {write.target_name}，但第 {s_line} 行构建的计算图保存了它们，"
                f"而{use_phrase(ctx, problem)}在下一轮再次经过这张图。请在第 {info['loop']} 行循环的开头运行 "
                f"`{info['text']}`，让每一轮构建自己的计算图。")
        elif entering is not None:
            edit, line = entering
            fix = make_fix("unsafe", ctx.t(
                f"Add `{line}` after line {w_line} (unsafe: cuts the graph, no gradient into what came before the step)",
                f"在第 {w_line} 行之后加上 `{line}`（不安全：截断计算图，梯度不再流入 step 之前的部分）"), edit)
            message = ctx.t(
                f"`{write.op}` (line {w_line}) modifies {write.target_name} in place, but the graph built on line "
                f"{s_line} saved them, and the loop carries it on: {use_phrase(ctx, problem)} goes through it again. "
                f"Cut it after the step: `{line}`.",
                f"`{write.op}`（第 {w_line} 行）原地修改了 {write.target_name}，但第 {s_line} 行构建的计算图保存了它们，"
                f"而循环把它带了下去：{use_phrase(ctx, problem)}再次经过这张图。请在 step 之后截断它：`{line}`。")
        elif repaired is not None:
            edit, info = repaired
            nums = [str(n) for n in info["lines"]]
            redo = f"line {nums[0]}" if len(nums) == 1 else f"lines {', '.join(nums[:-1])} and {nums[-1]}"
            detached = "; ".join(f"`{d}`" for d in info["detached"])
            later = "; ".join(f"`{d}`" for d in info["detached_later"])
            why = ctx.t("unsafe: the recomputed forward sees the new weights; dropout and BatchNorm statistics run again",
                        "不安全：重新计算的前向传播看到新权重；dropout 和 BatchNorm 统计量会再运行一次")
            if later:
                why = ctx.t(f"unsafe: the later loss no longer back-propagates into the model that just stepped",
                            f"不安全：之后的损失不再反向传播进刚刚更新过的模型") if not detached and not info["forwards"] \
                    else why
            stepper = info.get("step_call") or write.op
            title = ctx.t(
                f"Recompute {redo} after `{stepper}`" + (f" from {later}" if later else "")
                + (f", at the top of the `if` on line {info['into']}" if info["into"] else "")
                + (f" and give the step's own loss {detached}" if detached else "") + f" ({why})",
                f"在 `{stepper}` 之后重新计算第 {'、'.join(nums)} 行" + (f"（读取 {later}）" if later else "")
                + (f"，并让 step 自己的损失使用 {detached}" if detached else "") + f"（{why}）")
            fix = make_fix("unsafe", title, edit)
            message = ctx.t(
                f"`{write.op}` (line {w_line}) modifies {write.target_name} in place, but the graph built on line "
                f"{s_line} saved them and {use_phrase(ctx, problem)} still needs it. Recompute {redo} after the step"
                + (f" from {later}" if later else "") + (f", and detach what crosses into the stepped model for its own loss ({detached})" if detached else "")
                + ". Moving that backward before the step instead would make the step use its gradient too.",
                f"`{write.op}`（第 {w_line} 行）原地修改了 {write.target_name}，但第 {s_line} 行构建的计算图保存了它们，"
                f"而{use_phrase(ctx, problem)}仍需要这张图。请在 step 之后重新计算第 "
                f"{'、'.join(nums)} 行" + (f"（读取 {later}）" if later else "")
                + (f"，并在被更新模型自己的损失中对跨模型传入的张量调用 detach（{detached}）" if detached else "")
                + "。若改为把该反向传播移到 step 之前，step 用的梯度也会包含它。")
        else:
            saved_stmt = ctx.code(save.stmt).strip().splitlines()[0] if save.stmt is not None and not forward else ""
            what = (f"`{forward}`" if forward else f"`{saved_stmt}`" + ctx.t(f" (line {s_line})", f"（第 {s_line} 行）") if saved_stmt and len(saved_stmt) <= 80
                    else ctx.t(f"the forward on line {s_line}", f"第 {s_line} 行的前向传播"))
            lname = f"`{loss}`" if loss else ctx.t("the later loss", "之后的损失")
            message = ctx.t(
                f"`{write.op}` (line {w_line}) modifies {write.target_name} in place, but the graph built on line "
                f"{s_line} saved them and {use_phrase(ctx, problem)} still needs it. After the step, compute {what} "
                f"again and {lname} from it; where the stepped model's own loss reads another model's output, pass "
                f"it `.detach()`. (`.detach()` alone still raises; moving the backward before the step makes the step "
                f"use its gradient too.)",
                f"`{write.op}`（第 {w_line} 行）原地修改了 {write.target_name}，但第 {s_line} 行构建的计算图保存了它们，"
                f"而{use_phrase(ctx, problem)}仍需要这张图。请在 step 之后重新计算 {what}，并由它计算 {lname}；"
                f"被更新模型自己的损失读取另一个模型的输出时，传入 `.detach()` 之后的值。（只加 `.detach()` 仍会报错；"
                f"把反向传播移到 step 之前，step 用的梯度也会包含它。）")
        if problem.use is not None:
            related.append(ctx.related(problem.use, hint, ctx.t("this backward needs the old weights",
                                                                "这里的反向传播需要旧的权重")))
        step_site = problem.detail.get("site")
        if step_site is not None:
            # the step runs inside a helper: the call of that helper here is the misplaced step
            related.append(ctx.related(write.node, write.top or hint, ctx.t("the step runs here", "step 在这里执行")))
        where, where_top = step_site if step_site is not None else (write.node, write.top or hint)
        f = ctx.finding(RULE, where, where_top, message, related=related, fix=fix,
                        explanation=stale_timeline(ctx, problem), runtime_error=stale_error(problem.save, problem.write, ctx))
        if f:
            yield f
