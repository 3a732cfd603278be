"""jedi for hover: types and definitions of names that come from other modules.

jedi is slow cold (tens of seconds for torch), so it runs in its own low-priority
process: it never holds the server's GIL, a call can be abandoned, and a wedged
worker can be replaced. Every call is bounded in time; results are cached, so a
hover that timed out is answered from the cache next time. Never used for diagnostics.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import re
import time
from collections import OrderedDict
from typing import Any

from ..processes import children_started_safely, die_with_parent

_INPLACE_ARG = re.compile(r"inplace\s*=\s*True")

# ---- worker process side -------------------------------------------------------------

_project = None
_root: str | None = None


def private_cache_directory(shared: str) -> str:
    """Where this worker's jedi keeps its parse pickles: beside jedi's shared cache, never in it.

    The server kills this worker at shutdown, possibly while parso writes a pickle (not atomically): a truncated
    pickle in the shared cache made every later jedi user of that module (IPython, pylsp, this server) fail with
    EOFError. A private cache can be dropped when it is corrupt.
    """
    return os.path.join(os.path.dirname(os.path.abspath(shared)), "gradguard-jedi")


def _init_worker(root: str | None) -> None:
    global _project, _root
    die_with_parent()
    try:
        os.nice(10)  # warm-up must not starve the server on a small machine
    except OSError:
        pass
    import jedi

    jedi.settings.cache_directory = private_cache_directory(jedi.settings.cache_directory)
    _root = os.path.realpath(root) if root else None
    _project = jedi.Project(root) if root else None


def _script(source: str, path: str | None):
    import jedi

    return jedi.Script(source, path=path, project=_project, environment=jedi.InterpreterEnvironment())


def _recovering(call):
    """Run a jedi call; if a cached pickle is truncated (a worker killed mid-write), drop the private cache once
    and run it again."""
    import pickle

    try:
        return call()
    except (EOFError, pickle.UnpicklingError):
        import shutil

        import jedi
        import parso.cache

        shutil.rmtree(jedi.settings.cache_directory, ignore_errors=True)
        parso.cache.parser_cache.clear()
        return call()


def _warm(modules: tuple[str, ...]) -> float:
    start = time.perf_counter()
    for module in modules:
        code = f"import {module}\n{module}."
        _recovering(lambda: _script(code, None).complete(2, len(module) + 1))
    return time.perf_counter() - start


def _describe(source: str, path: str | None, line: int, col: int) -> dict[str, Any] | None:
    """What jedi infers for the name at (0-based line, code-point col)."""
    names = _recovering(lambda: _script(source, path).infer(line + 1, col))
    if not names:
        return None
    name = names[0]
    module_path = str(name.module_path) if name.module_path else None
    info: dict[str, Any] = {
        "name": name.name,
        "type": name.type,
        "full_name": name.full_name,
        "module_path": module_path,
        "line": name.line,
        "in_workspace": bool(
            module_path and _root and os.path.realpath(module_path).startswith(_root + os.sep)
        ),
        "inplace": [],
    }
    if module_path and name.line and info["in_workspace"]:
        # Report `inplace=True` inside the definition: a module from another file whose
        # forward modifies its input in place is invisible to a single-file analysis.
        try:
            end = name.get_definition_end_position()
            end_line = end[0] if end else name.line
            from ..fileio import DEFAULT_MAX_BYTES, read_regular  # a FIFO or device named model.py: refused unread

            lines = read_regular(module_path, DEFAULT_MAX_BYTES).decode("utf-8").split("\n")
            for i in range(name.line - 1, min(end_line, len(lines))):
                if _INPLACE_ARG.search(lines[i]):
                    info["inplace"].append((i + 1, lines[i].strip()))
        except Exception:
            pass
    return info


# ---- server side ----------------------------------------------------------------------


class JediService:
    def __init__(self, log) -> None:
        self._log_on_loop = log
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._cache: OrderedDict[tuple, concurrent.futures.Future] = OrderedDict()
        self._inflight_since: float | None = None
        self.ready = False
        self._root: str | None = None
        self._stopping: list = []  # the manager threads of pools shut down, still winding down

    def _log(self, message: str) -> None:
        # Pool callbacks run on a helper thread: hand the message to the event loop,
        # which owns the client connection.
        if self._closed or self._loop is None:
            return
        try:
            self._loop.call_soon_threadsafe(self._log_on_loop, message)
        except RuntimeError:  # loop closed
            pass

    def start(self, root: str | None, warmup: tuple[str, ...]) -> None:
        self._root = root
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        # The worker (and multiprocessing's resource tracker) start now, at the first submit, and never again in
        # this pool: started from the neutral directory, they import nothing from the workspace (processes.py).
        with children_started_safely():
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(root,),
            )
            warm = self._pool.submit(_warm, tuple(warmup))

        def done(fut: concurrent.futures.Future) -> None:
            if self._closed or fut.cancelled():
                return
            self.ready = True
            try:
                self._log(f"jedi warm ({', '.join(warmup) or 'nothing to warm'}) in {fut.result():.1f} s")
            except Exception as exc:  # a failed warm-up only means slower first hovers
                self._log(f"jedi warm-up failed: {exc!r}")

        warm.add_done_callback(done)

    async def describe(
        self, source: str, path: str | None, line: int, col: int, timeout: float
    ) -> dict[str, Any] | None:
        if self._pool is None:
            return None
        key = (path, hash(source), line, col)
        fut = self._cache.get(key)
        if fut is None:
            if self._inflight_since and time.monotonic() - self._inflight_since > 60:
                self._restart()  # a call has hung for a minute: replace the worker
            try:
                fut = self._pool.submit(_describe, source, path, line, col)
            except Exception:
                return None
            self._inflight_since = time.monotonic()
            fut.add_done_callback(self._done)
            self._cache[key] = fut
            while len(self._cache) > 256:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        if not fut.done():
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout)
            except (asyncio.TimeoutError, Exception):
                return None
        try:
            return fut.result()
        except Exception:
            return None

    def _done(self, _fut) -> None:
        self._inflight_since = None

    def _restart(self) -> None:
        self._log("jedi worker stuck for 60 s: restarting it")
        pool, self._pool = self._pool, None
        self._cache.clear()
        if pool is not None:
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)
        self.start(self._root, ())

    def shutdown(self) -> None:
        self._closed = True
        if self._pool is not None:
            manager = getattr(self._pool, "_executor_manager_thread", None)  # shutdown() forgets it
            for proc in list(getattr(self._pool, "_processes", {}).values()):
                proc.kill()
            self._pool.shutdown(wait=False, cancel_futures=True)
            if manager is not None:
                self._stopping.append(manager)
            self._pool = None

    def wait_closed(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until the killed worker's pool has wound down and its queues are
        released: a process that ends with `os._exit` would otherwise leave their semaphores registered, and
        multiprocessing's resource tracker prints 'leaked semaphore objects' on the client's stderr."""
        import gc

        deadline = time.monotonic() + timeout
        for manager in self._stopping:
            manager.join(max(0.0, deadline - time.monotonic()))
        self._stopping.clear()
        gc.collect()


