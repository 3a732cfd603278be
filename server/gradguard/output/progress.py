"""`checking 120/4,000 files` on stderr, rewritten in place, for runs longer than a moment on a terminal; silent
when stderr is not a terminal and under --quiet or --silent (the caller decides `enabled`)."""
from __future__ import annotations

import os
import sys
import threading
import time


class Progress:
    """The line is drawn by a thread of its own, DELAY seconds after the start and then every EVERY seconds, so a
    run says what it is doing before its first file is done (a pool's first results come after its start-up and
    a whole chunk); it is erased at the end. `show` only records the count."""

    # seconds before the first line (GRADGUARD_PROGRESS_DELAY: tests show it at once), and between lines
    DELAY, EVERY = float(os.environ.get("GRADGUARD_PROGRESS_DELAY", "0.5") or 0.5), 0.1

    def __init__(self, lang: str, enabled: bool, stream=None):
        self.lang, self.enabled, self.stream = lang, enabled, stream or sys.stderr
        self.done = self.total = 0
        self.shown = ""  # the line on the terminal now
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if enabled:
            self._thread = threading.Thread(target=self._tick, name="gradguard-progress", daemon=True)
            self._thread.start()

    def show(self, done: int, total: int) -> None:
        """Called as files finish (`done` of `total`)."""
        with self._lock:
            self.done, self.total = done, total

    def _tick(self) -> None:
        if self._stop.wait(self.DELAY):
            return
        while True:
            self._draw()
            if self._stop.wait(self.EVERY):
                return

    def _draw(self) -> None:
        with self._lock:
            done, total = self.done, self.total
        if total <= 1:  # one file (or discovery still running): nothing worth a line
            return
        text = f"正在检查 {done:,}/{total:,} 个文件" if self.lang == "zh" else f"checking {done:,}/{total:,} files"
        if text == self.shown:
            return
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self.shown = text

    def finish(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
