"""Fix edits built from the CST: precedence-aware parenthesising, byte-exact reuse of the user's text, and refusal.

Every builder here returns an `Edit` (or None: no fix is offered). A builder never joins code slices blindly:
- the parts it reuses are the user's own text, sliced from the source by the node's span (byte for byte);
- an operand is parenthesised when its precedence is not higher than the position needs (`scores *= scores > 0`
  becomes `scores = scores * (scores > 0)`, `x *= not m` becomes `x = x * (not m)`);
- a rewrite whose span holds a comment or a backslash continuation is refused (re-flowing them cannot be done
  safely on one line);
- the new text is parsed with `ast` and compared with the tree the rewrite means (e.g. `y += v` must become
  `Assign(y, BinOp(y, +, v))` with `v` unchanged); any difference refuses the fix;
- the new text must also compile where the old one did (CPython's compiler, inside a function): `ast.parse`
  accepts `tuple(s.detach() for s in (s2 := state))`, the compiler refuses a walrus in a comprehension's iterable.

Carried state (GG402/GG403) is detached at the carry: where the state is re-bound for the next iteration, or, when
the current iteration still reads the re-bound name (the loss is computed from it), at the end of the loop body.
The value the loss is computed from and the initial state (`None`, a learned `h0`) are never detached.
"""
from __future__ import annotations

import ast
import copy

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper

from .findings import Edit
from .source import Span

# ---------------------------------------------------------------- precedence
# Python's expression precedence, lowest first (the language reference's table); atoms are highest.
_ATOM = 100
_BINARY = {
    cst.BitOr: 7, cst.BitXor: 8, cst.BitAnd: 9, cst.LeftShift: 10, cst.RightShift: 10, cst.Add: 11,
    cst.Subtract: 11, cst.Multiply: 12, cst.MatrixMultiply: 12, cst.Divide: 12, cst.FloorDivide: 12,
    cst.Modulo: 12, cst.Power: 14,
}
# `x op= v` -> `x = x op v`: libcst's augmented operator -> (binary operator text, its precedence).
_AUGMENTED = {
    cst.AddAssign: ("+", 11), cst.SubtractAssign: ("-", 11), cst.MultiplyAssign: ("*", 12),
    cst.MatrixMultiplyAssign: ("@", 12), cst.DivideAssign: ("/", 12), cst.FloorDivideAssign: ("//", 12),
    cst.ModuloAssign: ("%", 12), cst.PowerAssign: ("**", 14), cst.LeftShiftAssign: ("<<", 10),
    cst.RightShiftAssign: (">>", 10), cst.BitAndAssign: ("&", 9), cst.BitXorAssign: ("^", 8),
    cst.BitOrAssign: ("|", 7),
}
_PRIMARY = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.FormattedString, cst.List,
            cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Ellipsis)


def precedence(node: cst.BaseExpression) -> int:
    """How tightly the expression binds, without its own parentheses.

    A node's span (and so the text a fix reuses) excludes the node's own parentheses: `y *= (a + b)` reuses
    `a + b`, so its precedence is that of `a + b`.
    """
    if isinstance(node, (cst.NamedExpr, cst.Yield, cst.StarredElement, cst.Tuple, cst.GeneratorExp)):
        return 0  # only valid where the grammar allows them bare: always parenthesise when moved
    if isinstance(node, cst.Lambda):
        return 1
    if isinstance(node, cst.IfExp):
        return 2
    if isinstance(node, cst.BooleanOperation):
        return 3 if isinstance(node.operator, cst.Or) else 4
    if isinstance(node, cst.UnaryOperation):
        return 5 if isinstance(node.operator, cst.Not) else 13
    if isinstance(node, cst.Comparison):
        return 6
    if isinstance(node, cst.BinaryOperation):
        return _BINARY.get(type(node.operator), 0)
    if isinstance(node, cst.Await):
        return 15
    return _ATOM


def is_primary(node: cst.BaseExpression) -> bool:
    """`<text>.attr` reads the attribute of the whole node (not for `1 .x`, `"a" "b".x`, `-x.y`, `a + b.c`);
    as in `precedence`, the node's own parentheses are not part of its text."""
    return isinstance(node, _PRIMARY)


# ---------------------------------------------------------------- reading the user's text
def has_comment_or_continuation(node: cst.CSTNode, text: str | None = None) -> bool:
    """A comment or a backslash line continuation anywhere inside the node (its own whitespace included).

    With the node's source `text`, a text holding neither `#` nor a backslash answers at once.
    """
    if text is not None and "#" not in text and "\\" not in text:
        return False
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Comment):
            return True
        if isinstance(n, cst.SimpleWhitespace) and "\\" in n.value:
            return True
        stack.extend(n.children)
    return False


def text_of(ctx, node, hint) -> tuple[Span, str] | None:
    """The node's span and its exact source text (sliced from the file, not regenerated)."""
    span = ctx.span(node, hint)
    if span is None:
        return None
    source = ctx.source
    return span, source.text[source.offset(span.start_line, span.start_col):source.offset(span.end_line, span.end_col)]


def _dump(tree) -> str:
    return ast.dump(tree, annotate_fields=True, include_attributes=False)


