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
from .fixes import _name_order, is_primary, text_of
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


def _full_binds(stmt) -> set[str]:
    """Names a simple statement re-binds outright (`x = ...`, `a, b = ...`, `self.h = ...`; not `u[i] = ...`)."""
    out: set[str] = set()
    if not isinstance(stmt, cst.SimpleStatementLine):
        return out
    for small in stmt.body:
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            stack = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            while stack:
                t = stack.pop()
                if isinstance(t, (cst.Tuple, cst.List)):
                    stack.extend(e.value for e in t.elements)
                elif isinstance(t, (cst.Name, cst.Attribute)) and _dotted(t):
                    out.add(_dotted(t))
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
    site = first.detail.get("site")  # the step runs inside a helper: its call here is the step statement
    step_node, top = site if site is not None else (write.node, write.top or first.top)
    if use is None or top is None:
        return None
    # which writes are this step: a helper's one `opt.step()` steps every optimizer passed to it
    stepped = (write.node, step_node if site is not None else None)
    # Statements that run the stepped model: where the problems' forwards ran.
    forward_calls = _forward_calls(problems)
    tree = _tree_of(ctx, [use, step_node, *forward_calls], top) or _tree_of(ctx, [step_node, *forward_calls], top)
    if tree is None:
        return None
    parents = _parents(tree)
    step_stmt = _statement_of(step_node, parents)
    if not isinstance(step_stmt, cst.SimpleStatementLine) or len(step_stmt.body) != 1:
        return None
    block = parents.get(id(step_stmt))
    if block is None:
        return None
    forward_stmts = [_statement_of(c, parents) for c in forward_calls]
    if not forward_stmts or any(s is None for s in forward_stmts):
        return None
    # The later backward, as this function reaches it: the call itself, or (written in a helper, `update(opt, loss)`)
    # the later call of that helper whose arguments are computed from a forward of the graph.
    own = _function_of(step_stmt, parents)
    if _contains(tree, use) and _function_of(use, parents) is own:
        receiver = _receiver(use)
        if receiver is None:
            return None
        use_stmt, need = _statement_of(use, parents), _reads(receiver)
    else:
        found = _helper_backward_call(ctx, use, tree, parents, step_stmt, forward_stmts)
        if found is None:
            return None
        call = found
        use_stmt, need = _statement_of(call, parents), set().union(*(_reads(a.value) for a in call.args))
    if not isinstance(use_stmt, cst.SimpleStatementLine):
        return None
    # A step inside an `if` (`if k % n_critic == 0: g_loss.backward(...); opt_g.step()`) before a later backward in
    # another block: the whole `if` is the step statement of the block both are in.
    while _level(use_stmt, block, parents) is None:
        holder = parents.get(id(block))
        if not isinstance(block, cst.IndentedBlock) or not isinstance(holder, cst.If) or holder.body is not block:
            return None
        step_stmt, block = holder, parents.get(id(holder))
        if block is None or _function_of(step_stmt, parents) is not own:
            return None
    inner = None  # the block of an `if` after the step that holds the backward (a Hessian estimate every k steps)
    if parents.get(id(use_stmt)) is not block:
        inner = parents.get(id(use_stmt))
        holder = parents.get(id(inner))
        inner_body = list(inner.body)
        for stmt in reversed(inner_body[:next(i for i, s in enumerate(inner_body) if s is use_stmt)]):
            binds = _stmt_binds(stmt)
            if binds is None:
                if _conflicts(_assigned_in(stmt), need):
                    return None
                continue
            if _conflicts(binds, need):
                need = (need - _full_binds(stmt)) | _stmt_reads(stmt)
        need |= _reads(holder.test)
        use_stmt = holder
        inner = (inner, holder)
    body = list(block.body)
    i_step = next(i for i, s in enumerate(body) if s is step_stmt)
    i_use = next(i for i, s in enumerate(body) if s is use_stmt)
    if i_use <= i_step:
        return None
    forward_index = {}
    for call, stmt in zip(forward_calls, forward_stmts):
        if parents.get(id(stmt)) is not block:
            return None
        i = next(i for i, s in enumerate(body) if s is stmt)
        if i > i_step:
            continue
        forward_index.setdefault(i, []).append(call)
    if not forward_index:
        return None
    # The backward slice of the later loss: walk back from the backward, through the statements after the step
    # (they run again anyway), to those before it.
    cone: list[int] = []
    for i in range(i_use - 1, -1, -1):
        stmt = body[i]
        binds = _stmt_binds(stmt)
        if binds is None:
            # a loop or `if` before the step that adds to the loss's inputs (`for u in ...: loss += ...`): part of
            # the slice as a whole, by everything it reads (nothing it binds is sure to be re-bound)
            if i < i_step and isinstance(stmt, (cst.For, cst.If)) and _conflicts(_assigned_in(stmt), need):
                if stmt.orelse is not None or _has_jump(stmt):
                    return None
                need |= _reads(stmt)
                cone.append(i)
            elif i < i_step and isinstance(stmt, cst.BaseCompoundStatement) and _conflicts(_assigned_in(stmt), need):
                return None  # the loss's inputs are bound inside a with/while/try before the step
            continue
        if not _conflicts(binds, need):
            continue
        need = (need - _full_binds(stmt)) | _stmt_reads(stmt)
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
    # A model bound as an alias of another under a condition (`self.critic_encoder = self.encoder if shared else
    # nn.GRU(...)`): which parameters it shares with the stepped model is not known, so neither is what to recompute.
    aliased = _conditional_aliases(ctx)
    if any(_dotted(c.func) in aliased for i in cone for c in _calls(body[i])):
        return None
    # So does a statement binding a tensor that the stepped parameters computed (an encoder shared by the critic
    # and the actor, `seq, _ = self.encoder(obs)`), even where the analysis recorded no save in it: its graph may
    # hold the old weights too.
    stepped_outputs = {i for i in cone if i < i_step and i not in forward_index
                       and isinstance(body[i], cst.SimpleStatementLine) and _binds_stepped_output(ctx, body[i], stepped)}
    # A forward of the stepped model whose inputs carry no graph (G(noise)) gives the later loss nothing to train
    # behind it but the model that just stepped: the later loss reads its output detached (`D(fake.detach())`)
    # instead of running it again. Only where every read of that output is an argument of another call.
    detach_names: set[str] = set()
    cut: dict[int, list] = {}
    for i in sorted(forward_index):
        if i not in cone:
            continue
        calls = forward_index[i]
        if any(_graph_from_outside(ctx, a.value, stepped) for c in calls for a in c.args) or len(body[i].body) != 1:
            continue
        if any(_value(ctx, c) is not None and _graph_from_outside(ctx, c, stepped) for c in calls):
            continue  # a forward of a model the step does not update (D(fake) after G's step): run it again
        names = _stmt_binds(body[i])
        reads = {j: _arg_reads(body[j], names, callees) for j in cone if j > i}
        readers = [j for j in cone if j > i and _conflicts(names, _stmt_reads(body[j]))]
        if not names or not readers or any(reads[j] is None for j in readers):
            continue
        # each read feeds another model (its result fills .grad of parameters this step does not update)
        if not all(_adds_model(ctx, call, name, stepped) for j in readers for name, call in reads[j]):
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
        if i in forward_index or i in stepped_outputs or _conflicts(tainted, _stmt_reads(stmt)):
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) != 1:
                return None
            recompute.append(i)
            tainted |= _binds_of(stmt)
    if not recompute:
        return None
    recompute = _with_reaching_definitions(body, recompute, i_step)
    if recompute is None:
        return None
    chosen = set(recompute)
    # Kept in place (copied) when something before the step reads what it binds; otherwise moved.
    kept: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in recompute:
            if i in kept:
                continue
            binds = _binds_of(body[i])
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
                if _crosses(ctx, arg.value, stepped):
                    found = text_of(ctx, arg.value, top)
                    if found is None:
                        return None
                    span, old = found
                    new = f"{old}.detach()" if is_primary(arg.value) else f"({old}).detach()"
                    detach_edits.append((span, old, new))
    forwards = [i + 1 for i in recompute if i in forward_index]  # statements running the stepped model again
    built = _build(ctx, top, body, i_step, recompute, kept, detach_edits, step_stmt, cut, forwards, inner)
    if built is not None and site is not None:
        built[1]["step_call"] = ctx.code(step_node)  # the helper call that steps (`update(opt, loss)`)
    return built


