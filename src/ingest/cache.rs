//! The incremental build cache: a record of the graph files of every profile built, keyed by
//! what they were built from, so that a rebuild decodes only new or changed profiles.
//!
//! The key is a BLAKE3 hash of the flamesite version, every configuration value that changes
//! a graph (chunking, limits, perf and pprof options, palette, the sidecar's unit, whether a
//! preview image is made) and the profile's bytes, so the cache never serves a graph built from other
//! content: a file edited in place, with its size and time kept, has another key. An entry is
//! a folder `KEY/` holding `entry.json` (what decoding learnt: format, metadata, graphs, the
//! first view's files, warnings, and the length and BLAKE3 hash of each file,
//! [`Product::sums`]) and, until the site holding them is published, `files/`: the run
//! folder's graph files and preview image as they are published. Once published, the entry
//! lets go of them ([`Cache::shed`]): the cache is a record of the site, not a second copy of
//! it. A build that needs an entry's files again reads them from the published site ([`Cache::home`]
//! says where), each checked against the sums, so that a site file edited in place or lost is
//! never published again: its entry is removed and the profile decoded anew. An entry is sealed
//! ([`Product::seal`]) and may name only files inside itself, and one that does not check is
//! removed and made again. An entry is written aside and
//! renamed into place, so it appears whole or not at all. The cache folder may hold only
//! entries: the build state ([`STATE`]) and entries are all that [`Cache::retain`] keeps, and
//! it removes nothing whose name is not an entry's, so a `cache_dir` pointed at another folder
//! cannot lose its files.

pub use crate::output::record::{is_key, Changes, STATE};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::FillError;
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
    /// Of a comparison: the `[[budget]]`s of site.toml it exceeded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<crate::archive::run::Exceeded>,
    /// Length and BLAKE3 hash of each of `files`, in their order: what a restored file must be.
    #[serde(default)]
    pub sums: Vec<FileSum>,
    /// A hash of the entry's key and of everything above, so that an `entry.json` changed by
    /// anything but flamesite is not believed.
    #[serde(default)]
    pub seal: String,
}

/// What one file of an entry must be.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FileSum {
    /// Length in bytes.
    pub len: u64,
    /// BLAKE3 hash, hex.
    pub hash: String,
}

impl FileSum {
    /// The sum of `bytes`.
    pub fn of(bytes: &[u8]) -> FileSum {
        FileSum { len: bytes.len() as u64, hash: blake3::hash(bytes).to_hex().to_string() }
    }
}

/// The seal of `product` as the entry `key`: a hash of the key and of the product with an
/// empty seal.
fn seal(key: &str, product: &Product) -> String {
    let unsealed = Product { seal: String::new(), ..product.clone() };
    let json = serde_json::to_vec(&unsealed).expect("a product serialises");
    let mut h = blake3::Hasher::new();
    h.update(format!("flamesite cache entry {key}\n").as_bytes());
    h.update(&json);
    h.finalize().to_hex().to_string()
}

pub use crate::store::is_inside;

/// The cache folder.
pub struct Cache {
    dir: PathBuf,
    fingerprint: String,
    /// The budgets comparisons are checked against ([`crate::config::budgets_text`]).
    budgets: String,
    /// The published site, where an entry's files are once its run is published.
    published: Option<crate::output::Published>,
    /// Per entry, the run or comparison folders of the published site that hold its files
    /// (relative to it, ending in `/`): where it was published, and where it is to be.
    homes: std::sync::RwLock<std::collections::HashMap<String, Vec<String>>>,
    /// Entries made by this build: their files are let go once the site holding them is
    /// published ([`Cache::shed`]).
    filled: std::sync::Mutex<Vec<String>>,
    /// What became of entries in this build, for a record kept elsewhere too (a bucket's, see
    /// [`Cache::changes`]).
    changes: std::sync::Mutex<Changes>,
    /// How many bytes of entry records (`entry.json`) this build added, less those it removed.
    records: std::sync::atomic::AtomicI64,
    /// Files of the published site this build found other than their entries recorded
    /// (edited or damaged by hand), each said as `PATH: why`; their entries were removed.
    damaged: std::sync::Mutex<Vec<String>>,
}

