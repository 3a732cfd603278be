"""gradguard trace on real programs (tests/trace_programs/*.py), run under torch CPU.

Each program states what it expects in comments: `expect-kind: stale-save | silent-write |
torch-error | backward-twice | none`, `expect-error: <text torch raises>`, and `# expect: save` /
`write` / `raised` / `backward` / `freed` / `carry` on the lines the tracer must name.
"""
from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest
import torch

from gradguard import trace

PROGRAMS = Path(__file__).parent / "trace_programs"


def expectations(path: Path) -> dict:
    text = path.read_text()
    lines = text.splitlines()
    marks = {"save": [], "write": [], "raised": [], "backward": [], "freed": [], "carry": [], "seen": []}
    for number, line in enumerate(lines, start=1):
        m = re.search(r"#\s*expect:\s*([\w, ]+)", line)
        if m:
            for word in re.findall(r"\w+", m.group(1)):
                marks[word].append(number)
    error = re.search(r"expect-error: (.+)", text)
    return {
        "kind": re.search(r"expect-kind: ([\w-]+)", text).group(1),
        "error": error.group(1).strip() if error else None,
        **marks,
    }


def programs(kind: str) -> list[Path]:
    found = [p for p in sorted(PROGRAMS.glob("*.py")) if expectations(p)["kind"] == kind]
    assert found, kind
    return found


def run_traced(path: Path, tmp_path: Path, capsys, *options: str) -> tuple[int, dict, str]:
    out = tmp_path / "trace.json"
    status = trace.main([*options, "--output", str(out), str(path)])
    err = capsys.readouterr().err
    return status, json.loads(out.read_text()), err


def plain_error(path: Path) -> str:
    """The message torch itself raises for this program (no tracer)."""
    with pytest.raises(RuntimeError) as info:
        runpy.run_path(str(path), run_name="__main__")
    return str(info.value)


def test_programs_cover_every_family():
    names = {p.stem for p in PROGRAMS.glob("*.py")}
    assert len(names) >= 15 + 3  # three from the issue, twelve more, three clean loops
    assert {"leaf_inplace", "index_write_loop", "rnn_retained_step"} <= names


@pytest.mark.parametrize("path", programs("stale-save"), ids=lambda p: p.stem)
def test_stale_save_names_save_and_write_lines(path, tmp_path, capsys):
    expect = expectations(path)
    status, doc, err = run_traced(path, tmp_path, capsys)
    assert status == 1
    # the save backward() raised on, then each other write into a live save seen at the write (`# expect: seen`)
    assert [(f["kind"], f["severity"], f.get("seen")) for f in doc["findings"]] == \
        [("stale-save", "error", None)] + [("stale-save", "warning", "write")] * len(expect["seen"])
    assert [(f["save"]["line"], f["write"]["line"]) for f in doc["findings"][1:]] == [(n, n) for n in expect["seen"]]
    finding = doc["findings"][0]
    assert (finding["save"]["file"], finding["save"]["line"]) == (str(path), expect["save"][0])
    assert (finding["write"]["file"], finding["write"]["line"]) == (str(path), expect["write"][0])
    assert finding["save"]["node"].endswith(("Backward0", "Backward1"))
    assert finding["versions"]["now"] > finding["versions"]["saved"]
    # The error is torch's own, word for word (a program that prints it prints the same), and the finding is
    # reported once, after the traceback, naming both lines; the warning at the write adds no second report.
    torch_text = plain_error(path)
    assert "RuntimeError: " + torch_text + "\n\ngradguard trace: error [stale-save]: " in err
    assert f"{path.name}:{expect['write'][0]}" in err
    assert err.count("[stale-save]") == 1 + len(expect["seen"])


