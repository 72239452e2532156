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
use crate::error::Warning;
use crate::ingest::{RunRecord, Stamps};

/// Version of the state's layout; another version is ignored (the build starts afresh).
const VERSION: u32 = 9;

pub use crate::output::record::{Tree, DIRTY};

/// A run as the last build published it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRun {
    /// Its record.
    pub record: RunRecord,
    /// Its record's hash.
    pub hash: u64,
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
    /// What `live` and `other` differ in, as seen from `other`. Both maps are walked once, side
    /// by side in key order (at 100,000 runs a lookup per key was a large part of a rebuild:
    /// docs/BENCHMARKS.md, "Figures behind the code").
    pub fn between(live: &Tree, other: &Tree) -> TreeDiff {
        TreeDiff { ino: other.ino, pages: differences(&live.pages, &other.pages), runs: differences(&live.runs, &other.runs) }
    }
}

/// For every key where `other` differs from `live`, what `other` holds there (`None`: nothing).
fn differences<V: Clone + PartialEq>(live: &BTreeMap<String, V>, other: &BTreeMap<String, V>) -> BTreeMap<String, Option<V>> {
    use std::cmp::Ordering;
    let mut out = Vec::new();
    let (mut a, mut b) = (live.iter().peekable(), other.iter().peekable());
    loop {
        match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => out.extend(a.by_ref().map(|(k, _)| (k.clone(), None))),
            (None, Some(_)) => out.extend(b.by_ref().map(|(k, v)| (k.clone(), Some(v.clone())))),
            (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                Ordering::Less => {
                    out.push(((*ka).clone(), None));
                    a.next();
                }
                Ordering::Greater => {
                    out.push(((*kb).clone(), Some((*vb).clone())));
                    b.next();
                }
                Ordering::Equal => {
                    if va != vb {
                        out.push(((*kb).clone(), Some((*vb).clone())));
                    }
                    a.next();
                    b.next();
                }
            },
        }
    }
    // In key order already: the map is built from sorted input.
    out.into_iter().collect()
}

/// What bringing an output tree to `desired` takes, when the tree holds `live` changed by
/// `next` (a [`TreeDiff`]'s map): `set`, the keys it lacks or holds another value of, each with
/// whether `live` holds the desired value (a page then is linked from the published tree, not
/// rendered); `remove`, the keys it holds that `desired` has not. Sorted by key.
#[derive(Debug, Default, PartialEq)]
pub struct Work<'a> {
    /// Keys to write, and whether the published tree has their desired value.
    pub set: Vec<(&'a str, bool)>,
    /// Keys to remove.
    pub remove: Vec<&'a str>,
}

impl<'a> Work<'a> {
    /// The work for one map of a tree. `desired` and `live` are walked once side by side;
    /// `next`, which holds the few differences of the two trees, is looked up.
    pub fn between<V: PartialEq>(desired: &'a BTreeMap<String, V>, live: &'a BTreeMap<String, V>, next: &'a BTreeMap<String, Option<V>>) -> Work<'a> {
        use std::cmp::Ordering;
        let mut work = Work::default();
        // What the tree holds at `k`, given what the published one holds there.
        let held = |k: &str, in_live: Option<&'a V>| -> Option<&'a V> {
            match next.get(k) {
                Some(v) => v.as_ref(),
                None => in_live,
            }
        };
        let (mut d, mut l) = (desired.iter().peekable(), live.iter().peekable());
        loop {
            let order = match (d.peek(), l.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((kd, _)), Some((kl, _))) => kd.cmp(kl),
            };
            match order {
                Ordering::Less => {
                    let (k, v) = d.next().expect("peeked");
                    if held(k, None) != Some(v) {
                        work.set.push((k, false));
                    }
                }
                Ordering::Greater => {
                    let (k, v) = l.next().expect("peeked");
                    if held(k, Some(v)).is_some() {
                        work.remove.push(k);
                    }
                }
                Ordering::Equal => {
                    let ((k, v), (_, lv)) = (d.next().expect("peeked"), l.next().expect("peeked"));
                    if held(k, Some(lv)) != Some(v) {
                        work.set.push((k, lv == v));
                    }
                }
            }
        }
        let before = work.remove.len();
        for (k, v) in next {
            if v.is_some() && !desired.contains_key(k) && !live.contains_key(k) {
                work.remove.push(k);
            }
        }
        if work.remove.len() > before {
            work.remove.sort_unstable();
        }
        work
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
    /// Bytes of the cache's entry records (`entry.json`), as builds counted them.
    pub records: u64,
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
    /// Files and folders put by hand inside the folders of the tree that was published when
    /// the last build began (named by that tree's identity): that tree is the one the next
    /// build brings up to date, which removes them first.
    pub foreign: Option<(u64, Vec<String>)>,
}

pub use crate::output::record::{DATA, STATE_BUDGET};

impl Header {
    /// The header saved in `dir` for builds of `fingerprint`, if any; an error (a warning to
    /// give: the build then starts afresh, as without a header) names a file that is not a
    /// regular one or is larger than [`STATE_BUDGET`].
    pub fn load(dir: &Path, fingerprint: &str) -> Result<Option<Header>, Warning> {
        let Some(bytes) = read_state(&dir.join(crate::ingest::cache::STATE))? else { return Ok(None) };
        let Ok(header) = postcard::from_bytes::<Header>(&bytes) else { return Ok(None) };
        Ok((header.version == VERSION && header.fingerprint == fingerprint).then_some(header))
    }
}

impl Data {
    /// The data saved in `dir` with `header`; `None` when missing or of another build, an
    /// error as [`Header::load`]'s. The previous tree is unknown when a build was killed while
    /// changing it.
    pub fn load(dir: &Path, header: &Header) -> Result<Option<Data>, Warning> {
        let Some(bytes) = read_state(&dir.join(DATA))? else { return Ok(None) };
        let Ok(mut data) = postcard::from_bytes::<Data>(&bytes) else { return Ok(None) };
        if data.generation != header.generation {
            return Ok(None);
        }
        if dir.join(DIRTY).exists() {
            data.next = None;
        }
        Ok(Some(data))
    }
}

/// A file of the state, within [`STATE_BUDGET`]: `None` when there is none; an error, which
/// says the build starts afresh, when it cannot be read (a FIFO, a link, too large).
fn read_state(path: &Path) -> Result<Option<Vec<u8>>, Warning> {
    match crate::store::read_regular(path, STATE_BUDGET) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Warning { path: path.display().to_string(), message: format!("{e}; the build state is not read: the build starts afresh from the published site") }),
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
    drop_later((header, data));
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

/// Frees `value` on a thread of its own. The records of a large archive are millions of small
/// allocations: freeing them on the way out was a measurable part of a rebuild that adds one
/// run to 100,000 (docs/BENCHMARKS.md, "Figures behind the code"). The process may end first; the memory goes
/// with it.
pub(crate) fn drop_later<T: Send + 'static>(value: T) {
    // When no thread can be started, the closure, and `value` with it, is dropped here.
    let _ = std::thread::Builder::new().name("flamesite-free".into()).spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(ino: u64, pages: &[(&str, u64)], runs: &[(&str, &str)]) -> Tree {
        Tree {
            ino,
            pages: pages.iter().map(|(p, h)| (p.to_string(), *h)).collect(),
            runs: runs.iter().map(|(u, k)| (u.to_string(), k.to_string())).collect(),
            bytes: BTreeMap::new(),
            sealed: 0,
        }
    }

