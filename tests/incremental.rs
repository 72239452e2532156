//! Rebuilds as a user makes them, day after day, and the names of what is published: every
//! incremental rebuild must give the site a build from scratch gives, whatever changed, and
//! no URL may ever move to another profile or be shared by two.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
use serde_json::Value;

/// A small folded profile whose total is `total`.
fn folded(total: u64) -> String {
    format!("main;serve;parse {}\nmain;serve;render {}\nmain;idle 1\n", total / 2, total - total / 2 - 1)
}

fn index(out: &Path) -> Value {
    common::listing(out)
}

/// The URL of each source in `index.json`.
fn urls(out: &Path) -> BTreeMap<String, String> {
    index(out)["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["source"].as_str().unwrap().to_string(), p["url"].as_str().unwrap().to_string()))
        .collect()
}

/// Builds `input` into `out` (with the cache), expecting success; returns stderr.
fn ok(input: &Path, out: &Path, extra: &[&str]) -> String {
    let o = build(input, out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    stderr(&o)
}

/// Asserts that `out` (built incrementally) is what a build from scratch of `input` gives.
fn assert_same_as_fresh(input: &Path, out: &Path, round: &str) {
    let fresh = input.parent().unwrap().join(format!("fresh-{round}"));
    ok(input, &fresh, &["--no-cache"]);
    let (a, b) = (tree(out), tree(&fresh));
    let paths = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(paths(&a), paths(&b), "{round}: the incremental build has other files than a fresh one");
    for (path, bytes) in &a {
        if path == "index.json" {
            // The naming record remembers removed profiles; a fresh build cannot.
            let (x, y): (Value, Value) = (serde_json::from_slice(bytes).unwrap(), serde_json::from_slice(&b[path]).unwrap());
            assert_eq!(x["profiles"], y["profiles"], "{round}: index.json profiles");
            assert_eq!(x["series"], y["series"], "{round}: index.json series");
        } else {
            assert!(*bytes == b[path], "{round}: {path} differs from a fresh build's");
        }
    }
    std::fs::remove_dir_all(&fresh).unwrap();
}

#[test]
fn every_incremental_rebuild_equals_a_fresh_build() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    let out = dir.path().join("public");
    for day in 10..=14 {
        write(&input.join(format!("api/2026-11-{day}.folded")), folded(100 + day).as_bytes());
    }
    write(&input.join("db/2026-11-12.folded"), folded(40).as_bytes());
    ok(&input, &out, &[]);
    assert_same_as_fresh(&input, &out, "first");

    // Each round changes the input as a user would; both output trees take turns being
    // brought up to date, so several rounds check the record of each.
    type Change = fn(&Path);
    let rounds: Vec<(&str, Change)> = vec![
        ("newest run added", |i| write(&i.join("api/2026-11-15.folded"), folded(300).as_bytes())),
        ("run added in the middle", |i| write(&i.join("api/2026-11-12T12.folded"), folded(7).as_bytes())),
        ("profile changed in place", |i| write(&i.join("api/2026-11-13.folded"), folded(999).as_bytes())),
        ("sidecar added", |i| write(&i.join("api/2026-11-14.toml"), b"title = \"Deploy 9\"\n")),
        ("notes added", |i| write(&i.join("db/2026-11-12.md"), b"# Why\n\nslow disk\n")),
        ("run removed", |i| std::fs::remove_file(i.join("api/2026-11-10.folded")).unwrap()),
        ("run moved to another series", |i| write(&i.join("api/2026-11-11.toml"), b"series = \"db\"\n")),
        ("new series", |i| write(&i.join("web/2026-11-01.folded"), folded(50).as_bytes())),
        ("series emptied", |i| std::fs::remove_dir_all(i.join("web")).unwrap()),
        ("sidecar removed", |i| std::fs::remove_file(i.join("api/2026-11-14.toml")).unwrap()),
    ];
    for (name, change) in rounds {
        change(&input);
        let log = ok(&input, &out, &[]);
        assert!(!log.contains("nothing changed"), "{name}: {log}");
        assert_same_as_fresh(&input, &out, name);
    }
    let log = ok(&input, &out, &[]);
    assert!(log.contains("nothing changed"), "{log}");
    assert!(log.contains("0 decoded, 0 from the cache, 7 unchanged"), "{log}");
    // A profile written again with the same bytes is read again, and nothing else is done.
    let touched = input.join("api/2026-11-12.folded");
    let bytes = std::fs::read(&touched).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&touched, &bytes);
    let log = ok(&input, &out, &[]);
    assert!(log.contains("1 from the cache, 6 unchanged") && log.contains("nothing changed"), "{log}");
    // A broken profile is reported by every build, and is no change once reported.
    write(&input.join("api/2026-11-30.folded.gz"), b"not gzip at all");
    let log = stderr(&build(&input, &out, &[]));
    assert!(log.contains("2026-11-30.folded.gz") && !log.contains("nothing changed"), "{log}");
    let log = stderr(&build(&input, &out, &[]));
    assert!(log.contains("2026-11-30.folded.gz") && log.contains("skipped 1") && log.contains("nothing changed"), "{log}");
}

