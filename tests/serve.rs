//! `flamesite serve` as a user runs it: the site is built, served on 127.0.0.1, and rebuilt
//! when a profile is added or removed, or a sidecar, notes, a template or site.toml changes,
//! and open pages reload.


use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A plain HTTP/1.0 GET: (status, body).
/// The profiles the served site lists: its `index.json`'s series, each series' listing fetched.
fn served_profiles(port: u16) -> Vec<serde_json::Value> {
    let json = |path: &str| -> serde_json::Value { serde_json::from_slice(&get(port, path).unwrap_or_else(|| panic!("{path}")).1).unwrap() };
    let index = json("/index.json");
    let mut profiles = Vec::new();
    for s in index["series"].as_array().unwrap() {
        profiles.extend(json(&format!("/{}", s["index"].as_str().unwrap()))["profiles"].as_array().unwrap().iter().cloned());
    }
    profiles
}

fn get(port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, raw[split + 4..].to_vec()))
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn serve_builds_serves_and_rebuilds_on_change() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("profiles");
    write(&input.join("api/run1.folded"), b"main;a 3\nmain;b 4\n");
    write(&dir.path().join("site.toml"), b"title = \"served\"\n");
    let port = free_port();
    let server = Server(
        Command::new(bin())
            .args(["serve", "--port", &port.to_string()])
            .current_dir(dir.path())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for("the server", || get(port, "/").is_some());

    let (status, body) = get(port, "/").unwrap();
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("served"));
    let (status, manifest) = get(port, "/p/api/run1/g/samples/manifest.json").unwrap();
    assert_eq!(status, 200);
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(manifest["total"], 7);
    let chunk = manifest["chunks"][0]["file"].as_str().unwrap();
    let (status, bytes) = get(port, &format!("/p/api/run1/g/samples/{chunk}")).unwrap();
    // Packed as stored (docs/FORMAT.md, "Packed files"), and a chunk inside.
    assert_eq!((status, &bytes[..2]), (200, &[0x1f, 0x8b][..]));
    let mut inner = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut inner).unwrap();
    assert_eq!(&inner[..4], b"FSCH");
    // A page folder without its slash is redirected, so that its relative links work.
    assert_eq!(get(port, "/p/api/run1").unwrap().0, 301);
    assert_eq!(get(port, "/p/api/run1/").unwrap().0, 200);
    assert_eq!(get(port, "/nothing-here").unwrap().0, 404);
    assert_eq!(get(port, "/../site.toml").unwrap().0, 400);
    assert_eq!(get(port, "/%2e%2e/site.toml").unwrap().0, 400);
    // Connections a browser opens ahead of need and leaves idle do not hold up the requests
    // that follow on other connections, sixteen of them at once (a page's first requests).
    let idle: Vec<TcpStream> = (0..16).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()).collect();
    let asks: Vec<_> = (0..16).map(|_| std::thread::spawn(move || get(port, "/static/main.js").map(|(s, _)| s))).collect();
    for ask in asks {
        assert_eq!(ask.join().unwrap(), Some(200), "every request answered within 5 s");
    }
    drop(idle);

    // A new profile appears after the rebuild.
    write(&input.join("api/run2.folded"), b"main;c 5\n");
    wait_for("the rebuild", || get(port, "/p/api/run2/").is_some_and(|(s, _)| s == 200));
    assert_eq!(served_profiles(port).len(), 2);

    // Open pages poll the build counter and reload when it changes.
    let (_, page) = get(port, "/p/api/run1/").unwrap();
    assert!(String::from_utf8_lossy(&page).contains("/__flamesite/generation"), "served pages get the reload script");
    let generation = || String::from_utf8(get(port, "/__flamesite/generation").unwrap().1).unwrap();
    let before = generation();
    // Notes, templates and site.toml are watched too.
    write(&input.join("api/run1.md"), b"Incident [INC-7](https://tracker.example.com/INC-7)\n");
    wait_for("the notes", || get(port, "/p/api/run1/").is_some_and(|(_, b)| String::from_utf8_lossy(&b).contains("INC-7")));
    // The new site is swapped in before the counter moves: wait for it, within the deadline.
    wait_for("a rebuild telling open pages to reload", || generation() != before);
    write(&dir.path().join("theme/templates/index.html"), b"<!doctype html><p>custom home {{ runs }}</p>");
    wait_for("the template", || get(port, "/").is_some_and(|(_, b)| String::from_utf8_lossy(&b).contains("custom home 2")));
    write(&dir.path().join("site.toml"), b"title = \"renamed\"\n");
    wait_for("site.toml", || get(port, "/p/api/run1/").is_some_and(|(_, b)| String::from_utf8_lossy(&b).contains("renamed")));
    // A sidecar edited: the run's title changes, at the same URL.
    write(&input.join("api/run1.toml"), b"title = \"Corrected title 7\"\n");
    wait_for("the sidecar", || get(port, "/p/api/run1/").is_some_and(|(_, b)| String::from_utf8_lossy(&b).contains("Corrected title 7")));
    // A profile removed: its pages go, and the listing no longer has it.
    std::fs::remove_file(input.join("api/run2.folded")).unwrap();
    wait_for("the removal", || get(port, "/p/api/run2/").is_some_and(|(s, _)| s == 404));
    let sources: Vec<String> = served_profiles(port).iter().map(|p| p["source"].as_str().unwrap().to_string()).collect();
    assert_eq!(sources, ["api/run1.folded"]);
    assert!(!dir.path().join("public/p/api/run2").exists());
    // The files on disk are the static site, without the reload script.
    let on_disk = std::fs::read_to_string(dir.path().join("public/p/api/run1/index.html")).unwrap();
    assert!(!on_disk.contains("__flamesite"));
    drop(server);
}
