#!/bin/sh
# Regenerates austin.txt: the austin Python profiler's folded output of spin.py, with its
# metadata comments (`# austin: …`, `# interval: …`, `# mode: …` first, `# duration: …` last).
# Needs python3 and the austin-dist package from PyPI (pip install austin-dist==3.7.0, which
# ships austin's binary). The tests read the committed file.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q austin-dist==3.7.0
cp spin.py "$tmp/spin.py"
# -S: no site module, so the stacks are the program's own.
"$tmp/venv/bin/austin" -i 1ms -o "$tmp/out.txt" python3 -S "$tmp/spin.py" 2>/dev/null
sed "s|$tmp/||g" "$tmp/out.txt" > austin.txt
wc -l austin.txt