#[test]
fn adding_one_run_renders_only_the_pages_that_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    let out = dir.path().join("public");
    for day in 1..=28 {
        write(&input.join(format!("api/2026-11-{day:02}.folded")), folded(100 + day).as_bytes());
        write(&input.join(format!("db/2026-11-{day:02}.folded")), folded(200 + day).as_bytes());
    }
    ok(&input, &out, &[]);
    ok(&input, &out, &[]);
    let before = tree(&out);
    write(&input.join("api/2026-11-29.folded"), folded(5).as_bytes());
    let log = ok(&input, &out, &[]);
    assert!(log.contains("1 decoded, 0 from the cache, 56 unchanged"), "{log}");
    let after = tree(&out);
    let changed: Vec<&String> = after.keys().filter(|p| before.get(*p) != after.get(*p)).collect();
    // The new run's page, its comparison and graph, its predecessor's page (now with a
    // "next" link), the series page, feed and listing, the home page, the site feed and
    // index.json; not the other series' listing (below).
    for p in ["p/api/2026-11-29/index.html", "p/api/2026-11-29/compare/index.html", "p/api/2026-11-28/index.html", "s/api/index.html", "s/api/feed.xml", "s/api/index.json", "index.html", "feed.xml", "index.json"] {
        assert!(changed.iter().any(|c| c.as_str() == p), "{p} should change: {changed:?}");
    }
    let pages: Vec<&&String> = changed.iter().filter(|p| p.ends_with(".html")).collect();
    assert_eq!(pages.len(), 5, "only the pages that show the new run: {pages:?}");
    assert!(!changed.iter().any(|p| p.starts_with("p/db/") || p.starts_with("s/db/")), "{changed:?}");
    // And the series' history: its index and its one span's ceil(29 / 8) = 4 buckets of
    // points (the span's names are the same: the new run calls no new function).
    for p in ["s/api/history/names.json", "s/api/history/0/b/0.json.gz", "s/api/history/0/b/3.json.gz"] {
        assert!(changed.iter().any(|c| c.as_str() == p), "{p} should change: {changed:?}");
    }
    // 15 files as above and the series' changes.json (its runs changed: it is rendered again,
    // with the same bytes when no change point moved).
    assert!(log.contains("16 pages rendered, 0 kept"), "{log}");
    // A folded profile's one graph is named by its unit, once ("samples", not "samples (samples)"),
    // with its total.
    let page = String::from_utf8(after["p/api/2026-11-29/index.html"].clone()).unwrap();
    assert!(page.contains(">samples · 5 samples</option>"), "{page}");
}

