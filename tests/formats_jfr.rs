//! Java Flight Recorder input, end to end: a recording made by the JDK (tests/data/jfr, made by
//! its make.sh with `-XX:StartFlightRecording`) built by the real binary, every graph read back
//! with `flamesite fold` and compared with the stacks the JDK's own reader (`jfr print --json`)
//! reported for the same file; and broken copies of it, each reported with its path and byte
//! and skipped while the rest of the site builds.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::*;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jfr")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(data().join(name)).unwrap()
}

/// The graphs flamesite makes of the fixture, in their order, with their units.
/// Each event type's value kinds, as Pyroscope makes them: the sum of a measure (bytes, time
/// waited) and the count of events (objects, contentions).
const GRAPHS: [(&str, &str); 12] = [
    ("cpu", "nanoseconds"),
    ("native", "nanoseconds"),
    ("alloc_in_new_tlab", "bytes"),
    ("alloc_in_new_tlab_objects", "count"),
    ("alloc_outside_tlab", "bytes"),
    ("alloc_outside_tlab_objects", "count"),
    ("alloc_sample", "bytes"),
    ("alloc_sample_objects", "count"),
    ("lock", "nanoseconds"),
    ("lock_contentions", "count"),
    ("park", "nanoseconds"),
    ("park_contentions", "count"),
];

/// What the JDK's own reader says of `graph` (tests/data/jfr/fold.py), with lambda classes
/// named as docs/FORMAT.md says flamesite names them ([`without_jvm_numbers`]).
fn expected(graph: &str) -> String {
    let text = std::fs::read_to_string(data().join(format!("expected.{graph}.folded"))).unwrap();
    assert!(!text.is_empty(), "{graph}: the fixture has stacks");
    without_jvm_numbers(&text)
}

/// Folded stacks whose lambda classes lose the numbers the JVM gave them in this run, as
/// docs/FORMAT.md ("Names the JVM generates") says and as Pyroscope names them
/// (`Recorder$$Lambda$72+0x00007ffb60042338/1418334255.run` is `Recorder$$Lambda_.run`), the
/// stacks this merges summed, lines sorted.
fn without_jvm_numbers(folded: &str) -> String {
    let lambda = regex::Regex::new(r"\$\$Lambda(?:[$/.+](?:0x[0-9a-f]+|[0-9]+))+").unwrap();
    let mut sums: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, value) = line.rsplit_once(' ').unwrap();
        *sums.entry(lambda.replace_all(stack, "$$$$Lambda_").into_owned()).or_default() += value.parse::<u64>().unwrap();
    }
    sums.iter().map(|(s, v)| format!("{s} {v}\n")).collect()
}

fn index(out: &Path) -> serde_json::Value {
    common::listing(out)
}

fn entry<'a>(index: &'a serde_json::Value, slug: &str) -> &'a serde_json::Value {
    index["profiles"].as_array().unwrap().iter().find(|e| e["slug"] == slug).unwrap_or_else(|| panic!("{slug}: {index}"))
}

/// A run's graphs as (name, unit), in the order of its listing.
fn graph_units(entry: &serde_json::Value) -> Vec<(&str, &str)> {
    entry["graphs"].as_array().unwrap().iter().map(|g| (g["name"].as_str().unwrap(), g["unit"].as_str().unwrap())).collect()
}

fn fold(dir: &Path, graph: &Path) -> String {
    let o = run(dir, &["fold", graph.to_str().unwrap()]);
    assert!(o.status.success(), "{}: {}", graph.display(), stderr(&o));
    stdout(&o)
}

