"""Calls: user functions and methods interpreted with the caller's values, classes instantiated by running
their `__init__`, builtins, and torch's own callables (factories, grad-mode contexts, autograd entry points).

A call to a function of this file runs its body in a child scope whose parameters are bound to the
caller's values (tensors with their version counters, models, optimizers, callables, defaults): writes and
saves on arguments land on the caller's counters, and the return value (a tuple, an alias of an argument,
an output that saved itself) comes back. Problems found inside are reported because this call exists in
the file. Depth and total work are bounded; past the bound a call's result is unknown.
"""
from __future__ import annotations

import dataclasses

import libcst as cst

from .classes import find_method
from .expressions import Range
from .modules import MODULE_API, SAME_DTYPE_LAYERS
from .names import dotted
from .model import (
    dimensions,
    is_none,
    truth,
    Number,
    GRAD_OFF,
    GRAD_ON,
    ClassRef,
    Counter,
    DictVal,
    Dim,
    FunctionRef,
    Instance,
    Literal,
    OptionDefault,
    Module,
    Optimizer,
    ParamsOf,
    Partial,
    Problem,
    QualRef,
    Seq,
    Special,
    Storage,
    Tensor,
)
from .sets import EMPTY, SharedSet
from .tensors import flat_tensors

TENSOR_FACTORIES = {
    "torch." + n
    for n in (
        "rand randn zeros ones empty full tensor arange linspace logspace eye rand_like randn_like zeros_like "
        "ones_like empty_like full_like randint randint_like randperm as_tensor from_numpy normal"
    ).split()
}
# torch functions that return a fixed-size tuple of new tensors.
TUPLE_RESULTS = {"torch.linalg.eigh": 2, "torch.linalg.eig": 2, "torch.linalg.svd": 3, "torch.linalg.qr": 2,
                 "torch.linalg.slogdet": 2, "torch.svd": 3, "torch.qr": 2, "torch.slogdet": 2, "torch.linalg.lu": 3,
                 "torch.linalg.lu_factor": 2, "torch.linalg.inv_ex": 2, "torch.linalg.cholesky_ex": 2}
# Of those, the outputs torch returns without a graph (probed on torch 2.13: lu's P, pivots, the `info` codes)
NOGRAD_OUTPUTS = {"torch.linalg.lu": {0}, "torch.linalg.lu_factor": {1}, "torch.linalg.inv_ex": {1},
                  "torch.linalg.cholesky_ex": {1}}
# Factories whose result has the default dtype (float32) and device (the CPU) unless told otherwise.
DEFAULT_DTYPE_FACTORIES = frozenset({"rand", "randn", "zeros", "ones", "empty"})
# Calls that change torch's default dtype or device for the factories run after them.
DEFAULT_CHANGERS = frozenset({"torch.set_default_dtype", "torch.set_default_device", "torch.set_default_tensor_type"})
# Methods of a tensor that make a new, unrelated tensor (no alias, no save).
FRESH_METHODS = set("new_zeros new_ones new_empty new_full new_tensor".split())
# Methods that keep the graph but may or may not alias: new values without an alias (a miss, not a false alarm).
COPYISH_METHODS = set(
    "to float double half bfloat16 cuda cpu type type_as contiguous reshape reshape_as flatten "
    "squeeze_copy view_copy".split()
)
# Of those, the ones that return a view of a contiguous input (probed on torch 2.13; a copy after permute/t/expand).
RESHAPES = {"reshape", "reshape_as", "flatten", "contiguous"}
NON_TENSOR_METHODS = set(
    "item tolist numpy size dim numel nelement element_size stride storage_offset data_ptr is_contiguous "
    "is_floating_point is_complex untyped_storage get_device __len__ equal allclose".split()
)
# Ops whose result is outside the graph (integer or boolean results): they must not carry history.
NONDIFF = set(
    "gt lt ge le eq ne greater less greater_equal less_equal not_equal argmax argmin argsort isnan isinf isfinite "
    "isclose nonzero any all bool long int short byte char logical_not logical_and logical_or logical_xor bitwise_not "
    "bitwise_and bitwise_or signbit count_nonzero bincount unique searchsorted bucketize histc multinomial "
    "bernoulli".split()
)
# `*_` methods that do not write tensor data.
NOT_WRITES = set("requires_grad_ share_memory_ retain_grad_ detach_ _version".split())
GRAD_CONTEXTS = {
    "torch.no_grad": GRAD_OFF,
    "torch.inference_mode": GRAD_OFF,
    "torch.enable_grad": GRAD_ON,
    "torch.autograd.no_grad": GRAD_OFF,
    "torch.autograd.grad_mode.no_grad": GRAD_OFF,
    "torch.autograd.grad_mode.inference_mode": GRAD_OFF,
    "torch.autograd.enable_grad": GRAD_ON,
}
# Methods of a literal string a script's option holds (`args.layers.split(",")`): computed, never anything else
STR_METHODS = frozenset({"split", "strip", "lower", "upper", "replace", "startswith", "endswith"})
BUILTINS = {"range", "enumerate", "zip", "len", "float", "int", "list", "tuple", "iter", "reversed", "sum", "print",
            "isinstance", "getattr", "hasattr", "setattr", "super", "dict", "sorted", "min", "max", "abs", "next",
            "map", "filter", "round", "bool", "str", "type", "any", "all", "id", "callable"}
GRAD_SCALERS = ("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
                "torch.amp.grad_scaler.GradScaler", "torch.cpu.amp.GradScaler")
ACCELERATORS = ("accelerate.Accelerator", "lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric")
# Names that the interpreter must not inline even when a user class defines them (nn.Module's protocol).
MAX_DEPTH = 8
_UNKNOWN_REST = object()  # positional arguments from a `*args` of unknown content


# torch.distributions.Distribution methods: draws without a graph, and ops of the parameters (and the value given)
DISTRIBUTION_SAMPLES = {"sample", "sample_n", "enumerate_support"}
DISTRIBUTION_OPS = {"rsample", "log_prob", "entropy", "cdf", "icdf", "perplexity"}


class _ContextMarker:
    def __init__(self, mode: str, inference_call: cst.Call | None = None, leaves_inference: bool = False,
                 flag: str = ""):
        self.mode = mode
        self.inference_call = inference_call  # the `torch.inference_mode()` call, for inference-tensor facts
        self.leaves_inference = leaves_inference
        self.flag = flag  # `train` of `set_grad_enabled(train)`: the mode depends on it (hover shows both arms)


