"""The long language-server soak: thousands of random edits over stdio, with hovers, code actions and
cancellations in between (the same driver as tests/test_soak_server.py, which runs ~200 edits).

    python benchmarks/soak_server.py --edits 5000 --seed 1

First opens every hostile shape of tests/hostile_inputs.py at the size that crashed the server before the
depth guard (issue 14) and checks that each is published with its "not analysed" note and the finding after it.
Prints edits survived, requests answered, publishes, and the server's RSS (VmRSS) at start and end.
Exits non-zero if the server died, left a request unanswered, published an older version after a
newer one, ended with diagnostics that differ from the engine's, or grew by more than --max-growth-mb.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from hostile_inputs import CRASH_SIZES, FLAT, FOLLOWER_FINDING, program  # noqa: E402
from lsp_fixtures.harness import fresh_uri, init_params, make_client, open_doc, server_command, wait_publish  # noqa: E402
from test_soak_server import rss_kb, server_alive, server_pid, soak  # noqa: E402
from lsprotocol import types  # noqa: E402


async def hostile_round(client) -> None:
    """Every hostile shape at its crash size: survived, noted, and the rest analysed."""
    for shape, n in CRASH_SIZES.items():
        uri = fresh_uri(shape)
        mark = open_doc(client, uri, program(shape, n))
        published = await wait_publish(client, uri, mark, version=1, timeout=120)
        codes = [d.code for d in published.diagnostics if d.code]
        notes = [d.message for d in published.diagnostics if not d.code]
        if FOLLOWER_FINDING not in codes or (shape not in FLAT and not any("not analysed" in m for m in notes)):
            raise AssertionError(f"hostile shape {shape}: findings {codes}, notes {notes}")
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    assert server_alive(client), "the server died on a hostile shape"
    print(f"hostile: {len(CRASH_SIZES)} shapes at their crash sizes survived, each noted with the rest analysed; "
          f"RSS {rss_kb(server_pid(client)) / 1024:.1f} MB", flush=True)


async def run(edits: int, seed: int, rounds: int, max_growth_mb: float) -> int:
    client = make_client()
    command = server_command()
    await client.start_io(command[0], *command[1:])
    await client.initialize_session(init_params())
    status = 0
    figures = []
    try:
        await hostile_round(client)
        for round_no in range(rounds):
            print(f"round {round_no + 1}/{rounds}: {edits} edits, seed {seed + round_no}", flush=True)
            result = await soak(client, edits, seed + round_no, log=lambda m: print(m, flush=True))
            figures.append(result)
            print("  " + result.line(), flush=True)
    except AssertionError as exc:
        print(f"FAILED: {exc}", flush=True)
        status = 1
    finally:
        if server_alive(client):
            await asyncio.wait_for(client.shutdown_session(), 30)
        await client.stop()
    if figures:
        first, last = figures[0].rss_kb[0], figures[-1].rss_kb[-1]
        total_edits = sum(f.edits for f in figures)
        answered = sum(f.answered for f in figures)
        requests = sum(f.requests for f in figures)
        print(f"soak: {total_edits} edits survived; {answered}/{requests} requests answered "
              f"({sum(f.errors for f in figures)} errors, {sum(f.cancels_sent for f in figures)} cancels sent); "
              f"{sum(f.publishes for f in figures)} publishes; RSS {first / 1024:.1f} MB at start, "
              f"{last / 1024:.1f} MB at end; {sum(f.seconds for f in figures):.0f} s")
        if (last - first) / 1024 > max_growth_mb:
            print(f"FAILED: RSS grew by {(last - first) / 1024:.1f} MB (> {max_growth_mb} MB)")
            status = 1
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=5000, help="edits per round (one document per round)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-growth-mb", type=float, default=100.0)
    args = parser.parse_args()
    return asyncio.run(run(args.edits, args.seed, args.rounds, args.max_growth_mb))


if __name__ == "__main__":
    sys.exit(main())
