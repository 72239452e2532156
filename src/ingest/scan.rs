//! Scanning: the profile files under the input folder, in a stable sorted order.
//!
//! Hidden files and folders are skipped, and so are the sidecar files that describe a profile
//! (`NAME.toml`, `NAME.md`). Symbolic links are followed; a link that loops back to one of its
//! ancestors is reported and not followed. Each profile comes with the [`Stamp`]s of its file
//! and of its sidecars, taken from the walk itself, so that a rebuild can tell what changed
//! without opening anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use walkdir::WalkDir;

pub use crate::archive::run::{Stamp, Stamps};
pub use crate::archive::slug::stem;

/// A profile file found by the scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Where to read it.
    pub path: PathBuf,
    /// Its path relative to the input folder, with `/` separators.
    pub rel: String,
    /// Its stamp and those of its sidecars.
    pub stamps: Stamps,
}

/// What the scan found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Profile files, sorted by `rel`.
    pub sources: Vec<Source>,
    /// Paths that could not be read, with the reason.
    pub problems: Vec<(String, String)>,
}

/// Extensions of sidecar files, which are not profiles.
const SIDECARS: &[&str] = &["toml", "md"];
/// Lists the profiles under `input`, leaving out the folders `exclude` (the output and cache
/// folders, when they are inside the input folder).
pub fn scan_except(input: &Path, exclude: &[PathBuf]) -> Result<Scan, String> {
    let exclude: Vec<PathBuf> = exclude.iter().filter_map(|p| p.canonicalize().ok()).collect();
    let skip = |e: &walkdir::DirEntry| {
        e.depth() > 0 && e.file_type().is_dir() && !exclude.is_empty() && e.path().canonicalize().is_ok_and(|c| exclude.contains(&c))
    };
    scan_filtered(input, &skip)
}

/// Lists the profiles under `input`.
pub fn scan(input: &Path) -> Result<Scan, String> {
    scan_filtered(input, &|_| false)
}

fn scan_filtered(input: &Path, skip: &dyn Fn(&walkdir::DirEntry) -> bool) -> Result<Scan, String> {
    let meta = std::fs::metadata(input).map_err(|e| format!("input folder {}: {e}", input.display()))?;
    if !meta.is_dir() {
        return Err(format!("input {} is not a folder", input.display()));
    }
    let mut scan = Scan::default();
    let mut sidecars: HashMap<String, Stamp> = HashMap::new();
    let walker = WalkDir::new(input)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !(e.file_name().to_string_lossy().starts_with('.') || skip(e)));
    let mut files = Vec::new();
    for entry in walker {
        match entry {
            Ok(e) if e.file_type().is_file() => files.push(e.into_path()),
            Ok(e) if !e.file_type().is_dir() => {
                // A FIFO would block the build that opened it, a device could be read for
                // ever: neither is a profile, and each is said.
                use std::os::unix::fs::FileTypeExt;
                let t = e.file_type();
                let what = if t.is_fifo() {
                    "a named pipe (FIFO)"
                } else if t.is_socket() {
                    "a socket"
                } else if t.is_block_device() || t.is_char_device() {
                    "a device"
                } else {
                    "not a regular file"
                };
                scan.problems.push((relative(input, e.path()), format!("{what}, not a profile file; skipped")));
            }
            Ok(_) => {}
            Err(err) => {
                let path = err.path().map(|p| relative(input, p)).unwrap_or_else(|| input.display().to_string());
                let reason = match err.loop_ancestor() {
                    Some(a) => format!("symbolic link loop: it leads back to {}; not followed", a.display()),
                    None => err.io_error().map_or_else(|| err.to_string(), |e| e.to_string()),
                };
                scan.problems.push((path, reason));
            }
        }
    }
    // Each file's stamp (its metadata: one stat, the walk itself read only the folders) and
    // relative path, on every thread of the build: at 100,000 files, on one thread, it was a
    // large part of a rebuild with nothing to do (docs/BENCHMARKS.md, "Figures behind the code").
    let stamped: Vec<(PathBuf, String, std::io::Result<Stamp>)> = files
        .into_par_iter()
        .map(|path| {
            let rel = relative(input, &path);
            let stamp = std::fs::metadata(&path).map(|m| Stamp::of(&m));
            (path, rel, stamp)
        })
        .collect();
    for (path, rel, stamp) in stamped {
        let stamp = match stamp {
            Ok(stamp) => stamp,
            Err(err) => {
                scan.problems.push((rel, err.to_string()));
                continue;
            }
        };
        let ext = Path::new(&rel).extension().and_then(|x| x.to_str()).unwrap_or("");
        if SIDECARS.contains(&ext) {
            sidecars.insert(rel, stamp);
        } else {
            let stamps = Stamps { profile: stamp, ..Stamps::default() };
            scan.sources.push(Source { path, rel, stamps });
        }
    }
    scan.sources.sort_by(|a, b| a.rel.cmp(&b.rel).then_with(|| a.path.cmp(&b.path)));
    // A name that is not UTF-8 is spelt with `\xNN`; a UTF-8 name that spells the same text
    // would be the same run: the second is not built.
    let mut i = 1;
    while i < scan.sources.len() {
        if scan.sources[i].rel == scan.sources[i - 1].rel {
            let s = scan.sources.remove(i);
            scan.problems.push((s.rel, format!("{} has the same name once bytes that are not UTF-8 are written as \\xNN; rename one of them", s.path.display())));
        } else {
            i += 1;
        }
    }
    for source in &mut scan.sources {
        let stem = stem(&source.rel);
        source.stamps.toml = sidecars.get(&format!("{stem}.toml")).copied();
        source.stamps.md = sidecars.get(&format!("{stem}.md")).copied();
    }
    Ok(scan)
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| escaped(c.as_os_str())).collect::<Vec<_>>().join("/")
}