def test_rnn_report_blames_the_optimizer_step_through_the_carried_state(tmp_path, capsys):
    path = PROGRAMS / "rnn_retained_step.py"
    status, doc, err = run_traced(path, tmp_path, capsys)
    finding = doc["findings"][0]
    assert (finding["save"]["line"], finding["save"]["node"]) == (11, "AddmmBackward0")
    assert (finding["write"]["line"], finding["write"]["op"]) == (14, "add_")
    assert finding["tensor"] == {"shape": [1, 1], "dtype": "float32"}
    assert finding["versions"] == {"saved": 2, "now": 3}
    assert "in torch.optim.adadelta" in finding["message"]
    assert "earlier iteration" in finding["why"]
    assert "reached through `h_cur`, assigned from `h_next` at line 15" in finding["why"]
    assert "`h_cur = h_next` is not an in-place operation; the optimizer step is the write" in finding["why"]
    assert finding["fix"].startswith("Carry `h_next.detach()` (unsafe: cuts the graph, no gradient into earlier "
                                     "iterations) (GG402, line 15;")  # the rule's recipe (test_trace_advice.py)
    assert "opt.step()" in err and "rnn(train_set_x[i], h_cur)" in err


def test_rnn_report_in_chinese(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "rnn_retained_step.py", tmp_path, capsys, "--lang", "zh")
    finding = doc["findings"][0]
    assert "优化器更新" in finding["why"] and "h_cur" in finding["why"]
    assert finding["fix"].startswith("把传给下一轮的状态改为 `h_next.detach()`")
    assert "错误 [stale-save]：" in err and "为 AddmmBackward0 保存的 [1, 1] float32 张量" in err and "原地修改" in err


def test_gan_ordering_is_explained_as_shared_graph_not_iteration(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "gan_wrong_order.py", tmp_path, capsys)
    why = doc["findings"][0]["why"]
    assert "backward() at line 19 (with retain_graph=True)" in why
    assert "optimizer step at line 20" in why and "backward() at line 22" in why


def test_foreach_optimizer_keeps_the_error_and_names_the_foreach_op(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "rnn_cell_state_foreach.py", tmp_path, capsys)
    assert status == 1
    assert doc["findings"][0]["write"]["op"].startswith("_foreach_")


@pytest.mark.parametrize("path", programs("silent-write"), ids=lambda p: p.stem)
def test_silent_write_is_reported_where_torch_says_nothing(path, tmp_path, capsys):
    expect = expectations(path)
    runpy.run_path(str(path), run_name="__main__")  # plain torch: no error at all
    capsys.readouterr()
    status, doc, err = run_traced(path, tmp_path, capsys)
    assert status == 0
    assert [f["kind"] for f in doc["findings"]] == ["silent-write"]
    finding = doc["findings"][0]
    assert finding["save"]["line"] == expect["save"][0]
    assert finding["write"]["line"] == expect["write"][0]
    assert finding["versions"]["saved"] == finding["versions"]["now"]
    assert "warning [silent-write]" in err


def test_strict_turns_silent_writes_into_errors(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "fused_optimizer_silent.py", tmp_path, capsys, "--strict")
    assert status == 1
    assert "_fused_sgd_" in doc["findings"][0]["write"]["op"]
    assert "fused optimizer step" in doc["findings"][0]["why"]


TRACER_FRAMES = ("gradguard/trace", "torch/overrides.py", "__torch_function__")


@pytest.mark.parametrize("path", programs("torch-error"), ids=lambda p: p.stem)
def test_errors_torch_raises_at_the_line_are_reported_once_with_that_line(path, tmp_path, capsys):
    expect = expectations(path)
    assert expect["error"] in plain_error(path)
    status, doc, err = run_traced(path, tmp_path, capsys)
    assert status == 1
    assert [f["kind"] for f in doc["findings"]] == ["torch-error"]
    finding = doc["findings"][0]
    assert (finding["raised"]["file"], finding["raised"]["line"]) == (str(path), expect["raised"][0])
    assert finding["why"] and finding["fix"]
    assert "RuntimeError: " in err and expect["error"] in err  # torch's own error, unchanged
    assert not [marker for marker in TRACER_FRAMES if marker in err]  # no tracer frames in the traceback
    assert err.count(f"gradguard trace: error [{finding['error']}]") == 1  # the full report, once
    assert err.index("RuntimeError: ") < err.index("gradguard trace: error [")  # after the traceback
    assert f"{path.name}:{expect['raised'][0]}" in err


