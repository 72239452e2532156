#!/usr/bin/env bash
# Decoding large profiles of the other formats, for docs/BENCHMARKS.md: `flamesite build` of
#   perf  a gzipped `perf script` text (benches/gen-perf-script.py) against `gzip -dc` of it
#         (the floor) and inferno-collapse-perf on the same text uncompressed, with its
#         default threads and with one (flamesite runs inferno's perf folder on one thread),
#         and on the gzipped file as flamesite reads it (`gzip -dc | inferno-collapse-perf`);
#   pprof a gzipped profile.proto (benches/gen-pprof.py) against `gzip -dc` (the floor) and,
#         when Go is installed, `go tool pprof -raw` and `-traces` of the same file.
#   jfr   a gzipped Java Flight Recorder recording, made by the JDK if absent (JFR_RECORDING,
#         default /tmp/flamesite-bench/bench.jfr; not in the repository: megabytes): the
#         program of tests/data/jfr (Prog.java) run for JFR_SECONDS (default 30) under
#         -XX:StartFlightRecording with settings=profile, execution samples every 1 ms, every
#         lock and park event, the TLAB allocation events on and 2 kB TLABs (so that there are
#         many). Against `gzip -dc` (the floor) and two JDK readers: `jfr print --json` of the
#         event types flamesite reads, to /dev/null (a converter, as flamesite is one), and
#         `jfr summary` (reads every event, prints counts). Needs java, javac and jfr.
# `flamesite check` (decoded and laid out in chunks, nothing written) is timed too, to tell
# decoding from writing. The load average is printed at the start and the end.
# Commands alternate within each round; medians of the rounds, the median and range of each
# round's ratios (which is what is comparable on a shared machine), and peak memory (the
# largest of the rounds), with GNU time. Then the outputs are checked: flamesite's graph of
# the perf text must equal inferno-collapse-perf's folding of it (sorted), the pprof build
# must have no warnings and, with Go, each graph must equal the Go tool's reading of the
# profile (tests/data/pprof/raw2folded.py of `go tool pprof -raw`); each graph of the JFR
# build must equal the JDK's reading (tests/data/jfr/fold.py of `jfr print --json`).
#
# Needs: python3, gzip, bc, GNU time (/usr/bin/time, Debian package: time), a release build of
# flamesite (FLAMESITE, an absolute path, default target/release/flamesite), inferno-collapse-perf (on PATH or
# in INFERNO_BIN, default /tmp/inferno-bin/bin; cargo install inferno --root /tmp/inferno-bin).
# Usage: benches/compare-formats.sh [RUNS (default 5)] [perf|pprof|both|jfr (default both: perf and pprof)]
# Sizes: PERF_SAMPLES (default 120000), PPROF_SAMPLES (default 250000); seed 1 for both.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
which=${2:-both}
bin=${FLAMESITE:-$PWD/target/release/flamesite}
export PATH="$PATH:${INFERNO_BIN:-/tmp/inferno-bin/bin}"
for need in "$bin" python3 gzip bc /usr/bin/time; do
  command -v "$need" >/dev/null || { echo "missing: $need (see the header of $0)" >&2; exit 1; }
done

repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Run from the scratch folder, so that no site.toml of the current folder is read.
cd "$work"

