//! The build as a user runs it: fixture folders built by the real binary into temporary
//! folders, and the output checked file by file.

mod common;

use common::*;

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

    let index: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let sources: Vec<&str> = index["profiles"].as_array().unwrap().iter().map(|p| p["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["good/one.folded", "good/two.folded.gz", "warn/latin1.folded"]);
    let o = run(dir.path(), &["fold", out.join("p/warn/latin1").to_str().unwrap()]);
    assert_eq!(stdout(&o), "main;caf\u{fffd} 3\nmain;ok 2\n");

    let o = build(&input, &out, &["--keep-going"]);
    assert_eq!(o.status.code(), Some(0), "--keep-going allows skips: {}", stderr(&o));
}

#[test]
fn a_failed_build_leaves_the_previous_site_and_a_killed_one_leaves_a_whole_site() {
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

    // A build killed at some moment leaves either the old site or the new one, whole.
    for i in 0..20 {
        write(&input.join(format!("big{i}.folded")), awkward_profile(100 + i, 20_000).as_bytes());
    }
    for delay_ms in [30u64, 150, 400] {
        let mut child = std::process::Command::new(bin())
            .args(["build", "--input", input.to_str().unwrap(), "--output", out.to_str().unwrap()])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let now = tree(&out);
        if now != before {
            let index: serde_json::Value = serde_json::from_slice(&now["index.json"]).unwrap();
            for p in index["profiles"].as_array().unwrap() {
                let data = p["graphs"][0]["data"].as_str().unwrap();
                assert!(now.contains_key(&format!("{data}manifest.json")), "a half-written site was published");
            }
        }
    }
    // The next build starts from what killed builds left behind, and publishes a whole site.
    assert!(build(&input, &out, &[]).status.success());
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(
        names.iter().all(|n| !n.contains("flamesite-") || n == ".out.flamesite-next" || n == ".out.flamesite-lock"),
        "{names:?}"
    );
    let o = run(dir.path(), &["fold", out.join("p/big3").to_str().unwrap()]);
    assert_eq!(stdout(&o), merged_sorted(&awkward_profile(103, 20_000)));
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
    let listing: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
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
fn templates_and_static_files_beside_site_toml_override_the_theme_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("site.toml"), b"title = \"Ours\"\n");
    write(&dir.path().join("profiles/a.folded"), b"main 1\n");
    write(
        &dir.path().join("templates/index.html"),
        b"<!doctype html><title>{{ site_title }}</title><p>custom {{ series | length }} {{ runs }}</p>",
    );
    write(&dir.path().join("static/extra.css"), b"p { color: red }");
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
