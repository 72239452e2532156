//! The build as a user runs it: fixture folders built by the real binary into temporary
//! folders, and the output checked file by file.

use crate::common;

use crate::common::*;

#[test]
fn fold_of_the_built_graph_equals_the_merged_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    let deep = format!("{} 7\n{};leaf 2\n", vec!["recurse"; 10_000].join(";"), vec!["recurse"; 9_999].join(";"));
    let cases = [
        ("awkward.folded", awkward_profile(1, 3000)),
        ("more/awkward2.folded", awkward_profile(2, 500)),
        ("deep.folded", deep),
        ("crlf.txt", "a;b c;d 3\r\na;b c 4\r\n\r\na;b c;d 1\r\n".to_string()),
        ("diff.folded", "main;a 10 12\nmain;b 5 0\nmain;a;x 0 3\nmain;a 1 1\n".to_string()),
    ];
    for (name, text) in &cases {
        write(&input.join(name), text.as_bytes());
    }
    let out = dir.path().join("public");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (name, text) in &cases {
        let slug = name.rsplit_once('.').unwrap().0;
        let graph = out.join("p").join(slug).join("g/samples");
        let o = run(dir.path(), &["fold", graph.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert_eq!(stdout(&o), merged_sorted(text), "{name}");
    }
    // A profile page folder with one graph can be folded too.
    let o = run(dir.path(), &["fold", out.join("p/crlf").to_str().unwrap()]);
    assert_eq!(stdout(&o), "a;b c 4\na;b c;d 4\n");
    // Piped into a reader that stops early (`| head -c 1`), it ends quietly, with success (the
    // deep profile folds to 160 kB, more than a pipe holds).
    let mut child = std::process::Command::new(bin())
        .args(["fold", out.join("p/deep/g/samples").to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    assert_eq!(stderr(&o), "", "nothing on stderr");
}

#[test]
fn compressed_inputs_are_detected_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let text = awkward_profile(3, 400);
    write(&input.join("a.folded.gz"), &gzip(text.as_bytes()));
    write(&input.join("b.folded.zst"), &zstd(text.as_bytes()));
    // Misnamed: gzip content in a .txt file, and two gzip members back to back.
    write(&input.join("c.txt"), &gzip(text.as_bytes()));
    let split = text[..text.len() / 2].rfind('\n').unwrap() + 1;
    let (first, rest) = text.split_at(split);
    let mut members = gzip(first.as_bytes());
    members.extend(gzip(rest.as_bytes()));
    write(&input.join("d.folded.gz"), &members);
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for slug in ["a", "b", "c", "d"] {
        let o = run(dir.path(), &["fold", out.join("p").join(slug).to_str().unwrap()]);
        assert_eq!(stdout(&o), merged_sorted(&text), "{slug}");
    }
}

#[test]
fn output_is_byte_identical_across_thread_counts_and_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for i in 0..8 {
        write(&input.join(format!("s{}/run{i}.folded.gz", i % 3)), &gzip(awkward_profile(i, 800).as_bytes()));
    }
    let one = dir.path().join("one");
    let two = dir.path().join("two");
    assert!(build(&input, &one, &["-j", "1"]).status.success());
    assert!(build(&input, &two, &["-j", "2"]).status.success());
    let a = tree(&one);
    assert!(a.len() > 8 * 5, "every profile wrote its files: {}", a.len());
    assert!(a == tree(&two), "1 and 2 threads differ");
    assert!(build(&input, &two, &["-j", "2"]).status.success());
    assert!(a == tree(&two), "a rebuild differs");
}

#[test]
fn bad_profiles_are_named_and_skipped_and_the_good_ones_build() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let good = awkward_profile(4, 300);
    write(&input.join("good/one.folded"), good.as_bytes());
    write(&input.join("good/two.folded.gz"), &gzip(good.as_bytes()));
    let gz = gzip(good.as_bytes());
    write(&input.join("bad/truncated.folded.gz"), &gz[..gz.len() / 2]);
    let mut corrupt = gz.clone();
    for b in &mut corrupt[20..60] {
        *b ^= 0x5a;
    }
    write(&input.join("bad/corrupt.folded.gz"), &corrupt);
    write(&input.join("bad/empty.folded"), b"");
    write(&input.join("bad/empty.folded.gz"), &gzip(b""));
    write(&input.join("bad/notes.txt"), b"This is not a profile.\nJust some words.\n");
    write(&input.join("bad/binary.bin"), &[0u8, 159, 146, 150, 0, 1, 2, 3, 255, 254]);
    // A gzip bomb: a gigabyte of zeros compresses to about a megabyte.
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b'0'; 1 << 20];
    for _ in 0..1024 {
        std::io::Write::write_all(&mut bomb, &zeros).unwrap();
    }
    write(&input.join("bad/bomb.folded.gz"), &bomb.finish().unwrap());
    write(&input.join("bad/overflow.folded"), b"a 18446744073709551615\nb 1\n");
    std::os::unix::fs::symlink(&input, input.join("bad/loop")).unwrap();
    // Built, with a warning: invalid UTF-8 and a malformed line.
    write(&input.join("warn/latin1.folded"), b"main;caf\xe9 3\nmain;ok 2\nthis line is wrong\n");

    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "skipped profiles make the exit status 1: {err}");
    for (bad, why) in [
        ("truncated.folded.gz", "truncated gzip"),
        ("corrupt.folded.gz", "corrupt gzip"),
        ("empty.folded", "empty"),
        ("empty.folded.gz", "empty"),
        ("notes.txt", "unknown profile format"),
        ("binary.bin", "binary"),
        ("bomb.folded.gz", "longer than limits.max_line_bytes"),
        ("overflow.folded", "overflow"),
        ("loop", "symbolic link loop"),
    ] {
        let line = err.lines().find(|l| l.starts_with("error:") && l.contains(bad)).unwrap_or_else(|| panic!("{bad} not reported:\n{err}"));
        assert!(line.contains(why), "{bad}: expected {why:?} in {line:?}");
        assert!(line.contains(&format!("bad/{bad}")), "the message names the path: {line}");
    }
    assert!(err.contains("warning:") && err.contains("latin1.folded") && err.contains("not UTF-8"), "{err}");
    assert!(err.contains("line 3"), "the malformed line is named: {err}");
    assert!(err.contains("built 3 profiles") && err.contains("skipped 9"), "{err}");

    let index: serde_json::Value = common::listing(&out);
    let sources: Vec<&str> = index["profiles"].as_array().unwrap().iter().map(|p| p["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["good/one.folded", "good/two.folded.gz", "warn/latin1.folded"]);
    let o = run(dir.path(), &["fold", out.join("p/warn/latin1").to_str().unwrap()]);
    assert_eq!(stdout(&o), "main;caf\u{fffd} 3\nmain;ok 2\n");

    let o = build(&input, &out, &["--keep-going"]);
    assert_eq!(o.status.code(), Some(0), "--keep-going allows skips: {}", stderr(&o));
}

#[test]
fn a_profile_larger_than_max_profile_bytes_once_decompressed_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    // Short lines (so max_line_bytes is never what stops it): 2.4 MB once decompressed,
    // about 10 kB gzipped, against a limit of 1 MB.
    let big = "main;a 1\n".repeat(270_000);
    write(&input.join("bomb/lines.folded.gz"), &gzip(big.as_bytes()));
    write(&input.join("bomb/lines.folded"), big.as_bytes());
    write(&input.join("bomb/lines.folded.zst"), &zstd(big.as_bytes()));
    let small = "main;a 1\n".repeat(1_000);
    write(&input.join("ok/small.folded.gz"), &gzip(small.as_bytes()));
    write(&dir.path().join("site.toml"), b"input = \"in\"\noutput = \"out\"\n[limits]\nmax_profile_bytes = 1000000\n");
    let o = run(dir.path(), &["build"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for bad in ["bomb/lines.folded.gz", "bomb/lines.folded", "bomb/lines.folded.zst"] {
        let line = err
            .lines()
            .find(|l| l.starts_with("error:") && l.contains(&format!("{bad}: ")))
            .unwrap_or_else(|| panic!("{bad} not reported:\n{err}"));
        assert!(line.contains("max_profile_bytes") && line.contains("1000000"), "{bad}: the limit and its value: {line}");
        assert!(!line.contains("max_line_bytes"), "{line}");
    }
    assert!(err.contains("built 1 profile"), "the small one builds: {err}");
    let o = run(dir.path(), &["fold", dir.path().join("out/p/ok/small").to_str().unwrap()]);
    assert_eq!(stdout(&o), "main;a 1000\n");
}

#[test]
fn every_format_with_sidecars_notes_and_previews_gives_the_same_bytes_with_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let copy = |from: &str, to: &str| write(&dir.path().join("in").join(to), &std::fs::read(data.join(from)).unwrap());
    copy("pprof/cpu.pb.gz", "go/cpu.pb.gz");
    copy("pprof/heap.pb.gz", "go/heap.pb.gz");
    copy("perf/perf.txt", "c/2026-11-20.perf.txt");
    copy("perf-jit/jit.txt", "c/2026-11-21.perf.txt");
    copy("speedscope/py-spy.speedscope.json", "py/2026-11-20.json");
    copy("cpuprofile/node.cpuprofile", "node/2026-11-20.cpuprofile");
    let input = dir.path().join("in");
    for i in 0..6u64 {
        write(&input.join(format!("api/2026-11-{:02}.folded.gz", 10 + i)), &gzip(awkward_profile(20 + i, 400).as_bytes()));
    }
    write(&input.join("api/2026-11-15.toml"), b"title = \"Deploy 4127\"\nunit = \"nanoseconds\"\n[labels]\nhost = \"api-7\"\n");
    write(&input.join("api/2026-11-15.md"), b"# Incident\n\nSee [INC-42](https://tracker.example.com/INC-42).\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
    write(&input.join("go/cpu.toml"), b"series = \"go\"\ndate = 2026-11-21T08:00:00Z\n");
    write(&input.join("go/heap.toml"), b"series = \"go\"\ndate = 2026-11-22T08:00:00Z\n");
    write(&input.join("node/2026-11-20.md"), b"Notes of the node run.\n");
    write(&input.join("diff/2026-11-20.folded"), b"main;a 10 12\nmain;b 5 0\nmain;a;x 0 3\n");
    write(&dir.path().join("site.toml"), b"title = \"all formats\"\ninput = \"in\"\nbase_url = \"https://example.com/perf/\"\n");
    let built = |name: &str, threads: &str| {
        let o = run(dir.path(), &["build", "--output", name, "-j", threads]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        tree(&dir.path().join(name))
    };
    let one = built("one", "1");
    // The site has what this test is about: every format, previews, notes and sidecar titles.
    let index = common::listing(&dir.path().join("one"));
    let formats: std::collections::BTreeSet<&str> =
        index["profiles"].as_array().unwrap().iter().map(|p| p["format"].as_str().unwrap()).collect();
    assert_eq!(formats.into_iter().collect::<Vec<_>>(), ["cpuprofile", "folded", "perf", "pprof", "speedscope"]);
    let previews = one.keys().filter(|k| k.ends_with("/preview.png") && !k.contains("/compare/")).count();
    assert_eq!(previews, index["profiles"].as_array().unwrap().len(), "one preview per run");
    // And one per comparison: the six api runs make four, since the last one's sidecar says
    // its unit is nanoseconds, not the others' samples (like is compared with like).
    let compared = one.keys().filter(|k| k.ends_with("/compare/preview.png")).count();
    assert_eq!(compared, 4, "one preview per comparison");
    let page = String::from_utf8(one["p/api/2026-11-15/index.html"].clone()).unwrap();
    assert!(page.contains("INC-42") && page.contains("Deploy 4127") && page.contains("og:image"), "{page}");
    let two = built("two", "2");
    assert!(one == two, "1 and 2 threads differ: {}", first_difference(&one, &two));
    // And again with 2 threads from the cache.
    assert!(built("two", "2") == one, "a rebuild from the cache differs");
}

#[test]
fn a_failed_build_leaves_the_previous_site() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("a.folded"), awkward_profile(5, 200).as_bytes());
    let out = dir.path().join("out");
    assert!(build(&input, &out, &[]).status.success());
    let before = tree(&out);

    // A build that cannot start (bad config) changes nothing.
    write(&dir.path().join("bad.toml"), b"input = \"in\"\noutput = \"out\"\n[chunks]\nclass_factor = 0\n");
    let o = run(dir.path(), &["--config", "bad.toml", "build"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(tree(&out) == before);
}

/// A synthetic folded profile (the benches' generator) of `stacks` stacks.
fn synth(seed: u64, stacks: usize) -> Vec<u8> {
    let mut params = flamesite_synth::SynthParams::preset(flamesite_synth::Size::Small, seed);
    params.stacks = stacks;
    let mut out = Vec::new();
    flamesite_synth::generate(&params, &mut out).unwrap();
    out
}

/// The first file in which two sites differ, for messages.
fn first_difference(a: &std::collections::BTreeMap<String, Vec<u8>>, b: &std::collections::BTreeMap<String, Vec<u8>>) -> String {
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    names.into_iter().find(|n| a.get(*n) != b.get(*n)).cloned().unwrap_or_default()
}

#[test]
fn a_build_killed_at_any_moment_leaves_the_old_site_or_the_new_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The old site: a few small runs. The new one: one of them changed, one removed, and
    // twelve larger new runs, each graph several chunk files. The kills are placed by the
    // files a build opens, not by the clock, so the runs need not be slow to build: at 16,000
    // stacks each, thirty builds under strace took most of the test command's Rust tests.
    for (seed, name) in [(1, "api/2026-01-01"), (2, "api/2026-01-02"), (3, "db/2026-01-01"), (4, "db/2026-01-02")] {
        write(&root.join(format!("in-old/{name}.folded")), &synth(seed, 1500));
    }
    write(&root.join("in-old/api/2026-01-01.md"), b"Deploy [4127](https://example.com/4127)\n");
    for (seed, name) in [(1, "api/2026-01-01"), (20, "api/2026-01-02"), (3, "db/2026-01-01")] {
        write(&root.join(format!("in-new/{name}.folded")), &synth(seed, 1500));
    }
    write(&root.join("in-new/api/2026-01-01.md"), b"Deploy [4128](https://example.com/4128)\n");
    for i in 0..12u64 {
        write(&root.join(format!("in-new/{}/2026-02-{:02}.folded", ["api", "db", "web"][i as usize % 3], i + 1)), &synth(100 + i, 4_000));
    }
    // Previews too (base_url), and a cache folder named here rather than assumed.
    for which in ["old", "new"] {
        let toml = format!("input = \"in-{which}\"\noutput = \"out\"\ncache_dir = \"cache\"\nbase_url = \"https://example.com/perf/\"\n");
        write(&root.join(format!("{which}.toml")), toml.as_bytes());
    }
    let build = |which: &str| {
        let o = run(root, &["--config", &format!("{which}.toml"), "build"]);
        assert!(o.status.success(), "{which}: {}", stderr(&o));
    };
    let out = root.join("out");
    let cache = root.join("cache");

    // The references: the whole old site and the whole new site, every file's bytes. The new
    // one is built over the old one with an empty cache, as the killed builds will be.
    // `index.json` records every name ever published, so both inputs are built once first:
    // from then on the record holds the names of both.
    build("old");
    build("new");
    build("old");
    let old = tree(&out);
    std::fs::remove_dir_all(&cache).unwrap();
    build("new");
    let new = tree(&out);
    assert!(old != new && old.len() > 20 && new.len() > old.len(), "{} and {} files", old.len(), new.len());
    build("old");
    assert!(tree(&out) == old, "building the old input again gives the old site: {}", first_difference(&tree(&out), &old));

    // Kills are placed by the build's progress, not by the clock: strace kills the build
    // (SIGKILL) at the K-th file it opens in one of its threads (`when` counts each thread's
    // calls apart, so the first thread to open its K-th file is where the build stops), which
    // is the same point of the work however busy the machine is. K is spread over the most
    // files a thread of one such build opens, counted first. One thread for the work (`-j 1`:
    // the site is the same whatever the threads, which the references above check), so that
    // a K falls at much the same point from one build to the next. (Not with strace's
    // `--seccomp-bpf`, under which strace 6.1 let every build here run to its end.)
    let traced = |log: &std::path::Path, extra: &[&str]| {
        std::process::Command::new(strace())
            .args(["-f", "-qq", "-e", "trace=openat", "-o"])
            .arg(log)
            .args(extra)
            .arg(bin())
            .args(["--config", "new.toml", "build", "-j", "1"])
            .current_dir(root)
            .output()
            .expect("strace runs")
    };
    std::fs::remove_dir_all(&cache).unwrap();
    let counted = traced(&root.join("opens.log"), &[]);
    assert!(counted.status.success(), "{}", stderr(&counted));
    assert!(tree(&out) == new, "one thread builds the same site: {}", first_difference(&tree(&out), &new));
    let log = std::fs::read_to_string(root.join("opens.log")).unwrap();
    let mut per_thread: std::collections::BTreeMap<&str, u32> = Default::default();
    for line in log.lines().filter(|l| l.contains("openat(")) {
        *per_thread.entry(line.split(' ').next().unwrap_or("")).or_default() += 1;
    }
    let most = per_thread.values().copied().max().unwrap_or(0);
    assert!(most > 100, "a build opens files as it goes: {per_thread:?}");
    build("old");

    // 24 kills of builds that start with an empty cache, at K spread over the first 24 24ths
    // of the most, then 4 more whose builds start from what the killed builds before them
    // left in the cache.
    let (cold, warm) = (24u32, 4u32);
    let mut missed = Vec::new();
    for i in 0..cold + warm {
        let (slot, slots) = if i < cold { (i, cold) } else { (i - cold, warm) };
        let at = 1 + (u64::from(most) * u64::from(slot) / u64::from(slots)) as u32;
        if i < cold && cache.exists() {
            std::fs::remove_dir_all(&cache).unwrap();
        }
        let o = traced(std::path::Path::new("/dev/null"), &["-e", &format!("inject=openat:signal=KILL:when={at}")]);
        if o.status.success() {
            missed.push((i, at));
        }
        let now = tree(&out);
        if now == new {
            // The swap was done: back to the old site for the next kill.
            build("old");
            assert!(tree(&out) == old, "kill {i}: {}", first_difference(&tree(&out), &old));
        } else {
            assert!(now == old, "kill {i} at the {at}th file opened (of {most}) left neither site whole: {} differs", first_difference(&now, &old));
        }
    }
    eprintln!("kills that found the build already ended (kill, K): {missed:?} (at most {most} files opened by a thread)");
    // Every K of the cold builds is below the most files a thread of the counted build (from
    // the same state, with one worker thread) opened, so each must stop a running build. A
    // warm build finds some of its work in the cache and opens fewer files, how many fewer
    // depending on where the kills before it stopped: its K may fall past its end, but not
    // every one.
    let cold_missed: Vec<_> = missed.iter().filter(|(i, _)| *i < cold).collect();
    assert!(cold_missed.is_empty(), "builds from an empty cache that ran to their end, not killed (kill, K): {cold_missed:?}");
    assert!(missed.len() < (cold + warm) as usize - cold as usize, "no kill of a warm build landed: {missed:?}");
    // Builds after the kills start from whatever they left (cache and staging) and publish
    // whole sites.
    build("new");
    assert!(tree(&out) == new, "{}", first_difference(&tree(&out), &new));
    build("old");
    assert!(tree(&out) == old, "{}", first_difference(&tree(&out), &old));
}

#[test]
fn pages_escape_hostile_file_names_and_link_relatively() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("svc/<img src=x onerror=alert(1)>.folded"), b"<script>alert(1)</script>;x 3\n");
    write(&input.join("top.folded"), b"a 1\n");
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = String::from_utf8(std::fs::read(out.join("index.html")).unwrap()).unwrap();
    assert!(!index.contains("<img src=x"), "{index}");
    assert!(!index.contains("<script>alert"), "{index}");
    assert!(index.contains("href=\"p/top/\""), "links are relative to the page: {index}");
    let listing: serde_json::Value = common::listing(&out);
    for p in listing["profiles"].as_array().unwrap() {
        let url = p["url"].as_str().unwrap();
        let page = String::from_utf8(std::fs::read(out.join(url).join("index.html")).unwrap()).unwrap();
        assert!(!page.contains("<script>alert"), "{page}");
        let depth = url.trim_end_matches('/').matches('/').count() + 1;
        let css = format!("href=\"{}static/flamesite.css\"", "../".repeat(depth));
        assert!(page.contains(&css), "{url} links the stylesheet as {css}");
        assert!(!page.contains("\"/static"), "no absolute links");
    }
    assert!(out.join("static/flamesite.css").is_file());
}

