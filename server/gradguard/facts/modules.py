"""nn modules: torch layers from the op table, containers built in code, and classes of this file.

A class of this file is a `Module` whose attributes are the values its `__init__` assigned (layers,
parameters, flags); calling it runs its `forward` with `self` bound to it. Parameter identity is per layer:
`model.parameters()` covers every layer below `model`, an optimizer over one sub-network updates only
those layers, and a layer's forward saves its own weights (op table: `params`).
"""
from __future__ import annotations

import libcst as cst

from .model import (
    truth,
    GRAD_OFF,
    Counter,
    DictVal,
    Literal,
    Module,
    ParamsOf,
    Seq,
    Special,
    Storage,
    Tensor,
)
from .sets import EMPTY, SharedSet
from .tensors import flat_tensors

INPLACE_MODULE_ARG_POS = {
    # positional index of `inplace` in the constructors of torch.nn activations
    "torch.nn.ReLU": 0, "torch.nn.ReLU6": 0, "torch.nn.SELU": 0, "torch.nn.SiLU": 0, "torch.nn.Mish": 0,
    "torch.nn.Hardswish": 0, "torch.nn.Hardsigmoid": 0, "torch.nn.LeakyReLU": 1, "torch.nn.ELU": 1,
    "torch.nn.CELU": 1, "torch.nn.Dropout": 1, "torch.nn.Dropout1d": 1, "torch.nn.Dropout2d": 1,
    "torch.nn.Dropout3d": 1, "torch.nn.AlphaDropout": 1, "torch.nn.Hardtanh": 2, "torch.nn.Threshold": 2,
    "torch.nn.RReLU": 2,
}
# The in-place function an `inplace=True` module runs (its op-table row says what its backward saves).
INPLACE_FUNCTION = {
    "torch.nn.ReLU": "torch.relu_", "torch.nn.LeakyReLU": "torch.nn.functional.leaky_relu_",
    "torch.nn.ELU": "torch.nn.functional.elu_", "torch.nn.CELU": "torch.celu_", "torch.nn.SELU": "torch.selu_",
    "torch.nn.RReLU": "torch.nn.functional.rrelu_", "torch.nn.Hardtanh": "torch.nn.functional.hardtanh_",
    "torch.nn.ReLU6": "torch.nn.functional.hardtanh_", "torch.nn.Threshold": "torch.nn.functional.threshold_",
}
# The parameters a torch layer exposes as attributes (`layer.weight`).
PARAM_ATTRS = {"weight", "bias", "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih",
                "weight_hh", "bias_ih", "bias_hh", "in_proj_weight", "in_proj_bias", "weight_ih_l1", "weight_hh_l1",
                "bias_ih_l1", "bias_hh_l1", "out_proj"}
# nn.Module's own API: never interpreted as user methods even when a class overrides nothing.
DROPOUT_KINDS = frozenset({"torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d",
                           "torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout"})
# layers that return their input itself out of training mode, whatever its shape (probed under torch 2.13;
# Dropout1d/2d/3d return a reshaped view for inputs without a batch dimension)
EVAL_PASSTHROUGH = frozenset({"torch.nn.Dropout", "torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout"})
MODULE_API = {"parameters", "named_parameters", "zero_grad", "train", "eval", "to", "cuda", "cpu", "float",
              "double", "half", "requires_grad_", "modules", "children", "named_modules", "named_children",
              "state_dict", "load_state_dict", "apply", "add_module", "register_buffer", "register_parameter",
              "buffers", "named_buffers", "type", "share_memory"}
