//! The archive as a user browses it: fixture archives (several series, runs dated by each
//! metadata source, notes with hostile Markdown) built by the real binary, then the pages,
//! links, pagination, feeds (parsed as XML), `index.json` and the incremental cache checked.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::Value;

/// A small folded profile whose total is `total`.
fn folded(total: u64) -> String {
    format!("main;serve;parse {}\nmain;serve;render {}\nmain;idle 1\n", total / 2, total - total / 2 - 1)
}

fn index(out: &Path) -> Value {
    common::listing(out)
}

fn profile<'a>(index: &'a Value, source: &str) -> &'a Value {
    index["profiles"].as_array().unwrap().iter().find(|p| p["source"] == source).unwrap_or_else(|| panic!("{source} in index.json"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const ATOM: &str = "http://www.w3.org/2005/Atom";

/// The Atom child `name` of `n`.
fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> roxmltree::Node<'a, 'i> {
    n.children().find(|c| c.has_tag_name((ATOM, name))).unwrap_or_else(|| panic!("<{name}> in <{}>", n.tag_name().name()))
}

/// An archive with three series dated by sidecar, pprof-like metadata is not available for
/// folded stacks, so: sidecar, file name, path pattern and file time.
fn fixture(root: &Path) -> PathBuf {
    let input = root.join("profiles");
    for (i, day) in (10..=14).enumerate() {
        write(&input.join(format!("api/2026-11-{day}.folded")), folded(100 + 10 * i as u64).as_bytes());
    }
    // A sidecar overrides the file name's date and names the run.
    write(&input.join("api/hotfix.folded.gz"), &gzip(folded(500).as_bytes()));
    write(
        &input.join("api/hotfix.toml"),
        b"date = 2026-11-14T18:30:00Z\ntitle = \"Hotfix <b>4127</b>\"\nunit = \"nanoseconds\"\n[labels]\nhost = \"api-7\"\ncommit = \"abc123\"\n",
    );
    write(
        &input.join("api/hotfix.md"),
        b"# Incident\n\nSee [INC-42](https://tracker.example.com/INC-42) and [x](javascript:alert(1)).\n\n<script>alert('notes')</script>\n<img src=x onerror=alert(2)>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode <here>\n```\n",
    );
    // The run before it is in the same unit, so the two are compared (like with like).
    write(&input.join("api/2026-11-14.toml"), b"unit = \"nanoseconds\"\n");
    // Series and date from a sidecar only.
    write(&input.join("misc/thing.folded"), folded(40).as_bytes());
    write(&input.join("misc/thing.toml"), b"series = \"db <primary>\"\ndate = 2026-11-12\n");
    write(&input.join("worker/run-20261111T0600.folded"), folded(70).as_bytes());
    write(&input.join("worker/run-20261113T0600.folded"), folded(90).as_bytes());
    input
}

#[test]
fn series_runs_pages_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(dir.path());
    let out = dir.path().join("public");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));

    let idx = index(&out);
    assert_eq!(idx["version"], 3);
    let series: Vec<(&str, u64)> =
        idx["series"].as_array().unwrap().iter().map(|s| (s["name"].as_str().unwrap(), s["runs"].as_u64().unwrap())).collect();
    assert_eq!(series, [("api", 6), ("db <primary>", 1), ("worker", 2)]);

    let hot = profile(&idx, "api/hotfix.folded.gz");
    assert_eq!(hot["date"], "2026-11-14T18:30:00Z");
    assert_eq!(hot["date_from"], "sidecar");
    assert_eq!(hot["title"], "Hotfix <b>4127</b>");
    assert_eq!(hot["labels"]["host"], "api-7");
    assert_eq!(hot["graphs"][0]["unit"], "nanoseconds");
    let by_name = profile(&idx, "api/2026-11-12.folded");
    assert_eq!((by_name["date"].as_str(), by_name["date_from"].as_str()), (Some("2026-11-12T00:00:00Z"), Some("file name")));
    let w = profile(&idx, "worker/run-20261111T0600.folded");
    assert_eq!(w["date"], "2026-11-11T06:00:00Z");
    let db = profile(&idx, "misc/thing.folded");
    assert_eq!(db["series"], "db <primary>");
    let db_url = db["series_url"].as_str().unwrap();
    assert!(db_url.starts_with("s/db__primary_-") && !db_url.contains('<'), "{db_url}");

    // The series page: newest first, the hotfix (14th, 18:30) above the 14th's midnight run.
    let api = read(&out.join("s/api/index.html"));
    let order: Vec<usize> = ["hotfix", "2026-11-14", "2026-11-10"]
        .iter()
        .filter_map(|run| api.find(&format!("class=\"fs-run\" href=\"../../p/api/{run}/\"")))
        .collect();
    assert!(api.contains("<span class=\"fs-run-title\">Hotfix &lt;b&gt;4127&lt;/b&gt;</span>"), "{api}");
    assert_eq!(order.len(), 3, "hotfix, 14th and 10th on the series page");
    assert!(order.windows(2).all(|w| w[0] < w[1]), "newest first: {order:?}");
    assert!(api.contains("<svg class=\"fs-trend\""));
    assert_eq!(
        api.matches("<a href=\"../../p/api/").count(),
        2,
        "the trend plots only runs in the newest run's unit (the sidecars of the hotfix and the 14th say nanoseconds)"
    );

    // A run page: previous and next run, compare, notes sanitised, metadata.
    let page = read(&out.join("p/api/hotfix/index.html"));
    assert!(page.contains("rel=\"prev\" href=\"../../../p/api/2026-11-14/\""), "{page}");
    assert!(!page.contains("rel=\"next\""), "the newest run has no next run");
    assert!(page.contains("class=\"fs-compare\" href=\"../../../p/api/hotfix/compare/\""));
    assert!(page.contains("href=\"https://tracker.example.com/INC-42\""), "incident link kept");
    assert!(page.contains("<table>") && page.contains("<pre><code>code &lt;here&gt;"), "tables and code kept");
    let notes = &page[page.find("fs-notes").unwrap()..];
    let notes = &notes[..notes.find("</details>").unwrap()];
    assert!(!notes.contains("<script") && !notes.contains("javascript:") && !notes.contains("onerror"), "{notes}");
    assert!(page.contains("Hotfix &lt;b&gt;4127&lt;/b&gt;") && !page.contains("<b>4127"), "titles are escaped");
    assert!(page.contains("api-7") && page.contains("abc123"));
    let first = read(&out.join("p/api/2026-11-10/index.html"));
    assert!(first.contains("rel=\"next\" href=\"../../../p/api/2026-11-11/\"") && !first.contains("rel=\"prev\""));
    assert!(!out.join("p/api/2026-11-10/compare").exists(), "the first run has nothing to compare with");
    let cmp = read(&out.join("p/api/2026-11-11/compare/index.html"));
    assert!(cmp.contains("+10 samples") && cmp.contains("+10.0%"), "{cmp}");

    // Home: every series, its newest run, run count and sparkline.
    let home = read(&out.join("index.html"));
    assert!(home.contains("<a class=\"fs-series-link\" href=\"s/api/\">api</a>"));
    assert!(home.contains("href=\"p/api/hotfix/\""));
    assert!(home.contains("<td class=\"fs-count fs-num\">6</td>"));
    assert_eq!(home.matches("<svg class=\"fs-spark\"").count(), 3);
    assert!(home.contains("db &lt;primary&gt;") && !home.contains("db <primary>"));

    // Every page is reachable from home and no link is broken.
    let pages = crawl(&out);
    for p in ["s/api/index.html", "p/api/2026-11-10/index.html", "p/misc/thing/index.html", "p/api/hotfix/compare/index.html"] {
        assert!(pages.contains(Path::new(p)), "{p} reachable from home: {pages:?}");
    }
}