def _parse_statement(text: str) -> ast.stmt | None:
    """Parse one statement that starts at column 0 of `text` (its continuation lines may be indented)."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return None
    return body[0] if len(body) == 1 else None


def _parse_expression(text: str) -> ast.expr | None:
    try:
        return ast.parse(f"({text}\n)", mode="eval").body
    except (SyntaxError, ValueError):
        return None


def _same(built, expected, original) -> bool:
    """The rewrite parses to the tree it means, and compiles wherever the original compiled."""
    return (built is not None and expected is not None and _dump(built) == _dump(expected)
            and (_compiles(built) or not _compiles(original)))


def _compiles(node) -> bool:
    """A statement or expression compiles (symbol table included) in the body of an `async def`, where `yield`,
    `await` and `return` are all allowed: what fails there fails because of the code itself, not its place."""
    if node is None:
        return False
    module = ast.parse("async def _():\n    pass\n")
    module.body[0].body = [node if isinstance(node, ast.stmt) else ast.Expr(node)]
    try:
        compile(ast.fix_missing_locations(module), "<fix>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return False
    return True


# ---------------------------------------------------------------- out-of-place rewrites
def out_of_place(ctx, write, hint, out_of_place_methods: set[str]) -> tuple[Edit, str] | None:
    """`y += v` -> `y = y + (v)` (parenthesised only when needed); `y.add_(1)` -> `y = y.add(1)`.

    Only for a statement of its own (`SimpleStatementLine` with one statement) writing a plain name; refused when
    the statement holds a comment or a backslash continuation.
    """
    stmt = write.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    # `laterals[i - 1] += t` on an item of a Python list re-binds the item as well (a tensor's item would be written)
    list_item = isinstance(small, cst.AugAssign) and id(small.target) in ctx.facts.list_item_targets \
        and _pure_index(small.target)
    # `self.P -= v` on an attribute re-binds the attribute (the old tensor, if referenced elsewhere, keeps its values)
    attribute = isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Attribute) \
        and bool(_dotted(small.target))
    augmented = isinstance(small, cst.AugAssign) and (isinstance(small.target, cst.Name) or list_item or attribute)
    call = _inplace_call(small, out_of_place_methods)
    if not augmented and call is None:
        return None  # cheap shape test first: a long statement holding many writes costs nothing here
    receiver = call.func.value if call is not None else None
    if call is not None and isinstance(receiver, cst.Call):
        # `x_b.mul_(s).add_(t)`: a chain of in-place methods on one name (never the function form on `t`)
        return _chain_out_of_place(ctx, small, call, hint, out_of_place_methods)
    if call is not None and not _is_tensor_name(ctx, write, receiver):
        # `F.relu_(h)` / `h = torch.relu_(h)`: the function form, on its first argument
        first = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
        target = small.targets[0].target if isinstance(small, cst.Assign) else None
        if (not isinstance(first, cst.Name) or not _is_tensor_name(ctx, write, first)
                or (target is not None and not (isinstance(target, cst.Name) and target.value == first.value))):
            return None
        return _function_out_of_place(ctx, small, call, first.value, hint)
    if call is not None and not isinstance(small, cst.Expr):
        return None
    found = text_of(ctx, small, hint)
    if found is None or has_comment_or_continuation(small, found[1]):
        return None
    span, old = found
    original = _parse_statement(old)
    if original is None:
        return None
    if augmented:
        op = _AUGMENTED.get(type(small.operator))
        value_text = text_of(ctx, small.value, hint)
        if op is None or value_text is None or not isinstance(original, ast.AugAssign):
            return None
        symbol, level = op
        value = value_text[1]
        # Left-associative operators need a parenthesised right operand at equal precedence (`a - (b - c)`);
        # `**` is right-associative, but `a ** -b` reads well and parentheses there are harmless either way.
        if precedence(small.value) <= level:
            value = f"({value})"
        if list_item or attribute:
            target_text = text_of(ctx, small.target, hint)
            if target_text is None:
                return None
            name = target_text[1]
            read = copy.deepcopy(original.target)
            read.ctx = ast.Load()
            expected = ast.Assign(targets=[original.target], value=ast.BinOp(left=read, op=original.op,
                                                                             right=original.value))
        else:
            name = small.target.value
            expected = ast.Assign(targets=[ast.Name(name, ast.Store())],
                                  value=ast.BinOp(left=ast.Name(name, ast.Load()), op=original.op, right=original.value))
        new = f"{name} = {name} {symbol} {value}"
    else:
        func = call.func
        name, method = func.value.value, func.attr.value[:-1]
        call_text = text_of(ctx, call, hint)
        attr_text = text_of(ctx, func.attr, hint)
        if call_text is None or attr_text is None or not isinstance(original, ast.Expr):
            return None
        # Drop the trailing underscore inside the user's own text of the call.
        cut = _relative(call_text[0], attr_text[0], call_text[1])
        if cut is None:
            return None
        start, end = cut
        new_call = call_text[1][:start] + method + call_text[1][end:]
        new = f"{name} = {new_call}"
        out_call = original.value
        expected = ast.Assign(targets=[ast.Name(name, ast.Store())],
                              value=ast.Call(func=ast.Attribute(value=out_call.func.value, attr=method, ctx=ast.Load()),
                                             args=out_call.args, keywords=out_call.keywords))
    if not _same(_parse_statement(new), expected, original):
        return None
    return Edit(span, new), new


def _chain_out_of_place(ctx, small, call, hint, methods: set[str]) -> tuple[Edit, str] | None:
    """`x.mul_(s).add_(t)`, a statement of its own -> `x = x.mul(s).add(t)`: every call of the chain is an in-place
    method with an out-of-place twin, on one tensor name (each writes what the one before returned: that name)."""
    if not isinstance(small, cst.Expr) or small.value is not call:
        return None
    attrs, node = [], call
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        attr = node.func.attr.value
        if not attr.endswith("_") or attr[:-1] not in methods:
            return None
        attrs.append(node.func.attr)
        node = node.func.value
    if not isinstance(node, cst.Name) or ctx.facts.expr_values.get(id(node)) is None and \
            ctx.facts.name_values.get(id(node)) is None:
        return None
    found = text_of(ctx, small, hint)
    call_text = text_of(ctx, call, hint)
    if found is None or call_text is None or has_comment_or_continuation(small, found[1]):
        return None
    cuts = []
    for attr in attrs:
        attr_text = text_of(ctx, attr, hint)
        cut = _relative(call_text[0], attr_text[0], call_text[1]) if attr_text is not None else None
        if cut is None:
            return None
        cuts.append(cut)
    new_call = call_text[1]
    for start, end in sorted(cuts, reverse=True):
        new_call = new_call[:start] + new_call[start:end][:-1] + new_call[end:]
    name = node.value
    new = f"{name} = {new_call}"
    original = _parse_statement(found[1])
    if not isinstance(original, ast.Expr):
        return None
    value = copy.deepcopy(original.value)
    part = value
    while isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute):
        part.func.attr = part.func.attr[:-1]
        part = part.func.value
    expected = ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
    if not _same(_parse_statement(new), expected, original):
        return None
    return Edit(found[0], new), new


def _pure_index(target: cst.Subscript) -> bool:
    """`xs[i - 1]`, `xs[0]`, `xs[self.k]`: reading the item twice reads the same item (no call in the index)."""
    stack = [e.slice for e in target.slice]
    stack.append(target.value)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Index):
            stack.append(node.value)
        elif isinstance(node, cst.BinaryOperation):
            stack += [node.left, node.right]
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
        elif not isinstance(node, (cst.Name, cst.Integer)):
            return False
    return True


# In-place functions of torch / torch.nn.functional whose out-of-place twin has the same name without `_`.
_FUNCTIONAL = {"elu", "leaky_relu", "hardtanh", "rrelu", "threshold", "celu", "selu"}


def _inplace_call(small, methods: set[str]) -> cst.Call | None:
    """The call of `y.add_(1)` / `F.relu_(h)` / `h = torch.relu_(h)`, a statement of its own; else None."""
    value = small.value if isinstance(small, cst.Expr) else (
        small.value if isinstance(small, cst.Assign) and len(small.targets) == 1 else None)
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
        return None
    attr = value.func.attr.value
    if not attr.endswith("_") or (attr[:-1] not in methods and attr[:-1] not in _FUNCTIONAL):
        return None
    return value


def _is_tensor_name(ctx, write, node) -> bool:
    """The node is a plain name the analysis knows as the written tensor (not a module like `F` or `torch`)."""
    if not isinstance(node, cst.Name):
        return False
    return ctx.facts.expr_values.get(id(node)) is not None or ctx.facts.name_values.get(id(node)) is not None or (
        bool(write.target_name) and write.target_name == node.value)


def _function_out_of_place(ctx, small, call, name: str, hint) -> tuple[Edit, str] | None:
    """`F.relu_(h)` / `h = F.relu_(h)` -> `h = F.relu(h)`: the user's call text with the `_` dropped."""
    if small.value is not call:
        return None
    found = text_of(ctx, small, hint)
    call_text = text_of(ctx, call, hint)
    attr_text = text_of(ctx, call.func.attr, hint)
    if found is None or call_text is None or attr_text is None or has_comment_or_continuation(small, found[1]):
        return None
    span, old = found
    original = _parse_statement(old)
    cut = _relative(call_text[0], attr_text[0], call_text[1])
    if original is None or cut is None:
        return None
    new_call = call_text[1][:cut[0]] + call.func.attr.value[:-1] + call_text[1][cut[1]:]
    new = f"{name} = {new_call}"
    old_call = original.value
    if not isinstance(old_call, ast.Call) or not isinstance(old_call.func, ast.Attribute):
        return None
    expected = ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Call(
        func=ast.Attribute(value=old_call.func.value, attr=old_call.func.attr[:-1], ctx=ast.Load()),
        args=old_call.args, keywords=old_call.keywords))
    if not _same(_parse_statement(new), expected, original):
        return None
    return Edit(span, new), new