impl Cache {
    /// The cache at `dir`, for builds with `config`.
    pub fn new(dir: &Path, config: &Config) -> Cache {
        // The graph format too: an entry names files of its graph format, and a build that
        // writes another format makes every graph again (README: rebuilt whole once); and the
        // decoders' revision, so that a decoder that reads more is not hidden by its cache.
        let fingerprint = format!(
            "flamesite {} cache 11 graph format {} decoders {}\n{:?}\n{:?}\n{:?}\n{:?}\n{}\npreview {} {:?}",
            env!("CARGO_PKG_VERSION"),
            crate::store::chunk::MANIFEST_VERSION,
            super::decode::DECODERS,
            config.chunks,
            config.limits,
            config.perf,
            config.pprof,
            config.palette.as_str(),
            !config.base_url.is_empty(),
            // A preview's words take the series and title from the path by the pattern.
            (!config.base_url.is_empty()).then_some(&config.archive.pattern)
        );
        let budgets = crate::config::budgets_text(&config.budgets);
        Cache { dir: dir.to_path_buf(), fingerprint, budgets, published: None, homes: Default::default(), filled: Default::default(), changes: Default::default(), records: Default::default(), damaged: Default::default() }
    }

    /// The same cache, whose entries' files may also be found in the published site
    /// (see [`Cache::home`]).
    pub fn publishing_to(self, published: crate::output::Published) -> Cache {
        Cache { published: Some(published), ..self }
    }

    /// Why reads back of the published site failed so far (see [`crate::output::Published::failures`]).
    pub fn read_back_failures(&self) -> Vec<String> {
        self.published.as_ref().map_or_else(Vec::new, |p| p.failures())
    }

    /// Records that folder `url` of the published site holds (or is to hold) the files of
    /// entry `key`.
    pub fn home(&self, key: &str, url: &str) {
        let mut homes = self.homes.write().expect("no panic while holding it");
        let urls = homes.entry(key.to_string()).or_default();
        if !urls.iter().any(|u| u == url) {
            urls.push(url.to_string());
        }
    }

