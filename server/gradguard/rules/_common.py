"""Wording and fix helpers shared by several rules (the rules themselves stay one file each)."""
from __future__ import annotations

import libcst as cst

from .. import fixes
from ..findings import Edit
from . import RuleContext


def name_of(tensor, fallback: str = "the tensor") -> str:
    return f"`{tensor.name}`" if tensor is not None and tensor.name else fallback


def created_line(ctx: RuleContext, tensor, hint) -> int:
    if tensor is None or tensor.origin is None:
        return 0
    return ctx.line(tensor.origin, hint)


def use_phrase(ctx: RuleContext, problem) -> str:
    """'`backward()` on line 7' or 'the caller's `backward()` (the value is returned on line 9)'."""
    if problem.use is None:
        return ctx.t("backward()", "backward()")
    line = ctx.line(problem.use, problem.top)
    if isinstance(problem.use, cst.Return):
        return ctx.t(f"the caller's `backward()` (the value is returned on line {line})",
                     f"调用方的 `backward()`（该值在第 {line} 行返回）")
    return ctx.t(f"`backward()` on line {line}", f"第 {line} 行的 `backward()`")


# In-place methods whose out-of-place twin exists on torch.Tensor (`fill_`, `zero_`, `uniform_` ... have none).
OUT_OF_PLACE = set(
    "add sub mul div true_divide floor_divide pow clamp clamp_min clamp_max clip abs neg exp log log1p log2 log10 "
    "expm1 sqrt rsqrt sigmoid tanh relu sin cos tan atan asin acos sinh cosh erf erfc floor ceil round trunc frac "
    "sign masked_fill masked_scatter index_add index_fill index_copy index_put scatter scatter_add lerp addcmul "
    "addcdiv addmm addmv baddbmm fmod remainder reciprocal square logit nan_to_num hypot atan2 t transpose squeeze "
    "unsqueeze tril triu renorm".split()
)


def out_of_place_rewrite(ctx: RuleContext, write, hint) -> tuple[Edit, str] | None:
    """`y.add_(1)` -> `y = y.add(1)`; `y += 1` -> `y = y + 1`, for a statement writing a plain name (see fixes.py)."""
    return fixes.out_of_place(ctx, write, hint, OUT_OF_PLACE)


def clone_argument(ctx: RuleContext, save) -> tuple[Edit, str] | None:
    """At the call that saved a tensor, read it through `.clone()`: `torch.sin(x[i])` -> `torch.sin(x[i].clone())`."""
    call = save.node
    if not isinstance(call, (cst.Call, cst.BinaryOperation)):
        return None
    target_counter = save.counter
    facts = ctx.facts
    candidates = []
    if isinstance(call, cst.BinaryOperation):
        candidates = [call.left, call.right]
    elif isinstance(call, cst.Call):
        if isinstance(call.func, cst.Attribute):
            candidates.append(call.func.value)
        candidates += [a.value for a in call.args if a.keyword is None]
    for expr in candidates:
        if isinstance(expr, (cst.Subscript, cst.Name, cst.Attribute)):
            tensor = facts.expr_values.get(id(expr))
            if tensor is not None and tensor.counter is target_counter:
                return fixes.with_method(ctx, expr, save.top, "clone")
    return None


def set_inplace_false(ctx: RuleContext, call, hint) -> Edit | None:
    """`nn.ReLU(inplace=True)` / `F.relu(x, inplace=True)` / `nn.ReLU(True)` -> inplace=False."""
    if not isinstance(call, cst.Call):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace":
            return ctx.replace_node(arg.value, hint, "False")
    positional = [a for a in call.args if a.keyword is None]
    trues = [a for a in positional if isinstance(a.value, cst.Name) and a.value.value == "True"]
    if len(trues) == 1:
        return ctx.replace_node(trues[0].value, hint, "False")
    return None


STALE_ERROR = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
               "[torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0 instead. "
               "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
               "torch.autograd.set_detect_anomaly(True, check_nan=False).")
STALE_MATCH = "one of the variables needed for gradient computation has been modified by an inplace operation"


def saved_name(save, ctx: RuleContext | None = None) -> str:
    if save.what == "parameters":
        return save.tensor_name or "the parameters"
    if save.tensor_name:
        return f"`{save.tensor_name}`"
    if save.tensor is not None and getattr(save.tensor, "name", "") and save.what != "parameters":
        return f"`{save.tensor.name}`"
    if ctx is not None and save.expr is not None:
        return f"`{_short(ctx.code(save.expr))}`"
    return "a tensor" if ctx is None or ctx.lang != "zh" else "一个张量"


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


def write_desc(ctx: RuleContext, write) -> str:
    """The write as the user wrote it: `x[i+1] = …`, `w += 1`, `y.add_(1)`, `opt.step()`."""
    if write.kind == "setitem":
        return f"{_short(ctx.code(write.node))} = …"
    if write.kind in ("augassign", "method"):
        return _short(ctx.code(write.node))
    return write.op


def version(save, n: int) -> str:
    """A version number as torch would print it when the counter started in this code; else relative to v."""
    if save.counter.known_start:
        return str(n)
    return "v" if n == save.version else f"v+{n - save.version}"


def stale_timeline(ctx: RuleContext, problem) -> str:
    """The version story of a stale save, with this code's own lines."""
    save, write, hint = problem.save, problem.write, problem.top
    s_line = ctx.line(save.node, save.top or hint)
    w_line = ctx.line(write.node, write.top or hint)
    what = {"input": ctx.t("its input", "它的输入"), "output": ctx.t("its output", "它的输出"),
            "parameters": ctx.t("the layer's weights", "该层的权重")}.get(save.what, save.what)
    via = {"detach": ctx.t(" through a `.detach()` alias (detach shares the version counter)",
                           "（通过 `.detach()` 得到的别名：detach 共享版本计数器）"),
           "view": ctx.t(" through a view (views share the version counter)", "（通过视图：视图共享版本计数器）")}.get(write.via, "")
    iteration = ""
    if save.loop is not None and write.seq > save.seq and write.version_after > save.version + 1:
        iteration = ctx.t(" (in a later loop iteration)", "（在之后的循环迭代中）")
    name = saved_name(save, ctx)
    if save.what == "parameters":
        name = ""
    saved_v, now_v = version(save, save.version), version(save, write.version_after)
    use = use_phrase(ctx, problem)
    if problem.carry is not None:
        use += ctx.t(" in the next iteration", "（在下一轮迭代中）")
    desc = write_desc(ctx, write)
    return ctx.t(
        f"1. Line {s_line}: `{save.op}` saves {what}{', ' + name + ',' if name else ''} for backward at version {saved_v}.\n"
        f"2. Line {w_line}: `{desc}` writes it in place{via}{iteration}: version {now_v}.\n"
        f"3. {use[0].upper() + use[1:]} unpacks the saved tensor, finds version {now_v} instead of {saved_v}, and raises.",
        f"1. 第 {s_line} 行：`{save.op}` 为反向传播保存了{what}{' ' + name if name else ''}，版本为 {saved_v}。\n"
        f"2. 第 {w_line} 行：`{desc}` 原地修改了它{via}{iteration}：版本变为 {now_v}。\n"
        f"3. {use}取出保存的张量时发现版本是 {now_v} 而不是 {saved_v}，于是报错。")


def detach_carry_fix(ctx: RuleContext, problem) -> tuple[Edit, str] | None:
    """Cut the graph carried into the next iteration at the carry, keeping this iteration's gradients (fixes.py)."""
    return fixes.detach_carry(ctx, problem)
