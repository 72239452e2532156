//! The output: the only code that writes the published site, and through which the build reads
//! it back. A site is published to a local folder ([`staging`]: a second tree swapped in at
//! once) or to object storage ([`bucket`]: changes uploaded in an order no reader can tell
//! from a whole site); [`Output`] and [`Published`] are the one seam the build goes through,
//! whichever it is.

pub mod bucket;
pub mod record;
pub mod staging;

use std::path::{Path, PathBuf};

use crate::error::OutputError;

/// The tree a build brings to the new site.
pub enum Output {
    /// A folder beside the output folder, swapped in.
    Folder(staging::Staging),
    /// The bucket itself, changed in order.
    Bucket(bucket::Staging),
}

impl Output {
    /// Makes the file at `rel` (a `/`-separated path) hold `bytes`; writes only if it differs.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        match self {
            Output::Folder(s) => s.write(rel, bytes),
            Output::Bucket(s) => s.write(rel, bytes),
        }
    }

    /// Makes the file at `rel` hold `bytes`, known to differ from what it holds.
    pub fn replace(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        match self {
            Output::Folder(s) => s.replace(rel, bytes),
            Output::Bucket(s) => s.replace(rel, bytes),
        }
    }

    /// Makes the file at `rel` the published site's file at `rel`, which holds the right bytes.
    /// A bucket is the published site: nothing to do. `false` when it could not be (a folder's
    /// published file reached through a symbolic link): the caller writes the bytes.
    pub fn link_published(&self, rel: &str) -> Result<bool, OutputError> {
        match self {
            Output::Folder(s) => s.link_published(rel),
            Output::Bucket(_) => Ok(true),
        }
    }

    /// Whether the published site's file at `rel` holds `bytes` already (unknown in a bucket:
    /// `false`).
    pub fn published_holds(&self, rel: &str, bytes: &[u8]) -> bool {
        match self {
            Output::Folder(s) => s.published_holds(rel, bytes),
            Output::Bucket(_) => false,
        }
    }

    /// The symbolic links removed from a folder's staging tree where the site has a folder
    /// (never written through); a bucket has none.
    pub fn unlinked(&self) -> Vec<String> {
        match self {
            Output::Folder(s) => s.unlinked(),
            Output::Bucket(_) => Vec::new(),
        }
    }

    /// Removes the file or folder at `rel`.
    pub fn remove(&self, rel: &str) -> Result<(), OutputError> {
        match self {
            Output::Folder(s) => s.remove(rel),
            Output::Bucket(s) => s.remove(rel),
        }
    }

    /// Where the file `rel` this build wrote can be read on this machine.
    pub fn path(&self, rel: &str) -> PathBuf {
        match self {
            Output::Folder(s) => s.path(rel),
            Output::Bucket(s) => s.path(rel),
        }
    }

    /// The identities of the tree being changed and of the published tree (0: none), which the
    /// build state names trees by.
    pub fn inodes(&self) -> (u64, u64) {
        match self {
            Output::Folder(s) => s.inodes(),
            Output::Bucket(s) => s.inodes(),
        }
    }

    /// The file system's time now, as it stamps the output's files ([`staging::Staging::clock`];
    /// 0 for a bucket, whose objects are not looked into).
    pub fn clock(&self) -> u64 {
        match self {
            Output::Folder(s) => s.clock(),
            Output::Bucket(_) => 0,
        }
    }

    /// Publishes the new site (see [`staging::Staging::commit`], [`bucket::Staging::commit`]);
    /// returns the identity of the tree the next build starts from when it is a copy of the new
    /// site.
    pub fn commit(self, sweep: bool, mirror: bool) -> Result<Option<u64>, OutputError> {
        match self {
            Output::Folder(s) => s.commit(sweep, mirror),
            Output::Bucket(s) => s.commit(sweep),
        }
    }
}

/// The published site as the build reads it back.
pub enum Published {
    /// The output folder.
    Folder(PathBuf),
    /// A bucket, read a folder at a time.
    Bucket(bucket::Mirror),
}

impl Published {
    /// Where the site's folder `url` is on this machine; `files`, when known, are the files
    /// of it that are to be read.
    pub fn folder(&self, url: &str, files: Option<&[String]>) -> PathBuf {
        match self {
            Published::Folder(out) => out.join(url),
            Published::Bucket(m) => m.folder(url, files),
        }
    }

    /// Where the files of cache entry `key` stored with the published site by a shard of a
    /// build are on this machine (`files`: those to read), when the site keeps a store (a
    /// bucket does).
    pub fn stored(&self, key: &str, files: Option<&[String]>) -> Option<PathBuf> {
        match self {
            Published::Folder(_) => None,
            Published::Bucket(m) => Some(m.folder(&format!("{}/cache/{key}/files", bucket::RECORD), files)),
        }
    }