_LINE_BREAKS = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]")


def _quoted(text: str) -> str:
    """Workspace text (a file name, a name, a line of code) as one code span on one line: a backtick in a comment
    ended the span and the rest rendered (a remote image fetched on hover, a `command:` link); a lone CR ended
    the line, and a blank line the paragraph."""
    from .hover import code_span  # here, not at the top: the jedi worker imports this module and needs no libcst

    return code_span(_LINE_BREAKS.sub(" ", text))


def jedi_markdown(info: dict[str, Any], lang: str) -> str:
    where = ""
    if info.get("module_path") and info.get("line"):
        base = _quoted(os.path.basename(info["module_path"]))
        where = f"{base} 第 {info['line']} 行" if lang == "zh" else f"{base} line {info['line']}"
    kind = info.get("type") if re.fullmatch(r"[a-z]+", str(info.get("type"))) else "name"  # jedi's word: class, ...
    full = _quoted(str(info.get("full_name") or info.get("name")))
    if lang == "zh":
        text = f"*jedi*：{kind} {full}" + (f"，定义于 {where}" if where else "")
    else:
        text = f"*jedi*: {kind} {full}" + (f", defined in {where}" if where else "")
    for line_no, code in info.get("inplace", []):
        if lang == "zh":
            text += f"\n\n- 第 {line_no} 行使用了原地操作（in-place 操作）：{_quoted(code)}"
        else:
            text += f"\n\n- line {line_no} uses an in-place operation: {_quoted(code)}"
    return text
