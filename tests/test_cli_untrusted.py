"""A checked repository cannot reach outside itself through the CLI (issue 23): a committed `.gradguard_cache/` is
untrusted input, `--fix` writes only inside the checked folders, a killed run's temporary files go away, and the
exit status says whether something was reported (1) or nothing could be (2)."""
from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradguard import cache as cache_module
from gradguard import checking, cli, fileio
from gradguard.config import Config, _validate
from work_count import calls_of

LEAF = "import torch\nw = torch.zeros(3, requires_grad=True)\nw += 1\n"
LEAF_FIXED = "import torch\nw = torch.zeros(3, requires_grad=True)\nw = w + 1\n"
CLEAN = "import torch\nx = torch.ones(3)\n"
FINDING = "train.py:3:1: GG101"


def gradguard(*args: str, cwd: Path, timeout: float = 60, stdin=None, key_home: Path | None = None):
    env = {**os.environ, "NO_COLOR": "1"}
    if key_home is not None:
        env["XDG_CACHE_HOME"] = str(key_home)  # the per-user secret of this test, not the tester's
    return subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd, capture_output=True, timeout=timeout,
                          env=env, stdin=stdin)


def text(proc) -> tuple[str, str]:
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err, err
    return out, err


def entry_name(path: Path) -> str:
    return hashlib.blake2b(str(path).encode(), digest_size=16).hexdigest() + ".json"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "train.py").write_text(LEAF, encoding="utf-8")
    (root / ".gradguard_cache" / "v1").mkdir(parents=True)
    return root


# ---- a planted cache entry crashes, hangs and hides nothing ------------------------------------------------


def test_a_deeply_nested_planted_entry_is_a_miss(repo: Path, tmp_path: Path):
    entry = repo / ".gradguard_cache" / "v1" / entry_name(repo / "train.py")
    entry.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    out, err = text(proc := gradguard("check", "--concise", ".", cwd=repo, key_home=tmp_path / "home"))
    assert proc.returncode == 1 and FINDING in out, err


def test_a_planted_entry_linked_to_dev_zero_is_not_read(repo: Path, tmp_path: Path):
    (repo / ".gradguard_cache" / "v1" / entry_name(repo / "train.py")).symlink_to("/dev/zero")
    out, err = text(proc := gradguard("check", "--concise", ".", cwd=repo, timeout=30, key_home=tmp_path / "home"))
    assert proc.returncode == 1 and FINDING in out, err


def test_a_planted_entry_linked_to_stdin_does_not_wait_for_it(repo: Path, tmp_path: Path):
    (repo / ".gradguard_cache" / "v1" / entry_name(repo / "train.py")).symlink_to("/proc/self/fd/0")
    read_end, write_end = os.pipe()  # an open pipe that never says anything: a read would wait forever
    try:
        out, err = text(proc := gradguard("check", "--concise", ".", cwd=repo, timeout=30, stdin=read_end,
                                          key_home=tmp_path / "home"))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert proc.returncode == 1 and FINDING in out, err


