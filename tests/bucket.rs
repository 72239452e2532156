//! Publishing to object storage, against a real S3 server on loopback (s3s-fs, run inside the
//! test from its library: tests/common/s3.rs): the bucket holds the site a folder would, a
//! machine with no local state adds a run by writing what changed, a publish cut off half-way
//! is repaired by the next, and a second publisher is refused while one publishes.

use crate::common::s3 as s3server;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::common::*;

const BUCKET: &str = "archive";

/// An s3s-fs server on a loopback port, storing objects as files under `root`.
struct S3 {
    _server: s3server::Server,
    port: u16,
    root: tempfile::TempDir,
}

impl S3 {
    fn start() -> S3 {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let server = s3server::Server::start(root.path(), 0);
        S3 { port: server.port, _server: server, root }
    }

    /// The folder where the server keeps the objects under `prefix`.
    fn objects(&self, prefix: &str) -> PathBuf {
        self.root.path().join(BUCKET).join(prefix)
    }

    /// Every object under `prefix` with its bytes, the record beside the site left out.
    fn site(&self, prefix: &str) -> BTreeMap<String, Vec<u8>> {
        tree(&self.objects(prefix)).into_iter().filter(|(k, _)| !k.starts_with(".flamesite/")).collect()
    }

    /// Every object under `prefix` with the time it was last written.
    fn written(&self, prefix: &str) -> BTreeMap<String, SystemTime> {
        let dir = self.objects(prefix);
        walkdir::WalkDir::new(&dir)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| (e.path().strip_prefix(&dir).unwrap().to_string_lossy().into_owned(), e.metadata().unwrap().modified().unwrap()))
            .collect()
    }
}

/// `flamesite build` of `input` to `s3://archive/PREFIX` through the endpoint at `port`.
fn command(input: &Path, prefix: &str, port: u16) -> Command {
    command_from(input.to_str().unwrap(), input.parent().unwrap(), prefix, port)
}

/// `flamesite build` of `input` (a folder or a bucket) in the folder `cwd`.
fn command_from(input: &str, cwd: &Path, prefix: &str, port: u16) -> Command {
    let mut c = Command::new(bin());
    c.args(["build", "--input", input, "--output", &format!("s3://{BUCKET}/{prefix}")])
        .current_dir(cwd)
        .env("AWS_ACCESS_KEY_ID", "flamesite")
        .env("AWS_SECRET_ACCESS_KEY", "flamesite-secret")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .env("AWS_ALLOW_HTTP", "true");
    c
}

fn publish(input: &Path, prefix: &str, port: u16) -> Output {
    let o = command(input, prefix, port).output().unwrap();
    assert!(o.status.success(), "publish failed: {}", stderr(&o));
    o
}

/// A folder of two series of dated profiles.
fn profiles(dir: &Path) -> PathBuf {
    let input = dir.join("profiles");
    for (i, day) in ["2026-11-01", "2026-11-02", "2026-11-03"].iter().enumerate() {
        write(&input.join(format!("api/{day}.folded.gz")), &gzip(awkward_profile(i as u64, 300).as_bytes()));
        write(&input.join(format!("db/{day}.folded")), awkward_profile(10 + i as u64, 200).as_bytes());
    }
    input
}

/// The site a folder build of `input` makes, file by file.
fn folder_site(input: &Path) -> BTreeMap<String, Vec<u8>> {
    let out = input.parent().unwrap().join(format!("folder-{}", free_port()));
    let o = build(input, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    tree(&out)
}

/// Asserts two sites hold the same files with the same bytes, naming those that differ.
#[track_caller]
fn assert_same_site(got: &BTreeMap<String, Vec<u8>>, want: &BTreeMap<String, Vec<u8>>) {
    let differ: Vec<&String> = got.keys().chain(want.keys()).filter(|k| got.get(*k) != want.get(*k)).collect();
    assert!(differ.is_empty(), "the bucket's site differs from a folder build's at {differ:?}");
}

#[test]
fn a_bucket_holds_the_site_a_folder_gets_with_the_right_content_types() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    let o = publish(&input, "site", s3.port);
    assert!(stderr(&o).contains(&format!("wrote s3://{BUCKET}/site")), "{}", stderr(&o));
    let site = s3.site("site");
    assert_same_site(&site, &folder_site(&input));
    // Each object is labelled as a host must serve it.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // The clients' TLS provider, as flamesite's Bucket::open sets it for its own.
    flamesite::output::bucket::install_tls_provider();
    let store = object_store::aws::AmazonS3Builder::new()
        .with_bucket_name(BUCKET)
        .with_endpoint(format!("http://127.0.0.1:{}", s3.port))
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_access_key_id("flamesite")
        .with_secret_access_key("flamesite-secret")
        .build()
        .unwrap();
    use object_store::ObjectStoreExt;
    for (key, kind) in [("site/index.html", "text/html; charset=utf-8"), ("site/index.json", "application/json"), ("site/static/flamesite.css", "text/css; charset=utf-8")] {
        let got = rt.block_on(store.get(&object_store::path::Path::from(key))).unwrap();
        assert_eq!(got.attributes.get(&object_store::Attribute::ContentType).map(|v| v.as_ref()), Some(kind), "{key}");
        assert_eq!(got.attributes.get(&object_store::Attribute::CacheControl).map(|v| v.as_ref()), Some("no-cache"), "{key}");
    }
    // Nothing is left beside it: no lock, no marker of a publish under way.
    assert!(!s3.objects("site/.flamesite/lock").exists() && !s3.objects("site/.flamesite/dirty").exists());
}

#[test]
fn a_machine_with_no_local_state_adds_a_run_by_writing_only_what_changed() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    // Each build has a cache folder of its own, removed at the end: nothing is left locally.
    let again = publish(&input, "site", s3.port);
    assert!(stderr(&again).contains("nothing changed"), "{}", stderr(&again));
    let before = s3.written("site");
    std::thread::sleep(Duration::from_millis(20));
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(7, 300).as_bytes()));
    let proxy = Proxy::start(s3.port, Fault::None);
    let o = publish(&input, "site", proxy.port);
    let err = stderr(&o);
    assert!(err.contains("1 decoded") && err.contains("6 unchanged"), "{err}");
    // Of the other runs, it read the graph the new run is compared with (the run before it), and
    // the manifests and name files the series' history is made of: no other graph file.
    let read: Vec<String> = proxy.requests.lock().unwrap().iter().filter(|(m, _)| m == "GET").map(|(_, p)| p.clone()).collect();
    let others = |p: &&String| !p.contains("/api/2026-11-03/");
    let graph_files: Vec<&String> = read.iter().filter(|p| p.contains("/g/") && others(p)).collect();
    assert!(graph_files.iter().any(|p| p.contains("/api/2026-11-01/g/")), "the history read the first run's names: {read:?}");
    let beyond: Vec<&&String> = graph_files.iter().filter(|p| !p.ends_with("/manifest.json") && !p.contains("/n/")).collect();
    assert!(beyond.is_empty(), "graph files read that the new run needs nothing of: {beyond:?}");
    // Nor the cache records of the runs the history reads (which list every file of a run):
    // only those of the new run, the run before it and their comparison.
    let records = read.iter().filter(|p| p.ends_with("/entry.json")).count();
    assert!(records <= 3, "{records} cache records read: {read:?}");
    // The new run's folder, where the bucket held nothing, is written without a read per file.
    let looked: Vec<&String> = read.iter().filter(|p| p.contains("/api/2026-11-04/")).collect();
    assert!(looked.is_empty(), "the new run's files were looked for before they were written: {looked:?}");
    // The page script and stylesheet, unchanged, are neither read back nor written again.
    let statics: Vec<(String, String)> = proxy.requests.lock().unwrap().iter().filter(|(_, p)| p.contains("/site/static/")).cloned().collect();
    assert!(statics.is_empty(), "static files read or written: {statics:?}");
    let after = s3.written("site");
    // The other runs' folders were not written again.
    for (key, when) in &before {
        if key.starts_with("p/db/") || key.starts_with("p/api/2026-11-01/") || key.starts_with("p/api/2026-11-02/") {
            assert_eq!(after.get(key), Some(when), "{key} was written again");
        }
    }
    assert!(after.keys().any(|k| k.starts_with("p/api/2026-11-04/")), "the new run is published");
    assert_same_site(&s3.site("site"), &folder_site(&input));
}

