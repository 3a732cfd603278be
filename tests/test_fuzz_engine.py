"""The engine under fuzzing: generated programs and mutated training scripts.

For every program, whatever its state (half-typed, binary junk, CRLF, CJK, emoji):
- `Engine.check` returns a report and never raises;
- every finding's span, related span, fix edit and parse note lies inside the document
  (0-based line < number of lines, code-point column <= that line's length, start <= end);
- every fix applied to a program that compiles leaves a program that compiles, alone and
  all together (`check_one(..., fix_mode="unsafe")`);
- fixing the fixed text changes nothing (applying fixes twice gives the same text as once).

Programs come from hypothesmith (`from_grammar()`, `from_node()`) and from byte-, token- and
line-level mutations of real training scripts: examples/, the rule examples and tests/fuzz_corpus/.
`make test` runs a derandomized, reproducible sample; `make fuzz-long` runs many more
(GRADGUARD_FUZZ_EXAMPLES, GRADGUARD_FUZZ_RANDOM=1 for fresh randomness).
"""
from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradguard.checking import apply_fixes, check_one
from gradguard.config import Config
from gradguard.engine import Engine
from gradguard.source import Source, Span

REPO = Path(__file__).resolve().parent.parent
SEED_FILES = sorted(
    [*REPO.glob("examples/*.py"), *REPO.glob("server/gradguard/rules/examples/*/*.py"), *REPO.glob("tests/fuzz_corpus/*.py")]
)
SEEDS = [p.read_bytes().decode("utf-8") for p in SEED_FILES]

# How many examples each property gets: small and reproducible in `make test`.
EXAMPLES = int(os.environ.get("GRADGUARD_FUZZ_EXAMPLES", "100"))
RANDOM = os.environ.get("GRADGUARD_FUZZ_RANDOM") == "1"
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)

ENGINE = Engine()
CONFIG = Config()
STATS: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_figures(pytestconfig):
    yield
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    line = (
        f"fuzz: {STATS['programs']} programs checked ({STATS['with_findings']} with findings, "
        f"{STATS['fixes_checked']} single fixes and {STATS['fix_runs']} fix-all runs verified, "
        f"{STATS['compiling']} compiling)"
    )
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("\n" + line)
    summary = os.environ.get("GRADGUARD_FUZZ_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


# ---- the properties ------------------------------------------------------------------------


def compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            compile(text, "<fuzz>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


def assert_inside(span: Span, lines: list[str], what: str, text: str) -> None:
    assert (span.start_line, span.start_col) <= (span.end_line, span.end_col), f"{what}: {span} ends before it starts"
    for line, col in ((span.start_line, span.start_col), (span.end_line, span.end_col)):
        assert 0 <= line < len(lines), f"{what}: {span} line {line} outside {len(lines)} lines\n{text!r}"
        assert 0 <= col <= len(lines[line]), f"{what}: {span} col {col} outside line {line} {lines[line]!r}\n{text!r}"


def check_program(text: str) -> None:
    """All the properties for one program."""
    STATS["programs"] += 1
    report = ENGINE.check(text, "fuzz.py", CONFIG)
    lines = Source(text).lines  # the lines an editor shows: \r\n, \r and \n all end a line
    for finding in report.findings:
        assert_inside(finding.span, lines, f"{finding.code} span", text)
        for related in finding.related:
            assert_inside(related.span, lines, f"{finding.code} related", text)
        if finding.fix is not None:
            assert finding.fix.edits, f"{finding.code}: a fix without edits"
            for edit in finding.fix.edits:
                assert_inside(edit.span, lines, f"{finding.code} fix edit", text)
    for note in report.parse_notes:
        assert_inside(note.span, lines, "parse note", text)
    if report.findings:
        STATS["with_findings"] += 1
    fixable = [f for f in report.findings if f.fix is not None]
    if not fixable:
        return
    ok_before = compiles(text)
    STATS["compiling"] += ok_before
    if ok_before:
        for finding in fixable:
            fixed, applied = apply_fixes(text, [finding])
            assert applied == 1
            STATS["fixes_checked"] += 1
            assert compiles(fixed), f"{finding.code} fix breaks the program:\n--- before\n{text}\n--- after\n{fixed}"
    once = check_one("fuzz.py", text, CONFIG, "en", "unsafe", 10**9)
    STATS["fix_runs"] += 1
    if ok_before:
        assert compiles(once.fixed_text), f"fixes together break the program:\n{text}\n---\n{once.fixed_text}"
    twice = check_one("fuzz.py", once.fixed_text, CONFIG, "en", "unsafe", 10**9)
    assert twice.fixed_text == once.fixed_text, f"fixing twice differs from once:\n{once.fixed_text}\n---\n{twice.fixed_text}"


# ---- mutations of real training scripts ----------------------------------------------------

# Pieces that matter to gradguard or to parsers: in-place writes, autograd calls, brackets,
# line ends, indentation, non-ASCII text.
SNIPPETS = [
    ".add_(1)", ".mul_(2)", ".zero_()", " += 1", " -= lr * w.grad", "[0] = 0", "[:, 1] *= 2", ".data", ".grad",
    ".backward()", ".backward(retain_graph=True)", "opt.step()", ".sigmoid()", "torch.relu(x, inplace=True)",
    "out=buf", "with torch.no_grad():\n    ", "@torch.no_grad()\n", "requires_grad=True", "torch.exp(x)",
    ".view(-1)", ".t()", "nn.ReLU(inplace=True)", "# noqa: GG101", "# gradguard: ignore[GG201]",
    "(", ")", "[", "]", "{", "}", ":", ",", "\\\n", "'", '"', '"""', "#", "\t", "\r\n", "\r", "\n", "    ",
    "张量", "梯度 = 0", "🎉", "𝔘", "é", "\u200b", "\x0c", "\ufeff", "lambda: ", "yield ", "async ", "await ",
    "def f(x):\n    ", "class C:\n    ", "return ", "if x:\n", "else:\n", "match x:\n    case 1:\n        ",
]
TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


@st.composite
def byte_mutants(draw) -> str:
    data = bytearray(draw(st.sampled_from(SEEDS)).encode("utf-8"))
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["delete", "insert", "flip", "duplicate", "snippet"]))
        at = draw(st.integers(0, len(data)))
        if kind == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=6))
        elif kind == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "duplicate":
            end = min(len(data), at + draw(st.integers(1, 80)))
            data[at:at] = data[at:end]
        else:
            data[at:at] = draw(st.sampled_from(SNIPPETS)).encode("utf-8")
    # What an editor would hold after opening these bytes: undecodable bytes become U+FFFD.
    return data.decode("utf-8", errors="replace")


