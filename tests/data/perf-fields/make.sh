#!/bin/sh
# Regenerates the expected folded stacks of the fixtures of `perf script` printed with fewer
# fields (`perf script -F`) with FlameGraph's own stackcollapse-perf.pl (not flamesite, not
# inferno: an independent reference), and with `record` first re-records the fixtures. See
# README.md.
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh          # the expectations only: needs perl
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh record   # new recordings first: gcc on x86-64, perf
#                                                  # (Debian's linux-perf), paranoid <= 2
# The tests only read the committed files.
#
# Two recordings of ../perf/prog.c, with the cpu of each sample: flat.data without call
# chains (perf record without -g: each sample is one line, its frame after the event) and
# stacks.data with them. Each file is printed from one of them:
#
# oneline.txt         flat, `-F comm,tid,time,period,event,ip,sym,dso`: perf pads the
#                     command on the left, and the frame follows the event on the line.
# oneline-bare.txt    flat, `-F comm,tid,ip,sym,dso`: no time, no event, no period.
# noevent.txt         stacks, `-F comm,tid,ip,sym,dso`: a sample's first line is `comm tid`.
# period-notime.txt   stacks, `-F comm,tid,cpu,period,event,ip,sym,dso`: a period and a cpu
#                     but no time.
#
# The script reads noevent.txt as it is. The three others are first given, line by line, the
# shape it reads (perl below; nothing else changes): a one-line sample becomes its first line,
# its frame on a line of its own and a blank line; period-notime.txt's sample lines get a
# time (0.000000:), after which the script looks for the period and the event.
set -eu
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
if [ "${1:-}" = record ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" ../perf/prog.c
  perf record -q --sample-cpu -F 4999 -o "$tmp/flat.data" "$tmp/prog" >/dev/null
  perf record -q --sample-cpu -F 4999 -g -o "$tmp/stacks.data" "$tmp/prog" >/dev/null
  print() { # DATA FIELDS OUT: perf script of DATA with FIELDS into OUT
    perf script -i "$tmp/$1.data" -F "$2" | sed "s|$tmp/|/tmp/|g" > "$3"
  }
  print flat comm,tid,time,period,event,ip,sym,dso oneline.txt
  print flat comm,tid,ip,sym,dso oneline-bare.txt
  print stacks comm,tid,ip,sym,dso noevent.txt
  print stacks comm,tid,cpu,period,event,ip,sym,dso period-notime.txt
fi
collapse() { perl "$fg/stackcollapse-perf.pl" "$@"; }
# `  prog 10064 44621.530408:   200040 cpu-clock:ppp:   558573e85161 leaf (/tmp/prog)`
perl -pe 's/^ +//; s/^(.*?: +\d+ +\S+:) +([0-9a-f]+ .*)$/$1\n\t$2\n/' oneline.txt | collapse > oneline.folded
# `  prog 10064   558573e85161 leaf (/tmp/prog)`
perl -pe 's/^ +//; s/^(\S+ +\d+) +([0-9a-f]+ .*)$/$1 \n\t$2\n/' oneline-bare.txt | collapse > oneline-bare.folded
collapse noevent.txt > noevent.folded
# `prog 10067 [001]     200040 cpu-clock:ppp: `
perl -pe 's/^(\S.* \[\d+\]) +(\d+ +\S+: *)$/$1 0.000000: $2/' period-notime.txt | collapse > period-notime.folded
wc -c ./*.txt ./*.folded