#[test]
fn names_never_collide_whatever_the_files_are_called() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    // Three files whose natural names are one.
    write(&input.join("x/a.folded"), b"a;one 1\n");
    write(&input.join("x/a.folded.gz"), &gzip(b"a;two 2\n"));
    write(&input.join("x/a.txt"), b"a;three 3\n");
    // A run named like another run's comparison page.
    write(&input.join("api.folded"), b"api;old 1\n");
    write(&input.join("api-2.folded"), b"api;new 2\n");
    write(&input.join("api/compare.folded"), b"nested;compare 5\n");
    write(&input.join("api/compare.toml"), b"series = \"api\"\ndate = 2026-11-02\n");
    write(&input.join("api.toml"), b"series = \"api\"\ndate = 2026-11-01\n");
    write(&input.join("api-2.toml"), b"series = \"api\"\ndate = 2026-11-03\n");
    // Two series whose names make the same folder, one of them the other's hashed form.
    write(&input.join("s1.folded"), b"s;one 1\n");
    write(&input.join("s1.toml"), b"series = \"a b\"\ndate = 2026-11-01\n");
    let hashed = format!("a_b-{:08x}", fnv1a32(b"a b"));
    write(&input.join("s2.folded"), b"s;two 2\n");
    write(&input.join("s2.toml"), format!("series = \"{hashed}\"\ndate = 2026-11-01\n").as_bytes());
    // One speedscope file with two profiles whose names make the same folder.
    let speedscope = r#"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"f"},{"name":"g"}]},
        "profiles":[{"type":"sampled","name":"a b","unit":"none","startValue":0,"endValue":3,"samples":[[0]],"weights":[3]},
                    {"type":"sampled","name":"a_b","unit":"none","startValue":0,"endValue":5,"samples":[[1]],"weights":[5]}]}"#;
    write(&input.join("py/prog.speedscope.json"), speedscope.as_bytes());

    let one = dir.path().join("one");
    let log = ok(&input, &one, &["-j", "1"]);
    let two = dir.path().join("two");
    ok(&input, &two, &["-j", "2"]);
    assert_eq!(tree(&one), tree(&two), "the same names and bytes whatever the thread count");

    let u = urls(&one);
    let distinct: std::collections::BTreeSet<String> = u.values().map(|s| s.to_lowercase()).collect();
    assert_eq!(distinct.len(), u.len(), "every run has a URL of its own: {u:?}");
    assert!(log.contains("x/a.folded.gz") && log.contains("x/a.folded") && log.contains("already"), "a collision names both files: {log}");
    // Each run's page shows its own profile.
    for (source, url) in &u {
        let graph = index(&one)["profiles"].as_array().unwrap().iter().find(|p| p["source"] == source.as_str()).unwrap()["graphs"][0]["data"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(graph.starts_with(url.as_str()), "{source}: {graph} is inside {url}");
        let folded = stdout(&run(dir.path(), &["fold", one.join(&graph).to_str().unwrap()]));
        let expected = match source.as_str() {
            "x/a.folded" => "a;one 1\n",
            "x/a.folded.gz" => "a;two 2\n",
            "x/a.txt" => "a;three 3\n",
            "api.folded" => "api;old 1\n",
            "api/compare.folded" => "nested;compare 5\n",
            _ => continue,
        };
        assert_eq!(folded, expected, "{source} at {url}");
    }
    // The run api/compare is not published where run api's comparison page would be, and the
    // comparison of api-2 with it (its previous run by date) links to it.
    assert_ne!(u["api/compare.folded"], "p/api/compare/");
    let compare = std::fs::read_to_string(one.join(&u["api-2.folded"]).join("compare/index.html")).unwrap();
    assert!(compare.contains(&format!("{}\"", u["api/compare.folded"])), "{compare}");
    // The speedscope graphs have folders of their own.
    let py = index(&one)["profiles"].as_array().unwrap().iter().find(|p| p["source"] == "py/prog.speedscope.json").unwrap().clone();
    let data: Vec<&str> = py["graphs"].as_array().unwrap().iter().map(|g| g["data"].as_str().unwrap()).collect();
    assert_eq!(data.len(), 2);
    assert_ne!(data[0], data[1]);
    let totals: Vec<String> = data.iter().map(|d| stdout(&run(dir.path(), &["fold", one.join(d).to_str().unwrap()]))).collect();
    assert_eq!(totals.iter().filter(|t| t.as_str() == "f 3\n" || t.as_str() == "g 5\n").count(), 2, "{totals:?}");
    // The two series have folders of their own.
    let series: Vec<String> = index(&one)["series"].as_array().unwrap().iter().map(|s| s["url"].as_str().unwrap().to_string()).collect();
    let distinct: std::collections::BTreeSet<&String> = series.iter().collect();
    assert_eq!(distinct.len(), series.len(), "{series:?}");
}

