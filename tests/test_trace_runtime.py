"""The tracer in-process: it must not change what autograd computes, and must not keep graphs alive."""
from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradguard.trace
from gradguard.trace import Tracer

ROOT = Path(__file__).resolve().parents[1]


def quiet_tracer(**options) -> Tracer:
    shown: list[str] = []
    tracer = Tracer(emit=shown.append, **options)
    tracer.shown = shown
    return tracer


def second_order(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    y = (w.sin() * w.exp()).pow(2).sum()
    (g,) = torch.autograd.grad(y, w, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), w)
    return g.detach(), h


def test_double_backward_gives_the_same_gradients():
    w = torch.linspace(-1, 1, 5, dtype=torch.float64, requires_grad=True)
    plain_g, plain_h = second_order(w)
    with quiet_tracer() as tracer:
        traced_g, traced_h = second_order(w)
    assert torch.equal(plain_g, traced_g)
    assert torch.equal(plain_h, traced_h)
    assert tracer.findings == [] and tracer.shown == []


def test_double_backward_still_catches_a_write_between_the_passes():
    w = torch.rand(3, dtype=torch.float64, requires_grad=True)
    with quiet_tracer() as tracer:
        y = w * 1.5
        out = (y.sin() ** 2).sum()
        (g,) = torch.autograd.grad(out, w, create_graph=True)
        y.add_(1.0)
        with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
            torch.autograd.grad(g.sum(), w)
    assert [f.kind for f in tracer.findings] == ["stale-save"]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.b = nn.Linear(6, 6)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x))).sigmoid()


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_works_and_gives_the_same_gradients(reentrant):
    torch.manual_seed(0)
    block = Block().double()
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)

    def grads():
        block.zero_grad()
        x.grad = None
        y = checkpoint(block, x, use_reentrant=reentrant)
        (y * y).sum().backward()
        return [x.grad.clone()] + [p.grad.clone() for p in block.parameters()]

    plain = grads()
    with quiet_tracer() as tracer:
        traced = grads()
    assert all(torch.equal(a, b) for a, b in zip(plain, traced))
    assert tracer.findings == [] and tracer.shown == []
    assert tracer.live_saves() == 0


def test_a_graph_dropped_without_backward_is_freed():
    w = torch.rand(8, requires_grad=True)
    with quiet_tracer() as tracer:
        y = w.exp().tanh()  # both save their own output: a cycle if the tracer kept the tensor
        alive = weakref.ref(y)
        assert tracer.live_saves() == 2
        del y
        gc.collect()
        assert alive() is None
        assert tracer.live_saves() == 0 and tracer.live == {} and tracer.writes == {}


def test_no_memory_growth_over_1000_training_steps():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, target = torch.randn(8, 4), torch.randn(8, 1)
    first_graph = None
    with quiet_tracer() as tracer:
        tracemalloc.start()
        try:
            for step in range(1000):
                out = model(x)
                loss = nn.functional.mse_loss(out, target)
                if first_graph is None:
                    first_graph = weakref.ref(out)
                opt.zero_grad()
                loss.backward()
                opt.step()
                assert tracer.live_saves() == 0  # backward freed every saved tensor
                if step == 200:
                    gc.collect()
                    early, _ = tracemalloc.get_traced_memory()
            gc.collect()
            late, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert first_graph() is None
    assert late - early < 64 * 1024, (early, late)
    assert tracer.findings == [] and tracer.shown == [] and tracer.writes == {}


