#!/usr/bin/env python3
"""The server bundled in the extension, run the way the extension runs it, on every CPython found here.

    bundle_smoke.py <bundled dir> <work dir> <python>...

For each interpreter (each must be a CPython the bundle lists in manifest.json):
  * `launch.py --probe` reports the Python version, that the bundle supports it, and no gradguard installed
    (the interpreters given here have none);
  * `launch.py server` speaks LSP over stdio: initialize reports serverInfo.version == the bundle's version;
    with `lint.run: onSave` a didChange publishes nothing and the didSave after it publishes the edited
    text's findings (GG101 on lines 3 and 4);
  * `launch.py check` finds GG101 in the sample.
Every process runs with the working directory in a workspace whose root holds a hostile `gradguard/` package
(it writes a marker file when imported), with no -P and no PYTHONSAFEPATH: the launcher itself must keep it
off sys.path. A positive control shows that `python -m gradguard` in that directory does import it.
Prints `MARK bundleRunsOn <versions>` and `MARK launcherIgnoresWorkspacePackage`; exit code 0 only if all held.
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

SAMPLE = "import torch\nw = torch.rand(3, requires_grad=True)\nw += 1\n"
EDITED = SAMPLE + "w += 1\n"


def hostile_workspace(root: Path, marker: Path) -> Path:
    """A workspace like a cloned repository that ships its own `gradguard/` package."""
    shutil.rmtree(root, ignore_errors=True)
    pkg = root / "gradguard"
    pkg.mkdir(parents=True)
    payload = f"open({str(marker)!r}, 'a').write('imported from the workspace\\n')\n"
    (pkg / "__init__.py").write_text(payload)
    (pkg / "__main__.py").write_text(payload)
    (root / "sample.py").write_text(SAMPLE)
    return root


class Lsp:
    """A minimal LSP client over a child's stdio (Content-Length framing)."""

    def __init__(self, argv, cwd, env):
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                k, v = line.decode().split(":", 1)
                headers[k.lower()] = v.strip()
            self.messages.put(json.loads(out.read(int(headers["content-length"]))))

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=60):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def wait(self, predicate, timeout):
        """The first message matching predicate; server requests are answered with null on the way."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if "method" in m and "id" in m:  # e.g. client/registerCapability, window/workDoneProgress/create
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            if predicate(m):
                return m

    def close(self):
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def diagnostics_for(uri):
    return lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri


def check_python(python, launcher, manifest, ws, env, failures):
    tag = os.path.basename(python)
    done = subprocess.run([python, launcher, "--probe"], cwd=ws, env=env, capture_output=True, text=True, timeout=60)
    try:
        probe = json.loads(done.stdout)
    except ValueError:
        failures.append(f"{python}: --probe printed {done.stdout!r}, {done.stderr[-400:]!r}")
        return None
    version = ".".join(probe["python"].split(".")[:2])
    ok = probe["bundledSupported"] and version in manifest["pythons"] and probe["environmentVersion"] is None
    print(f"[{version}] probe: {probe}")
    if not ok:
        failures.append(f"{python}: probe {probe}")
        return None

    uri = (ws / "sample.py").as_uri()
    lsp = Lsp([python, launcher, "server"], cwd=ws, env=env)
    try:
        init = lsp.request("initialize", {
            "processId": os.getpid(), "rootUri": ws.as_uri(), "capabilities": {},
            "initializationOptions": {"settings": {"lint": {"run": "onSave"}, "debounceMs": 0}},
        })
        info = (init or {}).get("result", {}).get("serverInfo", {})
        print(f"[{version}] serverInfo: {info}")
        if info.get("version") != manifest["gradguardVersion"]:
            failures.append(f"{python}: serverInfo {info}, bundle {manifest['gradguardVersion']}")
        lsp.notify("initialized", {})
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                             "text": SAMPLE}})
        first = lsp.wait(diagnostics_for(uri), 60)
        codes = sorted((d.get("code"), d["range"]["start"]["line"] + 1) for d in (first or {}).get("params", {}).get("diagnostics", []))
        print(f"[{version}] didOpen -> {codes}")
        if ("GG101", 3) not in codes:
            failures.append(f"{python}: no GG101 on line 3 after didOpen ({codes})")
        lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                              "contentChanges": [{"text": EDITED}]})
        early = lsp.wait(diagnostics_for(uri), 2)  # onSave: nothing may come (a slow machine cannot make this fail)
        if early is not None:
            failures.append(f"{python}: lint.run onSave, yet didChange published {len(early['params']['diagnostics'])} diagnostics (version {early['params'].get('version')})")
        lsp.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        saved = lsp.wait(diagnostics_for(uri), 60)
        codes = sorted((d.get("code"), d["range"]["start"]["line"] + 1) for d in (saved or {}).get("params", {}).get("diagnostics", []))
        print(f"[{version}] didChange (nothing published: {early is None}), didSave -> {codes}")
        if ("GG101", 4) not in codes:
            failures.append(f"{python}: didSave did not analyse the edited text ({codes})")
    finally:
        lsp.close()
        if lsp.proc.returncode not in (0, None):
            failures.append(f"{python}: server exit code {lsp.proc.returncode}: {b''.join(lsp.stderr)[-800:]!r}")

    check = subprocess.run([python, launcher, "check", "sample.py"], cwd=ws, env=env, capture_output=True, text=True,
                           timeout=120)
    if check.returncode != 1 or "GG101" not in check.stdout:
        failures.append(f"{python}: `launch.py check` exit {check.returncode}: {check.stdout[-400:]} {check.stderr[-400:]}")
    return version


def main(argv):
    bundled, work, pythons = Path(argv[0]).resolve(), Path(argv[1]).resolve(), argv[2:]
    manifest = json.loads((bundled / "manifest.json").read_text())
    launcher = str(bundled / "tool" / "launch.py")
    marker = work / "hostile-marker.txt"
    marker.unlink(missing_ok=True)
    ws = hostile_workspace(work / "hostile-ws", marker)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(work)  # jedi and parso caches stay in the scratch folder

    failures = []
    versions = [v for v in (check_python(p, launcher, manifest, ws, env, failures) for p in pythons) if v]
    if marker.exists():
        failures.append(f"the workspace's gradguard/ package ran: {marker.read_text()!r}")
    # Positive control: the hostile package is real (python -m from the workspace imports it).
    subprocess.run([pythons[0], "-m", "gradguard", "--version"], cwd=ws, env=env, capture_output=True, timeout=60)
    if not marker.exists():
        failures.append("control: `python -m gradguard` in the workspace did not import its gradguard/ (test is void)")
    marker.unlink(missing_ok=True)

    for f in failures:
        print("FAIL", f)
    if failures:
        return 1
    print(f"MARK bundleRunsOn {' '.join(versions)}")
    print("MARK launcherIgnoresWorkspacePackage")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
