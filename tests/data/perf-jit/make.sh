#!/bin/sh
# Regenerates the perf script fixtures of a program with a JIT-compiled function, and
# inferno's folded forms of them (the expected outputs). Needs gcc on x86-64, perf (Debian's
# linux-perf; recording needs kernel.perf_event_paranoid <= 2) and inferno-collapse-perf
# (INFERNO_BIN, default /tmp/inferno-bin/bin: cargo install inferno --root /tmp/inferno-bin).
# The tests only read the committed outputs.
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
INFERNO_BIN=${INFERNO_BIN:-/tmp/inferno-bin/bin}
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
"$INFERNO_BIN/inferno-collapse-perf" jit.txt > jit.folded
"$INFERNO_BIN/inferno-collapse-perf" --jit --pid jit.txt > jit-jit-pid.folded
"$INFERNO_BIN/inferno-collapse-perf" --tid jit.txt > jit-tid.folded
"$INFERNO_BIN/inferno-collapse-perf" events.txt > events.folded
# perf pads the event names of a two-event file to one width (`2004008  task-clock:`), where
# inferno, splitting at the last space, reads no period; with the padding taken out it reads
# each sample's period, as flamesite does.
sed -E '/^[^ \t#]/ s/: +([0-9]+) +([^ :]+):/: \1 \2:/' events.txt > "$tmp/events-unpadded.txt"
"$INFERNO_BIN/inferno-collapse-perf" --event-filter task-clock "$tmp/events-unpadded.txt" > events-task-clock.folded
"$INFERNO_BIN/inferno-collapse-perf" task-clock.txt > task-clock.folded
"$INFERNO_BIN/inferno-collapse-perf" cut.txt > cut.folded
wc -c ./*.txt ./*.folded
