//! Names: the one authority for every URL and folder name the site publishes, so that no two
//! things ever share one and a published URL never moves to another profile.
//!
//! * A **run** is published at `p/<slug>/`. Its slug is its path relative to the input folder
//!   without compression and format extensions, each `/`-separated segment made URL-safe
//!   ([`url_safe`]); a segment that is all dots, longer than [`MAX_SEGMENT`] bytes, or one of
//!   the names a run folder uses for itself ([`RUN_SUBPAGES`]: `g`, `compare`, …) gets a hash
//!   of the whole path appended, so that `api/compare.folded` can never take run `api`'s
//!   comparison page.
//! * A **series** is published at `s/<slug>/`: its name when that is URL-safe, else the safe
//!   characters with a hash of the name appended.
//! * A **graph** of a run is published at `g/<folder>/` inside the run's folder: its name made
//!   URL-safe, unique within the run.
//!
//! Names are compared without case (some file systems and hosts ignore it). When a natural
//! name is already taken, the later claimant gets the name with a hash of its source
//! appended, and the build warns, naming both. Who is "later" is decided by the record of the
//! previous build ([`Record`]): every source keeps the name it was published under, names of
//! removed sources stay reserved for them, and only sources new to the site are named, in
//! sorted order of their paths. Without a record (a fresh checkout with no previous output),
//! every source is new, so the first in sorted order gets the natural name.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hasher;

use serde::{Deserialize, Serialize};

/// Folder of a run's comparisons with its series' baseline: `p/<run>/vs/<baseline>/`.
pub const VS: &str = "vs";
/// File name of a run's link-preview image, in its folder.
pub const PREVIEW: &str = "preview.png";
/// Names inside a run's folder that are its own pages and data, never a run's segment.
pub const RUN_SUBPAGES: &[&str] = &["g", "compare", "vs", "history", "index.html", PREVIEW, "index.json"];

/// Longest segment of a name, in bytes; longer ones are cut and hashed (file systems allow 255).
pub const MAX_SEGMENT: usize = 120;

/// Longest file name most file systems allow, in bytes.
pub const MAX_NAME: usize = 255;

/// Longest run slug flamesite gives, in bytes. Nothing else bounds one (it has a segment per
/// folder of the profile's path), and the deepest file the build writes holds two:
/// `p/<slug>/vs/<baseline's slug>/g/<graph>/c/<chunk>`, some 2.3 kB with two slugs of this
/// length, which leaves the output folder's own path some 1.7 kB of the 4096 bytes Linux
/// allows a path (PATH_MAX). 1024 bytes is also the longest object key S3 allows.
pub const MAX_RUN_SLUG: usize = 1024;

/// Room kept for what a collision appends to a name: `-` and a hash, then maybe `-` and a
/// count ([`assign`]).
const COLLISION_ROOM: usize = 1 + 8 + 1 + 20;

/// Longest natural slug of a profile that is built (a new profile whose path would make a
/// longer one is reported instead): [`MAX_RUN_SLUG`] less the room a collision may take.
pub const MAX_NATURAL_RUN_SLUG: usize = MAX_RUN_SLUG - COLLISION_ROOM;

/// Room kept for the suffixes of [`sibling_name`].
const SIBLING_SUFFIX_ROOM: usize = 32;

/// The name of a hidden file or folder kept beside the folder `name` (the output folder's
/// staging tree, its lock, its cache folder): `.NAME` followed by `suffix` (at most 32 bytes).
/// When the name is too long for that to fit in [`MAX_NAME`] bytes, NAME is cut (at a
/// character boundary when it is UTF-8) and a hash of its bytes appended, the same cut
/// whatever the suffix, so that all of one folder's siblings share a prefix.
pub fn sibling_name(name: &std::ffi::OsStr, suffix: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    debug_assert!(suffix.len() <= SIBLING_SUFFIX_ROOM);
    let bytes = name.as_bytes();
    let mut out = vec![b'.'];
    if 1 + bytes.len() + SIBLING_SUFFIX_ROOM <= MAX_NAME {
        out.extend_from_slice(bytes);
    } else {
        let mut cut = MAX_NAME - 1 - SIBLING_SUFFIX_ROOM - 9;
        if let Ok(text) = std::str::from_utf8(bytes) {
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
        }
        out.extend_from_slice(&bytes[..cut]);
        out.extend_from_slice(format!("-{}", hash8(bytes)).as_bytes());
    }
    out.extend_from_slice(suffix.as_bytes());
    std::ffi::OsString::from_vec(out)
}

