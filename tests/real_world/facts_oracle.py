"""What hover says about each tensor name, checked against what torch says when the program runs.

Usage, from the repo root: python tests/real_world/facts_oracle.py [FILE.py ...]   (default: every program of
tests/real_world/ and every rule example). Prints one line per contradiction and a summary; exit 1 when any.

The analysis side: every Name the Facts pass gave a tensor value (what hover shows), with its definite
requires_grad / is_leaf claims (None claims nothing). The runtime side: the program runs in a subprocess under
sys.settrace; at each line event of a frame of the program's own file, the tensors among that frame's locals are
recorded. A name read on line L is compared with the states seen at line events of L (before L runs); a name
bound on line L with the states seen at the next event of that frame (after L ran). A claim is contradicted when
the name was seen as a tensor at least once and never with the claimed value: loops, contexts and joins may make
the analysis' value one of several runtime values, never a value torch never produced.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parents[2]

# Runs inside the subprocess: the program as __main__, recording tensor locals per line event of its own frames.
_RUNNER = r'''
import json, os, runpy, signal, sys
import torch
jobs = json.loads(sys.argv[1])  # [[program, json file to write], ...]
path = None
seen = {}          # "read:L" / "bound:L" -> {name: [[rg, leaf], ...]}
last = {}          # frame id -> line of its previous event

def tensors(frame):
    found = {}
    for name, value in list(frame.f_locals.items()):
        if isinstance(value, torch.Tensor):
            try:
                found[name] = (bool(value.requires_grad), bool(value.is_leaf))
            except Exception:
                pass
    return found

def note(key, state):
    slot = seen.setdefault(key, {})
    for name, pair in state.items():
        pairs = slot.setdefault(name, [])
        if list(pair) not in pairs and len(pairs) < 4:
            pairs.append(list(pair))

def trace(frame, event, arg):
    if frame.f_code.co_filename != path:
        return None
    if event in ("line", "return"):
        state = tensors(frame)
        prev = last.get(id(frame))
        if prev is not None:
            note(f"bound:{prev}", state)
        if event == "line":
            note(f"read:{frame.f_lineno}", state)
            last[id(frame)] = frame.f_lineno
        else:
            last.pop(id(frame), None)
    return trace

def alarm(signum, frame):
    raise TimeoutError

signal.signal(signal.SIGALRM, alarm)
for path, out in jobs:
    seen, last = {}, {}
    torch.manual_seed(0)
    torch.set_grad_enabled(True)
    os.chdir(os.path.dirname(out))
    signal.alarm(30)
    sys.settrace(trace)
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException:
        pass
    finally:
        sys.settrace(None)
        signal.alarm(0)
        with open(out, "w") as f:
            json.dump(seen, f)
'''


def _targets(module: cst.Module) -> set[int]:
    """ids of the Name nodes a statement binds (assignment, for, with ... as, walrus)."""
    bound: set[int] = set()

    def add(target):
        if isinstance(target, cst.Name):
            bound.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                add(element.value)
        elif isinstance(target, cst.StarredElement):
            add(target.value)

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            add(node.target)

        def visit_AnnAssign(self, node):
            add(node.target)

        def visit_For(self, node):
            add(node.target)

        def visit_CompFor(self, node):
            add(node.target)

        def visit_AsName(self, node):
            add(node.name)

        def visit_NamedExpr(self, node):
            add(node.target)

    module.visit(Visitor())
    return bound


def claims(path: Path) -> list[tuple[str, int, str, bool, str]]:
    """(name, 1-based line, "read"/"bound", claimed value, "requires_grad"/"is_leaf") for every definite claim."""
    from gradguard.engine import Engine

    report = Engine(editor=True).check(path.read_text(encoding="utf-8"), str(path))
    facts = getattr(report, "facts", None)
    if facts is None or facts.locator is None:
        return []
    out = []
    for pb in facts.locator.blocks:
        module = pb.module
        if module is None:
            continue
        bound = _targets(module)
        pb.span(module)
        for node, pos in pb.parsed.positions.items():
            if type(node) is not cst.Name or id(node) not in facts.name_values:
                continue
            value = facts.name_values[id(node)]
            if not hasattr(value, "counter"):
                continue
            described = facts.describe(value, node.value, hint_block=pb, node=node)
            line = pos.start.line + pb.block.start_line  # 1-based
            when = "bound" if id(node) in bound else "read"
            for field in ("requires_grad", "is_leaf"):
                claim = getattr(described, field)
                if claim is not None:
                    out.append((node.value, line, when, claim, field))
    return out


def observe(paths: list[Path], jobs: int = 2) -> dict[Path, dict]:
    """What each program's frames held, from `jobs` worker processes (torch imported once per worker)."""
    with tempfile.TemporaryDirectory() as tmp:
        outs = {p: Path(tmp) / f"{i}" / "seen.json" for i, p in enumerate(paths)}
        for out in outs.values():
            out.parent.mkdir()
        chunks = [paths[i::jobs] for i in range(jobs)]
        workers = [subprocess.Popen([sys.executable, "-c", _RUNNER,
                                     json.dumps([[str(p.resolve()), str(outs[p])] for p in chunk])],
                                    cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env={**os.environ, "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"})
                   for chunk in chunks if chunk]
        for worker in workers:
            worker.wait()
        return {p: json.loads(out.read_text()) if out.exists() else {} for p, out in outs.items()}


def contradictions(path: Path, seen: dict) -> list[str]:
    found = []
    for name, line, when, claim, field in claims(path):
        states = seen.get(f"{when}:{line}", {}).get(name)
        if not states:
            continue
        index = 0 if field == "requires_grad" else 1
        if all(bool(s[index]) != claim for s in states):
            runtime = sorted({bool(s[index]) for s in states})
            found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}: `{name}` "
                         f"({when}) hover says {field}={claim}, torch had {field}={runtime[0] if len(runtime) == 1 else runtime}")
    return found


def default_files() -> list[Path]:
    real = ROOT / "tests" / "real_world"
    files = sorted(real.glob("bugs/*.py")) + sorted(real.glob("correct/*.py"))
    files += sorted((ROOT / "server" / "gradguard" / "rules" / "examples").glob("*/*.py"))
    return files


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or default_files()
    seen = observe(files)
    total = []
    for path in files:
        total.extend(contradictions(path, seen[path]))
    for line in total:
        print(line)
    print(f"{len(total)} contradictions in {len(files)} programs")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