def _conditional_aliases(ctx) -> set[str]:
    """Dotted names assigned a conditional expression with a name or attribute in one arm anywhere in the file
    (`self.critic_encoder = self.encoder if shared_encoder else nn.GRU(...)`), memoised per check."""
    memo = ctx.__dict__.get("_conditional_aliases")
    if memo is not None:
        return memo
    out: set[str] = set()
    tree = _whole_module(ctx)
    stack = [tree] if tree is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Assign) and isinstance(n.value, cst.IfExp) and any(
                isinstance(arm, (cst.Name, cst.Attribute)) for arm in (n.value.body, n.value.orelse)):
            out |= {_dotted(t.target) for t in n.targets} - {""}
        stack.extend(n.children)
    ctx.__dict__["_conditional_aliases"] = out
    return out


def _binds_stepped_output(ctx, stmt, stepped) -> bool:
    """A name this assignment binds holds a tensor with a graph into parameters the step updates."""
    small = stmt.body[0] if len(stmt.body) == 1 else None
    if not isinstance(small, (cst.Assign, cst.AnnAssign)):
        return False
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    for target in targets:
        for name in _names_in(target):
            value = _value(ctx, name)
            if value is None or value.requires_grad is False:
                continue
            owners = [o for o in value.owners if getattr(o, "params_counter", None) or getattr(o, "counter", None)]
            if any(_stepped_by(o, stepped) for o in owners):
                return True
    return False


def _binds_of(stmt) -> set[str]:
    binds = _stmt_binds(stmt)
    return binds if binds is not None else _assigned_in(stmt)


def _loop_targets(stmt) -> set[str]:
    """Names a statement binds before it reads them: the targets of its `for` loops and comprehensions."""
    out: set[str] = set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.For, cst.CompFor)):
            out |= _binds(n.target)
        stack.extend(n.children)
    return out


def _has_jump(stmt) -> bool:
    """A `break`, `continue`, `return` or `yield` inside: the statement does not run the same way when copied."""
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.Await)):
            return True
        if not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(n.children)
    return False


def _with_reaching_definitions(body, recompute: list[int], i_step: int) -> list[int] | None:
    """The statements to run again after the step, grown until each reads there what it read the first time: a
    name one of them reads keeps its value only when nothing from that statement through the step re-binds it,
    or when the statement that bound it is run again too (`loss = 0` before `for ...: loss += ...`, `x = x / 2`).
    None when a name bound outside the block is re-bound in between (the first value is gone)."""
    chosen = set(recompute)
    changed = True
    while changed:
        changed = False
        for i in sorted(chosen):
            for name in _stmt_reads(body[i]) - _loop_targets(body[i]):
                binders = [j for j in range(0, i_step + 1)
                           if any(b == name or name.startswith(b + ".") for b in _assigned_in(body[j], leaking=True))]
                before = [j for j in binders if j < i]
                d = before[-1] if before else None
                if d is not None and d in chosen:
                    continue
                if any(j in chosen for j in before):
                    return None  # an earlier binder runs again, but not the one this statement read
                if not any(j >= i for j in binders):
                    continue  # nothing re-binds it before the recompute reads it
                if d is None:
                    return None
                chosen.add(d)
                changed = True
                break
            if changed:
                break
    return sorted(chosen)


def _function_of(node, parents):
    """The def whose body holds `node` (None at module level)."""
    node = parents.get(id(node))
    while node is not None and not isinstance(node, cst.FunctionDef):
        node = parents.get(id(node))
    return node


def _level(stmt, block, parents) -> int | None:
    """0 when `stmt` is a statement of `block`, 1 when it is one of an `if` there, else None."""
    outer = parents.get(id(stmt))
    if outer is block:
        return 0
    holder = parents.get(id(outer))
    if isinstance(outer, cst.IndentedBlock) and isinstance(holder, cst.If) and parents.get(id(holder)) is block:
        return 1
    return None


def _callee_name(call) -> str:
    func = call.func
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""


def _helper_backward_call(ctx, use, tree, parents, step_stmt, forward_stmts):
    """The backward runs inside a helper (`def update(opt, loss): ...; loss.backward()`): the first call of that
    helper after the step, in the step's block, whose arguments are computed from one of the graph's forwards."""
    if not _contains(tree, use):
        tree = _whole_module(ctx)
        if tree is None or not _contains(tree, use):
            return None
        use_parents = _parents(tree)
    else:
        use_parents = parents
    helper = _function_of(use, use_parents)
    block = parents.get(id(step_stmt))
    if helper is None or block is None:
        return None
    body = list(block.body)
    i_step = next(i for i, st in enumerate(body) if st is step_stmt)
    forward_at = {i for i, st in enumerate(body) if any(st is f for f in forward_stmts)}
    for i in range(i_step + 1, len(body)):
        for call in _calls(body[i]):
            if _callee_name(call) != helper.name.value or any(a.star for a in call.args):
                continue
            need = set().union(*(_reads(a.value) for a in call.args))
            if forward_at & set(_cone_of(body, i, need)):
                return call
    return None


def _whole_module(ctx):
    blocks = getattr(ctx.locator, "blocks", [])
    return cst.Module(body=[st for pb in blocks for st in pb.module.body]) if blocks else None


def _cone_of(body, end: int, need: set[str]) -> list[int]:
    """Indices of the statements before `end` in `body` that values read as `need` are computed from (compound
    statements count by what they assign)."""
    need = set(need)
    out = []
    for i in range(end - 1, -1, -1):
        binds = _stmt_binds(body[i])
        if binds is None:
            binds = _assigned_in(body[i])
            if _conflicts(binds, need):
                need |= _reads(body[i])
                out.append(i)
            continue
        if binds and _conflicts(binds, need):
            need = (need - _full_binds(body[i])) | _stmt_reads(body[i])
            out.append(i)
    return sorted(out)


def _adds_model(ctx, call, arg, step_node) -> bool:
    """`call` runs a model of its own on `arg`: its result fills `.grad` of parameters that `arg`'s graph does not
    reach and the step does not update (`D(fake)`; not `bce(d_fake, ones)`)."""
    result, given = _value(ctx, call), _value(ctx, arg)
    if result is None:
        return False
    mine = {id(o) for o in given.owners} if given is not None else set()
    return any(id(o) not in mine and not _stepped_by(o, step_node) for o in result.owners)


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
    """(Name node, call) for each read of `names` in `stmt` when each is a whole argument of a call; None when some
    read is anything else."""
    found, ok = [], [True]

    class V(cst.CSTVisitor):
        def visit_Call(self, node):
            node.func.visit(self)
            for arg in node.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in names and not arg.star:
                    found.append((arg.value, node))  # whether `node` is another model: _adds_model
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


def _assigned_in(stmt, leaking: bool = False) -> set[str]:
    """Every name a statement (compound ones included) binds or mutates by assignment; with `leaking`, only those
    visible after it (a comprehension's own variables are not)."""
    out: set[str] = set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        targets = _targets(n) if isinstance(n, cst.BaseSmallStatement) else None
        if targets:
            for t in targets:
                out |= _binds(t)
        if isinstance(n, cst.For) or (isinstance(n, cst.CompFor) and not leaking):
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


def _stepped_by(owner, step) -> bool:
    """`step`: the step call, or (the step call, the call of the helper running it, or None)."""
    node, via = step if isinstance(step, tuple) else (step, None)
    counter = getattr(owner, "params_counter", None) or getattr(owner, "counter", None)
    storage = getattr(owner, "params_storage", None) or getattr(owner, "storage", None)
    writes = [*counter.writes, *(storage.silent_writes if storage is not None else ())] if counter is not None else []
    # a fused step writes storage only (no version bump): its writes are the storage's silent ones
    return counter is None or any(w.kind == "step" and w.node is node
                                  and (via is None or any(c[0] is via for c in w.call_chain))
                                  for w in writes)


def _line_span(ctx, stmt, top) -> tuple[int, int] | None:
    span = ctx.span(stmt, top)
    return (span.start_line, span.end_line) if span else None