def rebind_inplace_false(ctx, stmt, call, hint) -> tuple[Edit, str] | None:
    """`F.relu(h, inplace=True)` as a statement of its own -> `h = F.relu(h, inplace=False)`.

    The call's value was dropped: its write into `h` was all the statement did, so `inplace=False` alone would make
    it compute the activation and throw it away. Only for a plain name as the first argument and a statement of its
    own (no comment or backslash continuation inside); the user's call text is kept but for the flag.
    """
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and stmt.body[0].value is call and isinstance(call, cst.Call) and call.args):
        return None
    first = call.args[0]
    if first.keyword is not None or first.star or not isinstance(first.value, cst.Name):
        return None
    flags = [a for a in call.args if a.keyword is not None and a.keyword.value == "inplace"] or [
        a for a in call.args if a.keyword is None and isinstance(a.value, cst.Name) and a.value.value == "True"]
    if len(flags) != 1:
        return None
    found = text_of(ctx, stmt.body[0], hint)
    flag = text_of(ctx, flags[0].value, hint)
    if found is None or flag is None or has_comment_or_continuation(stmt.body[0], found[1]):
        return None
    span, old = found
    cut = _relative(span, flag[0], old)
    original = _parse_statement(old)
    if cut is None or not isinstance(original, ast.Expr) or not isinstance(original.value, ast.Call):
        return None
    name = first.value.value
    new = f"{name} = {old[:cut[0]]}False{old[cut[1]:]}"
    value = copy.deepcopy(original.value)
    keyword = next((k for k in value.keywords if k.arg == "inplace"), None)
    if keyword is not None:
        keyword.value = ast.Constant(False)
    else:
        trues = [i for i, a in enumerate(value.args) if isinstance(a, ast.Constant) and a.value is True]
        if len(trues) != 1:
            return None
        value.args[trues[0]] = ast.Constant(False)
    expected = ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
    if not _same(_parse_statement(new), expected, original):
        return None
    return Edit(span, new), new


def _relative(outer: Span, inner: Span, outer_text: str) -> tuple[int, int] | None:
    """Offsets of `inner` inside the text of `outer` (both spans of the same file)."""
    lines = outer_text.split("\n")

    def offset(line: int, col: int) -> int | None:
        i = line - outer.start_line
        if not 0 <= i < len(lines):
            return None
        base = sum(len(x) + 1 for x in lines[:i])
        return base + (col - outer.start_col if i == 0 else col)

    a, b = offset(inner.start_line, inner.start_col), offset(inner.end_line, inner.end_col)
    return (a, b) if a is not None and b is not None else None


