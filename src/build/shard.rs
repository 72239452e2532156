//! A part of a build on one machine of several (`flamesite build --shard I/N`): decoding, the
//! cost that grows with the profiles, is split by a stable hash, and each part stores what it
//! decoded in the shared store (the bucket's record, or a cache folder on a shared disk). A
//! plain `flamesite build` afterwards finds every profile already decoded, and derives and
//! publishes: the site is byte for byte the one a single build makes, since an entry is the
//! same whichever machine decoded it.

use std::sync::Arc;

use rayon::prelude::*;

use crate::config::Config;
use crate::error::{BuildError, IngestError, ProfileError};
use crate::ingest::{self, scan};
use crate::output::{bucket, Published};

/// What a shard did.
#[derive(Debug, Default)]
pub struct ShardSummary {
    /// Profiles of this part.
    pub part: usize,
    /// Profiles of all parts.
    pub all: usize,
    /// Profiles of this part decoded now.
    pub decoded: usize,
    /// Profiles of this part the store already had.
    pub stored: usize,
    /// Profiles that could not be read, with the reason.
    pub skipped: Vec<ProfileError>,
    /// Where they were stored.
    pub store: String,
}

/// Which part (0-based, of `n`) the profile at `rel` belongs to: a hash of its folder, so that
/// a series kept in a folder of its own is decoded whole on one machine.
pub fn part_of(rel: &str, n: u32) -> u32 {
    let folder = rel.rsplit_once('/').map_or("", |(f, _)| f);
    let hash = blake3::hash(folder.as_bytes());
    (u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("eight bytes")) % u64::from(n)) as u32
}

/// Decodes part `i` (1-based) of `n` of the profiles into the shared store.
pub fn shard(config: &Config, threads: Option<usize>, i: u32, n: u32) -> Result<ShardSummary, BuildError> {
    if crate::config::is_url(&config.output) || crate::config::is_url(&config.input) {
        // What shards and publishes that were killed left in the temporary folder.
        crate::output::remove_dead_temp_folders();
    }
    let done = shard_in(config, threads, i, n);
    if crate::config::is_url(&config.output) && config.cache_dir.is_none() {
        // The copy of the bucket's record was this shard's own, whether it succeeded or not.
        let _ = std::fs::remove_dir_all(config.cache_folder());
    }
    done
}

fn shard_in(config: &Config, threads: Option<usize>, i: u32, n: u32) -> Result<ShardSummary, BuildError> {
    let pool = super::worker_pool(threads)?;
    let (scanned, remote) = super::scan_input(config, &pool)?;
    let dir = config.cache_folder();
    let bucket = if crate::config::is_url(&config.output) { Some(Arc::new(bucket::Bucket::open(&config.output.to_string_lossy(), "output").map_err(BuildError::bucket(""))?)) } else { None };
    if let Some(b) = &bucket {
        // A shard stores into the site's record: not inside another site's prefix either.
        bucket::refuse_inside_another_site(b)?;
    }
    let mut cache = super::open_cache(config)?;
    if let Some(b) = &bucket {
        // Entries the store already has are found there, one record at a time.
        cache = cache.publishing_to(Published::Bucket(bucket::Mirror::new(b.clone(), dir.join(super::MIRROR))));
    }
    let mine: Vec<&scan::Source> = scanned.sources.iter().filter(|s| part_of(&s.rel, n) == i - 1).collect();
    // A profile's key is the hash of its bytes: every profile of the part is read.
    let not_downloaded = remote.as_ref().map(|remote| remote.fetch(&mine)).unwrap_or_default();
    let results: Vec<Result<(String, bool), IngestError>> = pool.install(|| {
        mine.par_iter()
            .map(|s| match not_downloaded.get(&s.rel) {
                Some(why) => Err(IngestError::Profile(ProfileError::new(s.rel.clone(), format!("not downloaded: {why}")))),
                None => ingest::decode_into(&cache, config, s),
            })
            .collect()
    });
    let mut summary = ShardSummary {
        part: mine.len(),
        all: scanned.sources.len(),
        store: match &bucket {
            Some(b) => format!("{}/{}/cache", b.url(), bucket::RECORD),
            None => dir.display().to_string(),
        },
        ..ShardSummary::default()
    };
    summary.skipped = scanned.problems.iter().filter(|(p, _)| part_of(p, n) == i - 1).map(|(p, why)| ProfileError::new(p.clone(), why.clone())).collect();
    let mut made = Vec::new();
    for r in results {
        match r {
            Ok((key, true)) => {
                summary.decoded += 1;
                made.push(key);
            }
            Ok((_, false)) => summary.stored += 1,
            Err(IngestError::Profile(e)) => summary.skipped.push(e),
            Err(IngestError::Write(why)) => return Err(BuildError::Write(why)),
        }
    }
    summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(b) = &bucket {
        // Each entry with its files: the build that publishes reads them from there.
        bucket::push_entries(b, &dir, &made).map_err(BuildError::bucket("storing the decoded profiles"))?;
    }
    Ok(summary)
}
