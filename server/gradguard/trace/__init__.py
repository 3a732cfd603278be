"""gradguard trace: run a PyTorch program and name the lines behind autograd's in-place errors.

Use::

    gradguard trace [--format text|json] [--lang en|zh] [--strict] [--eager] script.py [args...]
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
  Raised from backward as the ``RuntimeError`` torch raises, word for word (a program that catches
  and prints it behaves as without the tracer); the report names the save line and the write line.
  A write into a live save that no backward() reported (the program failed on another save first, as
  with two ``x += f(x)`` lines, or never ran that backward()) is a finding of its own, seen at the write:
  severity ``warning``, ``"seen": "write"``, with its why and fix, in trace.json and the editor, once per
  (save, write) pair, unless a finding already names that write (``--no-write-warnings`` turns these off).
* ``silent-write`` (warning; an error with ``--strict``): backward read a saved tensor whose
  storage was written after the save without a version bump (``.data`` writes, ``fused=True``
  optimizers). Torch raises nothing and the gradient is wrong.
* ``backward-twice`` (error): backward() reached a graph an earlier backward() freed; names both
  backward() calls, the line that built the graph and the state carried without ``.detach()``.
* ``torch-error`` (error): an autograd error torch raises at the line itself (leaf and view-of-leaf
  writes, unbind/split/chunk views, no_grad views, ``out=``, inference tensors, expanded or
  overlapping writes, custom-Function views); the line, the torch module that did the write and
  where it was constructed, where an inference tensor was made. Kept only when the error reaches
  the top (an error the program catches is not a finding).

Advice: when the program's file is readable and a static rule's finding names the lines the tracer saw (the
write, with the save or the backward() that needed it), the finding's ``fix`` is that rule's recipe and the
command that applies it (``gradguard check --fix --unsafe-fixes --select GG401 train.py``), the same text
``gradguard explain`` gives; otherwise the tracer words the same recipe from what it saw.

Each finding's full report is printed once, at the end (after the program's traceback); a finding
hit again in a loop is counted, not repeated. The tracer's own frames are taken out of tracebacks.

The tracer never changes what the program does (exit status, output, exceptions; tests/test_trace_unchanged.py;
see guards.py): ``torch.func`` transforms and ``disable_saved_tensors_hooks`` regions run with the tracer's
hooks stepped aside (autograd checks versions there itself), and one line at the end names them as not
traced; threads started under the tracer are traced; ``sys.exit`` and ``os._exit`` keep their status (the
report is written before ``os._exit``); forked DataLoader workers report nothing. ``torch.compile``'d code
runs as compiled, without the tracer: a note at the first ``torch.compile`` call says so, and ``--eager``
(``TORCH_COMPILE_DISABLE=1``) runs it eagerly so that it is traced (compiled code can fail where eager code
passes, and the other way round: ``--eager`` is a different run). Code dynamo traces by other entry points
(``torch._dynamo.optimize(..., nopython=True)``) never sees the watcher either: it steps aside while dynamo
compiles. ``torch.autograd.gradcheck`` perturbs its inputs through ``.data`` and puts them back before any
backward() reads them: those writes are not the program's and are not logged.

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
          "kind": "stale-save" | "silent-write" | "backward-twice" | "torch-error",
          "severity": "error" | "warning",
          "message": str,                        # one line, in the requested language
          "save":  {"file", "line", "node": str | null} | null,   # torch-error/backward-twice: may be null
          "write": {"file", "line", "op", "callers"?: [{"file", "line"}]} | null,
          "tensor": {"shape": [int, ...], "dtype": str} | null,
          "versions": {"saved": int, "now": int} | null,
          "why": str, "fix": str,
          "i18n": {"en": {"message", "why", "fix"}, "zh": {...}},   # every language: the server picks its own
          "count": int,                          # times the program hit it
          # optional, by kind:
          "error": str,                          # torch-error: the id in gradguard explain's catalog
          "raised": {"file", "line", "op", "callers"?},
          "module": {"file", "line", "module"},  # the torch module that wrote, where it was constructed
          "created": {"file", "line", "op", "inference_mode_line"?},
          "freed_by": {"file", "line", "call", "callers"?}, "backward": {...}, "carry": {"file", "line", "code"},
          "seen": "write",                       # stale-save/silent-write seen at the write, not raised
          "rule": {"code", "file", "line", "message", "fix": str | null, "command": [str] | null}
                                                 # the static finding that names the traced lines: `fix` is then
                                                 # its recipe and the command that applies it (explain/advice.py)
        }
      ],
      "argv": [str, ...],                        # optional: the traced program and its args
      "exit_status": int                         # optional: the program's exit status
    }

Files are absolute paths, lines are 1-based. ``save`` is the user line whose forward op saved
the tensor; ``write`` the user line of the in-place write (for writes done inside torch, e.g.
``opt.step()``, the user line that called into torch; ``callers`` the user call sites above it).

In IPython / Jupyter: ``%load_ext gradguard`` traces the cells that follow (see notebook.py).

Limits: the watcher sees writes made through torch's Python API (methods ending in ``_``,
``x[...] = v``, augmented assignment, ``out=``, ``inplace=True`` functionals, ``_foreach_*_`` and
``_fused_*_`` optimizer kernels); writes through ``numpy()`` or inside C++ extensions are not seen.
Inside ``torch.func`` transforms and compiled code nothing is traced (see above). Threads that were
already running when tracing began are not traced. CUDA behaviour is not verified.
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
