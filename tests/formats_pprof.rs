//! pprof input, end to end: profiles written by Go's runtime/pprof (tests/data/pprof, made by
//! its make.sh) built by the real binary, and every graph read back with `flamesite fold`
//! compared with the stacks that `go tool pprof -raw` reported for the same file.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::*;
use flamesite::ingest::decode::pprof::{Function, Line, Location, Profile, Sample, ValueType};
use prost::Message;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pprof")
}

/// The sample types the Go tool listed: (name, unit, is default), in the profile's order.
fn types(profile: &str) -> Vec<(String, String, bool)> {
    let text = std::fs::read_to_string(data().join(format!("{profile}.types"))).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].to_string(), f[1].to_string(), f.get(2) == Some(&"default"))
        })
        .collect()
}

fn copy_fixtures(input: &Path) {
    for p in ["cpu", "heap"] {
        let name = format!("{p}.pb.gz");
        write(&input.join(&name), &std::fs::read(data().join(&name)).unwrap());
    }
}

#[test]
fn every_sample_type_folds_back_to_what_the_go_tool_reports() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    copy_fixtures(&input);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index: serde_json::Value = common::listing(&out);
    for p in ["cpu", "heap"] {
        let types = types(p);
        assert!(types.len() >= 2, "{p}: {types:?}");
        for (name, _, _) in &types {
            let graph = out.join("p").join(p).join("g").join(name);
            let o = run(dir.path(), &["fold", graph.to_str().unwrap()]);
            assert!(o.status.success(), "{p} {name}: {}", stderr(&o));
            let want = std::fs::read_to_string(data().join(format!("{p}.{name}.folded"))).unwrap();
            assert!(!want.is_empty(), "{p} {name}: the fixture has stacks");
            assert_eq!(stdout(&o), want, "{p} {name}");
        }
        // index.json lists the graphs with their units, pprof's default first, then the
        // others in the profile's order.
        let entry = index["profiles"].as_array().unwrap().iter().find(|e| e["slug"] == p).unwrap();
        assert_eq!(entry["format"], "pprof");
        let listed: Vec<(String, String)> = entry["graphs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["name"].as_str().unwrap().to_string(), g["unit"].as_str().unwrap().to_string()))
            .collect();
        let mut want: Vec<(String, String)> =
            types.iter().filter(|t| t.2).map(|t| (t.0.clone(), t.1.clone())).collect();
        want.extend(types.iter().filter(|t| !t.2).map(|t| (t.0.clone(), t.1.clone())));
        assert_eq!(listed, want, "{p}");
        let meta = &entry["metadata"];
        assert!(meta["time"].as_str().unwrap().ends_with('Z'), "{p}: {meta}");
        assert!(meta["period"].as_str().is_some(), "{p}: {meta}");
    }
    // The CPU profile's own facts, as the Go tool printed them.
    let raw = std::fs::read_to_string(data().join("cpu.raw.txt")).unwrap();
    assert!(raw.contains("Period: 10000000"));
    let cpu = index["profiles"].as_array().unwrap().iter().find(|e| e["slug"] == "cpu").unwrap();
    assert_eq!(cpu["metadata"]["period"], "10.0 ms of cpu", "pprof.period in the one value formatter");
    assert!(cpu["metadata"]["duration"].as_str().unwrap().ends_with(" ms"), "{}", cpu["metadata"]);
    // The page shows them beside the profile's name.
    let page = std::fs::read_to_string(out.join("p/cpu/index.html")).unwrap();
    assert!(page.contains("period 10.0 ms of cpu"), "{page}");
    // The graph menu names each graph once, with its unit where the name does not say it, and
    // its total.
    assert!(page.contains(">cpu (nanoseconds) · 520 ms</option>"), "{page}");
    let samples = cpu["graphs"].as_array().unwrap().iter().find(|g| g["name"] == "samples").unwrap()["total"].as_u64().unwrap();
    assert!(page.contains(&format!(">samples (count) · {samples}</option>")), "{page}");
}