#[test]
fn a_removed_profile_goes_from_the_bucket_and_objects_flamesite_did_not_write_stay() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    // The same history in a folder: the record of names keeps a removed run's name.
    let folder = dir.path().join("folder");
    assert!(build(&input, &folder, &[]).status.success());
    // A bucket is often shared: another tool's objects beside and inside the site's prefix.
    write(&s3.objects("site/robots.txt"), b"User-agent: *\n");
    write(&s3.objects("other/keep.txt"), b"not flamesite's");
    std::fs::remove_file(input.join("db/2026-11-02.folded")).unwrap();
    publish(&input, "site", s3.port);
    assert!(build(&input, &folder, &[]).status.success());
    assert!(!s3.site("site").keys().any(|k| k.starts_with("p/db/2026-11-02/")), "the removed run's objects are deleted");
    assert_eq!(std::fs::read(s3.objects("site/robots.txt")).unwrap(), b"User-agent: *\n");
    assert_eq!(std::fs::read(s3.objects("other/keep.txt")).unwrap(), b"not flamesite's");
    let mut expected = tree(&folder);
    expected.insert("robots.txt".into(), b"User-agent: *\n".to_vec());
    assert_same_site(&s3.site("site"), &expected);
}

#[test]
fn a_publish_cut_off_half_way_leaves_the_old_pages_and_the_next_repairs_it() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    let old = s3.site("site");
    // A new run: its graph files are uploaded before any page names it.
    write(&input.join("db/2026-11-04.folded"), awkward_profile(21, 200).as_bytes());
    // The lock, the marker and three of the new files are written; then the server stops
    // answering, and the publisher is killed.
    let limit = 5;
    let stall = Proxy::start(s3.port, Fault::StallAfterPuts(limit));
    let mut child = command(&input, "site", stall.port).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    stall.wait_until_stalled(limit);
    child.kill().unwrap();
    child.wait().unwrap();
    let cut = s3.site("site");
    assert!(s3.objects("site/.flamesite/dirty").exists(), "the publish under way is marked");
    // Every page and index a reader can reach is the old site's.
    for (key, bytes) in &cut {
        if key.ends_with(".html") || key.ends_with("index.json") && !key.contains("/g/") || key.ends_with(".xml") {
            assert_eq!(old.get(key), Some(bytes), "{key} changed before the files it needs were all there");
        }
    }
    // The next publish (the killed one's lock is taken over: its process is gone) repairs it.
    let o = publish(&input, "site", s3.port);
    assert!(!s3.objects("site/.flamesite/dirty").exists(), "{}", stderr(&o));
    assert_same_site(&s3.site("site"), &folder_site(&input));
}

/// Copies the folder `from` (a server's objects) to `to`, which is emptied first.
fn copy_folder(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    let o = Command::new("cp").arg("-a").arg(format!("{}/.", from.display())).arg(to).output().unwrap();
    assert!(o.status.success(), "cp: {}", stderr(&o));
}

/// What a write of a publish is, by its path under the site's prefix: fault points of one
/// kind are alike.
fn write_kind(method: &str, rel: &str) -> String {
    let kind = match rel {
        // object_store deletes with S3's DeleteObjects, `POST /BUCKET?delete`.
        _ if method == "POST" => "deletions",
        ".flamesite/lock" | ".flamesite/dirty" | ".flamesite/tree" => rel,
        r if r.starts_with(".flamesite/cache/state") => "the build state",
        r if r.starts_with(".flamesite/") => "the cache's records",
        r if r == "index.html" || r.ends_with("/index.json") && !r.contains("/g/") || r == "index.json" || r.ends_with("feed.xml") => "a listing",
        r if r.ends_with(".html") => "a page",
        _ => "a file",
    };
    format!("{method} {kind}")
}

/// Issue 45, item 5: a publish killed at any one of its writes (the lock, the marker, each
/// file, page and listing, each deletion, the record) is repaired by the next publish to what
/// a folder build of the same profiles writes, byte for byte, with nothing left of the cut
/// one; and while it was cut off, every page and listing a reader could reach was the old
/// site's or the new one's, and every file a graph's manifest names was of that manifest's
/// build, or of another size than the manifest gives, which the page refuses (fetch.js). The
/// publish cut adds a run, rebuilds a run whose profile was written again (its graph files
/// change in place) and removes one. The publish is cut before the first two, the middle and
/// the last write of each kind, in the order a whole publish sends them (about 30 of its 100
/// writes); `FLAMESITE_EVERY_FAULT_POINT=1` cuts it before every one (about 4 minutes).
#[test]
fn a_publish_killed_at_any_of_its_writes_is_repaired_by_the_next_to_a_folder_builds_bytes() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    for (i, day) in ["2026-11-01", "2026-11-02", "2026-11-03"].iter().enumerate() {
        write(&input.join(format!("api/{day}.folded")), awkward_profile(i as u64, 40).as_bytes());
        write(&input.join(format!("db/{day}.folded")), awkward_profile(10 + i as u64, 30).as_bytes());
    }
    let folder = dir.path().join("folder");
    publish(&input, "site", s3.port);
    assert!(build(&input, &folder, &[]).status.success());
    let old = s3.site("site");
    let saved = dir.path().join("saved");
    copy_folder(s3.root.path(), &saved);
    write(&input.join("api/2026-11-04.folded"), awkward_profile(3, 40).as_bytes());
    write(&input.join("db/2026-11-02.folded"), awkward_profile(77, 30).as_bytes());
    std::fs::remove_file(input.join("db/2026-11-01.folded")).unwrap();
    let o = build(&input, &folder, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = tree(&folder);
    // The publish once, whole, to know its writes.
    let counting = Proxy::start(s3.port, Fault::None);
    let o = command(&input, "site", counting.port).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_site(&s3.site("site"), &want);
    let kinds: Vec<String> = counting
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| matches!(m.as_str(), "PUT" | "POST" | "DELETE"))
        .map(|(m, p)| write_kind(m, p.strip_prefix(&format!("/{BUCKET}/site/")).unwrap_or(p)))
        .collect();
    let mut points = BTreeSet::new();
    let mut first = 0;
    for i in 0..kinds.len() {
        if i + 1 == kinds.len() || kinds[i + 1] != kinds[first] {
            points.extend([first, first + 1, (first + i) / 2, i].map(|w| w.min(i) + 1));
            first = i + 1;
        }
    }
    if std::env::var_os("FLAMESITE_EVERY_FAULT_POINT").is_some() {
        points = (1..=kinds.len()).collect();
    }
    for kind in ["PUT .flamesite/lock", "PUT .flamesite/dirty", "PUT a file", "PUT a page", "PUT a listing", "POST deletions", "PUT the build state"] {
        assert!(kinds.iter().any(|k| k == kind), "the publish writes {kind}: {kinds:?}");
    }
    let mut wrong = Vec::new();
    for &n in &points {
        let at = format!("cut before write {n} ({})", kinds[n - 1]);
        copy_folder(&saved, s3.root.path());
        let hold = Proxy::start(s3.port, Fault::HoldWrite(n));
        let mut child = command(&input, "site", hold.port).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while hold.puts.load(Ordering::SeqCst) < n && child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "{at}: the publish never reached it");
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let cut = s3.site("site");
        for (key, bytes) in &cut {
            let reader_sees = key.ends_with(".html") || key.ends_with(".xml") || key.ends_with("index.json") && !key.contains("/g/");
            if reader_sees && old.get(key) != Some(bytes) && want.get(key) != Some(bytes) {
                wrong.push(format!("{at}: {key} is neither the old site's nor the new one's"));
            }
        }
        // A reader opens a graph by its packed manifest, then reads the files it names: each is
        // the file of that manifest's build, or one the page refuses by its size.
        for (key, packed) in cut.iter().filter(|(k, _)| k.ends_with("/manifest.json.gz")) {
            let g = key.strip_suffix("manifest.json.gz").unwrap();
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(&packed[..]).read_to_end(&mut text).unwrap();
            let manifest: serde_json::Value = serde_json::from_slice(&text).unwrap();
            let build = if old.get(key) == Some(packed) { &old } else { &want };
            for list in ["chunks", "names", "search", "sandwiches"] {
                for entry in manifest[list].as_array().into_iter().flatten() {
                    let file = format!("{g}{}", entry["file"].as_str().unwrap());
                    let (now, then) = (cut.get(&file), build.get(&file));
                    if now != then && now.is_none_or(|b| Some(b.len() as u64) == entry["bytes"].as_u64()) {
                        wrong.push(format!("{at}: {file} is not of the build of its manifest, and has the size the manifest gives"));
                    }
                }
            }
        }
        let o = command(&input, "site", s3.port).output().unwrap();
        let got = s3.site("site");
        let differ: BTreeSet<&String> = got.keys().chain(want.keys()).filter(|k| got.get(*k) != want.get(*k)).collect();
        let left: Vec<&str> = [".flamesite/dirty", ".flamesite/lock"].into_iter().filter(|k| s3.objects(&format!("site/{k}")).exists()).collect();
        if !o.status.success() || !differ.is_empty() || !left.is_empty() || stderr(&o).contains("warning") {
            wrong.push(format!("{at}: the next publish: {:?}, differs at {differ:?}, left {left:?}: {}", o.status.code(), stderr(&o)));
        }
    }
    assert!(wrong.is_empty(), "at {} of {} fault points:\n{}", points.len(), kinds.len(), wrong.join("\n"));
}

