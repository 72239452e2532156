//! Profiles made by the real tools (perf script, node --cpu-prof, py-spy's speedscope; DTrace,
//! macOS `sample` and VTune files from FlameGraph's and inferno's repositories), kept small in
//! tests/data/<format>/ with the scripts that made them and their expected folded stacks
//! (FlameGraph's collapsers' for perf, DTrace and `sample` and its scripts' for the CPI graph,
//! an independent Python reading for VTune and the JSON formats; never flamesite's or inferno's:
//! see each folder's README.md). Each is built plain, gzipped and zstd-compressed, and `flamesite fold` of the
//! built graph must equal the expected stacks.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;

fn text(rel: &str) -> String {
    String::from_utf8(test_data(rel)).unwrap()
}

/// Writes `bytes` as `name`, `name`-gz.gz and `name`-zst.zst (slugs `stem`, `stem-gz`, `stem-zst`).
fn write_three(input: &Path, stem: &str, ext: &str, bytes: &[u8]) {
    write(&input.join(format!("{stem}.{ext}")), bytes);
    write(&input.join(format!("{stem}-gz.{ext}.gz")), &gzip(bytes));
    write(&input.join(format!("{stem}-zst.{ext}.zst")), &zstd(bytes));
}

fn fold(dir: &Path, graph: &Path) -> String {
    let o = run(dir, &["fold", graph.to_str().unwrap()]);
    assert!(o.status.success(), "fold {}: {}", graph.display(), stderr(&o));
    stdout(&o)
}

fn graphs_of(out: &Path, slug: &str) -> Vec<PathBuf> {
    let mut g: Vec<PathBuf> =
        std::fs::read_dir(out.join("p").join(slug).join("g")).unwrap().map(|e| e.unwrap().path()).collect();
    g.sort();
    g
}

#[test]
fn perf_script_folds_as_stackcollapse_perf_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write_three(&input, "perf", "txt", &test_data("perf/perf.txt"));
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = merged_sorted(&text("perf/expected.folded"));
    for slug in ["perf", "perf-gz", "perf-zst"] {
        // perf script prints each sample's period: the graph is the event's, in cycles.
        assert_eq!(fold(dir.path(), &out.join(format!("p/{slug}/g/cycles"))), want, "{slug}");
    }
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let total: u64 = want.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum();
    for source in ["perf.txt", "perf-gz.txt.gz", "perf-zst.txt.zst"] {
        let line = format!("{source}: perf, cycles {total} cycles, ");
        assert!(stdout(&o).contains(&line), "{line:?} in {}", stdout(&o));
    }
}

#[test]
/// `[perf]`'s options against `stackcollapse-perf.pl`'s flags of the same names
/// (tests/data/perf/README.md).
fn perf_options_in_site_toml_match_stackcollapse_perfs_flags() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("perf.txt"), &test_data("perf/perf.txt"));
    for (toml, expected) in [
        (
            "[perf]\nannotate_kernel = true\nannotate_jit = true\ninclude_pid = true\n",
            "perf/expected-kernel-jit-pid.folded",
        ),
        ("[perf]\ninclude_tid = true\ninclude_addrs = true\n", "perf/expected-tid-addrs.folded"),
    ] {
        let config = dir.path().join("site.toml");
        write(&config, toml.as_bytes());
        let out = dir.path().join("out");
        let o = build(&input, &out, &["--config", config.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(fold(dir.path(), &out.join("p/perf/g/cycles")), merged_sorted(&text(expected)), "{toml}");
    }
}

#[test]
fn cpuprofile_counts_samples_and_time_per_stack() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write_three(&input, "node", "cpuprofile", &test_data("cpuprofile/node.cpuprofile"));
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = merged_sorted(&text("cpuprofile/expected.folded"));
    let want_time = merged_sorted(&text("cpuprofile/expected-time.folded"));
    for slug in ["node", "node-gz", "node-zst"] {
        assert_eq!(fold(dir.path(), &out.join(format!("p/{slug}/g/samples"))), want, "{slug}");
        assert_eq!(fold(dir.path(), &out.join(format!("p/{slug}/g/time"))), want_time, "{slug}");
    }
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap()]);
    assert!(stdout(&o).contains("node.cpuprofile: cpuprofile, samples "), "{}", stdout(&o));
    assert!(stdout(&o).contains("node.cpuprofile: cpuprofile, time "), "{}", stdout(&o));
    assert!(stdout(&o).contains(" microseconds, "), "{}", stdout(&o));
}

#[test]
fn speedscope_from_py_spy_gives_one_graph_per_profile_and_its_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write_three(&input, "py", "json", &test_data("speedscope/py-spy.speedscope.json"));
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // expected.folded: "# name unit" then that profile's stacks; py-spy writes one profile.
    let expected = text("speedscope/expected.folded");
    let (header, stacks) = expected.split_once('\n').unwrap();
    let unit = header.rsplit_once(' ').unwrap().1;
    assert_eq!(unit, "milliseconds", "py-spy's 0.02 s weights are whole milliseconds");
    for slug in ["py", "py-gz", "py-zst"] {
        // The flame graph, and the same samples in the order they were taken: py-spy writes
        // them in time order, and a stack that ran twice is two lines of its fold, which add
        // up to the flame graph's.
        let graphs = graphs_of(&out, slug);
        assert_eq!(graphs.len(), 2, "{graphs:?}");
        assert!(graphs[1].to_string_lossy().ends_with("_time_order_"), "{graphs:?}");
        assert_eq!(fold(dir.path(), &graphs[0]), merged_sorted(stacks), "{slug}");
        let in_time = fold(dir.path(), &graphs[1]);
        assert_eq!(merged_sorted(&in_time), merged_sorted(stacks), "{slug}");
        assert!(in_time.lines().count() > stacks.lines().count(), "{slug}: some stack ran more than once");
    }
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap()]);
    assert!(stdout(&o).contains("py.json: speedscope, Thread \"\" "), "{}", stdout(&o));
    assert!(stdout(&o).contains(" milliseconds, "), "{}", stdout(&o));
}

