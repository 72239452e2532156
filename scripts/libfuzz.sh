#!/usr/bin/env bash
# Coverage-guided fuzzing campaigns (libFuzzer through cargo-fuzz, on a nightly compiler) of
# every decoder, the chunk reader of `flamesite fold` and the notes renderer: tests/libfuzzer.
# Each target runs for SECONDS, starting from its committed corpus (tests/libfuzzer/corpus/
# TARGET) and the seeds (every file of tests/data, gzipped ones unpacked, those over 1 MB left
# out); what it finds new is kept in target/libfuzzer/work/TARGET between runs, and at the end
# the corpus is minimised (libFuzzer's -merge=1: the fewest inputs that reach all the code the
# old corpus, the seeds and the new inputs reach) back into tests/libfuzzer/corpus/TARGET, to
# be committed. The test command replays that corpus and every past finding on the stable
# compiler (tests/fuzz.rs), in seconds.
# Inputs are at most 64 kB, but for the JFR reader's (1 MB: a recording's first chunk is tens
# of kilobytes, and a shorter one stops at the chunk's size check).
# An input that panics, aborts, leaks past the memory limit or takes over 10 s is saved as
# target/libfuzzer/found/TARGET-crash-… (or -oom-, -timeout-) and the run fails naming it;
# once fixed, a finding is copied to tests/libfuzzer/findings/ (keeping its name) so that it is
# replayed by every test run.
# Needs: rustup's nightly toolchain and cargo-fuzz (both installed by this script when
# missing: `rustup toolchain install nightly --profile minimal`, `cargo install cargo-fuzz`),
# and a C++ compiler for libFuzzer (Debian package g++).
# Usage: scripts/libfuzz.sh [SECONDS per target (default 60)] [TARGET ...]
#        scripts/libfuzz.sh 0 [TARGET ...]   no campaign: only minimise the corpus again
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=${*:-folded perf dtrace sample vtune cpuprofile speedscope trace gotext packed pprof jfr chunks notes}
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
# The seeds: every file of tests/data as it is now, unpacked, under 1 MB.
rm -rf "$work/seeds" && mkdir -p "$work/seeds"
find tests/data -type f | sort | while read -r f; do
  name=$(echo "$f" | tr '/' '_')
  case "$f" in
    *.gz) gzip -dc "$f" > "$work/seeds/${name%.gz}" 2>/dev/null || cp "$f" "$work/seeds/$name" ;;
    *) cp "$f" "$work/seeds/$name" ;;
  esac
done
find "$work/seeds" -type f -size +1024k -delete
failed=""
for t in $targets; do
  corpus="tests/libfuzzer/corpus/$t"
  work_corpus="$work/work/$t"
  mkdir -p "$corpus" "$work_corpus"
  maxlen=65536
  [ "$t" = jfr ] && maxlen=1048576
  log="$work/$t.log"
  ran=true
  if [ "$seconds" != 0 ]; then
    cargo +nightly fuzz run --fuzz-dir tests/libfuzzer -O "$t" "$work_corpus" "$corpus" "$work/seeds" -- \
      -max_total_time="$seconds" -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/found/$t-" > "$log" 2>&1 || ran=false
  fi
  if $ran; then
    # The corpus kept is what reaches code the seeds (tests/data, replayed on their own by
    # tests/fuzz.rs) do not: the merge starts from the seeds, adds the fewest and smallest
    # inputs that reach more, and the seeds are taken out again. Inputs over 16 kB (128 kB for
    # JFR, whose recordings are larger) are left out of what is committed: they are mutated
    # seeds, and the corpus is kept small enough to live in the repository (a finding is kept
    # whatever its size).
    before=$(find "$corpus" -type f | wc -l)
    merged="$work/merged/$t"
    rm -rf "$merged" && mkdir -p "$merged" && cp "$work/seeds"/* "$merged"/
    cargo +nightly fuzz run --fuzz-dir tests/libfuzzer -O "$t" "$merged" "$corpus" "$work_corpus" -- \
      -merge=1 -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 > "$work/$t.merge.log" 2>&1
    for f in "$work/seeds"/*; do rm -f "$merged/$(sha1sum "$f" | cut -d' ' -f1)" "$merged/$(basename "$f")"; done
    keep=16k
    [ "$t" = jfr ] && keep=128k
    find "$merged" -type f -size +"$keep" -delete
    rm -rf "$corpus" && mv "$merged" "$corpus"
    runs=""
    [ "$seconds" = 0 ] || runs="$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') inputs in ${seconds} s, $(grep -a -o 'cov: [0-9]*' "$log" | tail -1), no finding; "
    echo "libfuzz $t: ${runs}corpus $before -> $(find "$corpus" -type f | wc -l) inputs ($(du -sk "$corpus" | cut -f1) kB)"
  else
    echo "libfuzz $t: FAILED, see $log and $work/found/" >&2
    grep -a -E "panicked|ERROR|Test unit written" "$log" | head -5 >&2
    failed="$failed $t"
  fi
done
[ -z "$failed" ] || { echo "libfuzz: findings in:$failed" >&2; exit 1; }
