"""Do call summaries change anything? Each file is checked by an editor's Engine with plain-call summaries on and
off (facts/summaries.py, `SummaryStore.summarise_calls`); findings with fixes, parse notes and every name's hover
facts are compared (edit_fuzz's view). Prints the files that differ and how many calls were replayed.

    python benchmarks/summary_equivalence.py 'tests/real_world/bugs/*.py' '.corpus/timm-1.0.31/timm/**/*.py'
"""
from __future__ import annotations

import glob
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from edit_fuzz import view  # noqa: E402

from gradguard.config import Config  # noqa: E402
from gradguard.engine import Engine  # noqa: E402
from gradguard.facts.summaries import SummaryStore  # noqa: E402


def check(path: str, text: str, on: bool):
    SummaryStore.summarise_calls = on
    started = time.process_time()
    report = Engine().check(text, path, Config())
    return view(report), time.process_time() - started


def main(argv: list[str]) -> int:
    paths = sorted({p for pattern in argv for p in glob.glob(pattern, recursive=True) if p.endswith(".py")})
    differ, cpu_on, cpu_off = [], 0.0, 0.0
    hits = 0
    original_run = SummaryStore.replay_call

    def counting(self, scope, key):
        nonlocal hits
        hit = original_run(self, scope, key)
        hits += hit[0]
        return hit

    SummaryStore.replay_call = counting
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        off, t_off = check(path, text, False)
        on, t_on = check(path, text, True)
        cpu_on, cpu_off = cpu_on + t_on, cpu_off + t_off
        if on != off:
            differ.append(path)
            print("DIFFER", path, flush=True)
            for a, b in zip(off, on):
                if a != b:
                    print("   off:", str(a)[:300])
                    print("   on: ", str(b)[:300])
                    break
    SummaryStore.summarise_calls = True
    print(f"{len(paths)} files, {len(differ)} differ; {hits} calls replayed; CPU off {cpu_off:.1f} s, on {cpu_on:.1f} s")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
