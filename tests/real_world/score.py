"""Score gradguard on the real-world corpus (tests/real_world/): `make recall`.

Usage, from the repo root (a python with gradguard installed, and torch==2.13.0 for the fix results):

  python tests/real_world/score.py                    # the whole corpus
  python tests/real_world/score.py --batch a01        # some batches (repeatable, or a01,b01)
  python tests/real_world/score.py --form project     # some forms: reduction | project | notebook | long_script
  python tests/real_world/score.py --id leaf_so_1_01  # some ids
  python tests/real_world/score.py --no-fixes         # skip running fixed programs under torch (fast)
  python tests/real_world/score.py --json             # everything as one JSON object on stdout
  python tests/real_world/score.py --gradguard "gradguard"   # another command to run (default: this python -m gradguard)

What it measures (`gradguard check --format json`: once over every selected single file (reductions, long scripts),
once per project folder (the bug/, fixed/ or correct/ folder as a whole: its files import each other) and once per
notebook; the forms are described in verify.py):
  recall      a bug is named when ANY finding's span (first to last line of what it underlines, so a call written
              over two lines counts on both) holds one of the manifest's bug_lines; for a project, a finding in the
              file of one of its bug_locations holding that line; for a notebook, a finding whose `cell` is the
              location's cell holding that cell-relative line, or for a place in a module the notebook imports,
              a finding of the notebook's own run in that file on that line (per family and per shape, i.e. module
              level / function / method / nn.Module.forward; "code" also counts those where that finding's code is
              the manifest's expected_code)
  precision   any finding on a correct program (any file of a correct project) is a false positive (each is
              listed); findings on the fixed references and findings on bug programs off their bug places are
              listed for information
  fixes       for each named bug whose naming finding carries a fix: copy the bug program (a file, a notebook with
              the modules and package folders beside it, a whole project folder) to a temp folder, run
              `gradguard check --fix --unsafe-fixes` on it, run the result under torch (verify.py's worker):
              clean = exits without an exception (silent family: and no longer prints the manifest's error);
              trains = clean and every leaf that got a gradient in the hand fix still gets a non-None one
              (compared as a multiset of shape:dtype keys, see verify.py)
Recall, false positives and fixes are reported for each form apart ("form reduction: ..." lines), and it ends with
ONE summary line over everything selected:
  recall 0.xx (n/N) | false positives k on M correct | fixes clean a/b, train c/b
Exit status is 0 (this is a measurement, not a test).
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verify  # noqa: E402

REPO = verify.ROOT.parent.parent


def _covers(finding: dict, bug_lines) -> bool:
    """The finding underlines one of the bug lines (its start line, its end line or a line between)."""
    first = finding["location"]["row"]
    last = (finding.get("end_location") or finding["location"])["row"]
    return any(first <= line <= last for line in bug_lines)


def run_gradguard(cmd: list[str], paths: list[Path], extra: list[str] | None = None) -> dict[str, list[dict]]:
    """Findings per resolved file path."""
    if not paths:
        return {}
    proc = subprocess.run([*cmd, "check", "--format", "json", "--no-default-excludes", *(extra or []),
                           *map(str, paths)], cwd=REPO, capture_output=True, text=True)
    try:
        findings = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        raise SystemExit(f"gradguard did not print JSON (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                         f"{proc.stderr[-2000:]}")
    out: dict[str, list[dict]] = defaultdict(list)
    for f in findings:
        out[str((REPO / f["filename"]).resolve())].append(f)
    return out


def target_groups(targets: list[Path]) -> list[list[Path]]:
    """How gradguard is run over programs: the single .py files in one run, each project folder and each notebook
    in a run of its own (a project is analysed as a whole, and two projects' `models` packages must not meet)."""
    files = [t for t in targets if t.suffix == ".py" and not t.is_dir()]
    return ([files] if files else []) + [[t] for t in targets if t not in files]


def check_targets(cmd: list[str], targets: list[Path], jobs: int = 2) -> dict[str, list[dict]]:
    """gradguard's findings on the programs (target_groups), per resolved file path. A finding of a project's or a
    notebook's own run carries that program's path in "run" (a notebook's run also reports in the modules it
    imports, which may sit in another folder)."""
    found: dict[str, list[dict]] = defaultdict(list)
    groups = target_groups(targets)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for group, run in zip(groups, [pool.submit(run_gradguard, cmd, group) for group in groups]):
            alone = len(group) == 1 and group[0].suffix != ".py"
            for path, fs in run.result().items():
                found[path].extend(dict(f, run=str(group[0].resolve())) if alone else f for f in fs)
    return found


def apply_fixes(cmd: list[str], targets: list[Path], jobs: int = 2) -> None:
    """`gradguard check --fix --unsafe-fixes` on copies of the programs, grouped as target_groups."""
    def fix(group: list[Path]) -> None:
        subprocess.run([*cmd, "check", "--fix", "--unsafe-fixes", "--no-default-excludes", *map(str, group)],
                       cwd=REPO, capture_output=True, text=True)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(fix, target_groups(targets)))


