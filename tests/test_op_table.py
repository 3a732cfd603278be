"""The op table is what torch does: regenerated here and compared, name by name."""
from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import torch  # installed by the Makefile (torch==2.13.0, CPU): a missing torch must fail, not skip

from gradguard.ops import OpRow, load_op_table, parse_op_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CSV_PATH = ROOT / "server" / "gradguard" / "ops" / "op_table.csv"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_op_table", ROOT / "scripts" / "gen_op_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def csv_records() -> list[dict[str, str]]:
    lines = [line for line in CSV_PATH.read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


def resolve(qualname: str):
    """`torch.nn.functional.relu` by getattr chain from torch; `Tensor.add` on torch.Tensor."""
    head, *rest = qualname.split(".")
    obj = {"torch": torch, "Tensor": torch.Tensor}[head]
    for part in rest:
        obj = getattr(obj, part)
    return obj


def test_csv_matches_what_torch_does():
    diff = load_generator().diff_against(CSV_PATH)
    assert diff == "", "op_table.csv differs from torch; run `python scripts/gen_op_table.py`:\n" + diff


@pytest.mark.parametrize("name", [n for r in csv_records() for n in r["names"].split()])
def test_name_exists_in_torch(name):
    resolve(name)


def test_no_name_is_in_two_rows():
    counts = Counter(n for r in csv_records() for n in r["names"].split())
    assert [n for n, c in counts.items() if c > 1] == []


def test_loader_gives_typed_rows_by_qualified_name():
    table = load_op_table()
    assert table.by_name["torch.sin"] == OpRow("sin", "function", "self", False, "none", None, ("torch.sin", "Tensor.sin"),
                                               output_of=("Sin", "Sin"), inplace_output_of=("Sin", "Sin"))
    assert table.by_name["Tensor.exp"].saves_output is True
    assert table.by_name["Tensor.split"].view == "multi"
    assert table.by_name["torch.nn.Linear"].params is True
    assert table.by_name["torch.nn.Embedding"].params is False
    assert load_op_table() is table  # cached
    assert len(table.by_name) == sum(len(r["names"].split()) for r in csv_records())


def test_loader_rejects_a_name_in_two_rows():
    text = "op,kind,saves_input,saves_output,view,params,names\n" \
           "a,function,none,no,none,,torch.sin\nb,function,self,no,none,,torch.sin\n"
    with pytest.raises(ValueError, match="torch.sin is in rows a and b"):
        parse_op_table(text)


def test_loader_does_not_import_torch():
    code = "import sys, gradguard.ops as o; o.load_op_table(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_printed_names_are_what_the_saved_tensor_error_prints():
    table = load_op_table()
    assert table.get("torch.sigmoid").printed("output_of", "torch.sigmoid") == "Sigmoid"
    assert table.get("torch.nn.Tanh").printed("output_of", "torch.nn.Tanh") == "Tanh"
    assert table.get("torch.nn.Tanh").printed("output_of") is None  # the row's names disagree
    assert table.get("torch.nn.functional.leaky_relu").printed("inplace_output_of") == "LeakyRelu1"
    assert table.get("Tensor.__add__").printed("inplace_output_of", "Tensor.__add__") == "Add"  # `+=`
    assert table.get("torch.nn.Linear").printed("params_output_of", "torch.nn.Linear") == "AsStrided"
    assert table.get("torch.nn.LSTM").printed("params_output_of") is None  # torch names no node
    # The same texts, straight from torch: a sigmoid output modified in place, an input saved by sin and then
    # written by leaky_relu(inplace=True), a Linear whose weight changed after forward.
    x = torch.rand(3, requires_grad=True)

    def error(build) -> str:
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            build().sum().backward()
        return str(info.value)

    def sigmoid_then_add():
        y = torch.sigmoid(x)
        y.add_(1)
        return y

    def sin_then_leaky():
        h = x * 2
        s = h.sin()
        torch.nn.functional.leaky_relu(h, inplace=True)
        return s

    def linear_then_step():
        lin = torch.nn.Linear(3, 2)
        out = lin(x)
        with torch.no_grad():
            lin.weight.add_(1)
        return out

    assert "which is output 0 of Sigmoid," in error(sigmoid_then_add)
    assert "which is output 0 of LeakyRelu1," in error(sin_then_leaky)
    assert "which is output 0 of AsStrided," in error(linear_then_step)


def test_loader_rejects_a_per_name_column_of_the_wrong_length():
    text = "op,kind,saves_input,saves_output,view,params,output_of,inplace_output_of,params_output_of,names\n" \
           "a,function,none,no,none,,Sin Cos Tan,-,,torch.sin Tensor.sin\n"
    with pytest.raises(ValueError, match="output_of has 3 values for 2 names"):
        parse_op_table(text)
