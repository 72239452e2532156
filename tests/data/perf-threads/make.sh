#!/bin/sh
# Regenerates the expected folded stacks of the perf script files of threads.c with FlameGraph's
# own stackcollapse-perf.pl (not flamesite, not inferno: an independent reference), and with
# `record` first re-records the files themselves. See README.md.
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh          # the expectations only: needs perl
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh record   # new recordings first: gcc, perf (Debian's
#                                                  # linux-perf), run as root for `perf record -a`
# The tests only read the committed files.
#
# threads.txt       `perf record -F 499 -g` of threads.c, `perf script` with its default fields.
# threads-pid.txt   the same recording printed by `perf script -F +pid` (`pid/tid`).
# sched.txt         `perf record -e sched:sched_switch` (a tracepoint, no -g) of threads.c:
#                   one line a sample, no blank lines, the tracepoint's fields after the event.
# exited.txt        `perf record -a -g -c 100000` of `threads exit` (400 short threads started
#                   and joined in turn), printed with `--max-stack 12`; of the samples of the
#                   whole machine, only those of the program (its first 20) and those perf
#                   prints as `:-1    -1` (threads whose id the kernel had let go, while they
#                   exited) are kept, by awk below.
set -eu
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
if [ "${1:-}" = record ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/threads" threads.c
  # The build path of the program is a temporary folder: replace it so that reruns differ
  # only in the samples.
  perf record -q -F 499 -g -o "$tmp/threads.data" "$tmp/threads" >/dev/null
  perf script -i "$tmp/threads.data" | sed "s|$tmp/|/tmp/|g" > threads.txt
  perf script -i "$tmp/threads.data" -F +pid | sed "s|$tmp/|/tmp/|g" > threads-pid.txt
  perf record -q -e sched:sched_switch -o "$tmp/sched.data" "$tmp/threads" >/dev/null
  perf script -i "$tmp/sched.data" > sched.txt
  perf record -q -a -g -c 100000 -o "$tmp/exit.data" "$tmp/threads" exit >/dev/null
  perf script -i "$tmp/exit.data" --max-stack 12 | sed "s|$tmp/|/tmp/|g" \
    | awk -v RS= -v ORS='\n\n' '$1 == ":-1" || ($1 == "threads" && kept++ < 20)' > exited.txt
fi
collapse() { perl "$fg/stackcollapse-perf.pl" "$@"; }
# The script takes the first number after a sample line's first word for the thread id, so it
# reads `Pool Worker 7  4237 …` as the thread 7 of `Pool_Worker`, and `:-1    -1 …` not at all
# (its regular expression wants digits). Each file is given, line by line, the shape it reads
# (perl below; nothing else changes): the names threads.c gives its threads, joined by `_` as
# the script joins a name's words; the id -1 written 1 (the root frame is then `:-1`, as it
# should be; with --tid it is put back to -1 in the script's output).
names='s/^ *(Worker 3|Pool Worker 7|FS Broker 5906) /$1 =~ tr| |_|r . " "/e'
perl -pe "$names" threads.txt | collapse > threads.folded
perl -pe "$names" threads-pid.txt | collapse --tid > threads-tid.folded
# sched.txt also gets a blank line after each sample, which the script needs to end one, and
# loses perf's padding before the command, which the script does not read.
perl -pe "s/^ +//; $names; s/\$/\\n/" sched.txt | collapse > sched.folded
perl -pe 's/^(:-1 +)-1 /${1}1 /' exited.txt | collapse > exited.folded
perl -pe 's/^(:-1 +)-1 /${1}1 /' exited.txt | collapse --tid | sed 's|^:-1-?/1;|:-1-?/-1;|' > exited-tid.folded
wc -c ./*.txt ./*.folded
