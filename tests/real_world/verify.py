"""Verify the real-world corpus (tests/real_world/) under real torch.

Usage, from the repo root (any python that has torch==2.13.0, e.g. .venv/bin/python):

  python tests/real_world/verify.py                      # every program in every manifest
  python tests/real_world/verify.py --batch a01 --batch b02   # some batches (also --batch a01,b02)
  python tests/real_world/verify.py --form project       # one form: reduction | project | notebook | long_script
  python tests/real_world/verify.py --id leaf_so_57034_01     # one or more ids (repeatable)
  python tests/real_world/verify.py --show bugs/x.py     # run files, print what they raised (to copy the
                                                         # first line into the manifest's torch_message)
  python tests/real_world/verify.py --show projects/p/bug --entry train.py   # a project folder (or a .ipynb)
  python tests/real_world/verify.py --manifests-only     # only the manifest checks (no torch needed)
  python tests/real_world/verify.py --json               # one JSON object: problems + per-file results

Exit status 0 when every check passes, 1 otherwise (each problem is printed on its own line).

Forms (the manifest field `form`; absent = "reduction")
  reduction    bugs/<id>.py + bugs/<id>.fixed.py, correct/<id>.py; bug_lines / save_lines are 1-based lines.
  long_script  the same files and fields as a reduction, 150-400 lines of a script as people write it.
  project      projects/<id>/bug/ + projects/<id>/fixed/ (3-8 .py files), correct ones in projects/<id>/correct/;
               `entry` is the script run (`python train.py`, or `python scripts/train.py` with PYTHONPATH=.) with the
               project folder as cwd; bug_locations / save_locations = [["losses.py", 9], ...] (file relative to the
               project folder, 1-based line).
  notebook     notebooks/<id>.ipynb + notebooks/<id>.fixed.ipynb, correct ones in notebooks/correct/<id>.ipynb
               (nbformat 4); modules it imports sit beside it (notebooks/<id>_pkg/, or .py files with unique names);
               bug_locations / save_locations = [["<id>.ipynb", cell, line]] (cell 1-based counting every cell,
               markdown too; line 1-based inside that cell), or for a place in a module the notebook imports
               [["<id>_pkg/ops.py", line]] (relative to the notebooks folder). Run: the code cells in order in one
               namespace (lines starting with % or ! skipped), cwd = the notebook's folder, which is also sys.path[0].
The family cap and the half-inside-a-function rule below hold within each form.

What is checked
  bug        bugs/<id>.py raises an exception whose text contains the manifest's `error`, and the first line
             of that text equals `torch_message`. Family "silent": the program exits clean and its stdout
             contains `error` (by convention it prints "wrong gradient: ..." after comparing with the true
             gradient).
  fixed      bugs/<id>.fixed.py exits clean (silent: its stdout does not contain `error`).
  correct    correct/<id>.py exits clean and does not print "wrong gradient:".
  (Projects and notebooks alike: the bug/ folder or <id>.ipynb, the fixed/ folder or <id>.fixed.ipynb, correct/.)
  manifests  see check_manifests(): fields, files, lines in range, https sources, families, shapes, the
             25% family cap and the half-inside-a-function rule once there are >= 40 bugs, orphan files.

How programs run
  All programs run in ONE worker subprocess (torch is imported once), each exec()'d as `__main__` in a fresh
  namespace with torch's global state reset and all seeds set to 0 (a project's entry with its folder as cwd and
  on sys.path, its modules dropped from sys.modules afterwards, so the next project's `models` is its own; a
  notebook's code cells one after the other in one namespace); stdout/stderr are captured; each program
  has a timeout (SIGALRM, default 30 s). If the worker dies (segfault, os._exit), the program it was running is
  reported as "WorkerCrash" and a new worker continues with the rest.
  The worker also records which leaf tensors received a gradient: torch.autograd.backward (which
  Tensor.backward calls) is wrapped to collect the graph's AccumulateGrad leaves before each backward and to
  keep those whose .grad is set after it. RunResult.trained is that multiset, as "shape:dtype" keys
  (score.py compares it between a gradguard-fixed program and the .fixed.py reference: "still trains").

Library use (score.py, tests/test_real_world.py and anyone else):

  import sys; sys.path.insert(0, "tests/real_world"); import verify
  entries = verify.load_manifests()                 # list[dict], each with "batch" and "manifest" filled in
  problems = verify.check_manifests(entries)        # list[str]
  results = verify.run_programs([path, ...])        # dict[str(path)] -> RunResult (a .py, a .ipynb, or a
                                                    # Program(path=project folder, entry="train.py"))
  verify.entry_programs(entries)                    # the Programs of these entries (what run_programs takes)
  problems += verify.verify_entries(entries, results)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pyproject already depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent
BUGS = ROOT / "bugs"
CORRECT = ROOT / "correct"
MANIFESTS = ROOT / "manifests"
PROJECTS = ROOT / "projects"
NOTEBOOKS = ROOT / "notebooks"

FAMILIES = {
    "leaf-inplace": ("GG101", "GG102"),
    "view-inplace": ("GG103", "GG105", "GG108", "GG104"),
    "inference": ("GG106", "GG107"),
    "saved-tensor-modified": ("GG201",),
    "inplace-activation": ("GG202",),
    "index-write": ("GG301",),
    "step-before-backward": ("GG401",),
    "carried-state": ("GG402",),
    "backward-twice": ("GG403",),
    "silent": ("GG501", "GG502"),
}
SHAPES = ("module", "function", "method", "class-forward")
KINDS = ("bug", "correct")
REQUIRED = ("id", "kind", "source", "family", "shape", "batch", "notes")
BUG_REQUIRED = ("bug_lines", "save_lines", "error", "torch_message", "expected_code")
FORMS = ("reduction", "project", "notebook", "long_script")
# Projects and notebooks name their places by file (and cell); the other forms by line of their one file.
LOCATED_FORMS = ("project", "notebook")
LOCATED_BUG_REQUIRED = ("bug_locations", "save_locations", "error", "torch_message", "expected_code")
PROJECT_FILES = (3, 8)
LONG_SCRIPT_LINES = (150, 400)
SILENT_MARK = "wrong gradient:"
FAMILY_CAP = 0.25
CAP_MIN_BUGS = 40
DEFAULT_TIMEOUT = 30


@dataclass(frozen=True)
class Program:
    """What one run executes: a .py file, a notebook (.ipynb), or a project folder with its entry script."""

    path: str
    entry: str | None = None  # projects only: the script, relative to the folder (e.g. "train.py")

    @property
    def key(self) -> str:
        return self.path


def as_program(item) -> Program:
    return item if isinstance(item, Program) else Program(str(Path(item)))


@dataclass
class RunResult:
    path: str
    error_type: str | None = None
    error: str | None = None
    stdout: str = ""
    seconds: float = 0.0
    trained: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.error_type is None

    @property
    def first_line(self) -> str:
        return (self.error or "").strip().splitlines()[0] if (self.error or "").strip() else ""


# ---------------------------------------------------------------- manifests

def load_manifests(batches: list[str] | None = None) -> list[dict]:
    """Every [[program]] of manifests/*.toml (or only the given batches), in file order."""
    entries = []
    for path in sorted(MANIFESTS.glob("*.toml")):
        if batches and path.stem not in batches:
            continue
        with path.open("rb") as f:
            data = tomllib.load(f)
        for entry in data.get("program", []):
            entry = dict(entry)
            entry["manifest"] = path.name
            entries.append(entry)
    return entries


def form_of(entry: dict) -> str:
    return entry.get("form", "reduction")


def bug_path(entry: dict) -> Path:
    """The program as the user has it: a file, a notebook, or a project folder."""
    form = form_of(entry)
    if form == "project":
        return PROJECTS / entry["id"] / "bug"
    if form == "notebook":
        return NOTEBOOKS / f"{entry['id']}.ipynb"
    return BUGS / f"{entry['id']}.py"


def fixed_path(entry: dict) -> Path:
    form = form_of(entry)
    if form == "project":
        return PROJECTS / entry["id"] / "fixed"
    if form == "notebook":
        return NOTEBOOKS / f"{entry['id']}.fixed.ipynb"
    return BUGS / f"{entry['id']}.fixed.py"


def correct_path(entry: dict) -> Path:
    form = form_of(entry)
    if form == "project":
        return PROJECTS / entry["id"] / "correct"
    if form == "notebook":
        return NOTEBOOKS / "correct" / f"{entry['id']}.ipynb"
    return CORRECT / f"{entry['id']}.py"


def program_paths(entry: dict) -> list[Path]:
    if entry.get("kind") == "bug":
        return [bug_path(entry), fixed_path(entry)]
    return [correct_path(entry)]


def program_of(entry: dict, path: Path) -> Program:
    """How to run one of the entry's programs (path is one of program_paths(entry), or a copy of it)."""
    return Program(str(path), entry.get("entry") if form_of(entry) == "project" else None)


def entry_programs(entries: list[dict]) -> list[Program]:
    return [program_of(e, p) for e in entries if e.get("kind") in KINDS and "id" in e
            for p in program_paths(e) if p.exists()]


def bug_places(entry: dict) -> list[tuple]:
    """The bug's places as (file relative to the program's folder or None, cell or None, 1-based line)."""
    form = form_of(entry)
    if form == "project":
        return [(str(f), None, int(line)) for f, line in entry.get("bug_locations", [])]
    if form == "notebook":  # a cell of the notebook, or a module beside it: ["<id>_pkg/ops.py", line]
        return [(str(p[0]), int(p[1]), int(p[2])) if len(p) == 3 else (str(p[0]), None, int(p[1]))
                for p in entry.get("bug_locations", [])]
    return [(None, None, int(line)) for line in entry.get("bug_lines", [])]


def notebook_cells(path: Path) -> list[dict]:
    """The cells of an nbformat 4 notebook, each {"cell_type", "lines"} (source split into lines)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for c in data.get("cells", []):
        src = c.get("source", "")
        text = "".join(src) if isinstance(src, list) else str(src)
        cells.append({"cell_type": c.get("cell_type"), "lines": text.splitlines()})
    return cells


def project_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _check_places(where: str, e: dict) -> list[str]:
    """bug_locations / save_locations of a project or notebook: in range of their file (and cell)."""
    problems = []
    form = form_of(e)
    if not e["bug_locations"]:
        problems.append(f"{where}: empty bug_locations")
    folder = bug_path(e) if form == "project" else NOTEBOOKS
    for key in ("bug_locations", "save_locations"):
        places = e[key]
        widths = (2,) if form == "project" else (3, 2)
        if not isinstance(places, list) or not all(
                isinstance(x, list) and len(x) in widths and isinstance(x[0], str)
                and all(isinstance(v, int) for v in x[1:]) for x in places):
            shape = ('["file.py", line]' if form == "project"
                     else '["<id>.ipynb", cell, line] or ["<module beside it>.py", line]')
            problems.append(f"{where}: {key} must be a list of {shape}")
            continue
        for place in places:
            target = folder / place[0]
            if form == "notebook" and place[0].endswith(".ipynb") and place[0] != f"{e['id']}.ipynb":
                problems.append(f"{where}: {key} {place} names another notebook than {e['id']}.ipynb")
                continue
            if form == "notebook" and (len(place) == 3) != place[0].endswith(".ipynb"):
                problems.append(f"{where}: {key} {place}: a place in the notebook is [notebook, cell, line], "
                                f"one in a module beside it [module, line]")
                continue
            if not target.is_file():
                problems.append(f"{where}: {key} {place}: no file {target.relative_to(ROOT)}")
                continue
            if len(place) == 2:
                n = _line_count(target)
                if not 1 <= place[1] <= n:
                    problems.append(f"{where}: {key} {place} outside 1..{n}")
            else:
                cells = notebook_cells(target)
                cell, line = place[1], place[2]
                if not 1 <= cell <= len(cells):
                    problems.append(f"{where}: {key} {place}: cell outside 1..{len(cells)}")
                elif cells[cell - 1]["cell_type"] != "code":
                    problems.append(f"{where}: {key} {place}: cell {cell} is not a code cell")
                elif not 1 <= line <= len(cells[cell - 1]["lines"]):
                    problems.append(f"{where}: {key} {place}: line outside 1..{len(cells[cell - 1]['lines'])}")
    return problems


def _check_form_files(where: str, e: dict) -> list[str]:
    """The layout of a project (entry present, 3-8 files) or a notebook (nbformat 4), the length of a long
    script."""
    problems = []
    form = form_of(e)
    for path in program_paths(e):
        if not path.exists():
            continue
        if form == "project":
            entry = e.get("entry")
            if not isinstance(entry, str) or not entry.endswith(".py"):
                problems.append(f"{where}: entry must be the path of a .py file in the project, got {entry!r}")
            elif not (path / entry).is_file():
                problems.append(f"{where}: no entry {entry} in {path.relative_to(ROOT)}")
            n = len(project_files(path))
            if not PROJECT_FILES[0] <= n <= PROJECT_FILES[1]:
                problems.append(f"{where}: {path.relative_to(ROOT)} has {n} .py files, not "
                                f"{PROJECT_FILES[0]}-{PROJECT_FILES[1]}")
        elif form == "notebook":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as exc:
                problems.append(f"{where}: {path.relative_to(ROOT)} is not JSON: {exc}")
                continue
            if data.get("nbformat") != 4:
                problems.append(f"{where}: {path.relative_to(ROOT)} is not nbformat 4")
        elif form == "long_script" and path.suffix == ".py":
            n = _line_count(path)
            if not LONG_SCRIPT_LINES[0] <= n <= LONG_SCRIPT_LINES[1]:
                problems.append(f"{where}: {path.relative_to(ROOT)} has {n} lines, not "
                                f"{LONG_SCRIPT_LINES[0]}-{LONG_SCRIPT_LINES[1]}")
    return problems


def check_manifests(entries: list[dict], whole_corpus: bool = True) -> list[str]:
    """Problems with the manifests themselves (no torch needed). whole_corpus adds the corpus-wide rules
    (family cap and half inside functions, each within its form; orphan files)."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for e in entries:
        where = f"{e.get('manifest')}:{e.get('id', '?')}"
        form = form_of(e)
        if form not in FORMS:
            problems.append(f"{where}: form {form!r} not in {FORMS}")
            continue
        missing = [k for k in REQUIRED if k not in e]
        if form == "project":
            missing += [k for k in ("entry",) if k not in e]
        if e.get("kind") == "bug":
            missing += [k for k in (LOCATED_BUG_REQUIRED if form in LOCATED_FORMS else BUG_REQUIRED) if k not in e]
        if missing:
            problems.append(f"{where}: missing fields {missing}")
            continue
        pid = e["id"]
        if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", pid):
            problems.append(f"{where}: id must be <family-short>_<source-short>_<nn> in [a-z0-9_]")
        if pid in seen:
            problems.append(f"{where}: id also in {seen[pid]}")
        seen[pid] = e["manifest"]
        if e["kind"] not in KINDS:
            problems.append(f"{where}: kind {e['kind']!r} not in {KINDS}")
            continue
        if e["batch"] != Path(e["manifest"]).stem:
            problems.append(f"{where}: batch {e['batch']!r} but manifest is {e['manifest']}")
        if not re.fullmatch(r"https://[^\s/]+\.[^\s/]+/\S*", str(e["source"])):
            problems.append(f"{where}: source is not an https URL: {e['source']!r}")
        if e["family"] not in FAMILIES:
            problems.append(f"{where}: family {e['family']!r} not in {sorted(FAMILIES)}")
        if e["shape"] not in SHAPES:
            problems.append(f"{where}: shape {e['shape']!r} not in {SHAPES}")
        if not str(e["notes"]).strip():
            problems.append(f"{where}: empty notes")
        for path in program_paths(e):
            if not path.exists():
                problems.append(f"{where}: missing {path.relative_to(ROOT)}")
        problems += _check_form_files(where, e)
        if e["kind"] == "bug":
            if not str(e["error"]).strip():
                problems.append(f"{where}: empty error")
            if e["family"] != "silent" and not str(e["torch_message"]).strip():
                problems.append(f"{where}: empty torch_message")
            code = e["expected_code"]
            if code and not re.fullmatch(r"GG\d{3}", code):
                problems.append(f"{where}: expected_code {code!r} is not GGnnn or empty")
            if form in LOCATED_FORMS:
                problems += _check_places(where, e)
                continue
            if not e["bug_lines"]:
                problems.append(f"{where}: empty bug_lines")
            if bug_path(e).is_file():
                n = _line_count(bug_path(e))
                for key in ("bug_lines", "save_lines"):
                    lines = e[key]
                    if not isinstance(lines, list) or not all(isinstance(x, int) for x in lines):
                        problems.append(f"{where}: {key} must be a list of ints")
                    elif any(not 1 <= x <= n for x in lines):
                        problems.append(f"{where}: {key} {lines} outside 1..{n}")
    if whole_corpus:
        for form in FORMS:
            bugs = [e for e in entries if e.get("kind") == "bug" and e.get("family") in FAMILIES
                    and form_of(e) == form]
            if len(bugs) >= CAP_MIN_BUGS:
                for fam, n in Counter(e["family"] for e in bugs).items():
                    if n > FAMILY_CAP * len(bugs):
                        problems.append(f"{form}: family {fam}: {n} of {len(bugs)} bugs is above {FAMILY_CAP:.0%}")
                inside = sum(1 for e in bugs if e.get("shape") != "module")
                if 2 * inside < len(bugs):
                    problems.append(f"{form}: only {inside} of {len(bugs)} bugs are inside a function or method")
        problems += _orphans(entries)
    return problems


def _orphans(entries: list[dict]) -> list[str]:
    """Programs on disk that no manifest lists (modules beside the notebooks are theirs, not programs)."""
    problems = []
    listed = {p.resolve() for e in entries if e.get("id") and form_of(e) in FORMS for p in program_paths(e)}
    for d in (BUGS, CORRECT):
        for p in sorted(d.glob("*.py")) if d.is_dir() else []:
            if p.resolve() not in listed:
                problems.append(f"orphan file (in no manifest): {p.relative_to(ROOT)}")
    if PROJECTS.is_dir():
        for d in sorted(PROJECTS.iterdir()):
            for p in sorted(d.iterdir()) if d.is_dir() else [d]:
                if p.resolve() not in listed:
                    problems.append(f"orphan project folder (in no manifest): {p.relative_to(ROOT)}")
    for d in (NOTEBOOKS, NOTEBOOKS / "correct"):
        for p in sorted(d.glob("*.ipynb")) if d.is_dir() else []:
            if p.resolve() not in listed:
                problems.append(f"orphan notebook (in no manifest): {p.relative_to(ROOT)}")
    return problems


# ---------------------------------------------------------------- running programs

def run_programs(paths: list, timeout: int = DEFAULT_TIMEOUT,
                 python: str | None = None) -> dict[str, RunResult]:
    """Run each program (a file path, a .ipynb, or a Program) under torch in one worker subprocess (restarted
    after a crash). Keys are str(path) (a project's folder)."""
    todo = [as_program(p) for p in paths]
    results: dict[str, RunResult] = {}
    python = python or sys.executable
    while todo:
        with tempfile.TemporaryDirectory() as tmp:
            job = Path(tmp) / "job.json"
            out = Path(tmp) / "results.jsonl"
            job.write_text(json.dumps({"programs": [asdict(p) for p in todo], "timeout": timeout}))
            proc = subprocess.run([python, str(Path(__file__).resolve()), "--worker", str(job), str(out)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            done = []
            if out.exists():
                for line in out.read_text().splitlines():
                    if line.strip():
                        r = RunResult(**json.loads(line))
                        results[r.path] = r
                        done.append(r.path)
        todo = todo[len(done):]
        if todo:  # the worker died while running todo[0]
            results[todo[0].key] = RunResult(todo[0].key, "WorkerCrash",
                                             f"worker exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
            todo = todo[1:]
    return results


class _ProgramTimeout(BaseException):
    pass


def _shell_line(line: str) -> bool:
    """An IPython magic or shell escape (`%pip install x`, `!nvidia-smi`): not Python, skipped when run."""
    return line.lstrip().startswith(("%", "!"))


def exec_program(program: Program, ns: dict) -> None:
    """Execute one program in `ns` as `__main__`, in this process; its exceptions propagate.

    A file: exec'd as is. A notebook: its code cells in order in one namespace, with the notebook's folder as cwd and
    sys.path[0] (and `display` bound to print, as Jupyter provides it). A project: `python <entry>` with the project
    folder as cwd, the entry's folder as sys.path[0] and the project folder after it (PYTHONPATH=.). cwd and sys.path
    are restored afterwards, and every module imported from the program's folder is dropped from sys.modules, so the
    next program imports its own."""
    path = Path(program.path)
    if path.suffix == ".ipynb":
        folder, script = path.resolve().parent, None
        codes = [compile("\n".join("" if _shell_line(ln) else ln for ln in c["lines"]) + "\n",
                         f"{path}:cell{n}", "exec")  # n as the notebook counts cells (markdown too)
                 for n, c in enumerate(notebook_cells(path), 1) if c["cell_type"] == "code"]
        search = [str(folder)]
        ns.setdefault("display", print)  # Jupyter's builtin, for cells that show a value
    elif program.entry:
        folder = path.resolve()
        script = folder / program.entry
        codes = [compile(script.read_text(encoding="utf-8"), str(script), "exec")]
        search = [str(script.parent)] + ([str(folder)] if script.parent != folder else [])
    else:
        codes = [compile(path.read_text(encoding="utf-8"), str(path), "exec")]
        for code in codes:
            exec(code, ns)
        return
    if script is not None:
        ns["__file__"] = str(script)
    else:
        ns.pop("__file__", None)  # a notebook's namespace has none
    saved_cwd, saved_path, before = os.getcwd(), list(sys.path), set(sys.modules)
    try:
        os.chdir(folder)
        sys.path[:0] = search
        for code in codes:
            exec(code, ns)
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:
            if _imported_from(sys.modules.get(name), folder):
                del sys.modules[name]


def _imported_from(module, folder: Path) -> bool:
    places = [getattr(module, "__file__", None) or "", *list(getattr(module, "__path__", None) or [])]
    return any(p and Path(p).resolve().is_relative_to(folder) for p in places)


def _worker(job_file: str, out_file: str) -> None:
    import contextlib
    import io
    import random
    import signal
    import time
    import warnings

    import torch

    try:
        import numpy
    except ImportError:  # pragma: no cover
        numpy = None

    trained: dict[int, object] = {}
    orig_backward = torch.autograd.backward

    def leaves_of(tensors, inputs):
        if inputs is not None:
            inputs = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
            return [t for t in inputs if isinstance(t, torch.Tensor) and t.is_leaf]
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        found, seen, stack = [], set(), []
        for t in roots:
            if isinstance(t, torch.Tensor):
                if t.grad_fn is not None:
                    stack.append(t.grad_fn)
                elif t.requires_grad:
                    found.append(t)
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if isinstance(var, torch.Tensor):
                found.append(var)
            stack.extend(n for n, _ in node.next_functions if n is not None)
        return found

    def tracking_backward(*args, **kwargs):
        tensors = args[0] if args else kwargs.get("tensors")
        try:
            leaves = leaves_of(tensors, kwargs.get("inputs", args[5] if len(args) > 5 else None))
        except Exception:  # never let the bookkeeping change what the program does
            leaves = []
        result = orig_backward(*args, **kwargs)
        for t in leaves:
            if t.grad is not None:
                trained[id(t)] = t  # a strong reference: ids stay unique for the whole program
        return result

    torch.autograd.backward = tracking_backward

    def on_alarm(signum, frame):
        raise _ProgramTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    torch.set_num_threads(1)  # the programs are tiny; one thread avoids oversubscribing shared CI cores
    # Pay torch's one-time lazy initialisation (optimizers, autograd engine) before timing any program.
    warm = torch.nn.Linear(2, 2)
    warm_opt = torch.optim.AdamW(warm.parameters())
    warm(torch.ones(1, 2)).sum().backward()
    warm_opt.step()
    del warm, warm_opt
    job = json.loads(Path(job_file).read_text())
    timeout = int(job.get("timeout", DEFAULT_TIMEOUT))
    saved_argv = list(sys.argv)
    with open(out_file, "a", encoding="utf-8") as out:
        for item in job["programs"]:
            program = Program(**item)
            path = program.key
            trained.clear()
            torch.set_grad_enabled(True)
            torch.autograd.set_detect_anomaly(False)
            torch.set_default_dtype(torch.float32)
            torch.manual_seed(0)
            random.seed(0)
            if numpy is not None:
                numpy.random.seed(0)
            buf = io.StringIO()
            ns = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
            err_type = err = None
            sys.argv = [program.entry or path]
            start = time.perf_counter()
            signal.alarm(timeout)
            try:
                with warnings.catch_warnings(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                    warnings.simplefilter("ignore")
                    exec_program(program, ns)
            except _ProgramTimeout:
                err_type, err = "Timeout", f"no result after {timeout} s"
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    err_type, err = "SystemExit", f"exit status {exc.code}"
            except BaseException as exc:  # the programs are expected to raise torch's errors
                err_type, err = type(exc).__name__, str(exc)
            finally:
                signal.alarm(0)
                sys.argv = saved_argv
            seconds = time.perf_counter() - start
            keys = sorted(f"{tuple(t.shape)}:{str(t.dtype).replace('torch.', '')}" for t in trained.values())
            r = RunResult(path, err_type, err, buf.getvalue()[-4000:], round(seconds, 3), keys)
            out.write(json.dumps(asdict(r)) + "\n")
            out.flush()
            ns.clear()
            trained.clear()


# ---------------------------------------------------------------- checking results

def verify_entries(entries: list[dict], results: dict[str, RunResult]) -> list[str]:
    """Problems with how the programs behaved under torch."""
    problems = []
    for e in entries:
        if e.get("kind") not in KINDS or "id" not in e:
            continue
        pid = e["id"]
        silent = e.get("family") == "silent"
        if e["kind"] == "bug":
            r = results.get(str(bug_path(e)))
            if r is None:
                problems.append(f"{pid}: bug not run")
            elif silent:
                if not r.clean:
                    problems.append(f"{pid}: silent bug raised {r.error_type}: {r.first_line}")
                elif e["error"] not in r.stdout:
                    problems.append(f"{pid}: silent bug did not print {e['error']!r} (stdout {r.stdout[-200:]!r})")
            elif r.clean:
                problems.append(f"{pid}: bug ran clean; expected {e['error']!r}")
            elif e["error"] not in (r.error or ""):
                problems.append(f"{pid}: bug raised {r.error_type}: {r.first_line!r}; expected {e['error']!r}")
            elif e.get("torch_message") and r.first_line != e["torch_message"].strip():
                problems.append(f"{pid}: torch_message differs from the run's first line {r.first_line!r}")
            f = results.get(str(fixed_path(e)))
            if f is None:
                problems.append(f"{pid}: fixed not run")
            elif not f.clean:
                problems.append(f"{pid}: fixed raised {f.error_type}: {f.first_line}")
            elif silent and e["error"] in f.stdout:
                problems.append(f"{pid}: fixed still prints {e['error']!r}")
        else:
            r = results.get(str(correct_path(e)))
            if r is None:
                problems.append(f"{pid}: correct not run")
            elif not r.clean:
                problems.append(f"{pid}: correct program raised {r.error_type}: {r.first_line}")
            elif SILENT_MARK in r.stdout:
                problems.append(f"{pid}: correct program printed {SILENT_MARK!r}")
    return problems


def select(entries: list[dict], batches: list[str] | None, ids: list[str] | None,
           forms: list[str] | None = None) -> list[dict]:
    if forms:
        entries = [e for e in entries if form_of(e) in forms]
    if batches:
        entries = [e for e in entries if e.get("batch") in batches]
    if ids:
        entries = [e for e in entries if e.get("id") in ids]
    return entries


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v for item in values for v in item.split(",") if v]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", action="append", help="batch name(s), e.g. a01 (repeatable, comma separated)")
    ap.add_argument("--id", action="append", help="program id(s) (repeatable, comma separated)")
    ap.add_argument("--form", action="append", help=f"form(s) {'|'.join(FORMS)} (repeatable, comma separated)")
    ap.add_argument("--show", nargs="+", metavar="FILE", help="run these files (a .py, a .ipynb, a project "
                    "folder with --entry) and print what they raised")
    ap.add_argument("--entry", help="with --show: the entry script of the project folders shown")
    ap.add_argument("--manifests-only", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT)
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0
    if args.show:
        paths = [Path(p) if Path(p).exists() else ROOT / p for p in args.show]
        if any(p.is_dir() for p in paths) and not args.entry:
            ap.error("a project folder runs from its entry script: add --entry (e.g. --entry train.py)")
        programs = [Program(str(p), args.entry if p.is_dir() else None) for p in paths]
        for p, r in run_programs(programs, args.timeout).items():
            print(f"{p}: {r.error_type or 'clean'} ({r.seconds:.2f} s)")
            if r.error:
                print(f"  torch_message = {json.dumps(r.first_line, ensure_ascii=False)}")
            if r.stdout.strip():
                print("  stdout: " + r.stdout.strip().replace("\n", "\n          ")[-1500:])
            print(f"  trained: {r.trained}")
        return 0
    all_entries = load_manifests()
    batches, ids, forms = _split(args.batch), _split(args.id), _split(args.form)
    unknown = sorted(set(forms or []) - set(FORMS))
    if unknown:
        ap.error(f"unknown form(s) {unknown}; forms are {', '.join(FORMS)}")
    entries = select(all_entries, batches, ids, forms)
    whole = not batches and not ids and not forms
    problems = check_manifests(all_entries if whole else entries, whole_corpus=whole)
    results: dict[str, RunResult] = {}
    if not args.manifests_only:
        results = run_programs(entry_programs(entries), args.timeout)
        problems += verify_entries(entries, results)
    if args.json:
        print(json.dumps({"programs": len(entries), "problems": problems,
                          "results": {k: asdict(v) for k, v in results.items()}}, indent=1))
    else:
        for p in problems:
            print(p)
        n_bug = sum(1 for e in entries if e.get("kind") == "bug")
        print(f"verify: {len(entries)} programs ({n_bug} bugs, {len(entries) - n_bug} correct), "
              f"{len(results)} files run, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
