"""A project is one program: a tensor `train.py` passes to `losses.py` is the same tensor there.

tests/projects/simclr is the new user's SimCLR shape (issue 29): `losses.py` normalises the projections in place
(`z1 /= z1.norm(...)`), `train.py` passes them in from a model in a `models/` package (re-exported by its
`__init__`). torch raises at `loss.backward()` in train.py; the write is losses.py line 6. Each test runs the real
CLI or the real engine; the programs run under real torch.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard.engine import Engine

HERE = Path(__file__).parent
SIMCLR = HERE / "projects" / "simclr"
FIXED_LOSS = "    z1 = z1 / z1.norm(dim=1, keepdim=True)\n"
BACKWARD_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


def gg(*args: str, cwd: Path) -> tuple[int, list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--format", "json", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout or "[]")


def run_python(script: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd))
    return subprocess.run([sys.executable, script], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def places(found: list[dict]) -> list[tuple[str, str, int]]:
    return sorted((Path(f["filename"]).as_posix(), f["code"], f["location"]["row"]) for f in found)


@pytest.fixture
def simclr(tmp_path) -> Path:
    folder = tmp_path / "simclr"
    shutil.copytree(SIMCLR, folder)
    return folder


def fix_by_hand(folder: Path) -> None:
    path = folder / "losses.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("    z1 /= z1.norm(dim=1, keepdim=True)\n", FIXED_LOSS), encoding="utf-8")


def test_the_project_raises_under_torch_and_the_hand_fix_trains(simclr):
    bad = run_python("train.py", simclr)
    assert bad.returncode != 0 and BACKWARD_ERROR in bad.stderr
    assert 'train.py", line 18' in bad.stderr  # torch points at the backward, not at the write in losses.py
    fix_by_hand(simclr)
    good = run_python("train.py", simclr)
    assert good.returncode == 0, good.stderr


def test_checking_the_folder_reports_the_write_in_losses_py_with_the_backward_in_train_py(simclr):
    status, found = gg(".", cwd=simclr)
    assert status == 1 and places(found) == [("losses.py", "GG201", 6)]
    finding = found[0]
    assert "on line 18 of train.py will fail" in finding["message"]
    backward = [r for r in finding["related"] if r.get("filename")]
    assert [(Path(r["filename"]).name, r["location"]["row"]) for r in backward] == [("train.py", 18)]
    assert finding["fix"]["edits"] and all(e["location"]["row"] == 6 for e in finding["fix"]["edits"])


def test_checking_the_script_alone_follows_its_imports(simclr):
    status, found = gg("train.py", cwd=simclr)
    assert status == 1 and places(found) == [("losses.py", "GG201", 6)]


def test_checking_the_module_alone_runs_the_scripts_that_import_it(simclr):
    status, found = gg("losses.py", cwd=simclr)
    assert status == 1 and places(found) == [("losses.py", "GG201", 6)]
    status, found = gg("data.py", cwd=simclr)  # imported by train.py, which puts nothing there
    assert status == 0 and found == []


def test_the_hand_fixed_project_is_clean(simclr):
    fix_by_hand(simclr)
    assert gg(".", cwd=simclr) == (0, [])


def test_the_cache_of_train_py_is_invalidated_by_an_edit_in_losses_py(simclr, tmp_path):
    def cached_check():
        proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--format", "json", "--cache-dir",
                               str(tmp_path / "cache"), "train.py"], cwd=simclr, capture_output=True, text=True,
                              timeout=300)
        return places(json.loads(proc.stdout))

    assert cached_check() == [("losses.py", "GG201", 6)]
    assert cached_check() == [("losses.py", "GG201", 6)]  # from the cache
    fix_by_hand(simclr)
    assert cached_check() == []


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "pyproject.toml").write_text("", encoding="utf-8")
    return folder


HELPER = ("import torch\n\n\n"
          "def squash(h):\n"
          "    h.clamp_(0.0, 1.0)\n"
          "    return h\n")
CALLER_BODY = ("w = torch.randn(4, 4, requires_grad=True)\n"
               "x = torch.randn(2, 4)\n"
               "h = torch.sigmoid(x @ w)\n"
               "{call}\n"
               "h.sum().backward()\n")

IMPORT_FORMS = {
    "from-import": ("from utils import squash\n", "squash(h)", {"utils.py": HELPER}),
    "import-as": ("import utils as U\n", "U.squash(h)", {"utils.py": HELPER}),
    "plain-import": ("import utils\n", "utils.squash(h)", {"utils.py": HELPER}),
    "alias": ("from utils import squash as clip\n", "clip(h)", {"utils.py": HELPER}),
    "star": ("from utils import *\n", "squash(h)", {"utils.py": HELPER}),
    "package-reexport": ("from pkg import squash\n", "squash(h)",
                         {"pkg/__init__.py": "from .ops import squash\n", "pkg/ops.py": HELPER}),
    "submodule": ("from pkg import ops\n", "ops.squash(h)", {"pkg/__init__.py": "", "pkg/ops.py": HELPER}),
    "src-layout": ("from mylib.ops import squash\n", "squash(h)",
                   {"src/mylib/__init__.py": "", "src/mylib/ops.py": HELPER}),
    "sys-path": ("import sys\nsys.path.insert(0, \"lib\")\nfrom ops import squash\n", "squash(h)",
                 {"lib/ops.py": HELPER}),
}


@pytest.mark.parametrize("form", sorted(IMPORT_FORMS))
def test_each_import_form_reaches_the_helper(tmp_path, form):
    head, call, files = IMPORT_FORMS[form]
    main = "import torch\n" + head + CALLER_BODY.format(call=call)
    folder = write(tmp_path, {**files, "main.py": main})
    helper_file = next(name for name in files if name.endswith("ops.py") or name == "utils.py")
    status, found = gg(".", cwd=folder)
    assert places(found) == [(helper_file, "GG201", 5)], form
    env_path = folder / "src" if form == "src-layout" else folder
    proc = subprocess.run([sys.executable, "main.py"], cwd=folder, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(env_path)))
    assert BACKWARD_ERROR in proc.stderr, form


def test_a_sys_path_folder_outside_the_project_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    write(outside, {"ops.py": HELPER})
    (outside / "pyproject.toml").unlink()
    project = write(tmp_path / "project", {"main.py": "import torch\nimport sys\n"
                                           f"sys.path.insert(0, {str(outside)!r})\nfrom ops import squash\n"
                                           + CALLER_BODY.format(call="squash(h)")})
    _status, found = gg(".", cwd=project)
    assert found == []


def test_a_script_in_a_sub_folder_reaches_the_package_at_the_root(tmp_path):
    folder = write(tmp_path, {"pkg/__init__.py": "", "pkg/ops.py": HELPER,
                              "scripts/train.py": "import torch\nfrom pkg.ops import squash\n"
                                                  + CALLER_BODY.format(call="squash(h)")})
    _status, found = gg("scripts/train.py", cwd=folder)
    assert places(found) == [("pkg/ops.py", "GG201", 5)]


def test_a_name_that_means_something_else_here_is_not_linked(tmp_path):
    # utils.py's `F` is torch.nn.functional; main.py binds `F` to its own function: linking squash would make
    # its `F.relu` mean main.py's F, so the import is left unfollowed (no claim rather than a wrong one).
    helper = ("import torch.nn.functional as F\n\n\n"
              "def squash(h):\n"
              "    h.clamp_(0.0, 1.0)\n"
              "    return F.relu(h)\n")
    main = ("import torch\nfrom utils import squash\n\n\ndef F(x):\n    return x\n\n\n"
            + CALLER_BODY.format(call="squash(h)"))
    folder = write(tmp_path, {"utils.py": helper, "main.py": main})
    engine = Engine(editor=False)
    report = engine.check(main, str(folder / "main.py"))
    assert report.elsewhere == [] and report.program is None


def test_a_helper_correct_for_its_callers_stays_silent(tmp_path):
    # The same helper called on a tensor nothing saved (a fresh matmul whose backward needs only its inputs).
    main = ("import torch\nfrom utils import squash\n"
            "w = torch.randn(4, 4, requires_grad=True)\n"
            "x = torch.randn(2, 4)\n"
            "h = x @ w\n"
            "squash(h)\n"
            "h.sum().backward()\n")
    folder = write(tmp_path, {"utils.py": HELPER, "main.py": main})
    assert gg(".", cwd=folder) == (0, [])
    proc = subprocess.run([sys.executable, "main.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_an_imported_library_module_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    helper = HELPER + f"\nopen({str(marker)!r}, 'w').write('imported')\n"
    main = "import torch\nfrom utils import squash\n" + CALLER_BODY.format(call="squash(h)")
    folder = write(tmp_path, {"utils.py": helper, "main.py": main})
    _status, found = gg(".", cwd=folder)
    assert places(found) == [("utils.py", "GG201", 5)] and not marker.exists()


def run_notebook(path: Path) -> subprocess.CompletedProcess:
    """The notebook's code cells in order, in one namespace, from its folder (as a kernel started there runs them)."""
    runner = ("import json, sys\n"
              "cells = json.load(open(sys.argv[1]))['cells']\n"
              "ns = {'__name__': '__main__'}\n"
              "for cell in cells:\n"
              "    if cell['cell_type'] == 'code':\n"
              "        exec(compile(''.join(cell['source']), 'cell', 'exec'), ns)\n")
    return subprocess.run([sys.executable, "-c", runner, path.name], cwd=path.parent, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(path.parent)))


