#!/usr/bin/env bash
# Rebuild benchmark for docs/BENCHMARKS.md: what a rebuild costs as the archive grows. For
# each size N (default 1000 10000 100000), an archive of N small profiles (200 stacks each,
# 100 series, benches/gen-archive.py) is built from scratch, then rebuilt with nothing
# changed, then rebuilt after adding one profile (the nightly case), then with nothing changed
# again; each with its wall time and peak memory (GNU time). The goals (issue "The build in
# phases"): adding one run <= 1% of the full build and <= 2 s, nothing changed <= 1 s, peak
# memory <= 1 GB at 100,000 runs.
#
# REBUILD_MODE=series makes the runs of a series variations of one service (gen-archive.py's
# `series` mode: about 95% of their stacks shared), as nightly profiles are; the default,
# `independent`, draws every run afresh, as the figures before 2026-11-25 did.
#
# REBUILD_STACKS=K gives each profile K distinct stacks instead of 200: the output of 100,000
# runs of 200 stacks (with their comparisons) takes about 150 GB of disk.
#
# flamesite runs from the repository's folder, so it reads the repository's site.toml (its
# title); a rebuild run by hand on the same archive must run from there too, or the other
# configuration makes it render every page again.
#
# Needs: target/release/flamesite (cargo build --release; or FLAMESITE_BIN), python3, GNU time.
# Usage: [REBUILD_MODE=series] benches/rebuild.sh [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${FLAMESITE_BIN:-$PWD/target/release/flamesite}
for need in "$bin" /usr/bin/time python3; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1000 10000 100000)
work=${REBUILD_BENCH_DIR:-$(mktemp -d)}
mode=${REBUILD_MODE:-independent}
stacks=${REBUILD_STACKS:-200}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $("$bin" --version); inputs: $mode, $stacks stacks a profile"
printf '%8s %10s %8s %10s %8s %10s %8s %10s %8s\n' runs full_s full_MB unchanged_s MB add_one_s MB unchanged2_s MB
for n in "${sizes[@]}"; do
  dir="$work/$n"
  rm -rf "$dir" && mkdir -p "$dir"
  python3 benches/gen-archive.py "$dir/in" "$n" 100 0 "$mode" "$stacks"
  row=("$n")
  measure() {
    /usr/bin/time -f "%e %M" -o "$dir/t" "$bin" build --input "$dir/in" --output "$dir/out" -j 2 >/dev/null 2>"$dir/err" \
      || { cat "$dir/err" >&2; exit 1; }
    read -r secs kb < "$dir/t"
    row+=("$secs" "$((kb / 1024))")
    tail -1 "$dir/err" >> "$dir/log"
  }
  measure                                     # full build
  measure                                     # nothing changed
  python3 benches/gen-archive.py "$dir/in" 1 100 "$n" "$mode" "$stacks"   # one new run
  measure                                     # add one
  measure                                     # nothing changed
  printf '%8s %10s %8s %10s %8s %10s %8s %10s %8s\n' "${row[@]}"
  sed 's/^/    /' "$dir/log"
  [[ -n ${REBUILD_BENCH_DIR:-} ]] || rm -rf "$dir"
done
