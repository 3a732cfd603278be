"""What every VSIX is packaged with (issue 33, item 12): vsce's secret scan on, and the licences of the npm
packages the minified bundle is made of. `make -n` shows the packaging commands without running them."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLIENT = REPO / "client-vscode"


def planned_vsce_commands() -> list[str]:
    done = subprocess.run(["make", "-n", "-B", "--no-print-directory", "vsix-all"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if "vsce package" in line]


def test_every_vsix_is_packaged_with_the_secret_scan_on():
    commands = planned_vsce_commands()
    assert len(commands) == 5
    script = json.loads((CLIENT / "package.json").read_text())["scripts"]["package"]
    for command in [*commands, script]:
        assert "vsce package" in command and "--allow-package-all-secrets" not in command, command
        assert "--allow-package-secrets" not in command, command


def test_the_vsix_ships_the_third_party_notices_that_esbuild_writes():
    shipped = [line.strip() for line in (CLIENT / ".vscodeignore").read_text().splitlines()
               if line.startswith("!")]
    assert "!dist/THIRD_PARTY_NOTICES.txt" in shipped and "!dist/extension.js" in shipped
    build = (CLIENT / "esbuild.mjs").read_text()
    assert "metafile: true" in build and "const NOTICES = 'dist/THIRD_PARTY_NOTICES.txt';" in build
