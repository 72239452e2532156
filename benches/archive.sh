#!/usr/bin/env bash
# Archive build benchmark for docs/BENCHMARKS.md: an archive of N generated small profiles
# (10 series, gzipped folded stacks dated by their file names) built from scratch with 1 and
# with 2 threads, then rebuilt after adding one profile (the nightly case), each the median of
# RUNS runs, all in one run on one machine so that the ratios are fair.
#
# Needs: target/release/flamesite and target/release/flamesite-synth (cargo build --release
# --workspace; or FLAMESITE_BIN and SYNTH_BIN) and GNU time (/usr/bin/time).
# Usage: benches/archive.sh [RUNS (default 3)] [N (default 1000)]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
n=${2:-1000}
bin=${FLAMESITE_BIN:-$PWD/target/release/flamesite}
synth=${SYNTH_BIN:-$PWD/target/release/flamesite-synth}
for need in "$bin" "$synth" /usr/bin/time; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Generating the inputs takes minutes; they are deterministic, so they are kept between runs.
inputs=${ARCHIVE_BENCH_INPUTS:-/tmp/flamesite-archive-bench-$n}
# Profile i: series svc(i mod 10), dated 2026-01-01 plus i hours, flamesite-synth small with seed i.
profile() {
  local i=$1
  local when
  when=$(date -u -d "2026-01-01 +$i hours" +%Y%m%dT%H%M)
  mkdir -p "$work/in/svc$((i % 10))"
  "$synth" --size small --seed "$i" -o "$work/in/svc$((i % 10))/run-$when.folded.gz"
}
if [[ ! -f "$inputs/done" ]]; then
  rm -rf "$inputs"
  mkdir -p "$work/in"
  for i in $(seq 1 "$n"); do profile "$i"; done
  mkdir -p "$inputs" && cp -r "$work/in" "$inputs/" && touch "$inputs/done"
fi
rm -rf "$work/in" && cp -r "$inputs/in" "$work/in"
echo "input: $n profiles, $(du -sm "$work/in" | cut -f1) MB gzipped; $(nproc) cores; $runs runs"

# measure NAME COMMAND...: appends "seconds maxrss_kb" to $work/NAME.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" > /dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t" >> "$work/$name"
}
clean() { rm -rf "$work/out" "$work/.out.flamesite-next" "$work/.out.cache"; }
set -- "$bin" build --input "$work/in" --output "$work/out"

for r in $(seq "$runs"); do
  clean
  measure full-j1 "$@" -j 1
  clean
  measure full-j2 "$@" -j 2
  # Two more builds so that the tree kept beside the output is up to date, as it is night
  # after night; then the nightly case: one new profile.
  "$@" > /dev/null 2>&1
  "$@" > /dev/null 2>&1
  profile $((n + r))
  measure add-one "$@" -j 2
  measure unchanged "$@" -j 2
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf "%-12s %10s %16s %12s\n" build "median s" "min–max s" "peak RSS MB"
for name in full-j1 full-j2 add-one unchanged; do
  s=$(cut -d' ' -f1 "$work/$name" | median)
  m=$(cut -d' ' -f2 "$work/$name" | median)
  range="$(cut -d' ' -f1 "$work/$name" | sort -n | head -1)–$(cut -d' ' -f1 "$work/$name" | sort -n | tail -1)"
  printf "%-12s %10.2f %16s %12.1f\n" "$name" "$s" "$range" "$(echo "$m / 1024" | bc -l)"
  eval "t_${name//-/_}=$s"
done
echo "speed-up 1 → 2 threads: $(echo "$t_full_j1 / $t_full_j2" | bc -l | cut -c1-5)"
echo "add-one / full-j2: $(echo "100 * $t_add_one / $t_full_j2" | bc -l | cut -c1-5) %"
echo "unchanged / full-j2: $(echo "100 * $t_unchanged / $t_full_j2" | bc -l | cut -c1-5) %"
