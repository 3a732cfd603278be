#!/usr/bin/env bash
# Runs the real-client end-to-end tests:
#   1. the server bundled in the .vsix (unpacked from it), on every CPython its manifest lists (3.9-3.13; each
#      must be found here, on PATH or under ~/.pyenv), run from a workspace holding a hostile gradguard/
#      package (bundle_smoke.py);
#   2. Neovim headless against `python -m gradguard server` (the development install);
#   3. JupyterLab with jupyterlab-lsp + headless Chromium: a notebook's two-cell bug, its hover, pylsp beside it
#      (jupyterlab_e2e.js; `make jupyter-setup` installs gradguard[jupyter] and python-lsp-server into $PY's venv);
#   4. the VS Code extension inside code-server + headless Chromium, whose interpreter is a fresh venv
#      without gradguard (the bundled server does the work), then importStrategy fromEnvironment, a venv of
#      the oldest supported CPython, lint.run onSave, gradguard.path, showNotifications.
# Usage: run.sh <python with gradguard> <code-server launcher> <vsix>      (make e2e installs all three)
set -uo pipefail
PY="${1:?python}"; CODE_SERVER="${2:?code-server}"; VSIX="${3:?vsix}"
HERE="$(cd "$(dirname "$0")" && pwd)"
ART="$HERE/artifacts"
mkdir -p "$ART"
rc=0

echo "== e2e: the bundled server of $(basename "$VSIX")"
rm -rf "$ART/vsix" && mkdir -p "$ART/vsix"
(cd "$ART/vsix" && unzip -q "$VSIX" 'extension/bundled/*')
# Every CPython the bundle claims (its manifest), each a real executable without gradguard of its own.
CLAIMED="$("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["pythons"]))' "$ART/vsix/extension/bundled/manifest.json")"
SMOKE_PYTHONS=()
for v in $CLAIMED; do
  for cand in "$(command -v "python$v" || true)" "$HOME"/.pyenv/versions/"$v".*/bin/python; do
    [ -x "$cand" ] || continue
    (cd / && "$cand" -c 'import gradguard' >/dev/null 2>&1) && continue   # must have no gradguard of its own
    real="$(cd / && "$cand" -c 'import sys; print(sys.executable)' 2>/dev/null)" || continue  # not a pyenv shim
    [ -x "$real" ] && { SMOKE_PYTHONS+=("$real"); break; }
  done
done
echo "claimed: $CLAIMED; interpreters: ${SMOKE_PYTHONS[*]:-none}"
if [ ${#SMOKE_PYTHONS[@]} -eq 0 ] || ! "$PY" "$HERE/bundle_smoke.py" "$ART/vsix/extension/bundled" "$ART/bundle-smoke" \
     "${SMOKE_PYTHONS[@]}" 2>&1 | tee "$ART/bundle-smoke.log"; then rc=1; fi
grep -q '^MARK launcherIgnoresWorkspacePackage' "$ART/bundle-smoke.log" || rc=1

# The VS Code run's interpreters: fresh venvs with no gradguard (and no pip: nothing gets installed into them),
# one of the development Python and one of the oldest CPython the bundle claims.
rm -rf "$ART/bare-venv" && "$PY" -m venv --without-pip "$ART/bare-venv"
rm -rf "$ART/oldest-venv" && "${SMOKE_PYTHONS[0]:-false}" -m venv --without-pip "$ART/oldest-venv" || rc=1

echo "== e2e: Neovim $(nvim --version | head -1 | cut -d' ' -f2) headless"
if "$HERE/run_nvim.sh" "$PY" "$ART/nvim-work" 2>&1 | tee "$ART/nvim.log"; then :; else rc=1; fi
grep -q '\] PASS$' "$ART/nvim.log" || rc=1

echo "== e2e: JupyterLab + jupyterlab-lsp + Chromium (gradguard in front of pylsp)"
PYTHON="$PY" WORK="$ART/jupyterlab-work" SHOTS="$ART" timeout 300 node "$HERE/jupyterlab_e2e.js" 2>&1 | tee "$ART/jupyterlab.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
echo "== e2e: JupyterLab + jupyterlab-lsp + Chromium (gradguard alone: GRADGUARD_JUPYTER_SERVER=none)"
ALONE=1 PYTHON="$PY" WORK="$ART/jupyterlab-alone-work" SHOTS="$ART/jupyterlab-alone" timeout 300 \
  node "$HERE/jupyterlab_e2e.js" 2>&1 | tee "$ART/jupyterlab-alone.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1

echo "== e2e: VS Code (code-server $("$CODE_SERVER" --version 2>/dev/null | head -1 | cut -d' ' -f1)) + Chromium"
CODE_SERVER="$CODE_SERVER" VSIX="$VSIX" PYTHON="$ART/bare-venv/bin/python" ENV_PYTHON="$PY" \
  OLDEST_PYTHON="$ART/oldest-venv/bin/python" WORK="$ART/vscode-work" SHOTS="$ART" \
  README_SHOT="$ART/hover.png" timeout 900 node "$HERE/vscode_e2e.js" 2>&1 | tee "$ART/vscode.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1

echo "== e2e summary"
echo "bundle: $(grep '^MARK bundleRunsOn' "$ART/bundle-smoke.log" || echo FAIL)"
echo "neovim: $(grep -q '\] PASS$' "$ART/nvim.log" && echo PASS || echo FAIL)  $(grep -o 'first diagnostic after [0-9]* ms' "$ART/nvim.log")"
echo "jupyterlab: $(grep '^RESULT' "$ART/jupyterlab.log" || echo 'no RESULT line')"
echo "jupyterlab alone: $(grep '^RESULT' "$ART/jupyterlab-alone.log" || echo 'no RESULT line')"
echo "vscode: $(grep '^RESULT' "$ART/vscode.log" || echo 'no RESULT line')"
echo "screenshots: $ART"
exit $rc
