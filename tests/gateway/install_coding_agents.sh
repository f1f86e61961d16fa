#!/bin/sh
# Install the real coding agents (Claude Code, Codex CLI, Gemini CLI) from the npm registry into
# .cache/coding-agents (gitignored), for tests/gateway/test_coding_agents.py, which drives
# them through the gateway. Safe to run again: npm skips what is already there.
# Usage: tests/gateway/install_coding_agents.sh   (versions pinned below; override with
# CLAUDE_CODE_VERSION / CODEX_VERSION / GEMINI_CLI_VERSION)
set -eu
CLAUDE="@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION:-2.1.331}"
CODEX="@openai/codex@${CODEX_VERSION:-0.169.0}"
GEMINI="@google/gemini-cli@${GEMINI_CLI_VERSION:-0.61.0}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DEST="$ROOT/.cache/coding-agents"
if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: skipping the coding agents (tests/gateway/test_coding_agents.py will be skipped)."
    exit 0
fi
mkdir -p "$DEST"
echo "Installing $CLAUDE, $CODEX and $GEMINI into $DEST ..."
# A registry that cannot be reached must not fail the suite: the coding-agent tests then skip, and say why.
if ! npm install --prefix "$DEST" --no-audit --no-fund --no-save --loglevel=error --fetch-timeout=60000 --fetch-retries=1 "$CLAUDE" "$CODEX" "$GEMINI"; then
    echo "npm could not install $CLAUDE, $CODEX and $GEMINI: the coding-agent tests will be skipped."
    exit 0
fi
for name in claude codex gemini; do
    echo "Installed: $("$DEST/node_modules/.bin/$name" --version 2>/dev/null | head -n 1) at $DEST/node_modules/.bin/$name"
done
