#!/usr/bin/env bash
# Regenerates the expectation with FlameGraph's own stackcollapse-sample.awk (not flamesite,
# not inferno: an independent reference), its Rust symbols then demangled, its zero-sample
# lines dropped and its equal stacks added up by ../dtrace/rust-demangle.py (see README.md).
# Needs awk (POSIX; run with Debian's mawk 1.3.4) and python3:
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph bash make.sh
set -euo pipefail
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
awk -f "$fg/stackcollapse-sample.awk" sample.txt | python3 ../dtrace/rust-demangle.py >sample.folded