/// A file name as text: itself when it is UTF-8; else its valid parts with every other byte
/// written `\xNN` (and `\` as `\\`), so that names differing only in those bytes stay
/// distinct, and the same bytes always give the same text.
pub fn escaped(name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = name.as_bytes();
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.to_string();
    }
    let mut out = String::new();
    while !bytes.is_empty() {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(&s.replace('\\', "\\\\"));
                break;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(&std::str::from_utf8(good).expect("valid up to here").replace('\\', "\\\\"));
                let bad = e.error_len().unwrap_or(rest.len());
                for b in &rest[..bad] {
                    out.push_str(&format!("\\x{b:02X}"));
                }
                bytes = &rest[bad..];
            }
        }
    }
    out
}

/// `path` less its last `drop` bytes (extensions, which are ASCII): the base of a profile's
/// sidecars, byte for byte.
pub fn raw_stem(path: &Path, drop: usize) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    PathBuf::from(std::ffi::OsStr::from_bytes(&bytes[..bytes.len() - drop]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_compression_and_format_extensions() {
        assert_eq!(stem("api/2026-11-20.folded.gz"), "api/2026-11-20");
        assert_eq!(stem("api/cpu.pb.gz"), "api/cpu");
        assert_eq!(stem("plain"), "plain");
        assert_eq!(stem("v1.2/run.zst"), "v1.2/run");
        assert_eq!(stem("py/prog.speedscope.json.gz"), "py/prog");
        assert_eq!(stem("api/run-1.2.pb.gz"), "api/run-1.2");
        assert_eq!(stem(".folded"), ".folded");
    }

    #[test]
    fn scan_is_sorted_skips_hidden_and_sidecars_and_reports_loops() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        for f in ["b/z.folded", "b/a.folded", "a.folded", ".hidden", ".git/x", "a.toml", "a.md"] {
            std::fs::write(root.join(f), "x 1\n").unwrap();
        }
        std::os::unix::fs::symlink(root, root.join("b/loop")).unwrap();
        let s = scan(root).unwrap();
        let rels: Vec<_> = s.sources.iter().map(|s| s.rel.as_str()).collect();
        assert_eq!(rels, ["a.folded", "b/a.folded", "b/z.folded"]);
        assert_eq!(s.sources[0].stamps.toml.map(|t| t.size), Some(4), "a.toml is a.folded's sidecar");
        assert!(s.sources[0].stamps.md.is_some() && s.sources[1].stamps.toml.is_none());
        assert_eq!(s.problems.len(), 1);
        assert_eq!(s.problems[0].0, "b/loop");
        assert!(s.problems[0].1.contains("loop"), "{:?}", s.problems);
    }
}
