"""Language-server latency and memory, measured over stdio against the real server.

    make bench-lsp        (or: .venv/bin/python benchmarks/bench_lsp.py [--edits 200] [--memory-edits 1000])

Prints one table:
- didChange -> publishDiagnostics, minus the debounce (default 150 ms), median and p95 over N
  edits, for a generated 300-line training script and for an edit inside one function of a
  generated 5,000-line file. Each edit is an incremental change of one digit; the next edit is
  sent once the previous publish arrived.
- hover latency: on a tensor name (engine facts), and on a name imported from another workspace
  module once jedi is warm (a fresh document version each time, so jedi really runs).
- server RSS after the first edit and after 1,000 edits (debounce 0, every edit analysed).
- edits in timm's models/vision_transformer.py (the wheel pinned in corpus.lock): a digit in the middle of a
  top-level function and of a method of the VisionTransformer class, didChange -> publish minus debounce, and the
  analysis alone (`Engine.check` CPU in this process, same edits). `--edits-only`: the 5,000-line file and timm's.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from lsp_fixtures.harness import close, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402

DEBOUNCE_MS = 150

FUNCTION = '''
def step_{i}(model, batch, opt):
    x, target = batch
    h = torch.relu(model.fc1(x))
    h = h * 0.{d}
    out = model.fc2(h)
    loss = torch.nn.functional.mse_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    stats = torch.zeros(4)
    stats[0] = loss.detach()
    scale = torch.rand(4, requires_grad=True)
    y = scale.exp()
    z = y.sin()
    total = z.sum() + stats.sum()
    return total
'''

HEADER = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

'''

LOOP = '''
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
w = torch.rand(4, requires_grad=True)
for epoch in range(3):
    batch = (torch.rand(2, 8), torch.rand(2, 4))
    total = step_0(model, batch, opt)
    w += 1
'''


def generate(lines: int) -> str:
    parts = [HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) + LOOP.count("\n") + FUNCTION.count("\n") < lines:
        parts.append(FUNCTION.format(i=i, d=i % 10))
        i += 1
    parts.append(LOOP)
    text = "".join(parts)
    return text + "\n" * max(0, lines - text.count("\n"))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def start(settings: dict, root: Path):
    client = make_client()
    await client.start_io(*server_command())
    await client.initialize_session(init_params(settings=settings, root=root))
    return client


async def edit_latencies(client, uri: str, text: str, target_line: int, edits: int, debounce_ms: int,
                         col: int | None = None, first_version: int = 1, digit: str | None = None) -> list[float]:
    """Send `edits` one-digit incremental changes on `target_line` (at `col`, else the digit after "0."); ms from
    send to publish."""
    line = text.split("\n")[target_line]
    if col is None:
        col = line.index("0.") + 2  # the digit after "0."
    out = []
    for k in range(edits):
        version = first_version + k + 1
        mark = len(client.published)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=types.Position(target_line, col), end=types.Position(target_line, col + 1)),
                        text=digit if digit is not None else str(k % 10),
                    )
                ],
            )
        )
        await wait_publish(client, uri, mark, version=version, timeout=300)
        received = client.published[-1][0]
        for t, p in client.published[mark:]:
            if p.uri == uri and p.version == version:
                received = t
                break
        out.append((received - sent) * 1000 - debounce_ms)
    return out


async def latency_case(name: str, lines: int, edits: int, tmp: Path) -> tuple[str, list[float], int]:
    text = generate(lines)
    path = tmp / f"{name}.py"
    path.write_text(text)
    client = await start({"debounceMs": DEBOUNCE_MS, "jedi": {"enable": False}}, tmp)
    try:
        uri = path.as_uri()
        mark = open_doc(client, uri, text)
        first = await wait_publish(client, uri, mark, version=1, timeout=max(120, lines // 100))
        # An edit inside one function in the middle of the file.
        target = next(i for i, ln in enumerate(text.split("\n")) if ln.strip().startswith("h = h * 0.") and i > lines // 2)
        pid = client._server.pid
        cpu_before = cpu_seconds(pid)
        values = await edit_latencies(client, uri, text, target, edits, DEBOUNCE_MS)
        # The server's own CPU per edit (parse, analyse, publish): what a loaded machine does not distort.
        cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000 / edits
        return f"{name} ({text.count(chr(10))} lines, {len(first.diagnostics)} findings)", values, cpu_ms
    finally:
        await close(client)


# Edits in timm's vision_transformer.py (the wheel pinned in corpus.lock): a digit in the middle of a top-level
# function and of a method of the 600-line VisionTransformer class (its whole class block is re-parsed).
TIMM_EDITS = (
    ("checkpoint_filter_fn", "def checkpoint_filter_fn(", "num_prefix_tokens = 0 if getattr(", "= 0"),
    ("VisionTransformer._pos_embed", "    def _pos_embed(", "x = torch.cat(to_cat + [x], dim=1)", "dim=1"),
)


def timm_vision_transformer() -> tuple[str, str]:
    """(label, text) of timm's models/vision_transformer.py, from the wheel pinned in benchmarks/corpus.lock."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import corpus  # benchmarks/ is not a package

    (package,) = corpus.collect(["timm"], sys.executable)
    path = package.checked_dir / "models" / "vision_transformer.py"
    return f"{package.label} models/vision_transformer.py", path.read_text(encoding="utf-8")


