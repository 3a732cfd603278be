"""Work counted, not timed: the Python and C function calls one call makes (sys.setprofile). The count is the
same on every machine and under any load, so a linear-growth check on it cannot fail because CI is busy."""
from __future__ import annotations

import sys
from typing import Callable


def calls_of(work: Callable[[], object]) -> int:
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(previous)
    return count