def _build(ctx, top, body, i_step, recompute, kept, detach_edits, step_stmt, cut,
           forwards, inner=None) -> tuple[Edit, dict] | None:
    """With `inner` (the block of an `if` after the step holding the later backward), the copies go at the top of
    that block, one indentation level deeper, so the forward runs again only when that backward does."""
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
    outer_indent = inner_indent = ""
    holder = None
    if inner is not None:
        inner, holder = inner
        first_inner = ctx.span(inner.body[0], top)
        if first_inner is None:
            return None
        last_line = first_inner.start_line - 1  # through the `if` line: the copies open its block
        inner_indent = source.line_text(first_inner.start_line)[:first_inner.start_col]
        outer_indent = ctx.indent_of(step_lines[0])
        if inner_indent.strip() or not inner_indent.startswith(outer_indent):
            return None
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
        if inner is not None:
            lines = text.split("\n")
            if '"""' in text or "'''" in text or not all(ln.startswith(outer_indent) or not ln.strip() for ln in lines):
                return None
            text = "\n".join(inner_indent + ln[len(outer_indent):] if ln.strip() else ln for ln in lines)
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
        "into": ctx.line(holder, top) if holder is not None else 0,  # the `if` whose block the copies open
    }
    return Edit(Span(first_line, 0, last_line, region_end), new_text), info


# ---------------------------------------------------------------- GG404: a backward through a freed graph
def _tree_of(ctx, nodes, top):
    """The statement tree holding all of `nodes`: `top` itself, or for module-level code the parsed block's module,
    or every module-level statement of the file (a run of simple statements, then a `for`, are separate blocks)."""
    nodes = [n for n in nodes if n is not None]
    if top is None or not nodes:
        return None
    if all(_contains(top, n) for n in nodes):
        return top
    block_of = getattr(ctx.locator, "_top_block", {}).get(id(top))
    tree = block_of.module if block_of is not None else None
    if tree is None:
        return None
    if all(_contains(tree, n) for n in nodes):
        return tree
    whole = cst.Module(body=[st for pb in getattr(ctx.locator, "blocks", []) for st in pb.module.body])
    return whole if all(_contains(whole, n) for n in nodes) else None


def _cone(body, end: int, receiver) -> list[int]:
    """Indices of the statements before `end` in `body` that the receiver's value is computed from."""
    need = _reads(receiver)
    out = []
    for i in range(end - 1, -1, -1):
        binds = _stmt_binds(body[i])
        if binds and _conflicts(binds, need):
            need = (need - _full_binds(body[i])) | _stmt_reads(body[i])  # earlier bindings of those are dead here
            out.append(i)
    return sorted(out)


def _never_updated(owner) -> bool:
    """No step or in-place update (`.data` ones included) ever writes these parameters."""
    counter = getattr(owner, "params_counter", None) or getattr(owner, "counter", None)
    storage = getattr(owner, "params_storage", None) or getattr(owner, "storage", None)
    return counter is not None and not counter.writes and not (storage is not None and storage.silent_writes)


def _value(ctx, expr):
    from .facts.model import Tensor

    value = ctx.facts.expr_values.get(id(expr)) or ctx.facts.name_values.get(id(expr))
    return value if isinstance(value, Tensor) else None


def retain_first_graph(ctx, problem) -> tuple[Edit, str] | None:
    """`loss_a.backward()` -> `loss_a.backward(retain_graph=True)`: the second backward needs that graph again."""
    freed = problem.detail.get("freed_by")
    if freed is problem.use or _step_between(ctx, problem) is not False:
        return None  # a step in between would modify the weights the kept graph saved (GG401)
    return retain_graph_at(ctx, freed, problem.detail.get("freed_top") or problem.top)


def _step_between(ctx, problem):
    """The `step()` call between the backward that freed the graph and the one that needs it, in the statements of
    the needing one's block (False: none; None: cannot tell)."""
    freed, use, top = problem.detail.get("freed_by"), problem.use, problem.top
    tree = _tree_of(ctx, [use, freed], top)
    if tree is None:
        return None
    f_line, u_line = ctx.line(freed, top), ctx.line(use, top)
    for call in _calls(tree):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value.endswith("step"):
            if f_line < ctx.line(call, top) < u_line:
                # `first_step(...)` (SAM) and other custom steps update weights too, but cannot be recomputed after
                return call if call.func.attr.value == "step" and not call.args else None
    return False


def recompute_after_freeing_step(ctx, problems) -> tuple[Edit, dict] | None:
    """Two backwards through one graph with a `step()` between them (a second-order update, a Hessian estimate on
    the step's logits): the forward the second one needs is recomputed after that step, as GG401's repair does."""
    from types import SimpleNamespace

    first = problems[0]
    step = _step_between(ctx, first)
    if not step:
        return None
    parents = _parents(_tree_of(ctx, [first.use, step], first.top))
    write = SimpleNamespace(node=step, top=first.top, call_chain=())
    shaped = [SimpleNamespace(write=write, use=p.use, top=p.top, save=p.save,
                              detail={k: v for k, v in p.detail.items() if k == "forward"}) for p in problems]
    if _statement_of(step, parents) is None:
        return None
    return recompute_after_step(ctx, shaped)


def retain_graph_at(ctx, freed, hint) -> tuple[Edit, str] | None:
    """`<loss>.backward(...)` with `retain_graph=True` added (refused when it already says something about it)."""
    if not isinstance(freed, cst.Call) or _receiver(freed) is None:
        return None
    if any(a.keyword is not None and a.keyword.value == "retain_graph" for a in freed.args) or \
            any(a.star for a in freed.args):
        return None
    found = text_of(ctx, freed, hint)
    if found is None or not found[1].endswith(")"):
        return None
    span, old = found
    inner = old[:-1].rstrip()
    sep = "" if inner.endswith("(") else ("" if inner.endswith(",") else ",") + " "
    new = f"{inner}{sep}retain_graph=True)"
    try:
        before, after = ast.parse(f"({old}\n)", mode="eval").body, ast.parse(f"({new}\n)", mode="eval").body
    except SyntaxError:
        return None
    before.keywords.append(ast.keyword(arg="retain_graph", value=ast.Constant(True)))
    if ast.dump(before) != ast.dump(after):
        return None
    return Edit(span, new), new


def detach_crossing(ctx, problem) -> tuple[tuple[Edit, ...], list[str]] | None:
    """Two losses back-propagated one after the other through one graph (a GAN's two players): where a loss reads
    another model's output that the step after its backward does not update (`netD(fake)` in D's loss, followed by
    `optD.step()`), that loss reads it detached (`netD(fake.detach())`), so it no longer frees or trains the other
    model's graph. Only statements that the other loss does not read are changed."""
    freed = problem.detail.get("freed_by")
    use, top = problem.use, problem.top
    if not isinstance(freed, cst.Call) or freed is use or problem.detail.get("site") is not None:
        return None
    if (problem.detail.get("freed_top") or top) is not top:
        return None
    tree = _tree_of(ctx, [use, freed], top)
    if tree is None:
        return None
    parents = _parents(tree)
    sides = {}
    for side, call in (("first", freed), ("second", use)):
        stmt = _statement_of(call, parents)
        block = parents.get(id(stmt))
        receiver = _receiver(call)
        if block is None or receiver is None or not isinstance(stmt, cst.SimpleStatementLine):
            return None
        body = list(block.body)
        i = next(k for k, st in enumerate(body) if st is stmt)
        sides[side] = (body, i, {id(body[k]) for k in _cone(body, i, receiver)}, _step_of(body, i))
    if ctx.line(freed, top) >= ctx.line(use, top):
        return None
    edits, texts = [], []
    for side, other in (("first", "second"), ("second", "first")):
        body, _, cone, step = sides[side]
        if step is None:
            continue
        for stmt in body:
            if id(stmt) not in cone or id(stmt) in sides[other][2]:
                continue  # read by both losses: detaching it would cut the other loss too
            for call in _calls(stmt):
                for arg in call.args:
                    value = _value(ctx, arg.value)
                    if value is None or arg.star or not value.history:
                        continue
                    owners = list(value.owners)
                    if not owners or any(_stepped_by(o, step) for o in owners):
                        continue
                    found = text_of(ctx, arg.value, top)
                    if found is None:
                        return None
                    span, old = found
                    new = f"{old}.detach()" if is_primary(arg.value) else f"({old}).detach()"
                    edits.append(Edit(span, new))
                    texts.append(new)
    return (tuple(edits), texts) if edits else None


