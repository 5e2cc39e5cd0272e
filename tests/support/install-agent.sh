#!/usr/bin/env bash
# install-agent.sh CLI VERSION
#
# Installs one agent CLI from the npm registry into the project-local directory
# target/agent-cli/CLI/VERSION/ and prints (on stdout, alone) the absolute path
# of its runnable entry (npm's shim in node_modules/.bin).
#
#   CLI       npm package            entry
#   codex     @openai/codex          codex
#   gemini    @google/gemini-cli     gemini
#   qwen      @qwen-code/qwen-code   qwen
#   opencode  opencode-ai            opencode
#   copilot   @github/copilot        copilot
#   claude    (use install-claude.sh)
#
# VERSION is an exact version or `latest` (resolved with `npm view` first, so
# the directory names the real version). Idempotent: an existing install of
# VERSION is reused without asking the registry. npm chatter goes to stderr.
# Exit status: 0 ok, 1 install failed / unusable, 2 usage.
set -euo pipefail

die() { echo "install-agent.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || { echo "usage: $0 codex|gemini|qwen|opencode|copilot VERSION|latest" >&2; exit 2; }
CLI=$1 VERSION=$2
case "$CLI" in
  codex) PKG=@openai/codex BIN=codex ;;
  gemini) PKG=@google/gemini-cli BIN=gemini ;;
  qwen) PKG=@qwen-code/qwen-code BIN=qwen ;;
  opencode) PKG=opencode-ai BIN=opencode ;;
  copilot) PKG=@github/copilot BIN=copilot ;;
  *) echo "install-agent.sh: unknown CLI '$CLI'" >&2; exit 2 ;;
esac
case "$VERSION" in
  *[!0-9A-Za-z.+-]*|"") echo "install-agent.sh: bad version '$VERSION'" >&2; exit 2 ;;
esac
command -v npm >/dev/null 2>&1 || die "npm not found on PATH (need node + npm)"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${AGENT_CLI_ROOT:-$(cd "$HERE/../.." && pwd)/target/agent-cli}
if [ "$VERSION" = latest ]; then
  VERSION=$(timeout 60 npm view "$PKG@latest" version 2>/dev/null) || die "npm view $PKG@latest failed (registry unreachable?)"
fi
DEST=$ROOT/$CLI/$VERSION
ENTRY=$DEST/node_modules/.bin/$BIN
if [ -x "$ENTRY" ] && [ -f "$DEST/.complete" ]; then
  echo "$ENTRY"; exit 0
fi
mkdir -p "$DEST"
echo '{"private":true}' > "$DEST/package.json"
timeout 600 npm install --prefix "$DEST" --no-audit --no-fund --no-save --loglevel=error \
  "$PKG@$VERSION" >&2 || die "npm install $PKG@$VERSION failed"
[ -x "$ENTRY" ] || die "$PKG@$VERSION installed but $ENTRY is missing"
touch "$DEST/.complete"
echo "$ENTRY"
