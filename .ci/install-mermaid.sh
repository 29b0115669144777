#!/usr/bin/env bash
# Install the Mermaid toolchain the test suite uses to check generated diagrams:
#   - Debian's chromium at /usr/bin/chromium (apt-get, only when missing);
#   - the npm packages pinned in tests/mermaid/package-lock.json, into
#     tests/mermaid/node_modules (npm ci, only when the lock file changed).
# Idempotent: a second run with nothing to do takes well under a second.
# Puppeteer's own browser download is skipped; check.mjs uses /usr/bin/chromium.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/tests/mermaid"
stamp="$dir/node_modules/.installed-lock.sha256"

if [ ! -x /usr/bin/chromium ]; then
    echo "install-mermaid: installing chromium (apt-get)"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

lock_sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_sum" ]; then
    echo "install-mermaid: npm ci in tests/mermaid"
    (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_sum" >"$stamp"
fi

echo "install-mermaid: ok ($(/usr/bin/chromium --version 2>/dev/null | head -n1)," \
    "mermaid $(node -p "require('$dir/node_modules/mermaid/package.json').version" 2>/dev/null || echo '?'))"
