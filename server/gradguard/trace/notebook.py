"""`%load_ext gradguard`: the in-place tracer in IPython and Jupyter.

Every cell run after the extension is loaded runs under one `Tracer` (one per session: a graph built in
one cell and backpropagated in another is still watched). Reports name cells as the editor numbers them and
as the checker and the language server say it (`line 5 of cell 6`: every cell counts, markdown too), come
once, after the cell's traceback, and the traceback holds no tracer frame. The kernel knows only the code it
ran, so a cell's number is read from the saved notebook (JupyterLab names the file in `__session__`, VS Code
in `__vsc_ipynb_file__`): the cell with the id the frontend sent (JupyterLab), else the one cell holding that
code; a cell found in neither way is named by its execution count (`line 5 of In[3]`).
`%unload_ext gradguard` removes it; `%gradguard zh` / `%gradguard en` switches the language of later reports.
"""
from __future__ import annotations

import json
import os
import sys

from . import report
from .core import Tracer, add_boundary, prune_traceback


class NotebookTracer:
    def __init__(self, shell, lang: str = "en"):
        self.shell = shell
        self.tracer = Tracer(lang=lang, emit=self._emit, report_at_exit=True)
        self._inside = False
        self._previous_custom_exc = (getattr(shell, "custom_exceptions", ()), getattr(shell, "CustomTB", None))
        self._runs: dict[int, tuple[str | None, str]] = {}  # execution count -> (cell id, code) of a finished run
        self._running: tuple[str | None, str] | None = None  # (cell id, code) of the cell running now
        self._saved: tuple | None = None  # ((path, mtime, size), cells) of the notebook file last read

    # -- IPython hooks ---------------------------------------------------------------------
    def pre_run_cell(self, info=None) -> None:
        # The count is not read here: IPython 9 has already counted this cell, IPython 8 counts it after the run.
        self._running = _run_of(info)
        if not self._inside:
            self.tracer.__enter__()
            self._inside = True

    def post_run_cell(self, result=None) -> None:
        count = getattr(result, "execution_count", None)
        if isinstance(count, int) and self._running is not None:
            self._runs[count] = _run_of(getattr(result, "info", None)) or self._running
        self._running = None
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
    def cell_label(self, path: str) -> tuple[int | None, int] | None:
        """(the cell's number in the saved notebook or None, the execution count) for the code IPython compiled
        for an input (ipykernel names it /tmp/ipykernel_*/…py, terminal IPython <ipython-input-3-…>)."""
        names = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
        number = names.get(path) if isinstance(names, dict) else None
        if number is None and path.startswith("<ipython-input-"):
            parts = path[len("<ipython-input-"):].split("-")
            number = int(parts[0]) if parts and parts[0].isdigit() else None
        if number is None:
            return None
        return self.cell_number(number), number

    def cell_number(self, count: int) -> int | None:
        """The 1-based number, among all the saved notebook's cells, of the cell run as input `count`."""
        run = self._runs.get(count)
        if run is None and self._running is not None:
            # a report made while a cell runs: the newest input IPython compiled is that cell
            names = getattr(getattr(self.shell, "compile", None), "_filename_map", None)
            if isinstance(names, dict) and names and count == max(n for n in names.values() if isinstance(n, int)):
                run = self._running
        cells = self._saved_cells() if run is not None else None
        if not cells:
            return None
        cell_id, code = run
        if cell_id:
            found = [i for i, (kind, cid, _) in enumerate(cells) if cid == cell_id and kind == "code"]
            if len(found) == 1:
                return found[0] + 1
        found = [i for i, (kind, _, source) in enumerate(cells) if kind == "code" and source == code]
        return found[0] + 1 if len(found) == 1 else None  # two cells with this code: which one ran is unknown

    def _saved_cells(self) -> list[tuple[str, str | None, str]] | None:
        """(cell type, id, source) of every cell of the notebook this kernel runs, as last saved (re-read when
        the file changes); None without a readable notebook."""
        path = self._notebook_path()
        if path is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (path, st.st_mtime_ns, st.st_size)
        if self._saved is None or self._saved[0] != key:
            self._saved = (key, _read_cells(path))
        return self._saved[1]

    def _notebook_path(self) -> str | None:
        ns = getattr(self.shell, "user_ns", None) or {}
        for name in ("__vsc_ipynb_file__", "__session__"):
            value = ns.get(name)
            if not isinstance(value, str) or not value.endswith(".ipynb"):
                continue
            # jupyter_server's session path may be relative to its root; the kernel runs in the notebook's folder
            for candidate in (value, os.path.basename(value)):
                if os.path.isfile(candidate):
                    return os.path.abspath(candidate)
        return None


MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


def _run_of(info) -> tuple[str | None, str] | None:
    """(cell id, code) of IPython's ExecutionInfo; the id is what the frontend sent (JupyterLab: the cell's
    nbformat id; VS Code: its own cell URI)."""
    if info is None:
        return None
    cell_id = getattr(info, "cell_id", None)
    return (cell_id if isinstance(cell_id, str) and cell_id else None, getattr(info, "raw_cell", "") or "")


def _read_cells(path: str) -> list[tuple[str, str | None, str]] | None:
    from ..fileio import SourceError, read_regular

    try:
        data = json.loads(read_regular(path, MAX_NOTEBOOK_BYTES).decode("utf-8-sig"))
    except (SourceError, ValueError, UnicodeDecodeError):
        return None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None
    out = []
    for cell in cells:
        cell = cell if isinstance(cell, dict) else {}
        source = cell.get("source", "")
        source = "".join(str(s) for s in source) if isinstance(source, list) else str(source)
        cell_id = cell.get("id")
        out.append((str(cell.get("cell_type", "")), cell_id if isinstance(cell_id, str) else None, source))
    return out


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