def _step_of(body, i: int):
    """The `step()` that applies the gradient of the backward in `body[i]`: the step of the optimizer zeroed last
    before it (`opt_g.zero_grad(); g_loss.backward() ... opt_g.step()`), else the first step after it."""
    for stmt in reversed(body[:i]):
        calls = _calls(stmt) if isinstance(stmt, cst.SimpleStatementLine) else []
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "backward" for c in calls):
            break  # the previous backward: zero_grads before it belong to that one
        zeroed = [c for c in calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "zero_grad"]
        if zeroed:
            name = _dotted(zeroed[0].func.value)
            for later in body[i + 1:]:
                for c in _calls(later) if isinstance(later, cst.SimpleStatementLine) else []:
                    if isinstance(c.func, cst.Attribute) and c.func.attr.value == "step" and name \
                            and _dotted(c.func.value) == name:
                        return c
            break
    return _next_step(body, i)


def _names_in(node) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.append(n)
        stack.extend(n.children)
    return out


def _next_step(body, i: int):
    """The first `<optimizer>.step()` call in a statement after `body[i]`."""
    for stmt in body[i + 1:]:
        if isinstance(stmt, cst.SimpleStatementLine):
            for call in _calls(stmt):
                if isinstance(call.func, cst.Attribute) and call.func.attr.value == "step" and not call.args:
                    return call
    return None


def detach_at_source(ctx, problem) -> tuple[Edit, str] | None:
    """A graph built once (labels from a teacher, targets from a leaf that requires grad) and back-propagated in
    every iteration, whose saved tensors nothing ever writes (no step, no in-place update, no `.data` write): the
    expression that made it, detached (`teacher(inputs).detach()`)."""
    from .fixes import with_method

    if problem.detail.get("freed_by") is not problem.use:
        return None
    site = problem.detail.get("forward")
    node, hint = site if site is not None else (problem.save.node if problem.save else None,
                                                (problem.save.top if problem.save else None) or problem.top)
    value = _value(ctx, node) if node is not None else None
    if value is None or not value.history:
        return None
    if any(s.counter.writes or s.storage.silent_writes or getattr(s.tensor, "grad_read", False)
           for s in value.history):
        return None  # written, or its .grad is read (a manual update `W.data -= lr * W.grad`)
    for leaf in _names_in(node):  # leaves the graph reaches without saving them (`xenc @ W` saves only xenc)
        v = _value(ctx, leaf)
        if v is not None and v.requires_grad and (v.grad_read or v.counter.writes or v.storage.silent_writes):
            return None
    if not all(_never_updated(o) for o in value.owners):
        return None
    return with_method(ctx, node, hint, "detach")


def recompute_in_loop(ctx, problems) -> tuple[Edit, dict] | None:
    """A forward computed once before a loop and back-propagated in every iteration, whose parameters the loop
    updates: the forward moves to the top of the loop body (copied when something else outside reads it), so each
    iteration builds its own graph from the current weights. `problems`: every saved tensor of that graph."""
    problem = problems[0]
    if problem.detail.get("freed_by") is not problem.use or problem.detail.get("site") is not None:
        return None
    use, top = problem.use, problem.top
    forwards = []
    for p in problems:
        site = p.detail.get("forward")
        forwards.append(site[0] if site is not None else (p.save.node if p.save else None))
    tree = _tree_of(ctx, [use], top)
    wider = _tree_of(ctx, [use, *forwards], top)
    tree = wider if wider is not None else tree
    if tree is None:
        return None
    parents = _parents(tree)
    # the earliest statement that saved a tensor of this graph: everything after it in the slice is rebuilt
    starts = [_statement_of(f, parents) for f in forwards if f is not None and _contains(tree, f)]
    starts = [st for st in starts if st is not None]
    if not starts:
        return None
    block = parents.get(id(starts[0]))
    if block is None or any(parents.get(id(s)) is not block for s in starts):
        return None
    index = {id(s): i for i, s in enumerate(block.body)}
    f_stmt = min(starts, key=lambda s: index[id(s)])
    loop = _statement_of(use, parents)
    while loop is not None and not (isinstance(loop, (cst.For, cst.While)) and parents.get(id(loop)) is block):
        loop = parents.get(id(loop))
    if loop is None or not isinstance(loop.body, cst.IndentedBlock) or not isinstance(f_stmt, cst.SimpleStatementLine):
        return None
    body = list(block.body)
    i_f = next(i for i, s in enumerate(body) if s is f_stmt)
    i_loop = next(i for i, s in enumerate(body) if s is loop)
    if i_f >= i_loop:
        return None
    # What the loop reads, traced back to the forward: those statements run in every iteration instead.
    need = _reads(loop)
    cone = []
    for i in range(i_loop - 1, i_f - 1, -1):
        binds = _stmt_binds(body[i])
        if binds and _conflicts(binds, need):
            need |= _stmt_reads(body[i])
            cone.append(i)
    cone.sort()
    if i_f not in cone:
        return None
    start_index = {index[id(st)] for st in starts}
    tainted, move = set(), []
    for i in cone:
        if i in start_index or _conflicts(tainted, _stmt_reads(body[i])):
            if len(body[i].body) != 1:
                return None
            move.append(i)
            tainted |= _stmt_binds(body[i])
    targets = _binds(loop.target) if isinstance(loop, cst.For) else set()
    moved_reads = set().union(*(_stmt_reads(body[i]) for i in move))
    if _conflicts(targets, moved_reads):
        return None  # it would read the loop variable instead of the value before the loop
    for i in move:  # nothing between it and the loop re-binds what it reads
        for j in range(i + 1, i_loop):
            if j not in move and _conflicts(_assigned_in(body[j]), _stmt_reads(body[i])):
                return None
    # the loop's header (`range(exp.epochs)`, a while test) is evaluated before the first iteration: what it reads
    # stays bound before the loop too
    header = _reads(loop.iter if isinstance(loop, cst.For) else loop.test)
    kept = {i for i in move
            if _conflicts(_stmt_binds(body[i]), header)
            or any(j not in move and j != i_loop and _conflicts(_stmt_binds(body[i]), _stmt_reads(body[j]))
                   for j in range(i + 1, len(body)))}
    work = sorted(kept)
    while work:  # what a kept statement reads stays before the loop too
        i = work.pop()
        for k in move:
            if k < i and k not in kept and _conflicts(_stmt_binds(body[k]), _stmt_reads(body[i])):
                kept.add(k)
                work.append(k)
    moved_binds = set().union(*(_stmt_binds(body[i]) or set() for i in move))
    loop = _innermost_loop_to_rebuild_in(loop, use, parents, moved_reads, moved_binds)
    source = ctx.source
    first_inner = loop.body.body[0]
    inner_span = ctx.span(first_inner, top)
    spans = {i: _line_span(ctx, body[i], top) for i in move}
    if inner_span is None or any(s is None for s in spans.values()):
        return None
    inner_indent = source.line_text(inner_span.start_line)[:inner_span.start_col]
    outer_indent = ctx.indent_of(spans[move[0]][0])
    if inner_indent.strip() or not inner_indent.startswith(outer_indent):
        return None
    copies = []
    for i in move:
        a, b = spans[i]
        lines = [source.line_text(n) for n in range(a, b + 1)]
        if any('"""' in ln or "'''" in ln for ln in lines) or not all(ln.startswith(outer_indent) or not ln.strip()
                                                                     for ln in lines):
            return None
        copies.append("\n".join(inner_indent + ln[len(outer_indent):] if ln.strip() else ln for ln in lines))
    if str(getattr(source, "path", "")).endswith(".ipynb"):
        # a notebook: the forward's cell and the loop's are different cells, and a fix's edit cannot span two
        # cells; the forward is copied to the top of the loop (one insertion in the loop's cell), its cell unchanged
        at = inner_span.start_line
        copied = "".join(c + "\n" for c in copies)
        try:
            ast.parse(source.text[:source.offset(at, 0)] + copied + source.text[source.offset(at, 0):])
        except (SyntaxError, ValueError):
            return None
        return Edit(Span(at, 0, at, 0), copied), {
            "lines": [spans[i][0] + 1 for i in move], "moved": False, "loop": ctx.line(loop, top)}
    first_line, last_line = spans[move[0]][0], inner_span.start_line - 1
    start, end = source.offset(first_line, 0), source.offset(last_line, len(source.line_text(last_line)))
    region = source.text[start:end]
    for i in sorted(set(move) - kept, reverse=True):
        a, b = spans[i]
        region = region[:source.offset(a, 0) - start] + region[source.offset(b + 1, 0) - start:]
    new_text = region + "".join("\n" + c for c in copies)
    try:
        ast.parse(source.text[:start] + new_text + source.text[end:])
    except (SyntaxError, ValueError):
        return None
    return Edit(Span(first_line, 0, last_line, len(source.line_text(last_line))), new_text), {
        "lines": [spans[i][0] + 1 for i in move], "moved": not kept, "loop": ctx.line(loop, top)}


