"""Optimizers: which parameter groups they own, and `step()` as an in-place write on each of them.

A step writes every layer whose `.grad` may hold values (a layer reached by a backward since the last
`zero_grad()`); SGD/Adam bump each parameter's version counter once, fused steps write the storage only
(torch 2.13, CPU: no version bump, so stale weights go unnoticed at runtime).
"""
from __future__ import annotations

import libcst as cst

from .model import DictVal, Module, Optimizer, ParamsOf, Seq, Tensor, Write, truth
from .modules import set_to_none_false
from .names import dotted


class Optimizers:
    """The model of optimizers: which parameter groups one owns (through the module model), `zero_grad()`, and
    `step()` as a write on each group whose `.grad` holds values (fused steps write storage only)."""

    def __init__(self, modules):
        self.modules = modules

    def optimizer(self, scope, q: str, node: cst.Call, evaluated):
        positional, keywords = evaluated
        params = []
        first = positional[0] if positional else (keywords.get("params") or (None,))[0]
        self._collect_params(scope, first, params)
        fused = keywords.get("fused")
        is_fused = fused is not None and truth(fused[0]) is True
        return Optimizer(params, is_fused, node=node)

    def _collect_params(self, scope, value, out: list) -> None:
        if isinstance(value, ParamsOf):
            out.append(value.module)
        elif isinstance(value, Module):
            out.append(value)
        elif isinstance(value, Tensor) and value.is_leaf and value.requires_grad is not False:
            if value.module_params is not None and value.is_parameter:
                out.append(value.module_params)
            elif value.requires_grad:
                out.append(value)
        elif isinstance(value, Seq):
            for item in value.spread:
                self._collect_params(scope, item, out)
            for item in value.items if value.items is not None else ([value.element] if value.element is not None else []):
                self._collect_params(scope, item, out)
        elif isinstance(value, DictVal) and value.items is not None:
            self._collect_params(scope, value.items.get("params"), out)

    def optimizer_method(self, scope, opt: Optimizer, name: str, positional, node: cst.Call):
        if name == "zero_grad":
            if not set_to_none_false(node):
                for group in self._optimizer_groups(scope, opt):
                    if isinstance(group, Module):
                        group.grads = False
            return None
        if name == "step":
            self.optimizer_step(scope, opt, node)
            return None
        if name == "add_param_group" and positional:
            self._collect_params(scope, positional[0], opt.params)
        return None

    def _optimizer_groups(self, scope, opt: Optimizer) -> list:
        groups = []
        for p in opt.params:
            if isinstance(p, Module):
                for g in self.modules.param_groups(scope, p):
                    if g not in groups:
                        groups.append(g)
            elif p not in groups:
                groups.append(p)
        return groups

    def optimizer_step(self, scope, opt: Optimizer, node: cst.Call) -> None:
        opt_name = dotted(node.func.value) if type(node.func) is cst.Attribute else ""
        if type(node.func) is cst.Attribute and not opt_name and type(node.func.value) is cst.Call:
            opt_name = ""
        for group in self._optimizer_groups(scope, opt):
            if isinstance(group, Module):
                if group.grads is False or group.frozen is True:
                    continue
                owner = group
                w = Write(scope.new_seq(), node, scope.stmt, f"{opt_name or 'optimizer'}.step()", "step", 0, scope.path,
                          target_name=f"the parameters of `{owner.name or owner.kind.replace('torch.nn.', 'nn.')}`",
                          optimizer_name=opt_name or "", top=scope.top)
                w.loops = tuple(f.node for f in scope.loops)
                w.call_chain = scope.call_chain()
                w.scope_id = scope.serial
                if opt.fused:
                    group.params_storage.silent_writes.append(w)
                else:
                    group.params_counter.write(w)
            elif isinstance(group, Tensor):
                w = Write(scope.new_seq(), node, scope.stmt, f"{opt_name or 'optimizer'}.step()", "step", 0, scope.path,
                          target_name=group.name, optimizer_name=opt_name or "", top=scope.top)
                w.loops = tuple(f.node for f in scope.loops)
                w.call_chain = scope.call_chain()
                w.scope_id = scope.serial
                if opt.fused:
                    group.storage.silent_writes.append(w)
                else:
                    group.counter.write(w)
