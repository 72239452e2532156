//! `flamesite serve`: builds the site, serves the output folder on 127.0.0.1, and rebuilds
//! when profiles, sidecars, templates or `site.toml` change. Files are served as they are,
//! as a static host would, except that HTML pages get a small script that reloads them after
//! a rebuild: it polls `/__flamesite/generation`, which counts the builds.
//!
//! HTTP is hyper's (HTTP/1.1, keep-alive) on a tokio runtime of [`WORKERS`] threads, so open
//! connections cost memory, not threads, and a thread limit (a container's pids limit,
//! systemd's TasksMax) is never reached by connections. The resources a client can hold are
//! bounded:
//! - at most [`Limits::max_connections`] connections at once; past it new connections wait
//!   in the kernel's accept queue;
//! - a connection must send a whole request head within [`Limits::header_timeout`] of
//!   opening, or of its previous response (the idle keep-alive time): else it is closed;
//! - a request head over [`MAX_HEAD`] bytes (or over 100 header lines) gets 431;
//! - a response the client does not read is dropped after [`Limits::write_timeout`] with no
//!   progress.
//!
//! A request that names another host than `127.0.0.1`, `localhost` or `[::1]` gets 403: a
//! page elsewhere cannot read the preview through a name pointed at this machine (DNS
//! rebinding).
//!
//! Only regular files under the output folder are served, reached without a symlink (each
//! path component is opened with `O_NOFOLLOW` below the previous one), so nothing outside
//! the output is ever read through a link placed in it.

use std::convert::Infallible;
use std::ffi::{CString, OsStr};
use std::fs::File;
use std::future::Future;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Path of the build counter that open pages poll.
const GENERATION: &str = "/__flamesite/generation";

/// Path of the count of the watcher's looks at the watched files (each a comparison of their
/// fingerprint with the last, and the rebuild it led to, if any): what has not changed the
/// generation by the time this has grown by two did not make a rebuild.
const CHECKS: &str = "/__flamesite/checks";

/// The runtime's worker threads: all the threads that serve connections, however many there are.
const WORKERS: usize = 2;

/// The largest request head (request line and headers) answered; a larger one gets 431.
pub const MAX_HEAD: usize = 64 * 1024;

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

/// The bounds on what clients can hold, from the environment (documented in README.md).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once (`FLAMESITE_SERVE_MAX_CONNECTIONS`, default 4096).
    pub max_connections: usize,
    /// Time to send a whole request head, from a connection's start or its previous response
    /// (`FLAMESITE_SERVE_HEADER_TIMEOUT_MS`, default 10 s).
    pub header_timeout: Duration,
    /// Time a response may wait for the client to read more of it
    /// (`FLAMESITE_SERVE_WRITE_TIMEOUT_MS`, default 30 s).
    pub write_timeout: Duration,
}

impl Limits {
    /// The limits set in the environment, the defaults for the others; an error names a
    /// variable that is set but not a positive whole number.
    pub fn from_env() -> Result<Limits, String> {
        fn var(name: &str, default: u64) -> Result<u64, String> {
            match std::env::var(name) {
                Ok(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(format!("{name}={v:?}: a whole number above 0 is needed")),
                },
                Err(_) => Ok(default),
            }
        }
        Ok(Limits {
            max_connections: var("FLAMESITE_SERVE_MAX_CONNECTIONS", 4096)? as usize,
            header_timeout: Duration::from_millis(var("FLAMESITE_SERVE_HEADER_TIMEOUT_MS", 10_000)?),
            write_timeout: Duration::from_millis(var("FLAMESITE_SERVE_WRITE_TIMEOUT_MS", 30_000)?),
        })
    }
}

