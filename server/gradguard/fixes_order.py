"""Statement-order repairs for the graph-lifetime rules (GG401): recompute, after `step()`, the forward a later
backward needs, and detach what crosses into the stepped model for its own loss.

The standard GAN loop is the model:

    fake_out = netD(fake_img)          ->  fake_out = netD(fake_img.detach())   # D's own loss: stops at D
    d_loss = 1 - real_out + fake_out       d_loss = 1 - real_out + fake_out
    d_loss.backward()                      d_loss.backward()
    optimizerD.step()                      optimizerD.step()
                                           fake_out = netD(fake_img)            # recomputed with D's new weights
    g_loss = crit(fake_out, ...)           g_loss = crit(fake_out, ...)
    g_loss.backward()                      g_loss.backward()

What is recomputed is the slice of the block, before the step, that the later loss is computed from AND that runs
the stepped model (or is computed from what it returned): the generator's own forward is not run again. A slice
statement that nothing before the step reads is moved; one the stepped model's own loss reads too is copied, and in
the kept copy each argument of the stepped model's call that carries another model's graph gets `.detach()`, so
that loss's backward neither fills the other model's `.grad` nor frees the graph the recomputed loss goes through.

Refused (no edit) when the step and the backward are not in one statement list, when a slice statement is a
compound statement or shares its line, when a name a recomputed statement reads is re-bound between it and the
step, or when the result does not parse. The text reused is the user's own, line for line.
"""
from __future__ import annotations

import ast

import libcst as cst

from .findings import Edit
from .fixes import is_primary, text_of
from .source import Span


# ---------------------------------------------------------------- names read and bound by a statement
def _dotted(node) -> str:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    return ".".join([node.value, *reversed(parts)]) if isinstance(node, cst.Name) else ""


class _Reads(cst.CSTVisitor):
    """Names and dotted names (`self.D`) loaded in an expression; attribute names and keywords are not reads."""

    def __init__(self):
        self.names: set[str] = set()

    def visit_Name(self, node):
        self.names.add(node.value)

    def visit_Attribute(self, node):
        dotted = _dotted(node)
        if dotted:
            self.names.add(dotted)
        node.value.visit(self)
        return False

    def visit_Arg(self, node):
        node.value.visit(self)
        return False

    def visit_Lambda(self, node):
        return False  # its parameters are not reads; its body runs later


def _reads(node) -> set[str]:
    v = _Reads()
    node.visit(v)
    return v.names


def _targets(small) -> list | None:
    if isinstance(small, cst.Assign):
        return [t.target for t in small.targets]
    if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        return [small.target]
    return None


def _binds(target) -> set[str]:
    """Names a target re-binds or mutates (`u[i] = ...` mutates `u`; `self.x = ...` binds `self.x`)."""
    out: set[str] = set()
    stack = [target]
    while stack:
        t = stack.pop()
        if isinstance(t, cst.Name):
            out.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            stack.extend(e.value for e in t.elements)
        elif isinstance(t, cst.StarredElement):
            stack.append(t.value)
        elif isinstance(t, cst.Attribute):
            out.add(_dotted(t) or _dotted(t.value))
        elif isinstance(t, cst.Subscript):
            base = t.value
            while isinstance(base, cst.Subscript):
                base = base.value
            out.add(_dotted(base))
    out.discard("")
    return out


