//! Helpers shared by the integration tests: run the real binary, make fixture folders.

#![allow(dead_code)]

pub mod s3;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The flamesite binary built by cargo for these tests.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flamesite"))
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until a server listens on 127.0.0.1:`port`; fails the test, naming `what`, after
/// `seconds`.
pub fn wait_listening(port: u16, what: &str, seconds: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "{what} did not listen on port {port}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Runs flamesite with `args` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin()).args(args).current_dir(dir).output().expect("flamesite runs")
}

/// Runs `flamesite build --input IN --output OUT` plus `extra`.
pub fn build(input: &Path, output: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["build", "--input", input.to_str().unwrap(), "--output", output.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(input.parent().unwrap(), &args)
}

/// Builds `input` into `untouched`, which must succeed, then into `out` (a site a test does
/// something to between builds), whose output it returns: the same builds, side by side.
#[track_caller]
pub fn build_beside(input: &Path, untouched: &Path, out: &Path, round: &str) -> Output {
    let o = build(input, untouched, &[]);
    assert!(o.status.success(), "{round}, the untouched site: {}", stderr(&o));
    build(input, out, &[])
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The bytes of `rel` under tests/data (each folder's README says where its files came from).
pub fn test_data(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

/// What `flamesite fold` must print for folded `input`: counts summed per stack, one line
/// per stack, lines sorted. Written independently of the merge code.
pub fn merged_sorted(input: &str) -> String {
    let mut sums: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut differential = None;
    for line in input.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.rsplitn(3, ' ').collect();
        let diff = *differential.get_or_insert(fields.len() == 3 && fields[1].parse::<u64>().is_ok());
        let (stack, before, after) = if diff {
            (fields[2].to_string(), fields[1].parse::<u64>().unwrap(), fields[0].parse::<u64>().unwrap())
        } else {
            (line.rsplit_once(' ').unwrap().0.to_string(), 0, fields[0].parse::<u64>().unwrap())
        };
        let e = sums.entry(stack).or_default();
        e.0 += before;
        e.1 += after;
    }
    let mut lines: Vec<String> = sums
        .into_iter()
        .map(|(s, (b, a))| if differential == Some(true) { format!("{s} {b} {a}\n") } else { format!("{s} {a}\n") })
        .collect();
    lines.sort();
    lines.concat()
}

/// Every file under `dir`, relative path to bytes.
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            out.insert(rel, std::fs::read(e.path()).unwrap());
        }
    }
    out
}

/// A deterministic folded profile with recursion, shared prefixes and awkward names.
pub fn awkward_profile(seed: u64, stacks: usize) -> String {
    let names = [
        "main",
        "std::vector<int, std::allocator<int> >::push_back(int const&)",
        "java/util/HashMap.get_[j]",
        "do_syscall_64_[k]",
        "<script>alert('x')</script>",
        "operator new(unsigned long)",
        "\"quoted\" & 'single'",
        "größe::λ_閉包",
        "[unknown]",
        "0x7f3a2b1c",
        "<T as core::ops::Fn<(A,)>>::call",
        "recurse",
    ];
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = String::new();
    for _ in 0..stacks {
        let depth = 1 + (next() % 30) as usize;
        let mut frames = vec!["main"];
        for _ in 1..depth {
            let n = names[(next() % names.len() as u64) as usize];
            frames.push(n);
            if n == "recurse" {
                let more = next() % 5;
                frames.extend(std::iter::repeat_n("recurse", more as usize));
            }
        }
        out.push_str(&format!("{} {}\n", frames.join(";"), 1 + next() % 50));
    }
    out
}

/// The site listing of the site in `out`: its `index.json`, with `profiles` filled from the
/// series' listings it names (`s/<series>/index.json`, version 3), sorted by source, as
/// version 2 listed them in one file.
pub fn listing(out: &Path) -> serde_json::Value {
    let read = |rel: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))).unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    let mut index = read("index.json");
    assert_eq!(index["version"], 3, "index.json version");
    assert!(index.get("profiles").is_none(), "version 3 lists profiles per series");
    let mut profiles = Vec::new();
    for s in index["series"].as_array().unwrap() {
        let rel = s["index"].as_str().unwrap();
        assert_eq!(rel, format!("{}index.json", s["url"].as_str().unwrap()));
        let listing = read(rel);
        assert_eq!(listing["format"], "flamesite-series");
        assert_eq!(listing["series"], s["name"]);
        let list = listing["profiles"].as_array().unwrap();
        assert_eq!(list.len() as u64, s["runs"].as_u64().unwrap(), "{rel} lists every run of its series");
        profiles.extend(list.iter().cloned());
    }
    profiles.sort_by(|a, b| a["source"].as_str().cmp(&b["source"].as_str()));
    index["profiles"] = serde_json::Value::Array(profiles);
    index
}