/// Compression extensions, removed from a profile's name first.
const COMPRESSION_EXTS: &[&str] = &["gz", "gzip", "zst", "zstd"];
/// Format extensions, removed after the compression extension.
const FORMAT_EXTS: &[&str] = &[
    "folded", "collapsed", "stacks", "txt", "pb", "pprof", "prof", "perf", "cpuprofile", "json", "speedscope", "out", "jfr",
];

/// A profile's path without its compression extension and its format extensions
/// (`api/run-1.pb.gz` → `api/run-1`, `py/prog.speedscope.json` → `py/prog`): the NAME of its
/// sidecar files `NAME.toml` and `NAME.md`, and the base of its slug.
pub fn stem(rel: &str) -> &str {
    let mut s = without_compression(rel);
    // At most two format extensions: `.speedscope.json`, `.perf.txt`.
    for _ in 0..2 {
        match strip_ext(s, FORMAT_EXTS) {
            Some(shorter) => s = shorter,
            None => break,
        }
    }
    s
}

/// `name` less its compression extension (`.gz`, `.gzip`, `.zst`, `.zstd`, in any case), if
/// it has one.
pub fn without_compression(name: &str) -> &str {
    strip_ext(name, COMPRESSION_EXTS).unwrap_or(name)
}

/// `s` less its last extension when that is one of `exts` (in any case) and something is
/// left of the file name.
fn strip_ext<'a>(s: &'a str, exts: &[&str]) -> Option<&'a str> {
    let (stem, ext) = s.rsplit_once('.')?;
    (exts.contains(&ext.to_ascii_lowercase().as_str()) && !stem.ends_with('/') && !stem.is_empty()).then_some(stem)
}

/// The folder of the run whose slug is `slug`, relative to the site's root: the one place of
/// this URL shape (docs/FORMAT.md, "Where graphs live").
pub fn run_folder(slug: &str) -> String {
    format!("p/{slug}/")
}

/// `s` with every character outside `A-Za-z0-9._-` replaced by `_`.
pub fn url_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect()
}

/// FNV-1a of `bytes` as eight hex digits: the hash appended to names that need one.
pub fn hash8(bytes: &[u8]) -> String {
    format!("{:08x}", crate::graph::color::fnv1a32(bytes))
}

/// One segment made URL-safe: `Ok` when it can stand as it is, `Err` with its safe part cut
/// short when it needs a hash to be valid and distinct (all dots, too long, reserved, or, with
/// `exact`, changed by the replacement).
fn segment(segment: &str, reserved: &[&str], exact: bool) -> Result<String, String> {
    let clean = url_safe(segment);
    let lower = clean.to_ascii_lowercase();
    let dots = clean.chars().all(|c| c == '.');
    if (clean == segment || !exact) && !dots && clean.len() <= MAX_SEGMENT && !reserved.contains(&lower.as_str()) {
        Ok(clean)
    } else {
        let mut cut: String = clean.trim_matches('.').chars().take(MAX_SEGMENT - 9).collect();
        if cut.is_empty() {
            cut.push('_');
        }
        Err(cut)
    }
}

/// The natural slug of a run whose path without extensions is `stem`.
pub fn natural_run_slug(stem: &str) -> String {
    let parts: Vec<String> = stem
        .split('/')
        .map(|s| match segment(s, RUN_SUBPAGES, false) {
            Ok(s) => s,
            // A segment that could not stand gets the hash of the whole path.
            Err(cut) => format!("{cut}-{}", hash8(stem.as_bytes())),
        })
        .collect();
    parts.join("/")
}

