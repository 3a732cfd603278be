"""The tracer: saved-tensor hooks, an in-place write watcher, and autograd's version check redone.

Why each piece exists (measured in ../shared/notes/runtime-tracer.md):

* ``saved_tensors_hooks`` let us see every tensor a backward node keeps, with the line that
  saved it. Installing them switches off autograd's own version check, so ``_unpack`` must
  redo it exactly (``tensor._version != saved version`` -> raise), or gradients go silently wrong.
* ``_pack`` keeps ``t.detach()`` (same storage, same version counter, no ``grad_fn``): keeping
  ``t`` itself would make every graph that saves its own output a reference cycle through C++.
* A ``SavedTensor`` record lives exactly as long as the graph that holds it; its ``__del__``
  takes its storage off the watch list. The write watcher does one dict lookup per in-place
  call and logs only writes to storages that live saves point into.
* The watcher is a ``TorchFunctionMode``: user-level names (``__setitem__``, ``addcdiv_``),
  and, unlike a dispatch mode, it leaves ``_foreach_*_`` version bumps intact.
"""
from __future__ import annotations

import inspect
import itertools
import linecache
import os
import sys
import sysconfig
import threading
import warnings
import weakref
from collections import deque
from dataclasses import dataclass

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode

from ..explain import catalog
from . import guards, report
from .frames import _tracer_frame, prune_traceback  # noqa: F401  (trace/notebook.py imports it from here)

_SEQ = itertools.count(1)
_THREAD = threading.local()  # .mode: the watcher installed in this thread; .step_aside: popped for an optimizer step
_STEPS_ASIDE = []  # the watchers popped for an optimizer step that has not ended (a step that raised never ends)
_WRITE_LOG_LIMIT = 256  # per storage; a storage saved by a graph that never dies keeps only recent writes

# ---------------------------------------------------------------------------------------------
# Which frames belong to the user


_GRADGUARD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _skip_prefixes() -> tuple[str, ...]:
    # gradguard's own frames are the tracer (this package) and the command line (files directly in the
    # package); the rule examples under gradguard/rules/examples/ are user programs like any other. The
    # scripts folder holds the console-script launchers (`.venv/bin/gradguard`, `.venv/bin/ipython`): the
    # outermost frame of the process, never the program.
    prefixes = {os.path.dirname(os.path.abspath(__file__)) + os.sep,
                os.path.dirname(os.path.abspath(torch.__file__)) + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):
        path = sysconfig.get_paths().get(key)
        if path:
            prefixes.add(os.path.abspath(path) + os.sep)
    return tuple(sorted(prefixes))


_SKIP = _skip_prefixes()
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_GRADCHECK = os.path.join(_TORCH_DIR, "autograd", "gradcheck.py")
_inference_mode_enabled = torch.is_inference_mode_enabled
_IS_USER: dict[str, bool] = {}


def _is_user_file(filename: str) -> bool:
    if filename.startswith("<"):
        return not filename.startswith("<frozen")
    path = os.path.abspath(filename)
    if path.startswith(_SKIP) or os.path.dirname(path) == _GRADGUARD_DIR:
        return False
    real = os.path.realpath(path)  # a launcher linked from elsewhere (pipx: ~/.local/bin/gradguard)
    return real == path or not (real.startswith(_SKIP) or os.path.dirname(real) == _GRADGUARD_DIR)


# ids of the code objects of the frames that run the user's program (`gradguard trace`'s run_program, IPython's
# run_code; module-level functions, alive for the whole process): the frames above them are the runner's, never
# the program's, whatever file they are in. ids, not the code objects: hashing a code object hashes its contents.
_BOUNDARIES: set = set()
_KEEP_ALIVE: list = []  # the boundary code objects, so that their ids stay theirs


def add_boundary(code) -> None:
    """Frames at or above a frame running `code` are not call sites of the program (see _BOUNDARIES)."""
    if id(code) not in _BOUNDARIES:
        _KEEP_ALIVE.append(code)
        _BOUNDARIES.add(id(code))


def _user_frame(depth: int = 2) -> tuple[str, int, str]:
    """(file, line, via): the innermost user frame, and the library module it called into."""
    frame = sys._getframe(depth)
    cache = _IS_USER
    via = ""
    while frame is not None:  # the program's own frames come before any boundary: no check needed (hot path)
        filename = frame.f_code.co_filename
        user = cache.get(filename)
        if user is None:
            user = cache[filename] = _is_user_file(filename)
        if user:
            return filename, frame.f_lineno, via
        if not via and filename.startswith(_TORCH_DIR) and not filename.endswith("overrides.py"):
            via = filename  # the innermost torch frame: torch/optim/adam.py rather than optimizer.py
        frame = frame.f_back
    return "<unknown>", 0, via


