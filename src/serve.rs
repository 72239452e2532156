//! `flamesite serve`: builds the site, serves the output folder on 127.0.0.1, and rebuilds
//! when profiles, sidecars, templates or `site.toml` change. Files are served as they are,
//! as a static host would, except that HTML pages get a small script that reloads them after
//! a rebuild: it polls `/__flamesite/generation`, which counts the builds.

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
pub fn serve(root: &Path, port: u16, watched: Vec<PathBuf>, rebuild: impl Fn() -> bool + Send + 'static) -> Result<(), String> {
    let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
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
    for request in server.incoming_requests() {
        let response = if request.url() == GENERATION {
            text(200, &generation.load(Ordering::SeqCst).to_string()).with_header(header("Cache-Control", "no-store"))
        } else {
            respond(root, request.url())
        };
        let _ = request.respond(response);
    }
    Ok(())
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

fn respond(root: &Path, url: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
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
            let location = format!("{path}/");
            return text(301, "moved").with_header(header("Location", &location));
        }
        file = file.join("index.html");
    }
    match std::fs::read(&file) {
        Ok(bytes) => {
            let kind = content_type(&file);
            let bytes = if kind.starts_with("text/html") { with_reload(bytes) } else { bytes };
            tiny_http::Response::from_data(bytes)
                .with_header(header("Content-Type", kind))
                .with_header(header("Cache-Control", "no-cache"))
        }
        Err(_) => text(404, "not found"),
    }
}

fn text(code: u16, body: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    tiny_http::Response::from_data(body.as_bytes().to_vec())
        .with_status_code(code)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
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
