#!/usr/bin/env bash
# Install code-server from the npm registry without GitHub or Microsoft downloads (idempotent).
# Usage: install-code-server.sh <dir>      ->  <dir>/node_modules/.bin/code-server
# Needs Node 20, npm, a C/C++ toolchain, and the Debian packages libkrb5-dev pkg-config ripgrep.
# Recipe and pitfalls: ../shared/real-client/README.md (section A.2).
set -euo pipefail
DEST="${1:?usage: install-code-server.sh <dir>}"
CS_VERSION="${CS_VERSION:-4.100.3}"   # the last code-server whose engines.node is 20 (VS Code 1.100.3)
STAMP="$DEST/.installed-$CS_VERSION"
if [ -f "$STAMP" ] && "$DEST/node_modules/.bin/code-server" --version >/dev/null 2>&1; then
  echo "code-server $CS_VERSION already installed in $DEST"; exit 0
fi
command -v rg >/dev/null || { echo "ripgrep (rg) is missing: apt-get install ripgrep" >&2; exit 1; }

rm -rf "$DEST" && mkdir -p "$DEST" && cd "$DEST"
npm init -y >/dev/null
# 1. Fetch without running the postinstall: it downloads ripgrep and argon2 prebuilts from GitHub and
#    refuses to run as root.
npm install --ignore-scripts --no-audit --no-fund "code-server@${CS_VERSION}"

export npm_config_nodedir=/usr        # node-gyp: use /usr/include/node instead of downloading headers
export npm_config_unsafe_perm=true    # the postinstall asks for --unsafe-perm as root; npm 11 reads the env var
export npm_config_yes=true            # node-pty's postinstall runs `npx node-gyp ...`

# 2. What code-server's postinstall.sh does, step by step.
cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg   # its postinstall skips the download when bin/ exists
npm rebuild --foreground-scripts                              # spdlog, node-pty, kerberos, watchdog, deviceid
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sfn code-linux.sh code-server)
(cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --ignore-scripts --no-audit --no-fund)
cd "$DEST"
npm rebuild argon2 --foreground-scripts   # the GitHub prebuilt is unreachable, so it compiles from source

# npm may skip install scripts silently; check that the native modules really exist.
VS=node_modules/code-server/lib/vscode/node_modules
for f in "$VS/node-pty/build/Release/pty.node" "$VS/@vscode/spdlog/build/Release/spdlog.node"; do
  [ -f "$f" ] || { echo "missing native module $f" >&2; exit 1; }
done
node_modules/.bin/code-server --version
touch "$STAMP"