def test_leaf_write_report_explains_the_leaf(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "leaf_inplace.py", tmp_path, capsys)
    finding = doc["findings"][0]
    assert finding["error"] == "leaf-inplace"
    assert finding["write"]["op"] in ("__iadd__", "add_")
    assert finding["fix"].startswith("Rewrite as `w = w + 1` (unsafe: `w` becomes a non-leaf: its `.grad` stays "
                                     "`None`) (GG101, line 3;")  # the rule's recipe (test_trace_advice.py)
    assert "w += 1" in err


def test_traceback_of_a_functional_write_matches_plain_torch(tmp_path, capsys):
    program = tmp_path / "relu_leaf.py"
    program.write_text("import torch\nimport torch.nn.functional as F\n"
                       "w = torch.rand(3, requires_grad=True)\nF.relu(w, inplace=True)\n")
    status, doc, err = run_traced(program, tmp_path, capsys)
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', err)
    assert [(Path(f).name, name) for f, _, name in frames] == [("relu_leaf.py", "<module>"), ("functional.py", "relu")]
    assert doc["findings"][0]["raised"]["line"] == 4


def test_backward_twice_names_both_backwards_the_graph_and_the_carried_state(tmp_path, capsys):
    path = PROGRAMS / "backward_twice.py"
    expect = expectations(path)
    assert expect["error"] in plain_error(path)
    status, doc, err = run_traced(path, tmp_path, capsys)
    assert status == 1
    assert [f["kind"] for f in doc["findings"]] == ["backward-twice"]
    finding = doc["findings"][0]
    assert finding["save"]["line"] == expect["save"][0] and finding["save"]["node"] == "TanhBackward0"
    assert (finding["freed_by"]["line"], finding["freed_by"]["call"]) == (expect["freed"][0], 1)
    assert (finding["backward"]["line"], finding["backward"]["call"]) == (expect["backward"][0], 2)
    assert (finding["carry"]["line"], finding["carry"]["code"]) == (expect["carry"][0], "h = torch.tanh(h + w)")
    assert "backward() at line 10 (call #1)" in finding["why"] and "(call #2)" in finding["why"]
    assert "`h = h.detach()`" in finding["fix"]
    assert err.count("error [backward-twice]") == 1
    assert not [marker for marker in TRACER_FRAMES if marker in err]


@pytest.mark.parametrize("path", programs("backward-twice"), ids=lambda p: p.stem)
def test_backward_twice_names_what_reaches_the_old_graph(path, tmp_path, capsys):
    # State carried in the loop, a tensor kept on a module (found at runtime), or a graph built before the loop.
    expect = expectations(path)
    assert expect["error"] in plain_error(path)
    status, doc, err = run_traced(path, tmp_path, capsys)
    [finding] = doc["findings"]
    assert finding["kind"] == "backward-twice" and finding["save"]["line"] == expect["save"][0]
    assert (finding["freed_by"]["line"], finding["backward"]["line"]) == (expect["freed"][0], expect["backward"][0])
    assert finding["carry"]["line"] == expect["carry"][0], finding
    assert ".detach()" in finding["fix"]
    assert err.count("error [backward-twice]") == 1


def test_module_state_and_graph_before_the_loop_are_explained(tmp_path, capsys):
    _, doc, _ = run_traced(PROGRAMS / "module_state_kept.py", tmp_path, capsys)
    assert ("it is reached through `self.running_mean` of RunningNorm, which line 16 assigns" in doc["findings"][0]["why"])
    assert doc["findings"][0]["fix"].startswith("Carry `self.running_mean.detach()` (unsafe: cuts the graph, no "
                                                "gradient into earlier iterations) (GG403, line 16;")
    _, doc, err = run_traced(PROGRAMS / "graph_before_loop.py", tmp_path, capsys)
    assert doc["findings"][0]["why"].startswith("the graph was built at line 10, before the loop at line 12, and the "
                                                "backward() of every iteration goes through it")
    assert doc["findings"][0]["fix"].startswith("Keep that graph for every iteration: "
                                                "`loss.backward(retain_graph=True)`")  # GG404's recipe
    assert "carried" not in err  # the graph row already names line 10