#[test]
fn inlined_functions_are_frames_of_their_own_in_call_order() {
    // The Go compiler inlined square and spin into their callers: `go tool pprof -raw`
    // prints such a location as its innermost line followed by continuation lines for the
    // functions it was inlined into. Each of those locations must become consecutive frames
    // of the built graph, outermost first.
    let raw = std::fs::read_to_string(data().join("cpu.raw.txt")).unwrap();
    let locations = &raw[raw.find("\nLocations\n").unwrap()..raw.find("\nMappings\n").unwrap()];
    let mut chains: Vec<Vec<&str>> = Vec::new();
    for line in locations.lines().skip(2) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with("             ") {
            chains.last_mut().unwrap().push(words[0]);
        } else {
            // `N: 0xADDR M=1 function file:line s=0`
            chains.push(vec![words[3]]);
        }
    }
    let inlined: Vec<String> =
        chains.iter().filter(|c| c.len() > 1).map(|c| c.iter().rev().copied().collect::<Vec<_>>().join(";")).collect();
    assert!(inlined.iter().any(|c| c.split(';').count() == 3), "a location with three lines: {inlined:?}");

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    copy_fixtures(&input);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(dir.path(), &["fold", out.join("p/cpu/g/cpu").to_str().unwrap()]);
    let folded = stdout(&o);
    for chain in &inlined {
        assert!(
            folded.lines().any(|l| format!(";{}", l.rsplit_once(' ').unwrap().0).contains(&format!(";{chain}"))),
            "{chain} as consecutive frames in:\n{folded}"
        );
    }
}

#[test]
fn check_lists_the_format_and_each_sample_type() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    copy_fixtures(&input);
    let out = dir.path().join("out");
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for p in ["cpu", "heap"] {
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(&format!("{p}.pb.gz: pprof, "))).collect();
        let types = types(p);
        assert_eq!(lines.len(), types.len(), "{text}");
        for (name, unit, default) in &types {
            assert!(lines.iter().any(|l| l.contains(&format!(" {name} ")) && l.contains(&format!(" {unit},"))), "{p} {name}: {text}");
            if *default {
                assert!(lines[0].contains(&format!(" {name} ")), "{p}: the default first: {text}");
            }
        }
    }
    assert!(!out.exists(), "check writes nothing");
}

