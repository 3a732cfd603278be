"""The abstract values and events that the Facts pass records.

These mirror what autograd does at runtime: a tensor has a version counter
(shared by its views and by `detach()` results) and a storage (shared also by
`.data`); backward nodes save tensors together with the counter's version at
save time; backward compares the versions. The analysis only ever records what
the code proves; anything it cannot prove is `None` ("unknown") and no rule
fires on unknowns.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import libcst as cst

from .sets import EMPTY, SharedSet

_ids = itertools.count(1)

# Grad modes of a region of code.
GRAD_ON = "on"
GRAD_OFF = "off"  # no_grad / inference_mode / @torch.no_grad()
GRAD_UNKNOWN = "unknown"  # a helper function: its caller decides


@dataclass(eq=False)
class Write:
    """One in-place write on a version counter (or, for silent writes, on a storage only)."""

    seq: int
    node: cst.CSTNode  # the expression or statement that writes
    stmt: cst.CSTNode  # the statement holding it
    op: str  # "add_", "+=", "[]=", "out=", "relu(inplace=True)", "optimizer.step()", ".data.mul_"
    kind: str  # "method", "augassign", "setitem", "out", "inplace_arg", "inplace_module", "step", "data"
    version_after: int
    path: tuple
    target_name: str = ""
    via: str = ""  # "detach", "view", "data" when the write went through an alias
    module_ctor: cst.CSTNode | None = None  # for inplace modules: the constructor call (fix site)
    optimizer_name: str = ""
    top: cst.CSTNode | None = None  # the top-level statement holding `node` (locates its block)
    raises: bool = False  # torch raises at this write itself (leaf, multi-view, out=): no later error to report
    loops: tuple = ()  # the loops running when it happened (carried state matters only for those)
    call_chain: tuple = ()  # for writes inside same-file callees: ((call node, its top, calling Scope), ...) inner first
    scope_id: int = 0  # id of the Scope that ran it
    # a write through `.data` of a torch layer's parameter: which one ("weight", "bias"; "" for the stand-in of all
    # of the layer's parameters), and whether a branch taken after that stand-in was made may have left some out
    param: str | None = None
    param_filtered: bool = False


@dataclass(eq=False)
class Counter:
    """A version counter: what `t._version` reads. Shared by a base, its views and detach()."""

    id: int = field(default_factory=lambda: next(_ids))
    version: int = 0
    writes: list[Write] = field(default_factory=list)
    label: str = ""  # "parameters of rnn" for module parameter groups
    known_start: bool = True  # created in this code at version 0 (not a parameter or an argument)
    owner: object = None  # the Module whose parameters this counter stands for

    def write(self, w: Write) -> None:
        self.version += 1
        w.version_after = self.version
        self.writes.append(w)

    def writes_since(self, version: int) -> list[Write]:
        return [w for w in self.writes if w.version_after > version]


@dataclass(eq=False)
class Storage:
    """The memory behind a tensor; `.data` shares it without sharing the counter."""

    id: int = field(default_factory=lambda: next(_ids))
    silent_writes: list[Write] = field(default_factory=list)  # writes that bumped no shared counter


@dataclass(eq=False)
class Save:
    """A tensor saved for backward by an op, with the counter's version at that moment."""

    seq: int
    counter: Counter
    storage: Storage
    version: int
    op: str  # "sin", "exp", "nn.RNN parameters"
    node: cst.CSTNode  # the call that saved it
    stmt: cst.CSTNode
    path: tuple
    tensor_name: str
    what: str  # "input", "output", "parameters"
    via_index: bool = False  # the saved tensor is an element/slice view read by indexing
    loop: cst.CSTNode | None = None  # innermost loop at save time
    iteration: int = 0
    freed_by: cst.CSTNode | None = None  # the backward() that freed this save's graph
    freed_top: cst.CSTNode | None = None
    freed_path: tuple = ()
    freed_loops: tuple = ()  # the loops running when that backward() freed it
    freed_scopes: frozenset = frozenset()  # ids of the Scope that ran that backward() and of its callers
    expr: cst.CSTNode | None = None  # the expression that produced the saved tensor (for messages)
    tensor: object = None  # the Tensor value (its name may be bound after the save)
    top: cst.CSTNode | None = None
    # where the forward ran, for saves made inside same-file callees or inside a container's layers (whose `node`
    # is the layer's constructor): the container call, then the same-file calls that led there, inner first
    layer_call: tuple | None = None  # (call node, its top) of the container that ran the layer
    call_chain: tuple = ()  # ((call node, its top, calling Scope), ...)
    scope_id: int = 0  # serial of the Scope that made the save
    loop_passes: tuple = ()  # ((loop node, its run's start_seq, pass), ...) of every loop running at save time
    tuple_index: int | None = None  # which output of a tuple-returning op it is (torch: "output 1 of LinalgEigh")
    params_saved: frozenset | None = None  # a layer's save of its parameters: which of them (None: all or unknown)
    # the same save on each arm of `a if c else b` (a value that may be either one): a later write to either arm's
    # counter can make backward fail on the runs that took it
    alternates: tuple = ()
    read_at: tuple | None = None  # for such a save on an arm: (the arm's expression, its top), where a copy is read