def test_backward_twice_on_two_lines_names_the_first_as_the_one_that_freed(tmp_path, capsys):
    program = tmp_path / "twice.py"
    program.write_text("import torch\nw = torch.rand(3, requires_grad=True)\nloss = (w.exp() * 2).sum()\n"
                       "loss.backward()\nprint('first done')\nloss.backward()\n")
    status, doc, err = run_traced(program, tmp_path, capsys)
    finding = doc["findings"][0]
    assert finding["save"]["line"] == 3
    assert (finding["freed_by"]["line"], finding["backward"]["line"]) == (4, 6)
    assert "backward() at line 4 (call #1) freed the saved tensors of the graph built at line 3" in finding["why"]
    assert finding["carry"] is None if "carry" in finding else True


def test_an_error_the_program_catches_is_not_a_finding(tmp_path, capsys):
    program = tmp_path / "caught.py"
    program.write_text("import torch\nw = torch.rand(3, requires_grad=True)\ntry:\n    w.add_(1)\n"
                       "except RuntimeError:\n    pass\n(w * w).sum().backward()\n")
    status, doc, err = run_traced(program, tmp_path, capsys)
    assert status == 0 and doc["findings"] == [] and "gradguard trace" not in err


def test_stale_save_is_reported_once_in_full(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "rnn_retained_step.py", tmp_path, capsys)
    assert err.count("error [stale-save]") == 1  # the full report at the end
    assert err.count("warning [stale-save]") == 0  # the write's warning is covered by the finding
    assert err.count("why ") == 1 and "gradguard: " not in err  # the exception has no second report
    assert err.index("RuntimeError: ") < err.index("error [stale-save]")


def test_a_write_chained_on_the_line_that_saved_the_output_is_explained_as_an_output_write(tmp_path, capsys):
    # Not the loop explanation (`x[i+1] = f(x[i])`) that a save and a write on one line otherwise get.
    status, doc, err = run_traced(PROGRAMS / "output_write_same_line.py", tmp_path, capsys)
    [finding] = doc["findings"]
    assert finding["why"] == ("`gate` was saved for backward by `sigmoid` on line 8; this in-place `relu_()` "
                              "changes it, so `backward()` on line 9 will fail.")  # the rule's words for this line
    assert "x[i+1]" not in err


def test_relu_inplace_writing_its_own_saved_result_is_not_reported(tmp_path, capsys):
    # sigmoid saved g; ReLU(inplace=True) overwrites g (the real bug) and saves its own result, which is valid.
    status, doc, err = run_traced(PROGRAMS / "relu_inplace_after_sigmoid.py", tmp_path, capsys)
    assert [f["kind"] for f in doc["findings"]] == ["stale-save"]
    assert doc["findings"][0]["save"]["node"] == "SigmoidBackward0"
    assert "silent-write" not in err
    assert err.count("[stale-save]") == 1


def test_silent_write_in_a_loop_is_one_finding_with_a_count(tmp_path, capsys):
    program = tmp_path / "silent_loop.py"
    program.write_text("import torch\nw = torch.rand(3, requires_grad=True)\nfor _ in range(5):\n"
                       "    e = w.exp()\n    e.data.mul_(0.5)\n    e.sum().backward()\n")
    status, doc, err = run_traced(program, tmp_path, capsys)
    assert [(f["kind"], f["count"]) for f in doc["findings"]] == [("silent-write", 5)]
    assert err.count("[silent-write]") == 1  # the full report, once; the write's warning is covered by it
    assert err.count(f"warning [silent-write]: [3] float32 tensor saved for ExpBackward0 at {program}:4 was "
                     f"overwritten at {program}:5 by mul_ without a version bump") == 1


