"""Turning what the tracer saw into findings: text (English / Simplified Chinese) and JSON.

Only this module decides wording; ``core`` passes facts (lines, versions, ops).
"""
from __future__ import annotations

import ast
import contextvars
import linecache
import os
import re
import unicodedata
from dataclasses import dataclass, field

from ..explain import advice

# Backward nodes of ops that save their *output* (shared/autograd-facts.md section 3).
_OUTPUT_SAVING = {
    "ExpBackward0", "Expm1Backward0", "TanhBackward0", "SigmoidBackward0", "SqrtBackward0",
    "RsqrtBackward0", "ReciprocalBackward0", "ReluBackward0", "SoftmaxBackward0",
    "LogSoftmaxBackward0", "MkldnnRnnLayerBackward0",
}


@dataclass
class TraceFinding:
    kind: str  # "stale-save" | "silent-write" | "backward-twice" | "torch-error"
    severity: str  # "error" | "warning"
    message: str  # one line, in the tracer's language
    save: dict | None  # {"file", "line", "node"}: where the tensor was saved / the graph was built
    write: dict | None  # {"file", "line", "op"}
    tensor: dict | None  # {"shape", "dtype"}
    versions: dict | None  # {"saved", "now"}
    why: str = ""
    fix: str = ""
    text: str = ""  # the full report, printed once
    error_text: str = ""  # the RuntimeError message (torch's text + one gradguard line)
    error: str = ""  # torch-error: the error's id in gradguard explain's catalog ("leaf-inplace", ...)
    raised: dict | None = None  # {"file", "line", "op"}: the line where torch raised (torch-error)
    freed_by: dict | None = None  # backward-twice: {"file", "line", "call"} of the backward() that freed the graph
    backward: dict | None = None  # backward-twice: {"file", "line", "call"} of the failing backward()
    carry: dict | None = None  # backward-twice: {"file", "line", "code"} state carried without detach()
    module: dict | None = None  # {"file", "line", "module"}: where the torch module that wrote was constructed
    created: dict | None = None  # inference errors: {"file", "line", "op"} where inference_mode made the tensor
    i18n: dict = field(default_factory=dict)  # lang -> {"message", "why", "fix"}
    count: int = 1  # how many times the program hit it (a loop repeats a finding)
    rule: dict | None = None  # the static rule finding whose recipe `fix` gives (advice.RuleAdvice.to_json)
    seen: str = ""  # "write": seen at the write into a live save, not raised by a backward() (seen_at_write)

    def key(self) -> tuple:
        def at(site):
            return (site.get("file"), site.get("line")) if site else None
        return (self.kind, self.error, at(self.save), at(self.write), at(self.raised), at(self.backward))

    def to_json(self) -> dict:
        doc = {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "save": self.save,
            "write": self.write,
            "tensor": self.tensor,
            "versions": self.versions,
            "why": self.why,
            "fix": self.fix,
        }
        for name in ("error", "raised", "freed_by", "backward", "carry", "module", "created", "rule", "seen"):
            value = getattr(self, name)
            if value:
                doc[name] = value
        doc["count"] = self.count
        doc["i18n"] = self.i18n
        return doc


LANGS = ("en", "zh")


def _in_all_languages(builder, lang: str, /, **kwargs):
    """Build a finding's texts in every language: trace.json carries them all, so the language server
    shows runtime findings in its own language whatever `--lang` the trace ran with."""
    parts = {}
    for code in LANGS:
        token = _PLACE_LANG.set(code)  # notebook places are worded per language (_loc)
        try:
            parts[code] = builder(lang=code, **kwargs)
        finally:
            _PLACE_LANG.reset(token)
    chosen = parts[lang if lang in parts else "en"]
    i18n = {code: {"message": p["message"], "why": p["why"], "fix": p["fix"]} for code, p in parts.items()}
    return chosen, i18n


_RULE_FINDINGS: dict = {}  # (path, lang, text) -> the static findings of that file, checked once per run


def _rule_advice(lang: str, file: str | None, line: int | None, others=()) -> advice.RuleAdvice | None:
    """The static rule's recipe for what the tracer saw at `line` of `file` (with `others`: the save and backward()
    lines in the same file), when the file is a readable program and a finding names those lines."""
    if not file or not line:
        return None
    path = os.path.abspath(file)
    if not os.path.isfile(path):  # a notebook cell or generated code: no file the rules could fix
        return None
    source = _read_source(path)
    if source is None:
        return None
    key = (path, lang, source)
    if key not in _RULE_FINDINGS:
        if len(_RULE_FINDINGS) >= 16:
            _RULE_FINDINGS.pop(next(iter(_RULE_FINDINGS)))
        _RULE_FINDINGS[key] = advice.findings_of(source, path, lang)
    return advice.match(_RULE_FINDINGS[key], path, line, tuple(n for n in others if n), source, lang)


def document(findings: list[TraceFinding], argv: list[str] | None = None, status: int | None = None) -> dict:
    doc = {"version": 1, "findings": [f.to_json() for f in findings]}
    if argv is not None:
        doc["argv"] = list(argv)
    if status is not None:
        doc["exit_status"] = status
    return doc


# ---------------------------------------------------------------------------------------------
# Small helpers


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _source(path: str, line: int) -> str:
    return linecache.getline(path, line).strip() if line > 0 else ""


def _shape(tensor) -> list[int]:
    return [int(s) for s in tensor.shape]


def _dtype(tensor) -> str:
    return str(tensor.dtype).replace("torch.", "")


def _nth(n: int, lang: str) -> str:
    return f"#{n}" if lang == "en" else f"第 {n} 次"


