//! What the last build left behind, so that the next one does only what changed: the record
//! of every run with the stamps of its files, the naming record, and what each of the two
//! output trees holds (the published one, and the previous one beside it, which the next
//! build brings up to date and swaps in).
//!
//! A tree is described by the hash of every page it holds and the cache key of every run's
//! graph files; the previous tree is kept as its differences from the published one, which
//! are few. The state is saved in the cache folder (`state.bin`, `state-data.bin`, in postcard's
//! binary encoding of serde) after each build that changed anything, written aside and renamed. While a build changes the previous tree it
//! leaves a marker beside the state; a build that finds the marker (the last one was killed
//! half-way) does not trust the previous tree and rebuilds it whole.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::slug;
use crate::ingest::{RunRecord, Stamps};

/// Version of the state's layout; another version is ignored (the build starts afresh).
const VERSION: u32 = 4;

/// File name of the marker of a build changing the previous tree.
pub const DIRTY: &str = "state.dirty";

/// A run as the last build published it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRun {
    /// Its record.
    pub record: RunRecord,
    /// Its record's hash.
    pub hash: u64,
}

/// What one output tree holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Tree {
    /// Inode of the tree's folder, which tells the two trees apart after a swap.
    pub ino: u64,
    /// Every page's path with its hash.
    pub pages: BTreeMap<String, u64>,
    /// Every run's folder with the cache key of its graph files.
    pub runs: BTreeMap<String, String>,
}

/// How the previous tree differs from the published one: for each path or run folder that
/// differs, what the previous tree has there (`None`: nothing).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TreeDiff {
    /// Inode of the previous tree's folder.
    pub ino: u64,
    /// Pages that differ.
    pub pages: BTreeMap<String, Option<u64>>,
    /// Run folders whose graph files differ.
    pub runs: BTreeMap<String, Option<String>>,
}

impl TreeDiff {
    /// What `live` and `other` differ in, as seen from `other`.
    pub fn between(live: &Tree, other: &Tree) -> TreeDiff {
        let mut d = TreeDiff { ino: other.ino, ..TreeDiff::default() };
        for (path, h) in &live.pages {
            if other.pages.get(path) != Some(h) {
                d.pages.insert(path.clone(), other.pages.get(path).copied());
            }
        }
        for (path, h) in &other.pages {
            if !live.pages.contains_key(path) {
                d.pages.insert(path.clone(), Some(*h));
            }
        }
        for (url, k) in &live.runs {
            if other.runs.get(url) != Some(k) {
                d.runs.insert(url.clone(), other.runs.get(url).cloned());
            }
        }
        for (url, k) in &other.runs {
            if !live.runs.contains_key(url) {
                d.runs.insert(url.clone(), Some(k.clone()));
            }
        }
        d
    }
}

/// The small part of the state, enough to tell that nothing changed: every run's source
/// path, stamps and record hash, and which trees are which.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Header {
    /// Its layout's version.
    pub version: u32,
    /// The build's fingerprint: flamesite's version, the configuration and the theme.
    pub fingerprint: String,
    /// Tells a header and its [`Data`] apart from those of another build.
    pub generation: u64,
    /// Inode of the published tree.
    pub live_ino: u64,
    /// Every run published, sorted by source path.
    pub runs: Vec<Known>,
    /// Hash of the site's `static/` files (paths and bytes) published.
    pub statics: String,
}

/// A run as the header knows it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Known {
    /// Its source path.
    pub source: String,
    /// Its files' stamps.
    pub stamps: Stamps,
    /// Its record's hash.
    pub hash: u64,
    /// How many graphs it has.
    #[serde(default)]
    pub graphs: usize,
}

/// The rest of the state, read only when something changed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Data {
    /// The [`Header::generation`] it belongs with.
    pub generation: u64,
    /// Who holds which name.
    pub names: slug::Record,
    /// Every run published, sorted by source path.
    pub runs: Vec<SavedRun>,
    /// The published tree.
    pub live: Tree,
    /// The previous tree, when known.
    pub next: Option<TreeDiff>,
    /// Every comparison published.
    pub comparisons: Vec<crate::archive::run::Compared>,
}

/// File name of the state's data, beside [`crate::ingest::cache::STATE`].
pub const DATA: &str = "state-data.bin";

impl Header {
    /// The header saved in `dir` for builds of `fingerprint`, if any.
    pub fn load(dir: &Path, fingerprint: &str) -> Option<Header> {
        let bytes = fs::read(dir.join(crate::ingest::cache::STATE)).ok()?;
        let header: Header = postcard::from_bytes(&bytes).ok()?;
        (header.version == VERSION && header.fingerprint == fingerprint).then_some(header)
    }
}

impl Data {
    /// The data saved in `dir` with `header`; `None` when missing or of another build. The
    /// previous tree is unknown when a build was killed while changing it.
    pub fn load(dir: &Path, header: &Header) -> Option<Data> {
        let bytes = fs::read(dir.join(DATA)).ok()?;
        let mut data: Data = postcard::from_bytes(&bytes).ok()?;
        if data.generation != header.generation {
            return None;
        }
        if dir.join(DIRTY).exists() {
            data.next = None;
        }
        Some(data)
    }
}

/// Saves the state in `dir` (the data first, then the header that names it) and removes the
/// marker.
pub fn save(dir: &Path, mut header: Header, mut data: Data) -> Result<(), String> {
    header.version = VERSION;
    let generation = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    header.generation = generation;
    data.generation = generation;
    write_state(dir, DATA, &data)?;
    write_state(dir, crate::ingest::cache::STATE, &header)?;
    let _ = fs::remove_file(dir.join(DIRTY));
    Ok(())
}

fn write_state(dir: &Path, name: &str, value: &impl Serialize) -> Result<(), String> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    // Streamed through a buffer: the state of a large archive is tens of megabytes.
    let file = fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    postcard::to_io(value, &mut out).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::io::Write::flush(&mut out).map_err(|e| format!("{}: {e}", tmp.display()))?;
    fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Marks the previous tree as being changed, until the next [`State::save`].
pub fn mark_dirty(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(DIRTY);
    fs::write(&path, b"a build is bringing the previous output tree up to date\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