/// The length of the natural slug of a run whose path without extensions is `stem`, when it
/// is longer than [`MAX_NATURAL_RUN_SLUG`]: such a profile is not built, since the files of its
/// run would have paths longer than file systems allow.
pub fn natural_run_slug_too_long(stem: &str) -> Option<usize> {
    // A segment grows by at most 9 bytes (`-` and a hash; one all dots, or reserved, may be a
    // single byte): most paths are told short without their slug being made.
    let segments = stem.bytes().filter(|&b| b == b'/').count() + 1;
    if stem.len() + 9 * segments <= MAX_NATURAL_RUN_SLUG {
        return None;
    }
    Some(natural_run_slug(stem).len()).filter(|&len| len > MAX_NATURAL_RUN_SLUG)
}

/// `segment` less what a collision appends to a name (`-` and 8 hex digits, then maybe `-` and
/// a count), if it ends so.
fn without_collision_suffix(segment: &str) -> Option<&str> {
    fn hashed(s: &str) -> Option<&str> {
        let (base, hash) = s.rsplit_once('-')?;
        (hash.len() == 8 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) && !base.is_empty()).then_some(base)
    }
    hashed(segment).or_else(|| {
        let (rest, count) = segment.rsplit_once('-')?;
        (!count.is_empty() && count.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
        hashed(rest)
    })
}

/// Whether `name` is a segment flamesite could give as it is, or with what a collision
/// appends ([`assign`]) after one it could give.
fn could_be_given(name: &str, reserved: &[&str]) -> bool {
    segment(name, reserved, true).is_ok() || without_collision_suffix(name).is_some_and(|base| segment(base, reserved, true).is_ok())
}

/// The natural name of a series: the name when it is URL-safe, else its safe characters
/// and a hash of the name.
pub fn natural_name(name: &str) -> String {
    match segment(name, &[], true) {
        Ok(s) => s,
        Err(cut) => format!("{cut}-{}", hash8(name.as_bytes())),
    }
}

/// What the previous build published: who holds which name. Kept in the build state and in
/// `index.json`, so that a rebuild never gives a published name to another source.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Hash)]
pub struct Record {
    /// Run slug of each source path ever published (removed sources included, so that their
    /// URLs are never reused for other profiles).
    #[serde(default)]
    pub runs: BTreeMap<String, String>,
    /// Series slug of each series name ever published.
    #[serde(default)]
    pub series: BTreeMap<String, String>,
}

impl Record {
    /// Keeps only the names this authority could have given, and returns the others as
    /// `(source or series, name)`. A record is read back from the build state and from the
    /// published listings, which anyone who can write the output (or a bucket) may have
    /// changed: a name such as `../../home` would make the build write outside the output.
    /// So every name read back is held to the rules of a new one: a run's slug is segments
    /// that could each stand as they are (URL-safe characters, not all dots, not too long,
    /// none of a run folder's own names), the last maybe with what a collision appends, and
    /// at most [`MAX_RUN_SLUG`] bytes in all (a longer one, of valid segments still, would
    /// make paths no file system takes, and fail every build); a series' slug is one such
    /// segment.
    pub fn retain_valid(&mut self) -> Vec<(String, String)> {
        let mut refused = Vec::new();
        let run_ok = |slug: &str| {
            let (folders, last) = slug.rsplit_once('/').map_or((None, slug), |(f, l)| (Some(f), l));
            slug.len() <= MAX_RUN_SLUG
                && could_be_given(last, RUN_SUBPAGES)
                && folders.is_none_or(|f| f.split('/').all(|seg| segment(seg, RUN_SUBPAGES, true).is_ok()))
        };
        let series_ok = |slug: &str| could_be_given(slug, &[]);
        for (map, ok) in [(&mut self.runs, &run_ok as &dyn Fn(&str) -> bool), (&mut self.series, &series_ok)] {
            map.retain(|key, name| {
                let keep = ok(name);
                if !keep {
                    refused.push((key.clone(), name.clone()));
                }
                keep
            });
        }
        refused
    }
}

/// A name given to a later claimant because its natural name was taken.
#[derive(Clone, Debug, PartialEq)]
pub struct Collision {
    /// Who was given another name (a source path, or a series name).
    pub claimant: String,
    /// Who holds the natural name.
    pub holder: String,
    /// The natural name.
    pub natural: String,
    /// The name given instead.
    pub given: String,
}