T = {
    "en": {
        "stale_title": "a tensor saved for backward was modified in place before backward used it",
        "silent_title": "a tensor saved for backward was overwritten without a version bump: the gradient is silently wrong",
        "tensor": "tensor", "saved": "saved", "written": "written", "now": "now", "why": "why", "fix": "fix",
        "saved_for": "saved for {node}",
        "unknown_node": "(backward node unknown)",
        "version_at_save": "version {v}",
        "write_by": "by {op}{via} (version {a} -> {b})",
        "write_by_nobump": "by {op}{via} (its version counter stayed at {a})",
        "via": " in {mod}",
        "write_unseen": "not seen by the watcher ({n} in-place write(s) happened: inside compiled code, or through an alias gradguard cannot see)",
        "now_line": "version {now}; backward expected version {saved}",
        "msg_stale": "{shape} {dtype} tensor saved for {node} at {save} (version {saved}) was modified in place at {write} by {op}{via} (now version {now})",
        "msg_stale_unseen": "{shape} {dtype} tensor saved for {node} at {save} (version {saved}) was modified in place (now version {now}); the write was not seen",
        "msg_silent": "{shape} {dtype} tensor saved for {node} at {save} was overwritten at {write} by {op} without a version bump; backward used the new values",
        "why_optim_retained": (
            "the graph built at line {save} in an earlier iteration (before backward() call {k}) is still alive, and "
            "backward() call {n}{bline} went through it again{through}. That graph still needs the weights as they were before "
            "the optimizer step at line {write} changed them in place. The assignment `{carry_stmt}` is not an "
            "in-place operation; the optimizer step is the write."),
        "why_optim_retained_nocarry": (
            "the graph built at line {save} in an earlier iteration (before backward() call {k}) is still alive, and "
            "backward() call {n}{bline} went through it again. That graph still needs the weights as they were before the "
            "optimizer step at line {write} changed them in place."),
        "through": " (it is reached through `{var}`, assigned from `{src}` at line {line} without .detach())",
        "through_self": " (it is reached through `{var}`, which line {line} binds to its own result and feeds back without .detach())",
        "fix_optim_retained": "detach the state carried across iterations (`{detach}`), so that each backward() goes only through its own iteration's graph",
        "fix_optim_retained_nocarry": ("detach the state carried from one iteration to the next where the loop re-binds it, so "
                                       "that each backward() goes only through its own iteration's graph"),
        "why_optim_shared": (
            "the graph built at line {save} was used by backward() at {b1} (with retain_graph=True), then the "
            "optimizer step at line {write} changed the weights in place, and backward() at {b2} goes through "
            "the same graph and needs the old weights (the GAN ordering bug)"),
        "fix_optim_shared": ("after the step at line {write}, run the forward of line {save} again and compute the later "
                             "loss from it; where the stepped model's own loss reads another model's output, pass it "
                             "`.detach()` (the standard GAN loop). `.detach()` alone still raises, and running every "
                             "backward() before the steps makes a step use the other loss's gradient too"),
        "why_optim": ("the optimizer step at line {write} changed the weights in place after the forward pass at line "
                      "{save} and before this backward() needed them (e.g. a GAN whose generator step runs before "
                      "the discriminator loss's backward on the same graph)"),
        "fix_optim": ("after the step at line {write}, run the forward of line {save} again and compute the later loss "
                      "from it; where the stepped model's own loss reads another model's output, pass it `.detach()`. "
                      "Moving that backward() before the step instead makes the step use its gradient too"),
        "why_same_line": ("line {line} both saves a tensor for backward and then writes into the same storage: in a loop "
                          "such as `x[i+1] = f(x[i])`, x[i] and x[i+1] are views of x and share its version counter, so "
                          "each write invalidates the previous save"),
        "fix_same_line": "collect the results in a list and torch.stack() them, or clone() the slice before using it (`torch.sin(x[i].clone())`)",
        "why_same_line_aug": ("on line {line}, the right-hand side read the tensor and {node} saved it for backward; then "
                              "the augmented assignment ({op}) wrote its result into that same tensor"),
        "fix_same_line_aug": "write the assignment out of place (`x = x + f(x)` instead of `x += f(x)`), so the saved tensor keeps its values",
        "why_same_line_call": "on line {line}, {node} saved a tensor for backward and then {op} wrote into it in place",
        "why_output": "{node} saves its output for backward; the in-place {op} at line {write} overwrote that output",
        "fix_output": "use the out-of-place form (`inplace=False`, `y = y * 2` instead of `y *= 2`)",
        "why_view": ("the saved tensor is a view: a write to its base, to another view of the same base, or through "
                     "`.detach()` bumps the shared version counter"),
        "why_plain": "the tensor was modified in place after line {save} saved it and before backward used it",
        "fix_plain": "use the out-of-place form (`y = y + 1`), or clone() before the in-place write",
        "why_unseen": "versions say {n} in-place write(s) happened after the save, but the watcher did not see them",
        "why_fused": ("a fused optimizer step (fused=True) writes the parameters without bumping their version "
                      "counter, so autograd cannot notice that backward now reads the updated weights"),
        "fix_fused": "call backward() for every graph before step(), or use foreach=False / foreach=True so that the error is raised",
        "why_data": ("`.data` shares the storage but not the version counter, so autograd cannot notice that "
                     "backward now reads the overwritten values"),
        "fix_data": "do the write under `with torch.no_grad():` on the tensor itself (not `.data`), or after backward",
        "why_silent": ("the storage was written through an alias that does not share the version counter "
                       "(`.data`, a fused optimizer, ...): autograd will not raise"),
        "warn_stale": ("gradguard trace: warning [stale-save]: {op} at {write} modified a {shape} {dtype} tensor that a live "
                       "graph saved at {save} (version {saved} -> {now}); backward through that graph would now fail"),
        "warn_silent": ("gradguard trace: warning [silent-write]: {op} at {write} wrote a {shape} {dtype} tensor that a live "
                        "graph saved at {save}, without a version bump; backward through that graph would use the new values silently"),
        "error_prefix": "gradguard trace: error [stale-save]",
        "warning_prefix": "gradguard trace: warning [silent-write]",
        "warn_stale_prefix": "gradguard trace: warning [stale-save]",
        "summary": "gradguard trace: {n} finding(s), written to {path}",
        "error_at": "gradguard trace: error", "colon": ": ",
        "detach_or_tuple": "{a}` or, for an (h, c) tuple, `{b}",
        "sep": "; ", "created": "created", "module": "module", "called_from": "called from {locs}", "via_line": " (called from line {n})", "line_ref": "line {n}",
        "needed_by": "needed by backward() at {loc} (call {n})",
        "msg_created": "the inference tensor was created under inference_mode at {loc}",
        "msg_scope": " (inference mode entered at line {line})",
        "msg_module": "the write is done by the {module} created at {loc}",
        "module_row": "{module} created at {loc}",
        "why_module": ("during the forward call at line {save}, {node} saved a tensor for backward, and then the "
                       "{module} created at line {line} overwrote that tensor in place"),
        "fix_module": "create that module with inplace=False (line {line}), or clone() its input",
        "line": "line", "op": "op", "torch": "torch",
        "msg_raised": "{title} at {loc} ({op}); torch raised the error at this line",
        "msg_raised_backward": "{title} at {loc} ({op}); torch accepted the write and raised later, in backward() at {bloc}",
        "raised_in_backward": "torch raised in backward() at {loc}",
        "bw_call": "backward() at {loc} (call {n})",
        "note_compiled": ("gradguard trace: note: torch.compile at {loc}: compiled code runs without the tracer (its "
                          "saved tensors and in-place writes are not traced). To trace it, run it eagerly: "
                          "`gradguard trace --eager ...` (or TORCH_COMPILE_DISABLE=1, or "
                          "`torch._dynamo.config.disable = True` before the first compiled call)"),
        "note_untraced": "gradguard trace: note: not traced (autograd still checked versions there itself): {regions}",
        "region_torch.func": "torch.func transform at {loc}", "region_hooks-disabled": "disable_saved_tensors_hooks at {loc}",
        "region_compiled": "code compiled by torch.compile at {loc}", "times": " ({n} times)",
        "bw_line": "backward() at line {line} (call {n})", "paren": "({})",
        "call": "call {n}",
        "graph": "graph", "freed": "freed", "again": "again", "carried": "carried",
        "twice_title": "backward through a graph whose saved tensors an earlier backward() freed",
        "msg_twice": "{cur} went through the graph built at {build} ({node}), which {freed} had already freed",
        "msg_twice_nofree": "{cur} went through the graph built at {build} ({node}), whose saved tensors an earlier backward() freed",
        "msg_twice_unknown": "{cur} went through a graph whose saved tensors an earlier backward() freed",
        "why_twice": ("{freed} freed the saved tensors of the graph built at line {build} (backward() frees them "
                      "unless retain_graph=True), and {cur} needs them again"),
        "why_twice_loop": ("{freed} freed the saved tensors of the graph built at line {build} (backward() frees "
                           "them unless retain_graph=True); the same line runs again ({call}) and reaches that old "
                           "graph"),
        "why_twice_nofree": "an earlier backward() freed this graph's saved tensors, and {cur} needs them again",
        "why_twice_carry": ("; it is reached through `{var}`, assigned from `{src}` at line {line} (`{stmt}`) without "
                            ".detach(), so each new loss also reaches the previous iteration's graph of line {build}"),
        "why_twice_carry_self": ("; it is reached through `{var}`, which line {line} binds to its own result and feeds "
                                 "back without .detach(), so each new loss also reaches the previous iteration's graph"),
        "fix_twice_carry": ("detach the state carried across iterations (`{detach}`); retain_graph=True "
                            "only if backpropagating through the old iterations is really intended"),
        "why_twice_state": ("; it is reached through `self.{attr}` of {cls}, which line {line} assigns (`{stmt}`) "
                            "without .detach(): the module keeps that graph from one backward() to the next"),
        "fix_twice_state": ("store a detached tensor in `self.{attr}` (line {line}: `self.{attr} = ....detach()`); "
                            "retain_graph=True only if backpropagating into the old graph is really intended"),
        "why_twice_before_loop": ("the graph was built at line {build}, before the loop at line {loop}, and the "
                                  "backward() of every iteration goes through it: {freed} freed its saved tensors, "
                                  "and {call} finds them gone"),
        "fix_twice_before_loop": ("build it inside the loop, or detach it where it is built ({detach}) if no gradient "
                                  "should flow into it; retain_graph=True only if every iteration really needs to "
                                  "backpropagate into it"),
        "detach_it": "`{var} = {var}.detach()`", "detach_generic": "`.detach()`",
        "fix_twice": ("detach() tensors carried from one backward() to the next, or recompute the forward pass; "
                      "retain_graph=True only if both backward() calls really need the same graph"),
    },
    "zh": {
        "stale_title": "为反向传播保存的张量在反向传播使用之前被原地操作（in-place 操作）修改",
        "silent_title": "为反向传播保存的张量被改写，但版本计数器（`_version`）没有增加：梯度会悄悄算错",
        "tensor": "张量", "saved": "保存", "written": "写入", "now": "现在", "why": "原因", "fix": "修复",
        "saved_for": "为 {node} 保存",
        "unknown_node": "（反向节点未知）",
        "version_at_save": "版本 {v}",
        "write_by": "由 {op}{via}写入（版本 {a} -> {b}）",
        "write_by_nobump": "由 {op}{via}写入（版本计数器仍为 {a}）",
        "via": "（在 {mod} 中）",
        "write_unseen": "监视器没有看到这次写入（发生了 {n} 次原地操作：在编译代码中，或通过 gradguard 看不到的别名）",
        "now_line": "版本 {now}；反向传播期望版本 {saved}",
        "msg_stale": "在 {save} 为 {node} 保存的 {shape} {dtype} 张量（版本 {saved}）在 {write} 被 {op}{via} 原地修改（现在版本 {now}）",
        "msg_stale_unseen": "在 {save} 为 {node} 保存的 {shape} {dtype} 张量（版本 {saved}）被原地修改（现在版本 {now}）；未看到写入位置",
        "msg_silent": "在 {save} 为 {node} 保存的 {shape} {dtype} 张量在 {write} 被 {op} 改写，版本没有增加；反向传播使用了新值",
        "why_optim_retained": (
            "第 {save} 行在之前的迭代中（{k}反向传播 backward() 之前）构建的计算图仍然存活，{n}反向传播{bline}又经过了它{through}。"
            "这个计算图仍然需要第 {write} 行优化器更新（`optimizer.step()`）原地修改之前的权重。"
            "赋值 `{carry_stmt}` 不是原地操作；优化器更新才是写入。"),
        "why_optim_retained_nocarry": (
            "第 {save} 行在之前的迭代中（{k}反向传播 backward() 之前）构建的计算图仍然存活，{n}反向传播{bline}又经过了它。"
            "这个计算图仍然需要第 {write} 行优化器更新（`optimizer.step()`）原地修改之前的权重。"),
        "through": "（通过 `{var}` 到达：它在第 {line} 行由 `{src}` 赋值，没有分离（`detach()`））",
        "through_self": "（通过 `{var}` 到达：第 {line} 行把自己的结果赋给它，没有分离（`detach()`）就传回下一轮）",
        "fix_optim_retained": "分离跨迭代传递的状态（`{detach}`），让每次 backward() 只经过本轮迭代自己的计算图",
        "fix_optim_retained_nocarry": "在循环重新绑定跨迭代传递的状态的地方分离它（`detach()`），让每次 backward() 只经过本轮迭代自己的计算图",
        "why_optim_shared": (
            "第 {save} 行构建的计算图先被{b1}的 backward()（保留计算图 `retain_graph=True`）使用，随后第 {write} 行的"
            "优化器更新（`optimizer.step()`）原地修改了权重，而{b2}的 backward() 又经过同一个计算图，需要旧的权重"
            "（GAN 中常见的顺序错误）"),
        "fix_optim_shared": ("在第 {write} 行的 step 之后重新运行第 {save} 行的前向计算，并由它计算之后的损失；被更新模型自己的损失"
                             "读取另一个模型的输出时，传入 `.detach()` 之后的值（标准的 GAN 训练循环）。只加 `.detach()` 仍会报错；"
                             "把所有 backward() 都放到 step 之前，会让某一步的更新也用上另一个损失的梯度"),
        "why_optim": ("第 {write} 行的优化器更新（`optimizer.step()`）在第 {save} 行的前向计算之后、本次反向传播需要权重之前原地修改了权重"
                      "（例如 GAN 中生成器的 step() 在判别器损失对同一计算图反向传播之前执行）"),
        "fix_optim": ("在第 {write} 行的 step 之后重新运行第 {save} 行的前向计算，并由它计算之后的损失；被更新模型自己的损失读取"
                      "另一个模型的输出时，传入 `.detach()` 之后的值。若改为把该 backward() 移到 step 之前，step 用的梯度也会包含它"),
        "why_same_line": ("第 {line} 行先为反向传播保存张量，又写入同一块存储（底层内存）：在 `x[i+1] = f(x[i])` 这样的循环中，"
                          "x[i] 和 x[i+1] 都是 x 的视图，共享版本计数器，每次写入都会使上一次保存失效"),
        "fix_same_line": "把结果放进列表再用 torch.stack() 合并，或在使用前复制切片（`torch.sin(x[i].clone())`）",
        "why_same_line_aug": "第 {line} 行右边读取了这个张量，{node} 为反向传播保存了它；随后增量赋值（{op}）把结果原地写回了同一个张量",
        "fix_same_line_aug": "把赋值改成非原地写法（用 `x = x + f(x)` 代替 `x += f(x)`），让保存的张量保持原值",
        "why_same_line_call": "第 {line} 行中，{node} 为反向传播保存了一个张量，随后 {op} 对它做了原地写入",
        "why_output": "{node} 为反向传播保存了自己的输出；第 {write} 行的原地操作 {op} 覆盖了这个输出",
        "fix_output": "改用非原地写法（`inplace=False`，用 `y = y * 2` 代替 `y *= 2`）",
        "why_view": "保存的张量是一个视图：写入它的基张量、同一基张量的其他视图，或通过分离（`detach()`）写入，都会增加共享的版本计数器",
        "why_plain": "第 {save} 行保存张量之后、反向传播使用之前，它被原地修改",
        "fix_plain": "改用非原地写法（`y = y + 1`），或在原地写入前复制（`clone()`）",
        "why_unseen": "版本显示保存之后发生了 {n} 次原地操作，但监视器没有看到它们",
        "why_fused": "融合优化器（fused=True）更新参数时不增加版本计数器，autograd 无法发现反向传播读到的是更新后的权重",
        "fix_fused": "在 step() 之前完成所有 backward()，或使用 foreach=False / foreach=True 让错误暴露出来",
        "why_data": "`.data` 属性与原张量共享存储，但不共享版本计数器，autograd 无法发现反向传播读到的是被改写的值",
        "fix_data": "在 `with torch.no_grad():` 中直接修改张量本身（不要用 `.data`），或在反向传播之后再修改",
        "why_silent": "存储通过不共享版本计数器的别名（`.data`、融合优化器等）被改写：autograd 不会报错",
        "warn_stale": ("gradguard trace: 警告 [stale-save]：{write} 的 {op} 原地修改了一个 {shape} {dtype} 张量，"
                       "它在 {save} 被仍然存活的计算图保存（版本 {saved} -> {now}）；若再对该计算图反向传播将会失败"),
        "warn_silent": ("gradguard trace: 警告 [silent-write]：{write} 的 {op} 改写了一个 {shape} {dtype} 张量，"
                        "它在 {save} 被仍然存活的计算图保存，版本没有增加；对该计算图反向传播会悄悄使用新值"),
        "error_prefix": "gradguard trace: 错误 [stale-save]",
        "warning_prefix": "gradguard trace: 警告 [silent-write]",
        "warn_stale_prefix": "gradguard trace: 警告 [stale-save]",
        "summary": "gradguard trace: {n} 个发现，已写入 {path}",
        "error_at": "gradguard trace: 错误", "colon": "：",
        "detach_or_tuple": "{a}`；如果是 (h, c) 元组，用 `{b}",
        "sep": "；", "created": "创建", "module": "模块", "called_from": "调用自 {locs}", "via_line": "（调用自第 {n} 行）", "line_ref": "第 {n} 行",
        "needed_by": "{loc} 的 backward()（{n}调用）需要它",
        "msg_created": "这个推理张量（inference tensor）在 {loc} 的 inference_mode 中创建",
        "msg_scope": "（第 {line} 行进入推理模式）",
        "msg_module": "写入由 {loc} 创建的 {module} 完成",
        "module_row": "{module} 创建于 {loc}",
        "why_module": "在第 {save} 行的前向调用中，{node} 为反向传播保存了一个张量，随后第 {line} 行创建的 {module} 原地覆盖了这个张量",
        "fix_module": "创建该模块时使用 inplace=False（第 {line} 行），或先复制（`clone()`）它的输入",
        "line": "代码行", "op": "操作", "torch": "报错",
        "msg_raised": "{loc}：{title}（{op}）；torch 在这一行抛出错误",
        "msg_raised_backward": "{loc}：{title}（{op}）；torch 当时接受了写入，之后在 {bloc} 的 backward() 中报错",
        "raised_in_backward": "torch 在 {loc} 的 backward() 中报错",
        "bw_call": "{loc} 的 backward()（{n}调用）",
        "note_compiled": ("gradguard trace: 提示：{loc} 的 torch.compile：编译后的代码在追踪器之外运行（其保存的张量和原地写入不被追踪）。"
                          "要追踪它，请以 eager 模式运行：`gradguard trace --eager ...`（或设置 TORCH_COMPILE_DISABLE=1，"
                          "或在第一次调用编译代码之前设置 `torch._dynamo.config.disable = True`）"),
        "note_untraced": "gradguard trace: 提示：以下区域未被追踪（autograd 仍在其中自行检查版本）：{regions}",
        "region_torch.func": "{loc} 的 torch.func 变换", "region_hooks-disabled": "{loc} 的 disable_saved_tensors_hooks",
        "region_compiled": "{loc} 由 torch.compile 编译的代码", "times": "（{n} 次）",
        "bw_line": "第 {line} 行的 backward()（{n}调用）", "paren": "（{}）",
        "call": "{n}调用",
        "graph": "计算图", "freed": "释放", "again": "再次", "carried": "传递",
        "twice_title": "反向传播经过了一个已被之前的 backward() 释放的计算图",
        "msg_twice": "{cur}经过了在 {build} 构建的计算图（{node}），而它已被{freed}释放",
        "msg_twice_nofree": "{cur}经过了在 {build} 构建的计算图（{node}），它保存的张量已被之前的 backward() 释放",
        "msg_twice_unknown": "{cur}经过了一个保存的张量已被之前的 backward() 释放的计算图",
        "why_twice": ("{freed}释放了第 {build} 行构建的计算图所保存的张量（除非 `retain_graph=True`，backward() 都会释放它们），"
                      "而{cur}又需要它们"),
        "why_twice_loop": ("{freed}释放了第 {build} 行构建的计算图所保存的张量（除非 `retain_graph=True`，backward() "
                           "都会释放它们）；同一行再次执行（{call}）时又经过了这个旧计算图"),
        "why_twice_nofree": "之前的 backward() 已释放这个计算图所保存的张量，而{cur}又需要它们",
        "why_twice_carry": ("；它通过 `{var}` 到达：`{var}` 在第 {line} 行由 `{src}` 赋值（`{stmt}`），没有分离（`detach()`），"
                            "所以每个新的损失也会经过上一轮迭代在第 {build} 行构建的计算图"),
        "why_twice_carry_self": "；它通过 `{var}` 到达：第 {line} 行把自己的结果赋给 `{var}`，没有分离（`detach()`）就传回下一轮，所以每个新的损失也会经过上一轮迭代的计算图",
        "fix_twice_carry": "分离跨迭代传递的状态（`{detach}`）；只有确实要反向传播到之前的迭代时才使用 `retain_graph=True`",
        "why_twice_state": ("；它通过 {cls} 的 `self.{attr}` 到达：第 {line} 行给它赋值（`{stmt}`）时没有分离（`detach()`），"
                            "所以模块把这个计算图从一次 backward() 保留到下一次"),
        "fix_twice_state": ("在 `self.{attr}` 中保存分离后的张量（第 {line} 行：`self.{attr} = ....detach()`）；"
                            "只有确实要反向传播到旧计算图时才使用 `retain_graph=True`"),
        "why_twice_before_loop": ("这个计算图在第 {build} 行、第 {loop} 行的循环之前构建，每一轮的 backward() 都会经过它："
                                  "{freed}释放了它保存的张量，{call}时它们已经不在了"),
        "fix_twice_before_loop": ("在循环内构建它；如果不需要梯度流入它，就在构建处分离（{detach}）；只有每一轮都确实需要反向传播到它时"
                                  "才使用 `retain_graph=True`"),
        "detach_it": "`{var} = {var}.detach()`", "detach_generic": "`.detach()`",
        "fix_twice": "分离（`detach()`）从一次 backward() 传到下一次的张量，或重新做前向计算；只有两次 backward() 确实需要同一个计算图时才使用 `retain_graph=True`",
    },
}