/// Serves `root` on `127.0.0.1:port` until the process is stopped. `rebuild` is called when
/// `watched` changes; when it returns true (the site was replaced), open pages reload.
pub fn serve(root: &Path, port: u16, watched: Vec<PathBuf>, rebuild: impl Fn() -> bool + Send + 'static) -> Result<(), String> {
    let limits = Limits::from_env()?;
    // Bound before the runtime starts, by address: no name look-up (which would need a thread).
    let listener = std::net::TcpListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    raise_open_files(limits.max_connections as u64 + 256);
    let generation = Arc::new(AtomicU64::new(1));
    let checks = Arc::new(AtomicU64::new(0));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        // Nothing here uses the blocking pool (files are read on the workers); should anything
        // ever, it gets one thread, never one per connection.
        .max_blocking_threads(1)
        .thread_name("flamesite-serve")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the server's threads: {e}"))?;
    let watcher_root = root.to_path_buf();
    let bumped = Arc::clone(&generation);
    let looked = Arc::clone(&checks);
    // Taken before the first request is answered: a change made after that is always seen.
    let first = fingerprint(&watched, root);
    std::thread::Builder::new()
        .name("flamesite-watch".into())
        .spawn(move || watch(&watcher_root, &watched, first, rebuild, &bumped, &looked))
        .map_err(|e| format!("cannot start the rebuild watcher's thread: {e}"))?;
    crate::say!("serving {} at http://127.0.0.1:{port}/ (Ctrl-C stops)", root.display());
    let state = Arc::new(State { root: root.to_path_buf(), generation, checks, limits });
    runtime.block_on(accept_loop(listener, state))
}

/// What every connection shares.
struct State {
    root: PathBuf,
    generation: Arc<AtomicU64>,
    checks: Arc<AtomicU64>,
    limits: Limits,
}

async fn accept_loop(listener: std::net::TcpListener, state: Arc<State>) -> Result<(), String> {
    let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
    let slots = Arc::new(tokio::sync::Semaphore::new(state.limits.max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.limits.header_timeout)
        .max_buf_size(MAX_HEAD)
        .max_header_size(MAX_HEAD);
    let http = Arc::new(http);
    let mut last_complaint: Option<tokio::time::Instant> = None;
    loop {
        // At the cap, wait for a connection to end before accepting the next one.
        let slot = Arc::clone(&slots).acquire_owned().await.map_err(|e| e.to_string())?;
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors (EMFILE, ENFILE) or an aborted connection: say so at
                // most once a second, wait a little, and go on accepting.
                if last_complaint.is_none_or(|t| t.elapsed() > Duration::from_secs(1)) {
                    crate::say!("warning: accepting a connection: {e}");
                    last_complaint = Some(tokio::time::Instant::now());
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (state, http) = (Arc::clone(&state), Arc::clone(&http));
        tokio::spawn(async move {
            connection(stream, &state, &http).await;
            drop(slot);
        });
    }
}

/// Serves the requests of one connection, then closes it.
async fn connection(stream: TcpStream, state: &State, http: &hyper::server::conn::http1::Builder) {
    let mut stream = WriteTimeout::new(stream, state.limits.write_timeout);
    let service = hyper::service::service_fn(|request: Request<Incoming>| std::future::ready(Ok::<_, Infallible>(answer(state, &request))));
    let result = http.serve_connection(TokioIo::new(&mut stream), service).await;
    if let Err(e) = result {
        if e.is_parse() || e.is_parse_too_large() {
            // hyper has sent its 400 or 431. Our side is shut (the client sees the response
            // end), but the client may still be sending its oversized head: it is read away
            // before closing, or the kernel would answer the unread bytes with a reset, which
            // can destroy the response before the client reads it.
            let _ = std::future::poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx)).await;
            linger(stream.inner).await;
        }
    }
}

/// Reads and drops what the client still sends, for at most 2 s and 1 MiB, then closes.
async fn linger(stream: TcpStream) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let mut buf = [0u8; 8192];
    let mut drained = 0;
    while drained < 1 << 20 {
        match tokio::time::timeout_at(deadline, stream.readable()).await {
            Ok(Ok(())) => match stream.try_read(&mut buf) {
                Ok(0) => break,
                Ok(n) => drained += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            },
            _ => break,
        }
    }
}

