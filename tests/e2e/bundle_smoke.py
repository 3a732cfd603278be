#!/usr/bin/env python3
"""The server bundled in the extension, run the way the extension runs it, on every CPython the bundle claims.

    <python with gradguard> bundle_smoke.py <bundled dir> <work dir> <python>...

Every CPython of the bundle's manifest.json must be among the interpreters given (none of them has gradguard).
For each, a project venv is made from it (no pip, no gradguard; its site-packages holds one module of the
project's own, `project_helpers.py`), and with the venv's python:
  * `launch.py --probe` reports the Python version, that the bundle supports it, and no gradguard installed;
  * `launch.py server` speaks LSP over stdio: initialize reports serverInfo.version == the bundle's version;
    with `lint.run: onSave` a didChange publishes nothing and the didSave after it publishes the edited
    text's findings (GG101 on lines 3 and 4); the hover on `w` explains the leaf; the hover on a function of
    `project_helpers` comes from the bundled jedi, which found it in the venv (the user's environment);
  * `launch.py check --format json` over examples/ and every rule's examples prints exactly what the
    development install (the python running this script) prints: the same findings on every CPython.
Every process runs with the working directory in a workspace whose root holds a hostile `gradguard/` package
(it writes a marker file when imported), with no -P and no PYTHONSAFEPATH: the launcher itself must keep it
off sys.path. A positive control shows that `python -m gradguard` in that directory does import it.
Prints `MARK bundleRunsOn <versions>`, `MARK bundleFindingsSameOnEveryPython`, `MARK jediResolvesInUserEnvironment`
and `MARK launcherIgnoresWorkspacePackage`; exit code 0 only if all held.
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
# A module of the user's environment (the venv's site-packages), not of the workspace or the bundle.
PROJECT_HELPERS = "import os\n\n\ndef scale_learning_rate(lr, world_size):\n    return lr * world_size\n"
JEDI_SAMPLE = "import project_helpers\n\nlr = project_helpers.scale_learning_rate(0.1, 8)\n"
REPO = Path(__file__).resolve().parents[2]
# Checked on every CPython and compared with the development install: the product's programs and every
# rule's bad and good examples.
CONSISTENCY_PATHS = [REPO / "examples", REPO / "server" / "gradguard" / "rules" / "examples"]


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


def project_venv(base_python, root: Path) -> str:
    """A project environment made from `base_python`: no pip, no gradguard, one module of its own."""
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = str(root / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(site, "project_helpers.py").write_text(PROJECT_HELPERS)
    return python


def check_output(python, argv, cwd, env):
    """`gradguard check --format json` findings, with file names relative to the repository."""
    done = subprocess.run([python, *argv, "check", "--format", "json", "--isolated", "--no-cache",
                           *map(str, CONSISTENCY_PATHS)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    try:
        findings = json.loads(done.stdout)
    except ValueError:
        return None, f"exit {done.returncode}: {done.stdout[-300:]} {done.stderr[-600:]}"
    for f in findings:
        f["filename"] = os.path.relpath(os.path.join(cwd, f["filename"]), REPO)
    return sorted(findings, key=lambda f: json.dumps(f, sort_keys=True)), None


def hover_text(lsp, uri, line, character, attempts=10):
    """The hover's Markdown (jedi answers within its time budget once warm: a miss is retried)."""
    for _ in range(attempts):
        answer = lsp.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                     "position": {"line": line, "character": character}})
        result = (answer or {}).get("result")
        if result:
            contents = result["contents"]
            return contents["value"] if isinstance(contents, dict) else str(contents)
        time.sleep(1)
    return ""


def check_python(python, launcher, manifest, ws, env, failures, reference):
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
        leaf = hover_text(lsp, uri, 2, 0)
        print(f"[{version}] hover on w: {leaf[:100]!r}")
        if "leaf" not in leaf:
            failures.append(f"{python}: the hover on `w += 1` does not explain the leaf: {leaf!r}")
        jedi_uri = (ws / "uses_helpers.py").as_uri()
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": jedi_uri, "languageId": "python", "version": 1,
                                                             "text": JEDI_SAMPLE}})
        lsp.wait(diagnostics_for(jedi_uri), 60)
        helper = hover_text(lsp, jedi_uri, 2, JEDI_SAMPLE.splitlines()[2].index("scale_learning_rate") + 2)
        print(f"[{version}] hover on project_helpers.scale_learning_rate: {helper!r}")
        if "project_helpers.scale_learning_rate" not in helper or "`project_helpers.py` line 4" not in helper:
            failures.append(f"{python}: jedi did not resolve project_helpers in the venv: {helper!r}")
    finally:
        lsp.close()
        if lsp.proc.returncode not in (0, None):
            failures.append(f"{python}: server exit code {lsp.proc.returncode}: {b''.join(lsp.stderr)[-800:]!r}")

    findings, error = check_output(python, [launcher], ws, env)
    if error:
        failures.append(f"{python}: `launch.py check` {error}")
    elif findings != reference:
        got = {(f["filename"], f["code"], f["location"]["row"]) for f in findings}
        want = {(f["filename"], f["code"], f["location"]["row"]) for f in reference}
        failures.append(f"{python}: `launch.py check` differs from the development install: only here "
                        f"{sorted(got - want)[:5]}, only there {sorted(want - got)[:5]} (or messages/fixes differ)")
    else:
        print(f"[{version}] check: {len(findings)} findings, the same as the development install")
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
    # (from the repository root: `-m gradguard` in the hostile workspace would import its package)
    reference, error = check_output(sys.executable, ["-m", "gradguard"], REPO, env)
    if error or not reference:
        print(f"FAIL the development install's `gradguard check`: {error or 'no findings'}")
        return 1
    print(f"development install: {len(reference)} findings in {', '.join(str(p.relative_to(REPO)) for p in CONSISTENCY_PATHS)}")
    versions = []
    for i, base in enumerate(pythons):
        venv = project_venv(base, work / f"venv-{i}")
        versions.append(check_python(venv, launcher, manifest, ws, env, failures, reference))
    versions = [v for v in versions if v]
    missing = [v for v in manifest["pythons"] if v not in versions]
    if missing:
        failures.append(f"the bundle claims CPython {', '.join(manifest['pythons'])}; not run on {', '.join(missing)}")
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
    print("MARK bundleFindingsSameOnEveryPython")
    print("MARK jediResolvesInUserEnvironment")
    print("MARK launcherIgnoresWorkspacePackage")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
