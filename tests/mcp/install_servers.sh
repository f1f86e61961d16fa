#!/bin/sh
# Install the reference MCP servers from the npm registry into .cache/mcp-servers (gitignored),
# for tests/mcp: @modelcontextprotocol/server-filesystem and @modelcontextprotocol/server-everything.
# Safe to run again: npm skips what is already there.
set -eu
FILESYSTEM="${MCP_FILESYSTEM_VERSION:-2026.8.31}"
EVERYTHING="${MCP_EVERYTHING_VERSION:-2026.8.31}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DEST="$ROOT/.cache/mcp-servers"
if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: skipping the reference MCP servers (their tests in tests/mcp will be skipped)."
    exit 0
fi
mkdir -p "$DEST"
echo "Installing the reference MCP servers into $DEST ..."
# A registry that cannot be reached must not fail the suite: the tests then skip, and say why.
if ! npm install --prefix "$DEST" --no-audit --no-fund --no-save --loglevel=error --fetch-timeout=60000 \
    --fetch-retries=1 "@modelcontextprotocol/server-filesystem@$FILESYSTEM" \
    "@modelcontextprotocol/server-everything@$EVERYTHING"; then
    echo "npm could not install the reference MCP servers: their tests in tests/mcp will be skipped."
    exit 0
fi
echo "Installed: $(ls "$DEST/node_modules/.bin" | tr '\n' ' ')"