def _t(lang: str) -> dict:
    return T.get(lang, T["en"])


def _detach_code(tr: dict, detach: str) -> str:
    """The code of a detach fix, put between backticks by the templates; a tuple alternative after NUL."""
    if "\x00" in detach:
        one, tup = detach.split("\x00")
        return tr["detach_or_tuple"].format(a=one, b=tup)
    return detach


_FILE_LABEL = None  # set by the notebook extension: path -> (cell number, execution count), or None
_PLACE_LANG: contextvars.ContextVar[str] = contextvars.ContextVar("gradguard_trace_place_lang", default="en")


def set_file_label(label) -> None:
    """Name files differently in reports: the notebook extension maps the code of a cell to
    (its 1-based number among all the notebook's cells or None, the execution count IPython ran it as)."""
    global _FILE_LABEL
    _FILE_LABEL = label


def _loc(path: str, line: int) -> str:
    """`train.py:5`, or for a notebook cell `line 5 of cell 6` (cells counted as the editor shows them, as the
    checker and the language server say it); `line 5 of In[3]` for a cell not found in the saved notebook."""
    place = _FILE_LABEL(path) if _FILE_LABEL is not None else None
    if not place:
        return f"{_short(path)}:{line}"
    cell, count = place
    zh = _PLACE_LANG.get() == "zh"
    if cell is not None:
        return f"第 {cell} 个单元格第 {line} 行" if zh else f"line {line} of cell {cell}"
    return f"In[{count}] 第 {line} 行" if zh else f"line {line} of In[{count}]"