/// Who holds which name, names compared without case (some file systems and hosts ignore
/// it), without a lower-case copy of each: the names of 100,000 runs are looked up on every
/// build.
#[derive(Default)]
struct Taken<'a> {
    /// By the hash of the name's lower-case bytes: the name and its holder.
    by_hash: rustc_hash::FxHashMap<u64, (Cow<'a, str>, &'a str)>,
    /// Names whose hash another name has (in practice never), by their lower-case text.
    clashes: HashMap<String, &'a str>,
}

impl<'a> Taken<'a> {
    fn hash(name: &str) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        for b in name.bytes() {
            h.write_u8(b.to_ascii_lowercase());
        }
        h.write_usize(name.len());
        h.finish()
    }

    fn holder(&self, name: &str) -> Option<&'a str> {
        match self.by_hash.get(&Self::hash(name)) {
            Some((n, holder)) if n.eq_ignore_ascii_case(name) => Some(holder),
            Some(_) => self.clashes.get(&name.to_ascii_lowercase()).copied(),
            None => None,
        }
    }

    /// Gives `name` to `holder` unless someone holds it.
    fn claim(&mut self, name: Cow<'a, str>, holder: &'a str) {
        use std::collections::hash_map::Entry;
        match self.by_hash.entry(Self::hash(&name)) {
            Entry::Vacant(v) => {
                v.insert((name, holder));
            }
            Entry::Occupied(o) if o.get().0.eq_ignore_ascii_case(&name) => {}
            Entry::Occupied(_) => {
                self.clashes.entry(name.to_ascii_lowercase()).or_insert(holder);
            }
        }
    }
}

/// Gives every key of `wanted` (in the order they are named) a name no other key has: the
/// name `previous` gives it when it still holds it, else its natural name (`natural(i)` for
/// the key at `i`), else that name with a hash of the key appended. Names in `previous` whose
/// keys are not wanted stay reserved. Returns the names in `wanted`'s order, the keys newly
/// named with their names, and the collisions.
fn assign<'a, K: AsRef<str>>(
    wanted: &'a [K],
    natural: impl Fn(usize) -> String,
    previous: &'a BTreeMap<String, String>,
) -> (Vec<String>, Vec<(String, String)>, Vec<Collision>) {
    let mut taken = Taken::default();
    taken.by_hash.reserve(previous.len() + wanted.len());
    for (key, name) in previous {
        taken.claim(Cow::Borrowed(name), key);
    }
    let mut names = Vec::with_capacity(wanted.len());
    let mut new = Vec::new();
    let mut collisions = Vec::new();
    for (i, key) in wanted.iter().enumerate() {
        let key = key.as_ref();
        if let Some(name) = previous.get(key) {
            if taken.holder(name) == Some(key) {
                names.push(name.clone());
                continue;
            }
        }
        let natural = natural(i);
        let name = match taken.holder(&natural) {
            None => natural,
            Some(holder) => {
                let hashed = format!("{natural}-{}", hash8(key.as_bytes()));
                let mut name = hashed.clone();
                let mut n = 2;
                while taken.holder(&name).is_some() {
                    name = format!("{hashed}-{n}");
                    n += 1;
                }
                collisions.push(Collision { claimant: key.to_string(), holder: holder.to_string(), natural, given: name.clone() });
                name
            }
        };
        taken.claim(Cow::Owned(name.clone()), key);
        new.push((key.to_string(), name.clone()));
        names.push(name);
    }
    (names, new, collisions)
}

