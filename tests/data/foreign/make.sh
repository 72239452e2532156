#!/usr/bin/env bash
# Makes the files of this folder that were made on this project's machine (README.md): the
# output of Valgrind, node, Python and perf for a small program. The others come from
# google/pprof's test data (README.md).
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/p.c" <<'C'
int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i % 7; return s; }
int main(void) { int s = 0; for (int k = 0; k < 2000; k++) s += f(10000); return s & 1; }
C
gcc -O0 -g -o "$work/p" "$work/p.c"
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$work/p"
gzip -9n <"$work/callgrind.out" >callgrind.out.gz
valgrind --tool=cachegrind --cachegrind-out-file="$work/cachegrind.out" "$work/p"
gzip -9n <"$work/cachegrind.out" >cachegrind.out.gz
(cd "$work" && node --prof -e 'let s = 0; for (let i = 0; i < 1e6; i++) s += i % 7' && head -c 65536 isolate-*.log >v8.log)
gzip -9n <"$work/v8.log" >v8.log.gz
printf 'sum(i * i for i in range(10**5))\n' >"$work/w.py"
(cd "$work" && python3 -m cProfile -o py.pstats w.py >/dev/null)
cp "$work/py.pstats" py.pstats
perf record -q -o perf.data -g "$work/p"
