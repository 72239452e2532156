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
# - chromium.trace.json.gz: a real trace of Chromium 156 (Debian's package) loading a page
#   with the categories of DevTools' Performance panel (`devtools.timeline` and the JavaScript
#   samples of `disabled-by-default-v8.cpu_profiler`, 1 s): 2,444 complete events on 9
#   threads and 144 Profile and ProfileChunk events.
# - py-spy.trace.json.gz: py-spy 0.4.3 (`pip install py-spy`) recording prog.py with
#   `--format chrometrace`: begin and end events of one thread, the file a bare array.
# - *.reference.folded: what FlameGraph's tool makes of those two, after complete.py has made
#   their begin and end pairs complete events (the tool reads only those) and ordered them so
#   that the tool nests each event in the one that holds it: the reference the tests compare
#   flamesite's `wall` graph with, stack for stack (the tool merges threads, so the tests drop
#   flamesite's thread frames). trace.folded is trace.json's.
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
if [ -n "${REAL_TRACES:-}" ]; then
    # New real traces (REAL_TRACES=1): they differ from run to run, so their references too.
    timeout 30 chromium --headless=new --no-sandbox --disable-gpu \
        --trace-startup=devtools.timeline,disabled-by-default-v8.cpu_profiler \
        --trace-startup-format=json --trace-startup-file="$tmp/chromium.json" --trace-startup-duration=1 \
        "data:text/html,<script>let s=0;for(let i=0;i<3e6;i++)s+=Math.sqrt(i);document.title=s</script>" \
        >/dev/null 2>&1 || true
    gzip -9 -c "$tmp/chromium.json" > chromium.trace.json.gz
    py-spy record --format chrometrace -o "$tmp/py-spy.json" -r 100 -- python3 prog.py
    gzip -9 -c "$tmp/py-spy.json" > py-spy.trace.json.gz
fi
# chromium.PID.cpuprofile.gz: the CPU samples of chromium.trace.json.gz, each profile put
# together as DevTools saves a .cpuprofile (cpuprofile.py): the reference of the trace's
# JavaScript graphs.
rm -f chromium.*.cpuprofile.gz
gzip -dc chromium.trace.json.gz | python3 cpuprofile.py chromium
gzip -9 chromium.*.cpuprofile
for f in chromium py-spy; do
    gzip -dc "$f.trace.json.gz" | python3 complete.py > "$tmp/$f.complete.json"
    python3 "$FLAMEGRAPH/stackcollapse-chrome-tracing.py" "$tmp/$f.complete.json" | LC_ALL=C sort > "$f.reference.folded"
done
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