def out_arg_rewrite(ctx, stmt, call, hint) -> tuple[Edit, str] | None:
    """`torch.sin(x, out=y)` -> `y = torch.sin(x)`, for a statement of its own; refused around comments."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and stmt.body[0].value is call):
        return None
    out_arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
    if out_arg is None or not isinstance(out_arg.value, cst.Name):
        return None
    found = text_of(ctx, stmt.body[0], hint)
    if found is None or has_comment_or_continuation(stmt.body[0], found[1]):
        return None
    span, old = found
    original = _parse_statement(old)
    if not isinstance(original, ast.Expr) or not isinstance(original.value, ast.Call):
        return None
    args = [a for a in call.args if a is not out_arg]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    new_call = call.with_changes(args=args)
    new = f"{out_arg.value.value} = {cst.Module([]).code_for_node(new_call)}"
    old_call = original.value
    expected = ast.Assign(targets=[ast.Name(out_arg.value.value, ast.Store())],
                          value=ast.Call(func=old_call.func, args=old_call.args,
                                         keywords=[k for k in old_call.keywords if k.arg != "out"]))
    if not _same(_parse_statement(new), expected, original):
        return None
    return Edit(span, new), new


def out_arg_copy_no_grad(ctx, stmt, call, hint) -> tuple[Edit, str] | None:
    """`torch.arange(1, n, out=self.freq)` -> `with torch.no_grad():` / `self.freq.copy_(torch.arange(1, n))`, for a
    parameter filled through `out=` (a statement of its own). Rebinding a parameter attribute to a plain tensor
    would raise TypeError, and `out=` under no_grad is not enough: `arange(out=p)` there clears `p.requires_grad`
    (checked on torch 2.13); `copy_` keeps the parameter, its identity and its requires_grad."""
    torch = ctx.torch_name(stmt, hint)
    if torch is None or not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                             and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is call):
        return None
    out_arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
    if out_arg is None or not isinstance(out_arg.value, (cst.Name, cst.Attribute)):
        return None
    span = ctx.span(stmt, hint)
    found = text_of(ctx, stmt.body[0], hint)
    if span is None or found is None or has_comment_or_continuation(stmt.body[0], found[1]):
        return None
    source = ctx.source
    first, last = source.line_text(span.start_line), source.line_text(span.end_line)
    indent = first[: span.start_col]
    rest = last[span.end_col:]
    if indent.strip() or (rest.strip() and not rest.strip().startswith("#")):
        return None  # not alone on its line (a trailing comment stays after it)
    original = _parse_statement(found[1])
    if not isinstance(original, ast.Expr) or not isinstance(original.value, ast.Call):
        return None
    args = [a for a in call.args if a is not out_arg]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    target = cst.Module([]).code_for_node(out_arg.value)
    inner = f"{target}.copy_({cst.Module([]).code_for_node(call.with_changes(args=args))})"
    unit = indent_unit(source.lines, indent)
    new = f"{indent}with {torch}.no_grad():\n{indent}{unit}{inner}{rest}"
    old_call = original.value
    out_value = next(k.value for k in old_call.keywords if k.arg == "out")
    expected = ast.With(items=[ast.withitem(context_expr=ast.Call(
        func=ast.Attribute(value=ast.Name(torch, ast.Load()), attr="no_grad", ctx=ast.Load()), args=[], keywords=[]))],
        body=[ast.Expr(ast.Call(func=ast.Attribute(value=out_value, attr="copy_", ctx=ast.Load()), args=[
            ast.Call(func=old_call.func, args=old_call.args, keywords=[k for k in old_call.keywords if k.arg != "out"])],
            keywords=[]))])
    built = _parse_statement(new[len(indent):].replace("\n" + indent, "\n", 1))
    if not _same(built, expected, original):
        return None
    return Edit(Span(span.start_line, 0, span.end_line, len(last)), new), inner


# ---------------------------------------------------------------- method suffixes
def with_method(ctx, node, hint, method: str) -> tuple[Edit, str] | None:
    """`expr` -> `expr.method()`, parenthesising `expr` unless it is a primary; its text is kept byte for byte."""
    found = text_of(ctx, node, hint)
    if found is None:
        return None
    span, old = found
    inner = old if is_primary(node) else f"({old})"
    new = f"{inner}.{method}()"
    original = _parse_expression(old)
    expected = ast.Call(func=ast.Attribute(value=original, attr=method, ctx=ast.Load()), args=[], keywords=[]) \
        if original is not None else None
    if not _same(_parse_expression(new), expected, original):
        return None
    return Edit(span, new), new


# ---------------------------------------------------------------- torch.no_grad() around a statement
def wrap_no_grad(ctx, stmt, hint) -> Edit | None:
    """Put a statement of its own inside `with <torch>.no_grad():`.

    The statement's text is kept byte for byte (its continuation lines, strings and comments are not re-indented:
    inside brackets, after a backslash and inside strings indentation has no meaning or must not change); only its
    first line gets one more indentation level, in the block's own style (a tab where the block is tab-indented).
    """
    memo = _memo(ctx, "wrap_no_grad")
    if id(stmt) not in memo:  # one statement holding many writes is wrapped once, not once per write
        memo[id(stmt)] = (stmt, _wrap_no_grad(ctx, stmt, hint))
    return memo[id(stmt)][1]


def wrap_enable_grad(ctx, stmt, hint) -> Edit | None:
    """Put a statement of its own inside `with <torch>.enable_grad():` (a view built there is tracked)."""
    return _wrap_no_grad(ctx, stmt, hint, manager="enable_grad")


def _memo(ctx, name: str) -> dict:
    memos = ctx.__dict__.setdefault("_fix_memos", {})
    return memos.setdefault(name, {})


def _wrap_no_grad(ctx, stmt, hint, manager: str = "no_grad") -> Edit | None:
    torch = ctx.torch_name(stmt, hint)
    if torch is None or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    span = ctx.span(stmt, hint)
    if span is None:
        return None
    source = ctx.source
    first = source.line_text(span.start_line)
    indent = first[: span.start_col]
    if indent.strip():
        return None  # the statement does not start its line
    last = source.line_text(span.end_line)
    rest = last[span.end_col:]
    if rest.strip() and not rest.strip().startswith("#"):
        return None  # another statement follows on the same line
    start = source.offset(span.start_line, span.start_col)
    end = source.offset(span.end_line, len(last))
    body = source.text[start:end]
    unit = indent_unit(source.lines, indent)
    new = f"{indent}with {torch}.{manager}():\n{indent}{unit}{body}"
    original = _parse_statement(body)
    built = _parse_statement(new[len(indent):].replace("\n" + indent, "\n", 1)) if original is not None else None
    expected = None
    if original is not None:
        expected = ast.With(items=[ast.withitem(context_expr=ast.Call(
            func=ast.Attribute(value=ast.Name(torch, ast.Load()), attr=manager, ctx=ast.Load()), args=[],
            keywords=[]))], body=[original])
    if not _same(built, expected, original):
        return None
    return Edit(Span(span.start_line, 0, span.end_line, len(last)), new)


def indent_unit(lines: list[str], indent: str) -> str:
    """One indentation level as the file writes it: the step after its first block header (`\t`, 2 or 4 spaces)."""
    for i, line in enumerate(lines[:-1]):
        code = line.split("#", 1)[0].rstrip()
        if not code.endswith(":"):
            continue
        nxt = next((n for n in lines[i + 1:] if n.strip()), "")
        own, inner = line[: len(line) - len(line.lstrip())], nxt[: len(nxt) - len(nxt.lstrip())]
        if inner.startswith(own) and len(inner) > len(own):
            step = inner[len(own):]
            if step.strip(" ") == "" or step.strip("\t") == "":
                if ("\t" in step) == ("\t" in indent) or not indent:
                    return step
        break
    return "\t" if "\t" in indent else "    "


# ---------------------------------------------------------------- carried state (GG402, GG403)
def detach_carry(ctx, problem) -> tuple[Edit, str] | None:
    """Cut the graph carried into the next iteration, at the carry, keeping this iteration's gradients.

    - `h = h_next` (the name is not read again in this iteration): `h = h_next.detach()`;
    - `out, h = rnn(x, h)` / `y, (h, c) = lstm(x, (h, c))`: a line after it re-binds every carried name of that
      statement: `h, c = h.detach(), c.detach()`;
    - `h = cell(x, h)` followed by `loss = f(h)` (detaching there would cut the loss off the cell): the last line
      of the loop body re-binds `h = h.detach()`, so the next iteration starts from a detached state;
    - state kept on an object across calls (`out, self.hidden = self.lstm(x, self.hidden)` in the `forward` the
      loop calls): detached right after that line, unless the method reads it again (it may return it).
    Tuple state (LSTM `(h, c)`) is detached element by element: `tuple(s.detach() for s in state)`; it is only
    ever applied to the value the loop just produced, so an initial `state = None` is never touched.
    Returns the edit and the carried expression(s) for the message; None when no safe place exists.
    """
    carry = problem.detail.get("carry")
    if carry is None or carry.loop is None:
        return None
    stmt, loop = carry.stmt, carry.loop
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        target = small.target
    else:
        return None
    bound = _bound_names(target)
    if bound is None or carry.name not in bound:
        return None
    # The iteration is the loop body; for object state re-bound in a method the loop calls (`self.hidden`), it
    # is that method's body: one call per iteration.
    scope = loop if _contains(loop, stmt) else _function_holding(getattr(carry, "top", None) or problem.top, stmt)
    if scope is None or not isinstance(scope.body, cst.IndentedBlock):
        return None
    body = scope.body
    order = _name_order(ctx, scope, stmt)
    if order is None:
        return None
    before, after_loads, after_stores, continue_after = order
    if carry.name in after_stores:
        return None  # re-bound again later in the iteration (on some path): no single place carries it
    # Every name this statement binds that the next iteration reads before re-binding it, and that holds a
    # tensor with a graph: detaching all of them at once makes the fix converge in one pass.
    carried = []
    for name, node in bound.items():
        if name in after_stores:
            continue  # re-bound later in the iteration: that later statement is the carry, not this one
        if scope is not loop and name != carry.name and "." not in name:
            continue  # a method's local (`out` of `out, self.hidden = ...`) starts afresh at every call
        if name == carry.name:
            kind = _kind(carry.tensor)
        elif name not in before:
            kind = None
        else:
            # Carried too if a read of it before the re-binding (in the next iteration) finds a tensor with a
            # graph: `c` in `lstm(x, (h, c))`, `self.c0` in `self.lstm(x, (self.h0, self.c0))`.
            values = [ctx.facts.name_values.get(id(n)) or ctx.facts.expr_values.get(id(n)) for n in before[name]]
            kind = "tensor" if any(v is not None and v.history for v in values) else None
        if name == carry.name and kind is None:
            # `self.state = [(h, c)]`: a literal nest of tensors, each detached where the literal holds it
            if not isinstance(target, (cst.Name, cst.Attribute)) or len(bound) != 1 or name in after_loads:
                return None  # the rest of the iteration reads it (the loss may be computed from it)
            return _detach_literal_leaves(ctx, small.value, problem.top)
        if kind is not None:
            carried.append((name, kind))
    if not carried:
        return None
    indent = ctx.indent_of(_start_line(ctx, stmt, problem.top))
    if not any(name in after_loads for name, _ in carried):
        if isinstance(target, (cst.Name, cst.Attribute)) and len(carried) == 1:
            # `h = h_next`: detach the value bound for the next iteration.
            value = small.value
            if carried[0][1] == "tensor":
                return with_method(ctx, value, problem.top, "detach")
            return _detach_tuple_value(ctx, value, problem.top)
        return _insert_after(ctx, stmt, problem.top, indent, carried)
    # The rest of this iteration reads the re-bound name (the loss is computed from it): detach it at the end
    # of the loop body, the point where it passes into the next iteration. (In a method, the end is a return
    # whose value the caller may compute the loss from: no fix.)
    if scope is not loop or not any(s is stmt for s in body.body) or continue_after:
        return None
    return _insert_after(ctx, body.body[-1], problem.top, indent, carried)


def detach_sibling_state(ctx, problem) -> list[tuple[Edit, str]]:
    """Object state a method re-binds from itself beside the carry, holding a graph the same backward freed
    (`self.z = self.z + k.sum(0)` beside `self.M = self.M + k.T @ v`, Infini-attention's memory): the next iteration
    reaches it too, so a fix detaching only the carry the analysis named still raises. Each one built from an
    argument the carry is built from is detached where it is re-bound, `(value).detach()`, when the method reads
    it no more after that line. [] otherwise."""
    carry = problem.detail.get("carry")
    freed_by = problem.detail.get("freed_by")
    if carry is None or carry.loop is None or freed_by is None or _contains(carry.loop, carry.stmt):
        return []
    top = getattr(carry, "top", None) or problem.top
    method = _function_holding(top, carry.stmt)
    if method is None or not isinstance(method.body, cst.IndentedBlock):
        return []
    # the arguments of this call (this iteration's tensors) the carried value is computed from: a sibling built
    # from one of them holds the same iteration's graph (the Facts keep one value per expression, the last run's,
    # which for a method run on its own in an editor knows no graph: this is read from the code)
    params = {p.name.value for p in method.params.params} - {"self"}
    carried_small = carry.stmt.body[0] if isinstance(carry.stmt, cst.SimpleStatementLine) else None
    if not isinstance(carried_small, cst.Assign):
        return []
    shared = params & _names_read(carried_small.value)
    found = []
    for stmt in method.body.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if stmt is carry.stmt or not isinstance(small, cst.Assign) or len(small.targets) != 1 \
                or not isinstance(small.targets[0].target, cst.Attribute):
            continue
        name = _dotted(small.targets[0].target)
        if not name or name == carry.name or not any(
                isinstance(n, cst.Attribute) and _dotted(n) == name for n in _walk_expression(small.value)):
            continue  # not re-bound from itself: not carried from one call to the next
        if not shared & _names_read(small.value):
            continue  # built from none of this call's arguments the carry is built from
        if ctx.facts.expr_values.get(id(small.value)) is None:
            continue  # not known to be a tensor (a count, a float): nothing to detach
        order = _name_order(ctx, method, stmt)
        if order is None or name in order[1] or name in order[2]:
            continue  # read or re-bound again in this call: detaching here would change what it computes
        detached = with_method(ctx, small.value, top, "detach")
        if detached is not None:
            found.append(detached)
    return found


def _names_read(node) -> set[str]:
    """The names an expression reads (not the attribute names after a dot)."""
    attrs = {id(n.attr) for n in _walk_expression(node) if isinstance(n, cst.Attribute)}
    return {n.value for n in _walk_expression(node) if isinstance(n, cst.Name) and id(n) not in attrs}


def _walk_expression(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _kind(value) -> str | None:
    """'tensor' or 'tuple' for a carried value the fix can detach; None otherwise."""
    from .facts.model import Seq, Tensor

    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, Seq):
        items = value.items if value.items is not None else [value.element]
        if items and all(isinstance(i, Tensor) for i in items):
            return "tuple"
    return None


def _bound_names(target) -> dict[str, cst.Name] | None:
    """Names bound by an assignment target (`h`, `out, (h, c)`); None when it binds something else too."""
    out: dict[str, cst.Name] = {}
    stack = [target]
    while stack:
        t = stack.pop(0)  # source order: `h, c = h.detach(), c.detach()`
        if isinstance(t, cst.Name):
            out[t.value] = t
        elif isinstance(t, (cst.Tuple, cst.List)):
            stack[:0] = [e.value for e in t.elements]
        elif isinstance(t, cst.StarredElement):
            stack.insert(0, t.value)
        elif isinstance(t, cst.Attribute) and _dotted(t):
            out[_dotted(t)] = t  # `self.hidden`
        elif isinstance(t, (cst.Attribute, cst.Subscript)):
            continue  # `x[i], f().a = ...`: not a carried name; the names are still fine to detach
        else:
            return None
    return out


def _dotted(node) -> str:
    """`self.hidden` for an attribute chain on a name; '' otherwise."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    return ".".join([node.value, *reversed(parts)]) if isinstance(node, cst.Name) and parts else ""


def _contains(root, target) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if node is target:
                found.append(node)
            return not found and not isinstance(node, cst.BaseExpression)

    root.visit(Finder())
    return bool(found)


def _function_holding(top, stmt):
    """The innermost def inside `top` whose own body (not a nested def's) holds `stmt`."""
    if top is None:
        return None
    stack = [(top, None)]
    while stack:
        node, holder = stack.pop()
        if node is stmt:
            return holder
        if isinstance(node, cst.BaseExpression):
            continue
        inner = node if isinstance(node, cst.FunctionDef) else holder
        stack.extend((child, inner) for child in node.children)
    return None


def _expression_contexts(ctx, loop):
    """Load/store contexts of the loop's names, once per loop and check (several carries share a loop)."""
    memo = _memo(ctx, "contexts")
    if id(loop) not in memo:
        memo[id(loop)] = (loop, MetadataWrapper(cst.Module(body=[loop]), unsafe_skip_copy=True)
                          .resolve(ExpressionContextProvider))
    return memo[id(loop)][1]


def _name_order(ctx, loop, stmt):
    """Reads and bindings of names in one loop iteration relative to `stmt`.

    Returns (names read before or inside `stmt` with those reads, names read after it, names bound after it,
    whether a `continue` of this loop follows it); None if positions cannot be told.
    """
    contexts = _expression_contexts(ctx, loop)
    before: dict[str, list] = {}  # name -> its reads before (or inside) `stmt`
    after_loads: set[str] = set()
    after_stores: set[str] = set()
    state = {"phase": "before", "continue_after": False}
    nested: list = []  # loops and defs inside `loop`: a `continue` there is not this loop's

    class Walker(cst.CSTVisitor):
        def _enter(self, node) -> bool:
            if node is loop:  # the scope: a loop (its test runs every iteration) or a def (its body per call)
                if isinstance(node, cst.While):
                    node.test.visit(self)
                node.body.visit(self)
                return False
            nested.append(node)
            return True

        def _leave(self, node) -> None:
            if node is not loop:
                nested.pop()

        visit_For = visit_While = visit_FunctionDef = _enter
        leave_For = leave_While = leave_FunctionDef = _leave

        def visit_SimpleStatementLine(self, node):
            if node is stmt:
                state["phase"] = "inside"
                node.body[0].value.visit(self)  # the value is evaluated before the names are bound
                state["phase"] = "after"
                return False
            return True

        def visit_Continue(self, node):
            if state["phase"] == "after" and not nested:
                state["continue_after"] = True

        def _record(self, node, name: str) -> None:
            kind = contexts.get(node)
            if state["phase"] != "after":
                if kind == ExpressionContext.LOAD:
                    before.setdefault(name, []).append(node)
            elif kind == ExpressionContext.LOAD:
                after_loads.add(name)
            elif kind in (ExpressionContext.STORE, ExpressionContext.DEL):
                after_stores.add(name)

        def visit_Name(self, node):
            self._record(node, node.value)

        def visit_Attribute(self, node):
            dotted = _dotted(node)
            if dotted:
                self._record(node, dotted)

    loop.visit(Walker())
    if state["phase"] != "after":
        return None
    # Names bound by `with ... as n` / `for n in` / walrus after the statement count as bindings too: the
    # ExpressionContextProvider marks them STORE.
    return before, after_loads, after_stores, state["continue_after"]


def _start_line(ctx, stmt, hint) -> int:
    span = ctx.span(stmt, hint)
    return span.start_line if span else 0


def _detached(name: str, kind: str) -> str:
    return f"{name}.detach()" if kind == "tensor" else f"tuple(s.detach() for s in {name})"


def _insert_after(ctx, stmt, hint, indent: str, carried) -> tuple[Edit, str] | None:
    """A new line after `stmt` (after its last line, trailing comment included) re-binding the carried names."""
    span = ctx.span(stmt, hint)
    if span is None:
        return None
    names = ", ".join(n for n, _ in carried)
    values = ", ".join(_detached(n, k) for n, k in carried)
    line = f"{names} = {values}"
    expected = ast.parse(line).body[0]
    if not _same(_parse_statement(line), expected, expected) or not indent.strip(" \t") == "":
        return None
    end = len(ctx.source.line_text(span.end_line))
    return Edit(Span(span.end_line, end, span.end_line, end), f"\n{indent}{line}"), values


def _detach_literal_leaves(ctx, value, hint) -> tuple[Edit, str] | None:
    """`[(h, c)]` -> `[(h.detach(), c.detach())]`: every leaf of a list/tuple literal is a name or attribute holding
    a tensor; only the literal's elements change, so the names themselves (the loss may read `h`) keep their
    graph. One edit per leaf, reported as the whole new literal."""
    from .facts.model import Tensor

    if not isinstance(value, (cst.List, cst.Tuple)):
        return None
    leaves, stack = [], [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.List, cst.Tuple)):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return None
            stack.extend(e.value for e in node.elements)
            continue
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        found = ctx.facts.name_values.get(id(node)) or ctx.facts.expr_values.get(id(node))
        if not isinstance(found, Tensor):
            return None
        leaves.append(node)
    whole = text_of(ctx, value, hint)
    if not leaves or whole is None or has_comment_or_continuation(value, whole[1]):
        return None
    span, old = whole
    base = ctx.source.offset(span.start_line, span.start_col)
    new = old
    for leaf in sorted(leaves, key=lambda n: ctx.source.offset(ctx.span(n, hint).end_line, ctx.span(n, hint).end_col),
                       reverse=True):
        leaf_span = ctx.span(leaf, hint)
        at = ctx.source.offset(leaf_span.end_line, leaf_span.end_col) - base
        new = new[:at] + ".detach()" + new[at:]
    original, rewritten = _parse_expression(old), _parse_expression(new)
    if original is None or rewritten is None:
        return None
    return Edit(span, new), new


