"""Hover every identifier of every rule example and every tests/real_world program through the real server.

One server session (over stdio, pytest-lsp) opens all the files at once and hovers every NAME token at its
UTF-16 position; no hover may come back as an error. The hovers of one file are sent together (the server
answers them in order). jedi is off: its answers are not what this sweeps, and they would make the run depend on
torch's stubs.

Cost, measured (scratch script driving this client and server; /proc CPU times): about 0.5 ms of server CPU and
0.25 ms of client CPU per hover, most of it JSON-RPC; with 523 files (68,704 hovers) the sweep takes about 80 s of
CPU in all, so it grows with tests/real_world.
"""
from __future__ import annotations

import asyncio
import io
import keyword
import sys
import tokenize
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import fresh_uri, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "server" / "gradguard" / "rules" / "examples"
REAL_WORLD = ROOT / "tests" / "real_world"

pytestmark = pytest.mark.asyncio(loop_scope="module")
CONFIG = ClientServerConfig(server_command=server_command(), client_factory=make_client)

# Identifiers after Chinese text and an emoji on the same line: UTF-16 columns differ from code points there.
NON_ASCII = (
    "import torch\n"
    "w = torch.rand(3, requires_grad=True)\n"
    'tag = "张量😋"; y = torch.sigmoid(w); d = y.detach()  # 为反向传播保存的张量\n'
    'note = "😋😋"; d.mul_(2)\n'
    "y.sum().backward()\n"
)


def sweep_files() -> list[Path]:
    files = sorted(EXAMPLES.glob("*/*.py"))
    if REAL_WORLD.is_dir():
        files += sorted(REAL_WORLD.glob("**/*.py"))
    return files


def name_positions(text: str) -> list[tuple[int, int]]:
    """(0-based line, UTF-16 column) of every identifier: NAME tokens that are not keywords (`match`, `case`, `type`
    can be either: kept). A text that stops tokenizing ends the list."""
    lines = text.splitlines(True)
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
                row, col = tok.start
                out.append((row - 1, len(lines[row - 1][:col].encode("utf-16-le")) // 2))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient):
    # The repository is the workspace: the server gives no diagnostics (and so no Facts) outside it (issue 14).
    await lsp_client.initialize_session(init_params(settings={"jedi": {"enable": False}, "debounceMs": 0}, root=ROOT))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def second_client(lsp_client: LanguageClient):
    """A second server for half of the sweep: the servers' analyses and hovers then use both cores of CI's machine."""
    await lsp_client.initialize_session(init_params(settings={"jedi": {"enable": False}, "debounceMs": 0}, root=ROOT))
    yield
    await lsp_client.shutdown_session()


async def hover_all(client: LanguageClient, uri: str, text: str) -> tuple[int, list[str]]:
    """Hover every identifier of one open document; (hovers sent, descriptions of the failed ones)."""
    positions = name_positions(text)
    requests = [client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=col)))
        for line, col in positions]
    results = await asyncio.gather(*requests, return_exceptions=True)
    failed = [f"{line + 1}:{col} {type(r).__name__}: {str(r)[:160]}"
              for (line, col), r in zip(positions, results) if isinstance(r, BaseException)]
    return len(positions), failed


async def sweep(client: LanguageClient, files: list[Path]) -> tuple[int, list[str]]:
    """Open `files` at once in one server, then hover every identifier of each; (hovers sent, failures)."""
    docs = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        uri = path.as_uri()
        docs.append((path, uri, text, open_doc(client, uri, text)))
    failures, total = [], 0
    for path, uri, text, mark in docs:
        await wait_publish(client, uri, mark, version=1, timeout=120)
        count, failed = await hover_all(client, uri, text)
        total += count
        failures += [f"{path.relative_to(ROOT)}:{f}" for f in failed]
    return total, failures


@pytest.mark.timeout(900)  # ~90 s on an idle 2-core box; 300 s ran out with make corpus beside it
async def test_no_hover_fails_on_any_identifier_of_any_example_or_real_world_program(
        client: LanguageClient, second_client: LanguageClient):
    files = sweep_files()
    assert len(files) >= 100  # the rule examples alone are more than that
    halves = await asyncio.gather(sweep(client, files[0::2]), sweep(second_client, files[1::2]))
    total = sum(count for count, _ in halves)
    failures = [f for _, failed in halves for f in failed]
    assert total > 5000
    assert failures == [], f"{len(failures)} of {total} hovers failed:\n" + "\n".join(failures[:20])


async def test_no_hover_fails_after_chinese_text_and_emoji(client: LanguageClient):
    uri = fresh_uri("hover_sweep_utf16")
    await wait_publish(client, uri, open_doc(client, uri, NON_ASCII), version=1)
    count, failed = await hover_all(client, uri, NON_ASCII)
    assert count == 19 and failed == []
    # `d` after `"张量😋"; ... ;`: code points and UTF-16 units differ here, and the hover still finds the tensor.
    line = NON_ASCII.split("\n")[3]
    col = len(line[: line.index("d.mul_")].encode("utf-16-le")) // 2
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=col)))
    assert hover is not None and "**`d`**" in hover.contents.value


async def hover_at(client: LanguageClient, uri: str, line: int, character: int) -> str:
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))
    assert hover is not None, f"no hover at {line}:{character}"
    return hover.contents.value


SIGMOID_THEN_WRITE = (
    "import torch\n"
    "w = torch.rand(64, 32, requires_grad=True)\n"
    "y = torch.sigmoid(w)\n"
    "y.mul_(2)\n"  # line 4: GG201
    "y.sum().backward()\n"
)

