#!/usr/bin/env bash
# Regenerates the expectations of this folder with FlameGraph's own stackcollapse.pl (not
# flamesite, not inferno: an independent reference), its Rust symbols then demangled by
# rust-demangle.py (this folder's; see README.md). Needs perl, python3 and gzip:
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph
#   git -C /tmp/FlameGraph checkout 41fee1f99f9276008b7cd112fca19dc3ea84ac32
#   FLAMEGRAPH=/tmp/FlameGraph bash make.sh
set -euo pipefail
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
gzip -dc example-dtrace-stacks.txt.gz | perl "$fg/stackcollapse.pl" | python3 rust-demangle.py | gzip -9 -n >example-dtrace-stacks.folded.gz
perl "$fg/stackcollapse.pl" stack-ustack.txt | python3 rust-demangle.py >stack-ustack.folded
