"""gradguard trace: run a PyTorch program and name the lines behind autograd's in-place errors.

Use::

    gradguard trace [--format text|json] [--lang en|zh] [--strict] script.py [args...]
    gradguard trace -m package.module [args...]
    python -m gradguard.trace script.py [args...]

or in code::

    from gradguard.trace import Tracer
    with Tracer() as tracer:
        train_one_step()
    tracer.findings

How it works: ``torch.autograd.graph.saved_tensors_hooks`` record every tensor a backward node
saves (with the user line that saved it and its version), a ``TorchFunctionMode`` logs in-place
writes to storages that live saves point into (with the user line and the op), and the unpack hook
redoes autograd's version check (the hooks switch the built-in one off). See core.py.

Findings
--------
* ``stale-save`` (error): backward needed a saved tensor whose version changed after the save.
  Raised from backward as ``RuntimeError`` whose first line is torch's own message
  ("one of the variables needed for gradient computation has been modified by an inplace
  operation: [torch.FloatTensor [1, 1]], which is output 0 of AsStrided, is at version 3;
  expected version 2 instead. Hint: ...") followed by ``gradguard:`` lines naming the save line,
  the write line and the likely reason. The in-place write itself is also reported as a warning
  when it happens (``--no-write-warnings`` turns that off).
* ``silent-write`` (warning; an error with ``--strict``): backward read a saved tensor whose
  storage was written after the save without a version bump (``.data`` writes, ``fused=True``
  optimizers). Torch raises nothing and the gradient is wrong.

Output
------
Readable text on stderr (``--lang zh`` for Simplified Chinese); with ``--format json`` the
document below is printed on stderr at exit instead (stdout stays the program's). The document
is always written to ``.gradguard/trace.json`` in the current directory (``--output PATH``,
``--output -`` to skip), replacing the previous run's, also when there are no findings.
The exit status is the program's own (1 for an uncaught exception, 2 for a usage error).

trace.json schema (version 1; read by the language server; fields are only ever added)::

    {
      "version": 1,
      "findings": [
        {
          "kind": "stale-save" | "silent-write",
          "severity": "error" | "warning",
          "message": str,                        # one line, in the requested language
          "save":  {"file": str, "line": int, "node": str | null},   # node: e.g. "AddmmBackward0"
          "write": {"file": str, "line": int, "op": str} | null,     # null: write not seen
          "tensor": {"shape": [int, ...], "dtype": str},             # dtype like "float32"
          "versions": {"saved": int, "now": int},
          "why": str,                            # optional extras: likely reason and fix
          "fix": str
        }
      ],
      "argv": [str, ...],                        # optional: the traced program and its args
      "exit_status": int                         # optional: the program's exit status
    }

Files are absolute paths, lines are 1-based. ``save`` is the user line whose forward op saved
the tensor; ``write`` the user line of the in-place write (for writes done inside torch, e.g.
``opt.step()``, the user line that called into torch).

Limits: the watcher sees writes made through torch's Python API (methods ending in ``_``,
``x[...] = v``, augmented assignment, ``out=``, ``inplace=True`` functionals, ``_foreach_*_`` and
``_fused_*_`` optimizer kernels); writes through ``numpy()`` or inside C++ extensions are not seen.
``torch.func`` transforms refuse saved-tensor hooks. CUDA behaviour is not verified.
"""
from __future__ import annotations


def main(argv: list[str]) -> int:
    """`gradguard trace ARGS...`: run the program under the tracer; returns its exit status."""
    from .cli import main as _main

    return _main(argv)


def __getattr__(name):  # torch is imported only when the tracer itself is used
    if name == "Tracer":
        from . import core

        return getattr(core, name)
    if name == "run_program":
        from .cli import run_program

        return run_program
    raise AttributeError(name)