/// Issue 45, item 7: an object of the site overwritten in place (a run's name file, which the
/// history of its series reads back) made every later publish fail, exit 2: the bucket is the
/// only tree. Now the publish that meets it names the object, checks the whole site and
/// decodes that run again: exit 0, and the bucket is a folder build's.
#[test]
fn an_object_overwritten_in_place_is_named_and_written_again() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    let run = s3.objects("site/p/api/2026-11-02");
    let names = tree(&run).into_keys().find(|k| k.starts_with("g/") && k.contains("/n/")).unwrap();
    // Of the same size: a listing does not tell it apart.
    let size = std::fs::metadata(run.join(&names)).unwrap().len() as usize;
    std::fs::write(run.join(&names), vec![b'x'; size]).unwrap();
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(9, 300).as_bytes()));
    let o = publish(&input, "site", s3.port);
    let object = format!("s3://{BUCKET}/site/p/api/2026-11-02/{names}: not the file the build wrote (changed in place?)");
    assert!(stderr(&o).contains(&object), "the object is named: {}", stderr(&o));
    assert_same_site(&s3.site("site"), &folder_site(&input));
    let o = publish(&input, "site", s3.port);
    assert!(stdout(&o).contains("nothing changed") || stderr(&o).contains("nothing changed"), "{}{}", stdout(&o), stderr(&o));
}

/// Issue 45, item 7: objects of the site removed or changed by hand (a run's page, a theme
/// file, a graph file of a run) were never written again: every later publish went without
/// them, its record saying the bucket held them. Now each publish checks the record against one
/// listing of the bucket (sizes), names what is not there as it published it, and writes it
/// again; the bucket is then a folder build's.
#[test]
fn objects_removed_or_changed_by_hand_are_named_and_written_again() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    let chunk = tree(&s3.objects("site/p/db/2026-11-02")).into_keys().find(|k| k.starts_with("g/") && k.contains("/c/")).unwrap();
    let chunk = format!("p/db/2026-11-02/{chunk}");
    for rel in ["p/api/2026-11-01/index.html", "static/flamesite.css", &chunk] {
        std::fs::remove_file(s3.objects(&format!("site/{rel}"))).unwrap();
    }
    std::fs::write(s3.objects("site/s/db/index.html"), b"defaced").unwrap();
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(9, 300).as_bytes()));
    let o = publish(&input, "site", s3.port);
    for (rel, then) in [
        ("p/api/2026-11-01/index.html", "written again"),
        ("static/flamesite.css", "written again"),
        ("s/db/index.html", "written again"),
        ("p/db/2026-11-02/", "its run was decoded again, and the site checked and written again"),
    ] {
        let told = format!("\nwarning: s3://{BUCKET}/site/{rel}: not in the bucket as the last build published it (removed or changed by hand?); {then}\n");
        assert!(format!("\n{}", stderr(&o)).contains(&told), "{rel} is named: {}", stderr(&o));
    }
    assert_same_site(&s3.site("site"), &folder_site(&input));
    let o = publish(&input, "site", s3.port);
    assert!(stderr(&o).contains("nothing changed") && !stderr(&o).contains("warning"), "{}", stderr(&o));
}

/// Files of the site's `static/` folder named with characters object_store percent-encodes
/// (`~`, `[`, `]`, `#`, `{`) were uploaded under the encoded key (`a%7Eb%5B1%5D.css`), where
/// no link of the site finds them. Now each is the object its name says, as a folder has it.
#[test]
fn static_files_of_any_name_are_the_objects_their_names_say() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    for name in ["a~b[1].css", "c#d e{2}.txt"] {
        write(&dir.path().join("static").join(name), name.as_bytes());
    }
    // The site's `static/`, beside its site.toml.
    write(&dir.path().join("site.toml"), b"static_dir = \"static\"\n");
    publish(&input, "site", s3.port);
    for name in ["a~b[1].css", "c#d e{2}.txt"] {
        assert_eq!(std::fs::read(s3.objects(&format!("site/{name}"))).ok(), Some(name.as_bytes().to_vec()), "{name}: {:?}", s3.site("site").keys().filter(|k| !k.contains('/')).collect::<Vec<_>>());
    }
    assert_same_site(&s3.site("site"), &folder_site(&input));
    // Kept as they are by the next publish, and removed by name when they go.
    std::fs::remove_file(dir.path().join("static/a~b[1].css")).unwrap();
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(9, 300).as_bytes()));
    publish(&input, "site", s3.port);
    assert!(!s3.objects("site/a~b[1].css").exists());
    assert_same_site(&s3.site("site"), &folder_site(&input));
}

#[test]
fn a_second_publisher_is_refused_while_one_publishes() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    let published = s3.site("site");
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(8, 300).as_bytes()));
    // The first publisher takes the lock, then its server stops answering.
    let stall = Proxy::start(s3.port, Fault::StallAfterPuts(1));
    let mut first = command(&input, "site", stall.port).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    stall.wait_until_stalled(1);
    let second = command(&input, "site", s3.port).output().unwrap();
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("another flamesite build is publishing to s3://archive/site"), "{err}");
    assert_eq!(s3.site("site"), published, "the refused publisher wrote nothing");
    first.kill().unwrap();
    first.wait().unwrap();
    publish(&input, "site", s3.port);
    assert_same_site(&s3.site("site"), &folder_site(&input));
}

/// `cmd` run by `sh` as pid `pid` of a PID namespace of its own (`unshare --pid`, as a container
/// of the same host runs it): the namespace's first process asks the kernel for that pid next.
/// Ending the returned child (unshare) ends the namespace and every process in it.
fn in_pid_namespace(cmd: &Command, pid: u32) -> Command {
    let probe = Command::new("unshare").args(["--pid", "--fork", "--mount-proc", "true"]).output();
    let made = probe.as_ref().is_ok_and(|o| o.status.success());
    assert!(made, "this test needs to make a PID namespace (`unshare --pid --fork --mount-proc`, as root; uid {}): {probe:?}", unsafe { libc::geteuid() });
    let mut c = Command::new("unshare");
    // `; exit` keeps the shell from replacing itself with the program: it is forked, as the
    // next pid.
    c.args(["--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", &format!("echo {} > /proc/sys/kernel/ns_last_pid && \"$0\" \"$@\"; exit $?", pid - 1)]);
    c.arg(cmd.get_program()).args(cmd.get_args());
    c.current_dir(cmd.get_current_dir().unwrap());
    for (k, v) in cmd.get_envs() {
        c.env(k, v.unwrap());
    }
    c
}

