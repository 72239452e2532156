#!/usr/bin/env bash
# Memory of decoding against the decompressed input (issue 31, item 12), for
# docs/BENCHMARKS.md and docs/RELIABILITY.md: the shapes that took most memory per byte read.
#   one-frame.speedscope.json.gz  a sampled speedscope profile of SAMPLES one-frame samples
#                                 (1,000 names), each weighed 1
#   pyspy.speedscope.json.gz      py-spy's shape: SAMPLES/10 samples of 30 frames out of 5,000
#                                 names, stacks that repeat with small changes
#   unique.folded.gz              folded stacks: SAMPLES lines `main;fn_<i> 1`, every name new
#   empty-strings.pb.gz           pprof: one sample, and a string table of SAMPLES empty strings
# Each is checked alone (`flamesite check --no-cache -j 1`: decode only); printed: the
# decompressed bytes, the peak resident memory (GNU time) less that of checking a one-line
# profile (the process's own), and their ratio. The goal of the issue: every ratio ≤ 10.
# Needs: python3, GNU time (/usr/bin/time), target/release/flamesite (or FLAMESITE).
# Usage: benches/decode-memory.sh [SAMPLES (default 2000000)]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
bin=${FLAMESITE:-$PWD/target/release/flamesite}
for need in "$bin" python3 /usr/bin/time; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$work" <<'PY'
import gzip, random, sys
sys.path.insert(0, "benches")  # run from the repository root
from protowire import field_bytes as field, field_varint as vfield, varint  # noqa: E402
n = int(sys.argv[1]); d = sys.argv[2]
r = random.Random(7)
head = '{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":['
with gzip.open(f"{d}/one-frame.speedscope.json.gz", "wt") as f:
    f.write(head + ",".join('{"name":"f%d"}' % i for i in range(1000)))
    f.write(']},"profiles":[{"type":"sampled","name":"s","unit":"none","startValue":0,"endValue":%d,"samples":[' % n)
    f.write(",".join("[%d]" % r.randrange(1000) for _ in range(n)))
    f.write('],"weights":[' + ",".join("1" for _ in range(n)) + "]}]}")
m = n // 10
with gzip.open(f"{d}/pyspy.speedscope.json.gz", "wt") as f:
    f.write(head + ",".join('{"name":"fn_%d","file":"/app/mod_%d.py","line":%d}' % (i, i % 300, i % 997) for i in range(5000)))
    f.write(']},"profiles":[{"type":"sampled","name":"MainThread","unit":"seconds","startValue":0,"endValue":%d,"samples":[' % m)
    base = [r.randrange(5000) for _ in range(30)]
    out = []
    for _ in range(m):
        stack = base[: 10 + r.randrange(20)]
        stack = stack[:-3] + [r.randrange(5000) for _ in range(3)]
        out.append("[" + ",".join(map(str, stack)) + "]")
    f.write(",".join(out) + '],"weights":[' + ",".join("0.01" for _ in range(m)) + "]}]}")
with gzip.open(f"{d}/unique.folded.gz", "wt") as f:
    for i in range(n):
        f.write("main;fn_%d 1\n" % i)
p = bytearray(field(1, vfield(1, 1) + vfield(2, 2)))
p += field(4, vfield(1, 1) + field(4, vfield(1, 1)))
p += field(5, vfield(1, 1) + vfield(2, 3))
p += field(2, field(1, varint(1)) + field(2, varint(1)))
for s in [b"", b"samples", b"count", b"main"]: p += field(6, s)
p += field(6, b"") * n
open(f"{d}/empty-strings.pb.gz", "wb").write(gzip.compress(bytes(p)))
with gzip.open(f"{d}/tiny.folded.gz", "wt") as f:
    f.write("main;a 1\n")
PY
peak() { # FILE: the peak resident kB of checking it alone
  rm -rf "$work/in"; mkdir "$work/in"; cp "$work/$1" "$work/in/"
  /usr/bin/time -o "$work/time" -f '%M' "$bin" check --no-cache -j 1 --input "$work/in" >/dev/null 2>"$work/err" || { echo "check of $1 failed:" >&2; cat "$work/err" >&2; exit 1; }
  tail -1 "$work/time"
}
base=$(peak tiny.folded.gz)
echo "$(nproc) cores; flamesite at $(git rev-parse --short HEAD 2>/dev/null || echo '?'); SAMPLES=$n; the process alone: $base kB"
printf '%-30s %12s %12s %8s\n' input "decompressed" "peak - base" "ratio"
for file in one-frame.speedscope.json.gz pyspy.speedscope.json.gz unique.folded.gz empty-strings.pb.gz; do
  bytes=$(gzip -dc "$work/$file" | wc -c)
  kb=$(peak "$file")
  python3 -c "import sys; b, kb, base = map(int, sys.argv[1:]); used = max(0, kb - base) * 1024; print('%-30s %10.1f MB %10.1f MB %8.2f' % ('$file', b / 1e6, used / 1e6, used / b))" "$bytes" "$kb" "$base"
done
