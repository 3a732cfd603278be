"""GG103: in-place write on an output of unbind/split/chunk (multi-output views)."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from .. import fixes
from ..findings import Edit
from ..source import Span
from ._common import (MULTI_VIEW_TAIL, first_of_chains, indirect_inplace_flag, inplace_false, inplace_flag_risk, multi_view_error, name_of, out_of_place_rewrite,
                      value_dropped, written_name)

RULE = Rule(
    code="GG103",
    name="multi-output-view-inplace",
    family="views",
    fix_kind="safe/unsafe",
    summary={
        "en": "In-place write on a view returned by `unbind`, `split` or `chunk` of a tensor that requires grad.",
        "zh": "对 `unbind`、`split`、`chunk` 返回的视图（其基张量需要梯度）做原地操作。",
    },
    what={
        "en": "Flags `a.mul_(2)`, `a += 1`, `a[0] = 0` where `a` came from `y.unbind()`, `y.split(n)`, `y.chunk(n)` "
              "(or from iterating `y`), and `y` requires grad, in grad mode.",
        "zh": "检查在启用梯度时对来自 `y.unbind()`、`y.split(n)`、`y.chunk(n)`（或遍历 `y`）的 `a` 做 `a.mul_(2)`、"
              "`a += 1`、`a[0] = 0` 等原地操作，且 `y` 需要梯度。",
    },
    why={
        "en": "These functions return several views of one base. Autograd cannot rebase several views' histories at once, "
              "so it forbids in-place writes on them and raises immediately.",
        "zh": "这些函数返回同一基张量的多个视图。autograd 无法同时改写多个视图的历史，所以禁止对它们原地写入，并立刻报错。",
    },
    autograd={
        "en": "Each piece shares `y`'s storage and version counter. Under `torch.no_grad()` the write is allowed, but any "
              "later backward through the pieces fails (`... its base or another view of its base has been modified inplace`).",
        "zh": "每一块都与 `y` 共享存储和版本计数器。在 `torch.no_grad()` 中写入是允许的，但之后经过这些块的反向传播会失败"
              "（`... its base or another view of its base has been modified inplace`）。",
    },
    fix_safety={
        "en": "Rows of a tensor iterated by a loop (`for t in y:`, `zip(y, ...)`) are taken one at a time instead, "
              "`(v[i] for v in [y] for i in range(len(v)))`: each is a single view, so the write is allowed and still "
              "reaches `y`, as the loop meant (safe; not offered when `y` is a leaf that requires grad, where the "
              "write would still raise). Otherwise `a.mul_(2)` becomes `a = a.mul(2)`, a value-producing "
              "`a.clamp_(...)` becomes `a.clamp(...)`, and an `inplace=True` activation gets `inplace=False` — "
              "unsafe: `y` (the base) is no longer modified.",
        "zh": "被循环遍历的张量的各行（`for t in y:`、`zip(y, ...)`）改为逐个取出：`(v[i] for v in [y] for i in range(len(v)))`，"
              "每一行都是单个视图，所以允许原地写入，而且写入仍会作用到 `y`，与循环的本意一致（安全修复；若 `y` 是需要梯度的"
              "叶子张量则不提供，因为写入仍会报错）。否则 `a.mul_(2)` 改为 `a = a.mul(2)`，作为值使用的 `a.clamp_(...)` 改为 "
              "`a.clamp(...)`，`inplace=True` 的激活改为 `inplace=False`——不安全修复：基张量 `y` 不再被修改。",
    },
    match="is a view and is being modified inplace. This view is the output of a function that returns multiple views.",
    runtime_error=f"Output <i> of <op> {MULTI_VIEW_TAIL}",
)


@RULE.checker
def check(ctx):
    problems, _ = first_of_chains(list(ctx.problems("multi-view-write")))  # torch raises at the chain's first
    for problem in problems:
        write, tensor, hint = problem.write, problem.tensor, problem.top
        name = name_of(tensor)
        fix = _fix(ctx, write, tensor, hint)
        split = tensor  # a view of a piece (`q.reshape(...)`) names the line that split the tensor
        while split.view_of is not None and split.view_of.view_kind == "multi" and split.view_of.origin is not None:
            split = split.view_of
        base_line = ctx.line(split.origin, hint) if split.origin is not None else 0
        message = ctx.t(
            f"{name} is one of several views returned on line {base_line} (unbind/split/chunk); the in-place `{write.op}` raises at once. Use an out-of-place op.",
            f"{name} 是第 {base_line} 行返回的多个视图之一（unbind/split/chunk）；原地操作 `{write.op}` 会立刻报错。请改用非原地操作。")
        explanation = ctx.t(
            f"1. Line {base_line} splits a tensor that requires grad into views that share its storage and version counter.\n"
            f"2. Line {ctx.line(write.node, hint)} modifies one of them in place (`{write.op}`).\n"
            "3. torch raises there: outputs of functions returning several views cannot be modified in place.",
            f"1. 第 {base_line} 行把需要梯度的张量拆成共享存储和版本计数器的多个视图。\n"
            f"2. 第 {ctx.line(write.node, hint)} 行原地修改其中之一（`{write.op}`）。\n"
            "3. torch 在这里报错：返回多个视图的函数的输出不能被原地修改。")
        f = ctx.finding(RULE, write.stmt if write.kind == "setitem" else write.node, hint, message, fix=fix,
                        explanation=explanation, runtime_error=multi_view_error(ctx, tensor),
                        related=[ctx.related(split.origin, hint, ctx.t("views created here", "视图在这里创建"))] if split.origin is not None else [])
        if f:
            yield f


def _fix(ctx, write, tensor, hint):
    rows = _iterated_rows(ctx, tensor, hint)
    if rows is not None:
        edit, new = rows
        return make_fix("safe", ctx.t(f"Take the rows one at a time: `{new}` (each is a single view; the write still "
                                      "reaches the tensor)",
                                      f"逐个取出各行：`{new}`（每一行都是单个视图；写入仍作用到原张量）"), edit)
    if write.kind in ("inplace_arg", "inplace_module"):
        flag = inplace_false(ctx, write, hint)
        if flag is None:
            indirect = indirect_inplace_flag(ctx, write)
            return make_fix("unsafe", ctx.t(f"Set {indirect[1]} (unsafe: the base tensor is no longer modified)",
                                            f"改为 {indirect[1]}（不安全：基张量不再被修改）"), indirect[0]) if indirect else None
        risk = inplace_flag_risk(ctx, write, hint)
        unsafe = ctx.t(f" (unsafe: {risk})", f"（不安全：{risk}）") if risk else ""
        text = flag[1] and ctx.t(f"Rewrite as `{flag[1]}`", f"改写为 `{flag[1]}`")
        return make_fix("safe" if risk is None else "unsafe",
                        (text or ctx.t("Use `inplace=False`", "改为 `inplace=False`")) + unsafe, flag[0])
    copied = _copy_loop_item(ctx, write, hint)
    if copied is not None:
        edit, line = copied
        return make_fix("unsafe", ctx.t(
            f"Add `{line}` at the top of the loop (unsafe: the tensor it was split from is no longer modified; "
            "the item and what is built from it are)",
            f"在循环开头加上 `{line}`（不安全：不再修改被拆分的张量；修改的是该项及由它构建的值）"), edit)
    rewrite = out_of_place_rewrite(ctx, write, hint)
    if rewrite:
        return make_fix("unsafe", ctx.t(f"Rewrite as `{rewrite[1]}` (unsafe: the base tensor is no longer modified)",
                                        f"改写为 `{rewrite[1]}`（不安全：基张量不再被修改）"), rewrite[0])
    if write.kind == "method" and isinstance(write.node, cst.Call) and not value_dropped(write):
        dropped = fixes.drop_inplace_suffix(ctx, write.node, write.top or hint)
        if dropped:
            return make_fix("unsafe", ctx.t(f"Use `{dropped[1]}` (unsafe: the tensor and its base are no longer modified)",
                                            f"改用 `{dropped[1]}`（不安全：该张量及其基张量不再被修改）"), dropped[0])
    return None


_SPLITTERS = {"unbind", "split", "chunk", "tensor_split", "split_with_sizes", "hsplit", "vsplit", "dsplit"}


def _copy_loop_item(ctx, write, hint):
    """`for i, img in enumerate(images.unbind(0)): patch = img[:, a:b]; patch.mul_(s); out.append(img)`: the loop
    item is one of several views, so no write through it is allowed; a copy of it at the top of the body
    (`img = img.clone()`) is an ordinary tensor, and the write then changes the copy and what the loop builds
    from it. Only when the written name is the item, or is bound in the body from an index or view of it."""
    from ..fixes_order import _binds, _parents, _statement_of, _tree_of

    tree = _tree_of(ctx, [write.stmt], write.top or hint)
    if tree is None:
        return None
    parents = _parents(tree)
    stmt = _statement_of(write.stmt, parents) or write.stmt
    loop = parents.get(id(stmt))
    while loop is not None and not isinstance(loop, cst.For):
        loop = parents.get(id(loop))
    if loop is None or not isinstance(loop.body, cst.IndentedBlock):
        return None
    splits = [n for n in _walk(loop.iter) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
              and n.func.attr.value in _SPLITTERS]
    if len(splits) != 1:
        return None
    written = written_name(write)
    if written is None:
        return None
    items = _binds(loop.target)
    item = written.value if written.value in items else None
    if item is None:  # `patch = img[...]` in the body, then `patch.mul_(...)`
        for other in loop.body.body:
            if other is stmt:
                break
            small = other.body[0] if isinstance(other, cst.SimpleStatementLine) and len(other.body) == 1 else None
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and small.targets[0].target.value == written.value:
                base = small.value
                while True:  # `img[:, a:b]`, `img.narrow(...)[0]`: down to the name it indexes or views
                    if isinstance(base, cst.Subscript):
                        base = base.value
                    elif isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) \
                            and base.func.attr.value in _VIEWS:
                        base = base.func.value
                    else:
                        break
                item = base.value if isinstance(base, cst.Name) and base.value in items else None
        if item is None:
            return None
    first = ctx.span(loop.body.body[0], write.top or hint)
    if first is None:
        return None
    indent = ctx.source.line_text(first.start_line)[:first.start_col]
    if indent.strip():
        return None
    line = f"{item} = {item}.clone()"
    return Edit(Span(first.start_line, 0, first.start_line, 0), f"{indent}{line}\n"), line


def _iterated_by_a_loop(ctx, origin, hint) -> bool:
    """`origin` is what a `for` (or a comprehension) walks: its `iter`, directly or as `zip(...)`/`enumerate(...)`."""
    from ..fixes_order import _tree_of

    tree = _tree_of(ctx, [origin], hint)
    for node in _walk(tree) if tree is not None else ():
        if isinstance(node, (cst.For, cst.CompFor)):
            walked = node.iter
            if walked is origin:
                return True
            if isinstance(walked, cst.Call) and isinstance(walked.func, cst.Name) and walked.func.value in ("zip", "enumerate") \
                    and any(a.value is origin for a in walked.args):
                return True
    return False


_VIEWS = {"narrow", "view", "reshape", "select", "unsqueeze", "squeeze", "transpose", "permute", "t", "flatten"}


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _iterated_rows(ctx, tensor, hint):
    """The tensor a loop iterates (`for t in y:`, `zip(y, ...)`), rewritten to yield single-view rows."""
    origin, base = tensor.origin, tensor.view_of
    if origin is None or base is None:
        return None
    if base.is_leaf is not False and base.requires_grad is not False:
        return None  # a view of a leaf that requires grad: writing it would still raise (GG102)
    if not _iterated_by_a_loop(ctx, origin, hint):
        return None  # `patch = img[:, a:b]`: a view of a loop item, not what the loop walks
    values = ctx.facts.expr_values
    candidates = [a.value for a in origin.args if a.keyword is None and not a.star] if (
        isinstance(origin, cst.Call) and isinstance(origin.func, cst.Name) and origin.func.value == "zip") else [origin]
    for expr in candidates:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SPLITTERS:
            continue
        made = values.get(id(expr))
        if made is not None and made.counter is base.counter:
            return fixes.rows_as_select_views(ctx, expr, hint)
    return None