class Calls:
    """Calls made by interpreted code: same-file functions and methods run in a child scope with the caller's
    values, classes instantiated by running `__init__`, builtins, torch callables. Expressions reach it for
    `cst.Call`; it evaluates arguments through the scope's `Expressions`."""

    # ---- dispatch -------------------------------------------------------
    def eval_Call(self, scope, node: cst.Call):
        func = node.func
        if type(func) is cst.Attribute:
            if not scope.expressions._bound_head(scope, func):
                q = scope.a.resolve_dotted(func)
                if q is not None:
                    return self.eval_qualified_call(scope, q, node)
            receiver = scope.expressions.eval(scope, func.value)
            return self.eval_method(scope, receiver, func.attr.value, node)
        if type(func) is cst.Name:
            name = func.value
            if name in BUILTINS and name not in scope.a.imports and scope.lookup(name) is None:
                return self.eval_builtin(scope, name, node)
            if not scope.expressions._bound_head(scope, func):
                q = scope.a.resolve_dotted(func)
                if q is not None and q not in scope.a.classes:
                    return self.eval_qualified_call(scope, q, node)
        callee = scope.expressions.eval(scope, func)
        return self.call_value(scope, callee, node)

    def call_value(self, scope, callee, node: cst.Call, extra_args=(), extra_kwargs=None):
        """Call a value: a function or method of this file, a class, a module, a library callable."""
        if isinstance(callee, QualRef):
            return self.eval_qualified_call(scope, callee.name, node)
        if isinstance(callee, Partial):
            positional, keywords = self.args_of(scope, node)
            merged = dict(callee.kwargs)
            merged.update(keywords)
            return self.call_with(scope, callee.func, list(callee.args) + positional, merged, node)
        if isinstance(callee, Special) and callee.kind == "function_apply":
            positional, keywords = self.args_of(scope, node)
            return self.apply_custom_function(scope, callee.payload, positional, node)
        positional, keywords = self.args_of(scope, node)
        return self.call_with(scope, callee, list(extra_args) + positional, {**(extra_kwargs or {}), **keywords}, node)

    def call_with(self, scope, callee, positional, keywords, node, passed=None):
        """Call a value with already evaluated arguments (keywords: name -> (value, node)). `passed`: what the
        calling code handed in, when that is not the arguments (a forward pre-hook replaced them)."""
        if isinstance(callee, FunctionRef):
            bound = callee.bound
            return self.call_function(scope, callee, positional, keywords, node, bound, passed=passed)
        if isinstance(callee, ClassRef):
            return self.instantiate(scope, callee.info, positional, keywords, node)
        if isinstance(callee, Module):
            return self.call_module(scope, callee, positional, node, keywords)
        if isinstance(callee, Instance) and callee.cls is not None:
            method = scope.a.method_value(callee.cls, "__call__", callee)  # `transform(x)` runs `__call__`
            if method is not None:
                return self.call_function(scope, method, positional, keywords, node, callee)
            return None
        if isinstance(callee, Partial):
            merged = dict(callee.kwargs)
            merged.update(keywords)
            return self.call_with(scope, callee.func, list(callee.args) + positional, merged, node, passed=passed)
        if isinstance(callee, QualRef):
            return self.eval_qualified_call(scope, callee.name, node, evaluated=(positional, keywords))
        return None

    def args_of(self, scope, node: cst.Call):
        """Positional values and keywords (name -> (value, expression)) of a call, `*` and `**` expanded."""
        positional = []
        keywords = {}
        for arg in node.args:
            value = scope.expressions.eval(scope, arg.value)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = (value, arg.value)
            elif arg.star == "*":
                if isinstance(value, Seq) and value.items is not None:
                    positional.extend(value.items)
                else:
                    positional.append(_UNKNOWN_REST)
            elif arg.star == "**":
                if isinstance(value, DictVal) and value.items is not None and all(type(k) is str for k in value.items):
                    for k, v in value.items.items():
                        keywords[k] = (v, None)
                else:
                    keywords["**"] = (None, None)
            else:
                positional.append(value)
        return positional, keywords

    # ---- functions of this file -----------------------------------------
    def call_function(self, scope, fn: FunctionRef, positional, keywords, node, bound=None, passed=None):
        target = fn.node
        if (target in scope.stack or scope.depth >= MAX_DEPTH or scope.a.steps > 2 * scope.a.max_steps
                or scope.a.calls >= scope.a.max_calls):
            a = scope.a
            if a.calls >= a.max_calls:
                a.note_budget_cut(scope, node, "calls", f"the analysis budget ({a.max_calls:,} interpreted calls) ran "
                                  "out at this line: the calls after it in this block were not followed")
            elif scope.depth >= MAX_DEPTH and target not in scope.stack:
                a.note_budget_cut(scope, node, "depth", f"calls nested more than {MAX_DEPTH} deep are not followed: "
                                  "what this call does was not checked")
            return None
        if bound is None and fn.cls is None and passed is None and type(target) is cst.FunctionDef \
                and not scope.a.is_generator(target):
            # a function called again with the same plain arguments in the same context does what it did (a
            # weight loader's `_n2p(w[k])`, 20 calls per block): replayed from its summary (summaries.py)
            store = scope.a.summaries
            key = store.call_key(scope, fn, positional, keywords) if store.summarise_calls else None
            if key is not None:
                hit, result = store.replay_call(scope, key)
                if hit:
                    return result
                return store.run_call(scope, key, fn, lambda: self._call_function(scope, fn, positional, keywords,
                                                                                  node, bound, passed))
        return self._call_function(scope, fn, positional, keywords, node, bound, passed)

    def _call_function(self, scope, fn: FunctionRef, positional, keywords, node, bound, passed):
        target = fn.node
        scope.a.calls += 1
        grad = scope.grad
        if type(target) is cst.FunctionDef:
            grad = scope.a.decorated_grad_mode(target) or grad
            if fn.kind == "staticmethod":
                bound = None
        child = scope.child_scope(grad, target, fn.cls, fn.enclosing, bound, fn.top or scope.a.top_of.get(id(target)))
        child.note_locals(target)
        child.call_site = (node, scope.top)
        child.call_args = flat_tensors(list(positional) + [v[0] if isinstance(v, tuple) else v for v in keywords.values()]
                                       if passed is None else passed)
        if type(target) is cst.FunctionDef:
            decorator = scope.a.decorated_inference(target)
            if decorator is not None:
                child.inference = decorator
        self.bind_arguments(child, target.params, positional, keywords, bound)
        saved_stmt = scope.stmt
        if type(target) is cst.Lambda:
            child.stmt = scope.stmt
            child.returns.append(child.expressions.eval(child, target.body))
        else:
            self.run_suite(child, target.body)
        scope.stmt = saved_stmt
        return self.return_value(child, target)

    def run_suite(self, scope, suite) -> None:
        if type(suite) is cst.SimpleStatementSuite:
            for small in suite.body:
                scope.stmt = suite
                scope.run_small(small, suite)
        else:
            scope.run_body(suite.body)

    def return_value(self, scope, target):
        if type(target) is cst.FunctionDef and scope.a.is_generator(target):
            # the body ran eagerly at the call; iterating the generator visits what it yielded, item by item (a
            # loop inside it ran as many passes as the interpreter gave it: the items stand for that many)
            if 0 < len(scope.yields) <= scope.a.max_unroll:
                return Seq(list(scope.yields), path=scope.path)
            return Seq(None, scope.expressions.join_values(scope, scope.yields) if scope.yields else None, path=scope.path)
        if not scope.returns:
            return Literal(None)
        if len(scope.returns) == 1:
            return scope.returns[0]
        values = [v for v in scope.returns if not (isinstance(v, Literal) and v.value is None)]
        # `if x is None: return None` guards next to one real result: the real result is what callers use
        if len(values) == 1 and len(scope.returns) == 2:
            return None
        return scope.expressions.join_values(scope, scope.returns)

    def bind_arguments(self, scope, params: cst.Parameters, positional, keywords, bound=None) -> None:
        keywords = dict(keywords)
        ordered = list(params.posonly_params) + list(params.params)
        if bound is not None and ordered:
            first = ordered.pop(0)
            scope.env[first.name.value] = bound
        unknown_rest = False
        i = 0
        for p in ordered:
            name = p.name.value
            if not unknown_rest and i < len(positional):
                value = positional[i]
                i += 1
                if value is _UNKNOWN_REST:
                    unknown_rest = True
                    scope.params.add(name)
                    continue
                self._bind(scope, name, value, p)
            elif name in keywords:
                self._bind(scope, name, keywords.pop(name)[0], p)
            elif unknown_rest or "**" in keywords:
                scope.params.add(name)
            elif p.default is not None:
                self._bind(scope, name, _option_default(scope.expressions.eval(scope, p.default), name), p)
            else:
                scope.params.add(name)
        star = params.star_arg
        if type(star) is cst.Param:
            rest = positional[i:]
            known = not unknown_rest and _UNKNOWN_REST not in rest
            scope.env[star.name.value] = Seq(list(rest) if known else None, path=scope.path)
        for p in params.kwonly_params:
            name = p.name.value
            if name in keywords:
                self._bind(scope, name, keywords.pop(name)[0], p)
            elif "**" in keywords:
                scope.params.add(name)
            elif p.default is not None:
                self._bind(scope, name, _option_default(scope.expressions.eval(scope, p.default), name), p)
            else:
                scope.params.add(name)
        if params.star_kwarg is not None:
            unknown = "**" in keywords
            keywords.pop("**", None)
            scope.env[params.star_kwarg.name.value] = DictVal(None if unknown else {k: v[0] for k, v in keywords.items()})

    def _bind(self, scope, name: str, value, param) -> None:
        if value is None:
            scope.params.add(name)  # unknown: a tensor of unknown requires_grad once used as one
            return
        scope.env[name] = value
        scope.record_name(param.name, value)

    # ---- classes of this file -------------------------------------------
    def instantiate(self, scope, info, positional, keywords, node):
        if info.is_function:
            return None
        if info.external:
            return scope.modules.summarised_module(scope, info, node)
        if info.is_module:
            obj = scope.modules.new_module(scope, info.name, None, False, node)
            obj.cls = info
        else:
            obj = Instance(info)
        init, owner = find_method(scope.a, info, "__init__")
        if init is not None and info.is_module and type(node) is cst.Call:
            # a model class built again in the same context is a copy of the first build (summaries.py); not the
            # abstract instance a method analysed on its own runs with (built once per class and reporting mode)
            store = scope.a.summaries
            key = store.key(scope, init, info, positional, keywords)
            if key is not None:
                copy = store.replay(scope, key, node)
                if copy is not None:
                    return copy
                return store.run(scope, key, node, lambda: self._construct(scope, info, obj, init, owner, positional,
                                                                           keywords, node))
        return self._construct(scope, info, obj, init, owner, positional, keywords, node)

    def _construct(self, scope, info, obj, init, owner, positional, keywords, node):
        """Run `__init__` (or the torch base's) on a new instance `obj`."""
        if init is not None:
            fn = FunctionRef(init, top=scope.a.top_of.get(id(init)), cls=owner)
            saved = scope.grad
            if info.is_module:
                scope.grad = GRAD_ON if scope.grad != GRAD_OFF else GRAD_OFF
            result = self.call_function(scope, fn, positional, keywords, node, obj)
            scope.grad = saved
            if result is None and scope.a.calls >= scope.a.max_calls and info.is_module:
                return scope.modules.summarised_module(scope, info, node)
        elif info.is_module:
            scope.modules.init_torch_base(scope, obj, info.torch_base, positional, self.items_of(scope))
        elif info.dataclass_fields is not None:
            self._init_dataclass(scope, info, obj, positional, keywords, node)
        if isinstance(obj, Module):
            obj.has_params = scope.modules.module_has_params(scope, obj)
        return obj

    def _init_dataclass(self, scope, info, obj, positional, keywords, node):
        """The `__init__` `@dataclass` generates: each field from its argument, or its default when that is a
        literal (another default is unknown), then `__post_init__`."""
        if _UNKNOWN_REST in positional or "**" in keywords:
            return
        for i, (name, default) in enumerate(info.dataclass_fields):
            if i < len(positional):
                value = positional[i]
            elif name in keywords:
                value = keywords[name][0]
            else:
                value = _literal_default(default)
            obj.attrs[name] = value
        post, owner = find_method(scope.a, info, "__post_init__")
        if post is not None:
            self.call_function(scope, FunctionRef(post, top=scope.a.top_of.get(id(post)), cls=owner), [], {}, node, obj)

    def eval_super_method(self, scope, sup: Special, name: str, node: cst.Call):
        cls, obj = sup.payload
        positional, keywords = self.args_of(scope, node)
        if cls is None or obj is None:
            return None
        method, owner = find_method(scope.a, scope.a.classes.get(_class_name(obj)) or cls, name, after=cls)
        if method is not None:
            return self.call_function(scope, FunctionRef(method, top=scope.a.top_of.get(id(method)), cls=owner),
                                      positional, keywords, node, obj)
        if name == "__init__" and isinstance(obj, Module):
            scope.modules.init_torch_base(scope, obj, cls.torch_base, positional, self.items_of(scope))
        elif name == "forward" and isinstance(obj, Module) and obj.children is not None:
            return self.call_children(scope, obj, positional, node)
        elif name == "forward" and isinstance(obj, Module) and obj.row is not None:
            return scope.modules.layer_call(scope, obj, positional, node,  # the torch layer's own forward
                                            self.layer_dtype_device(scope, obj, positional))
        return None

    # ---- modules ----------------------------------------------------------
    def eval_module_method(self, scope, m: Module, name: str, node: cst.Call):
        """`m.name(...)`: a method of the user's class runs as code, a layer it holds is called, nn.Module's API
        goes to the module model."""
        if m.cls is not None and name not in MODULE_API:
            method = scope.a.method_value(m.cls, name, m)
            if method is not None:
                positional, keywords = self.args_of(scope, node)
                return self.call_with(scope, method, positional, keywords, node)
        if name in m.attrs:  # `self.fc(x)`: a layer (or callable) held by the module
            value = m.attrs[name]
            scope.note_read((id(m), name), value, node)
            return self.call_value(scope, value, node)
        positional, keywords = self.args_of(scope, node)
        if name == "forward":
            return self.call_module(scope, m, positional, node, keywords, direct_forward=True)
        return scope.modules.module_method(scope, m, name, positional, node, self.items_of(scope))

    def items_of(self, scope):
        """What iterating a value visits, for the models that build sequences from an argument."""
        return lambda value: scope.expressions.iteration_items(scope, value)

    def call_module(self, scope, m: Module, args, node, keywords=None, direct_forward=False):
        passed = None
        if m.forward_pre_hooks and not direct_forward:
            # the forward runs on what the hooks returned; the calling code handed in only `args`
            passed, args = list(args), self._forward_pre_hooks(scope, m, list(args), node)
        result = self._call_module(scope, m, args, node, keywords, direct_forward, passed)
        if m.forward_hooks and not direct_forward:
            result = self._forward_hooks(scope, m, list(passed if passed is not None else args), result, node)
        if m.backward_hook is not None and not direct_forward \
                and scope.path[:len(m.backward_hook_path)] == m.backward_hook_path:
            # hooks run on `m(x)`, not on `m.forward(x)`
            return scope.tensors.backward_hook_outputs(scope, result, node, m.backward_hook)
        return result

    def _forward_pre_hooks(self, scope, m: Module, args: list, node) -> list:
        """torch calls each forward pre-hook as `hook(module, args)`; a value it returns replaces the arguments (a
        tuple as they are, anything else as the one argument). A hook registered on another branch path makes the
        arguments unknown; so does a hook whose result the analysis cannot tell from None."""
        for hook, path in list(m.forward_pre_hooks):
            if scope.path[:len(path)] != path:
                return [None] * len(args)
            result = self.call_with(scope, hook, [m, Seq(list(args))], {}, node)
            if isinstance(result, Tensor):
                args = [result]
            elif isinstance(result, Seq) and result.items is not None:
                args = list(result.items)
            elif not _returns_none(hook):
                return [None] * len(args)
        return args

    def _forward_hooks(self, scope, m: Module, args: list, result, node):
        """torch calls each forward hook as `hook(module, args, output)` after `forward`; a value it returns replaces
        the output. A hook registered on another branch path, or whose result cannot be told from None, makes the
        output unknown."""
        for hook, path in list(m.forward_hooks):
            if scope.path[:len(path)] != path:
                return None
            returned = self.call_with(scope, hook, [m, Seq(list(args)), result], {}, node)
            if isinstance(returned, (Tensor, Seq)):
                result = returned
            elif not _returns_none(hook):
                return None
        return result

    def _call_module(self, scope, m: Module, args, node, keywords=None, direct_forward=False, passed=None):
        keywords = keywords or {}
        if "forward" in m.attrs and not direct_forward:
            # `model.forward = partial(model.features, ...)`: torch's __call__ looks `forward` up on the instance
            return self.call_with(scope, m.attrs["forward"], list(args), keywords, node, passed=passed)
        if m.cls is not None and not m.opaque:
            forward, owner = find_method(scope.a, m.cls, "forward")
            if forward is None:
                forward, owner = find_method(scope.a, m.cls, "__call__") if not direct_forward else (None, None)
            if forward is not None:
                result = self.call_function(scope, FunctionRef(forward, top=scope.a.top_of.get(id(forward)), cls=owner),
                                            list(args), keywords, node, m, passed=passed)
                if result is not None or scope.a.calls < scope.a.max_calls:
                    return result
                return scope.modules.layer_call(scope, m, args, node)
        if m.children is not None and m.container in ("Sequential",) or (m.cls is not None and m.children is not None):
            return self.call_children(scope, m, args, node)
        if m.container:
            return None
        return scope.modules.layer_call(scope, m, args, node, self.layer_dtype_device(scope, m, args))

    def layer_dtype_device(self, scope, m: Module, args) -> tuple[str, str]:
        """The dtype and device a layer of SAME_DTYPE_LAYERS computes in: its inputs', when they all have the same
        proven ones, and the dtype only in a file that never mentions autocast."""
        if m.kind not in SAME_DTYPE_LAYERS or m.cls is not None or not args \
                or not all(isinstance(a, Tensor) for a in args):
            return "", ""
        dtypes, devices = {a.dtype for a in args}, {a.device for a in args}
        dtype = dtypes.pop() if len(dtypes) == 1 else ""
        device = devices.pop() if len(devices) == 1 else ""
        if dtype and (scope.run.autocast_seen or _under_autocast_decorator(scope)):
            dtype = ""
        return dtype, device

    def converts_to_itself(self, scope, t: Tensor, name: str, node: cst.Call) -> bool:
        """`.float()`, `.cpu()`, `.to(...)`, `.type(...)` that torch answers with the tensor itself (probed on
        torch 2.13: no conversion is needed): only for a dtype and device this analysis proved."""
        if type(node) is not cst.Call or any(a.star for a in node.args):
            return False
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if name == "float":
            return not node.args and t.dtype == "float32"
        if name == "cpu":
            return not node.args and t.device == "cpu"
        if name == "type":
            if len(positional) != 1 or keywords:
                return False
            spec = _dtype_or_device(scope, positional[0])
            return spec == ("dtype", "float32") and t.dtype == "float32" or \
                spec == ("tensor_type", "torch.FloatTensor") and t.dtype == "float32" and t.device == "cpu"
        if name == "to":
            if not node.args or set(keywords) - {"dtype", "device", "non_blocking"} or len(positional) > 2:
                return False
            specs = [_dtype_or_device(scope, v) for v in positional]
            for k in ("dtype", "device"):
                if k in keywords:
                    spec = _dtype_or_device(scope, keywords[k])
                    specs.append(spec if spec is not None and spec[0] == k else None)
            return bool(specs) and all(spec == ("dtype", "float32") and t.dtype == "float32"
                                       or spec == ("device", "cpu") and t.device == "cpu" for spec in specs)
        return False

    def call_children(self, scope, m: Module, args, node):
        value = args[0] if args else None
        for child in m.children or []:
            if type(child.ctor) is cst.Call and child.top is not None and child.cls is None:
                # a torch layer inside a container: its saves and in-place writes are located at the line that
                # built it (`nn.Dropout(inplace=True)` in the Sequential), which is what the user changes
                saved = scope.top, scope.layer_site, scope.layer_call_site
                site, site_top = child.inplace_site if child.inplace and child.inplace_site else (child.ctor, child.top)
                scope.layer_call_site = scope.layer_call_site or (node, scope.top)
                scope.top, scope.layer_site = site_top, site
                try:
                    value = self.call_module(scope, child, [value], node)
                finally:
                    scope.top, scope.layer_site, scope.layer_call_site = saved
            else:
                value = self.call_module(scope, child, [value], node)
        return value

    # ---- builtins -------------------------------------------------------
    def eval_builtin(self, scope, name: str, node: cst.Call):
        if name == "super":
            self.args_of(scope, node)
            cls = scope.class_info
            obj = scope.self_value
            return Special("super", (cls, obj))
        positional, keywords = self.args_of(scope, node)
        if name in ("list", "tuple", "sorted", "reversed", "iter", "enumerate", "zip"):
            positional = [scope.expressions.iterated(scope, p, node) for p in positional]
        first = positional[0] if positional else None
        if name == "range":
            bounds = [p.value if isinstance(p, Literal) and isinstance(p.value, int) else None for p in positional]
            if positional and None not in bounds and len(bounds) <= 3:
                values = range(*bounds)
                return Range(list(values) if len(values) <= 10000 else None)
            return Range(None)
        if name in ("list", "tuple", "sorted", "reversed", "iter"):
            items = scope.expressions.iteration_items(scope, first) if first is not None else []
            if items is not None:
                items = list(reversed(items)) if name == "reversed" else list(items)
                return Seq(items, path=scope.path, is_list=name == "list")
            if isinstance(first, Seq):
                return Seq(None, first.element, path=scope.path, is_list=name == "list")
            if isinstance(first, ParamsOf):
                return first
            return Seq(None, scope.expressions.element_of(scope, first, node), path=scope.path) if first is not None else None
        if name == "enumerate" and positional:
            items = scope.expressions.iteration_items(scope, first)
            if items is not None:
                return Seq([Seq([Literal(i), item]) for i, item in enumerate(items)])
            return Seq(None, Seq([Number(), scope.expressions.element_of(scope, first, node)]))
        if name == "zip":
            all_items = [scope.expressions.iteration_items(scope, a) for a in positional]
            known = [items for items in all_items if items is not None]
            if known:
                # zip stops at the shortest: the known sequences bound the count (`zip(self.heads, strides)` with
                # `strides` a tensor visits each head), the others give their element for each pair
                n = min(len(items) for items in known)
                return Seq([Seq([items[i] if items is not None else scope.expressions.element_of(scope, a, node)
                                 for a, items in zip(positional, all_items)]) for i in range(n)])
            return Seq(None, Seq([scope.expressions.element_of(scope, a, node) for a in positional]))
        if name == "len":
            items = scope.expressions.iteration_items(scope, first)
            if isinstance(first, Range) and first.values is not None:
                return Literal(len(first.values))
            return Literal(len(items)) if items is not None and not isinstance(first, ParamsOf) else Number()
        if name in ("int", "round", "abs", "float", "bool", "str", "min", "max"):
            if positional and all(isinstance(p, Literal) for p in positional):
                try:
                    fn = {"int": int, "round": round, "abs": abs, "float": float, "bool": bool, "str": str,
                          "min": min, "max": max}[name]
                    return Literal(fn(*[p.value for p in positional]))
                except Exception:  # noqa: BLE001
                    return None
            if name in ("min", "max") and len(positional) == 1:
                return scope.tensors._generic_result(scope, flat_tensors(positional), node) if flat_tensors(positional) else None
            return Number() if name in ("int", "round", "len") else None
        if name == "sum":
            items = scope.expressions.iteration_items(scope, first)
            tensors = flat_tensors(items) if items is not None else (
                [first.element] if isinstance(first, Seq) and isinstance(first.element, Tensor) else [])
            if tensors:
                return scope.tensors._generic_result(scope, tensors, node)
            return None
        if name == "isinstance" and len(positional) == 2:
            return self.fold_isinstance(scope, first, positional[1])
        if name == "getattr" and len(positional) >= 2:
            attr = positional[1]
            if isinstance(attr, Literal) and isinstance(attr.value, str):
                value = scope.expressions.attribute_of(scope, first, attr.value, node)
                if value is None and len(positional) == 3 and isinstance(first, (Module, Instance)) \
                        and attr.value not in first.attrs and first.cls is not None:
                    return positional[2]
                return value
            return None
        if name == "setattr" and len(positional) == 3:
            attr = positional[1]
            if isinstance(first, (Module, Instance)) and isinstance(attr, Literal) and isinstance(attr.value, str):
                first.attrs[attr.value] = positional[2]
                if isinstance(first, Module):
                    first.has_params = scope.modules.module_has_params(scope, first)
            return None
        if name == "dict":
            items = {k: v[0] for k, v in keywords.items() if k != "**"}
            if isinstance(first, DictVal) and first.items is not None:
                items = {**first.items, **items}
            elif positional or "**" in keywords:
                return DictVal(None)
            return DictVal(items)
        if name == "next":
            return scope.expressions.element_of(scope, first, node)
        if name == "map" and len(positional) == 2:
            items = scope.expressions.iteration_items(scope, positional[1])
            if items is not None and isinstance(first, (FunctionRef, QualRef, Partial, Module, ClassRef)):
                return Seq([self.call_with(scope, first, [item], {}, node) for item in items])
            return None
        if name == "filter":
            return None
        if name == "hasattr" and len(positional) == 2 and isinstance(positional[1], Literal) \
                and isinstance(first, (Module, Instance)) and positional[1].value in first.attrs:
            return Literal(True)  # an attribute its constructor set (a False would need every attribute known)
        if name in ("any", "all", "callable", "hasattr"):
            return None
        return None

    def fold_isinstance(self, scope, value, cls):
        classes = cls.items if isinstance(cls, Seq) and cls.items is not None else [cls]
        outcomes = []
        for c in classes:
            if isinstance(c, QualRef):
                q = c.name
                if q in ("torch.Tensor", "torch.nn.Parameter"):
                    outcomes.append(isinstance(value, Tensor) if q == "torch.Tensor" or not isinstance(value, Tensor)
                                    else value.is_parameter)
                elif q.startswith("torch.nn.") and isinstance(value, Module):
                    if value.cls is not None:
                        outcomes.append(q in ("torch.nn.Module", value.cls.torch_base) or None)
                    elif q == "torch.nn.Module" or value.kind == q:
                        outcomes.append(True)
                    elif value.row is not None or value.container:
                        outcomes.append(False if not _maybe_subclass(value.kind, q) else None)
                    else:
                        outcomes.append(None)
                elif q in ("int", "float", "str", "bool", "tuple", "list", "dict"):
                    outcomes.append(None)
                else:
                    outcomes.append(None)
            elif isinstance(c, ClassRef):
                if isinstance(value, (Module, Instance)) and value.cls is not None:
                    outcomes.append(_is_subclass(scope.a, value.cls, c.info))
                elif isinstance(value, (Tensor, Literal)) or (isinstance(value, Module) and value.cls is None
                                                               and value.row is not None):
                    outcomes.append(False)
                else:
                    outcomes.append(None)
            elif isinstance(value, Literal) and isinstance(c, type(None)):
                outcomes.append(None)
            else:
                outcomes.append(None)
        if any(o is True for o in outcomes):
            return Literal(True)
        if outcomes and all(o is False for o in outcomes):
            return Literal(False)
        return None

    # ---- library callables ----------------------------------------------
    def eval_qualified_call(self, scope, q: str, node: cst.Call, evaluated=None):
        def args():
            return evaluated if evaluated is not None else self.args_of(scope, node)

        linked = scope.a.linked_function(q)
        if linked is not None:  # `losses.nt_xent(...)` through `import losses`: the project's own function
            positional, keywords = args()
            return self.call_with(scope, linked, positional, keywords, node)

        if q in DEFAULT_CHANGERS or q == "torch.device" and _dtype_or_device(scope, node) != ("device", "cpu"):
            scope.run.defaults_changed = True
        elif q.endswith((".autocast", ".custom_fwd")):
            scope.run.autocast_seen = True
        if q in GRAD_CONTEXTS:
            positional, keywords = args()
            if "inference_mode" in q:
                mode = positional[0] if positional else keywords.get("mode", (None,))[0]
                if isinstance(mode, Literal) and mode.value is False:
                    # probed: `inference_mode(False)` makes normal tensors, with grad enabled even under no_grad
                    return _ContextMarker(GRAD_ON, None, leaves_inference=True)
            return _ContextMarker(GRAD_CONTEXTS[q], node if "inference_mode" in q else None)
        if q == "torch.utils.checkpoint.checkpoint":
            positional, keywords = args()
            return self.checkpoint(scope, positional, keywords, node)
        if q.startswith("torch.distributions.") and q.rsplit(".", 1)[-1][:1].isupper():
            # `Categorical(logits=...)`: a distribution over its parameters' graph, not a tensor
            positional, keywords = args()
            return Special("distribution", flat_tensors(list(positional) + [v[0] for v in keywords.values()]))
        if q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
            positional, _ = args()
            flag = dotted(node.args[0].value) if node.args and node.args[0].keyword is None else None
            flag = flag if flag not in (None, "True", "False") else ""
            if positional and isinstance(positional[0], Literal) and positional[0].value in (True, False):
                return _ContextMarker(GRAD_ON if positional[0].value else GRAD_OFF, flag=flag)
            from .model import GRAD_UNKNOWN

            return _ContextMarker(GRAD_UNKNOWN, flag=flag)
        if q in TENSOR_FACTORIES:
            evaluated = args()
            out = evaluated[1].get("out")
            if out is not None and isinstance(out[0], Tensor):
                # a factory writes its `out=`: `torch.arange(1, n + 1, out=self.freq)`. torch names it
                # `aten::arange()`; randn/empty into a tensor that requires grad fail on a resize instead (probed)
                if q in ("torch.randn", "torch.empty"):
                    scope.tensors.write(scope, out[0], node, scope.stmt, op=f"{q.rsplit('.', 1)[-1]}(out=...)", kind="out")
                    return None
                return scope.tensors.out_write(scope, out[0], evaluated[0], node, q, factory=True)
            return self.eval_factory(scope, q, node, evaluated)
        if q == "torch.nn.Parameter":
            positional, keywords = args()
            rg = keywords.get("requires_grad")
            if rg is not None and truth(rg[0]) is not True:
                return None if truth(rg[0]) is None else scope.tensors.new_tensor(scope, 
                    requires_grad=False, is_leaf=True, origin=node, created_by="nn.Parameter(requires_grad=False)")
            t = Tensor(Counter(known_start=False), Storage(), True, True, origin=node, created_by="nn.Parameter",
                       is_parameter=True)
            if positional and isinstance(positional[0], Tensor):
                t.shape = positional[0].shape
            return t
        if q in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
            # `Variable(t, requires_grad=...)` is `t.detach()` (same version counter) made a leaf with that flag
            positional, keywords = args()
            if not positional or not isinstance(positional[0], Tensor):
                return None
            v = scope.tensors.view_of(scope, positional[0], node, "detach")
            v.created_by = "`Variable(...)`"
            flag = keywords.get("requires_grad")
            if flag is not None or len(positional) > 1:
                value = truth(flag[0]) if flag is not None else truth(positional[1])
                v.requires_grad = value
                v.view_of = None if value is not False else v.view_of
            return v
        if q == "torch.autograd.backward":
            positional, keywords = args()
            for t in flat_tensors(positional[:1]):
                scope.tensors.backward(scope, t, node, _retain(keywords))
            return None
        if q == "torch.autograd.grad":
            positional, keywords = args()
            outputs = positional[0] if positional else (keywords.get("outputs") or (None,))[0]
            retain = _retain(keywords, default_kw="create_graph")
            for t in flat_tensors([outputs]):
                scope.tensors.check_history(scope, t, node, kind="backward")
                if not retain:
                    for s in t.history:
                        if s.freed_by is None:
                            s.freed_by = node
                            s.freed_top = scope.top
                            s.freed_path = scope.path
                            s.freed_loops = tuple(f.node for f in scope.loops)
                            s.freed_scopes = frozenset(a.serial for a in scope.ancestors())
            if isinstance(outputs, Tensor) and retain and keywords.get("create_graph"):
                return Seq(None, scope.tensors._generic_result(scope, [outputs], node))
            return None
        if q in ("functools.partial",):
            positional, keywords = args()
            if positional:
                return Partial(positional[0], positional[1:], keywords)
            return None
        if q in ("collections.OrderedDict", "typing.OrderedDict"):
            positional, keywords = args()
            pairs = scope.expressions.iteration_items(scope, positional[0]) if positional else []
            if pairs is not None and all(isinstance(p, Seq) and p.items is not None and len(p.items) == 2
                                         and isinstance(p.items[0], Literal) for p in pairs):
                return DictVal({str(p.items[0].value): p.items[1] for p in pairs})
            if isinstance(positional[0] if positional else None, DictVal):
                return positional[0]
            return DictVal(None) if positional else DictVal({k: v[0] for k, v in keywords.items()})
        if q in ("itertools.chain",):
            positional, _ = args()
            items = []
            for p in positional:
                part = scope.expressions.iteration_items(scope, p)
                if part is None:
                    return None
                items.extend(part)
            return Seq(items, path=scope.path)
        if q in ("random.sample", "random.choices", "random.choice"):
            # a replay buffer's draw: some of its elements, the very objects stored (graphs and all)
            positional, _ = args()
            if not positional:
                return None
            element = scope.expressions.element_of(scope, scope.expressions.iterated(scope, positional[0], node), node)
            return element if q == "random.choice" else Seq(None, element, path=scope.path, is_list=True)
        if q == "copy.deepcopy":
            positional, _ = args()
            if not positional or not isinstance(positional[0], Module):
                return None
            source = dotted(node.args[0].value) if node.args else None
            return deep_copy(positional[0], site=(node, scope.top, f"copy.deepcopy({source})" if source else ""))
        if q == "argparse.ArgumentParser":
            args()
            return Special("argparser", {})  # dest -> the value `parse_args()` gives when the option is not passed
        if q in GRAD_SCALERS:
            args()
            return Special("grad_scaler")
        if q in ACCELERATORS:
            args()
            return Special("accelerator")
        if q.startswith("torch.optim.") and q.rsplit(".", 1)[-1][:1].isupper() and "lr_scheduler" not in q:
            return scope.optimizers.optimizer(scope, q, node, args())
        if q in ("torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"):
            return scope.modules.container(scope, q, node, args(), self.items_of(scope))
        if q in scope.a.classes:
            positional, keywords = args()
            return self.instantiate(scope, scope.a.classes[q], positional, keywords, node)
        if q in ("torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
                 "torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.parametrizations.spectral_norm"):
            positional, _ = args()
            return positional[0] if positional and isinstance(positional[0], Module) else None
        row = scope.ops.by_name.get(q)
        if row is not None and row.kind == "module":
            return scope.modules.layer(scope, node, q, args())
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and "functional" not in q \
                and ".init." not in q and ".utils." not in q:
            args()
            return scope.modules.new_module(scope, q, None, None, node)
        positional, keywords = args()
        if q in ("torch.nn.functional.dropout", "torch.dropout", "torch.nn.functional.alpha_dropout") and positional \
                and isinstance(positional[0], Tensor) and _dropout_passes_through(positional, keywords):
            return positional[0]  # p=0 or training=False: torch returns the input itself
        if q == "torch.reshape" and positional and isinstance(positional[0], Tensor) and not positional[0].contiguous \
                and splits_one_dim(positional[0], positional[1:]):
            return scope.tensors.view_of(scope, positional[0], node, "view")
        if q in ("torch.reshape", "torch.flatten") and positional and isinstance(positional[0], Tensor) \
                and positional[0].contiguous:
            view = scope.tensors.view_of(scope, positional[0], node, "view")  # as Tensor.reshape / Tensor.flatten of it
            view.contiguous = True
            return view
        arity = TUPLE_RESULTS.get(q)
        if arity is not None and row is None and flat_tensors(positional):
            # `vals, vecs = torch.linalg.eigh(a)`: separate tensors in the input's graph (what they save: not claimed)
            nograd = NOGRAD_OUTPUTS.get(q, ())
            return Seq([scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node,
                                                 created_by=f"`{q}`") if i in nograd else
                        scope.tensors._generic_result(scope, flat_tensors(positional), node) for i in range(arity)])
        if row is not None and row.kind != "inplace" and row.view in ("view", "multi") and positional \
                and isinstance(positional[0], Tensor):
            # function forms of view ops (`torch.chunk(y, 2)`, `torch.transpose(y, 0, 1)`) view their first argument
            if row.view == "multi":
                piece = scope.tensors.view_of(scope, positional[0], node, "multi")
                if _along_last_dim(q.rsplit(".", 1)[-1], positional[1:], keywords):
                    piece.leading_sizes_of = positional[0].leading_sizes_of or positional[0]
                return Seq(None, piece)
            return scope.tensors.view_of(scope, positional[0], node, "view")
        if row is not None:
            return scope.tensors.apply_op(scope, row, positional, node, keywords=keywords, op_name=q.rsplit(".", 1)[-1])
        short = q.rsplit(".", 1)[-1]
        if short in NONDIFF and q.startswith("torch."):
            return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node, created_by=f"`{q}`")
        if q.startswith("torch.") and flat_tensors(positional):
            out = keywords.get("out")
            if out is not None and isinstance(out[0], Tensor):
                return scope.tensors.out_write(scope, out[0], positional, node, q)
            inplace = keywords.get("inplace")
            first = positional[0] if positional else None
            if inplace is not None and truth(inplace[0]) is True and isinstance(first, Tensor):
                scope.tensors.write(scope, first, node, scope.stmt, op=f"{short}(inplace=True)", kind="inplace_arg")
                scope.tensors.save_inplace_result(scope, first, scope.ops.by_name.get(q + "_") or scope.ops.by_name.get(
                    "torch." + short + "_"), short, node)
                return first
            if short.endswith("_") and not short.startswith("_") and isinstance(first, Tensor) \
                    and ".init." not in q and q.count(".") >= 1 and short not in NOT_WRITES:
                # torch.relu_(x), F.relu_(x), torch.sigmoid_(x): in-place functions write their first argument
                if q.startswith(("torch.nn.functional.", "torch.")) and not q.startswith("torch.nn.utils."):
                    scope.tensors.write(scope, first, node, scope.stmt, op=f"{short}()", kind="method")
                    scope.tensors.save_inplace_result(scope, first, scope.ops.by_name.get(q), short, node)
                    return first
            return scope.tensors._generic_result(scope, [p for p in flat_tensors(positional)], node)
        return None

    def eval_factory(self, scope, q: str, node: cst.Call, evaluated):
        positional, keywords = evaluated
        rg = keywords.get("requires_grad")
        requires_grad: bool | None = False
        if rg is not None:
            requires_grad = rg[0].value if isinstance(rg[0], Literal) and isinstance(rg[0].value, bool) else None
        if q.endswith(("randint", "randperm", "randint_like")):
            requires_grad = False
        if q.endswith("_like") and positional and isinstance(positional[0], Tensor) and rg is None:
            requires_grad = False
        t = scope.tensors.new_tensor(scope, requires_grad=requires_grad, is_leaf=True, origin=node,
                            created_by=q + ("(..., requires_grad=True)" if requires_grad else "(...)"))
        t.contiguous = not q.endswith("_like")  # empty_like(x) keeps x's strides
        short = q.rsplit(".", 1)[-1]
        if short in DEFAULT_DTYPE_FACTORIES and not set(keywords) - {"requires_grad", "generator"} \
                and all(not isinstance(p, Tensor) for p in positional) and _defaults_unchanged(scope):
            t.dtype, t.device = "float32", "cpu"  # torch's default dtype and device
        elif short.removesuffix("_like") in DEFAULT_DTYPE_FACTORIES and short.endswith("_like") \
                and len(positional) == 1 and isinstance(positional[0], Tensor) \
                and not set(keywords) - {"requires_grad", "generator"}:
            t.dtype, t.device = positional[0].dtype, positional[0].device  # the input's dtype and device
        if short in ("rand", "randn", "zeros", "ones", "empty", "full"):
            t.shape = _literal_shape(positional[:1] if q.endswith("full") else positional)
        elif short == "eye" and positional and len(positional) <= 2:
            sizes = _literal_shape(positional)
            t.shape = None if sizes is None else (sizes if len(sizes) == 2 else sizes * 2)
        return t

    # ---- custom autograd.Function ---------------------------------------
    def apply_custom_function(self, scope, info, positional, node):
        """`Fn.apply(...)`: forward runs without recording; `ctx.save_for_backward` saves; the output is new."""
        forward, owner = find_method(scope.a, info, "forward")
        tensors = flat_tensors(positional)
        rg = True if any(t.requires_grad is True for t in tensors) else (
            None if any(t.requires_grad is None for t in tensors) else False)
        if scope.grad == GRAD_OFF:
            rg = False
        ctx = Special("ctx", [])
        result = None
        if forward is not None:
            saved_grad = scope.grad
            scope.grad = GRAD_OFF
            result = self.call_function(scope, FunctionRef(forward, top=scope.a.top_of.get(id(forward)), cls=owner,
                                                    kind="staticmethod"), [ctx] + list(positional), {}, node)
            scope.grad = saved_grad
        saves = tuple(scope.tensors.save(scope, t, f"{info.name}.forward", call, "input") for t, call in ctx.payload) \
            if rg else ()
        history = SharedSet.union(t.history for t in tensors) if rg else EMPTY

        def output(value):
            if isinstance(value, Tensor) and value.view_of is not None and any(value.counter is t.counter for t in tensors):
                # an input (or a view of one) returned by forward: a custom-function view
                v = scope.tensors.view_of(scope, value.view_of, node, "view")
                v.view_kind = "custom_function"
                v.requires_grad = rg
                v.history = history | saves
                return v
            out = scope.tensors.new_tensor(scope, requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                                  created_by=f"`{info.name}.apply(...)`", history=history | saves)
            if isinstance(value, Tensor) and any(value is t for t, _ in ctx.payload):
                # forward returned a tensor it saved: the output is that tensor (one version counter)
                out.counter, out.storage = value.counter, value.storage
            return out

        if isinstance(result, Seq) and result.items is not None:
            return Seq([output(v) for v in result.items])
        if isinstance(result, Tensor) or result is None:
            return output(result)
        return None

    def checkpoint(self, scope, positional, keywords, node):
        """`checkpoint(block, h, use_reentrant=False)`: the value of `block(h)`, whose graph holds the checkpoint's
        tensor inputs (saved, version-checked: writing `h` afterwards raises at backward) but nothing `block` saved
        inside (recomputed at backward and never checked: probed on torch 2.13, weights stepped in between
        back-propagate without error). What the run of `block` proves inside is not reported. Only the
        non-reentrant form: the reentrant one runs `block` under no_grad, its output requiring grad only through
        its inputs."""
        reentrant = keywords.get("use_reentrant")
        if not positional or reentrant is None or truth(reentrant[0]) is not False:
            return None
        passed = {k: v for k, v in keywords.items() if k not in CHECKPOINT_OPTIONS}
        with scope.a.quiet_run(True):
            inner = self.call_with(scope, positional[0], list(positional[1:]), passed, node)
        if not isinstance(inner, Tensor):
            return None
        inputs = flat_tensors(list(positional[1:]) + [v[0] for v in passed.values()])
        saves = {scope.tensors.save(scope, t, "checkpoint", node, "input") for t in inputs if t.requires_grad is True}
        out = scope.tensors.new_tensor(scope, requires_grad=inner.requires_grad,
                                       is_leaf=None if inner.requires_grad is None else not inner.requires_grad,
                                       origin=node, created_by="`checkpoint(...)`",
                                       history=SharedSet.union([t.history for t in inputs] + [saves]),
                                       owners=inner.owners)
        out.shape = inner.shape
        return out

    # ---- methods --------------------------------------------------------
    def eval_method(self, scope, receiver, name: str, node: cst.Call):
        if isinstance(receiver, Module):
            return self.eval_module_method(scope, receiver, name, node)
        if isinstance(receiver, Optimizer):
            return scope.optimizers.optimizer_method(scope, receiver, name, self.args_of(scope, node)[0], node)
        if isinstance(receiver, Instance):
            method = scope.a.method_value(receiver.cls, name, receiver)
            if method is not None:
                positional, keywords = self.args_of(scope, node)
                return self.call_with(scope, method, positional, keywords, node)
            if name in receiver.attrs:
                return self.call_value(scope, receiver.attrs[name], node)
            self.args_of(scope, node)
            return None
        if isinstance(receiver, Special):
            return self.eval_special_method(scope, receiver, name, node)
        if isinstance(receiver, Literal) and isinstance(receiver.value, str) and name in STR_METHODS \
                and all(type(a.value) in (cst.SimpleString, cst.Integer) and a.keyword is None and not a.star
                        for a in node.args):
            positional, keywords = self.args_of(scope, node)
            return _str_method(receiver.value, name, positional, keywords)
        if isinstance(receiver, Seq):
            return self.eval_list_method(scope, receiver, name, node)
        if isinstance(receiver, DictVal):
            positional, _ = self.args_of(scope, node)
            if receiver.items is not None:
                if name == "values":
                    return Seq(list(receiver.items.values()))
                if name == "keys":
                    return Seq([Literal(k) for k in receiver.items])
                if name == "items":
                    return Seq([Seq([Literal(k), v]) for k, v in receiver.items.items()])
                if name == "get" and positional and isinstance(positional[0], Literal):
                    return receiver.items.get(positional[0].value, positional[1] if len(positional) > 1 else Literal(None))
                if name == "pop" and positional and isinstance(positional[0], Literal):
                    return receiver.items.pop(positional[0].value, positional[1] if len(positional) > 1 else None)
                if name in ("update", "clear", "pop", "popitem", "setdefault"):
                    receiver.items = None  # changed in a way not followed: its content is unknown from here on
            return None
        if isinstance(receiver, ClassRef):
            if name == "apply" and receiver.info.is_function:
                positional, _ = self.args_of(scope, node)
                return self.apply_custom_function(scope, receiver.info, positional, node)
            method = scope.a.method_value(receiver.info, name, None)
            if method is not None:
                positional, keywords = self.args_of(scope, node)
                return self.call_with(scope, method, positional, keywords, node)
            self.args_of(scope, node)
            return None
        if isinstance(receiver, FunctionRef) and name == "apply":
            self.args_of(scope, node)
            return None
        if isinstance(receiver, Literal) and type(receiver.value) is str and name in ("startswith", "endswith"):
            positional, keywords = self.args_of(scope, node)  # `name.endswith("bias")` of a named parameter
            affix = positional[0] if len(positional) == 1 and not keywords else None
            options = affix.items if isinstance(affix, Seq) and affix.items is not None else [affix]
            if all(isinstance(o, Literal) and type(o.value) is str for o in options):
                return Literal(getattr(receiver.value, name)(tuple(o.value for o in options)))
            return None
        if not isinstance(receiver, Tensor):
            if type(node.func) is cst.Attribute and type(node.func.value) is cst.Name:
                param = None
                if name in _TENSOR_ONLY_METHODS or (name.endswith("_") and name[:-1] in _TENSOR_ONLY_METHODS):
                    param = scope.materialize_param(node.func.value)
                if param is not None:
                    receiver = param
            if not isinstance(receiver, Tensor):
                self.args_of(scope, node)
                return None
        return self.eval_tensor_method(scope, receiver, name, node)

    def eval_special_method(self, scope, special: Special, name: str, node: cst.Call):
        if special.kind == "super":
            return self.eval_super_method(scope, special, name, node)
        positional, keywords = self.args_of(scope, node)
        first = positional[0] if positional else None
        if special.kind == "argparser":
            return _argparser_method(special, name, positional, keywords, node)
        if special.kind == "distribution":
            if name in DISTRIBUTION_SAMPLES:  # torch draws these without a graph (rsample keeps one)
                return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node,
                                                created_by=f"`.{name}()`")
            if name in DISTRIBUTION_OPS:
                return scope.tensors._generic_result(scope, list(special.payload) + positional, node)
            return None
        if special.kind == "grad_scaler":
            if name == "scale":
                return first  # scaler.scale(loss) is loss times a factor: backward goes through the same graph
            if name == "step" and isinstance(first, Optimizer):
                scope.optimizers.optimizer_step(scope, first, node)
            return None
        if special.kind == "accelerator":
            if name == "backward" and isinstance(first, Tensor):
                scope.tensors.backward(scope, first, node, _retain(keywords))
                return None
            if name == "prepare":
                return Seq(list(positional)) if len(positional) != 1 else first
            return None
        if special.kind == "hook_handle":
            if name == "remove":
                module, entry = special.payload
                if entry is None:
                    module.backward_hook = None
                elif entry in module.forward_pre_hooks:
                    module.forward_pre_hooks.remove(entry)
                elif entry in module.forward_hooks:
                    module.forward_hooks.remove(entry)
            return None
        if special.kind == "ctx":
            if name == "save_for_backward":
                for t in flat_tensors(positional):
                    special.payload.append((t, node))
            return None
        return None

    def eval_list_method(self, scope, seq: Seq, name: str, node: cst.Call):
        positional, _ = self.args_of(scope, node)
        first = positional[0] if positional else None
        if name == "append":
            if seq.items is not None and len(scope.path) == len(seq.path) and scope.path == seq.path:
                seq.items.append(first)
            else:
                self._list_unknown(scope, seq, first)
            return None
        if name == "extend":
            self.extend_list(scope, seq, first)
            return None
        if name == "insert" and len(positional) == 2:
            index = positional[0]
            if seq.items is not None and isinstance(index, Literal) and isinstance(index.value, int) \
                    and scope.path == seq.path:
                seq.items.insert(index.value, positional[1])
            else:
                self._list_unknown(scope, seq, positional[1])
            return None
        if name == "pop":
            if seq.items:
                if not positional and scope.path == seq.path:
                    return seq.items.pop()
                seq.items = None
            return None
        if name in ("clear",):
            self.clear_list(scope, seq)
            return None
        if name in ("copy",):
            return Seq(list(seq.items) if seq.items is not None else None, seq.element, path=scope.path,
                       is_list=True)
        if name in ("index", "count"):
            return Number()
        return None

    def clear_list(self, scope, seq: Seq) -> None:
        """`xs.clear()` / `del xs[:]`: nothing the list held before is in it any more."""
        seq.items = [] if scope.path == seq.path else None
        seq.element = None

    def extend_list(self, scope, seq: Seq, other) -> None:
        items = scope.expressions.iteration_items(scope, other)
        if seq.items is not None and items is not None and scope.path == seq.path:
            seq.items.extend(items)
        else:
            self._list_unknown(scope, seq, scope.expressions.element_of(scope, other, None) if other is not None else None)

    def _list_unknown(self, scope, seq: Seq, element) -> None:
        """An append the code does not always run (a branch) or to a list of unknown content: length unknown."""
        previous = seq.items if seq.items is not None else []
        values = [v for v in previous + [seq.element, element] if v is not None]
        seq.items = None
        seq.element = scope.expressions.join_values(scope, values) if values else None

    def eval_tensor_method(self, scope, t: Tensor, name: str, node: cst.Call):
        if name == "backward":
            positional, keywords = self.args_of(scope, node)
            scope.tensors.backward(scope, t, node, _retain(keywords, positional_index=1, positional=positional))
            return None
        if name == "detach":
            self.args_of(scope, node)
            return scope.tensors.view_of(scope, t, node, "detach")
        if name == "detach_":
            self.args_of(scope, node)
            if t.view_of is not None and t.view_kind not in ("detach", "alias", ""):
                # torch: "Can't detach views in-place" (any view: of a graph tensor or not; a `.data` or a
                # `detach()` result is not a view and detaches in place)
                scope._problem(Problem("detach-view", node, scope.stmt, tensor=t))
                # what follows is analysed as the program means it (detached), not as a second finding of this line
            t.history = EMPTY
            t.requires_grad = False
            t.is_leaf = True
            return t
        if name == "requires_grad_":
            positional, keywords = self.args_of(scope, node)
            flag = positional[0] if positional else (keywords.get("requires_grad") or (Literal(True),))[0]
            if t.is_leaf is not False:
                scope.tensors.set_requires_grad(scope, t, flag)
                if truth(flag) is True:
                    t.created_by = (t.created_by or "a tensor") + " made to require grad with `requires_grad_()`"
            return t
        if name == "retain_grad":
            self.args_of(scope, node)
            return None
        if name == "tolist":
            self.args_of(scope, node)
            return Seq(None, Literal(0))
        if name in NON_TENSOR_METHODS:
            self.args_of(scope, node)
            if name == "size" and t.shape is not None:
                return Seq([Literal(n) for n in t.shape])
            if name == "size" and type(node) is cst.Call and not node.args:
                return Seq(None, Number(), sizes_of=t)  # `n, c, h, w = x.size()` names its dimensions
            if name == "dim" and not (type(node) is cst.Call and node.args) and dimensions(t) is not None:
                return Literal(dimensions(t))
            return Number() if name in ("dim", "numel", "size") else (Number(False) if name == "item" else None)
        if name in FRESH_METHODS:
            self.args_of(scope, node)
            return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node, created_by=f"`.{name}()`")
        if name == "clone":
            self.args_of(scope, node)
            out = scope.tensors.new_tensor(scope, requires_grad=t.requires_grad if scope.grad != GRAD_OFF else False,
                                  is_leaf=True if scope.grad == GRAD_OFF else (
                                      (not t.requires_grad) if t.requires_grad is not None else None),
                                  origin=node, created_by="`.clone()`", history=t.history if scope.grad != GRAD_OFF else EMPTY,
                                  owners=scope.tensors.owners_of(scope, [t]) if scope.grad != GRAD_OFF else EMPTY)
            out.shape = t.shape
            return out
        if name in ("float", "cpu", "to", "type") and self.converts_to_itself(scope, t, name, node):
            self.args_of(scope, node)
            return t  # torch returns the tensor itself when no conversion is needed
        if name in RESHAPES and t.contiguous:
            self.args_of(scope, node)
            if name == "contiguous":
                return t  # torch returns the tensor itself
            view = scope.tensors.view_of(scope, t, node, "view")  # reshape of a contiguous tensor is a view (same version counter)
            view.contiguous = True
            return view
        if name == "reshape":
            positional, _ = self.args_of(scope, node)
            if splits_one_dim(t, positional):
                return scope.tensors.view_of(scope, t, node, "view")
        elif name in COPYISH_METHODS:
            self.args_of(scope, node)
        if name in COPYISH_METHODS:
            return scope.tensors.new_tensor(scope, requires_grad=t.requires_grad if scope.grad != GRAD_OFF else False,
                                   is_leaf=True if scope.grad == GRAD_OFF else (
                                       (not t.requires_grad) if t.requires_grad is not None else None),
                                   origin=node, created_by=f"`.{name}()`",
                                   history=t.history if scope.grad != GRAD_OFF else EMPTY,
                                   owners=scope.tensors.owners_of(scope, [t]) if scope.grad != GRAD_OFF else EMPTY)
        row = scope.ops.by_name.get("Tensor." + name)
        positional, keywords = self.args_of(scope, node)
        if row is not None and row.kind != "inplace":
            if row.view in ("view", "expand", "multi", "alias"):
                if row.view == "multi":
                    piece = scope.tensors.view_of(scope, t, node, "multi")
                    if _along_last_dim(name, positional, keywords):
                        piece.leading_sizes_of = t.leading_sizes_of or t
                    return Seq(None, piece)
                view = scope.tensors.view_of(scope, t, node, row.view)
                view.shape = _view_shape(name, t.shape, positional)
                if row.view == "expand" and t.shape is not None and view.shape is not None:
                    # an expand that broadcasts a size-1 (or new) dimension makes elements share memory
                    padded = (1,) * (len(view.shape) - len(t.shape)) + t.shape
                    view.overlapping = any(old == 1 and new > 1 for old, new in zip(padded, view.shape))
                    view.broadcast_dims = tuple(i for i, (old, new) in enumerate(zip(padded, view.shape))
                                                if old == 1 and new > 1)
                return view
            return scope.tensors.apply_op(scope, row, [t] + positional, node, keywords=keywords, op_name=name)
        if name in NONDIFF:
            return scope.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node, created_by=f"`.{name}()`")
        if name.endswith("_") and not name.startswith("_") and name not in NOT_WRITES:
            value = next((p for p in flat_tensors(positional)), None)
            scope.tensors.write(scope, t, node, scope.stmt, op=f"{name}()", kind="method", value=value)
            inplace_row = row if row is not None else None
            if inplace_row is None:
                base_row = scope.ops.by_name.get("Tensor." + name[:-1])
                if base_row is not None and base_row.saves_output:
                    inplace_row = base_row
            scope.tensors.save_inplace_result(scope, t, inplace_row, name, node)
            return t
        if not name.startswith("_"):
            # A method the op table does not know: it saves nothing we can name, but its result stays in the graph.
            return scope.tensors._generic_result(scope, [t] + flat_tensors(positional), node)
        return None