def _callers(depth: int = 2, limit: int = 3) -> tuple:
    """((file, line), ...): the user frames that called the innermost user frame, innermost first (the
    call sites that lead to a write done inside a helper such as `update_params()`)."""
    frame = sys._getframe(depth)
    found = []
    seen_user = False
    while frame is not None and len(found) < limit and id(frame.f_code) not in _BOUNDARIES:
        filename = frame.f_code.co_filename
        user = _IS_USER.get(filename)
        if user is None:
            user = _IS_USER[filename] = _is_user_file(filename)
        if user:
            if seen_user:
                found.append((filename, frame.f_lineno))
            seen_user = True
        frame = frame.f_back
    return tuple(found)


def _module_of(filename: str) -> str:
    """torch/optim/adadelta.py -> torch.optim.adadelta"""
    if not filename.startswith(_TORCH_DIR):
        return ""
    rel = filename[len(_TORCH_DIR) - 1 - len("torch"):]
    return rel[:-3].replace(os.sep, ".") if rel.endswith(".py") else rel


# ---------------------------------------------------------------------------------------------
# Records


class SavedTensor:
    """What ``_pack`` returns: autograd holds this object instead of the tensor."""

    __slots__ = ("tensor", "version", "key", "seq", "file", "line", "backward_calls",
                 "pack_node", "pack_view", "output_nr", "ref", "tracer", "reported")

    def __del__(self):
        try:
            tracer = self.tracer
            if tracer is not None:
                if tracer._backward_now:
                    tracer._tag_freed(self)
                if self.key is not None:
                    tracer._release(self.key, self.seq)
        except Exception:  # a half-built record, or interpreter shutdown
            pass


@dataclass
class LiveSave:
    """The watch-list entry of a live SavedTensor (no reference to the record itself)."""

    tensor: torch.Tensor
    version: int
    file: str
    line: int
    seq: int


@dataclass
class InplaceWrite:
    seq: int
    file: str
    line: int
    op: str
    via: str  # library module that did the write for the user's line ("torch.optim.adam"), or ""
    version_before: int
    version_after: int
    start: int
    end: int  # byte range written (over-approximated by the tensor's extent)
    module: tuple | None = None  # (file, line, "nn.ReLU(inplace=True)"): the torch module that wrote, where it was made
    callers: tuple = ()  # ((file, line), ...): user call sites leading to the write, innermost first


def _extent(t: torch.Tensor) -> tuple[int, int]:
    try:
        if t.numel() == 0:
            return 0, 0
        start = t.data_ptr()
        last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()) if size > 0)
        return start, start + (last + 1) * t.element_size()
    except Exception:
        return 0, 1 << 62


def _storage_key(t: torch.Tensor):
    try:
        return t.untyped_storage()._cdata
    except Exception:  # sparse, nested, some subclasses: not watched
        return None


# ---------------------------------------------------------------------------------------------
# Classifying calls seen by the watcher

_PLAIN, _WRITE_SELF, _INPLACE_ARG, _BACKWARD = 0, 1, 2, 3
_INPLACE_DUNDERS = {
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
    "__ipow__", "__imatmul__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
}
# Names ending in "_" that do not write tensor data.
_NOT_WRITES = {"requires_grad_", "share_memory_", "retain_grad", "rename_", "_set_grad_enabled",
               "record_stream", "_fix_weakref", "_coalesced_",
               "clip_grad_norm_", "clip_grad_value_"}  # these write .grad, not the tensors passed
_KIND: dict = {}


def _classify(func) -> tuple[int, int]:
    name = getattr(func, "__name__", "") or ""
    if func is torch.Tensor.backward or func is torch.autograd.backward or func is torch.autograd.grad:
        kind = (_BACKWARD, 0)
    elif name in _INPLACE_DUNDERS:
        kind = (_WRITE_SELF, 0)
    elif name.endswith("_") and not name.endswith("__") and name not in _NOT_WRITES:
        kind = (_WRITE_SELF, 0)
    else:
        kind = (_PLAIN, 0)
        if inspect.isfunction(func):
            try:
                params = list(inspect.signature(func).parameters)
            except (TypeError, ValueError):
                params = []
            if "inplace" in params:
                kind = (_INPLACE_ARG, params.index("inplace"))
    try:
        _KIND[func] = kind
    except TypeError:
        pass
    return kind


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            if isinstance(item, torch.Tensor):
                yield item


def _op_name(func) -> str:
    name = getattr(func, "__name__", None) or str(func)
    return name


