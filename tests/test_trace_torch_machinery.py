"""torch's own machinery under `gradguard trace` (issue 33 item 7): dynamo never sees the tracer's mode, and
gradcheck's perturbation of its inputs is not the program's write."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

TRACE = [sys.executable, "-m", "gradguard.trace"]


def trace(tmp_path: Path, source: str, *options: str) -> tuple[subprocess.CompletedProcess, list]:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    out = tmp_path / "trace.json"
    done = subprocess.run([*TRACE, *options, "--output", str(out), str(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    return done, json.loads(out.read_text())["findings"]


def test_dynamo_nopython_runs_under_the_tracer(tmp_path):
    # Before: torch._dynamo.exc.Unsupported, dynamo tracing the watcher's `name.endswith("_")` in nopython mode.
    done, findings = trace(tmp_path, """\
        import torch

        def f(x):
            return torch.sin(x) * 2

        compiled = torch._dynamo.optimize("eager", nopython=True)(f)
        x = torch.randn(3, requires_grad=True)
        compiled(x).sum().backward()
        print("grad", torch.allclose(x.grad, 2 * torch.cos(x)))
        """)
    assert (done.returncode, done.stdout) == (0, "grad True\n"), done.stderr
    assert findings == []


def test_gradcheck_perturbing_its_inputs_is_not_a_silent_write(tmp_path):
    # Before: a `silent-write` per gradcheck call (gradcheck writes input.data and puts it back), an error under
    # --strict. A real .data write after it is still one finding.
    done, findings = trace(tmp_path, """\
        import torch

        x = torch.randn(3, dtype=torch.double, requires_grad=True)
        w = torch.randn(3, 3, dtype=torch.double, requires_grad=True)
        print(torch.autograd.gradcheck(lambda a: torch.sin(a) * 2, (x,)))
        print(torch.autograd.gradcheck(lambda a, b: (b @ a).tanh(), (x, w), fast_mode=True))
        print(torch.autograd.gradgradcheck(lambda a: torch.sin(a) * a, (x,)))
        e = x.exp()
        e.data.mul_(0)
        e.sum().backward()
        """, "--strict")
    assert done.stdout == "True\nTrue\nTrue\n", done.stderr
    assert [(f["kind"], f["save"]["line"], f["write"]["line"]) for f in findings] == [("silent-write", 8, 9)]