def _detach_tuple_value(ctx, value, hint) -> tuple[Edit, str] | None:
    """`state = new_state` -> `state = tuple(s.detach() for s in new_state)`."""
    found = text_of(ctx, value, hint)
    if found is None:
        return None
    span, old = found
    inner = old if is_primary(value) else f"({old})"
    original = _parse_expression(old)
    if original is None:
        return None
    element = ast.Call(func=ast.Attribute(value=ast.Name("s", ast.Load()), attr="detach", ctx=ast.Load()), args=[],
                       keywords=[])
    loop = [ast.comprehension(target=ast.Name("s", ast.Store()), iter=original, ifs=[], is_async=0)]
    if isinstance(value, (cst.List, cst.ListComp)):  # a list stays a list
        new = f"[s.detach() for s in {inner}]"
        expected = ast.ListComp(elt=element, generators=loop)
    else:
        new = f"tuple(s.detach() for s in {inner})"
        expected = ast.Call(func=ast.Name("tuple", ast.Load()), args=[ast.GeneratorExp(elt=element, generators=loop)],
                            keywords=[])
    if not _same(_parse_expression(new), expected, original):
        return None
    return Edit(span, new), new


# ---------------------------------------------------------------- a `.data` write made on a tracked copy
def _data_receiver(small) -> cst.Attribute | None:
    """The `y.data` that a statement writes through: `y.data.mul_(..)...`, `y.data[i] = v`, `y.data += v`."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        node = small.targets[0].target
        node = node.value if isinstance(node, cst.Subscript) else node
    elif isinstance(small, cst.AugAssign):
        node = small.target
        node = node.value if isinstance(node, cst.Subscript) else node
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        node = small.value
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            inner = node.func.value
            if isinstance(inner, cst.Attribute) and inner.attr.value == "data":
                node = inner
                break
            node = inner
    else:
        return None
    if isinstance(node, cst.Attribute) and node.attr.value == "data" and isinstance(node.value, cst.Name):
        return node
    return None


def data_write_on_copy(ctx, stmt, hint) -> tuple[Edit, str] | None:
    """`y.data.mul_(0.9)` -> `y = y.clone()` then `y.mul_(0.9)`: the write is tracked, on a copy the saving op
    never saw. Only for a statement of its own whose write goes through the `.data` of a plain name."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    receiver = _data_receiver(small)
    if receiver is None:
        return None
    found = text_of(ctx, small, hint)
    attr = text_of(ctx, receiver, hint)
    if found is None or attr is None or has_comment_or_continuation(small, found[1]):
        return None
    span, old = found
    cut = _relative(span, attr[0], old)
    original = _parse_statement(old)
    if cut is None or original is None:
        return None
    name = receiver.value.value
    start, end = cut
    rewritten = old[:start] + name + old[end:]
    first = ctx.source.line_text(span.start_line)
    indent = first[:span.start_col]
    if indent.strip():
        return None
    new = f"{name} = {name}.clone()\n{indent}{rewritten}"
    # what it must mean: the copy, then the original statement with exactly that `.data` dropped
    targets = [n for n in ast.walk(original) if isinstance(n, ast.Attribute) and n.attr == "data"
               and isinstance(n.value, ast.Name) and n.value.id == name
               and (n.col_offset, getattr(n, "end_col_offset", None)) == (start, end)]
    if len(targets) != 1:
        return None
    copied = copy.deepcopy(original)
    for node in ast.walk(copied):
        for field_name, value in ast.iter_fields(node):
            if isinstance(value, ast.Attribute) and (value.col_offset, value.end_col_offset) == (start, end) \
                    and value.attr == "data":
                setattr(node, field_name, value.value)
    try:
        built = ast.parse(new.replace("\n" + indent, "\n", 1)).body
    except (SyntaxError, ValueError):
        return None
    clone = ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Call(
        func=ast.Attribute(value=ast.Name(name, ast.Load()), attr="clone", ctx=ast.Load()), args=[], keywords=[]))
    if len(built) != 2 or _dump(built[0]) != _dump(clone) or _dump(built[1]) != _dump(copied):
        return None
    return Edit(span, new), f"{name} = {name}.clone()` then `{rewritten.splitlines()[0]}"


