#!/usr/bin/env bash
# Neovim headless E2E against the real gradguard server. Usage: run_nvim.sh <python> <workdir>
set -euo pipefail
PY="$1"; WD="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$WD" && mkdir -p "$WD"
cp "$HERE/../../examples/leaf_inplace.py" "$WD/"
# Keep nvim's lsp.log and shada out of $HOME.
export XDG_CACHE_HOME="$WD/.xdg/cache" XDG_STATE_HOME="$WD/.xdg/state" XDG_DATA_HOME="$WD/.xdg/data" XDG_CONFIG_HOME="$WD/.xdg/config"
cd "$WD"
GG_PYTHON="$PY" timeout 180 nvim --headless --clean -n -c "luafile $HERE/nvim_e2e.lua" leaf_inplace.py
echo "--- leaf_inplace.py on disk after the run:"; cat leaf_inplace.py
