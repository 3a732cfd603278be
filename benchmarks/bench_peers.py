"""Peer benchmark (`make bench-peers`): CPU time of gradguard, bare libcst parsing, TorchFix, Fixit and ruff.

One fixed corpus, timm's sources from the wheel pinned in corpus.lock, copied to a temporary folder outside any git
work tree (Fixit skips files that a .gitignore names, and .corpus/ is gitignored). Each tool runs as a subprocess;
its CPU time is the user + system time of the subprocess and every process it waited for (getrusage of children),
so tools that fan out to several processes or threads are charged for all of them. Rounds are interleaved (each
round runs every tool once, in a rotated order) and the table shows medians. Writes the sections "Peer benchmark"
and "Engine vs bare parse" of benchmarks/RESULTS.md.

Usage: python benchmarks/bench_peers.py [--rounds N] [--slow-rounds N] [--skip-gradguard]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # benchmarks/ is not a package: found through sys.path

PEERS_DIR = corpus.BENCH_DIR / ".peers"
PEERS_VENV = PEERS_DIR / "venv"
PEERS_BIN = PEERS_VENV / "bin"
BENCH_PACKAGE = "timm"

# A bare parse: read every .py file under the folder and hand it to libcst, nothing else (one line, so the
# command in RESULTS.md can be pasted into a shell). Each module is dropped before the next parse, as a linter
# does: a list of every module would keep millions of nodes alive and slow the garbage collector (measured:
# 12.5 CPU s instead of 8.8 on timm), flattering everyone measured against it.
BARE_PARSE = ("import pathlib, sys, libcst; "
              'all(libcst.parse_module(p.read_bytes()) for p in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")))')

@dataclass
class Tool:
    """One measured command; `slow` tools run only in the first `--slow-rounds` rounds."""

    name: str
    version: str
    command: list[str]
    ok_exit: tuple[int, ...]
    slow: bool = False
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    last_run: corpus.Run | None = None

    def display_command(self, replacements: dict[str, str]) -> str:
        """The command as a shell line, with the long local paths replaced by short names."""
        line = shlex.join(self.command)
        for path, name in replacements.items():
            line = line.replace(path, name)
        return line


def ensure_peers() -> None:
    """Create benchmarks/.peers/venv with the peers pinned in corpus.lock, unless it is there with those pins."""
    pins = [f"{name}=={version}" for name, version in corpus.read_lock("peers")]
    stamp = PEERS_DIR / "installed.txt"
    if stamp.exists() and stamp.read_text().split() == pins and (PEERS_BIN / "python").exists():
        return
    if not (PEERS_BIN / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(PEERS_VENV)], check=True)
    # TorchFix 0.7.0 does not depend on torch, so no torch (and no CUDA build) lands in this venv.
    subprocess.run([str(PEERS_BIN / "python"), "-m", "pip", "install", "--quiet", *pins], check=True)
    stamp.write_text("\n".join(pins) + "\n")


def output_of(command: list[str]) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def libcst_version(python: str) -> str:
    return output_of([python, "-c", "import importlib.metadata as m; print(m.version('libcst'))"])


def make_tools(bench_dir: Path, project_python: str, gradguard: str | None) -> list[Tool]:
    peers_python = str(PEERS_BIN / "python")
    gradguard_version = output_of(
        [project_python, "-c", "import importlib.metadata as m; print(m.version('gradguard'))"])
    try:  # the engine changes faster than its version number: name the commit too
        commit = output_of(["git", "-C", str(corpus.PROJECT_DIR), "rev-parse", "--short", "HEAD"])
        dirty = output_of(["git", "-C", str(corpus.PROJECT_DIR), "status", "--porcelain", "--", "server"])
        gradguard_version += f" ({commit}{', uncommitted changes in server/' if dirty else ''})"
    except (OSError, subprocess.CalledProcessError):
        pass
    tools = []
    if gradguard:
        # --no-cache: every round is a cold run (the CLI's cache would answer rounds 2 and later from disk)
        tools.append(Tool("gradguard check --jobs 1", gradguard_version,
                          [gradguard, "check", "--no-cache", "--format", "json", "--jobs", "1", str(bench_dir)], (0, 1)))
    tools += [
        Tool("bare libcst.parse_module", f"libcst {libcst_version(project_python)}",
             [project_python, "-c", BARE_PARSE, str(bench_dir)], (0,)),
        Tool("bare libcst.parse_module (peers' libcst)", f"libcst {libcst_version(peers_python)}",
             [peers_python, "-c", BARE_PARSE, str(bench_dir)], (0,)),
        Tool("TorchFix", f"torchfix {output_of([str(PEERS_BIN / 'torchfix'), '--version'])}",
             [str(PEERS_BIN / "torchfix"), "--jobs", "1", str(bench_dir)], (0, 1), slow=True),
        Tool("Fixit (fixit lint)", output_of([str(PEERS_BIN / "fixit"), "--version"]).replace(", version", ""),
             [str(PEERS_BIN / "fixit"), "lint", str(bench_dir)], (0, 1), slow=True),
        Tool("ruff --select ALL", output_of([str(PEERS_BIN / "ruff"), "--version"]),
             [str(PEERS_BIN / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero", "--quiet",
              "--select", "ALL", str(bench_dir)], (0,)),
        Tool("ruff (default rules)", output_of([str(PEERS_BIN / "ruff"), "--version"]),
             [str(PEERS_BIN / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero", "--quiet",
              str(bench_dir)], (0,)),
    ]
    return tools


def run_rounds(tools: list[Tool], rounds: int, slow_rounds: int) -> None:
    for round_index in range(rounds):
        # Rotate the order so that no tool always runs first (cold caches) or right after a heavy one.
        shift = round_index % len(tools)
        for tool in tools[shift:] + tools[:shift]:
            if tool.slow and round_index >= slow_rounds:
                continue
            run = corpus.timed_run(tool.command)
            if run.returncode not in tool.ok_exit:
                print(run.stdout[-2000:], run.stderr[-4000:], sep="\n")
                raise SystemExit(f"{tool.name} exited {run.returncode}")
            tool.cpu.append(run.cpu)
            tool.wall.append(run.wall)
            tool.last_run = run
            print(f"round {round_index + 1}/{rounds}: {tool.name:<42} CPU {run.cpu:8.2f} s  wall {run.wall:8.2f} s",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slow-rounds", type=int, default=3, help="rounds in which TorchFix and Fixit run")
    parser.add_argument("--python", default=sys.executable, help="the project venv's python")
    parser.add_argument("--gradguard", default=None, help="the gradguard executable (default: next to --python)")
    parser.add_argument("--skip-gradguard", action="store_true", help="measure only the peers (engine not ready)")
    parser.add_argument("--no-write", action="store_true", help="print the tables, leave RESULTS.md alone")
    args = parser.parse_args(argv)
    gradguard = None if args.skip_gradguard else (args.gradguard or str(Path(args.python).parent / "gradguard"))

    ensure_peers()
    (package,) = corpus.collect([BENCH_PACKAGE], args.python)
    files = corpus.python_files(package.checked_dir)
    lines = corpus.count_lines(files)
    with tempfile.TemporaryDirectory(prefix="gradguard-bench-") as temp:
        bench_dir = Path(temp) / package.checked_dir.name
        shutil.copytree(package.checked_dir, bench_dir)
        tools = make_tools(bench_dir, args.python, gradguard)
        print(f"corpus: {package.label} ({len(files)} files, {lines} lines), copied to {bench_dir}")
        load_before = os.getloadavg()[0]
        run_rounds(tools, args.rounds, args.slow_rounds)
        load_after = os.getloadavg()[0]
        tools = [tool for tool in tools if tool.cpu]
        replacements = {str(bench_dir): "$BENCH", str(PEERS_BIN) + "/": "$PEERS/", args.python: "$VPY"}
        if gradguard:
            replacements[gradguard] = os.path.relpath(gradguard, corpus.PROJECT_DIR)
        commands = {tool.name: tool.display_command(replacements) for tool in tools}
        torchfix_note = next((line for t in tools if t.name == "TorchFix" and t.last_run
                              for line in t.last_run.stderr.splitlines() if line.startswith("Finished checking")), "")

    bare = next(tool for tool in tools if tool.name == "bare libcst.parse_module")
    bare_cpu = statistics.median(bare.cpu)
    rows = []
    for tool in tools:
        cpu, wall = statistics.median(tool.cpu), statistics.median(tool.wall)
        rows.append(f"| {tool.name} | {tool.version} | {len(tool.cpu)} | {cpu:.2f} | {wall:.2f} | "
                    f"{lines / cpu:,.0f} | {cpu / bare_cpu:.2f} |")
    today = datetime.date.today().isoformat()
    command_line = "python benchmarks/bench_peers.py " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]))
    peer_body = "\n".join([
        f"- Date: {today}",
        f"- Machine: {corpus.machine_line()}; the cores are shared with other jobs, so wall times are noisy and CPU "
        f"time is the measure (1-minute load average {load_before:.1f} at the start, {load_after:.1f} at the end).",
        f"- Corpus: {package.label} sources, `{package.checked_dir.name}/` from the wheel: {len(files)} files, "
        f"{lines:,} lines, copied to a temporary folder `$BENCH`.",
        f"- Run: `make bench-peers` (`{command_line.strip()}`): {args.rounds} interleaved rounds "
        f"(TorchFix and Fixit in {min(args.slow_rounds, args.rounds)}), medians. CPU = user + system time of the "
        f"process and all the processes it waited for.",
        f"- Peers venv (`$PEERS` = benchmarks/.peers/venv/bin) pins: "
        f"{', '.join(f'{n}=={v}' for n, v in corpus.read_lock('peers'))}."
        + (f" TorchFix says: \"{torchfix_note}\" (it skips files it decides not to lint; lines per CPU-second "
           f"count the whole corpus for every tool)." if torchfix_note else ""),
        "",
        "| tool | version | runs | CPU s (median) | wall s (median) | lines per CPU-second | CPU ÷ bare parse |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        "Commands:",
        "",
        *[f"- {name}: `{command}`" for name, command in commands.items()],
    ])
    print("\n" + peer_body)
    sections = {"Peer benchmark": peer_body}
    engine = next((tool for tool in tools if tool.name.startswith("gradguard")), None)
    if engine is not None:
        ratio = statistics.median(engine.cpu) / bare_cpu
        verdict = "meets" if ratio <= 1.2 else "misses"  # issue 21
        engine_body = "\n".join([
            f"Same run as the peer benchmark ({today}, {package.label}, {lines:,} lines).",
            "",
            f"- gradguard check --jobs 1: {statistics.median(engine.cpu):.2f} CPU s "
            f"({lines / statistics.median(engine.cpu):,.0f} lines per CPU-second)",
            f"- bare libcst.parse_module ({bare.version}): {bare_cpu:.2f} CPU s "
            f"({lines / bare_cpu:,.0f} lines per CPU-second)",
            f"- **gradguard CPU ÷ bare-parse CPU = {ratio:.2f}** (target ≤ 1.2: {verdict} it)",
        ])
        print("\n" + engine_body)
        sections["Engine vs bare parse"] = engine_body
    if not args.no_write:
        corpus.write_results(sections)
        print(f"\nwritten to {os.path.relpath(corpus.RESULTS_FILE, corpus.PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