RNN_KINDS = ("torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU")
# Layers that hold parameters their forward does not save (the op table's `params` is "saves its weights"):
# writes into `emb.weight` are leaf writes all the same. Checked under torch by tests/test_inplace_activation_saves.py.
PARAMS_NOT_SAVED = frozenset({"torch.nn.Embedding"})
# Layers whose backward reads the values of their weight and not of their bias (probed on torch 2.13 with
# saved-tensor hooks, and a `.data` write on the bias between forward and backward leaves every gradient unchanged;
# LayerNorm saves its bias too, but only to know it is defined):
# tests/test_inplace_activation_saves.py re-runs the probe.
SAVES_WEIGHT_NOT_BIAS = frozenset({
    "torch.nn.Linear", "torch.nn.Bilinear", "torch.nn.Conv1d", "torch.nn.Conv2d", "torch.nn.Conv3d",
    "torch.nn.ConvTranspose1d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d", "torch.nn.BatchNorm1d",
    "torch.nn.BatchNorm2d", "torch.nn.BatchNorm3d", "torch.nn.GroupNorm", "torch.nn.LayerNorm",
})
# Layers whose parameters `named_parameters()` can name: kind -> (the weight's dimension count, the argument that
# decides whether parameters exist, its position, its default). Linear/convs: `bias` decides the bias; norms:
# `affine` (`elementwise_affine`) decides both. Positions as in torch 2.13's signatures (tests/test_named_parameters.py
# builds each layer under torch and compares).
LAYER_PARAMS = {
    "torch.nn.Linear": (2, "bias", 2, True),
    "torch.nn.Conv1d": (3, "bias", 7, True), "torch.nn.Conv2d": (4, "bias", 7, True),
    "torch.nn.Conv3d": (5, "bias", 7, True),
    "torch.nn.ConvTranspose1d": (3, "bias", 7, True), "torch.nn.ConvTranspose2d": (4, "bias", 7, True),
    "torch.nn.ConvTranspose3d": (5, "bias", 7, True),
    "torch.nn.BatchNorm1d": (1, "affine", 3, True), "torch.nn.BatchNorm2d": (1, "affine", 3, True),
    "torch.nn.BatchNorm3d": (1, "affine", 3, True), "torch.nn.GroupNorm": (1, "affine", 3, True),
    "torch.nn.LayerNorm": (1, "elementwise_affine", 2, True),
    "torch.nn.Embedding": (2, None, 0, True),  # always one weight
}


def layer_param_attrs(q: str, positional, keywords) -> tuple | None:
    """The parameters torch registers on layer `q` built with these arguments, in order, with their dimension
    counts; None when an argument that decides them is not a literal (or `**kwargs` may hold it)."""
    if q in ("torch.nn.RNN", "torch.nn.GRU", "torch.nn.LSTM") and "**" not in keywords:
        return _rnn_param_attrs(q, positional, keywords)
    spec = LAYER_PARAMS.get(q)
    if spec is None or "**" in keywords:
        return None
    weight_ndim, flag, flag_pos, default = spec
    if flag is None:
        return (("weight", weight_ndim),)
    value = keywords[flag][0] if flag in keywords else (positional[flag_pos] if len(positional) > flag_pos else None)
    if flag not in keywords and len(positional) <= flag_pos:
        present = default
    elif isinstance(value, Literal) and type(value.value) is bool:
        present = value.value
    else:
        return None
    if q == "torch.nn.LayerNorm":  # weight and bias have normalized_shape: one dimension when it is an int
        shape = positional[0] if positional else (keywords.get("normalized_shape") or (None,))[0]
        weight_ndim = 1 if isinstance(shape, Literal) and type(shape.value) is int else None
        bias = keywords.get("bias") or ((positional[3],) if len(positional) > 3 else None)
        if not present or bias is not None and not (isinstance(bias[0], Literal) and type(bias[0].value) is bool):
            return () if not present else None
        return (("weight", weight_ndim),) + ((("bias", weight_ndim),) if bias is None or bias[0].value else ())
    if flag == "bias":
        return (("weight", weight_ndim),) + ((("bias", 1),) if present else ())
    return (("weight", weight_ndim), ("bias", 1)) if present else ()  # affine norms: both or neither


def _rnn_param_attrs(q: str, positional, keywords) -> tuple | None:
    """torch's `weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}` (then `_reverse` ones when
    bidirectional) per layer, from literal `num_layers`, `bias` and `bidirectional`; None for a projection size or
    any of them not a literal."""
    def argument(name, index, default):
        value = keywords[name][0] if name in keywords else (positional[index] if len(positional) > index else None)
        if value is None and name not in keywords and len(positional) <= index:
            return default
        return value.value if isinstance(value, Literal) else None

    shift = 1 if q == "torch.nn.RNN" else 0  # RNN takes `nonlinearity` before `bias`
    layers = argument("num_layers", 2, 1)
    bias = argument("bias", 3 + shift, True)
    bidirectional = argument("bidirectional", 6 + shift, False)
    projection = argument("proj_size", 7, 0) if q == "torch.nn.LSTM" else 0
    if type(layers) is not int or type(bias) is not bool or type(bidirectional) is not bool or projection != 0 \
            or not 0 < layers <= 64:
        return None
    out = []
    for k in range(layers):
        for suffix in ("", "_reverse") if bidirectional else ("",):
            out += [(f"weight_ih_l{k}{suffix}", 2), (f"weight_hh_l{k}{suffix}", 2)]
            if bias:
                out += [(f"bias_ih_l{k}{suffix}", 1), (f"bias_hh_l{k}{suffix}", 1)]
    return tuple(out)