    /// The folders that may hold entry `key`'s files, in order: its own `files/`, then the
    /// published site's folder `url` (when given) and its other homes there. A folder of the
    /// published site is found (for a bucket: downloaded) only when asked for, so an entry
    /// whose own files are there costs no read of the site. With `only`, a reader of that one
    /// file (relative to the run's folder), a bucket's folder gets that file alone, and the
    /// entry's record is not read.
    fn places<'s>(&'s self, key: &str, url: Option<&str>, only: Option<&str>) -> impl Iterator<Item = PathBuf> + 's {
        let own = std::iter::once(self.dir.join(key).join("files"));
        let mut urls: Vec<String> = Vec::new();
        if self.published.is_some() {
            let homes = self.homes.read().expect("no panic while holding it");
            urls.extend(url.into_iter().map(str::to_string).chain(homes.get(key).into_iter().flatten().cloned()));
            urls.retain(|u| is_inside(u.trim_end_matches('/')));
        }
        let published = self.published.as_ref();
        // The entry's record names the files to read, so that a bucket need not be listed. It
        // is read when a place in the bucket is first asked for: an entry whose own files are
        // there costs nothing more.
        let bucket = matches!(published, Some(crate::output::Published::Bucket(_)));
        let key = key.to_string();
        let record: std::rc::Rc<std::cell::OnceCell<Option<Vec<String>>>> = Default::default();
        let only = only.map(str::to_string);
        let files = {
            let key = key.clone();
            move || {
                record
                    .get_or_init(|| match (bucket, &only) {
                        (false, _) => None,
                        (true, Some(rel)) => Some(vec![rel.clone()]),
                        (true, None) => self.get(&key).map(|p| p.files),
                    })
                    .clone()
            }
        };
        let homes = urls.into_iter().filter_map({
            let files = files.clone();
            move |u| published.map(|out| out.folder(&u, files().as_deref()))
        });
        // Last, where a shard of a build stored them (`flamesite build --shard`).
        let stored = std::iter::once(()).filter_map(move |()| {
            let at = published?.stored(&key, files().as_deref())?;
            self.changes.lock().expect("no panic while holding it").stored.push(key.clone());
            Some(at)
        });
        own.chain(homes).chain(stored)
    }

    /// The key of the profile at `path` built with `unit` (the sidecar's, if any). An error
    /// says why the file could not be read; the caller names the file.
    pub fn key(&self, path: &Path, unit: Option<&str>, words: &str) -> Result<String, String> {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.fingerprint.as_bytes());
        hasher.update(format!("\nunit {unit:?}\n").as_bytes());
        // The words of its preview image that are not in its bytes (ingest::words_key).
        if !words.is_empty() {
            hasher.update(format!("{words}\n").as_bytes());
        }
        let mut file = fs::File::open(path).map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf).map_err(|e| e.to_string())?;
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
        hasher.update(format!("\ncomparison 3\n{before}\n{after}\n").as_bytes());
        // The budgets it is checked against: other budgets, another entry.
        hasher.update(self.budgets.as_bytes());
        hasher.finalize().to_hex().to_string()
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry of `key`, if the cache has it and its `entry.json` is flamesite's (sealed,
    /// every file named inside the entry, none a link). A broken entry is removed, so that it
    /// is made again. Its files' contents are checked by [`Cache::verified`] and [`Cache::read`].
    pub fn get(&self, key: &str) -> Option<Product> {
        if !is_key(key) {
            return None;
        }
        let path = self.dir.join(key).join("entry.json");
        // Within its budget, a regular file: one that is not (a FIFO, a link to /dev/zero)
        // is a broken entry, removed below and made again.
        let text = match crate::store::read_regular(&path, crate::output::record::ENTRY_BUDGET) {
            Ok(text) => text,
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Vec::new(),
            // A record kept with the published site (a bucket's) is read when first needed.
            Err(_) => {
                let text = self.published.as_ref()?.entry(key)?;
                fs::create_dir_all(self.dir.join(key)).ok()?;
                fs::write(&path, &text).ok()?;
                text
            }
        };
        let product: Option<Product> = serde_json::from_slice(&text).ok();
        match product {
            Some(p) if p.seal == seal(key, &p) && p.sums.len() == p.files.len() && p.files.iter().all(|f| is_inside(f)) => Some(p),
            _ => {
                self.discard(key);
                None
            }
        }
    }

    /// The entry of `key` when, besides [`Cache::get`]'s checks, one of its places (its own
    /// files, or a home in the published site) has every file it lists with the length and
    /// hash it recorded (all files are read); an entry none of whose places has them is
    /// removed, so that it is made again.
    pub fn verified(&self, key: &str) -> Option<Product> {
        self.verified_at(key, None)
    }

    /// [`Cache::verified`], looking in the published site's folder `url` too.
    pub fn verified_at(&self, key: &str, url: Option<&str>) -> Option<Product> {
        let p = self.get(key)?;
        for place in self.places(key, url, None) {
            if p.files.iter().zip(&p.sums).all(|(rel, sum)| read_in(&place, rel, sum).is_ok()) {
                return Some(p);
            }
        }
        self.discard(key);
        None
    }

    /// The bytes of file `rel` of entry `key`, checked against `sum`: from the first of its
    /// places that has a regular file (not a link) of that length and hash; else why the last
    /// place (the published site's, when it has one) has not, `PATH: why`.
    pub fn read(&self, key: &str, rel: &str, sum: &FileSum) -> Result<Vec<u8>, String> {
        let mut why = format!("{}: no place holds it", self.dir.join(key).join("files").join(rel).display());
        for place in self.places(key, None, None) {
            match read_in(&place, rel, sum) {
                Ok(bytes) => return Ok(bytes),
                Err(e) => why = e,
            }
        }
        Err(why)
    }

    /// Why file `rel` of entry `key` (relative to the run's folder), where
    /// [`Cache::one_file_at`] finds it, is not the file the entry recorded (`PATH: why`), if it
    /// is not: for a reader that could not read it. The entry is then removed as damaged (see
    /// [`Cache::damaged`]). `None` when it is, or when the entry's record does not name it.
    pub fn damaged_file_at(&self, key: &str, url: Option<&str>, rel: &str) -> Option<String> {
        let sum = self.get(key).and_then(|p| p.files.iter().position(|f| f == rel).map(|i| p.sums[i].clone()))?;
        // Where it is, or else the published site's folder (the last place), where it was. The
        // places are looked at in turn: one of a bucket is a download, made only when reached.
        let mut place = None;
        for p in self.places(key, url, Some(rel)) {
            let here = p.join(rel).exists();
            place = Some(p);
            if here {
                break;
            }
        }
        let why = read_in(&place?, rel, &sum).err()?;
        self.discard_damaged(key, why.clone());
        Some(why)
    }

    /// Removes entry `key`, one of whose files `why` says is not what it recorded: the build
    /// that meets it is made again with every entry checked (see `build::build`).
    pub fn discard_damaged(&self, key: &str, why: String) {
        self.discard(key);
        self.damaged.lock().expect("no panic while holding it").push(why);
    }

    /// What [`Cache::discard_damaged`] was told so far.
    pub fn damaged(&self) -> Vec<String> {
        self.damaged.lock().expect("no panic while holding it").clone()
    }

    /// Removes entry `key`, broken.
    pub fn discard(&self, key: &str) {
        if is_key(key) {
            self.changes.lock().expect("no panic while holding it").removed.push(key.to_string());
            self.forget_record(key);
            let _ = fs::remove_dir_all(self.dir.join(key));
        }
    }

    /// Where the file or folder `rel` (relative to the run's folder) of entry `key` is: in the
    /// first of its places that has it (its own files while the build that made it runs, then the
    /// published site).
    pub fn file(&self, key: &str, rel: &str) -> PathBuf {
        self.file_at(key, None, rel)
    }

    /// [`Cache::file`], looking in the published site's folder `url` too.
    pub fn file_at(&self, key: &str, url: Option<&str>, rel: &str) -> PathBuf {
        self.first_place(key, url, rel, None)
    }

    /// [`Cache::file_at`] for a reader of the one file `rel`: of a run's folder in a bucket, that
    /// file alone is downloaded, and the entry's record (which lists the others) is not read.
    pub fn one_file_at(&self, key: &str, url: Option<&str>, rel: &str) -> PathBuf {
        self.first_place(key, url, rel, Some(rel))
    }

    /// `rel` in the first of [`Cache::places`] that has it, else in the entry's own files.
    fn first_place(&self, key: &str, url: Option<&str>, rel: &str, only: Option<&str>) -> PathBuf {
        self.places(key, url, only).map(|p| p.join(rel)).find(|f| f.exists()).unwrap_or_else(|| self.dir.join(key).join("files").join(rel))
    }

    /// Lets go of the files of the entries this build made, now that the site holding them
    /// is published: an entry keeps what it recorded (its sums), and its files are read back
    /// from the published site, checked against them, when a build needs them again.
    pub fn shed(&self) {
        let filled = std::mem::take(&mut *self.filled.lock().expect("no panic while holding it"));
        self.changes.lock().expect("no panic while holding it").made.extend(filled.iter().cloned());
        for key in filled.iter().filter(|k| is_key(k)) {
            let _ = fs::remove_dir_all(self.dir.join(key).join("files"));
        }
    }
}