def _read_source(path: str) -> str | None:
    """A program's source: its file, or for code without one (a notebook cell) what linecache holds."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(2_000_000)
    except (OSError, ValueError):
        lines = linecache.getlines(path)
        return "".join(lines) if lines else None


def _parse_source(path: str) -> tuple[str, ast.Module] | None:
    """The user's file, its text and its AST, or None when it cannot be read or parsed."""
    source = _read_source(path)
    if source is None:
        return None
    try:
        return source, ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _spans(node, line: int) -> bool:
    """`node` covers `line`."""
    return node.lineno <= line <= (node.end_lineno or node.lineno)


def _innermost(nodes):
    """The node of `nodes` that spans the fewest lines."""
    return min(nodes, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)


def _carried_state(path: str, save_line: int) -> tuple[str, str, int, str, str] | None:
    """(var, src, line, stmt, detach): state carried across iterations without detach(). In the loop
    around the save line, `var` is read by the save statement and bound from its results: by the save
    statement itself (`h = cell(x, h)`, `y, (h, c) = lstm(x, (h, c))`), or by a later assignment from
    them (`h_cur = h_next`; `h_n, c_n = hidden` then `h = h_n`). `detach` is the fix's code."""
    parsed = _parse_source(path)
    if parsed is None:
        return None
    source, tree = parsed
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))
             and _spans(n, save_line)]
    if not loops:
        return None
    loop = _innermost(loops)
    stmt = None
    for node in ast.walk(loop):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)) and \
                _spans(node, save_line):
            stmt = node
            break
    if stmt is None:
        return None

    def names(node) -> list[str]:
        return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)] if node is not None else []

    def detached(node) -> bool:
        return any(isinstance(n, ast.Attribute) and n.attr in ("detach", "detach_") for n in ast.walk(node))

    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    produced = [name for target in targets for name in names(target)]
    value = getattr(stmt, "value", None)
    used = set(names(value))
    if value is not None and not detached(value):
        top = {e.id for t in targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)}
        for var in produced:
            if var in used:
                text = (ast.get_source_segment(source, stmt) or "").split("\n")[0]
                fix = f"{var} = {var}.detach()"
                if var in top:  # `out, state = lstm(x, state)`: state may be an (h, c) tuple
                    fix += "\x00" + f"{var} = tuple(s.detach() for s in {var})"
                return var, var, stmt.lineno, text, fix
    derived = set(produced)
    assigns = sorted((n for n in ast.walk(loop) if isinstance(n, ast.Assign) and n is not stmt),
                     key=lambda n: n.lineno)
    for _ in range(2):  # h_n, c_n = hidden; h = h_n
        for node in assigns:
            if set(names(node.value)) & derived and not detached(node.value) and \
                    not any(isinstance(n, ast.Call) for n in ast.walk(node.value)):
                for target in node.targets:
                    for var in names(target):
                        src = next(n for n in names(node.value) if n in derived)
                        if var in used:
                            return var, src, node.lineno, f"{var} = {src}", f"{var} = {src}.detach()"
                        derived.add(var)
    return None


