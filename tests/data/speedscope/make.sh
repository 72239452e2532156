#!/bin/sh
# Regenerates the speedscope fixture with py-spy (pip install py-spy) and its expected folded
# form with fold.py (an independent reading of the format). The tests only read the outputs.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py-spy record -f speedscope -r 50 -o "$tmp/out.json" -- python3 prog.py >/dev/null
# The script's absolute path differs per checkout, the thread id per run: keep only the name.
sed -e "s|$(pwd)/||g" -e 's|"Thread [0-9]* |"Thread |' "$tmp/out.json" > py-spy.speedscope.json
python3 fold.py py-spy.speedscope.json > expected.folded
wc -c py-spy.speedscope.json expected.folded
