"""Messages state what the analysis proves about this program: lines and names of its own code."""
from __future__ import annotations

from gradguard.engine import check_text


def test_gg101_names_the_line_that_built_the_layer_not_the_write():
    text = ("import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 2)\nx = torch.randn(4, 3)\n"
            "model.weight.clamp_(-1, 1)\nmodel(x).sum().backward()\n")
    (finding,) = check_text(text, "t.py").findings
    assert finding.code == "GG101"
    assert "(created on line 4)" in finding.message
    assert [(r.span.start_line + 1, r.message) for r in finding.related] == [
        (4, "`model.weight` created here as a leaf that requires grad")]
