"""What gradguard knows about autograd's error texts (torch 1.x and 2.x), in English and Chinese.

Texts checked on torch 2.13 are in ../shared/autograd-facts.md; torch 1.x variants differ in
"has been used" vs "is being used" and in node names ("SelectBackward" vs "SelectBackward0").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_SHAPE = r"\[(?P<type>[\w.]+) \[(?P<shape>[\d, ]*)\]\]"


@dataclass(frozen=True)
class ErrorKind:
    id: str
    pattern: re.Pattern
    title: dict  # lang -> short name
    meaning: dict  # lang -> what it means
    fix: dict  # lang -> usual fix


def _k(id, pattern, title_en, title_zh, meaning_en, meaning_zh, fix_en, fix_zh) -> ErrorKind:
    return ErrorKind(id, re.compile(pattern), {"en": title_en, "zh": title_zh},
                     {"en": meaning_en, "zh": meaning_zh}, {"en": fix_en, "zh": fix_zh})


KINDS: list[ErrorKind] = [
    _k("saved-tensor-modified",
       r"one of the variables needed for gradient computation has been modified by an inplace operation"
       r"(?::\s*" + _SHAPE + r"(?:, which is output (?P<nr>\d+) of (?P<op>[\w:]+),)? is at version (?P<now>\d+); "
       r"expected version (?P<saved>\d+) instead)?",
       "a tensor saved for backward was modified in place",
       "为反向传播保存的张量被原地操作（in-place 操作）修改",
       "A backward node saved this tensor during the forward pass (its derivative needs the value). An in-place "
       "write after that bumped the tensor's version counter, so backward refuses to use the changed value. The "
       "error is raised at backward(), never at the line that did the write.",
       "前向计算时某个反向节点保存了这个张量（求导需要它的值）。之后的原地操作增加了它的版本计数器（`_version`），"
       "反向传播拒绝使用被改过的值。错误在 backward() 处抛出，而不是在写入的那一行。",
       "use the out-of-place form (`y = y + 1` instead of `y += 1`), clone() before writing, or move the write "
       "after backward(); for an optimizer step between a forward pass and a later backward() through it, run that "
       "forward again after step() (where the stepped model's own loss reads another model's output, pass it "
       ".detach()), and detach() state carried across iterations",
       "改用非原地写法（用 `y = y + 1` 代替 `y += 1`），写入前复制（`clone()`），或把写入移到 backward() 之后；"
       "如果是优化器更新（`optimizer.step()`）发生在前向计算与之后经过它的 backward() 之间，在 step() 之后重新运行这段前向计算"
       "（被更新模型自己的损失读取另一个模型的输出时，传入 `.detach()` 之后的值），并分离（`detach()`）跨迭代传递的状态"),
    _k("view-of-leaf-inplace",
       r"a view of a leaf Variable that requires grad (?:is being|has been) used in an in-place operation",
       "in-place write on a view of a leaf tensor that requires grad",
       "对需要梯度的叶子张量的视图做了原地操作",
       "The tensor is a view (indexing, slicing, .view(), .t(), ...) of a leaf tensor that requires grad, such as "
       "a parameter; writing it in place would change the leaf itself. `w[0] = 1.0` also takes this path.",
       "这个张量是某个需要梯度（requires_grad）的叶子张量（如参数）的视图（索引、切片、.view()、.t() 等），"
       "对它原地写入会修改叶子张量本身。`w[0] = 1.0` 也会触发这个错误。",
       "do the update under `with torch.no_grad():`, or clone() the leaf first and work on the copy",
       "在 `with torch.no_grad():` 中更新，或先复制（`clone()`）叶子张量再修改副本"),
    _k("leaf-inplace",
       r"a leaf Variable that requires grad (?:is being|has been) used in an in-place operation",
       "in-place write on a leaf tensor that requires grad",
       "对需要梯度的叶子张量（叶子节点）做了原地操作",
       "The tensor was created by you with requires_grad=True (or is an nn.Parameter); autograd cannot record an "
       "in-place change to it. The error is raised at the write itself.",
       "这个张量是用户创建的 requires_grad=True 的张量（或 nn.Parameter），autograd 无法记录对它的原地修改。"
       "错误就在写入的那一行抛出。",
       "parameter updates go under `with torch.no_grad():`; otherwise compute a new tensor (`w = w + 1`, unsafe: "
       "w is no longer a leaf) or modify a clone",
       "参数更新放在 `with torch.no_grad():` 中；否则计算新张量（`w = w + 1`，不安全：w 不再是叶子张量）或修改副本（`clone()`）"),
    _k("multi-output-view-base",
       r"Output (?P<nr>\d+) of (?P<op>\w+) is a view and its base or another view of its base has been modified "
       r"inplace",
       "a view from unbind/split/chunk was invalidated by an in-place write",
       "unbind/split/chunk 返回的视图被原地操作破坏",
       "unbind, split and chunk return several views of one tensor; autograd forbids in-place writes to them or "
       "to their base (even under no_grad), and complains when the result is used in backward.",
       "unbind、split、chunk 返回同一个张量的多个视图；autograd 禁止原地修改这些视图或它们的基张量"
       "（即使在 no_grad 中），在反向传播使用结果时报错。",
       "replace the in-place op by an out-of-place one (`a = a * 2`), index instead (`y[0]`), or torch.stack new pieces",
       "改用非原地写法（`a = a * 2`），改用索引（`y[0]`），或用 torch.stack 合并新张量"),
    _k("multi-output-view",
       r"Output (?P<nr>\d+) of (?P<op>\w+) is a view and is being modified inplace\. This view is the output of a "
       r"function that returns multiple views",
       "in-place write on a view returned by unbind/split/chunk",
       "对 unbind/split/chunk 返回的视图做了原地操作",
       "unbind, split and chunk return several views of one tensor; autograd cannot track an in-place write to "
       "one of them. The error is raised at the write.",
       "unbind、split、chunk 返回同一个张量的多个视图；autograd 无法跟踪对其中一个视图的原地操作。错误在写入处抛出。",
       "replace the in-place op by an out-of-place one (`a = a * 2`), index instead (`y[0]`), or torch.stack new pieces",
       "改用非原地写法（`a = a * 2`），改用索引（`y[0]`），或用 torch.stack 合并新张量"),
    _k("no-grad-view",
       r"A view was created in no_grad mode and is being modified inplace with grad mode enabled",
       "a view created under no_grad is modified with grad enabled",
       "在 no_grad 中创建的视图在启用梯度时被原地修改",
       "The view was taken inside `torch.no_grad()` and written outside it; autograd cannot tell whether the "
       "write should be tracked.",
       "视图在 `torch.no_grad()` 中创建，却在外面被原地修改；autograd 无法判断这次写入是否需要跟踪。",
       "put both the view and the write inside the no_grad block, or both outside",
       "把创建视图和写入都放在 no_grad 块内，或都放在块外"),
    _k("out-argument",
       # (?<!\w): try \w+ only where a word starts, so a long word run costs linear time, not quadratic
       r"(?<!\w)(?P<fn>\w{1,200})\(\): functions with out=\.\.\. arguments don't support automatic differentiation",
       "out=... used with tensors that require grad",
       "对需要梯度的张量使用了 out=... 参数",
       "Functions called with out= write their result into an existing tensor; autograd cannot record that.",
       "带 out= 的函数把结果写进已有张量，autograd 无法记录这种写入。",
       "assign the result instead (`o = torch.sin(w)`), or call it under torch.no_grad() if no gradient is wanted",
       "改为赋值（`o = torch.sin(w)`），或在不需要梯度时放到 torch.no_grad() 中"),
    _k("overlapping-write",
       r"more than one element of the written-to tensor refers to a single memory location",
       "in-place write on an expanded (self-overlapping) tensor",
       "对 expand 得到的（自重叠）张量做了原地操作",
       "The tensor comes from expand() (or similar); several elements share one memory location, so an in-place "
       "write is ambiguous.",
       "这个张量来自 expand() 等操作，多个元素共享同一块存储（底层内存），原地写入没有确定的结果。",
       "clone() (or .contiguous() / repeat) before writing",
       "写入前复制（`clone()`），或使用 .contiguous() / repeat"),
    _k("custom-function-view",
       r"Output (?P<nr>\d{1,9}) of (?P<op>\w{1,200}) is a view and is being modified inplace\. This view was created "
       r"inside a custom Function",
       "in-place write on a view returned by a custom autograd Function or a full backward hook",
       "对自定义 `autograd.Function`（或完整反向钩子）返回的视图做了原地操作",
       "The tensor was returned by a custom autograd.Function, possibly as its input returned as-is. "
       "`BackwardHookFunction` is the one torch inserts around a module that has `register_full_backward_hook` "
       "(Grad-CAM, pruning and profiling tools do this): the module's inputs and outputs become such views, so the "
       "next in-place op on them (`nn.ReLU(inplace=True)`, `out += x`) is refused.",
       "这个张量由自定义 `autograd.Function` 返回（可能是原样返回的输入）。`BackwardHookFunction` 是 torch 在注册了 "
       "`register_full_backward_hook` 的模块周围插入的函数（Grad-CAM、剪枝和性能分析工具常这样做）：模块的输入和输出"
       "都变成这种视图，紧随其后的原地操作（`nn.ReLU(inplace=True)`、`out += x`）会被拒绝。",
       "clone() the output before the in-place op, use the out-of-place form (`inplace=False`, `out = out + x`), or "
       "use a forward hook / tensor hook instead of register_full_backward_hook",
       "在原地操作前复制（`clone()`）输出，改用非原地写法（`inplace=False`、`out = out + x`），或用前向钩子 / 张量钩子"
       "代替 register_full_backward_hook"),
    _k("input-overlap",
       r"some elements of the input tensor and the written-to tensor refer to a single memory location",
       "in-place write whose input overlaps the written-to tensor",
       "原地写入的输入与被写入的张量共享内存",
       "The in-place op reads from a tensor that shares memory with the tensor it writes (for example "
       "`x[1] = x[1].t()`, or copying a transposed view of a tensor into itself), so the result would depend on "
       "the order in which elements are written.",
       "这个原地操作读取的张量与它写入的张量共享同一块存储（底层内存）（例如 `x[1] = x[1].t()`，"
       "或把一个张量的转置视图复制回它自己），结果会取决于元素写入的顺序。",
       "clone() the input first (`x[1] = x[1].t().clone()`), or build the result out of place (torch.stack / torch.cat)",
       "先复制（`clone()`）输入（`x[1] = x[1].t().clone()`），或用非原地方式构造结果（torch.stack / torch.cat）"),
    _k("backward-twice",
       r"Trying to backward through the graph a second time",
       "backward through a graph whose saved tensors were already freed",
       "对已经释放了保存张量的计算图再次反向传播",
       "backward() frees the tensors the graph saved. A second backward through the same graph (often: state "
       "carried across loop iterations without .detach(), so each new loss reaches the previous iteration's "
       "graph) finds them gone.",
       "backward() 会释放计算图保存的张量。再次对同一计算图反向传播时它们已不存在"
       "（常见原因：跨迭代传递的状态没有分离（`detach()`），新的损失会经过上一轮迭代的计算图）。",
       "detach() state carried across iterations (`h = h.detach()`); use retain_graph=True only if a second "
       "backward is really intended (and then do not modify saved tensors in between)",
       "分离跨迭代传递的状态（`h = h.detach()`）；只有确实需要第二次反向传播时才使用保留计算图（`retain_graph=True`），"
       "并且中间不要修改保存的张量"),
    _k("inference-inplace",
       r"Inplace update to inference tensor outside InferenceMode is not allowed",
       "in-place write on an inference tensor outside inference_mode",
       "在 inference_mode 之外原地修改推理张量",
       "Tensors created under torch.inference_mode() cannot be modified in place outside it.",
       "在 torch.inference_mode() 中创建的张量不能在其外部被原地修改。",
       "clone() it outside inference mode, or use torch.no_grad() instead of inference_mode()",
       "在推理模式外复制（`clone()`）它，或用 torch.no_grad() 代替 inference_mode()"),
    _k("inference-saved",
       r"Inference tensors cannot be saved for backward",
       "an inference tensor was needed for backward",
       "推理张量被用于需要保存的反向传播计算",
       "A tensor created under torch.inference_mode() was used by an op that must save it for backward. The error "
       "is raised at that forward op.",
       "在 torch.inference_mode() 中创建的张量被一个需要为反向传播保存它的操作使用，错误在这个前向操作处抛出。",
       "clone() it outside inference mode, or create it under torch.no_grad() instead",
       "在推理模式外复制（`clone()`）它，或改在 torch.no_grad() 中创建"),
    _k("inference-requires-grad",
       r"Setting requires_grad=True on inference tensor outside InferenceMode is not allowed",
       "requires_grad on an inference tensor",
       "对推理张量设置 requires_grad",
       "Tensors created under torch.inference_mode() cannot become leaves that require grad.",
       "在 torch.inference_mode() 中创建的张量不能变成需要梯度的叶子张量。",
       "clone() it first, or create it outside inference mode",
       "先复制（`clone()`），或在推理模式外创建"),
    _k("no-grad-fn",
       r"element (?P<nr>\d+) of tensors does not require grad and does not have a grad_fn",
       "backward on a tensor that is not part of a graph",
       "对不在计算图中的张量调用 backward",
       "Nothing that requires grad went into this tensor, or it was computed under no_grad / inference_mode / "
       "after .detach().",
       "这个张量的计算没有用到需要梯度的张量，或者是在 no_grad / inference_mode 中、或 detach() 之后计算的。",
       "make sure the parameters require grad and the loss is computed with grad enabled",
       "确认参数需要梯度（requires_grad），并在启用梯度时计算损失"),
    _k("non-scalar-backward",
       r"grad can be implicitly created only for scalar outputs",
       "backward() on a non-scalar tensor",
       "对非标量张量调用 backward()",
       "backward() without an argument needs a single-element loss.",
       "不带参数的 backward() 要求损失只有一个元素。",
       "reduce first (`loss.sum().backward()` / `.mean()`), or pass `gradient=`",
       "先归约（`loss.sum().backward()` / `.mean()`），或传入 `gradient=`"),
    # A warning, not an error: torch/distributed/fsdp/_fully_shard/_fsdp_state.py (torch 2.13).
    _k("fsdp2-view-output",
       r"FSDP2-wrapped module \((?P<module>[^()\n]{0,300})\) returned a view tensor\. An in-place op on this view",
       "an in-place op on a view returned by an FSDP2 (fully_shard) module",
       "对 FSDP2（fully_shard）模块返回的视图做了原地操作",
       "A module wrapped with fully_shard returned a view (its forward ends in `.view()`, a transpose, indexing, "
       "...). FSDP2 runs its pre-backward hook from that output; an in-place op on it (`out += y`) gives the output "
       "a new grad_fn, so the hook never runs and the parameters are not all-gathered before backward: backward "
       "then fails, or computes wrong gradients. Torch only warns; nothing is raised at the write.",
       "用 fully_shard 包装的模块返回了一个视图（forward 以 `.view()`、转置、索引等结尾）。FSDP2 从这个输出上运行它的"
       "反向前钩子；对它做原地操作（`out += y`）会给输出换上新的 grad_fn，钩子就不会运行，反向传播之前参数也不会被"
       "all-gather：反向传播随后失败，或算出错误的梯度。torch 只给出警告，写入处不会报错。",
       "use the out-of-place form on the module's output (`out = out + y`, not `out += y`), or `.clone()` the "
       "output before any in-place op",
       "对模块的输出改用非原地写法（用 `out = out + y` 代替 `out += y`），或在任何原地操作之前先复制输出（`.clone()`）"),
]

# Backward-node names as they appear in "output K of X" (torch 2.x drops "Backward", 1.x keeps it).
_VIEWS = {"Select", "Slice", "T", "Transpose", "Permute", "View", "Reshape", "Unsqueeze", "Squeeze", "Expand",
          "Diagonal", "Narrow", "Unfold", "Alias", "Unbind", "Split", "SplitWithSizes", "Chunk", "Indices",
          "Values", "ViewAs", "Real", "Imag", "Detach"}
_OUTPUT_SAVING = {"Exp", "Expm1", "Tanh", "Sigmoid", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "Softmax",
                  "LogSoftmax", "MkldnnRnnLayer", "CudnnRnn"}
_ARITH = {"Add", "Sub", "Mul", "Div", "Pow", "Clamp", "ClampMin", "ClampMax", "Addcmul", "Addcdiv", "Neg",
          "Fill", "Zero", "Copy", "Lerp", "MaskedFill", "IndexPut", "IndexAdd", "Scatter", "ScatterAdd"}
_MATMUL = {"Addmm", "Mm", "Bmm", "Matmul", "Linear", "Baddbmm", "Addbmm", "Conv", "ConvolutionBackward",
           "Convolution", "Embedding"}

OP_TEXT = {
    "AsStrided": {
        "en": "a view whose base (or another view of the same base) was modified in place, so "
              "autograd regenerated its grad_fn; typically a weight saved as weight.t() by nn.Linear / an RNN "
              "and then changed by optimizer.step(), or a slice x[i] of a tensor written at another index",
        "zh": "一个视图的基张量（或同一基张量的其他视图）被原地修改，autograd 重新生成了它的 grad_fn；"
              "常见于 nn.Linear / RNN 以 weight.t() 形式保存的权重随后被优化器更新（`optimizer.step()`）修改，"
              "或张量 x 的切片 x[i] 在另一个下标处被写入"},
    "CopySlices": {
        "en": "an index assignment `x[...] = v` done with grad enabled was the last in-place write on it",
        "zh": "最后一次原地写入是在启用梯度时执行的下标赋值 `x[...] = v`"},
    "view": {
        "en": "a view ({op_lower}) of another tensor; writing its base or any view of the same base counts",
        "zh": "另一个张量的视图（{op_lower}）；写入它的基张量或同一基张量的任何视图都算修改它"},
    "output": {
        "en": "the output of {op_lower}, which saves its output for backward; an in-place op on that output "
              "(e.g. nn.ReLU(inplace=True), `y *= 2`) invalidates it",
        "zh": "{op_lower} 的输出，{op_lower} 为反向传播保存了自己的输出；对这个输出的原地操作"
              "（如 nn.ReLU(inplace=True)、`y *= 2`）会使它失效"},
    "arith": {
        "en": "the tensor's current grad_fn; for a saved input this is the last in-place op done on it in "
              "grad mode (`{op_lower}_` / an augmented assignment), or the op that produced it",
        "zh": "张量当前的 grad_fn；对保存的输入来说，这是在启用梯度时对它做的最后一次原地操作"
              "（`{op_lower}_` 或增强赋值），或者是产生它的操作"},
    "matmul": {
        "en": "the output of a matrix product / layer ({op_lower})",
        "zh": "矩阵乘法或网络层（{op_lower}）的输出"},
    "other": {
        "en": "the op that produced the tensor (its grad_fn {node})",
        "zh": "产生这个张量的操作（grad_fn 为 {node}）"},
    "none": {
        "en": "no grad_fn: a leaf (a parameter or an input tensor) or a tensor that does not require grad; "
              "something updated it in place (optimizer.step(), a torch.no_grad() update, a data write)",
        "zh": "没有 grad_fn：叶子张量（参数或输入张量），或不需要梯度的张量；它被原地更新了"
              "（优化器更新 `optimizer.step()`、torch.no_grad() 中的更新、数据写入）"},
}


def normalize_op(raw: str) -> tuple[str, str]:
    """("SelectBackward0" | "SelectBackward" | "Select" | "torch::autograd::CopySlices") -> ("Select", node name)."""
    name = raw.split("::")[-1]
    name = re.sub(r"Backward\d*$", "", name)
    base = re.sub(r"\d+$", "", name) or name  # Clamp1 -> Clamp
    node = raw.split("::")[-1] if "::" in raw else (raw if "Backward" in raw else f"{raw}Backward0")
    return base, node


def op_category(op: str) -> str:
    if op == "AsStrided":
        return "AsStrided"
    if op == "CopySlices":
        return "CopySlices"
    if op in _VIEWS:
        return "view"
    if op in _OUTPUT_SAVING:
        return "output"
    if op in _ARITH:
        return "arith"
    if op in _MATMUL or op.startswith("Mkldnn") or op.startswith("Cudnn"):
        return "matmul"
    return "other"


def describe_op(raw: str | None, lang: str) -> tuple[str, str]:
    """(category, text) for the X of "output K of X" (None when the clause is absent)."""
    if not raw:
        return "none", OP_TEXT["none"][lang]
    op, node = normalize_op(raw)
    category = op_category(op)
    template = OP_TEXT[category][lang]
    return category, template.format(op=op, op_lower=_snake(op), node=node)


def _snake(op: str) -> str:
    special = {"T": "t()", "LogSoftmax": "log_softmax", "MkldnnRnnLayer": "RNN/LSTM layer", "Relu": "relu"}
    if op in special:
        return special[op]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower()


# Likely causes of "saved tensor modified", scored from the message and the traceback.
CAUSES = {
    "optimizer-step": {
        "en": "optimizer.step() ran between a forward pass and a backward() that still needed the old weights: "
              "state carried across iterations without .detach() together with backward(retain_graph=True) (an "
              "RNN hidden state), or two losses sharing one graph with a step in between (the GAN ordering bug)",
        "zh": "优化器更新（`optimizer.step()`）发生在前向计算与仍需要旧权重的 backward() 之间：跨迭代传递的状态没有"
              "分离（`detach()`）且使用了保留计算图（`retain_graph=True`）（RNN 隐状态），或两个损失共享一个计算图、"
              "中间执行了 step()（GAN 中常见的顺序错误）"},
    "index-loop": {
        "en": "an index write into a tensor whose elements were read into the graph earlier, e.g. "
              "`x[i+1] = f(x[i])` in a loop (x[i] and x[i+1] share x's version counter)",
        "zh": "向一个张量做下标写入，而它的元素之前已被读入计算图，例如循环中的 `x[i+1] = f(x[i])`"
              "（x[i] 与 x[i+1] 共享 x 的版本计数器）"},
    "output-inplace": {
        "en": "an in-place op on the output of an op that saves its output: nn.ReLU(inplace=True) / "
              "F.relu(..., inplace=True) after sigmoid/tanh/exp/softmax, or `y *= ...` on such an output",
        "zh": "对保存输出的操作的输出做了原地操作：在 sigmoid/tanh/exp/softmax 之后使用 nn.ReLU(inplace=True) / "
              "F.relu(..., inplace=True)，或对这种输出执行 `y *= ...`"},
    "input-inplace": {
        "en": "an in-place op (`add_`, `mul_`, `+=`, `x[...] = ...`) on a tensor after an op saved it "
              "(sin, mul, matmul, pow, a loss, ...)",
        "zh": "某个操作（sin、mul、matmul、pow、损失函数等）保存了张量之后，又对它做了原地操作（`add_`、`mul_`、`+=`、`x[...] = ...`）"},
    "leaf-update": {
        "en": "a parameter or input (a leaf) was updated in place after the forward pass and before backward(): "
              "optimizer.step(), or a manual update under torch.no_grad()",
        "zh": "前向计算之后、backward() 之前，参数或输入（叶子张量）被原地更新：优化器更新（`optimizer.step()`），"
              "或在 torch.no_grad() 中的手动更新"},
    "alias": {
        "en": "a write through an alias that shares the version counter: a view, or `.detach()` (note: `.data` "
              "shares storage but not the counter, so it gives no error but a wrong gradient)",
        "zh": "通过共享版本计数器的别名写入：视图，或分离（`detach()`）的结果（注意：`.data` 属性共享存储但不共享"
              "计数器，不会报错，但梯度会错）"},
}
