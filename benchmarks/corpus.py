"""Run `gradguard check` over the PyTorch ecosystem's own sources (`make corpus`).

The corpus is torch's own Python sources (the torch installed in the project venv) plus the wheels pinned in
`benchmarks/corpus.lock`, fetched with `pip download --no-deps --only-binary :all:` into `.corpus/` and unpacked
with zipfile: nothing from the corpus is imported or installed. Prints files, lines, parse failures, findings per
rule and the run's time, and writes the findings to `benchmarks/corpus-findings.json` with paths relative to the
corpus root (`<package>-<version>/<path inside the wheel>`; torch's files as `torch-<version>/torch/...`).

Usage: python benchmarks/corpus.py [--jobs N] [--fetch-only] [--packages NAME ...]
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
CORPUS_DIR = PROJECT_DIR / ".corpus"
WHEEL_DIR = CORPUS_DIR / "wheels"
LOCK_FILE = BENCH_DIR / "corpus.lock"
FINDINGS_FILE = BENCH_DIR / "corpus-findings.json"
RESULTS_FILE = BENCH_DIR / "RESULTS.md"

# Which part of an unpacked wheel is checked, when it is not the package's import name.
CHECKED_SUBTREE = {"transformers": "transformers/models", "pyro-ppl": "pyro", "pytorch-ignite": "ignite"}

# Codes by which the CLI may report a file it could not parse (ruff reports syntax errors without a code).
STDERR_LINES_SHOWN = 80
PARSE_FAILURE_CODES = {None, "", "E999", "GG000", "GG999", "syntax-error", "parse-error"}


@dataclass(frozen=True)
class CorpusPackage:
    """One package of the corpus: the directory that is checked and the label its paths get in the findings."""

    name: str
    version: str
    checked_dir: Path
    # `checked_dir` relative to this base becomes `label/...` in the findings.
    path_base: Path

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"

    def relative(self, path: str) -> str | None:
        """The corpus-relative form of `path`, or None when `path` is not in this package."""
        try:
            inner = Path(path).resolve().relative_to(self.path_base)
        except ValueError:
            return None
        return f"{self.label}/{inner.as_posix()}"


def read_lock(section: str) -> list[tuple[str, str]]:
    """The `name==version` pins of one `[section]` of corpus.lock, in file order."""
    pins: list[tuple[str, str]] = []
    current = None
    for raw in LOCK_FILE.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            continue
        if current == section:
            name, sep, version = line.partition("==")
            if not sep:
                raise SystemExit(f"corpus.lock: not a `name==version` pin: {raw!r}")
            pins.append((name.strip(), version.strip()))
    return pins


def _wheel_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_wheel(name: str, version: str) -> Path | None:
    prefix = f"{_wheel_name(name)}-{version}-"
    for wheel in sorted(WHEEL_DIR.glob("*.whl")):
        if wheel.name.lower().startswith(prefix):
            return wheel
    return None


def fetch_wheel(name: str, version: str) -> Path:
    """The pinned wheel, downloaded with pip into .corpus/wheels unless it is there already."""
    wheel = find_wheel(name, version)
    if wheel is not None:
        return wheel
    WHEEL_DIR.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
               f"{name}=={version}", "-d", str(WHEEL_DIR)]
    print("$", " ".join(command[2:]), flush=True)
    subprocess.run(command, check=True)
    wheel = find_wheel(name, version)
    if wheel is None:
        raise SystemExit(f"pip download left no wheel for {name}=={version} in {WHEEL_DIR}")
    return wheel


def unpack_wheel(name: str, version: str, wheel: Path) -> Path:
    """The .py files of `wheel`, extracted once into .corpus/<name>-<version>/ (a marker file records completion)."""
    target = CORPUS_DIR / f"{name}-{version}"
    marker = target / ".unpacked"
    if marker.exists():
        return target
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            if member.filename.endswith((".py", ".pyi")) and ".." not in Path(member.filename).parts:
                archive.extract(member, target)
    marker.write_text(wheel.name + "\n")
    return target


def wheel_package(name: str, version: str) -> CorpusPackage:
    """Fetch and unpack one pinned wheel; the package's checked directory."""
    root = unpack_wheel(name, version, fetch_wheel(name, version))
    subtree = CHECKED_SUBTREE.get(name, _wheel_name(name))
    checked = root / subtree
    if not checked.is_dir():
        raise SystemExit(f"{name}=={version}: no {subtree}/ in the wheel")
    return CorpusPackage(name, version, checked.resolve(), root.resolve())


