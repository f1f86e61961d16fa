#!/usr/bin/env bash
# Install the Portkey AI gateway (`@portkey-ai/gateway` from npm) into bench/gateway/.portkey once,
# for bench/gateway/vs_litellm.py. It lives in the bench's own folder (git-ignored) and runs as its
# own Node.js process; nothing enters the project's .venv. Reinstalls only when this script changes.
# Without npm the bench runs on and reports Portkey as not installed.
set -euo pipefail
cd "$(dirname "$0")"
VERSION=1.15.2
DIR=.portkey
STAMP="$DIR/.installed"
WANT="$(sha256sum setup_portkey.sh | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "setup_portkey.sh: npm is not installed; the gateway bench runs without Portkey" >&2
    exit 0
fi
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "@portkey-ai/gateway@$VERSION"
echo "$WANT" > "$STAMP"
