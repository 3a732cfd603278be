"""GG101: in-place write on a leaf tensor that requires grad."""
from __future__ import annotations

import libcst as cst

from .. import fixes
from . import Rule, make_fix
from ..i18n import created_by
from ._common import (copy_before_write, created_line, creation_site, first_of_chains, inplace_false, made_each_call,
                      name_of, out_of_place_rewrite)

RULE = Rule(
    code="GG101",
    name="leaf-inplace",
    family="leaf",
    fix_kind="safe/unsafe",
    summary={
        "en": "In-place write on a leaf tensor that requires grad, with grad enabled.",
        "zh": "在启用梯度时对需要梯度（requires_grad）的叶子张量做原地操作（in-place 操作）。",
    },
    what={
        "en": "Flags `w += 1`, `w.add_(1)`, `F.relu(w, inplace=True)` and other in-place writes on a tensor that is "
              "a leaf and requires grad (`torch.rand(..., requires_grad=True)`, `requires_grad_()`, `nn.Parameter`, "
              "`model.parameters()`) outside `torch.no_grad()`.",
        "zh": "检查对叶子张量（叶子节点）的原地写入，例如 `w += 1`、`w.add_(1)`、`F.relu(w, inplace=True)`；这些张量"
              "需要梯度（`torch.rand(..., requires_grad=True)`、`requires_grad_()`、`nn.Parameter`、`model.parameters()`），"
              "且写入不在 `torch.no_grad()` 之内。",
    },
    why={
        "en": "Autograd accumulates the gradient of a leaf into `.grad`. If the leaf's data were overwritten while grad "
              "mode records operations, the recorded graph could no longer say what the gradient is with respect to, "
              "so torch refuses the write immediately, at that line.",
        "zh": "autograd 会把叶子张量的梯度累加到 `.grad`。如果在记录计算图时覆盖叶子的数据，计算图就说不清梯度是相对于"
              "哪个值求的，所以 torch 在这一行立刻拒绝这次写入。",
    },
    autograd={
        "en": "`w.is_leaf` is True and `w.requires_grad` is True; `w.grad_fn` is None. An in-place op in grad mode "
              "would have to give `w` a `grad_fn`, which a leaf cannot have. Under `torch.no_grad()` the same write "
              "is allowed: it bumps `w._version` and leaves `w` a leaf (this is how optimizers update parameters).",
        "zh": "`w.is_leaf` 为 `True`，`w.requires_grad` 为 `True`，`w.grad_fn` 为 `None`。启用梯度时的原地操作需要给 `w` "
              "一个 `grad_fn`，而叶子张量不能有。放在 `torch.no_grad()` 中则允许：版本计数器（`_version`）加一，`w` "
              "仍是叶子张量（优化器就是这样更新参数的）。",
    },
    fix_safety={
        "en": "A parameter update (the write uses `.grad`, the tensor's `.grad` is read elsewhere, or the target is an "
              "`nn.Parameter` / a model parameter) is wrapped in `with torch.no_grad():` — safe: that is what the "
              "update meant and the original could only raise. Otherwise `w += 1` becomes `w = w + 1` — unsafe: `w` is "
              "then a non-leaf, so `w.grad` stays `None` and the gradient flows to the original leaf instead. An index "
              "write (`h[mask] = v`) gets `h = h.clone()` on the line before it — unsafe, as for `w = w + 1`: the write "
              "changes the copy, is recorded, and the leaf gets its gradient through the copy. Where a loop "
              "backpropagates through `w` again (re-binding would break it; not so for a leaf made afresh in the "
              "function that writes it, such as a hooked layer's output in `forward`) or no out-of-place method exists "
              "(`fill_`, `uniform_`), the write is wrapped in `torch.no_grad()` instead — unsafe: it is not recorded. An "
              "`inplace=True` activation on the leaf gets `inplace=False` — unsafe: the leaf keeps its values; alone on "
              "its line (`F.relu(w, inplace=True)`, whose result is dropped) it is re-bound instead: "
              "`w = F.relu(w, inplace=False)` — unsafe, as for `w = w + 1`.",
        "zh": "参数更新（写入用到了 `.grad`，或目标是 `nn.Parameter` / 模型参数）会被放进 `with torch.no_grad():`——"
              "安全修复：这正是更新的本意，而原代码只会报错。其他情况把 `w += 1` 改成 `w = w + 1`——不安全修复："
              "之后 `w` 是非叶子张量，`w.grad` 保持 `None`，梯度流向原来的叶子张量。按索引写入（`h[mask] = v`）则在它前一行"
              "加上 `h = h.clone()`——不安全修复，与 `w = w + 1` 相同：写入作用在副本上并被记录，叶子张量经由副本得到梯度。"
              "如果循环会再次经过 `w` 做反向传播（重新绑定会破坏循环；在写入它的函数中新建的叶子张量除外，例如 `forward` "
              "中被钩子设为需要梯度的层输出），或者没有对应的非原地方法（`fill_`、`uniform_`），则把写入放进 `torch.no_grad()`"
              "——不安全修复：写入不被记录。作用在叶子张量上的 `inplace=True` 激活改为 `inplace=False`——不安全修复："
              "叶子张量保持原值；如果它单独一行（`F.relu(w, inplace=True)`，结果被丢弃），则改写为重新绑定："
              "`w = F.relu(w, inplace=False)`——不安全修复，与 `w = w + 1` 相同。",
    },
    runtime_error="a leaf Variable that requires grad is being used in an in-place operation.",
    references=("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",),
)