class _WriteWatcher(TorchFunctionMode):
    def __init__(self, tracer: "Tracer"):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        __tracebackhide__ = True  # IPython and pytest hide this frame; Tracer.__exit__ prunes it
        if _is_compiling():  # dynamo tracing this mode (torch._dynamo.optimize(nopython=True)): be invisible to it
            return func(*args, **(kwargs or {}))
        kind = _KIND.get(func)
        if kind is None:
            kind = _classify(func)
        code = kind[0]
        try:  # free in CPython 3.11+ unless torch raises
            if code == _PLAIN:
                if _inference_mode_enabled():
                    return self.tracer._inference_call(func, args, kwargs or {})
                if kwargs:
                    if "out" in kwargs and self.tracer.live:
                        return self.tracer._watched_call(func, args, kwargs, kwargs["out"], _op_name(func) + "(out=)")
                    return func(*args, **kwargs)
                return func(*args)
            if kwargs is None:
                kwargs = {}
            tracer = self.tracer
            if code == _BACKWARD:
                number = tracer._backward_started(kwargs, args)
                outer, tracer._backward_now = tracer._backward_now, number
                try:
                    return func(*args, **kwargs)
                finally:
                    tracer._backward_now = outer
            if code == _WRITE_SELF and args and _overlapping_grad_write(args[0]):
                tracer._overlap_write(func)
            if not tracer.live:
                return func(*args, **kwargs)
            op = None
            if code == _WRITE_SELF:
                target = args[0] if args else None
            else:  # inplace=True functional
                index = kind[1]
                flag = kwargs.get("inplace", args[index] if len(args) > index else False)
                if not flag:
                    return func(*args, **kwargs)
                target = args[0] if args else kwargs.get("input")
                op = _op_name(func) + "(inplace=True)"
            if "out" in kwargs:
                target = [*_tensors(target), *_tensors(kwargs["out"])]
            return tracer._watched_call(func, args, kwargs, target, op)
        except RuntimeError as exc:
            try:
                self.tracer._torch_raised(exc, func, code, args, kwargs or {})
            except Exception:  # never let the tracer replace the program's own error
                pass
            raise


# ---------------------------------------------------------------------------------------------
# The tracer