# Layers whose output has their input's dtype and device (torch raises on weights of another dtype or device; under
# autocast the dtype changes, which the caller rules out). Checked under torch by tests/test_dtype_aliases.py.
SAME_DTYPE_LAYERS = frozenset({
    "torch.nn.Linear", "torch.nn.Bilinear", "torch.nn.Conv1d", "torch.nn.Conv2d", "torch.nn.Conv3d",
    "torch.nn.ConvTranspose1d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d", "torch.nn.BatchNorm1d",
    "torch.nn.BatchNorm2d", "torch.nn.BatchNorm3d", "torch.nn.InstanceNorm1d", "torch.nn.InstanceNorm2d",
    "torch.nn.InstanceNorm3d", "torch.nn.LayerNorm", "torch.nn.GroupNorm", "torch.nn.ReLU", "torch.nn.LeakyReLU",
    "torch.nn.GELU", "torch.nn.SiLU", "torch.nn.Tanh", "torch.nn.Sigmoid", "torch.nn.ELU", "torch.nn.Dropout",
})


def short_kind(kind: str) -> str:
    return kind.replace("torch.nn.", "nn.")


class Modules:
    """The model of nn modules and layer sequences: torch layers built from the op table, containers
    (`Sequential`, `ModuleList`, `ModuleDict`), what a module's parameters are (one group per layer), nn.Module's own
    API (`parameters()`, `zero_grad()`, `requires_grad_()`, `append`) and what a torch layer does when called (saves
    its weights or input, its output's grad). It runs no code: a class's `forward` and `__init__` are run by `Calls`,
    which hands it evaluated arguments. The scope it is given is the context of what it records (grad mode, place)."""

    def __init__(self, tensors):
        self.tensors = tensors

    def new_module(self, scope, kind, row, has_params, node) -> Module:
        m = Module(kind, row, has_params, Counter(label=f"parameters of {kind}", known_start=False), Storage(),
                   ctor=node, top=scope.top)
        m.params_counter.owner = m
        if scope.inference is not None:
            m.inference_call, m.inference_top = scope.inference, scope.top
        return m

    def layer(self, scope, node: cst.Call, q: str, evaluated):
        """A torch layer built by `nn.Linear(...)`-like calls (op table row `q`)."""
        row = scope.ops.by_name.get(q)
        positional, keywords = evaluated
        m = self.new_module(scope, q, row, None, node)
        self._take_row(m, q, row)
        if m.has_params:
            m.param_attrs = layer_param_attrs(q, positional, keywords)
        if q == "torch.nn.TransformerEncoderLayer" and _literal_flag(keywords, "batch_first") is True \
                and _literal_flag(keywords, "norm_first") in (False, "default") and len(positional) <= 5:
            # probed under torch 2.13: batch-first and post-norm, the attention projects a transposed copy and the
            # residual adds: nothing of the input is saved (a later write or an inference tensor is fine)
            m.saves_input = "none"
        if q in DROPOUT_KINDS:
            rate = positional[0] if positional else (keywords.get("p") or (None,))[0]
            m.passthrough = isinstance(rate, Literal) and rate.value == 0 and type(rate.value) in (int, float)
        inplace = keywords.get("inplace")
        pos = INPLACE_MODULE_ARG_POS.get(q)
        if inplace is not None:
            m.inplace = truth(inplace[0])
        elif pos is not None and len(positional) > pos:
            m.inplace = truth(positional[pos])
        if "**" in keywords and pos is not None and inplace is None:
            m.inplace = None
        if q in RNN_KINDS and "**" not in keywords:
            # `rnn.num_layers`, `rnn.hidden_size` (a hand-written loop over the layers' `weight_ih_l{k}`)
            for i, attr in enumerate(("input_size", "hidden_size", "num_layers")):
                value = positional[i] if i < len(positional) else (keywords.get(attr) or (None,))[0]
                if value is None and attr == "num_layers" and len(positional) <= i:
                    value = Literal(1)  # torch's default
                if isinstance(value, Literal) and type(value.value) is int:
                    m.attrs[attr] = value
        return m

    def _take_row(self, m: Module, q: str, row) -> None:
        """What calling torch layer `q` does (op table row): a layer, or a class of this file extending it."""
        m.row = row
        m.has_params = row.has_params if row.has_params is not None else (row.params or q in PARAMS_NOT_SAVED)
        m.saves_weights = row.params
        m.saves_output = row.saves_output
        m.saves_input = row.saves_input

    def container(self, scope, q: str, node: cst.Call, evaluated, items_of):
        """`nn.Sequential(...)`, `nn.ModuleList(...)`, `nn.ModuleDict(...)`; `items_of(value)` lists what iterating an
        argument visits (the interpreter knows)."""
        positional, keywords = evaluated
        kind = q.rsplit(".", 1)[-1]
        m = self.new_module(scope, q, None, False, node)
        m.container = kind
        if kind == "Sequential":
            if len(positional) == 1 and isinstance(positional[0], DictVal):
                d = positional[0]
                if d.items is not None:
                    m.keys = list(d.items)
                    m.children = list(d.items.values())
                else:
                    m.children = None
            else:
                m.children = list(positional)
        else:
            first = positional[0] if positional else (keywords.get("modules") or (None,))[0]
            if first is None and not positional:
                m.children = []
            elif isinstance(first, DictVal):
                if first.items is not None:
                    m.keys = list(first.items)
                    m.children = list(first.items.values())
            else:
                items = _known_items(first, items_of)
                m.children = list(items) if items is not None else None
        if m.children is not None and not all(isinstance(c, Module) for c in m.children):
            m.children = None
        if m.children is not None and kind != "Sequential":
            m.children_path = scope.path
        m.has_params = self.module_has_params(scope, m)
        return m

    def init_torch_base(self, scope, obj: Module, base: str, positional, items_of) -> None:
        """`super().__init__(*layers)` of an nn.Sequential / ModuleList subclass."""
        if base == "torch.nn.Sequential":
            obj.container = "Sequential"
            if len(positional) == 1 and isinstance(positional[0], DictVal) and positional[0].items is not None:
                obj.keys = list(positional[0].items)
                obj.children = list(positional[0].items.values())
            else:
                obj.children = list(positional)
        elif base == "torch.nn.ModuleList":
            obj.container = "ModuleList"
            items = _known_items(positional[0], items_of) if positional else []
            obj.children = list(items) if items is not None else None
        elif scope.ops.by_name.get(base) is not None:
            # a subclass of a torch layer (`class ClampedLinear(nn.Linear)`): its parameters and what calling it
            # saves are the layer's; a `forward` of its own still runs as code
            self._take_row(obj, base, scope.ops.by_name[base])
            return
        if obj.children is not None and not all(isinstance(c, Module) for c in obj.children):
            obj.children = None
            obj.opaque = True
        obj.has_params = self.module_has_params(scope, obj)

    def summarised_module(self, scope, info, node) -> Module:
        """A class whose body is not interpreted (another file's, or past the budget): counted layers only."""
        has_params = True if info.param_layers else (None if info.unknown_children else False)
        m = self.new_module(scope, info.name, None, has_params, node)
        m.saves_input = "params" if info.param_layers + info.unknown_children >= 2 else "single"
        m.opaque = True
        return m

    # ---- structure ------------------------------------------------------
    def submodules(self, scope, m: Module) -> list[Module]:
        out = []
        if m.children is not None:
            out.extend(c for c in m.children if isinstance(c, Module))
        for value in m.attrs.values():
            if isinstance(value, Module):
                out.append(value)
            elif isinstance(value, Seq) and value.items is not None:
                out.extend(v for v in value.items if isinstance(v, Module))
        return out

    def module_has_params(self, scope, m: Module) -> bool | None:
        if m.row is not None:
            return m.has_params
        if m.opaque and m.cls is None:
            return m.has_params
        found = False
        unknown = m.opaque or (m.container and m.children is None)
        for value in m.attrs.values():
            if isinstance(value, Tensor) and value.is_parameter:
                found = True
        for child in self.submodules(scope, m):
            flag = child.has_params if child.row is not None or child.opaque else self.module_has_params(scope, child)
            if flag is True:
                found = True
            elif flag is None:
                unknown = True
        if found:
            return True
        if m.cls is not None and m.kind not in scope.a.classes:
            return None
        return None if unknown else False

    def param_groups(self, scope, m: Module, _seen=None) -> list:
        """The parameter groups under `m`: torch layers (one counter each) and nn.Parameter tensors."""
        seen = _seen if _seen is not None else set()
        if id(m) in seen:
            return []
        seen.add(id(m))
        if m.row is not None or (m.cls is None and not m.container):
            return [m] if m.has_params is not False else []
        groups = []
        if m.opaque or (m.container and m.children is None):
            groups.append(m)
        for value in m.attrs.values():
            if isinstance(value, Tensor) and value.is_parameter:
                groups.append(value)
        for child in self.submodules(scope, m):
            groups.extend(self.param_groups(scope, child, seen))
        return groups

    def param_tensors(self, scope, m: Module, node) -> list[Tensor]:
        """What iterating `m.parameters()` yields: one tensor per parameter group."""
        out = []
        for group in self.param_groups(scope, m):
            if isinstance(group, Tensor):
                out.append(group)
            else:
                out.append(self.layer_parameter(scope, group, node, ""))
        return out

    def named_parameters(self, scope, m: Module, node) -> list | None:
        """`m.named_parameters()` as (name, parameter) pairs when every name is known as torch makes it: torch layers
        whose constructor proves their parameters, in containers and user classes; None otherwise (a stand-in)."""
        pairs: list = []
        seen: set = set()

        def walk(mod: Module, prefix: str) -> bool:
            if id(mod) in seen:  # torch yields a shared module's parameters once
                return True
            seen.add(id(mod))
            if mod.row is not None:
                if mod.has_params is False and mod.cls is None:
                    return True  # nn.ReLU
                if mod.param_attrs is None or mod.cls is not None:
                    return False
                for attr, ndim in mod.param_attrs:
                    t = self.layer_parameter(scope, mod, node, attr)
                    t.ndim = ndim
                    t.name = ""  # named by the loop variable that takes it (`for p in ...`: `p`, as the code says)
                    pairs.append(Seq([Literal(prefix + attr), t]))
                return True
            if mod.opaque or mod.cls is None and not mod.container or mod.container and mod.children is None:
                return False
            for key, value in mod.attrs.items():  # a class's own parameters first, then its submodules (torch)
                if isinstance(value, Tensor) and value.is_parameter:
                    pairs.append(Seq([Literal(prefix + key), value]))
                elif isinstance(value, Seq) and any(isinstance(i, (Module, Tensor)) for i in value.items or [None]):
                    return False  # a list of layers: plain lists are not registered, nn.ModuleList is a Module
            if mod.container:
                keys = mod.keys if mod.keys is not None else [str(i) for i in range(len(mod.children))]
                children = list(zip(keys, mod.children))
            else:
                children = [(k, v) for k, v in mod.attrs.items() if isinstance(v, Module)]
            return all(walk(child, f"{prefix}{key}.") for key, child in children if isinstance(child, Module))

        return pairs if walk(m, "") else None  # a loop over more than the unroll bound walks their join

    def layer_parameter(self, scope, layer: Module, node, attr: str) -> Tensor:
        rg = None if layer.frozen is None else (not layer.frozen)
        name = f"{layer.name}.{attr}" if layer.name and attr else (attr or layer.name)
        t = Tensor(layer.params_counter, layer.params_storage, rg, True, origin=node,
                   created_by=f"a parameter of `{layer.copied_by or layer.name or short_kind(layer.kind)}`", is_parameter=True,
                   module_params=layer, name=name)
        if layer.row is not None:  # which parameter it is, when a torch layer's save may hold only some of them
            t.param_attr, t.param_path_len = attr, len(scope.path)
        return t

    def parameter_attribute(self, scope, m: Module, attr: str, node):
        """`layer.weight`, `layer.bias` of a torch layer with parameters; None otherwise."""
        if m.has_params and (m.row is not None or m.cls is None) and attr in PARAM_ATTRS:
            if attr == "out_proj":
                return None
            return self.layer_parameter(scope, m, node, attr)
        return None

    # ---- nn.Module's own API ------------------------------------------------
    def module_method(self, scope, m: Module, name: str, positional, node: cst.Call, items_of):
        """`m.<name>(*positional)` for nn.Module's own methods (a user class's methods are run by `Calls`)."""
        first = positional[0] if positional else None
        if name == "parameters":
            return ParamsOf(m)
        if name == "named_parameters":
            pairs = self.named_parameters(scope, m, node)
            return Seq(pairs) if pairs is not None else Seq(None, Seq([Literal(""), None]))
        if name == "named_modules":
            return Seq([Seq([None, sub]) for sub in [m] + self._all_submodules(scope, m)], module_walk=True)
        if name in ("register_full_backward_hook", "register_full_backward_pre_hook"):
            # torch wraps the module's outputs (and inputs) in BackwardHookFunction from the next call on
            m.backward_hook, m.backward_hook_path = (node, scope.top), scope.path
            return Special("hook_handle", (m, None))
        if name == "register_forward_pre_hook" and first is not None and len(positional) == 1 \
                and not any(a.keyword is not None and a.keyword.value in ("with_kwargs", "prepend") for a in node.args):
            entry = [first, scope.path]
            m.forward_pre_hooks.append(entry)
            return Special("hook_handle", (m, entry))
        if name == "register_forward_hook" and first is not None and len(positional) == 1 \
                and not any(a.keyword is not None and a.keyword.value in ("with_kwargs", "prepend", "always_call")
                            for a in node.args):
            entry = [first, scope.path]
            m.forward_hooks.append(entry)
            return Special("hook_handle", (m, entry))
        if name in ("modules", "children"):
            subs = ([m] if name == "modules" else []) + (self._all_submodules(scope, m) if name == "modules"
                                                          else self.submodules(scope, m))
            return Seq(subs, module_walk=True)
        if name == "zero_grad":
            if not _set_to_none_false(node):
                for group in self.param_groups(scope, m):
                    if isinstance(group, Module):
                        group.grads = False
            return None
        if name == "requires_grad_":
            flag = truth(first) if positional else True
            for group in self.param_groups(scope, m):
                if isinstance(group, Module):
                    group.frozen = None if flag is None else (not flag)
                elif isinstance(group, Tensor):
                    group.requires_grad = flag
            return m
        if name in ("train", "eval"):
            self.set_training_mode(scope, m, name, positional)
            return m
        if name in ("to", "cuda", "cpu", "float", "double", "half", "type", "share_memory"):
            return m
        if name in ("append", "extend", "insert") and m.container in ("ModuleList", "Sequential"):
            items = [first] if name == "append" else (items_of(first) if name == "extend" else
                                                      ([positional[1]] if len(positional) > 1 else None))
            if m.children is not None and items is not None and all(isinstance(i, Module) for i in items) \
                    and scope.path == getattr(m, "children_path", scope.path):
                m.children.extend(items) if name != "insert" else m.children.insert(
                    positional[0].value if isinstance(positional[0], Literal) else len(m.children), items[0])
            else:
                m.children = None
            m.has_params = self.module_has_params(scope, m)
            return None
        if name == "add_module" and len(positional) == 2:
            key = first.value if isinstance(first, Literal) else None
            child = positional[1]
            if isinstance(child, Module) and m.container == "Sequential" and m.children is not None \
                    and (key is not None or scope.path == m.children_path):
                # `add_module("block{}".format(i + 1), ...)` in a loop: a name we cannot read still appends
                m.children.append(child)
                m.keys = (m.keys or [None] * (len(m.children) - 1)) + [key]
            elif key is not None and isinstance(child, Module):
                m.attrs[key] = child
            else:
                m.opaque = True
            m.has_params = self.module_has_params(scope, m)
            return None
        if name == "register_buffer" and len(positional) >= 2 and isinstance(first, Literal):
            m.attrs[str(first.value)] = positional[1]
            return None
        if name == "register_parameter" and len(positional) >= 2 and isinstance(first, Literal):
            m.attrs[str(first.value)] = positional[1]
            m.has_params = self.module_has_params(scope, m)
            return None
        return None

    def set_training_mode(self, scope, m: Module, name: str, positional) -> None:
        """`m.eval()` / `m.train(False)`: `m` and every module it registers (children and module attributes, not
        plain lists) leave training mode on this path; `m.train()` or a flag not known to be False puts them back
        (or leaves the mode unknown). A class of the file that overrides `train` or `eval` decides for itself: no
        claim for its modules."""
        evaluating = name == "eval" or (name == "train" and len(positional) == 1 and isinstance(positional[0], Literal)
                                        and positional[0].value is False)
        modules, seen, stack = [], set(), [m]
        while stack:
            x = stack.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            modules.append(x)
            stack.extend(c for c in (x.children or []) if isinstance(c, Module))
            stack.extend(v for v in x.attrs.values() if isinstance(v, Module))
        if any(x.cls is not None and _may_override_mode(scope, x.cls) for x in modules):
            evaluating = False
        for x in modules:
            x.eval_path = scope.path if evaluating else None

    def _all_submodules(self, scope, m: Module, seen=None) -> list[Module]:
        seen = seen if seen is not None else {id(m)}
        out = []
        for child in self.submodules(scope, m):
            if id(child) in seen:
                continue
            seen.add(id(child))
            out.append(child)
            out.extend(self._all_submodules(scope, child, seen))
        return out

    # ---- what a layer does when called ---------------------------------
    def layer_call(self, scope, m: Module, args, node, dtype_device=("", "")):
        """Calling torch layer `m` on evaluated `args`; `dtype_device`: the output's proven dtype and device (a layer
        of SAME_DTYPE_LAYERS on inputs that share them, outside autocast: the caller knows)."""
        out = self._layer_call(scope, m, args, node, dtype_device)
        if isinstance(out, Tensor) and any(dtype_device) and not any(out is a for a in args):
            out.dtype, out.device = dtype_device
        return out

    def _layer_call(self, scope, m: Module, args, node, dtype_device):
        site, scope.layer_site = (scope.layer_site or node), None  # where its saves and writes are reported
        tensors = flat_tensors(args)
        grad_off = scope.grad == GRAD_OFF
        if m.passthrough and tensors:
            return tensors[0]  # `nn.Dropout(p=0)` returns its input: a later in-place write reaches that tensor
        if tensors and m.kind in EVAL_PASSTHROUGH and m.eval_path is not None and set(m.eval_path) <= set(scope.path):
            return tensors[0]  # after `model.eval()` on every path here, dropout returns its input (torch 2.13)
        if m.inplace and tensors:
            first = tensors[0]
            op = m.kind.rsplit(".", 1)[-1] + "(inplace=True)"
            self.tensors.write(scope, first, site, scope.stmt, op=op, kind="inplace_module", module_ctor=m.ctor)
            row = scope.ops.by_name.get(INPLACE_FUNCTION.get(m.kind, "")) or (m.row if m.saves_output else None)
            self.tensors.save_inplace_result(scope, first, row, op, site)
            return first
        if m.kind == "torch.nn.Embedding" and _renormalises(m.ctor):
            # torch: Embedding(max_norm=...) rescales the looked-up rows of its weight in place (embedding_renorm_,
            # under no_grad) before the lookup: a weight saved earlier by another op is then stale
            saved_grad, scope.grad = scope.grad, GRAD_OFF
            try:
                self.tensors.write(scope, self.layer_parameter(scope, m, site, "weight"), site, scope.stmt,
                                   op="embedding_renorm_", kind="method", module_ctor=m.ctor)
            finally:
                scope.grad = saved_grad
        any_rg = any(t.requires_grad is True for t in tensors)
        # an argument the analysis knows nothing of (`criterion(model(x), y)` with `model` passed in) may require
        # grad: the output then claims nothing, rather than requires_grad=False
        unknown_rg = any(t.requires_grad is None for t in tensors) or any(a is None for a in args)
        trainable = m.has_params is True and m.frozen is False
        if trainable:
            rg = True
        elif any_rg:
            rg = True
        elif m.has_params is None or unknown_rg or (m.has_params and m.frozen is None):
            rg = None
        else:
            rg = False
        if grad_off:
            rg = False
        history = SharedSet.union(t.history for t in tensors) if tensors and not grad_off else EMPTY
        owners = SharedSet.union(t.owners for t in tensors) if tensors else EMPTY
        if trainable and not grad_off:
            owners = owners | (m,)
        saves = set()
        if m.row is not None and m.row.view == "alias" and tensors:
            return tensors[0]
        if not grad_off:
            # Weights are saved for the input's gradient (Linear: when the input requires grad; conv and norms:
            # always); a model class of several layers saves the later layers' weights whatever its input.
            weights_saved = m.saves_weights if m.row is not None else m.has_params
            if weights_saved and (any_rg or m.saves_input in ("params", "all")):
                owner = m.params_counter.owner or m
                p = Tensor(m.params_counter, m.params_storage, True, True,
                           name=f"the parameters of `{owner.name or short_kind(owner.kind)}`", module_params=owner)
                if m.inference_call is not None:  # a layer built under inference_mode(): inference parameters
                    p.inference_call, p.inference_top, p.inference_origin = m.inference_call, m.inference_top, m.ctor
                save = self.tensors.save(scope, p, short_kind(m.kind), site, "parameters")
                if m.kind in SAVES_WEIGHT_NOT_BIAS:
                    save.params_saved = frozenset({"weight"})
                saves.add(save)
            if tensors and m.saves_input in ("self", "all", "operands") and (trainable or any_rg):
                for i, t in enumerate(tensors[:1] if m.saves_input == "self" else tensors):
                    others_rg = trainable or any(o.requires_grad is True for j, o in enumerate(tensors) if j != i)
                    if m.saves_input == "operands" and not others_rg:
                        continue
                    saves.add(self.tensors.save(scope, t, short_kind(m.kind), site, "input"))
        kind = m.kind

        def result_tensor():
            t = self.tensors.new_tensor(scope, requires_grad=rg, is_leaf=None if rg is None else not rg, origin=node,
                                created_by=f"`{m.name or short_kind(kind)}(...)`", history=history | saves)
            t.owners = owners
            return t

        if kind in RNN_KINDS:
            hidden = Seq([result_tensor(), result_tensor()]) if kind == "torch.nn.LSTM" else result_tensor()
            return Seq([result_tensor(), hidden])
        if kind == "torch.nn.LSTMCell":
            return Seq([result_tensor(), result_tensor()])
        if kind == "torch.nn.MultiheadAttention":
            return Seq([result_tensor(), result_tensor()])
        if m.row is None and m.cls is None and m.has_params is None:
            # a torch.nn layer the op table does not know (AdaptiveAvgPool2d, PixelShuffle...): what it saves is
            # not claimed, but its output stays in its input's graph
            if tensors and grad_off and any(dtype_device):
                # an inference_mode()/no_grad() forward: a new tensor without a graph, of the input's dtype/device
                return self.tensors.new_tensor(scope, requires_grad=False, is_leaf=True, origin=node,
                                               created_by=f"`{m.name or short_kind(kind)}(...)`")
            return self.tensors._generic_result(scope, tensors, node) if tensors and not grad_off else None
        out = result_tensor()
        out.contiguous = kind in ("torch.nn.Linear", "torch.nn.Bilinear") or bool(tensors) and all(
            isinstance(t, Tensor) and t.contiguous for t in tensors)
        if kind == "torch.nn.Linear" and len(tensors) == 1:
            out.leading_sizes_of = tensors[0].leading_sizes_of or tensors[0]  # (*, in) -> (*, out)
        if m.saves_output and rg:
            out.history = out.history | {self.tensors.save(scope, out, short_kind(kind), site, "output")}
        return out