def torch_package(python: str) -> CorpusPackage:
    """The installed torch of the project venv, checked in place (it lives in site-packages)."""
    out = subprocess.run(
        [python, "-c", "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__)"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    torch_dir, version = Path(out[0]).resolve(), out[1]
    return CorpusPackage("torch", version, torch_dir, torch_dir.parent)


def python_files(directory: Path) -> list[Path]:
    """The files gradguard checks under `directory`: .py and .pyi (torch ships stubs next to its sources)."""
    return sorted(p for p in directory.rglob("*.py*") if p.suffix in (".py", ".pyi") and p.is_file())


def count_lines(files: list[Path]) -> int:
    return sum(path.read_bytes().count(b"\n") for path in files)


def collect(names: list[str] | None, python: str) -> list[CorpusPackage]:
    """All corpus packages (or only `names`), fetched and unpacked."""
    packages = []
    if not names or "torch" in names:
        packages.append(torch_package(python))
    for name, version in read_lock("corpus"):
        if not names or name in names:
            packages.append(wheel_package(name, version))
    return packages


@dataclass
class Run:
    """One timed subprocess: its exit status, output, wall and CPU seconds (children's user + system)."""

    returncode: int
    stdout: str
    stderr: str
    wall: float
    cpu_user: float
    cpu_sys: float

    @property
    def cpu(self) -> float:
        return self.cpu_user + self.cpu_sys


def timed_run(command: list[str], cwd: Path | None = None) -> Run:
    """Run `command` and measure it; CPU time includes every descendant the command waited for."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        process = subprocess.run(command, stdout=out, stderr=err, cwd=cwd, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        return Run(process.returncode, out.read(), err.read(), wall,
                   after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)


def gradguard_command(gradguard: str, jobs: int, dirs: list[Path]) -> list[str]:
    return [gradguard, "check", "--format", "json", "--jobs", str(jobs), "--no-default-excludes",
            *[str(d) for d in dirs]]


def relativize(value, packages: list[CorpusPackage]):
    """`value` with every `filename` rewritten relative to the corpus root (recursively, so `related` too)."""
    if isinstance(value, list):
        return [relativize(item, packages) for item in value]
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            if key == "filename" and isinstance(item, str):
                item = next((r for p in packages if (r := p.relative(item)) is not None), item)
            result[key] = relativize(item, packages)
        return result
    return value


def finding_key(finding: dict) -> tuple:
    location = finding.get("location") or {}
    return (finding.get("filename") or "", location.get("row") or 0, location.get("column") or 0,
            finding.get("code") or "", finding.get("message") or "")


def is_parse_failure(finding: dict) -> bool:
    return finding.get("code") in PARSE_FAILURE_CODES


def replace_section(text: str, heading: str, body: str) -> str:
    """`text` with the `## heading` section replaced by `body` (appended when the section is absent)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == f"## {heading}"), None)
    section = [f"## {heading}", "", *body.rstrip().splitlines(), ""]
    if start is None:
        if lines and lines[-1].strip():
            lines.append("")
        return "\n".join(lines + section) + "\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[:start] + section + lines[end:]).rstrip() + "\n"


def write_results(sections: dict[str, str]) -> None:
    text = RESULTS_FILE.read_text() if RESULTS_FILE.exists() else "# Benchmark results\n"
    for heading, body in sections.items():
        text = replace_section(text, heading, body)
    RESULTS_FILE.write_text(text)