#[test]
fn every_graph_folds_back_to_what_the_jdks_jfr_print_reports() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("plain.jfr"), &fixture("recording.jfr"));
    write(&input.join("gzipped.jfr.gz"), &fixture("recording.jfr.gz"));
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let index = index(&out);
    for slug in ["plain", "gzipped"] {
        let e = entry(&index, slug);
        assert_eq!(e["format"], "jfr", "{e}");
        let listed: Vec<(String, String)> = e["graphs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["name"].as_str().unwrap().to_string(), g["unit"].as_str().unwrap().to_string()))
            .collect();
        let want: Vec<(String, String)> = GRAPHS.iter().map(|(n, u)| (n.to_string(), u.to_string())).collect();
        assert_eq!(listed, want, "{slug}");
        for (graph, _) in GRAPHS {
            let got = fold(dir.path(), &out.join("p").join(slug).join("g").join(graph));
            assert_eq!(got, expected(graph), "{slug} {graph}");
        }
        // The periods come from the recording's jdk.ActiveSetting events (settings.jfc).
        let meta = &e["metadata"];
        assert_eq!(meta["cpu period"], "10.0 ms", "{meta}");
        assert_eq!(meta["native period"], "20.0 ms", "{meta}");
        assert!(meta["time"].as_str().unwrap().ends_with('Z'), "{meta}");
        assert!(meta["duration"].as_str().unwrap().ends_with(" s"), "{meta}");
    }
    // Frames are named as async-profiler names them: the class with slashes, a dot, the method.
    let cpu = fold(dir.path(), &out.join("p/plain/g/cpu"));
    assert!(cpu.lines().any(|l| l.starts_with("java/lang/Thread.run;Prog$Spinner.run;Prog$Spinner.recurse;")), "{cpu}");
    let native = fold(dir.path(), &out.join("p/plain/g/native"));
    assert!(native.contains("java/io/FileInputStream.readBytes "), "{native}");
}

#[test]
fn check_names_the_format_and_each_graph_with_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("recording.jfr"), &fixture("recording.jfr"));
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for (graph, unit) in GRAPHS {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("recording.jfr: jfr, {graph} ")) && l.contains(&format!(" {unit},"))),
            "{graph}: {text}"
        );
    }
}

#[test]
fn a_recording_that_does_not_say_its_period_counts_samples_and_says_so() {
    // The fixture with its jdk.ActiveSetting type renamed in the metadata (same length), so
    // that its settings, and with them the sampling periods, are not recognised.
    let mut bytes = fixture("recording.jfr");
    let name = b"jdk.ActiveSetting";
    let at = bytes.windows(name.len()).position(|w| w == name).expect("the metadata names jdk.ActiveSetting");
    bytes[at + name.len() - 1] = b'G';
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("noperiod.jfr"), &bytes);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("noperiod.jfr") && err.contains("does not say the sampling period of its cpu samples"), "{err}");
    let index = index(&out);
    let e = entry(&index, "noperiod");
    let units = graph_units(e);
    assert_eq!(units[..2], [("cpu", "samples"), ("native", "samples")], "{units:?}");
    assert!(e["metadata"].get("cpu period").is_none(), "{}", e["metadata"]);
    // The same stacks, each counted once per sample: the expected nanoseconds over 10 ms.
    let want: String = expected("cpu")
        .lines()
        .map(|l| {
            let (stack, ns) = l.rsplit_once(' ').unwrap();
            let ns: u64 = ns.parse().unwrap();
            assert_eq!(ns % 10_000_000, 0, "{l}");
            format!("{stack} {}\n", ns / 10_000_000)
        })
        .collect();
    assert_eq!(fold(dir.path(), &out.join("p/noperiod/g/cpu")), want);
}

#[test]
fn jdk25_cpu_time_samples_make_a_graph_each_worth_its_sampling_period() {
    // JDK 25's CPU-time profiler writes jdk.CPUTimeSample (a stack, `samplingPeriod` as a tick
    // span) and jdk.CPUTimeSamplesLost. The fixture declares both types with the JDK's names and
    // fields (CpuTime.java: JDK 17 has no such profiler) and commits 7 samples and 4 lost.
    let gz = fixture("cputime.jfr.gz");
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut bytes).unwrap();
    // The same recording with its clock at two ticks a nanosecond (the chunk header's ticks per
    // second, bytes 56..64, doubled): each period, in ticks, is then half as long.
    let tps = i64::from_be_bytes(bytes[56..64].try_into().unwrap());
    assert_eq!(tps, 1_000_000_000, "the fixture's ticks are nanoseconds");
    let mut fast = bytes.clone();
    fast[56..64].copy_from_slice(&(2 * tps).to_be_bytes());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("cputime.jfr.gz"), &gz);
    write(&input.join("fastclock.jfr"), &fast);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines().any(|l| l.contains("cputime.jfr.gz") && l.contains("lost 4 samples (jdk.CPUTimeSamplesLost)")),
        "the lost samples are said, with the file: {err}"
    );
    let index = index(&out);
    let e = entry(&index, "cputime");
    assert_eq!(e["format"], "jfr", "{e}");
    let graphs = graph_units(e);
    assert_eq!(graphs, [("cpu_time", "nanoseconds")]);
    let want = std::fs::read_to_string(data().join("expected-cputime.cpu_time.folded")).unwrap();
    assert_eq!(want.lines().count(), 3, "{want}");
    assert_eq!(fold(dir.path(), &out.join("p/cputime/g/cpu_time")), want);
    let halved: String = want
        .lines()
        .map(|l| {
            let (stack, ns) = l.rsplit_once(' ').unwrap();
            format!("{stack} {}\n", ns.parse::<u64>().unwrap() / 2)
        })
        .collect();
    assert_eq!(fold(dir.path(), &out.join("p/fastclock/g/cpu_time")), halved);
}

