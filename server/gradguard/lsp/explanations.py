"""A small library of hover explanations for autograd APIs, in English and Chinese.

Every sentence is a `Claim` that names a check in tests/test_lsp_explanations.py;
that test executes each claim under torch, and fails if a claim has no check.
So a sentence here is only true for the torch the tests ran with (2.13 CPU).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    en: str
    zh: str
    check: str  # name of the function in tests/test_lsp_explanations.py that proves it


@dataclass(frozen=True)
class Topic:
    key: str
    title: str  # code shown as the hover heading
    claims: tuple[Claim, ...]

    def markdown(self, lang: str, title: str | None = None) -> str:
        if lang == "zh":  # the title on its own line: a dash before a code span breaks the zh spacing rule
            from ..i18n import zh_spacing

            return f"**`{title or self.title}`**\n\n" + zh_spacing("".join(c.zh for c in self.claims))
        return f"**`{title or self.title}`** — " + " ".join(c.en for c in self.claims)


TOPICS: dict[str, Topic] = {}


def _topic(key: str, title: str, *claims: Claim) -> None:
    TOPICS[key] = Topic(key, title, claims)


_topic(
    "detach",
    ".detach()",
    Claim(
        "`t.detach()` returns a tensor that shares `t`'s storage, so writing one changes the other.",
        "`t.detach()` 返回的张量与 `t` 共享存储（底层内存），修改其中一个也会改变另一个。",
        "detach_shares_storage",
    ),
    Claim(
        "It also shares `t`'s version counter (`_version`): an in-place write through the detached "
        "tensor still makes backward fail if `t` was saved for backward.",
        "它还共享 `t` 的版本计数器（`_version`）：如果 `t` 是为反向传播保存的张量，"
        "通过分离（`detach()`）后的张量做原地操作（in-place 操作）仍会让反向传播报错。",
        "detach_shares_version_counter",
    ),
    Claim(
        "The result is a leaf with `requires_grad=False` and no `grad_fn`: no gradient flows through it.",
        "结果是 `requires_grad=False`、没有 `grad_fn` 的叶子张量（叶子节点）：梯度不会经过它回传。",
        "detach_is_leaf_without_grad",
    ),
)

_topic(
    "clone",
    ".clone()",
    Claim(
        "`t.clone()` copies the data into new storage with its own version counter, starting at 0.",
        "`t.clone()` 把数据复制（`clone()`）到新的存储中，并有自己的版本计数器（`_version`），从 0 开始。",
        "clone_new_storage_and_counter",
    ),
    Claim(
        "It stays in the computation graph (`grad_fn` is `CloneBackward0`), so gradients flow back to `t`; "
        "writing the clone in place does not touch `t`'s version.",
        "它仍在计算图中（`grad_fn` 为 `CloneBackward0`），梯度会回传给 `t`；对副本做原地操作不会改变 `t` 的版本。",
        "clone_stays_in_graph",
    ),
    Claim(
        "`t.detach().clone()` is an independent snapshot outside the graph.",
        "`t.detach().clone()` 是计算图之外的独立快照。",
        "detach_clone_snapshot",
    ),
)

_topic(
    "data",
    ".data",
    Claim(
        "`t.data` shares `t`'s storage but NOT its version counter: an in-place write through `.data` "
        "leaves `t._version` unchanged.",
        "`t.data` 与 `t` 共享存储，但不共享版本计数器（`_version`）：通过 `.data` 属性做原地操作不会增加 `t._version`。",
        "data_shares_storage_not_counter",
    ),
    Claim(
        "So modifying a tensor saved for backward through `.data` raises no error, and backward "
        "computes a silently wrong gradient.",
        "因此通过 `.data` 修改为反向传播保存的张量不会报错，反向传播会悄悄算出错误的梯度。",
        "data_silent_wrong_gradient",
    ),
    Claim(
        "Use `with torch.no_grad(): t.mul_(...)` instead: the write is not recorded but still bumps the version.",
        "请改用 `with torch.no_grad(): t.mul_(...)`：这次写入不记录到计算图，但仍会增加版本号。",
        "no_grad_inplace_bumps_version",
    ),
)

_topic(
    "requires_grad",
    "requires_grad",
    Claim(
        "`requires_grad=True` asks autograd to compute a gradient for this tensor; a tensor you create with it "
        "is a leaf, and `backward()` fills its `.grad`.",
        "`requires_grad=True` 表示需要梯度（requires_grad）：用它创建的张量是叶子张量（叶子节点），`backward()` 会填充它的 `.grad`。",
        "requires_grad_leaf_gets_grad",
    ),
    Claim(
        "Only floating-point and complex tensors can require grad.",
        "只有浮点和复数类型的张量可以需要梯度。",
        "requires_grad_float_only",
    ),
    Claim(
        "The flag can only be changed on leaves: `requires_grad_(False)` on a computed tensor raises "
        "\"you can only change requires_grad flags of leaf variables\"; use `detach()` instead. "
        "`requires_grad_()` does not bump the version counter.",
        "只能修改叶子张量的这个标志：对计算得到的张量调用 `requires_grad_(False)` 会报错 "
        "`you can only change requires_grad flags of leaf variables`，请改用 `detach()`。"
        "`requires_grad_()` 不会增加版本计数器（`_version`）。",
        "requires_grad_only_on_leaves",
    ),
    Claim(
        "An in-place operation on a leaf that requires grad raises at once: "
        "\"a leaf Variable that requires grad is being used in an in-place operation.\"",
        "对需要梯度的叶子张量做原地操作（in-place 操作）会立即报错："
        "`a leaf Variable that requires grad is being used in an in-place operation.`",
        "leaf_inplace_raises",
    ),
)

_topic(
    "is_leaf",
    "is_leaf",
    Claim(
        "`is_leaf` is True for tensors no recorded op produced: tensors you create (with or without "
        "`requires_grad`), `nn.Parameter`s, `detach()` results and results computed under `torch.no_grad()`.",
        "`is_leaf` 对不是由被记录的运算产生的张量为 `True`：你创建的张量（无论是否需要梯度）、`nn.Parameter`、"
        "`detach()` 的结果，以及在 `torch.no_grad()` 下计算的结果。",
        "is_leaf_cases",
    ),
    Claim(
        "The result of a recorded op on a tensor that requires grad is a non-leaf with a `grad_fn`; "
        "its `.grad` stays None after backward unless you call `retain_grad()`.",
        "对需要梯度的张量做被记录的运算，得到的是带 `grad_fn` 的非叶子张量；除非调用 `retain_grad()`，"
        "反向传播后它的 `.grad` 仍为 `None`。",
        "non_leaf_grad_none",
    ),
    Claim(
        "Only leaves that require grad get `.grad` filled, and they cannot be modified in place outside `torch.no_grad()`.",
        "只有需要梯度的叶子张量会得到 `.grad`，并且在 `torch.no_grad()` 之外不能对它们做原地操作。",
        "only_grad_leaves_get_grad",
    ),
)

_topic(
    "grad_fn",
    "grad_fn",
    Claim(
        "`grad_fn` is the backward node that produced the tensor; it is None for leaves.",
        "`grad_fn` 是产生该张量的反向传播节点；叶子张量的 `grad_fn` 为 `None`。",
        "grad_fn_none_for_leaves",
    ),
    Claim(
        "An in-place op on a non-leaf replaces it: `y = w * 2` has `MulBackward0`, after `y.add_(1)` "
        "`AddBackward0`, after `y[0] = 0` `CopySlices`.",
        "对非叶子张量的原地操作会替换它：`y = w * 2` 的是 `MulBackward0`，`y.add_(1)` 之后是 `AddBackward0`，"
        "`y[0] = 0` 之后是 `CopySlices`。",
        "grad_fn_rebased_by_inplace",
    ),
)

_topic(
    "retain_graph",
    "retain_graph=",
    Claim(
        "By default `backward()` frees the tensors saved in the graph; a second backward through ops that "
        "saved tensors raises \"Trying to backward through the graph a second time\".",
        "默认情况下 `backward()` 会释放计算图中保存的张量；再次经过保存了张量的运算做反向传播会报错 "
        "`Trying to backward through the graph a second time`。",
        "second_backward_raises",
    ),
    Claim(
        "`retain_graph=True` keeps them, but they are still version-checked: an `optimizer.step()` between the "
        "two backward calls modifies the weights in place, and if the graph saved them (a layer whose input "
        "requires grad saves its weight) the second backward raises the in-place error.",
        "保留计算图（`retain_graph=True`）会留下这些张量，但仍会检查版本：两次反向传播之间的优化器更新"
        "（`optimizer.step()`）会原地修改权重；如果计算图保存了这些权重（输入需要梯度的层会保存它的权重），"
        "第二次反向传播就会报原地操作错误。",
        "retain_graph_step_raises",
    ),
    Claim(
        "For recurrent state carried across iterations, `detach()` the state instead: each iteration's "
        "backward then stays within its own graph.",
        "对于跨迭代传递的循环状态，请对状态调用 `detach()`：这样每次迭代的反向传播只在自己的计算图内进行。",
        "carried_state_detach_works",
    ),
)

_topic(
    "no_grad",
    "torch.no_grad()",
    Claim(
        "Inside `torch.no_grad()` ops are not recorded: results have `requires_grad=False` and no `grad_fn`.",
        "在 `torch.no_grad()` 中运算不会被记录：结果的 `requires_grad=False`，没有 `grad_fn`。",
        "no_grad_not_recorded",
    ),
    Claim(
        "In-place writes to a leaf that requires grad are allowed there, and still bump its version counter.",
        "在其中可以对需要梯度的叶子张量做原地操作，但仍会增加它的版本计数器（`_version`）。",
        "no_grad_inplace_bumps_version",
    ),
)

_topic(
    "inference_mode",
    "torch.inference_mode()",
    Claim(
        "Tensors created under `torch.inference_mode()` are inference tensors: outside inference mode they "
        "cannot be modified in place, and they cannot be saved for backward.",
        "在 `torch.inference_mode()` 下创建的是推理张量：离开推理模式后不能对它们做原地操作，也不能为反向传播保存它们。",
        "inference_tensor_restrictions",
    ),
    Claim(
        "`t.clone()` outside inference mode gives a normal tensor; or use `torch.no_grad()` instead.",
        "在推理模式之外调用 `t.clone()` 可以得到普通张量；或者改用 `torch.no_grad()`。",
        "inference_clone_is_normal",
    ),
)

_topic(
    "set_detect_anomaly",
    "torch.autograd.set_detect_anomaly",
    Claim(
        "Anomaly detection records the forward stack of every op; when backward fails it first warns "
        "\"Error detected in ...Backward\" with the forward line of the op whose backward failed.",
        "异常检测（`set_detect_anomaly`）会记录每个运算的前向调用栈；反向传播失败时，它先发出警告 "
        "`Error detected in ...Backward`，并给出出错的反向节点对应的前向代码行。",
        "anomaly_shows_forward_line",
    ),
    Claim(
        "It does not show the line that did the in-place write.",
        "它不会给出做原地操作的那一行。",
        "anomaly_hides_write_line",
    ),
)

_topic(
    "_version",
    "_version",
    Claim(
        "`t._version` is the version counter: every in-place write (`add_`, `+=`, `t[i] = ...`, `out=t`) adds 1.",
        "`t._version` 是版本计数器：每次原地操作（`add_`、`+=`、`t[i] = ...`、`out=t`）都会加 1。",
        "version_counts_writes",
    ),
    Claim(
        "Views and `detach()` results share their base's counter.",
        "视图和 `detach()` 的结果与其基张量共享计数器。",
        "views_share_counter",
    ),
    Claim(
        "An op that saves a tensor for backward records its version; if it changed by backward time, backward "
        "raises \"one of the variables needed for gradient computation has been modified by an inplace "
        "operation: ... is at version N; expected version M instead.\"",
        "为反向传播保存张量的运算会记下它的版本；如果到反向传播时版本变了，就会报错 "
        "`one of the variables needed for gradient computation has been modified by an inplace "
        "operation: ... is at version N; expected version M instead.`",
        "saved_version_mismatch_raises",
    ),
)

_topic(
    "inplace",
    ".add_()",
    Claim(
        "A method ending in `_` is an in-place operation: it writes into the tensor's storage and bumps its "
        "version counter.",
        "以 `_` 结尾的方法是原地操作（in-place 操作）：它直接写入张量的存储并增加版本计数器（`_version`）。",
        "inplace_method_bumps_version",
    ),
    Claim(
        "On a leaf that requires grad it raises at once (unless inside `torch.no_grad()`); if the tensor or a "
        "view of it was saved for backward, backward raises \"modified by an inplace operation\".",
        "对需要梯度的叶子张量，它会立即报错（`torch.no_grad()` 中除外）；如果该张量或它的视图已为反向传播保存，"
        "反向传播会报错 `modified by an inplace operation`。",
        "inplace_method_errors",
    ),
    Claim(
        "The out-of-place form (`t = t.add(x)`) makes a new tensor and leaves the saved one intact.",
        "非原地写法（`t = t.add(x)`）会创建新张量，保存的张量保持不变。",
        "out_of_place_keeps_saved",
    ),
)

# Names whose hover shows a topic, keyed by the identifier under the cursor.
_NAME_TOPICS = {
    "detach": "detach",
    "clone": "clone",
    "data": "data",
    "requires_grad": "requires_grad",
    "requires_grad_": "requires_grad",
    "is_leaf": "is_leaf",
    "grad_fn": "grad_fn",
    "retain_graph": "retain_graph",
    "no_grad": "no_grad",
    "inference_mode": "inference_mode",
    "set_detect_anomaly": "set_detect_anomaly",
    "detect_anomaly": "set_detect_anomaly",
    "_version": "_version",
}
# Attribute names that need a dot before them to mean the torch API (a local
# variable called `data` is not `Tensor.data`).
_NEEDS_DOT = {"detach", "clone", "data", "requires_grad_", "is_leaf", "grad_fn", "_version"}
_INPLACE = re.compile(r"[a-z][a-z0-9_]*[a-z0-9]_")
# Dunder-free names ending in `_` that are not tensor methods.
_NOT_INPLACE = {"requires_grad_", "share_memory_"}


def topic_for(word: str, before: str, after: str) -> tuple[Topic, str] | None:
    """The topic for the identifier `word`, given the text just before and after it
    on its line. Returns the topic and the heading to show, or None."""
    dotted = before.rstrip().endswith(".")
    key = _NAME_TOPICS.get(word)
    if key is not None:
        if word in _NEEDS_DOT and not dotted:
            return None
        if word == "retain_graph" and not after.lstrip().startswith("="):
            return None
        topic = TOPICS[key]
        heading = topic.title
        if word == "requires_grad_":
            heading = ".requires_grad_()"
        elif word == "detect_anomaly":
            heading = "torch.autograd.detect_anomaly"
        return topic, heading
    if dotted and word not in _NOT_INPLACE and _INPLACE.fullmatch(word) and after.lstrip().startswith("("):
        return TOPICS["inplace"], f".{word}()"
    return None
