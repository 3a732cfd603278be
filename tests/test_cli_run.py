"""`gradguard check` as CI and pre-commit run it: what is checked, what the summary says, the exit status, the flags."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SAFE_BUG = (EXAMPLES / "index_write_loop.py").read_text()  # GG301, a safe fix
UNSAFE_BUG = (EXAMPLES / "leaf_inplace.py").read_text()  # GG101, an unsafe fix only
CLEAN = "import torch\nw = torch.rand(3, requires_grad=True)\nwith torch.no_grad():\n    w += 1\n"


@pytest.fixture
def gg(tmp_path, monkeypatch, capsys):
    """Run `gradguard check ARGS` in-process in tmp_path; returns (status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str):
        capsys.readouterr()
        status = cli.main(["check", *args])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def subprocess_check(*args: str, cwd: Path, stdin: bytes | None = b"", env: dict | None = None):
    env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "gradguard", "check", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=120, env=env)


# ---- what is checked ---------------------------------------------------------------------------------


def test_no_path_checks_the_current_folder_instead_of_reading_stdin(tmp_path):
    write(tmp_path, {"src/train.py": UNSAFE_BUG})
    proc = subprocess_check("--concise", cwd=tmp_path, stdin=b"")  # stdin is empty, as in CI
    assert proc.returncode == 1, proc.stderr
    assert "src/train.py:3:1: GG101" in proc.stdout.decode()


def test_dash_still_reads_stdin(tmp_path):
    proc = subprocess_check("--concise", "-", cwd=tmp_path, stdin=UNSAFE_BUG.encode())
    assert proc.returncode == 1 and "-:3:1: GG101" in proc.stdout.decode()


def test_a_missing_path_is_an_error_and_never_a_pass(gg, tmp_path):
    write(tmp_path, {"ok.py": CLEAN})
    status, out, err = gg("ok.py", "nope.py")
    assert status == 2
    assert "nope.py: cannot read: No such file or directory" in err
    assert "All checks passed" not in out
    assert "1 path(s) could not be checked" in out


def test_a_file_with_only_a_syntax_error_is_not_a_pass(gg, tmp_path):
    write(tmp_path, {"broken.py": "def f(:\n    pass\n"})
    status, out, _ = gg("broken.py")
    assert status == 1  # reported as a problem, as ruff's syntax errors; 2 is for paths nothing was said about
    assert "All checks passed" not in out
    assert "broken.py:1:7: parse" in out and "1 file(s) had code that was not analysed" in out


def test_an_empty_folder_warns(gg, tmp_path):
    (tmp_path / "empty").mkdir()
    status, out, err = gg("empty")
    assert status == 0
    assert "No Python files found" in err
    assert "All checks passed" not in out


# ---- the summary ---------------------------------------------------------------------------------------


def test_summary_counts_files_with_problems_and_safe_and_unsafe_fixes_apart(gg, tmp_path):
    write(tmp_path, {"a.py": SAFE_BUG, "b.py": UNSAFE_BUG, "c.py": CLEAN})
    status, out, _ = gg("--concise", ".")
    assert status == 1
    assert "Found 2 problem(s) in 2 file(s) (3 file(s) checked)." in out
    assert "[*] 1 fixable with --fix (1 hidden fix(es) can be enabled with --unsafe-fixes)." in out
    status, out, _ = gg("--concise", "--lang", "zh", ".")
    assert "在 2 个文件中发现 2 个问题（共检查 3 个文件）。" in out
    assert "[*] 1 个可用 --fix 修复（另有 1 个不安全修复，需加 --unsafe-fixes）。" in out


def test_zh_run_says_what_was_fixed_and_not_analysed_in_chinese(gg, tmp_path):
    write(tmp_path, {"a.py": SAFE_BUG, "broken.py": "def f(:\n    pass\n"})
    status, out, err = gg("--concise", "--lang", "zh", "--fix", ".")
    assert status == 1  # the note about broken.py is reported: never a pass, never "tool broken"
    assert err == "a.py：修复了 1 个问题\n"
    assert "broken.py:1:7: 未分析 " in out
    assert out.splitlines()[-3:] == ["已修复 1 个文件中的 1 个问题。", "已分析的代码中没有发现问题（共检查 2 个文件）。",
                                     "1 个文件中有未分析的代码（见上文；这些代码没有检查）。"]


def test_only_unsafe_fixes_are_not_offered_as_plain_fix(gg, tmp_path):
    write(tmp_path, {"b.py": UNSAFE_BUG})
    _, out, _ = gg("--concise", "b.py")
    assert "[*]" not in out
    assert "No safe fixes available (1 hidden fix(es) can be enabled with --fix --unsafe-fixes)." in out