/// A TCP stream whose writes fail once the client has read nothing for `limit`: a client that
/// asks for a large file and never reads it does not hold its connection for ever.
struct WriteTimeout {
    inner: TcpStream,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl WriteTimeout {
    fn new(inner: TcpStream, limit: Duration) -> WriteTimeout {
        WriteTimeout { inner, limit, stalled: None }
    }

    /// After a write returned Pending: fails once the stall has lasted `limit`.
    fn poll_stall(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        let limit = self.limit;
        let sleep = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the client stopped reading"))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for WriteTimeout {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteTimeout {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.poll_stall(cx),
            done => {
                self.stalled = None;
                done
            }
        }
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.poll_stall(cx),
            done => {
                self.stalled = None;
                done
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Raises the soft limit on open files towards `want` (capped by the hard limit), so that the
/// connection cap, not the descriptor limit, is what bounds connections.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux and macOS, not on every target
fn raise_open_files(want: u64) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && (limit.rlim_cur as u64) < want {
            limit.rlim_cur = want.min(limit.rlim_max as u64) as libc::rlim_t;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn text(status: StatusCode, body: &'static str) -> Reply {
    reply(status, "text/plain; charset=utf-8", body)
}

/// Whether a request is for this machine's server by name: its `Host` (or an absolute
/// request target's host) is `127.0.0.1`, `localhost` or `[::1]`, with any port, or absent
/// (HTTP/1.0). A page of another site whose name an attacker points at 127.0.0.1 (DNS
/// rebinding) sends its own name, and is refused, as webpack's and Vite's servers refuse it.
fn for_this_host(request: &Request<Incoming>) -> bool {
    let named = request.uri().host().map(str::to_string).or_else(|| {
        let host = request.headers().get(hyper::header::HOST)?.to_str().ok()?;
        // The name without its port: `[::1]:8000`, `localhost:8000`, `127.0.0.1`.
        let name = match host.strip_prefix('[') {
            Some(rest) => format!("[{}]", rest.split(']').next().unwrap_or("")),
            None => host.split(':').next().unwrap_or("").to_string(),
        };
        Some(name)
    });
    match named {
        None => request.headers().get(hyper::header::HOST).is_none(),
        Some(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            ["127.0.0.1", "localhost", "[::1]", "::1"].contains(&name.as_str())
        }
    }
}

/// The answer to one request.
fn answer(state: &State, request: &Request<Incoming>) -> Reply {
    if !for_this_host(request) {
        return text(StatusCode::FORBIDDEN, "flamesite serve answers requests for 127.0.0.1 or localhost only (this one names another host)\n");
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
        r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let path = request.uri().path();
    if path == GENERATION || path == CHECKS {
        let count = if path == GENERATION { &state.generation } else { &state.checks };
        let mut r = reply(StatusCode::OK, "text/plain; charset=utf-8", count.load(Ordering::SeqCst).to_string());
        r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return r;
    }
    respond(&state.root, path)
}

fn respond(root: &Path, path: &str) -> Reply {
    // The raw segments, empty ones (`//`) dropped: a path is never read as a host.
    let raw: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut segments = Vec::with_capacity(raw.len());
    for s in &raw {
        let decoded = percent_decode(s);
        // A decoded slash makes more segments ("%2F"), which are checked like the others.
        for part in decoded.split(|&b| b == b'/') {
            match part {
                b"" => {}
                b"." | b".." => return text(StatusCode::BAD_REQUEST, "bad path"),
                _ if part.contains(&0) => return text(StatusCode::BAD_REQUEST, "bad path"),
                _ => segments.push(part.to_vec()),
            }
        }
    }
    let Some((file, is_dir)) = open_beneath(root, &segments) else {
        return text(StatusCode::NOT_FOUND, "not found");
    };
    let (mut file, name) = if is_dir {
        if !path.ends_with('/') || (raw.is_empty() && path != "/") {
            // Relative links inside the page need the trailing slash. The target is built from
            // the non-empty segments, so it always starts with exactly one slash: a path on
            // this host, never `//host/` (which a browser would take as another host).
            let mut to = String::from("/");
            for s in &raw {
                to.push_str(s);
                to.push('/');
            }
            let mut r = text(StatusCode::MOVED_PERMANENTLY, "moved");
            match HeaderValue::from_str(&to) {
                Ok(v) => r.headers_mut().insert(LOCATION, v),
                Err(_) => return text(StatusCode::BAD_REQUEST, "bad path"),
            };
            return r;
        }
        match open_in(&file, b"index.html") {
            Some(index) => (index, b"index.html".to_vec()),
            None => return text(StatusCode::NOT_FOUND, "not found"),
        }
    } else {
        (file, segments.last().cloned().unwrap_or_default())
    };
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return text(StatusCode::NOT_FOUND, "not found");
    }
    let kind = content_type(OsStr::from_bytes(&name));
    let body = if kind.starts_with("text/html") { with_reload(bytes) } else { bytes };
    let mut r = reply(StatusCode::OK, kind, body);
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// Opens `root/segments…` one component at a time, each below the previous one's descriptor
/// with `O_NOFOLLOW`: a symlink anywhere on the way (to a file inside the output or outside
/// it) is refused, and a folder swapped for a link between two requests cannot redirect the
/// walk. Gives the open file or folder and whether it is a folder; anything else (a FIFO,
/// a device, a socket) is not found.
fn open_beneath(root: &Path, segments: &[Vec<u8>]) -> Option<(File, bool)> {
    // The output folder itself may be a link (a site published through a symlink).
    let mut current = File::open(root).ok()?;
    for segment in segments {
        current = open_at(&current, segment)?;
    }
    let meta = current.metadata().ok()?;
    (meta.is_dir() || meta.is_file()).then_some((current, meta.is_dir()))
}

/// `name` in the folder `dir`, when it is a regular file reached without a link.
fn open_in(dir: &File, name: &[u8]) -> Option<File> {
    let file = open_at(dir, name)?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// `openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)`: fails on a symlink; does not wait
/// on a FIFO.
fn open_at(dir: &File, name: &[u8]) -> Option<File> {
    let name = CString::new(name).ok()?;
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
    // SAFETY: `name` is a valid C string, `dir` an open descriptor; a descriptor returned is
    // owned by the File made from it and by nothing else.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    (fd >= 0).then(|| unsafe { File::from_raw_fd(fd) })
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

fn content_type(name: &OsStr) -> &'static str {
    crate::output::content_type(&name.to_string_lossy())
}

fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let (Some(h), Some(l)) = (bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Checks `watched` once a second and rebuilds when its [`fingerprint`] differs from the one
/// seen before (`first` at the start); bumps `generation` after each successful rebuild, and
/// `checks` after each look (and its rebuild) is over. A build that panics is reported and
/// the server goes on (with the site it had).
fn watch(root: &Path, watched: &[PathBuf], first: blake3::Hash, rebuild: impl Fn() -> bool, generation: &AtomicU64, checks: &AtomicU64) {
    let mut last = first;
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let now = fingerprint(watched, root);
        if now != last {
            last = now;
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(&rebuild)) {
                Ok(true) => {
                    generation.fetch_add(1, Ordering::SeqCst);
                }
                Ok(false) => {}
                Err(_) => crate::say!("error: the rebuild failed (see above); still serving the previous site"),
            }
        }
        checks.fetch_add(1, Ordering::SeqCst);
    }
}

/// A hash of every watched file's path, type, size, modification and change times, inode
/// and device (of a folder: its path, type, inode and device). Any change to a file changes
/// it, also one that keeps or moves back its mtime (a `cp -p` of an older copy, a checkout,
/// `touch -d`), since the ctime always moves. The output folder (`root`) and what the build
/// keeps beside it (`.NAME.flamesite-next`, `.NAME.flamesite-lock`, the default cache
/// `.NAME.cache`: every `.NAME.*`) are skipped when they are inside a watched folder: a
/// rebuild writing them is not a change.
fn fingerprint(watched: &[PathBuf], root: &Path) -> blake3::Hash {
    let output = std::fs::metadata(root).ok().map(|m| (m.dev(), m.ino()));
    let staging = root.file_name().map(|name| {
        let mut prefix = b".".to_vec();
        prefix.extend_from_slice(name.as_bytes());
        prefix.push(b'.');
        prefix
    });
    let skipped = |e: &walkdir::DirEntry| {
        staging.as_ref().is_some_and(|p| e.file_name().as_bytes().starts_with(p))
            || (e.file_type().is_dir() && e.metadata().ok().map(|m| (m.dev(), m.ino())) == output)
    };
    let mut hash = blake3::Hasher::new();
    for path in watched {
        let walk = walkdir::WalkDir::new(path).follow_links(true).sort_by_file_name().into_iter().filter_entry(|e| !skipped(e));
        for entry in walk {
            match entry {
                Ok(entry) => {
                    hash.update(entry.path().as_os_str().as_bytes());
                    hash.update(&[0]);
                    match entry.metadata() {
                        // A folder's size and times change when an entry is added or removed
                        // (then the walk's list changes too), also the output's, which is
                        // skipped: only its identity counts.
                        Ok(m) if m.is_dir() => {
                            for n in [m.mode() as i64, m.ino() as i64, m.dev() as i64] {
                                hash.update(&n.to_le_bytes());
                            }
                        }
                        Ok(m) => {
                            for n in [m.mode() as i64, m.len() as i64, m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino() as i64, m.dev() as i64] {
                                hash.update(&n.to_le_bytes());
                            }
                        }
                        Err(e) => {
                            hash.update(e.to_string().as_bytes());
                        }
                    }
                }
                Err(e) => {
                    hash.update(e.to_string().as_bytes());
                }
            }
            hash.update(&[1]);
        }
    }
    hash.finalize()
}
