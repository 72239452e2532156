#!/usr/bin/env bash
# Runs every test of flamesite: the Rust unit and integration tests, the page script's unit
# tests (node's test runner), and the browser tests in a real headless Chromium against
# built sites served over HTTP on 127.0.0.1. Installs Chromium (Debian's package) when it is
# missing and this runs as root; otherwise stops and names what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

missing() {
  echo "error: $1" >&2
  exit 1
}

command -v cargo >/dev/null || missing "cargo is not installed (the Rust toolchain: https://rustup.rs)"
command -v node >/dev/null || missing "node is not installed (Debian package: nodejs; version 20 or later)"
command -v npm >/dev/null || missing "npm is not installed (Debian package: npm)"

chromium_bin=""
for c in chromium chromium-browser; do
  if command -v "$c" >/dev/null; then chromium_bin=$(command -v "$c"); break; fi
done
if [[ -z $chromium_bin ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "Chromium is missing: installing Debian's chromium package" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
    chromium_bin=$(command -v chromium) || missing "apt-get installed chromium but there is no chromium command"
  else
    missing "the browser tests need Chromium: install Debian's package 'chromium' (sudo apt-get install chromium)"
  fi
fi
export CHROMIUM_BIN=$chromium_bin

echo "== cargo test" >&2
cargo test --all-targets

echo "== page script unit tests and browser tests" >&2
cargo build --release --quiet
export FLAMESITE_BIN=$PWD/target/release/flamesite
bash tests/browser/run.sh