def machine_line() -> str:
    """Cores, CPU model, OS and Python of this machine, for the results."""
    model = "unknown CPU"
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"nproc {len(os.sched_getaffinity(0))}, {model}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def corpus_section(packages, files_per_package, lines_per_package, per_rule, per_package, parse_failures,
                   run: Run, jobs: int) -> str:
    """The "Corpus" section of RESULTS.md: what was checked, what was found, how long it took."""
    rows = [f"| {p.label} | `{p.checked_dir.relative_to(p.path_base).as_posix()}/` | "
            f"{len(files_per_package[p.label])} | {lines_per_package[p.label]:,} | {per_package.get(p.label, 0)} |"
            for p in packages]
    total_lines = sum(lines_per_package.values())
    rows.append(f"| total | | {sum(len(f) for f in files_per_package.values())} | {total_lines:,} | "
                f"{sum(per_package.values())} |")
    rules = ", ".join(f"{code} {count}" for code, count in sorted(per_rule.items())) or "none"
    return "\n".join([
        f"- Date: {datetime.date.today().isoformat()}; machine: {machine_line()} (cores shared with other jobs).",
        f"- Run: `make corpus` (`gradguard check --format json --jobs {jobs} --no-default-excludes <dirs>`); "
        f"wheels pinned in `benchmarks/corpus.lock`, torch's sources are the project venv's installed torch.",
        f"- Time: wall {run.wall:.1f} s, CPU {run.cpu:.1f} s ({total_lines / run.cpu:,.0f} lines per CPU-second).",
        f"- Parse failures: {len(parse_failures)}. Findings per rule: {rules}. "
        f"All findings: `benchmarks/corpus-findings.json`.",
        "",
        "| package | checked | files (.py, .pyi) | lines | findings |",
        "| --- | --- | ---: | ---: | ---: |",
        *rows,
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--python", default=sys.executable, help="the project venv's python (has torch)")
    parser.add_argument("--gradguard", default=None, help="the gradguard executable (default: next to --python)")
    parser.add_argument("--packages", nargs="*", help="only these packages (torch and names from corpus.lock)")
    parser.add_argument("--fetch-only", action="store_true", help="fetch and unpack, print the sizes, do not check")
    parser.add_argument("--output", type=Path, default=FINDINGS_FILE)
    parser.add_argument("--no-write", action="store_true", help="leave RESULTS.md alone")
    args = parser.parse_args(argv)
    gradguard = args.gradguard or str(Path(args.python).parent / "gradguard")

    packages = collect(args.packages, args.python)
    files_per_package = {p.label: python_files(p.checked_dir) for p in packages}
    lines_per_package = {label: count_lines(files) for label, files in files_per_package.items()}

    print(f"\ncorpus root: {CORPUS_DIR} (torch checked in place: {packages[0].checked_dir})"
          if packages[0].name == "torch" else f"\ncorpus root: {CORPUS_DIR}")
    print(f"{'package':<28} {'checked':<24} {'files':>7} {'lines':>10}")
    for p in packages:
        checked = p.checked_dir.relative_to(p.path_base).as_posix()
        print(f"{p.label:<28} {checked + '/':<24} {len(files_per_package[p.label]):>7} "
              f"{lines_per_package[p.label]:>10}")
    total_files = sum(len(f) for f in files_per_package.values())
    total_lines = sum(lines_per_package.values())
    print(f"{'total':<28} {'':<24} {total_files:>7} {total_lines:>10}")
    if args.fetch_only:
        return 0

    command = gradguard_command(gradguard, args.jobs, [p.checked_dir for p in packages])
    print(f"\n$ {' '.join(command[:7])} <{len(packages)} dirs>", flush=True)
    run = timed_run(command, cwd=PROJECT_DIR)
    stderr_lines = run.stderr.rstrip().splitlines()
    if stderr_lines:
        shown = stderr_lines[:STDERR_LINES_SHOWN]
        print(f"--- gradguard stderr ({len(stderr_lines)} lines, "
              f"{sum('Traceback' in line for line in stderr_lines)} tracebacks) ---")
        print("\n".join(shown))
        if len(stderr_lines) > len(shown):
            print(f"... {len(stderr_lines) - len(shown)} more lines (rerun the command above to see them)")
        print("---")
    # The JSON format always prints a list, even an empty one: no list means the run itself died (an uncaught
    # exception also exits 1, like "findings", so the exit status alone does not tell).
    try:
        raw_findings = json.loads(run.stdout)
    except json.JSONDecodeError as error:
        print(f"CRASH: gradguard exited {run.returncode} without a JSON list ({error}); "
              f"wall {run.wall:.1f} s, CPU {run.cpu:.1f} s; stdout starts: {run.stdout[:500]!r}")
        return 2

    findings = sorted(relativize(raw_findings, packages), key=finding_key)
    parse_failures = [f for f in findings if is_parse_failure(f)]
    rule_findings = [f for f in findings if not is_parse_failure(f)]

    print(f"gradguard exit status: {run.returncode}")
    print(f"parse failures: {len(parse_failures)}")
    for failure in parse_failures:
        location = failure.get("location") or {}
        print(f"  {failure['filename']}:{location.get('row')}:{location.get('column')}: {failure.get('message')}")

    per_rule = collections.Counter(f["code"] for f in rule_findings)
    per_package = collections.Counter(f["filename"].split("/", 1)[0] for f in rule_findings)
    print(f"findings: {len(rule_findings)}")
    for code, count in sorted(per_rule.items()):
        print(f"  {code:<10} {count:>5}")
    for label, count in sorted(per_package.items()):
        print(f"  in {label:<26} {count:>5}")
    print(f"time: wall {run.wall:.1f} s, CPU {run.cpu:.1f} s (user {run.cpu_user:.1f}, sys {run.cpu_sys:.1f}), "
          f"--jobs {args.jobs}; {total_lines / run.cpu:,.0f} lines per CPU-second")

    args.output.write_text(json.dumps(findings, indent=2) + "\n")
    print(f"findings written to {os.path.relpath(args.output, PROJECT_DIR)}")
    if not args.no_write:
        write_results({"Corpus": corpus_section(packages, files_per_package, lines_per_package, per_rule,
                                                 per_package, parse_failures, run, args.jobs)})
        print(f"summary written to {os.path.relpath(RESULTS_FILE, PROJECT_DIR)} (section \"Corpus\")")
    # 0 and 1 are gradguard's "no findings" and "findings"; anything else is a crash of the run.
    return 0 if run.returncode in (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
