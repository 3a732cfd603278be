"""`%load_ext gradguard` in IPython's InteractiveShell, in process, running real torch code in cells."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch  # noqa: F401 - the cells use it; a missing torch fails here
from IPython.core.interactiveshell import InteractiveShell

from gradguard import explain


@pytest.fixture
def shell(capsys):
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance()
    ip.run_cell("%colors nocolor", store_history=False)
    capsys.readouterr()
    yield ip
    ip.run_cell("%unload_ext gradguard", store_history=False)
    InteractiveShell.clear_instance()


def run(ip, capsys, code: str) -> str:
    result = ip.run_cell(code, store_history=True)
    captured = capsys.readouterr()
    run.last_result = result
    return captured.out + captured.err


def test_importing_gradguard_does_not_import_torch():
    code = "import sys, gradguard; assert 'torch' not in sys.modules; print(callable(gradguard.load_ipython_extension))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr


def test_stale_save_in_a_cell_is_reported_once_with_cell_relative_lines(shell, capsys):
    assert "tracer watches the cells" in run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, "import torch\nw = torch.rand(3, requires_grad=True)")
    cell = shell.execution_count
    out = run(shell, capsys, "y = torch.sigmoid(w)\nz = y * 2\ny.mul_(2)\nz.sum().backward()")
    assert "RuntimeError: one of the variables needed for gradient computation" in out
    assert out.count("error [stale-save]") == 1
    assert f"saved    line 1 of In[{cell}]  y = torch.sigmoid(w)" in out
    assert f"written  line 3 of In[{cell}]  y.mul_(2)" in out
    assert out.index("RuntimeError") < out.index("error [stale-save]")  # after the traceback
    assert not [m for m in ("gradguard/trace", "overrides.py", "__torch_function__") if m in out]
    assert isinstance(run.last_result.error_in_exec, RuntimeError)


def test_leaf_write_and_backward_twice_across_cells(shell, capsys):
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, "import torch\nw = torch.rand(3, requires_grad=True)\nh = torch.zeros(3)")
    cell = shell.execution_count
    out = run(shell, capsys, "for i in range(2):\n    h = torch.tanh(h + w)\n    h.sum().backward()")
    assert "Trying to backward through the graph a second time" in out
    assert f"carried  line 2 of In[{cell}]  h = torch.tanh(h + w)" in out
    assert "`h = h.detach()`" in out
    cell = shell.execution_count
    out = run(shell, capsys, "w.add_(1)")
    assert f"line     line 1 of In[{cell}]  w.add_(1)" in out and out.count("error [leaf-inplace]") == 1


def test_call_sites_are_cells_never_the_code_that_runs_the_shell(shell, capsys):
    # A helper defined in one cell, called from the next: "called from" names that cell's line and nothing above
    # IPython's run_code (here this test file, in a kernel the `ipython` launcher).
    run(shell, capsys, "%load_ext gradguard")
    defined = shell.execution_count
    run(shell, capsys, "import torch\ndef bump(t):\n    t.add_(1)")
    cell = shell.execution_count
    out = run(shell, capsys, "w = torch.rand(3, requires_grad=True)\nbump(w)")
    assert f"line     line 3 of In[{defined}]  t.add_(1)" in out
    [called_from] = [line.strip() for line in out.splitlines() if "called from" in line]
    assert called_from == f"called from line 2 of In[{cell}]", out


def test_a_graph_built_in_one_cell_and_used_in_the_next_is_still_watched(shell, capsys):
    run(shell, capsys, "%load_ext gradguard")
    build = shell.execution_count
    run(shell, capsys, "import torch\nw = torch.rand(3, requires_grad=True)\nout = torch.exp(w * 2)")
    out = run(shell, capsys, "out.add_(1)")
    assert "warning [stale-save]" in out
    out = run(shell, capsys, "out.sum().backward()")
    assert f"saved    line 3 of In[{build}]" in out and "error [stale-save]" in out


def test_clean_cells_print_nothing_and_unload_stops_tracing(shell, capsys):
    run(shell, capsys, "%load_ext gradguard")
    out = run(shell, capsys, "import torch\nfrom torch import nn\nm = nn.Linear(3, 1)\nopt = torch.optim.SGD(m.parameters(), 0.1)\n"
                             "for _ in range(3):\n    opt.zero_grad()\n    m(torch.rand(4, 3)).sum().backward()\n    opt.step()")
    assert out == ""
    run(shell, capsys, "%unload_ext gradguard")
    out = run(shell, capsys, "w = torch.rand(3, requires_grad=True)\nw.add_(1)")
    assert "a leaf Variable" in out and "gradguard trace" not in out  # not "gradguard": a clone's folder has that name


def test_chinese_reports_with_the_magic(shell, capsys):
    run(shell, capsys, "%load_ext gradguard")
    run(shell, capsys, "%gradguard zh")
    out = run(shell, capsys, "import torch\nw = torch.rand(3, requires_grad=True)\nw.add_(1)")
    assert "错误 [leaf-inplace]" in out and "代码行" in out


IPYTHON8_TRACEBACK = """\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[7], line 4
      2 z = y * 2
      3 y.mul_(2)
----> 4 z.sum().backward()

File ~/venv/lib/python3.11/site-packages/torch/_tensor.py:623, in Tensor.backward(self, gradient, retain_graph, create_graph, inputs)
    613 if has_torch_function_unary(self):
--> 623 torch.autograd.backward(

RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
"""

IPYTHON7_TRACEBACK = """\
RuntimeError                              Traceback (most recent call last)
<ipython-input-5-3f2a9c1b7d10> in <module>
      3 y.mul_(2)
----> 4 z.sum().backward()

~/venv/lib/python3.8/site-packages/torch/tensor.py in backward(self, gradient, retain_graph, create_graph)
    219                 create_graph=create_graph)
--> 221         torch.autograd.backward(self, gradient, retain_graph, create_graph)

RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of SigmoidBackward, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).
"""


@pytest.mark.parametrize("text, cell", [(IPYTHON8_TRACEBACK, "In[7]"), (IPYTHON7_TRACEBACK, "<ipython-input-5-3f2a9c1b7d10>")])
def test_explain_reads_notebook_tracebacks_and_points_to_the_extension(text, cell, tmp_path):
    [ex] = explain.explain(text, run_static=False, roots=[str(tmp_path)])
    assert ex.kind == "saved-tensor-modified"
    assert ex.raised_at == {"file": cell, "line": 4, "code": "z.sum().backward()"}
    rendered = explain.render_text([ex])
    assert "%load_ext gradguard" in rendered and "gradguard trace`" not in rendered
    assert "%load_ext gradguard" in explain.render_text(explain.explain(text, "zh", run_static=False), "zh")


def test_explain_reads_the_traceback_ipython_really_printed(shell, capsys, tmp_path):
    out = run(shell, capsys, "import torch\nw = torch.rand(3, requires_grad=True)\ny = torch.sigmoid(w)\n"
                             "y.mul_(2)\ny.sum().backward()")
    cell = shell.execution_count - 1
    doc = explain.to_json(explain.explain(out, run_static=False, roots=[str(tmp_path)]))
    [error] = doc["errors"]
    assert error["kind"] == "saved-tensor-modified"
    assert error["raised_at"]["file"] == f"In[{cell}]" and error["raised_at"]["line"] == 5
    assert json.dumps(doc)  # serialisable
    assert re.search(r"Cell In\[\d+\], line 5", out)
