#!/usr/bin/env bash
# Runs every test of flamesite: the Rust unit and integration tests (of the workspace: the
# product and the bench generator, benches/synth), the page script's unit
# tests (node's test runner), and the browser tests in a real headless Chromium against
# built sites served over HTTP on 127.0.0.1 (by nginx, for the archive). Chromium and nginx
# (Debian's packages) and the test's npm packages are installed first when missing; when they
# cannot be, this stops and names them.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "error: cargo is not installed (the Rust toolchain: https://rustup.rs)" >&2; exit 1; }
command -v node >/dev/null || { echo "error: node is not installed (Debian package: nodejs; version 20 or later)" >&2; exit 1; }

echo "== preparing the browser tests (Chromium, nginx, npm packages)" >&2
bash tests/browser/run.sh --prepare

echo "== cargo test" >&2
cargo test --workspace --all-targets

echo "== page script unit tests and browser tests" >&2
cargo build --release --quiet
FLAMESITE_BIN=$PWD/target/release/flamesite bash tests/browser/run.sh