def test_a_notebook_that_imports_the_project_reaches_the_write_and_names_its_cell(simclr):
    notebook = simclr / "experiment.ipynb"
    assert BACKWARD_ERROR in run_notebook(notebook).stderr
    status, found = gg("experiment.ipynb", cwd=simclr)
    assert status == 1 and places(found) == [("losses.py", "GG201", 6)]
    assert "on line 5 of cell 5 of experiment.ipynb will fail" in found[0]["message"]
    fix_by_hand(simclr)
    assert run_notebook(notebook).returncode == 0
    assert gg("experiment.ipynb", cwd=simclr) == (0, [])


def test_fix_edits_the_file_where_the_write_is_and_trains_like_the_hand_fix(simclr, tmp_path):
    hand = tmp_path / "hand"
    shutil.copytree(simclr, hand)
    fix_by_hand(hand)
    proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--fix", "."], cwd=simclr,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "losses.py: fixed 1 finding(s)" in proc.stderr
    assert (simclr / "train.py").read_text(encoding="utf-8") == (SIMCLR / "train.py").read_text(encoding="utf-8")
    fixed, by_hand = run_python("train.py", simclr), run_python("train.py", hand)
    assert fixed.returncode == 0 and by_hand.returncode == 0
    assert fixed.stdout == by_hand.stdout  # the same loss at every step under one seed


