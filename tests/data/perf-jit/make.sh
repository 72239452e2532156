#!/bin/sh
# Regenerates the expected folded stacks of this folder's perf script fixtures with
# FlameGraph's own stackcollapse-perf.pl (not flamesite, not inferno: an independent
# reference), and with `record` first re-records the fixtures themselves. See README.md.
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh          # the expectations only: needs perl
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh record   # new recordings first: gcc on x86-64, perf
#                                                  # (Debian's linux-perf), paranoid <= 2
# The tests only read the committed files.
#
# jit.txt: `perf record -g` of jit.c (the default event: cpu-clock where the machine has no
#   hardware counters, with its period in nanoseconds), printed by `perf script -F +pid`, so
#   every sample has its real pid/tid; the JIT frame is named through /tmp/perf-PID.map.
# events.txt: `perf record -e task-clock -e page-faults -g` of the same program: two events
#   in one file, page faults first (the program's start faults before the clock ticks).
# task-clock.txt: `perf record -e task-clock -g` of the same program (period: nanoseconds).
# cut.txt: jit.txt cut inside a sample, as a file copied while perf script still wrote it:
#   up to the third frame line of the first sample at or after line 100 (its outer frames
#   and its blank line are missing).
set -eu
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
if [ "${1:-}" = record ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/jit" jit.c
  # perf script reads /tmp/perf-PID.map when it prints, so the map is removed only afterwards.
  perf record -q -F 499 -g -o "$tmp/jit.data" "$tmp/jit"
  perf script -F +pid -i "$tmp/jit.data" | sed "s|$tmp/|/tmp/|g" > jit.txt
  perf record -q -e task-clock -e page-faults -F 499 -g -o "$tmp/events.data" "$tmp/jit"
  perf script -i "$tmp/events.data" | sed "s|$tmp/|/tmp/|g" > events.txt
  perf record -q -e task-clock -F 499 -g -o "$tmp/task.data" "$tmp/jit"
  perf script -i "$tmp/task.data" | sed "s|$tmp/|/tmp/|g" > task-clock.txt
  # Only the maps of these recordings (the program is single-threaded: its tid is its pid).
  for f in jit.txt events.txt task-clock.txt; do
    rm -f "/tmp/perf-$(awk 'NR == 1 { split($2, id, "/"); print id[1] }' "$f").map"
  done
  head -n "$(awk 'NR >= 100 && /^[^ \t]/ { print NR + 3; exit }' jit.txt)" jit.txt > cut.txt
fi
collapse() { perl "$fg/stackcollapse-perf.pl" "$@"; }
collapse jit.txt > jit.folded
collapse --jit --pid jit.txt > jit-jit-pid.folded
collapse --tid jit.txt > jit-tid.folded
# The script keeps the first sample's event (page-faults) and says so on stderr; it reads
# the period of perf's padded event names (`2004008  task-clock:`) as they are.
collapse events.txt > events.folded 2>/dev/null
collapse --event-filter=task-clock events.txt > events-task-clock.folded
collapse task-clock.txt > task-clock.folded
# The script counts a sample at its blank line, so it drops cut.txt's last sample, which has
# none. flamesite keeps it (as inferno does), with the frames that were read: cut.folded is
# the script's folding of cut.txt with that blank line added (see README.md).
{ cat cut.txt; echo; } | collapse > cut.folded
wc -c ./*.txt ./*.folded
