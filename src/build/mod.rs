//! The build of a whole site, in four phases that hand each other plain data:
//!
//! ```text
//! ingest   scan the input folder; name every run (archive::slug); read each profile that
//!          changed (in parallel) into a RunRecord, its graph files into the cache
//! group    series, dates, previous and next run: the Archive (archive::run::group)
//! derive   graphs made from several runs: each run compared with the previous one and with
//!          its series' baseline (crate::derive), only the new pairs made
//! publish  plan every page with a hash of what it shows (site::pages); render the ones that
//!          changed into the staging tree, link the runs' graph files, swap it in
//!          (crate::publish)
//! ```
//!
//! A profile that cannot be read is reported and skipped; the others are built. The output
//! is the same bytes whatever the thread count. What the last build did is kept in its
//! [`state`](crate::publish::state), so a rebuild reads only the profiles whose files changed, renders only the
//! pages whose content changed, and touches only the files that differ in the tree it swaps
//! in: its cost follows what changed, not the size of the archive.
//!
//! This file is the driver ([`build`]: the phases in order, and a second try with every file
//! checked when the published site was found damaged); [`open`] opens a build, `incremental`
//! finds what changed and reads only that, [`shard`] decodes one part of the profiles on one
//! machine of several.

mod incremental;
mod open;
pub mod shard;
mod summary;

pub(crate) use open::{open_cache, scan_input, worker_pool};
pub use summary::{Options, Summary};

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use rayon::prelude::*;

use crate::archive::run::{group, Archive, Compared, GraphChanges};
use crate::archive::{slug, Pattern};
use crate::config::Config;
use crate::derive;
use crate::error::{shown, BuildError, Warning};
use crate::ingest::cache::Cache;
use crate::ingest::{scan, RunRecord};
use crate::output::{bucket, Output};
use crate::publish::state;
use crate::site::theme::Theme;
use crate::publish::{Handed, Publish};

/// Builds the site described by `config`.
pub fn build(config: &Config, options: &Options) -> Result<Summary, BuildError> {
    if crate::config::is_url(&config.output) || crate::config::is_url(&config.input) {
        // What publishes that were killed left in the temporary folder.
        crate::output::remove_dead_temp_folders();
    }
    let built = build_in(config, options, false);
    if crate::config::is_url(&config.output) && config.cache_dir.is_none() {
        // The copy of a bucket's record was this build's own.
        let _ = std::fs::remove_dir_all(config.cache_folder());
    }
    built
}

/// Where, in the cache folder, a bucket's files read back are downloaded to.
pub(crate) const MIRROR: &str = ".published.tmp";

