#!/bin/sh
# Regenerates the Chrome/V8 .cpuprofile fixture with `node --cpu-prof` and its expected folded
# form with fold.py (an independent reading of the format). The tests only read the outputs.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node --cpu-prof --cpu-prof-dir="$tmp" --cpu-prof-interval 2000 prog.js >/dev/null
# The script's absolute path differs per checkout: keep only its name.
sed "s|file://$(pwd)/||g" "$tmp"/*.cpuprofile > node.cpuprofile
python3 fold.py node.cpuprofile > expected.folded
python3 fold.py --time node.cpuprofile > expected-time.folded
wc -c node.cpuprofile expected*.folded
