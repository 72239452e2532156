//! The output: the only code that writes the published site, and through which the build reads
//! it back. A site is published to a local folder ([`staging`]: a second tree swapped in at
//! once) or to object storage ([`bucket`]: changes uploaded in an order no reader can tell
//! from a whole site); [`Output`] and [`Published`] are the one seam the build goes through,
//! whichever it is, and [`foreign`] what each finds there that the build did not write.

pub mod bucket;
pub mod foreign;
pub mod record;
pub mod staging;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{shown, OutputError, Warning};
use record::Tree;

/// The door to the published site: the tree a build brings to the new site, then publishes
/// ([`Output::commit`]). A folder ([`staging::Staging`]: a second tree beside the output,
/// swapped in at once) and a bucket ([`bucket::Staging`]: the bucket itself, changed in
/// order) are its two implementations; no caller outside this module knows which it has.
pub trait Output: Send + Sync {
    /// Makes the file at `rel` (a `/`-separated path) hold `bytes`; writes only if it differs.
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError>;

    /// Makes the file at `rel` hold `bytes`, known to differ from what it holds.
    fn replace(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError>;

    /// Removes the file or folder at `rel`, as the tree held it before this publish: a build
    /// removes a path before it writes there (a run's old graph files, then its new ones),
    /// never after (a bucket keeps what this publish wrote).
    fn remove(&self, rel: &str) -> Result<(), OutputError>;

    /// Makes the file at `rel` the published site's file at `rel`, which holds the right bytes.
    /// A bucket is the published site: nothing to do. `false` when it could not be (a folder's
    /// published file reached through a symbolic link): the caller writes the bytes.
    fn link_published(&self, rel: &str) -> Result<bool, OutputError>;

    /// Whether the published site's file at `rel` holds `bytes` already (unknown in a bucket:
    /// `false`).
    fn published_holds(&self, rel: &str, bytes: &[u8]) -> bool;

    /// The symbolic links removed from the tree where the site has a folder (never written
    /// through), each by its path; a bucket has none.
    fn unlinked(&self) -> Vec<String>;

    /// Where the file `rel` this build wrote can be read on this machine.
    fn path(&self, rel: &str) -> PathBuf;

    /// How a warning names the file or folder `rel` of the tree: its absolute path, or its
    /// object's address.
    fn name(&self, rel: &str) -> String;

    /// The identities of the tree being changed and of the published tree (0: none), which the
    /// build state names trees by.
    fn inodes(&self) -> (u64, u64);

    /// The time now, as the output stamps its files (0 when its files are not looked into).
    fn clock(&self) -> u64;

    /// The size of the file `rel` of the tree, when it can be told without a request (a
    /// folder's); `None` otherwise.
    fn size(&self, rel: &str) -> Option<u64>;

    /// The bytes of every file in the tree, when they can be counted on this machine.
    fn bytes(&self) -> Option<u64>;

    /// What the output holds that the build does not write, and what it lacks of what the
    /// record of the last build (`live`, when that record describes the published tree) says
    /// it holds. `ours`: the names at the site's top that the build writes; `left`: what the
    /// last build found put by hand in the tree now being changed (removed from it first).
    /// A bucket, often shared, takes `ours` as the only names of the site it may remove.
    fn survey(&self, ours: &BTreeSet<String>, live: Option<&Tree>, left: &[String]) -> Result<Survey, OutputError>;

    /// Publishes the new site (see [`staging::Staging::commit`], [`bucket::Staging::commit`]);
    /// `sweep`: remove what the build did not write; `mirror`: make the tree the next build
    /// starts from a copy of the new site. Returns that tree's identity when it is one.
    fn commit(self: Box<Self>, sweep: bool, mirror: bool) -> Result<Option<u64>, OutputError>;
}

/// What [`Output::survey`] found.
#[derive(Debug, Default)]
pub struct Survey {
    /// Said of what was put in the output by hand, and of what was removed from it.
    pub warnings: Vec<Warning>,
    /// What was put by hand inside the published tree's folders: the next build, which brings
    /// that tree up to date, removes it first.
    pub found: Vec<String>,
    /// What the published tree lacks of what the record says it holds (removed by hand): the
    /// next build, which brings that tree up to date, writes it again.
    pub missing: Vec<String>,
    /// Pages and files the published site does not hold as its record says, to write again.
    pub pages_lacking: Vec<String>,
    /// Run folders whose graph files are not all there as the record says.
    pub runs_lacking: Vec<String>,
}

impl Output for staging::Staging {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        staging::Staging::write(self, rel, bytes)
    }
    fn replace(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        staging::Staging::replace(self, rel, bytes)
    }
    fn remove(&self, rel: &str) -> Result<(), OutputError> {
        staging::Staging::remove(self, rel)
    }
    fn link_published(&self, rel: &str) -> Result<bool, OutputError> {
        staging::Staging::link_published(self, rel)
    }
    fn published_holds(&self, rel: &str, bytes: &[u8]) -> bool {
        staging::Staging::published_holds(self, rel, bytes)
    }
    fn unlinked(&self) -> Vec<String> {
        staging::Staging::unlinked(self)
    }
    fn path(&self, rel: &str) -> PathBuf {
        staging::Staging::path(self, rel)
    }
    fn name(&self, rel: &str) -> String {
        shown(&staging::Staging::path(self, rel))
    }
    fn inodes(&self) -> (u64, u64) {
        staging::Staging::inodes(self)
    }
    fn clock(&self) -> u64 {
        staging::Staging::clock(self)
    }
    fn size(&self, rel: &str) -> Option<u64> {
        std::fs::metadata(staging::Staging::path(self, rel)).ok().map(|m| m.len())
    }
    fn bytes(&self) -> Option<u64> {
        Some(foreign::folder_bytes(&staging::Staging::path(self, "")))
    }
    fn survey(&self, ours: &BTreeSet<String>, live: Option<&Tree>, left: &[String]) -> Result<Survey, OutputError> {
        foreign::survey_folder(self, self.given(), ours, live, left)
    }
    fn commit(self: Box<Self>, sweep: bool, mirror: bool) -> Result<Option<u64>, OutputError> {
        staging::Staging::commit(*self, sweep, mirror)
    }
}