/// Builds the site; with `check_all`, as if nothing were known of the published tree: every
/// run's files are checked against their entries (a broken one is made again) and every file
/// is written where it differs.
fn build_in(config: &Config, options: &Options, check_all: bool) -> Result<Summary, BuildError> {
    let start = Instant::now();
    let mut b = Build::open(config, options)?;
    if check_all {
        b.live_ino = 0;
    }
    let phases = |b: &mut Build| -> Result<(), BuildError> {
        if !b.nothing_changed() {
            let runs = b.ingest()?;
            if let Some(runs) = b.anything_shown_changed(runs)? {
                let mut archive = b.group(runs);
                b.derive(&mut archive)?;
                b.publish(archive)?;
            }
        }
        Ok(())
    };
    let done = phases(&mut b);
    // A file of the published site that is not what the build wrote (edited or damaged by
    // hand: issue 45, item 7) was met, and its entry removed: the build is made again with
    // every run's files checked, which decodes the run again and writes its files again.
    let mut damaged = b.cache.as_ref().map_or_else(Vec::new, |c| c.damaged());
    damaged.sort();
    damaged.dedup();
    if done.is_err() && !damaged.is_empty() && !check_all && !options.dry_run {
        // A bucket's files are read from the folder they are downloaded to: the object is named.
        let mirror = config.cache_folder().join(MIRROR);
        let bucket = b.bucket.as_ref().map(|(bk, _)| bk.url().to_string());
        let first = std::mem::take(&mut b.summary.warnings);
        drop(b);
        let mut summary = build_in(config, options, true)?;
        let told = damaged.iter().map(|why| {
            let (path, message) = why.split_once(": ").map_or((why.as_str(), ""), |(p, m)| (p, m));
            let path = std::path::Path::new(path);
            let path = match (&bucket, path.strip_prefix(&mirror)) {
                _ if crate::config::is_url(path) => path.display().to_string(),
                (Some(url), Ok(rel)) => format!("{url}/{}", rel.display()),
                _ => shown(path),
            };
            Warning { path, message: format!("{message}; its run was decoded again, and the site checked and written again") }
        });
        // What the first try told and the second did not (it looked at less) is told too.
        let mut warnings: Vec<Warning> = told.chain(first).chain(std::mem::take(&mut summary.warnings)).collect();
        let mut seen = HashSet::new();
        warnings.retain(|w| seen.insert((w.path.clone(), w.message.clone())));
        summary.warnings = warnings;
        summary.elapsed = start.elapsed();
        return Ok(summary);
    }
    // A file of a bucket's site that could not be read back is missing from the folder it was
    // to be read from: a reader that then fails names that local file, so the failure of the
    // read itself (the object's address, the server's error) is what the build tells.
    let failures = b.cache.as_ref().map_or_else(Vec::new, |c| c.read_back_failures());
    if let (Err(e), Some(first)) = (&done, failures.first()) {
        return Err(BuildError::Write(format!("reading the published site back: {first} (then: {e})")));
    }
    done?;
    for why in failures {
        let (path, message) = why.split_once(": ").map_or((why.clone(), String::new()), |(p, m)| (p.to_string(), m.to_string()));
        b.summary.warnings.push(Warning { path, message: format!("{message}; not read back: what it holds was made again") });
    }
    b.summary.elapsed = start.elapsed();
    let summary = std::mem::take(&mut b.summary);
    state::drop_later((std::mem::take(&mut b.scanned), std::mem::take(&mut b.data), std::mem::take(&mut b.names)));
    Ok(summary)
}

/// A build under way: what every phase reads, and what it found so far.
struct Build<'a> {
    config: &'a Config,
    options: &'a Options,
    theme: Theme,
    pattern: Option<Pattern>,
    fingerprint: String,
    pool: rayon::ThreadPool,
    scanned: scan::Scan,
    /// When the profiles are in object storage: what downloads those the build reads.
    remote: Option<crate::ingest::remote::Remote>,
    /// The tree being brought to the new state (none for a dry run).
    staging: Option<Box<dyn Output>>,
    /// When publishing to object storage: the bucket, and its publish lock while the build runs.
    bucket: Option<(std::sync::Arc<bucket::Bucket>, bucket::Lock)>,
    cache: Option<Cache>,
    /// Inode of the published tree (0: none yet).
    live_ino: u64,
    /// What the last build left.
    header: Option<state::Header>,
    data: state::Data,
    /// The names, as this build gives them.
    names: slug::Record,
    /// Whether ingest found the runs of the last build, each with the record it had.
    same_runs: bool,
    /// Keys of cache entries that may no longer be used: of runs read again or gone, and of
    /// the last build's comparisons that this one does not publish.
    unused: Vec<String>,
    /// Keys of runs decoded again with the key they had: the published files were not what
    /// their entry recorded (edited in place, or gone), so their folders are written again.
    redone: BTreeSet<String>,
    /// Change lists of the comparisons made in this build, by key.
    changes: HashMap<String, Vec<GraphChanges>>,
    /// Whether publishing will rewrite the staging tree (its content unknown to the state).
    rewrite: bool,
    /// The files of the site's `static/` folder, copied as they are to the output's root.
    site_files: Vec<(String, Vec<u8>)>,
    /// Their hash, which the state keeps: a change to them alone is a change to publish.
    site_files_hash: String,
    summary: Summary,
}