/// Slugs of the runs at `sources` (paths relative to the input folder, with the stem of
/// each), keeping `record`'s names; the record is updated with the new names.
pub fn assign_runs(sources: &[(&str, &str)], record: &mut Record) -> (Vec<String>, Vec<Collision>) {
    // New sources are named in sorted order of their paths (a scan gives them sorted).
    let mut order: Vec<usize> = (0..sources.len()).collect();
    if !sources.is_sorted_by(|a, b| a.0 <= b.0) {
        order.sort_by(|&a, &b| sources[a].0.cmp(sources[b].0));
    }
    let keys: Vec<&str> = order.iter().map(|&i| sources[i].0).collect();
    // A natural slug is made only for a source the record does not name.
    let (names, new, collisions) = assign(&keys, |k| natural_run_slug(sources[order[k]].1), &record.runs);
    let mut slugs = vec![String::new(); sources.len()];
    for (&i, name) in order.iter().zip(names) {
        slugs[i] = name;
    }
    record.runs.extend(new);
    (slugs, collisions)
}

/// Slugs of the series `names`, keeping `record`'s names; the record is updated.
pub fn assign_series(names: &[&str], record: &mut Record) -> (Vec<String>, Vec<Collision>) {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(names[b]));
    let keys: Vec<&str> = order.iter().map(|&i| names[i]).collect();
    let (given, new, collisions) = assign(&keys, |k| natural_name(keys[k]), &record.series);
    let mut slugs = vec![String::new(); names.len()];
    for (&i, name) in order.iter().zip(given) {
        slugs[i] = name;
    }
    record.series.extend(new);
    (slugs, collisions)
}