/// Two containers of one CI runner have the same host name and number their processes each from
/// 1: a publisher in the other one holds the lock with a pid that means nothing here.
#[test]
fn a_publisher_in_another_pid_namespace_of_this_host_keeps_its_lock() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    let published = s3.site("site");
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(9, 300).as_bytes()));
    // The holder's pid, in its namespace, is one that no process of this namespace has, as a
    // container's pid most often is from the host's side.
    let pid = (1000..32000).rev().find(|p| !Path::new(&format!("/proc/{p}")).exists()).unwrap();
    // The first publisher, in the other namespace, takes the lock; then its server stops
    // answering, and it waits, holding it.
    let stall = Proxy::start(s3.port, Fault::StallAfterPuts(1));
    // Its temporary folders in a folder of its own: named by a pid no process of this
    // namespace has, they would be taken for a killed publish's by the other tests' builds.
    let private = dir.path().join("tmp-of-the-other-namespace");
    std::fs::create_dir(&private).unwrap();
    let mut first = in_pid_namespace(command(&input, "site", stall.port).env("TMPDIR", &private), pid).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    stall.wait_until_stalled(1);
    let lock = String::from_utf8(std::fs::read(s3.objects("site/.flamesite/lock")).unwrap()).unwrap();
    assert!(lock.contains(&format!("\npid {pid}\n")), "the holder is the build in the other namespace: {lock}");
    // The second, in this namespace, finds no process with that pid here: it is refused all
    // the same, and writes nothing.
    let second = command(&input, "site", s3.port).output().unwrap();
    let err = stderr(&second);
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(second.status.code(), Some(2), "{err}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(
        err.contains(&format!("another flamesite build is publishing to s3://archive/site (host {}, pid {pid} in another PID namespace of this host", host.trim())),
        "{err}"
    );
    assert!(err.contains("lets go of it 120 s after it last renewed it"), "{err}");
    assert_eq!(s3.site("site"), published, "the refused publisher wrote nothing");
    assert!(s3.objects("site/.flamesite/lock").exists(), "the holder's lock stays");
}

#[test]
fn a_prefix_that_holds_another_site_is_refused_and_left_alone() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    write(&s3.objects("theirs/index.json"), b"{\"not\": \"ours\"}");
    let o = command(&input, "theirs", s3.port).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to publish to s3://archive/theirs: its index.json is not a flamesite site's"), "{}", stderr(&o));
    assert_eq!(tree(&s3.objects("theirs")).into_keys().collect::<Vec<_>>(), ["index.json"], "nothing written, the lock released");
    // An index.json that merely quotes a flamesite index's format is no more a site.
    write(&s3.objects("quotes/index.json"), br#"{"doc": "flamesite's says \"format\":\"flamesite-index\""}"#);
    write(&s3.objects("quotes/notes.txt"), b"a user's file");
    let o = command(&input, "quotes", s3.port).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("its index.json is not a flamesite site's"), "{}", stderr(&o));
    assert_eq!(tree(&s3.objects("quotes")).into_keys().collect::<Vec<_>>(), ["index.json", "notes.txt"], "nothing written or removed");
    // The record is what a bucket is published from: without the cache there is none.
    let o = command(&input, "site", s3.port).arg("--no-cache").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--no-cache: a site in object storage is published from the record"), "{}", stderr(&o));
    assert!(!s3.objects("site").exists());
}

/// Two sites, one inside the other's prefix: a publish of the outer one sweeps its folders
/// (`p/`), and the inner one's objects, its record included, would go with them.
#[test]
fn a_site_inside_another_sites_prefix_is_refused_both_ways_and_nothing_of_it_is_deleted() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    // A site inside a published one: refused before anything is written.
    publish(&input, "ov", s3.port);
    let outer = tree(&s3.objects("ov"));
    let o = command(&input, "ov/p/zz", s3.port).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refusing to publish to s3://archive/ov/p/zz: it is inside another flamesite site, s3://archive/ov (its record is s3://archive/ov/.flamesite/)")
            && err.contains("publish to a prefix outside s3://archive/ov"),
        "{err}"
    );
    assert_eq!(tree(&s3.objects("ov")), outer, "nothing written or deleted");
    // Nor does a shard store its part there.
    let o = command(&input, "ov/p/zz", s3.port).args(["--shard", "1/2"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("it is inside another flamesite site, s3://archive/ov"), "{}", stderr(&o));
    assert_eq!(tree(&s3.objects("ov")), outer, "nothing written or deleted");
    // A site over a published one: refused, and nothing of the inner one is touched.
    publish(&input, "in/p/zz", s3.port);
    let inner = tree(&s3.objects("in/p/zz"));
    assert!(inner.keys().any(|k| k.starts_with(".flamesite/")), "the inner site's record is there");
    let o = command(&input, "in", s3.port).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refusing to publish to s3://archive/in: another flamesite site is inside it, s3://archive/in/p/zz (its record is s3://archive/in/p/zz/.flamesite/)")
            && err.contains("move that site out of s3://archive/in"),
        "{err}"
    );
    let under_in: BTreeMap<String, Vec<u8>> = inner.iter().map(|(k, v)| (format!("p/zz/{k}"), v.clone())).collect();
    assert_eq!(tree(&s3.objects("in")), under_in, "every object under the prefix is the inner site's, and nothing else is left");
    // The two as a flamesite before issue 45 let them be: the inner one published inside the
    // outer one. A publish of the outer one that rewrites it (its record lost) sweeps its
    // folders and leaves the inner one's objects.
    for (rel, bytes) in &inner {
        write(&s3.objects(&format!("ov/p/zz/{rel}")), bytes);
    }
    std::fs::remove_file(s3.objects("ov/.flamesite/cache/state.bin.zst")).unwrap();
    write(&s3.objects("ov/p/api/2026-10-31/index.html"), b"a run the site no longer has");
    write(&input.join("db/2026-11-04.folded"), awkward_profile(23, 200).as_bytes());
    publish(&input, "ov", s3.port);
    assert!(!s3.objects("ov/p/api/2026-10-31/index.html").exists(), "the sweep removed the outer site's stale object");
    assert_eq!(tree(&s3.objects("ov/p/zz")), inner, "the inner site's objects are all there");
    // A publish of the outer one cut off half-way, then the next: refused, naming both, and
    // the inner site's objects are all there.
    write(&input.join("db/2026-11-05.folded"), awkward_profile(24, 200).as_bytes());
    let stall = Proxy::start(s3.port, Fault::StallAfterPuts(3));
    let mut child = command(&input, "ov", stall.port).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    stall.wait_until_stalled(3);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(s3.objects("ov/.flamesite/dirty").exists(), "the publish was cut off");
    let o = command(&input, "ov", s3.port).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("refusing to publish to s3://archive/ov: another flamesite site is inside it, s3://archive/ov/p/zz"), "{err}");
    assert_eq!(tree(&s3.objects("ov/p/zz")), inner, "the inner site's objects are all there");
}

/// A zstd frame of `blocks` blocks of 128 KiB of zeros, each written as a run (an RLE block of
/// four bytes): 218 kB unpack to 7 GB. A real frame any zstd decoder unpacks, made without
/// writing the gigabytes it unpacks to.
fn zstd_bomb(blocks: usize) -> Vec<u8> {
    // Magic number; a frame header with no content size; a window of 128 KiB (2^17).
    let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38];
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        // Block header (24 bits, little-endian): size 128 KiB, type 1 (RLE), last block; then
        // the byte repeated.
        frame.extend_from_slice(&((128 << 10 << 3) | (1 << 1) | last).to_le_bytes()[..3]);
        frame.push(0);
    }
    frame
}

/// `command` under a 4 GiB address-space limit: what unpacks or reads gigabytes whole aborts
/// there (exit 134) rather than take the machine's memory.
fn limited(input: &Path, prefix: &str, port: u16) -> Output {
    let mut cmd = command(input, prefix, port);
    limit(&mut cmd, 4 << 30, 600);
    cmd.output().unwrap()
}