def _innermost_loop_to_rebuild_in(loop, use, parents, reads: set[str], binds: set[str]):
    """The loop the forward moves into: `loop`, or the loop nested in it (and so on down) that holds the backward
    `use`, as long as moving the forward there changes nothing else (the other statements of each body re-bind
    nothing it reads and read nothing it binds). Every pass of each of those loops runs that backward again
    (`for x in loader: for _ in range(k): (d(x) + gp).backward()`), so the graph is rebuilt in the innermost."""
    while True:
        node = _statement_of(use, parents)
        while node is not None and parents.get(id(node)) is not loop.body:
            node = parents.get(id(node))
        if not isinstance(node, (cst.For, cst.While)) or not isinstance(node.body, cst.IndentedBlock) \
                or node.orelse is not None:
            return loop
        header = _reads(node.iter) if isinstance(node, cst.For) else _reads(node.test)
        if _conflicts(binds, header) or (isinstance(node, cst.For) and _conflicts(_binds(node.target), reads)):
            return loop
        others = [st for st in loop.body.body if st is not node]
        if any(_conflicts(_assigned_in(st), reads) or _conflicts(binds, _stmt_reads(st)) for st in others):
            return loop
        loop = node


def _loop_freeing_its_own_graph(ctx, problem):
    """(the loop, the parents map of its tree) of a GG404 problem whose backward frees, in the loop's first pass,
    the graph that its later passes reach again; None for other shapes."""
    use, save = problem.use, problem.save
    if use is None or save is None or problem.detail.get("freed_by") is not use:
        return None
    tree = _tree_of(ctx, [use], problem.top)
    if tree is None:
        return None
    parents = _parents(tree)
    loop = _statement_of(use, parents)
    while loop is not None and not isinstance(loop, (cst.For, cst.While)):
        loop = parents.get(id(loop))
    return (loop, parents) if loop is not None else None


def detach_snapshot_in_loop(ctx, problem) -> tuple[tuple[Edit, ...], list[str]] | None:
    """PPO's shape: log-probs computed once before the epochs (`experience = self.make_experience(prompts)`) and
    compared in every epoch with the same forward run again on the same inputs
    (`curr = self.actor.forward_actor(experience.completion, ...)`). Moving the first forward into the loop would
    make it equal to the second, so the loss would compare a value with itself; the value before the loop is a
    snapshot, read detached in the loop (`experience.actor_log_probs.detach()`). Only when a call of the loop has the
    callee text and the very tensor arguments of a call that made the saved graph."""
    from .fixes import with_method

    found = _loop_freeing_its_own_graph(ctx, problem)
    if found is None:
        return None
    loop, parents = found
    save, top = problem.save, problem.top
    made_by = [save.node, *(save.layer_call[:1] if save.layer_call else ()), *(c for c, *_ in save.call_chain)]
    made_by = [c for c in made_by if isinstance(c, cst.Call)]
    if not any(_same_forward(ctx, inner, outer) for outer in made_by for inner in _calls(loop.body)):
        return None
    assigned = _assigned_in(loop, leaking=True)
    reads, stack = [], [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)):
            value = _value(ctx, node)
            root = node
            while isinstance(root, cst.Attribute):
                root = root.value
            # the same save, or one the same op made in another call of this function (the Facts keep the last
            # call's values: `train(batch)` run twice)
            if value is not None and any(h is save or h.node is save.node for h in value.history) \
                    and isinstance(root, cst.Name) and root.value not in assigned \
                    and not _is_callee_or_target(node, parents):
                reads.append(node)
                continue
        if isinstance(node, cst.Lambda):
            continue
        stack.extend(node.children)
    if not reads:
        return None
    edits, texts = [], []
    for node in sorted(reads, key=lambda n: ctx.span(n, top).start_line if ctx.span(n, top) else 0):
        made = with_method(ctx, node, top, "detach")
        if made is None:
            return None
        edits.append(made[0])
        if made[1] not in texts:
            texts.append(made[1])
    return tuple(edits), texts


def _same_forward(ctx, call, other) -> bool:
    """Two calls of the same callee text whose tensor arguments are the same tensors, in the same places; an
    argument of `call` may be rows of the other's (`actor(obs[idx])` in the loop, `actor(obs)` before it: PPO's
    minibatches of the same rollout)."""
    if call is other or ctx.code(call.func) != ctx.code(other.func) or len(call.args) != len(other.args):
        return False
    tensors = 0
    for a, b in zip(call.args, other.args):
        va, vb = _value(ctx, a.value), _value(ctx, b.value)
        if va is not None and vb is not None and va is not vb and isinstance(a.value, cst.Subscript) \
                and _value(ctx, a.value.value) is vb:
            va = vb  # rows of the same inputs
        if (va is None) != (vb is None) or (va is not None and va is not vb):
            return False
        tensors += va is not None
    return tensors > 0


def _is_callee_or_target(node, parents) -> bool:
    parent = parents.get(id(node))
    return (isinstance(parent, cst.Call) and parent.func is node) or (
        isinstance(parent, cst.Attribute) and parent.value is node) or (
        isinstance(parent, (cst.AssignTarget, cst.AugAssign)) and getattr(parent, "target", None) is node)


def clear_kept_list(ctx, problem) -> tuple[Edit, str] | None:
    """A list that collects tensors with graphs (`self.log_probs.append(dist.log_prob(a))`) and is never cleared:
    the next backward goes again through every earlier entry. `del self.log_probs[:]` right after the backward that
    uses them (REINFORCE's `finish_episode`), so each backward sees only this episode's entries."""
    use = problem.use
    if not isinstance(use, cst.Call) or _receiver(use) is None:
        return None
    top = problem.detail.get("freed_top") or problem.top
    tree = _tree_of(ctx, [use], top)
    if tree is None:
        return None
    parents = _parents(tree)
    b_stmt = _statement_of(use, parents)
    block = parents.get(id(b_stmt))
    if block is None or not isinstance(b_stmt, cst.SimpleStatementLine):
        return None
    body = list(block.body)
    i_b = next(i for i, s in enumerate(body) if s is b_stmt)
    read = set().union(_reads(_receiver(use)), *(_stmt_reads(body[i]) for i in _cone(body, i_b, _receiver(use))))
    kept, appends = _graph_appends(ctx, tree, read)
    if not kept and not isinstance(tree, cst.Module):
        # module-level lists filled by the module-level loop and read by a function that back-propagates
        # (`log_probs.append(...)` in the episode loop, `finish_episode()` after it)
        whole = cst.Module(body=[st for pb in getattr(ctx.locator, "blocks", []) for st in pb.module.body])
        kept, appends = _graph_appends(ctx, whole, {n for n in read if "." not in n})
        tree = whole if kept else tree
    if len(kept) != 1 or _cleared(tree, kept[0]):
        return None
    # The lists filled in the same loop as the kept one and read with it (REINFORCE's `rewards` beside its
    # `log_probs`): cleared with it, or the next episode would pair its entries with the old episode's.
    parents = _parents(tree)
    loop = _loop_of(appends[kept[0]], parents)
    names = [kept[0]] + sorted({name for name, call in appends.items() if name != kept[0] and name in read
                                and loop is not None and _loop_of(call, parents) is loop and not _cleared(tree, name)})
    span = ctx.span(b_stmt, top)
    if span is None:
        return None
    indent = ctx.indent_of(span.start_line)
    line = "; ".join(f"del {name}[:]" for name in names)
    end = len(ctx.source.line_text(span.end_line))
    return Edit(Span(span.end_line, end, span.end_line, end), "".join(f"\n{indent}del {name}[:]" for name in names)), line


def _graph_appends(ctx, tree, read: set) -> tuple[list, dict]:
    """The lists in `read` that `tree` appends tensors with graphs to, and, for every list in `read` it appends
    to, its first append call."""
    kept, appends = [], {}
    for call in _calls(tree):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "append" and len(call.args) == 1:
            name = _dotted(call.func.value)
            if not name or name not in read:
                continue
            appends.setdefault(name, call)
            value = _value(ctx, call.args[0].value)
            if value is not None and value.history and name not in kept:
                kept.append(name)
                appends[name] = call
    return kept, appends


