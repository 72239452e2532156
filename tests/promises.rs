//! Promises of the README that no other test kept: each one built by the real binary on
//! fixture folders, and checked on what a user sees (the files, index.json, the messages and
//! the exit status).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::Value;

fn index(out: &Path) -> Value {
    common::listing(out)
}

fn entry<'a>(index: &'a Value, source: &str) -> &'a Value {
    index["profiles"].as_array().unwrap().iter().find(|p| p["source"] == source).unwrap_or_else(|| panic!("{source} in {index}"))
}

fn read(path: &Path) -> String {
    String::from_utf8(unpacked(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A site folder: `site.toml` with `toml`, profiles in `profiles/`, output `public/`.
struct Site {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Site {
    fn new() -> Site {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        Site { _dir: dir, root }
    }

    fn input(&self) -> PathBuf {
        self.root.join("profiles")
    }

    fn out(&self) -> PathBuf {
        self.root.join("public")
    }

    fn config(&self, toml: &str) {
        write(&self.root.join("site.toml"), toml.as_bytes());
    }

    /// `flamesite build` in the site's folder, plus `extra`.
    fn build(&self, extra: &[&str]) -> std::process::Output {
        let mut args = vec!["build"];
        args.extend_from_slice(extra);
        run(&self.root, &args)
    }
}

#[test]
fn a_change_of_palette_chunks_limits_unit_or_base_url_is_not_served_from_the_cache() {
    let site = Site::new();
    write(&site.input().join("api/2026-11-01.folded"), b"main;parse;lex 30\nmain;parse 5\nmain;render;paint 20\nmain;render;layout;text 7\n");
    write(&site.input().join("api/2026-11-02.folded"), b"main;parse;lex 31\nmain;render;paint 21\n");
    let base = "title = \"t\"\n";
    site.config(base);
    let o = site.build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = site.build(&[]);
    assert!(stderr(&o).contains("0 decoded, 0 from the cache, 2 unchanged"), "an unchanged rebuild reads nothing: {}", stderr(&o));

    // From the base configuration, each change, then a rebuild: nothing from the cache (only
    // the other profile, when one sidecar changed), and the same bytes as a build without the
    // cache (into another folder) of the same configuration.
    let sidecar = site.input().join("api/2026-11-01.toml");
    for (what, toml, unit) in [
        ("palette", format!("{base}palette = \"blue\"\n"), None),
        ("chunks", format!("{base}[chunks]\nroot_width = 100\n"), None),
        ("limits", format!("{base}[limits]\nmax_depth = 3\n"), None),
        ("base_url", format!("{base}base_url = \"https://example.com/perf/\"\n"), None),
        ("the sidecar's unit", base.to_string(), Some("unit = \"nanoseconds\"\n")),
    ] {
        site.config(base);
        let _ = std::fs::remove_file(&sidecar);
        assert!(site.build(&[]).status.success(), "{what}");
        site.config(&toml);
        if let Some(u) = unit {
            write(&sidecar, u.as_bytes());
        }
        let o = site.build(&["--keep-going"]);
        let err = stderr(&o);
        assert!(o.status.success(), "{what}: {err}");
        if unit.is_some() {
            assert!(err.contains("1 decoded, 0 from the cache, 1 unchanged"), "{what}: only the profile whose sidecar changed is decoded: {err}");
        } else {
            assert!(err.contains(" decoded, 0 from the cache, 0 unchanged"), "{what} changed, yet profiles came from the cache: {err}");
        }
        let fresh = site.root.join("fresh");
        let o = run(&site.root, &["build", "--no-cache", "--keep-going", "--output", fresh.to_str().unwrap()]);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(tree(&site.out()) == tree(&fresh), "{what}: the cached build differs from a build without the cache");
        std::fs::remove_dir_all(&fresh).unwrap();
        // What a user sees changed.
        let manifest = || read(&site.out().join("p/api/2026-11-01/g/samples/manifest.json"));
        match what {
            "palette" => assert!(manifest().contains("\"palette\":\"blue\""), "{}", manifest()),
            "chunks" => assert!(manifest().contains("\"root_width\":100"), "{}", manifest()),
            "limits" => {
                let line = err.lines().find(|l| l.contains("2026-11-01.folded")).unwrap_or_else(|| panic!("{err}"));
                assert!(line.starts_with("error:") && line.contains("max_depth"), "a stack deeper than max_depth is refused: {line}");
                assert!(!site.out().join("p/api/2026-11-01").exists());
            }
            "base_url" => assert!(site.out().join("p/api/2026-11-01/preview.png").is_file()),
            _ => assert_eq!(entry(&index(&site.out()), "api/2026-11-01.folded")["graphs"][0]["unit"], "nanoseconds"),
        }
    }
}

#[test]
fn without_base_url_pages_carry_no_og_image_and_no_preview_is_made() {
    let site = Site::new();
    write(&site.input().join("svc/2026-11-01.folded"), b"main;a 3\nmain;b 4\n");
    site.config("title = \"t\"\n");
    let o = site.build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = read(&site.out().join("p/svc/2026-11-01/index.html"));
    assert!(!page.contains("og:image") && !page.contains("og:url"), "{page}");
    assert!(!site.out().join("p/svc/2026-11-01/preview.png").exists());
    assert!(entry(&index(&site.out()), "svc/2026-11-01.folded").get("preview").is_none());

    // The same site with base_url: previews and absolute og:image.
    site.config("title = \"t\"\nbase_url = \"https://example.com/perf/\"\n");
    let o = site.build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = read(&site.out().join("p/svc/2026-11-01/index.html"));
    assert!(page.contains("og:image\" content=\"https://example.com/perf/p/svc/2026-11-01/preview.png\""), "{page}");
}

#[test]
fn correcting_a_sidecar_date_keeps_the_runs_url() {
    let site = Site::new();
    write(&site.input().join("svc/deploy.folded"), b"main;a 3\n");
    write(&site.input().join("svc/deploy.toml"), b"date = 2026-01-05T10:00:00Z\n");
    write(&site.input().join("svc/other.folded"), b"main;b 3\n");
    write(&site.input().join("svc/other.toml"), b"date = 2026-01-07T10:00:00Z\n");
    site.config("title = \"t\"\n");
    assert!(site.build(&[]).status.success());
    let before = entry(&index(&site.out()), "svc/deploy.folded").clone();
    assert_eq!(before["date"], "2026-01-05T10:00:00Z");
    let url = before["url"].as_str().unwrap().to_string();

    // The date was wrong: it is after the other run now.
    write(&site.input().join("svc/deploy.toml"), b"date = 2026-01-09T10:00:00Z\n");
    let o = site.build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let idx = index(&site.out());
    let after = entry(&idx, "svc/deploy.folded");
    assert_eq!(after["date"], "2026-01-09T10:00:00Z");
    assert_eq!(after["url"].as_str(), Some(url.as_str()), "the run's URL moved");
    assert_eq!(entry(&idx, "svc/other.folded")["url"], "p/svc/other/");
    // The run page is still at that URL, and its neighbour is now the other run.
    let page = read(&site.out().join(&url).join("index.html"));
    assert!(page.contains("rel=\"prev\" href=\"../../../p/svc/other/\""), "{page}");
}

#[test]
fn dates_with_the_underscore_time_form() {
    let site = Site::new();
    // In a file name (series from the folder), and through archive.pattern.
    write(&site.input().join("svc/2026-11-20_140300.folded"), b"main;a 3\n");
    write(&site.input().join("hosts/db/20261121_093015/cpu.folded"), b"main;a 3\n");
    site.config("title = \"t\"\n[archive]\npattern = \"hosts/{series}/{date}/{name}\"\n");
    let o = site.build(&[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let idx = index(&site.out());
    let a = entry(&idx, "svc/2026-11-20_140300.folded");
    assert_eq!((a["date"].as_str(), a["date_from"].as_str(), a["series"].as_str()), (Some("2026-11-20T14:03:00Z"), Some("file name"), Some("svc")));
    let b = entry(&idx, "hosts/db/20261121_093015/cpu.folded");
    assert_eq!((b["date"].as_str(), b["date_from"].as_str(), b["series"].as_str()), (Some("2026-11-21T09:30:15Z"), Some("pattern"), Some("db")));
}

#[test]
fn formats_are_detected_in_the_documented_order_and_an_unknown_one_is_described() {
    let site = Site::new();
    // JSON that is both speedscope (its schema URL) and a .cpuprofile (nodes and samples):
    // speedscope comes first.
    write(
        &site.input().join("both.json"),
        br#"{"$schema": "https://www.speedscope.app/file-format-schema.json", "nodes": [], "samples": [],
            "shared": {"frames": [{"name": "a"}, {"name": "b"}]},
            "profiles": [{"type": "sampled", "name": "main", "unit": "none", "startValue": 0, "endValue": 3,
              "samples": [[0, 1], [0]], "weights": [2, 1]}]}"#,
    );
    // perf script text that starts with a header line ending in a number, which folded
    // stacks would also accept as `stack count`: perf script comes first.
    write(&site.input().join("perf-or-folded.txt"), b"# nrcpus online : 2\nprog 12 1.5: 7 cycles: \n\t1 leaf (/p)\n\t2 main (/p)\n\n");
    write(&site.input().join("unknown.txt"), b"\n  Hello, this is a letter\nnot a profile\n");
    let out = site.out();
    let o = run(&site.root, &["build", "--input", "profiles", "--output", "public"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let idx = index(&out);
    assert_eq!(entry(&idx, "both.json")["format"], "speedscope");
    let o2 = run(&site.root, &["fold", out.join("p/both/g/main").to_str().unwrap()]);
    assert_eq!(stdout(&o2), "a 1\na;b 2\n");
    assert_eq!(entry(&idx, "perf-or-folded.txt")["format"], "perf");
    let o2 = run(&site.root, &["fold", out.join("p/perf-or-folded/g/cycles").to_str().unwrap()]);
    assert_eq!(stdout(&o2), "prog;main;leaf 7\n");

    // The error names the file, every format tried in the README's order, and the first line.
    let line = err.lines().find(|l| l.starts_with("error:") && l.contains("unknown.txt")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("profiles/unknown.txt"), "{line}");
    let order = ["pprof", "speedscope", "cpuprofile", "perf script", "DTrace", "sample", "VTune", "folded"];
    let mut from = 0;
    for f in order {
        // Each after the one before it.
        from += line[from..].find(f).unwrap_or_else(|| panic!("{f} not after the formats before it, as the README orders them: {line}")) + f.len();
    }
    assert!(line.contains("Hello, this is a letter"), "the first line is quoted: {line}");
}

/// The colours that tests/data/colors/colors.py reckons from docs/FORMAT.md:
/// palette -> name -> colour.
fn reckoned_colours() -> BTreeMap<String, BTreeMap<String, u64>> {
    let text = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/colors/colors.txt"));
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with("example")) {
        let f: Vec<&str> = line.split('\t').collect();
        let name: String = serde_json::from_str(f[1]).unwrap();
        out.entry(f[0].to_string()).or_default().insert(name, f[2].parse().unwrap());
    }
    out
}

/// Every palette a build is given is what its graphs' manifests say, and the name files leave
/// the colours to the reader (version 9), which reckons them by docs/FORMAT.md's rules: the
/// page's palette.js and the previews' src/graph/color.rs are both tested against
/// tests/data/colors/colors.txt, and the browser tests check a real page's pixels in `hot`,
/// `module` and `lang`.
#[test]
fn every_palette_is_named_in_the_manifest_and_no_name_file_repeats_the_colours() {
    let colours = reckoned_colours();
    assert_eq!(colours.keys().map(String::as_str).collect::<Vec<_>>(), ["blue", "hot", "lang", "module"]);
    for (palette, names) in &colours {
        let site = Site::new();
        let foldable = |n: &str| !n.is_empty() && !n.contains(';');
        let folded: String = names.keys().filter(|n| foldable(n)).map(|n| format!("{n} 1\n")).collect();
        write(&site.input().join("p.folded"), folded.as_bytes());
        site.config(&format!("title = \"t\"\npalette = \"{palette}\"\n"));
        let o = site.build(&[]);
        assert!(o.status.success(), "{palette}: {}", stderr(&o));
        let graph = site.out().join("p/p/g/samples");
        let manifest: Value = serde_json::from_str(&read(&graph.join("manifest.json"))).unwrap();
        assert_eq!(manifest["palette"], palette.as_str());
        assert_eq!(manifest["version"], 12);
        let mut built = BTreeSet::new();
        for file in manifest["names"].as_array().unwrap() {
            let n: Value = serde_json::from_slice(&common::unpacked(&graph.join(file["file"].as_str().unwrap()))).unwrap();
            assert!(n.get("colors").is_none(), "{palette}: {n}");
            built.extend(n["names"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()));
        }
        for name in names.keys().filter(|n| foldable(n)) {
            assert!(built.contains(name), "{palette} {name:?}");
        }
    }
}

#[test]
fn a_total_above_two_to_the_32_round_trips_through_fold() {
    let site = Site::new();
    // 2^32 + 1 and 5e9: each stack and the total need more than 32 bits.
    let text = "main;big 4294967297\nmain;bigger;x 5000000000\nmain 1\n";
    write(&site.input().join("huge.folded"), text.as_bytes());
    site.config("title = \"t\"\n");
    let o = site.build(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let graph = site.out().join("p/huge/g/samples");
    let manifest: Value = serde_json::from_str(&read(&graph.join("manifest.json"))).unwrap();
    assert_eq!(manifest["total"].as_u64(), Some(9_294_967_298));
    assert_eq!(manifest["values"], "f64", "values that do not fit 32 bits are written as f64");
    let o = run(&site.root, &["fold", graph.to_str().unwrap()]);
    assert_eq!(stdout(&o), merged_sorted(text));
    assert_eq!(entry(&index(&site.out()), "huge.folded")["graphs"][0]["total"].as_u64(), Some(9_294_967_298));
}

#[test]
fn a_missing_input_folder_is_exit_status_2_and_writes_nothing() {
    let site = Site::new();
    let o = run(&site.root, &["build", "--input", "no-such-folder", "--output", "public"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-folder"), "the message names the folder: {}", stderr(&o));
    assert!(!site.out().exists());
    // The same through site.toml.
    site.config("input = \"gone\"\n");
    let o = site.build(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("gone"), "{}", stderr(&o));
    assert!(!site.out().exists());
}
