//! Samples with no frames (issue 48, class 4): a speedscope sample whose stack is `[]` (py-spy
//! writes one as the interpreter exits, tests/data/speedscope/README.md) or an evented
//! profile's time when no frame is open counts at the root, as speedscope counts it, so that
//! the graph's total and every share are speedscope's; the build and `flamesite check` say how
//! many such samples there were and what they weigh. A `.cpuprofile` sample on the `(root)`
//! node counts as `(root)`'s own time, as Chrome DevTools counts it.

use std::path::Path;

use crate::common::*;

/// Each graph of the run `slug` as (name, unit, total), from the built site's listings.
fn totals(out: &Path, slug: &str) -> Vec<(String, String, u64)> {
    let index = listing(out);
    let e = index["profiles"].as_array().unwrap().iter().find(|e| e["slug"] == slug).unwrap_or_else(|| panic!("{slug}: {index}"));
    e["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["name"].as_str().unwrap().to_string(), g["unit"].as_str().unwrap().to_string(), g["total"].as_u64().unwrap()))
        .collect()
}

/// The sum of the values `flamesite fold` gives for a graph: its frames' own values, the
/// root's not among them.
fn folded_sum(dir: &Path, graph: &Path) -> u64 {
    let o = run(dir, &["fold", graph.to_str().unwrap()]);
    assert!(o.status.success(), "fold {}: {}", graph.display(), stderr(&o));
    stdout(&o).lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum()
}

fn owned(graphs: &[(&str, &str, u64)]) -> Vec<(String, String, u64)> {
    graphs.iter().map(|&(n, u, t)| (n.to_string(), u.to_string(), t)).collect()
}

#[test]
fn speedscope_samples_with_no_frames_count_at_the_root_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    // py-spy: 54 samples of 20 ms, the last one `[]`; make.sh's fixture: 95, the last one `[]`.
    write(&input.join("exit.json"), &test_data("speedscope/py-spy-exit.speedscope.json"));
    write(&input.join("py.json"), &test_data("speedscope/py-spy.speedscope.json"));
    // By hand: `work` open 0–3 ms and 5–6 ms, nothing 3–5 ms.
    write(&input.join("gap.json"), &test_data("speedscope/gap.evented.speedscope.json"));
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");

    // The totals are speedscope's: every sample's weight, the empty ones' at the root.
    let thread = "Thread \"\"";
    let in_time = "Thread \"\" (time order)";
    assert_eq!(totals(&out, "exit"), owned(&[(thread, "milliseconds", 1080), (in_time, "milliseconds", 1080)]));
    assert_eq!(totals(&out, "py"), owned(&[(thread, "milliseconds", 1900), (in_time, "milliseconds", 1900)]));
    assert_eq!(totals(&out, "gap"), owned(&[("gap", "milliseconds", 6), ("gap (time order)", "milliseconds", 6)]));
    // The frames' own values are the rest: the root holds just what had no frames, so a
    // frame's share is of the whole profile.
    assert_eq!(folded_sum(dir.path(), &out.join("p/exit/g/Thread___")), 1060);
    assert_eq!(folded_sum(dir.path(), &out.join("p/py/g/Thread___")), 1880);
    assert_eq!(folded_sum(dir.path(), &out.join("p/gap/g/gap")), 4);

    // And the build says so, with how many samples and what they weigh.
    for (file, what) in [
        ("exit.json", "speedscope: profile 1 (\"Thread \\\"\\\"\"): 1 sample had no frames (an empty stack): 20.0 ms (1.9% of the profile), counted at the root, all"),
        ("py.json", "speedscope: profile 1 (\"Thread \\\"\\\"\"): 1 sample had no frames (an empty stack): 20.0 ms (1.1% of the profile), counted at the root, all"),
        ("gap.json", "speedscope: profile 1 (\"gap\"): 1 stretch of time between events had no frame open: 2.00 ms (33.3% of the profile), counted at the root, all"),
    ] {
        let line = err.lines().find(|l| l.starts_with("warning:") && l.contains(file) && l.contains("no frame")).unwrap_or_else(|| panic!("{file}: no warning in\n{err}"));
        assert!(line.ends_with(what), "{file}: {line}");
    }
    assert_eq!(err.matches("no frame").count(), 3, "once per profile, not again for its time order:\n{err}");

    // `flamesite check` gives the same totals and the same warnings.
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed = stdout(&o);
    for line in ["exit.json: speedscope, Thread \"\" 1080 milliseconds, ", "py.json: speedscope, Thread \"\" 1900 milliseconds, ", "gap.json: speedscope, gap 6 milliseconds, "] {
        assert!(listed.contains(line), "{line:?} in {listed}");
    }
    assert_eq!(stderr(&o).matches("counted at the root, all").count(), 3, "{}", stderr(&o));
}

#[test]
fn a_cpuprofile_sample_on_the_root_node_counts_as_the_roots_own_time_as_devtools_does() {
    // A `.cpuprofile` has no empty stack: a tick with no JavaScript on the stack is a sample
    // of `(program)`, `(idle)` or `(garbage collector)`, and one on the `(root)` node itself
    // is `(root)`'s own time in DevTools, kept here as the frame `(root)`.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(
        &input.join("root.cpuprofile"),
        br#"{"nodes": [
            {"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1}, "children": [2]},
            {"id": 2, "callFrame": {"functionName": "main", "url": "file:///m.js", "lineNumber": 0}}],
          "startTime": 0, "endTime": 40, "samples": [2, 1, 2, 1, 1], "timeDeltas": [0, 10, 10, 10, 5]}"#,
    );
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("no frame"), "{}", stderr(&o));
    assert_eq!(
        totals(&out, "root"),
        owned(&[("samples", "samples", 5), ("time", "microseconds", 40), ("time order", "microseconds", 40)])
    );
    let o = run(dir.path(), &["fold", out.join("p/root/g/samples").to_str().unwrap()]);
    assert_eq!(stdout(&o), "(root) 3\nmain file:///m.js:1 2\n");
}
