#!/bin/sh
# Regenerates the expected folded stacks of perf.txt with FlameGraph's own
# stackcollapse-perf.pl (not flamesite, not inferno: an independent reference), and with
# `record` first re-records perf.txt itself. See README.md.
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh          # the expectations only: needs perl
#   FLAMEGRAPH=/tmp/FlameGraph sh make.sh record   # a new recording first: gcc, perf (linux-perf)
# The tests only read the committed files.
set -eu
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
if [ "${1:-}" = record ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" prog.c
  perf record -q -F 499 -g -o "$tmp/perf.data" "$tmp/prog" >/dev/null
  # The build path of the program is a temporary folder: replace it so that reruns differ
  # only in the samples.
  perf script -i "$tmp/perf.data" | sed "s|$tmp/|/tmp/|g" > perf.txt
fi
collapse() { perl "$fg/stackcollapse-perf.pl" "$@"; }
# site.toml's [perf] options are the script's flags: annotate_kernel --kernel,
# annotate_jit --jit, include_pid --pid, include_tid --tid, include_addrs --addrs.
collapse perf.txt > expected.folded
collapse --kernel --jit --pid perf.txt > expected-kernel-jit-pid.folded
collapse --tid --addrs perf.txt > expected-tid-addrs.folded
wc -c perf.txt expected*.folded