def _loop_of(node, parents):
    """The innermost `for`/`while` around `node`, or None."""
    node = parents.get(id(node))
    while node is not None and not isinstance(node, (cst.For, cst.While)):
        node = parents.get(id(node))
    return node


def _cleared(tree, name: str) -> bool:
    """`del name[:]`, `name.clear()` or `name = []` somewhere other than `__init__`."""
    stack = [(tree, False)]
    while stack:
        node, in_init = stack.pop()
        if isinstance(node, cst.FunctionDef):
            in_init = node.name.value == "__init__"
        if not in_init:
            if isinstance(node, cst.Del) and name in {_dotted(t.target.value) for t in _del_targets(node)}:
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "clear" \
                    and _dotted(node.func.value) == name:
                return True
            if isinstance(node, cst.Assign) and any(_dotted(t.target) == name for t in node.targets):
                return True
        stack.extend((c, in_init) for c in node.children)
    return False


def _del_targets(node):
    target = node.target
    items = target.elements if isinstance(target, cst.Tuple) else [cst.Element(target)]
    return [cst.AssignTarget(e.value) for e in items if isinstance(e.value, cst.Subscript)]


# ---------------------------------------------------------------- GG402/GG403: carried state, detached where it is read
def detach_carry_at_read(ctx, problem) -> tuple[Edit, str] | None:
    """When no place re-binds the carried state for the next iteration (state kept on an object and returned by
    `forward`, a `continue` that could skip the line, a running statistic): detach it where the next iteration first
    reads it (`self.rnn(x, self.hidden)` -> `self.rnn(x, self.hidden.detach())`). Only for a read that is a tensor
    (not a tuple or a `None` start) and the only read of that state in its statement."""
    from .fixes import with_method

    carry = problem.detail.get("carry")
    read = getattr(carry, "use_node", None)
    hint = getattr(carry, "use_top", None) or problem.top
    if read is None or not isinstance(read, (cst.Name, cst.Attribute)):
        return None
    first = _value(ctx, read)
    if first is None:
        return None  # a tuple, or None on the first pass: `.detach()` would not apply (a first value without a graph
        # is still a tensor, and detaching it changes nothing)
    if first.requires_grad and first.is_leaf is not False:
        return None  # a learned initial state (`h0 = nn.Parameter(...)`): detaching the read would stop training it
    tree = _tree_of(ctx, [read], hint)
    stmt = _statement_of(read, _parents(tree)) if tree is not None else None
    if stmt is None:
        return None
    name = _dotted(read)
    same = [n for n in _names_and_attrs(stmt) if _dotted(n) == name]
    if len(same) - len(_full_binds(stmt) & {name}) != 1:
        return None  # read twice in that statement: detaching one read leaves the other on the old graph
    return with_method(ctx, read, hint, "detach")


def _names_and_attrs(node) -> list:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute)) and _dotted(n):
            out.append(n)
            if isinstance(n, cst.Attribute):
                continue  # `self.hidden` once, not `self` again
        stack.extend(n.children)
    return out


# ---------------------------------------------------------------- GG404: a loss accumulated on top of a freed one
def restart_accumulated_loss(ctx, problem) -> tuple[Edit, dict] | None:
    """`loss = 0; for ...: loss += l; loss.backward(); ...; for ...: loss += l; loss.backward()` (SAM's second pass):
    the second sum starts from the first, whose graph the first backward freed. The line that started the sum
    (`loss = 0`, a constant or a torch factory of constants) is copied before the first statement adding to it
    after the first backward, so the second backward sees only the second pass's terms."""
    freed, use, top = problem.detail.get("freed_by"), problem.use, problem.top
    if not isinstance(freed, cst.Call) or freed is use or problem.detail.get("site") is not None:
        return None
    first, second = _receiver(freed), _receiver(use)
    if not isinstance(first, cst.Name) or not isinstance(second, cst.Name) or first.value != second.value:
        return None
    name = first.value
    tree = _tree_of(ctx, [freed, use], top)
    if tree is None:
        return None
    parents = _parents(tree)
    f_stmt, u_stmt = _statement_of(freed, parents), _statement_of(use, parents)
    block = parents.get(id(f_stmt))
    if block is None or parents.get(id(u_stmt)) is not block:
        return None
    body = list(block.body)
    i_f = next(i for i, s in enumerate(body) if s is f_stmt)
    i_u = next(i for i, s in enumerate(body) if s is u_stmt)
    # the statement that started the sum: the last one before the first backward binding it without reading it
    start = None
    for i in range(i_f - 1, -1, -1):
        if name in _full_binds(body[i]) and name not in _stmt_reads(body[i]):
            small = body[i].body[0]
            if len(body[i].body) != 1 or not isinstance(small, cst.Assign) or len(small.targets) != 1 \
                    or not isinstance(small.targets[0].target, cst.Name):
                return None
            if not all(r == "torch" or r.startswith("torch.") for r in _reads(small.value)):
                return None  # not a fresh constant (`loss = criterion(out, y)` is a term, not a start)
            start = i
            break
        if name in _assigned_in(body[i]):
            continue  # `loss += ...` (in a loop or not): the sum being built
    if start is None:
        return None
    adders = []
    for i in range(i_f + 1, i_u):
        if name in _full_binds(body[i]) and name not in _stmt_reads(body[i]):
            return None  # re-bound afresh already: something else keeps the old graph
        if name in _assigned_in(body[i]) and name in _reads(body[i]):
            adders.append(i)
    if not adders:
        return None
    line_span = _line_span(ctx, body[start], top)
    target = ctx.span(body[adders[0]], top)
    if line_span is None or target is None or line_span[0] != line_span[1]:
        return None
    source = ctx.source
    init = source.line_text(line_span[0]).strip()
    indent = source.line_text(target.start_line)[:target.start_col]
    if indent.strip():
        return None
    new_text = f"{indent}{init}\n"
    fixed = source.text[:source.offset(target.start_line, 0)] + new_text + source.text[source.offset(target.start_line, 0):]
    try:
        ast.parse(fixed)
    except (SyntaxError, ValueError):
        return None
    at = Span(target.start_line, 0, target.start_line, 0)
    return Edit(at, new_text), {"line": init, "before": target.start_line + 1, "name": name}


# ---------------------------------------------------------------- GG502: carried state under a fused step
def detach_carried_name(ctx, problem) -> tuple[Edit, str] | None:
    """A fused `step()` in a loop whose next iteration reaches the old graph through a name carried across
    iterations (`h = h_next` at the end of the body, `h` read before that in the body): the fused form of GG402,
    which the analysis reports without a carry. That assignment carries `h_next.detach()`. Only a plain
    `name = <expr>` in the step's loop body whose value's graph holds the save the step wrote, and whose name the
    body reads before re-binding it."""
    from .fixes import with_method

    write, save = problem.write, problem.save
    top = write.top or problem.top
    tree = _tree_of(ctx, [write.node], top)
    if tree is None or save is None:
        return None
    parents = _parents(tree)
    loop = _statement_of(write.node, parents)
    while loop is not None and not isinstance(loop, (cst.For, cst.While)):
        loop = parents.get(id(loop))
    if loop is None or not isinstance(loop.body, cst.IndentedBlock):
        return None
    body = list(loop.body.body)
    for i, stmt in enumerate(body):
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
            continue
        name = small.targets[0].target.value
        value = _value(ctx, small.value)
        if value is None or not any(s is save for s in value.history):
            continue
        read_first = False
        for earlier in body[:i]:
            if name in _reads(earlier) - _loop_targets(earlier):
                read_first = True
                break
            if name in _assigned_in(earlier, leaking=True):
                break
        if read_first:
            return with_method(ctx, small.value, top, "detach")
    return None


