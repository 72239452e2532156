#!/usr/bin/env bash
# Footprint benchmark for docs/BENCHMARKS.md ("Footprint"): what an archive costs on disk
# against its gzipped profiles.
#
# 1. A nightly series: NIGHTS runs of one service made by benches/gen-nightly.py from one
#    flamesite-synth profile of 40,000 stacks (seed 5): each night keeps about 95% of the
#    stacks of the night before with counts within ±20% and adds about 2% of its own.
# 2. The large profile alone (flamesite-synth --size large, seed 2), one unrelated run.
#
# Each is built from scratch with the defaults; printed: the gzipped profiles' bytes, the
# published site's bytes (`du --apparent-size` of the output) and what the build keeps beside
# it: the cache folder and the staging tree (the previous site, beside the output), counted
# twice: as `du --apparent-size` counts each folder alone (and the cache folder alone), and
# as disk bytes the output does not already hold (a file that is a hard link to one of the
# output's costs nothing more; folders' own blocks are counted).
#
# Needs: target/release/flamesite and target/release/flamesite-synth (cargo build --release
# --workspace; or FLAMESITE_BIN and SYNTH_BIN) and python3.
# Usage: benches/footprint.sh [NIGHTS (default 8)]
set -euo pipefail
cd "$(dirname "$0")/.."
nights=${1:-8}
bin=${FLAMESITE_BIN:-$PWD/target/release/flamesite}
synth=${SYNTH_BIN:-$PWD/target/release/flamesite-synth}
for need in "$bin" "$synth" python3; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Bytes of files under $1 by apparent size, and the disk bytes of what is not a hard link to a
# file of the output folder $2 (folders' blocks included).
measure() {
  python3 - "$@" <<'PY'
import os, sys
def walk(d):
    for root, dirs, files in os.walk(d):
        yield root, True
        for f in files:
            yield os.path.join(root, f), False
out = sys.argv[2]
published = set()
for p, is_dir in walk(out):
    if not is_dir:
        st = os.lstat(p)
        published.add((st.st_dev, st.st_ino))
apparent = extra = 0
for folder in sys.argv[1].split(":"):
    if not os.path.isdir(folder):
        continue
    for p, is_dir in walk(folder):
        st = os.lstat(p)
        if is_dir:
            extra += st.st_blocks * 512
            continue
        apparent += st.st_size
        if (st.st_dev, st.st_ino) not in published:
            extra += st.st_blocks * 512
print(apparent, extra)
PY
}

report() {
  local what=$1 input=$2 site=$3
  local gz published kept
  gz=$(find "$input" -type f -name '*.gz' -printf '%s\n' | awk '{s += $1} END {print s}')
  published=$(du -s --apparent-size -B1 "$site/public" | cut -f1)
  read -r apparent extra < <(measure "$site/.public.cache:$site/.public.flamesite-next" "$site/public")
  read -r cache _ < <(measure "$site/.public.cache" "$site/public")
  python3 - "$what" "$gz" "$published" "$apparent" "$extra" "$cache" <<'PY'
import sys
what, gz, pub, app, extra, cache = sys.argv[1], *map(int, sys.argv[2:])
mb = lambda b: f"{b / 1e6:.2f} MB"
print(f"{what}:")
print(f"  gzipped profiles                     {mb(gz):>10}   1.00x")
print(f"  published (du --apparent-size)       {mb(pub):>10}   {pub / gz:.2f}x the profiles")
print(f"  kept beside, du --apparent-size      {mb(app):>10}   {app / pub:.2f}x the output")
print(f"    of which the cache folder          {mb(cache):>10}   {cache / pub:.3f}x the output")
print(f"  kept beside, disk bytes not shared   {mb(extra):>10}   {extra / pub:.3f}x the output")
PY
}

build() {
  local input=$1 site=$2
  mkdir -p "$site"
  printf 'input = %s\noutput = "public"\n' "\"$input\"" >"$site/site.toml"
  (cd "$site" && /usr/bin/time -f "  build: %e s, %M KB peak" "$bin" build 2>&1 | grep -v '^warning' | tail -2)
}

"$synth" --size small --stacks 40000 --seed 5 -o "$work/base.folded"
python3 benches/gen-nightly.py "$work/base.folded" "$work/nightly/api" "$nights" 5
echo "== a nightly series: $nights runs of 40,000 stacks ($(nproc) cores)"
build "$work/nightly" "$work/site-nightly"
report "nightly series" "$work/nightly" "$work/site-nightly"

mkdir -p "$work/large/big"
"$synth" --size large --seed 2 -o "$work/large/big/large.folded.gz"
echo "== the large profile alone"
build "$work/large" "$work/site-large"
report "large profile" "$work/large" "$work/site-large"
