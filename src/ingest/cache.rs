//! The incremental build cache: the graph files of every profile built, keyed by what they
//! were built from, so that a rebuild decodes only new or changed profiles.
//!
//! The key is a BLAKE3 hash of the flamesite version, every configuration value that changes
//! a graph (chunking, limits, perf options, palette, the sidecar's unit, whether a preview
//! image is made) and the profile's bytes, so the cache never serves a graph built from other
//! content: a file edited in place, with its size and time kept, has another key. An entry is
//! a folder `KEY/` holding `entry.json` (what the build learnt: format, metadata, graphs, the
//! first view's files, warnings) and `files/`, the profile's files as they are in the output
//! (graph folders and the preview image). Files are hard-linked between the cache and the
//! staging folder (copied where links are not possible), so the cache costs no second copy on
//! disk, and a file of the staging folder that is already the cache's file is left as it is
//! (see [`crate::output::staging`]). An entry appears whole or not at all (written aside, then renamed);
//! entries not used by a build are removed after it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::build::GraphEntry;
use crate::output::staging::{link_or_copy, Staging};

/// What the cache keeps of one profile besides its files.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Product {
    /// Format it was read as.
    pub format: String,
    /// What the profile says about itself.
    pub metadata: BTreeMap<String, String>,
    /// Its graphs; `data` is relative to the profile's folder.
    pub graphs: Vec<GraphEntry>,
    /// Files of the first graph's first view (`Manifest::first_view`), relative to its folder.
    pub preload: Vec<String>,
    /// Warnings of decoding.
    pub warnings: Vec<String>,
    /// Files of the profile's folder, relative to it, sorted.
    pub files: Vec<String>,
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
            "flamesite {} cache 3\n{:?}\n{:?}\n{:?}\n{}\npreview {}",
            env!("CARGO_PKG_VERSION"),
            config.chunks,
            config.limits,
            config.perf,
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

    /// The entry of `key`, if the cache has it whole.
    pub fn get(&self, key: &str) -> Option<Product> {
        let text = fs::read(self.dir.join(key).join("entry.json")).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Places the files of entry `key` in the profile folder `url` of the staging folder.
    pub fn restore(&self, key: &str, product: &Product, staging: &Staging, url: &str) -> Result<(), String> {
        let files = self.dir.join(key).join("files");
        for rel in &product.files {
            staging.link(&format!("{url}{rel}"), &files.join(rel))?;
        }
        Ok(())
    }

    /// Stores `product`, whose files are in `src` (a profile folder in the staging folder),
    /// as entry `key`. A failure here only costs the next build some time, so it is ignored.
    pub fn put(&self, key: &str, product: &Product, src: &Path) {
        let tmp = self.dir.join(format!(".{key}.{}.{:?}", std::process::id(), std::thread::current().id()));
        let attempt = || -> Result<(), String> {
            let _ = fs::remove_dir_all(&tmp);
            for rel in &product.files {
                link_or_copy(&src.join(rel), &tmp.join("files").join(rel))?;
            }
            let json = serde_json::to_vec(product).map_err(|e| e.to_string())?;
            fs::write(tmp.join("entry.json"), json).map_err(|e| e.to_string())?;
            fs::rename(&tmp, self.dir.join(key)).map_err(|e| e.to_string())
        };
        if attempt().is_err() {
            let _ = fs::remove_dir_all(&tmp);
        }
    }

    /// Removes every entry not in `used`, and leftovers of interrupted writes.
    pub fn retain(&self, used: &BTreeSet<String>) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !used.contains(&name) {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
}
