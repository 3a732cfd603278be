# Leaving early: sys.exit with a number or a message, os._exit (which skips buffered output and atexit).
import atexit
import os
import sys

import torch

atexit.register(lambda: print("atexit ran"))
w = torch.rand(2, requires_grad=True)
(w * w).sum().backward()
print("before exit", flush=True)
how = sys.argv[1]
if how == "sys-exit-number":
    sys.exit(3)
if how == "sys-exit-message":
    sys.exit("stopping: bad config")
if how == "os-exit":
    print("not flushed before os._exit")
    os._exit(7)