#[test]
fn dates_from_a_path_pattern_and_file_times_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("hosts/api/20261120-0100/cpu.folded"), folded(10).as_bytes());
    write(&input.join("hosts/api/20261121-0100/cpu.folded"), folded(20).as_bytes());
    write(&input.join("hosts/api/not-a-date/cpu.folded"), folded(30).as_bytes());
    write(&input.join("loose/undated.folded"), folded(30).as_bytes());
    write(&input.join("bad/x.folded"), folded(30).as_bytes());
    write(&input.join("bad/x.toml"), b"date = 2026-02-30\n");
    let toml = dir.path().join("site.toml");
    write(&toml, b"input = \"in\"\noutput = \"out\"\n[archive]\npattern = \"hosts/{series}/{date}/{name}\"\n");
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "a bad sidecar skips its profile: {err}");
    assert!(err.contains("bad/x.toml") && err.contains("2026-02-30"), "{err}");
    assert!(err.contains("loose/undated.folded") && err.contains("file time"), "{err}");
    assert!(err.contains("not-a-date") && err.contains("archive.pattern"), "{err}");
    let idx = index(&dir.path().join("out"));
    let p = profile(&idx, "hosts/api/20261121-0100/cpu.folded");
    assert_eq!((p["series"].as_str(), p["date"].as_str(), p["date_from"].as_str()), (Some("api"), Some("2026-11-21T01:00:00Z"), Some("pattern")));
    assert_eq!(profile(&idx, "loose/undated.folded")["date_from"], "file time");
    assert_eq!(idx["profiles"].as_array().unwrap().len(), 4, "every other profile still builds");
}

