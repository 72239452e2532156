//! `flamesite serve` against a hostile client (issue 12, item 7): each test runs the real
//! binary on 127.0.0.1 with real sockets, a real thread limit, real symlinks and a real
//! `cp -p`, and stops by itself (every wait has a deadline).


use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::common::*;

/// The server process; killed when the test ends, whatever happened.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails the test if the server has exited.
    fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("flamesite serve exited ({status}) while connections were open");
        }
    }

    /// The number of OS threads of the server process (Linux's /proc).
    fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("/proc/PID/status (Linux)");
        let line = status.lines().find(|l| l.starts_with("Threads:")).expect("a Threads: line");
        line["Threads:".len()..].trim().parse().unwrap()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A site folder: profiles/api/run1.folded, then site.toml (written last, so it is the
/// newest file that `serve` watches).
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("profiles/api/run1.folded"), b"main;a 3\nmain;b 4\n");
    write(&dir.path().join("site.toml"), b"title = \"hostile\"\n");
    dir
}

/// Starts `flamesite serve` in `dir` through `wrapper` (a command and its arguments put
/// before the binary, e.g. prlimit) with `env`, and waits until it answers.
fn start_with(dir: &Path, wrapper: &[&str], env: &[(&str, &str)]) -> Server {
    let port = free_port();
    let bin = bin();
    let mut args: Vec<&str> = wrapper.to_vec();
    args.push(bin.to_str().unwrap());
    args.extend(["serve", "-j", "1", "--port"]);
    let port_arg = port.to_string();
    args.push(&port_arg);
    let mut cmd = Command::new(args[0]);
    cmd.args(&args[1..]).current_dir(dir).stdout(Stdio::null()).stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", args[0]));
    let mut server = Server { child, port };
    let start = Instant::now();
    while get(port, "/").is_none() {
        server.assert_running();
        assert!(start.elapsed() < Duration::from_secs(60), "flamesite serve did not answer within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

fn start(dir: &Path, env: &[(&str, &str)]) -> Server {
    start_with(dir, &[], env)
}

/// A response as read off the socket.
struct Response {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `request` (raw bytes) and reads the whole response (the server closes after it:
/// HTTP/1.0 or `Connection: close`).
fn exchange(port: u16, request: &[u8]) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(request)?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| std::io::Error::other("no response head"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| std::io::Error::other("no status"))?;
    Ok(Response { status, head, body: raw[split + 4..].to_vec() })
}

fn get(port: u16, path: &str) -> Option<Response> {
    exchange(port, format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).ok()
}

/// Reads `/__flamesite/generation`, the build counter.
fn generation(port: u16) -> u64 {
    let r = get(port, "/__flamesite/generation").expect("the generation answers");
    String::from_utf8(r.body).unwrap().trim().parse().unwrap()
}

/// How many looks the server's watcher has finished (each with the rebuild it led to, if any).
fn checks(port: u16) -> u64 {
    let r = get(port, "/__flamesite/checks").expect("the count of checks answers");
    String::from_utf8(r.body).unwrap().trim().parse().unwrap()
}

/// Waits until the watcher has finished two more looks than now: whatever was on disk before
/// this call has been looked at since, and rebuilt from if it made a change.
fn two_more_checks(port: u16) {
    let from = checks(port);
    let start = Instant::now();
    while checks(port) < from + 2 {
        // Not a timing assertion: a watcher that stopped would hang the test.
        assert!(start.elapsed() < Duration::from_secs(60), "the watcher stopped looking");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_thousand_idle_connections_cost_no_threads_and_a_get_still_answers() {
    let dir = site();
    let mut server = start(dir.path(), &[("FLAMESITE_SERVE_HEADER_TIMEOUT_MS", "60000")]);
    // The server answers while the threads of its first build may still be ending: wait for
    // them to end (an event; a server whose threads never settle fails the test), then count.
    two_more_checks(server.port);
    let start = Instant::now();
    while server.threads() != 4 {
        assert!(start.elapsed() < Duration::from_secs(60), "the server's threads did not settle at 4: {}", server.threads());
        std::thread::sleep(Duration::from_millis(20));
    }
    let threads_before = server.threads();
    let idle: Vec<TcpStream> = (0..1000)
        .map(|i| TcpStream::connect(("127.0.0.1", server.port)).unwrap_or_else(|e| panic!("idle connection {i}: {e}")))
        .collect();
    // A connection is accepted by the kernel before the server sees it: one request on a
    // fresh connection after all of them means the server has reached the last one.
    let r = get(server.port, "/").expect("a GET with 1,000 idle connections open");
    assert_eq!(r.status, 200);
    let p = get(server.port, "/p/api/run1/").unwrap();
    assert_eq!(p.status, 200);
    server.assert_running();
    // Connections cost no threads: as many as before they were opened, and as RELIABILITY.md
    // says: main, the 2 workers, the rebuild watcher.
    let threads = server.threads();
    assert_eq!(threads, threads_before, "OS threads with 1,000 idle connections, and before them");
    assert_eq!(threads, 4, "main, 2 workers and the watcher");
    // The idle connections are still open (not refused, not closed): a request on the first
    // one is answered.
    let mut first = &idle[0];
    first.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    first.write_all(b"GET /__flamesite/generation HTTP/1.0\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    first.read_to_end(&mut raw).unwrap();
    assert!(raw.starts_with(b"HTTP/1."), "the first idle connection is answered: {:?}", String::from_utf8_lossy(&raw));
    drop(idle);
}

/// Runs `command` as an unprivileged user (`uid`) under `prlimit --nproc=limit`: RLIMIT_NPROC is
/// not enforced for root (the kernel skips it for CAP_SYS_RESOURCE/CAP_SYS_ADMIN), so the
/// server must drop root for the limit to be real. setpriv (util-linux) changes the user.
fn limited(uid: u32, limit: u32) -> Vec<String> {
    for tool in ["prlimit", "setpriv"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().map(|o| o.status.success());
        assert!(found.unwrap_or(false), "{tool} (util-linux) is needed for the thread-limit test and is missing");
    }
    let uid = uid.to_string();
    vec![
        "prlimit".into(),
        format!("--nproc={limit}:{limit}"),
        "--".into(),
        "setpriv".into(),
        format!("--reuid={uid}"),
        format!("--regid={uid}"),
        "--clear-groups".into(),
        "--inh-caps=-all".into(),
        "--bounding-set=-all".into(),
        "--".into(),
    ]
}

/// How many processes run as `uid` (real uid, from /proc).
fn processes_of(uid: u32) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(status) = std::fs::read_to_string(entry.path().join("status")) {
            let real = status.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u32>().ok());
            n += usize::from(real == Some(uid));
        }
    }
    n
}

#[test]
fn under_a_thread_limit_lower_than_the_connections_the_server_keeps_answering() {
    const LIMIT: u32 = 16;
    const CONNECTIONS: usize = 200;
    // A user id of its own, so that no other process counts against its limit.
    let uid = 61000 + std::process::id() % 4000;
    let wrapper = limited(uid, LIMIT);
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();

    // The limit is real: the same user under the same wrapper cannot start 40 processes.
    let mut probe = vec!["sh", "-c", "i=0; while [ $i -lt 40 ]; do sleep 1 & i=$((i+1)); done; wait"];
    let mut cmd = wrapper.clone();
    cmd.append(&mut probe);
    let out = Command::new(cmd[0]).args(&cmd[1..]).output().expect("prlimit runs");
    assert!(
        !out.status.success(),
        "the thread limit is not enforced: uid {uid} under `prlimit --nproc={LIMIT}` started 40 processes ({})",
        String::from_utf8_lossy(&out.stderr)
    );

    // Its processes are gone before the server starts (they would count against the limit).
    let start = Instant::now();
    while processes_of(uid) > 0 {
        assert!(start.elapsed() < Duration::from_secs(20), "the probe's processes of uid {uid} are still running after 20 s");
        std::thread::sleep(Duration::from_millis(100));
    }

    let dir = site();
    let chown = Command::new("chown").args(["-R", &format!("{uid}:{uid}")]).arg(dir.path()).status().unwrap();
    assert!(chown.success(), "chown of the site folder to uid {uid}");
    let mut server = start_with(dir.path(), &wrapper, &[("FLAMESITE_SERVE_HEADER_TIMEOUT_MS", "60000")]);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).unwrap();
    let nproc = limits.lines().find(|l| l.starts_with("Max processes")).unwrap().to_string();
    assert!(nproc.split_whitespace().nth(2) == Some(&LIMIT.to_string()), "the server runs under the limit: {nproc}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let uids = status.lines().find(|l| l.starts_with("Uid:")).unwrap().to_string();
    assert_eq!(uids.split_whitespace().nth(1), Some(uid.to_string().as_str()), "the server runs as uid {uid}: {uids}");

    let mut idle = Vec::new();
    for i in 0..CONNECTIONS {
        match TcpStream::connect(("127.0.0.1", server.port)) {
            Ok(s) => idle.push(s),
            Err(e) => {
                server.assert_running();
                panic!("connection {i}: {e}");
            }
        }
    }
    for _ in 0..3 {
        let r = get(server.port, "/").expect("a GET with more connections open than the thread limit");
        assert_eq!(r.status, 200);
    }
    server.assert_running();
    assert!(server.threads() < LIMIT as usize);
    drop(idle);
    // And after the idle connections closed.
    assert_eq!(get(server.port, "/p/api/run1/").unwrap().status, 200);
    server.assert_running();
}

/// Is the connection closed by the server? (EOF or a reset; a read that times out means open.)
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => false,
        Err(_) => true,
    }
}

#[test]
fn a_slow_client_is_disconnected_after_the_header_timeout() {
    let dir = site();
    let server = start(dir.path(), &[("FLAMESITE_SERVE_HEADER_TIMEOUT_MS", "1000")]);
    // One byte every 250 ms, the head never finished: closed about 1 s after it opened.
    // The clock starts before the connection, so the server's own (which starts when it
    // accepts) can only start later: however the test is scheduled, a close before the
    // timeout shows here as less than 1 s, and a close on time never does.
    let opened = Instant::now();
    let mut slow = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut sent = 0;
    let gone = loop {
        if closed(&mut slow) || slow.write_all(&request[sent % request.len()..][..1]).is_err() {
            break opened.elapsed();
        }
        sent += 1;
        assert!(opened.elapsed() < Duration::from_secs(8), "a client sending one byte every 250 ms is still connected after 8 s");
        std::thread::sleep(Duration::from_millis(250));
    };
    // Not before its timeout (1 s); the loop above gave it 8 s to happen at all.
    assert!(gone >= Duration::from_millis(1000), "closed after {gone:?}, sent {sent} bytes");

    // A connection that never sends anything, and a kept-alive connection idle after its
    // response, are closed after the same time.
    let opened = Instant::now();
    let mut silent = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let mut kept = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    kept.write_all(b"GET /__flamesite/generation HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut answered = false;
    let mut buf = Vec::new();
    let (mut silent_gone, mut kept_gone) = (None, None);
    while silent_gone.is_none() || kept_gone.is_none() {
        assert!(opened.elapsed() < Duration::from_secs(8), "idle connections still open after 8 s");
        if silent_gone.is_none() && closed(&mut silent) {
            silent_gone = Some(opened.elapsed());
        }
        if kept_gone.is_none() {
            kept.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            let mut chunk = [0u8; 512];
            match kept.read(&mut chunk) {
                Ok(0) => kept_gone = Some(opened.elapsed()),
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    answered = buf.starts_with(b"HTTP/1.1 200");
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => kept_gone = Some(opened.elapsed()),
            }
        }
    }
    assert!(answered, "the kept-alive connection got its answer first: {:?}", String::from_utf8_lossy(&buf));
    for (what, t) in [("silent", silent_gone.unwrap()), ("kept-alive", kept_gone.unwrap())] {
        // Not before the timeout; the loop above gave it 8 s to happen at all.
        assert!(t >= Duration::from_millis(1000), "the {what} connection closed after {t:?}");
    }
    // The server still answers.
    assert_eq!(get(server.port, "/").unwrap().status, 200);
}

#[test]
fn a_request_head_over_64_kb_gets_431() {
    let dir = site();
    let server = start(dir.path(), &[]);
    let big = |n: usize| format!("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Big: {}\r\n\r\n", "a".repeat(n));
    // Just under the limit: answered.
    let r = exchange(server.port, big(60 * 1024).as_bytes()).expect("a 60 KB head is answered");
    assert_eq!(r.status, 200);
    // Over it: 431, read whole, without a connection reset.
    for size in [65 * 1024, 80 * 1024, 200 * 1024] {
        match exchange(server.port, big(size).as_bytes()) {
            Ok(r) => assert_eq!(r.status, 431, "a head of {size} bytes: {}", r.head),
            Err(e) => panic!("a head of {size} bytes: {e} instead of a 431"),
        }
    }
    // Too many header lines is the same case.
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    let r = exchange(server.port, format!("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n").as_bytes()).unwrap();
    assert_eq!(r.status, 431);
    assert_eq!(get(server.port, "/").unwrap().status, 200);
}

#[test]
fn protocol_relative_paths_never_redirect_off_host() {
    let dir = site();
    let server = start(dir.path(), &[]);
    // The folders that exist: p (pages) and s (series).
    assert_eq!(get(server.port, "/p").unwrap().status, 301);
    for path in ["//evil.example/", "//evil.example", "//s", "//p", "///p", "//p/api/run1", "/%2Fp", "/%2F%2Fevil.example", "//p?x=1", "/./p", "//127.0.0.1:1/"] {
        let r = get(server.port, path).unwrap_or_else(|| panic!("{path}: no answer"));
        match r.header("Location") {
            None => assert!(matches!(r.status, 200 | 400 | 404), "{path}: {}", r.head),
            Some(to) => {
                assert_eq!(r.status, 301, "{path}");
                let b = to.as_bytes();
                assert!(b[0] == b'/' && b.get(1).is_some_and(|c| *c != b'/' && *c != b'\\'), "{path} redirects to {to:?}: not a same-origin path");
            }
        }
    }
    // The page folder without its slash still gets it.
    assert_eq!(get(server.port, "//p/api/run1").unwrap().header("Location"), Some("/p/api/run1/"));
    assert_eq!(get(server.port, "/p/api/run1").unwrap().header("Location"), Some("/p/api/run1/"));
}

/// Issue 31, item 14: a page of another site whose name resolves to 127.0.0.1 (DNS
/// rebinding) sends its own name as `Host`: it gets 403, and no byte of the site.
#[test]
fn requests_for_another_host_name_are_refused() {
    let dir = site();
    let server = start(dir.path(), &[]);
    let port = server.port;
    let ask = |host: Option<&str>, target: &str| -> Response {
        let host = host.map_or(String::new(), |h| format!("Host: {h}\r\n"));
        exchange(port, format!("GET {target} HTTP/1.1\r\n{host}Connection: close\r\n\r\n").as_bytes()).unwrap()
    };
    let page = get(port, "/p/api/run1/").unwrap();
    assert_eq!(page.status, 200);
    for host in [format!("evil.example:{port}"), "evil.example".into(), format!("127.0.0.1.evil.example:{port}"), format!("localhost.evil.example:{port}"), format!("10.0.0.1:{port}")] {
        let r = ask(Some(&host), "/p/api/run1/");
        assert_eq!(r.status, 403, "{host}: {}", r.head);
        assert!(String::from_utf8_lossy(&r.body).contains("127.0.0.1 or localhost only"), "{host}");
        assert!(r.body != page.body);
    }
    // An absolute request target naming another host, whatever its Host header.
    assert_eq!(ask(Some("127.0.0.1"), "http://evil.example/p/api/run1/").status, 403);
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("LOCALHOST:{port}"), format!("[::1]:{port}"), "localhost".into()] {
        let r = ask(Some(&host), "/p/api/run1/");
        assert_eq!((r.status, &r.body), (200, &page.body), "{host}");
    }
    // HTTP/1.0 without a Host header (curl -0, old tools) is answered.
    assert_eq!(exchange(port, b"GET /p/api/run1/ HTTP/1.0\r\n\r\n").unwrap().status, 200);
}

#[test]
fn symlinks_inside_the_output_are_not_served() {
    let dir = site();
    let server = start(dir.path(), &[]);
    let public = dir.path().join("public");
    let outside = dir.path().join("outside");
    write(&outside.join("secret.txt"), b"secret outside the output\n");
    std::os::unix::fs::symlink(outside.join("secret.txt"), public.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, public.join("leakdir")).unwrap();
    std::os::unix::fs::symlink(public.join("index.html"), public.join("alias.html")).unwrap();
    std::os::unix::fs::symlink("index.html", public.join("relative-alias.html")).unwrap();
    std::os::unix::fs::symlink("p", public.join("pages")).unwrap();
    std::os::unix::fs::symlink(&outside, public.join("p/api/outside")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", public.join("p/api/passwd")).unwrap();
    // The real files are served.
    assert_eq!(get(server.port, "/index.html").unwrap().status, 200);
    assert_eq!(get(server.port, "/p/api/run1/").unwrap().status, 200);
    for path in [
        "/leak.txt",
        "/leakdir/secret.txt",
        "/leakdir/",
        "/leakdir",
        "/alias.html",
        "/relative-alias.html",
        "/pages/api/run1/",
        "/pages/api/run1/index.html",
        "/pages",
        "/p/api/outside/secret.txt",
        "/p/api/passwd",
        "/p/api/%70asswd",
    ] {
        let r = get(server.port, path).unwrap_or_else(|| panic!("{path}: no answer"));
        assert_eq!(r.status, 404, "{path}: {}", r.head);
        let body = String::from_utf8_lossy(&r.body);
        assert!(!body.contains("secret") && !body.contains("root:"), "{path} leaked {body:?}");
    }
}

#[test]
fn a_profile_replaced_by_cp_p_with_an_older_mtime_is_rebuilt() {
    let dir = site();
    let server = start(dir.path(), &[]);
    let before = generation(server.port);
    let manifest = |port| {
        let r = get(port, "/p/api/run1/g/samples/manifest.json").unwrap();
        serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()
    };
    assert_eq!(manifest(server.port)["total"], 7);
    // The same size, other content, and a file time from 2001: only its ctime and its content
    // tell that it changed, as with `cp -p` of an older copy.
    let old = dir.path().join("old.folded");
    std::fs::write(&old, b"main;x 5\nmain;y 6\n").unwrap();
    let f = std::fs::File::options().write(true).open(&old).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000)).unwrap();
    drop(f);
    let target = dir.path().join("profiles/api/run1.folded");
    assert_eq!(std::fs::metadata(&old).unwrap().len(), std::fs::metadata(&target).unwrap().len());
    let cp = Command::new("cp").arg("-p").arg(&old).arg(&target).status().expect("cp runs");
    assert!(cp.success());
    assert!(std::fs::metadata(&target).unwrap().modified().unwrap() < SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_001));
    let start = Instant::now();
    while generation(server.port) == before {
        assert!(start.elapsed() < Duration::from_secs(30), "no rebuild 30 s after `cp -p` replaced a profile");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(manifest(server.port)["total"], 11, "the rebuilt site has the new content");
}

#[test]
fn a_client_that_stops_reading_a_large_response_is_dropped_after_the_write_timeout() {
    let dir = site();
    let server = start(dir.path(), &[("FLAMESITE_SERVE_WRITE_TIMEOUT_MS", "1000")]);
    // Larger than what the kernel buffers on both sides of a loopback connection.
    const SIZE: usize = 64 << 20;
    write(&dir.path().join("public/big.bin"), &vec![7u8; SIZE]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.write_all(b"GET /big.bin HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    // The client reads nothing for 3 s (the behaviour under test), then all it can.
    std::thread::sleep(Duration::from_secs(3));
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let start = Instant::now();
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        assert!(start.elapsed() < Duration::from_secs(30), "still reading after 30 s ({got} bytes)");
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    assert!(got < SIZE, "the whole {SIZE} bytes were sent to a client that stopped reading for 3 s: the connection was not dropped");
    assert_eq!(get(server.port, "/").unwrap().status, 200);
}

#[test]
fn an_output_folder_inside_the_input_does_not_make_rebuilds_by_itself() {
    let dir = site();
    let port = free_port();
    let mut server = Server {
        child: Command::new(bin())
            .args(["serve", "-j", "1", "--output", "profiles/public", "--port", &port.to_string()])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        port,
    };
    let start = Instant::now();
    while get(port, "/").is_none_or(|r| r.status != 200) {
        server.assert_running();
        assert!(start.elapsed() < Duration::from_secs(60), "flamesite serve did not answer within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(dir.path().join("profiles/public/index.html").is_file());
    // A real change is seen, and rebuilt once.
    let first = generation(port);
    write(&dir.path().join("profiles/api/run2.folded"), b"main;c 5\n");
    let start = Instant::now();
    while generation(port) == first {
        assert!(start.elapsed() < Duration::from_secs(30), "no rebuild 30 s after a profile was added");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(get(port, "/p/api/run2/").unwrap().status, 200);
    // That rebuild wrote the output (and its cache beside it) inside the input: not a change.
    // Once the watcher has looked twice since, a rebuild it would make of them has been made.
    let second = generation(port);
    two_more_checks(port);
    assert_eq!(generation(port), second, "serve rebuilt though nothing but its own output changed");
}

/// The sockets the server process holds (its listener and its connections).
fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:")))
        .count()
}

#[test]
fn connections_over_the_cap_wait_until_one_ends() {
    let dir = site();
    let server = start(dir.path(), &[("FLAMESITE_SERVE_MAX_CONNECTIONS", "8"), ("FLAMESITE_SERVE_HEADER_TIMEOUT_MS", "1500")]);
    let idle: Vec<TcpStream> = (0..12).map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap()).collect();
    // The server takes 8 of them (plus its listener); the other 4 wait in the accept queue.
    let start = Instant::now();
    while sockets(server.pid()) < 9 {
        assert!(start.elapsed() < Duration::from_secs(5), "the server did not take 8 connections");
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..10 {
        let held = sockets(server.pid());
        assert!(held <= 9, "{held} sockets held with a cap of 8 connections");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A request waits for the header timeout to end one of the first 8, then is answered:
    // when its answer comes, the server has closed at least one of them (a server that
    // answered over the cap would answer while all 12 are still open).
    let r = get(server.port, "/").expect("answered once a connection ended");
    assert_eq!(r.status, 200);
    let closed = idle
        .iter()
        .filter(|c| {
            let mut c: &TcpStream = c;
            c.set_nonblocking(true).unwrap();
            !matches!(c.read(&mut [0u8; 1]), Err(e) if e.kind() == ErrorKind::WouldBlock)
        })
        .count();
    assert!(closed >= 1, "answered while every one of the first connections was still open");
    drop(idle);
}
