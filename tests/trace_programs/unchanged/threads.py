# Training in worker threads: each thread's in-place bug, the thread's uncaught error and its results are
# the same with and without the tracer, and the tracer names the lines inside the thread.
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn


def make(seed):  # in the main thread: torch's global generator is shared by all threads
    torch.manual_seed(seed)
    return nn.Linear(4, 1), torch.randn(8, 4), torch.randn(8, 1)


def train(job):
    model, x, target = job
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
    return round(loss.item(), 6)


def buggy():
    w = torch.rand(3, requires_grad=True)
    y = w.sigmoid()
    y.mul_(2)  # overwrites the output sigmoid saved
    y.sum().backward()


with ThreadPoolExecutor(max_workers=2) as pool:
    print("losses", list(pool.map(train, [make(seed) for seed in range(3)])))
thread = threading.Thread(target=buggy, name="buggy")
thread.start()
thread.join()
print("main thread goes on after the thread's error")