    #[test]
    fn between_lists_what_the_other_tree_holds_where_the_two_differ() {
        let live = tree(1, &[("a.html", 1), ("b.html", 2), ("d.html", 4), ("z.html", 9)], &[("p/a/", "k1"), ("p/b/", "k2")]);
        let other = tree(2, &[("0.html", 7), ("b.html", 2), ("c.html", 3), ("d.html", 5)], &[("p/b/", "old"), ("p/c/", "k3")]);
        let d = TreeDiff::between(&live, &other);
        assert_eq!(d.ino, 2);
        let pages: Vec<(&str, Option<u64>)> = d.pages.iter().map(|(p, h)| (p.as_str(), *h)).collect();
        // 0 and c only in the other tree; a and z only in the live one; d differs; b is the same.
        assert_eq!(pages, [("0.html", Some(7)), ("a.html", None), ("c.html", Some(3)), ("d.html", Some(5)), ("z.html", None)]);
        let runs: Vec<(&str, Option<&str>)> = d.runs.iter().map(|(u, k)| (u.as_str(), k.as_deref())).collect();
        assert_eq!(runs, [("p/a/", None), ("p/b/", Some("old")), ("p/c/", Some("k3"))]);
        assert_eq!(TreeDiff::between(&live, &live), TreeDiff { ino: 1, ..TreeDiff::default() });
    }

    #[test]
    fn work_writes_what_the_tree_lacks_and_removes_what_it_should_not_hold() {
        let map = |xs: &[(&str, u64)]| -> BTreeMap<String, u64> { xs.iter().map(|(k, v)| (k.to_string(), *v)).collect() };
        let live = map(&[("a", 1), ("b", 2), ("c", 3), ("gone", 4), ("same", 5)]);
        // The tree the build changes: `a` is older there, `b` missing, `extra` a page only it has.
        let next: BTreeMap<String, Option<u64>> = [("a", Some(0)), ("b", None), ("extra", Some(6)), ("never", None)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let desired = map(&[("a", 1), ("b", 2), ("c", 30), ("new", 7), ("same", 5)]);
        let w = Work::between(&desired, &live, &next);
        // a and b: the published tree has them as desired (linked); c changed; new is new.
        assert_eq!(w.set, [("a", true), ("b", true), ("c", false), ("new", false)]);
        assert_eq!(w.remove, ["extra", "gone"]);
        // A tree that holds the desired state needs nothing.
        let none: BTreeMap<String, Option<u64>> = BTreeMap::new();
        assert_eq!(Work::between(&live, &live, &none), Work::default());
        // Every key of a naive reckoning agrees.
        let held = |k: &str| next.get(k).copied().unwrap_or_else(|| live.get(k).copied());
        for (k, v) in &desired {
            assert_eq!(w.set.iter().any(|(s, _)| s == k), held(k) != Some(*v), "{k}");
        }
        for k in live.keys().chain(next.keys()) {
            let gone = !desired.contains_key(k) && held(k).is_some();
            assert_eq!(w.remove.contains(&k.as_str()), gone, "{k}");
        }
    }
}