/// A small valid profile, and variants of it that are broken in one way each.
fn profile() -> Profile {
    let s = |v: &[&str]| v.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
    Profile {
        string_table: s(&["", "samples", "count", "main", "work"]),
        sample_type: vec![ValueType { r#type: 1, unit: 2 }],
        function: vec![Function { id: 1, name: 3, ..Default::default() }, Function { id: 2, name: 4, ..Default::default() }],
        location: vec![
            Location { id: 1, line: vec![Line { function_id: 1, ..Default::default() }], ..Default::default() },
            Location { id: 2, line: vec![Line { function_id: 2, ..Default::default() }], ..Default::default() },
        ],
        sample: vec![Sample { location_id: vec![2, 1], value: vec![5], label: vec![] }],
        ..Default::default()
    }
}

#[test]
fn malformed_profiles_are_named_and_skipped_and_the_good_ones_build() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("good.pb"), &profile().encode_to_vec());
    let bytes = profile().encode_to_vec();
    write(&input.join("bad/truncated.pb.gz"), &gzip(&bytes[..bytes.len() - 4]));
    let mut p = profile();
    p.function[1].name = 57;
    write(&input.join("bad/string.pb"), &p.encode_to_vec());
    let mut p = profile();
    p.sample[0].location_id.push(9);
    write(&input.join("bad/location.pb"), &p.encode_to_vec());
    let mut p = profile();
    p.location.push(Location { id: 3, ..Default::default() });
    write(&input.join("bad/noline.pb"), &p.encode_to_vec());
    let mut wire = profile().encode_to_vec();
    wire.extend_from_slice(&[(9 << 3) | 2, 1, 0]); // time_nanos as a length-delimited field
    write(&input.join("bad/wiretype.pb"), &wire);

    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for (bad, why) in [
        ("truncated.pb.gz", "pprof: malformed protobuf"),
        ("string.pb", "string index 57 of function 2 out of range (the table has 5)"),
        ("location.pb", "location 9 referred to by sample 1 does not exist"),
        ("noline.pb", "location 3 has no line and no address"),
        ("wiretype.pb", "wire type"),
    ] {
        let line = err
            .lines()
            .find(|l| l.starts_with("error:") && l.contains(&format!("bad/{bad}")))
            .unwrap_or_else(|| panic!("{bad} not reported:\n{err}"));
        assert!(line.contains(why), "{bad}: expected {why:?} in {line:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
    let o = run(dir.path(), &["fold", out.join("p/good").to_str().unwrap()]);
    assert_eq!(stdout(&o), "main;work 5\n");
}

#[test]
fn a_sample_type_whose_values_are_all_zero_is_an_empty_graph() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let mut p = profile();
    p.string_table.extend([b"inuse".to_vec(), b"bytes".to_vec()]);
    p.sample_type.push(ValueType { r#type: 5, unit: 6 });
    p.sample[0].value.push(0);
    p.default_sample_type = 1;
    write(&input.join("zero.pb"), &p.encode_to_vec());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(dir.path(), &["fold", out.join("p/zero/g/inuse").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let o = run(dir.path(), &["fold", out.join("p/zero/g/samples").to_str().unwrap()]);
    assert_eq!(stdout(&o), "main;work 5\n");
    let index = common::listing(&out);
    let graphs: Vec<&str> = index["profiles"][0]["graphs"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(graphs, ["samples", "inuse"], "the default first");
}

#[test]
fn doc_url_and_the_frame_filters_are_shown_and_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let mut p = profile();
    let n = p.string_table.len() as i64;
    p.string_table.extend([b"https://example.com/profiling-docs".to_vec(), b"^work$".to_vec(), b"^main$".to_vec()]);
    p.doc_url = n;
    p.drop_frames = n + 1;
    p.keep_frames = n + 2;
    write(&input.join("doc.pb"), &p.encode_to_vec());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index: serde_json::Value = common::listing(&out);
    let meta = &index["profiles"][0]["metadata"];
    assert_eq!(meta["doc_url"], "https://example.com/profiling-docs", "{meta}");
    assert_eq!(meta["drop_frames"], "^work$", "{meta}");
    assert_eq!(meta["keep_frames"], "^main$", "{meta}");
    let page = std::fs::read_to_string(out.join("p/doc/index.html")).unwrap();
    assert!(page.contains("https://example.com/profiling-docs") && page.contains("^main$"), "shown on the run page: {page}");
    // Not applied: the frame that drop_frames names is still in the graph.
    let o = run(dir.path(), &["fold", out.join("p/doc").to_str().unwrap()]);
    assert_eq!(stdout(&o), "main;work 5\n");
}

/// The values of label `key` that `go tool pprof -tags` listed for labels.pb.gz, sorted.
fn tag_values(key: &str) -> Vec<String> {
    let text = std::fs::read_to_string(data().join("labels.tags.txt")).unwrap();
    let mut lines = text.lines().skip_while(|l| l.split(':').next().unwrap().trim() != key);
    assert!(lines.next().is_some(), "{key} in:\n{text}");
    // `   130.0ms (37.14%): worker-1`, up to the blank line that ends the key's block.
    let mut values: Vec<String> =
        lines.take_while(|l| !l.trim().is_empty()).map(|l| l.split_once("): ").unwrap().1.to_string()).collect();
    values.sort();
    values
}

/// The graphs index.json lists for the run `slug`: (name, unit, data folder).
fn graphs(index: &serde_json::Value, slug: &str) -> Vec<(String, String, String)> {
    let entry = index["profiles"].as_array().unwrap().iter().find(|e| e["slug"] == slug).unwrap();
    entry["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let s = |k: &str| g[k].as_str().unwrap().to_string();
            (s("name"), s("unit"), s("data"))
        })
        .collect()
}

fn read_index(out: &Path) -> serde_json::Value {
    common::listing(out)
}

/// Folds every graph of run `slug` and checks it against `want(graph name)`, a fixture file.
fn assert_graphs_fold_to(dir: &Path, out: &Path, index: &serde_json::Value, slug: &str, want: &dyn Fn(&str) -> String) {
    for (name, _, folder) in graphs(index, slug) {
        let o = run(dir, &["fold", out.join(&folder).to_str().unwrap()]);
        assert!(o.status.success(), "{slug} {name}: {}", stderr(&o));
        let expected = std::fs::read_to_string(data().join(want(&name))).unwrap();
        assert!(!expected.is_empty(), "{name}: the fixture has stacks");
        assert_eq!(stdout(&o), expected, "{slug} {name}");
    }
}

#[test]
fn graph_by_label_makes_a_graph_per_value_that_folds_to_the_go_tools_tagfocus_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    copy_fixtures(&input);
    write(&input.join("labels.pb.gz"), &std::fs::read(data().join("labels.pb.gz")).unwrap());
    let out = dir.path().join("out");
    let toml = dir.path().join("site.toml");
    let threads = tag_values("thread");
    assert_eq!(threads, ["worker-1", "worker-2", "worker-3"], "the Go program's labels");
    let mut types = types("labels");
    types.sort_by_key(|t| !t.2); // the default first, then the profile's order

    // Without graph_by_label: one graph per sample type, as the Go tool reads the whole file,
    // and the labels as metadata, with the values the Go tool lists.
    write(&toml, b"input = \"in\"\noutput = \"out\"\n");
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = read_index(&out);
    let names: Vec<String> = graphs(&index, "labels").into_iter().map(|g| g.0).collect();
    assert_eq!(names, types.iter().map(|t| t.0.clone()).collect::<Vec<_>>());
    assert_graphs_fold_to(dir.path(), &out, &index, "labels", &|name| format!("labels.{name}.folded"));
    let entry = index["profiles"].as_array().unwrap().iter().find(|e| e["slug"] == "labels").unwrap();
    assert_eq!(entry["metadata"]["label thread"], threads.join(", "), "{}", entry["metadata"]);
    assert_eq!(entry["metadata"]["label kind"], tag_values("kind").join(", "), "{}", entry["metadata"]);
    let page = std::fs::read_to_string(out.join("p/labels/index.html")).unwrap();
    assert!(page.contains("label thread") && page.contains("worker-1, worker-2, worker-3"), "shown on the run page");
    let before_cpu = graphs(&index, "cpu");

    // With it (the same cache: the option is part of its key and of the build's fingerprint),
    // per sample type: the whole profile, each thread, then the samples without a thread.
    write(&toml, b"input = \"in\"\noutput = \"out\"\n[pprof]\ngraph_by_label = \"thread\"\n");
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = read_index(&out);
    let mut want = Vec::new();
    for (t, unit, _) in &types {
        want.push((t.clone(), unit.clone()));
        want.extend(threads.iter().map(|v| (format!("{t} thread={v}"), unit.clone())));
        want.push((format!("{t} thread=(none)"), unit.clone()));
    }
    let listed: Vec<(String, String)> = graphs(&index, "labels").into_iter().map(|g| (g.0, g.1)).collect();
    assert_eq!(listed, want);
    assert_graphs_fold_to(dir.path(), &out, &index, "labels", &|name| match name.split_once(' ') {
        None => format!("labels.{name}.folded"),
        Some((t, label)) => format!("labels.{label}.{t}.folded"),
    });
    // A profile without the label keeps the graphs it had.
    assert_eq!(graphs(&index, "cpu"), before_cpu);
    // `check` lists every graph.
    let o = run(dir.path(), &["check", "--config", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("labels.pb.gz: pprof, cpu thread=worker-2 "), "{text}");
    assert!(text.contains("labels.pb.gz: pprof, samples thread=(none) "), "{text}");
}

/// Stacks of a folded graph, a Go text profile's way: the runtime's frames at the leaf before
/// the first other one and `runtime.goexit` at the root left out (runtime/pprof's
/// `printStackRecord` does not print them at debug=1), summed per stack.
fn as_go_prints_them(folded: &str) -> std::collections::BTreeMap<String, u64> {
    let mut sums = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, value) = line.rsplit_once(' ').unwrap();
        let mut frames: Vec<&str> = stack.split(';').filter(|f| *f != "runtime.goexit").collect();
        while frames.len() > 1 && frames.last().is_some_and(|f| f.starts_with("runtime.")) {
            frames.pop();
        }
        *sums.entry(frames.join(";")).or_default() += value.parse::<u64>().unwrap();
    }
    sums
}

#[test]
fn go_text_count_profiles_read_as_their_protobuf_form_of_the_same_moment() {
    // tests/data/go-text (make.sh): Go 1.19's goroutine and threadcreate profiles of one
    // moment, as the text of debug=1 and the protobuf of debug=0.
    let dir = tempfile::tempdir().unwrap();
    let src = data().parent().unwrap().join("go-text");
    let (text_in, proto_in) = (dir.path().join("text"), dir.path().join("proto"));
    for name in ["goroutine", "threadcreate"] {
        write(&text_in.join(format!("{name}.txt")), &std::fs::read(src.join(format!("{name}.txt"))).unwrap());
        write(&proto_in.join(format!("{name}.pb.gz")), &std::fs::read(src.join(format!("{name}.pb.gz"))).unwrap());
    }
    let (text_out, proto_out) = (dir.path().join("text-out"), dir.path().join("proto-out"));
    let o = build(&text_in, &text_out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("threadcreate.txt: Go text profile: 4 of 4 with no stack (records without addresses), counted under [unknown]"), "{}", stderr(&o));
    assert!(build(&proto_in, &proto_out, &[]).status.success());
    let index = read_index(&text_out);
    let text_graphs = graphs(&index, "goroutine");
    assert_eq!((text_graphs[0].0.as_str(), text_graphs[0].1.as_str()), ("goroutine", "count"), "{text_graphs:?}");
    let fold_of = |out: &Path, slug: &str, graph: &str| {
        let o = run(dir.path(), &["fold", out.join(format!("p/{slug}/g/{graph}")).to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let from_text = fold_of(&text_out, "goroutine", "goroutine");
    let from_proto = fold_of(&proto_out, "goroutine", "goroutine");
    assert!(from_text.contains("main.worker;main.mid;main.leaf 5\n") && from_text.contains("main.sleeper 3\n"), "{from_text}");
    assert_eq!(as_go_prints_them(&from_text), as_go_prints_them(&from_proto));
    assert_eq!(fold_of(&text_out, "threadcreate", "threadcreate"), fold_of(&proto_out, "threadcreate", "threadcreate"));
}

#[test]
fn a_go_text_profile_without_symbols_reads_as_google_pprof_reads_it() {
    // tests/data/go-text/go.godoc.thread and what google/pprof's parser makes of it
    // (go.godoc.thread.string): each sample's locations, leaf first, as addresses.
    let src = data().parent().unwrap().join("go-text");
    let reference = std::fs::read_to_string(src.join("go.godoc.thread.string")).unwrap();
    let (samples, rest) = reference.split_once("Locations\n").unwrap();
    let addresses: std::collections::BTreeMap<&str, &str> = rest
        .lines()
        .take_while(|l| !l.starts_with("Mappings"))
        .map(|l| {
            let (id, what) = l.trim().split_once(": ").unwrap();
            (id, what.split_whitespace().next().unwrap())
        })
        .collect();
    let mut want = std::collections::BTreeMap::<String, u64>::new();
    for line in samples.lines().skip_while(|l| !l.starts_with("threadcreate/count")).skip(1) {
        let (count, ids) = line.trim().split_once(": ").unwrap();
        let stack: Vec<&str> = ids.split_whitespace().rev().map(|id| addresses[id]).collect();
        *want.entry(stack.join(";")).or_default() += count.parse::<u64>().unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("go.godoc.thread"), &std::fs::read(src.join("go.godoc.thread")).unwrap());
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(dir.path(), &["fold", out.join("p/go.godoc.thread/g/threadcreate").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got: std::collections::BTreeMap<String, u64> = stdout(&o).lines().map(|l| l.rsplit_once(' ').unwrap()).map(|(s, v)| (s.to_string(), v.parse().unwrap())).collect();
    assert_eq!(got.len(), 7);
    assert_eq!(got, want);
}
