"""GG504: a custom `autograd.Function.forward` modifies an input in place without `ctx.mark_dirty` (silently wrong
gradients)."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from ..findings import Edit
from ..source import Span
from ._grad_writes import (Aliases, body_writes, dotted, function_classes, inherited_method, op_text, parameters,
                           top_statements)

RULE = Rule(
    code="GG504",
    name="function-forward-inplace-undirty",
    family="silent",
    severity="warning",
    fix_kind="unsafe",
    summary={
        "en": "A custom `autograd.Function.forward` modifies an input in place without `ctx.mark_dirty(...)`: autograd "
              "does not know the input changed, so gradients through it are silently wrong.",
        "zh": "自定义 `autograd.Function.forward` 原地修改了输入，却没有调用 `ctx.mark_dirty(...)`：autograd 不知道输入已改变，"
              "经过它的梯度会悄悄算错。",
    },
    what={
        "en": "Flags an in-place write (`x.mul_(2)`, `x += 1`, `x[i] = v`, `out=x`) in `forward` on one of its inputs "
              "(followed through views and `.data`) when no `ctx.mark_dirty(x)` names it, and the input is returned by "
              "`forward` or a call `Fn.apply(...)` in the file passes a tensor that requires grad there. A forward that "
              "copies first (`x = x.clone()`) or writes an input that does not require grad (a running statistic) is "
              "not flagged.",
        "zh": "当 `forward` 对自己的某个输入做原地写入（`x.mul_(2)`、`x += 1`、`x[i] = v`、`out=x`，经由视图和 `.data` 追踪），"
              "没有任何 `ctx.mark_dirty(x)` 标记它，并且该输入被 `forward` 返回，或文件中某个 `Fn.apply(...)` 在这个位置传入了"
              "需要梯度的张量时报告。先复制（`x = x.clone()`）再写入、或写入不需要梯度的输入（例如运行统计量）不会被报告。",
    },
    why={
        "en": "`forward` runs with recording off, so torch sees neither the write nor its effect unless `mark_dirty` "
              "declares it. The input keeps its old `grad_fn`: code that uses it after `apply` gets gradients as if it "
              "still held the old values. A leaf that requires grad is even modified silently, where torch otherwise "
              "refuses (with `mark_dirty` it raises \"a leaf Variable that requires grad has been used in an in-place "
              "operation.\").",
        "zh": "`forward` 在不记录计算图的状态下运行，除非 `mark_dirty` 声明，torch 既看不到这次写入也看不到它的影响。输入保留旧的 "
              "`grad_fn`：`apply` 之后使用它的代码得到的梯度就像它仍是旧值一样。需要梯度的叶子张量甚至会被悄悄修改，而 torch "
              "平时会拒绝（加上 `mark_dirty` 后会报错 `a leaf Variable that requires grad has been used in an in-place "
              "operation.`）。",
    },
    autograd={
        "en": "Checked on torch 2.13 (`autograd-facts-scripts/function_inplace.py`): `forward` doing `x.mul_(2); return "
              "x` on `h = 3 * w`, then `(y * h).sum().backward()`, gives `w.grad == [54, 108]` without `mark_dirty` and "
              "the true `[72, 144]` with it; a forward that writes `x` and returns a new tensor gives the same wrong "
              "`[54, 108]`. On a leaf `w` without `mark_dirty` the values of `w` change and no error is raised. "
              "`mark_dirty` on an input that is not returned raises \"Some elements marked as dirty during the forward "
              "method were not returned as output.\"",
        "zh": "在 torch 2.13 上验证（`autograd-facts-scripts/function_inplace.py`）：对 `h = 3 * w`，`forward` 执行 "
              "`x.mul_(2); return x`，再 `(y * h).sum().backward()`，没有 `mark_dirty` 时 `w.grad == [54, 108]`，有它时是正确的 "
              "`[72, 144]`；写入 `x` 但返回新张量的 forward 同样得到错误的 `[54, 108]`。对叶子张量 `w`，没有 `mark_dirty` 时 `w` "
              "的值被改变且不报错。对未返回的输入调用 `mark_dirty` 会报错 `Some elements marked as dirty during the forward "
              "method were not returned as output.`",
    },
    fix_safety={
        "en": "When `forward` returns the input it writes, `ctx.mark_dirty(x)` is added after the write (unsafe: "
              "gradients through the input change to the true ones, and a leaf that requires grad now raises instead "
              "of being modified silently). When the input is not returned there is no automatic fix: `mark_dirty` "
              "would raise; copy it first (`x = x.clone()`) if the caller does not need the change, or return it and "
              "mark it dirty.",
        "zh": "当 `forward` 返回它写入的那个输入时，在写入之后加上 `ctx.mark_dirty(x)`（不安全修复：经过该输入的梯度变为正确值，"
              "需要梯度的叶子张量此时会报错，而不再被悄悄修改）。输入没有被返回时不提供自动修复：`mark_dirty` 会报错；如果调用方"
              "不需要这次修改，请先复制（`x = x.clone()`），否则返回它并标记为 dirty。",
    },
    runtime_error="",
    references=("https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.mark_dirty.html",),
)


def _apply_sites(ctx, cls_name: str):
    """The argument lists of `Cls.apply(...)` calls in the file."""
    sites = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "apply" and \
                    dotted(node.func.value).split(".")[-1] == cls_name:
                sites.append(node)

    for top in top_statements(ctx, (cls_name,)):
        top.visit(Finder())
    return sites


def _requires_grad_at(ctx, sites, index: int):
    """True if a call passes a tensor that requires grad at `index`; False if every known call passes one that
    does not; None when unknown."""
    seen = []
    for call in sites:
        args = [a for a in call.args if a.keyword is None]
        if any(a.star for a in args[:index + 1]) or index >= len(args):
            seen.append(None)
            continue
        node = args[index].value
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Tuple, cst.List)):
            seen.append(False)  # `count += 1` on a number is no tensor write
            continue
        value = ctx.facts.expr_values.get(id(node)) or ctx.facts.name_values.get(id(node))
        seen.append(getattr(value, "requires_grad", None))
    if True in seen:
        return True
    if seen and all(s is False for s in seen):
        return False
    return None


def _returned_names(fn) -> set:
    names = set()
    stack = list(fn.body.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return) and small.value is not None:
                    value = small.value
                    elements = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
                    names |= {e.value for e in elements if isinstance(e, cst.Name)}
        elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            for child in stmt.children:
                if isinstance(child, cst.BaseSuite):
                    stack.extend(child.body)
                elif isinstance(child, (cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.Finally)):
                    stack.append(child)
    return names


def _dirty_names(fn, ctx_name: str):
    """Names passed to `ctx.mark_dirty(...)`; None when something other than plain names is passed."""
    names = set()
    unknown = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            nonlocal unknown
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "mark_dirty":
                for arg in node.args:
                    if isinstance(arg.value, cst.Name) and not arg.star:
                        names.add(arg.value.value)
                    else:
                        unknown = True

    fn.visit(Finder())
    return None if unknown else names


def _mark_dirty_edit(ctx, write, ctx_name, name, forward, top):
    """`ctx.mark_dirty(x)` on a new line after the write, when the write is a statement of forward's own body."""
    stmt = write.stmt
    if stmt not in forward.body.body or not isinstance(stmt, cst.SimpleStatementLine):
        return None
    span = ctx.span(stmt, top)
    if span is None:
        return None
    line_text = ctx.source.line_text(span.start_line)
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    if indent.strip(" \t"):
        return None
    end = len(ctx.source.line_text(span.end_line))
    text = f"{ctx_name}.mark_dirty({name})"
    return Edit(Span(span.end_line, end, span.end_line, end), f"\n{indent}{text}"), text


