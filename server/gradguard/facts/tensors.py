"""Tensor semantics: views and aliases, in-place writes, saves for backward, and what backward checks.

These mirror autograd: a write bumps the version counter shared by a base, its views and `detach()`
results (`.data` shares only the storage); an op records `Save(counter, version)` for what its backward
needs (from the op table); backward compares each saved version with the counter, and frees the graph
unless `retain_graph`.
"""
from __future__ import annotations

import libcst as cst

from ..ops import OpRow
from .model import (
    GRAD_OFF,
    GRAD_ON,
    GRAD_UNKNOWN,
    Counter,
    Literal,
    Module,
    Problem,
    Save,
    Seq,
    Storage,
    Tensor,
    Write,
)
from .sets import EMPTY, SharedSet

# checked on torch 2.13: arithmetic and random in-place ops refuse overlapping memory; scalar fills do not
FILL_LIKE = {"fill_", "zero_", "fill_diagonal_", "masked_fill_", "index_fill_"}


def flat_tensors(values) -> list:
    """Tensors among call arguments, including those inside tuples and lists."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, Seq) and v.items is not None:
            out.extend(flat_tensors(v.items))
        elif isinstance(v, Seq) and v.element is not None:
            out.extend(flat_tensors([v.element]))  # a list of unknown length: its element stands for all of them
    return out


class Tensors:
    """The model of tensors and their version counters: new tensors, views and `detach()` (sharing a counter), writes
    (immediate errors, version bumps), saves for backward, `backward()` freeing graphs, and `check_history`, which
    turns a stale, freed or silently overwritten save into a `Problem`. It knows values, not code: the interpreter
    hands it evaluated operands, and the scope it is given is the context of the event (`EVENT_CONTEXT`)."""

    def new_tensor(self, scope, *, requires_grad, is_leaf, origin, created_by, history=EMPTY, name="",
                   owners=EMPTY) -> Tensor:
        t = Tensor(Counter(), Storage(), requires_grad, is_leaf, origin=origin, created_by=created_by,
                   history=history, name=name, owners=owners)
        if scope.inference is not None:
            t.inference_call = scope.inference
            t.inference_top = scope.top
            t.inference_origin = origin
        return t

    def set_requires_grad(self, scope, t: Tensor, value) -> None:
        """`x.requires_grad = flag` (and `requires_grad_(flag)`): only leaves change; unknown flags make it unknown."""
        if t.is_leaf is False:
            return
        flag = value.value if isinstance(value, Literal) and isinstance(value.value, bool) else None
        if len(scope.path) > len(scope.base_path):
            flag = flag if t.requires_grad == flag else None  # on some paths only
        if t.module_params is not None:
            owner = t.module_params
            owner.frozen = None if flag is None else (not flag)
        t.requires_grad = flag
        if flag is not None:
            t.is_leaf = True

    # ---- views ----------------------------------------------------------
    def view_of(self, scope, t: Tensor, node, kind: str) -> Tensor:
        if kind == "detach":
            return Tensor(t.counter, t.storage, False, True, origin=node, created_by="`.detach()`",
                          view_of=t, view_kind="detach", name=f"{t.name}.detach()" if t.name else "",
                          shape=t.shape, dtype=t.dtype, device=t.device)
        rg = t.requires_grad if scope.grad != GRAD_OFF else False
        # torch: a view made under no_grad keeps its base's requires_grad, with no grad_fn (a leaf)
        shown_rg, leaf = (t.requires_grad, True) if scope.grad == GRAD_OFF else (rg, None if rg is None else not rg)
        v = Tensor(t.counter, t.storage, shown_rg, leaf, origin=node,
                   created_by="a view" if kind != "index" else "indexing (a view)",
                   history=t.history if rg else EMPTY,
                   view_of=t, view_kind=kind, view_in_no_grad=scope.grad == GRAD_OFF or t.view_in_no_grad)
        if t.view_kind == "multi":
            v.view_kind = "multi"
        if t.view_kind == "custom_function":
            v.view_kind = "custom_function"
            v.hooked_by = t.hooked_by
        v.is_parameter = False
        v.module_params = t.module_params
        v.owners = self.owners_of(scope, [t]) if rg is not False else EMPTY
        v.inference_call, v.inference_top = t.inference_call, t.inference_top
        v.inference_origin = t.inference_origin
        if kind == "index":  # basic indexing keeps the dtype and device
            v.dtype, v.device = t.dtype, t.device
        return v

    def backward_hook_outputs(self, scope, value, node, hook):
        """The outputs of a module with a full backward hook: torch returns each tensor through BackwardHookFunction,
        a custom Function, so they are custom-function views of what the forward returned (probed on torch 2.13:
        an in-place write on one, or on a view of one, raises in grad mode; under no_grad nothing is wrapped)."""
        if scope.grad == GRAD_OFF:
            return value
        if isinstance(value, Tensor):
            v = self.view_of(scope, value, node, "custom_function")
            v.view_kind = "custom_function"
            v.shape, v.contiguous, v.created_by = value.shape, value.contiguous, value.created_by
            v.hooked_by = hook
            return v
        if isinstance(value, Seq) and value.items is not None:
            return Seq([self.backward_hook_outputs(scope, item, node, hook) for item in value.items])
        return value

    def _generic_result(self, scope, tensors, node):
        # an operand the analysis knows nothing of (None: an unknown call's result, say) may require grad
        unknown_operand = any(t is None for t in tensors)
        tensors = [t for t in tensors if isinstance(t, Tensor)]
        if not tensors:
            return None
        if scope.grad == GRAD_OFF:
            return self.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node, created_by="an op under no_grad")
        rg = True if any(t.requires_grad is True for t in tensors) else (
            None if unknown_operand or any(t.requires_grad is None for t in tensors) else False)
        history = SharedSet.union(t.history for t in tensors)
        return self.new_tensor(scope, requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                               created_by="an op", history=history, owners=self.owners_of(scope, tensors))

    def owners_of(self, scope, tensors) -> SharedSet:
        """The parameter groups a backward through these tensors reaches (their .grad gets filled)."""
        parts = []
        for t in tensors:
            parts.append(t.owners)
            if t.is_parameter and t.requires_grad is not False:
                parts.append((t.module_params if t.module_params is not None else t,))
        return SharedSet.union(parts)

    def apply_op(self, scope, row: OpRow | None, args, node, keywords=None, op_name: str = ""):
        keywords = keywords or {}
        out = keywords.get("out")
        if out is not None and isinstance(out[0], Tensor):
            return self.out_write(scope, out[0], args, node, op_name)
        tensors = [a for a in args if isinstance(a, Tensor)]
        if not tensors and any(isinstance(a, Seq) for a in args):
            tensors = flat_tensors(args)  # torch.cat / torch.stack of a list of tensors
        if not tensors:
            # a function parameter used as an operand becomes a tensor of unknown requires_grad
            if type(node) is cst.Call:
                for arg in node.args:
                    if type(arg.value) is cst.Name:
                        p = scope.materialize_param(arg.value)
                        if p is not None:
                            tensors.append(p)
            if not tensors:
                return None
        inplace = keywords.get("inplace")
        if inplace is not None and isinstance(inplace[0], Literal) and inplace[0].value is True:
            first = tensors[0]
            self.write(scope, first, node, scope.stmt, op=f"{op_name}(inplace=True)", kind="inplace_arg")
            self.save_inplace_result(scope, first, row, op_name, node)
            return first
        operands = tensors + [None] * any(a is None for a in args)
        if row is None:
            return self._generic_result(scope, operands, node)
        result = self._generic_result(scope, operands, node)
        # an op's output follows its inputs' layout: contiguous when they all are (matmul, cat: always)
        result.contiguous = row.op in ("matmul", "linear", "addmm", "cat") or all(t.contiguous for t in tensors)
        if scope.grad == GRAD_OFF:
            return self._tuple_result(scope, row, result, tensors, node, op_name, set()) if row.outputs else result
        saves = set()
        if row.saves_input == "self":
            if tensors[0].requires_grad is True and args and args[0] is tensors[0]:
                saves.add(self.save(scope, tensors[0], op_name, node, "input"))
        elif row.saves_input == "operands":
            for i, t in enumerate(tensors):
                if any(o.requires_grad is True for j, o in enumerate(tensors) if j != i):
                    saves.add(self.save(scope, t, op_name, node, "input"))
        elif row.saves_input == "all":
            if any(t.requires_grad is True for t in tensors):
                for t in tensors:
                    saves.add(self.save(scope, t, op_name, node, "input"))
        if row.outputs:
            return self._tuple_result(scope, row, result, tensors, node, op_name, saves)
        if saves:
            result.history = result.history | saves
        if row.saves_output and result.requires_grad is True:
            result.history = result.history | {self.save(scope, result, op_name, node, "output")}
        result.created_by = f"`{op_name}`"
        return result

    def _tuple_result(self, scope, row: OpRow, first: Tensor, tensors, node, op_name: str, saves: set) -> Seq:
        """`L, Q = torch.linalg.eigh(a)`: one tensor per output of the op's single node, each saved as the op table
        says; a backward through any of them runs that node, so each carries all of its saves."""
        items = [first] + [self._generic_result(scope, tensors, node) for _ in row.outputs[1:]]
        for k, kind in enumerate(row.outputs):
            if kind == "nograd" or scope.grad == GRAD_OFF:
                items[k] = self.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node, created_by=f"`{op_name}`")
            elif kind == "saved" and items[k].requires_grad is True:
                s = self.save(scope, items[k], op_name, node, "output")
                s.tuple_index = k
                saves.add(s)
            items[k].created_by = f"`{op_name}`"
        if saves:
            for item in items:
                if item.requires_grad is not False:
                    item.history = item.history | saves
        return Seq(items)

    def save_inplace_result(self, scope, t: Tensor, row: OpRow | None, op_name: str, node) -> None:
        """An in-place op whose backward needs its result (relu_, sigmoid_, ...) saves the written tensor."""
        saves = (row is not None and row.saves_output) or _activation_key(op_name) in INPLACE_SAVES_RESULT
        if t.counter.writes and t.counter.writes[-1].raises:
            return  # torch refused the write (a leaf, a multi-output view): the op never ran, nothing was saved
        if saves and scope.grad != GRAD_OFF and t.requires_grad:
            t.history = t.history | {self.save(scope, t, op_name, node, "output")}

    def out_write(self, scope, out: Tensor, positional, node, q: str, factory: bool = False):
        name = q.rsplit(".", 1)[-1]
        detail = {"op": name, "error_op": "aten::" + name if factory else name}  # how torch names factories there
        w = self.write(scope, out, node, scope.stmt, op=f"{name}(out=...)", kind="out")
        needs_grad = any(t.requires_grad for t in flat_tensors(positional)) or out.requires_grad
        if needs_grad and scope.grad == GRAD_ON and not scope.guarded:
            w.raises = True
            scope._problem(Problem("out-grad", node, scope.stmt, tensor=out, write=w, detail=detail))
        elif out.base.is_leaf is True and out.base.requires_grad is True and scope.grad == GRAD_UNKNOWN \
                and not scope.guarded:
            # a helper writing a parameter through `out=`: an error for the callers that run it with grad on
            w.raises = True
            scope._problem(Problem("out-grad", node, scope.stmt, tensor=out, write=w, detail=detail), GRAD_UNKNOWN)
        return None if w.raises else out  # the call raised: nothing chained on it runs

    # ---- writes ---------------------------------------------------------
    def write(self, scope, t: Tensor, node, stmt, *, op: str, kind: str, value=None, module_ctor=None) -> Write:
        """Record an in-place write on `t` and the problems it proves."""
        w = Write(scope.new_seq(), node, stmt, op, kind, 0, scope.path, target_name=t.name, module_ctor=module_ctor,
                  top=scope.top)
        w.loops = tuple(f.node for f in scope.loops)
        if scope.option_condition:
            scope.facts.option_conditions[id(node)] = scope.facts.option_conditions[id(stmt)] = scope.option_condition
        if t.view_kind == "detach":
            w.via = "detach"
        elif t.view_of is not None:
            w.via = "view"
        grad = scope.grad
        if scope.guarded and grad != GRAD_OFF:
            # inside `if self.training:` grad mode is unknown, unless the arm itself says `with torch.no_grad():`
            grad = GRAD_UNKNOWN
        base = t.base
        if t.data_of is not None:
            # `x.data.add_()` writes x's storage without touching x's counter.
            w.via = "data"
            param = t.data_of
            if param.param_attr is not None:
                w.param = param.param_attr
                w.param_filtered = param.param_attr == "" and len(scope.path) > param.param_path_len
            t.counter.write(w)
            t.storage.silent_writes.append(w)
            return w
        if t.overlapping and (w.kind in ("method", "augassign") and w.op.rstrip("()") not in FILL_LIKE
                              or w.kind == "setitem" and _selects_broadcast_dim(w.node, t.broadcast_dims)):
            w.raises = True
            scope._problem(Problem("expand-write", w.node, w.stmt, tensor=t, write=w))
            t.counter.write(w)
            return w
        source = transposed_source(w) if isinstance(value, Tensor) and value.storage is t.storage else None
        if source is not None and not (t.shape is not None and all(n == 1 for n in t.shape[-2:])):  # 1x1: same order
            # `x[1] = x[1].transpose(-2, -1)`: the source is the written elements in another order (probed on
            # torch 2.13: raised in and out of grad mode)
            w.raises = True
            scope._problem(Problem("overlap-write", w.node, w.stmt, tensor=t, write=w, detail={"source": source}))
            t.counter.write(w)
            return w
        if base.inference_call is not None and scope.inference is None and not scope.guarded:
            w.raises = True
            scope._problem(Problem("inference-write", w.node, w.stmt, tensor=base, write=w))
            t.counter.write(w)
            return w
        # Immediate errors, raised at the write itself (for `out=`, torch first refuses out= under autograd: out_write)
        if grad != GRAD_OFF and kind != "out":
            self._check_immediate(scope, t, base, w, grad, value)
        t.counter.write(w)
        # A tensor that receives a value requiring grad joins the graph.
        if isinstance(value, Tensor) and value.requires_grad and grad == GRAD_ON and not (t.is_leaf and t.requires_grad):
            for alias in (t, base):
                alias.requires_grad = True
                alias.is_leaf = False
                alias.history = alias.history | value.history
        elif isinstance(value, Tensor) and grad != GRAD_OFF:
            t.history = t.history | value.history
        return w

    def _check_immediate(self, scope, t: Tensor, base: Tensor, w: Write, grad: str, value) -> None:
        leaf_rg = base.is_leaf is True and base.requires_grad is True
        if leaf_rg:
            local = base.origin is not None and not base.is_parameter and base.created_by.startswith("torch.")
            certain = GRAD_ON if (grad == GRAD_ON or local) else GRAD_UNKNOWN
            w.raises = certain == GRAD_ON
            if t is base and (w.kind != "setitem" or self._writes_the_base(scope, w.node)):
                scope._problem(Problem("leaf-write", w.node, w.stmt, tensor=base, write=w), certain)
            else:
                scope._problem(Problem("leaf-view-write", w.node, w.stmt, tensor=base, write=w), certain)
            return
        if t.view_kind == "multi" and base.requires_grad is True and grad == GRAD_ON:
            w.raises = True
            scope._problem(Problem("multi-view-write", w.node, w.stmt, tensor=t, write=w))
            return
        if t.view_kind == "custom_function" and t.requires_grad is True and grad == GRAD_ON:
            w.raises = True
            scope._problem(Problem("custom-view-write", w.node, w.stmt, tensor=t, write=w))
            return
        if (t.view_in_no_grad and grad == GRAD_ON and not t.view_kind == "detach"
                and (base.requires_grad is True or (isinstance(value, Tensor) and value.requires_grad is True))):
            w.raises = True
            scope._problem(Problem("no-grad-view-write", w.node, w.stmt, tensor=t, write=w))

    def _writes_the_base(self, scope, target) -> bool:
        """`w[:] = v`, `w[...] = v`, `w[mask] = v`, `w[idx] = v` write the leaf itself (torch: "a leaf Variable");
        `w[0] = v`, `w[:, 1] = v`, `w[0:2] = v` go through a view of it ("a view of a leaf Variable"). Probed on
        torch 2.13; a slice with bounds that happens to cover the whole dimension is not claimed either way."""
        if type(target) is not cst.Subscript:
            return False
        elements = [e.slice for e in target.slice]
        if all((type(e) is cst.Slice and e.lower is None and e.upper is None and e.step is None)
               or (type(e) is cst.Index and type(e.value) is cst.Ellipsis) for e in elements):
            return True
        if len(elements) == 1 and type(elements[0]) is cst.Index:
            value = elements[0].value
            return type(value) is cst.List or isinstance(scope.facts.expr_values.get(id(value)), Tensor)
        return False

    # ---- saves and backward ---------------------------------------------
    def save(self, scope, t: Tensor, op: str, node, what: str) -> Save:
        if t.inference_call is not None and scope.inference is None and scope.grad == GRAD_ON and not scope.guarded:
            detail = {"op": op}
            site = self.argument_site(scope, t)
            if site is not None:
                detail["site"] = site
            else:
                detail["passed_in"] = self.passed_in(scope, t)
            scope._problem(Problem("inference-save", node, scope.stmt, tensor=t, detail=detail))
        s = Save(scope.new_seq(), t.counter, t.storage, t.counter.version, op, node, scope.stmt, scope.path,
                 t.name, what, via_index=t.view_kind == "index",
                 loop=scope.loops[-1].node if scope.loops else None,
                 iteration=scope.loops[-1].iteration if scope.loops else 0, top=scope.top,
                 expr=t.origin if not t.name else None, tensor=t, layer_call=scope.layer_call_site,
                 call_chain=scope.call_chain(), scope_id=scope.serial,
                 loop_passes=tuple((f.node, f.start_seq, f.iteration) for f in scope.loops))
        scope.facts.saves.append(s)
        if t.alternatives:
            arms = [a for a in t.alternatives if isinstance(a, Tensor) and a.counter is not t.counter]
            s.alternates = tuple(self.save(scope, arm, op, node, what) for arm in arms)
            for arm_save, arm in zip(s.alternates, arms):
                if arm.view_kind == "index" and type(arm.origin) is cst.Subscript:
                    arm_save.read_at = (arm.origin, t.alternatives_top)  # `outputs[t]`: read a copy there
        return s

    def forward_site(self, scope, s: Save):
        """Where the forward that saved `s` ran, in this function or the nearest one that called it: the call
        `d_fake = self.D(fake)` rather than the `nn.Linear(...)` built in the discriminator's __init__."""
        mine = {scope.serial for scope in scope.ancestors()}
        if s.scope_id in mine:
            return s.layer_call
        for node, top, caller in s.call_chain:
            if caller.serial in mine:
                return (node, top)
        return None

    def backward(self, scope, t: Tensor, node, retain: bool) -> None:
        scope.run.saw_backward = True
        if scope.loops:
            scope.run.loop_backward = True
        self.check_history(scope, t, node, kind="backward")
        for m in self._modules_in(scope, t.history):
            m.grads = True
        for owner in self.owners_of(scope, [t]):
            if hasattr(owner, "grads"):
                owner.grads = True
        if not retain:
            for s in _with_alternates(t.history):
                if s.freed_by is None:
                    s.freed_by = node
                    s.freed_top = scope.top
                    s.freed_path = scope.path
                    s.freed_loops = tuple(f.node for f in scope.loops)
                    s.freed_scopes = frozenset(a.serial for a in scope.ancestors())

    def _modules_in(self, scope, history):
        seen = {}  # by identity, in order (a list's `in` made a backward through N layers cost N^2)
        for s in history:
            owner = s.counter.owner
            if owner is not None:
                seen.setdefault(id(owner), owner)
        return list(seen.values())

    def escape(self, scope, value, node) -> None:
        """A value leaves a function analysed on its own: the caller will run backward on it."""
        if scope.kind != "function" or scope.inlined:
            return
        if scope.run.saw_backward:
            return  # a training step that back-propagated itself returns its outputs for logging, not for backward
        first = len(scope.run.created)
        values = value.items if isinstance(value, Seq) and value.items else [value]
        for v in values:
            if isinstance(v, Tensor) and v.requires_grad is True:
                self.check_history(scope, v, node, kind="return")
        name = getattr(scope.function, "name", None)
        for problem in scope.run.created[first:]:
            # kept only while no code of this file calls the function (FileAnalysis.run drops the others: the
            # calls in this file are interpreted with their real arguments and say what happens to the result)
            problem.detail = {**problem.detail, "escape_of": name.value if name is not None else ""}

    def check_history(self, scope, t: Tensor, use, kind: str) -> None:
        for s in sorted(_with_alternates(t.history), key=lambda s: s.seq):
            if s.freed_by is not None and kind == "backward":
                carry = self._carry_for(scope, s, s.freed_loops)
                if carry is not None:
                    scope._problem(Problem("freed-graph", carry.stmt, carry.stmt, tensor=t, save=s, use=use,
                                          carry=carry.stmt, carry_target=carry.name, carry_value=carry.value_node,
                                          detail={"freed_by": s.freed_by, "carry": carry}, top=carry.top))
                elif (s.freed_by is not use or self._saved_before_loop(scope, s) or self._saved_in_earlier_pass(scope, s)) \
                        and _compatible(s.path, scope.path) and _compatible(s.freed_path, scope.path):
                    detail = {"freed_by": s.freed_by, "freed_top": getattr(s, "freed_top", None)}
                    if s.freed_by is use and not self._saved_before_loop(scope, s):
                        detail["earlier_pass"] = True  # kept from an earlier pass (a list, an attribute) and freed there
                    forward = self.forward_site(scope, s)
                    if forward is not None:
                        detail["forward"] = forward
                    if scope.serial not in s.freed_scopes and s.freed_by is not use:
                        # this backward runs inside a helper (`def gdpp_loss(...): loss.backward()`): the call of
                        # that helper, next to the backward that freed the graph, is the ordering that fails
                        for node, top, caller in scope.call_chain():
                            if caller.serial in s.freed_scopes:
                                detail["site"] = (node, top)
                                break
                    scope._problem(Problem("second-backward", use, scope.stmt, tensor=t, save=s, use=use,
                                          detail=detail))
                continue
            if s.counter.version != s.version:
                for w in s.counter.writes_since(s.version):
                    if not _compatible(s.path, w.path) or w.seq < s.seq:
                        continue
                    if w.via == "data" or w.raises:
                        continue
                    carries = self._carries_for(scope, s, w.loops) if w.kind == "step" else []
                    for carry in carries or [None]:
                        detail = {"carry": carry} if carry else {}
                        detail["version_at_use"] = s.counter.version  # what torch prints as "is at version N"
                        site = self._step_site(scope, w)
                        if site is not None:
                            detail["site"] = site
                        forward = self.forward_site(scope, s)
                        if forward is not None:
                            detail["forward"] = forward
                        scope._problem(Problem("stale-save", w.node, w.stmt, tensor=t, write=w, save=s, use=use,
                                              carry=carry.stmt if carry else None,
                                              carry_target=carry.name if carry else "",
                                              carry_value=carry.value_node if carry else None,
                                              detail=detail))
                    break
            else:
                for w in s.storage.silent_writes:
                    if w.seq > s.seq and _compatible(s.path, w.path) and _may_write_saved_param(w, s):
                        scope._problem(Problem("silent-write", w.node, w.stmt, tensor=t, write=w, save=s, use=use))
                        break

    def argument_site(self, scope, t: Tensor):
        """When `t` reached a model's code as an argument (through same-file calls of a module's methods): the call,
        in the function that had it, that passed it in (`model(outputs)` rather than the `self.tok(input_ids)`
        inside forward, which is right for other inputs); None when `t` belongs to this function, or when the op
        is written in a plain function (`ref_probs * ...` in a loss helper: the op is reported where it is
        written, `passed_in` names the calls)."""
        site = None
        while scope.call_site is not None and scope.parent is not None and isinstance(scope.self_value, Module) \
                and any(a.counter is t.counter for a in scope.call_args):
            site, scope = scope.call_site, scope.parent
        return site

    def passed_in(self, scope, t: Tensor) -> list:
        """The calls, innermost first, through which `t` reached this function as an argument."""
        sites = []
        while scope.call_site is not None and scope.parent is not None \
                and any(a.counter is t.counter for a in scope.call_args):
            sites.append(scope.call_site)
            scope = scope.parent
        return sites

    def _step_site(self, scope, w):
        """For a step inside a helper (`def update(opt, loss): ...; opt.step()`): the call of that helper in the
        function that also runs this backward, where the ordering that fails is written; None when the step is
        written there itself."""
        mine = {scope.serial for scope in scope.ancestors()}
        if not w.call_chain or w.scope_id in mine:
            return None  # the step is written in this function (or one that called it): report it where it is
        for node, top, caller in w.call_chain:
            if caller.serial in mine:
                return (node, top)
        return None

    def _saved_in_earlier_pass(self, scope, s: Save) -> bool:
        """`s` was saved in an earlier pass of a loop that is still running this backward: the graph of that pass
        was kept (`self.log_probs.append(...)` never cleared, a list of losses) and this same backward freed it."""
        running = {(f.node, f.start_seq): f.iteration for f in scope.loops}
        return any(running.get((node, start), -1) > it for node, start, it in s.loop_passes)

    def _saved_before_loop(self, scope, s: Save) -> bool:
        """The same backward() in a later iteration reaches `s`, saved before the loop by a tensor the loop reads
        on every pass (`feats = f(x)` above `for y in ys: loss(feats, y).backward()`), not one of its elements.
        An enclosing loop counts as well as the innermost: `gp` above `for x in loader: for _ in range(k):
        (d(x) + gp).backward()` is reached again by the loader's next batch even when the inner loop runs once."""
        return any(s.seq < frame.start_seq and frame.iteration > 0 and s not in frame.element_saves
                   for frame in scope.loops)

    def _carries_for(self, scope, s: Save, loops: tuple) -> list:
        """Carried state through which the next iteration reaches the graph holding `s` (one per name): state
        carried by a loop that also ran the write or the backward (`loops`); a loop over layers that ends before
        them carries nothing across them."""
        found: dict = {}
        for carry in scope.run.carries:
            if carry.used and s in carry.history and carry.name not in found and carry.loop in loops:
                found[carry.name] = carry
        return list(found.values())

    def _carry_for(self, scope, s: Save, loops: tuple):
        carries = self._carries_for(scope, s, loops)
        return carries[0] if carries else None


