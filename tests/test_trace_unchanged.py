"""`gradguard trace` never changes the program it runs: each program of tests/trace_programs/unchanged/ is run
plainly and under the tracer, and the exit status, stdout and the exceptions printed are the same. What the
tracer adds goes to stderr after the program's own output (its report) and to trace.json."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gradguard.trace

PROGRAMS = Path(__file__).parent / "trace_programs" / "unchanged"
TRACER_DIR = str(Path(gradguard.trace.__file__).parent)
# An exception as Python prints it last in a traceback: `RuntimeError: ...`, `torch._dynamo.exc.X: ...`
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Failed|Exit|Interrupt)(: .*)?$")


def start(tmp_path: Path, program: str, *args: str, traced: bool) -> subprocess.Popen:
    command = [sys.executable, str(PROGRAMS / program), *args]
    if traced:
        command[1:1] = ["-m", "gradguard.trace", "--output", str(tmp_path / "trace.json")]
    # From the programs' folder, so that the notes name them as `compiled.py:13`
    return subprocess.Popen(command, cwd=PROGRAMS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def exceptions(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if EXCEPTION_LINE.match(line)]


def same_behaviour(tmp_path: Path, program: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """The traced run (after checking it against the plain one) and its trace.json."""
    # Side by side: each run is mostly torch's import.
    plain_proc, traced_proc = (start(tmp_path, program, *args, traced=flag) for flag in (False, True))
    plain, traced = finished(plain_proc), finished(traced_proc)
    assert traced.returncode == plain.returncode, (plain.stderr[-3000:], traced.stderr[-3000:])
    assert traced.stdout == plain.stdout
    assert exceptions(traced.stderr) == exceptions(plain.stderr), traced.stderr[-3000:]
    doc = json.loads((tmp_path / "trace.json").read_text())
    assert doc["exit_status"] == plain.returncode
    return traced, doc


def kinds_and_lines(doc: dict) -> list[tuple]:
    return [(f["kind"], Path(f["save"]["file"]).name, f["save"]["line"], f["write"]["line"]) for f in doc["findings"]]


def test_torch_func_transforms_and_disabled_hooks_run_and_are_named_once_as_not_traced(tmp_path):
    traced, doc = same_behaviour(tmp_path, "func_and_hooks.py")
    assert traced.returncode == 1 and "save_on_cpu refused: this library keeps its own saved tensors" in traced.stdout
    # torch's own text, word for word, in what the program printed (compared with the plain run above, too).
    assert ("RuntimeError one of the variables needed for gradient computation has been modified by an inplace "
            "operation: [torch.FloatTensor [4]], which is output 0 of Tanh, is at version 1; expected version 0 "
            "instead.") in traced.stdout
    # The bugs after the region are traced (the caught one too: it is still a bug); the one inside the region
    # autograd caught itself.
    assert kinds_and_lines(doc) == [("stale-save", "func_and_hooks.py", 37, 38),
                                    ("stale-save", "func_and_hooks.py", 46, 47)]
    notes = [line for line in traced.stderr.splitlines() if "not traced" in line]
    assert notes == ["gradguard trace: note: not traced (autograd still checked versions there itself): "
                     "torch.func transform at func_and_hooks.py:12; torch.func transform at func_and_hooks.py:13; "
                     "torch.func transform at func_and_hooks.py:14; torch.func transform at func_and_hooks.py:15; "
                     "torch.func transform at func_and_hooks.py:17; "
                     "disable_saved_tensors_hooks at func_and_hooks.py:19"]
    assert traced.stderr.index("RuntimeError: ") < traced.stderr.index(notes[0])  # at the end


def test_threads_are_traced_and_their_errors_are_printed_as_without_the_tracer(tmp_path):
    traced, doc = same_behaviour(tmp_path, "threads.py")
    assert traced.returncode == 0 and "main thread goes on" in traced.stdout
    assert kinds_and_lines(doc) == [("stale-save", "threads.py", 28, 29)]
    assert 'Exception in thread buggy:' in traced.stderr
    thread_traceback = traced.stderr.split("Exception in thread buggy:")[1].split("RuntimeError")[0]
    assert TRACER_DIR not in thread_traceback and "overrides.py" not in thread_traceback  # no tracer frame in it
    assert traced.stderr.count("[stale-save]") == 1


def test_dataloader_workers_give_the_same_batches_and_report_nothing_themselves(tmp_path):
    traced, doc = same_behaviour(tmp_path, "dataloader_workers.py")
    assert traced.stdout.count("epoch") == 2
    assert doc["findings"] == [] and traced.stderr == ""  # nothing from the workers, no note


@pytest.mark.parametrize("how, status", [("sys-exit-number", 3), ("sys-exit-message", 1), ("os-exit", 7)])
def test_early_exits_keep_their_status_output_and_the_report(tmp_path, how, status):
    traced, doc = same_behaviour(tmp_path, "exits.py", how)
    assert traced.returncode == status
    assert ("atexit ran" in traced.stdout) == (how != "os-exit")
    if how == "sys-exit-message":
        assert traced.stderr.splitlines()[0] == "stopping: bad config"


def test_compiled_code_runs_as_compiled_and_the_user_is_told_at_the_first_compile(tmp_path):
    traced, doc = same_behaviour(tmp_path, "compiled.py", "train-then-bug")
    assert traced.returncode == 1 and traced.stdout.count("\n") == 3 and "BackendCompilerFailed" in traced.stderr
    lines = traced.stderr.splitlines()
    assert lines[0].startswith("gradguard trace: note: torch.compile at compiled.py:13: compiled code runs "
                               "without the tracer")  # said once, at the first torch.compile
    assert "`gradguard trace --eager ...` (or TORCH_COMPILE_DISABLE=1" in lines[0]
    assert traced.stderr.count("note: torch.compile at") == 1
    assert "Dynamo" not in traced.stderr and "recompile" not in traced.stderr  # dynamo never saw the tracer
    assert lines[-1] == ("gradguard trace: note: not traced (autograd still checked versions there itself): "
                         "code compiled by torch.compile at compiled.py:13 (3 times); "
                         "code compiled by torch.compile at compiled.py:32")


def test_eager_traces_the_compiled_function_and_names_the_write(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gradguard.trace", "--eager", "--output", "trace.json",
                           str(PROGRAMS / "compiled.py"), "bug"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1 and "BackendCompilerFailed" not in proc.stderr  # eager: raised by backward()
    doc = json.loads((tmp_path / "trace.json").read_text())
    assert kinds_and_lines(doc) == [("stale-save", "compiled.py", 25, 26)]
    assert "torch.compile at" not in proc.stderr and "not traced" not in proc.stderr