def _known_items(value, items_of):
    """The modules a container is built from: every item of a list or tuple the code spells out (a loop visits at most
    16, a container keeps all: a 17th layer was lost with the rest), else what iterating the value visits."""
    if isinstance(value, Seq) and value.items is not None and not value.spread:
        return list(value.items)
    return items_of(value)


def _set_to_none_false(node: cst.Call) -> bool:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "set_to_none":
            return type(arg.value) is cst.Name and arg.value.value == "False"
    if node.args and node.args[0].keyword is None:
        return isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "False"
    return False


set_to_none_false = _set_to_none_false


def _renormalises(ctor) -> bool:
    """An `nn.Embedding(..., max_norm=v)` with v not None (torch renormalises on every call)."""
    if type(ctor) is not cst.Call:
        return False
    for arg in ctor.args:
        if arg.keyword is not None and arg.keyword.value == "max_norm":
            return not (type(arg.value) is cst.Name and arg.value.value == "None")
    return len(ctor.args) >= 3 and ctor.args[2].keyword is None and not (
        type(ctor.args[2].value) is cst.Name and ctor.args[2].value.value == "None")


def _literal_flag(keywords: dict, name: str):
    """A keyword's literal bool, "default" when it is not given, None when it is given but not a literal."""
    if name not in keywords:
        return "default"
    value = keywords[name][0]
    return value.value if isinstance(value, Literal) and isinstance(value.value, bool) else None


def _may_override_mode(scope, info) -> bool:
    """A class of the user's code, or a base of it, defines `train` or `eval`, or extends a class outside torch.nn
    that may (a library model): what its `.eval()` does is not nn.Module's."""
    seen, stack = set(), [info]
    while stack:
        cls = stack.pop()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        if "train" in cls.methods or "eval" in cls.methods:
            return True
        for base in cls.bases:
            if base in scope.a.classes:
                stack.append(scope.a.classes[base])
            elif not base.startswith("torch.nn."):
                return True
    return False