# In-place activations whose backward reads their *result* (their out-of-place forms save the input), probed under
# torch 2.13 by tests/test_inplace_activation_saves.py: `F.leaky_relu(y, inplace=True)` then `y.mul_(2)` makes
# backward fail with "output 0 of LeakyRelu1". hardtanh/relu6/threshold/silu/hardswish/dropout in place save nothing.
INPLACE_SAVES_RESULT = frozenset({"relu", "leakyrelu", "elu", "selu", "celu", "rrelu"})


def _with_alternates(history):
    """The saves of a history and, for saves of a value that may be one of several tensors, the same save on each."""
    extra = [a for s in history if s.alternates for a in _with_alternates(s.alternates)]
    return [*history, *extra] if extra else history


def _selects_broadcast_dim(target, dims: tuple) -> bool:
    """`J[:, i] = v` on an expand() that broadcast dim 0: the written region still has several elements on one
    memory location, so torch refuses it (fills included, checked on torch 2.13); `J[0] = v` does not.
    Claimed only for a bare `:` (or an omitted trailing index) on a broadcast dimension."""
    if type(target) is not cst.Subscript or not dims:
        return False
    elements = [e.slice for e in target.slice]
    if any(type(e) is cst.Index and type(e.value) in (cst.Ellipsis, cst.Name) and
           (type(e.value) is cst.Ellipsis or e.value.value == "None") for e in elements):
        return False  # `...` / `None` shift the dimensions
    for dim in dims:
        if dim >= len(elements):
            return True
        e = elements[dim]
        if type(e) is cst.Slice and e.lower is None and e.upper is None and e.step is None:
            return True
    return False


