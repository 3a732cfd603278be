"""The long language-server soak: thousands of random edits over stdio, with hovers, code actions and
cancellations in between (the same driver as tests/test_soak_server.py, which runs ~200 edits).

    python benchmarks/soak_server.py --edits 5000 --seed 1

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

from lsp_fixtures.harness import init_params, make_client, server_command  # noqa: E402
from test_soak_server import server_alive, soak  # noqa: E402


async def run(edits: int, seed: int, rounds: int, max_growth_mb: float) -> int:
    client = make_client()
    command = server_command()
    await client.start_io(command[0], *command[1:])
    await client.initialize_session(init_params())
    status = 0
    figures = []
    try:
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