/// FNV-1a, 32 bits, as docs/FORMAT.md states it.
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x01000193))
}

#[test]
fn a_published_url_never_moves_to_another_profile() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    write(&input.join("svc/run.folded.gz"), &gzip(b"first;profile 1\n"));
    write(&input.join("other/2026-11-01.folded"), b"other 1\n");
    ok(&input, &out, &[]);
    assert_eq!(urls(&out)["svc/run.folded.gz"], "p/svc/run/");
    let before = tree(&out);

    // A new file whose natural name is taken, and that sorts first.
    write(&input.join("svc/run.collapsed"), b"second;profile 2\n");
    let log = ok(&input, &out, &[]);
    let u = urls(&out);
    assert_eq!(u["svc/run.folded.gz"], "p/svc/run/", "the published URL stays");
    assert_ne!(u["svc/run.collapsed"], "p/svc/run/");
    assert!(log.contains("svc/run.collapsed") && log.contains("svc/run.folded.gz"), "the warning names both: {log}");
    let after = tree(&out);
    for (path, bytes) in &before {
        if path.starts_with("p/other/") || path.starts_with("s/other/") || path.starts_with("p/svc/run/g/") {
            assert!(after.get(path) == Some(bytes), "{path} changed");
        }
    }

    // In a fresh checkout (no cache, no state), the published index.json is the record.
    std::fs::remove_dir_all(dir.path().join(".out.cache")).unwrap();
    ok(&input, &out, &[]);
    assert_eq!(urls(&out), u, "the same URLs from the published index.json");

    // A removed profile's URL is not given to another.
    std::fs::remove_file(input.join("svc/run.folded.gz")).unwrap();
    ok(&input, &out, &[]);
    assert_ne!(urls(&out)["svc/run.collapsed"], "p/svc/run/");
    assert!(!out.join("p/svc/run/index.html").exists());

    // In a fresh checkout, the removed profile's name is still reserved: index.json records
    // the names of sources that are gone (the series' listings, those of the runs built).
    let index: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["names"]["runs"], serde_json::json!({ "svc/run.folded.gz": "svc/run" }));
    std::fs::remove_dir_all(dir.path().join(".out.cache")).unwrap();
    write(&input.join("svc/run.stacks"), b"third;profile 3\n");
    let log = ok(&input, &out, &[]);
    let u = urls(&out);
    assert_ne!(u["svc/run.stacks"], "p/svc/run/", "{log}");
    assert_ne!(u["svc/run.stacks"], u["svc/run.collapsed"]);

    // A site published by an older flamesite (index.json version 2: every profile in it, no
    // series listings) is read as the record too.
    let v3 = common::listing(&out);
    let mut v2 = v3.clone();
    v2["version"] = 2.into();
    for s in v2["series"].as_array_mut().unwrap() {
        let listing = out.join(s["index"].as_str().unwrap());
        std::fs::remove_file(listing).unwrap();
        s.as_object_mut().unwrap().remove("index");
    }
    std::fs::write(out.join("index.json"), v2.to_string()).unwrap();
    std::fs::remove_dir_all(dir.path().join(".out.cache")).unwrap();
    write(&input.join("svc/run.txt"), b"fourth;profile 4\n");
    ok(&input, &out, &[]);
    let after = urls(&out);
    for (source, url) in &u {
        assert_eq!(&after[source], url, "{source} keeps its URL from a version 2 index.json");
    }
    assert!(!u.values().any(|url| *url == after["svc/run.txt"]));
}