/// The bytes of file `rel` of the folder `place`, checked against `sum`: a regular file of
/// that length and hash, reached through no symbolic link below `place`.
fn read_in(place: &Path, rel: &str, sum: &FileSum) -> Result<Vec<u8>, String> {
    let path = place.join(rel);
    if !is_inside(rel) {
        return Err(format!("{}: {rel:?} is not inside the entry", place.display()));
    }
    // No component may be a link out of the place.
    let mut at = place.to_path_buf();
    for c in rel.split('/') {
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err(format!("{}: a symbolic link", at.display())),
            Ok(_) => {}
            Err(e) => return Err(format!("{}: {e}", at.display())),
        }
    }
    // A regular file, read within the length it recorded (one larger is not it).
    let bytes = crate::store::read_regular(&path, sum.len).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 != sum.len || blake3::hash(&bytes).to_hex().as_str() != sum.hash {
        return Err(format!("{}: not the file the build wrote (changed in place?)", path.display()));
    }
    Ok(bytes)
}

impl Cache {
    /// Makes entry `key` with `make`, which hands each file to the sink it is given and
    /// returns what the entry records; the entry appears only when `make` succeeded. A file
    /// that cannot be written (a full disk) is a [`FillError::Write`], which stops the build.
    pub fn fill(
        &self,
        key: &str,
        make: impl FnOnce(crate::store::chunk::Sink) -> Result<Product, FillError>,
    ) -> Result<Product, FillError> {
        let tmp = self.dir.join(format!(".{key}.{}.{:?}.tmp", std::process::id(), std::thread::current().id()));
        let _ = fs::remove_dir_all(&tmp);
        let files = tmp.join("files");
        let sums = std::sync::Mutex::new(BTreeMap::new());
        let sink = |rel: &str, bytes: &[u8]| {
            sums.lock().expect("no panic while holding it").insert(rel.to_string(), FileSum::of(bytes));
            let path = files.join(rel);
            match path.parent() {
                Some(p) => fs::create_dir_all(p).map_err(|e| FillError::Write(format!("cache {}: {e}", p.display()))),
                None => Ok(()),
            }
            .and_then(|()| fs::write(&path, bytes).map_err(|e| FillError::Write(format!("cache {}: {e}", path.display()))))
        };
        let result = match make(&sink) {
            Err(e) => Err(e),
            Ok(mut product) => (|| {
                let mut sums = sums.into_inner().expect("no panic while holding it");
                product.sums = product
                    .files
                    .iter()
                    .map(|f| sums.remove(f).ok_or_else(|| FillError::Make(format!("{f} was listed but not written"))))
                    .collect::<Result<_, _>>()?;
                product.seal = seal(key, &product);
                let write = |e: std::io::Error| FillError::Write(format!("cache {}: {e}", tmp.display()));
                fs::create_dir_all(&tmp).map_err(write)?;
                let json = serde_json::to_vec(&product).map_err(|e| FillError::Make(e.to_string()))?;
                fs::write(tmp.join("entry.json"), &json).map_err(write)?;
                let dest = self.dir.join(key);
                if fs::symlink_metadata(&dest).is_ok() && self.get(key).is_none() {
                    // A broken entry (get removed it) is replaced.
                    self.discard(key);
                }
                if fs::rename(&tmp, &dest).is_err() {
                    // Another thread made the same entry (two profiles with the same bytes).
                    let _ = fs::remove_dir_all(&tmp);
                } else {
                    self.records.fetch_add(json.len() as i64, std::sync::atomic::Ordering::Relaxed);
                }
                self.filled.lock().expect("no panic while holding it").push(key.to_string());
                Ok(product)
            })(),
        };
        if result.is_err() {
            let _ = fs::remove_dir_all(&tmp);
        }
        result
    }

