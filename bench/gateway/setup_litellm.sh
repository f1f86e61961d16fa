#!/usr/bin/env bash
# Create bench/.litellm-venv once with LiteLLM's proxy (`litellm[proxy]`), for bench/gateway/vs_litellm.py.
# LiteLLM's proxy runs in its own process from its own venv: it never enters the project's .venv
# nor bench/.venv-peers. Reinstalls only when this script changes (a stamp holds its hash).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
VENV=bench/.litellm-venv
STAMP="$VENV/.installed"
WANT="$(sha256sum bench/gateway/setup_litellm.sh | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q 'litellm[proxy]'
echo "$WANT" > "$STAMP"
