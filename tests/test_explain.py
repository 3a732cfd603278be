"""gradguard explain on real tracebacks: each program of tests/trace_programs/ is run under torch
(plainly, under anomaly mode, and under gradguard trace) and the text it printed is explained."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import explain
from gradguard.explain import catalog
from work_count import calls_of

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "trace_programs"

# One python process runs every failing program (torch is imported once) and records what a user
# would have seen on the terminal: the traceback, and for anomaly mode the warning printed first.
COLLECT = r"""
import io, json, runpy, sys, traceback, warnings
import torch
from gradguard import trace

out = {}
for path in sys.argv[1:]:
    name = path.rsplit("/", 1)[-1][:-3]
    try:
        runpy.run_path(path, run_name="__main__")
    except RuntimeError:
        out[name] = traceback.format_exc()

buf = io.StringIO()
def show(message, category, filename, lineno, file=None, line=None):
    buf.write(warnings.formatwarning(message, category, filename, lineno, line))
warnings.showwarning = show
with torch.autograd.set_detect_anomaly(True):
    for name in ("index_write_loop", "rnn_retained_step"):
        buf.seek(0); buf.truncate()
        try:
            runpy.run_path(next(p for p in sys.argv[1:] if p.endswith(name + ".py")), run_name="__main__")
        except RuntimeError:
            out["anomaly:" + name] = buf.getvalue() + traceback.format_exc()

for name in ("rnn_retained_step", "index_write_loop"):
    err = io.StringIO()
    real, sys.stderr = sys.stderr, err
    try:
        trace.main(["--output", "-", next(p for p in sys.argv[1:] if p.endswith(name + ".py"))])
    finally:
        sys.stderr = real
    out["trace:" + name] = err.getvalue()