# ---------------------------------------------------------------- GG401: state carried into a loop across a step
def detach_carried_into_loop(ctx, problem) -> tuple[Edit, str] | None:
    """A recurrent state computed before a loop (a recurrent memory transformer's first segment: `logits, memory =
    model(inp, memory)`, its backward and `opt.step()`), which the loop reads before re-binding it: the loop's
    backward goes through the graph the step made stale. After the step, `memory = memory.detach()`: the values stay,
    the old graph is cut where it enters the loop, as the loop itself does for its next iteration (GG402). Only names
    bound before the step in the same body, whose graph holds the save the step wrote, that nothing re-binds between
    the step and the loop; the loop must hold the backward."""
    write, use, save = problem.write, problem.use, problem.save
    top = write.top or problem.top
    stmt = write.stmt
    if use is None or save is None or not isinstance(stmt, cst.SimpleStatementLine):
        return None
    tree = _tree_of(ctx, [stmt, use], top)
    if tree is None:
        return None
    parents = _parents(tree)
    block = parents.get(id(stmt))
    if block is None or not hasattr(block, "body") or not isinstance(block.body, (list, tuple)):
        return None
    body = list(block.body)
    i_step = next((k for k, st in enumerate(body) if st is stmt), None)
    loop = _statement_of(use, parents)
    while loop is not None and parents.get(id(loop)) is not block:
        loop = parents.get(id(loop))
    if i_step is None or loop is None or not isinstance(loop, (cst.For, cst.While)):
        return None
    i_loop = next((k for k, st in enumerate(body) if st is loop), None)
    use_stmt = _statement_of(use, parents)
    if i_loop is None or i_loop <= i_step or use_stmt is None:
        return None
    order = _name_order(ctx, loop, use_stmt)
    if order is None:
        return None
    read_first = order[0]  # names the iteration reads up to the backward, with those reads
    between = set()
    for st in body[i_step + 1:i_loop]:
        between |= _binds_of(st)
    names = []
    for k in range(i_step - 1, -1, -1):
        small = body[k].body[0] if isinstance(body[k], cst.SimpleStatementLine) and len(body[k].body) == 1 else None
        if not isinstance(small, cst.Assign):
            continue
        for target in small.targets:
            for node in _names_in(target.target):
                name = node.value
                if name in names or name in between or name not in read_first:
                    continue
                value = _value(ctx, node)
                if value is None or not any(x is save for x in value.history):
                    continue
                if not _reads_before_binding(loop, name):
                    continue
                names.append(name)
    if not names or len(names) > 4:
        return None
    span = ctx.span(stmt, top)
    if span is None:
        return None
    indent = ctx.indent_of(span.start_line)
    rest = ctx.source.line_text(span.end_line)[span.end_col:].strip()
    if indent.strip() or (rest and not rest.startswith("#")):
        return None  # another statement follows on the step's line
    names.sort()
    line = f"{', '.join(names)} = {', '.join(f'{n}.detach()' for n in names)}"
    end = len(ctx.source.line_text(span.end_line))
    return Edit(Span(span.end_line, end, span.end_line, end), f"\n{indent}{line}"), line


def _reads_before_binding(loop, name: str) -> bool:
    """The loop body's first statement mentioning `name` reads it (`logits, memory = model(inp, memory)`)."""
    for st in loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ():
        reads, binds = _stmt_reads(st), _binds_of(st)
        if name in reads:
            return True
        if name in binds:
            return False
    return False


# ---------------------------------------------------------------- GG401: a loop stepping what an earlier forward built
def recompute_at_loop_top(ctx, problems) -> tuple[Edit, dict] | None:
    """A loop that back-propagates, then steps, through a graph built before it (by the last pass of an earlier
    loop, `for j in range(d_steps): ... fake = netG(noise)`, or a statement before it): its second pass goes
    through the old graph after the step. The forward statement is copied to the top of the loop body, so every
    pass builds its graph from the current weights (SinGAN's fix). Only a simple statement of one line whose inputs
    nothing re-binds after it (in the earlier loop, between, or inside the loop), and whose names nothing reads
    after the loop or, around an enclosing loop, before it is bound again."""
    first = problems[0]
    write, use = first.write, first.use
    top = write.top or first.top
    if use is None or top is None or first.detail.get("site") is not None:
        return None
    forwards = _forward_calls(problems)
    if not forwards or any(_value(ctx, c) is None for c in forwards):
        return None  # a forward returns tensors; `model = Net()` (the graph built in its __init__) is no forward
    tree = _tree_of(ctx, [use, write.node, *forwards], top)
    if tree is None:
        return None
    parents = _parents(tree)
    step_stmt, use_stmt = _statement_of(write.node, parents), _statement_of(use, parents)
    loop = parents.get(id(step_stmt))
    loop = parents.get(id(loop)) if isinstance(loop, cst.IndentedBlock) else None
    if not isinstance(loop, (cst.For, cst.While)) or parents.get(id(use_stmt)) is not loop.body:
        return None
    inner = list(loop.body.body)
    if next(i for i, s in enumerate(inner) if s is use_stmt) > next(i for i, s in enumerate(inner) if s is step_stmt):
        return None  # the backward after the step in the same pass: recompute_after_step's shape
    stmts = {id(s): s for s in (_statement_of(f, parents) for f in forwards) if s is not None}
    if len(stmts) != 1:
        return None
    f_stmt = next(iter(stmts.values()))
    if _contains(loop, f_stmt) or not isinstance(f_stmt, cst.SimpleStatementLine) or len(f_stmt.body) != 1:
        return None
    block = parents.get(id(loop))
    body = list(block.body) if block is not None else []
    t = f_stmt
    while t is not None and parents.get(id(t)) is not block:
        t = parents.get(id(t))
    if t is None:
        return None
    i_t, i_loop = next(i for i, s in enumerate(body) if s is t), next(i for i, s in enumerate(body) if s is loop)
    if i_t >= i_loop:
        return None
    reads, binds = _stmt_reads(f_stmt) - _loop_targets(f_stmt), _stmt_binds(f_stmt) or set()
    if not binds:
        return None
    # what the forward read keeps its value up to every pass of the loop
    after_f = []
    if t is not f_stmt:  # inside an earlier loop: the statements after it in that loop's passes
        holder = parents.get(id(f_stmt))
        if not isinstance(holder, cst.IndentedBlock) or parents.get(id(holder)) is not t:
            return None
        ib = list(holder.body)
        after_f = ib[next(i for i, s in enumerate(ib) if s is f_stmt) + 1:]
        if isinstance(t, cst.For) and _conflicts(_binds(t.target), reads):
            return None
    for stmt in [*after_f, *body[i_t + 1:i_loop], loop]:
        if _conflicts(_assigned_in(stmt, leaking=True), reads):
            return None
    # the names it binds are not read where the copy would change them
    if any(_conflicts(binds, _stmt_reads(s)) for s in body[i_loop + 1:]):
        return None
    if any(_conflicts(binds, _stmt_reads(s)) for s in body[:i_t]):
        return None
    first_inner = ctx.span(inner[0], top)
    f_span = ctx.span(f_stmt, top)
    if first_inner is None or f_span is None or f_span.start_line != f_span.end_line:
        return None
    indent = ctx.source.line_text(first_inner.start_line)[:first_inner.start_col]
    if indent.strip():
        return None
    text = ctx.source.line_text(f_span.start_line).strip()
    new_text = f"{indent}{text}\n"
    at = ctx.source.offset(first_inner.start_line, 0)
    try:
        ast.parse(ctx.source.text[:at] + new_text + ctx.source.text[at:])
    except (SyntaxError, ValueError):
        return None
    return Edit(Span(first_inner.start_line, 0, first_inner.start_line, 0), new_text), {
        "line": f_span.start_line + 1, "loop": ctx.line(loop, top), "text": text}


# ---------------------------------------------------------------- GG401: a graph built by a constructor and kept
def detach_kept_from_init(ctx, problems) -> tuple[Edit, str] | None:
    """A tensor computed by a layer in `__init__` and kept on the object (`self.mask_e = self.embedding(ids)`),
    read by every forward: each backward goes through that one construction-time graph, whose saved weights the
    first `step()` changes. The value kept is detached where it is made (`self.embedding(ids).detach()`), so
    every forward reads a constant, as it would if it were a buffer. Only when every save of the problem was made
    under one such assignment."""
    from .fixes import with_method

    found = None
    for p in problems:
        save = p.save
        if save is None:
            return None
        here = None
        sites = [save.layer_call] if save.layer_call is not None else []
        for node, top, *_ in [*sites, *save.call_chain]:
            tree = _tree_of(ctx, [node], top)
            if tree is None:
                continue
            parents = _parents(tree)
            stmt = _statement_of(node, parents)
            func = _function_of(stmt, parents) if stmt is not None else None
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if func is None or func.name.value != "__init__" or not isinstance(small, cst.Assign) \
                    or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Attribute) \
                    or not _dotted(small.targets[0].target).startswith("self.") or not _contains(small.value, node):
                continue
            here = (small.value, top)
            break
        if here is None or (found is not None and found[0] is not here[0]):
            return None
        found = here
    if found is None:
        return None
    value = _value(ctx, found[0])
    if value is not None and value.requires_grad is False:
        return None
    return with_method(ctx, found[0], found[1], "detach")


