"""`gradguard explain` on FSDP2's view warning and on DTensor version errors (issue 32), from real runs: one CPU
process with the gloo backend (world_size=1), which is what a user without GPUs can run too."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from gradguard import explain

SETUP = """\
import os
import torch
import torch.distributed as dist
from torch import nn
dist.init_process_group("gloo", init_method="file://" + os.path.abspath("store"), rank=0, world_size=1)
"""


def run(tmp_path: Path, body: str) -> str:
    program = tmp_path / "train.py"
    program.write_text(SETUP + textwrap.dedent(body))
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return done.stderr


def test_the_fsdp2_view_warning_is_explained_with_what_one_cpu_process_reproduces(tmp_path, monkeypatch):
    err = run(tmp_path, """\
        from torch.distributed.fsdp import fully_shard

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 8)

            def forward(self, x):
                return self.lin(x).view(2, 2, 8)

        model = Net()
        fully_shard(model)
        out = model(torch.randn(4, 4))
        out += 1
        out.sum().backward()
        dist.destroy_process_group()
        """)
    assert "UserWarning: FSDP2-wrapped module (FSDPNet) returned a view tensor." in err
    monkeypatch.chdir(tmp_path)
    [ex] = explain.explain(err)
    assert ex.kind == "fsdp2-view-output"
    assert ex.fix == ("use the out-of-place form on the module's output (`out = out + y`, not `out += y`), or "
                      "`.clone()` the output before any in-place op")
    assert ex.distributed == {"kind": "fsdp2", "markers": ["FSDP2"]}
    text = explain.render_text([ex])
    assert "  distributed    one CPU process (the gloo backend, world_size=1) prints the same warning" in text
    assert "which one process does not reproduce" in text
    zh = explain.render_text(explain.explain(err, "zh"), "zh")
    assert "对 FSDP2（fully_shard）模块返回的视图做了原地操作" in zh and "单个 CPU 进程" in zh


def test_a_dtensor_version_error_behind_rank_prefixes_names_the_user_line(tmp_path, monkeypatch):
    err = run(tmp_path, """\
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Replicate, Shard, distribute_tensor

        mesh = init_device_mesh("cpu", (1,))
        w = distribute_tensor(torch.randn(4, 4), mesh, [Shard(0)]).requires_grad_()
        x = distribute_tensor(torch.randn(2, 4), mesh, [Replicate()]).requires_grad_()
        loss = (x @ w).sum()
        with torch.no_grad():
            w.mul_(2)
        loss.backward()
        """)
    assert "[rank0]:   File " in err  # torch.distributed prefixes every line of the traceback
    monkeypatch.chdir(tmp_path)
    [ex] = explain.explain(err)
    assert ex.kind == "saved-tensor-modified"
    assert ex.tensor["type"] == "torch.FloatTensor"
    assert (Path(ex.raised_at["file"]).name, ex.raised_at["line"], ex.raised_at["code"]) == \
        ("train.py", 15, "loss.backward()")
    assert ex.distributed["kind"] == "dtensor"
    assert "distribute_tensor" in ex.distributed["markers"]
    assert ("autograd saved plain local tensors on each rank, so the message names a `torch.FloatTensor`"
            in explain.render_text([ex]))


def test_a_plain_program_gets_no_distributed_note(tmp_path, monkeypatch):
    program = tmp_path / "plain.py"
    program.write_text("import torch\nw = torch.rand(3, requires_grad=True)\ny = w.exp()\ny.add_(1)\ny.sum().backward()\n")
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    monkeypatch.chdir(tmp_path)
    [ex] = explain.explain(done.stderr)
    assert ex.distributed is None
    assert "distributed" not in explain.render_text([ex])
