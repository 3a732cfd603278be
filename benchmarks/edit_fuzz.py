"""Random edits, each checked twice: by an editor's Engine that saw every earlier version of the file (its caches of
blocks, block runs and the module-level run), and by a new Engine. Prints each step where the two disagree on
findings (fixes included), parse notes, or what hover says of any tensor name.

    python benchmarks/edit_fuzz.py --steps 6 'examples/*.py' 'tests/real_world/bugs/*.py' ...

The gradguard imported is the one on PYTHONPATH (point it at a copy's server/ to check that tree). Edits: a digit
or a statement inside a def, an in-place write after an assignment in a def, a digit in module-level code, a new
def named after a function the file calls but does not define, a new uncalled def, a def renamed or deleted.
"""
from __future__ import annotations

import argparse
import glob
import random
import re
import sys

import libcst as cst

from gradguard.config import Config
from gradguard.engine import Engine

DIGIT = re.compile(r"\d")


def view(report) -> list:
    out = [("finding", f.code, f.span, f.message, repr(f.related), repr(f.fix)) for f in report.findings]
    out += [("note", n.span, n.message) for n in report.parse_notes]
    facts = report.facts
    if facts is not None and facts.locator is not None:
        for pb in facts.locator.blocks:
            if pb.module is None:
                continue
            pb.span(pb.module)
            for node, pos in pb.parsed.positions.items():
                if type(node) is cst.Name and id(node) in facts.name_values:
                    described = facts.describe(facts.name_values[id(node)], node.value, hint_block=pb, node=node)
                    out.append(("hover", pb.block.start_line + pos.start.line, pos.start.column, repr(described)))
    return out


def edit(text: str, rng: random.Random):
    """(kind, edited text), or None when the drawn edit does not apply to this text."""
    lines = text.split("\n")
    defs = [i for i, line in enumerate(lines) if re.match(r"\s*def \w+\(", line)]
    tops = [i for i, line in enumerate(lines) if re.match(r"def \w+\(", line)]
    code = [i for i, line in enumerate(lines) if line and not line[0].isspace() and DIGIT.search(line)
            and not line.startswith(("def ", "class ", "@", "#", "import", "from"))]
    kinds = (["digit_in_def", "stmt_in_def", "write_in_def"] if defs else []) + \
        (["new_def_named", "rename_def", "delete_def"] if tops else []) + (["digit_in_code"] if code else []) + \
        ["new_def_uncalled"]
    kind = rng.choice(kinds)
    if kind in ("digit_in_def", "stmt_in_def", "write_in_def"):
        d = rng.choice(defs)
        indent = len(lines[d]) - len(lines[d].lstrip())
        body = [j for j in range(d + 1, min(len(lines), d + 40))
                if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent]
        if not body:
            return None
        if kind == "digit_in_def":
            j = rng.choice(body)
            found = list(DIGIT.finditer(lines[j]))
            if not found:
                return None
            m = rng.choice(found)
            lines[j] = lines[j][:m.start()] + str(rng.randrange(10)) + lines[j][m.end():]
        else:
            b = body[0]
            if lines[b].rstrip().endswith((":", "(", ",", "[", "{", "\\")) or lines[d].rstrip()[-1:] != ":":
                return None
            pad = lines[b][:len(lines[b]) - len(lines[b].lstrip())]
            names = re.findall(r"\b([a-z_]\w*)\s*=", "\n".join(lines[b:b + 10]))
            if kind == "stmt_in_def" or not names:
                lines.insert(b, pad + "_edit_fuzz = 1")
            else:
                lines.insert(b + 1, pad + f"{rng.choice(names)}.mul_(2)")
    elif kind == "digit_in_code":
        j = rng.choice(code)
        m = rng.choice(list(DIGIT.finditer(lines[j])))
        lines[j] = lines[j][:m.start()] + str(rng.randrange(10)) + lines[j][m.end():]
    elif kind == "new_def_named":
        called = set(re.findall(r"\b([a-z_]\w*)\(", text)) - set(re.findall(r"def (\w+)", text))
        if not called:
            return None
        name = rng.choice(sorted(called))
        lines += ["", "", f"def {name}(*args, **kwargs):", "    for a in args:", "        a.add_(1)",
                  "    return args[0] if args else None", ""]
    elif kind == "rename_def":
        d = rng.choice(tops)
        lines[d] = re.sub(r"def (\w+)\(", r"def \1_renamed(", lines[d], count=1)
    elif kind == "delete_def":
        d = rng.choice(tops)
        end = d + 1
        while end < len(lines) and (not lines[end] or lines[end][0].isspace()):
            end += 1
        while d > 0 and lines[d - 1].startswith("@"):
            d -= 1
        del lines[d:end]
    else:
        lines += ["", "", "def _edit_fuzz_helper(t):", "    t.add_(1)", "    return t", ""]
    return kind, "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6, help="edits per file, one after the other")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("patterns", nargs="+")
    args = parser.parse_args(argv)
    files = [f for pattern in args.patterns for f in sorted(glob.glob(pattern, recursive=True))]
    rng = random.Random(args.seed)
    config = Config()
    checks = disagreements = 0
    for path in files:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        editor = Engine()
        editor.check(text, path, config)
        for step in range(args.steps):
            drawn = edit(text, rng)
            if drawn is None:
                continue
            kind, text = drawn
            got, want = view(editor.check(text, path, config)), view(Engine().check(text, path, config))
            checks += 1
            if got != want:
                disagreements += 1
                first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                print(f"DIFFERS {path} step {step + 1} ({kind}) at item {first}: "
                      f"{got[first] if first < len(got) else None} != {want[first] if first < len(want) else None}")
    print(f"{len(files)} files, {checks} edits checked, {disagreements} differ from a new Engine")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
