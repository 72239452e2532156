#!/usr/bin/env bash
# Runs each fuzz target of tests/fuzz.rs (every decoder, and the chunk reader of `flamesite
# fold`) for SECONDS seconds on mutated files of tests/data, on stable Rust (release build).
# Usage: scripts/fuzz.sh [SECONDS (default 120)] [SEED (default: from the clock)] [TARGET]
# Targets: folded perf dtrace sample vtune cpuprofile speedscope trace gotext packed pprof jfr chunks (all by default).
# An input that panics or hangs (FLAMESITE_FUZZ_HANG_SECONDS, default 10) is saved in
# target/fuzz-found/ and the run fails naming it; rerun with the same SEED to reproduce.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
seed=${2:-$(date +%s)}
targets=${3:-folded perf dtrace sample vtune cpuprofile speedscope trace gotext packed pprof jfr chunks}
cargo test --release --test fuzz --no-run --quiet
for t in $targets; do
  FLAMESITE_FUZZ_SECONDS=$seconds FLAMESITE_FUZZ_SEED=$seed FLAMESITE_FUZZ_TARGET=$t \
    cargo test --release --quiet --test fuzz -- --nocapture 2>&1 | grep -a -E '^fuzz |panicked|input is' || { echo "fuzz $t: FAILED (seed $seed)" >&2; exit 1; }
done
