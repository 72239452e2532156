#!/bin/sh
# Copies two async-profiler recordings in wall-clock mode from Grafana's jfr-parser (the
# converter Pyroscope reads JFR with) and writes the graphs Pyroscope makes of them, as the
# expected folded stacks of tests/formats_jfr.rs. Needs a clone of
# https://github.com/grafana/jfr-parser (Apache-2.0) at commit
# 1d06ce37e9830f5456873bd3524b77567ad39a30, named by JFR_PARSER, and python3. The tests read
# only the files written here.
#
#   wall.jfr.gz    parser/testdata/wall.jfr.gz: `event=wall`, profiler.WallClockSample events
#                  each with its thread state and its number of samples
#   dump2.jfr.gz   parser/testdata/dump2.jfr.gz: `event=wall`, jdk.ExecutionSample events with
#                  thread states (running and sleeping), a few allocations and live objects
#   NAME.GRAPH.folded
#                  Pyroscope's graph (parser/testdata/NAME_*_expected_collapsed.txt.gz,
#                  written by jfr-parser's own tests) in flamesite's naming: see normalize.py
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${JFR_PARSER:?JFR_PARSER must name a clone of grafana/jfr-parser}/parser/testdata
cp "$src/wall.jfr.gz" "$src/dump2.jfr.gz" "$here/"
expect() { # NAME PYROSCOPE-FILE-PART COLUMN GRAPH
  python3 "$here/normalize.py" "$3" < "$(ls "$src/$1"_[0-9]_*"$2"*_expected_collapsed.txt.gz)" > "$here/$1.$4.folded"
}
expect wall process_cpu_cpu 0 cpu
expect wall wall_wall 0 wall
expect dump2 process_cpu_cpu 0 cpu
expect dump2 wall_wall 0 wall
expect dump2 memory_live 0 live_objects
expect dump2 alloc_in_new_tlab_objects 0 alloc_in_new_tlab_objects
wc -l "$here"/*.folded