#[test]
fn check_reads_everything_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("a.folded.gz"), &gzip(b"main;f 3\nmain;g 4\n"));
    write(&input.join("b.folded"), b"garbage\n");
    let out = dir.path().join("out");
    let o = run(dir.path(), &["check", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("a.folded.gz: folded, samples 7 samples, 4 frames"), "{}", stdout(&o));
    assert!(stderr(&o).contains("b.folded"), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn init_writes_a_site_that_builds_and_config_errors_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let o = run(dir.path(), &["init", "site"]);
    assert!(o.status.success(), "{}", stderr(&o));
    write(&site.join("profiles/x.folded"), b"main 1\n");
    let o = run(&site, &["build"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(site.join("public/p/x/g/samples/manifest.json").is_file());
    let again = run(dir.path(), &["init", "site"]);
    assert!(!again.status.success(), "init does not overwrite");

    std::fs::write(site.join("site.toml"), "title = \"t\"\ninptu = \"x\"\n").unwrap();
    let o = run(&site, &["build"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("inptu") && err.contains("line 2") && err.contains("site.toml"), "{err}");

    let o = run(dir.path(), &["build"]);
    assert!(stderr(&o).contains("no site.toml"), "{}", stderr(&o));
}

#[test]
fn templates_and_static_files_in_theme_beside_site_toml_override_the_theme_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("site.toml"), b"title = \"Ours\"\n");
    write(&dir.path().join("profiles/a.folded"), b"main 1\n");
    write(
        &dir.path().join("theme/templates/index.html"),
        b"<!doctype html><title>{{ site_title }}</title><p>custom {{ series | length }} {{ runs }}</p>",
    );
    write(&dir.path().join("theme/static/extra.css"), b"p { color: red }");
    let o = run(dir.path(), &["build"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("public");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("<p>custom 1 1</p>"), "{index}");
    assert_eq!(std::fs::read(out.join("static/extra.css")).unwrap(), b"p { color: red }");
    // The templates not overridden still come from the built-in theme.
    let page = std::fs::read_to_string(out.join("p/a/index.html")).unwrap();
    assert!(page.contains("fs-canvas"), "{page}");
    assert!(out.join("static/main.js").is_file());
}
