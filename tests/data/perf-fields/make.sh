#!/bin/sh
# Regenerates the fixtures of `perf script` printed with fewer fields (`perf script -F`), and
# their expected folded stacks. Needs gcc on x86-64, perf (Debian's linux-perf; recording
# needs kernel.perf_event_paranoid <= 2) and inferno-collapse-perf (INFERNO_BIN, default
# /tmp/inferno-bin/bin: cargo install inferno --root /tmp/inferno-bin). The tests only read
# the committed outputs.
#
# Two recordings of ../perf/prog.c, with the cpu of each sample: flat.data without call
# chains (perf record without -g: each sample is one line, its frame after the event) and
# stacks.data with them. Each file below is printed from one of them; its expected stacks are
# inferno-collapse-perf's folding of another printing of the same recording that inferno
# reads fully, so the expectation never comes from flamesite's reading of these fields.
#
# oneline.txt         flat, `-F comm,tid,time,period,event,ip,sym,dso`: perf pads the
#                     command on the left, and the frame follows the event on the line.
#                     Expected: oneline.folded, inferno on the file itself (weighed by period).
# oneline-bare.txt    flat, `-F comm,tid,ip,sym,dso`: no time, no event, no period.
#                     Expected: oneline-bare.folded, inferno on `-F comm,tid,event,ip,sym,dso`
#                     (each sample counts one).
# noevent.txt         stacks, `-F comm,tid,ip,sym,dso`: a sample's first line is `comm tid`.
#                     Expected: noevent.folded, inferno on `-F comm,tid,event,ip,sym,dso`.
# period-notime.txt   stacks, `-F comm,tid,cpu,period,event,ip,sym,dso`: a period and a cpu
#                     but no time (inferno reads no period there, taking the event for it).
#                     Expected: period-notime.folded, inferno on `perf script` (weighed by
#                     period).
set -eu
cd "$(dirname "$0")"
INFERNO_BIN=${INFERNO_BIN:-/tmp/inferno-bin/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" ../perf/prog.c
perf record -q --sample-cpu -F 4999 -o "$tmp/flat.data" "$tmp/prog" >/dev/null
perf record -q --sample-cpu -F 4999 -g -o "$tmp/stacks.data" "$tmp/prog" >/dev/null
print() { # DATA FIELDS OUT: perf script of DATA with FIELDS (all when empty) into OUT
  if [ -n "$2" ]; then set -- "$1" "-F $2" "$3"; fi
  # shellcheck disable=SC2086
  perf script -i "$tmp/$1.data" $2 | sed "s|$tmp/|/tmp/|g" > "$3"
}
fold() { "$INFERNO_BIN/inferno-collapse-perf" "$1" > "$2"; }
print flat comm,tid,time,period,event,ip,sym,dso oneline.txt
fold oneline.txt oneline.folded
print flat comm,tid,ip,sym,dso oneline-bare.txt
print flat comm,tid,event,ip,sym,dso "$tmp/x.txt" && fold "$tmp/x.txt" oneline-bare.folded
print stacks comm,tid,ip,sym,dso noevent.txt
print stacks comm,tid,event,ip,sym,dso "$tmp/x.txt" && fold "$tmp/x.txt" noevent.folded
print stacks comm,tid,cpu,period,event,ip,sym,dso period-notime.txt
print stacks "" "$tmp/x.txt" && fold "$tmp/x.txt" period-notime.folded
wc -c ./*.txt ./*.folded
