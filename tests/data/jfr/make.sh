#!/bin/sh
# Regenerates the JFR fixtures of tests/formats_jfr.rs with the JDK (Debian: apt-get install
# openjdk-17-jdk-headless; java, javac and jfr on PATH). The tests read only the files written
# here, never the JDK.
#
#   recording.jfr            a recording of Prog.java (3 s, six threads: CPU, allocations,
#                            monitor and ReentrantLock contention, reads of /dev/zero in native
#                            code) by -XX:StartFlightRecording with settings.jfc: only the
#                            events flamesite reads, plus jdk.ActiveSetting (the periods), to
#                            keep it small; stack depth 128, deeper than any stack of Prog, so
#                            no stack is cut
#   recording.jfr.gz         the same bytes, gzipped
#   expected.<graph>.folded  each graph as the JDK's own reader sees it: fold.py of
#                            `jfr print --json --stack-depth 1024`, valued with the periods of
#                            settings.jfc (10 ms for jdk.ExecutionSample, 20 ms for
#                            jdk.NativeMethodSample)
#   cputime.jfr.gz           a recording of CpuTime.java (settings=none): the jdk.CPUTimeSample
#                            and jdk.CPUTimeSamplesLost events of JDK 25's CPU-time profiler,
#                            which this JDK lacks, declared by the program with the same names
#                            and fields and committed from known stacks (7 samples, 4 lost)
#   expected-cputime.cpu_time.folded
#                            its graph, by fold.py as above (each sample worth its
#                            samplingPeriod)
#
# The workload is timed, so each run writes a different recording; the expected files are
# always made from the recording of the same run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

grep -q '"jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">10 ms' "$here/settings.jfc"
grep -q '"jdk.NativeMethodSample"><setting name="enabled">true</setting><setting name="period">20 ms' "$here/settings.jfc"
javac -d "$tmp" "$here/Prog.java"
(cd "$tmp" && java -XX:StartFlightRecording:settings="$here/settings.jfc",filename="$tmp/recording.jfr" \
    -XX:FlightRecorderOptions:stackdepth=128 -cp . Prog 3 >/dev/null 2>&1)
rm -f "$here"/expected.*.folded
cp "$tmp/recording.jfr" "$here/recording.jfr"
gzip -9 -n -c "$here/recording.jfr" >"$here/recording.jfr.gz"
python3 "$here/fold.py" "$here/recording.jfr" "$here/expected" 10000000 20000000
jfr summary "$here/recording.jfr" | awk 'NR < 6 || $2 > 0'

javac -d "$tmp" "$here/CpuTime.java"
(cd "$tmp" && java -XX:StartFlightRecording:settings=none,filename="$tmp/cputime.jfr" -cp . CpuTime >/dev/null 2>&1)
gzip -9 -n -c "$tmp/cputime.jfr" >"$here/cputime.jfr.gz"
python3 "$here/fold.py" "$tmp/cputime.jfr" "$here/expected-cputime" 0 0 cpu_time
jfr summary "$tmp/cputime.jfr" | awk 'NR < 6 || $2 > 0'
ls -l "$here"
