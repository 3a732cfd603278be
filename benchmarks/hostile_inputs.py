"""Hostile inputs through the engine, one child process each: wall time, peak RSS and outcome.

    python benchmarks/hostile_inputs.py [--mem-gb 4] [--timeout 60] [--shape NAME ...] [--scale 1.0]

Each shape of tests/hostile_inputs.py, at the size that crashed or exhausted the process before the guard,
is checked by `Engine().check()` on a worker thread (as the server runs it) in a child limited to --mem-gb of address space and --timeout seconds.
Outcome: "ok" with the finding after the hostile block reported or not, and the "not analysed" notes;
"SIGSEGV" (libcst's native parser overflowed the stack), "out of memory", or "timeout". Prints a markdown
table (input, size, outcome, seconds, peak MB).

    python benchmarks/hostile_inputs.py --linear

The linear paths instead, through the real server over stdio (`python -m gradguard server`, raw JSON-RPC):
2,000 writes on one line (time to its publish, and to the publish of a small file opened right after it), one
edit in a 100,002-line file, a finding beside a 200 KB literal, one didChange with 5,000 edits (time to the
next answered request and to the publish), and `shutdown` + `exit`, or a closed stdin, in the middle of a long
analysis (exit status and time). Server CPU seconds (from /proc) are printed beside wall times: on a shared
machine they are the steadier figure.
"""
from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from hostile_inputs import CRASH_SIZES, FOLLOWER_FINDING, program  # noqa: E402

