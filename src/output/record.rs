//! The names of what a build keeps as its record beside the published site (in the cache
//! folder, or in a bucket's record folder): the build state's two files and the cache entries'
//! keys, and what a build changed among those entries. The cache (`crate::ingest::cache`) and
//! a bucket's publishing of the record ([`super::bucket`]) both read them from here.

use std::collections::BTreeSet;

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
