"""The tracer's own frames in a traceback: which frames are the watcher's, and taking them out of an error the
user sees (the core's errors and the guards' thread hook both prune; neither imports the other for it)."""
from __future__ import annotations

import os

import torch

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_TRACER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_OVERRIDES = os.path.join(_TORCH_DIR, "overrides.py")


def _tracer_frame(filename: str) -> bool:
    return filename.startswith(_TRACER_DIR) or filename == _OVERRIDES


def prune_traceback(exc: BaseException) -> None:
    """Take the tracer's frames out of `exc`'s traceback (and of its chained exceptions): the watcher's
    ``__torch_function__``, torch/overrides.py's dispatch, and the torch frame that called into it (the
    function's ``has_torch_function`` branch; its real body follows as the next frame)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        entries = []
        tb = exc.__traceback__
        while tb is not None:
            entries.append(tb)
            tb = tb.tb_next
        names = [e.tb_frame.f_code.co_filename for e in entries]
        ours = [name.startswith(_TRACER_DIR) for name in names]
        if any(ours):
            # torch's own modes dispatch through overrides.py too: only the dispatch that led into the watcher goes
            kept = []
            for i, entry in enumerate(entries):
                name = names[i]
                if ours[i]:
                    continue
                if name == _OVERRIDES and i + 1 < len(entries) and ours[i + 1]:
                    continue
                if (name.startswith(_TORCH_DIR) and i + 2 < len(entries) and names[i + 1] == _OVERRIDES
                        and ours[i + 2]):
                    continue
                kept.append(entry)
            for a, b in zip(kept, kept[1:]):
                a.tb_next = b
            if kept:
                kept[-1].tb_next = None
                exc.__traceback__ = kept[0]
        exc = exc.__cause__ or exc.__context__
