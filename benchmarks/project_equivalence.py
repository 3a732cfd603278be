"""Findings and CPU time of a folder checked file by file and as a project, side by side in one process.

    .venv/bin/python benchmarks/project_equivalence.py .corpus/timm-1.0.31/timm [--rounds 2]

Both batch engines check the same texts in turn, `rounds` times each (`Engine(editor=False, project=False)`, then
`project=True`). Prints each run's CPU seconds, how many files linked project definitions, the number of findings
(a file's own and those placed in other files), and every file whose findings differ between the two modes.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))


def main() -> None:
    from gradguard.engine import Engine, decode_source

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    texts = [(str(p), decode_source(p.read_bytes())) for p in sorted(Path(args.folder).rglob("*.py"))]
    results = {}
    for _ in range(args.rounds):
        for project in (False, True):
            engine = Engine(editor=False, project=project)
            start, found, linked = time.process_time(), {}, 0
            for path, text in texts:
                report = engine.check(text, path)
                found.setdefault(path, []).extend((f.code, f.span.start_line, f.message) for f in report.findings)
                linked += report.program is not None
                for other, f in report.elsewhere:
                    found.setdefault(other, []).append((f.code, f.span.start_line, f.message))
            results[project] = found
            print(f"{'as a project' if project else 'file by file':>13}: {time.process_time() - start:7.2f} CPU s, "
                  f"{linked} files linked, {sum(len(v) for v in found.values())} findings", flush=True)
    alone, linked = results[False], results[True]
    for path in sorted(set(alone) | set(linked)):
        if sorted(set(alone.get(path, []))) != sorted(set(linked.get(path, []))):
            print("differs:", path, alone.get(path), linked.get(path))


if __name__ == "__main__":
    main()