_TENSOR_ONLY_METHODS = {"add_", "mul_", "sub_", "div_", "zero_", "fill_", "copy_", "clamp_", "relu_", "sigmoid_",
                        "tanh_", "exp_", "sin", "exp", "sigmoid", "tanh", "relu", "matmul", "mm", "pow", "log", "mul",
                        "masked_fill_", "normal_", "uniform_", "index_add_", "scatter_", "clamp", "softmax",
                        "unsqueeze", "squeeze", "view", "transpose", "permute"}


def _class_name(obj) -> str:
    cls = getattr(obj, "cls", None)
    return cls.name if cls is not None else ""


def _is_subclass(analysis, cls, target) -> bool | None:
    seen = set()
    stack = [cls]
    while stack:
        c = stack.pop()
        if c.name == target.name:
            return True
        if c.name in seen:
            continue
        seen.add(c.name)
        for base in c.bases:
            other = analysis.classes.get(base)
            if other is not None:
                stack.append(other)
    return False


def _maybe_subclass(kind: str, q: str) -> bool:
    """torch.nn classes whose subclasses the table lists separately (conservative: any _ConvNd-like base)."""
    return q.rsplit(".", 1)[-1].startswith("_") or q in ("torch.nn.Module",)


def _retain(keywords, default_kw: str | None = None, positional_index=None, positional=None) -> bool:
    """Whether backward keeps the graph: retain_graph=True (or an unknown value: we assume it may)."""
    value = keywords.get("retain_graph")
    if value is None and positional is not None and positional_index is not None and len(positional) > positional_index:
        value = (positional[positional_index], None)
    if value is None and default_kw:
        value = keywords.get(default_kw)
    if value is None:
        return False
    flag = truth(value[0])
    return True if flag is None else flag  # unknown: do not claim the graph was freed


