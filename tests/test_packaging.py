"""Packaging. A CLI-only install (`pip install gradguard`, without the `lsp` extra): the checker runs,
`gradguard server` says how to get the language server, and the VS Code extension's probe does not pick that
install to serve. And what `make demo`, `make vsix-all` and `make release-check` build.

The CLI-only install is the test venv's own site-packages seen through a folder of links that leaves pygls, lsprotocol
and jedi out, run with `python -S` (no site-packages, no .pth files) so nothing else brings them back."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "client-vscode" / "python" / "launch.py"
EDITOR_STACK = ("pygls", "lsprotocol", "jedi")


@pytest.fixture(scope="module")
def cli_only_path(tmp_path_factory) -> str:
    site = Path(sysconfig.get_paths()["purelib"])
    links = tmp_path_factory.mktemp("cli-only-site")
    for entry in site.iterdir():
        top = entry.name.split("-")[0].split(".")[0].lower()
        if top in EDITOR_STACK or entry.suffix == ".pth":
            continue
        (links / entry.name).symlink_to(entry)
    return os.pathsep.join([str(REPO / "server"), str(links)])


def run_cli_only(path: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-S", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_editor_stack_is_really_absent(cli_only_path, tmp_path):
    done = run_cli_only(cli_only_path, "-c", "import importlib.util as u; "
                        "print([n for n in ('pygls', 'lsprotocol', 'jedi', 'libcst') if u.find_spec(n)])",
                        cwd=tmp_path)
    assert done.stdout.strip() == "['libcst']", done.stderr


def test_check_runs_without_the_editor_stack(cli_only_path, tmp_path):
    (tmp_path / "train.py").write_text("import torch\nw = torch.zeros(3, requires_grad=True)\nw += 1\n")
    done = run_cli_only(cli_only_path, "-m", "gradguard", "check", "--no-cache", "train.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "train.py:3:1: GG101" in done.stdout


def test_server_without_the_editor_stack_says_how_to_install_it(cli_only_path, tmp_path):
    done = run_cli_only(cli_only_path, "-m", "gradguard", "server", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "gradguard server: the language server needs pygls, lsprotocol, jedi, not installed in this Python; "
        "install them with `pip install 'gradguard[lsp]'` (or `pipx install 'gradguard[lsp]'`). "
        "The VS Code extension needs nothing: it bundles them.\n")


def test_extension_probe_does_not_choose_an_environment_that_cannot_serve(cli_only_path, tmp_path):
    done = run_cli_only(cli_only_path, str(LAUNCHER), "--probe", cwd=tmp_path)
    probe = json.loads(done.stdout)
    assert probe["environmentVersion"] is None
    assert probe["environmentWithoutServer"] == probe_version()


def test_extension_probe_chooses_an_environment_with_the_lsp_extra(tmp_path):
    done = subprocess.run([sys.executable, str(LAUNCHER), "--probe"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    probe = json.loads(done.stdout)
    assert (probe["environmentVersion"], probe["environmentWithoutServer"]) == (probe_version(), None)


def probe_version() -> str:
    from importlib.metadata import version

    return version("gradguard")


# What the make targets would run (`make -n -B`: every recipe printed, none run; the recursive make of
# release-check is dry-run too).
def planned(target: str) -> list[str]:
    done = subprocess.run(["make", "-n", "-B", "--no-print-directory", target], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def vsce_targets(lines: list[str]) -> list[str]:
    return [line.split("vsce package --target ", 1)[1].split()[0] for line in lines if "vsce package --target" in line]


ALL_TARGETS = ["linux-x64", "linux-arm64", "alpine-x64", "darwin-arm64", "win32-x64"]


def test_make_demo_packages_this_machines_vsix_only():
    import platform

    host = "linux-arm64" if platform.machine() in ("aarch64", "arm64") else "linux-x64"
    assert vsce_targets(planned("demo")) == [host]


def test_make_vsix_all_packages_every_platform():
    assert vsce_targets(planned("vsix-all")) == ALL_TARGETS


def test_make_release_check_checks_the_sources_first_and_every_artifact_last():
    lines = planned("release-check")
    checks = [line.split("scripts/release_check.py ", 1)[1].strip()
              for line in lines if "scripts/release_check.py" in line]
    version = probe_version()
    assert checks == ["sources", "artifacts --dist dist " + " ".join(
        f"client-vscode/gradguard-{version}-{target}.vsix" for target in ALL_TARGETS)]
    assert lines.index(next(l for l in lines if "release_check.py sources" in l)) < lines.index(
        next(l for l in lines if " -m build " in l))
    assert vsce_targets(lines) == ALL_TARGETS