@pytest.fixture
def in_process(repo: Path, tmp_path: Path, monkeypatch, capsys):
    """`gradguard check --format json .` in-process in the repository; returns (status, codes, files analysed)."""
    monkeypatch.chdir(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRADGUARD_CACHE_DIR", raising=False)
    cache_module.secret.cache_clear()
    analysed: list[str] = []
    real = checking._run_engine

    def counting(source, path, *args):
        analysed.append(Path(path).name)
        return real(source, path, *args)

    monkeypatch.setattr(checking, "_run_engine", counting)

    def run():
        analysed.clear()
        capsys.readouterr()
        status = cli.main(["check", "--format", "json", "."])
        return status, [f["code"] for f in json.loads(capsys.readouterr().out)], list(analysed)

    yield run
    cache_module.secret.cache_clear()


def test_an_entry_forged_to_hide_a_finding_is_a_miss(in_process, repo: Path):
    assert in_process() == (1, ["GG101"], ["train.py"])
    assert in_process() == (1, ["GG101"], [])  # the real entry is used: the test can tell a hit from a miss
    path = repo / ".gradguard_cache" / "v1" / entry_name(repo / "train.py")
    head, payload = path.read_bytes().split(b"\n", 1)
    entry = json.loads(payload)
    entry["result"]["findings"] = []  # the same key, the finding gone
    forged = json.dumps(entry).encode()
    path.write_bytes(head + b"\n" + forged)  # the MAC of the true entry
    assert in_process() == (1, ["GG101"], ["train.py"])
    # Signed with another user's key (a cache copied between machines, or committed by the attacker).
    other = hmac.new(b"k" * 32, path.name.encode() + b"\0" + forged, "sha256")
    path.write_bytes(cache_module.MAGIC + other.hexdigest().encode() + b"\n" + forged)
    assert in_process() == (1, ["GG101"], ["train.py"])
    # Without any MAC, as a pre-HMAC gradguard wrote entries.
    path.write_bytes(forged)
    assert in_process() == (1, ["GG101"], ["train.py"])


def test_a_signed_entry_of_the_wrong_shape_is_a_miss_not_an_error(in_process, repo: Path):
    in_process()
    path = repo / ".gradguard_cache" / "v1" / entry_name(repo / "train.py")
    entry = json.loads(path.read_bytes().split(b"\n", 1)[1])
    for bad in ({**entry, "deps": [1, 2]}, {**entry, "result": {**entry["result"], "findings": [{"code": 5}]}},
                {**entry, "result": {**entry["result"], "notes": [[[0, 0, 0], "x"]]}}, [[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]):
        payload = json.dumps(bad).encode()
        path.write_bytes(cache_module.MAGIC + cache_module.Cache._mac(path.name, payload) + b"\n" + payload)
        assert in_process() == (1, ["GG101"], ["train.py"]), bad


def test_the_key_lives_outside_the_repository_and_is_private(in_process, repo: Path, tmp_path: Path):
    in_process()
    key = tmp_path / "home" / "gradguard" / "cache-key"
    assert key.stat().st_size == 32 and key.stat().st_mode & 0o077 == 0
    assert not any("key" in p.name for p in repo.rglob("*"))


# ---- the cache folder writes nowhere else ------------------------------------------------------------------


def test_dangling_marker_links_create_nothing_outside(repo: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".gradguard_cache" / ".gitignore").symlink_to(outside / "planted-gitignore")
    (repo / ".gradguard_cache" / "CACHEDIR.TAG").symlink_to(outside / "planted-tag")
    out, err = text(proc := gradguard("check", "--concise", ".", cwd=repo, key_home=tmp_path / "home"))
    assert proc.returncode == 1 and FINDING in out, err
    assert list(outside.iterdir()) == []


def test_a_v1_folder_linked_elsewhere_receives_no_entries(repo: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".gradguard_cache" / "v1").rmdir()
    (repo / ".gradguard_cache" / "v1").symlink_to(outside, target_is_directory=True)
    out, err = text(proc := gradguard("check", "--concise", ".", cwd=repo, key_home=tmp_path / "home"))
    assert proc.returncode == 1 and FINDING in out, err
    assert list(outside.iterdir()) == []  # the entries hold the full source text


def test_a_cache_folder_linked_elsewhere_is_not_used(tmp_path: Path):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "train.py").write_text(LEAF, encoding="utf-8")
    (repo / ".gradguard_cache").symlink_to(outside, target_is_directory=True)
    out, err = text(proc := gradguard("check", "--concise", ".", cwd=repo, key_home=tmp_path / "home"))
    assert proc.returncode == 1 and FINDING in out, err
    assert list(outside.iterdir()) == []


# ---- --fix writes only inside the checked folders ------------------------------------------------------------


@pytest.mark.parametrize("relative", [True, False], ids=["relative-link", "absolute-link"])
def test_fix_never_rewrites_a_file_outside_through_a_committed_symlink(tmp_path: Path, relative: bool):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    victim = outside / "victim.py"
    victim.write_text(LEAF, encoding="utf-8")
    (repo / "link.py").symlink_to(Path("../outside/victim.py") if relative else victim)
    (repo / "own.py").write_text(LEAF, encoding="utf-8")
    for paths in (["."], ["link.py", "own.py"]):  # a folder, and files named as pre-commit names them
        (repo / "own.py").write_text(LEAF, encoding="utf-8")
        out, err = text(proc := gradguard("check", "--fix", "--unsafe-fixes", "--concise", *paths, cwd=repo))
        assert victim.read_text(encoding="utf-8") == LEAF
        assert (repo / "own.py").read_text(encoding="utf-8") == LEAF_FIXED  # the repository's own file is fixed
        assert "link.py: a symlink to a file outside the checked folders; not fixed" in err
        assert "link.py:3:1: GG101" in out  # not fixed, so still reported
        assert proc.returncode == 1


def test_fix_through_a_symlink_to_a_file_inside_the_repository_still_works(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "real.py").write_text(LEAF, encoding="utf-8")
    (tmp_path / "link.py").symlink_to("src/real.py")
    out, err = text(proc := gradguard("check", "--fix", "--unsafe-fixes", ".", cwd=tmp_path))
    assert proc.returncode == 0, err
    assert (tmp_path / "src" / "real.py").read_text(encoding="utf-8") == LEAF_FIXED
    assert (tmp_path / "link.py").is_symlink()


# ---- a killed --fix leaves nothing behind for long -----------------------------------------------------------


KILLED_WRITER = """
import os, sys, time
from gradguard import fileio
def stall(fd):
    print("writing", flush=True)
    time.sleep(60)
os.fsync = stall
fd = os.open(".", os.O_RDONLY)
fileio.replace_in_folder(fd, "train.py", b"half", 0o644)
"""


def test_a_temporary_file_of_a_killed_fix_is_removed_by_the_next_run(tmp_path: Path):
    (tmp_path / "train.py").write_text(LEAF, encoding="utf-8")
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER], cwd=tmp_path, stdout=subprocess.PIPE)
    try:
        assert writer.stdout.readline() == b"writing\n"
        [litter] = [p.name for p in tmp_path.iterdir() if p.name.endswith(".gradguard-tmp")]
        assert litter.startswith(".train.py.")
        # While its writer lives, another run leaves it alone.
        text(gradguard("check", "--no-cache", ".", cwd=tmp_path))
        assert (tmp_path / litter).exists()
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
    assert (tmp_path / litter).exists()  # what SIGKILL leaves
    out, err = text(proc := gradguard("check", "--no-cache", "--concise", ".", cwd=tmp_path))
    assert proc.returncode == 1 and FINDING in out
    assert not (tmp_path / litter).exists()
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == LEAF


