"""Does gradguard's fix train like the hand-written fix? `make fixcheck`.

Usage, from the repo root (a python with gradguard and torch==2.13.0, e.g. .venv/bin/python):

  python tests/real_world/fixcheck.py                    # every detected bug of the corpus
  python tests/real_world/fixcheck.py --batch b05        # some batches (repeatable, or b05,b06)
  python tests/real_world/fixcheck.py --form project     # some forms: reduction | project | notebook | long_script
  python tests/real_world/fixcheck.py --id bt_gh_cnslab_4_01   # some ids
  python tests/real_world/fixcheck.py --rule GG401       # only bugs named by these rules
  python tests/real_world/fixcheck.py --json             # rows, programs and the summary as one JSON object
  python tests/real_world/fixcheck.py --timeout 60 --jobs 2

For every bug program that gradguard detects (a finding's span holds one of the manifest's bug places, as in
score.py: a file's bug_lines, a project's or notebook's bug_locations; its rule is the manifest's expected_code when
that finding is among them, else the first code). A project is copied, fixed and run as a whole folder (its entry
with the folder as cwd), a notebook with its modules (cells run in order); the forms are described in verify.py:
  fix offered   the naming finding carries a fix;
  runs clean    a temp copy fixed by `gradguard check --fix --unsafe-fixes` runs without an exception (silent family:
                and no longer prints the manifest's error);
  trains same   the fixed copy and the hand fix bugs/<id>.fixed.py, run under the same seeds (torch.manual_seed(0),
                random.seed(0), numpy.random.seed(0), PYTHONHASHSEED=0 so that sets of strings iterate alike), agree on
                  - the value of every tensor backward() is called on, in order (Tensor.backward and
                    torch.autograd.backward are wrapped; one call is recorded once), and
                  - every leaf's gradient after the first backward (matched by shape, as a multiset),
                within rtol 1e-4 (atol 1e-6).
Where gradguard's fix legitimately differs from the hand fix, the manifest row says why and what it promises instead:
  fix_differs = "why (one sentence)"
  fix_promise = "detach"           every backward value agrees, in order; after the first backward every gradient
                                   the fix computes matches the hand fix's, which may fill more leaves (those behind
                                   the fix's detach(): the hand fix lets the step's own loss fill another model's
                                   .grad, then zeroes or ignores it)
              | "retain"           every backward value agrees, in order; after the first backward every gradient
                                   of the hand fix is among the fix's, which may fill more (the fix keeps a graph
                                   with retain_graph=True where the hand fix built it under no_grad)
              | "first-backward"   the first backward's value agrees, the gradients after it as for "detach", and
                                   both programs call backward() equally often (later values see other weights or
                                   other draws: the hand fix moved a step, or drew new noise, where the fix
                                   recomputes)
              | "as-written"       the fix keeps the program's forward as written where the hand fix changed it (it
                                   called a layer first, or dropped a scaling): every value the bug program itself
                                   called backward() on, up to the one that raised, agrees in order with the fix's,
                                   and the fix trains every leaf the hand fix trains (as "runs")
              | "runs"             runs clean, and every leaf that got a gradient in the hand fix gets one (verify.py's
                                   "trains" multiset): the hand fix reorders the updates (G before D) or sums two
                                   losses into one backward, so no value is shared
Each program runs in a worker subprocess (2 in parallel by default); a program gets --timeout seconds (SIGALRM in
the worker, and the worker is killed when no result arrives in time), so hostile code cannot hang the check.
Prints one row per rule and ONE summary line at the end. Exit status 0 (a measurement); 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import score  # noqa: E402
import verify  # noqa: E402

REPO = verify.ROOT.parent.parent
RTOL, ATOL = 1e-4, 1e-6
PROMISES = ("same", "detach", "retain", "first-backward", "as-written", "runs")
MAX_CALLS = 2000  # backward calls recorded per program (the corpus programs make a few dozen)
MAX_VALUES = 4096  # elements recorded per tensor; the rest are summed into one more number


@dataclass
class Trace:
    """What one program did under torch."""

    path: str
    error_type: str | None = None
    error: str | None = None
    stdout: str = ""
    seconds: float = 0.0
    backward_values: list = field(default_factory=list)  # one [shape, values] per backward() call, in order
    backward_calls: int = 0
    first_grads: list = field(default_factory=list)  # [shape, values] per leaf with a gradient after the 1st call
    trained: list = field(default_factory=list)  # "shape:dtype" of every leaf that ever got a gradient

    @property
    def clean(self) -> bool:
        return self.error_type is None

    @property
    def first_line(self) -> str:
        text = (self.error or "").strip()
        return text.splitlines()[0] if text else ""


# ---------------------------------------------------------------- comparing two traces
def _close(a, b) -> bool:
    """Two recorded tensors [shape, values] agree within RTOL/ATOL (NaN equals NaN: both programs diverged alike)."""
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    for x, y in zip(a[1], b[1]):
        if math.isnan(x) or math.isnan(y):
            if not (math.isnan(x) and math.isnan(y)):
                return False
        elif x != y and not abs(x - y) <= ATOL + RTOL * abs(y):
            return False
    return True


def _grads_match(ours: list, ref: list, subset: bool = False) -> str | None:
    """The gradients after the first backward agree as a multiset (greedy matching within each shape); with
    `subset`, the hand fix may have more."""
    if len(ours) > len(ref) or (len(ours) != len(ref) and not subset):
        return f"{len(ours)} leaves got a gradient in the first backward, hand fix {len(ref)}"
    left = list(ref)
    for g in ours:
        hit = next((i for i, r in enumerate(left) if _close(g, r)), None)
        if hit is None:
            return f"a gradient of shape {tuple(g[0])} after the first backward differs from the hand fix"
        left.pop(hit)
    return None


def compare(ours: Trace, ref: Trace, promise: str = "same", original: Trace | None = None) -> str | None:
    """Why `ours` does not train like `ref` under `promise` (None: it does). `original` is the bug program's own
    trace, which the "as-written" promise compares with up to its crash."""
    if promise == "as-written":
        if original is None or not original.backward_values:
            return "the bug program called no backward() to compare with"
        for i, (a, b) in enumerate(zip(ours.backward_values, original.backward_values)):
            if not _close(a, b):
                got = a[1][0] if a[1] else None
                want = b[1][0] if b[1] else None
                return f"backward #{i + 1} on a different value than the program as written ({got!r} vs {want!r})"
        if len(ours.backward_values) < len(original.backward_values):
            return f"backward() called {len(ours.backward_values)} times, the program as written reached " \
                   f"{len(original.backward_values)}"
        promise = "runs"
    if promise == "runs":
        lost = Counter(ref.trained) - Counter(ours.trained)
        return f"lost gradients {sorted(lost.elements())}" if lost else None
    if ours.backward_calls != ref.backward_calls:
        return f"backward() called {ours.backward_calls} times, hand fix {ref.backward_calls}"
    if promise == "retain":
        first = _grads_match(ref.first_grads, ours.first_grads, subset=True)
        if first:
            return "the hand fix's gradients after the first backward are not all among the fix's"
        promise = "same-values"
    values = ours.backward_values if promise in ("same", "detach", "same-values") else ours.backward_values[:1]
    for i, (a, b) in enumerate(zip(values, ref.backward_values)):
        if not _close(a, b):
            got = a[1][0] if a[1] else None
            want = b[1][0] if b[1] else None
            return f"backward #{i + 1} on a different value ({got!r} vs hand fix {want!r})"
    if promise == "same-values":
        return None
    return _grads_match(ours.first_grads, ref.first_grads, subset=promise != "same")


# ---------------------------------------------------------------- running programs
def _worker(job_file: str, out_file: str) -> None:
    """Run each program of the job in this process (torch imported once), appending one Trace per line."""
    import contextlib
    import io
    import random
    import signal
    import warnings

    import torch

    try:
        import numpy
    except ImportError:  # pragma: no cover
        numpy = None

    class ProgramTimeout(BaseException):
        pass

    state: dict = {}

    def snapshot(t):
        flat = t.detach().to("cpu", torch.float64).flatten()
        values = flat[:MAX_VALUES].tolist()
        if flat.numel() > MAX_VALUES:
            values.append(float(flat[MAX_VALUES:].sum()))
        return [list(t.shape), values]

    def record(tensors, inputs):
        trace = state["trace"]
        trace.backward_calls += 1
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or [])
        if len(trace.backward_values) < MAX_CALLS:
            trace.backward_values.append(
                [list(roots[0].shape) if len(roots) == 1 else [len(roots)],
                 [v for r in roots if isinstance(r, torch.Tensor) for v in snapshot(r)[1]]])
        return roots, verify_leaves(roots, inputs)

    def verify_leaves(roots, inputs):
        if inputs is not None:
            inputs = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
            return [t for t in inputs if isinstance(t, torch.Tensor) and t.is_leaf]
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

    orig_autograd_backward = torch.autograd.backward
    orig_tensor_backward = torch.Tensor.backward

    def around(tensors, inputs, call):
        if state.get("inside"):  # Tensor.backward calls torch.autograd.backward: record the call once
            return call()
        try:
            _, leaves = record(tensors, inputs)
        except Exception:  # the bookkeeping never changes what the program does
            leaves = []
        state["inside"] = True
        try:
            result = call()
        finally:
            state["inside"] = False
        trace = state["trace"]
        first = trace.backward_calls == 1
        for t in leaves:
            if t.grad is not None:
                state["trained"][id(t)] = t
                if first:
                    trace.first_grads.append(snapshot(t.grad))
        return result

    def autograd_backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
                          inputs=None):
        return around(tensors, inputs, lambda: orig_autograd_backward(
            tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs=inputs))

    def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        return around(self, inputs, lambda: orig_tensor_backward(self, gradient, retain_graph, create_graph,
                                                                  inputs=inputs))

    torch.autograd.backward = autograd_backward
    torch.Tensor.backward = tensor_backward

    def on_alarm(signum, frame):
        raise ProgramTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    torch.set_num_threads(1)  # tiny programs; one thread keeps the two workers off each other's core
    job = json.loads(Path(job_file).read_text())
    timeout = int(job["timeout"])
    saved_argv, saved_cwd = list(sys.argv), os.getcwd()
    with open(out_file, "a", encoding="utf-8") as out:
        for item in job["programs"]:
            program = verify.Program(**item)
            path = program.key
            trace = Trace(path)
            state.update(trace=trace, trained={}, inside=False)
            torch.set_grad_enabled(True)
            torch.autograd.set_detect_anomaly(False)
            torch.set_default_dtype(torch.float32)
            torch.manual_seed(0)
            random.seed(0)
            if numpy is not None:
                numpy.random.seed(0)
            buf = io.StringIO()
            ns = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
            sys.argv = [program.entry or path]
            start = time.perf_counter()
            signal.alarm(timeout)
            try:
                with warnings.catch_warnings(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                    warnings.simplefilter("ignore")
                    verify.exec_program(program, ns)
            except ProgramTimeout:
                trace.error_type, trace.error = "Timeout", f"no result after {timeout} s"
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    trace.error_type, trace.error = "SystemExit", f"exit status {exc.code}"
            except BaseException as exc:  # the programs are expected to raise torch's errors
                trace.error_type, trace.error = type(exc).__name__, str(exc)
            finally:
                signal.alarm(0)
                sys.argv = saved_argv
                os.chdir(saved_cwd)
            trace.seconds = round(time.perf_counter() - start, 3)
            trace.stdout = buf.getvalue()[-4000:]
            trace.trained = sorted(f"{tuple(t.shape)}:{str(t.dtype).replace('torch.', '')}"
                                   for t in state["trained"].values())
            out.write(json.dumps(asdict(trace)) + "\n")
            out.flush()
            ns.clear()
            state["trained"].clear()


def _run_queue(paths: list, timeout: int, python: str, results: dict, lock: threading.Lock) -> None:
    """One worker at a time over `paths`; a worker that crashes or stops answering is killed, its program is
    recorded as such, and a new worker goes on with the rest."""
    todo = list(paths)
    while todo:
        with tempfile.TemporaryDirectory(prefix="gg-fixcheck-") as tmp:
            job, out = Path(tmp) / "job.json", Path(tmp) / "traces.jsonl"
            job.write_text(json.dumps({"programs": [asdict(p) for p in todo], "timeout": timeout}))
            out.touch()
            proc = subprocess.Popen([python, str(Path(__file__).resolve()), "--worker", str(job), str(out)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True, cwd=tmp, start_new_session=True,
                                    env={**os.environ, "PYTHONHASHSEED": "0"})  # set order of strings, as seeds
            done, deadline, killed = 0, time.monotonic() + timeout + 30, False  # +30: torch's import
            while True:
                lines = [ln for ln in out.read_text(encoding="utf-8").splitlines() if ln.strip()]
                if len(lines) > done:
                    done, deadline = len(lines), time.monotonic() + timeout + 10
                if proc.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    os.killpg(proc.pid, 9)  # the whole session: a program's own children too
                    proc.wait()
                    killed = True
                    break
                time.sleep(0.05)
            stderr = proc.stderr.read() if proc.stderr else ""
            lines = [ln for ln in out.read_text(encoding="utf-8").splitlines() if ln.strip()]
        with lock:
            for line in lines:
                t = Trace(**json.loads(line))
                results[t.path] = t
        todo = todo[len(lines):]
        if todo:
            why = (f"no result after {timeout} s (worker killed)" if killed
                   else f"worker exited {proc.returncode}: {stderr.strip()[-300:]}")
            with lock:
                results[todo[0].key] = Trace(todo[0].key, "Timeout" if killed else "WorkerCrash", why)
            todo = todo[1:]


def run_traced(paths: list, timeout: int = 30, jobs: int = 2, python: str | None = None) -> dict[str, Trace]:
    """Run each program (a file path, a .ipynb, or a verify.Program) under torch in `jobs` parallel worker
    subprocesses, recording what backward() saw. Keys are str(path) (a project's folder)."""
    paths = [verify.as_program(p) for p in paths]
    results: dict[str, Trace] = {}
    lock = threading.Lock()
    shares = [paths[i::jobs] for i in range(max(1, jobs))]
    threads = [threading.Thread(target=_run_queue, args=(s, timeout, python or sys.executable, results, lock))
               for s in shares if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# ---------------------------------------------------------------- the check
def manifest_problems(entries: list[dict]) -> list[str]:
    """The fixcheck fields of the manifests: a promise needs a reason, and is one of PROMISES."""
    problems = []
    for e in entries:
        promise, why = e.get("fix_promise"), e.get("fix_differs")
        where = f"{e.get('manifest')}:{e.get('id')}"
        if promise is not None and promise not in PROMISES:
            problems.append(f"{where}: fix_promise {promise!r} not in {PROMISES}")
        if (promise not in (None, "same")) != bool(str(why or "").strip()):
            problems.append(f"{where}: fix_differs (why) and fix_promise (what is checked instead) go together")
    return problems


def rule_of(codes: list[str], expected: str) -> str:
    return expected if expected in codes else codes[0]


def fixcheck(entries: list[dict], cmd: list[str], timeout: int = 30, jobs: int = 2,
             rules: list[str] | None = None) -> dict:
    bugs = [e for e in entries if e.get("kind") == "bug"]
    found = score.check_targets(cmd, [verify.bug_path(e) for e in bugs])
    programs = []
    for e in bugs:
        naming = score.naming_findings(e, verify.bug_path(e), found)
        if not naming:
            continue
        rule = rule_of([f["code"] for f in naming], e.get("expected_code", ""))
        if rules and rule not in rules:
            continue
        programs.append({"id": e["id"], "rule": rule, "family": e["family"], "form": verify.form_of(e),
                         "fix": any(f.get("fix") for f in naming),
                         "promise": e.get("fix_promise", "same"), "entry": e})
    with tempfile.TemporaryDirectory(prefix="gg-fixcheck-") as tmp:
        copies = {}
        for p in programs:
            if p["fix"]:
                copies[p["id"]] = score.copy_program(p["entry"], verify.bug_path(p["entry"]), Path(tmp))
        if copies:
            score.apply_fixes(cmd, list(copies.values()))
        runs = {p["id"]: (lambda path, e=p["entry"]: verify.program_of(e, path)) for p in programs}
        refs = {p["id"]: verify.fixed_path(p["entry"]) for p in programs if p["id"] in copies}
        originals = {p["id"]: verify.bug_path(p["entry"]) for p in programs
                     if p["id"] in copies and p["promise"] == "as-written"}
        traces = run_traced([runs[i](path) for group in (copies, refs, originals) for i, path in group.items()],
                            timeout=timeout, jobs=jobs)
        for p in programs:
            e = p.pop("entry")
            p.update(clean=False, trains=False, why="no fix offered" if not p["fix"] else "")
            if not p["fix"]:
                continue
            ours, ref = traces[str(copies[p["id"]])], traces[str(refs[p["id"]])]
            silent_left = e["family"] == "silent" and e["error"] in ours.stdout
            p["clean"] = ours.clean and not silent_left
            if not ref.clean:
                p["why"] = f"hand fix raised {ref.error_type}: {ref.first_line}"[:200]
            elif not ours.clean:
                p["why"] = f"{ours.error_type}: {ours.first_line}"[:200]
            elif silent_left:
                p["why"] = f"still prints {e['error']!r}"
            else:
                original = traces.get(str(originals[p["id"]])) if p["id"] in originals else None
                p["why"] = compare(ours, ref, p["promise"], original) or ""
                p["trains"] = not p["why"]
    rows = {}
    for p in programs:
        r = rows.setdefault(p["rule"], Counter())
        r["detected"] += 1
        r["fix"] += p["fix"]
        r["clean"] += p["clean"]
        r["trains"] += p["trains"]
    total = Counter()
    for r in rows.values():
        total.update(r)
    return {"rows": {k: dict(v) for k, v in sorted(rows.items())}, "total": dict(total), "programs": programs}


def summary_line(total: dict) -> str:
    n = total.get("detected", 0)
    pct = (lambda k: f"{100 * total.get(k, 0) / n:.0f}%" if n else "-")
    return (f"fixcheck: {n} detected | fix offered {total.get('fix', 0)} ({pct('fix')}) | runs clean "
            f"{total.get('clean', 0)} ({pct('clean')}) | trains the same {total.get('trains', 0)} ({pct('trains')})")


def print_report(res: dict) -> None:
    print(f"{'rule':<8}{'detected':>9}{'fix offered':>13}{'runs clean':>12}{'trains same':>13}")
    for code, r in res["rows"].items():
        print(f"{code:<8}{r['detected']:>9}{r['fix']:>13}{r['clean']:>12}{r['trains']:>13}")
    bad = [p for p in res["programs"] if p["fix"] and not p["trains"]]
    if bad:
        print(f"\nfixed but not training the same ({len(bad)}):")
        for p in bad:
            print(f"  {p['rule']} {p['id']:<44} {p['why']}")
    print()
    print(summary_line(res["total"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", action="append")
    ap.add_argument("--id", action="append")
    ap.add_argument("--form", action="append", help=f"form(s) {'|'.join(verify.FORMS)}")
    ap.add_argument("--rule", action="append", help="only bugs named by these codes (repeatable, or GG401,GG404)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--timeout", type=int, default=30, help="seconds per program")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--gradguard", default=None, help="command prefix to run gradguard")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0
    all_entries = verify.load_manifests()
    problems = manifest_problems(all_entries)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    cmd = shlex.split(args.gradguard) if args.gradguard else [sys.executable, "-m", "gradguard"]
    entries = verify.select(all_entries, verify._split(args.batch), verify._split(args.id),
                            verify._split(args.form))
    entries = [e for e in entries if e.get("kind") in verify.KINDS and "id" in e]
    res = fixcheck(entries, cmd, timeout=args.timeout, jobs=args.jobs, rules=verify._split(args.rule))
    if args.json:
        res["summary_line"] = summary_line(res["total"])
        print(json.dumps(res, indent=1, ensure_ascii=False))
    else:
        print_report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
