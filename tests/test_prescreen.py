"""The pre-screen of a batch check (parse.screen_blocks): blocks no finding can involve are checked by CPython's
parser, not parsed by libcst nor analysed, and the report is the same as when every block is analysed."""
from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

from gradguard.config import Config
from gradguard.engine import Engine
from gradguard.parse import _parse_module_unvalidated, code_words, screen_blocks
from gradguard.source import Source

ROOT = Path(__file__).resolve().parent.parent

TRAINING = '''import torch
from torch import nn


def helper_cold(x):
    return x * 2


def entry_point(pretrained=False):
    """Registered by name (as timm's model functions): nothing in the file calls it."""
    return Net()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h.mul_(2)
        return helper_cold(h)


__all__ = ["entry_point"]
'''


def _left_out(text: str) -> list[str]:
    blocks = Source(text).blocks
    return [blocks[i].text.split("(")[0].split()[-1] for i in screen_blocks(blocks)]


def _report(text: str, prescreen: bool, path: str = "train.py") -> tuple:
    engine = Engine(editor=False)
    engine.prescreen = prescreen
    report = engine.check(text, path, Config())
    findings = [(f.code, f.span, f.message, f.fix and (f.fix.applicability, [(e.span, e.new_text) for e in f.fix.edits]))
                for f in report.findings]
    notes = [(n.span, n.message) for n in report.parse_notes]
    return findings, notes


def test_a_function_only_a_string_names_is_left_out_and_what_analysed_code_calls_is_kept():
    # entry_point builds Net, but nothing analysed calls entry_point (`__all__` names it in a string only);
    # helper_cold writes nothing but the hot forward calls it, so it is analysed.
    assert _left_out(TRAINING) == ["entry_point"]


def test_a_cold_class_built_by_module_code_is_kept():
    text = TRAINING + "\nmodel = Net()\nfrozen = Frozen()\n\n\nclass Frozen(nn.Module):\n    pass\n"
    assert "Frozen" not in _left_out(text)


def test_definition_time_code_reaching_the_files_names_keeps_a_block():
    text = TRAINING + '''

def register(fn):
    return fn


@register
def decorated():
    return 1


class Sub(Net):
    pass


def undecorated(a=helper_cold(1)):
    return a
'''
    left = _left_out(text)
    # `register` is called at definition time by `decorated`; Sub's base is the file's own class (its subclass
    # hooks run at definition); a default calls a file function.
    assert "decorated" not in left and "Sub" not in left and "undecorated" not in left
    assert "entry_point" in left


def test_a_file_without_any_write_backward_or_step_leaves_every_block_out():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ny = f(torch.ones(2))\n"
    assert len(screen_blocks(Source(text).blocks)) == len(Source(text).blocks)
    assert _report(text, True) == _report(text, False) == ([], [])


def test_a_syntax_error_in_a_block_that_would_be_left_out_gets_the_same_note():
    text = TRAINING + "\n\ndef broken(:\n    return 1\n"
    on, off = _report(text, True), _report(text, False)
    assert on == off
    assert on[1] == [(on[1][0][0], "syntax error: invalid syntax (lines 28-29 not analysed)")]
    assert (on[1][0][0].start_line, on[1][0][0].start_col) == (27, 11)


def test_a_too_deep_block_that_would_be_left_out_gets_the_same_note():
    deep = "def deep():\n    return " + "(" * 160 + "1" + ")" * 160 + "\n"
    text = "import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n\n\n" + deep
    on, off = _report(text, True), _report(text, False)
    assert on == off and len(on[1]) == 1 and "brackets nested 160 deep" in on[1][0][1]


def test_code_words_skip_plain_strings_and_comments_but_read_f_string_fields():
    text = 'x = "entry_point"  # helper\ny = f"{helper_cold(x)}"\nz = rb\'net\'\n'
    words = code_words(text)
    assert {"x", "y", "z", "helper_cold"} <= words
    assert "entry_point" not in words and "helper" not in words and "net" not in words


def test_findings_do_not_depend_on_the_pre_screen_on_the_training_example():
    on, off = _report(TRAINING, True), _report(TRAINING, False)
    assert on == off


def _programs():
    dirs = [ROOT / "examples", ROOT / "server" / "gradguard" / "rules" / "examples", ROOT / "tests" / "trace_programs",
            ROOT / "tests" / "in_the_wild", ROOT / "tests" / "fuzz_corpus"]
    return sorted(p for d in dirs if d.is_dir() for p in d.rglob("*.py"))


@pytest.mark.parametrize("path", _programs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_findings_and_notes_are_the_same_with_and_without_the_pre_screen(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    assert _report(text, True, str(path)) == _report(text, False, str(path))


def test_a_left_out_block_is_parsed_when_a_rule_walks_it():
    # GG202's fix looks for the layer's flag in every block of the file, the left-out ones too.
    text = (ROOT / "server/gradguard/rules/examples/GG202").glob("bad_*.py")
    for program in text:
        source = program.read_text()
        padded = source + "\n\ndef unused_entry(pretrained=False):\n    return {'inplace': True}\n"
        assert _report(padded, True) == _report(padded, False)


def test_the_unvalidated_parse_builds_the_same_trees():
    for path in _programs()[:80]:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = cst.parse_module(text)
        except Exception:  # noqa: BLE001 - a file libcst refuses is refused by both
            with pytest.raises(Exception):
                _parse_module_unvalidated(text)
            continue
        assert _parse_module_unvalidated(text).deep_equals(expected), path
    # node construction validates again afterwards
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_a_batch_report_keeps_no_facts_and_an_editor_report_does():
    # A batch check's Facts hold the file's trees (the collections after the check walked them); only hover,
    # an editor's, reads them.
    text = "import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n"
    batch, editor = Engine(editor=False).check(text, "t.py"), Engine(editor=True).check(text, "t.py")
    assert [f.code for f in batch.findings] == [f.code for f in editor.findings] == ["GG101"]
    assert batch.facts is None
    assert editor.facts is not None and editor.facts.tensor_at(2, 0) is not None
