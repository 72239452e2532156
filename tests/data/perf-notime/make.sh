#!/bin/sh
# Regenerates the fixtures of `perf script` output without a time field, and their expected
# folded stacks. Needs gcc on x86-64, perf (Debian's linux-perf; recording needs
# kernel.perf_event_paranoid <= 2) and inferno-collapse-perf (INFERNO_BIN, default
# /tmp/inferno-bin/bin: cargo install inferno --root /tmp/inferno-bin). The tests only read the
# committed outputs.
#
# notime.txt: `perf record -e task-clock -e page-faults -g` of ../perf-jit/jit.c, printed by
#   `perf script -F comm,pid,event,ip,sym,dso` (as older perf versions and many of the
#   FlameGraph repository's examples print it): sample lines read `comm pid event:`, with no
#   time and no period.
# notime-EVENT.folded: inferno-collapse-perf's folding of the samples of EVENT alone (the
#   file split by event with awk: inferno reads a file of one such event, but with no time
#   field it cannot tell two events apart).
set -eu
cd "$(dirname "$0")"
INFERNO_BIN=${INFERNO_BIN:-/tmp/inferno-bin/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/jit" ../perf-jit/jit.c
perf record -q -e task-clock -e page-faults -F 499 -g -o "$tmp/events.data" "$tmp/jit"
perf script -F comm,pid,event,ip,sym,dso -i "$tmp/events.data" | sed "s|$tmp/|/tmp/|g" > notime.txt
rm -f "/tmp/perf-$(awk 'NR == 1 { print $2 }' notime.txt).map"
for event in task-clock page-faults; do
  # Whole samples (a first line, its stack lines, a blank line) of one event.
  awk -v ev="$event:" '/^[^ \t#]/ { keep = ($3 == ev) } keep { print }' notime.txt > "$tmp/$event.txt"
  "$INFERNO_BIN/inferno-collapse-perf" "$tmp/$event.txt" > "notime-$event.folded"
done
wc -c ./*.txt ./*.folded