def test_all_checks_passed_says_how_many_files(gg, tmp_path):
    write(tmp_path, {"a.py": CLEAN, "b.py": CLEAN})
    assert gg(".") == (0, "All checks passed (2 file(s) checked).\n", "")


def test_language_auto_follows_the_locale(tmp_path):
    write(tmp_path, {"b.py": UNSAFE_BUG, "pyproject.toml": '[tool.gradguard]\nlanguage = "auto"\n'})
    zh = subprocess_check("--concise", "b.py", cwd=tmp_path, env={"LANG": "zh_CN.UTF-8", "LC_ALL": ""})
    assert "叶子张量" in zh.stdout.decode() and "发现 1 个问题" in zh.stdout.decode()
    en = subprocess_check("--concise", "b.py", cwd=tmp_path, env={"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"})
    assert "Found 1 problem(s)" in en.stdout.decode()


# ---- flags -----------------------------------------------------------------------------------------------


def test_exit_zero_with_findings_but_not_with_errors(gg, tmp_path):
    write(tmp_path, {"b.py": UNSAFE_BUG})
    assert gg("--exit-zero", "b.py")[0] == 0
    assert gg("--exit-zero", "b.py", "missing.py")[0] == 2


def test_statistics_one_line_per_code(gg, tmp_path):
    write(tmp_path, {"a.py": SAFE_BUG, "a2.py": SAFE_BUG, "b.py": UNSAFE_BUG})
    status, out, _ = gg("--statistics", ".")
    assert status == 1
    lines = out.splitlines()
    assert lines[0] == "2\tGG301\t[*] index-write-after-read"
    assert lines[1] == "1\tGG101\tleaf-inplace"
    assert "a.py:6:5" not in out


def test_output_file_takes_the_report(gg, tmp_path):
    write(tmp_path, {"b.py": UNSAFE_BUG})
    status, out, _ = gg("--format", "json", "--output-file", "report.json", "b.py")
    assert status == 1 and out == ""
    [entry] = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert entry["code"] == "GG101"


def test_quiet_prints_findings_without_the_summary(gg, tmp_path):
    write(tmp_path, {"b.py": UNSAFE_BUG})
    status, out, _ = gg("--quiet", "--concise", "b.py")
    assert status == 1
    assert out.startswith("b.py:3:1: GG101") and "Found" not in out


def test_show_fixes_lists_what_fix_changed(gg, tmp_path):
    write(tmp_path, {"a.py": SAFE_BUG, "b.py": UNSAFE_BUG})
    status, out, _ = gg("--fix", "--show-fixes", "--concise", ".")
    assert status == 1  # the unsafe one remains
    assert "Fixed:\n- a.py:\n    1 × GG301\n" in out
    assert "Fixed 1 problem(s) in 1 file(s)." in out


def test_add_noqa_silences_each_finding_on_its_line_and_keeps_crlf(gg, tmp_path):
    path = tmp_path / "b.py"
    path.write_bytes(UNSAFE_BUG.replace("\n", "\r\n").encode())
    status, out, err = gg("--add-noqa", "b.py")
    assert "added 1 noqa comment(s)" in err
    assert status == 0 and "Added 1 noqa comment(s) in 1 file(s)." in out and "Fixed" not in out
    data = path.read_bytes()
    assert data.split(b"\r\n")[2] == b"w += 1  # noqa: GG101"
    assert data.replace(b"\r\n", b"").count(b"\n") == 0
    assert gg("b.py")[0] == 0


def test_add_noqa_never_puts_a_comment_inside_a_string(gg, tmp_path):
    text = UNSAFE_BUG.replace("w += 1", 'w += 1; s = """\nstill a string\n"""')
    write(tmp_path, {"b.py": text})
    gg("--add-noqa", "b.py")
    assert (tmp_path / "b.py").read_text(encoding="utf-8") == text  # nothing safe to add: left alone
    compile(text, "b.py", "exec")


def test_file_level_noqa(gg, tmp_path):
    write(tmp_path, {"a.py": "# gradguard: noqa\n" + SAFE_BUG, "b.py": "# gradguard: noqa: GG301\n" + UNSAFE_BUG,
                     "c.py": "# gradguard: noqa: GG101\n" + UNSAFE_BUG})
    assert gg("a.py")[0] == 0
    assert gg("b.py")[0] == 1  # another code
    assert gg("c.py")[0] == 0