/// The offset of the first string of the metadata event of the fixture's one chunk: the byte
/// after the string count (integers are compressed: LEB128).
fn first_metadata_string(bytes: &[u8]) -> usize {
    let metadata = i64::from_be_bytes(bytes[24..32].try_into().unwrap()) as usize;
    let mut at = metadata;
    let mut varint = || {
        while bytes[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    };
    for _ in 0..6 {
        varint(); // size, type, start, duration, id, string count
    }
    at
}

#[test]
fn broken_recordings_are_named_with_their_byte_and_skipped_and_the_rest_builds() {
    let good = fixture("recording.jfr");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("good.jfr"), &good);
    // Cut in the middle: the chunk claims more bytes than the file has.
    write(&input.join("bad/half.jfr"), &good[..good.len() / 2]);
    write(&input.join("bad/half.jfr.gz"), &gzip(&good[..good.len() / 2]));
    // Cut inside the chunk header.
    write(&input.join("bad/header.jfr"), &good[..40]);
    // The gzip stream itself cut short.
    let gz = fixture("recording.jfr.gz");
    write(&input.join("bad/cutgzip.jfr.gz"), &gz[..gz.len() / 2]);
    // The first event's size (a varint at byte 68, after the header) made 0: a reader that
    // trusts it reads the same event forever.
    let mut zero = good.clone();
    let mut at = 68;
    while zero[at] & 0x80 != 0 {
        zero[at] = 0x80;
        at += 1;
    }
    zero[at] = 0;
    write(&input.join("bad/zerosize.jfr"), &zero);
    // A string length of -1 in the metadata (0xffffffff as a 5-byte varint): a reader that
    // allocates what the file claims asks for 2^64 bytes.
    let s = first_metadata_string(&good);
    assert!(matches!(good[s], 3..=5), "a string with a length: encoding {}", good[s]);
    let mut len_end = s + 1;
    while good[len_end] & 0x80 != 0 {
        len_end += 1;
    }
    let mut negative = good[..s + 1].to_vec();
    negative.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    negative.extend_from_slice(&good[len_end + 1..]);
    write(&input.join("bad/negative.jfr"), &negative);
    // The constant-pool offset pointed at the metadata event.
    let mut pools = good.clone();
    pools[16..24].copy_from_slice(&good[24..32]);
    write(&input.join("bad/pools.jfr"), &pools);

    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let claims = format!("chunk 1 claims {} bytes, but {} are left in the file (truncated?) at byte 8", good.len(), good.len() / 2);
    for (bad, why) in [
        ("half.jfr", claims.as_str()),
        ("half.jfr.gz", claims.as_str()),
        ("header.jfr", "the file ends inside the header of chunk 1 (truncated?) at byte 0"),
        ("cutgzip.jfr.gz", "truncated gzip data"),
        ("zerosize.jfr", "size 0"),
        ("negative.jfr", "a count of -1, but"),
        ("pools.jfr", "the constant pools' chain points to an event of type 0"),
    ] {
        let line = err
            .lines()
            .find(|l| l.starts_with("error:") && l.contains(&format!("bad/{bad}:")))
            .unwrap_or_else(|| panic!("{bad} not reported:\n{err}"));
        assert!(line.contains(why), "{bad}: expected {why:?} in {line:?}");
        if bad != "cutgzip.jfr.gz" {
            assert!(line.contains("JFR: ") && line.contains(" at byte "), "{bad}: {line}");
        }
    }
    // The byte of the length that lies.
    let line = err.lines().find(|l| l.contains("bad/negative.jfr:")).unwrap();
    assert!(line.ends_with(&format!(" at byte {}", s + 1)), "{line}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(fold(dir.path(), &out.join("p/good/g/cpu")), expected("cpu"));
}

#[test]
fn a_wall_clock_recording_gives_the_cpu_graph_pyroscope_gives_of_its_running_threads() {
    // tests/data/jfr-async: async-profiler recordings in wall-clock mode (from Grafana's
    // jfr-parser, see make.sh) and the graphs Pyroscope makes of them. wall.jfr holds
    // profiler.WallClockSample events, dump2.jfr jdk.ExecutionSample events; each carries its
    // thread's state, and the samples of running threads are CPU time as well as wall time.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let async_data = async_data();
    for name in ["wall", "dump2"] {
        write(&input.join(format!("{name}.jfr.gz")), &std::fs::read(async_data.join(format!("{name}.jfr.gz"))).unwrap());
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = index(&out);
    for (name, graphs) in [("wall", &["cpu", "wall"][..]), ("dump2", &["cpu", "wall", "live_objects", "alloc_in_new_tlab_objects"][..])] {
        let listed: Vec<String> = entry(&index, name)["graphs"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap().to_string()).collect();
        for graph in graphs {
            assert!(listed.iter().any(|g| g == graph), "{name}: {graph} in {listed:?}");
            // Stack by stack, names as Pyroscope gives them (lambda classes without their numbers).
            let got = fold(dir.path(), &out.join("p").join(name).join("g").join(graph));
            let want = std::fs::read_to_string(async_data.join(format!("{name}.{graph}.folded"))).unwrap();
            assert!(want.lines().count() >= 3, "{name}.{graph}: several stacks");
            assert_eq!(got, want, "{name} {graph}");
        }
        // The CPU graph is the running part of the wall graph.
        let total = |graph: &str| -> u64 {
            fold(dir.path(), &out.join("p").join(name).join("g").join(graph)).lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum()
        };
        assert!(total("cpu") > 0 && total("cpu") < total("wall"), "{name}");
    }
}

fn total(folded: &str) -> u64 {
    folded.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum()
}

fn async_data() -> PathBuf {
    data().parent().unwrap().join("jfr-async")
}

#[test]
fn a_recording_of_cpu_and_wall_together_gives_the_cpu_pyroscope_gives_and_a_wall_graph() {
    // tests/data/jfr-async/async-profiler.jfr.gz (see make.sh): async-profiler 2.10 with
    // `event=cpu,interval=10ms,wall=200ms`, 60 s of 669 threads, mostly idle. Both samplers
    // write jdk.ExecutionSample events: the CPU sampler's with STATE_DEFAULT (110), the
    // wall-clock sampler's with the thread's state, STATE_RUNNABLE (2) or STATE_SLEEPING
    // (199,549). Read as all CPU time, the recording claimed 1,996.6 s of CPU and had no wall
    // graph; Pyroscope counts 1.12 s.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let gz = std::fs::read(async_data().join("async-profiler.jfr.gz")).unwrap();
    write(&input.join("async-profiler.jfr.gz"), &gz);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let listing = index(&out);
    let e = entry(&listing, "async-profiler");
    let graphs = graph_units(e);
    assert_eq!(
        graphs,
        [
            ("cpu", "nanoseconds"),
            ("wall", "nanoseconds"),
            ("alloc_in_new_tlab", "bytes"),
            ("alloc_in_new_tlab_objects", "count"),
            ("alloc_outside_tlab", "bytes"),
            ("alloc_outside_tlab_objects", "count"),
        ]
    );
    let meta = &e["metadata"];
    assert_eq!(meta["event"], "cpu", "{meta}");
    assert_eq!(meta["cpu period"], "10.0 ms", "{meta}");
    assert_eq!(meta["wall period"], "200 ms", "{meta}");
    // CPU: the samples whose thread was not sleeping, stack by stack as Pyroscope has them.
    let cpu = fold(dir.path(), &out.join("p/async-profiler/g/cpu"));
    let want = std::fs::read_to_string(async_data().join("async-profiler.cpu.folded")).unwrap();
    assert!(want.lines().count() >= 20, "several stacks: {want}");
    assert_eq!(cpu, want, "names as Pyroscope gives them, lambda classes without their numbers");
    assert_eq!(total(&cpu), 112 * 10_000_000, "1.12 s, not 1,996.6 s");
    // Wall: the wall-clock sampler's samples, running or not, each worth its 200 ms interval,
    // stack by stack as the JDK's own reader has them (Pyroscope makes no wall graph here).
    let wall = fold(dir.path(), &out.join("p/async-profiler/g/wall"));
    let want = without_jvm_numbers(&std::fs::read_to_string(async_data().join("async-profiler.wall.folded")).unwrap());
    assert!(want.lines().count() >= 20, "several stacks: {want}");
    assert_eq!(wall, want);
    assert_eq!(total(&wall), (2 + 199_549) * 200_000_000, "669 threads for 60 s, in thread-seconds");

    // The same recording without its `event` setting (its name changed, same length), as
    // async-profiler 2.10 writes `--wall 200ms` alone: every sample is the wall-clock
    // sampler's, in the wall graph, and the running ones make the cpu graph, each worth the
    // wall interval; no period is missing.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut bytes).unwrap();
    let setting = b"\x03\x05event\x03\x03cpu";
    let at = bytes.windows(setting.len()).position(|w| w == setting).expect("the event setting, inline");
    assert_eq!(bytes.windows(setting.len()).filter(|w| w == setting).count(), 1);
    bytes[at + 6] = b'E';
    let input = dir.path().join("in-wall");
    write(&input.join("wallonly.jfr"), &bytes);
    let out = dir.path().join("out-wall");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let listing = index(&out);
    let e = entry(&listing, "wallonly");
    let units = graph_units(e);
    assert_eq!(units[..2], [("cpu", "nanoseconds"), ("wall", "nanoseconds")], "{units:?}");
    assert_eq!(e["metadata"]["cpu period"], "200 ms", "{}", e["metadata"]);
    let cpu = fold(dir.path(), &out.join("p/wallonly/g/cpu"));
    assert_eq!(total(&cpu), 112 * 200_000_000);
    let wall = fold(dir.path(), &out.join("p/wallonly/g/wall"));
    assert_eq!(total(&wall), 199_661 * 200_000_000);
}

#[test]
fn a_lambda_keeps_its_name_from_one_jvm_to_the_next() {
    // Two recordings of the same App from tests/data/jfr-async (Grafana's jfr-parser test
    // data), made by two JVMs: one names a lambda class `App$$Lambda$76.0x00007ff44c0c4640`,
    // the other `App$$Lambda.0x00007ff32c0c6a50`. Compared, the lambda is one function that
    // both runs have, not one that vanished and another that appeared.
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = (dir.path().join("dump2.jfr.gz"), dir.path().join("wall.jfr.gz"));
    std::fs::write(&before, std::fs::read(async_data().join("dump2.jfr.gz")).unwrap()).unwrap();
    std::fs::write(&after, std::fs::read(async_data().join("wall.jfr.gz")).unwrap()).unwrap();
    let o = run(dir.path(), &["diff", before.to_str().unwrap(), after.to_str().unwrap(), "--format", "json", "--top", "100000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let wall = report["graphs"].as_array().unwrap().iter().find(|g| g["graph"] == "wall").expect("a wall graph in both");
    let rows = wall["total_changes"].as_array().unwrap();
    assert!(rows.iter().all(|r| !r["function"].as_str().unwrap().contains("0x")), "no run-time address in a name: {rows:?}");
    let lambda = rows.iter().find(|r| r["function"] == "App$$Lambda_.run").expect("the lambda, by the name Pyroscope gives it");
    assert!(lambda["total_before"].as_u64().unwrap() > 0 && lambda["total_after"].as_u64().unwrap() > 0, "in both runs: {lambda}");
}