/// Issue 45, item 9: the build state a bucket keeps (`.flamesite/cache/state-data.bin.zst`,
/// then the header `state.bin.zst`) replaced by a zstd bomb of 218 kB that unpacks to 7 GB is
/// unpacked as it streams to a file, within 512 MiB: past it, a warning names the object and
/// the build starts afresh from the published listings (exit 0, the site a folder build's), and
/// the lock is let go of. Before, it was unpacked whole into memory: the build aborted (exit
/// 134) and left the lock behind.
#[test]
fn a_zstd_bomb_as_the_buckets_build_state_is_named_and_the_build_starts_afresh() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    let bomb = zstd_bomb(54_500);
    assert!(bomb.len() < 220_000, "{}", bomb.len());
    // It is a bomb: past a gibibyte of its 7 GB, still unpacking.
    let unpacked = std::io::copy(&mut zstd::stream::read::Decoder::new(&bomb[..]).unwrap().take(1 << 30), &mut std::io::sink()).unwrap();
    assert_eq!(unpacked, 1 << 30);
    for (round, name) in ["state-data.bin", "state.bin"].into_iter().enumerate() {
        write(&s3.objects(&format!("site/.flamesite/cache/{name}.zst")), &bomb);
        write(&input.join(format!("db/2026-11-0{}.folded", round + 4)), awkward_profile(70 + round as u64, 200).as_bytes());
        let o = limited(&input, "site", s3.port);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
        assert!(
            err.contains(&format!("s3://{BUCKET}/site/.flamesite/cache/{name}.zst: unpacks to more than the 536870912 bytes a build state may be; the build state is not read")),
            "{name}: {err}"
        );
        assert!(!s3.objects("site/.flamesite/lock").exists(), "{name}: the lock is let go of");
        assert_same_site(&s3.site("site"), &folder_site(&input));
    }
}

/// The name s3s-fs gives the file that keeps an object's ETag (and checksums) beside it.
fn s3s_fs_info(s3: &S3, key: &str) -> PathBuf {
    // base64, URL-safe alphabet, no padding, as s3s-fs encodes the bucket and the key.
    let b64 = |s: &str| {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let bits: Vec<u8> = s.bytes().flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1)).collect();
        bits.chunks(6).map(|c| ALPHABET[c.iter().chain(std::iter::repeat(&0)).take(6).fold(0, |a, b| a << 1 | *b as usize)] as char).collect::<String>()
    };
    s3.root.path().join(format!(".bucket-{}.object-{}.internal.json", b64(BUCKET), b64(key)))
}

/// Issue 45, item 9: an `index.json` object of 6 GB at the prefix (a sparse file where s3s-fs
/// keeps it) is refused by the length its GET answers with, before its body is read: exit 2,
/// the message names the object and its size, nothing is written and the lock is let go of.
/// Before, its body was read whole into memory: the build aborted (exit 134) and left the lock.
#[test]
fn an_index_json_object_of_6_gb_is_refused_by_its_length_before_it_is_read() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    let big = s3.objects("big/index.json");
    std::fs::create_dir_all(big.parent().unwrap()).unwrap();
    std::fs::File::create(&big).unwrap().set_len(6 << 30).unwrap();
    // Its ETag, kept where s3s-fs keeps them, so that the server does not hash 6 GB at the GET.
    write(&s3s_fs_info(&s3, "big/index.json"), br#"{"e_tag":"0123456789abcdef0123456789abcdef"}"#);
    let o = limited(&input, "big", s3.port);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("s3://{BUCKET}/big/index.json: is {} bytes, more than the {} such an object may be", 6u64 << 30, 256 << 20)), "{err}");
    let objects: Vec<String> = walkdir::WalkDir::new(s3.objects("big")).into_iter().flatten().filter(|e| e.file_type().is_file()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(objects, ["index.json"], "nothing written, the lock let go of");
}

/// Issue 45, item 13: a publish that reads back a file of the published site (the manifests a
/// series' history is made of) through a server that resets the connection at every try fails
/// with a message naming the object's address and the server's error, not a local file.
/// Before, it said a file of the build's temporary folder was missing, naming no server.
#[test]
fn a_connection_reset_while_reading_the_site_back_is_reported_with_the_object_and_the_server() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(9, 300).as_bytes()));
    let faults = Proxy::start(s3.port, Fault::ResetGets("/site/p/api/2026-11-01/g/"));
    let o = command(&input, "site", faults.port).output().unwrap();
    let err = stderr(&o);
    assert!(faults.dropped.load(Ordering::SeqCst) > 0, "nothing was read back: {err}");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("reading the published site back: s3://{BUCKET}/site/p/api/2026-11-01/g/")), "{err}");
    assert!(err.contains(&format!("http://127.0.0.1:{}/{BUCKET}/site/p/api/2026-11-01/g/", faults.port)), "the server is named: {err}");
    assert!(!err.contains(".published.tmp"), "no local file is named: {err}");
    assert!(!s3.objects("site/.flamesite/lock").exists(), "the lock is let go of");
    // Through a server that answers, the next publish goes through.
    publish(&input, "site", s3.port);
    assert_same_site(&s3.site("site"), &folder_site(&input));
}

/// The folders in `tmp` with flamesite's temporary names.
fn flamesite_temp_folders(tmp: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("flamesite-")).collect();
    names.sort();
    names
}

/// Issue 45, item 13: a publish killed half-way leaves its spool (`flamesite-publish-PID-…`)
/// and its copy of the record (`flamesite-PID-….cache`) in the temporary folder, which nothing
/// else removes; the next publish removes them (their process is gone), and only them: a
/// folder of flamesite's names whose process is alive, and other names, stay. Before, they
/// stayed for ever, one pair per killed publish.
#[test]
fn temporary_folders_a_killed_publish_leaves_are_removed_by_the_next() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    publish(&input, "site", s3.port);
    write(&input.join("db/2026-11-04.folded"), awkward_profile(31, 200).as_bytes());
    let stall = Proxy::start(s3.port, Fault::StallAfterPuts(5));
    let mut child = command(&input, "site", stall.port).env("TMPDIR", &tmp).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    stall.wait_until_stalled(5);
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let left = flamesite_temp_folders(&tmp);
    assert!(left.iter().any(|n| n.starts_with(&format!("flamesite-publish-{pid}-"))), "{left:?}");
    assert!(left.iter().any(|n| n.starts_with(&format!("flamesite-{pid}-")) && n.ends_with(".cache")), "{left:?}");
    // What a killed publish that read profiles from a bucket leaves; a folder of a live process
    // (this test's), and names that are not flamesite's own.
    let ours = std::process::id();
    for name in [format!("flamesite-input-{pid}-12"), format!("flamesite-publish-{ours}-7"), "flamesite-notes".into(), format!("flamesite-{pid}-notahash.cache")] {
        std::fs::create_dir(tmp.join(name)).unwrap();
    }
    let o = command(&input, "site", s3.port).env("TMPDIR", &tmp).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(flamesite_temp_folders(&tmp), [format!("flamesite-{pid}-notahash.cache"), "flamesite-notes".into(), format!("flamesite-publish-{ours}-7")]);
    assert_same_site(&s3.site("site"), &folder_site(&input));
}