/// A run as ingest hands it on: its record, the record's hash, its slug.
type NamedRun = (RunRecord, u64, String);

impl<'a> Build<'a> {
    /// Publish: every page planned, the staging tree brought to the new site and swapped in,
    /// the state saved (crate::publish).
    fn publish(&mut self, archive: Archive) -> Result<(), BuildError> {
        let staging = self.staging.take().expect("not a dry run");
        let publish = Publish {
            config: self.config,
            theme: &self.theme,
            pool: &self.pool,
            fingerprint: &self.fingerprint,
            site_files: &self.site_files,
            site_files_hash: &self.site_files_hash,
            cache: self.cache.as_ref(),
            bucket: self.bucket.as_ref(),
            live_ino: self.live_ino,
            records_before: self.header.as_ref().map_or(0, |h| h.records),
        };
        let handed = Handed {
            names: std::mem::take(&mut self.names),
            redone: std::mem::take(&mut self.redone),
            unused: std::mem::take(&mut self.unused),
            changes: std::mem::take(&mut self.changes),
        };
        let figures = publish.publish(staging, archive, handed, &mut self.data, &mut self.summary.warnings)?;
        let s = &mut self.summary;
        (s.pages_rendered, s.pages_kept, s.published_bytes, s.new_bytes, s.kept_bytes) = (figures.pages_rendered, figures.pages_kept, figures.published_bytes, figures.new_bytes, figures.kept_bytes);
        Ok(())
    }

    /// Group: series, dates, previous and next runs.
    fn group(&mut self, runs: Vec<NamedRun>) -> Archive {
        let (archive, collisions) = group(runs, &mut self.names);
        for c in &collisions {
            let first = archive.series.iter().find(|s| s.name == c.claimant).and_then(|s| s.runs.first());
            let path = first.map_or(String::new(), |&i| archive.runs[i].record.source.clone());
            self.summary.warnings.push(Warning {
                path,
                message: format!("series {:?} would share s/{}/ with series {:?}; published as s/{}/", c.claimant, c.natural, c.holder, c.given),
            });
        }
        archive
    }

    /// Derive: the comparisons of runs, made only for pairs no earlier build made.
    fn derive(&mut self, archive: &mut Archive) -> Result<(), BuildError> {
        // Moved, not copied: the state saves the comparisons of the new archive.
        let mut known: rustc_hash::FxHashMap<String, Compared> = std::mem::take(&mut self.data.comparisons).into_iter().map(|c| (c.key.clone(), c)).collect();
        if let (true, Some(cache)) = (self.rewrite, &self.cache) {
            // Their files will be copied: a broken entry is made again.
            let broken: Vec<String> = self.pool.install(|| known.par_iter().filter(|(k, _)| cache.verified(k).is_none()).map(|(k, _)| k.clone()).collect());
            for k in broken {
                known.remove(&k);
            }
        }
        let source = match (&self.cache, &self.staging) {
            (Some(c), _) => derive::Source::Cache(c),
            (None, Some(s)) => derive::Source::Staging(&**s),
            (None, None) => return Ok(()),
        };
        let config = self.config;
        let start = Instant::now();
        let derived = self.pool.install(|| derive::derive(config, archive, source, known));
        self.summary.derive_elapsed = start.elapsed();
        if let Some(why) = derived.write_failed {
            return Err(BuildError::Write(why));
        }
        for (path, why) in derived.failed {
            self.summary.warnings.push(Warning { path, message: why });
        }
        for (series, spec) in derived.unknown_baselines {
            self.summary.warnings.push(Warning {
                path: shown(config.file.as_deref().unwrap_or(std::path::Path::new("site.toml"))),
                message: format!("archive.baselines names {spec:?} for series {series:?}, which has no such run (give its date, title or path without extensions)"),
            });
        }
        self.summary.comparisons = archive.comparisons.len();
        self.summary.comparisons_made = derived.made;
        self.changes = derived.changes;
        self.unused.extend(derived.unused);
        Ok(())
    }
}
