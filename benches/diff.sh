#!/usr/bin/env bash
# Comparisons for docs/BENCHMARKS.md: what a diff of two large profiles costs against building
# one of them, in one run on one machine.
#
# The inputs: the large synthetic profile (`flamesite-synth --size large --seed 2`), and a
# variant of it with every 20th stack removed, every 20th (offset 1) re-weighted (count × 2 + 1)
# and every 20th (offset 2) copied under a new leaf: about 5% removed, 5% re-weighted, 5% added.
#
# Timed, median of N runs each, gzipped inputs, cache off unless said:
#   one      `flamesite build` of a site with the large profile alone
#   add      the same site (cache on) after the variant is added as a newer run: decoding the
#            variant and making the one comparison; the build reports the comparison's own time
#   diff     `flamesite diff large variant -o DIR`: both profiles decoded, merged, three layouts
# Needs target/release/flamesite and flamesite-synth (cargo build --release --workspace), gzip,
# python3. Usage: benches/diff.sh [RUNS (default 5)]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=$PWD/target/release/flamesite
synth=$PWD/target/release/flamesite-synth
for need in "$bin" "$synth" gzip python3; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$synth" --size large --seed 2 -o "$work/large.folded"
python3 - "$work/large.folded" "$work/variant.folded" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
out = []
with open(src, encoding="utf-8", errors="surrogateescape") as f:
    for i, line in enumerate(f):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        k = i % 20
        if k == 0:
            continue  # removed
        if k == 1:
            out.append(f"{stack} {int(count) * 2 + 1}")  # re-weighted
            continue
        out.append(f"{stack} {count}")
        if k == 2:
            out.append(f"{stack};bench::added_{i % 97} {count}")  # added
with open(dst, "w", encoding="utf-8", errors="surrogateescape") as f:
    f.write("\n".join(out) + "\n")
PY
mkdir -p "$work/one/api" "$work/two/api"
gzip -6 -c "$work/large.folded" > "$work/one/api/2026-11-01.folded.gz"
cp "$work/one/api/2026-11-01.folded.gz" "$work/two/api/2026-11-01.folded.gz"
gzip -6 -c "$work/variant.folded" > "$work/variant.folded.gz"
echo "input: $(wc -l < "$work/large.folded") stacks, variant $(wc -l < "$work/variant.folded"); $(nproc) cores; $runs runs"

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

for _ in $(seq "$runs"); do
  rm -rf "$work/out1"
  secs "$bin" build --no-cache --input "$work/one" --output "$work/out1" >> "$work/t-one"
  # The site with the large profile, then the variant added as the next run (cache on).
  rm -rf "$work/out2" "$work/.out2.cache" "$work/two/api/2026-11-02.folded.gz"
  "$bin" build --input "$work/two" --output "$work/out2" > /dev/null 2>&1
  cp "$work/variant.folded.gz" "$work/two/api/2026-11-02.folded.gz"
  t0=$(date +%s.%N)
  "$bin" build --input "$work/two" --output "$work/out2" 2> "$work/add.log"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l >> "$work/t-add"
  sed -n 's/.*(1 made in \([0-9.]*\) s.*/\1/p' "$work/add.log" >> "$work/t-compare"
  rm -rf "$work/out3"
  secs "$bin" diff "$work/one/api/2026-11-01.folded.gz" "$work/variant.folded.gz" -o "$work/out3" >> "$work/t-diff"
done
grep -q "1 comparison (1 made" "$work/add.log" || { echo "the rebuild did not make exactly one comparison:" >&2; cat "$work/add.log" >&2; exit 1; }
one=$(median < "$work/t-one"); add=$(median < "$work/t-add"); cmp=$(median < "$work/t-compare"); diff=$(median < "$work/t-diff")
printf 'build, one large profile:           %.2f s\n' "$one"
printf 'rebuild adding the variant:         %.2f s (%.2f x one)\n' "$add" "$(echo "$add / $one" | bc -l)"
printf '  of which the comparison (derive): %.2f s (%.2f x one)\n' "$cmp" "$(echo "$cmp / $one" | bc -l)"
printf 'flamesite diff large variant:       %.2f s (%.2f x one)\n' "$diff" "$(echo "$diff / $one" | bc -l)"
du -sh "$work/out3/g/samples" "$work/out1/p/api/2026-11-01/g/samples" | sed 's/^/size: /'