# ---------------------------------------------------------------- GG502: an update moved after the later one
def move_update_after(ctx, problems) -> tuple[Edit, dict] | None:
    """`opt_q.zero_grad(); q_loss.backward(); opt_q.step()` before a later backward through the weights that step
    changes (`policy_loss.backward()` through Q): the whole update, from its `zero_grad()` to its `step()`, moves
    after the later update's `step()`, so the later backward sees the weights its graph saved, and the moved
    `zero_grad()` clears what that backward left in Q's `.grad`. Only when the moved statements bind nothing,
    nothing between re-binds what they read, the later step changes nothing the moved loss's graph saved, and the
    two losses' graphs share no saved tensor (the first backward would free it)."""
    first = problems[0]
    write, use = first.write, first.use
    top = write.top or first.top
    if use is None or top is None or first.detail.get("site") is not None:
        return None
    tree = _tree_of(ctx, [use, write.node], top)
    if tree is None:
        return None
    parents = _parents(tree)
    step_stmt, use_stmt = _statement_of(write.node, parents), _statement_of(use, parents)
    block = parents.get(id(step_stmt))
    if block is None or parents.get(id(use_stmt)) is not block:
        return None
    body = list(block.body)
    i_step = next(i for i, s in enumerate(body) if s is step_stmt)
    i_use = next(i for i, s in enumerate(body) if s is use_stmt)
    opt = _dotted(write.node.func.value) if isinstance(write.node, cst.Call) and \
        isinstance(write.node.func, cst.Attribute) else ""
    if not opt or i_use <= i_step:
        return None
    # the update being moved: from `opt.zero_grad()` through its step, statements that bind nothing
    k = i_step - 1
    backwards = []
    while k >= 0:
        stmt = body[k]
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
            return None
        call = stmt.body[0].value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            if call.func.attr.value == "zero_grad" and _dotted(call.func.value) == opt:
                break
            if _receiver(call) is not None:
                backwards.append(call)
        k -= 1
    if k < 0 or len(backwards) != 1:
        return None
    moved = list(range(k, i_step + 1))
    # the later update ends at the first step after the later backward
    later_step = _next_step(body, i_use)
    if later_step is None:
        return None
    i_end = next(i for i, s in enumerate(body) if _contains(s, later_step))
    reads = set().union(*(_stmt_reads(body[i]) for i in moved))
    if any(_conflicts(_assigned_in(body[j], leaking=True), reads) for j in range(i_step + 1, i_end + 1)):
        return None
    moved_loss, later_loss = _value(ctx, _receiver(backwards[0])), _value(ctx, _receiver(use))
    if moved_loss is None or later_loss is None:
        return None
    later_saves = {id(s) for s in later_loss.history}
    if any(id(s) in later_saves for s in moved_loss.history):
        return None  # one graph: the later backward would free what the moved one needs
    for s in moved_loss.history:
        writes = [*s.counter.writes, *s.storage.silent_writes]
        if any(w.kind == "step" and w.node is later_step for w in writes):
            return None  # the later step changes what the moved loss saved
    spans = [_line_span(ctx, body[i], top) for i in (k, i_step, i_end)]
    if any(sp is None for sp in spans):
        return None
    (a, _), (_, b), (_, e) = spans
    source = ctx.source
    start, end = source.offset(a, 0), source.offset(e, len(source.line_text(e)))
    moved_text = source.text[start:source.offset(b, len(source.line_text(b)))]
    rest = source.text[source.offset(b + 1, 0):end] if b + 1 <= e else ""
    new_text = rest + "\n" + moved_text
    fixed = source.text[:start] + new_text + source.text[end:]
    try:
        ast.parse(fixed)
    except (SyntaxError, ValueError):
        return None
    return Edit(Span(a, 0, e, len(source.line_text(e))), new_text), {
        "first": a + 1, "last": b + 1, "after": e + 1, "optimizer": opt}


# ---------------------------------------------------------------- GG404: a value with a graph read by every pass
def detach_read_before_loop(ctx, problem) -> tuple[Edit, str] | None:
    """A tensor bound before a loop from a graph no optimizer trains (PPO's `old_logprobs =
    torch.stack(memory.logprobs)`, collected by the old policy), read by every pass of the loop whose backward
    frees that graph on the first pass: the value is detached where it is bound before the loop
    (`torch.stack(memory.logprobs).detach()`), so each pass's loss treats it as the constant it is. Only when no
    step updates, and no code reads the `.grad` of, what that graph reaches."""
    from .fixes import with_method

    found = _loop_freeing_its_own_graph(ctx, problem)
    if found is None:
        return None
    loop, parents = found
    save, top = problem.save, problem.top
    block = parents.get(id(loop))
    if block is None:
        return None
    body = list(block.body)
    i_loop = next(i for i, s in enumerate(body) if s is loop)
    inside = _reads(loop)
    assigned = _assigned_in(loop, leaking=True)
    for stmt in reversed(body[:i_loop]):
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
            continue
        name = small.targets[0].target.value
        if name not in inside or name in assigned:
            continue
        value = _value(ctx, small.targets[0].target) or _value(ctx, small.value)
        if value is None or not any(s is save for s in value.history):
            continue
        for s in value.history:
            if any(w.kind == "step" for w in s.counter.writes) or getattr(s.tensor, "grad_read", False):
                return None
        for owner in value.owners:
            counter = getattr(owner, "params_counter", None) or getattr(owner, "counter", None)
            if counter is None or any(w.kind == "step" for w in counter.writes) or getattr(owner, "grad_read", False):
                return None  # trained, or its gradient is read: detaching would change what it learns
        return with_method(ctx, small.value, top, "detach")
    return None


# ---------------------------------------------------------------- GG404: a backward of a term the later loss adds
def drop_backward_of_term(ctx, problem) -> tuple[Edit, dict] | None:
    """`l_attr.backward()` and then `total = recon + kl + lam * l_attr; total.backward()` with nothing between
    that steps, zeroes or reads gradients: the first backward only adds `l_attr`'s gradient a second time (and
    frees the graph the total needs). That statement is removed, so the total's backward computes every term's
    gradient once, as the total says."""
    freed, use, top = problem.detail.get("freed_by"), problem.use, problem.top
    if not isinstance(freed, cst.Call) or freed is use or problem.detail.get("site") is not None:
        return None
    first, second = _receiver(freed), _receiver(use)
    if not isinstance(first, cst.Name) or second is None or freed.args:
        return None
    tree = _tree_of(ctx, [freed, use], top)
    if tree is None:
        return None
    parents = _parents(tree)
    f_stmt, u_stmt = _statement_of(freed, parents), _statement_of(use, parents)
    block = parents.get(id(f_stmt))
    if block is None or parents.get(id(u_stmt)) is not block or len(f_stmt.body) != 1 \
            or not isinstance(f_stmt.body[0], cst.Expr) or f_stmt.body[0].value is not freed:
        return None
    body = list(block.body)
    i_f = next(i for i, s in enumerate(body) if s is f_stmt)
    i_u = next(i for i, s in enumerate(body) if s is u_stmt)
    if i_u <= i_f:
        return None
    for stmt in body[i_f + 1:i_u]:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("step", "zero_grad", "backward")
               for c in _calls(stmt)) or ".grad" in ctx.code(stmt):
            return None
        if _conflicts(_assigned_in(stmt), {first.value}):
            return None  # the name is re-bound: the later loss adds another value
    cone = _cone(body, i_u, second)
    if not any(i > i_f and first.value in _stmt_reads(body[i]) for i in cone) and first.value not in _reads(second):
        return None
    span = _line_span(ctx, f_stmt, top)
    if span is None:
        return None
    a, b = span
    return Edit(Span(a, 0, b + 1, 0), ""), {"line": a + 1, "text": ctx.code(freed), "term": first.value,
                                            "total": ctx.code(second)}


def _forward_calls(problems) -> list:
    """The calls that ran the forwards the problems' saves were made in, each once, in order."""
    calls = []
    for p in problems:
        fsite = p.detail.get("forward")
        call = fsite[0] if fsite is not None else p.save.node
        if isinstance(call, cst.Call) and all(c is not call for c in calls):
            calls.append(call)
    return calls
