#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, idempotently, from Debian packages and the
# npm registry only: Chromium, build tools, code-server 4.100.3 (VS Code 1.100.3, the last
# release that runs on Node 20) and the extension's own npm dependencies.
#
# Usage: bash vscode-extension/scripts/e2e-setup.sh
#   TIRKIT_E2E_HOME  where code-server goes (default: ~/.cache/tirkit-e2e)
# Prints the code-server folder on its last line.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
HOME_DIR="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
E2E_HOME="${TIRKIT_E2E_HOME:-$HOME_DIR/.cache/tirkit-e2e}"
CS_VERSION=4.100.3
CS_DIR="$E2E_HOME/code-server-$CS_VERSION"
T0=$(date +%s)

need_apt=()
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v g++ >/dev/null || need_apt+=(g++)
command -v make >/dev/null || need_apt+=(make)
[ -f /usr/include/krb5.h ] || need_apt+=(libkrb5-dev)
[ -f /usr/include/node/node.h ] || need_apt+=(libnode-dev)
command -v unshare >/dev/null || need_apt+=(util-linux)
command -v ip >/dev/null || need_apt+=(iproute2)
if [ ${#need_apt[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The extension's build and test dependencies (typescript, vsce, playwright-core, ...).
if [ ! -d "$HERE/node_modules/playwright-core" ] || [ "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]; then
  (cd "$HERE" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
fi

# code-server: installed without install scripts (they download ripgrep and prebuilt native
# modules from outside the registry); the native modules are built from source against the
# system's Node headers, and Debian's rg stands in for @vscode/ripgrep.
ENTRY="$CS_DIR/node_modules/code-server/out/node/entry.js"
if [ ! -f "$CS_DIR/.complete" ]; then
  export npm_config_nodedir=/usr
  mkdir -p "$CS_DIR"
  cd "$CS_DIR"
  [ -f package.json ] || npm init -y >/dev/null
  npm install --prefer-offline --ignore-scripts --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION"
  npm rebuild argon2 >/dev/null
  cd node_modules/code-server/lib/vscode
  npm install --prefer-offline --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=error
  npm rebuild @parcel/watcher @vscode/spdlog native-watchdog kerberos @vscode/deviceid >/dev/null
  npm rebuild node-pty >/dev/null 2>&1 || true   # a post-build helper step fails; pty.node is built
  test -f node_modules/node-pty/build/Release/pty.node
  mkdir -p node_modules/@vscode/ripgrep/bin
  ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  ln -sfn node_modules node_modules.asar
  (cd bin/remote-cli && ln -sf code-linux.sh code-server)
  (cd bin/helpers && ln -sf browser-linux.sh browser.sh)
  (cd extensions && npm install --prefer-offline --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=error)
  node "$ENTRY" --version >/dev/null
  touch "$CS_DIR/.complete"
fi
echo "e2e set-up done in $(( $(date +%s) - T0 ))s" >&2
echo "$CS_DIR"