#[test]
fn malformed_inputs_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let cpu = test_data("cpuprofile/node.cpuprofile");
    let ss = test_data("speedscope/py-spy.speedscope.json");
    let perf = text("perf/perf.txt");
    write(&input.join("good.cpuprofile"), &cpu);
    write(&input.join("bad/truncated.cpuprofile"), &cpu[..cpu.len() / 2]);
    write(&input.join("bad/shape.cpuprofile"), br#"{"nodes": {"id": 1}, "samples": [1]}"#);
    write(
        &input.join("bad/child.cpuprofile"),
        br#"{"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}, "children": [99]}], "samples": [1]}"#,
    );
    write(&input.join("bad/truncated.speedscope.json.gz"), &gzip(&ss[..ss.len() / 2]));
    write(
        &input.join("bad/events.speedscope.json"),
        br#"{"$schema": "https://www.speedscope.app/file-format-schema.json",
            "shared": {"frames": [{"name": "a"}, {"name": "b"}]},
            "profiles": [{"type": "evented", "name": "x", "unit": "none", "startValue": 0, "endValue": 4,
              "events": [{"type": "O", "at": 0, "frame": 0}, {"type": "O", "at": 1, "frame": 1},
                         {"type": "C", "at": 2, "frame": 0}]}]}"#,
    );
    write(
        &input.join("bad/frame.speedscope.json"),
        br#"{"$schema": "https://www.speedscope.app/file-format-schema.json",
            "shared": {"frames": [{"name": "a"}]},
            "profiles": [{"type": "sampled", "name": "x", "unit": "none", "startValue": 0, "endValue": 4,
              "samples": [[0, 5]], "weights": [1]}]}"#,
    );
    // Cut inside the first sample's header: no stack is complete.
    let first_event = perf.lines().next().unwrap();
    write(&input.join("bad/header-only.perf"), format!("{first_event}\n").as_bytes());
    // perf script's header, then a line that is no sample's first line.
    write(&input.join("bad/not-a-sample.perf"), b"# ========\n# captured on    : Sun Nov 22 00:15:00 2026\n# ========\n#\nno sample here\n\tabc f (m)\n\n");
    // Cut in the middle of a sample (perf-jit/cut.txt: three frames into it, no blank line
    // after it): the samples before it are kept, and so is what was read of the cut one.
    let cut = text("perf-jit/cut.txt");
    assert!(text("perf-jit/jit.txt").starts_with(&cut) && !cut.ends_with("\n\n"), "the fixture ends inside a sample");
    write(&input.join("cut.perf"), cut.as_bytes());

    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for (bad, why) in [
        ("truncated.cpuprofile", "cpuprofile: EOF while parsing"),
        ("shape.cpuprofile", "cpuprofile: invalid type: map, expected a sequence"),
        ("child.cpuprofile", "cpuprofile: node 1 has child 99 that does not exist"),
        ("truncated.speedscope.json.gz", "speedscope: EOF while parsing"),
        ("events.speedscope.json", "closes frame 0 but frame 1 is the one open"),
        ("frame.speedscope.json", "frame 5 does not exist"),
        ("header-only.perf", "unknown profile format"),
        ("not-a-sample.perf", "line 5 does not start a sample"),
    ] {
        let line = err
            .lines()
            .find(|l| l.starts_with("error:") && l.contains(bad))
            .unwrap_or_else(|| panic!("{bad} not reported:\n{err}"));
        assert!(line.contains(why), "{bad}: expected {why:?} in {line:?}");
        assert!(line.contains(&format!("bad/{bad}")), "the message names the path: {line}");
    }
    assert!(err.contains("built 2 profiles"), "{err}");
    // The complete samples as stackcollapse-perf.pl folds them, and the cut one kept under the
    // process name, without the outer frame that the cut removed (as inferno keeps it; the
    // script drops it: tests/data/perf-jit/README.md).
    assert_eq!(fold(dir.path(), &out.join("p/cut/g/cpu-clock")), merged_sorted(&text("perf-jit/cut.folded")));
    assert!(text("perf-jit/cut.folded").contains("\njit;main;run_jit;jit_spin "), "the cut sample is in the expected stacks");
}

