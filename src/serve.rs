//! `flamesite serve`: builds the site, serves the output folder on 127.0.0.1, and rebuilds
//! when profiles, sidecars, templates or `site.toml` change. Files are served as they are,
//! as a static host would, except that HTML pages get a small script that reloads them after
//! a rebuild: it polls `/__flamesite/generation`, which counts the builds.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Path of the build counter that open pages poll.
const GENERATION: &str = "/__flamesite/generation";

/// Added before `</body>` of every HTML page served: reloads the page when a rebuild has
/// finished.
const RELOAD_SCRIPT: &str = r#"<script>(() => {
  let seen = null;
  const poll = async () => {
    try {
      const r = await fetch("/__flamesite/generation", { cache: "no-store" });
      const g = await r.text();
      if (seen !== null && g !== seen) location.reload();
      seen = g;
    } catch (e) { /* the server is restarting */ }
    setTimeout(poll, 1000);
  };
  poll();
})();</script>"#;

/// Serves `root` on `127.0.0.1:port` forever. `rebuild` is called when `watched` changes; when
/// it returns true (the site was replaced), open pages reload.
///
/// A thread per connection answers one GET or HEAD request and closes the connection. (The
/// server was tiny_http 0.12, whose thread pool can leave a new connection unserved while
/// its threads hold keep-alive connections open: a page's 14 first requests sometimes left
/// one module script pending for good, and the page never loaded.)
pub fn serve(root: &Path, port: u16, watched: Vec<PathBuf>, rebuild: impl Fn() -> bool + Send + 'static) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    eprintln!("serving {} at http://127.0.0.1:{port}/ (Ctrl-C stops)", root.display());
    let generation = Arc::new(AtomicU64::new(1));
    let bumped = Arc::clone(&generation);
    std::thread::spawn(move || {
        let mut last = newest_mtime(&watched);
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let now = newest_mtime(&watched);
            if now != last {
                last = now;
                if rebuild() {
                    bumped.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    });
    let root = Arc::new(root.to_path_buf());
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let (root, generation) = (Arc::clone(&root), Arc::clone(&generation));
        std::thread::spawn(move || {
            let _ = answer(stream, &root, &generation);
        });
    }
    Ok(())
}

/// A response: status, extra headers, body.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

/// Reads one request from `stream` and answers it.
fn answer(mut stream: TcpStream, root: &Path, generation: &AtomicU64) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > 64 * 1024 {
            return write_reply(&mut stream, text(431, "request head too large"), true);
        }
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split(' ');
    let (method, url) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let with_body = method != "HEAD";
    let reply = if method != "GET" && method != "HEAD" {
        text(405, "only GET and HEAD")
    } else if url == GENERATION {
        let mut r = text(200, &generation.load(Ordering::SeqCst).to_string());
        r.headers.push(("Cache-Control", "no-store".into()));
        r
    } else {
        respond(root, url)
    };
    write_reply(&mut stream, reply, with_body)
}

fn write_reply(stream: &mut TcpStream, reply: Reply, with_body: bool) -> std::io::Result<()> {
    let reason = match reply.status {
        200 => "OK",
        301 => "Moved Permanently",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let mut out = format!("HTTP/1.1 {} {reason}\r\nContent-Length: {}\r\nConnection: close\r\n", reply.status, reply.body.len());
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    stream.write_all(out.as_bytes())?;
    if with_body {
        stream.write_all(&reply.body)?;
    }
    stream.flush()
}

/// `bytes` of an HTML page with [`RELOAD_SCRIPT`] before its `</body>`.
fn with_reload(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = b"</body>";
    match bytes.windows(end.len()).rposition(|w| w == end) {
        Some(at) => {
            bytes.splice(at..at, RELOAD_SCRIPT.bytes());
        }
        None => bytes.extend_from_slice(RELOAD_SCRIPT.as_bytes()),
    }
    bytes
}

fn respond(root: &Path, url: &str) -> Reply {
    let path = url.split(['?', '#']).next().unwrap_or("/");
    let decoded = percent_decode(path);
    let rel = Path::new(decoded.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return text(400, "bad path");
    }
    let mut file = root.join(rel);
    if file.is_dir() {
        if !path.ends_with('/') {
            // Relative links inside the page need the trailing slash.
            let mut r = text(301, "moved");
            r.headers.push(("Location", format!("{path}/")));
            return r;
        }
        file = file.join("index.html");
    }
    match std::fs::read(&file) {
        Ok(bytes) => {
            let kind = content_type(&file);
            let body = if kind.starts_with("text/html") { with_reload(bytes) } else { bytes };
            Reply { status: 200, headers: vec![("Content-Type", kind.into()), ("Cache-Control", "no-cache".into())], body }
        }
        Err(_) => text(404, "not found"),
    }
}

fn text(status: u16, body: &str) -> Reply {
    Reply { status, headers: vec![("Content-Type", "text/plain; charset=utf-8".into())], body: body.as_bytes().to_vec() }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "xml" => "application/atom+xml",
        _ => "application/octet-stream",
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn newest_mtime(paths: &[PathBuf]) -> Option<SystemTime> {
    paths
        .iter()
        .flat_map(|p| walkdir::WalkDir::new(p).follow_links(true).into_iter().flatten())
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
}