def test_report_unused_noqa(gg, tmp_path):
    write(tmp_path, {
        "a.py": CLEAN.replace("w += 1", "w += 1  # noqa: GG101"),  # nothing to hide here
        "b.py": UNSAFE_BUG.replace("w += 1", "w += 1  # noqa: GG101, GG301"),  # GG101 used, GG301 not
        "c.py": "x = 1  # noqa\ny = 2  # noqa: E501\n",  # other tools' comments: not ours to judge
        "d.py": "s = '# noqa: GG101'\n",  # not a comment
    })
    status, out, _ = gg("--report-unused-noqa", "--concise", ".")
    assert status == 1
    lines = [ln for ln in out.splitlines() if "unused-noqa" in ln]
    assert lines == ["a.py:4:13: unused-noqa unused suppression (GG101 not reported here)",
                     "b.py:3:9: unused-noqa unused suppression (GG301 not reported here)"]
    # what is reported is counted: never "All checks passed" with exit status 1
    assert out.splitlines()[-1] == "Found 2 problem(s) in 2 file(s) (4 file(s) checked)."
    assert gg("--concise", ".")[0] == 0  # without the flag nothing changes


def test_unused_noqa_in_statistics_github_and_sarif(gg, tmp_path):
    write(tmp_path, {"a.py": CLEAN.replace("w += 1", "w += 1  # noqa: GG101")})
    status, out, _ = gg("--report-unused-noqa", "--statistics", "a.py")
    assert status == 1 and out.splitlines() == ["1\t-\tunused-noqa", "Found 1 problem(s) in 1 file(s) (1 file(s) checked)."]
    status, out, _ = gg("--report-unused-noqa", "--format", "github", "a.py")
    assert status == 1 and out == ("::warning title=gradguard (unused-noqa),file=a.py,line=4,col=13,endLine=4,"
                                   "endColumn=13::unused suppression (GG101 not reported here)\n")
    status, out, _ = gg("--report-unused-noqa", "--format", "sarif", "a.py")
    [result] = json.loads(out)["runs"][0]["results"]
    assert status == 1 and result["ruleId"] == "unused-noqa"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 4


def test_jobs_default_to_the_cpu_count(gg, tmp_path, monkeypatch):
    write(tmp_path, {f"m{i}.py": CLEAN for i in range(12)})
    seen = {}

    class FakePool:
        def __init__(self, max_workers, initializer, initargs):
            seen["workers"] = max_workers
            initializer(*initargs)  # as each worker does: back to the working directory of the command

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, items, chunksize=1):
            return map(fn, items)

    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakePool)
    monkeypatch.setattr(cli.os, "cpu_count", lambda: 3)
    assert gg("--no-cache", ".")[0] == 0
    assert seen["workers"] == 3


def test_every_option_has_help_and_the_help_has_examples():
    parser = cli.build_parser()
    check = parser._subparsers._group_actions[0].choices["check"]
    for action in check._actions:
        assert action.help, action.option_strings
    text = check.format_help()
    assert "examples:" in text and "gradguard check --fix ." in text and "exit status:" in text


def test_trace_without_torch_says_what_to_install(tmp_path):
    (tmp_path / "train.py").write_text("print('hi')\n", encoding="utf-8")
    probe = ("import sys; sys.modules['torch'] = None; from gradguard.cli import main; "
             "sys.exit(main(['trace', 'train.py']))")  # torch made unimportable, as on a checker-only install
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("gradguard trace: torch is not installed in this Python; install it with "
                                   "`pip install 'gradguard[tracer]'` (or install torch)")


def test_silent_prints_nothing_but_the_status_tells(gg, tmp_path):
    write(tmp_path, {"a.py": SAFE_BUG, "b.py": UNSAFE_BUG})
    assert gg("--silent", ".") == (1, "", "")
    assert gg("--silent", "--fix", ".") == (1, "", "")
    assert "x[i].clone()" in (tmp_path / "a.py").read_text(encoding="utf-8")


def test_an_output_file_that_cannot_be_written_is_an_error(gg, tmp_path):
    write(tmp_path, {"b.py": UNSAFE_BUG})
    status, _, err = gg("--output-file", "no/such/dir/report.txt", "b.py")
    assert status == 2 and "gradguard: cannot write no/such/dir/report.txt: No such file or directory" in err


def test_worker_processes_give_the_same_report_as_one(tmp_path):
    write(tmp_path, {f"m{i}.py": (SAFE_BUG, UNSAFE_BUG, CLEAN)[i % 3] for i in range(10)})
    one = subprocess_check("--no-cache", "--jobs", "1", "--format", "json", ".", cwd=tmp_path)
    two = subprocess_check("--no-cache", "--jobs", "2", "--format", "json", ".", cwd=tmp_path)
    assert one.returncode == two.returncode == 1
    assert json.loads(one.stdout) == json.loads(two.stdout) and len(json.loads(one.stdout)) == 7
