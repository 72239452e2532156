//! What the last build left behind, so that the next one does only what changed: the record
//! of every run with the stamps of its files, the naming record, and what each of the two
//! output trees holds (the published one, and the previous one beside it, which the next
//! build brings up to date and swaps in).
//!
//! A tree is described by the hash of every page it holds and the cache key of every run's
//! graph files; the previous tree is kept as its differences from the published one, which
//! are few. The state is saved in the cache folder as `state.json` after each build that
//! changed anything, written aside and renamed. While a build changes the previous tree it
//! leaves a marker beside the state; a build that finds the marker (the last one was killed
//! half-way) does not trust the previous tree and rebuilds it whole.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::slug;
use crate::ingest::RunRecord;

/// Version of the state's layout; another version is ignored (the build starts afresh).
const VERSION: u32 = 1;

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

/// The state of the last build.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Its layout's version.
    pub version: u32,
    /// The build's fingerprint: flamesite's version, the configuration and the theme.
    pub fingerprint: String,
    /// Who holds which name.
    pub names: slug::Record,
    /// Every run published, sorted by source path.
    pub runs: Vec<SavedRun>,
    /// The published tree.
    pub live: Tree,
    /// The previous tree, when known.
    pub next: Option<TreeDiff>,
}

impl State {
    /// The state saved in `dir` for builds of `fingerprint`; an empty one when there is none,
    /// it does not parse or it was made by another configuration.
    pub fn load(dir: &Path, fingerprint: &str) -> Option<State> {
        let bytes = fs::read(dir.join(crate::ingest::cache::STATE)).ok()?;
        let mut state: State = serde_json::from_slice(&bytes).ok()?;
        if state.version != VERSION {
            return None;
        }
        if dir.join(DIRTY).exists() {
            state.next = None;
        }
        if state.fingerprint != fingerprint {
            // Records and trees were made with other settings: keep only the names, which
            // must survive any change.
            return Some(State { names: state.names, ..State::default() });
        }
        Some(state)
    }

    /// Saves the state in `dir` and removes the marker.
    pub fn save(mut self, dir: &Path) -> Result<(), String> {
        self.version = VERSION;
        let path = dir.join(crate::ingest::cache::STATE);
        let tmp = dir.join(format!(".state.{}.tmp", std::process::id()));
        let json = serde_json::to_vec(&self).map_err(|e| e.to_string())?;
        fs::write(&tmp, json).map_err(|e| format!("{}: {e}", tmp.display()))?;
        fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = fs::remove_file(dir.join(DIRTY));
        Ok(())
    }
}

/// Marks the previous tree as being changed, until the next [`State::save`].
pub fn mark_dirty(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(DIRTY);
    fs::write(&path, b"a build is bringing the previous output tree up to date\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