def _is_update(ctx, problem) -> bool:
    """A parameter update: the target is a parameter, or its `.grad` is read (manual SGD, PGD steps)."""
    tensor = problem.tensor
    if tensor.is_parameter or tensor.module_params is not None or tensor.grad_read:
        return True
    return ".grad" in ctx.code(problem.write.stmt)


def _update_runs(ctx, problems) -> dict:
    """id(stmt) -> the edit putting its whole run of adjacent parameter updates under one `torch.no_grad()`."""
    updates = sorted(((ctx.span(p.write.stmt, p.top), p) for p in problems if _is_update(ctx, p)
                      and ctx.span(p.write.stmt, p.top) is not None), key=lambda item: item[0].start_line)
    runs, current, seen = [], [], set()
    for span, p in updates:
        if id(p.write.stmt) in seen:
            continue  # one statement writing two leaves
        seen.add(id(p.write.stmt))
        if current and span.start_line == current[-1][0].end_line + 1 and span.start_col == current[-1][0].start_col:
            current.append((span, p))
        else:
            current = [(span, p)]
            runs.append(current)
    edits = {}
    for run in runs:
        if len(run) > 1:
            edit = fixes.wrap_no_grad_run(ctx, [(p.write.stmt, p.top) for _, p in run])
            if edit is not None:
                edits.update({id(p.write.stmt): edit for _, p in run})
    return edits


def _zh_around(text: str) -> str:
    """` text ` inside a Chinese sentence: a space only beside a code span (the spacing rule of zh-glossary.md)."""
    return (" " if text.startswith("`") else "") + text + (" " if text.endswith("`") else "")