def _literal_shape(values) -> tuple[int, ...] | None:
    """A shape given as literal ints, `(2, 3)` or `2, 3`; None when any part is not a literal."""
    if len(values) == 1 and isinstance(values[0], Seq) and values[0].items is not None:
        values = values[0].items
    if not values or not all(isinstance(v, Literal) and isinstance(v.value, int) and not isinstance(v.value, bool)
                             and v.value >= 0 for v in values):
        return None
    return tuple(v.value for v in values)


def _view_shape(method: str, shape, args) -> tuple[int, ...] | None:
    """The shape of a view when the code makes it plain (literal sizes); None otherwise."""
    if method == "unsqueeze" and shape is not None and len(args) == 1 and isinstance(args[0], Literal):
        dim = args[0].value
        if isinstance(dim, int) and -len(shape) - 1 <= dim <= len(shape):
            dim = dim if dim >= 0 else dim + len(shape) + 1
            return shape[:dim] + (1,) + shape[dim:]
        return None
    if method == "expand_as" and args and isinstance(args[0], Tensor):
        return args[0].shape
    if method == "expand":
        sizes = args[0].items if len(args) == 1 and isinstance(args[0], Seq) and args[0].items is not None else args
        if not sizes or not all(isinstance(v, Literal) and isinstance(v.value, int) for v in sizes):
            return None
        out = []
        pad = len(sizes) - len(shape) if shape is not None else 0
        for i, v in enumerate(sizes):
            if v.value == -1:
                if shape is None or i < pad:
                    return None
                out.append(shape[i - pad])
            else:
                out.append(v.value)
        return tuple(out)
    if method == "view":
        return _literal_shape(args)
    return None


