#!/usr/bin/env bash
# Decoding hostile profiles (issue 12, item 9), for docs/BENCHMARKS.md and docs/RELIABILITY.md:
#   chain.cpuprofile.gz   a call tree that is a chain of N nodes, each sampled once
#   opened.speedscope.json.gz  an evented profile that opens N frames one in another, then closes them
#   long.pb.gz            pprof: a 100 kB function name inlined 1,000 times in a location that
#                         each of 40 samples refers to 90 times (90,000 frames a sample)
#   spaces.speedscope.json.gz  a valid speedscope file with 3 GiB of spaces in it (3 MB gzipped)
# Each is built alone (`flamesite build --no-cache`); wall time and peak memory (GNU time).
# With OLD=/path/to/an/older/flamesite, that binary is run on the same files first.
# Needs: python3, GNU time (/usr/bin/time). Usage: benches/hostile-decode.sh [N (default 40000)]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-40000}
bin=${FLAMESITE:-$PWD/target/release/flamesite}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$work" <<'PY'
import gzip, sys
sys.path.insert(0, "benches")  # run from the repository root
from protowire import field_bytes as field, field_varint as vfield, varint  # noqa: E402
n = int(sys.argv[1]); d = sys.argv[2]
with gzip.open(f"{d}/chain.cpuprofile.gz", "wt") as f:
    f.write('{"nodes":[')
    f.write(",".join('{"id":%d,"callFrame":{"functionName":"%s","url":"a.js","lineNumber":%d},"children":%s}'
                     % (i, "(root)" if i == 1 else "f%d" % i, i, "[%d]" % (i + 1) if i < n else "[]") for i in range(1, n + 1)))
    f.write('],"startTime":0,"endTime":%d,"samples":[%s],"timeDeltas":[%s]}'
            % (n + 1, ",".join(str(i) for i in range(1, n + 1)), ",".join("1" for _ in range(n))))
with gzip.open(f"{d}/opened.speedscope.json.gz", "wt") as f:
    f.write('{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[')
    f.write(",".join('{"name":"f%d"}' % i for i in range(n)))
    f.write(']},"profiles":[{"type":"evented","name":"e","unit":"none","startValue":0,"endValue":%d,"events":[' % (2 * n))
    ev = ['{"type":"O","at":%d,"frame":%d}' % (i, i) for i in range(n)]
    ev += ['{"type":"C","at":%d,"frame":%d}' % (2 * n - i, i) for i in reversed(range(n))]
    f.write(",".join(ev) + "]}]}")
samples = 40
strings = [b"", b"samples", b"count", b"x" * 100000] + [b"g%d" % i for i in range(samples)]
p = bytearray(field(1, vfield(1, 1) + vfield(2, 2)))
p += field(4, vfield(1, 1) + b"".join(field(4, vfield(1, 1)) for _ in range(1000)))
p += field(5, vfield(1, 1) + vfield(2, 3))
for i in range(samples):
    p += field(4, vfield(1, 2 + i) + field(4, vfield(1, 2 + i)))
    p += field(5, vfield(1, 2 + i) + vfield(2, 4 + i))
    p += field(2, field(1, b"".join(varint(v) for v in [2 + i] + [1] * 90)) + field(2, varint(1)))
for s in strings: p += field(6, s)
open(f"{d}/long.pb.gz", "wb").write(gzip.compress(bytes(p)))
spaces = gzip.compress(b" " * (1 << 20))
with open(f"{d}/spaces.speedscope.json.gz", "wb") as f:
    f.write(gzip.compress(b'{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main"}]},'
                          b'"profiles":[{"type":"sampled","name":"s","unit":"none","startValue":0,"endValue":1,"samples":['))
    for _ in range(3072): f.write(spaces)
    f.write(gzip.compress(b'[0]],"weights":[1]}]}'))
PY
for file in chain.cpuprofile.gz opened.speedscope.json.gz long.pb.gz spaces.speedscope.json.gz; do
  for b in ${OLD:-} "$bin"; do
    rm -rf "$work/in" "$work/out"; mkdir "$work/in"; cp "$work/$file" "$work/in/"
    status=0
    /usr/bin/time -o "$work/time" -f '%e s, %M kB peak' "$b" build --no-cache --input "$work/in" --output "$work/out" >/dev/null 2>"$work/err" || status=$?
    printf '%-28s %6s kB gzipped  %-40s %s (exit %s)\n' "$file" "$(( $(stat -c %s "$work/$file") / 1024 ))" "$b" "$(cat "$work/time" | tail -1)" "$status"
  done
done