class Tracer:
    """Install with ``with Tracer() as tr: ...``; findings collect in ``tr.findings``.

    strict: also raise (instead of warning) when backward reads a tensor whose storage was
    written without a version bump (``.data`` writes, fused optimizers).
    warn_at_write: print a one-line warning at the in-place write that invalidates a live save.
    report_at_exit: print each finding's full report once when the ``with`` block ends (the
    command line prints them itself, after the program's traceback).
    emit: called with each text block to show the user (default: print to stderr).
    compiled: run what ``torch.compile`` returns with the tracer stepped aside, and say so at the first
    ``torch.compile`` call (False: leave torch.compile alone, for programs run with compilation disabled).
    on_os_exit: called with the status when the program leaves through ``os._exit`` (default: print the
    reports not printed yet).
    """

    def __init__(self, *, strict: bool = False, warn_at_write: bool = True, lang: str = "en",
                 emit=None, report_at_exit: bool = True, compiled: bool = True, on_os_exit=None):
        self.strict = strict
        self.compiled = compiled
        self.on_os_exit = on_os_exit
        self.untraced: dict[tuple, int] = {}  # (reason, file, line) -> times: regions run without the tracer
        self._write_notes: list = []  # (save site, write site, finding seen at the write): kept at the end if no finding covers the write
        self._told_compiled = False
        self.warn_at_write = warn_at_write
        self.report_at_exit = report_at_exit
        self.lang = lang
        self.emit = emit if emit is not None else _print_stderr
        self.live: dict[int, dict[int, LiveSave]] = {}  # storage key -> seq -> live save
        self.writes: dict[int, deque] = {}  # storage key -> recent InplaceWrite
        self.findings: list[report.TraceFinding] = []
        self.backward_calls = 0
        self.backward_sites: deque = deque(maxlen=64)  # (number, file, line, retain_graph, callers)
        self._backward_now = 0  # number of the backward() call running, 0 outside backward
        self._warned: set = set()
        self._keys: dict[tuple, report.TraceFinding] = {}  # one finding per (kind, lines)
        self._pending: dict[int, tuple[BaseException, report.TraceFinding]] = {}
        self._reported = 0  # findings[:_reported] have had their full report printed
        self.module_sites: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> (file, line)
        self.overlap_writes: deque = deque(maxlen=8)  # (file, line, op, callers): grad writes into expanded tensors
        self.inference_sites: dict[int, tuple] = {}  # storage key -> (weakref, file, line, op) made under inference_mode
        self._active = False

    # -- installation ---------------------------------------------------------------------
    def __enter__(self) -> "Tracer":
        self._showwarning = warnings.showwarning
        warnings.showwarning = self._show_warning
        self._module_init = torch.nn.Module.__init__
        torch.nn.Module.__init__ = _recording_init(self._module_init, self.module_sites)
        self._thread_token = self._enter_thread()
        self._guards = guards.Guards(self)
        self._guards.install(self.compiled)
        self._step_hooks = (register_optimizer_step_pre_hook(self._step_started),
                            register_optimizer_step_post_hook(self._step_ended))
        self._active = True
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._active = False
        for handle in self._step_hooks:
            handle.remove()
        self._guards.uninstall()
        self._step_ended()  # a step that raised left the watcher off
        self._exit_thread(self._thread_token, exc_type, exc, tb)
        torch.nn.Module.__init__ = self._module_init
        if warnings.showwarning == self._show_warning:
            warnings.showwarning = self._showwarning
        if exc is not None:
            self.confirm(exc)
            prune_traceback(exc)
        self._pending.clear()
        if self.report_at_exit:
            self.flush_reports()

    def live_saves(self) -> int:
        """Number of saved tensors currently held by live graphs (for leak checks)."""
        return sum(len(v) for v in self.live.values())

    def confirm(self, exc: BaseException) -> None:
        """`exc` reached the top (the end of the traced block, a notebook cell): the errors torch raised
        on the way become findings. Errors the program caught and handled never do."""
        seen = set()
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            pending = self._pending.pop(id(exc), None)
            if pending is not None and pending[0] is exc:
                self._add(pending[1])
            exc = exc.__cause__ or exc.__context__

    def flush_reports(self) -> None:
        """Print the full report of every finding not reported yet (each finding once)."""
        for text in self.take_reports():
            self.emit(text)

    def take_reports(self) -> list[str]:
        """The texts not shown yet, each once: every new finding's full report, then the write warnings no
        finding covers (a write into a live save whose backward never ran), then the regions not traced."""
        texts = []
        while self._reported < len(self.findings):
            texts.append(self.findings[self._reported].text)
            self._reported += 1
        # A write a finding already names is that finding's bug, whichever of the graph's saves it broke.
        covered = {(os.path.abspath(f.write["file"]), f.write["line"]) for f in self.findings if f.write}
        for save, write, finding in self._write_notes:
            if (os.path.abspath(write[0]), write[1]) not in covered:
                self._add(finding)  # trace.json and the editor show it too
                texts.append(finding.text)
        self._reported = len(self.findings)
        self._write_notes.clear()
        if self.untraced:
            texts.append(report.untraced_note(self.untraced, self.lang))
            self.untraced.clear()
        return texts

    # -- threads, regions that cannot be traced, exits ------------------------------------------
    def _enter_thread(self):
        """Install the hooks and the watcher in the calling thread (both are thread-local in torch)."""
        hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        hooks.__enter__()
        mode = _WriteWatcher(self)
        mode.__enter__()
        _THREAD.mode = mode
        return hooks, mode

    def _exit_thread(self, token, exc_type=None, exc=None, tb=None) -> None:
        hooks, mode = token
        try:
            mode.__exit__(exc_type, exc, tb)
        finally:
            _THREAD.mode = None
            if getattr(guards._tls, "aside", False):
                guards._tls.aside = False  # a switch-off region the program never closed: our hooks are already off
            else:
                hooks.__exit__(exc_type, exc, tb)

    # -- optimizer steps --------------------------------------------------------------------------
    def _step_started(self, optimizer=None, args=(), kwargs=None) -> None:
        """An optimizer step with no live saved tensor can change nothing backward will read: it runs without
        the watcher (most of a training loop's ops are the step's; it halves the tracer's cost). A step that
        may run forward and backward itself (a closure, as LBFGS takes) keeps it."""
        if self.live or (len(args) > 1 and args[1] is not None) or (kwargs and kwargs.get("closure") is not None):
            return
        mode = getattr(_THREAD, "mode", None)
        depth = torch._C._len_torch_function_stack()
        if mode is None or not depth or torch._C._get_function_stack_at(depth - 1) is not mode:
            return
        torch._C._pop_torch_function_stack()
        _THREAD.step_aside = mode
        _STEPS_ASIDE.append(mode)

    def _step_ended(self, optimizer=None, args=(), kwargs=None) -> None:
        mode = getattr(_THREAD, "step_aside", None)
        if mode is not None:
            _THREAD.step_aside = None
            _STEPS_ASIDE.remove(mode)
            torch._C._push_on_torch_function_stack(mode)

    def _untraced(self, reason: str) -> None:
        file, line, _ = _user_frame(3)
        key = (reason, file, line)
        self.untraced[key] = self.untraced.get(key, 0) + 1

    def _compiled_at(self) -> tuple:
        """The program called torch.compile: say once, now, that compiled code is not traced, and how to run
        it eagerly. Returns the key under which the calls of what it compiled are counted."""
        file, line, _ = _user_frame(3)
        key = ("compiled", file, line)
        self.untraced.setdefault(key, 0)
        if not self._told_compiled:
            self._told_compiled = True
            self.emit(report.compiled_note(file, line, self.lang))
        return key

    def _run_aside(self, fn, args, kwargs, site: tuple):
        """Call `fn` (a compiled callable) with this thread's watcher and hooks off."""
        mode = getattr(_THREAD, "mode", None)
        if not self._active or mode is None:
            return fn(*args, **kwargs)
        depth = torch._C._len_torch_function_stack()
        popped_mode = depth > 0 and torch._C._get_function_stack_at(depth - 1) is mode
        if popped_mode:
            torch._C._pop_torch_function_stack()
        popped_hooks = not getattr(guards._tls, "aside", False) and guards._hooks_on_top(self)
        if popped_hooks:
            torch._C._autograd._pop_saved_tensors_default_hooks()
        self.untraced[site] = self.untraced.get(site, 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            if popped_hooks:
                torch._C._autograd._push_saved_tensors_default_hooks(self._pack, self._unpack)
            if popped_mode:
                torch._C._push_on_torch_function_stack(mode)

    def _at_os_exit(self, status) -> None:
        if self.on_os_exit is not None:
            self.on_os_exit(status)
        elif self.report_at_exit:
            self.flush_reports()

    def _add(self, finding: "report.TraceFinding") -> None:
        key = finding.key()
        known = self._keys.get(key)
        if known is not None:
            known.count += 1
            return
        self._keys[key] = finding
        self.findings.append(finding)

    # -- saved tensors --------------------------------------------------------------------
    def _pack(self, t: torch.Tensor):
        if _STEPS_ASIDE:  # an optimizer step raised and the program went on: the watcher comes back
            self._step_ended()
        rec = SavedTensor()
        rec.tensor = t.detach()
        version = rec.version = t._version
        seq = rec.seq = next(_SEQ)
        rec.file, rec.line, _ = _user_frame(2)
        rec.backward_calls = self.backward_calls
        fn = t.grad_fn
        # A saved view whose base is written later gets AsStridedBackward0 as its grad_fn (torch's
        # message then says "output 0 of AsStrided"); the clause is only shown for stale saves.
        rec.pack_node = fn.name() if fn is not None else None
        rec.pack_view = fn is not None and t._is_view()
        rec.output_nr = t.output_nr
        rec.reported = False
        try:
            rec.ref = weakref.ref(t)
        except TypeError:
            rec.ref = None
        key = rec.key = _storage_key(t)
        rec.tracer = self
        if key is not None:
            entry = LiveSave(rec.tensor, version, rec.file, rec.line, seq)
            # No allocation between the lookup and the insert: a garbage collection there could run
            # _release for the same storage and orphan the dict we insert into.
            self.live.setdefault(key, {})[seq] = entry
        return rec

    def _release(self, key: int, seq: int) -> None:
        saves = self.live.get(key)
        if saves is None:
            return
        saves.pop(seq, None)
        if not saves and self.live.get(key) is saves:
            del self.live[key]
            self.writes.pop(key, None)

    def _tag_freed(self, rec: SavedTensor) -> None:
        """Backward is freeing the node that held `rec`: remember on the node which forward line built it
        and which backward() call freed it, for a later "backward through the graph a second time"."""
        node = torch._C._current_autograd_node()
        if node is not None:
            meta = node.metadata
            if "gradguard" not in meta:
                meta["gradguard"] = (rec.file, rec.line, self._backward_now)

    def _unpack(self, rec):
        if not isinstance(rec, SavedTensor):
            return rec
        tensor = rec.tensor
        now = tensor._version
        if now != rec.version:
            raise self._stale_save(rec, now)
        if rec.key is not None:
            log = self.writes.get(rec.key)
            if log and log[-1].seq > rec.seq:
                start, end = _extent(tensor)
                for write in log:
                    if write.seq > rec.seq and write.start < end and start < write.end:
                        self._silent_write(rec, write)
                        break
        return tensor

    # -- writes ---------------------------------------------------------------------------
    def _backward_started(self, kwargs, args) -> int:
        self.backward_calls += 1
        file, line, _ = _user_frame(3)
        retain = kwargs.get("retain_graph")
        if retain is None and len(args) > 2 and isinstance(args[2], bool):
            retain = args[2]
        self.backward_sites.append((self.backward_calls, file, line, bool(retain), _callers(3)))
        return self.backward_calls

    def _watched_call(self, func, args, kwargs, target, op=None):
        live = self.live
        hits = []
        for t in _tensors(target):
            key = _storage_key(t)
            if key is not None and key in live:
                hits.append((t, key, t._version))
        if not hits:
            return func(*args, **kwargs)
        # Numbered before the call: an in-place op that saves its own result (relu_, sigmoid_) saves
        # *after* its write, and that save is valid.
        seq = next(_SEQ)
        result = func(*args, **kwargs)
        file, line, via = _user_frame(3)
        if via == _GRADCHECK:
            return result  # gradcheck's perturbation of an input, put back (`entry.copy_(orig)`) before any backward
        op = op or _op_name(func)
        module = self._module_site() if via.startswith(_TORCH_DIR + "nn" + os.sep) else None
        callers = _callers(3)
        for t, key, before in hits:
            start, end = _extent(t)
            write = InplaceWrite(seq, file, line, op, _module_of(via), before, t._version,
                                 start, end, module, callers)
            log = self.writes.get(key)
            if log is None:
                log = self.writes[key] = deque(maxlen=_WRITE_LOG_LIMIT)
            log.append(write)
            if self.warn_at_write:
                self._warn_write(key, write)
        return result

    def _warn_write(self, key: int, write: InplaceWrite) -> None:
        for save in list(self.live.get(key, {}).values()):
            if save.seq > write.seq:
                continue  # saved by the write itself (relu_ saves its own result): valid
            start, end = _extent(save.tensor)
            if not (write.start < end and start < write.end):
                continue
            now = save.tensor._version
            kind = "stale-save" if now != save.version else "silent-write"
            pair = (kind, save.file, save.line, write.file, write.line)
            if pair in self._warned:
                continue
            self._warned.add(pair)
            # A finding at the end, only if backward never reported the same write: one report each.
            self._write_notes.append(((save.file, save.line), (write.file, write.line),
                                      report.seen_at_write(kind, save, write, now, self.lang)))

    def _show_warning(self, message, category, filename, lineno, file=None, line=None):
        """Warnings torch raises from C++ point at the innermost Python frame, the watcher's: show the
        user's line instead, as without the tracer."""
        if _tracer_frame(filename):
            filename, lineno, _ = _user_frame(2)
            line = linecache.getline(filename, lineno)
        self._showwarning(message, category, filename, lineno, file, line)

    def _inference_call(self, func, args, kwargs):
        """An op under inference_mode: remember where its results were made, so that "Inference tensors
        cannot be saved for backward" later names the line that created the tensor."""
        result = func(*args, **kwargs)
        sites = self.inference_sites
        for t in _tensors(result):
            key = _storage_key(t)
            if key is None:
                continue
            known = sites.get(key)
            if known is None or known[0]() is None:  # new, or a freed storage whose address was reused
                if len(sites) >= 4096:
                    sites.pop(next(iter(sites)))
                file, line, _ = _user_frame(3)
                try:
                    sites[key] = (weakref.ref(t), file, line, _op_name(func))
                except TypeError:
                    pass
        return result

    def _created_site(self, args, kwargs):
        """(file, line, op) where an inference tensor among the arguments was created, if seen."""
        for value in [*args, *kwargs.values()]:
            for t in _tensors(value):
                try:
                    if t.is_inference():
                        site = self.inference_sites.get(_storage_key(t))
                        if site is not None and site[0]() is not None:
                            return site[1:]
                except Exception:
                    continue
        return None

    def _module_site(self):
        """(file, line, description) where the nn.Module whose forward is running was constructed: a write
        inside torch's own modules (nn.ReLU(inplace=True) in an nn.Sequential) is then traced to the line
        that created that module."""
        frame = sys._getframe(2)
        while frame is not None:
            if _is_user_file(frame.f_code.co_filename):
                return None  # the user's own code called in: the module is not torch's
            module = frame.f_locals.get("self") if frame.f_code.co_name == "forward" else None
            if module is not None:
                try:
                    site = self.module_sites.get(module)
                except TypeError:
                    site = None
                if site is not None:
                    return (site[0], site[1], _describe_module(module))
            frame = frame.f_back
        return None

    def _overlap_write(self, func) -> None:
        file, line, _ = _user_frame(3)
        self.overlap_writes.append((file, line, _op_name(func), _callers(3)))

    # -- errors torch raises itself -------------------------------------------------------
    def _torch_raised(self, exc: RuntimeError, func, code: int, args, kwargs) -> None:
        """Torch raised `exc` from `func`: explain the autograd errors raised at the line itself (leaf,
        view, out=, inference, overlapping writes) and backward through a freed graph. The finding is
        kept only if the error reaches the top (`confirm`)."""
        if id(exc) in self._pending or getattr(exc, "_gradguard_seen", False):
            return
        text = str(exc)
        try:
            exc._gradguard_seen = True  # an outer watcher frame sees the same exception again
        except Exception:
            pass
        if code == _BACKWARD and "Trying to backward through the graph a second time" in text:
            finding = self._backward_twice(text, args, kwargs)
        elif code == _BACKWARD and self.overlap_writes and ("refers to a single memory location" in text[:500]
                                                             or "refer to a single memory location" in text[:500]):
            kind = _write_time_kind(text)
            file, line, op, callers = self.overlap_writes[-1]
            current = self.backward_sites[-1] if self.backward_sites else None
            finding = report.torch_error(kind=kind, torch_message=text.split("\n")[0], file=file, line=line, op=op,
                                         callers=callers, lang=self.lang, in_backward=current)
        else:
            kind = _write_time_kind(text) if code != _BACKWARD else None
            if kind is None:
                return  # not an autograd error raised at the line itself (inside backward: not the write)
            file, line, _ = _user_frame(3)
            created = self._created_site(args, kwargs) if kind.id.startswith("inference") else None
            finding = report.torch_error(kind=kind, torch_message=text.split("\n")[0], file=file, line=line,
                                         op=_op_name(func), created=created, callers=_callers(3),
                                         module=self._module_site() if kind.id != "inference-saved" else None,
                                         lang=self.lang)
        if len(self._pending) >= 64:  # errors the program caught keep their frames alive: keep few
            self._pending.pop(next(iter(self._pending)))
        self._pending[id(exc)] = (exc, finding)

    def _backward_twice(self, text: str, args, kwargs):
        current = self.backward_sites[-1] if self.backward_sites else (self.backward_calls, "<unknown>", 0, False, ())
        freed = _find_freed(_graph_roots(args, kwargs), current[0])
        freed_site = None
        state = None
        if freed is not None:
            number = freed[2]
            freed_site = next((s for s in self.backward_sites if s[0] == number), None)
            state = self._state_holding(freed[4])
        return report.backward_twice(torch_message=text.split("\n")[0], node=freed[3] if freed else None,
                                     build=(freed[0], freed[1]) if freed else None, freed_site=freed_site,
                                     current=current, lang=self.lang, state=state)

    def _state_holding(self, tag, limit: int = 20000):
        """(class, attribute) of an nn.Module made under the tracer that keeps a tensor whose graph reaches the freed
        node tagged `tag` (`self.running_mean = m * self.running_mean + ...`, `self.target = target`): state kept
        on a module across backward() calls, the usual way an old graph is reached. None if no module does."""
        budget = limit
        for module in list(self.module_sites.keys()):
            try:
                values = list(vars(module).items()) + list(getattr(module, "_buffers", {}).items())
            except Exception:
                continue
            for attr, value in values:
                fn = getattr(value, "grad_fn", None) if isinstance(value, torch.Tensor) else None
                if fn is None:
                    continue
                todo, seen = deque([fn]), set()
                while todo and budget > 0:
                    node = todo.popleft()
                    if node is None or id(node) in seen:
                        continue
                    seen.add(id(node))
                    budget -= 1
                    try:
                        if node.metadata.get("gradguard") is tag:
                            return type(module), attr
                    except Exception:
                        pass
                    todo.extend(next_fn for next_fn, _ in node.next_functions)
                if budget <= 0:
                    return None
        return None

    # -- findings -------------------------------------------------------------------------
    def _culprit(self, rec: SavedTensor) -> InplaceWrite | None:
        log = self.writes.get(rec.key) if rec.key is not None else None
        if not log:
            return None
        after = [w for w in log if w.seq > rec.seq]
        for write in after:
            if write.version_before == rec.version and write.version_after != write.version_before:
                return write
        return after[0] if after else None

    def _stale_save(self, rec: SavedTensor, now: int) -> RuntimeError:
        node = _current_node_name()
        write = self._culprit(rec)
        finding = report.stale_save(
            tensor=rec.tensor, node=node, save_file=rec.file, save_line=rec.line,
            saved_version=rec.version, now=now, write=write,
            torch_message=_torch_message(rec, now, node),
            backward_calls_at_save=rec.backward_calls, backward_sites=list(self.backward_sites),
            lang=self.lang,
        )
        if not rec.reported:
            rec.reported = True
            self._add(finding)
        # A plain RuntimeError, as autograd raises: user code catching it keeps working.
        return RuntimeError(finding.error_text)

    def _silent_write(self, rec: SavedTensor, write: InplaceWrite) -> None:
        if rec.reported:
            return
        rec.reported = True
        node = _current_node_name()
        finding = report.silent_write(
            tensor=rec.tensor, node=node, save_file=rec.file, save_line=rec.line,
            version=rec.version, write=write, lang=self.lang,
        )
        self._add(finding)
        if self.strict:
            raise RuntimeError(finding.error_text)


_WRITE_TIME_KINDS = ("view-of-leaf-inplace", "leaf-inplace", "multi-output-view", "multi-output-view-base",
                     "no-grad-view", "out-argument", "overlapping-write", "input-overlap", "custom-function-view", "inference-inplace", "inference-saved",
                     "inference-requires-grad")
_WRITE_TIME = [k for k in catalog.KINDS if k.id in _WRITE_TIME_KINDS]


_grad_enabled = torch.is_grad_enabled
# dynamo reads this call as the constant True while it traces (eager: False), so the watcher's own code, which
# dynamo cannot trace in nopython mode (str.endswith), is never traced into a graph
_is_compiling = torch.compiler.is_compiling


def _overlapping_grad_write(t) -> bool:
    """An in-place write, recorded by autograd, into a tensor whose elements share memory (expand()):
    torch may accept it and fail later, in backward."""
    try:
        return isinstance(t, torch.Tensor) and t.requires_grad and _grad_enabled() and 0 in t.stride()
    except Exception:
        return False


def _write_time_kind(text: str):
    head = text[:2000]
    for kind in _WRITE_TIME:
        if kind.pattern.search(head):
            return kind
    return None


def _graph_roots(args, kwargs) -> list:
    first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    roots = list(_tensors(first))
    return [t.grad_fn for t in roots if t.grad_fn is not None]


def _find_freed(roots, current: int, limit: int = 20000):
    """(file, line, backward number, node name, tag) of the node nearest the roots whose saved tensors a
    previous backward() freed, from the tags `_tag_freed` left; None if none is reachable. (The failing
    call `current` already ran, and freed, the new part of the graph before it reached the old one.)"""
    todo = deque(roots)
    seen = set()
    while todo and len(seen) < limit:
        node = todo.popleft()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        try:
            tag = node.metadata.get("gradguard")
        except Exception:
            tag = None
        if tag is not None and tag[2] != current:
            return (*tag, node.name(), tag)
        todo.extend(fn for fn, _ in node.next_functions)
    return None


def _recording_init(original, sites):
    """nn.Module.__init__ that also records the user line constructing the module."""
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            file, line, _ = _user_frame(2)
            if line:
                sites[self] = (file, line)
        except Exception:
            pass
    __init__.__wrapped__ = original
    return __init__


def _describe_module(module) -> str:
    name = type(module).__name__
    if getattr(module, "inplace", False) is True:
        return f"nn.{name}(inplace=True)" if type(module).__module__.startswith("torch.nn") else f"{name}(inplace=True)"
    return f"nn.{name}" if type(module).__module__.startswith("torch.nn") else name


def _current_node_name() -> str | None:
    try:
        node = torch._C._current_autograd_node()
    except Exception:
        return None
    return node.name() if node is not None else None


def _torch_message(rec: SavedTensor, now: int, node: str | None) -> str:
    """Autograd's own text for this error (saved_variable.cpp), so users and `explain` recognise it."""
    t = rec.tensor
    shape = "[" + ", ".join(str(s) for s in t.shape) + "]"
    clause = ""
    node_name = None
    live = rec.ref() if rec.ref is not None else None
    if rec.pack_node is not None and rec.pack_node == node:
        node_name = node  # a saved output: torch names the node that produced and saved it
    elif live is not None:
        # A saved input: its current grad_fn (an in-place op in grad mode rebased it; a view whose
        # base changed gets AsStridedBackward0 when grad_fn is read, as torch does).
        fn = live.grad_fn
        node_name = fn.name() if fn is not None else None
    else:
        node_name = "AsStridedBackward0" if rec.pack_view else rec.pack_node
    if node_name:
        op = node_name.replace("Backward0", "").replace("Backward", "")
        clause = f", which is output {rec.output_nr} of {op},"
    hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
            "The variable in question was changed in there or anywhere later. Good luck!"
            if torch.is_anomaly_enabled() else
            "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{t.type()} {shape}]{clause} is at version {now}; expected version "
            f"{rec.version} instead. {hint}")


def _print_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
