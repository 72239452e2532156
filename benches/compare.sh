#!/usr/bin/env bash
# Whole-process comparison for docs/BENCHMARKS.md: `flamesite build` of the large reference
# profile (gzipped) against `gzip -dc` of the same file (the floor) and inferno-flamegraph on
# the same stacks uncompressed (default pruning), median wall time of N runs and peak memory,
# all in one run on one machine so that the ratios are fair.
#
# Needs: target/release/flamesite and target/release/flamesite-synth (cargo build --release
# --workspace), inferno-flamegraph on PATH
# (cargo install inferno), gzip and GNU time (/usr/bin/time, Debian package: time).
# Usage: benches/compare.sh [RUNS (default 5)] [SIZE (default large)]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
size=${2:-large}
bin=$PWD/target/release/flamesite
synth=$PWD/target/release/flamesite-synth
for need in "$bin" "$synth" inferno-flamegraph gzip /usr/bin/time; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in"
"$synth" --size "$size" --seed 2 -o "$work/$size.folded"
gzip -6 -c "$work/$size.folded" > "$work/in/$size.folded.gz"
echo "input: $(stat -c %s "$work/$size.folded") bytes folded, $(stat -c %s "$work/in/$size.folded.gz") gzipped; $(nproc) cores; $runs runs"

# measure NAME COMMAND...: appends "seconds maxrss_kb" to $work/NAME.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" > /dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t" >> "$work/$name"
}
for i in $(seq "$runs"); do
  measure gzip gzip -dc "$work/in/$size.folded.gz"
  rm -rf "$work/out"
  measure flamesite "$bin" build --no-cache --input "$work/in" --output "$work/out"
  measure inferno sh -c "inferno-flamegraph '$work/$size.folded' > '$work/pruned.svg'"
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf "%-12s %10s %12s\n" tool "median s" "peak RSS MB"
for t in gzip flamesite inferno; do
  s=$(cut -d' ' -f1 "$work/$t" | median)
  m=$(cut -d' ' -f2 "$work/$t" | sort -n | tail -1)
  printf "%-12s %10s %12.1f\n" "$t" "$s" "$(echo "$m / 1024" | bc -l)"
  eval "sec_$t=$s mem_$t=$m"
done
echo "flamesite / gzip -dc:  $(echo "$sec_flamesite / $sec_gzip" | bc -l | cut -c1-5)"
echo "flamesite / inferno:   $(echo "$sec_flamesite / $sec_inferno" | bc -l | cut -c1-5)"
echo "memory flamesite / inferno: $(echo "$mem_flamesite / $mem_inferno" | bc -l | cut -c1-5)"
echo "output: flamesite graph $(du -sb "$work/out/p" | cut -f1) bytes; inferno pruned SVG $(stat -c %s "$work/pruned.svg") bytes"