/// The bytes of a file of a built site, through gzip when it is packed (docs/FORMAT.md,
/// "Packed files"): data files are, and exactly those are named `.gz`; manifests and pages
/// are not.
#[allow(dead_code)]
pub fn unpacked(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let packed = bytes.starts_with(&[0x1f, 0x8b]);
    assert_eq!(packed, path.extension().is_some_and(|e| e == "gz"), "{}: packed exactly when named .gz", path.display());
    if !packed {
        return bytes;
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out).unwrap();
    out
}

/// The targets of `href` and `src` attributes in `html`.
pub fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            let end = rest.find('"').unwrap();
            out.push(rest[..end].replace("&amp;", "&"));
            rest = &rest[end..];
        }
    }
    out
}

/// Follows every relative link of every page reachable from the home page; returns the pages
/// visited. Panics on a link to a file that does not exist, or on a root-absolute link.
pub fn crawl(out: &Path) -> BTreeSet<PathBuf> {
    crawl_with(out, true)
}

/// [`crawl`]; without `folders`, a link to a folder (which a host without a directory index
/// answers with 404) fails too.
pub fn crawl_with(out: &Path, folders: bool) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![PathBuf::from("index.html")];
    while let Some(page) = todo.pop() {
        if !seen.insert(page.clone()) {
            continue;
        }
        let html = std::fs::read_to_string(out.join(&page)).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for link in links(&html) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("data:") {
                continue;
            }
            assert!(!link.starts_with('/'), "{}: root-absolute link {link} breaks under a sub-path", page.display());
            let fragment_only = link.starts_with('#');
            let link = link.split(['#', '?']).next().unwrap();
            // (A link that is only a fragment stays on the page.)
            assert!(folders || fragment_only || !(link.is_empty() || link.ends_with('/')), "{}: {link:?} links to a folder", page.display());
            let mut target = page.parent().unwrap().to_path_buf();
            for part in link.split('/') {
                match part {
                    "" | "." => {}
                    ".." => assert!(target.pop() || target.as_os_str().is_empty(), "{}: {link} leaves the site", page.display()),
                    p => target.push(p),
                }
            }
            let mut file = out.join(&target);
            if link.is_empty() || link.ends_with('/') {
                file = file.join("index.html");
                target = target.join("index.html");
            }
            assert!(file.is_file(), "{}: broken link {link} ({})", page.display(), file.display());
            if target.extension().is_some_and(|e| e == "html") {
                todo.push(target);
            }
        }
    }
    seen
}

/// strace, which the test command installs (Debian's package): the crash tests inject faults
/// into a build's system calls with it, and place kills at points of its progress.
pub fn strace() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join("strace")).find(|f| f.is_file()));
    found.unwrap_or_else(|| panic!("strace is not installed (Debian package: strace); scripts/test.sh installs it"))
}

/// Makes a named pipe at `path`.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

/// Sets real resource limits in the child `cmd` runs, before it runs its program: `as_bytes`
/// of address space (RLIMIT_AS: an allocation past it fails, and the process aborts) and
/// `cpu_seconds` of CPU time (RLIMIT_CPU).
pub fn limit(cmd: &mut std::process::Command, as_bytes: u64, cpu_seconds: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only this (forked) process.
    unsafe {
        cmd.pre_exec(move || {
            for (resource, value) in [(libc::RLIMIT_AS, as_bytes), (libc::RLIMIT_CPU, cpu_seconds)] {
                let l = libc::rlimit { rlim_cur: value, rlim_max: value };
                if libc::setrlimit(resource, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Runs `cmd` to its end, as `Command::output` does, but fails the test (killing the child)
/// when it has not ended after `seconds`: a guard for a build that would otherwise hang (a
/// FIFO it opens and waits on), so the test fails rather than never ends. Not a measure of
/// speed: the bound is minutes over what the build takes.
pub fn output_within(cmd: &mut Command, seconds: u64) -> Output {
    let logs = tempfile::tempdir().unwrap();
    let (out, err) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let mut child = cmd.stdout(std::fs::File::create(&out).unwrap()).stderr(std::fs::File::create(&err).unwrap()).spawn().expect("the program runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not end within {seconds} s (it hangs); stderr: {}", std::fs::read_to_string(&err).unwrap_or_default());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output { status, stdout: std::fs::read(&out).unwrap(), stderr: std::fs::read(&err).unwrap() }
}
