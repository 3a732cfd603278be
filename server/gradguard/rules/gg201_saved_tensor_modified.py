"""GG201: a tensor saved for backward is modified in place before backward."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from .. import fixes
from ._common import statement_of, written_name, STALE_ERROR, STALE_MATCH, stale_error, clone_argument, clone_output, clone_unpacked_output, copied_output_risk, out_of_place_rewrite, rebinding_risk, saved_name, stale_timeline, use_phrase

RULE = Rule(
    code="GG201",
    name="saved-tensor-modified",
    family="saved",
    fix_kind="safe/unsafe",
    summary={
        "en": "A tensor saved for backward is modified in place before backward runs.",
        "zh": "为反向传播保存的张量在反向传播之前被原地修改。",
    },
    what={
        "en": "Flags in-place writes (`y.add_(1)`, `y += 1`, `y.detach().zero_()`, writes through views) on a tensor that an "
              "earlier op saved for backward — inputs saved by `sin`, `log`, `mul`, `matmul`, `pow`, ...; outputs saved by "
              "`exp`, `sigmoid`, `tanh`, `softmax`, `relu`, ... (the op table decides) — when a later `backward()` "
              "(or the caller, for a returned value) needs that graph.",
        "zh": "检查对已被前面的运算为反向传播保存的张量做原地写入（`y.add_(1)`、`y += 1`、`y.detach().zero_()`、通过视图写入），"
              "且之后的 `backward()`（或返回值的调用方）需要这张计算图。保存输入的运算如 `sin`、`log`、`mul`、`matmul`、`pow`；"
              "保存输出的运算如 `exp`、`sigmoid`、`tanh`、`softmax`、`relu`（由算子表决定）。",
    },
    why={
        "en": "The backward formula needs the value the op saw. The write changes it, torch notices through the version "
              "counter at backward — far from the line that caused it — and raises.",
        "zh": "反向传播公式需要运算当时看到的值。原地写入改变了它；torch 在反向传播时通过版本计数器发现这一点——离出问题的那一行很远——然后报错。",
    },
    autograd={
        "en": "A saved tensor records the version of its counter (`t._version`) when saved. Views and `detach()` share the "
              "counter, so writing them counts too; `.data` does not (see GG501). `clone()` makes a new counter.",
        "zh": "保存张量时会记录其版本计数器（`t._version`）的值。视图和 `detach()` 共享计数器，写它们也算；`.data` 不共享（见 GG501）。`clone()` 会新建计数器。",
    },
    fix_safety={
        "en": "A statement `y.add_(1)` / `y += 1` on a non-leaf name becomes `y = y.add(1)` / `y = y + 1` (safe when "
              "no other reference can see the difference: a local bound in the same scope by the producing op that "
              "never escaped; unsafe, with the reason in the title, when the write went through an alias, a loop "
              "variable, a container element, an attribute, a parameter or a name passed on before the write; a second "
              "target of a chained assignment `p = q = ...`; `p.retain_grad()` or an attribute set on `p`; `max`, "
              "`min` or `sorted` of it, which return the tensor itself). "
              "Otherwise a copy is made where the tensor is saved, never changing a value (safe): the saved argument "
              "is read through `.clone()` at the op that saved it (also a helper's own state that it saves and, at "
              "its next call, updates in place: `torch.sum(state.clone() * w)`); an output the op saved is copied "
              "where it is made (`p = torch.sigmoid(x).clone()`), or, for one output of a tuple-returning op "
              "unpacked into a name, on the next line (`d, V = torch.linalg.eigh(M)` then `d = d.clone()`); the "
              "write then changes the copy. The tensor an in-place op writes (`t` of `p = t.sigmoid_()`) is never "
              "copied at that op; its output copied is unsafe, as later writes through the copy no longer reach `t`. "
              "A `.detach()` alias written in place becomes `.detach().clone()` "
              "(unsafe: the tensor it was detached from is no longer changed).",
        "zh": "对非叶子名字的语句 `y.add_(1)` / `y += 1` 改为 `y = y.add(1)` / `y = y + 1`（没有其他引用能看出差别时为安全"
              "修复：由产生它的运算在同一作用域绑定、从未逃逸的局部名字；若写入经过别名、循环变量、容器元素、属性、参数，"
              "或在写入之前被传出的名字；链式赋值 `p = q = ...` 的另一个目标；`p.retain_grad()` 或给 `p` 设置属性；"
              "`max`、`min`、`sorted` 作用于它时返回张量本身，则为不安全修复，标题写明原因）。否则在保存处制作副本，不改变任何值（安全修复）："
              "在保存它的运算处改为读取 `.clone()`（也包括辅助函数保存、并在下一次调用时原地更新的自身状态："
              "`torch.sum(state.clone() * w)`）；运算保存的输出在产生处复制（`p = torch.sigmoid(x).clone()`），"
              "若是返回元组的运算的某个输出被解包到一个名字，则在下一行复制（`d, V = torch.linalg.eigh(M)` 之后加 "
              "`d = d.clone()`）；写入随后修改的是副本。原地运算所写的张量（`p = t.sigmoid_()` 中的 `t`）"
              "从不在该运算处复制；复制它的输出是不安全修复，因为之后经由副本的写入不再到达 `t`。被原地写入的 `.detach()` 别名改为 `.detach().clone()`"
              "（不安全：不再修改它所分离出的张量）。",
    },
    runtime_error=STALE_ERROR,
    match=STALE_MATCH,
)


def claims(problem) -> bool:
    w = problem.write
    return problem.kind == "stale-save" and w.kind not in ("step", "inplace_module", "inplace_arg") and not (
        w.kind == "setitem" and problem.save.via_index)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("stale-save"):
        if not claims(problem):
            continue
        save, write, hint = problem.save, problem.write, problem.top
        fix = None
        rewrite = out_of_place_rewrite(ctx, write, hint)
        risk = rebinding_risk(ctx, write, hint, rewrite[1]) if rewrite else None
        cloned = clone_argument(ctx, save, write) if not rewrite or risk else None
        copied_output = clone_output(ctx, save) if (not rewrite or risk) and not cloned else None
        unpacked = clone_unpacked_output(ctx, save) if (not rewrite or risk) and not cloned and not copied_output \
            else None
        detached = _copy_at_detach(ctx, write) if write.via == "detach" else None
        if detached:
            fix = detached
        elif rewrite and risk is None:
            fix = make_fix("safe", ctx.t(f"Rewrite as `{rewrite[1]}`", f"改写为 `{rewrite[1]}`"), rewrite[0])
        elif cloned:
            fix = make_fix("safe", ctx.t(f"Let `{save.op}` save a copy: {cloned[1]}", f"让 `{save.op}` 保存副本：{cloned[1]}"),
                           *cloned[0])
        elif copied_output and (copy_risk := copied_output_risk(ctx, save)) is None:
            fix = make_fix("safe", ctx.t(f"Write a copy of what `{save.op}` saved: {copied_output[1]}",
                                         f"改为写入 `{save.op}` 所保存张量的副本：{copied_output[1]}"), *copied_output[0])
        elif copied_output and not rewrite:
            fix = make_fix("unsafe", ctx.t(f"Write a copy of what `{save.op}` saved: {copied_output[1]} (unsafe: {copy_risk})",
                                           f"改为写入 `{save.op}` 所保存张量的副本：{copied_output[1]}（不安全：{copy_risk}）"),
                           *copied_output[0])
        elif unpacked:
            fix = make_fix("safe", ctx.t(f"Write a copy of what `{save.op}` saved: add `{unpacked[1]}` after line "
                                         f"{ctx.line(save.node, save.top or hint)}",
                                         f"改为写入 `{save.op}` 所保存张量的副本：在第 {ctx.line(save.node, save.top or hint)} "
                                         f"行之后加上 `{unpacked[1]}`"), unpacked[0])
        elif rewrite:
            fix = make_fix("unsafe", ctx.t(f"Rewrite as `{rewrite[1]}` (unsafe: {risk})",
                                           f"改写为 `{rewrite[1]}`（不安全：{risk}）"), rewrite[0])
        s_line = ctx.line(save.node, save.top or hint)
        message = ctx.t(
            f"{saved_name(save, ctx, write)} was saved for backward by `{save.op}` on line {s_line}; this in-place `{write.op}` "
            f"changes it, so {use_phrase(ctx, problem)} will fail.",
            f"{saved_name(save, ctx, write)} 在第 {s_line} 行被 `{save.op}` 保存用于反向传播；这里的原地操作 `{write.op}` 修改了它，"
            f"因此{use_phrase(ctx, problem)}会失败。")
        related = [ctx.related(save.node, save.top or hint, ctx.t(f"saved for backward by `{save.op}` here",
                                                                  f"在这里被 `{save.op}` 保存用于反向传播"))]
        if problem.use is not None:
            related.append(ctx.related(problem.use, hint, ctx.t("backward needs the saved value here",
                                                                "反向传播在这里需要保存的值")))
        f = ctx.finding(RULE, write.node, write.top or hint, message, related=related, fix=fix,
                        explanation=stale_timeline(ctx, problem), runtime_error=stale_error(problem.save, problem.write, ctx, problem))
        if f:
            yield f


def _copy_at_detach(ctx, write):
    """`c = out.detach()` then `c.zero_()`: `detach()` says the author wanted a tensor apart from the graph, but
    it shares `out`'s memory and version counter. Make it a copy: `c = out.detach().clone()`."""
    receiver = written_name(write)
    if receiver is None:
        return None
    facts = ctx.facts
    alias = facts.name_values.get(id(receiver)) or facts.expr_values.get(id(receiver))
    origin = alias.origin if alias is not None else None
    if not (isinstance(origin, cst.Call) and isinstance(origin.func, cst.Attribute) and origin.func.attr.value == "detach"):
        return None
    _, top = statement_of(ctx, origin, write.top)
    copied = fixes.with_method(ctx, origin, top, "clone")
    if copied is None:
        return None
    name = receiver.value
    return make_fix("unsafe", ctx.t(
        f"Make `{name}` a copy: `{copied[1]}` (unsafe: writes through `{name}` no longer change the tensor it was "
        "detached from)",
        f"让 `{name}` 成为副本：`{copied[1]}`（不安全：经 `{name}` 的写入不再修改它所分离出的张量）"), copied[0])