def test_fix_removes_its_stale_siblings_and_keeps_a_locked_one(tmp_path: Path):
    (tmp_path / "train.py").write_text(LEAF, encoding="utf-8")
    stale = tmp_path / ".train.py.a1b2c3d4.gradguard-tmp"
    stale.write_text("half", encoding="utf-8")
    live = tmp_path / ".train.py.e5f6a7b8.gradguard-tmp"
    live.write_text("writing", encoding="utf-8")
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # a writer at work in another process
        assert fileio.clean_stale_tmp_at(tmp_path, os.listdir(tmp_path)) == 1
        assert live.exists() and not stale.exists()
    stale.write_text("half", encoding="utf-8")
    out, err = text(proc := gradguard("check", "--fix", "--unsafe-fixes", "train.py", cwd=tmp_path))
    assert proc.returncode == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


# ---- exit status ---------------------------------------------------------------------------------------------


DEEP = "import torch\nw = torch.zeros(3, requires_grad=True)\nx = " + "+".join(["w"] * 3000) + "\nw += 1\n"


@pytest.mark.parametrize("files,args,status", [
    ({"train.py": LEAF}, [], 1),
    ({"deep.py": DEEP}, [], 1),  # a finding plus a block not analysed: the finding counts (issue 23)
    ({"broken.py": "def f(:\n    pass\n"}, [], 1),  # reported as a syntax error, as ruff does
    ({"train.py": LEAF, "missing.py": None}, [], 1),
    ({"missing.py": None}, [], 2),  # nothing could be reported for the only path
    ({"ok.py": CLEAN, "missing.py": None}, [], 2),
    ({"ok.py": CLEAN}, [], 0),
    ({"train.py": LEAF}, ["--exit-zero"], 0),
    ({"deep.py": DEEP}, ["--exit-zero"], 0),
    ({"train.py": LEAF, "missing.py": None}, ["--exit-zero"], 2),
    ({"ok.py": CLEAN}, ["--select", "XYZ"], 2),
], ids=["finding", "finding-and-not-analysed", "syntax-error", "finding-and-unreadable", "unreadable",
        "clean-and-unreadable", "clean", "exit-zero", "exit-zero-not-analysed", "exit-zero-unreadable",
        "config-error"])
def test_exit_status(tmp_path: Path, files: dict, args: list, status: int):
    for name, content in files.items():
        if content is not None:
            (tmp_path / name).write_text(content, encoding="utf-8")
    proc = gradguard("check", "--no-cache", *args, *files, cwd=tmp_path)
    text(proc)
    assert proc.returncode == status


# ---- configuration ---------------------------------------------------------------------------------------------


def test_select_with_a_foreign_code_names_the_flag(tmp_path: Path):
    (tmp_path / "ok.py").write_text(CLEAN, encoding="utf-8")
    proc = gradguard("check", "--select", "XYZ", "ok.py", cwd=tmp_path)
    assert proc.stderr.decode() == ("gradguard: configuration error: --select XYZ: not a gradguard code "
                                    "(they start with GG, e.g. GG101)\n")


