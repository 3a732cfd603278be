"""GG111: `detach_()` on a view (torch: "Can't detach views in-place")."""
from __future__ import annotations

import libcst as cst

from . import Rule, make_fix
from ._common import name_of

RULE = Rule(
    code="GG111",
    name="detach-view-inplace",
    family="views",
    fix_kind="unsafe",
    summary={
        "en": "`detach_()` on a view: torch cannot detach a view in place.",
        "zh": "对视图调用 `detach_()`：torch 无法原地分离视图。",
    },
    what={
        "en": "Flags `h = out[:, -1]` (an index, slice, `transpose`, `view`, `chunk` piece, `expand` ...) followed by "
              "`h.detach_()`: truncated backpropagation written with the in-place form on a piece of an output.",
        "zh": "检查 `h = out[:, -1]`（索引、切片、`transpose`、`view`、`chunk` 的一块、`expand` 等）之后的 `h.detach_()`："
              "用原地形式在输出的一部分上写的截断反向传播。",
    },
    why={
        "en": "A view shares its base's autograd metadata; detaching it in place would have to change the base's "
              "graph too, so torch refuses at the call, whether or not the base requires grad.",
        "zh": "视图与其基张量共享 autograd 元数据；原地分离它就必须同时改变基张量的计算图，因此 torch 在调用处直接拒绝，"
              "无论基张量是否需要梯度。",
    },
    autograd={
        "en": "`detach()` returns a new tensor that shares the storage and version counter but has no graph; "
              "`detach_()` would make this very tensor a leaf, which a view cannot become. `.data` and a `detach()` "
              "result are not views: `detach_()` works on them.",
        "zh": "`detach()` 返回共享存储和版本计数器、但没有计算图的新张量；`detach_()` 要让这个张量本身变成叶子，"
              "而视图不能变成叶子。`.data` 与 `detach()` 的结果不是视图，可以对它们用 `detach_()`。",
    },
    fix_safety={
        "en": "`h.detach_()` as a statement becomes `h = h.detach()` (unsafe): the name now holds a detached tensor "
              "sharing the storage, which is what torch's message asks for; other references to the same view "
              "(a list it is stored in) still carry the graph, so detach those where they are read if they must not.",
        "zh": "语句 `h.detach_()` 改为 `h = h.detach()`（不安全修复）：名字改指向共享存储的已分离张量，这正是 torch 报错信息"
              "所建议的；指向同一视图的其他引用（例如存放它的列表）仍带着计算图，若它们也不应带图，请在读取处分别 detach。",
    },
    runtime_error="Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                  "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                  "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                  "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
)


@RULE.checker
def check(ctx):
    for problem in ctx.problems("detach-view"):
        tensor, hint = problem.tensor, problem.top
        call = problem.node
        receiver = call.func.value if type(call) is cst.Call and type(call.func) is cst.Attribute else None
        name = f"`{ctx.code(receiver)}`" if type(receiver) in (cst.Name, cst.Attribute) else name_of(tensor, "this view")
        line = ctx.line(tensor.origin, hint) if tensor.origin is not None else 0
        message = ctx.t(
            f"{name} is a view (made on line {line}); `detach_()` cannot detach a view in place and raises. "
            "Use `detach()` and keep its result.",
            f"{name} 是视图（第 {line} 行创建）；`detach_()` 不能原地分离视图，会报错。请用 `detach()` 并保留其结果。")
        fix = _rebind_fix(ctx, problem, hint)
        f = ctx.finding(RULE, problem.node, hint, message, fix=fix, explanation=message,
                        related=[ctx.related(tensor.origin, hint, ctx.t("the view is made here", "视图在这里创建"))]
                        if tensor.origin is not None else [])
        if f:
            yield f


def _rebind_fix(ctx, problem, hint):
    """`h.detach_()` alone on its line -> `h = h.detach()`; other forms (a value used, a loop's element) get none."""
    stmt, call = problem.stmt, problem.node
    if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1 or type(stmt.body[0]) is not cst.Expr \
            or stmt.body[0].value is not call or type(call.func) is not cst.Attribute or call.args:
        return None
    receiver = call.func.value
    if type(receiver) not in (cst.Name, cst.Attribute):
        return None
    target = ctx.code(receiver)
    edit = ctx.replace_node(call, hint, f"{target} = {target}.detach()")
    return make_fix("unsafe", ctx.t(
        f"Rebind `{target}` to `{target}.detach()` (unsafe: other references to the view keep its graph)",
        f"把 `{target}` 改指向 `{target}.detach()`（不安全：指向该视图的其他引用仍带计算图）"), edit)
