#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer through cargo-fuzz, on a nightly compiler) of every
# decoder, the chunk reader of `flamesite fold` and the notes renderer: tests/libfuzzer.
# Each target runs for SECONDS on a corpus seeded from every file of tests/data (gzipped ones
# unpacked, those over 1 MB left out) and kept in target/libfuzzer/corpus/TARGET between runs.
# Inputs are at most 64 kB, but for the JFR reader's (1 MB: a recording's first chunk is tens
# of kilobytes, and a shorter one stops at the chunk's size check).
# An input that panics, aborts, leaks past the memory limit or takes over 10 s is saved as
# target/libfuzzer/found/TARGET-crash-… (or -oom-, -timeout-) and the run fails naming it; a
# finding becomes a regression test in tests/fuzz.rs or the decoder's own tests.
# Needs: rustup's nightly toolchain and cargo-fuzz (both installed by this script when
# missing: `rustup toolchain install nightly --profile minimal`, `cargo install cargo-fuzz`),
# and a C++ compiler for libFuzzer (Debian package g++).
# Usage: scripts/libfuzz.sh [SECONDS per target (default 60)] [TARGET ...]
#        scripts/libfuzz.sh --ci   the test command's short run: each target runs RUNS inputs
#                                  (FLAMESITE_LIBFUZZ_RUNS, default 2000) from seed 1 on the
#                                  seeds alone, so it is the same run every time
set -euo pipefail
cd "$(dirname "$0")/.."
ci=""
if [ "${1:-}" = "--ci" ]; then
  ci=1
  shift
fi
seconds=${1:-60}
shift || true
targets=${*:-folded perf dtrace sample vtune cpuprofile speedscope pprof jfr chunks notes}
export PATH="$PATH:$PWD/target/tools/bin"
command -v rustup >/dev/null || { echo "error: rustup is not installed; coverage-guided fuzzing needs its nightly toolchain" >&2; exit 1; }
command -v c++ >/dev/null || { echo "error: no C++ compiler (Debian package g++): libFuzzer is built from C++" >&2; exit 1; }
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal >&2 || { echo "error: the nightly toolchain could not be installed: rustup toolchain install nightly" >&2; exit 1; }
fi
if ! command -v cargo-fuzz >/dev/null; then
  cargo install --locked --quiet cargo-fuzz@0.13.2 --root target/tools || { echo "error: cargo-fuzz could not be installed: cargo install --locked cargo-fuzz@0.13.2" >&2; exit 1; }
fi
cargo +nightly fuzz build --fuzz-dir tests/libfuzzer -O >&2
work=target/libfuzzer
mkdir -p "$work/found" "$work/seeds"
# The seeds: every file of tests/data, unpacked, under 1 MB.
if [ ! -e "$work/seeds/.v2" ]; then
  rm -rf "$work/seeds" && mkdir -p "$work/seeds"
  find tests/data -type f | sort | while read -r f; do
    name=$(echo "$f" | tr '/' '_')
    case "$f" in
      *.gz) gzip -dc "$f" > "$work/seeds/${name%.gz}" 2>/dev/null || cp "$f" "$work/seeds/$name" ;;
      *) cp "$f" "$work/seeds/$name" ;;
    esac
  done
  find "$work/seeds" -type f -size +1024k -delete
  touch "$work/seeds/.v2"
fi
failed=""
for t in $targets; do
  corpus="$work/corpus/$t"
  how=(-max_total_time="$seconds")
  if [ -n "$ci" ]; then
    corpus="$work/ci/$t"
    rm -rf "$corpus"
    how=(-runs="${FLAMESITE_LIBFUZZ_RUNS:-2000}" -seed=1)
  fi
  mkdir -p "$corpus"
  maxlen=65536
  [ "$t" = jfr ] && maxlen=1048576
  log="$work/$t.log"
  if cargo +nightly fuzz run --fuzz-dir tests/libfuzzer -O "$t" "$corpus" "$work/seeds" -- \
      "${how[@]}" -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/found/$t-" > "$log" 2>&1; then
    echo "libfuzz $t: $(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') inputs, $(grep -a -o 'cov: [0-9]*' "$log" | tail -1), no finding"
  else
    echo "libfuzz $t: FAILED, see $log and $work/found/" >&2
    grep -a -E "panicked|ERROR|Test unit written" "$log" | head -5 >&2
    failed="$failed $t"
  fi
done
[ -z "$failed" ] || { echo "libfuzz: findings in:$failed" >&2; exit 1; }
