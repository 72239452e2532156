//! What a build is asked to do ([`Options`]) and what it says it did ([`Summary`]).

use std::time::Duration;

use crate::error::{ProfileError, Warning};
use crate::ingest::RunRecord;

/// How to run a build.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// Show a progress bar (it is hidden anyway when stderr is not a terminal).
    pub progress: bool,
    /// Decode and check everything but write nothing (`flamesite check`).
    pub dry_run: bool,
    /// Reuse what the last build made: unchanged profiles are not read again and their graphs
    /// come from the incremental build cache.
    pub cache: bool,
}

/// What a build did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Runs built.
    pub runs: usize,
    /// Their graphs.
    pub graphs: usize,
    /// Runs built, sorted by source path (only for a dry run: `flamesite check`).
    pub built: Vec<RunRecord>,
    /// How many of them were not read again (their files did not change).
    pub unchanged: usize,
    /// How many were read again but their graphs came from the cache.
    pub cached: usize,
    /// How many were decoded.
    pub decoded: usize,
    /// Comparisons of two runs on the site.
    pub comparisons: usize,
    /// How many of them were made in this build (the others were known).
    pub comparisons_made: usize,
    /// Wall time of the derive phase (making the comparisons).
    pub derive_elapsed: Duration,
    /// Pages rendered and written.
    pub pages_rendered: usize,
    /// Pages taken as they were from the published site.
    pub pages_kept: usize,
    /// Bytes of the published site (every page, file and graph file).
    pub published_bytes: u64,
    /// Bytes of its files that are new or changed since the site before.
    pub new_bytes: u64,
    /// Bytes the build keeps on this machine beside the output (the cache folder; a bucket's
    /// build keeps nothing).
    pub kept_bytes: Option<u64>,
    /// Whether nothing at all changed, so the published site was left as it was.
    pub nothing_changed: bool,
    /// Profiles skipped, with the reason.
    pub skipped: Vec<ProfileError>,
    /// Warnings.
    pub warnings: Vec<Warning>,
    /// Wall time of the build.
    pub elapsed: Duration,
}
