#!/usr/bin/env bash
# Regenerates cpi.difffolded, the expectation of the CPI graph, with FlameGraph's own Perl
# scripts (not flamesite): each event's stacks folded by stackcollapse-perf.pl, joined by
# difffolded.pl into `stack instructions cycles`.
#   git clone https://github.com/brendangregg/FlameGraph /tmp/FlameGraph && FLAMEGRAPH=/tmp/FlameGraph bash make.sh
set -euo pipefail
cd "$(dirname "$0")"
fg=${FLAMEGRAPH:?set FLAMEGRAPH to a checkout of https://github.com/brendangregg/FlameGraph}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
perl "$fg/stackcollapse-perf.pl" --event-filter=instructions cycles-instructions.txt >"$tmp/instructions"
perl "$fg/stackcollapse-perf.pl" --event-filter=cycles cycles-instructions.txt >"$tmp/cycles"
perl "$fg/difffolded.pl" "$tmp/instructions" "$tmp/cycles" | LC_ALL=C sort >cpi.difffolded
