#!/bin/sh
# Regenerates the perf script fixture and inferno's folded form of it (the expected output).
# Needs gcc, perf (Debian's linux-perf) and inferno-collapse-perf (INFERNO_BIN, default
# /tmp/inferno-bin/bin). The tests only read the committed outputs.
set -eu
cd "$(dirname "$0")"
INFERNO_BIN=${INFERNO_BIN:-/tmp/inferno-bin/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" prog.c
perf record -q -F 499 -g -o "$tmp/perf.data" "$tmp/prog" >/dev/null
# The build path of the program is a temporary folder: replace it so that reruns differ only
# in the samples.
perf script -i "$tmp/perf.data" | sed "s|$tmp/|/tmp/|g" > perf.txt
"$INFERNO_BIN/inferno-collapse-perf" perf.txt > expected.folded
"$INFERNO_BIN/inferno-collapse-perf" --kernel --jit --pid perf.txt > expected-kernel-jit-pid.folded
"$INFERNO_BIN/inferno-collapse-perf" --tid --addrs perf.txt > expected-tid-addrs.folded
wc -c perf.txt expected*.folded