SETITEM_LOOP = (
    "import torch\n"
    "x = torch.zeros(4)\n"
    "w = torch.rand(4, requires_grad=True)\n"
    "x[0] = torch.rand(1) * w[0]\n"
    "for i in range(3):\n"
    "    x[i+1] = torch.sin(x[i]) * w[i]\n"  # line 6: GG301
    "loss = x.sum()\n"
    "loss.backward()\n"
)


async def test_finding_hover_explains_without_repeating_the_message(client: LanguageClient):
    uri = fresh_uri("hover_finding")
    published = await wait_publish(client, uri, open_doc(client, uri, SIGMOID_THEN_WRITE), version=1)
    (diag,) = [d for d in published.diagnostics if d.code == "GG201"]
    text = await hover_at(client, uri, 3, 3)
    assert text.startswith("**GG201** `saved-tensor-modified`")
    assert diag.message not in text  # the editor already shows it above the hover
    # This program's error: torch names the sigmoid output; the versions are known, the shape is not tracked.
    assert ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
            "operation: [torch.FloatTensor [...]], which is output 0 of Sigmoid, is at version 1; expected version 0 "
            "instead.") in text
    assert "**At runtime** torch raises (`[...]`: what depends on the run):" in text


async def test_saved_tensor_timeline_in_a_setitem_loop(client: LanguageClient):
    uri = fresh_uri("hover_loop")
    await wait_publish(client, uri, open_doc(client, uri, SETITEM_LOOP), version=1)
    text = await hover_at(client, uri, 5, 4)  # `x` in `x[i+1] = ...`
    assert "**`x`**" in text
    assert "- line 4: `[]=` writes it in place → version 1\n" in text
    # The loop runs three times: torch raises on the last pass's save (`is at version 4; expected version 3`). Each
    # place is listed once, with the first pass's versions, and says so: no version is shown as the only one.
    first_pass = " (the first pass; it repeats in the loop, at later versions)\n"
    assert "- line 6: `sin` saves `x[i]` (a view of it) for backward at version 1" + first_pass in text
    assert "- line 6: `[]=` writes it in place → version 2" + first_pass in text
    assert ("- line 8: `backward()` reads what `sin` saved on every pass; the first pass's save expects version 1, "
            "but line 6 already made it 2: it raises") in text
    w = await hover_at(client, uri, 2, 0)  # saved at version 0 on every pass: no qualifier
    assert "- line 6: `*` saves `w[i]` (a view of it) for backward at version 0 (repeats in the loop)\n" in w
    assert "- line 8: `backward()` reads what `*` saved at version 0, as expected" in w


DATA_WRITE = (
    "import torch\n"
    "w = torch.rand(3, requires_grad=True)\n"
    "y = w.exp()\n"
    "d = y.data\n"
    "d.mul_(2)\n"  # line 5: GG501, no version bump
    "y.sum().backward()\n"
)


async def test_a_save_overwritten_through_data_is_not_read_as_expected(client: LanguageClient):
    # torch raises nothing here and the gradient is wrong: the version matches, the values do not.
    uri = fresh_uri("hover_data_write")
    await wait_publish(client, uri, open_doc(client, uri, DATA_WRITE), version=1)
    for line in (2, 3):  # `y`, and its `.data` alias `d`
        text = await hover_at(client, uri, line, 0)
        assert ("- line 6: `backward()` reads what `exp` saved: version 0, as it expects, but with the values line 5 "
                "wrote without a version bump (a wrong gradient, no error)") in text
        assert "as expected" not in text


DETACH_THEN_SECOND_BACKWARD = (
    "import torch\n"
    "w = torch.rand(3, requires_grad=True)\n"
    "y = torch.sigmoid(w)\n"
    "y.sum().backward(retain_graph=False)\n"  # line 4: reads the save, frees the graph
    "d = y.detach()\n"
    "d.mul_(2)\n"  # line 6: bumps y's counter through the alias
    "y.sum().backward()\n"  # line 7: GG404
)


async def test_backward_calls_take_their_place_in_the_timeline(client: LanguageClient):
    # Module-level code outside loops runs in line order: the first backward comes before the write, and the second
    # one, which finds the graph freed, is in the timeline too.
    uri = fresh_uri("hover_order")
    await wait_publish(client, uri, open_doc(client, uri, DETACH_THEN_SECOND_BACKWARD), version=1)
    text = await hover_at(client, uri, 2, 0)
    assert text.endswith(
        "- line 3: `sigmoid` saves it (its output) for backward at version 0\n"
        "- line 4: `backward()` reads what `sigmoid` saved at version 0, as expected\n"
        "- line 6: `mul_()` writes it through a `.detach()` alias (same version counter) → version 1\n"
        "- line 7: `backward()` needs what `sigmoid` saved again, but the `backward()` of line 4 already freed it: "
        "it raises")


async def test_a_write_torch_refuses_writes_nothing(client: LanguageClient):
    # torch raises at `w += 1` (a leaf that requires grad) before writing: the version stays 0 (probed on torch 2.13,
    # as for multi-output views, no_grad views, expanded tensors and `out=`).
    uri = fresh_uri("hover_refused_write")
    text = "import torch\nw = torch.rand(4, requires_grad=True)\nw += 1\nloss = w.sum()\nloss.backward()\n"
    await wait_publish(client, uri, open_doc(client, uri, text), version=1)
    hover = await hover_at(client, uri, 1, 0)
    assert "- line 3: `+=` would write it in place, but torch raises at this line instead (the version stays 0)" in hover
    assert "→ version 1" not in hover
