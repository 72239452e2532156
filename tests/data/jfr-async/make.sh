#!/bin/sh
# Copies three async-profiler recordings from Grafana's jfr-parser (the converter Pyroscope
# reads JFR with) and writes the graphs Pyroscope makes of them, as the expected folded stacks
# of tests/formats_jfr.rs. Needs a clone of https://github.com/grafana/jfr-parser
# (Apache-2.0) at commit 1d06ce37e9830f5456873bd3524b77567ad39a30, named by JFR_PARSER,
# python3, and a JDK (17 or later: java, for FoldStates.java). The tests read only the files
# written here.
#
#   wall.jfr.gz    parser/testdata/wall.jfr.gz: `event=wall`, profiler.WallClockSample events
#                  each with its thread state and its number of samples
#   dump2.jfr.gz   parser/testdata/dump2.jfr.gz: `event=wall`, jdk.ExecutionSample events with
#                  thread states (running and sleeping), a few allocations and live objects
#   async-profiler.jfr.gz
#                  parser/testdata/async-profiler.jfr.gz (1.2 MB, the only recording there of
#                  CPU and wall together): async-profiler 2.10 with `event=cpu`,
#                  `interval=10000000` and `wall=200000000` (its jdk.ActiveSetting events), 60 s
#                  of 669 threads, 199,661 jdk.ExecutionSample events: 110 of the CPU sampler
#                  (STATE_DEFAULT), 2 STATE_RUNNABLE and 199,549 STATE_SLEEPING of the
#                  wall-clock sampler; and a few allocations
#   NAME.GRAPH.folded
#                  Pyroscope's graph (parser/testdata/NAME_*_expected_collapsed.txt.gz,
#                  written by jfr-parser's own tests) in flamesite's naming: see normalize.py
#   async-profiler.wall.folded
#                  the wall graph, which Pyroscope does not make of a recording of CPU and wall
#                  together: the wall-clock sampler's samples (STATE_RUNNABLE, STATE_SLEEPING)
#                  as the JDK's own reader sees them (FoldStates.java), each worth the `wall`
#                  interval, 200 ms
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${JFR_PARSER:?JFR_PARSER must name a clone of grafana/jfr-parser}/parser/testdata
cp "$src/wall.jfr.gz" "$src/dump2.jfr.gz" "$src/async-profiler.jfr.gz" "$here/"
expect() { # NAME PYROSCOPE-FILE-PART COLUMN GRAPH
  python3 "$here/normalize.py" "$3" < "$(ls "$src/$1"_[0-9]_*"$2"*_expected_collapsed.txt.gz)" > "$here/$1.$4.folded"
}
expect wall process_cpu_cpu 0 cpu
expect wall wall_wall 0 wall
expect dump2 process_cpu_cpu 0 cpu
expect dump2 wall_wall 0 wall
expect dump2 memory_live 0 live_objects
expect dump2 alloc_in_new_tlab_objects 0 alloc_in_new_tlab_objects
expect async-profiler process_cpu_cpu 0 cpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gzip -dc "$here/async-profiler.jfr.gz" > "$tmp/async-profiler.jfr"
java "$here/FoldStates.java" "$tmp/async-profiler.jfr" 200000000 STATE_RUNNABLE STATE_SLEEPING \
  | LC_ALL=C sort > "$here/async-profiler.wall.folded"
wc -l "$here"/*.folded