def test_a_project_over_the_linking_budget_says_where_it_stopped(tmp_path, monkeypatch):
    import gradguard.project as project

    monkeypatch.setattr(project, "MAX_LINKED_LINES", 2)
    main = "import torch\nfrom utils import squash\n" + CALLER_BODY.format(call="squash(h)")
    folder = write(tmp_path, {"utils.py": HELPER, "main.py": main})
    report = Engine(editor=False).check(main, str(folder / "main.py"))
    assert report.elsewhere == []
    assert [(n.span.start_line + 1, n.message) for n in report.parse_notes] == [
        (2, "`squash` from utils.py is not followed: the project's linked code is over its budget (64 files, 2 lines)")]


LOOP_MODELS = ("import torch.nn as nn\n\n\n"
               "class Net(nn.Module):\n"
               "    def __init__(self):\n"
               "        super().__init__()\n"
               "        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))\n\n"
               "    def forward(self, x):\n"
               "        return self.body(x)\n")
LOOP_TRAINING = ("import torch\n\n\n"
                 "def train(net, x, steps=2):\n"
                 "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                 "{forward_before}"
                 "    for _ in range(steps):\n"
                 "{forward_inside}"
                 "        opt.zero_grad()\n"
                 "        out.pow(2).mean().backward(retain_graph=True)\n"
                 "        opt.step()\n")
# The entry's own code holds no write, step or backward: it only builds the model and calls the linked loop.
LOOP_MAIN = ("import torch\n\n"
             "from models import Net\n"
             "from training import train\n\n"
             "torch.manual_seed(0)\n"
             "train(Net(), torch.randn(8, 4))\n")


def test_a_script_that_only_calls_a_linked_training_loop_runs_it(tmp_path):
    # SinGAN's shape: the forward before the loop, opt.step() inside it, so the second pass back-propagates
    # through weights the first step changed; torch raises at the backward, the step is what to move.
    training = LOOP_TRAINING.format(forward_before="    out = net(x)\n", forward_inside="")
    folder = write(tmp_path, {"models.py": LOOP_MODELS, "training.py": training, "main.py": LOOP_MAIN})
    assert BACKWARD_ERROR in run_python("main.py", folder).stderr
    status, found = gg(".", cwd=folder)
    assert status == 1 and places(found) == [("training.py", "GG401", 10)]
    assert "the graph built on line 6 saved them and `backward()` on line 9" in found[0]["message"]


