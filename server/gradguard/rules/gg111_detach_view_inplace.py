"""GG111: `detach_()` on a view (torch: "Can't detach views in-place")."""
from __future__ import annotations

import io
import tokenize

import libcst as cst

from ..file_index import file_index
from ..findings import Edit
from ..fixes_order import _binds, _parents
from ..source import Span
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
              "(a list it is stored in) still carry the graph, so detach those where they are read if they must not. A "
              "loop detaching each element (`for s in state: s.detach_()`, nothing else in its body) becomes "
              "`state = tuple(s.detach() for s in state)` when `state` is only ever bound to a tuple display (unsafe, "
              "for the same reason); re-binding the loop's name would be lost at the next element, so that gets no "
              "other fix.",
        "zh": "语句 `h.detach_()` 改为 `h = h.detach()`（不安全修复）：名字改指向共享存储的已分离张量，这正是 torch 报错信息"
              "所建议的；指向同一视图的其他引用（例如存放它的列表）仍带着计算图，若它们也不应带图，请在读取处分别 detach。"
              "逐个分离元素的循环（`for s in state: s.detach_()`，循环体只有这一句）在 `state` 只被绑定为元组字面量时改为 "
              "`state = tuple(s.detach() for s in state)`（不安全修复，原因同上）；重新绑定循环变量在下一个元素时就丢失了，"
              "所以不提供其他修复。",
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
    loop = _loop_binding(ctx, stmt, receiver, hint)
    if loop is not None:
        # `for s in top_state: s.detach_()`: re-binding the loop's name is lost at the next item
        return _detach_each_fix(ctx, loop, hint)
    target = ctx.code(receiver)
    edit = ctx.replace_node(call, hint, f"{target} = {target}.detach()")
    return make_fix("unsafe", ctx.t(
        f"Rebind `{target}` to `{target}.detach()` (unsafe: other references to the view keep its graph)",
        f"把 `{target}` 改指向 `{target}.detach()`（不安全：指向该视图的其他引用仍带计算图）"), edit)


def _loop_binding(ctx, stmt, receiver, hint):
    """The `for` whose target is the receiver's name and whose body holds `stmt` (a loop's element), else None."""
    if type(receiver) is not cst.Name:
        return None
    top = hint
    if top is None:
        return None
    parents = _parents(top)
    node = parents.get(id(stmt))
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        if isinstance(node, cst.For):
            return node if type(node.target) is cst.Name and node.target.value == receiver.value else None
        node = parents.get(id(node))
    return None


def _detach_each_fix(ctx, loop, hint):
    """`for s in top_state: s.detach_()` (nothing else in the body) -> `top_state = tuple(s.detach() for s in
    top_state)`, when every binding of `top_state` in the file is a tuple display: the name then holds detached
    tensors sharing the views' storage, as the in-place detach meant; other references keep the graph (unsafe)."""
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
    if len(body) != 1 or loop.orelse is not None or loop.asynchronous is not None or type(loop.iter) is not cst.Name:
        return None
    seq, item = loop.iter.value, loop.target.value
    bindings = [n for n in file_index(ctx).all_nodes() if isinstance(n, cst.Assign)
                and any(type(t.target) is cst.Name and t.target.value == seq for t in n.targets)]
    others = [n for n in file_index(ctx).all_nodes() if isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For,
                                                                          cst.CompFor, cst.NamedExpr))
              and seq in _binds(n.target)]
    if not bindings or others or any(len(n.targets) != 1 or type(n.value) is not cst.Tuple for n in bindings):
        return None
    new = f"{seq} = tuple({item}.detach() for {item} in {seq})"
    span = ctx.span(loop, hint)
    if span is None or ctx.source.line_text(span.start_line)[:span.start_col].strip():
        return None
    end = len(ctx.source.line_text(span.end_line))
    original = ctx.source.text[ctx.source.offset(span.start_line, span.start_col):ctx.source.offset(span.end_line, end)]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(original + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if "\\\n" in original:
        return None  # a continuation inside the loop
    comments = [t.string for t in tokens if t.type == tokenize.COMMENT]  # kept, on the new line
    edit = Edit(Span(span.start_line, span.start_col, span.end_line, end), "  ".join([new, *comments]))
    return make_fix("unsafe", ctx.t(
        f"Replace the loop with `{new}` (unsafe: other references to the views keep their graph)",
        f"把这个循环改为 `{new}`（不安全：指向这些视图的其他引用仍带计算图）"), edit)