def _module_state(cls, attr: str) -> tuple[str, int, str] | None:
    """(file, line, statement) of the first `self.<attr> = ...` in `cls`'s own class body that does not detach()."""
    import inspect

    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    parsed = _parse_source(path) if path else None
    if parsed is None:
        return None
    source, tree = parsed
    found = []
    for klass in ast.walk(tree):
        if not (isinstance(klass, ast.ClassDef) and klass.name == cls.__name__):
            continue
        for node in ast.walk(klass):
            if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if value is None or any(isinstance(n, ast.Attribute) and n.attr in ("detach", "detach_")
                                    for n in ast.walk(value)):
                continue
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == attr and \
                        isinstance(target.value, ast.Name) and target.value.id == "self":
                    text = (ast.get_source_segment(source, node) or "").split("\n")[0]
                    found.append((node.lineno, text))
    if not found:
        return None
    line, text = min(found)
    return path, line, text


def _graph_before_loop(path: str, build_line: int, backward_file: str, backward_lines: list[int]):
    """(line, statement, assigned name or "", loop line) when the graph built at `build_line` was built before the
    loop that runs the failing backward() (at one of `backward_lines`, the call itself or its call sites), in the
    same function or at module level: every iteration backpropagates into it, the first one freed it."""
    if os.path.abspath(path) != os.path.abspath(backward_file):
        return None
    parsed = _parse_source(path)
    if parsed is None:
        return None
    source, tree = parsed

    def scope_of(line):
        defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                and _spans(n, line)]
        return _innermost(defs) if defs else None

    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and any(_spans(n, line) for line in backward_lines)]
    stmts = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr))
             and _spans(n, build_line)]
    if not loops or not stmts:
        return None
    stmt = _innermost(stmts)
    for loop in sorted(loops, key=lambda n: n.lineno, reverse=True):  # the innermost first
        if build_line < loop.lineno and scope_of(build_line) is scope_of(loop.lineno):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            text = (ast.get_source_segment(source, stmt) or "").split("\n")[0]
            return stmt.lineno, text, names[0] if len(names) == 1 else "", loop.lineno
    return None


# ---------------------------------------------------------------------------------------------
# Findings


def stale_save(*, tensor, node, save_file, save_line, saved_version, now, write, torch_message,
               backward_calls_at_save, backward_sites, lang) -> TraceFinding:
    parts, i18n = _in_all_languages(
        _stale_parts, lang, tensor=tensor, node=node, save_file=save_file, save_line=save_line,
        saved_version=saved_version, now=now, write=write, backward_calls_at_save=backward_calls_at_save,
        backward_sites=backward_sites)
    write_json = ({"file": os.path.abspath(write.file), "line": write.line, "op": write.op}
                  if write is not None else None)
    if write is not None and write.callers:
        write_json["callers"] = _callers_json(write.callers)
    module = _module_json(write.module) if write is not None else None
    current = backward_sites[-1] if backward_sites else None
    backward = None
    if current is not None:
        backward = {"file": os.path.abspath(current[1]), "line": current[2], "call": current[0]}
        if len(current) > 4 and current[4]:
            backward["callers"] = _callers_json(current[4])
    return TraceFinding(module=module, backward=backward,
                        **_stale_fields(parts, save_file, save_line, node, write_json, tensor,
                                        saved_version, now, torch_message, i18n))


def _stale_fields(parts, save_file, save_line, node, write_json, tensor, saved_version, now, torch_message, i18n):
    return dict(
        kind="stale-save", severity="error", message=parts["message"],
        save={"file": os.path.abspath(save_file), "line": save_line, "node": node},
        write=write_json, tensor={"shape": _shape(tensor), "dtype": _dtype(tensor)},
        versions={"saved": saved_version, "now": now}, why=parts["why"], fix=parts["fix"], text=parts["text"],
        # torch's own message, exactly: a program that catches and prints it behaves as without the tracer.
        # The report is printed once, at the end.
        error_text=torch_message, i18n=i18n, carry=parts["carry"], rule=parts["rule"],
    )


def _stale_parts(*, tensor, node, save_file, save_line, saved_version, now, write, backward_calls_at_save,
                 backward_sites, lang) -> dict:
    tr = _t(lang)
    node_text = node or tr["unknown_node"]
    shape, dtype = _shape(tensor), _dtype(tensor)
    fmt = dict(shape=shape, dtype=dtype, node=node_text, save=_loc(save_file, save_line),
               saved=saved_version, now=now)
    carry: list = []
    why, fix = _why_stale(tr, lang, tensor, node, save_file, save_line, write, saved_version, now,
                          backward_calls_at_save, backward_sites, carry)
    current = backward_sites[-1] if backward_sites else None
    rule = None
    if write is not None:
        rule = _rule_advice(lang, write.file, write.line, _lines_in(write.file, (save_file, save_line),
                                                                    current[1:3] if current else None))
        if rule is not None:
            fix = rule.text(lang)
            if write.file == save_file and write.line == save_line:  # the rule words this line's own shape
                why = rule.message
    if write is not None:
        via = tr["via"].format(mod=write.via) if write.via else ""
        message = tr["msg_stale"].format(write=_loc(write.file, write.line), op=write.op, via=via, **fmt)
        write_line = (f"{_loc(write.file, write.line)}  {_source(write.file, write.line)}\n"
                      f"           " + tr["write_by"].format(op=write.op, via=via, a=write.version_before,
                                                             b=write.version_after))
        if write.callers:
            write_line += "\n           " + tr["called_from"].format(locs=_called_from(tr, write.callers))
        if write.module is not None:
            m = write.module
            message += tr["sep"] + tr["msg_module"].format(module=m[2], loc=_loc(m[0], m[1]))
            write_line += f"\n           {tr['module_row'].format(module=m[2], loc=_loc(m[0], m[1]))}  {_source(m[0], m[1])}"
    else:
        message = tr["msg_stale_unseen"].format(**fmt)
        write_line = tr["write_unseen"].format(n=now - saved_version)
    current = backward_sites[-1] if backward_sites else None
    if current is not None:  # the backward() that needed the tensor
        now_line = tr["now_line"].format(now=now, saved=saved_version)
        now_line += "\n           " + tr["needed_by"].format(loc=_loc(current[1], current[2]), n=_nth(current[0], lang))
        if len(current) > 4 and current[4]:
            now_line += "\n           " + tr["called_from"].format(locs=_called_from(tr, current[4]))
    else:
        now_line = tr["now_line"].format(now=now, saved=saved_version)
    # The title is the one-line message: `gradguard explain` reads the two lines from it.
    text = _block(tr, tr["error_prefix"] + tr["colon"] + message, shape, dtype, node_text, save_file,
                  save_line, saved_version, write_line, now_line, why, fix)
    return {"message": message, "why": why, "fix": fix, "text": text, "carry": carry[0] if carry else None,
            "rule": rule.to_json() if rule is not None else None}


