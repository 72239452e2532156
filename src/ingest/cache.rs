//! The incremental build cache: the graph files of every profile built, keyed by what they
//! were built from, so that a rebuild decodes only new or changed profiles.
//!
//! The key is a BLAKE3 hash of the flamesite version, every configuration value that changes
//! a graph (chunking, limits, perf and pprof options, palette, the sidecar's unit, whether a
//! preview image is made) and the profile's bytes, so the cache never serves a graph built from other
//! content: a file edited in place, with its size and time kept, has another key. An entry is
//! a folder `KEY/` holding `entry.json` (what decoding learnt: format, metadata, graphs, the
//! first view's files, warnings) and `files/`, the run folder's graph files and preview image
//! as they are published. The build hard-links them into the output (copies where links are
//! not possible), so the cache costs no second copy on disk. An entry is written aside and
//! renamed into place, so it appears whole or not at all. The cache folder may hold only
//! entries: the build state ([`STATE`]) and entries are all that [`Cache::retain`] keeps, and
//! it removes nothing whose name is not an entry's, so a `cache_dir` pointed at another folder
//! cannot lose its files.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use super::GraphInfo;

/// What the cache keeps of one profile besides its files.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Product {
    /// Format it was read as.
    pub format: String,
    /// What the profile says about itself.
    pub metadata: BTreeMap<String, String>,
    /// Its graphs; `data` is relative to the profile's folder.
    pub graphs: Vec<GraphInfo>,
    /// Files of the first graph's first view (`Manifest::first_view`), relative to its folder.
    pub preload: Vec<String>,
    /// Warnings of decoding.
    pub warnings: Vec<String>,
    /// Files of the profile's folder, relative to it, sorted.
    pub files: Vec<String>,
    /// Of a comparison: what changed, per graph.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<crate::archive::run::GraphChanges>,
}

/// The cache folder.
pub struct Cache {
    dir: PathBuf,
    fingerprint: String,
}

impl Cache {
    /// The cache at `dir`, for builds with `config`.
    pub fn new(dir: &Path, config: &Config) -> Cache {
        let fingerprint = format!(
            "flamesite {} cache 3\n{:?}\n{:?}\n{:?}\n{:?}\n{}\npreview {}",
            env!("CARGO_PKG_VERSION"),
            config.chunks,
            config.limits,
            config.perf,
            config.pprof,
            config.palette.as_str(),
            !config.base_url.is_empty()
        );
        Cache { dir: dir.to_path_buf(), fingerprint }
    }

    /// The key of the profile at `path` built with `unit` (the sidecar's, if any).
    pub fn key(&self, path: &Path, unit: Option<&str>) -> Result<String, String> {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.fingerprint.as_bytes());
        hasher.update(format!("\nunit {unit:?}\n").as_bytes());
        let mut file = fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hasher.finalize().to_hex().to_string())
    }

    /// The key of the comparison of the runs of keys `before` and `after` (an entry like a
    /// profile's, of the comparison's graph files).
    pub fn pair_key(&self, before: &str, after: &str) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.fingerprint.as_bytes());
        hasher.update(format!("\ncomparison 2\n{before}\n{after}\n").as_bytes());
        hasher.finalize().to_hex().to_string()
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry of `key`, if the cache has it whole.
    pub fn get(&self, key: &str) -> Option<Product> {
        let text = fs::read(self.dir.join(key).join("entry.json")).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Where the file `rel` (relative to the run's folder) of entry `key` is.
    pub fn file(&self, key: &str, rel: &str) -> PathBuf {
        self.dir.join(key).join("files").join(rel)
    }

    /// Makes entry `key` with `make`, which hands each file to the sink it is given and
    /// returns what the entry records; the entry appears only when `make` succeeded.
    pub fn fill(
        &self,
        key: &str,
        make: impl FnOnce(crate::store::chunk::Sink) -> Result<Product, String>,
    ) -> Result<Product, String> {
        let tmp = self.dir.join(format!(".{key}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()));
        let _ = fs::remove_dir_all(&tmp);
        let files = tmp.join("files");
        let sink = |rel: &str, bytes: &[u8]| {
            let path = files.join(rel);
            if let Some(p) = path.parent() {
                fs::create_dir_all(p).map_err(|e| format!("cache {}: {e}", p.display()))?;
            }
            fs::write(&path, bytes).map_err(|e| format!("cache {}: {e}", path.display()))
        };
        let result = make(&sink).and_then(|product| {
            fs::create_dir_all(&tmp).map_err(|e| format!("cache {}: {e}", tmp.display()))?;
            let json = serde_json::to_vec(&product).map_err(|e| e.to_string())?;
            fs::write(tmp.join("entry.json"), json).map_err(|e| format!("cache {}: {e}", tmp.display()))?;
            let dest = self.dir.join(key);
            if fs::rename(&tmp, &dest).is_err() {
                // Another thread made the same entry (two profiles with the same bytes).
                let _ = fs::remove_dir_all(&tmp);
            }
            Ok(product)
        });
        if result.is_err() {
            let _ = fs::remove_dir_all(&tmp);
        }
        result
    }

    /// Removes the entries `keys`.
    pub fn remove(&self, keys: impl Iterator<Item = String>) {
        for key in keys.filter(|k| is_key(k)) {
            let _ = fs::remove_dir_all(self.dir.join(key));
        }
    }

    /// Removes every entry not in `used`, and leftovers of interrupted writes; nothing else.
    pub fn retain(&self, used: &BTreeSet<&str>) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let leftover = name.starts_with('.') && name.ends_with(".tmp") && is_key(name[1..].split('.').next().unwrap_or(""));
            if (is_key(&name) && !used.contains(name.as_str())) || leftover {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
}

/// File name of the build state in the cache folder (see `crate::build::state`).
pub const STATE: &str = "state.bin";

/// Whether `name` is the name of an entry: 64 lower-case hex digits.
pub fn is_key(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks that `dir` holds nothing but cache entries and the build state, so that pruning
/// entries can never remove a file flamesite did not write.
pub fn check_folder(dir: &Path) -> Result<(), String> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = is_key(&name) || [STATE, crate::build::state::DATA, crate::build::state::DIRTY].contains(&name.as_str()) || name.starts_with('.') && name.ends_with(".tmp");
        if !ours {
            return Err(format!(
                "cache folder {} holds {name:?}, which is not a flamesite cache entry; set cache_dir to a folder of its own (the default is .NAME.cache beside the output folder NAME)",
                dir.display()
            ));
        }
    }
    Ok(())
}