/// What the proxy in front of the server does to what it forwards.
#[derive(Clone, Copy)]
enum Fault {
    /// Nothing: it forwards and logs.
    None,
    /// Forwards everything until it has seen this many requests that write (PUT), then holds
    /// every connection without answering: a server that stops answering half-way through a
    /// publish.
    StallAfterPuts(usize),
    /// Each piece of a request or answer it forwards is, with probability `p`, the last (both
    /// sides are shut). Seeded, so that a failure can be run again with the same faults.
    Drop { seed: u64, p: f64 },
    /// Every GET whose path contains this is not forwarded: its connection is shut (a
    /// connection reset), at each retry too.
    ResetGets(&'static str),
    /// Forwards every request until the one that writes (PUT, POST, DELETE) for the `n`th
    /// time (from 1), which it holds, and every later one: the server never sees it. The
    /// publisher is then killed: a publish cut off just before its `n`th write.
    HoldWrite(usize),
    /// The answers to the first `n` listings (GET `?list-type=2`) are cut off in their body:
    /// the head and half of what came of the body are forwarded, then the connection is shut.
    CutListings(usize),
}

/// A TCP proxy in front of the server, which logs the requests it forwards and injects
/// `Fault`s.
struct Proxy {
    port: u16,
    /// Requests that write (PUT; for `HoldWrite`, PUT, POST and DELETE) seen so far; for
    /// `CutListings`, the listings asked for so far.
    puts: Arc<AtomicUsize>,
    /// Connections dropped so far.
    dropped: Arc<AtomicUsize>,
    /// The request lines the server was sent, in order: method and path.
    requests: Arc<std::sync::Mutex<Vec<(String, String)>>>,
}

impl Proxy {
    fn start(to: u16, fault: Fault) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let proxy = Proxy { port, puts: Arc::default(), dropped: Arc::default(), requests: Arc::default() };
        let (puts, dropped, requests) = (proxy.puts.clone(), proxy.dropped.clone(), proxy.requests.clone());
        std::thread::spawn(move || {
            for (n, client) in listener.incoming().flatten().enumerate() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else { continue };
                let mut draws: Vec<bool> = match fault {
                    Fault::Drop { seed, p } => {
                        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (n as u64 + 1);
                        (0..4096)
                            .map(|_| {
                                state ^= state << 13;
                                state ^= state >> 7;
                                state ^= state << 17;
                                (state >> 11) as f64 / (1u64 << 53) as f64 <= p
                            })
                            .collect()
                    }
                    Fault::None | Fault::StallAfterPuts(_) | Fault::ResetGets(_) | Fault::HoldWrite(_) | Fault::CutListings(_) => Vec::new(),
                };
                let up = draws.split_off(draws.len() / 2);
                // (CutListings: the request's side says that the next answer is a listing to cut.)
                let cut_next = Arc::new(AtomicBool::new(false));
                let pairs = [(client.try_clone().unwrap(), server.try_clone().unwrap(), up), (server, client, draws)];
                for (i, (mut from, mut to, drops)) in pairs.into_iter().enumerate() {
                    let (puts, dropped, cut_next) = (puts.clone(), dropped.clone(), cut_next.clone());
                    // Requests go one way, from the client.
                    let log = (i == 0).then(|| requests.clone());
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16384];
                        for drop in drops.into_iter().chain(std::iter::repeat(false)) {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            if drop {
                                dropped.fetch_add(1, Ordering::SeqCst);
                                break;
                            }
                            if log.is_none() && cut_next.swap(false, Ordering::SeqCst) {
                                // An answer to a listing: its head, then half of its body.
                                let mut answer = buf[..n].to_vec();
                                let head = loop {
                                    if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                                        if answer.len() > end + 4 {
                                            break end + 4;
                                        }
                                    }
                                    match from.read(&mut buf) {
                                        Ok(0) | Err(_) => break answer.len(),
                                        Ok(n) => answer.extend_from_slice(&buf[..n]),
                                    }
                                };
                                let _ = to.write_all(&answer[..head + (answer.len() - head) / 2]);
                                let _ = to.flush();
                                dropped.fetch_add(1, Ordering::SeqCst);
                                break;
                            }
                            if let Some(log) = &log {
                                // Request lines are written whole, each at the start of a write.
                                let text = String::from_utf8_lossy(&buf[..n]);
                                let mut words = text.split(' ');
                                if let (Some(m @ ("PUT" | "GET" | "POST" | "DELETE" | "HEAD")), Some(path)) = (words.next(), words.next()) {
                                    log.lock().unwrap().push((m.to_string(), path.split('?').next().unwrap().to_string()));
                                    if let Fault::ResetGets(pattern) = fault {
                                        if m == "GET" && path.contains(pattern) {
                                            dropped.fetch_add(1, Ordering::SeqCst);
                                            break;
                                        }
                                    }
                                    if let Fault::CutListings(limit) = fault {
                                        if m == "GET" && path.contains("list-type=2") && puts.fetch_add(1, Ordering::SeqCst) < limit {
                                            cut_next.store(true, Ordering::SeqCst);
                                        }
                                    }
                                    if let Fault::HoldWrite(n) = fault {
                                        if matches!(m, "PUT" | "POST" | "DELETE") && puts.fetch_add(1, Ordering::SeqCst) + 1 >= n {
                                            std::thread::sleep(Duration::from_secs(3600));
                                        }
                                    }
                                }
                                let seen = buf[..n].windows(5).filter(|w| w == b"PUT /").count();
                                if let Fault::StallAfterPuts(limit) = fault {
                                    if puts.fetch_add(seen, Ordering::SeqCst) + seen > limit {
                                        // Hold the connection: nothing more reaches the server.
                                        std::thread::sleep(Duration::from_secs(3600));
                                    }
                                }
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        // Both sockets, both ways: the connection is gone for both threads.
                        let _ = from.shutdown(std::net::Shutdown::Both);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        proxy
    }

    /// Waits until a `StallAfterPuts(limit)` proxy holds a request it will not forward (a
    /// `HoldWrite(n)` proxy: `wait_until_stalled(n - 1)`).
    fn wait_until_stalled(&self, limit: usize) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.puts.load(Ordering::SeqCst) <= limit {
            assert!(Instant::now() < deadline, "the publish never reached its {}th write", limit + 1);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Asserts that a publish sent no page before every file of its folder's graphs (retries
/// included), and no listing before every page: the order a reader can never see a broken
/// page in. A publish that went through sent some of each; one that failed may have stopped
/// anywhere, and what it did send keeps the order.
#[track_caller]
fn assert_files_then_pages_then_listings(requests: &[(String, String)], went_through: bool) {
    let puts: Vec<&str> = requests.iter().filter(|(m, _)| m == "PUT").filter_map(|(_, p)| p.strip_prefix(&format!("/{BUCKET}/site/"))).collect();
    let last = |pred: &dyn Fn(&str) -> bool| puts.iter().rposition(|k| pred(k));
    let first = |pred: &dyn Fn(&str) -> bool| puts.iter().position(|k| pred(k));
    let listing = |k: &str| k == "index.json" || k == "index.html" || k.ends_with("feed.xml") || k.starts_with("s/") && k.ends_with("/index.json");
    let page = |k: &str| k.ends_with(".html") && !listing(k);
    let file = |k: &str| !k.starts_with(".flamesite/") && !page(k) && !listing(k);
    if went_through {
        assert!(puts.iter().any(|k| page(k)) && puts.iter().any(|k| file(k)), "the publish wrote pages and files: {puts:?}");
    }
    // A kind never sent is before or after anything.
    let before = |a: Option<usize>, b: Option<usize>| a.zip(b).is_none_or(|(a, b)| a < b);
    assert!(before(last(&file), first(&page)), "a page was sent before the last file: {puts:?}");
    assert!(before(last(&|k| page(k)), first(&listing)), "a listing was sent before the last page: {puts:?}");
    assert!(before(last(&file), first(&listing)), "a listing was sent before the last file: {puts:?}");
}

#[test]
fn a_server_that_drops_connections_at_random_is_sent_files_then_pages_then_listings() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    let folder = dir.path().join("folder");
    publish(&input, "site", s3.port);
    assert!(build(&input, &folder, &[]).status.success());
    let mut failed = 0;
    for seed in 1..=4u64 {
        write(&input.join(format!("api/2026-11-{:02}.folded.gz", 3 + seed)), &gzip(awkward_profile(40 + seed, 300).as_bytes()));
        assert!(build(&input, &folder, &[]).status.success());
        let faults = Proxy::start(s3.port, Fault::Drop { seed, p: 0.1 });
        let o = command(&input, "site", faults.port).output().unwrap();
        assert!(faults.dropped.load(Ordering::SeqCst) > 0, "seed {seed}: the proxy dropped no connection");
        if !o.status.success() {
            failed += 1;
            assert_eq!(o.status.code(), Some(2), "seed {seed}: {}", stderr(&o));
            assert!(stderr(&o).contains("error: "), "seed {seed}: {}", stderr(&o));
            eprintln!("seed {seed}: the publish failed: {}", stderr(&o));
        }
        assert_files_then_pages_then_listings(&faults.requests.lock().unwrap(), o.status.success());
    }
    // object_store retries a request whose connection was dropped (up to 10 times), so most
    // publishes go through; a publish that fails is repaired by the next.
    eprintln!("{failed} of 4 publishes through dropped connections failed (the others retried through)");
    publish(&input, "site", s3.port);
    assert_same_site(&s3.site("site"), &tree(&folder));
    assert!(!s3.objects("site/.flamesite/dirty").exists() && !s3.objects("site/.flamesite/lock").exists());
}

#[test]
fn a_listing_whose_answer_is_cut_off_is_asked_for_again() {
    // object_store retries a request that fails, and a download cut off, but not the body of a
    // listing: a connection dropped while a listing came back failed the whole publish, which
    // lists the site at every publish to check it against its record.
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    write(&input.join("api/2026-11-09.folded"), awkward_profile(9, 200).as_bytes());
    let cuts = Proxy::start(s3.port, Fault::CutListings(2));
    let o = command(&input, "site", cuts.port).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(cuts.dropped.load(Ordering::SeqCst), 2, "two listings were cut off");
    let folder = dir.path().join("folder");
    assert!(build(&input, &folder, &[]).status.success());
    assert_same_site(&s3.site("site"), &tree(&folder));
}

#[test]
fn three_shards_then_a_build_publish_the_site_one_build_publishes() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    for svc in ["web", "queue", "cron"] {
        write(&input.join(format!("{svc}/2026-11-01.folded")), awkward_profile(svc.len() as u64 + 60, 150).as_bytes());
    }
    publish(&input, "single", s3.port);
    // Three machines, each with nothing but the binary, decode a part each.
    let mut decoded = 0;
    for i in 1..=3 {
        let o = command(&input, "sharded", s3.port).arg("--shard").arg(format!("{i}/3")).output().unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        let n: usize = err.split(" decoded").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("{err}"));
        assert!(err.contains(&format!("shard {i}/3: ")) && err.contains("stored in s3://archive/sharded/.flamesite/cache"), "{err}");
        decoded += n;
        assert!(!s3.objects("sharded/index.json").exists(), "a shard publishes nothing");
    }
    assert_eq!(decoded, 9, "every profile decoded once, by one shard");
    // A shard run again finds its part stored.
    let again = command(&input, "sharded", s3.port).args(["--shard", "2/3"]).output().unwrap();
    assert!(stderr(&again).contains(" 0 decoded"), "{}", stderr(&again));
    let o = publish(&input, "sharded", s3.port);
    assert!(stderr(&o).contains("0 decoded, 9 from the cache"), "{}", stderr(&o));
    assert_same_site(&s3.site("sharded"), &s3.site("single"));
    // The stored files are in the site now: the store keeps the records only.
    let left: Vec<String> = tree(&s3.objects("sharded/.flamesite/cache")).into_keys().filter(|k| k.contains("/files/")).collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(command(&input, "sharded", s3.port).args(["--shard", "4/3"]).output().unwrap().status.code() == Some(2));
}

#[test]
fn profiles_in_a_bucket_are_read_only_when_new_or_changed() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    // The same profiles as objects, with a site published under the same prefix.
    for (rel, bytes) in tree(&input) {
        write(&s3.objects(&format!("data/{rel}")), &bytes);
    }
    let from_bucket = |port: u16| {
        command_from(&format!("s3://{BUCKET}/data"), dir.path(), "data/site", port).output().unwrap()
    };
    let o = from_bucket(s3.port);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("6 decoded"), "the published site is not read as profiles: {}", stderr(&o));
    let folder = dir.path().join("folder");
    assert!(build(&input, &folder, &[]).status.success());
    assert_same_site(&s3.site("data/site"), &tree(&folder));
    // One object added: only it is downloaded.
    write(&s3.objects("data/db/2026-11-04.folded"), awkward_profile(33, 200).as_bytes());
    write(&input.join("db/2026-11-04.folded"), awkward_profile(33, 200).as_bytes());
    let log = Proxy::start(s3.port, Fault::None);
    let o = from_bucket(log.port);
    assert!(stderr(&o).contains("1 decoded") && stderr(&o).contains("6 unchanged"), "{}", stderr(&o));
    let gets: Vec<String> = log.requests.lock().unwrap().iter().filter(|(m, p)| m == "GET" && p.starts_with("/archive/data/") && !p.starts_with("/archive/data/site/")).map(|(_, p)| p.clone()).collect();
    assert_eq!(gets, ["/archive/data/db/2026-11-04.folded"]);
    assert!(build(&input, &folder, &[]).status.success());
    assert_same_site(&s3.site("data/site"), &tree(&folder));
    // An object written again with other bytes of the same size is read again.
    let changed = std::fs::read(s3.objects("data/db/2026-11-04.folded")).unwrap().iter().map(|b| if *b == b'9' { b'8' } else { *b }).collect::<Vec<u8>>();
    write(&s3.objects("data/db/2026-11-04.folded"), &changed);
    let o = from_bucket(s3.port);
    assert!(stderr(&o).contains("1 decoded"), "{}", stderr(&o));
}