__all__ = ["Calls", "is_none"]


def deep_copy(m: Module, memo: dict | None = None, site: tuple | None = None):
    """`copy.deepcopy(model)`: the same structure with parameters of its own (new version counters and storage,
    the same requires_grad). What cannot be copied faithfully (a non-leaf tensor, an optimizer) becomes unknown.
    `site` (the call, its top, the call's code or ""): every copied layer and parameter was made there, and a
    message names the copy (`a parameter of `copy.deepcopy(model)``), not the original's layer."""
    memo = {} if memo is None else memo

    def copy_value(value):
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, Module):
            return deep_copy(value, memo, site)
        if isinstance(value, Seq):
            out = Seq([copy_value(v) for v in value.items] if value.items is not None else None,
                      copy_value(value.element) if value.element is not None else None, path=value.path,
                      is_list=value.is_list)
            memo[id(value)] = out
            return out
        if isinstance(value, Tensor):
            if value.is_leaf is not True:
                return None  # torch refuses to deepcopy a non-leaf; we do not guess
            owner = memo.get(id(value.module_params)) if value.module_params is not None else None
            made_by = f"a parameter of `{site[2]}`" if site and site[2] and value.is_parameter else value.created_by
            out = Tensor(Counter(known_start=False), Storage(), value.requires_grad, True,
                         origin=site[0] if site else value.origin, created_by=made_by, name=value.name,
                         is_parameter=value.is_parameter, module_params=owner, shape=value.shape)
            memo[id(value)] = out
            return out
        if isinstance(value, (Literal, Number, FunctionRef)) or value is None:
            return value
        return None

    if id(m) in memo:
        return memo[id(m)]
    copy = dataclasses.replace(m, params_counter=Counter(known_start=m.params_counter.known_start),
                               params_storage=Storage(), grads=False, attrs={}, children=None, parent=None,
                               **({"ctor": site[0], "top": site[1], "copied_by": site[2]} if site else {}))
    copy.params_counter.owner = copy
    copy.params_counter.label = m.params_counter.label
    memo[id(m)] = copy
    copy.children = [copy_value(c) for c in m.children] if m.children is not None else None
    copy.attrs = {k: copy_value(v) for k, v in m.attrs.items()}
    for value in [*(copy.children or []), *copy.attrs.values()]:
        if isinstance(value, Module) and value.parent is None:
            value.parent = copy
    return copy