@RULE.checker
def check(ctx):
    classes = function_classes(ctx)
    entries = {id(entry[0]): entry for entry in classes}
    for entry in classes:
        cls, methods, top, _bases = entry
        forward = methods.get("forward")
        if forward is None:
            continue
        setup = inherited_method(entry, "setup_context", entries)
        params = parameters(forward)
        if setup is not None:
            if _dirty_names(setup, "") != set():
                continue  # mark_dirty decided in setup_context from `inputs`: not followed
            ctx_name, inputs = None, params
        else:
            if not params:
                continue
            ctx_name, inputs = params[0], params[1:]
        dirty = _dirty_names(forward, ctx_name or "")
        if dirty is None:
            continue
        aliases = Aliases()
        for param in inputs:
            if param.startswith("*"):
                aliases.tuples.add(param[1:])
            else:
                aliases.tensors.add(param)
                aliases.roots.add(param)
        writes = body_writes(forward.body.body, aliases)
        if not writes:
            continue
        returned = _returned_names(forward)
        sites = None
        done = set()
        for write in writes:
            name = write.name
            if name not in inputs or name in dirty or (dirty and not write.direct):
                continue  # an alias of some input, with some input marked dirty: which one is not followed
            index = inputs.index(name)
            if sites is None:
                sites = _apply_sites(ctx, cls.name.value)
            requires_grad = _requires_grad_at(ctx, sites, index)
            if requires_grad is False or (name not in returned and requires_grad is not True):
                continue
            if name in done:
                continue
            done.add(name)
            yield from _report(ctx, cls, forward, write, name, ctx_name, name in returned, top)


