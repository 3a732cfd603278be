"""What keeps the tracer from changing the program it traces.

* torch.func transforms (``grad``, ``vjp``, ``jacrev``, ``hessian``, ``vmap``) and
  ``torch.autograd.graph.disable_saved_tensors_hooks`` refuse to start while any saved-tensor hooks are
  installed. The switch-off is intercepted: the tracer's hooks step aside for the region (autograd then does
  its own version check there) and come back when it ends; the region is listed as not traced.
* Python threads start with no TorchFunctionMode and no saved-tensor hooks (both are thread-local), so each
  thread started under the tracer installs them for its own lifetime; its uncaught errors are confirmed as
  findings and lose the tracer's frames, as in the main thread.
* ``os._exit`` skips everything after it: the report is written first, in the traced process only (a forked
  DataLoader worker leaves through ``os._exit`` too, and reports nothing).
* ``torch.compile``: dynamo would trace the tracer's own mode and hooks into its graphs (warnings,
  recompilations, other graphs), so compiled callables run with the tracer stepped aside, and the user is
  told so once, at the first ``torch.compile`` call, with the way to run eagerly.
"""
from __future__ import annotations

import functools
import os
import threading

import torch

from .frames import prune_traceback

_autograd = torch._C._autograd
_tls = threading.local()  # .aside: this thread's hooks were popped for a switch-off region


def _hooks_on_top(tracer) -> bool:
    try:
        top = _autograd._top_saved_tensors_default_hooks(True)
    except Exception:
        return False
    return top is not None and top[0] == tracer._pack


class Guards:
    """Installed by Tracer.__enter__ (in the thread that starts tracing), removed by its __exit__."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.pid = os.getpid()
        self.saved: dict = {}

    def install(self, compiled: bool) -> None:
        tracer = self.tracer
        orig_disable = _autograd._saved_tensors_hooks_disable
        orig_enable = _autograd._saved_tensors_hooks_enable
        orig_bootstrap = threading.Thread._bootstrap_inner
        orig_excepthook = threading.excepthook
        orig_exit = os._exit
        self.saved = {"disable": orig_disable, "enable": orig_enable, "bootstrap": orig_bootstrap,
                      "excepthook": orig_excepthook, "exit": orig_exit}

        def disable(message, *args, **kwargs):
            fail_if_non_empty = args[0] if args else kwargs.get("fail_if_non_empty", True)
            if not (fail_if_non_empty and tracer._active and not getattr(_tls, "aside", False)
                    and _hooks_on_top(tracer)):
                return orig_disable(message, *args, **kwargs)
            _autograd._pop_saved_tensors_default_hooks()
            try:
                result = orig_disable(message, *args, **kwargs)
            except BaseException:  # other hooks below ours: the program fails as it would without the tracer
                _autograd._push_saved_tensors_default_hooks(tracer._pack, tracer._unpack)
                raise
            _tls.aside = True
            tracer._untraced("torch.func" if "torch.func" in str(message) else "hooks-disabled")
            return result

        def enable(*args, **kwargs):
            result = orig_enable(*args, **kwargs)
            if getattr(_tls, "aside", False):
                _tls.aside = False
                if tracer._active:
                    _autograd._push_saved_tensors_default_hooks(tracer._pack, tracer._unpack)
            return result

        def _bootstrap_inner(thread):
            if not tracer._active:
                return orig_bootstrap(thread)
            token = tracer._enter_thread()
            try:
                return orig_bootstrap(thread)
            finally:
                tracer._exit_thread(token)

        def excepthook(args):
            exc = args.exc_value
            if exc is not None and tracer._active:
                try:
                    tracer.confirm(exc)
                    prune_traceback(exc)
                    args = threading.ExceptHookArgs((args.exc_type, exc, exc.__traceback__, args.thread))
                except Exception:
                    pass
            return orig_excepthook(args)

        def _exit(status):
            if os.getpid() == self.pid and tracer._active:
                try:
                    tracer._at_os_exit(status)
                except BaseException:
                    pass
            orig_exit(status)

        _autograd._saved_tensors_hooks_disable = disable
        _autograd._saved_tensors_hooks_enable = enable
        threading.Thread._bootstrap_inner = _bootstrap_inner
        threading.excepthook = excepthook
        os._exit = functools.wraps(orig_exit)(_exit)
        if compiled:
            orig_compile = torch.compile
            self.saved["compile"] = orig_compile
            torch.compile = functools.wraps(orig_compile)(self._compile(orig_compile))
        self.installed = {"disable": disable, "enable": enable, "bootstrap": _bootstrap_inner,
                          "excepthook": excepthook, "exit": os._exit, "compile": getattr(torch, "compile")}

    def uninstall(self) -> None:
        """Put back what install() replaced, where nothing replaced it since."""
        if not self.saved:
            return
        mine, saved = self.installed, self.saved
        for owner, attr, key in ((_autograd, "_saved_tensors_hooks_disable", "disable"),
                                 (_autograd, "_saved_tensors_hooks_enable", "enable"),
                                 (threading.Thread, "_bootstrap_inner", "bootstrap"),
                                 (threading, "excepthook", "excepthook"), (os, "_exit", "exit"),
                                 (torch, "compile", "compile")):
            if key in saved and getattr(owner, attr, None) is mine.get(key):
                setattr(owner, attr, saved[key])
        self.saved = {}

    # -- torch.compile ------------------------------------------------------------------------
    def _compile(self, orig_compile):
        tracer = self.tracer

        def compile(model=None, *args, **kwargs):
            site = tracer._compiled_at()
            if model is None:  # @torch.compile(backend=...): a decorator
                def decorate(fn):
                    return _step_aside(tracer, orig_compile(fn, *args, **kwargs), site)
                return decorate
            return _step_aside(tracer, orig_compile(model, *args, **kwargs), site)
        return compile


def _step_aside(tracer, compiled, site):
    """`compiled` (what torch.compile returned), run with the tracer's mode and hooks off in this thread."""
    if isinstance(compiled, torch.nn.Module):
        if type(compiled).__name__ != "OptimizedModule":  # torch.compile(..., disable=True): the module itself
            return compiled
        forward = compiled.forward  # dynamo's wrapper, set on the instance: replace it there

        @functools.wraps(forward)
        def compiled_forward(*args, **kwargs):
            return tracer._run_aside(forward, args, kwargs, site)
        compiled.forward = compiled_forward
        return compiled
    if not callable(compiled):
        return compiled

    @functools.wraps(compiled)
    def run(*args, **kwargs):
        return tracer._run_aside(compiled, args, kwargs, site)
    return run
