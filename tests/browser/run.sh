#!/usr/bin/env bash
# The page's tests: node unit tests of the viewer modules (tests/js), then the browser tests
# in headless Chromium (tests/browser) against a site built by $FLAMESITE_BIN.
# Fails loudly on anything missing; never skips.
# `run.sh --prepare` only finds (or installs) Chromium, nginx and the npm packages, so that the
# top-level test command can stop early, before compiling, when something is missing.
set -euo pipefail
# `run.sh --no-unit` runs the browser tests only (the test command runs the unit tests itself,
# before the binary is built).
prepare_only=false
unit=true
[[ ${1:-} == --prepare ]] && prepare_only=true
[[ ${1:-} == --no-unit ]] && unit=false

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

# nginx serves the archive test's site under a sub-path, as a real static host would.
# Debian 12 has the package `nginx`; older releases split it into nginx-light/-core/-full,
# so the first of those with an install candidate is taken.
nginx="${NGINX_BIN:-/usr/sbin/nginx}"
if [[ ! -x "$nginx" ]]; then
  if [[ "$nginx" == /usr/sbin/nginx && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update
    pkg=""
    for p in nginx nginx-light; do
      if [[ "$(apt-cache policy "$p" 2>/dev/null)" == *"Candidate: "[0-9]* ]]; then pkg=$p; break; fi
    done
    if [[ -z "$pkg" ]]; then
      echo "run.sh: /usr/sbin/nginx is missing and apt has neither the package nginx nor nginx-light; install one of them or set NGINX_BIN" >&2
      exit 1
    fi
    echo "run.sh: /usr/sbin/nginx is missing; installing Debian's $pkg package" >&2
    # The package's install script starts nginx as a system service (port 80) unless
    # policy-rc.d forbids it; the tests start their own, so forbid it for this install.
    policy=/usr/sbin/policy-rc.d
    made_policy=false
    if [[ ! -e "$policy" ]]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=true
    fi
    status=0
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$pkg" || status=$?
    $made_policy && rm -f "$policy"
    if [[ $status != 0 || ! -x /usr/sbin/nginx ]]; then
      echo "run.sh: installing Debian's $pkg package did not give /usr/sbin/nginx" >&2
      exit 1
    fi
  else
    echo "run.sh: $nginx is missing; install the Debian package nginx (apt-get install nginx; nginx-light on older releases) or set NGINX_BIN" >&2
    exit 1
  fi
fi
export NGINX_BIN="$nginx"

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
if $unit; then
  echo "== node unit tests (tests/js)"
  node --test tests/js/
fi
echo "== browser tests (tests/browser) with $FLAMESITE_BIN"
cd "$here"
# A test that waits for something that never comes fails after five minutes. One file at a
# time: two at a time ran them in 5 min 0 s against 6 min 29 s, but beside the Rust tests and a
# compilation page.test.mjs (two minutes alone) then ran past its five (docs/BENCHMARKS.md,
# "The test command").
node --test --test-concurrency=1 --test-timeout=300000 ./*.test.mjs
