"""LSP 3.18 Markdown diagnostic messages (issue 32): a client that declares `markupMessageSupport` gets each
finding's message as Markdown, with the version timeline that hover shows and torch's error text; any other client
gets the one-line plain text it always got. The real server over stdio, driven by pytest-lsp both ways.

lsprotocol 2025.0.0 does not model the 3.18 fields yet, so the 3.18 client below teaches its converter the two it
needs (the capability it sends, the MarkupContent message it receives): that is the client's side, not ours."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Union

import attrs
import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_fixtures.harness import fresh_uri, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIGMOID_RELU = (ROOT / "server/gradguard/rules/examples/GG202/bad_1_sequential_sigmoid_relu.py").read_text()
pytestmark = pytest.mark.asyncio(loop_scope="module")


@attrs.define
class Diagnostic318(types.Diagnostic):
    message: Union[str, types.MarkupContent] = attrs.field(kw_only=True)


def converter_318():
    """pygls's converter, plus `markupMessageSupport: true` sent and MarkupContent messages received."""
    from pygls.protocol import default_converter

    converter = default_converter()
    plain = converter.get_unstructure_hook(types.PublishDiagnosticsClientCapabilities)
    converter.register_unstructure_hook(types.PublishDiagnosticsClientCapabilities,
                                        lambda caps: {**plain(caps), "markupMessageSupport": True})
    structure_plain = converter.get_structure_hook(types.Diagnostic)

    def diagnostic(data, _type):
        if not isinstance(data.get("message"), dict):
            return structure_plain(data, _type)
        message = converter.structure(data["message"], types.MarkupContent)
        return Diagnostic318(**{f.name: getattr(structure_plain({**data, "message": ""}, _type), f.name)
                                for f in attrs.fields(types.Diagnostic) if f.name != "message"}, message=message)

    converter.register_structure_hook(types.Diagnostic, diagnostic)
    return converter


MARKDOWN = ClientServerConfig(server_command=server_command(), client_factory=lambda: make_client(converter_318))
PLAIN = ClientServerConfig(server_command=server_command(), client_factory=make_client)


@pytest_lsp.fixture(scope="module", config=MARKDOWN)
async def markdown_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params())
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=PLAIN)
async def plain_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params())
    yield
    await lsp_client.shutdown_session()


async def _diagnostic(client: LanguageClient) -> types.Diagnostic:
    uri = fresh_uri("markdown")
    mark = open_doc(client, uri, SIGMOID_RELU)
    [diag] = (await wait_publish(client, uri, since=mark)).diagnostics
    return diag


async def test_a_client_that_declares_markup_message_support_gets_markdown_with_the_timeline(markdown_client):
    diag = await _diagnostic(markdown_client)
    assert diag.code == "GG202" and (diag.range.start.line, diag.range.start.character) == (7, 4)
    assert isinstance(diag.message, types.MarkupContent) and diag.message.kind == types.MarkupKind.Markdown
    first, timeline, raised = diag.message.value.split("\n\n")
    assert first.startswith("`ReLU(inplace=True)` overwrites the output of `nn.Sigmoid` inside `model`, which `nn.Sigmoid` saved")
    assert timeline.startswith("1. Line 7: `nn.Sigmoid`")
    assert raised.startswith("torch raises:\n```text\none of the variables needed for gradient "
                             "computation has been modified by an inplace operation") and raised.endswith("\n```")
    assert diag.data["fix"]["edits"][0]["newText"] == "False"  # the quick fix is unchanged


async def test_any_other_client_gets_the_plain_one_line_message(plain_client):
    diag = await _diagnostic(plain_client)
    assert isinstance(diag.message, str) and "\n" not in diag.message
    assert diag.message.startswith("`ReLU(inplace=True)` overwrites the output of `nn.Sigmoid` inside `model`, which `nn.Sigmoid` saved")
