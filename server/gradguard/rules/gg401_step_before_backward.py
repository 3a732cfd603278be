"""GG401: optimizer.step() modifies weights that a later backward() still needs."""
from __future__ import annotations

from . import Rule
from ._common import STALE_ERROR, STALE_MATCH, stale_error, stale_timeline, use_phrase, weight_save_notes

RULE = Rule(
    code="GG401",
    name="step-before-backward",
    family="graph-lifetime",
    fix_kind="none",
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
        "en": "No automatic fix: call `backward()` for every graph that uses these weights before `step()`, or "
              "`detach()` what crosses from one model's graph into the other's (`D(fake.detach())`).",
        "zh": "没有自动修复：在 `step()` 之前对所有用到这些权重的计算图调用 `backward()`，或者对从一个模型流向另一个模型的张量"
              "调用 `detach()`（`D(fake.detach())`）。",
    },
    runtime_error=STALE_ERROR,
    match=STALE_MATCH,
)


def claims(problem) -> bool:
    return problem.kind == "stale-save" and problem.write.kind == "step" and problem.carry is None


@RULE.checker
def check(ctx):
    for problem in ctx.problems("stale-save"):
        if not claims(problem):
            continue
        save, write, hint = problem.save, problem.write, problem.top
        s_line, related = weight_save_notes(ctx, problem, hint)
        message = ctx.t(
            f"`{write.op}` modifies {write.target_name} in place, but the graph built on line {s_line} saved them and "
            f"{use_phrase(ctx, problem)} still needs it. Run that backward before `step()`, or `detach()` what crosses between models.",
            f"`{write.op}` 原地修改了 {write.target_name}，但第 {s_line} 行构建的计算图保存了它们，而{use_phrase(ctx, problem)}"
            "仍需要这张图。请在 `step()` 之前执行该反向传播，或对跨模型传递的张量调用 `detach()`。")
        if problem.use is not None:
            related.append(ctx.related(problem.use, hint, ctx.t("this backward needs the old weights",
                                                                "这里的反向传播需要旧的权重")))
        site = problem.detail.get("site")
        if site is not None:
            # the step runs inside a helper: the call of that helper here is the misplaced step
            related.append(ctx.related(write.node, write.top or hint, ctx.t("the step runs here", "step 在这里执行")))
        where, where_top = site if site is not None else (write.node, write.top or hint)
        f = ctx.finding(RULE, where, where_top, message, related=related,
                        explanation=stale_timeline(ctx, problem), runtime_error=stale_error(problem.save, problem.write, ctx))
        if f:
            yield f
