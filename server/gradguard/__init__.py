"""gradguard: catch and explain PyTorch autograd in-place errors before the run."""
import os as _os
import sys as _sys

__version__ = "0.1.0"

# `python -m gradguard` puts the working directory (the user's project) first on sys.path; a project file
# named like a module we import (random.py, queue.py, ...) would then run inside the checker or the server.
# gradguard never imports the user's code, so as a command it drops that entry. (While the package is still
# being imported by `-m`, sys.argv[0] is "-m"; `import gradguard` from a user's program leaves sys.path alone.)
if _sys.argv[:1] == ["-m"] and _sys.path and _sys.path[0] in ("", _os.getcwd()):
    del _sys.path[0]


def load_ipython_extension(ipython):
    """`%load_ext gradguard`: trace the cells that follow (imports torch only now)."""
    from .trace.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):
    from .trace.notebook import unload_ipython_extension as unload

    unload(ipython)