print(json.dumps(out))
"""

EXPECTED_KIND = {
    "leaf_inplace": "leaf-inplace",
    "index_write_loop": "saved-tensor-modified",
    "rnn_retained_step": "saved-tensor-modified",
    "saved_input_modified": "saved-tensor-modified",
    "saved_output_modified": "saved-tensor-modified",
    "detach_alias_write": "saved-tensor-modified",
    "view_base_write": "saved-tensor-modified",
    "relu_inplace_after_sigmoid": "saved-tensor-modified",
    "leaf_updated_under_no_grad": "saved-tensor-modified",
    "two_losses_step_between": "saved-tensor-modified",
    "gan_wrong_order": "saved-tensor-modified",
    "rnn_cell_state_foreach": "saved-tensor-modified",
    "unbind_write": "multi-output-view",
    "split_no_grad_write": "multi-output-view-base",
    "no_grad_view_write": "no-grad-view",
    "out_argument": "out-argument",
    "backward_twice": "backward-twice",
    "inference_tensor_saved": "inference-saved",
}


@pytest.fixture(scope="module")
def tracebacks() -> dict[str, str]:
    paths = [str(p) for p in sorted(PROGRAMS.glob("*.py"))]
    proc = subprocess.run([sys.executable, "-c", COLLECT, *paths], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_failing_program_produced_a_traceback(tracebacks):
    assert set(EXPECTED_KIND) <= set(tracebacks)


@pytest.mark.parametrize("name", sorted(EXPECTED_KIND))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_identifies_the_error_family(tracebacks, name, lang):
    found = explain.explain(tracebacks[name], lang=lang, run_static=False)
    assert found, tracebacks[name]
    ex = found[-1]
    assert ex.kind == EXPECTED_KIND[name]
    assert ex.title == next(k for k in catalog.KINDS if k.id == ex.kind).title[lang]
    # The raising line is the program's own (not torch's, not runpy's).
    assert ex.raised_at["file"] == str(PROGRAMS / f"{name}.py")
    text = explain.render_text(found, lang)
    if lang == "zh":
        assert any(term in text for term in ("原地操作", "视图", "反向传播", "叶子张量", "推理张量", "out="))
    else:
        assert ex.meaning in text


def test_rnn_traceback_decoded(tracebacks):
    ex = explain.explain(tracebacks["rnn_retained_step"], run_static=False)[-1]
    assert ex.tensor == {"type": "torch.FloatTensor", "dtype": "float32", "shape": [1, 1], "device": "cpu"}
    assert ex.output_of["op"] == "AsStrided" and ex.output_of["node"] == "AsStridedBackward0"
    assert "optimizer.step()" in ex.output_of["text"]
    assert ex.versions == {"saved": 2, "now": 3, "writes": 1}
    assert ex.causes[0]["id"] == "optimizer-step"
    assert ex.raised_at["line"] == 13 and "retain_graph=True" in ex.raised_at["code"]


def test_index_loop_ranks_the_index_write_first(tracebacks):
    ex = explain.explain(tracebacks["index_write_loop"], run_static=False)[-1]
    assert ex.tensor["shape"] == []
    assert ex.causes[0]["id"] == "index-loop"


@pytest.mark.parametrize("name, op, cause", [
    ("saved_input_modified", "Add", "input-inplace"),
    ("saved_output_modified", "Exp", "output-inplace"),
    ("relu_inplace_after_sigmoid", "Sigmoid", "output-inplace"),
    ("detach_alias_write", "Tanh", "output-inplace"),
    ("leaf_updated_under_no_grad", None, "leaf-update"),
    ("gan_wrong_order", "AsStrided", "optimizer-step"),
])
def test_output_clause_maps_to_the_likely_cause(tracebacks, name, op, cause):
    ex = explain.explain(tracebacks[name], run_static=False)[-1]
    assert ex.output_of["op"] == op
    assert ex.causes[0]["id"] == cause


def test_anomaly_output_adds_the_forward_line(tracebacks):
    ex = explain.explain(tracebacks["anomaly:rnn_retained_step"], run_static=False)[-1]
    anomaly = [c for c in ex.candidates if c["source"] == "anomaly"]
    assert [(Path(c["file"]).name, c["line"]) for c in anomaly] == [("rnn_retained_step.py", 11)]
    assert "AddmmBackward0" in anomaly[0]["message"]
    assert ex.kind == "saved-tensor-modified"


def test_tracer_output_gives_both_lines_as_top_candidates(tracebacks):
    for lang in ("en", "zh"):
        ex = explain.explain(tracebacks["trace:rnn_retained_step"], lang=lang, run_static=False)[-1]
        top = [(c["source"], c["line"]) for c in ex.candidates[:2]]
        assert top == [("trace", 14), ("trace", 11)]
        assert "next_trace" not in explain.render_text([ex], lang)


def test_static_engine_candidates_when_available(tracebacks):
    ex = explain.explain(tracebacks["rnn_retained_step"])[-1]
    try:
        import gradguard.engine  # noqa: F401
    except ImportError:
        assert not ex.static_available
        return
    static = [c for c in ex.candidates if c["source"] == "static"]
    assert static, ex.candidates
    assert all(Path(c["file"]).name == "rnn_retained_step.py" for c in static)


def test_torch_1x_node_names_are_mapped():
    assert catalog.normalize_op("SelectBackward") == ("Select", "SelectBackward")
    assert catalog.normalize_op("SelectBackward0") == ("Select", "SelectBackward0")
    assert catalog.normalize_op("AsStrided") == ("AsStrided", "AsStridedBackward0")
    assert catalog.normalize_op("torch::autograd::CopySlices") == ("CopySlices", "CopySlices")
    assert catalog.normalize_op("Clamp1") == ("Clamp", "Clamp1Backward0")
    # torch 1.x wording ("has been used", node names with Backward) is recognised too.
    ex = explain.explain("RuntimeError: one of the variables needed for gradient computation has been modified by "
                         "an inplace operation: [torch.cuda.FloatTensor [64, 1]], which is output 0 of TBackward, is "
                         "at version 2; expected version 1 instead.", run_static=False)[-1]
    assert ex.output_of["op"] == "T" and ex.tensor["device"] == "cuda"
    assert explain.explain("a leaf Variable that requires grad has been used in an in-place operation.",
                           run_static=False)[-1].kind == "leaf-inplace"


def test_command_line_reads_stdin_and_prints_json_without_importing_torch(tracebacks, tmp_path):
    src = tmp_path / "tb.txt"
    src.write_text(tracebacks["gan_wrong_order"])
    code = ("import sys, gradguard.explain as e; rc = e.main(sys.argv[1:]); "
            "assert 'torch' not in sys.modules; sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, "--format", "json", "--lang", "zh", "-"],
                          input=src.read_text(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["version"] == 1
    assert doc["errors"][-1]["kind"] == "saved-tensor-modified"
    assert doc["errors"][-1]["tensor"]["shape"] == [8, 2]
    assert "优化器更新" in doc["errors"][-1]["causes"][0]["text"]


def test_command_line_exit_status(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("nothing to see\n")
    assert explain.main([str(empty)]) == 1
    assert explain.main([str(tmp_path / "missing.txt")]) == 2
    assert "no known autograd error" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# Untrusted and huge input (pasted text names files; a log can be megabytes on one line)

SAVED = ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
         "operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
         "instead.")


@pytest.mark.timeout(30)
def test_files_named_in_pasted_text_are_opened_only_if_regular_and_inside_the_cwd(tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("import torch\ny = w.sigmoid()\ny.mul_(2)\ny.sum().backward()\n")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    os.symlink("/proc/self/fd/0", tmp_path / "stdin.py")
    os.mkfifo(tmp_path / "fifo.py")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("secret = 1\nsecret = 2\nsecret = 3\n")
    names = ["/dev/zero", "/proc/self/fd/0", "zero.py", "stdin.py", "fifo.py", str(outside), "train.py"]
    frames = "".join(f'  File "{name}", line 3, in <module>\n    x\n' for name in names)
    tracer = "".join(f"gradguard: [3] float32 tensor saved for SigmoidBackward0 at {name}:2 (version 0) was "
                     f"modified in place at {name}:3 by mul_ (now version 1)\n" for name in names)
    text = "Traceback (most recent call last):\n" + frames + SAVED + "\n" + tracer
    [ex] = explain.explain(text)  # with the static engine: it must not open them either
    shown = {(c["file"], c["text"]) for c in ex.candidates}
    assert ("train.py", "y.mul_(2)") in shown  # a regular file inside the cwd is read
    assert all(text == "" or "secret" not in text for _, text in shown)
    assert all(text == "" for file, text in shown if file != "train.py")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("unit", ["a" * 64, "saved for X at a.py:", "(): functions with out", 'File "', "在 x:1 为 ",
                                  "Cell In[1], line ", "\x1b[0m", "-> 1 "])
def test_a_2_mb_line_is_explained_in_linear_time(unit):
    line = (unit * (2_000_000 // len(unit) + 1))[:2_000_000]
    for text in (line, line + "\n" + SAVED, SAVED + " " + line):
        explain.render_text(explain.explain(text, run_static=False))


@pytest.mark.timeout(60)
def test_many_frames_and_many_errors_stay_linear():
    frames = "".join(f'  File "/u/f{i}.py", line {i}, in f\n    x = {i}\n' for i in range(20_000))
    errors = "".join(SAVED.replace("[3]", f"[{i}]") + "\n" for i in range(2_000))
    found = explain.explain("Traceback (most recent call last):\n" + frames + errors, run_static=False)
    assert 0 < len(found) <= 50
    assert found[-1].raised_at["file"] == "/u/f19999.py"


def _explain_calls(text: str) -> int:
    """The calls explain() makes on `text` (tests/work_count.py): counted, not timed, so a busy machine cannot
    fail a linear-growth check."""
    return calls_of(lambda: explain.explain(text, run_static=False))


@pytest.mark.timeout(120)
def test_the_same_traceback_repeated_is_explained_in_linear_time(tracebacks):
    # A log holding one failure thousands of times (the 8,000 copies took 6.9 s, 32,000 took 74 s).
    one = tracebacks["index_write_loop"]
    small, large = one * 600, one * 6000
    [ex] = explain.explain(large, run_static=False)  # the same error, once
    assert ex.kind == "saved-tensor-modified" and ex.versions == {"saved": 3, "now": 4, "writes": 1}
    ratio = _explain_calls(large) / _explain_calls(small)
    assert ratio <= 12, ratio  # 10x the text: linear is about 10, quadratic about 100


@pytest.mark.timeout(120)
def test_many_different_errors_are_found_in_linear_time():
    errors = [SAVED.replace("[3]", f"[{i}]") for i in range(30_000)]
    small = "Traceback (most recent call last):\n" + "\n".join(errors[:3_000]) + "\n"
    large = "Traceback (most recent call last):\n" + "\n".join(errors) + "\n"
    assert len(explain.find_errors(large)) == 30_000
    ratio = _explain_calls(large) / _explain_calls(small)
    assert ratio <= 12, ratio  # linear about 10, quadratic about 100


COMPILED = PROGRAMS / "unchanged" / "compiled.py"


@pytest.fixture(scope="module")
def compiled_tracebacks() -> dict[str, str]:
    """The real stderr of a torch.compile program (backend aot_eager) whose compiled graph saves a tensor that
    the function then writes in place, compiled and with compilation disabled as explain advises."""
    import os

    out = {}
    for name, env in (("compiled", {}), ("eager", {"TORCH_COMPILE_DISABLE": "1"})):
        proc = subprocess.run([sys.executable, str(COMPILED), "bug"], capture_output=True, text=True, timeout=300,
                              cwd=ROOT, env={**os.environ, **env})
        assert proc.returncode == 1, proc.stderr[-2000:]
        out[name] = proc.stderr
    return out


def test_a_compiled_traceback_is_recognised_and_the_eager_rerun_is_given(compiled_tracebacks):
    text = compiled_tracebacks["compiled"]
    assert "BackendCompilerFailed" in text and "torch/_dynamo/" in text  # as torch printed it, not written here
    [ex] = explain.explain(text, run_static=False)
    assert ex.kind == "saved-tensor-modified"
    assert ex.output_of["raw"] == "Sigmoid" and ex.versions == {"saved": 0, "now": 1, "writes": 1}
    # Compiled code fails in the forward call: the raising line is not a backward().
    assert (ex.raised_at["line"], ex.raised_at["code"]) == (
        32, 'loss = torch.compile(scaled_gate, backend="aot_eager")(x, w)')
    assert ex.compiled == {"markers": ["torch/_dynamo", "torch/_functorch/_aot_autograd", "BackendCompilerFailed",
                                       "torch._dynamo.exc"],
                           "script": str(COMPILED), "rerun": f"TORCH_COMPILE_DISABLE=1 python {COMPILED}"}
    rendered = explain.render_text([ex])
    assert "this error went through torch.compile (torch/_dynamo, " in rendered
    assert f"eager re-run   `TORCH_COMPILE_DISABLE=1 python {COMPILED}` (or set `torch._dynamo.config.disable = True`" \
        in rendered
    assert f"`gradguard trace --eager {COMPILED}`" in rendered
    assert "next step" not in rendered  # the eager re-run is the next step
    assert explain.to_json([ex])["errors"][0]["compiled"]["rerun"] == f"TORCH_COMPILE_DISABLE=1 python {COMPILED}"
    zh = explain.render_text(explain.explain(text, lang="zh", run_static=False), "zh")
    assert "这个错误经过了 torch.compile" in zh and "TORCH_COMPILE_DISABLE=1" in zh


def test_the_advised_eager_rerun_raises_at_the_users_backward(compiled_tracebacks):
    [ex] = explain.explain(compiled_tracebacks["eager"], run_static=False)
    assert ex.kind == "saved-tensor-modified" and ex.compiled is None
    assert (ex.raised_at["file"], ex.raised_at["line"], ex.raised_at["code"]) == (str(COMPILED), 33, "loss.backward()")


def test_an_eager_traceback_is_not_called_compiled(tracebacks):
    for name in ("rnn_retained_step", "index_write_loop", "leaf_inplace", "backward_twice"):
        assert all(ex.compiled is None for ex in explain.explain(tracebacks[name], run_static=False)), name
