#!/usr/bin/env bash
# install-claude.sh VERSION
#
# Installs @anthropic-ai/claude-code@VERSION with npm into the project-local
# directory target/claude-cli/VERSION/ and prints (on stdout, alone) the
# absolute path of a directly runnable `claude` entry:
#
#   * JS releases (<= 2.1.1xx era, package has cli.js):   .../node_modules/.bin/claude
#     (npm's shim -> cli.js, `#!/usr/bin/env node`)
#   * native releases (package bin is bin/claude.exe and the real program
#     comes from an optional dependency @anthropic-ai/claude-code-<platform>):
#     the platform package's ELF/Mach-O binary itself, e.g.
#     .../node_modules/@anthropic-ai/claude-code-linux-x64/claude
#     (works even if npm skipped the postinstall that copies it over the
#     bin/claude.exe placeholder, and needs no particular node version).
#
# Idempotent: if the directory already holds a working install of VERSION
# nothing is downloaded.  All npm chatter goes to stderr.
# Exit status: 0 ok, 1 install failed / unusable, 2 usage.
set -euo pipefail

die() { echo "install-claude.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 VERSION   (e.g. 2.0.76, 2.1.330)" >&2; exit 2; }
VERSION=$1
case "$VERSION" in
  *[!0-9A-Za-z.+-]*|"") echo "install-claude.sh: bad version '$VERSION'" >&2; exit 2 ;;
esac

command -v npm >/dev/null 2>&1 || die "npm not found on PATH (need node + npm)"
command -v node >/dev/null 2>&1 || die "node not found on PATH"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${CLAUDE_CLI_ROOT:-$(cd "$HERE/../.." && pwd)/target/claude-cli}
DEST=$ROOT/$VERSION
PKG=$DEST/node_modules/@anthropic-ai/claude-code

platform_suffix() {
  local os arch libc=""
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) os=unknown ;;
  esac
  case "$(uname -m)" in
    x86_64|amd64) arch=x64 ;;
    aarch64|arm64) arch=arm64 ;;
    *) arch=$(uname -m) ;;
  esac
  if [ "$os" = linux ] && { ldd --version 2>&1 | grep -qi musl || [ -e /etc/alpine-release ]; }; then
    libc=-musl
  fi
  echo "$os-$arch$libc"
}

# Print the runnable entry for an existing install, or nothing.
resolve_entry() {
  [ -f "$PKG/package.json" ] || return 0
  local plat native
  plat=$(platform_suffix)
  native=$DEST/node_modules/@anthropic-ai/claude-code-$plat/claude
  if [ -f "$native" ]; then
    [ -x "$native" ] || chmod +x "$native" 2>/dev/null || true
    echo "$native"; return 0
  fi
  if [ -f "$PKG/cli.js" ]; then
    if [ -x "$DEST/node_modules/.bin/claude" ]; then
      echo "$DEST/node_modules/.bin/claude"
    else
      echo "$PKG/cli.js"
    fi
    return 0
  fi
  # native wrapper whose postinstall already replaced the placeholder
  if [ -f "$PKG/bin/claude.exe" ] && head -c 4 "$PKG/bin/claude.exe" | od -An -c | grep -q 'E   L   F'; then
    echo "$PKG/bin/claude.exe"; return 0
  fi
}

# Check that ENTRY reports VERSION.  cli.js needs node; run via node if the
# entry is a .js file.
check_entry() {
  local entry=$1 out
  if [[ "$entry" == *.js ]]; then
    out=$(HOME="$DEST/.probe-home" timeout 60 node "$entry" --version 2>&1) || return 1
  else
    out=$(HOME="$DEST/.probe-home" timeout 60 "$entry" --version 2>&1) || return 1
  fi
  rm -rf "$DEST/.probe-home"
  case "$out" in
    "$VERSION"*) return 0 ;;
    *) echo "install-claude.sh: $entry --version printed: $out" >&2; return 1 ;;
  esac
}

# Test modules run side by side and may ask for the same version at once: one installs, the
# others wait for it (flock is util-linux; without it, installs are not serialized).
mkdir -p "$ROOT"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$ROOT/.lock-$VERSION"
  flock 9
fi

if [ -f "$DEST/.installed-ok" ]; then
  entry=$(resolve_entry)
  if [ -n "$entry" ] && [ -e "$entry" ]; then
    echo "$entry"; exit 0
  fi
fi

mkdir -p "$DEST"
# A minimal package.json keeps npm from walking up into some parent project.
[ -f "$DEST/package.json" ] || echo '{"name":"claude-cli-'"$VERSION"'","private":true}' > "$DEST/package.json"

echo "install-claude.sh: npm install @anthropic-ai/claude-code@$VERSION -> $DEST" >&2
# --include=optional: native releases ship the binary as an optional
# dependency; make sure an npm config with omit=optional does not drop it.
if ! npm install --prefix "$DEST" --no-audit --no-fund --no-save --include=optional \
      "@anthropic-ai/claude-code@$VERSION" >&2; then
  die "npm install of @anthropic-ai/claude-code@$VERSION failed (see npm output above)"
fi

entry=$(resolve_entry)
if [ -z "$entry" ]; then
  if [ -f "$PKG/bin/claude.exe" ]; then
    die "version $VERSION is a native-binary release but no binary for platform '$(platform_suffix)' was installed (optional dependency @anthropic-ai/claude-code-$(platform_suffix) missing?)"
  fi
  die "installed @anthropic-ai/claude-code@$VERSION but found neither cli.js nor a native binary in $PKG"
fi
check_entry "$entry" || die "installed entry $entry does not run / report version $VERSION"
: > "$DEST/.installed-ok"
echo "$entry"