#[test]
fn a_build_killed_while_updating_the_staging_tree_is_followed_by_a_whole_one() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    let out = dir.path().join("public");
    for day in 1..=4 {
        write(&input.join(format!("api/2026-11-0{day}.folded")), folded(10 * day).as_bytes());
    }
    ok(&input, &out, &[]);
    write(&input.join("api/2026-11-05.folded"), folded(5).as_bytes());
    ok(&input, &out, &[]);
    // What a build killed half-way through updating the staging tree leaves: its marker, and
    // files in the staging tree that no record describes.
    let staging = dir.path().join(".public.flamesite-next");
    assert!(staging.join("index.html").is_file(), "the previous site is kept beside the output");
    write(&dir.path().join(".public.cache/state.dirty"), b"");
    write(&staging.join("p/api/2026-11-02/index.html"), b"half-written");
    write(&staging.join("p/api/stray/index.html"), b"stray");
    write(&input.join("api/2026-11-06.folded"), folded(6).as_bytes());
    ok(&input, &out, &[]);
    assert!(!out.join("p/api/stray").exists(), "the staging tree was swept whole");
    assert_same_as_fresh(&input, &out, "after a killed build");
    assert!(!dir.path().join(".public.cache/state.dirty").exists());
}

#[test]
fn the_order_files_are_made_in_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = Vec::new();
    for s in ["api", "db", "web"] {
        for day in 1..=6 {
            names.push(format!("{s}/2026-11-{day:02}.folded"));
        }
    }
    names.extend(["x/a.folded".to_string(), "x/a.folded.gz".to_string(), "x/A.txt".to_string()]);
    // The same files made in two orders (directory listings follow creation order on some
    // file systems), built with different thread counts.
    let make = |input: &Path, order: &[String]| {
        for name in order {
            let total = 10 + names.iter().position(|n| n == name).unwrap() as u64;
            let body = folded(total);
            let bytes = if name.ends_with(".gz") { gzip(body.as_bytes()) } else { body.into_bytes() };
            write(&input.join(name), &bytes);
        }
        // The files of x have no date but their file time, which is the time they were made:
        // the same in both trees (this test is about the order of making, not the clock; two
        // trees made across a second's turn differed in their dates and feeds).
        for (k, name) in names.iter().enumerate().filter(|(_, n)| n.starts_with("x/")) {
            let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_790_000_000 + k as u64);
            std::fs::File::options().write(true).open(input.join(name)).unwrap().set_modified(when).unwrap();
        }
    };
    let (a, b) = (dir.path().join("a/in"), dir.path().join("b/in"));
    make(&a, &names);
    let mut reversed = names.clone();
    reversed.reverse();
    make(&b, &reversed);
    ok(&a, &dir.path().join("a/out"), &["-j", "1"]);
    ok(&b, &dir.path().join("b/out"), &["-j", "2"]);
    assert_eq!(tree(&dir.path().join("a/out")), tree(&dir.path().join("b/out")));
}

#[test]
fn a_cache_folder_that_holds_other_files_is_refused_and_nothing_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path();
    write(&site.join("profiles/api/2026-11-01.folded"), folded(10).as_bytes());
    for cache_dir in [".", "profiles"] {
        write(&site.join("site.toml"), format!("cache_dir = \"{cache_dir}\"\n").as_bytes());
        let o = run(site, &["build"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("not a flamesite cache entry") && stderr(&o).contains("cache_dir"), "{}", stderr(&o));
        assert!(site.join("profiles/api/2026-11-01.folded").is_file(), "the profiles are still there");
        assert!(site.join("site.toml").is_file());
    }
    // A folder of its own works, and keeps only entries and the state.
    write(&site.join("site.toml"), b"cache_dir = \"cache\"\n");
    let o = run(site, &["build"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = std::fs::read_dir(site.join("cache")).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| n.len() == 64 || n.starts_with("state")), "{names:?}");
}