@dataclass(eq=False)
class Tensor:
    """A tensor value as far as the code proves it."""

    counter: Counter
    storage: Storage
    requires_grad: bool | None
    is_leaf: bool | None
    origin: cst.CSTNode | None = None  # where it was created
    created_by: str = ""
    name: str = ""
    history: SharedSet = EMPTY  # Saves that backward through this tensor needs
    view_of: "Tensor | None" = None  # base tensor when this is a view
    view_kind: str = ""  # "view", "multi", "expand", "detach", "index"
    view_in_no_grad: bool = False
    data_of: "Tensor | None" = None  # `x.data` results point at x
    is_parameter: bool = False
    module_params: "Module | None" = None  # tensors standing for a module's parameters
    # a torch layer's parameter: its attribute ("weight", "bias"), "" for the stand-in of all of them
    # (`for p in layer.parameters()`), made when the scope's branch path had `param_path_len` arms
    param_attr: str | None = None
    param_path_len: int = 0
    grad_read: bool = False  # `.grad` of it is read somewhere: its writes are parameter updates
    shape: tuple | None = None  # when the code spells it out with literal sizes
    overlapping: bool = False  # an expand() that broadcasts: several elements share one memory location
    broadcast_dims: tuple = ()  # which dimensions that expand() broadcast (stride 0)
    # laid out contiguously for sure (a factory's result, a Linear or matmul output, ops on such tensors): then
    # reshape/flatten return a view and .contiguous() the tensor itself (torch 2.13; after a transpose they copy)
    contiguous: bool = False
    # proven dtype and device ("float32", "cpu"; "" unknown): a torch factory's default, kept by indexing and by the
    # layers that compute in their input's dtype; then `.float()`, `.to("cpu")` return the tensor itself (torch 2.13)
    dtype: str = ""
    device: str = ""
    inference_call: cst.CSTNode | None = None  # created under this `torch.inference_mode()` call
    inference_top: cst.CSTNode | None = None
    inference_origin: cst.CSTNode | None = None  # the expression that made the inference tensor (views keep it)
    owners: SharedSet = EMPTY  # parameter groups (layers) whose .grad a backward through it fills
    # a custom-function view returned through a full backward hook: (node, top) of the hook's registration
    hooked_by: tuple | None = None
    ndim: int | None = None  # its dimension count, when proven without its sizes (a Linear's weight: 2)
    # a tensor of the same rank and the same sizes in every dimension but the last (this is a Linear's output on
    # it, or a piece of its split along the last dimension): the `Dim`s unpacked from its shape name these sizes
    leading_sizes_of: "Tensor | None" = None
    alternatives: tuple = ()  # `a if c else b` of unknown `c`: the arms, whose counters a save must also watch
    alternatives_top: object = None  # the top of that `a if c else b`
    # For hover: what was saved and written on this tensor's counter.
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def base(self) -> "Tensor":
        """The tensor whose leaf status governs writes through this one.

        A `detach()` result is its own base: torch makes it a new leaf (requires_grad=False) that shares the
        version counter, so writing through it is allowed even when the detached tensor is a leaf that
        requires grad (EMA blending, copying master weights back); the shared counter still makes a later
        backward through a save of the original fail.
        """
        t = self
        while t.view_of is not None and t.view_kind != "detach":
            t = t.view_of
        return t