# measure NAME OUT COMMAND...: runs COMMAND with its output to OUT, appends "seconds maxrss_kb
# cpu_seconds" to $work/NAME.t (wall time from the clock in nanoseconds: GNU time's is in
# hundredths; CPU time is user + system, of all threads).
measure() {
  local name=$1 out=$2 t0 t1; shift 2
  t0=$(date +%s%N)
  /usr/bin/time -f "%M %U %S" -o "$work/t" "$@" > "$out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  t1=$(date +%s%N)
  awk -v ns=$((t1 - t0)) '{printf "%.3f %d %.2f\n", ns / 1e9, $1, $2 + $3}' "$work/t" >> "$work/$name.t"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# table FLOOR NAME...: median and range of the wall time, peak memory and median CPU time of
# each, and the median and range of each round's ratio to FLOOR.
table() {
  local floor=$1; shift
  printf "%-16s %9s %17s %9s %8s %22s\n" command "median s" "range s" "peak MB" "CPU s" "ratio to $floor (range)"
  for t in "$floor" "$@"; do
    local s lo hi m c r
    s=$(cut -d' ' -f1 "$work/$t.t" | median)
    lo=$(cut -d' ' -f1 "$work/$t.t" | sort -n | head -1)
    hi=$(cut -d' ' -f1 "$work/$t.t" | sort -n | tail -1)
    m=$(cut -d' ' -f2 "$work/$t.t" | sort -n | tail -1)
    c=$(cut -d' ' -f3 "$work/$t.t" | median)
    r=$(paste -d' ' "$work/$t.t" "$work/$floor.t" | awk '{printf "%.3f\n", ($4 > 0 ? $1 / $4 : 0)}' | sort -n)
    printf "%-16s %9s %7s – %-7s %9.1f %8s %8s (%s – %s)\n" "$t" "$s" "$lo" "$hi" "$(echo "$m / 1024" | bc -l)" "$c" \
      "$(echo "$r" | median)" "$(echo "$r" | head -1)" "$(echo "$r" | tail -1)"
  done
}
# ratio A B: the median and range of A/B over the rounds.
ratio() {
  local r
  r=$(paste -d' ' "$work/$1.t" "$work/$2.t" | awk '{printf "%.3f\n", $1 / $4}' | sort -n)
  echo "$1 / $2: median $(echo "$r" | median), range $(echo "$r" | head -1) – $(echo "$r" | tail -1)"
}

echo "$(nproc) cores, $runs rounds; $("$bin" --version), repository at $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')"
# The machine's load before and after, to tell a quiet run from a busy one.
echo "load average (1, 5, 15 min) at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
trap 'echo "load average (1, 5, 15 min) at the end: $(cut -d" " -f1-3 /proc/loadavg)"; rm -rf "$work"' EXIT

if [ "$which" = perf ] || [ "$which" = both ]; then
  command -v inferno-collapse-perf >/dev/null || { echo "missing: inferno-collapse-perf (see the header of $0)" >&2; exit 1; }
  rm -f "$work"/*.t
  mkdir -p "$work/perf-in"
  python3 "$repo/benches/gen-perf-script.py" --samples "${PERF_SAMPLES:-120000}" --seed 1 -o "$work/perf.txt"
  # A date in the name, so that the archive does not warn that the profile has none.
  gz=$work/perf-in/perf-2026-11-22.txt.gz
  gzip -6 -n -c "$work/perf.txt" > "$gz"
  echo
  echo "perf script: $(stat -c %s "$work/perf.txt") bytes, $(stat -c %s "$gz") gzipped (gzip -6),"\
    "$(grep -c '^[^[:space:]]' "$work/perf.txt") samples, $(grep -c $'^\t' "$work/perf.txt") frame lines"
  for i in $(seq "$runs"); do
    measure gzip /dev/null gzip -dc "$gz"
    rm -rf "$work/perf-out"
    measure build /dev/null "$bin" build --no-cache --input "$work/perf-in" --output "$work/perf-out"
    measure inferno "$work/inferno.folded" inferno-collapse-perf "$work/perf.txt"
    measure check /dev/null "$bin" check --input "$work/perf-in" --output "$work/perf-out-unused"
    measure inferno-1thread "$work/inferno-1.folded" inferno-collapse-perf --nthreads 1 "$work/perf.txt"
    # inferno on the gzipped file flamesite reads: gzip -dc piped into it (both run at once).
    measure inferno-gz /dev/null sh -c 'gzip -dc "$1" | inferno-collapse-perf' sh "$gz"
  done
  table gzip build check inferno inferno-1thread inferno-gz
  ratio build inferno
  ratio build inferno-1thread
  ratio build inferno-gz
  "$bin" check --input "$work/perf-in" --output "$work/unused" 2>&1 | sed 's/^/  /'
  echo "  distinct stacks (inferno-collapse-perf lines): $(wc -l < "$work/inferno.folded")"
  "$bin" fold "$work/perf-out/p/perf-2026-11-22" > "$work/flamesite.folded"
  if LC_ALL=C sort "$work/inferno.folded" | cmp -s - "$work/flamesite.folded"; then
    echo "  check: flamesite fold = inferno-collapse-perf (sorted): same stacks and counts"
  else
    echo "  CHECK FAILED: flamesite's graph differs from inferno-collapse-perf's folding" >&2; exit 1
  fi
fi

if [ "$which" = pprof ] || [ "$which" = both ]; then
  rm -f "$work"/*.t
  mkdir -p "$work/pprof-in"
  python3 "$repo/benches/gen-pprof.py" --samples "${PPROF_SAMPLES:-250000}" --seed 1 -o "$work/api.pb" 2>&1
  gz=$work/pprof-in/api.pb.gz
  gzip -6 -n -c "$work/api.pb" > "$gz"
  echo
  echo "pprof: $(stat -c %s "$work/api.pb") bytes, $(stat -c %s "$gz") gzipped (gzip -6)"
  go=$(command -v go || true)
  for i in $(seq "$runs"); do
    measure gzip /dev/null gzip -dc "$gz"
    rm -rf "$work/pprof-out"
    measure build /dev/null "$bin" build --no-cache --input "$work/pprof-in" --output "$work/pprof-out"
    cp "$work/err" "$work/build.err"
    measure check /dev/null "$bin" check --input "$work/pprof-in" --output "$work/pprof-out-unused"
    if [ -n "$go" ]; then
      measure pprof-raw "$work/raw.txt" go tool pprof -raw "$gz"
      measure pprof-traces /dev/null go tool pprof -traces "$gz"
    fi
  done
  if [ -n "$go" ]; then
    table gzip build check pprof-raw pprof-traces
    ratio build pprof-raw
    echo "  $(go version)"
  else
    table gzip build check
    echo "  go not installed: go tool pprof not measured"
  fi
  "$bin" check --input "$work/pprof-in" --output "$work/unused" 2>&1 | sed 's/^/  /'
  for g in "$work"/pprof-out/p/api/g/*/; do
    echo "  $(basename "$g"): $("$bin" fold "$g" | wc -l) distinct stacks with a value"
  done
  if grep -q '^warning' "$work/build.err"; then
    echo "  CHECK FAILED: the build warned:" >&2; cat "$work/build.err" >&2; exit 1
  fi
  echo "  check: built without warnings"
  if [ -n "$go" ]; then
    python3 "$repo/tests/data/pprof/raw2folded.py" "$work/raw.txt" "$work/ref"
    for g in "$work"/pprof-out/p/api/g/*/; do
      t=$(basename "$g")
      "$bin" fold "$g" | cmp -s - "$work/ref.$t.folded" \
        || { echo "  CHECK FAILED: graph $t differs from go tool pprof -raw" >&2; exit 1; }
    done
    echo "  check: every graph = go tool pprof -raw of the profile (tests/data/pprof/raw2folded.py)"
  fi
fi

if [ "$which" = jfr ]; then
  for need in java javac jfr; do
    command -v "$need" >/dev/null || { echo "missing: $need (Debian: openjdk-17-jdk-headless)" >&2; exit 1; }
  done
  rm -f "$work"/*.t
  rec=${JFR_RECORDING:-/tmp/flamesite-bench/bench.jfr}
  # The settings of the recording; fold.py is given the same periods.
  settings="settings=profile,jdk.ExecutionSample#period=1ms,jdk.ThreadPark#threshold=0ms"
  settings="$settings,jdk.JavaMonitorEnter#threshold=0ms,jdk.ObjectAllocationInNewTLAB#enabled=true"
  settings="$settings,jdk.ObjectAllocationOutsideTLAB#enabled=true"
  if [ ! -s "$rec" ]; then
    mkdir -p "$(dirname "$rec")" "$work/jfr-prog"
    echo "making $rec (${JFR_SECONDS:-30} s of tests/data/jfr/Prog.java)"
    javac -d "$work/jfr-prog" "$repo/tests/data/jfr/Prog.java"
    (cd "$work/jfr-prog" && java "-XX:StartFlightRecording:$settings,filename=$rec.part" \
      -XX:TLABSize=2k -XX:MinTLABSize=2k -XX:-ResizeTLAB -cp . Prog "${JFR_SECONDS:-30}" >/dev/null 2>&1)
    mv "$rec.part" "$rec"
  fi
  mkdir -p "$work/jfr-in"
  gz=$work/jfr-in/bench-2026-11-25.jfr.gz
  gzip -6 -n -c "$rec" > "$gz"
  events="jdk.ExecutionSample,jdk.NativeMethodSample,jdk.ObjectAllocationInNewTLAB,jdk.ObjectAllocationOutsideTLAB"
  events="$events,jdk.ObjectAllocationSample,jdk.JavaMonitorEnter,jdk.ThreadPark"
  echo
  echo "JFR: $(stat -c %s "$rec") bytes, $(stat -c %s "$gz") gzipped (gzip -6); $(java -version 2>&1 | head -1)"
  jfr summary "$rec" | awk '$2 ~ /^[0-9]+$/ && $2 > 0 && $1 ~ /^jdk\.(ExecutionSample|NativeMethodSample|ObjectAllocation|JavaMonitorEnter|ThreadPark)/ {printf "  %s %s events\n", $1, $2}'
  for i in $(seq "$runs"); do
    measure gzip /dev/null gzip -dc "$gz"
    rm -rf "$work/jfr-out"
    measure build /dev/null "$bin" build --no-cache --input "$work/jfr-in" --output "$work/jfr-out"
    cp "$work/err" "$work/build.err"
    measure check /dev/null "$bin" check --input "$work/jfr-in" --output "$work/jfr-out-unused"
    measure jfr-print-json /dev/null jfr print --json --stack-depth 64 --events "$events" "$rec"
    measure jfr-summary /dev/null jfr summary "$rec"
  done
  table gzip build check jfr-print-json jfr-summary
  ratio build jfr-print-json
  ratio check jfr-summary
  "$bin" check --input "$work/jfr-in" --output "$work/unused" 2>&1 | sed 's/^/  /'
  if grep -q '^warning' "$work/build.err"; then
    echo "  CHECK FAILED: the build warned:" >&2; cat "$work/build.err" >&2; exit 1
  fi
  echo "  check: built without warnings"
  python3 "$repo/tests/data/jfr/fold.py" "$rec" "$work/jfr-ref" 1000000 20000000
  for g in "$work"/jfr-out/p/*/g/*/; do
    t=$(basename "$g")
    "$bin" fold "$g" | cmp -s - "$work/jfr-ref.$t.folded" \
      || { echo "  CHECK FAILED: graph $t differs from jfr print --json (tests/data/jfr/fold.py)" >&2; exit 1; }
  done
  echo "  check: every graph = the JDK's jfr print --json of the recording (tests/data/jfr/fold.py)"
fi