def timm_target(text: str, head: str, line_text: str, digit_after: str) -> tuple[int, int]:
    """(line, column) of the digit to edit: in the first line containing `line_text` after the line starting with
    `head`."""
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith(head))
    line = next(i for i in range(start, len(lines)) if line_text in lines[i])
    return line, lines[line].index(digit_after, lines[line].index(line_text)) + len(digit_after) - 1


def engine_edit_ms(text: str, path: str, line: int, col: int, edits: int) -> list[float]:
    """The analysis alone, in this process: CPU ms of `Engine.check` (an editor's engine, warm) per one-digit edit."""
    from gradguard.config import Config
    from gradguard.engine import Engine

    engine = Engine()
    config = Config()
    engine.check(text, path, config)
    lines = text.split("\n")
    out = []
    for k in range(edits):
        edited = lines[:]
        edited[line] = edited[line][:col] + str(k % 10) + edited[line][col + 1:]
        started = time.process_time()
        engine.check("\n".join(edited), path, config)
        out.append((time.process_time() - started) * 1000)
    return out


async def timm_case(tmp: Path, edits: int, cpu_rows: list) -> tuple[list, list]:
    """didChange -> publish minus debounce for each of TIMM_EDITS, and the analysis alone in process; the server's
    CPU per edit goes to `cpu_rows`."""
    label, text = timm_vision_transformer()
    path = tmp / "vision_transformer.py"
    path.write_text(text)
    rows, analysis_rows = [], []
    client = await start({"debounceMs": DEBOUNCE_MS, "jedi": {"enable": False}}, tmp)
    try:
        uri = path.as_uri()
        mark = open_doc(client, uri, text)
        await wait_publish(client, uri, mark, version=1, timeout=300)
        version = 1
        for name, head, line_text, digit_after in TIMM_EDITS:
            line, col = timm_target(text, head, line_text, digit_after)
            # each case starts from the text as opened (the previous case's digit restored)
            cpu_before = cpu_seconds(client._server.pid)
            values = await edit_latencies(client, uri, text, line, edits, DEBOUNCE_MS, col=col, first_version=version)
            version += edits
            cpu_ms = (cpu_seconds(client._server.pid) - cpu_before) * 1000 / edits
            restore = await edit_latencies(client, uri, text, line, 1, DEBOUNCE_MS, col=col, first_version=version,
                                           digit=text.split("\n")[line][col])
            version += 1
            del restore
            where = f"{label}, line {line + 1} in {name}"
            rows.append((f"didChange->publish minus debounce, {where}", values))
            analysis_rows.append((f"analysis alone (Engine.check CPU), {where}",
                                  engine_edit_ms(text, str(path), line, col, edits)))
            cpu_rows.append((f"server CPU per edit, {where}", cpu_ms))
    finally:
        await close(client)
    return rows, analysis_rows


async def hover_case(tmp: Path, hovers: int) -> dict[str, list[float]]:
    (tmp / "model.py").write_text(HEADER)
    train = "import torch\nfrom model import Net\n\nnet = Net()\nw = torch.rand(4, requires_grad=True)\nw += 1\nloss = w.sum()\n"
    (tmp / "train.py").write_text(train)
    client = await start({"debounceMs": 0, "jedi": {"warmup": [], "timeoutMs": 2000}}, tmp)
    try:
        uri = (tmp / "train.py").as_uri()
        mark = open_doc(client, uri, train)
        await wait_publish(client, uri, mark, version=1)

        async def hover(line: int, col: int) -> tuple[float, str]:
            t0 = time.perf_counter()
            result = await client.text_document_hover_async(
                types.HoverParams(text_document=types.TextDocumentIdentifier(uri), position=types.Position(line, col))
            )
            return (time.perf_counter() - t0) * 1000, (result.contents.value if result else "")

        # Warm jedi: the first call starts the worker; wait until it answers.
        for _ in range(200):
            _, value = await hover(3, 7)
            if "jedi" in value:
                break
            await asyncio.sleep(0.1)
        out = {"hover, tensor name (facts)": [], "hover, imported name (jedi warm, new version)": [],
               "hover, imported name (jedi cache hit)": []}
        for k in range(hovers):
            out["hover, tensor name (facts)"].append((await hover(6, 7))[0])
            # A new document version: jedi must infer again (the cache is per text).
            mark = len(client.published)
            new = train + f"# edit {k}\n"
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=k + 2),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
                )
            )
            await wait_publish(client, uri, mark, version=k + 2)
            ms, value = await hover(3, 7)
            assert "jedi" in value, value
            out["hover, imported name (jedi warm, new version)"].append(ms)
            out["hover, imported name (jedi cache hit)"].append((await hover(3, 7))[0])
        return out
    finally:
        await close(client)