def _lines_in(file: str, *sites) -> tuple[int, ...]:
    """The lines of the (file, line) `sites` that are in `file`."""
    path = os.path.abspath(file)
    return tuple(site[1] for site in sites if site and os.path.abspath(site[0]) == path)


def _why_stale(tr, lang, tensor, node, save_file, save_line, write, saved, now, k_at_save, sites, carry_out=None):
    if write is None:
        return tr["why_unseen"].format(n=now - saved), tr["fix_plain"]
    if write.via.startswith("torch.optim"):
        current = sites[-1] if sites else None
        between = [site for site in sites[:-1] if site[0] > k_at_save] if current else []
        # The failing backward() (same line, same call sites above it) already ran once since the save.
        if current is not None and any(site[1:3] == current[1:3] and site[4:5] == current[4:5] for site in between):
            # The failing backward() line already ran once since the save: an earlier iteration's graph.
            n, bfile, bline = current[:3]
            bline_text = f" ({_loc(bfile, bline)})" if lang == "en" else f"（{_loc(bfile, bline)}）"
            common = dict(save=save_line, k=_nth(k_at_save + 1, lang), n=_nth(n, lang), bline=bline_text,
                          write=write.line)
            carry = _carried_state(save_file, save_line) if save_file == write.file else None
            if carry:
                var, src, line, stmt, detach = carry
                if carry_out is not None:
                    carry_out.append({"file": os.path.abspath(save_file), "line": line, "code": stmt})
                through = tr["through" if var != src else "through_self"].format(var=var, src=src, line=line)
                return (tr["why_optim_retained"].format(through=through, carry_stmt=stmt, **common),
                        tr["fix_optim_retained"].format(detach=_detach_code(tr, detach)))
            return tr["why_optim_retained_nocarry"].format(**common), tr["fix_optim_retained_nocarry"]
        if current is not None and between:
            first = between[0]
            def at(site):
                caller = site[4][0][1] if len(site) > 4 and site[4] else None
                same = first[2] == current[2]
                return tr["line_ref"].format(n=site[2]) + (tr["via_line"].format(n=caller) if same and caller else "")
            return (tr["why_optim_shared"].format(save=save_line, b1=at(first), write=write.line, b2=at(current)),
                    tr["fix_optim_shared"].format(save=save_line, write=write.line))
        return (tr["why_optim"].format(write=write.line, save=save_line),
                tr["fix_optim"].format(save=save_line, write=write.line))
    if write.module is not None:
        m = write.module
        return (tr["why_module"].format(node=node or tr["unknown_node"], module=m[2], line=m[1], save=save_line),
                tr["fix_module"].format(module=m[2], line=m[1]))
    if node in _OUTPUT_SAVING:  # also on one line: `torch.sigmoid(h).relu_()`
        return tr["why_output"].format(node=node, op=write.op, write=write.line), tr["fix_output"]
    if write.file == save_file and write.line == save_line:
        return _same_line(tr, save_line, write, node)
    try:
        is_view = tensor.storage_offset() != 0 or \
            tensor.numel() * tensor.element_size() < tensor.untyped_storage().nbytes()
    except Exception:
        is_view = False
    why = tr["why_plain"].format(save=save_line)
    if is_view:
        why += ("; " if lang == "en" else "；") + tr["why_view"]
    return why, tr["fix_plain"]


_AUGMENTED = re.compile(r"^\s*[\w.\[\]]+\s*(?:\*\*|//|>>|<<|[-+*/%@&|^])=[^=]")


def _same_line(tr, line: int, write, node) -> tuple[str, str]:
    """Why and fix for a save and a write on one line, by the line's own shape: an index write (`x[i+1] =
    f(x[i])`), an augmented assignment whose right side read the tensor (`x += f(x)`, `z /= z.norm()`), or an
    in-place call chained on the line."""
    node_text = node or tr["unknown_node"]
    if write.op == "__setitem__":
        return tr["why_same_line"].format(line=line), tr["fix_same_line"]
    if _AUGMENTED.match(_source(write.file, write.line)):
        return tr["why_same_line_aug"].format(line=line, node=node_text, op=write.op), tr["fix_same_line_aug"]
    return tr["why_same_line_call"].format(line=line, node=node_text, op=write.op), tr["fix_plain"]


def silent_write(*, tensor, node, save_file, save_line, version, write, lang) -> TraceFinding:
    parts, i18n = _in_all_languages(_silent_parts, lang, tensor=tensor, node=node, save_file=save_file,
                                    save_line=save_line, version=version, write=write)
    return TraceFinding(
        kind="silent-write", severity="warning", message=parts["message"],
        save={"file": os.path.abspath(save_file), "line": save_line, "node": node},
        write={"file": os.path.abspath(write.file), "line": write.line, "op": write.op,
               **({"callers": _callers_json(write.callers)} if write.callers else {})},
        tensor={"shape": _shape(tensor), "dtype": _dtype(tensor)}, versions={"saved": version, "now": version},
        why=parts["why"], fix=parts["fix"], text=parts["text"], error_text=parts["text"], i18n=i18n,
        module=_module_json(write.module), rule=parts["rule"],
    )


def _silent_parts(*, tensor, node, save_file, save_line, version, write, lang) -> dict:
    tr = _t(lang)
    node_text = node or tr["unknown_node"]
    shape, dtype = _shape(tensor), _dtype(tensor)
    message = tr["msg_silent"].format(shape=shape, dtype=dtype, node=node_text, save=_loc(save_file, save_line),
                                      write=_loc(write.file, write.line), op=write.op)
    source = _source(write.file, write.line)
    if "fused" in write.op:
        why, fix = tr["why_fused"], tr["fix_fused"]
    elif ".data" in source:
        why, fix = tr["why_data"], tr["fix_data"]
    else:
        why, fix = tr["why_silent"], tr["fix_data"]
    via = tr["via"].format(mod=write.via) if write.via else ""
    write_line = (f"{_loc(write.file, write.line)}  {source}\n           "
                  + tr["write_by_nobump"].format(op=write.op, via=via, a=version))
    if write.callers:
        write_line += "\n           " + tr["called_from"].format(locs=_called_from(tr, write.callers))
    rule = _rule_advice(lang, write.file, write.line, _lines_in(write.file, (save_file, save_line)))
    if rule is not None:
        fix = rule.text(lang)
    text = _block(tr, tr["warning_prefix"] + tr["colon"] + message, shape, dtype, node_text, save_file,
                  save_line, version, write_line, tr["now_line"].format(now=version, saved=version), why, fix)
    return {"message": message, "why": why, "fix": fix, "text": text,
            "rule": rule.to_json() if rule is not None else None}