impl Output for bucket::Staging {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        bucket::Staging::write(self, rel, bytes)
    }
    fn replace(&self, rel: &str, bytes: &[u8]) -> Result<(), OutputError> {
        bucket::Staging::replace(self, rel, bytes)
    }
    fn remove(&self, rel: &str) -> Result<(), OutputError> {
        bucket::Staging::remove(self, rel)
    }
    fn link_published(&self, _rel: &str) -> Result<bool, OutputError> {
        Ok(true)
    }
    fn published_holds(&self, _rel: &str, _bytes: &[u8]) -> bool {
        false
    }
    fn unlinked(&self) -> Vec<String> {
        Vec::new()
    }
    fn path(&self, rel: &str) -> PathBuf {
        bucket::Staging::path(self, rel)
    }
    fn name(&self, rel: &str) -> String {
        format!("{}/{rel}", self.bucket().url())
    }
    fn inodes(&self) -> (u64, u64) {
        bucket::Staging::inodes(self)
    }
    fn clock(&self) -> u64 {
        0
    }
    fn size(&self, _rel: &str) -> Option<u64> {
        None
    }
    fn bytes(&self) -> Option<u64> {
        None
    }
    fn survey(&self, ours: &BTreeSet<String>, live: Option<&Tree>, _left: &[String]) -> Result<Survey, OutputError> {
        // Only the folders and files the site writes are its.
        self.set_ours(ours.iter().cloned());
        // What the record says the bucket holds is checked against one listing of it (sizes).
        let Some(live) = live else { return Ok(Survey::default()) };
        let listed = self.bucket().list("").map_err(|e| OutputError::Bucket(format!("checking the published site: {e}")))?;
        Ok(foreign::survey_bucket(&listed, live))
    }
    fn commit(self: Box<Self>, sweep: bool, _mirror: bool) -> Result<Option<u64>, OutputError> {
        bucket::Staging::commit(*self, sweep)
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

pub use crate::objects::content_type;

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


#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    /// Two publishes of a small site through the door: the first writes, replaces and removes,
    /// the second changes a page, adds one and removes a folder; each surveys and commits as a
    /// build does. Returns what `read` says the site holds after each.
    fn publish_twice(open: &dyn Fn() -> Box<dyn Output>, read: &dyn Fn() -> BTreeMap<String, Vec<u8>>) -> [BTreeMap<String, Vec<u8>>; 2] {
        let ours: BTreeSet<String> = ["index.html", "index.json", "p", "static"].map(String::from).into();
        // What makes a folder or a prefix a flamesite site, which the next publish replaces.
        let index = br#"{"format":"flamesite-index","version":3,"series":[],"names":{"runs":{},"series":{}}}"#;
        let out = open();
        out.write("index.json", index).unwrap();
        out.write("index.html", b"<h1>one</h1>").unwrap();
        out.write("static/a.css", b"a {}").unwrap();
        out.write("p/a/index.html", b"a").unwrap();
        out.write("p/b/index.html", b"b").unwrap();
        out.write("p/e/index.html", b"e, which the next publish leaves out").unwrap();
        out.replace("p/a/index.html", b"a, again").unwrap();
        out.survey(&ours, None, &[]).unwrap();
        out.commit(true, false).unwrap();
        let first = read();
        let out = open();
        // The whole site is written again (nothing here says what the tree holds), but for
        // what the second publish leaves out, which the commit sweeps.
        out.write("index.json", index).unwrap();
        out.write("index.html", b"<h1>two</h1>").unwrap();
        out.write("static/a.css", b"a {}").unwrap();
        out.write("p/a/index.html", b"a, again").unwrap();
        out.write("p/d/index.html", b"d").unwrap();
        // A folder removed, then written anew (as a run's graph files are).
        out.remove("p/b").unwrap();
        out.write("p/b/new.html", b"b, new").unwrap();
        out.survey(&ours, None, &[]).unwrap();
        out.commit(true, false).unwrap();
        [first, read()]
    }

    #[test]
    fn a_folder_and_a_bucket_published_through_the_door_hold_the_same_site() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("site");
        let folder = publish_twice(&|| Box::new(staging::Staging::new(&target).unwrap()), &|| {
            walkdir::WalkDir::new(&target)
                .into_iter()
                .flatten()
                .filter(|e| e.file_type().is_file())
                .map(|e| (e.path().strip_prefix(&target).unwrap().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
                .collect()
        });
        let b = Arc::new(bucket::Bucket::in_memory());
        let lock = std::sync::Mutex::new(None);
        let bucket = publish_twice(
            &|| {
                // Each publish holds the bucket's lock while it runs, as a build does.
                let mut held = lock.lock().unwrap();
                if let Some(old) = held.take() {
                    drop::<bucket::Lock>(old);
                }
                let l = bucket::Lock::take(b.clone()).unwrap();
                let staging = bucket::Staging::new(b.clone(), &l).unwrap();
                *held = Some(l);
                Box::new(staging)
            },
            &|| {
                let listed = b.list("").unwrap();
                listed.into_iter().filter(|(rel, _)| !rel.starts_with(bucket::RECORD)).map(|(rel, _)| (rel.clone(), b.get(&rel).unwrap().unwrap())).collect()
            },
        );
        let names = |site: &BTreeMap<String, Vec<u8>>| site.keys().cloned().collect::<Vec<_>>();
        assert_eq!(names(&folder[0]), ["index.html", "index.json", "p/a/index.html", "p/b/index.html", "p/e/index.html", "static/a.css"]);
        assert_eq!(folder[0]["p/a/index.html"], b"a, again");
        assert_eq!(names(&folder[1]), ["index.html", "index.json", "p/a/index.html", "p/b/new.html", "p/d/index.html", "static/a.css"]);
        assert_eq!(folder[1]["index.html"], b"<h1>two</h1>");
        assert_eq!(bucket, folder);
    }
}
