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


def test_gg403_names_the_discarded_repackage_hidden_result_at_its_line():
    [f] = findings(CORPUS / "bt_gh_examples_wlm_01.py")
    assert (f.code, f.span.start_line + 1) == ("GG403", 25)
    assert f.message == ("`repackage_hidden(hidden)` returns a detached copy of `hidden`, but its result is discarded: "
                         "`hidden` still holds the graph that line 26 built in the previous iteration, which "
                         "`backward()` on line 29 freed, so the next `backward()` (line 29) fails. Assign it: "
                         "`hidden = repackage_hidden(hidden)`.")
    assert [r.span.start_line + 1 for r in f.related] == [26, 29]
    [edit] = f.fix.edits
    assert (edit.span.start_line + 1, edit.new_text) == (25, "hidden = repackage_hidden(hidden)")


def test_gg403_a_dropped_detach_call_is_the_mistake_too():
    source = ("import torch\ncell = torch.nn.RNNCell(2, 3)\nh = torch.zeros(1, 3)\nfor x in torch.randn(4, 1, 2):\n"
              "    h.detach()\n    h = cell(x, h)\n    h.sum().backward()\n")
    [f] = check_text(source, "loop.py").findings
    assert (f.code, f.span.start_line + 1) == ("GG403", 5)
    assert f.fix.edits[0].new_text == "h = h.detach()"


def test_gg202_inside_a_sequential_names_the_layer_output_it_overwrites():
    source = ("import torch\nfrom torch import nn\n\n"
              "model = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(8, 1))\n"
              "out = model(torch.randn(2, 4))\nout.sum().backward()\n")
    [f] = check_text(source, "seq.py").findings
    assert f.message == ("`ReLU(inplace=True)` overwrites the output of `nn.Sigmoid` inside `model`, which "
                         "`nn.Sigmoid` saved for backward on line 4; `backward()` on line 6 will fail. Use "
                         "`inplace=False` here.")
    assert f.explanation.startswith("1. Line 4: `nn.Sigmoid` (the forward on line 5) saves its output for backward")
    [zh] = check_text(source, "seq.py", lang="zh").findings
    assert "覆盖了 `model` 中 `nn.Sigmoid` 的输出" in zh.message


def test_the_extension_readme_promises_what_hover_shows():
    """The README says the hover's error is torch's word for word only where the analysis knows the shape and
    versions, and a form otherwise; the hover says which it is."""
    from gradguard.lsp.hover import finding_markdown

    readme = (Path(__file__).parent.parent / "client-vscode" / "README.md").read_text()
    assert "the exact error torch prints" not in readme
    assert "word for word where the analysis knows\n  the shape and the versions; otherwise its form, with `<n>`" in readme
    [f] = check_text("import torch\nw = torch.rand(3, requires_grad=True)\nw.add_(1)\n", "leaf.py").findings
    assert ("**At runtime** torch raises:\n\n```text\nRuntimeError: a leaf Variable that requires grad is being used "
            "in an in-place operation.\n```") in finding_markdown(f, "en")
    [form] = [f for f in findings(Path(__file__).parent / "trace_programs" / "gan_wrong_order.py")]
    hover = finding_markdown(form, "en")
    assert "**At runtime** torch raises (`[...]`, `<n>`, `<m>`: what depends on the run):" in hover
