"""Processes as /proc shows them (Linux): a server's descendants, and what the test session left running.

A process is named by its pid and its start time, so that a pid reused by an unrelated process never counts as
a survivor. A zombie counts as gone: it holds no memory, and this machine's init does not reap orphans.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
SESSION_VARIABLE = "GRADGUARD_TEST_SESSION"  # set by conftest.py; every process the suite starts inherits it


@dataclass(frozen=True)
class Process:
    pid: int
    start: int  # clock ticks after boot: with the pid, names one process for good
    command: str


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, start time) of a live or zombie process, None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name in parentheses may hold spaces
    return int(fields[1]), fields[0], int(fields[19])


def _command(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _pids() -> list[int]:
    return [int(name) for name in os.listdir(PROC) if name.isdigit()]


def descendants(pid: int) -> list[Process]:
    """Every live process below `pid` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for other in _pids():
        stat = _stat(other)
        if stat is not None and stat[1] != "Z":
            children.setdefault(stat[0], []).append(other)
            starts[other] = stat[2]
    found: list[Process] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(Process(child, starts[child], _command(child)))
        todo.extend(children.get(child, []))
    return found


def running(process: Process) -> bool:
    stat = _stat(process.pid)
    return stat is not None and stat[2] == process.start and stat[1] not in ("Z", "X")


def survivors(processes: list[Process], within: float) -> list[Process]:
    """The processes still running after waiting up to `within` seconds for all of them to end."""
    deadline = time.monotonic() + within
    left = [p for p in processes if running(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [p for p in left if running(p)]
    return left


def started_by_session(marker: str) -> list[Process]:
    """Live processes other than this one whose environment carries this test session's marker."""
    needle = f"{SESSION_VARIABLE}={marker}".encode()
    found = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            environment = (PROC / str(pid) / "environ").read_bytes()
        except OSError:
            continue
        stat = _stat(pid)
        if stat is not None and stat[1] not in ("Z", "X") and needle in environment.split(b"\0"):
            found.append(Process(pid, stat[2], _command(pid)))
    return found


def end_leftovers(marker: str, grace: float = 10) -> list[Process]:
    """What this test session left running after `grace` seconds, ended now (SIGTERM, then SIGKILL): a
    multiprocessing resource tracker ignores SIGTERM and ends by itself, unlinking its semaphores, once the
    processes that write to it are gone."""
    import signal

    if not PROC.is_dir():
        return []
    left = survivors(started_by_session(marker), within=grace)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for process in left:
            if running(process):
                try:
                    os.kill(process.pid, sig)
                except OSError:
                    pass
        if not survivors(left, within=3):
            break
    return left