/// Folder names of a run's graphs, in their order: natural names, distinct without case.
pub fn graph_folders(names: &[&str]) -> Vec<String> {
    let natural = |n: &str| match segment(n, &[], false) {
        Ok(s) => s,
        Err(cut) => format!("{cut}-{}", hash8(n.as_bytes())),
    };
    let keys: Vec<String> = (0..names.len()).map(|i| format!("{i:08}")).collect();
    let none = BTreeMap::new();
    let (given, _, _) = assign(&keys, |i| natural(names[i]), &none);
    given
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_are_held_to_the_rules_of_new_ones() {
        let mut r = Record::default();
        for (src, slug) in [
            ("ok.folded", "api/2026-11-20"),
            ("hashed.folded", "api/compare-1a2b3c4d"),
            ("up.folded", "../../home/user"),
            ("abs.folded", "/etc/cron.d/x"),
            ("dots.folded", "api/.."),
            ("sub.folded", "api/compare"),
            ("empty.folded", ""),
            ("slash.folded", "api//x"),
            ("odd.folded", "api/a b"),
            ("hash-inside.folded", "api-1a2b3c4d/x"),
        ] {
            r.runs.insert(src.into(), slug.into());
        }
        // Valid segments, but more of them than any name flamesite gives (issue 45, item 10):
        // 40 segments of 120 bytes would make paths of 5 kB, over what file systems take.
        let seg = "x".repeat(MAX_SEGMENT);
        r.runs.insert("long.folded".into(), vec![seg.as_str(); 40].join("/"));
        let longest = format!("{}/{}", vec![seg.as_str(); 8].join("/"), "y".repeat(MAX_RUN_SLUG - 8 * 121));
        assert_eq!(longest.len(), MAX_RUN_SLUG);
        r.runs.insert("longest.folded".into(), longest);
        r.runs.insert("collided.folded".into(), format!("api/{seg}-1a2b3c4d-2"));
        for (name, slug) in [("api", "api"), ("evil", "../x"), ("two", "a/b"), ("none", "")] {
            r.series.insert(name.into(), slug.into());
        }
        let mut refused: Vec<String> = r.retain_valid().into_iter().map(|(k, _)| k).collect();
        refused.sort();
        assert_eq!(refused, ["abs.folded", "dots.folded", "empty.folded", "evil", "long.folded", "none", "odd.folded", "slash.folded", "sub.folded", "two", "up.folded"]);
        assert_eq!(r.runs.keys().collect::<Vec<_>>(), ["collided.folded", "hash-inside.folded", "hashed.folded", "longest.folded", "ok.folded"]);
        assert_eq!(r.series.keys().collect::<Vec<_>>(), ["api"]);
        // Whatever the authority gives passes its own check.
        let mut given = Record::default();
        // Names of 120 bytes that differ only in case collide: the later one gets a hash,
        // beyond 120 bytes, and is still a name flamesite gives.
        let (upper, lower) = (format!("a/{}", "X".repeat(MAX_SEGMENT)), format!("a/{seg}"));
        let (upper_src, lower_src) = (format!("{upper}.folded"), format!("{lower}.folded"));
        let stems = [("a/compare.folded", "a/compare"), ("..", ".."), ("x/ y.folded", "x/ y"), ("a/b.folded", "a/b"), (upper_src.as_str(), upper.as_str()), (lower_src.as_str(), lower.as_str())];
        let (_, collisions) = assign_runs(&stems, &mut given);
        assert_eq!(collisions.len(), 1);
        let long_series = "S".repeat(MAX_SEGMENT);
        let (_, collisions) = assign_series(&["../up", "a b", "api", &long_series, &long_series.to_lowercase()], &mut given);
        assert_eq!(collisions.len(), 1);
        assert!(given.clone().retain_valid().is_empty(), "{given:?}");
    }

    #[test]
    fn natural_slugs() {
        assert_eq!(natural_run_slug("api/2026-11-20"), "api/2026-11-20");
        assert_eq!(natural_run_slug("v1.2/run"), "v1.2/run");
        assert_eq!(natural_run_slug("a b/<x>"), "a_b/_x_");
        let c = natural_run_slug("api/compare");
        assert!(c.starts_with("api/compare-") && c.len() == "api/compare-".len() + 8, "{c}");
        assert!(natural_run_slug("api/G").starts_with("api/G-"), "reserved names ignore case");
        assert!(!natural_run_slug("../x").split('/').any(|s| s.chars().all(|c| c == '.')));
        let long = "x y".repeat(100);
        assert!(natural_run_slug(&long).len() <= MAX_SEGMENT);
        // Too long a path: the length of its slug, whatever made it long.
        let seg = "x".repeat(MAX_SEGMENT);
        let deep = vec![seg.as_str(); 9].join("/");
        assert_eq!(natural_run_slug_too_long(&deep), Some(9 * 121 - 1));
        assert_eq!(natural_run_slug_too_long(&vec![seg.as_str(); 8].join("/")), None);
        assert_eq!(natural_run_slug_too_long(&vec!["g"; 300].join("/")), Some(300 * 11 - 1), "reserved names grow");
        assert_eq!(natural_run_slug_too_long(&"é".repeat(900)), None, "cut to 120 bytes");
        assert_eq!(natural_name("api"), "api");
        assert_ne!(natural_name("a b"), natural_name("a_b"));
    }

    #[test]
    fn sibling_names_fit_in_a_file_name() {
        use std::ffi::OsStr;
        assert_eq!(sibling_name(OsStr::new("public"), ".flamesite-next"), ".public.flamesite-next");
        let long = "é ".repeat(85);
        assert_eq!(long.len(), 255);
        let next = sibling_name(OsStr::new(&long), ".flamesite-next");
        let lock = sibling_name(OsStr::new(&long), ".flamesite-lock");
        assert!(next.len() <= MAX_NAME && next.to_str().is_some(), "{next:?}");
        assert_eq!(next.to_str().unwrap().strip_suffix("next"), lock.to_str().unwrap().strip_suffix("lock"));
        assert_ne!(next, sibling_name(OsStr::new(&format!("ab{}", &long[2..])), ".flamesite-next"));
    }

    #[test]
    fn collisions_are_named_by_sorted_order_and_the_record_wins() {
        let mut record = Record::default();
        let (slugs, coll) = assign_runs(&[("run.folded.gz", "run")], &mut record);
        assert_eq!(slugs, ["run"]);
        assert!(coll.is_empty());
        // A new file with the same stem, sorting before it, does not take its URL.
        let (slugs, coll) = assign_runs(&[("run.collapsed", "run"), ("run.folded.gz", "run")], &mut record);
        assert_eq!(slugs[1], "run");
        assert_eq!(slugs[0], format!("run-{}", hash8(b"run.collapsed")));
        assert_eq!(coll.len(), 1);
        assert_eq!((coll[0].claimant.as_str(), coll[0].holder.as_str()), ("run.collapsed", "run.folded.gz"));
        // Without a record, sorted order decides, whatever order the sources come in.
        let (a, _) = assign_runs(&[("b/A.txt", "b/A"), ("b/a.folded", "b/a")], &mut Record::default());
        let (b, _) = assign_runs(&[("b/a.folded", "b/a"), ("b/A.txt", "b/A")], &mut Record::default());
        assert_eq!((a[0].as_str(), a[1].as_str()), (b[1].as_str(), b[0].as_str()));
        assert_eq!(a[0], "b/A");
        assert_ne!(a[1].to_lowercase(), a[0].to_lowercase());
        // A removed source's URL is not given to another.
        let (slugs, coll) = assign_runs(&[("run.collapsed", "run")], &mut record);
        assert_ne!(slugs[0], "run");
        assert!(coll.is_empty(), "it keeps the name it had");
    }

    #[test]
    fn taken_names_are_compared_without_case_even_when_their_hashes_clash() {
        let mut t = Taken::default();
        t.claim(Cow::Borrowed("Run-1"), "a.folded");
        t.claim(Cow::Borrowed("run-1"), "b.folded");
        assert_eq!(t.holder("RUN-1"), Some("a.folded"), "the first claim holds it, whatever the case");
        assert_eq!(t.holder("run-2"), None);
        // Another name stored under the hash of `x` (a clash): `x` is still told apart.
        t.by_hash.insert(Taken::hash("x"), (Cow::Borrowed("not-x"), "c.folded"));
        assert_eq!(t.holder("X"), None);
        t.claim(Cow::Borrowed("x"), "d.folded");
        assert_eq!(t.holder("X"), Some("d.folded"));
        t.claim(Cow::Borrowed("X"), "e.folded");
        assert_eq!(t.holder("x"), Some("d.folded"));
    }

    #[test]
    fn a_hashed_name_also_taken_gets_2_then_3() {
        // Graphs of one run: the fourth's natural name `x` is taken, and so are its hashed
        // name and that with `-2` (the latter in another case): it gets the hashed name `-3`.
        let h = hash8(b"00000003"); // graph folders are keyed by their position
        let names = ["x".to_string(), format!("x-{h}"), format!("X-{h}-2"), "x".to_string()];
        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let f = graph_folders(&names);
        assert_eq!(f, ["x".to_string(), format!("x-{h}"), format!("X-{h}-2"), format!("x-{h}-3")]);
        assert_eq!(graph_folders(&names), f, "the same names give the same folders");
        let lower: std::collections::HashSet<String> = f.iter().map(|s| s.to_lowercase()).collect();
        assert_eq!(lower.len(), f.len(), "distinct without case: {f:?}");
        // Runs: a record holds `run`, its hashed name for `run.txt` and that with `-2`; two new
        // sources with the stem `run` then get `-3` and (their own hash being free) the hash.
        let h = hash8(b"run.txt");
        let mut record = Record::default();
        record.runs.insert("old/a.folded".into(), "run".into());
        record.runs.insert("old/b.folded".into(), format!("run-{h}"));
        record.runs.insert("old/c.folded".into(), format!("run-{h}-2"));
        let (slugs, coll) = assign_runs(&[("run.txt", "run"), ("run.folded", "run")], &mut record);
        assert_eq!(slugs, [format!("run-{h}-3"), format!("run-{}", hash8(b"run.folded"))]);
        assert_eq!(coll.iter().map(|c| (c.claimant.as_str(), c.given.as_str())).collect::<Vec<_>>(), [("run.folded", slugs[1].as_str()), ("run.txt", slugs[0].as_str())]);
        assert_eq!(record.runs["run.txt"], slugs[0], "the name given is kept for the next build");
    }

    #[test]
    fn series_and_graph_names_never_collide() {
        let mut record = Record::default();
        let hashed = natural_name("a b");
        let (slugs, _) = assign_series(&["a b", &hashed], &mut record);
        assert_ne!(slugs[0], slugs[1]);
        assert_eq!(graph_folders(&["a b", "a_b", "A_b"]).len(), 3);
        let f = graph_folders(&["a b", "a_b", "A_b"]);
        assert!(f[0] != f[1] && f[1].to_lowercase() != f[2].to_lowercase(), "{f:?}");
    }
}