def test_an_unknown_key_lists_the_keys_as_the_readme_spells_them(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradguard]\nper_file_ignore = {}\n", encoding="utf-8")
    (tmp_path / "ok.py").write_text(CLEAN, encoding="utf-8")
    proc = gradguard("check", "ok.py", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert ("unknown key `per_file_ignore` (known: exclude, extend-select, ignore, language, per-file-ignores, "
            "select)") in err, err


def test_per_file_ignores_still_match_names_paths_and_globs(tmp_path: Path):
    values = _validate({"per-file-ignores": {"gen/*.py": ["GG1"], "train.py": ["GG101"], "x/y.py": ["GG2"],
                                             "*_test.py": ["GG3"]}}, "t")
    config = Config(root=str(tmp_path), **values)
    assert not config.is_enabled("GG104", str(tmp_path / "gen" / "a.py"))
    assert not config.is_enabled("GG101", str(tmp_path / "deep" / "train.py"))  # by its name
    assert config.is_enabled("GG102", str(tmp_path / "train.py"))
    assert not config.is_enabled("GG201", str(tmp_path / "x" / "y.py"))
    assert config.is_enabled("GG201", str(tmp_path / "y.py"))
    assert not config.is_enabled("GG301", str(tmp_path / "m_test.py"))


def _per_file_ignores_calls(n: int, root: Path) -> tuple[int, int]:
    """The calls of building a config of n per-file-ignores entries and of matching 50 paths against it."""
    table = {f"pkg{i}/gen_{i}.py": ["GG101"] for i in range(n)}
    table.update({f"pkg{i}/*_{i}.py": ["GG2"] for i in range(n // 100)})  # some globs among them
    paths = [str(root / f"pkg{i}" / f"gen_{i}.py") for i in range(0, n, max(1, n // 50))]
    config = Config(root=str(root), **_validate({"per-file-ignores": table}, "t"))
    build = calls_of(lambda: config.is_enabled("GG101", str(root / "warm_up.py")))

    def match():
        for path in paths:
            for code in ("GG101", "GG102", "GG201", "GG301", "GG401"):
                config.is_enabled(code, path)

    return build, calls_of(match)


def test_per_file_ignores_scale_linearly(tmp_path: Path):
    """60,000 entries once took 66 s per check (issue 23): every path was matched against every pattern. Work is
    counted in calls (tests/work_count.py), not timed: 10x the entries may cost at most 12x, and matching a path
    costs nothing per exact entry (a lookup), only per glob."""
    small_build, small_match = _per_file_ignores_calls(6_000, tmp_path)
    large_build, large_match = _per_file_ignores_calls(60_000, tmp_path)
    assert large_build / small_build <= 12, (small_build, large_build)
    assert large_match / small_match <= 12, (small_match, large_match)
    # 50 paths against 600 globs: a pass over the 60,000 exact entries per path would be 3,000,000 calls.
    assert large_match < 50 * 600 * 4, large_match


# ---- progress on a terminal ------------------------------------------------------------------------------------


def _stderr_on_a_terminal(args: list[str], cwd: Path, delay: str = "0") -> str:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "gradguard", *args], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=follower, timeout=120, env={**os.environ, "NO_COLOR": "1", "GRADGUARD_PROGRESS_DELAY": delay})
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 1
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_long_check_shows_progress_on_a_terminal_only(tmp_path: Path):
    for i in range(40):
        (tmp_path / f"m{i:02}.py").write_text(LEAF + "".join(f"y{j} = w * {j}\n" for j in range(40)), encoding="utf-8")
    shown = _stderr_on_a_terminal(["check", "--no-cache", "--jobs", "1", "--concise", "."], tmp_path)
    assert "checking " in shown and "/40 files" in shown
    assert shown.endswith("\r\x1b[K")  # erased at the end: the report stays clean
    assert "checking " not in _stderr_on_a_terminal(["check", "--no-cache", "--jobs", "1", "--quiet", "."], tmp_path)
    piped = gradguard("check", "--no-cache", "--jobs", "1", "--concise", ".", cwd=tmp_path)
    assert piped.returncode == 1 and piped.stderr == b""


def test_the_progress_line_comes_before_the_first_file_is_done(tmp_path: Path):
    """A 42-file check ran 6 s in silence (issue 32): the line was drawn only when a file finished, and a worker
    pool's first results come after its start-up and a whole chunk. A thread of its own draws it now."""
    (tmp_path / "a.py").write_text(LEAF + "".join(f"y{j} = w * {j}\n" for j in range(3000)), encoding="utf-8")
    (tmp_path / "b.py").write_text(LEAF, encoding="utf-8")
    shown = _stderr_on_a_terminal(["check", "--no-cache", "--jobs", "1", "--concise", "."], tmp_path, delay="0.2")
    assert shown.startswith("\r\x1b[Kchecking 0/2 files") and shown.endswith("\r\x1b[K")