@st.composite
def token_mutants(draw) -> str:
    tokens = TOKEN.findall(draw(st.sampled_from(SEEDS)))
    names = sorted({t for t in tokens if t.isidentifier()}) or ["x"]
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "rename", "snippet"]))
        i = draw(st.integers(0, max(0, len(tokens) - 1)))
        if not tokens:
            tokens = [draw(st.sampled_from(SNIPPETS))]
        elif kind == "delete":
            del tokens[i : i + draw(st.integers(1, 3))]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "rename" and tokens[i].isidentifier():
            tokens[i] = draw(st.sampled_from(names))
        else:
            tokens.insert(i, draw(st.sampled_from(SNIPPETS)))
    return "".join(tokens)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


@st.composite
def line_splices(draw) -> str:
    """Lines of other training scripts moved in at a neighbour's indentation: mostly valid code,
    so that rules fire and fixes get exercised on new combinations."""
    lines = draw(st.sampled_from(SEEDS)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        donor = draw(st.sampled_from(SEEDS)).split("\n")
        piece = draw(st.sampled_from(donor)).strip()
        at = draw(st.integers(0, len(lines)))
        if draw(st.booleans()) and lines:
            del lines[min(at, len(lines) - 1)]
            continue
        neighbour = lines[at - 1] if 0 < at <= len(lines) else ""
        indent = _indent(neighbour) + ("    " if neighbour.rstrip().endswith(":") else "")
        lines.insert(at, indent + piece)
    return "\n".join(lines)


def test_seed_corpus_is_real():
    # The mutations are only as good as their seeds: training scripts with findings and fixes.
    assert len(SEEDS) >= 100
    with_fixes = sum(1 for s in SEEDS if any(f.fix for f in ENGINE.check(s, "seed.py").findings))
    assert with_fixes >= 40


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_seed_program(path: Path):
    check_program(path.read_bytes().decode("utf-8"))


@FUZZ
@given(byte_mutants())
def test_byte_mutations_of_training_scripts(text: str):
    check_program(text)


@FUZZ
@given(token_mutants())
def test_token_mutations_of_training_scripts(text: str):
    check_program(text)


@FUZZ
@given(line_splices())
def test_line_splices_of_training_scripts(text: str):
    check_program(text)


# ---- generated programs (hypothesmith) -----------------------------------------------------

hypothesmith = pytest.importorskip("hypothesmith")
GENERATED = settings(FUZZ, max_examples=max(10, EXAMPLES // 3))


@GENERATED
@given(hypothesmith.from_grammar())
def test_programs_from_the_grammar(text: str):
    check_program(text)


@GENERATED
@given(hypothesmith.from_node())
def test_programs_from_libcst_nodes(text: str):
    check_program(text)


@GENERATED
@given(hypothesmith.from_node(), st.sampled_from(SEEDS))
def test_generated_code_inside_a_training_script(generated: str, seed: str):
    # A generated statement block dropped between a training script's top-level statements.
    lines = seed.split("\n")
    cut = len(lines) // 2
    check_program("\n".join(lines[:cut]) + "\n" + generated + "\n" + "\n".join(lines[cut:]))


# ---- hostile shapes (issue 14) -------------------------------------------------------------

import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from hostile_inputs import SHAPES  # noqa: E402

HOSTILE = settings(FUZZ, max_examples=max(6, EXAMPLES // 10))


@HOSTILE
@given(st.sampled_from(sorted(SHAPES)), st.integers(1, 700), st.sampled_from(SEEDS), st.floats(0, 1))
def test_hostile_shapes_inside_a_training_script(shape: str, n: int, seed: str, where: float):
    # Deep chains and nesting of every kind, around and past the guard's limit, between a script's
    # top-level statements: never a crash, and the findings of the script's other blocks keep their place.
    lines = seed.split("\n")
    starts = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "\t", "#", ")", "]", "}")] or [0]
    cut = starts[int(where * (len(starts) - 1))]
    check_program("\n".join(lines[:cut]) + "\n" + SHAPES[shape](min(n, 300 if "nested" in shape else n)) + "\n".join(lines[cut:]))