    /// Removes the entries `keys`.
    pub fn remove(&self, keys: impl Iterator<Item = String>) {
        for key in keys.filter(|k| is_key(k)) {
            self.forget_record(&key);
            let _ = fs::remove_dir_all(self.dir.join(&key));
            self.changes.lock().expect("no panic while holding it").removed.push(key);
        }
    }

    /// Counts entry `key`'s record as gone, before it is removed.
    fn forget_record(&self, key: &str) {
        if let Ok(m) = fs::metadata(self.dir.join(key).join("entry.json")) {
            self.records.fetch_sub(m.len() as i64, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// How many bytes of entry records this build added, less those it removed.
    pub fn records_added(&self) -> i64 {
        self.records.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What became of entries in this build.
    pub fn changes(&self) -> Changes {
        self.changes.lock().expect("no panic while holding it").clone()
    }

    /// Removes every entry not in `used`, and leftovers of interrupted writes; nothing else.
    /// Called once the site holding every entry's files is published (a build that rewrote
    /// it): the entries kept let go of their files too ([`Cache::shed`]), leftovers of
    /// interrupted builds included, in the same pass.
    ///
    /// Returns the bytes of the records of the entries kept.
    pub fn retain(&self, used: &BTreeSet<&str>) -> u64 {
        self.changes.lock().expect("no panic while holding it").kept = Some(used.iter().map(|k| k.to_string()).collect());
        let mut records = 0;
        let Ok(entries) = fs::read_dir(&self.dir) else { return records };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let leftover = name.starts_with('.') && name.ends_with(".tmp") && is_key(name[1..].split('.').next().unwrap_or(""));
            if (is_key(&name) && !used.contains(name.as_str())) || leftover {
                let _ = fs::remove_dir_all(e.path());
            } else if is_key(&name) {
                let _ = fs::remove_dir_all(e.path().join("files"));
                records += fs::metadata(e.path().join("entry.json")).map_or(0, |m| m.len());
            }
        }
        records
    }
}

/// Checks that `dir` holds nothing but cache entries and the build state, so that pruning
/// entries can never remove a file flamesite did not write. A folder that holds a build
/// state was checked when that state was first saved, and is not listed again: with one
/// entry per run and per comparison, listing it would cost every rebuild time in proportion
/// to the archive. (Pruning removes only names that are cache keys, whatever else is there.)
pub fn check_folder(dir: &Path) -> Result<(), String> {
    if dir.join(STATE).is_file() {
        return Ok(());
    }
    let Ok(entries) = fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = is_key(&name) || [STATE, crate::output::record::DATA, crate::output::record::DIRTY].contains(&name.as_str()) || name.starts_with('.') && name.ends_with(".tmp");
        if !ours {
            return Err(format!(
                "cache folder {} holds {name:?}, which is not a flamesite cache entry; set cache_dir to a folder of its own (the default is .NAME.cache beside the output folder NAME)",
                dir.display()
            ));
        }
    }
    Ok(())
}