#[test]
fn an_output_folder_inside_the_input_folder_is_not_read_as_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("api/2026-11-01.folded"), folded(10).as_bytes());
    let out = input.join("public");
    for round in 0..3 {
        let log = ok(&input, &out, &[]);
        assert!(!log.contains("public/"), "round {round}: {log}");
        assert!(log.contains("built 1 profile"), "round {round}: {log}");
    }
    assert_eq!(urls(&out).len(), 1);
}

/// What the summary line says a site costs: `wrote OUT: SIZE (NEW new), KEPT kept beside it`.
fn costs(log: &str) -> (String, String, String) {
    let line = log.lines().last().unwrap_or("");
    let after = line.split_once("; wrote ").map(|(_, a)| a).unwrap_or_else(|| panic!("no sizes in {line:?}"));
    let (_, sizes) = after.split_once(": ").unwrap();
    let (size, rest) = sizes.split_once(" (").unwrap();
    let (new, rest) = rest.split_once(" new), ").unwrap();
    let kept = rest.split_once(" kept beside it").unwrap().0;
    (size.to_string(), new.to_string(), kept.to_string())
}

/// Sizes as a person reads them, written here apart from the code under test.
fn human(n: u64) -> String {
    if n < 1000 {
        format!("{n} B")
    } else if n < 1_000_000 {
        format!("{:.0} kB", n as f64 / 1e3)
    } else {
        format!("{:.1} MB", n as f64 / 1e6)
    }
}

fn files_bytes(dir: &Path) -> u64 {
    tree(dir).values().map(|b| b.len() as u64).sum()
}

#[test]
fn the_summary_says_what_the_site_costs_and_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    let out = dir.path().join("public");
    let cache = dir.path().join(".public.cache");
    for day in 1..=6 {
        write(&input.join(format!("api/2026-11-{day:02}.folded")), common::awkward_profile(day, 400).as_bytes());
    }
    // A first build: everything is new.
    let log = ok(&input, &out, &[]);
    let total = files_bytes(&out);
    assert_eq!(costs(&log), (human(total), human(total), human(files_bytes(&cache))), "{log}");
    // A run added (and the pages that show it): the total is the new site's, the new bytes are
    // those of the files that differ from the site before, on two trees swapped in turn.
    for day in 7..=8 {
        let before = tree(&out);
        write(&input.join(format!("api/2026-11-{day:02}.folded")), common::awkward_profile(day, 400).as_bytes());
        let log = ok(&input, &out, &[]);
        let after = tree(&out);
        let new: u64 = after.iter().filter(|(p, b)| before.get(*p) != Some(b)).map(|(_, b)| b.len() as u64).sum();
        assert!(new > 0 && new < files_bytes(&out) / 2, "{new}");
        assert_eq!(costs(&log), (human(files_bytes(&out)), human(new), human(files_bytes(&cache))), "day {day}: {log}");
    }
    // A run removed: smaller, and only the pages that showed it are new.
    std::fs::remove_file(input.join("api/2026-11-03.folded")).unwrap();
    let before = tree(&out);
    let log = ok(&input, &out, &[]);
    let after = tree(&out);
    let new: u64 = after.iter().filter(|(p, b)| before.get(*p) != Some(b)).map(|(_, b)| b.len() as u64).sum();
    assert!(files_bytes(&out) < total + total / 4, "{log}");
    assert_eq!(costs(&log), (human(files_bytes(&out)), human(new), human(files_bytes(&cache))), "{log}");
}