def findings_in(target: Path, found: dict[str, list[dict]]) -> list[dict]:
    """Every finding of a program: its file's, or every finding of its own run (a project folder's files, a
    notebook and the modules it imports)."""
    if target.is_dir() or target.suffix == ".ipynb":
        run = str(target.resolve())
        return [f for _, fs in sorted(found.items()) for f in fs if f.get("run") == run]
    return found.get(str(target.resolve()), [])


def naming_findings(entry: dict, target: Path, found: dict[str, list[dict]]) -> list[dict]:
    """The findings that name the bug: in the file (and cell) of one of its places, covering its line. A project's
    files are relative to its folder; a notebook's place is a cell of it, or a module beside it (relative to the
    notebook's folder), as that notebook's run reported it."""
    naming = []
    form = verify.form_of(entry)
    for file, cell, line in verify.bug_places(entry):
        if form == "project":
            fs = found.get(str((target / file).resolve()), [])
        elif form == "notebook" and cell is None:
            fs = [f for f in found.get(str((target.parent / file).resolve()), [])
                  if f.get("run") == str(target.resolve())]
        else:
            fs = [f for f in found.get(str(target.resolve()), []) if cell is None or f.get("cell") == cell]
        naming += [f for f in fs if _covers(f, [line]) and f not in naming]
    return naming


def fmt_finding(f: dict) -> str:
    cell = f"cell {f['cell']}:" if f.get("cell") is not None else ""
    return f"{Path(f['filename']).name}:{cell}{f['location']['row']}: {f['code']} {f['message'][:140]}"


def _rates(programs: list[dict], correct_fps: list[int], fix_rows: list[dict], fixes: bool) -> dict:
    named = sum(p["named"] for p in programs)
    return {
        "recall": named / len(programs) if programs else 0.0, "named": named, "bugs": len(programs),
        "false_positives": sum(correct_fps), "fp_programs": sum(1 for n in correct_fps if n),
        "correct": len(correct_fps), "fixes": len(fix_rows), "fixes_clean": sum(r["clean"] for r in fix_rows),
        "fixes_train": sum(r["trains"] for r in fix_rows), "fixes_run": fixes,
    }


