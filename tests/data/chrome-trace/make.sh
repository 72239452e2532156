#!/bin/sh
# Regenerates the folded files of fractional counts and what an independent reckoning says
# they hold. The tool that writes them is FlameGraph's stackcollapse-chrome-tracing.py
# (https://github.com/brendangregg/FlameGraph, commit 41fee1f99f9276008b7cd112fca19dc3ea84ac32),
# which prints each stack's duration in microseconds as a Python float (`2.95`, `1195906.0`,
# and float noise such as `4.399900000000001`).
#
#   FLAMEGRAPH=/path/to/FlameGraph sh make.sh
#
# - trace.folded: the tool's output for trace.json, a Chrome trace written by hand from the
#   Trace Event Format spec (complete "X" events whose `ts` and `dur` are fractional
#   microseconds, as the spec allows), since Chromium here writes whole microseconds.
# - chromium.folded: the tool's output for a real trace of Chromium (Debian's package) loading
#   a page, first 40 lines: whole microseconds written `N.0`.
# - *.expected: every stack of the folded file once, with its count rounded half up to six
#   decimal places (flamesite's rule) and summed with Python's exact decimals: what
#   `flamesite fold` must print, sorted by bytes.
# The tests read the committed files.
set -eu
cd "$(dirname "$0")"
: "${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of FlameGraph}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$FLAMEGRAPH/stackcollapse-chrome-tracing.py" trace.json > trace.folded
timeout 30 chromium --headless=new --no-sandbox --disable-gpu --trace-startup=toplevel,v8 \
    --trace-startup-format=json --trace-startup-file="$tmp/trace.json" --trace-startup-duration=3 \
    "data:text/html,<script>let s=0;for(let i=0;i<3e6;i++)s+=Math.sqrt(i);document.title=s</script>" \
    >/dev/null 2>&1 || true
python3 "$FLAMEGRAPH/stackcollapse-chrome-tracing.py" "$tmp/trace.json" | head -n 40 > chromium.folded
for f in trace chromium; do
    python3 - "$f.folded" > "$f.expected" <<'PY'
import sys
from decimal import Decimal, ROUND_HALF_UP
sums = {}
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line:
        continue
    stack, _, count = line.rpartition(" ")
    sums[stack] = sums.get(stack, Decimal(0)) + Decimal(count).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
out = []
for stack, value in sums.items():
    text = format(value.normalize(), "f")
    out.append(f"{stack} {text}\n".encode())
sys.stdout.buffer.write(b"".join(sorted(out)))
PY
done
wc -l trace.folded chromium.folded
