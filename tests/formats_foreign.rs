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
        ("packed.folded.xz", "an xz-compressed file", "xz -d"),
        ("packed.folded.bz2", "a bzip2-compressed file", "bunzip2"),
        ("packed.folded.lz4", "an LZ4-compressed file", "lz4 -d"),
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