#[test]
fn a_lock_of_a_publisher_that_died_elsewhere_is_taken_over_once_its_lease_runs_out() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    publish(&input, "site", s3.port);
    write(&input.join("db/2026-11-04.folded"), awkward_profile(51, 200).as_bytes());
    let lock = |renewed: &str| format!("token 1-1\nhost a-machine-that-died\npid 4242\nsince 2026-11-26T01:00:00Z\nrenewed {renewed}\n");
    // Renewed a moment ago on another machine: it is publishing.
    let now = jiff::Timestamp::now().to_string();
    write(&s3.objects("site/.flamesite/lock"), lock(&now).as_bytes());
    let o = command(&input, "site", s3.port).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("another flamesite build is publishing to s3://archive/site (host a-machine-that-died, pid 4242"), "{}", stderr(&o));
    assert!(stderr(&o).contains("lets go of it 120 s after it last renewed it"), "{}", stderr(&o));
    // Last renewed ten minutes ago: its holder is gone, and the lock is taken over.
    let old = jiff::Timestamp::now().checked_sub(jiff::SignedDuration::from_secs(600)).unwrap().to_string();
    write(&s3.objects("site/.flamesite/lock"), lock(&old).as_bytes());
    let o = publish(&input, "site", s3.port);
    assert!(stderr(&o).contains("1 decoded"), "{}", stderr(&o));
    assert!(!s3.objects("site/.flamesite/lock").exists(), "released at the end");
}

/// The commands of a recipe in `docs/ci/`, run as written on a fresh folder: the site.toml the
/// recipe expects (profiles in `profiles`, the site in the bucket), the bucket's endpoint and
/// credentials in the environment, and `flamesite` on the PATH.
struct Recipe {
    dir: tempfile::TempDir,
    port: u16,
}

impl Recipe {
    fn new(s3: &S3, prefix: &str) -> Recipe {
        let dir = tempfile::tempdir().unwrap();
        let input = profiles(dir.path());
        for svc in ["web", "queue", "cron"] {
            write(&input.join(format!("{svc}/2026-11-01.folded")), awkward_profile(svc.len() as u64 + 60, 150).as_bytes());
        }
        write(&dir.path().join("site/site.toml"), format!("input = \"../profiles\"\noutput = \"s3://{BUCKET}/{prefix}\"\n").as_bytes());
        write(&dir.path().join("site.toml"), format!("input = \"profiles\"\noutput = \"s3://{BUCKET}/{prefix}\"\n").as_bytes());
        Recipe { dir, port: s3.port }
    }

