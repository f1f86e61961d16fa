#!/usr/bin/env bash
# Create bench/.venv-peers once: toolwire (editable) plus the peers in requirements-peers.txt.
# Reinstalls only when requirements-peers.txt or pyproject.toml change (a stamp holds their hash).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
VENV=bench/.venv-peers
STAMP="$VENV/.installed"
WANT="$(cat bench/micro/requirements-peers.txt pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e .
# A peer that fails to install must not stop the benchmark: its rows then say "n/a", and the
# stamp is not written, so the next run tries again.
complete=1
if ! "$VENV/bin/python" -m pip install -q -r bench/micro/requirements-peers.txt; then
    echo "bench: installing all peers at once failed; trying them one by one" >&2
    set -f  # requirement specs hold [extras] and <, >: no globbing
    for req in $(grep -v '^[[:space:]]*#' bench/micro/requirements-peers.txt); do
        "$VENV/bin/python" -m pip install -q "$req" || { echo "bench: could not install $req" >&2; complete=0; }
    done
    set +f
fi
if [ "$complete" = 1 ]; then
    echo "$WANT" > "$STAMP"
fi
