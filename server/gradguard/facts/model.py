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
    expr: cst.CSTNode | None = None  # the expression that produced the saved tensor (for messages)
    tensor: object = None  # the Tensor value (its name may be bound after the save)
    top: cst.CSTNode | None = None


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
    history: frozenset = frozenset()  # Saves that backward through this tensor needs
    view_of: "Tensor | None" = None  # base tensor when this is a view
    view_kind: str = ""  # "view", "multi", "expand", "detach", "index"
    view_in_no_grad: bool = False
    data_of: "Tensor | None" = None  # `x.data` results point at x
    is_parameter: bool = False
    module_params: "Module | None" = None  # tensors standing for a module's parameters
    grad_read: bool = False  # `.grad` of it is read somewhere: its writes are parameter updates
    shape: tuple | None = None  # when the code spells it out with literal sizes
    overlapping: bool = False  # an expand() that broadcasts: several elements share one memory location
    inference_call: cst.CSTNode | None = None  # created under this `torch.inference_mode()` call
    inference_top: cst.CSTNode | None = None
    # For hover: what was saved and written on this tensor's counter.
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def base(self) -> "Tensor":
        t = self
        while t.view_of is not None:
            t = t.view_of
        return t


@dataclass(eq=False)
class Module:
    """An nn.Module instance: a torch.nn layer, a Sequential, or a class of this file."""

    kind: str  # "torch.nn.Linear", "Net"
    row: object | None  # OpRow for torch.nn layers
    has_params: bool | None
    params_counter: Counter
    params_storage: Storage
    inplace: bool = False
    ctor: cst.CSTNode | None = None
    children: list["Module"] | None = None  # Sequential children, in order
    grads: bool | None = False  # whether .grad holds values (for optimizer.step())
    name: str = ""
    saves_output: bool = False
    saves_input: str = "none"
    top: cst.CSTNode | None = None


@dataclass(eq=False)
class Optimizer:
    params: list  # Modules and leaf Tensors it updates
    fused: bool
    name: str = ""
    node: cst.CSTNode | None = None


@dataclass(eq=False)
class Seq:
    """A tuple or list of values (e.g. `out, h = rnn(x, h)`; `a, b = y.split(2)`)."""

    items: list | None  # None: unknown length, every element is `element`
    element: object | None = None


@dataclass(eq=False)
class ParamsOf:
    """`model.parameters()`: iterating it yields the model's parameters."""

    module: Module


@dataclass(frozen=True)
class Literal:
    """A Python number, string, bool or None."""

    value: object


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
