#!/usr/bin/env bash
# Runs both real-client end-to-end tests against `python -m gradguard server`:
# Neovim headless, then the VS Code extension inside code-server + headless Chromium.
# Usage: run.sh <python> <code-server launcher> <vsix>      (make e2e installs all three)
set -uo pipefail
PY="${1:?python}"; CODE_SERVER="${2:?code-server}"; VSIX="${3:?vsix}"
HERE="$(cd "$(dirname "$0")" && pwd)"
ART="$HERE/artifacts"
mkdir -p "$ART"
rc=0

echo "== e2e: Neovim $(nvim --version | head -1 | cut -d' ' -f2) headless"
if "$HERE/run_nvim.sh" "$PY" "$ART/nvim-work" 2>&1 | tee "$ART/nvim.log"; then :; else rc=1; fi
grep -q '\] PASS$' "$ART/nvim.log" || rc=1

echo "== e2e: VS Code (code-server $("$CODE_SERVER" --version 2>/dev/null | head -1 | cut -d' ' -f1)) + Chromium"
CODE_SERVER="$CODE_SERVER" VSIX="$VSIX" PYTHON="$PY" WORK="$ART/vscode-work" SHOTS="$ART" \
  README_SHOT="$ART/hover.png" timeout 900 node "$HERE/vscode_e2e.js" 2>&1 | tee "$ART/vscode.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1

echo "== e2e summary"
echo "neovim: $(grep -q '\] PASS$' "$ART/nvim.log" && echo PASS || echo FAIL)  $(grep -o 'first diagnostic after [0-9]* ms' "$ART/nvim.log")"
echo "vscode: $(grep '^RESULT' "$ART/vscode.log" || echo 'no RESULT line')"
echo "screenshots: $ART"
exit $rc
