#!/bin/sh
# Regenerates the expected folded stacks of notime.txt with FlameGraph's own
# stackcollapse-perf.pl (not flamesite, not inferno: an independent reference), and with
# `record` first re-records notime.txt itself. See README.md.
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh          # the expectations only: needs perl, awk
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh record   # a new recording first: gcc on x86-64, perf
#                                                  # (Debian's linux-perf), paranoid <= 2
# The tests only read the committed files.
#
# notime.txt: `perf record -e task-clock -e page-faults -g` of ../perf-jit/jit.c, printed by
#   `perf script -F comm,pid,event,ip,sym,dso` (as older perf versions and many of the
#   FlameGraph repository's examples print it): sample lines read `comm pid event:`, with no
#   time and no period.
# notime-EVENT.folded: stackcollapse-perf.pl's folding of the samples of EVENT alone, the
#   file split by event with awk: the script finds a sample's event after its time field, so
#   without one it cannot tell two events apart (--event-filter keeps every sample).
set -eu
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${1:-}" = record ]; then
  gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/jit" ../perf-jit/jit.c
  perf record -q -e task-clock -e page-faults -F 499 -g -o "$tmp/events.data" "$tmp/jit"
  perf script -F comm,pid,event,ip,sym,dso -i "$tmp/events.data" | sed "s|$tmp/|/tmp/|g" > notime.txt
  rm -f "/tmp/perf-$(awk 'NR == 1 { print $2 }' notime.txt).map"
fi
for event in task-clock page-faults; do
  # Whole samples (a first line, its stack lines, a blank line) of one event.
  awk -v ev="$event:" '/^[^ \t#]/ { keep = ($3 == ev) } keep { print }' notime.txt > "$tmp/$event.txt"
  perl "$fg/stackcollapse-perf.pl" "$tmp/$event.txt" > "notime-$event.folded"
done
wc -c ./*.txt ./*.folded