def test_a_linked_training_loop_that_rebuilds_its_graph_each_pass_is_clean(tmp_path):
    training = LOOP_TRAINING.format(forward_before="", forward_inside="        out = net(x)\n")
    folder = write(tmp_path, {"models.py": LOOP_MODELS, "training.py": training, "main.py": LOOP_MAIN})
    assert run_python("main.py", folder).returncode == 0
    assert gg(".", cwd=folder) == (0, [])


REFERENCE = ("import torch\n\n\n"
             "@torch.{mode}()\n"
             "def reference_probs(logits):\n"
             "    return torch.softmax(logits, dim=-1)\n")
KL_LOSS = ("import torch.nn.functional as F\n\n\n"
           "def kl_to_reference(policy_logits, ref_probs):\n"
           "    logp = F.log_softmax(policy_logits, dim=-1)\n"
           "    return (ref_probs * (ref_probs.log() - logp)).sum(-1).mean()\n")
KL_MAIN = ("import torch\n\n"
           "from rlhf.losses import kl_to_reference\n"
           "from rlhf.reference import reference_probs\n\n"
           "torch.manual_seed(0)\n"
           "policy = torch.nn.Linear(6, 5)\n"
           "frozen = torch.nn.Linear(6, 5)\n"
           "x = torch.randn(4, 6)\n"
           "loss = kl_to_reference(policy(x), reference_probs(frozen(x)))\n"
           "loss.backward()\n")


def test_an_inference_tensor_saved_in_a_plain_helper_is_reported_at_the_op_with_the_call_related(tmp_path):
    # The RLHF KL penalty: torch raises at the `*` in losses.py, which saves the reference's inference tensor; a
    # plain function's op is reported where it is written (a model's forward is reported at `model(x)`), and the
    # call in train.py that passed the tensor in comes with it.
    folder = write(tmp_path, {"rlhf/__init__.py": "", "rlhf/reference.py": REFERENCE.format(mode="inference_mode"),
                              "rlhf/losses.py": KL_LOSS, "train.py": KL_MAIN})
    bad = run_python("train.py", folder)
    assert "Inference tensors cannot be saved for backward" in bad.stderr and 'losses.py", line 6' in bad.stderr
    status, found = gg(".", cwd=folder)
    assert status == 1 and places(found) == [("rlhf/losses.py", "GG106", 6)]
    related = [(Path(r["filename"]).name, r["location"]["row"], r["message"]) for r in found[0]["related"]]
    assert related == [("reference.py", 6, "created in inference mode here"),
                       ("train.py", 10, "the tensor is passed in here")]


def test_a_reference_scored_under_no_grad_is_clean(tmp_path):
    folder = write(tmp_path, {"rlhf/__init__.py": "", "rlhf/reference.py": REFERENCE.format(mode="no_grad"),
                              "rlhf/losses.py": KL_LOSS, "train.py": KL_MAIN})
    assert run_python("train.py", folder).returncode == 0
    assert gg(".", cwd=folder) == (0, [])

TRAIN_WITH_STEP = """import torch
import torch.nn as nn

from optim_utils import sgd_step

torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.randn(4, 3)
for _ in range(2):
    loss = model(x).pow(2).sum()
    loss.backward()
    sgd_step(model, 0.1)
print(float(model.weight.sum()))
"""
STEP_WITHOUT_TORCH = """import torch.nn as nn


def sgd_step(model: nn.Module, lr):
    for p in model.parameters():
        p -= lr * p.grad
        p.grad = None
"""


def test_a_fix_naming_torch_in_a_file_that_does_not_import_it_adds_the_import(tmp_path):
    # optim_utils.py binds `nn` only (`import torch.nn as nn` binds no `torch`); train.py's `import torch` is no
    # use there, so the no_grad() fix brings its own import
    folder = write(tmp_path, {"train.py": TRAIN_WITH_STEP, "optim_utils.py": STEP_WITHOUT_TORCH})
    assert "leaf Variable that requires grad" in run_python("train.py", folder).stderr
    proc = subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--fix", "train.py"],
                          cwd=folder, capture_output=True, text=True, timeout=300)
    assert "optim_utils.py: fixed 1 finding(s)" in proc.stderr, proc.stdout + proc.stderr
    assert (folder / "optim_utils.py").read_text(encoding="utf-8") == STEP_WITHOUT_TORCH.replace(
        "import torch.nn as nn\n", "import torch\nimport torch.nn as nn\n").replace(
        "        p -= lr * p.grad\n", "        with torch.no_grad():\n            p -= lr * p.grad\n")
    assert run_python("train.py", folder).returncode == 0
