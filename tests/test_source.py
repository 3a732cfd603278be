"""Source: block splitting (whole and incremental) and column maps."""
from __future__ import annotations

from pathlib import Path

import random

from gradguard.engine import Engine
from gradguard.source import Source, split_blocks, split_blocks_after_edit

ROOT = Path(__file__).resolve().parents[1]
SEEDS = sorted((ROOT / "server/gradguard/rules/examples").glob("*/*.py"))[:40] + sorted(ROOT.glob("examples/*.py"))
SNIPPETS = ["\n", "x = 1\n", "def g():\n    return 1\n", "    y += 1\n", '"""', "'''\n", "(", ")", "[\n", "]\n",
            "#", "\\\n", "class C:\n    pass\n", "@dec\n", "if x:\n", "else:\n", "中文😀", "\t", "'", '"']


def test_top_level_blocks_of_a_training_script():
    text = (
        "import torch\n"           # 0: simple statements are grouped
        "w = torch.rand(3)\n"
        "\n"
        "@torch.no_grad()\n"       # 3: decorator + def in one block
        "def update(p):\n"
        "    p -= 1\n"
        "\n"
        "for i in range(3):\n"     # 7: a compound statement
        "    loss = (w * 2).sum()\n"
        "x = '''\n"                # 9: a string spanning lines that look like code
        "def not_a_block():\n"
        "'''\n"
        "y = (1,\n"                # 12: brackets spanning lines
        "2)\n"
    )
    blocks = split_blocks(text)
    assert [(b.start_line, b.end_line, b.is_definition) for b in blocks] == [
        (0, 3, False), (3, 7, True), (7, 9, False), (9, 15, False)]


def test_incremental_split_equals_full_split_over_5000_random_edits():
    rng = random.Random(20261130)
    reused = 0
    for _ in range(5000):
        old = rng.choice(SEEDS).read_text(encoding="utf-8")
        start = rng.randrange(len(old) + 1)
        end = min(len(old), start + rng.randrange(40))
        new = old[:start] + rng.choice(SNIPPETS + [""]) + old[end:]
        incremental = split_blocks_after_edit(old, split_blocks(old), new)
        if incremental is not None:
            reused += 1
            assert incremental == split_blocks(new), (old[start - 40:end + 40], new[start - 40:start + 40])
    assert reused > 4000  # it is used for most edits, not just the easy ones


def test_an_edit_inside_one_function_reparses_that_function_only():
    functions = "".join(f"def f{i}(x):\n    y = x * {i}\n    return y\n\n" for i in range(200))
    engine = Engine()
    engine.check(functions, "big.py")
    before = engine.cache.parses
    edited = functions.replace("y = x * 57\n", "y = x * 57 + 1\n")
    engine.check(edited, "big.py")
    assert engine.cache.parses - before == 1


def test_utf16_columns_count_astral_characters_twice():
    source = Source("s = '中😀'; w += 1\n")
    col = source.lines[0].index("w")
    assert source.utf16_col(0, col) == col + 1  # the emoji is two UTF-16 units, 中 is one


def test_crlf_is_normalised_so_lines_agree_with_editors():
    source = Source("a = 1\r\nb = 2\r\n")
    assert source.lines == ["a = 1", "b = 2", ""]