def _activation_key(op_name: str) -> str:
    """`LeakyReLU(inplace=True)`, `leaky_relu`, `leaky_relu_` -> `leakyrelu`."""
    return op_name.split("(", 1)[0].rsplit(".", 1)[-1].replace("_", "").lower()


def _compatible(p1: tuple, p2: tuple) -> bool:
    """Two events can happen in one run unless they sit in different arms of the same branch."""
    arms = {(node, it): arm for node, it, arm in p1}
    for node, it, arm in p2:
        other = arms.get((node, it))
        if other is not None and other != arm:
            return False
    return True


compatible = _compatible


def _may_write_saved_param(w: Write, s: Save) -> bool:
    """A layer's weight and bias share one storage in this model; a `.data` write reaches the save only through a
    parameter the layer saved (nn.Linear saves its weight, never its bias): the bias, or the stand-in of all of the
    layer's parameters under a branch taken after it was made (`if p.dim() == 1:` in a loop over them), does not."""
    if s.params_saved is None or w.param is None:
        return True
    if w.param == "":
        return not w.param_filtered
    return w.param in s.params_saved


# Views that reorder a tensor's dimensions (same elements, other strides). Not `.t()` / `.T`: on a 1-D row they
# return it unchanged and the copy is allowed (probed on torch 2.13).
_REORDER_METHODS = {"transpose", "permute", "swapaxes", "swapdims", "movedim", "moveaxis"}
_REORDER_ATTRS = {"mT", "mH"}


