"""`checking 120/4,000 files` on stderr, rewritten in place, for runs longer than a moment on a terminal; silent
when stderr is not a terminal and under --quiet or --silent (the caller decides `enabled`)."""
from __future__ import annotations

import os
import sys
import time


class Progress:
    """The line is shown once a run has taken DELAY seconds, at most every EVERY seconds, and erased at the end."""

    # seconds before the first line (GRADGUARD_PROGRESS_DELAY: tests show it at once), and between lines
    DELAY, EVERY = float(os.environ.get("GRADGUARD_PROGRESS_DELAY", "0.5") or 0.5), 0.1

    def __init__(self, lang: str, enabled: bool, stream=None):
        self.lang, self.enabled, self.stream = lang, enabled, stream or sys.stderr
        self.start = self.last = time.monotonic()
        self.shown = False

    def show(self, done: int, total: int) -> None:
        """Called as files finish (`done` of `total`)."""
        if not self.enabled or total <= 1:
            return
        now = time.monotonic()
        if now - self.start < self.DELAY or (self.shown and now - self.last < self.EVERY):
            return
        self.last, self.shown = now, True
        text = f"正在检查 {done:,}/{total:,} 个文件" if self.lang == "zh" else f"checking {done:,}/{total:,} files"
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