#[test]
fn dates_before_2000_or_in_the_future_are_kept_and_said() {
    // A clock that was never set (a py-spy pprof says 1970-01-20), and a date next year.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("api/epoch.folded"), folded(10).as_bytes());
    write(&input.join("api/epoch.toml"), b"date = 1970-01-20
");
    let next_year = jiff::Timestamp::now().as_second() / 86_400 / 365 + 1971;
    write(&input.join("api/later.folded"), folded(20).as_bytes());
    write(&input.join("api/later.toml"), format!("date = {next_year}-06-01\n").as_bytes());
    write(&input.join("api/right.folded"), folded(30).as_bytes());
    write(&input.join("api/right.toml"), b"date = 2026-11-20\n");
    let toml = dir.path().join("site.toml");
    write(&toml, b"input = \"in\"\noutput = \"out\"\n");
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let warning = |file: &str| err.lines().find(|l| l.starts_with("warning:") && l.contains(file) && l.contains("its date")).map(str::to_string);
    let epoch = warning("api/epoch.folded").unwrap_or_else(|| panic!("{err}"));
    assert!(epoch.contains("1970-01-20") && epoch.contains("before 2000") && epoch.contains("epoch.toml"), "{epoch}");
    let later = warning("api/later.folded").unwrap_or_else(|| panic!("{err}"));
    assert!(later.contains(&format!("{next_year}-06-01")) && later.contains("in the future"), "{later}");
    assert_eq!(warning("api/right.folded"), None, "{err}");
    // Each run is where its date puts it.
    let idx = index(&dir.path().join("out"));
    assert_eq!(profile(&idx, "api/epoch.folded")["date"], "1970-01-20T00:00:00Z");
}

#[test]
fn series_pages_are_paginated() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    for i in 0..23u64 {
        write(&input.join(format!("svc/r{i:03}.folded")), folded(50 + i).as_bytes());
        write(&input.join(format!("svc/r{i:03}.toml")), format!("date = 2026-10-{:02}T{:02}:00:00Z\n", 1 + i / 2, 8 * (i % 2)).as_bytes());
    }
    let toml = dir.path().join("site.toml");
    write(&toml, b"input = \"in\"\noutput = \"out\"\n[archive]\nper_page = 10\ngroup_by = \"month\"\n");
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("out");
    let pages = ["s/svc/index.html", "s/svc/page/2/index.html", "s/svc/page/3/index.html"];
    let counts: Vec<usize> = pages.iter().map(|p| read(&out.join(p)).matches("class=\"fs-run\"").count()).collect();
    assert_eq!(counts, [10, 10, 3]);
    assert!(!out.join("s/svc/page/4").exists());
    let p1 = read(&out.join(pages[0]));
    assert!(p1.contains("r022") && !p1.contains("r012/"), "page 1 holds the newest runs");
    assert_eq!(p1.matches("<a href=\"../../p/svc/").count(), 10, "each point of the trend links to a run of the page");
    assert!(p1.contains("rel=\"next\" href=\"../../s/svc/page/2/\"") && !p1.contains("rel=\"prev\""));
    let p2 = read(&out.join(pages[1]));
    assert!(p2.contains("rel=\"prev\" href=\"../../../../s/svc/\"") && p2.contains("rel=\"next\" href=\"../../../../s/svc/page/3/\""));
    assert_eq!(p2.matches("<h2>2026-10</h2>").count(), 1, "grouped by month");
    crawl(&out);
}