def score(entries: list[dict], cmd: list[str], fixes: bool = True) -> dict:
    bugs = [e for e in entries if e.get("kind") == "bug"]
    correct = [e for e in entries if e.get("kind") == "correct"]
    paths = [p for e in entries for p in verify.program_paths(e) if p.exists()]
    found = check_targets(cmd, paths)

    programs = []
    for e in bugs:
        fs = findings_in(verify.bug_path(e), found)
        naming = naming_findings(e, verify.bug_path(e), found)
        programs.append({
            "id": e["id"], "batch": e["batch"], "form": verify.form_of(e), "family": e["family"],
            "shape": e["shape"], "expected_code": e.get("expected_code", ""),
            "named": bool(naming),
            "code_matched": any(f["code"] == e.get("expected_code") for f in naming),
            "codes": sorted({f["code"] for f in naming}),
            "has_fix": any(f.get("fix") for f in naming),
            "off_line_findings": [fmt_finding(f) for f in fs if f not in naming],
            "fixed_findings": [fmt_finding(f) for f in findings_in(verify.fixed_path(e), found)],
        })
    fp_of = {e["id"]: [fmt_finding(f) for f in findings_in(verify.correct_path(e), found)] for e in correct}
    false_positives = [f for e in correct for f in fp_of[e["id"]]]

    families: dict[str, dict] = {}
    for fam in sorted({p["family"] for p in programs}):
        ps = [p for p in programs if p["family"] == fam]
        named = sum(p["named"] for p in ps)
        families[fam] = {"bugs": len(ps), "named": named, "code_matched": sum(p["code_matched"] for p in ps),
                         "recall": named / len(ps)}

    shapes: dict[str, dict] = {}
    for shape in sorted({p["shape"] for p in programs}):
        ps = [p for p in programs if p["shape"] == shape]
        named_s = sum(p["named"] for p in ps)
        shapes[shape] = {"bugs": len(ps), "named": named_s, "recall": named_s / len(ps)}

    fix_rows = []
    if fixes:
        fix_rows = score_fixes([e for e, p in zip(bugs, programs) if p["named"] and p["has_fix"]], cmd)
    forms = {}
    for form in verify.FORMS:
        ps = [p for p in programs if p["form"] == form]
        cs = [len(fp_of[e["id"]]) for e in correct if verify.form_of(e) == form]
        if ps or cs:
            forms[form] = _rates(ps, cs, [r for r in fix_rows if r["form"] == form], fixes)
    summary = _rates(programs, [len(fp_of[e["id"]]) for e in correct], fix_rows, fixes)
    return {"summary": summary, "forms": forms, "families": families, "shapes": shapes, "programs": programs,
            "false_positive_findings": false_positives, "fixes": fix_rows}