async def memory_case(tmp: Path, edits: int) -> tuple[float, float, float]:
    text = generate(300)
    path = tmp / "memory.py"
    path.write_text(text)
    client = await start({"debounceMs": 0, "jedi": {"enable": False}}, tmp)
    try:
        uri = path.as_uri()
        mark = open_doc(client, uri, text)
        await wait_publish(client, uri, mark, version=1)
        pid = client._server.pid
        target = next(i for i, ln in enumerate(text.split("\n")) if ln.strip().startswith("h = h * 0."))
        await edit_latencies(client, uri, text, target, 1, 0)
        after_first = rss_mb(pid)
        # Distinct texts each time (the digit cycles, a comment grows) so caches see new blocks.
        for k in range(edits - 1):
            version = k + 3
            mark = len(client.published)
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(start=types.Position(target, 0), end=types.Position(target, 0)),
                            text=f"    # {k}\n" if k % 2 == 0 else "",
                        )
                    ]
                    if k % 2 == 0
                    else [
                        types.TextDocumentContentChangePartial(
                            range=types.Range(start=types.Position(target, 0), end=types.Position(target + 1, 0)),
                            text="",
                        )
                    ],
                )
            )
            await wait_publish(client, uri, mark, version=version, timeout=300)
        return after_first, rss_mb(pid), 0.0
    finally:
        await close(client)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--memory-edits", type=int, default=1000)
    parser.add_argument("--hovers", type=int, default=30)
    parser.add_argument("--huge-lines", type=int, default=0,
                        help="also edit a file of this many lines (100000: more than 5,000 top-level blocks), 20 edits")
    parser.add_argument("--timm-edits", type=int, default=60, help="edits per case in timm's vision_transformer.py")
    parser.add_argument("--skip-timm", action="store_true", help="leave out the timm file (needs its wheel)")
    parser.add_argument("--edits-only", action="store_true",
                        help="only the 5,000-line file and timm's (no 300-line script, hover or memory)")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cpu_rows = []
        for name, lines in (("training script", 300), ("large file", 5000)):
            if args.edits_only and lines != 5000:
                continue
            label, values, cpu_ms = await latency_case(name.replace(" ", "_"), lines, args.edits, tmp)
            rows.append((f"didChange->publish minus debounce, {label}", values))
            cpu_rows.append((f"server CPU per edit, {label}", cpu_ms))
        if not args.skip_timm:
            timm_rows, analysis_rows = await timm_case(tmp, args.timm_edits, cpu_rows)
            rows += timm_rows
            rows += analysis_rows
        if args.huge_lines:
            label, values, cpu_ms = await latency_case("huge_file", args.huge_lines, min(args.edits, 20), tmp)
            rows.append((f"didChange->publish minus debounce, {label}", values))
            cpu_rows.append((f"server CPU per edit, {label}", cpu_ms))
        if not args.edits_only:
            for label, values in (await hover_case(tmp, args.hovers)).items():
                rows.append((label, values))
            first, last, _ = await memory_case(tmp, args.memory_edits)
    print()
    print(f"gradguard LSP benchmark  ({sys.executable} {' '.join(['benchmarks/bench_lsp.py', *argv])})")
    print(f"{'measurement':<88} {'n':>5} {'median ms':>10} {'p95 ms':>8}")
    for label, values in rows:
        print(f"{label:<88} {len(values):>5} {statistics.median(values):>10.1f} {pct(values, 0.95):>8.1f}")
    for label, cpu_ms in cpu_rows:
        print(f"{label + ' (mean ms)':<88} {'':>5} {cpu_ms:>10.1f}")
    if not args.edits_only:
        print(f"{'server RSS after the first edit (MB)':<88} {'':>5} {first:>10.1f}")
        print(f"{f'server RSS after {args.memory_edits} edits (MB)':<88} {'':>5} {last:>10.1f}   "
              f"(growth {last - first:+.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
