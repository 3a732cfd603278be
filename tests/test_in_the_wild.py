"""Bugs gradguard found in released code, each reduced to a program that fails under torch."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradguard.engine import Engine
from torch_exec import run_program

CASES = sorted((Path(__file__).parent / "in_the_wild").glob("*.py"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_found_bug_is_reported_and_real(path):
    text = path.read_text(encoding="utf-8")
    expected = {(m.group(1), i + 1) for i, line in enumerate(text.splitlines())
                for m in re.finditer(r"#\s*<-\s*(GG\d{3})", line)}
    report = Engine().check(text, str(path))
    assert {(f.code, f.span.start_line + 1) for f in report.findings} == expected
    result = run_program(text, str(path))
    assert result.error_type == "RuntimeError" and "modified by an inplace operation" in result.error