/// The values of `index.json`'s entry for `source`: (graph names, units).
fn graphs_listed(out: &Path, source: &str) -> Vec<(String, String)> {
    let index: serde_json::Value = common::listing(out);
    let entry = index["profiles"].as_array().unwrap().iter().find(|p| p["source"] == source).unwrap_or_else(|| panic!("{source}: {index}"));
    entry["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["name"].as_str().unwrap().to_string(), g["unit"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_jit_frame_named_by_a_perf_map_and_real_pids_fold_as_stackcollapse_perf_does() {
    // perf-jit/jit.txt: perf script -F +pid of a program with a JIT-compiled function named in
    // /tmp/perf-PID.map (see its README); the expected stacks are stackcollapse-perf.pl's.
    let jit = text("perf-jit/jit.txt");
    assert!(jit.contains("jit_spin+0xa (/tmp/perf-") && jit.lines().next().unwrap().contains("/"), "a JIT frame and pid/tid");
    let with_options = text("perf-jit/jit-jit-pid.folded");
    assert!(with_options.contains("jit_spin_[j]") && !with_options.contains("-?;"), "the options change the names: {with_options}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("jit.txt"), jit.as_bytes());
    for (toml, expected) in [
        ("", "perf-jit/jit.folded"),
        ("[perf]\nannotate_jit = true\ninclude_pid = true\n", "perf-jit/jit-jit-pid.folded"),
        ("[perf]\ninclude_tid = true\n", "perf-jit/jit-tid.folded"),
    ] {
        let config = dir.path().join("site.toml");
        write(&config, toml.as_bytes());
        let out = dir.path().join("out");
        let o = build(&input, &out, &["--config", config.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        // cpu-clock's period is in nanoseconds.
        assert_eq!(graphs_listed(&out, "jit.txt"), [("cpu-clock".to_string(), "nanoseconds".to_string())], "{toml}");
        assert_eq!(fold(dir.path(), &out.join("p/jit/g/cpu-clock")), merged_sorted(&text(expected)), "{toml}");
    }
}

#[test]
fn task_clock_is_in_nanoseconds_and_each_event_of_a_two_event_file_is_a_graph() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let events = text("perf-jit/events.txt");
    write(&input.join("task-clock.txt"), &test_data("perf-jit/task-clock.txt"));
    write(&input.join("events.txt"), events.as_bytes());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(graphs_listed(&out, "task-clock.txt"), [("task-clock".to_string(), "nanoseconds".to_string())]);
    assert_eq!(fold(dir.path(), &out.join("p/task-clock/g/task-clock")), merged_sorted(&text("perf-jit/task-clock.folded")));

    // `perf record -e task-clock -e page-faults`: a graph per event, in the order of their
    // first samples (a page fault comes first), each as stackcollapse-perf.pl folds that event
    // (`events.folded` is its default, the first event; `events-task-clock.folded` is
    // `--event-filter=task-clock`, each sample weighed by its period: see make.sh). No sample
    // is left out, so nothing is warned of.
    let first = events.lines().find(|l| !l.starts_with('#') && !l.is_empty()).unwrap();
    assert!(first.contains(" page-faults:"), "{first}");
    assert_eq!(
        graphs_listed(&out, "events.txt"),
        [("page-faults".to_string(), "page-faults".to_string()), ("task-clock".to_string(), "nanoseconds".to_string())]
    );
    assert_eq!(fold(dir.path(), &out.join("p/events/g/page-faults")), merged_sorted(&text("perf-jit/events.folded")));
    assert_eq!(fold(dir.path(), &out.join("p/events/g/task-clock")), merged_sorted(&text("perf-jit/events-task-clock.folded")));
    assert!(!err.lines().any(|l| l.starts_with("warning:") && l.contains("events.txt") && l.contains("perf")), "{err}");
}

#[test]
fn perf_script_without_a_time_field_folds_each_event_as_stackcollapse_perf_does_for_that_event() {
    // `perf script -F comm,pid,event,ip,sym,dso`: sample lines read `jit 4242 task-clock:`.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let notime = text("perf-notime/notime.txt");
    let first = notime.lines().find(|l| !l.starts_with('#') && !l.is_empty()).unwrap();
    assert!(!first.contains('.') && first.ends_with(": "), "no time field: {first}");
    write(&input.join("notime.txt"), notime.as_bytes());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Without periods every sample counts one; the events in the order of their first samples.
    let first_event = |ev: &str| notime.lines().position(|l| l.split_whitespace().nth(2) == Some(ev)).unwrap();
    let mut order = ["page-faults", "task-clock"];
    order.sort_by_key(|e| first_event(&format!("{e}:")));
    let listed: Vec<(String, String)> = order.iter().map(|e| (e.to_string(), "samples".to_string())).collect();
    assert_eq!(graphs_listed(&out, "notime.txt"), listed);
    for event in order {
        let expected = merged_sorted(&text(&format!("perf-notime/notime-{event}.folded")));
        assert!(!expected.is_empty());
        assert_eq!(fold(dir.path(), &out.join(format!("p/notime/g/{event}"))), expected, "{event}");
    }
}

#[test]
fn perf_script_printed_with_fewer_fields_folds_as_stackcollapse_perf_folds_a_full_printing() {
    // perf-fields/: two real recordings of one program, one without call chains (each sample
    // one line, its frame after the event), printed by `perf script -F` with fewer fields;
    // each expectation is stackcollapse-perf.pl's folding of the file, or of the file reshaped
    // into the fuller printing that the script reads (see README.md and make.sh).
    let cases = [
        // (file, what its first line shows, graph, unit)
        ("oneline.txt", "padded command, the frame on the line", "cpu-clock", "nanoseconds"),
        ("oneline-bare.txt", "no time, no event, the frame on the line", "samples", "samples"),
        ("noevent.txt", "only the command and the thread", "samples", "samples"),
        ("period-notime.txt", "a cpu and a period but no time", "cpu-clock", "nanoseconds"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for (file, shape, _, _) in cases {
        let body = text(&format!("perf-fields/{file}"));
        let first = body.lines().next().unwrap();
        let ok = match file {
            "oneline.txt" => first.starts_with("  ") && first.contains(": ") && first.trim_end().ends_with(')'),
            "oneline-bare.txt" => first.starts_with("  ") && !first.contains(':') && first.trim_end().ends_with(')'),
            "noevent.txt" => first.split_whitespace().count() == 2 && body.lines().nth(1).unwrap().starts_with('\t'),
            _ => first.contains(" [0") && !first.contains('.') && first.trim_end().ends_with(':'),
        };
        assert!(ok, "{file} should have {shape}: {first:?}");
        write(&input.join(file), body.as_bytes());
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.lines().any(|l| l.starts_with("warning:") && l.contains(" perf")), "{err}");
    for (file, _, graph, unit) in cases {
        let stem = file.trim_end_matches(".txt");
        assert_eq!(graphs_listed(&out, file), [(graph.to_string(), unit.to_string())], "{file}");
        let expected = merged_sorted(&text(&format!("perf-fields/{stem}.folded")));
        assert!(expected.lines().count() > 3, "{file}: several stacks expected");
        assert_eq!(fold(dir.path(), &out.join(format!("p/{stem}/g/{graph}"))), expected, "{file}");
    }
}

/// Builds the perf-threads/ files `files` with `toml` as site.toml; fails on a warning about perf.
fn build_perf_threads(dir: &Path, files: &[&str], toml: &str) -> PathBuf {
    let input = dir.join("in");
    let _ = std::fs::remove_dir_all(&input);
    for file in files {
        write(&input.join(file), &test_data(&format!("perf-threads/{file}")));
    }
    let config = dir.join("site.toml");
    write(&config, toml.as_bytes());
    let out = dir.join("out");
    let o = build(&input, &out, &["--config", config.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.lines().any(|l| l.starts_with("warning:") && l.contains(" perf")), "{err}");
    out
}

/// The total of the folded stacks `folded` whose root frame is `root`.
fn total_under(folded: &str, root: &str) -> u64 {
    folded
        .lines()
        .filter(|l| l.split([';', ' ']).next() == Some(root))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum()
}

/// The names threads.c (tests/data/perf-threads) gives its threads, and the root frame each
/// must have: the whole name, its spaces `_` as inferno and stackcollapse-perf.pl make them.
const THREADS: [(&str, &str); 4] =
    [("Worker 3", "Worker_3"), ("Pool Worker 7", "Pool_Worker_7"), ("FS Broker 5906", "FS_Broker_5906"), ("threads", "threads")];

#[test]
fn perf_thread_names_with_numbers_keep_their_samples_in_their_events_graph_weighed_by_period() {
    // perf-threads/threads.txt: `perf record -g` of threads named `Worker 3`, `Pool Worker 7`
    // and `FS Broker 5906` (pthread_setname_np). The first number after a name's first word
    // is not the thread id: each sample stays in the one `cpu-clock` graph, under its whole
    // name, weighed by its period. The expected stacks are stackcollapse-perf.pl's, which
    // reads `Pool Worker 7  4237` as the thread 7 of `Pool_Worker`, of the file with the names
    // joined by `_` (README.md).
    let dir = tempfile::tempdir().unwrap();
    let out = build_perf_threads(dir.path(), &["threads.txt", "threads-pid.txt"], "");
    assert_eq!(graphs_listed(&out, "threads.txt"), [("cpu-clock".to_string(), "nanoseconds".to_string())]);
    assert_eq!(graphs_listed(&out, "threads-pid.txt"), [("cpu-clock".to_string(), "nanoseconds".to_string())]);
    let folded = fold(dir.path(), &out.join("p/threads/g/cpu-clock"));
    assert_eq!(folded, merged_sorted(&text("perf-threads/threads.folded")));
    // `-F +pid` (`Pool Worker 7  4234/4237`): the same stacks.
    assert_eq!(fold(dir.path(), &out.join("p/threads-pid/g/cpu-clock")), folded);
    // Each thread's samples, found in the text by its name, weigh their periods in all.
    let perf = text("perf-threads/threads.txt");
    for (name, root) in THREADS {
        let periods: u64 = perf
            .lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .map(|rest| rest.split_whitespace().nth(2).unwrap().parse::<u64>().unwrap())
            .sum();
        assert!(periods > 0, "{name} has samples in threads.txt");
        assert_eq!(total_under(&folded, root), periods, "{name}");
    }
    assert_eq!(folded.lines().filter(|l| !THREADS.iter().any(|(_, root)| l.starts_with(&format!("{root};")))).count(), 0, "{folded}");

    // With `include_tid`, the root is the whole name and the pid/tid, as the script's --tid
    // names it once the names are joined.
    let out = build_perf_threads(dir.path(), &["threads-pid.txt"], "[perf]\ninclude_tid = true\n");
    let folded = fold(dir.path(), &out.join("p/threads-pid/g/cpu-clock"));
    assert_eq!(folded, merged_sorted(&text("perf-threads/threads-tid.folded")));
    assert!(folded.lines().any(|l| l.starts_with("Pool_Worker_7-") && l.split(';').next().unwrap().contains('/')), "{folded}");
}

#[test]
fn perf_samples_of_threads_that_exited_printed_as_minus_one_are_rooted_at_their_command() {
    // perf-threads/exited.txt: `perf record -a -g` of short threads; perf prints the samples
    // taken while a thread exited, after the kernel let go of its id, as `:-1    -1 [001] …`.
    // They keep their period and their stack under the root `:-1` (with `include_tid`,
    // `:-1-?/-1`), beside the program's own samples; no root is made of the line's fields.
    let exited = text("perf-threads/exited.txt");
    let unknown: Vec<&str> = exited.lines().filter(|l| l.starts_with(":-1 ")).collect();
    assert!(!unknown.is_empty() && unknown.iter().all(|l| l.split_whitespace().nth(1) == Some("-1")), "{unknown:?}");
    let dir = tempfile::tempdir().unwrap();
    for (toml, expected, root) in [
        ("", "perf-threads/exited.folded", ":-1"),
        ("[perf]\ninclude_tid = true\n", "perf-threads/exited-tid.folded", ":-1-?/-1"),
    ] {
        let out = build_perf_threads(dir.path(), &["exited.txt"], toml);
        assert_eq!(graphs_listed(&out, "exited.txt"), [("cpu-clock".to_string(), "nanoseconds".to_string())]);
        let folded = fold(dir.path(), &out.join("p/exited/g/cpu-clock"));
        assert_eq!(folded, merged_sorted(&text(expected)), "{toml}");
        assert_eq!(total_under(&folded, root), 100000 * unknown.len() as u64, "{toml}");
        assert!(folded.lines().all(|l| l.starts_with(&format!("{root};")) || l.starts_with("threads")), "{folded}");
    }
}

#[test]
fn a_tracepoint_recorded_without_call_chains_counts_each_sample_under_its_thread() {
    // perf-threads/sched.txt: `perf record -e sched:sched_switch` without -g. Each sample is
    // one line, its tracepoint's fields after the event, the next sample's line right after it
    // (no blank line): each is a sample of its own with no frames, counted once under its
    // thread's whole name. The expected stacks are stackcollapse-perf.pl's of the file with a
    // blank line after each sample (it reads none without) and the names joined by `_`.
    let sched = text("perf-threads/sched.txt");
    assert!(!sched.contains("\n\n") && sched.lines().all(|l| l.contains(" sched:sched_switch: prev_comm=")));
    let dir = tempfile::tempdir().unwrap();
    let out = build_perf_threads(dir.path(), &["sched.txt"], "");
    assert_eq!(graphs_listed(&out, "sched.txt"), [("samples".to_string(), "samples".to_string())]);
    let folded = fold(dir.path(), &out.join("p/sched/g/samples"));
    assert_eq!(folded, merged_sorted(&text("perf-threads/sched.folded")));
    for (name, root) in THREADS {
        let of_thread = |l: &&str| l.trim_start().strip_prefix(name).and_then(|r| r.strip_prefix(' ')).is_some_and(|r| r.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        let switches = sched.lines().filter(of_thread).count() as u64;
        assert!(switches > 0, "{name}");
        assert_eq!(total_under(&folded, root), switches, "{name}");
    }
    assert_eq!(folded.lines().count(), THREADS.len(), "one stack, the root alone, per thread: {folded}");
}

#[test]
fn austins_comment_lines_are_skipped_and_its_mode_and_interval_kept() {
    // austin/austin.txt: the austin profiler's output of spin.py (see its make.sh), with its
    // `# austin:`, `# interval:`, `# mode:` and `# duration:` comment lines.
    let austin = text("austin/austin.txt");
    let comments: Vec<&str> = austin.lines().filter(|l| l.starts_with("# ")).collect();
    assert!(comments.len() >= 4, "{comments:?}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("spin.txt"), austin.as_bytes());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("malformed"), "{}", stderr(&o));
    // The stacks: every line that is not a comment, summed per stack.
    let stacks: String = austin.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    assert_eq!(fold(dir.path(), &out.join("p/spin/g/samples")), merged_sorted(&stacks));
    let index: serde_json::Value = common::listing(&out);
    let meta = &index["profiles"][0]["metadata"];
    let value = |key: &str| comments.iter().find_map(|c| c.strip_prefix(&format!("# {key}: ")).map(str::to_string)).unwrap();
    assert_eq!(meta["mode"], value("mode"), "{meta}");
    assert_eq!(meta["interval"], format!("{} µs", value("interval")), "{meta}");
    assert_eq!(meta["austin"], value("austin"), "{meta}");
}

#[test]
fn frame_names_round_trip_byte_for_byte_even_a_single_space() {
    // A frame named " " inside a stack and as its last frame (written `main;  3`: the name,
    // then the one space before the count), and names with inner and trailing spaces.
    let input_text = "main; ;leaf 5\nmain;  3\nmain;b  c  2\n \t;x 1\n";
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("spaces.folded"), input_text.as_bytes());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut expected: Vec<&str> = input_text.lines().collect();
    expected.sort();
    let expected: String = expected.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(fold(dir.path(), &out.join("p/spaces/g/samples")), expected);
}

#[test]
fn fractional_counts_are_kept_exact_through_build_fold_and_pages() {
    // chrome-trace/: FlameGraph's stackcollapse-chrome-tracing.py prints durations as Python
    // floats (`2.95`, `1195906.0`, `4.399900000000001`); the *.expected files are Python's
    // exact decimal sums of its counts rounded half up to six places (see make.sh).
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for stem in ["trace", "chromium"] {
        write_three(&input, stem, "folded", &test_data(&format!("chrome-trace/{stem}.folded")));
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for stem in ["trace", "chromium"] {
        let want = text(&format!("chrome-trace/{stem}.expected"));
        for slug in [stem.to_string(), format!("{stem}-gz"), format!("{stem}-zst")] {
            assert_eq!(fold(dir.path(), &out.join(format!("p/{slug}/g/samples"))), want, "{slug}");
        }
    }
    // The float noise was rounded, and the warning says so with the line; `2.95` was not.
    let err = stderr(&o);
    assert!(err.contains("trace.folded: 2 counts had more than 6 decimal places and were rounded to 6 (line 8 first)"), "{err}");
    assert!(!err.lines().any(|l| l.contains("chromium") && l.contains("rounded")), "whole microseconds written N.0 are exact: {err}");
    // The pages say the values exactly, in the graph's unit.
    let index: serde_json::Value = common::listing(&out);
    let profile = index["profiles"].as_array().unwrap().iter().find(|p| p["url"].as_str().unwrap().ends_with("p/trace/")).unwrap().clone();
    let graph = &profile["graphs"][0];
    assert_eq!((graph["total"].as_u64(), graph["decimals"].as_u64()), (Some(220_500), Some(4)), "{graph}");
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("p/trace/g/samples/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["decimals"], 4);
    let page = std::fs::read_to_string(out.join("p/trace/index.html")).unwrap();
    assert!(page.contains("22.05 samples"), "the run page's total");
    // chromium.folded's counts are whole: no decimals key at all.
    let chromium = std::fs::read_to_string(out.join("p/chromium/g/samples/manifest.json")).unwrap();
    assert!(!chromium.contains("decimals"), "{chromium}");
}

#[test]
fn a_run_of_fractional_counts_compares_with_a_run_of_whole_ones() {
    // Two runs of one series: whole counts, then the same stacks in hundredths. The
    // comparison holds both in hundredths: 3 becomes 3.00, and nothing is rounded.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in/app");
    write(&input.join("2026-01-01.folded"), b"main;a 3\nmain;b 1\n");
    write(&input.join("2026-01-02.folded"), b"main;a 2.25\nmain;c 0.5\n");
    let out = dir.path().join("out");
    let o = build(&dir.path().join("in"), &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let folded = fold(dir.path(), &out.join("p/app/2026-01-02/compare/g/samples"));
    assert_eq!(folded, "main;a 3 2.25\nmain;b 1 0\nmain;c 0 0.5\n");
}

#[test]
fn check_names_the_format_each_profile_was_read_as_and_lists_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("trace.folded"), &test_data("chrome-trace/trace.folded"));
    write(&input.join("cpu.pb.gz"), &test_data("pprof/cpu.pb.gz"));
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap(), "--output", dir.path().join("out").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("trace.folded: folded, samples 22.05 samples,"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("cpu.pb.gz: pprof, ")), "{out}");
    assert!(!dir.path().join("out").exists(), "check writes nothing");
    // --formats: every format, the name that `check` and index.json give first on its line.
    let o = run(dir.path(), &["check", "--formats"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = stdout(&o).lines().map(|l| l.split_whitespace().next().unwrap().to_string()).collect();
    for name in ["jfr", "pprof", "speedscope", "cpuprofile", "perf", "dtrace", "sample", "vtune", "folded"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert_eq!(names.last().map(String::as_str), Some("folded"), "folded stacks accept almost any text: tried last");
}

#[test]
fn a_perf_profile_of_cycles_and_instructions_gets_its_cpi_graph() {
    // perf-cpi/: a real `perf record -e cycles,instructions` from FlameGraph's test files.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("noploop.txt"), &test_data("perf-cpi/cycles-instructions.txt"));
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index: serde_json::Value = common::listing(&out);
    let names: Vec<&str> = index["profiles"][0]["graphs"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["instructions", "cycles", "cpi"], "the events in the order of their first samples, then the CPI graph");
    // The CPI graph holds, for every stack of either event, its instructions then its cycles
    // (0 where an event lacks it): what FlameGraph's own scripts make of the file, each event
    // folded by stackcollapse-perf.pl and the two joined by difffolded.pl (perf-cpi/make.sh).
    let want = text("perf-cpi/cpi.difffolded");
    let joined = |t: &str| -> std::collections::BTreeSet<String> { t.lines().map(str::to_string).collect() };
    let counts = |l: &str| l.rsplitn(3, ' ').take(2).map(str::to_string).collect::<Vec<_>>();
    let only_cycles = want.lines().filter(|l| counts(l)[1] == "0").count();
    let only_instructions = want.lines().filter(|l| counts(l)[0] == "0").count();
    assert!(only_cycles > 0 && only_instructions > 0, "the premise: each event has stacks the other lacks");
    assert_eq!(joined(&fold(dir.path(), &out.join("p/noploop/g/cpi"))), joined(&want));
    // It is drawn as a comparison: a differential graph with the three layouts.
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("p/noploop/g/cpi/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["differential"], true);
    assert_eq!(manifest["diff"]["layout"], "union");
    assert_eq!(manifest["diff"]["total_before"], 333);
    assert_eq!(manifest["diff"]["total_after"], 111);
    // Its page calls the two counts what they are, not "the earlier run" and "this run".
    assert_eq!(manifest["diff"]["sides"], serde_json::json!({"before": "instructions", "after": "cycles"}));
    let folded: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("p/noploop/g/cycles/manifest.json")).unwrap()).unwrap();
    assert!(folded.get("diff").is_none(), "a plain graph has no sides");

    // Two such runs in a series: their comparison has the cycles and the instructions graphs,
    // and not the CPI graph again (read back by its cycles, it would repeat the cycles one).
    let series = dir.path().join("series");
    write(&series.join("noploop/2026-11-20.txt"), &test_data("perf-cpi/cycles-instructions.txt"));
    write(&series.join("noploop/2026-11-21.txt"), &test_data("perf-cpi/cycles-instructions.txt"));
    let out = dir.path().join("out-series");
    let o = build(&series, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let compare = out.join("p/noploop/2026-11-21/compare/g");
    let mut graphs: Vec<String> = std::fs::read_dir(&compare).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    graphs.sort();
    assert_eq!(graphs, ["cycles", "instructions"], "the comparison's graphs");
}

#[test]
fn dtrace_sample_and_vtune_files_of_the_real_tools_fold_as_the_reference_collapsers_fold_them() {
    // Real files from FlameGraph's and inferno's repositories, each with what an independent
    // collapser prints for it: FlameGraph's stackcollapse.pl (DTrace) and
    // stackcollapse-sample.awk (`sample`), their Rust symbols demangled by
    // tests/data/dtrace/rust-demangle.py, and tests/data/vtune/fold-vtune.py (VTune, which
    // FlameGraph's script cannot read). See tests/data/{dtrace,sample,vtune}/README.md and
    // make.sh; where inferno's commands differ (a `sample` path listed at several call sites,
    // `_{{closure}}`), those say how.
    let cases = [
        // (file, its slug, graph folder, unit, the reference folding)
        ("dtrace/example-dtrace-stacks.txt.gz", "example-dtrace-stacks", "samples", "samples", "dtrace/example-dtrace-stacks.folded.gz"),
        ("dtrace/stack-ustack.txt", "stack-ustack", "samples", "samples", "dtrace/stack-ustack.folded"),
        ("sample/sample.txt", "sample", "samples", "samples", "sample/sample.folded"),
        ("vtune/vtune.csv", "vtune.csv", "cpu_time", "milliseconds", "vtune/vtune.folded"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for (file, ..) in cases {
        write(&input.join(Path::new(file).file_name().unwrap()), &test_data(file));
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &["--keep-going"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (file, slug, graph, unit, expected) in cases {
        let want = if expected.ends_with(".gz") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(test_data(expected).as_slice()), &mut text).unwrap();
            text
        } else {
            text(expected)
        };
        assert!(want.lines().count() >= 4, "{expected}: several stacks");
        let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join(format!("p/{slug}/g/{graph}/manifest.json"))).unwrap()).unwrap();
        assert_eq!(manifest["unit"], unit, "{file}");
        assert_eq!(fold(dir.path(), &out.join(format!("p/{slug}/g/{graph}"))), merged_sorted(&want), "{file}");
    }
}

/// Issue 31, item 15: a text profile saved with a UTF-8 byte order mark (Windows editors)
/// builds as the same file without it, whatever its format and compression: the mark is not
/// part of the first frame's name, nor a reason to refuse a JSON profile.
#[test]
fn a_byte_order_mark_at_the_start_of_a_text_profile_is_not_part_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let bom = |bytes: &[u8]| [b"\xEF\xBB\xBF".as_slice(), bytes].concat();
    let folded = b"main;work 3\nmain;idle 2\n".to_vec();
    let cpuprofile = test_data("cpuprofile/node.cpuprofile");
    let perf = test_data("perf/perf.txt");
    write_three(&input, "folded", "folded", &bom(&folded));
    write_three(&input, "plain", "folded", &folded);
    write_three(&input, "node", "cpuprofile", &bom(&cpuprofile));
    write_three(&input, "nodeplain", "cpuprofile", &cpuprofile);
    write_three(&input, "perf", "perf", &bom(&perf));
    write_three(&input, "perfplain", "perf", &perf);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success() && !stderr(&o).contains("skipped"), "{}", stderr(&o));
    for (with, without) in [("folded", "plain"), ("node", "nodeplain"), ("perf", "perfplain")] {
        for suffix in ["", "-gz", "-zst"] {
            let (a, b) = (graphs_of(&out, &format!("{with}{suffix}")), graphs_of(&out, &format!("{without}{suffix}")));
            assert_eq!(a.len(), b.len(), "{with}{suffix}");
            for (ga, gb) in a.iter().zip(&b) {
                let folded = fold(dir.path(), ga);
                assert!(!folded.contains('\u{feff}'), "{with}{suffix}: {folded}");
                assert_eq!(folded, fold(dir.path(), gb), "{with}{suffix}");
            }
        }
    }
}

/// A reference of FlameGraph's stackcollapse-chrome-tracing.py (microseconds as Python floats,
/// threads merged) in nanoseconds, stacks of nothing left out.
fn reference_in_nanoseconds(folded: &str) -> BTreeMap<String, u64> {
    let mut sums = BTreeMap::new();
    for line in folded.lines() {
        let (stack, us) = line.rsplit_once(' ').unwrap();
        let ns = (us.parse::<f64>().unwrap() * 1000.0).round() as u64;
        if ns > 0 {
            *sums.entry(stack.to_string()).or_default() += ns;
        }
    }
    sums
}

/// flamesite's folded `wall` graph, its first frame (the thread) dropped when `threaded`,
/// summed per stack.
fn wall_without_threads(folded: &str, threaded: bool) -> BTreeMap<String, u64> {
    let mut sums = BTreeMap::new();
    for line in folded.lines() {
        let (stack, ns) = line.rsplit_once(' ').unwrap();
        let stack = if threaded { stack.split_once(';').map_or("", |s| s.1) } else { stack };
        if !stack.is_empty() {
            *sums.entry(stack.to_string()).or_default() += ns.parse::<u64>().unwrap();
        }
    }
    sums
}

#[test]
fn chrome_traces_give_the_wall_time_of_each_stack_as_flamegraphs_collapser_does() {
    // tests/data/chrome-trace (make.sh): a real trace of Chromium with DevTools' categories
    // (complete events on 9 threads, and the JavaScript samples DevTools records), py-spy's
    // `--format chrometrace` of prog.py (begin and end events, a bare array) and trace.json from
    // the spec (fractional microseconds), each against FlameGraph's
    // stackcollapse-chrome-tracing.py, stack for stack.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for file in ["chromium.trace.json.gz", "py-spy.trace.json.gz", "trace.json"] {
        write(&input.join(file), &test_data(&format!("chrome-trace/{file}")));
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("Chrome trace"), "{err}");
    let index: serde_json::Value = common::listing(&out);
    for (slug, reference, threads) in [("chromium.trace", "chromium.reference.folded", 9), ("py-spy.trace", "py-spy.reference.folded", 1), ("trace", "trace.folded", 2)] {
        let profile = index["profiles"].as_array().unwrap().iter().find(|p| p["url"].as_str().unwrap().ends_with(&format!("p/{slug}/"))).unwrap();
        assert_eq!(profile["format"], "chrome-trace", "{profile}");
        assert_eq!((profile["graphs"][0]["name"].as_str(), profile["graphs"][0]["unit"].as_str()), (Some("wall"), Some("nanoseconds")));
        let folded = fold(dir.path(), &out.join(format!("p/{slug}/g/wall")));
        // One frame per thread under the root when there are several, none for one.
        let roots: std::collections::BTreeSet<&str> = folded.lines().map(|l| l.rsplit_once(' ').unwrap().0.split(';').next().unwrap()).collect();
        if threads > 1 {
            assert_eq!(roots.len(), threads, "{slug}: {roots:?}");
            assert!(roots.iter().all(|r| r.contains("(pid ") && r.contains(", tid ")), "{slug}: {roots:?}");
        }
        let want = reference_in_nanoseconds(&text(&format!("chrome-trace/{reference}")));
        assert!(want.len() >= 8, "{slug}: {} stacks", want.len());
        assert_eq!(wall_without_threads(&folded, threads > 1), want, "{slug}");
    }
    // Chromium names its threads: their frames say so.
    let chromium = fold(dir.path(), &out.join("p/chromium.trace/g/wall"));
    assert!(chromium.lines().any(|l| l.starts_with("CrRendererMain (pid ")), "{chromium}");

    // DevTools' JavaScript samples in the Chromium trace (two renderers' profiles): each graph
    // is what the .cpuprofile DevTools makes of the same chunks gives (cpuprofile.py).
    let js = dir.path().join("js");
    for pid in [4096, 4107] {
        write(&js.join(format!("renderer-{pid}.cpuprofile.gz")), &test_data(&format!("chrome-trace/chromium.{pid}.cpuprofile.gz")));
    }
    let js_out = dir.path().join("js-out");
    let o = build(&js, &js_out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let graphs: Vec<String> = profile_graphs(&index, "chromium.trace");
    assert_eq!(graphs[0], "wall");
    for pid in [4096, 4107] {
        for graph in ["samples", "time", "time order"] {
            let ours = format!("js {graph} (pid {pid})");
            assert!(graphs.contains(&ours), "{ours} in {graphs:?}");
            let from_trace = fold(dir.path(), &graph_dir(&out, "chromium.trace", &ours));
            let from_cpuprofile = fold(dir.path(), &graph_dir(&js_out, &format!("renderer-{pid}"), graph));
            assert!(from_trace.lines().count() >= 2, "{ours}: {from_trace}");
            assert_eq!(from_trace, from_cpuprofile, "{ours}");
        }
    }
}

/// The names of a profile's graphs, in order, from index.json.
fn profile_graphs(index: &serde_json::Value, slug: &str) -> Vec<String> {
    let profile = index["profiles"].as_array().unwrap().iter().find(|p| p["url"].as_str().unwrap().ends_with(&format!("p/{slug}/"))).unwrap();
    profile["graphs"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap().to_string()).collect()
}

/// The folder of graph `graph` of profile `slug` (as index.json lists it).
fn graph_dir(out: &Path, slug: &str, graph: &str) -> PathBuf {
    let index: serde_json::Value = common::listing(out);
    let profile = index["profiles"].as_array().unwrap().iter().find(|p| p["url"].as_str().unwrap().ends_with(&format!("p/{slug}/"))).unwrap().clone();
    let g = profile["graphs"].as_array().unwrap().iter().find(|g| g["name"] == graph).unwrap_or_else(|| panic!("{graph} of {slug}"));
    out.join(g["data"].as_str().unwrap_or_else(|| panic!("{g}")))
}
