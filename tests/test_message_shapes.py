"""Messages that name the right thing, one shape per test (issue 31): the tensor a write really reaches, the
user's actual mistake, and one finding for one mistake."""
from __future__ import annotations

from pathlib import Path

from gradguard.engine import check_text

CORPUS = Path(__file__).parent / "real_world" / "bugs"


def findings(path: Path, lang: str = "en"):
    return check_text(path.read_text(), str(path), lang=lang).findings


def test_gg101_on_an_ema_copy_names_the_copy_and_counts_a_chained_write_once():
    [f] = findings(CORPUS / "leaf_gh_timm_ema_01.py")
    assert (f.code, f.span.start_line + 1) == ("GG101", 26)
    assert f.message == ("`ema_p` is a leaf tensor that requires grad (created on line 20); the in-place `mul_()` "
                         "here raises at once (the chained `add_()` never runs). Do parameter updates under "
                         "`torch.no_grad()`, or work on a copy.")
    assert "1. `ema_p` is a leaf created on line 20 by a parameter of `copy.deepcopy(self.model)`" in f.explanation
    assert "self.inp" not in f.message + f.explanation
    assert [(r.span.start_line + 1, r.message) for r in f.related] == \
        [(20, "`ema_p` created here as a leaf that requires grad")]
    assert f.fix.message == "Do the update under `torch.no_grad()`"


def test_gg101_zh_puts_no_space_between_chinese_characters():
    [f] = findings(CORPUS / "leaf_gh_timm_ema_01.py", "zh")
    assert "由 `copy.deepcopy(self.model)` 的参数创建的叶子张量" in f.explanation
    assert "（后面链式调用的 `add_()` 不会执行）" in f.message