def test_command_line_runs_the_rnn_program_and_writes_trace_json(tmp_path):
    program = ROOT / "tests" / "trace_programs" / "rnn_retained_step.py"
    proc = subprocess.run([sys.executable, "-m", "gradguard.trace", str(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "rnn_retained_step.py:14  opt.step()" in proc.stderr
    assert "rnn_retained_step.py:11  train_output, h_next = rnn(train_set_x[i], h_cur)" in proc.stderr
    doc = (tmp_path / ".gradguard" / "trace.json").read_text()
    assert '"line": 14' in doc and '"line": 11' in doc


def test_the_console_script_is_not_a_call_site_of_the_program(tmp_path):
    # `gradguard trace` as users start it: through the console script in the environment's bin/ folder, whose
    # frame sits above the program's. Only the program's own lines may be named.
    program = tmp_path / "helper_write.py"
    program.write_text("import torch\n\ndef bump(t):\n    t.add_(1)\n\n"
                       "w = torch.rand(3, requires_grad=True)\nbump(w)\n", encoding="utf-8")
    launcher = Path(sys.executable).parent / "gradguard"
    proc = subprocess.run([str(launcher), "trace", "--output", "-", str(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    [called_from] = [line.strip() for line in proc.stderr.splitlines() if "called from" in line]
    assert called_from == "called from helper_write.py:7", proc.stderr
    assert str(launcher) not in proc.stderr and "bin/gradguard" not in proc.stderr


def test_in_process_tracebacks_hold_no_tracer_frame_and_the_report_comes_once_at_exit():
    import traceback

    w = torch.rand(3, requires_grad=True)
    shown: list[str] = []
    with pytest.raises(RuntimeError, match="a leaf Variable") as info:
        with Tracer(emit=shown.append):
            torch.nn.functional.relu(w, inplace=True)
    files = [frame.filename for frame in traceback.extract_tb(info.value.__traceback__)]
    # The tracer's frames are those of the installed package (not any path with "gradguard" in it: a clone
    # keeps its tests in a folder of that name).
    tracer_dir = str(Path(gradguard.trace.__file__).resolve().parent)
    assert not [f for f in files if str(Path(f).resolve()).startswith(tracer_dir) or f.endswith("overrides.py")], files
    assert [f.rsplit("/", 1)[-1] for f in files] == ["test_trace_runtime.py", "functional.py"]
    assert len(shown) == 1 and shown[0].startswith("gradguard trace: error [leaf-inplace]")


def test_cpp_warnings_point_at_the_users_line(tmp_path):
    # In a fresh process: torch warns once per process, so an earlier test's warning hid this one in a full run.
    import subprocess
    import sys

    program = tmp_path / "warns.py"
    program.write_text(
        "import warnings, torch\n"
        "from gradguard.trace import Tracer\n"
        "seen = []\n"
        "warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: "
        "seen.append((filename, lineno))\n"
        "warnings.simplefilter('always')\n"
        "w = torch.rand(1, requires_grad=True)\n"
        "with Tracer(emit=lambda text: None):\n"
        "    float(w * 2)  # torch warns from C++: converting a tensor that requires grad to a scalar\n"
        "assert seen and all(filename == __file__ for filename, _ in seen), seen\n"
        "print('ok')\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


class FailingSGD(torch.optim.SGD):
    def step(self, closure=None):
        super().step(closure)
        raise ValueError("lr schedule exhausted")


def test_a_step_without_live_saves_runs_unwatched_and_the_watcher_comes_back_after_a_failing_step():
    w = torch.rand(3, requires_grad=True)
    opt = FailingSGD([w], lr=0.1)
    with quiet_tracer() as tracer:
        (w * w).sum().backward()  # no graph alive any more: the step cannot invalidate a save
        with pytest.raises(ValueError):
            opt.step()
        y = w.sigmoid()
        y.mul_(2)  # the watcher is back: this write into sigmoid's saved output is logged
        with pytest.raises(RuntimeError, match="output 0 of Sigmoid"):
            y.sum().backward()
    [finding] = tracer.findings
    assert finding.kind == "stale-save" and finding.write["op"] == "mul_" and finding.write["line"] > finding.save["line"]


def test_a_closure_step_is_watched():
    # LBFGS runs forward and backward inside step(): the write in the closure must be seen.
    w = torch.rand(3, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=1)

    def closure():
        opt.zero_grad()
        e = w.exp()
        e.add_(1)
        e.sum().backward()
        return e.sum()

    with quiet_tracer() as tracer:
        with pytest.raises(RuntimeError, match="output 0 of Exp"):
            opt.step(closure)
    assert [(f.kind, f.write["op"]) for f in tracer.findings] == [("stale-save", "add_")]
