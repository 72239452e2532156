//! Files that are no format flamesite reads (issue 48, class 1): Valgrind's callgrind and
//! cachegrind output, legacy pprof (Go's debug=1 text, gperftools' text and binary), perf.data,
//! Python's pstats, V8's --prof log, and profiles packed by xz, bzip2 or lz4. Text whose lines
//! end in numbers used to be read as folded stacks, a graph that looked right (callgrind's
//! `summary: 194045152` as a frame); each is now refused with its path, what it is and the
//! command that makes a file that is read, and every other profile still builds.
//! tests/data/foreign/README.md says where each file came from.


use crate::common::*;

#[test]
fn files_of_other_tools_are_refused_by_what_they_are_and_the_profiles_beside_them_build() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    // (file, what the error says it is, what it says to do)
    let cases = [
        ("callgrind.out.gz", "Valgrind callgrind output (gzip-compressed)", "perf record -g"),
        ("cachegrind.out.gz", "Valgrind cachegrind or callgrind output (gzip-compressed)", "perf record -g"),
        ("pprof.cpu.callgrind", "Valgrind cachegrind or callgrind output", "perf record -g"),
        ("cppbench.contention", "a legacy pprof profile", "go tool pprof -proto"),
        ("cppbench.heap", "a legacy pprof profile", "go tool pprof -proto"),
        ("go.crc32.cpu", "a legacy pprof profile", "go tool pprof -proto"),
        ("perf.data", "perf.data, perf record's binary file", "perf script >"),
        ("py.pstats", "Python's cProfile/pstats data", "py-spy record"),
        ("v8.log.gz", "V8's --prof log (gzip-compressed)", "node --cpu-prof"),
    ];
    for (name, ..) in cases {
        write(&input.join("other").join(name), &test_data(&format!("foreign/{name}")));
    }
    write(&input.join("api/2026-01-01.folded"), b"main;work 3\nmain;idle 1\n");
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "skipped profiles make the exit status 1: {err}");
    for (name, what, instead) in cases {
        let line = err.lines().find(|l| l.starts_with("error:") && l.contains(&format!("other/{name}:"))).unwrap_or_else(|| panic!("{name} is not named: {err}"));
        assert!(line.contains(&format!(": {what}")) && line.contains("which flamesite does not read") && line.contains(instead), "{line}");
    }
    // Nothing of them is published: the one real profile is the site's one run.
    let index = listing(&out);
    let slugs: Vec<&str> = index["profiles"].as_array().unwrap().iter().map(|p| p["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["api/2026-01-01"], "{index}");
    // `check` says the same and writes nothing.
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("other/cppbench.heap: a legacy pprof profile"), "{}", stderr(&o));
}

#[test]
fn text_mostly_not_folded_stacks_is_refused_and_a_few_bad_lines_are_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    // A report whose first line happens to end in a number: the rest is no stack.
    let report = "Requests served 1200\nThe slowest endpoint was /search, at the 99th percentile.\nNo errors were logged.\nThe cache was warm.\n";
    write(&input.join("notes/report.txt"), report.as_bytes());
    // Past the first 4 KiB a text turns into something else: read whole, it is mostly not stacks.
    let mut long = String::new();
    for i in 0..300 {
        long.push_str(&format!("main;step{i} {}\n", i + 1));
    }
    for i in 0..900 {
        long.push_str(&format!("log line {i}: nothing to see\n"));
    }
    write(&input.join("notes/turns.folded"), long.as_bytes());
    // Real folded stacks with a stray line or two still build, with a warning.
    write(&input.join("api/2026-01-01.folded"), b"main;work 3\n-- cut here --\nmain;idle 1\nmain;work;inner 2\n");
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("notes/report.txt: unknown profile format"), "{err}");
    assert!(err.contains("notes/turns.folded: not folded stacks: 900 of its 1200 lines"), "{err}");
    assert!(err.contains("api/2026-01-01.folded: skipped 1 malformed line (line 2)"), "{err}");
    let index = listing(&out);
    assert_eq!(index["profiles"].as_array().unwrap().len(), 1, "{index}");
    assert_eq!(index["profiles"][0]["graphs"][0]["total"], 6, "{index}");
}

#[test]
fn profiles_packed_by_xz_bzip2_lz4_and_in_layers_are_unpacked_and_four_layers_are_refused() {
    // tests/data/packed (make.sh): one folded profile packed by the real tools, once and in
    // layers (gzip inside xz, zstd inside bzip2, gzip inside gzip inside LZ4).
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let packed = ["packed.folded.xz", "packed.folded.bz2", "packed.folded.lz4", "layered.folded.gz.xz", "layered.folded.zst.bz2", "layered.folded.gz.gz.lz4"];
    for name in packed.iter().chain(&["deep.folded.gz.gz.gz.gz"]) {
        write(&input.join(name), &test_data(&format!("packed/{name}")));
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "the four-layer file is skipped: {err}");
    assert!(err.lines().any(|l| l.starts_with("error:") && l.contains("deep.folded.gz.gz.gz.gz: a file compressed more than three times over")), "{err}");
    let index = listing(&out);
    let profiles = index["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), packed.len(), "{index}");
    for p in profiles {
        let url = p["url"].as_str().unwrap();
        let o = run(dir.path(), &["fold", out.join(url).join("g/samples").to_str().unwrap()]);
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        assert_eq!(stdout(&o), "main;idle 1\nmain;work 3\n", "{url}");
    }
}