# As the language server runs it: on a worker thread (its C stack is where libcst overflowed).
CHILD = r"""
import concurrent.futures, json, resource, sys, time
from gradguard.engine import Engine
text = sys.stdin.read()
t = time.perf_counter()
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    report = pool.submit(Engine().check, text, "hostile.py").result()
print(json.dumps({
    "seconds": time.perf_counter() - t,
    "codes": [f.code for f in report.findings],
    "notes": [n.message for n in report.parse_notes],
    "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


def run_one(text: str, mem_gb: float, timeout: float) -> dict:
    limit = int(mem_gb * 1024**3)

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD], input=text.encode(), capture_output=True,
                              timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        return {"outcome": f"timeout (> {timeout:.0f} s)", "seconds": timeout, "peak_mb": None}
    wall = time.perf_counter() - started
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        return {"outcome": name, "seconds": wall, "peak_mb": None}
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        if "MemoryError" in tail[0]:
            return {"outcome": f"out of memory (> {mem_gb:g} GB)", "seconds": wall, "peak_mb": None}
        return {"outcome": f"exit {proc.returncode}: {tail[0][:60]}", "seconds": wall, "peak_mb": None}
    result = json.loads(proc.stdout)
    found = FOLLOWER_FINDING in result["codes"]
    note = next((n for n in result["notes"]), None)
    outcome = ("rest analysed" if found else "findings lost") + (f"; note: {note[:70]}" if note else "; no note")
    return {"outcome": outcome, "seconds": result["seconds"], "peak_mb": result["peak_kb"] / 1024}


class RawServer:
    """The server over stdio, driven by raw JSON-RPC (no client library between the timer and the server)."""

    def __init__(self) -> None:
        import os
        import select  # noqa: F401 (used in receive)

        self.proc = subprocess.Popen([sys.executable, "-m", "gradguard", "server"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=os.path.dirname(__file__))
        self.buffer = b""
        self.next_id = 0

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self, timeout: float) -> dict:
        import os
        import re
        import select

        deadline = time.monotonic() + timeout
        while True:
            header, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = int(re.search(rb"(?i)content-length:\s*(\d+)", header).group(1))
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    message = json.loads(rest[:length])
                    if "method" in message and "id" in message:  # a request of the server: answer it
                        self.send({"id": message["id"], "result": None})
                    return message
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no message from the server")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("the server closed its output")
            self.buffer += chunk

    def request(self, method: str, params, timeout: float = 600) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive(timeout)
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def publish(self, uri: str, version: int, timeout: float = 600) -> dict:
        while True:
            message = self.receive(timeout)
            params = message.get("params") or {}
            if message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri \
                    and params.get("version") == version:
                return params

    def start(self, root: str) -> None:
        self.request("initialize", {"processId": None, "rootUri": root, "capabilities": {}})
        self.send({"method": "initialized", "params": {}})

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}}})

    def change(self, uri: str, version: int, changes: list) -> None:
        self.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": changes}})

    def stop(self) -> int | None:
        try:
            self.request("shutdown", None, 60)
            self.send({"method": "exit"})
            return self.proc.wait(30)
        except Exception:
            self.proc.kill()
            return None


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) the process has used: steadier than wall time on a shared machine."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _edit(line: int, col: int, text: str, end: tuple[int, int] | None = None) -> dict:
    end_line, end_col = end or (line, col)
    return {"range": {"start": {"line": line, "character": col}, "end": {"line": end_line, "character": end_col}},
            "text": text}


def linear(root: Path) -> list[tuple[str, str]]:
    """The linear paths through the server: (input, figure) rows."""
    rows = []
    base = root.resolve().as_uri()
    leaf = "import torch\nw = torch.zeros(3, requires_grad=True)\n"
    big = "import torch\n\n" + "".join(f"def f{i}(x):\n    x.add_(1)\n    return x * {i}\n\n" for i in range(25000))

    server = RawServer()
    server.start(base)
    for n in (1000, 2000):
        uri, small = f"{base}/writes_{n}.py", f"{base}/small_{n}.py"
        started, cpu = time.perf_counter(), _cpu(server.proc.pid)
        server.open(uri, leaf + "; ".join(["w.add_(1)"] * n) + "\n")
        server.open(small, leaf + "w += 1\n")
        found = len(server.publish(uri, 1)["diagnostics"])
        done = time.perf_counter() - started
        server.publish(small, 1)
        waited = time.perf_counter() - started
        rows.append((f"{n:,} `w.add_(1)` on one line ({found:,} findings)",
                     f"published in {done:.1f} s (server CPU {_cpu(server.proc.pid) - cpu:.1f} s); a file opened "
                     f"right after it published at {waited:.1f} s"))

    uri = f"{base}/big.py"
    started = time.perf_counter()
    server.open(uri, big)
    server.publish(uri, 1)
    first = time.perf_counter() - started
    times, cpus = [], []
    for version in range(2, 6):
        started, cpu = time.perf_counter(), _cpu(server.proc.pid)
        server.change(uri, version, [_edit(50001, 4, f"y = {version}\n    ")])
        server.publish(uri, version)
        times.append(time.perf_counter() - started)
        cpus.append(_cpu(server.proc.pid) - cpu)
    rows.append(("one edit in a 100,002-line file of 25,001 blocks",
                 f"first analysis {first:.1f} s; then {min(times):.1f}-{max(times):.1f} s per edit to its publish "
                 f"(debounce included; server CPU {min(cpus):.1f}-{max(cpus):.1f} s)"))

    uri = f"{base}/literal.py"
    started, cpu = time.perf_counter(), _cpu(server.proc.pid)
    server.open(uri, leaf + "data = [" + ", ".join(str(i) for i in range(30000)) + "]\nw += 1\n")
    server.publish(uri, 1)
    rows.append(("`w += 1` two lines below a 200 KB list literal (GG101 names the line that made `w`)",
                 f"published in {time.perf_counter() - started:.1f} s (server CPU {_cpu(server.proc.pid) - cpu:.1f} s)"))

    uri = f"{base}/replace_all.py"
    server.open(uri, leaf + "".join(f"x{i} = {i}\n" for i in range(5000)) + "w += 1\n")
    server.publish(uri, 1)
    started, cpu = time.perf_counter(), _cpu(server.proc.pid)
    server.change(uri, 2, [_edit(2 + i, 0, "renamed_", (2 + i, 1)) for i in range(5000)])
    server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 5002, "character": 0}})
    answered = time.perf_counter() - started
    server.publish(uri, 2)
    rows.append(("one didChange with 5,000 edits on a 5,003-line document",
                 f"next request answered after {answered:.2f} s; published after {time.perf_counter() - started:.1f} s "
                 f"(server CPU {_cpu(server.proc.pid) - cpu:.1f} s)"))
    peak = next((int(line.split()[1]) for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines()
                 if line.startswith("VmHWM")), 0)
    status = server.stop()
    rows.append(("the server after all of the above", f"peak RSS {peak / 1024:.0f} MB; shutdown + exit: status {status}"))

    def leave_during_analysis(how, leave) -> None:
        """Start an analysis of the 100,002-line file, let the client leave 2 s in, time how the server ends."""
        server = RawServer()
        server.start(base)
        server.open(f"{base}/long.py", big)
        time.sleep(2)
        started = time.perf_counter()
        leave(server)
        try:
            status = server.proc.wait(60)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            status = "still running after 60 s"
        rows.append((f"{how} 2 s into a 100,002-line analysis",
                     f"exit status {status} after {time.perf_counter() - started:.2f} s"))

    def shutdown_and_exit(server) -> None:
        server.request("shutdown", None)
        server.send({"method": "exit"})

    leave_during_analysis("`shutdown` + `exit`", shutdown_and_exit)
    leave_during_analysis("the client closes stdin", lambda server: server.proc.stdin.close())  # no shutdown, no exit
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mem-gb", type=float, default=4)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--shape", action="append", help="only these shapes")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--linear", action="store_true", help="the linear paths through the server instead")
    args = parser.parse_args()
    if args.linear:
        import tempfile

        with tempfile.TemporaryDirectory() as root:
            print("| input | figure |\n| --- | --- |", flush=True)
            for name, figure in linear(Path(root)):
                print(f"| {name} | {figure} |", flush=True)
        return 0
    shapes = args.shape or list(CRASH_SIZES)
    rows = []
    print("| input | size | outcome | s | peak MB |\n| --- | ---: | --- | ---: | ---: |", flush=True)
    for shape in shapes:
        n = max(1, int(CRASH_SIZES[shape] * args.scale))
        text = program(shape, n)
        result = run_one(text, args.mem_gb, args.timeout)
        rows.append({"shape": shape, "n": n, "bytes": len(text.encode()), **result})
        peak = f"{result['peak_mb']:.0f}" if result["peak_mb"] is not None else "–"
        print(f"| {shape} | {n:,} | {result['outcome']} | {result['seconds']:.1f} | {peak} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