@RULE.checker
def check(ctx):
    problems, chained = first_of_chains(list(ctx.problems("leaf-write")))
    runs = _update_runs(ctx, problems)
    for problem in problems:
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor)
        line = created_line(ctx, tensor, hint)
        fix = None
        rewrite = out_of_place_rewrite(ctx, write, hint)
        # a training loop that backpropagates through the leaf again would see a re-bound name, unless the leaf
        # is made afresh where it is written
        rebind_ok = not problem.detail.get("loop_backward") or made_each_call(ctx, tensor, write, hint)
        copied = None if _is_update(ctx, problem) or rewrite else (copy_before_write(ctx, write, hint) if rebind_ok else None)
        if _is_update(ctx, problem):
            run = runs.get(id(write.stmt))
            fix = make_fix("safe", ctx.t("Do the update under `torch.no_grad()`", "在 `torch.no_grad()` 中执行更新")
                           if run is None else ctx.t("Do the adjacent updates under one `torch.no_grad()`",
                                                     "在同一个 `torch.no_grad()` 中执行相邻的更新"),
                           run or ctx.wrap_no_grad(write.stmt, hint))
        elif write.kind in ("inplace_arg", "inplace_module") and (flag := inplace_false(ctx, write, hint)) and (
                flag[1] is None or rebind_ok):
            if flag[1] is None:
                fix = make_fix("unsafe", ctx.t("Use `inplace=False` (unsafe: the leaf is no longer modified)",
                                               "改为 `inplace=False`（不安全：叶子张量不再被修改）"), flag[0])
            else:  # the call stood alone: its result is re-bound to the name
                fix = make_fix("unsafe", ctx.t(f"Rewrite as `{flag[1]}` (unsafe: {name} becomes a non-leaf: its `.grad` stays `None`)",
                                               f"改写为 `{flag[1]}`（不安全：{name} 变成非叶子张量：它的 `.grad` 保持 `None`）"),
                               flag[0])
        elif rewrite and rebind_ok:
            fix = make_fix("unsafe", ctx.t(f"Rewrite as `{rewrite[1]}` (unsafe: {name} becomes a non-leaf: its `.grad` stays `None`)",
                                           f"改写为 `{rewrite[1]}`（不安全：{name} 变成非叶子张量：它的 `.grad` 保持 `None`）"),
                           rewrite[0])
        elif copied:
            fix = make_fix("unsafe", ctx.t(f"Write into a copy: add `{copied[1]}` before line {ctx.line(write.stmt, hint)} "
                                           f"(unsafe: {name} then names a non-leaf copy whose `.grad` stays `None`; the "
                                           "leaf gets its gradient through the copy)",
                                           f"写入副本：在第 {ctx.line(write.stmt, hint)} 行之前加上 `{copied[1]}`（不安全："
                                           f"{name} 随后指向非叶子副本，其 `.grad` 保持 `None`；叶子张量经由副本得到梯度）"),
                           copied[0])
        else:
            # Re-binding a leaf that a training loop backpropagates through again would break that loop, and
            # `act(w)` alone on its line cannot take `inplace=False` (the activation would be dropped):
            # change the values untracked instead.
            fix = make_fix("unsafe", ctx.t("Do the write under `torch.no_grad()` (unsafe: it is then not recorded in the graph)",
                                           "在 `torch.no_grad()` 中写入（不安全：写入不再记录到计算图）"),
                           ctx.wrap_no_grad(write.stmt, hint))
        where = ctx.t(f" (created on line {line})" if line else "", f"（创建于第 {line} 行）" if line else "")
        then = chained[id(problem)]
        after = ctx.t(f" (the chained {', '.join(f'`{op}`' for op in then)} never runs)" if then else "",
                      f"（后面链式调用的 {'、'.join(f'`{op}`' for op in then)} 不会执行）" if then else "")
        message = ctx.t(
            f"{name} is a leaf tensor that requires grad{where}; the in-place `{write.op}` here raises at once{after}. "
            "Do parameter updates under `torch.no_grad()`, or work on a copy.",
            f"{name} 是需要梯度的叶子张量{where}；这里的原地操作 `{write.op}` 会立刻报错{after}。请在 `torch.no_grad()` 中更新参数，"
            "或者在副本上操作。")
        explanation = ctx.t(
            f"1. {name} is a leaf created on line {line} by {created_by(tensor.created_by, 'en')} (`is_leaf=True`, `requires_grad=True`).\n"
            f"2. Line {ctx.line(write.node, hint)} writes it in place with `{write.op}` while grad mode is on.\n"
            "3. torch raises at that line: a leaf that requires grad cannot be modified in place.",
            f"1. {name} 是第 {line} 行由{_zh_around(created_by(tensor.created_by, 'zh'))}创建的叶子张量（`is_leaf=True`，`requires_grad=True`）。\n"
            f"2. 第 {ctx.line(write.node, hint)} 行在启用梯度时用 `{write.op}` 原地修改它。\n"
            "3. torch 在这一行报错：需要梯度的叶子张量不能被原地修改。")
        made, made_top = creation_site(tensor, hint)
        related = [ctx.related(made, made_top, ctx.t(f"{name} created here as a leaf that requires grad",
                                                     f"{name} 在这里创建为需要梯度的叶子张量"))] if made is not None else []
        node = write.node if not isinstance(write.node, cst.SimpleStatementLine) else write.stmt
        f = ctx.finding(RULE, node, hint, message, related=related, fix=fix, explanation=explanation)
        if f:
            yield f
