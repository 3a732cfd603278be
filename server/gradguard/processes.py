"""The Python processes gradguard starts: they import no file of the checked project and end with their parent.

multiprocessing starts a spawn or forkserver child, and its resource tracker, as `python -c "from
multiprocessing.spawn import ..."`; `-c` puts the working directory first on `sys.path`, so a project's
`socket.py` or `pickle.py` ran in the child before the parent's path was copied (the server runs in the
workspace under most editors and jupyter-lsp; `check -j` in the project). Children therefore start in safe-path
mode (`PYTHONSAFEPATH`, Python 3.11+) and in a working directory holding only the standard library (older
Pythons, which have no safe-path mode).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import sys
import threading
from typing import Iterator

SAFE_PATH = "PYTHONSAFEPATH"
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def python_module(module: str, *args: str) -> list[str]:
    """The argv of `python -m module args` (this interpreter) that never has the working directory on `sys.path`:
    `-P` on 3.11+; before that, `-c` code that drops the directory's entry ("") before anything is imported
    (`-m` imports runpy from it first: a workspace `runpy.py` ran where jupyter-lsp started the server)."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", module, *args]
    code = ("import sys; sys.path[:1] == [''] and sys.path.pop(0); "
            f"import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return [sys.executable, "-c", code, *args]


def neutral_directory() -> str:
    """A working directory for children: the standard library's own folder, so whatever an early import finds
    there is the module it wanted (read-only for the user on a normal install; never the project)."""
    return os.path.dirname(os.path.abspath(os.__file__))


def _change_directory(path: str) -> bool:
    try:
        os.chdir(path)
    except OSError:  # an embedded Python's standard library is a zip: safe-path mode is all there is
        return False
    return True


def safe_path_for_children() -> None:
    """For a process that starts children for the rest of its life (the language server): every Python it starts
    from now on runs in safe-path mode. Older Pythons also need the neutral directory while a child starts:
    `children_started_safely` around the start (the process keeps its own working directory, which a pasted
    traceback's relative file names are read against)."""
    os.environ[SAFE_PATH] = "1"


@contextlib.contextmanager
def children_started_safely() -> Iterator[str]:
    """While inside, Python children start in safe-path mode from the neutral directory; yields the working
    directory the caller had, which the children go back to once started (their file names are relative to it)."""
    cwd = os.getcwd()
    saved = os.environ.get(SAFE_PATH)
    os.environ[SAFE_PATH] = "1"
    moved = _change_directory(neutral_directory())
    try:
        yield cwd
    finally:
        if moved:
            os.chdir(cwd)
        if saved is None:
            os.environ.pop(SAFE_PATH, None)
        else:
            os.environ[SAFE_PATH] = saved


@contextlib.contextmanager
def worker_pool(max_workers: int) -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """`check -j`'s workers: started safely (they spawn while the pool runs), working in the caller's directory,
    and ended when the caller ends however it ends."""
    with children_started_safely() as cwd, concurrent.futures.ProcessPoolExecutor(
        max_workers=max_workers, initializer=start_worker, initargs=(cwd,)
    ) as pool:
        yield pool


def start_worker(cwd: str) -> None:
    """Pool initializer: die with the parent, then work where the parent works."""
    die_with_parent()
    os.chdir(cwd)


def die_with_parent() -> None:
    """End this multiprocessing child when its parent ends, however it ends (SIGKILL, a segfault, the OOM killer).

    Nothing else would end it: a pool worker holds both ends of its own task queue, so the queue never reaches
    EOF, and an orphaned worker waited for ever. On Linux the kernel sends SIGKILL when the parent dies; the
    parent's sentinel covers other systems and a parent that died before prctl took effect. The resource tracker
    needs nothing of its own: it ends (unlinking the pool's semaphores) once its last writer is gone, and a signal
    would kill it before that cleanup.
    """
    if multiprocessing.parent_process() is None:  # not a multiprocessing child (a test calling an initializer)
        return
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    watch_parent()


def watch_parent() -> None:
    """In a multiprocessing child: end the process as soon as its parent process is gone (a daemon thread)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    if not parent.is_alive():  # gone already: the sentinel (a pipe, or a process handle on Windows) is ready
        os._exit(0)
    threading.Thread(target=_exit_after, args=(parent,), name="gg-parent-watchdog", daemon=True).start()


def _exit_after(parent) -> None:
    parent.join()
    os._exit(0)