# ---------------------------------------------------------------- rows of a tensor as single views
def rows_as_select_views(ctx, node, hint) -> tuple[Edit, str] | None:
    """`for t in x:` (or `zip(x, ...)`) yields the views of `x.unbind(0)`, which forbid in-place writes; the same
    rows taken one by one (`x[i]`, a single view each) allow them, and the writes still reach `x`.
    `x` -> `(v[i] for v in [x] for i in range(len(v)))`: `x` is evaluated once, where it was, as before."""
    found = text_of(ctx, node, hint)
    if found is None or has_comment_or_continuation(node, found[1]):
        return None
    span, old = found
    inner = old if is_primary(node) else f"({old})"
    new = f"(v[i] for v in [{inner}] for i in range(len(v)))"
    original = _parse_expression(old)
    if original is None:
        return None
    expected = ast.GeneratorExp(
        elt=ast.Subscript(value=ast.Name("v", ast.Load()), slice=ast.Name("i", ast.Load()), ctx=ast.Load()),
        generators=[
            ast.comprehension(target=ast.Name("v", ast.Store()), iter=ast.List(elts=[original], ctx=ast.Load()),
                              ifs=[], is_async=0),
            ast.comprehension(target=ast.Name("i", ast.Store()), iter=ast.Call(
                func=ast.Name("range", ast.Load()), args=[ast.Call(func=ast.Name("len", ast.Load()),
                                                                   args=[ast.Name("v", ast.Load())], keywords=[])],
                keywords=[]), ifs=[], is_async=0)])
    if not _same(_parse_expression(new), expected, original):
        return None
    return Edit(span, new), new


