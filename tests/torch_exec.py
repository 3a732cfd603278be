"""Run example programs under real torch, in this process (torch is imported once for the whole session)."""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass


@dataclass
class RunResult:
    error_type: str | None
    error: str | None
    stdout: str

    @property
    def clean(self) -> bool:
        return self.error_type is None


def run_program(code: str, filename: str = "<example>") -> RunResult:
    """exec() the program as `__main__` with a fresh namespace; report the exception it raises, if any."""
    import torch

    torch.manual_seed(0)
    torch.set_grad_enabled(True)
    torch.autograd.set_detect_anomaly(False)
    out = io.StringIO()
    namespace = {"__name__": "__main__", "__file__": filename}
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, filename, "exec"), namespace)
    except Exception as exc:  # the programs are expected to raise torch's RuntimeErrors
        return RunResult(type(exc).__name__, str(exc), out.getvalue())
    finally:
        torch.set_grad_enabled(True)
    return RunResult(None, None, out.getvalue())