def torch_error(*, kind, torch_message, file, line, op, lang, created=None, module=None, callers=(),
                in_backward=None) -> TraceFinding:
    """An autograd error torch raised at the line itself (leaf, view, out=, inference, overlap), or, with
    `in_backward` (the backward site), raised in backward() because of the in-place write at `line`."""
    parts, i18n = _in_all_languages(_torch_error_parts, lang, kind=kind, torch_message=torch_message,
                                    file=file, line=line, op=op, created=created, module=module, callers=callers,
                                    in_backward=in_backward)
    site = {"file": os.path.abspath(file), "line": line, "op": op}
    if callers:
        site["callers"] = _callers_json(callers)
    saves = kind.id == "inference-saved"  # raised by the op that would save the tensor, not by a write
    return TraceFinding(
        kind="torch-error", severity="error", message=parts["message"], error=kind.id, raised=site,
        save={"file": site["file"], "line": line, "node": None} if saves else None,
        write=None if saves else dict(site), tensor=None, versions=None, why=parts["why"], fix=parts["fix"],
        text=parts["text"], error_text=torch_message, i18n=i18n, module=_module_json(module),
        backward={"file": os.path.abspath(in_backward[1]), "line": in_backward[2], "call": in_backward[0]}
        if in_backward else None,
        created=_created_json(created), rule=parts["rule"],
    )


def _created_json(created) -> dict | None:
    if not created:
        return None
    doc = {"file": os.path.abspath(created[0]), "line": created[1], "op": created[2]}
    scope = _inference_scope(created[0], created[1])
    if scope is not None:
        doc["inference_mode_line"] = scope
    return doc


def _inference_scope(path: str, line: int) -> int | None:
    """The line of the `with torch.inference_mode():` or `@torch.inference_mode()` around `line`."""
    parsed = _parse_source(path)
    if parsed is None:
        return None
    source, tree = parsed
    best = None
    for node in ast.walk(tree):
        if not (node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)) if hasattr(node, "lineno") else True:
            continue
        exprs = []
        if isinstance(node, (ast.With, ast.AsyncWith)):
            exprs = [item.context_expr for item in node.items]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            exprs = node.decorator_list
        for expr in exprs:
            if any(isinstance(n, (ast.Attribute, ast.Name)) and getattr(n, "attr", getattr(n, "id", "")) == "inference_mode"
                   for n in ast.walk(expr)):
                if best is None or expr.lineno > best:
                    best = expr.lineno
    return best


def _callers_json(callers) -> list[dict]:
    return [{"file": os.path.abspath(f), "line": n} for f, n in callers or ()]


def _called_from(tr, callers) -> str:
    return ", ".join(_loc(f, n) for f, n in callers)


def _module_json(module) -> dict | None:
    return {"file": os.path.abspath(module[0]), "line": module[1], "module": module[2]} if module else None


def _torch_error_parts(*, kind, torch_message, file, line, op, lang, created=None, module=None, callers=(),
                       in_backward=None) -> dict:
    tr = _t(lang)
    title = kind.title[lang]
    if in_backward is not None:
        message = tr["msg_raised_backward"].format(title=title, loc=_loc(file, line), op=op,
                                                   bloc=_loc(in_backward[1], in_backward[2]))
    else:
        message = tr["msg_raised"].format(title=title, loc=_loc(file, line), op=op)
    why, fix = kind.meaning[lang], kind.fix[lang]
    rule = _rule_advice(lang, file, line)
    if rule is not None:
        fix = rule.text(lang)
    scope = _inference_scope(created[0], created[1]) if created is not None else None
    if created is not None:
        message += tr["sep"] + tr["msg_created"].format(loc=_loc(created[0], created[1]))
        if scope is not None:
            message += tr["msg_scope"].format(line=scope)
    if module is not None:
        message += tr["sep"] + tr["msg_module"].format(module=module[2], loc=_loc(module[0], module[1]))
    rows = [f"{tr['error_at']} [{kind.id}]{tr['colon']}{title}",
            _row(tr["line"], f"{_loc(file, line)}  {_source(file, line)}")]
    if callers:
        rows.append(_row("", tr["called_from"].format(locs=_called_from(tr, callers))))
    if created is not None:
        rows.append(_row(tr["created"], f"{_loc(created[0], created[1])}  {_source(created[0], created[1])}"))
        if scope is not None:
            rows.append(_row("", f"{_loc(created[0], scope)}  {_source(created[0], scope)}"))
    if module is not None:
        rows.append(_row(tr["module"], f"{_loc(module[0], module[1])}  {_source(module[0], module[1])}"))
    if in_backward is not None:
        rows.append(_row(tr["again"], tr["raised_in_backward"].format(loc=_loc(in_backward[1], in_backward[2]))))
    rows += [
            _row(tr["op"], op),
            _row(tr["torch"], torch_message),
            _row(tr["why"], why),
            _row(tr["fix"], fix)]
    return {"message": message, "why": why, "fix": fix, "text": "\n".join(rows),
            "rule": rule.to_json() if rule is not None else None}


def backward_twice(*, torch_message, node, build, freed_site, current, lang, state=None) -> TraceFinding:
    """backward() reached a graph whose saved tensors an earlier backward() freed. What reaches the old graph, in
    this order: state carried from one iteration to the next, a tensor kept on a module (`state`: its class and
    attribute, found at runtime), or a graph built before the loop whose every iteration goes through it."""
    carry = None
    if build is not None:
        found = _carried_state(build[0], build[1])
        if found is not None:
            var, src, line, stmt, detach = found
            carry = {"file": os.path.abspath(build[0]), "line": line, "code": stmt, "var": var, "src": src,
                     "detach": detach}
        elif state is not None and _module_state(*state) is not None:
            path, line, stmt = _module_state(*state)
            carry = {"file": os.path.abspath(path), "line": line, "code": stmt, "attr": state[1],
                     "cls": state[0].__name__, "shown_file": path}
        else:
            lines = [current[2]] + [n for f, n in (current[4] if len(current) > 4 else ()) if f == current[1]]
            before = _graph_before_loop(build[0], build[1], current[1], lines)
            if before is not None:
                line, stmt, var, loop = before
                carry = {"file": os.path.abspath(build[0]), "line": line, "code": stmt, "var": var, "loop": loop}
    parts, i18n = _in_all_languages(_twice_parts, lang, node=node, build=build, freed_site=freed_site,
                                    current=current, carry=carry)
    number, cfile, cline = current[:3]
    return TraceFinding(
        kind="backward-twice", severity="error", message=parts["message"],
        save={"file": os.path.abspath(build[0]), "line": build[1], "node": node} if build else None,
        write=None, tensor=None, versions=None, why=parts["why"], fix=parts["fix"], text=parts["text"],
        error_text=torch_message,
        freed_by=({"file": os.path.abspath(freed_site[1]), "line": freed_site[2], "call": freed_site[0],
                   **({"callers": _callers_json(freed_site[4])} if len(freed_site) > 4 and freed_site[4] else {})}
                  if freed_site else None),
        backward={"file": os.path.abspath(cfile), "line": cline, "call": number,
                  **({"callers": _callers_json(current[4])} if len(current) > 4 and current[4] else {})},
        carry={k: carry[k] for k in ("file", "line", "code")} if carry else None, i18n=i18n, rule=parts["rule"],
    )