    /// Runs `line` with `sh -c` in the recipe's folder, `/site` and `/profiles` (the
    /// Kubernetes recipe's mounts) standing for its folders; fails the test if it fails.
    fn run(&self, line: &str, env: &[(&str, String)]) -> String {
        let root = self.dir.path().to_str().unwrap();
        let line = line.replace("/site/site.toml", &format!("{root}/site/site.toml")).replace(" /profiles", &format!(" {root}/profiles"));
        let path = format!("{}:{}", bin().parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
        let o = Command::new("sh")
            .args(["-c", &line])
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("AWS_ACCESS_KEY_ID", "flamesite")
            .env("AWS_SECRET_ACCESS_KEY", "flamesite-secret")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ENDPOINT", format!("http://127.0.0.1:{}", self.port))
            .env("AWS_ALLOW_HTTP", "true")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        assert!(o.status.success(), "{line}: {}", stderr(&o));
        stderr(&o)
    }
}

/// The documented recipes for building on several machines (README "More than one machine"):
/// the GitHub Actions matrix and the Kubernetes Indexed Job, their `flamesite` commands run as
/// the files give them, publish what one build publishes.
#[test]
fn the_ci_recipes_in_docs_decode_on_three_machines_and_publish_what_one_build_does() {
    let s3 = S3::start();
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci");
    // GitHub Actions: the decode job once per value of its matrix, then the publish job.
    let gha = std::fs::read_to_string(docs.join("github-actions.yml")).unwrap();
    let runs: Vec<&str> = gha.lines().filter_map(|l| l.trim().strip_prefix("- run: ")).filter(|c| c.starts_with("flamesite ")).collect();
    assert_eq!(runs.len(), 2, "the workflow's flamesite steps: {runs:?}");
    let matrix = gha.lines().find_map(|l| l.trim().strip_prefix("shard: [")).expect("the workflow's shard matrix");
    let shards: Vec<&str> = matrix.trim_end_matches(']').split(',').map(str::trim).collect();
    assert_eq!(shards, ["1", "2", "3"]);
    let recipe = Recipe::new(&s3, "gha");
    assert!(runs[0].contains("${{ matrix.shard }}"), "{}", runs[0]);
    for shard in &shards {
        let err = recipe.run(&runs[0].replace("${{ matrix.shard }}", shard), &[]);
        assert!(err.contains(&format!("shard {shard}/3: ")), "{err}");
    }
    let err = recipe.run(runs[1], &[]);
    assert!(err.contains("0 decoded, 9 from the cache"), "the publish job decodes nothing: {err}");
    // Kubernetes: the Indexed Job's pods (JOB_COMPLETION_INDEX 0, 1, 2), then the publish Job.
    let k8s = std::fs::read_to_string(docs.join("kubernetes-indexed-job.yaml")).unwrap();
    let commands: Vec<Vec<String>> = k8s.lines().filter_map(|l| l.trim().strip_prefix("command: ")).map(|c| serde_json::from_str(c).unwrap()).collect();
    assert_eq!(commands.len(), 2, "the Jobs' commands: {commands:?}");
    assert_eq!(commands[0][..2], ["sh", "-c"], "{:?}", commands[0]);
    let recipe = Recipe::new(&s3, "k8s");
    for index in 0..3 {
        let err = recipe.run(&commands[0][2], &[("JOB_COMPLETION_INDEX", index.to_string())]);
        assert!(err.contains(&format!("shard {}/3: ", index + 1)), "{err}");
    }
    let err = recipe.run(&commands[1].join(" "), &[]);
    assert!(err.contains("0 decoded, 9 from the cache"), "the publish Job decodes nothing: {err}");
    // Both publish what one build of the same profiles to a folder publishes.
    let want = folder_site(&recipe.dir.path().join("profiles"));
    assert_same_site(&s3.site("gha"), &want);
    assert_same_site(&s3.site("k8s"), &want);
}

/// A bucket served without a website endpoint (S3's REST endpoint) answers only for objects:
/// with `links = "index.html"`, every link of every page of the published site names an object
/// the bucket holds, after a run is added too.
#[test]
fn with_index_html_links_every_link_of_the_bucket_names_an_object() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let input = profiles(dir.path());
    write(&dir.path().join("site.toml"), b"links = \"index.html\"\n");
    publish(&input, "files", s3.port);
    let pages = crawl_with(&s3.objects("files"), false);
    assert!(pages.len() > 10, "the crawl reached the run and comparison pages: {pages:?}");
    write(&input.join("api/2026-11-04.folded.gz"), &gzip(awkward_profile(8, 300).as_bytes()));
    let o = publish(&input, "files", s3.port);
    assert!(stderr(&o).contains("1 decoded"), "{}", stderr(&o));
    let again = crawl_with(&s3.objects("files"), false);
    assert!(again.iter().any(|p| p.starts_with("p/api/2026-11-04")), "the added run is linked: {again:?}");
}

/// Issue 45, item 11: object keys S3 allows but a file system or object_store would not take
/// as they are. An object is read by the key it was listed with: `café/ü.folded`,
/// `%2e%2e/x.folded` and `run~1.folded` were looked for under keys encoded a second time
/// (`caf%25C3%25A9`), not found, and skipped as `No such file or directory`; they build, each
/// at a URL of its own. A key object_store cannot address (a newline, a tab) failed the whole
/// listing, and the build, exit 2; each is now named (escaped) with why, and skipped, exit 1,
/// as a profile that cannot be read is; the others build.
#[test]
fn objects_with_keys_of_any_characters_are_read_or_named_and_the_rest_build() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let keys = ["api/2026-11-01.folded", "café/ü.folded", "%2e%2e/x.folded", "run~1.folded", "a\nb.folded", "tab\there.folded"];
    for (i, key) in keys.iter().enumerate() {
        write(&s3.objects(&format!("data/{key}")), format!("main;k{i} 3\n").as_bytes());
    }
    let o = command_from(&format!("s3://{BUCKET}/data"), dir.path(), "site", s3.port).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for (key, why) in [("a\\nb.folded", "its key holds a control character"), ("tab\\there.folded", "its key holds a control character")] {
        let line = format!("error: s3://{BUCKET}/data/{key}: {why}, which the object storage client flamesite uses cannot read; skipped: rename the object to build it");
        assert!(err.lines().any(|l| l == line), "{key}: {err}");
    }
    assert!(err.contains("built 4 profiles") && err.contains("skipped 2"), "{err}");
    assert!(!err.contains("No such file"), "{err}");
    // Each profile read is on the site, at a URL of its own, with its own stacks.
    let index: serde_json::Value = serde_json::from_slice(&std::fs::read(s3.objects("site/index.json")).unwrap()).unwrap();
    let mut runs: BTreeMap<String, String> = BTreeMap::new();
    for series in index["series"].as_array().unwrap() {
        let listing: serde_json::Value = serde_json::from_slice(&std::fs::read(s3.objects(&format!("site/{}", series["index"].as_str().unwrap()))).unwrap()).unwrap();
        for p in listing["profiles"].as_array().unwrap() {
            runs.insert(p["source"].as_str().unwrap().to_string(), p["slug"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(runs.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["%2e%2e/x.folded", "api/2026-11-01.folded", "café/ü.folded", "run~1.folded"]);
    let slugs: std::collections::BTreeSet<String> = runs.values().map(|s| s.to_lowercase()).collect();
    assert_eq!(slugs.len(), 4, "{runs:?}");
    for (source, slug) in &runs {
        assert!(slug.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b)) && !slug.split('/').any(|p| p.chars().all(|c| c == '.')), "{source}: {slug}");
        let i = keys.iter().position(|k| k == source).unwrap();
        let names = unpacked(&s3.objects(&format!("site/p/{slug}/g/samples/n/0.json.gz")));
        assert!(String::from_utf8_lossy(&names).contains(&format!("k{i}")), "{source}");
    }
    // A second build reads the same, and says the same.
    let o = command_from(&format!("s3://{BUCKET}/data"), dir.path(), "site", s3.port).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("built 4 profiles") && stderr(&o).contains("skipped 2"), "{}", stderr(&o));
}
