#!/usr/bin/env bash
# Install the pinned Claude Code CLI used by the end-to-end tests (tests/e2e/).
#
#   bash .ci/install-claude-cli.sh            # install (or confirm) and print the path of `claude`
#   bash .ci/install-claude-cli.sh --relock   # regenerate tests/e2e/claude-cli/package-lock.json
#
# Target: <repo>/.tools/claude-cli (gitignored). The committed manifest and lockfile in
# tests/e2e/claude-cli/ are copied there and installed with `npm ci`, so every machine gets the
# same bytes. Without a committed lockfile the script falls back to
# `npm init -y` + `npm install --save-exact @anthropic-ai/claude-code@<version>`.
#
# Notes (see shared/reference/claude-code.md §10.1):
# * 2.1.330 declares engines.node >=22; on Node 20 npm prints EBADENGINE and installs anyway.
#   engine-strict is forced off so a CI-wide setting cannot turn that warning into a failure.
# * The package's postinstall copies the platform binary over bin/claude.exe, so install
#   scripts and optional dependencies must NOT be disabled.
# * Idempotent: nothing is downloaded when the installed CLI already reports the pinned version
#   and was installed from the current lockfile.
# The last line printed on stdout is the absolute path of the `claude` binary; progress goes to
# stderr.
set -euo pipefail

CLI_VERSION="2.1.330"
PACKAGE="@anthropic-ai/claude-code"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPEC_DIR="$REPO_ROOT/tests/e2e/claude-cli"
DEST="$REPO_ROOT/.tools/claude-cli"
BIN="$DEST/node_modules/.bin/claude"
STAMP="$DEST/.installed-from"   # sha256 of the lockfile the current install came from

log() { printf '[install-claude-cli] %s\n' "$*" >&2; }

# npm flags shared by every call: keep install scripts and optional deps on, engines advisory.
NPM_FLAGS=(--no-audit --no-fund --engine-strict=false --ignore-scripts=false --include=optional)

lock_hash() {
  if [[ -f "$SPEC_DIR/package-lock.json" ]]; then
    cat "$SPEC_DIR/package.json" "$SPEC_DIR/package-lock.json" | sha256sum | cut -d' ' -f1
  else
    echo "no-lockfile-$CLI_VERSION"
  fi
}

installed_version() {
  [[ -x "$BIN" ]] || return 1
  "$BIN" --version 2>/dev/null | awk '{print $1; exit}'
}

relock() {
  command -v npm >/dev/null || { log "npm not found"; exit 1; }
  log "regenerating $SPEC_DIR/package-lock.json for $PACKAGE@$CLI_VERSION"
  (cd "$SPEC_DIR" && npm install --package-lock-only --save-exact "${NPM_FLAGS[@]}" \
      "$PACKAGE@$CLI_VERSION" >&2)
}

install() {
  command -v npm >/dev/null || { log "npm not found (Node 20+ with npm is required)"; exit 1; }
  log "installing $PACKAGE@$CLI_VERSION into $DEST"
  rm -rf "$DEST"
  mkdir -p "$DEST"
  if [[ -f "$SPEC_DIR/package-lock.json" ]]; then
    cp "$SPEC_DIR/package.json" "$SPEC_DIR/package-lock.json" "$DEST/"
    (cd "$DEST" && npm ci "${NPM_FLAGS[@]}" >&2)
  else
    log "no committed lockfile in $SPEC_DIR; falling back to npm install --save-exact"
    (cd "$DEST" && npm init -y >/dev/null && \
      npm install --save-exact "${NPM_FLAGS[@]}" "$PACKAGE@$CLI_VERSION" >&2)
  fi
}

main() {
  if [[ "${1:-}" == "--relock" ]]; then
    relock
    exit 0
  fi
  local want_hash have_version
  want_hash="$(lock_hash)"
  have_version="$(installed_version || true)"
  if [[ "$have_version" == "$CLI_VERSION" && -f "$STAMP" && "$(cat "$STAMP")" == "$want_hash" ]]; then
    log "$PACKAGE@$CLI_VERSION already installed"
  else
    install
    have_version="$(installed_version || true)"
    if [[ "$have_version" != "$CLI_VERSION" ]]; then
      log "installed CLI reports version '${have_version:-<none>}', expected $CLI_VERSION"
      log "(was the postinstall script skipped? npm ignore-scripts/omit=optional must be off)"
      exit 1
    fi
    printf '%s\n' "$want_hash" >"$STAMP"
    log "installed $PACKAGE@$CLI_VERSION"
  fi
  printf '%s\n' "$BIN"
}

main "$@"