def _twice_parts(*, node, build, freed_site, current, carry, lang) -> dict:
    tr = _t(lang)
    number, cfile, cline = current[:3]
    cur = tr["bw_call"].format(loc=_loc(cfile, cline), n=_nth(number, lang))
    cur_line = tr["bw_line"].format(line=cline, n=_nth(number, lang))
    if freed_site is not None:
        freed = tr["bw_call"].format(loc=_loc(freed_site[1], freed_site[2]), n=_nth(freed_site[0], lang))
        freed_line = tr["bw_line"].format(line=freed_site[2], n=_nth(freed_site[0], lang))
        same = (freed_site[1], freed_site[2]) == (cfile, cline)
        message = tr["msg_twice"].format(cur=cur, freed=freed, build=_loc(*build), node=node or tr["unknown_node"])
        why = tr["why_twice_loop" if same else "why_twice"].format(cur=cur_line, freed=freed_line, build=build[1],
                                                                   call=tr["call"].format(n=_nth(number, lang)))
    elif build is not None:
        message = tr["msg_twice_nofree"].format(cur=cur, build=_loc(*build), node=node or tr["unknown_node"])
        why = tr["why_twice_nofree"].format(cur=cur_line)
    else:
        message = tr["msg_twice_unknown"].format(cur=cur)
        why = tr["why_twice_nofree"].format(cur=cur_line)
    if carry is not None and "attr" in carry:
        why += tr["why_twice_state"].format(attr=carry["attr"], cls=carry["cls"], line=carry["line"], stmt=carry["code"])
        fix = tr["fix_twice_state"].format(attr=carry["attr"], line=carry["line"])
    elif carry is not None and "loop" in carry:
        if freed_site is not None:
            why = tr["why_twice_before_loop"].format(build=carry["line"], loop=carry["loop"], freed=freed_line,
                                                     call=tr["call"].format(n=_nth(number, lang)))
        detach = tr["detach_it"].format(var=carry["var"]) if carry["var"] else tr["detach_generic"]
        fix = tr["fix_twice_before_loop"].format(detach=detach)
    elif carry is not None:
        why += tr["why_twice_carry" if carry["var"] != carry["src"] else "why_twice_carry_self"].format(var=carry["var"], src=carry["src"], line=carry["line"],
                                            build=build[1], stmt=carry["code"])
        fix = tr["fix_twice_carry"].format(detach=_detach_code(tr, carry["detach"]))
    else:
        fix = tr["fix_twice"]
    sites = [build, freed_site[1:3] if freed_site else None, (build[0], carry["line"]) if carry and build else None]
    rule = _rule_advice(lang, cfile, cline, _lines_in(cfile, *sites))
    if rule is not None:
        fix = rule.text(lang)
    rows = [tr["error_at"] + " [backward-twice]" + tr["colon"] + tr["twice_title"]]
    if build is not None:
        rows.append(_row(tr["graph"], f"{_loc(*build)}  {_source(*build)}   "
                                      + tr["paren"].format(node or tr["unknown_node"])))
    if freed_site is not None:
        rows.append(_row(tr["freed"], f"{_loc(freed_site[1], freed_site[2])}  {_source(freed_site[1], freed_site[2])}   "
                                      + tr["paren"].format(tr["call"].format(n=_nth(freed_site[0], lang)))))
    if freed_site is not None and len(freed_site) > 4 and freed_site[4]:
        rows.append(_row("", tr["called_from"].format(locs=_called_from(tr, freed_site[4]))))
    rows.append(_row(tr["again"], f"{_loc(cfile, cline)}  {_source(cfile, cline)}   "
                                  + tr["paren"].format(tr["call"].format(n=_nth(number, lang)))))
    if len(current) > 4 and current[4]:
        rows.append(_row("", tr["called_from"].format(locs=_called_from(tr, current[4]))))
    if carry is not None and ("loop" not in carry or carry["line"] != build[1]):  # not the graph row again
        shown = carry.get("shown_file", build[0])  # as the program named it: a notebook cell keeps its label
        rows.append(_row(tr["carried"], f"{_loc(shown, carry['line'])}  {carry['code']}"))
    rows += [_row(tr["why"], why), _row(tr["fix"], fix)]
    return {"message": message, "why": why, "fix": fix, "text": "\n".join(rows),
            "rule": rule.to_json() if rule is not None else None}


def _row(label: str, value: str) -> str:
    width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in label)
    return f"  {label}{' ' * max(1, 9 - width)}{value}"


def _block(tr, title, shape, dtype, node_text, save_file, save_line, saved, write_line, now_line, why, fix) -> str:
    def row(label: str, value: str) -> str:
        width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in label)
        return f"  {label}{' ' * max(1, 9 - width)}{value}"

    rows = [
        title,
        row(tr["tensor"], f"{shape} {dtype}, " + tr["saved_for"].format(node=node_text)),
        row(tr["saved"], f"{_loc(save_file, save_line)}  {_source(save_file, save_line)}   ("
            + tr["version_at_save"].format(v=saved) + ")"),
        row(tr["written"], write_line),
        row(tr["now"], now_line),
    ]
    if why:
        rows.append(row(tr["why"], why))
    if fix:
        rows.append(row(tr["fix"], fix))
    return "\n".join(rows)


def write_warning(kind: str, save, write, now: int, lang: str) -> str:
    tr = _t(lang)
    fmt = dict(op=write.op, write=_loc(write.file, write.line), shape=_shape(save.tensor),
               dtype=_dtype(save.tensor), save=_loc(save.file, save.line), saved=save.version, now=now)
    return tr["warn_stale" if kind == "stale-save" else "warn_silent"].format(**fmt)


def seen_at_write(kind: str, save, write, now: int, lang: str) -> TraceFinding:
    """A write into a tensor a live graph saved, seen at the write (no backward() reported it: the program failed
    on another save first, or never ran that backward()): a finding of its own, with its why and fix, so that
    trace.json and the editor show every such (save, write) pair, not only the one backward() raised on."""
    parts, i18n = _in_all_languages(_seen_parts, lang, kind=kind, save=save, write=write, now=now)
    write_json = {"file": os.path.abspath(write.file), "line": write.line, "op": write.op}
    if write.callers:
        write_json["callers"] = _callers_json(write.callers)
    return TraceFinding(
        kind=kind, severity="warning", message=parts["message"],
        save={"file": os.path.abspath(save.file), "line": save.line, "node": None}, write=write_json,
        tensor={"shape": _shape(save.tensor), "dtype": _dtype(save.tensor)},
        versions={"saved": save.version, "now": now}, why=parts["why"], fix=parts["fix"], text=parts["text"],
        error_text=parts["text"], i18n=i18n, module=_module_json(write.module), rule=parts["rule"], seen="write",
    )


def _seen_parts(*, kind, save, write, now, lang) -> dict:
    tr = _t(lang)
    warning = write_warning(kind, save, write, now, lang)
    prefix = tr["warning_prefix" if kind == "silent-write" else "warn_stale_prefix"] + tr["colon"]
    message = warning[len(prefix):] if warning.startswith(prefix) else warning
    if kind == "silent-write":
        source = _source(write.file, write.line)
        why, fix = ((tr["why_fused"], tr["fix_fused"]) if "fused" in write.op else
                    (tr["why_data"], tr["fix_data"]) if ".data" in source else (tr["why_silent"], tr["fix_data"]))
    else:
        why, fix = _why_stale(tr, lang, save.tensor, None, save.file, save.line, write, save.version, now, 0, [])
    rule = _rule_advice(lang, write.file, write.line, _lines_in(write.file, (save.file, save.line)))
    if rule is not None:
        fix = rule.text(lang)
        if write.file == save.file and write.line == save.line:
            why = rule.message
    text = "\n".join([warning, _row(tr["why"], why), _row(tr["fix"], fix)])
    return {"message": message, "why": why, "fix": fix, "text": text,
            "rule": rule.to_json() if rule is not None else None}


def compiled_note(file: str, line: int, lang: str) -> str:
    return _t(lang)["note_compiled"].format(loc=_loc(file, line))


def untraced_note(regions: dict, lang: str) -> str:
    """One line naming the regions run without the tracer: {(reason, file, line): times}."""
    tr = _t(lang)
    parts = []
    for (reason, file, line), times in regions.items():
        text = tr["region_" + reason].format(loc=_loc(file, line))
        parts.append(text + (tr["times"].format(n=times) if times > 1 else ""))
    return tr["note_untraced"].format(regions=tr["sep"].join(parts))


def summary(n: int, path: str, lang: str) -> str:
    return _t(lang)["summary"].format(n=n, path=path)