def transposed_source(w):
    """The value expression of a write that copies the written elements back in another order: `x[1] =
    x[1].transpose(-2, -1)`, `m.copy_(m.mT)`. None when the statement is not of that shape."""
    node, stmt = w.node, w.stmt
    if w.kind == "setitem":
        small = stmt.body[0] if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 else None
        if type(small) is not cst.Assign or len(small.targets) != 1 or small.targets[0].target is not node:
            return None
        target, value = node, small.value
    elif w.kind == "method" and type(node) is cst.Call and type(node.func) is cst.Attribute \
            and node.func.attr.value == "copy_" and len(node.args) == 1 and node.args[0].keyword is None:
        target, value = node.func.value, node.args[0].value
    else:
        return None
    if type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _REORDER_METHODS:
        source = value.func.value
        dims = [a.value for a in value.args]
        if value.func.attr.value in ("transpose", "swapaxes", "swapdims", "movedim", "moveaxis") and (
                len(dims) != 2 or all(type(d) in (cst.Integer, cst.UnaryOperation) for d in dims)
                and dims[0].deep_equals(dims[1])):
            return None  # `transpose(1, 1)`: the same order
        if value.func.attr.value == "permute" and dims and all(type(d) is cst.Integer for d in dims) \
                and [d.value for d in dims] == [str(i) for i in range(len(dims))]:
            return None  # `permute(0, 1, 2)`: the same order
    elif type(value) is cst.Attribute and value.attr.value in _REORDER_ATTRS:
        source = value.value
    else:
        return None
    return value if _pure(target) and source.deep_equals(target) else None


def _pure(expr) -> bool:
    """Reading it twice gives the same tensor: names, attributes, and indexing by names, literals and slices."""
    if type(expr) is cst.Name:
        return True
    if type(expr) is cst.Attribute:
        return _pure(expr.value)
    if type(expr) is cst.Subscript:
        for element in expr.slice:
            part = element.slice
            if type(part) is cst.Index:
                if not _index_pure(part.value):
                    return False
            elif type(part) is cst.Slice:
                if not all(b is None or _index_pure(b) for b in (part.lower, part.upper, part.step)):
                    return False
            else:
                return False
        return _pure(expr.value)
    return False


def _index_pure(expr) -> bool:
    if type(expr) in (cst.Integer, cst.Name, cst.Ellipsis):
        return True
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        return type(expr.expression) in (cst.Integer, cst.Name)
    return False