#[test]
fn feeds_are_valid_atom() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let toml = dir.path().join("site.toml");
    write(&toml, b"title = \"Perf & <co>\"\ninput = \"profiles\"\noutput = \"out\"\nbase_url = \"https://example.com/perf/\"\n[archive]\nfeed_entries = 4\n");
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("out");
    let atom = ATOM;
    let text = read(&out.join("feed.xml"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let feed = doc.root_element();
    assert_eq!((feed.tag_name().namespace(), feed.tag_name().name()), (Some(atom), "feed"));
    assert_eq!(child(feed, "title").text(), Some("Perf & <co>"));
    assert_eq!(child(feed, "updated").text(), Some("2026-11-14T18:30:00Z"));
    let entries: Vec<_> = feed.children().filter(|c| c.has_tag_name((atom, "entry"))).collect();
    assert_eq!(entries.len(), 4, "feed_entries");
    let titles: Vec<_> = entries.iter().map(|e| child(*e, "title").text().unwrap().to_string()).collect();
    assert_eq!(titles[0], "api · Hotfix <b>4127</b>");
    assert_eq!(titles[1], "api · 2026-11-14");
    let link = child(entries[0], "link").attribute("href").unwrap();
    assert_eq!(link, "https://example.com/perf/p/api/hotfix/");
    let content = child(entries[0], "content");
    assert_eq!(content.attribute("type"), Some("html"));
    assert_eq!(content.attribute(("http://www.w3.org/XML/1998/namespace", "base")), Some(link), "relative links in notes resolve against the run's page");
    assert!(content.text().unwrap().contains("https://tracker.example.com/INC-42") && !content.text().unwrap().contains("<script"));

    let text = read(&out.join("s/worker/feed.xml"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let entries: Vec<_> = doc.root_element().children().filter(|c| c.has_tag_name((atom, "entry"))).collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(child(entries[0], "updated").text(), Some("2026-11-13T06:00:00Z"));

    // Link previews: absolute URLs, and the image is a 1200×630 PNG. A run with a run before
    // it unfurls as its comparison with that run, whose words say what grew most since.
    let page = read(&out.join("p/api/hotfix/index.html"));
    assert!(page.contains("<meta property=\"og:image\" content=\"https://example.com/perf/p/api/hotfix/compare/preview.png\">"), "{page}");
    assert!(page.contains("<meta property=\"og:image:alt\" content=\"Differential flame graph of Hotfix &lt;b&gt;4127&lt;/b&gt; · api against the run before, 2026-11-14\">"), "{page}");
    assert!(page.contains("<meta property=\"og:url\" content=\"https://example.com/perf/p/api/hotfix/\">"));
    assert!(page.contains("<meta name=\"twitter:card\" content=\"summary_large_image\">"));
    assert!(page.contains("<link rel=\"canonical\" href=\"https://example.com/perf/p/api/hotfix/\">"));
    // A comparison's link unfurls as a run's does: the same tags, its own title and image.
    let cmp = read(&out.join("p/api/hotfix/compare/index.html"));
    for tag in [
        "<meta property=\"og:url\" content=\"https://example.com/perf/p/api/hotfix/compare/\">",
        "<link rel=\"canonical\" href=\"https://example.com/perf/p/api/hotfix/compare/\">",
        "<meta property=\"og:image\" content=\"https://example.com/perf/p/api/hotfix/compare/preview.png\">",
        "<meta name=\"twitter:card\" content=\"summary_large_image\">",
        "<meta name=\"twitter:title\" content=\"2026-11-14 → Hotfix &lt;b&gt;4127&lt;/b&gt; · api\">",
    ] {
        assert!(cmp.contains(tag), "{tag} missing from {cmp}");
    }
    // The page's own title says the two runs in the same order, earlier → later.
    assert!(cmp.contains("<title>2026-11-14 → Hotfix &lt;b&gt;4127&lt;/b&gt; · api · "), "{cmp}");
    // A link says what changed (issue 28, item 6): the run's description names what grew most
    // since the run before, the comparison's what grew and what shrank most; the home and series
    // pages have previews too, with their newest run's image.
    let description = |page: &str| {
        let needle = "<meta property=\"og:description\" content=\"";
        let at = page.find(needle).expect("og:description") + needle.len();
        page[at..at + page[at..].find('"').unwrap()].to_string()
    };
    assert!(description(&page).contains("since the previous run, ") && description(&page).contains(" grew most, +"), "{}", description(&page));
    assert!(description(&cmp).starts_with("What changed in api between 2026-11-14 and 2026-11-14 18:30 UTC: "), "{}", description(&cmp));
    assert!(description(&cmp).contains(" pp, ") , "grew and shrank: {}", description(&cmp));
    let home = read(&out.join("index.html"));
    assert!(home.contains("<meta property=\"og:url\" content=\"https://example.com/perf/\">") && home.contains("<meta name=\"twitter:card\" content=\"summary_large_image\">"), "{home}");
    assert!(home.contains("<meta property=\"og:image\" content=\"https://example.com/perf/p/api/hotfix/compare/preview.png\">"), "{home}");
    assert!(description(&home).starts_with("Flame graphs of 9 profile runs in 3 series; newest: api of 2026-11-14 18:30 UTC"), "{}", description(&home));
    let series = read(&out.join("s/api/index.html"));
    assert!(series.contains("<meta property=\"og:url\" content=\"https://example.com/perf/s/api/\">"), "{series}");
    assert!(series.contains("<meta property=\"og:image\" content=\"https://example.com/perf/p/api/hotfix/compare/preview.png\">"), "{series}");
    // A series' first run has no run before it: its own graph (`db <primary>` has one run).
    let db = index(&out)["profiles"].as_array().unwrap().iter().find(|p| p["series"] == "db <primary>").unwrap()["url"].as_str().unwrap().to_string();
    let db_page = read(&out.join(&db).join("index.html"));
    assert!(db_page.contains(&format!("<meta property=\"og:image\" content=\"https://example.com/perf/{db}preview.png\">")), "{db_page}");
    assert!(db_page.contains("<meta property=\"og:image:alt\" content=\"Flame graph of "), "{db_page}");
    assert!(description(&series).starts_with("6 runs of api, the newest of 2026-11-14 18:30 UTC"), "{}", description(&series));
    let png = std::fs::read(out.join("p/api/hotfix/preview.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!((u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap())), (1200, 630));
    // Above the graph, words: the series, the run and its date, the graph (dark text in the
    // header, 132 px, where the image is otherwise its light background); the comparison's
    // say other words. A retitled run's preview says its new title: the words' inputs are in
    // its cache key.
    let header = |png: &[u8]| -> Vec<[u8; 3]> {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf[..3 * 1200 * 132].chunks(3).map(|p| [p[0], p[1], p[2]]).collect()
    };
    let dark = |pixels: &[[u8; 3]]| pixels.iter().filter(|p| p.iter().all(|&c| c < 0x90)).count();
    let run_words = header(&png);
    assert!(dark(&run_words) > 1000, "{} dark pixels in the header", dark(&run_words));
    let cmp_words = header(&std::fs::read(out.join("p/api/hotfix/compare/preview.png")).unwrap());
    assert!(dark(&cmp_words) > 1000);
    assert_ne!(run_words, cmp_words, "the comparison's words are its own");
    write(
        &dir.path().join("profiles/api/hotfix.toml"),
        b"date = 2026-11-14T18:30:00Z\ntitle = \"Hotfix 4128\"\nunit = \"nanoseconds\"\n[labels]\nhost = \"api-7\"\ncommit = \"abc123\"\n",
    );
    let o = run(dir.path(), &["build", "--config", toml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let retitled = std::fs::read(out.join("p/api/hotfix/preview.png")).unwrap();
    assert_ne!(header(&retitled), run_words, "the new title is drawn");
}

#[test]
fn adding_runs_to_one_series_leaves_other_series_and_every_url_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(dir.path());
    let out = dir.path().join("public");
    assert!(build(&input, &out, &[]).status.success());
    let before = tree(&out);
    let urls_before: BTreeMap<String, String> = index(&out)["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["source"].as_str().unwrap().to_string(), p["url"].as_str().unwrap().to_string()))
        .collect();

    write(&input.join("api/2026-11-09.folded"), folded(77).as_bytes());
    write(&input.join("api/2026-11-15.folded"), folded(88).as_bytes());
    write(&input.join("new/2026-11-15.folded"), folded(99).as_bytes());
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("3 decoded, 0 from the cache, 9 unchanged"), "{}", stderr(&o));
    let after = tree(&out);
    let idx = index(&out);
    for (source, url) in &urls_before {
        assert_eq!(profile(&idx, source)["url"].as_str(), Some(url.as_str()), "{source} kept its URL");
    }
    let mut compared = 0;
    for (path, bytes) in &before {
        if path.starts_with("s/worker/") || path.starts_with("p/worker/") || path.starts_with("p/misc/") || path.starts_with("s/db") {
            assert!(after.get(path) == Some(bytes), "{path} changed although its series did not");
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared}");
    // Graph files of unchanged api runs are the same bytes too.
    assert_eq!(before.get("p/api/2026-11-12/g/samples/manifest.json"), after.get("p/api/2026-11-12/g/samples/manifest.json"));
}

#[test]
fn the_cache_never_serves_other_content_and_removed_profiles_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    write(&input.join("a/2026-11-01.folded"), b"x;y 10\n");
    write(&input.join("a/2026-11-02.folded"), b"x;z 20\n");
    let out = dir.path().join("out");
    assert!(build(&input, &out, &[]).status.success());
    let cache = dir.path().join(".out.cache");
    assert!(cache.is_dir(), "the cache sits beside the output");

    // Same size, same modification time, other content: rebuilt, not served from the cache.
    let path = input.join("a/2026-11-01.folded");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, b"x;y 90\n").unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    std::fs::remove_file(input.join("a/2026-11-02.folded")).unwrap();
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 decoded, 0 from the cache, 0 unchanged"), "{}", stderr(&o));
    let o = run(dir.path(), &["fold", out.join("p/a/2026-11-01").to_str().unwrap()]);
    assert_eq!(stdout(&o), "x;y 90\n");
    assert!(!out.join("p/a/2026-11-02").exists(), "stale pages of a removed profile are gone");
    assert!(!read(&out.join("s/a/index.html")).contains("2026-11-02"));
    assert_eq!(std::fs::read_dir(&cache).unwrap().flatten().filter(|e| e.path().is_dir()).count(), 1, "unused cache entries are removed");

    // An unchanged rebuild is a hit, and gives the same bytes as a build without the cache.
    let o = build(&input, &out, &[]);
    assert!(stderr(&o).contains("0 decoded, 0 from the cache, 1 unchanged"), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing changed"), "{}", stderr(&o));
    let first = tree(&out);
    let o = build(&input, &out, &["--no-cache"]);
    assert!(o.status.success() && stderr(&o).contains("1 decoded, 0 from the cache, 0 unchanged"), "{}", stderr(&o));
    assert_eq!(first, tree(&out), "a build from the cache is byte-identical to a full one");
}

#[test]
fn ten_thousand_runs_in_one_series_are_paginated_and_no_page_lists_them_all() {
    // What this test needs is the number of runs, not their bytes. On this project's CI
    // machine creating and removing the ~140,000 files of such a site on disk (ext4 mounted
    // with `discard`) takes minutes, so memory is used where the system has it.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let input = dir.path().join("in");
    let n = 10_000u64;
    // One run an hour from 2025-01-01 00:00 UTC.
    let name = |i: u64| {
        let (day, hour) = (i / 24, i % 24);
        let (month, dom) = month_day(day % 365);
        format!("run-{}{month:02}{dom:02}T{hour:02}00", 2025 + day / 365)
    };
    for i in 0..n {
        write(&input.join(format!("big/{}.folded", name(i))), format!("main;work{} {}\nmain;idle 1\n", i % 50, 1 + i).as_bytes());
    }
    let out = dir.path().join("out");
    let o = build(&input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let idx = index(&out);
    assert_eq!(idx["series"][0]["runs"], n);
    let pages = n.div_ceil(50);
    assert!(out.join(format!("s/big/page/{pages}/index.html")).is_file());
    assert!(!out.join(format!("s/big/page/{}", pages + 1)).exists());
    let mut largest = 0;
    for page in std::iter::once("s/big/".to_string()).chain((2..=pages).map(|p| format!("s/big/page/{p}/"))) {
        let html = read(&out.join(&page).join("index.html"));
        assert!(html.matches("class=\"fs-run\"").count() <= 50, "{page}");
        largest = largest.max(html.len());
    }
    assert!(largest < 64 * 1024, "a series page stays small: {largest} bytes");
    assert!(read(&out.join("index.html")).len() < 16 * 1024, "the home page does not list runs");
    let last = read(&out.join(format!("s/big/page/{pages}/index.html")));
    assert!(last.contains("p/big/run-20250101T0000/"), "the oldest run is on the last page");
    let newest = read(&out.join("s/big/index.html"));
    assert!(newest.contains(&format!("p/big/{}/", name(n - 1))), "the newest run is on page 1");
}

/// Month and day of day `d` (from 0) of a year that is not a leap year.
fn month_day(mut d: u64) -> (u64, u64) {
    let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    for (m, len) in lengths.iter().enumerate() {
        if d < *len {
            return (m as u64 + 1, d + 1);
        }
        d -= len;
    }
    unreachable!()
}

#[test]
fn links_that_end_in_index_html_reach_every_page_without_a_directory_index() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture(dir.path());
    let folders = dir.path().join("folders");
    assert!(build(&input, &folders, &[]).status.success());
    // A bucket served without a website endpoint answers only for files.
    write(&dir.path().join("site.toml"), b"links = \"index.html\"\nbase_url = \"https://perf.example.com/a\"\n");
    let files = dir.path().join("files");
    let o = run(dir.path(), &["build", "--input", input.to_str().unwrap(), "--output", files.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pages = crawl_with(&files, false);
    assert_eq!(pages, crawl(&folders), "the same pages are reached");
    assert!(pages.len() > 10, "{pages:?}");
    // Feeds and link previews name the file too.
    let feed = read(&files.join("feed.xml"));
    assert!(feed.contains("href=\"https://perf.example.com/a/p/api/hotfix/index.html\""), "{feed}");
    assert!(feed.contains("rel=\"alternate\" type=\"text/html\" href=\"https://perf.example.com/a/index.html\""), "{feed}");
    let run_page = read(&files.join("p/api/hotfix/index.html"));
    assert!(run_page.contains("<meta property=\"og:url\" content=\"https://perf.example.com/a/p/api/hotfix/index.html\">"), "{run_page}");
    // A change of the setting is a change of every page, published by the next build.
    write(&dir.path().join("site.toml"), b"base_url = \"https://perf.example.com/a\"\n");
    assert!(run(dir.path(), &["build", "--input", input.to_str().unwrap(), "--output", files.to_str().unwrap()]).status.success());
    assert!(!read(&files.join("index.html")).contains("/index.html\""), "back to folder links");
}
