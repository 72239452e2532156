//! Profiles read from object storage (`--input s3://bucket/profiles`): the scan is a listing,
//! and only the profiles a build reads (new or changed ones, with their sidecars) are
//! downloaded, into a folder of the build's own.
//!
//! An object's stamp is its size, its last-modified time and a hash of its ETag (in place of
//! the inode), so an object written again is read again even when its size and time are kept;
//! the last-modified time is the file time a run's date may come from.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::archive::run::Stamp;
use crate::error::BucketError;
use crate::objects::Bucket;

use super::scan::{self, Scan, Source};

/// Profiles in a bucket: the bucket, and the folder its objects are downloaded to.
pub struct Remote {
    bucket: Bucket,
    dir: PathBuf,
    /// The key of each object listed, by its path relative to the input: an object is read by
    /// the key it was listed with, never by one made again from its path (which object_store
    /// would percent-encode a second time: `café`, `%2e%2e`, `run~1` were not found).
    keys: HashMap<String, object_store::path::Path>,
}

/// Extensions of sidecar objects, which are not profiles.
const SIDECARS: &[&str] = &["toml", "md"];

impl Remote {
    /// The profiles at `url`; objects are downloaded under `dir` (made empty).
    pub fn open(url: &str, dir: PathBuf) -> Result<Remote, BucketError> {
        let bucket = Bucket::open(url, "input")?;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Remote { bucket, dir, keys: HashMap::new() })
    }

    /// Lists the profiles, leaving out objects whose path has a part that starts with `.` (as
    /// the scan of a folder leaves out hidden files) and those under `exclude` (a site
    /// published inside the input's prefix), and folder markers (an empty object `dir/` beside
    /// objects under `dir/`, which S3 consoles make). A key the client cannot read is a problem
    /// of the scan, named.
    pub fn scan(&mut self, exclude: &[String]) -> Result<Scan, BucketError> {
        let mut scan = Scan::default();
        let mut sidecars: HashMap<String, Stamp> = HashMap::new();
        let (objects, unreadable) = self.bucket.list_readable()?;
        scan.problems = unreadable;
        let folders: std::collections::HashSet<&str> = objects.iter().filter_map(|o| o.rel.rsplit_once('/').map(|(f, _)| f)).collect();
        let markers: Vec<bool> = objects.iter().map(|o| o.size == 0 && folders.contains(o.rel.as_str())).collect();
        for (object, marker) in objects.into_iter().zip(markers) {
            let rel = object.rel;
            if marker || rel.split('/').any(|p| p.starts_with('.')) || exclude.iter().any(|e| rel.starts_with(&format!("{e}/"))) || !crate::store::is_inside(&rel) {
                continue;
            }
            self.keys.insert(rel.clone(), object.key);
            let stamp = Stamp { size: object.size, mtime: object.modified, ctime: 0, ino: object.tag, dev: 0 };
            let ext = Path::new(&rel).extension().and_then(|x| x.to_str()).unwrap_or("");
            if SIDECARS.contains(&ext) {
                sidecars.insert(rel, stamp);
            } else {
                let stamps = crate::archive::run::Stamps { profile: stamp, ..Default::default() };
                scan.sources.push(Source { path: self.dir.join(&rel), rel, stamps });
            }
        }
        scan.sources.sort_by(|a, b| a.rel.cmp(&b.rel));
        for source in &mut scan.sources {
            let stem = scan::stem(&source.rel);
            source.stamps.toml = sidecars.get(&format!("{stem}.toml")).copied();
            source.stamps.md = sidecars.get(&format!("{stem}.md")).copied();
        }
        Ok(scan)
    }

    /// Downloads `sources` and their sidecars, so that they can be read at their paths; returns
    /// those that could not be, by their paths, with why.
    pub fn fetch(&self, sources: &[&Source]) -> HashMap<String, String> {
        let mut objects = Vec::new();
        let mut whose = Vec::new();
        for s in sources {
            let stem = scan::stem(&s.rel);
            let mut rels = vec![s.rel.clone()];
            if s.stamps.toml.is_some() {
                rels.push(format!("{stem}.toml"));
            }
            if s.stamps.md.is_some() {
                rels.push(format!("{stem}.md"));
            }
            for rel in rels {
                if let Some(key) = self.keys.get(&rel) {
                    objects.push((key.clone(), self.dir.join(&rel)));
                    whose.push((s.rel.clone(), rel));
                }
            }
        }
        let mut failed = HashMap::new();
        for ((source, rel), r) in whose.into_iter().zip(self.bucket.download_each(&objects)) {
            if let Err(why) = r {
                let why = if rel == source { why } else { format!("its sidecar {rel}: {why}") };
                failed.entry(source).or_insert(why);
            }
        }
        failed
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