@dataclass(eq=False)
class Module:
    """An nn.Module instance: a torch.nn layer, a container, or a class of this file (its `__init__` run as code)."""

    kind: str  # "torch.nn.Linear", "Net"
    row: object | None  # OpRow for torch.nn layers
    has_params: bool | None  # it holds parameters (nn.Embedding does; nn.ReLU does not)
    params_counter: Counter  # its own parameters (for containers and classes: the parts not modelled one by one)
    params_storage: Storage
    inplace: bool | None = False  # None: may or may not be in place (no claim)
    ctor: cst.CSTNode | None = None
    copied_by: str = ""  # "copy.deepcopy(model)": a copy made there (its parameters are the copy's, not the original's)
    children: list["Module"] | None = None  # Sequential / ModuleList children in order (None: unknown)
    grads: bool | None = False  # whether .grad holds values (for optimizer.step())
    name: str = ""
    saves_output: bool = False
    saves_input: str = "none"
    top: cst.CSTNode | None = None
    saves_weights: bool | None = None  # its forward saves its parameters for backward (op table `params`)
    cls: object = None  # ClassInfo of a user class
    attrs: dict = field(default_factory=dict)  # self.<attr> values of a user class instance
    opaque: bool = False  # parts of it are not modelled (unknown children, a class body not run)
    frozen: bool | None = False  # its parameters were set to requires_grad=False (None: on some paths)
    container: str = ""  # "Sequential", "ModuleList", "ModuleDict" for torch containers
    keys: list | None = None  # ModuleDict / named Sequential keys, parallel to children
    parent: "Module | None" = None  # the module holding it (for names like `D.fc1`)
    attr_name: str = ""
    children_path: tuple = ()  # branch path where the container was built (appends elsewhere: unknown)
    inplace_site: tuple | None = None  # (node, top) of a `m.inplace = True` that made it in-place
    inference_call: cst.CSTNode | None = None  # built under `torch.inference_mode()`: its parameters are inference tensors
    inference_top: cst.CSTNode | None = None
    # (node, top) of a `register_full_backward_hook` / `register_full_backward_pre_hook` on it (torch then wraps its
    # outputs in BackwardHookFunction, a custom Function); the branch path it ran on; None once its handle is removed
    backward_hook: tuple | None = None
    backward_hook_path: tuple = ()
    # `register_forward_pre_hook(fn)`: [fn, branch path it ran on] per hook, in order (torch calls each before
    # `forward` and a returned value replaces the arguments)
    forward_pre_hooks: list = field(default_factory=list)
    # `register_forward_hook(fn)`: [fn, branch path] per hook (torch calls `fn(module, args, output)` after `forward`;
    # a returned value replaces the output; `output.requires_grad_()` in it makes the output a leaf that requires grad)
    forward_hooks: list = field(default_factory=list)
    # a dropout built with p=0: torch returns its input itself (the same tensor, no copy, no write)
    passthrough: bool = False
    # the branch path of the `.eval()` (or `.train(False)`) that took it out of training mode, on it or a module
    # registering it; None while it trains or its mode is not known (`.train()`, a class overriding train/eval)
    eval_path: tuple | None = None
    # a torch layer's parameters as torch registers them, when its constructor's arguments prove which exist:
    # ((attribute, dimension count or None), ...) in registration order (`named_parameters()` walks them)
    param_attrs: tuple | None = None


@dataclass(eq=False)
class Instance:
    """An instance of a plain (non-nn.Module) class of this file: a trainer, an agent, a buffer."""

    cls: object  # ClassInfo
    attrs: dict = field(default_factory=dict)
    name: str = ""


@dataclass(eq=False)
class FunctionRef:
    """A function, method or lambda of this file, callable with the caller's values (interpreted per call)."""

    node: cst.CSTNode  # FunctionDef or Lambda
    top: cst.CSTNode | None = None  # the top-level statement holding it (locates its block)
    enclosing: object = None  # the Scope a nested def or lambda closes over
    cls: object = None  # ClassInfo for methods
    bound: object = None  # the instance for bound methods
    kind: str = "function"  # "function" | "staticmethod" | "classmethod"


@dataclass(eq=False)
class ClassRef:
    """A class of this file used as a value (`Net`, `act=Block`)."""

    info: object  # ClassInfo


@dataclass(eq=False)
class QualRef:
    """A library object named by its qualified name (`torch.nn.ReLU`, `torch.sigmoid`) used as a value."""

    name: str


@dataclass(eq=False)
class Partial:
    """`functools.partial(f, *args, **kwargs)`."""

    func: object
    args: list
    kwargs: dict