def _option_default(value, name: str):
    """A bool default is an option a caller may flip: marked, so `if name:` runs both arms (Scope.run_if)."""
    if isinstance(value, Literal) and type(value.value) is bool:
        return OptionDefault(value.value, name)
    return value


# keywords of torch.utils.checkpoint.checkpoint itself; the others are passed to the checkpointed function
CHECKPOINT_OPTIONS = frozenset({"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug",
                                "early_stop"})


def _along_last_dim(name: str, positional, keywords) -> bool:
    """`x.split(c, dim=-1)`, `x.chunk(3, -1)`: the pieces keep every dimension of `x` but the last."""
    if name not in ("split", "chunk", "tensor_split"):
        return False
    dim = keywords["dim"][0] if "dim" in keywords else (positional[1] if len(positional) > 1 else None)
    return isinstance(dim, Literal) and dim.value == -1


def splits_one_dim(t: Tensor, sizes) -> bool:
    """`x.reshape(n, heads, c // heads, h, w)` after `n, c, h, w = x.size()`: all sizes but one run are the same
    dimensions of `x` in their places, so the reshape splits one dimension (or none) and torch returns a view
    whatever the strides (probed on torch 2.13 with split/chunk outputs: `Output 0 of ReshapeAlias`)."""
    if len(sizes) == 1 and isinstance(sizes[0], Seq):
        sizes = sizes[0].items
    if not sizes:
        return False
    # the sizes of a tensor with t's rank and t's sizes but in the last dimension count as t's there, named (its
    # `Dim`s) or known (literal sizes)
    lead = t.leading_sizes_of
    known = t.shape if t.shape is not None else (
        tuple(lead.shape[:-1]) + (None,) if lead is not None and lead.shape else None)
    ranks = {v.rank for v in sizes if isinstance(v, Dim) and (v.of is t or (lead is not None and v.of is lead))}
    if known is not None:
        ranks.add(len(known))
    if len(ranks) != 1:
        return False
    rank = ranks.pop()

    def same(value, i):
        if isinstance(value, Dim):
            return value.index == i and (value.of is t or (lead is not None and value.of is lead and i < rank - 1))
        return isinstance(value, Literal) and type(value.value) is int and known is not None and i < len(known) \
            and known[i] is not None and value.value == known[i]

    prefix = 0
    while prefix < min(len(sizes), rank) and same(sizes[prefix], prefix):
        prefix += 1
    suffix = 0
    while suffix < min(len(sizes) - prefix, rank - prefix) and same(sizes[-1 - suffix], rank - 1 - suffix):
        suffix += 1
    middle = len(sizes) - prefix - suffix
    return (rank - prefix - suffix == 1 and middle >= 1) or (rank == prefix + suffix and middle == 0)


