#!/usr/bin/env bash
# The page's tests: node unit tests of the viewer modules (tests/js), then the browser tests
# in headless Chromium (tests/browser) against a site built by $FLAMESITE_BIN.
# Fails loudly on anything missing; never skips.
# `run.sh --prepare` only finds (or installs) Chromium and the npm packages, so that the
# top-level test command can stop early, before compiling, when something is missing.
set -euo pipefail
prepare_only=false
[[ ${1:-} == --prepare ]] && prepare_only=true

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if ! command -v node >/dev/null 2>&1; then
  echo "run.sh: node is not installed (Node.js 20 or newer is needed; Debian package: nodejs)" >&2
  exit 1
fi

chromium="${CHROMIUM_BIN:-/usr/bin/chromium}"
if [[ ! -x "$chromium" ]]; then
  if [[ "$chromium" == /usr/bin/chromium && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "run.sh: /usr/bin/chromium is missing; installing Debian's chromium package" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
  else
    echo "run.sh: $chromium is missing; install the Debian package chromium (apt-get install chromium) or set CHROMIUM_BIN" >&2
    exit 1
  fi
fi
export CHROMIUM_BIN="$chromium"

if [[ ! -d "$here/node_modules/playwright-core" ]]; then
  command -v npm >/dev/null 2>&1 || { echo "run.sh: npm is not installed (Debian package: npm)" >&2; exit 1; }
  (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi
$prepare_only && exit 0

if [[ -z "${FLAMESITE_BIN:-}" ]]; then
  echo "run.sh: FLAMESITE_BIN is not set; point it at the flamesite binary (e.g. FLAMESITE_BIN=target/release/flamesite)" >&2
  exit 1
fi
FLAMESITE_BIN="$(cd "$(dirname "$FLAMESITE_BIN")" && pwd)/$(basename "$FLAMESITE_BIN")"
if [[ ! -x "$FLAMESITE_BIN" ]]; then
  echo "run.sh: FLAMESITE_BIN=$FLAMESITE_BIN is not an executable file; build it first (cargo build --release)" >&2
  exit 1
fi
export FLAMESITE_BIN

cd "$repo"
echo "== node unit tests (tests/js)"
node --test tests/js/
echo "== browser tests (tests/browser) with $FLAMESITE_BIN"
cd "$here"
node --test --test-concurrency=1 ./*.test.mjs