def _report(ctx, cls, forward, write, name, ctx_name, returned, top):
    op = op_text(write)
    cname = cls.name.value
    if returned:
        tail_en, tail_zh = (f"Declare it with `{ctx_name or 'ctx'}.mark_dirty({name})`.",
                            f"请用 `{ctx_name or 'ctx'}.mark_dirty({name})` 声明它。")
    else:
        tail_en, tail_zh = (f"Write a copy (`{name} = {name}.clone()` first), or return `{name}` and mark it dirty.",
                            f"请写入副本（先 `{name} = {name}.clone()`），或者返回 `{name}` 并把它标记为 dirty。")
    message = ctx.t(
        f"`{op}` modifies the input `{name}` of `{cname}.forward` in place without `mark_dirty`: autograd does not "
        f"know `{name}` changed, so gradients through code that uses it after `{cname}.apply(...)` are silently "
        f"wrong (and a parameter passed here is modified without torch's leaf check). {tail_en}",
        f"`{op}` 原地修改了 `{cname}.forward` 的输入 `{name}`，却没有 `mark_dirty`：autograd 不知道 `{name}` 已改变，"
        f"`{cname}.apply(...)` 之后使用它的代码得到的梯度会悄悄算错（传入的参数也会绕过 torch 对叶子张量的检查被修改）。{tail_zh}")
    explanation = ctx.t(
        f"1. `{cname}.forward` runs with recording off; line {ctx.line(write.node, top)} writes `{name}` with `{op}`.\n"
        f"2. Without `mark_dirty`, `{name}` keeps its old `grad_fn`: the graph still describes the values before the write.\n"
        f"3. Backward through later uses of `{name}` differentiates the old computation: a wrong gradient, no error.",
        f"1. `{cname}.forward` 在不记录计算图的状态下运行；第 {ctx.line(write.node, top)} 行用 `{op}` 写入了 `{name}`。\n"
        f"2. 没有 `mark_dirty` 时，`{name}` 保留旧的 `grad_fn`：计算图描述的仍是写入之前的值。\n"
        f"3. 之后经过 `{name}` 的反向传播按旧的计算求导：梯度错误，且不报错。")
    fix = None
    if returned and ctx_name:
        built = _mark_dirty_edit(ctx, write, ctx_name, name, forward, top)
        if built is not None:
            fix = make_fix("unsafe", ctx.t(
                f"Add `{built[1]}` (unsafe: gradients through `{name}` become the true ones, and a leaf that requires "
                "grad now raises)",
                f"加上 `{built[1]}`（不安全：经过 `{name}` 的梯度变为正确值，需要梯度的叶子张量此时会报错）"), built[0])
    finding = ctx.finding(RULE, write.node, top, message, fix=fix, explanation=explanation,
                          related=[ctx.related(forward.name, top, ctx.t("forward defined here", "forward 在这里定义"))])
    if finding:
        yield finding
