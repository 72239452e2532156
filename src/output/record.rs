//! The names of what a build keeps as its record beside the published site (in the cache
//! folder, or in a bucket's record folder): the build state's two files and the cache entries'
//! keys, and what a build changed among those entries. The cache (`crate::ingest::cache`) and
//! a bucket's publishing of the record ([`super::bucket`]) both read them from here; and
//! [`Tree`], what the record says an output tree holds.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// File name of the build state in the cache folder (see `crate::publish::state`).
pub const STATE: &str = "state.bin";

/// Whether `name` is the name of an entry: 64 lower-case hex digits.
pub fn is_key(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// File name of the state's data, beside [`STATE`] (see `crate::publish::state`).
pub const DATA: &str = "state-data.bin";

/// The most bytes a file of the build state ([`STATE`], [`DATA`]) is read or unpacked to: ten
/// times the data of the 100,000-run archive of docs/BENCHMARKS.md (49 MB; its header is 7 MB),
/// so an archive of about a million runs, while a hostile or damaged one (a zstd bomb in a
/// bucket's record, a link to `/dev/zero`) costs no more than this of disk and memory.
pub const STATE_BUDGET: u64 = 512 << 20;

/// The most bytes a cache entry's record (`entry.json`) is read to: it lists a run's files
/// with their sums, about 150 bytes each, so this is some 400,000 files, far more than any
/// run's graphs have.
pub const ENTRY_BUDGET: u64 = 64 << 20;

/// File name of the marker of a build changing the previous tree.
pub const DIRTY: &str = "state.dirty";

/// The entries a build made and removed, and the keys it kept when it pruned to a set.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Entries made.
    pub made: Vec<String>,
    /// Entries removed.
    pub removed: Vec<String>,
    /// When the build pruned the cache to the entries it uses: those.
    pub kept: Option<BTreeSet<String>>,
    /// Entries whose files were looked for where a shard of a build stores them.
    pub stored: Vec<String>,
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
    /// The size in bytes of every page and file (by path) and of every run folder's graph
    /// files (by the folder): what the site costs to keep and to serve.
    pub bytes: BTreeMap<String, u64>,
    /// When the build that wrote the tree had written it (nanoseconds since 1970; 0: not
    /// known): a folder of it changed later had something put in it by hand.
    pub sealed: u64,
}

impl Tree {
    /// The bytes of the whole tree.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.values().sum()
    }

    /// The bytes of what this tree holds and `old` does not hold the same: pages whose hash
    /// differs or that are new (less those in `same`, known to hold the same bytes), run
    /// folders with other graph files.
    pub fn bytes_new_since(&self, old: &Tree, same: &std::collections::BTreeSet<String>) -> u64 {
        let pages = self.pages.iter().filter(|(p, h)| old.pages.get(*p) != Some(h) && !same.contains(*p)).map(|(p, _)| self.bytes.get(p).copied().unwrap_or(0));
        let runs = self.runs.iter().filter(|(u, k)| old.runs.get(*u) != Some(k)).map(|(u, _)| self.bytes.get(u).copied().unwrap_or(0));
        pages.chain(runs).sum()
    }
}