@dataclass(eq=False)
class DictVal:
    """A dict whose string keys are known (`{"inplace": True}`, `dict(inplace=True)`, `**kwargs`)."""

    items: dict | None  # None: unknown content
    path: tuple = ()  # the branch path where a dict literal was made: item assignments under other branches unknown


@dataclass(eq=False)
class Special:
    """Library objects with a known protocol: a GradScaler, an Accelerator / Fabric, `super()`, a Function's ctx."""

    kind: str  # "grad_scaler", "accelerator", "super", "ctx"
    payload: object = None


@dataclass(eq=False)
class Optimizer:
    params: list  # Modules and leaf Tensors it updates
    fused: bool
    name: str = ""
    node: cst.CSTNode | None = None


@dataclass(eq=False)
class Seq:
    """A tuple or list of values (e.g. `out, h = rnn(x, h)`; `a, b = y.split(2)`; a list of layers)."""

    items: list | None  # None: unknown length, every element is `element`
    element: object | None = None
    path: tuple = ()  # the branch path where a list was created: appends under other branches make it unknown
    is_list: bool = False
    spread: list = field(default_factory=list)  # `*m.parameters()` spread into a literal of unknown length
    module_walk: bool = False  # `m.modules()` / `m.children()`: every module is visited (init loops are short)
    sizes_of: object = None  # `x.size()` / `x.shape` of a tensor whose shape is unknown: unpacking gives its `Dim`s


@dataclass(eq=False)
class ParamsOf:
    """`model.parameters()`: iterating it yields the model's parameters."""

    module: Module


class Number:
    """A Python number whose value the code does not make plain (a loop index over unknown data, `.item()`)."""

    def __init__(self, is_int: bool = True):
        self.is_int = is_int


class Dim(Number):
    """`c` of `n, c, h, w = x.size()`: the size of dimension `index` of tensor `of`, which has `rank` dimensions (the
    unpacking proves the rank). Compared by identity of `of`, never by value."""

    def __init__(self, of, index: int, rank: int):
        super().__init__(True)
        self.of, self.index, self.rank = of, index, rank


@dataclass(frozen=True)
class Literal:
    """A Python number, string, bool or None."""

    value: object


@dataclass(frozen=True)
class OptionDefault(Literal):
    """A bool parameter left at its default (`init_uniform=False`): a caller turns the other arm of an `if` on it
    on with one argument, so that arm is reachable code."""

    param: str = ""


class AnalysisCancelled(Exception):
    """Raised between statements when the caller's `cancelled()` says a newer request replaced this analysis."""


@dataclass(eq=False)
class Problem:
    """Something the analysis proved will go wrong; rules turn these into findings."""

    kind: str  # see facts.analysis for the kinds
    node: cst.CSTNode  # primary node
    stmt: cst.CSTNode | None = None
    tensor: Tensor | None = None
    write: Write | None = None
    save: Save | None = None
    use: cst.CSTNode | None = None  # the backward()/return that needs the saved tensor
    carry: cst.CSTNode | None = None  # assignment carrying state across iterations
    carry_target: str = ""
    carry_value: cst.CSTNode | None = None
    detail: dict = field(default_factory=dict)
    top: cst.CSTNode | None = None


# ---- what a value says about itself ----------------------------------------
def dimensions(t: Tensor) -> int | None:
    """How many dimensions `t` has, when proven: from its literal shape, or its dimension count alone."""
    return len(t.shape) if t.shape is not None else t.ndim


def truth(value) -> bool | None:
    """Python truthiness when the value makes it plain; None when it depends on data."""
    if isinstance(value, Literal):
        try:
            return bool(value.value)
        except Exception:  # noqa: BLE001
            return None
    if isinstance(value, (Module, Optimizer, FunctionRef, ClassRef, Instance, QualRef, Partial, ParamsOf)):
        if isinstance(value, Module) and value.container:
            return bool(value.children) if value.children is not None else None
        return True
    if isinstance(value, Seq) and value.items is not None:
        return bool(value.items)
    if isinstance(value, DictVal) and value.items is not None:
        return bool(value.items)
    return None


def is_none(value) -> bool | None:
    if isinstance(value, Literal):
        return value.value is None
    if isinstance(value, (Number, Tensor, Module, Optimizer, FunctionRef, ClassRef, Instance, Seq, DictVal, ParamsOf)):
        return False
    return None