def drop_inplace_suffix(ctx, call, hint) -> tuple[Edit, str] | None:
    """`log_stds.clamp_(-20, 2)` used as a value -> `log_stds.clamp(-20, 2)`: the same value, the tensor itself
    (and its base) no longer written."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return None
    attr = call.func.attr.value
    if not attr.endswith("_") or attr.endswith("__"):
        return None
    found = text_of(ctx, call, hint)
    attr_text = text_of(ctx, call.func.attr, hint)
    if found is None or attr_text is None or has_comment_or_continuation(call, found[1]):
        return None
    span, old = found
    cut = _relative(span, attr_text[0], old)
    original = _parse_expression(old)
    if cut is None or original is None or not isinstance(original, ast.Call):
        return None
    new = old[:cut[0]] + attr[:-1] + old[cut[1]:]
    expected = ast.Call(func=ast.Attribute(value=original.func.value, attr=attr[:-1], ctx=ast.Load()),
                        args=original.args, keywords=original.keywords)
    if not _same(_parse_expression(new), expected, original):
        return None
    return Edit(span, new), new


# ---------------------------------------------------------------- a statement moved after the backward()
def move_after(ctx, stmt, hint, after, after_hint, name: str) -> tuple[tuple[Edit, Edit], int] | None:
    """Move the simple statement `stmt` to just after the statement `after` (later in the same block), when no
    statement between them mentions `name`. Returns (the deletion, the insertion) and the line it lands after."""
    span, target = ctx.span(stmt, hint), ctx.span(after, after_hint)
    if span is None or target is None or not span.end_line < target.start_line:
        return None
    source = ctx.source
    lines = source.lines
    first = lines[span.start_line]
    indent = first[:span.start_col]
    if indent.strip() or lines[target.start_line][:len(indent)] != indent or \
            lines[target.start_line][len(indent):len(indent) + 1].isspace() or target.end_line + 1 >= len(lines):
        return None  # not the same block, or the backward is the file's last line without a newline
    between = "\n".join(lines[span.end_line + 1:target.start_line])
    import re

    if re.search(rf"\b{re.escape(name)}\b", between):
        return None  # something between reads or writes it: moving the write would change what it sees
    for line in lines[span.end_line + 1:target.start_line]:
        if line.strip() and not line.startswith(indent):
            return None  # the block ends between them
    body = "\n".join(lines[span.start_line:span.end_line + 1])
    if has_comment_or_continuation(stmt, body) and "\\" in body:
        return None
    if _parse_statement(body[len(indent):]) is None:
        return None
    eol = "\r\n" if lines[target.end_line].endswith("\r") else "\n"  # the line ends of where it lands
    moved = eol.join(line.removesuffix("\r") for line in lines[span.start_line:span.end_line + 1]) + eol
    delete = Edit(Span(span.start_line, 0, span.end_line + 1, 0), "")
    insert = Edit(Span(target.end_line + 1, 0, target.end_line + 1, 0), moved)
    return (delete, insert), target.end_line + 1


def wrap_no_grad_run(ctx, members) -> Edit | None:
    """Adjacent statements (`w -= lr * w.grad` then `b -= lr * b.grad`), each `(stmt, hint)`, inside one
    `with <torch>.no_grad():`; None unless they are whole lines following one another at one indentation."""
    torch = ctx.torch_name(*members[0]) if members else None
    spans = [ctx.span(stmt, hint) for stmt, hint in members]
    if torch is None or len(members) < 2 or any(s is None for s in spans) or any(
            not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 for stmt, _ in members):
        return None
    source = ctx.source
    indent = source.line_text(spans[0].start_line)[:spans[0].start_col]
    if indent.strip():
        return None
    for prev, nxt in zip(spans, spans[1:]):
        if nxt.start_line != prev.end_line + 1 or nxt.start_col != spans[0].start_col:
            return None
    for span in spans:
        if source.line_text(span.start_line)[:span.start_col] != indent:
            return None
        rest = source.line_text(span.end_line)[span.end_col:]
        if rest.strip() and not rest.strip().startswith("#"):
            return None
    first, last = spans[0], spans[-1]
    unit = indent_unit(source.lines, indent)
    starts = {s.start_line for s in spans}
    lines = source.lines[first.start_line:last.end_line + 1]
    body = "\n".join((indent + unit + line[len(indent):]) if first.start_line + i in starts else line
                     for i, line in enumerate(lines))
    new = f"{indent}with {torch}.no_grad():\n{body}"
    originals = [_parse_statement(source.slice(s) if s.start_line == s.end_line else
                                  "\n".join(source.lines[s.start_line:s.end_line + 1])[s.start_col:]) for s in spans]
    if any(o is None for o in originals):
        return None
    try:
        built = ast.parse(new[len(indent):].replace("\n" + indent, "\n")).body if indent else ast.parse(new).body
    except (SyntaxError, ValueError):
        return None
    expected = ast.With(items=[ast.withitem(context_expr=ast.Call(
        func=ast.Attribute(value=ast.Name(torch, ast.Load()), attr="no_grad", ctx=ast.Load()), args=[],
        keywords=[]))], body=originals)
    if len(built) != 1 or _dump(built[0]) != _dump(expected):
        return None
    return Edit(Span(first.start_line, 0, last.end_line, len(source.line_text(last.end_line))), new)