@pytest.mark.parametrize("path", programs("none"), ids=lambda p: p.stem)
def test_clean_training_loops_produce_no_report(path, tmp_path, capsys):
    status, doc, err = run_traced(path, tmp_path, capsys)
    assert status == 0
    assert doc["findings"] == []
    assert "gradguard trace" not in err  # the tracer's every line starts so (a path may hold "gradguard")


def test_trace_json_schema(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "saved_input_modified.py", tmp_path, capsys)
    assert doc["version"] == 1
    finding = doc["findings"][0]
    assert set(finding) >= {"kind", "message", "save", "write", "tensor", "versions"}
    assert set(finding["save"]) == {"file", "line", "node"}
    assert {"file", "line", "op"} <= set(finding["write"]) <= {"file", "line", "op", "callers"}
    assert set(finding["i18n"]) == {"en", "zh"} and finding["i18n"]["en"]["message"] == finding["message"]
    assert finding["count"] == 1
    assert set(finding["tensor"]) == {"shape", "dtype"}
    assert set(finding["versions"]) == {"saved", "now"}
    assert finding["tensor"] == {"shape": [3], "dtype": "float32"}
    assert doc["exit_status"] == 1


def test_json_format_prints_the_document(tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / "data_write_silent.py", tmp_path, capsys, "--format", "json")
    printed = json.loads(err[err.index('{\n  "version"'):])
    assert printed["findings"] == doc["findings"]


def test_module_mode_sets_argv_and_returns_the_exit_status(tmp_path, capsys, monkeypatch):
    (tmp_path / "toy_prog.py").write_text(
        "import sys, torch\nprint('argv', sys.argv[1:])\nsys.exit(int(sys.argv[1]))\n")
    monkeypatch.chdir(tmp_path)
    status = trace.main(["-m", "toy_prog", "3", "--flag"])
    out = capsys.readouterr().out
    assert status == 3
    assert "argv ['3', '--flag']" in out
    assert json.loads((tmp_path / ".gradguard" / "trace.json").read_text())["findings"] == []


def test_script_argv_is_the_programs_own(tmp_path, capsys):
    script = tmp_path / "echo_args.py"
    script.write_text("import sys\nprint(sys.argv)\n")
    status = trace.main(["--output", "-", str(script), "--lr", "0.1"])
    assert status == 0
    assert capsys.readouterr().out.strip() == repr([str(script), "--lr", "0.1"])


def test_usage_errors(capsys):
    assert trace.main([]) == 2
    assert trace.main(["/no/such/program.py"]) == 2
    assert "no such file" in capsys.readouterr().err


ENGLISH_RUN = re.compile(r"[A-Za-z]{3,}(?:\s+[A-Za-z]{2,}){2,}")


def chinese_prose(text: str) -> str:
    """A zh text without what may stay English: code spans, locations, node/op names, glossary terms."""
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"(Cell In\[\d+\], line \d+|[\w./-]+\.py:\d+|\w+Backward\d|\[[\d, ]*\]|float32|torch(\.\w+)+|"
                  r"\w+\(inplace=True\)|\w+_\b|\w+\(\)|nn\.\w+)", "", text)
    return re.sub(r"（[^（）]*）", "", text)


@pytest.mark.parametrize("name", ["rnn_retained_step", "gan_wrong_order", "index_write_loop", "data_write_silent",
                                  "fused_optimizer_silent", "leaf_inplace", "unbind_write", "inference_tensor_saved",
                                  "backward_twice", "relu_inplace_after_sigmoid"])
def test_chinese_reports_have_no_english_sentence_fragment(name, tmp_path, capsys):
    status, doc, err = run_traced(PROGRAMS / f"{name}.py", tmp_path, capsys, "--lang", "zh")
    [finding] = doc["findings"]
    for field in ("message", "why", "fix"):
        text = finding["i18n"]["zh"][field]
        assert re.search(r"[\u4e00-\u9fff]", text), (field, text)
        assert not ENGLISH_RUN.search(chinese_prose(text)), (field, text)
    assert finding["i18n"]["zh"]["message"] == finding["message"]
    assert not re.search(r"[\u4e00-\u9fff]", finding["i18n"]["en"]["message"] + finding["i18n"]["en"]["why"])