def _literal_default(expr):
    """A dataclass field's default when it is a plain constant; None (unknown) otherwise."""
    if type(expr) in (cst.Integer, cst.Float):
        return Literal(expr.evaluated_value)
    if type(expr) is cst.SimpleString:
        return Literal(expr.evaluated_value)
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return Literal({"True": True, "False": False, "None": None}[expr.value])
    return None


def _returns_none(hook) -> bool:
    """A function of this file whose body returns no value (`return` alone or falls off the end): a hook that
    leaves the arguments as they were."""
    if not isinstance(hook, FunctionRef) or type(hook.node) is not cst.FunctionDef:
        return False
    stack = list(hook.node.body.children)
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, cst.Return) and n.value is not None:
            return False
        if isinstance(n, (cst.Yield, cst.Await)):
            return False
        stack.extend(n.children)
    return True


def _module_run(scope) -> bool:
    """The scope runs inside the file's module-level code (with the same-file calls it makes), not a function run
    on its own for unknown callers: only there does execution order say what torch's defaults are."""
    while scope.parent is not None:
        scope = scope.parent
    return scope.kind == "module"


def _defaults_unchanged(scope) -> bool:
    """Factories run here make float32 CPU tensors: module-level code whose run so far executed nothing that
    changes torch's defaults (`torch.set_default_dtype(...)`, `with torch.device("cuda"):`)."""
    return _module_run(scope) and not scope.run.defaults_changed