def copy_program(entry: dict, src: Path, dst_root: Path) -> Path:
    """A copy of one of the entry's programs under dst_root (its own folder per entry), what --fix may rewrite:
    a file, a whole project folder, or a notebook with the modules and package folders beside it."""
    form = verify.form_of(entry)
    if form == "project":
        dst = dst_root / entry["id"]
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        return dst
    folder = dst_root / entry["id"]
    folder.mkdir(parents=True, exist_ok=True)
    dst = folder / src.name
    shutil.copyfile(src, dst)
    if form == "notebook":  # the modules beside it: every .py file and package folder there (correct/ is not one)
        for item in src.parent.iterdir():
            if item.is_file() and item.suffix == ".py":
                shutil.copyfile(item, folder / item.name)
            elif item.is_dir() and item.name not in ("correct", "__pycache__"):
                shutil.copytree(item, folder / item.name, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def program_text(target: Path) -> str:
    """The program's text, every file of a folder in order (to tell whether a fix changed anything)."""
    if target.is_dir():
        return "\n".join(f"# {p.relative_to(target)}\n{p.read_text(encoding='utf-8')}"
                         for p in verify.project_files(target))
    return target.read_text(encoding="utf-8")


def score_fixes(entries: list[dict], cmd: list[str]) -> list[dict]:
    if not entries:
        return []
    with tempfile.TemporaryDirectory(prefix="gg-recall-") as tmp:
        tmpdir = Path(tmp)
        copies = [copy_program(e, verify.bug_path(e), tmpdir) for e in entries]
        apply_fixes(cmd, copies)
        refs = [verify.fixed_path(e) for e in entries]
        results = verify.run_programs([verify.program_of(e, p) for e, p in zip(entries, copies)]
                                      + [verify.program_of(e, p) for e, p in zip(entries, refs)])
        rows = []
        for e, copy, ref in zip(entries, copies, refs):
            r, rr = results[str(copy)], results[str(ref)]
            changed = program_text(copy) != program_text(verify.bug_path(e))
            clean = r.clean and not (e["family"] == "silent" and e["error"] in r.stdout)
            lost = Counter(rr.trained) - Counter(r.trained)
            rows.append({
                "id": e["id"], "form": verify.form_of(e), "family": e["family"], "changed": changed,
                "clean": clean, "trains": clean and rr.clean and not lost,
                "error": None if r.clean else f"{r.error_type}: {r.first_line}"[:200],
                "lost_gradients": sorted(lost.elements()), "reference_clean": rr.clean,
            })
    return rows


def summary_line(s: dict) -> str:
    fixes = (f"fixes clean {s['fixes_clean']}/{s['fixes']}, train {s['fixes_train']}/{s['fixes']}"
             if s["fixes_run"] else "fixes not run")
    return (f"recall {s['recall']:.2f} ({s['named']}/{s['bugs']}) | false positives {s['false_positives']} "
            f"on {s['correct']} correct | {fixes}")


def print_report(res: dict) -> None:
    print(f"{'family':<24}{'bugs':>6}{'named':>7}{'recall':>8}{'code':>6}")
    for fam, f in res["families"].items():
        print(f"{fam:<24}{f['bugs']:>6}{f['named']:>7}{f['recall']:>8.2f}{f['code_matched']:>6}")
    print(f"\n{'where the bug lives':<24}{'bugs':>6}{'named':>7}{'recall':>8}")
    for shape, f in res["shapes"].items():
        print(f"{shape:<24}{f['bugs']:>6}{f['named']:>7}{f['recall']:>8.2f}")
    missed = [p for p in res["programs"] if not p["named"]]
    if missed:
        print(f"\nmissed ({len(missed)}):")
        for p in missed:
            other = f"  (off-line: {'; '.join(p['off_line_findings'])})" if p["off_line_findings"] else ""
            print(f"  {p['id']:<40} {p['form']:<12} {p['family']:<22} {p['shape']:<13} "
                  f"want {p['expected_code'] or '-'}{other}")
    wrong_code = [p for p in res["programs"] if p["named"] and not p["code_matched"] and p["expected_code"]]
    if wrong_code:
        print(f"\nnamed with another code ({len(wrong_code)}):")
        for p in wrong_code:
            print(f"  {p['id']:<40} want {p['expected_code']} got {','.join(p['codes'])}")
    print(f"\nfalse positives on correct programs ({len(res['false_positive_findings'])}):")
    for f in res["false_positive_findings"]:
        print(f"  {f}")
    on_fixed = [f for p in res["programs"] for f in p["fixed_findings"]]
    if on_fixed:
        print(f"\nfindings on .fixed.py references ({len(on_fixed)}):")
        for f in on_fixed:
            print(f"  {f}")
    if res["fixes"]:
        bad = [r for r in res["fixes"] if not r["trains"]]
        print(f"\nfixes: {len(res['fixes'])} applied; not clean or not training ({len(bad)}):")
        for r in bad:
            why = r["error"] or (f"lost gradients {r['lost_gradients']}" if r["lost_gradients"] else "")
            if not r["changed"]:
                why = "fix changed nothing; " + why
            if not r["reference_clean"]:
                why += " (reference .fixed.py not clean)"
            print(f"  {r['id']:<40} clean={r['clean']!s:<5} {why}")
    print()
    for form, rates in res["forms"].items():
        print(f"form {form}: {summary_line(rates)}")
    print(summary_line(res["summary"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", action="append")
    ap.add_argument("--id", action="append")
    ap.add_argument("--form", action="append", help=f"form(s) {'|'.join(verify.FORMS)}")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-fixes", action="store_true")
    ap.add_argument("--gradguard", default=None, help="command prefix to run gradguard")
    args = ap.parse_args(argv)
    cmd = shlex.split(args.gradguard) if args.gradguard else [sys.executable, "-m", "gradguard"]
    entries = verify.select(verify.load_manifests(), verify._split(args.batch), verify._split(args.id),
                            verify._split(args.form))
    entries = [e for e in entries if e.get("kind") in verify.KINDS and "id" in e]
    res = score(entries, cmd, fixes=not args.no_fixes)
    if args.json:
        res["summary_line"] = summary_line(res["summary"])
        print(json.dumps(res, indent=1, ensure_ascii=False))
    else:
        print_report(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
