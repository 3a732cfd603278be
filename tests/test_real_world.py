"""The real-world corpus (tests/real_world/) behaves under torch 2.13 as its manifests say.

Every bug raises its manifest's error (silent family: prints its wrong gradient), every .fixed.py and every correct
program runs clean, and the manifests are well-formed. All programs run in one worker subprocess (verify.py).
gradguard's scores on this corpus are `make recall`, not a test.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch  # the corpus is verified under real torch; a missing torch must fail, not skip

sys.path.insert(0, str(Path(__file__).parent / "real_world"))
import verify  # noqa: E402

ENTRIES = [e for e in verify.load_manifests() if e.get("kind") in verify.KINDS and "id" in e]


CANARY_CLEAN = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
CANARY_RAISING = "import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n"


@pytest.fixture(scope="module")
def canaries(tmp_path_factory):
    d = tmp_path_factory.mktemp("canaries")
    clean, raising = d / "clean.py", d / "raising.py"
    clean.write_text(CANARY_CLEAN)
    raising.write_text(CANARY_RAISING)
    return clean, raising


@pytest.fixture(scope="module")
def results(canaries):
    """Every corpus program and the two canaries, in one worker subprocess (torch is imported once)."""
    paths = [p for e in ENTRIES for p in verify.program_paths(e) if p.exists()]
    return verify.run_programs(paths + list(canaries))


def test_torch_is_the_pinned_build():
    assert torch.__version__.split("+")[0] == "2.13.0"


def test_manifests_are_well_formed():
    assert verify.check_manifests(verify.load_manifests()) == []


def test_corpus_is_not_empty():
    assert any(e["kind"] == "bug" for e in ENTRIES) and any(e["kind"] == "correct" for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_program_behaves_as_manifest_says(entry, results):
    assert verify.verify_entries([entry], results) == []


def test_checks_can_fail(canaries, results):
    """The checks reject a bug that runs clean, a fixed program that raises and a wrong error text."""
    clean, raising = canaries
    res = results
    assert res[str(clean)].clean and res[str(clean)].trained == ["(2,):float32"]
    assert res[str(raising)].error_type == "RuntimeError"
    assert "leaf Variable that requires grad" in res[str(raising)].first_line
    bug = {"id": "t_x_01", "kind": "bug", "family": "leaf-inplace", "error": "leaf Variable",
           "torch_message": res[str(raising)].first_line}
    orig = verify.bug_path, verify.fixed_path
    try:
        verify.bug_path, verify.fixed_path = (lambda e: raising), (lambda e: clean)
        assert verify.verify_entries([bug], res) == []
        assert verify.verify_entries([dict(bug, error="modified by an inplace operation")], res)
        verify.bug_path, verify.fixed_path = (lambda e: clean), (lambda e: raising)
        assert len(verify.verify_entries([bug], res)) == 2
    finally:
        verify.bug_path, verify.fixed_path = orig