def _under_autocast_decorator(scope) -> bool:
    """A function on the running call chain decorated with autocast (`@torch.autocast("cuda")`, `@custom_fwd`)."""
    while scope is not None:
        fn = getattr(scope, "function", None)
        if type(fn) is cst.FunctionDef and any(word in _code_words(d.decorator) for d in fn.decorators
                                                for word in ("autocast", "custom_fwd")):
            return True
        scope = scope.parent
    return False


def _code_words(expr) -> str:
    name = dotted(expr.func if type(expr) is cst.Call else expr)
    return name or ""


def _dtype_or_device(scope, expr) -> tuple[str, str] | None:
    """What a `.to()` / `.type()` argument names: ("dtype", "float32"), ("device", "cpu"), ("tensor_type", ...)."""
    if type(expr) is cst.SimpleString:
        text = expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
        if text == "cpu":
            return "device", "cpu"
        if text == "torch.FloatTensor":
            return "tensor_type", "torch.FloatTensor"
        return None
    if type(expr) is cst.Call and scope.a.resolve_dotted(expr.func) == "torch.device" and len(expr.args) == 1 \
            and expr.args[0].keyword is None:
        return _dtype_or_device(scope, expr.args[0].value)
    name = scope.a.resolve_dotted(expr)
    if name in ("torch.float32", "torch.float"):
        return "dtype", "float32"
    if name == "torch.FloatTensor":
        return "tensor_type", "torch.FloatTensor"
    return None


def _dropout_passes_through(positional, keywords) -> bool:
    """`F.dropout(x, p, training, inplace)` with a literal p of 0 or a literal training=False."""
    rate = positional[1] if len(positional) > 1 else (keywords.get("p") or (Literal(0.5),))[0]
    training = positional[2] if len(positional) > 2 else (keywords.get("training") or (Literal(True),))[0]
    zero = isinstance(rate, Literal) and type(rate.value) in (int, float) and rate.value == 0
    off = isinstance(training, Literal) and training.value is False
    return zero or off


def _argparser_method(parser: Special, name: str, positional, keywords, node: cst.Call):
    """An `argparse` parser as the script runs with no options on its command line: `parse_args()` is a namespace of
    the defaults. Options whose default the analysis cannot read (a computed default, `type=` applied to a string
    default, `append`/`count` actions) are unknown; so is every option once sub-commands are added."""
    options = parser.payload
    if name in ("add_argument_group", "add_mutually_exclusive_group"):
        return parser  # a group adds to the same parser
    if name == "add_subparsers":
        options["\0unknown"] = True
        return None
    if name == "set_defaults":
        for key, (value, *_rest) in keywords.items():
            if key != "**":
                options[key] = value
        return None
    if name in ("parse_args", "parse_known_args"):
        namespace = Special("namespace", None if options.get("\0unknown") else
                            {k: v for k, v in options.items() if not k.startswith("\0")})
        return Seq([namespace, Seq([])]) if name == "parse_known_args" else namespace
    if name != "add_argument":
        return None
    flags = [a.value for a in positional if isinstance(a, Literal) and isinstance(a.value, str)]
    dest_value = (keywords.get("dest") or (None,))[0]
    if isinstance(dest_value, Literal) and isinstance(dest_value.value, str):
        dest = dest_value.value
    else:
        longs = [f for f in flags if f.startswith("--")]
        plain = [f for f in flags if not f.startswith("-")]
        dest = (longs[0][2:] if longs else plain[0] if plain else (flags[0].lstrip("-") if flags else "")).replace("-", "_")
    if not dest or "**" in keywords:
        options["\0unknown"] = not dest or options.get("\0unknown", False)
        if dest:
            options[dest] = None
        return None
    action = (keywords.get("action") or (Literal("store"),))[0]
    action = action.value if isinstance(action, Literal) else None
    default = keywords.get("default")
    if action == "store_true":
        options[dest] = default[0] if default else Literal(False)
    elif action == "store_false":
        options[dest] = default[0] if default else Literal(True)
    elif action != "store":
        options[dest] = None
    elif default is None:
        options[dest] = Literal(None) if not (flags and not flags[0].startswith("-")) else None
    else:
        value = default[0]
        if "type" in keywords and isinstance(value, Literal) and isinstance(value.value, str):
            # argparse passes a string default through `type`: computed for the builtins, else unknown
            convert = next((a.value.value for a in node.args if a.keyword is not None and a.keyword.value == "type"
                            and type(a.value) is cst.Name), None)
            try:
                value = Literal({"str": str, "int": int, "float": float}[convert](value.value))
            except (KeyError, ValueError):
                value = None
        options[dest] = value
    return None


def _str_method(text: str, name: str, positional, keywords):
    """A `str` method on a literal with literal arguments, as Python computes it (lists of literals)."""
    if keywords or not all(isinstance(p, Literal) and (p.value is None or isinstance(p.value, (str, int)))
                           for p in positional):
        return None
    try:
        value = getattr(text, name)(*[p.value for p in positional])
    except (TypeError, ValueError):
        return None
    if isinstance(value, list):
        return Seq([Literal(v) for v in value[:256]]) if len(value) <= 256 else None
    return Literal(value)