def _stmt_binds(stmt) -> set[str] | None:
    """What a statement binds; None for statements the slice cannot reason about (compound, several on a line)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return None
    out: set[str] = set()
    for small in stmt.body:
        targets = _targets(small)
        if targets is not None:
            for t in targets:
                out |= _binds(t)
        if isinstance(small, (cst.Global, cst.Nonlocal, cst.Del, cst.Import, cst.ImportFrom)):
            return None
    return out


def _stmt_reads(stmt) -> set[str]:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return _reads(stmt)
    out: set[str] = set()
    for small in stmt.body:
        if isinstance(small, cst.Assign):
            out |= _reads(small.value)
            for t in small.targets:  # `u[i] = v` reads u and i
                if not isinstance(t.target, cst.Name):
                    out |= _reads(t.target) - _binds(t.target)
        elif isinstance(small, cst.AugAssign):
            out |= _reads(small.value) | _binds(small.target)
        elif isinstance(small, cst.AnnAssign):
            out |= _reads(small.value) if small.value is not None else set()
        else:
            out |= _reads(small)
    return out


def _conflicts(bound: set[str], read: set[str]) -> bool:
    """A binding of `bound` changes what `read` sees (`self` re-bound changes `self.D`)."""
    return any(b == r or r.startswith(b + ".") or b.startswith(r + ".") for b in bound for r in read)


# ---------------------------------------------------------------- locating statements
def _parents(top) -> dict[int, object]:
    parents: dict[int, object] = {}
    stack = [top]
    while stack:
        node = stack.pop()
        for child in node.children:
            parents[id(child)] = node
            stack.append(child)
    return parents


def _statement_of(node, parents):
    while node is not None and not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        node = parents.get(id(node))
    return node


def _contains(root, target) -> bool:
    stack = [root]
    while stack:
        n = stack.pop()
        if n is target:
            return True
        stack.extend(n.children)
    return False


# ---------------------------------------------------------------- the repair
def recompute_after_step(ctx, problems) -> tuple[Edit, dict] | None:
    """One edit (from the first changed line through the inserted lines) repairing a step between a forward and a
    later backward through it. `problems`: the stale-save problems of one step and one later backward.
    Returns the edit and what it does ({"detached": [...], "recomputed": [...], "moved": [...], "after": line})."""
    first = problems[0]
    write, use = first.write, first.use
    top = write.top or first.top  # the top-level statement holding the step (a class, for a method's step)
    if use is None or top is None or first.detail.get("site") is not None:
        return None
    tree = top
    if not _contains(top, use):
        # module-level code: a run of simple statements is one parsed block, its module the statement list
        block_of = getattr(ctx.locator, "_top_block", {}).get(id(top))
        tree = block_of.module if block_of is not None else None
        if tree is None or not _contains(tree, use):
            return None
    parents = _parents(tree)
    step_stmt = _statement_of(write.node, parents)
    use_stmt = _statement_of(use, parents)
    if not isinstance(step_stmt, cst.SimpleStatementLine) or not isinstance(use_stmt, cst.SimpleStatementLine):
        return None
    block = parents.get(id(step_stmt))
    if block is None or parents.get(id(use_stmt)) is not block:
        return None
    body = list(block.body)
    i_step = next(i for i, s in enumerate(body) if s is step_stmt)
    i_use = next(i for i, s in enumerate(body) if s is use_stmt)
    if i_use <= i_step or len(step_stmt.body) != 1:
        return None
    receiver = _receiver(use)
    if receiver is None:
        return None
    # Statements before the step that run the stepped model: where the problems' forwards ran.
    forward_calls = []
    for p in problems:
        site = p.detail.get("forward")
        call = site[0] if site is not None else p.save.node
        if isinstance(call, cst.Call) and all(c is not call for c in forward_calls):
            forward_calls.append(call)
    forward_index = {}
    for call in forward_calls:
        stmt = _statement_of(call, parents)
        if stmt is None or parents.get(id(stmt)) is not block:
            return None
        i = next(i for i, s in enumerate(body) if s is stmt)
        if i > i_step:
            continue
        forward_index.setdefault(i, []).append(call)
    if not forward_index:
        return None
    # The backward slice of the later loss: walk back from the backward, through the statements after the step
    # (they run again anyway), to those before it.
    need = _reads(receiver)
    cone: list[int] = []
    for i in range(i_use - 1, -1, -1):
        stmt = body[i]
        binds = _stmt_binds(stmt)
        if binds is None:
            if i < i_step and isinstance(stmt, cst.BaseCompoundStatement) and _conflicts(_assigned_in(stmt), need):
                return None  # the loss's inputs are bound inside an if/for/with before the step
            continue
        if not _conflicts(binds, need):
            continue
        need |= _stmt_reads(stmt)
        if i < i_step:
            cone.append(i)
    cone.sort()
    # Other calls of the same model in the slice run it too (`self.D(x_fake, ...)` beside the reported
    # `self.D(x_true, ...)`): the analysis names one forward per saved layer, not every call.
    callees = {ctx.code(c.func) for calls in forward_index.values() for c in calls}
    for i in cone:
        for call in _calls(body[i]):
            if ctx.code(call.func) in callees and all(c is not call for c in forward_index.get(i, [])):
                forward_index.setdefault(i, []).append(call)
    # A forward of the stepped model whose inputs carry no graph (G(noise)) gives the later loss nothing to train
    # behind it but the model that just stepped: the later loss reads its output detached (`D(fake.detach())`)
    # instead of running it again. Only where every read of that output is an argument of another call.
    detach_names: set[str] = set()
    cut: dict[int, list] = {}
    for i in sorted(forward_index):
        if i not in cone:
            continue
        calls = forward_index[i]
        if any(_graph_from_outside(ctx, a.value, write.node) for c in calls for a in c.args) or len(body[i].body) != 1:
            continue
        names = _stmt_binds(body[i])
        reads = {j: _arg_reads(body[j], names, callees) for j in cone if j > i}
        readers = [j for j in cone if j > i and _conflicts(names, _stmt_reads(body[j]))]
        if not names or not readers or any(reads[j] is None or j in forward_index for j in readers):
            continue
        # each read feeds another model (its result fills .grad of parameters this step does not update)
        if not all(_graph_from_outside(ctx, call, write.node) for j in readers for _, call in reads[j]):
            continue
        detach_names |= names
        for j in readers:
            cut[j] = [name for name, _ in reads[j]]
        del forward_index[i]
    # Of the slice, recompute what runs the stepped model or is computed from what it returned.
    tainted: set[str] = set(detach_names)
    recompute: list[int] = []
    for i in cone:
        stmt = body[i]
        if i in forward_index or _conflicts(tainted, _stmt_reads(stmt)):
            if len(stmt.body) != 1:
                return None
            recompute.append(i)
            tainted |= _stmt_binds(stmt)
    if not recompute:
        return None
    chosen = set(recompute)
    # A recomputed statement must read, after the step, what it read before: nothing else re-binds its inputs.
    for i in recompute:
        reads = _stmt_reads(body[i])
        for j in range(i + 1, i_step + 1):
            if j in chosen:
                continue
            if _conflicts(_assigned_in(body[j]), reads):
                return None
    # Kept in place (copied) when something before the step reads what it binds; otherwise moved.
    kept: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in recompute:
            if i in kept:
                continue
            binds = _stmt_binds(body[i])
            readers = [j for j in range(i + 1, i_step + 1) if (j not in chosen or j in kept)
                       and _conflicts(binds, _stmt_reads(body[j]))]
            if readers:
                kept.add(i)
                changed = True
    # Detach, in the kept forwards, the arguments that carry another model's graph into the stepped model.
    detach_edits: list[tuple[Span, str, str]] = []
    for i in sorted(kept & set(forward_index)):
        for call in forward_index[i]:
            for arg in call.args:
                if arg.keyword is None and arg.star:
                    return None
                if _crosses(ctx, arg.value, write.node):
                    found = text_of(ctx, arg.value, top)
                    if found is None:
                        return None
                    span, old = found
                    new = f"{old}.detach()" if is_primary(arg.value) else f"({old}).detach()"
                    detach_edits.append((span, old, new))
    forwards = [i + 1 for i in recompute if i in forward_index]  # statements running the stepped model again
    return _build(ctx, top, body, i_step, recompute, kept, detach_edits, step_stmt, cut, forwards)


def _graph_from_outside(ctx, expr, step_node) -> bool:
    """`expr` may carry a graph into parameters the step does not update (unknown counts as yes: only a proven
    plain input, or one computed from the stepped model's own layers, is 'no')."""
    from .facts.model import Tensor

    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return False
    value = ctx.facts.expr_values.get(id(expr)) or ctx.facts.name_values.get(id(expr))
    if not isinstance(value, Tensor):
        return True
    if value.requires_grad is False and not value.history:
        return False
    owners = list(value.owners)
    return not owners or not all(_stepped_by(o, step_node) for o in owners)


def _arg_reads(stmt, names: set[str], callees: set[str]):
    """The Name nodes reading `names` in `stmt` when each is a whole argument of a call of another model (not one
    of `callees`); None when some read is anything else."""
    found, ok = [], [True]

    class V(cst.CSTVisitor):
        def visit_Call(self, node):
            node.func.visit(self)
            for arg in node.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in names and not arg.star:
                    if cst.Module([]).code_for_node(node.func) in callees:
                        ok[0] = False
                    found.append((arg.value, node))
                else:
                    arg.value.visit(self)
            return False

        def visit_Name(self, node):
            if node.value in names:
                ok[0] = False

        def visit_Attribute(self, node):
            node.value.visit(self)
            return False

    if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
        stmt.body[0].value.visit(V())
    else:
        return None
    return found if ok[0] and found else None


def _calls(stmt) -> list:
    out, stack = [], [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Lambda):
            continue
        if isinstance(n, cst.Call):
            out.append(n)
        stack.extend(n.children)
    return out


def _assigned_in(stmt) -> set[str]:
    """Every name a statement (compound ones included) binds or mutates by assignment."""
    out: set[str] = set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        targets = _targets(n) if isinstance(n, cst.BaseSmallStatement) else None
        if targets:
            for t in targets:
                out |= _binds(t)
        if isinstance(n, (cst.For, cst.CompFor)):
            out |= _binds(n.target)
        if isinstance(n, cst.AsName):
            out |= _binds(n.name)
        if isinstance(n, cst.NamedExpr):
            out |= _binds(n.target)
        stack.extend(n.children)
    return out


def _receiver(use):
    """The tensor a backward call runs from: `loss` in `loss.backward()`, the first argument of
    `torch.autograd.backward(loss)`."""
    if not isinstance(use, cst.Call):
        return None
    if _dotted(use.func).endswith("autograd.grad") or (isinstance(use.func, cst.Name) and use.func.value == "grad"):
        return use.args[0].value if use.args else None
    if isinstance(use.func, cst.Attribute) and use.func.attr.value == "backward":
        if _dotted(use.func).endswith("autograd.backward"):
            return use.args[0].value if use.args else None
        return use.func.value
    return None


def _crosses(ctx, expr, step_node) -> bool:
    """`expr` is a tensor with a graph whose backward fills `.grad` of parameters, none of them updated by the step
    (`step_node`): another model's output crossing into the stepped one."""
    from .facts.model import Tensor

    value = ctx.facts.expr_values.get(id(expr)) or ctx.facts.name_values.get(id(expr))
    if not isinstance(value, Tensor) or value.requires_grad is False or not value.history:
        return False
    owners = list(value.owners)
    # the stepped model's own graph (its body feeding its head) is what its loss trains: never cut
    return bool(owners) and not any(_stepped_by(owner, step_node) for owner in owners)


def _stepped_by(owner, step_node) -> bool:
    counter = getattr(owner, "params_counter", None) or getattr(owner, "counter", None)
    return counter is None or any(w.kind == "step" and w.node is step_node for w in counter.writes)


def _line_span(ctx, stmt, top) -> tuple[int, int] | None:
    span = ctx.span(stmt, top)
    return (span.start_line, span.end_line) if span else None


def _build(ctx, top, body, i_step, recompute, kept, detach_edits, step_stmt, cut,
           forwards) -> tuple[Edit, dict] | None:
    source = ctx.source
    spans = {}
    for i in recompute:
        lines = _line_span(ctx, body[i], top)
        if lines is None:
            return None
        spans[i] = lines
    step_lines = _line_span(ctx, step_stmt, top)
    if step_lines is None:
        return None
    first_line = min([spans[i][0] for i in recompute] + [s.start_line for s, _, _ in detach_edits])
    last_line = step_lines[1]
    region_end = len(source.line_text(last_line))
    start = source.offset(first_line, 0)
    end = source.offset(last_line, region_end)
    region = source.text[start:end]
    # The statements to run again, as the user wrote them (whole lines, their comments too).
    copies = []
    for i in recompute:
        a = source.offset(spans[i][0], 0)
        text = source.text[a:source.offset(spans[i][1], len(source.line_text(spans[i][1])))]
        for name in sorted(cut.get(i, []), key=lambda n: ctx.span(n, top).start_line * 10**6 + ctx.span(n, top).start_col,
                           reverse=True):
            sp = ctx.span(name, top)
            x, y = source.offset(sp.start_line, sp.start_col) - a, source.offset(sp.end_line, sp.end_col) - a
            text = text[:x] + text[x:y] + ".detach()" + text[y:]
        copies.append(text)
    # Apply, inside the region, the detach() insertions and the removal of moved statements, last first.
    cuts = []
    for span, old, new in detach_edits:
        cuts.append((source.offset(span.start_line, span.start_col) - start,
                     source.offset(span.end_line, span.end_col) - start, new))
    for i in recompute:
        if i not in kept:
            a = source.offset(spans[i][0], 0) - start
            b = source.offset(spans[i][1] + 1, 0) - start if spans[i][1] + 1 <= last_line else len(region)
            cuts.append((a, b, ""))
    cuts.sort(key=lambda c: c[0], reverse=True)
    prev = len(region) + 1
    for a, b, new in cuts:
        if b > prev:
            return None  # overlapping pieces: refuse rather than guess
        region = region[:a] + new + region[b:]
        prev = a
    new_text = region + "".join("\n" + c for c in copies)
    # The whole file must parse after the edit, and the inserted statements must be the originals.
    fixed = source.text[:start] + new_text + source.text[end:]
    try:
        ast.parse(fixed)
    except (SyntaxError, ValueError):
        return None
    info = {
        "detached": [new for _, _, new in detach_edits],
        "detached_later": sorted({f"{n.value}.detach()" for names in cut.values() for n in names}),
        "recomputed": [ctx.code(body[i]).strip() for i in recompute if i in kept],
        "moved": [ctx.code(body[i]).strip() for i in recompute if i not in kept],
        "lines": [spans[i][0] + 1 for i in recompute],
        "forwards": forwards,
        "after": step_lines[1] + 1,
    }
    return Edit(Span(first_line, 0, last_line, region_end), new_text), info