    /// Why reads back of the published site failed (a bucket's: each names the object and the
    /// server's error); none for a folder, whose readers name the file.
    pub fn failures(&self) -> Vec<String> {
        match self {
            Published::Folder(_) => Vec::new(),
            Published::Bucket(m) => m.failures(),
        }
    }

    /// The record (`entry.json`) of cache entry `key` kept with the published site, when it
    /// keeps one (a bucket does).
    pub fn entry(&self, key: &str) -> Option<Vec<u8>> {
        match self {
            Published::Folder(_) => None,
            Published::Bucket(m) => m.entry(key),
        }
    }
}

/// The Content-Type of the site's file `rel`.
pub fn content_type(rel: &str) -> &'static str {
    match Path::new(rel).extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        // Packed data files (src/store/gz.rs), as GitHub Pages and most hosts label them.
        "gz" => "application/gzip",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "xml" => "application/atom+xml",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// What kind of site an `index.json` says a folder or a prefix holds, when flamesite wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// An archive `flamesite build` made: its index lists series.
    Archive,
    /// A comparison `flamesite diff -o` wrote.
    Comparison,
}

/// The most bytes of an `index.json` read to recognise a site: far above any archive's (the
/// listing of series, with the names record), far below what would exhaust memory.
pub const INDEX_BUDGET: u64 = 256 << 20;

/// The site `bytes` (an `index.json`) is the listing of, if flamesite wrote it: the whole
/// document must be a flamesite index (format, version, series, names), not merely contain
/// its format's name (a user's file that quotes it is not a site, and one cut short is not a
/// whole one).
pub fn recognise(bytes: &[u8]) -> Option<SiteKind> {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Probe {
        format: String,
        version: u32,
        series: Vec<IgnoredAny>,
        #[serde(default)]
        names: Option<IgnoredAny>,
        #[serde(default)]
        comparison: Option<IgnoredAny>,
    }
    let p: Probe = serde_json::from_slice(bytes).ok()?;
    if p.format != "flamesite-index" || p.version == 0 {
        return None;
    }
    // A build's index records the names it gave; a comparison's says what it compared.
    match (p.comparison.is_some(), p.names.is_some()) {
        (true, _) => Some(SiteKind::Comparison),
        (false, true) => Some(SiteKind::Archive),
        (false, false) => (p.version <= 2 && !p.series.is_empty()).then_some(SiteKind::Archive),
    }
}

/// The site folder `dir`'s `index.json`: `Ok(None)` when there is none; an error when it is not
/// a regular file (a FIFO would block the read, a link to `/dev/zero` never end) or is larger
/// than [`INDEX_BUDGET`].
pub fn read_index(dir: &Path) -> Result<Option<Vec<u8>>, String> {
    let path = dir.join("index.json");
    match crate::store::read_regular(&path, INDEX_BUDGET) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The process id in the name of a temporary folder a flamesite process makes in the system's
/// temporary folder: `flamesite-publish-PID-N` (a publish's spool), `flamesite-input-PID-N`
/// (profiles from a bucket), `flamesite-PID-HASH.cache` (the copy of a bucket's record). No
/// other name is flamesite's.
fn temp_folder_pid(name: &str) -> Option<u32> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = name.strip_prefix("flamesite-publish-").or_else(|| name.strip_prefix("flamesite-input-")) {
        let (pid, n) = rest.split_once('-')?;
        return if digits(pid) && digits(n) { pid.parse().ok() } else { None };
    }
    let (pid, hash) = name.strip_prefix("flamesite-")?.strip_suffix(".cache")?.split_once('-')?;
    if digits(pid) && hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        pid.parse().ok()
    } else {
        None
    }
}

/// Removes the temporary folders of flamesite processes that are gone (killed while they
/// published: nothing of theirs ran to remove them), from the system's temporary folder: only
/// folders of flamesite's own names ([`temp_folder_pid`]), of this user, whose process is not
/// there (`/proc/PID`, on this machine since it booted) or that are older than the boot.
/// Returns the folders removed.
pub fn remove_dead_temp_folders() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut removed = Vec::new();
    // Without /proc, no process can be told gone.
    if !Path::new("/proc/self").exists() {
        return removed;
    }
    let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|s| s.lines().find_map(|l| l.strip_prefix("btime ")?.trim().parse::<i64>().ok()));
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let tmp = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&tmp) else { return removed };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(temp_folder_pid) else { continue };
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if pid == std::process::id() || !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let before_boot = boot.is_some_and(|b| meta.mtime() < b);
        if before_boot || !Path::new(&format!("/proc/{pid}")).exists() {
            if std::fs::remove_dir_all(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    removed
}

