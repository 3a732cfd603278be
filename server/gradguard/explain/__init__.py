"""gradguard explain: read a traceback (or just torch's error text) and explain the autograd error.

Use::

    gradguard explain [--format text|json] [--lang en|zh] [--no-static] [FILE | -]
    python -m gradguard.explain traceback.txt

It identifies which known error it is (saved tensor modified / leaf in-place / view of a leaf /
multi-output views / no_grad view / out= / overlapping write / backward twice / inference tensors
/ FSDP2's warning about an in-place op on a view a fully_shard module returned / ...; lines that
torch.distributed prefixes with `[rank0]:` are read without the prefix), decodes the tensor (``[torch.FloatTensor [1, 1]]``), the ``output K of X`` clause (node
names of torch 1.x and 2.x: ``SelectBackward``, ``SelectBackward0``, ``Select``; ``AsStrided`` =
a view whose base changed, such as a weight changed by ``opt.step()``) and the versions, ranks
likely causes, and lists candidate lines: the lines ``gradguard trace`` named (when the text
comes from it), the forward line anomaly mode printed, and the findings of the static engine
(``gradguard.engine.check_file``) on the user files the traceback names.

This package never imports torch: it only reads text.

JSON output (``--format json``)::

    {"version": 1,
     "errors": [{"kind": str, "title": str, "message": str, "meaning": str, "fix": str,
                 "raised_at": {"file", "line", "code"} | null,
                 "tensor": {"type", "dtype", "shape", "device"} | null,
                 "output_of": {"raw", "op", "node", "category", "text"} | null,
                 "versions": {"saved", "now", "writes"} | null,
                 "causes": [{"id", "text"}],           # most likely first
                 "candidates": [{"file", "line", "source", "code", "message", "text"}],
                 "compiled": {"markers": [str], "script": str | null, "rerun": str} | null,
                 "rule": {"code", "file", "line", "message", "fix": str | null, "command": [str] | null} | null,
                 "distributed": {"kind": "fsdp2" | "dtensor", "markers": [str]} | null}]}
                 # distributed: an FSDP2 warning, or an error in DTensor / fully_shard code (what one CPU process
                 # reproduces of it is said in the text)
                 # rule: the static finding that names this error's lines; `fix` is then its recipe (advice.py)
                 # compiled: the traceback runs through torch.compile's machinery (dynamo, AOT autograd,
                 # inductor, generated `<eval_with_key>` code); rerun is the eager command line

Exit status: 0 when a known error was explained, 1 when none was recognised, 2 on usage or I/O error.
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import sys
import sysconfig
from dataclasses import asdict, dataclass, field

from . import advice, catalog, files

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
# IPython 8+: `Cell In[3], line 5` (a cell) and `File ~/lib/.../torch/_tensor.py:626, in Tensor.backward(...)`
_IPY_CELL = re.compile(r"^\s*Cell (?P<file>In\s?\[\d{1,9}\]), line (?P<line>\d{1,9})")
_IPY_FILE = re.compile(r"^\s*File (?P<file>[^\s:][^:]{0,4000}):(?P<line>\d{1,9})(?:, in (?P<func>\w{1,200}))?")
# IPython 7: `<ipython-input-3-5a0c...> in <module>` then the failing line as `----> 5 y.sum().backward()`
_IPY_INPUT = re.compile(r"^\s*(?P<file><ipython-input-\d{1,9}-[0-9a-f]{1,64}>) in (?P<func>\S{1,200})")
_IPY_ARROW = re.compile(r"^-{1,8}> ?(?P<line>\d{1,9}) ?(?P<code>.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]{0,20}m")
_MAX_LINE = 8192  # lines longer than this are never a frame or a tracer line: skip them (keeps every regex linear)
_MAX_ERRORS = 50
_MAX_INPUT = 32 * 1024 * 1024  # characters read from the input: a traceback, not a disk
_ANOMALY = re.compile(r"Error detected in (?P<node>\w+)\. Traceback of forward call that caused the error:")
_TRACE_EN = re.compile(
    r"saved for (?P<node>\S+) at (?P<sfile>.+?):(?P<sline>\d+) \(version (?P<saved>\d+)\) was modified in place "
    r"at (?P<wfile>.+?):(?P<wline>\d+) by (?P<op>\S+)")
_TRACE_ZH = re.compile(
    r"在 (?P<sfile>.+?):(?P<sline>\d+) 为 (?P<node>\S+) 保存的 .*?（版本 (?P<saved>\d+)）在 (?P<wfile>.+?):(?P<wline>\d+) "
    r"被 (?P<op>[^\s（]+)")
_TRACE_SILENT = re.compile(
    r"saved for (?P<node>\S+) at (?P<sfile>.+?):(?P<sline>\d+) was overwritten at (?P<wfile>.+?):(?P<wline>\d+) "
    r"by (?P<op>\S+)")

_DTYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
           "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool",
           "ComplexFloat": "complex64", "ComplexDouble": "complex128"}

L = {
    "en": {
        "head": "gradguard explain: {title}", "sep": ": ", "error": "error", "raised": "raised at", "tensor": "tensor",
        "output": "output of", "versions": "versions", "meaning": "what it means", "causes": "likely causes",
        "candidates": "candidate lines", "fix": "usual fix", "next": "next step",
        "versions_text": "saved at version {saved}, now at version {now}: {writes} in-place write(s) happened "
                         "between the save and this backward()",
        "versions_param": " (a fresh nn.Linear weight starts at version 1; every optimizer step adds 1)",
        "tensor_text": "{shape} {dtype}{device} ({type})",
        "output_nr": "output {nr} of {raw}",
        "src_trace": "gradguard trace", "src_anomaly": "anomaly mode", "src_static": "static",
        "src_traceback": "traceback",
        "trace_save": "saved for backward here ({node}, version {saved})",
        "trace_write": "written in place here by {op}",
        "anomaly_line": "forward op whose backward failed ({node}): where the tensor was saved, not where it was written",
        "raised_line": "where the error was raised",
        "next_trace": "run the program under `gradguard trace` to name the exact line that saved the tensor and the "
                      "line that wrote it",
        "next_notebook": "in the notebook, run `%load_ext gradguard` in a cell, then re-run the failing cells: the "
                         "tracer names the line that saved the tensor and the line that wrote it (cell-relative lines)",
        "unknown": "gradguard explain: no known autograd error found in the input",
        "static_missing": "(static engine not available: candidate lines from the static rules are not listed)",
        "compiled": "compiled",
        "distributed": "distributed",
        "distributed_fsdp2": ("one CPU process (the gloo backend, world_size=1) prints the same warning, and "
                              "`gradguard trace` can run the program there; whether backward then fails or the "
                              "gradients differ depends on the sharding across ranks, which one process does not "
                              "reproduce. The fix is the same either way"),
        "distributed_dtensor": ("this program uses DTensor / FSDP2 (torch.distributed): autograd saved plain local "
                                "tensors on each rank, so the message names a `torch.FloatTensor` (a local shard, or "
                                "the copy an op gathered), not the DTensor, and every rank raises it. An in-place op "
                                "on a DTensor (`w.mul_(2)` under no_grad, an optimizer step on its parameters) writes "
                                "those local tensors. The fixes are those of plain tensors. One CPU process (the gloo "
                                "backend, world_size=1) raises the same error, so `gradguard trace` can name the "
                                "lines there; what differs across ranks is not reproduced"),
        "compiled_text": ("this error went through torch.compile ({markers}). Compiled code traces forward and backward "
                          "together, so an in-place error can surface at the forward call or only when "
                          "compiled, in generated code rather than at your line"),
        "eager": "eager re-run",
        "eager_text": ("{rerun} (or set `torch._dynamo.config.disable = True` before the first compiled call): the "
                       "model runs eagerly and the error is raised by backward() at your code; then "
                       "`gradguard trace --eager {script}` names the line that saved the tensor and the line that "
                       "wrote it"),
    },
    "zh": {
        "head": "gradguard explain：{title}", "sep": "：", "error": "错误", "raised": "抛出位置", "tensor": "张量",
        "output": "来源", "versions": "版本", "meaning": "含义", "causes": "可能原因",
        "candidates": "候选代码行", "fix": "常见修复", "next": "下一步",
        "versions_text": "保存时版本为 {saved}，现在为 {now}：保存之后、本次 backward() 之前发生了 {writes} 次原地操作",
        "versions_param": "（新建的 nn.Linear 权重版本从 1 开始；每次优化器更新加 1）",
        "tensor_text": "{shape} {dtype}{device}（{type}）",
        "output_nr": "{raw} 的第 {nr} 个输出",
        "src_trace": "gradguard trace", "src_anomaly": "异常检测", "src_static": "静态检查",
        "src_traceback": "调用栈",
        "trace_save": "在这里为反向传播保存（{node}，版本 {saved}）",
        "trace_write": "在这里被 {op} 原地修改",
        "anomaly_line": "反向计算失败的前向操作（{node}）：这是张量被保存的位置，而不是被写入的位置",
        "raised_line": "错误抛出的位置",
        "next_trace": "用 `gradguard trace` 运行程序，找出保存张量的那一行和写入它的那一行",
        "next_notebook": "在 notebook 中先在一个单元格里运行 `%load_ext gradguard`，再重新运行出错的单元格："
                         "追踪器会指出保存张量的那一行和写入它的那一行（行号相对于单元格）",
        "unknown": "gradguard explain：输入中没有找到已知的 autograd 错误",
        "static_missing": "（静态引擎不可用：未列出静态规则找到的候选行）",
        "compiled": "编译代码",
        "distributed": "分布式",
        "distributed_fsdp2": ("单个 CPU 进程（gloo 后端，world_size=1）会打印同样的警告，`gradguard trace` 可以在那里运行程序；"
                              "反向传播随后是否失败、梯度是否不同，取决于各 rank 之间的分片，单个进程无法重现。修复方法都一样"),
        "distributed_dtensor": ("这个程序使用了 DTensor / FSDP2（torch.distributed）：autograd 在每个 rank 上保存的是普通的本地张量，"
                                "所以消息中的是 `torch.FloatTensor`（本地分片，或某个操作收集来的副本），而不是 DTensor，"
                                "并且每个 rank 都会报错。对 DTensor 的原地操作（no_grad 中的 `w.mul_(2)`、对其参数的优化器更新）"
                                "会写入这些本地张量。修复方法与普通张量相同。单个 CPU 进程（gloo 后端，world_size=1）会抛出同样的"
                                "错误，所以 `gradguard trace` 可以在那里指出相关代码行；各 rank 之间的差异无法重现"),
        "compiled_text": ("这个错误经过了 torch.compile（{markers}）。编译后的代码把前向和反向一起追踪，所以原地操作错误可能"
                          "在前向调用处出现，或者只在编译时出现，位置在生成的代码里而不是你的代码行"),
        "eager": "eager 重跑",
        "eager_text": ("{rerun}（或在第一次调用编译代码之前设置 `torch._dynamo.config.disable = True`）：模型以 eager "
                       "模式运行，错误由 backward() 在你的代码处抛出；然后用 `gradguard trace --eager {script}` "
                       "找出保存张量的那一行和写入它的那一行"),
    },
}


@dataclass
class Frame:
    file: str
    line: int
    func: str
    code: str
    pos: int = 0  # offset of the frame's line in the text


@dataclass
class Candidate:
    file: str
    line: int
    source: str  # "trace" | "anomaly" | "static" | "traceback"
    code: str = ""
    message: str = ""
    text: str = ""  # the source line


@dataclass
class Explanation:
    kind: str
    title: str
    message: str
    meaning: str
    fix: str
    raised_at: dict | None = None
    tensor: dict | None = None
    output_of: dict | None = None
    versions: dict | None = None
    causes: list = field(default_factory=list)
    candidates: list = field(default_factory=list)
    compiled: dict | None = None  # {"markers", "script", "rerun"}: the error went through torch.compile
    rule: dict | None = None  # the static finding whose recipe `fix` gives (advice.RuleAdvice.to_json)
    distributed: dict | None = None  # {"kind": "fsdp2" | "dtensor", "markers"}: FSDP2 / DTensor code (_distributed)
    static_available: bool = True
    notebook: bool = False  # the traceback comes from IPython / Jupyter


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_frames(text: str) -> list[Frame]:
    """Python's `File "x.py", line 3, in f` frames, and IPython's (`Cell In[3], line 5`,
    `<ipython-input-3-...> in <module>`, `File ~/x.py:3, in f`), with their offsets in `text`."""
    frames = []
    lines = text.split("\n")
    pos = 0
    pending: Frame | None = None  # an IPython 7 frame waiting for its `---->` line
    for i, raw in enumerate(lines):
        start, pos = pos, pos + len(raw) + 1
        if len(raw) > _MAX_LINE:
            continue
        line = _ANSI.sub("", raw) if "\x1b" in raw else raw
        if pending is not None:
            arrow = _IPY_ARROW.match(line)
            if arrow:
                pending.line, pending.code = int(arrow.group("line")), arrow.group("code").strip()
                frames.append(pending)
                pending = None
                continue
        m = _FRAME.match(line)
        if m:
            nxt = lines[i + 1] if i + 1 < len(lines) and len(lines[i + 1]) <= _MAX_LINE else ""
            code = nxt.strip() if nxt and not _FRAME.match(nxt) else ""
            frames.append(Frame(m.group("file"), int(m.group("line")), (m.group("func") or "").strip(), code, start))
            continue
        m = _IPY_CELL.match(line) or _IPY_FILE.match(line)
        if m:
            code = ""
            for follow in lines[i + 1:i + 40]:  # the context block: `----> 5 code`
                follow = _ANSI.sub("", follow[:_MAX_LINE])
                arrow = _IPY_ARROW.match(follow)
                if arrow:
                    code = arrow.group("code").strip()
                    break
                if not follow.strip():
                    break
            func = m.groupdict().get("func") or ""
            file = m.group("file").replace(" ", "") if m.re is _IPY_CELL else m.group("file")
            frames.append(Frame(file, int(m.group("line")), func, code, start))
            continue
        m = _IPY_INPUT.match(line)
        if m:
            pending = Frame(m.group("file"), 0, m.group("func"), "", start)
    return frames


def is_notebook_frame(path: str) -> bool:
    return path.startswith("<ipython-input-") or path.startswith("In[")


_LIB_PREFIXES = tuple(
    os.path.abspath(p) + os.sep for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "purelib", "platlib")} if p)


def is_user_file(path: str) -> bool:
    if is_notebook_frame(path):
        return True
    if path.startswith("<") or "site-packages" in path or "dist-packages" in path:
        return False
    if re.search(r"[/\\]lib[/\\]python\d[\d.]*[/\\]", path) or re.search(r"[/\\]Lib[/\\]", path):
        return False  # the standard library, also on other machines
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    return not os.path.abspath(path).startswith(_LIB_PREFIXES + (here,))


def find_errors(text: str) -> list[tuple[catalog.ErrorKind, re.Match]]:
    """Every known error message in the text, in order of appearance, without overlaps."""
    found: list[tuple[catalog.ErrorKind, re.Match]] = []
    taken: list[tuple[int, int]] = []  # spans already claimed, sorted and disjoint
    for kind in catalog.KINDS:
        # One kind's matches come in order: merge them with the sorted spans in one pass (checking each
        # match against every span taken so far was quadratic in the number of errors).
        matches = list(kind.pattern.finditer(text))
        if not taken:
            taken = [m.span() for m in matches]
            found.extend((kind, m) for m in matches)
            continue
        if not matches:
            continue
        merged: list[tuple[int, int]] = []
        i = 0
        for m in matches:
            start, end = m.span()
            while i < len(taken) and taken[i][1] <= start:
                merged.append(taken[i])
                i += 1
            if i < len(taken) and taken[i][0] < end:
                continue  # overlaps a span an earlier kind claimed
            merged.append((start, end))
            found.append((kind, m))
        merged.extend(taken[i:])
        taken = merged
    found.sort(key=lambda item: item[1].start())
    # The same error printed twice (chained exceptions, a log) counts once.
    unique, seen = [], set()
    for kind, m in found:
        if m.group(0) not in seen:
            seen.add(m.group(0))
            unique.append((kind, m))
    return unique


def _tensor(m: re.Match) -> dict | None:
    if "type" not in m.re.groupindex or not m.group("type"):
        return None
    type_name = m.group("type")
    shape = [int(s) for s in re.findall(r"\d+", m.group("shape") or "")]
    core = type_name.split(".")[-1].removesuffix("Tensor")
    device = "cuda" if ".cuda." in type_name else ("cpu" if type_name.startswith("torch.") else "")
    return {"type": type_name, "dtype": _DTYPES.get(core, core.lower()), "shape": shape, "device": device}


# ---------------------------------------------------------------------------------------------
# Explaining


def explain(text: str, lang: str = "en", run_static: bool = True, roots: list[str] | None = None) -> list[Explanation]:
    """Explain every known autograd error in `text` (the most relevant, the last one, comes last).

    Files the text names are opened (for source lines and the static engine) only if they are regular
    files of at most 2 MB inside `roots` (default: the current directory), never devices, FIFOs or
    symlinks leading out: pasted text is untrusted."""
    roots = [os.getcwd()] if roots is None else list(roots)
    lang = lang if lang in L else "en"
    text = _RANK_PREFIX.sub("", text)  # torch.distributed prefixes every line a rank prints: `[rank0]:   File ...`
    frames = parse_frames(text)
    user_frames = [f for f in frames if is_user_file(f.file)]
    static = _static_candidates(user_frames, lang, roots) if run_static else None
    shared = _text_candidates(text, lang, roots)  # once per text, not once per error
    hints = _TextHints(text, user_frames)
    results = []
    found = find_errors(text)
    positions = [f.pos for f in frames]
    for index in range(max(0, len(found) - _MAX_ERRORS), len(found)):
        kind, m = found[index]
        ex = _explain_one(kind, m, hints, frames, user_frames, static, lang, shared)
        # This error's own traceback: the text between the previous error and this one.
        start = found[index - 1][1].end() if index else 0
        region = frames[bisect.bisect_left(positions, start):bisect.bisect_left(positions, m.start())]
        ex.compiled = _compiled(text, start, m.start(), region)
        ex.distributed = _distributed(kind.id, text, start, m.start(), region, roots)
        results.append(ex)
    return results


_RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d{1,6}\]:", re.M)
# Words of torch.distributed's tensor-parallel and sharding APIs: in the traceback or in the user files it names
_DISTRIBUTED_WORDS = ("DTensor", "distribute_tensor", "torch.distributed.tensor", "fully_shard", "init_device_mesh",
                      "DeviceMesh")


def _distributed(kind: str, text: str, start: int, end: int, region: list[Frame], roots: list[str]) -> dict | None:
    """{"kind": "fsdp2" | "dtensor", "markers"} when this error comes from FSDP2 or DTensor code: an FSDP2 warning,
    or a version or graph error in a traceback (or user files) that use DTensor or fully_shard."""
    if kind == "fsdp2-view-output":
        return {"kind": "fsdp2", "markers": ["FSDP2"]}
    if kind not in ("saved-tensor-modified", "backward-twice", "leaf-inplace", "view-of-leaf-inplace"):
        return None
    chunk = text[max(start, end - 200_000):end]
    markers = [word for word in _DISTRIBUTED_WORDS if word in chunk]
    for path in list(dict.fromkeys(f.file for f in region if is_user_file(f.file) and not is_notebook_frame(f.file)))[:20]:
        source = files.read_source(path, roots) or ""
        markers += [word for word in _DISTRIBUTED_WORDS if word in source and word not in markers]
    return {"kind": "dtensor", "markers": markers} if markers else None


# Frames and words of torch.compile's machinery: dynamo's frame evaluation, AOT autograd's joint graph,
# inductor, and the code they generate.
_COMPILED_PATHS = (("torch/_dynamo/", "torch/_dynamo"), ("torch/_functorch/_aot_autograd/", "torch/_functorch/_aot_autograd"),
                   ("torch/_functorch/aot_autograd.py", "torch/_functorch/_aot_autograd"),
                   ("torch/_inductor/", "torch/_inductor"))
_COMPILED_WORDS = ("<eval_with_key>", "compiled_submod", "BackendCompilerFailed", "torch._dynamo.exc")


def _compiled(text: str, start: int, end: int, region: list[Frame]) -> dict | None:
    """{"markers", "script", "rerun"} when the traceback between `start` and `end` runs through torch.compile."""
    markers: list[str] = []
    for frame in region:
        path = frame.file.replace("\\", "/")
        for part, name in _COMPILED_PATHS:
            if part in path and name not in markers:
                markers.append(name)
        if frame.file.startswith("<eval_with_key>") and "<eval_with_key>" not in markers:
            markers.append("<eval_with_key>")
    chunk = text[max(start, end - 200_000):end]  # the words sit in the traceback right above the message
    for word in _COMPILED_WORDS:
        if word not in markers and word in chunk:
            markers.append(word)
    if not markers:
        return None
    script = next((f.file for f in region if f.func == "<module>" and is_user_file(f.file)
                   and not is_notebook_frame(f.file)), None)
    # The path as the traceback printed it: the command works from any folder.
    rerun = f"TORCH_COMPILE_DISABLE=1 python {script}" if script else "TORCH_COMPILE_DISABLE=1 python your_script.py"
    return {"markers": markers, "script": script, "rerun": rerun}


class _TextHints:
    """What the cause ranking looks for in the whole text, searched once per text rather than once per error."""

    def __init__(self, text: str, user_frames: list[Frame]):
        code = "\n".join(f.code for f in user_frames)
        self.retain_graph = "retain_graph=True" in code or "retain_graph=True" in text
        self.step = re.search(r"\.step\(\)", text) is not None
        self.inplace = re.search(r"inplace\s*=\s*True", text) is not None


def _explain_one(kind, m, hints, frames, user_frames, static, lang, shared) -> Explanation:
    ex = Explanation(kind=kind.id, title=kind.title[lang], message=m.group(0), meaning=kind.meaning[lang],
                     fix=kind.fix[lang])
    raised = _raised_at(user_frames, m)
    if raised is not None:
        ex.raised_at = {"file": raised.file, "line": raised.line, "code": raised.code}
    groups = m.re.groupindex
    if kind.id == "saved-tensor-modified":
        ex.tensor = _tensor(m)
        raw = m.group("op") if "op" in groups else None
        if m.group("now") is not None:
            category, op_text = catalog.describe_op(raw, lang)
            if raw:
                op, node = catalog.normalize_op(raw)
                ex.output_of = {"raw": raw, "nr": int(m.group("nr")), "op": op, "node": node,
                                "category": category, "text": op_text}
            else:
                ex.output_of = {"raw": None, "nr": None, "op": None, "node": None, "category": category,
                                "text": op_text}
            saved, now = int(m.group("saved")), int(m.group("now"))
            ex.versions = {"saved": saved, "now": now, "writes": now - saved}
        ex.causes = _rank_causes(ex, hints, lang)
    elif kind.id in ("multi-output-view", "multi-output-view-base"):
        raw = m.group("op")
        op, node = catalog.normalize_op(raw)
        category, op_text = catalog.describe_op(raw, lang)
        ex.output_of = {"raw": raw, "nr": int(m.group("nr")), "op": op, "node": node, "category": category,
                        "text": op_text}
    elif kind.id == "backward-twice":
        ex.causes = [{"id": "carried-state", "text": _carried_cause(lang)}]
    ex.candidates = _candidates(shared, raised, static, lang)
    rule = _rule_advice(static, m.group(0), raised, shared, lang)
    if rule is not None:  # the rule's recipe for this program, not the catalog's general one
        ex.rule = rule.to_json()
        ex.fix = rule.text(lang)
    ex.notebook = any(is_notebook_frame(f.file) for f in user_frames)
    ex.static_available = static is not None and static is not _NO_ENGINE
    return ex


def _carried_cause(lang: str) -> str:
    return ("state carried across loop iterations without .detach() (a hidden state, a running total of "
            "tensors), so the new loss reaches the previous iteration's freed graph"
            if lang == "en" else
            "跨循环迭代传递的状态没有分离（`detach()`）（隐状态、张量累加和等），新的损失会经过上一轮已释放的计算图")


def _raised_at(user_frames, m) -> Frame | None:
    """The last user frame printed before this error's message (frames are in text order: a bisection
    on their offsets, not a search of the text per frame)."""
    index = bisect.bisect_left([f.pos for f in user_frames], m.start())
    if index:
        return user_frames[index - 1]
    return user_frames[-1] if user_frames else None


def _rank_causes(ex: Explanation, hints: _TextHints, lang: str) -> list[dict]:
    scores = {cause: 0 for cause in catalog.CAUSES}
    category = (ex.output_of or {}).get("category", "none")
    shape = (ex.tensor or {}).get("shape") or []
    if category == "AsStrided":
        if len(shape) >= 2:
            scores["optimizer-step"] += 10
            scores["index-loop"] += 4
        else:
            scores["index-loop"] += 10
            scores["optimizer-step"] += 4
        scores["alias"] += 3
    elif category == "CopySlices":
        scores["index-loop"] += 10
        scores["input-inplace"] += 6
    elif category == "view":
        scores["alias"] += 8
        scores["index-loop"] += 6
        scores["input-inplace"] += 5
    elif category == "output":
        scores["output-inplace"] += 10
        scores["alias"] += 4
    elif category == "arith":
        scores["input-inplace"] += 10
        scores["alias"] += 3
        scores["output-inplace"] += 2
    elif category == "none":
        scores["leaf-update"] += 10
        scores["optimizer-step"] += 6
    else:
        scores["input-inplace"] += 6
        scores["optimizer-step"] += 4
    if hints.retain_graph:
        scores["optimizer-step"] += 6
    if hints.step:
        scores["optimizer-step"] += 3
    if hints.inplace:
        scores["output-inplace"] += 4
    ranked = sorted((c for c in scores if scores[c] > 0), key=lambda c: -scores[c])
    return [{"id": c, "text": catalog.CAUSES[c][lang]} for c in ranked[:4]]


_NO_ENGINE = object()
_TRACED_KINDS = {"saved-tensor-modified", "backward-twice", "multi-output-view-base"}


def _static_candidates(user_frames: list[Frame], lang: str, roots: list[str]):
    """{file: _StaticFile} from the static engine, or _NO_ENGINE when it is not installed yet."""
    try:
        import gradguard.engine  # noqa: F401  (a checkout without the engine lists no static lines)
    except Exception:
        return _NO_ENGINE
    results: dict[str, _StaticFile] = {}
    for path in list(dict.fromkeys(f.file for f in user_frames if not is_notebook_frame(f.file)))[:20]:
        source = files.read_source(path, roots)
        if source is None:
            continue
        findings = advice.findings_of(source, path, lang)
        lines = source.splitlines()
        found = []
        for finding in findings:
            line = finding.span.start_line + 1
            found.append(Candidate(path, line, "static", getattr(finding, "code", ""),
                                   getattr(finding, "message", ""),
                                   lines[line - 1].strip() if 0 < line <= len(lines) else ""))
        results[path] = _StaticFile(found, findings, source)
    return results


@dataclass
class _StaticFile:
    candidates: list  # [Candidate]
    findings: list  # the engine's Finding objects: their related lines and fixes choose the advice
    source: str = ""  # the file's text: a fix is re-checked on it before its command is given (advice.fix_holds)


def _rule_advice(static, error_text: str, raised: Frame | None, shared: list[Candidate], lang: str):
    """The static rule's recipe for this error (advice.py): the finding that names the lines `gradguard trace`
    printed (the write, with the save), else one whose rule predicts this error text and that names the line the
    traceback raised at."""
    if not isinstance(static, dict):
        return None
    by_path = {os.path.abspath(path): (path, entry) for path, entry in static.items()}
    traced = [c for c in shared if c.source == "trace"]
    for write, save in zip(traced[0::2], traced[1::2]):  # _text_candidates lists each write, then its save
        path, entry = by_path.get(os.path.abspath(write.file), (None, None))
        if entry is not None:
            same = os.path.abspath(save.file) == os.path.abspath(write.file)
            found = advice.match(entry.findings, path, write.line, (save.line,) if same else (), entry.source, lang)
            if found is not None:
                return found
    if raised is not None and raised.file in static:
        entry = static[raised.file]
        return advice.for_error(entry.findings, raised.file, error_text, raised.line, entry.source, lang)
    return None


class _Lines:
    """Source lines of the files the text names, each read at most once, only if files.read_source allows."""

    def __init__(self, roots: list[str]):
        self.roots = roots
        self.cache: dict[str, list[str]] = {}

    def __call__(self, path: str, line: int) -> str:
        if path not in self.cache:
            if len(self.cache) >= 50:
                return ""
            source = None if is_notebook_frame(path) else files.read_source(path, self.roots)
            self.cache[path] = source.splitlines() if source is not None else []
        lines = self.cache[path]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _text_candidates(text: str, lang: str, roots: list[str]) -> list[Candidate]:
    """Lines named by gradguard trace's output and by anomaly mode's forward traceback. The tracer's
    lines are matched line by line, on lines of bounded length that hold the literal anchor, so the
    lazy `.+?` groups never scan a long line from many starts."""
    lx = L[lang]
    line_of = _Lines(roots)
    out: list[Candidate] = []
    for raw in text.split("\n"):
        if len(raw) > _MAX_LINE or not ("saved for" in raw or "保存的" in raw):
            continue
        for pattern in (_TRACE_EN, _TRACE_ZH, _TRACE_SILENT):
            for m in pattern.finditer(raw):
                g = m.groupdict()
                out.append(Candidate(g["wfile"], int(g["wline"]), "trace", "",
                                     lx["trace_write"].format(op=g["op"]), line_of(g["wfile"], int(g["wline"]))))
                out.append(Candidate(g["sfile"], int(g["sline"]), "trace", "",
                                     lx["trace_save"].format(node=g["node"], saved=g.get("saved") or "?"),
                                     line_of(g["sfile"], int(g["sline"]))))
            if len(out) > 200:
                break
    anomaly = _ANOMALY.search(text)
    if anomaly:
        tail = parse_frames(text[anomaly.end():].split("Traceback (most recent call last)")[0])
        forward = [f for f in tail if is_user_file(f.file)]
        if forward:
            f = forward[-1]
            out.append(Candidate(f.file, f.line, "anomaly", "", lx["anomaly_line"].format(node=anomaly.group("node")),
                                 f.code))
    return out


def _candidates(shared: list[Candidate], raised: Frame | None, static, lang: str) -> list[dict]:
    out: list[Candidate] = list(shared)
    if isinstance(static, dict):
        for found in static.values():
            out.extend(found.candidates)
    if raised is not None:
        out.append(Candidate(raised.file, raised.line, "traceback", "", L[lang]["raised_line"], raised.code))
    unique, seen = [], set()
    for c in out:
        key = (c.file, c.line, c.source, c.code, c.message)
        if key not in seen:
            seen.add(key)
            unique.append(asdict(c))
    return unique


# ---------------------------------------------------------------------------------------------
# Rendering


def render_text(explanations: list[Explanation], lang: str = "en") -> str:
    lx = L[lang if lang in L else "en"]
    if not explanations:
        return lx["unknown"]
    blocks = []
    for ex in explanations:
        rows = [lx["head"].format(title=ex.title), _row(lx["error"], ex.message)]
        if ex.raised_at:
            rows.append(_row(lx["raised"], f"{_short(ex.raised_at['file'])}:{ex.raised_at['line']}  "
                                             f"{ex.raised_at['code']}"))
        if ex.tensor:
            t = ex.tensor
            device = "" if t["device"] in ("", "cpu") else f" {t['device']}"
            rows.append(_row(lx["tensor"], lx["tensor_text"].format(shape=t["shape"], dtype=t["dtype"],
                                                                    device=device, type=t["type"])))
        if ex.output_of:
            o = ex.output_of
            head = lx["output_nr"].format(nr=o["nr"], raw=o["raw"]) + lx["sep"] if o["raw"] else ""
            rows.append(_row(lx["output"], head + o["text"]))
        if ex.versions:
            v = ex.versions
            note = lx["versions_text"].format(**v)
            if (ex.output_of or {}).get("category") in ("AsStrided", "none") and v["saved"] >= 1:
                note += lx["versions_param"]
            rows.append(_row(lx["versions"], note))
        rows.append(_row(lx["meaning"], ex.meaning))
        if ex.causes:
            rows.append(f"  {lx['causes']}{lx['sep'].rstrip()}")  # full-width colon in zh
            rows.extend(f"    {i}. {c['text']}" for i, c in enumerate(ex.causes, start=1))
        if ex.candidates:
            rows.append(f"  {lx['candidates']}{lx['sep'].rstrip()}")  # full-width colon in zh
            for c in ex.candidates:
                label = lx["src_" + c["source"]] + (f" {c['code']}" if c["code"] else "")
                rows.append(f"    {_short(c['file'])}:{c['line']}  {c['text']}")
                rows.append(f"        [{label}] {c['message']}")
        if not ex.static_available:
            rows.append("  " + lx["static_missing"])
        rows.append(_row(lx["fix"], ex.fix))
        if ex.compiled:
            c = ex.compiled
            rows.append(_row(lx["compiled"], lx["compiled_text"].format(markers=", ".join(c["markers"]))))
            rows.append(_row(lx["eager"], lx["eager_text"].format(
                rerun=f"`{c['rerun']}`", script=c["script"] or "your_script.py")))
        if ex.distributed:
            rows.append(_row(lx["distributed"], lx["distributed_" + ex.distributed["kind"]]))
        if ex.kind in _TRACED_KINDS and not ex.compiled and not any(c["source"] == "trace" for c in ex.candidates):
            rows.append(_row(lx["next"], lx["next_notebook" if ex.notebook else "next_trace"]))
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def _row(label: str, value: str) -> str:
    import unicodedata

    width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in label)
    return f"  {label}{' ' * max(1, 15 - width)}{value}"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def to_json(explanations: list[Explanation]) -> dict:
    errors = []
    for ex in explanations:
        d = asdict(ex)
        d.pop("static_available")
        d.pop("notebook")
        errors.append(d)
    return {"version": 1, "errors": errors}


# ---------------------------------------------------------------------------------------------
# Command line


def main(argv: list[str]) -> int:
    """Entry point for `gradguard explain ...`: 0 explained, 1 nothing recognised, 2 usage/I-O error."""
    parser = argparse.ArgumentParser(prog="gradguard explain",
                                     description="Explain a PyTorch autograd error from a traceback or its text.")
    parser.add_argument("input", nargs="?", default="-", help="file with the traceback, or - for stdin (default)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--lang", choices=("en", "zh"),
                        help="language of the explanation (default: the config's `language`, else the locale)")
    parser.add_argument("--no-static", action="store_true",
                        help="do not run the static engine on the files the traceback names")
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        if opts.input == "-":
            text = sys.stdin.read(_MAX_INPUT)
        else:
            with open(opts.input, encoding="utf-8", errors="replace") as fh:
                text = fh.read(_MAX_INPUT)
    except OSError as exc:
        print(f"gradguard explain: {opts.input}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if opts.lang is None:
        from ..i18n import default_language

        opts.lang = default_language(os.getcwd())
    explanations = explain(text, lang=opts.lang, run_static=not opts.no_static)
    if opts.format == "json":
        print(json.dumps(to_json(explanations), indent=2, ensure_ascii=False))
    else:
        print(render_text(explanations, opts.lang))
    return 0 if explanations else 1
