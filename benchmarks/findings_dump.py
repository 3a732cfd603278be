"""Every finding and note gradguard reports on the repository's example corpora and timm, as JSON, to compare two
trees (`python -c` a diff of two dumps, or `jq`): findings must stay identical across an analysis refactor.

    PYTHONPATH=<tree>/server python benchmarks/findings_dump.py out.json

Files: the rule examples, tests/real_world, tests/in_the_wild and timm from `.corpus/` (benchmarks/corpus.py
--fetch-only --packages timm), each checked alone by a batch Engine.
"""
from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

from gradguard.engine import Engine, decode_source

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ["server/gradguard/rules/examples/**/*.py", "tests/real_world/**/*.py", "tests/in_the_wild/**/*.py",
            ".corpus/timm-1.0.31/timm/**/*.py"]


def main() -> None:
    files = [f for pattern in PATTERNS for f in sorted(glob.glob(str(ROOT / pattern), recursive=True))]
    engine = Engine(editor=False)
    out = {}
    for f in files:
        report = engine.check(decode_source(Path(f).read_bytes()), f)
        out[str(Path(f).relative_to(ROOT))] = [(x.code, x.span.start_line, x.message) for x in report.findings] + [
            ("NOTE", n.span.start_line if n.span else 0, n.message) for n in report.parse_notes]
    Path(sys.argv[1]).write_text(json.dumps(out, indent=0))
    print(f"{len(files)} files")


if __name__ == "__main__":
    main()
