"""`%load_ext gradguard`: the in-place tracer in IPython and Jupyter.

Every cell run after the extension is loaded runs under one `Tracer` (one per session: a graph built in
one cell and backpropagated in another is still watched). Reports name cells the way IPython does
(`Cell In[3], line 5`, lines relative to the cell), come once, after the cell's traceback, and the
traceback holds no tracer frame. `%unload_ext gradguard` removes it; `%gradguard zh` / `%gradguard en`
switches the language of later reports.
"""
from __future__ import annotations

import sys

from . import report
from .core import Tracer, add_boundary, prune_traceback


class NotebookTracer:
    def __init__(self, shell, lang: str = "en"):
        self.shell = shell
        self.tracer = Tracer(lang=lang, emit=self._emit, report_at_exit=True)
        self._inside = False
        self._previous_custom_exc = (getattr(shell, "custom_exceptions", ()), getattr(shell, "CustomTB", None))

    # -- IPython hooks ---------------------------------------------------------------------
    def pre_run_cell(self, info=None) -> None:
        if not self._inside:
            self.tracer.__enter__()
            self._inside = True

    def post_run_cell(self, result=None) -> None:
        if not self._inside:
            return
        self._inside = False
        error = getattr(result, "error_in_exec", None) if result is not None else None
        if error is not None:
            self.tracer.__exit__(type(error), error, error.__traceback__)
        else:
            self.tracer.__exit__(None, None, None)

    def show_traceback(self, shell, etype, value, tb, tb_offset=None):
        """IPython's custom exception handler: the traceback without the tracer's frames."""
        try:
            prune_traceback(value)
            tb = value.__traceback__
        except Exception:
            pass
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    def _emit(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    # -- labels ----------------------------------------------------------------------------
    def cell_label(self, path: str) -> str | None:
        """`Cell In[3]` for the code IPython compiled for input 3 (ipykernel names it /tmp/ipykernel_*/…py,
        terminal IPython <ipython-input-3-…>)."""
        names = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
        number = names.get(path) if isinstance(names, dict) else None
        if number is None and path.startswith("<ipython-input-"):
            parts = path[len("<ipython-input-"):].split("-")
            number = int(parts[0]) if parts and parts[0].isdigit() else None
        return f"Cell In[{number}]" if number is not None else None


_ACTIVE: dict[int, NotebookTracer] = {}


def load_ipython_extension(shell) -> None:
    if id(shell) in _ACTIVE:
        return
    active = _ACTIVE[id(shell)] = NotebookTracer(shell)
    run_code = getattr(getattr(type(shell), "run_code", None), "__code__", None)
    if run_code is not None:  # IPython runs each cell's code from here: the frames above are the kernel's
        add_boundary(run_code)
    report.set_file_label(active.cell_label)
    shell.events.register("pre_run_cell", active.pre_run_cell)
    shell.events.register("post_run_cell", active.post_run_cell)
    shell.set_custom_exc((Exception,), active.show_traceback)

    def magic(line: str) -> None:
        word = line.strip()
        if word in ("en", "zh"):
            active.tracer.lang = word
        else:
            print("usage: %gradguard en|zh", file=sys.stderr)

    shell.register_magic_function(magic, "line", "gradguard")
    print("gradguard: the in-place tracer watches the cells that follow (%unload_ext gradguard to stop)",
          file=sys.stderr)


def unload_ipython_extension(shell) -> None:
    active = _ACTIVE.pop(id(shell), None)
    if active is None:
        return
    for name, callback in (("pre_run_cell", active.pre_run_cell), ("post_run_cell", active.post_run_cell)):
        try:
            shell.events.unregister(name, callback)
        except ValueError:
            pass
    if active._inside:  # %unload_ext ran inside a traced cell
        active.post_run_cell(None)
    exceptions, handler = active._previous_custom_exc
    shell.set_custom_exc(tuple(exceptions), handler) if handler is not None and exceptions else shell.set_custom_exc((), None)
    report.set_file_label(None)
