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
//! ```
//!
//! A profile that cannot be read is reported and skipped; the others are built. The output
//! is the same bytes whatever the thread count. What the last build did is kept in its
//! [`state`], so a rebuild reads only the profiles whose files changed, renders only the
//! pages whose content changed, and touches only the files that differ in the tree it swaps
//! in: its cost follows what changed, not the size of the archive.

pub mod shard;
pub mod state;


use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::archive::run::{group, Archive, Compared, GraphChanges};
use crate::archive::{slug, Pattern};
use crate::config::Config;
use crate::derive;
use crate::derive::history::Span;
use crate::error::{BuildError, IngestError, ProfileError, Warning, FillError};
use crate::ingest::cache::{self, Cache};
use crate::ingest::{self, scan, How, RunRecord, PREVIEW};
use crate::output::{bucket, Output, Published};
use crate::site::pages::{Page, Site};
use crate::site::theme::Theme;
use state::{SavedRun, Tree, TreeDiff};

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
    staging: Option<Output>,
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
    /// Keys of cache entries that runs read again, or gone, no longer use.
    replaced_keys: Vec<String>,
    /// Keys of runs decoded again with the key they had: the published files were not what
    /// their entry recorded (edited in place, or gone), so their folders are written again.
    redone: BTreeSet<String>,
    /// Keys of the comparisons of the last build that this one does not publish.
    unused_comparisons: Vec<String>,
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

/// A span of a series' history while its files are rendered: read when the first of them is,
/// and how many of them (its names, its buckets) are still to come.
struct SpanCell {
    span: Option<Result<std::sync::Arc<Span>, String>>,
    uses: usize,
}

/// A run as ingest hands it on: its record, the record's hash, its slug.
type Ingested = (RunRecord, u64, String);

impl<'a> Build<'a> {
    /// Loads the theme and the state, scans the input folder and opens the staging tree.
    fn open(config: &'a Config, options: &'a Options) -> Result<Build<'a>, BuildError> {
        if !options.dry_run {
            refuse_folders_inside_output(config)?;
            refuse_output_inside_static_dir(config)?;
        }
        let theme = Theme::load(config.theme_dir.as_deref()).map_err(BuildError::Theme)?;
        let site_files = match &config.static_dir {
            Some(dir) => crate::site::theme::site_files(dir).map_err(BuildError::Config)?,
            None => Vec::new(),
        };
        let site_files_hash = {
            let mut h = blake3::Hasher::new();
            for (rel, bytes) in &site_files {
                h.update(format!("{rel}\0{}\0", bytes.len()).as_bytes());
                h.update(bytes);
            }
            h.finalize().to_hex().to_string()
        };
        let pattern = config.archive.pattern.as_deref().map(Pattern::new).transpose().map_err(BuildError::Config)?;
        let fingerprint = fingerprint(config, &theme);
        let pool = worker_pool(options.threads)?;
        let (scanned, remote) = scan_input(config, &pool)?;
        let cache_dir = config.cache_folder();
        let open_cache = || open_cache(config);
        // A warning about the bucket's record of the build state, when it was not read.
        let mut pulled = None;
        let (staging, cache, bucket) = if !crate::config::is_url(&config.output) {
            let mut staging = if options.dry_run { None } else { Some(crate::output::staging::Staging::new(&config.output)?) };
            let cache = match (&staging, options.cache) {
                (Some(_), true) => Some(open_cache()?.publishing_to(Published::Folder(config.output.clone()))),
                _ => None,
            };
            // A build that changes the staging tree and does not save the state (it fails, is
            // killed, or runs without the cache) leaves the marker that tells the next build not
            // to trust what the state says that tree holds.
            let ours = cache.is_some() || cache_dir.is_dir() && cache::check_folder(&cache_dir).is_ok();
            if let (Some(s), true) = (&mut staging, ours) {
                s.mark_changes_in(cache_dir.join(state::DIRTY));
            }
            (staging.map(Output::Folder), cache, None)
        } else {
            // A bucket keeps the build's record beside the site; the cache folder holds a copy
            // of it while the build runs.
            if !options.cache {
                return Err(BuildError::Config("--no-cache: a site in object storage is published from the record it keeps beside it, which the cache folder holds while a build runs".into()));
            }
            let b = std::sync::Arc::new(bucket::Bucket::open(&config.output.to_string_lossy(), "output").map_err(|e| BuildError::Config(e.to_string()))?);
            if options.dry_run {
                (None, None, None)
            } else {
                // A site inside another's prefix is refused before anything is written (its
                // lock included); one that holds another inside it, by Staging::new.
                bucket::refuse_inside_another_site(&b)?;
                let lock = bucket::Lock::take(b.clone())?;
                let cache = open_cache()?;
                pulled = bucket::pull_state(&b, &cache_dir, cache::STATE).map_err(|e| BuildError::Write(format!("reading the record of the published site: {e}")))?;
                let staging = bucket::Staging::new(b.clone(), &lock)?;
                let mirror = bucket::Mirror::new(b.clone(), cache_dir.join(MIRROR));
                (Some(Output::Bucket(staging)), Some(cache.publishing_to(Published::Bucket(mirror))), Some((b, lock)))
            }
        };
        let mut summary = Summary::default();
        let header = cache.as_ref().and_then(|c| state::Header::load(c.dir(), &fingerprint).unwrap_or_else(|w| {
            summary.warnings.push(w);
            None
        }));
        summary.warnings.extend(pulled);
        let live_ino = staging.as_ref().map_or(0, |s| s.inodes().1);
        Ok(Build {
            config,
            options,
            theme,
            pattern,
            fingerprint,
            pool,
            scanned,
            remote,
            staging,
            bucket,
            cache,
            live_ino,
            header,
            data: state::Data::default(),
            names: slug::Record::default(),
            same_runs: false,
            replaced_keys: Vec::new(),
            redone: BTreeSet::new(),
            unused_comparisons: Vec::new(),
            changes: HashMap::new(),
            rewrite: true,
            site_files,
            site_files_hash,
            summary,
        })
    }

    /// Whether every profile and sidecar has the stamps of the last build, which published
    /// the site that is there: then nothing is to be done, and only the state's small header
    /// was read.
    fn nothing_changed(&mut self) -> bool {
        let Some(h) = &self.header else { return false };
        let sources = &self.scanned.sources;
        let same = h.live_ino == self.live_ino
            && self.live_ino != 0
            && h.statics == self.site_files_hash
            && self.scanned.problems.is_empty()
            && h.runs.len() == sources.len()
            && h.runs.iter().zip(sources).all(|(k, s)| k.source == s.rel && k.stamps == s.stamps);
        if same {
            self.summary.runs = h.runs.len();
            self.summary.graphs = h.runs.iter().map(|k| k.graphs).sum();
            self.summary.unchanged = h.runs.len();
            self.summary.nothing_changed = true;
        }
        same
    }

    /// Ingest: names every profile, keeps the record of each whose files did not change, and
    /// reads the others in parallel. Returns the runs in source order.
    fn ingest(&mut self) -> Result<Vec<Ingested>, BuildError> {
        let cache_dir = self.config.cache_folder();
        if let (Some((b, _)), Some(_)) = (&self.bucket, &self.header) {
            let refused = bucket::pull_state(b, &cache_dir, state::DATA).map_err(|e| BuildError::Write(format!("reading the record of the published site: {e}")))?;
            self.summary.warnings.extend(refused);
        }
        let data = self.header.as_ref().map_or(Ok(None), |h| state::Data::load(&cache_dir, h));
        self.data = data.unwrap_or_else(|w| {
            self.summary.warnings.push(w);
            None
        }).unwrap_or_default();
        if self.data.names == slug::Record::default() {
            let bucket = self.bucket.as_ref().map(|(b, _)| b);
            // Each listing within the budget of an index (a FIFO, a link to /dev/zero or a
            // 6 GB object in its place is not read); one that cannot be read is named.
            let unread = std::cell::RefCell::new(Vec::new());
            let read = |rel: &str| {
                let got = match bucket {
                    Some(b) => b.get_within(rel, crate::output::INDEX_BUDGET).map_err(|e| {
                        // The error names the object first.
                        let object = format!("{}/{rel}", b.url());
                        let why = e.to_string();
                        let why = why.strip_prefix(&format!("{object}: ")).unwrap_or(&why).to_string();
                        (object, why)
                    }),
                    None => {
                        let path = self.config.output.join(rel);
                        match crate::store::read_regular(&path, crate::output::INDEX_BUDGET) {
                            Ok(bytes) => Ok(Some(bytes)),
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                            Err(e) => Err((path.display().to_string(), e.to_string())),
                        }
                    }
                };
                got.unwrap_or_else(|(path, why)| {
                    let message = format!("{why}; the published listing is not read: the names it records are given anew");
                    unread.borrow_mut().push(Warning { path, message });
                    None
                })
            };
            self.data.names = published_names(&read);
            self.summary.warnings.extend(unread.into_inner());
        }
        // Names read back are held to the rules of new ones (the listings are anyone's to edit).
        for (key, name) in self.data.names.retain_valid() {
            self.summary.warnings.push(Warning {
                path: key,
                message: format!("the record of published names gives it {name:?}, which is not a name flamesite gives; ignored, it is named anew"),
            });
        }
        // A new profile whose path would make a slug longer than any flamesite gives is not
        // built: its run's files would have paths no file system takes, and every build would
        // fail on them. One the record names keeps its name, which is short enough.
        let scan::Scan { sources, problems } = &mut self.scanned;
        sources.retain(|s| {
            let Some(len) = slug::natural_run_slug_too_long(scan::stem(&s.rel)).filter(|_| !self.data.names.runs.contains_key(&s.rel)) else { return true };
            problems.push((
                s.rel.clone(),
                format!(
                    "its path makes a URL name of {len} bytes (p/NAME/), longer than the {} bytes flamesite gives one, so that the site's paths stay within what file systems allow; not built: give it a shorter path",
                    slug::MAX_NATURAL_RUN_SLUG
                ),
            ));
            false
        });
        let summary = &mut self.summary;
        let sources = &self.scanned.sources;
        self.names = self.data.names.clone();
        let stems: Vec<(&str, &str)> = sources.iter().map(|s| (s.rel.as_str(), scan::stem(&s.rel))).collect();
        let (slugs, collisions) = slug::assign_runs(&stems, &mut self.names);
        for c in &collisions {
            summary.warnings.push(Warning {
                path: c.claimant.clone(),
                message: format!("its URL p/{}/ is already {}'s; published as p/{}/", c.natural, c.holder, c.given),
            });
        }
        // The last build's record of each source, by the source's index: both lists are sorted
        // by path, so they are matched in one walk (a map of 100,000 records, each keyed by a
        // copy of its path, was a measurable part of a rebuild: docs/BENCHMARKS.md, "Figures behind the code").
        // The records of sources that are gone are left over.
        let mut old_runs = std::mem::take(&mut self.data.runs).into_iter().peekable();
        let mut gone = Vec::new();
        let mut previous: Vec<Option<SavedRun>> = Vec::with_capacity(sources.len());
        for s in sources {
            while let Some(r) = old_runs.next_if(|r| r.record.source < s.rel) {
                gone.push(r);
            }
            previous.push(old_runs.next_if(|r| r.record.source == s.rel));
        }
        gone.extend(old_runs);
        // Whether every run is the one the last build published, with the same record.
        let mut same = gone.is_empty();
        // A run whose files have the stamps they had is not read again.
        // A build that rewrites the staging tree copies every run's files from the cache:
        // then an unchanged run's entry is checked first, and made again when broken.
        let staging_ino = self.staging.as_ref().map_or(0, |s| s.inodes().0);
        let rewrite = !(self.live_ino != 0 && self.data.live.ino == self.live_ino && self.data.next.as_ref().is_some_and(|n| n.ino == staging_ino));
        self.rewrite = rewrite;
        let cache = self.cache.as_ref();
        if let (true, Some(c)) = (rewrite, cache) {
            // Every file is to be written again: the published site's folders, as the state
            // last knew them, may hold what the entries recorded.
            for (url, key) in &self.data.live.runs {
                c.home(key, url);
            }
        }
        let unchanged: Vec<bool> = self.pool.install(|| {
            sources
                .par_iter()
                .zip(&previous)
                .zip(&slugs)
                .map(|((s, p), slug)| {
                    cache.is_some()
                        && p.as_ref().is_some_and(|p| {
                            p.record.stamps == s.stamps
                                && (!rewrite || cache.is_some_and(|c| c.verified_at(&p.record.key, Some(&slug::run_folder(slug))).is_some()))
                        })
                })
                .collect()
        });
        let ctx = ingest::Ctx { config: self.config, pattern: self.pattern.as_ref(), cache: self.cache.as_ref() };
        let todo: Vec<usize> = (0..sources.len()).filter(|&i| !unchanged[i]).collect();
        // Only the profiles read now are downloaded; one that cannot be is not read.
        let not_downloaded = self.remote.as_ref().map(|remote| remote.fetch(&todo.iter().map(|&i| &sources[i]).collect::<Vec<_>>())).unwrap_or_default();
        let bar = progress_bar(self.options.progress, todo.len());
        let staging = &self.staging;
        let mut outcomes: HashMap<usize, Result<ingest::Ingested, IngestError>> = self.pool.install(|| {
            todo.par_iter()
                .map(|&i| {
                    // Without a cache, a decoded profile's files go straight to its folder.
                    let url = slug::run_folder(&slugs[i]);
                    let sink = |rel: &str, bytes: &[u8]| match staging {
                        Some(s) => s.write(&format!("{url}{rel}"), bytes).map_err(|e| FillError::Write(e.to_string())),
                        None => Ok(()),
                    };
                    let r = match not_downloaded.get(&sources[i].rel) {
                        Some(why) => Err(IngestError::Profile(ProfileError::new(sources[i].rel.clone(), format!("not downloaded: {why}")))),
                        None => ingest::ingest(&ctx, &sources[i], &url, &sink),
                    };
                    bar.inc(1);
                    (i, r)
                })
                .collect()
        });
        bar.finish_and_clear();
        summary.skipped = self.scanned.problems.iter().map(|(path, reason)| ProfileError::new(path.clone(), reason.clone())).collect();
        let mut runs = Vec::new();
        for (i, slug) in slugs.into_iter().enumerate() {
            let (record, hash) = if unchanged[i] {
                let saved = previous[i].take().expect("an unchanged run has a record");
                summary.unchanged += 1;
                (saved.record, saved.hash)
            } else {
                let old = previous[i].take();
                let old_hash = old.as_ref().map(|r| r.hash);
                let old_key = old.map(|old| old.record.key);
                match outcomes.remove(&i).expect("every changed run was ingested") {
                    Ok(ingested) => {
                        match ingested.how {
                            How::Cached => summary.cached += 1,
                            How::Decoded => summary.decoded += 1,
                        }
                        // Decoded with the key it had: neither its entry nor the published
                        // site had its files as recorded.
                        let redone = ingested.how == How::Decoded && old_key.as_deref() == Some(ingested.record.key.as_str());
                        if redone {
                            self.redone.insert(ingested.record.key.clone());
                        }
                        if let Some(k) = old_key.filter(|_| !redone) {
                            self.replaced_keys.push(k);
                        }
                        let hash = record_hash(&ingested.record);
                        same &= old_hash == Some(hash) && !redone;
                        (ingested.record, hash)
                    }
                    Err(IngestError::Profile(e)) => {
                        // One that fails again is not on the site either time.
                        same &= old_hash.is_none();
                        self.replaced_keys.extend(old_key);
                        summary.skipped.push(e);
                        continue;
                    }
                    Err(IngestError::Write(why)) => return Err(BuildError::Write(why)),
                }
            };
            for w in &record.warnings {
                summary.warnings.push(Warning { path: record.source.clone(), message: w.clone() });
            }
            runs.push((record, hash, slug));
        }
        // Runs that are gone: their cache entries may go too.
        self.replaced_keys.extend(gone.into_iter().map(|r| r.record.key));
        self.same_runs = same;
        summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        summary.runs = runs.len();
        summary.graphs = runs.iter().map(|(r, _, _)| r.graphs.len()).sum();
        Ok(runs)
    }

    /// Whether anything a page shows changed (a profile may have been touched without a
    /// change, or one that fails may still fail); `None` when not, after saving the newer
    /// stamps, so that the next build need not read these files again. A dry run ends here.
    fn anything_shown_changed(&mut self, runs: Vec<Ingested>) -> Result<Option<Vec<Ingested>>, BuildError> {
        if self.staging.is_none() {
            self.summary.built = runs.into_iter().map(|(r, _, _)| r).collect();
            return Ok(None);
        }
        let unchanged = self.same_runs
            && self.names == self.data.names
            && self.live_ino != 0
            && self.data.live.ino == self.live_ino
            && self.header.as_ref().is_some_and(|h| h.statics == self.site_files_hash);
        if !unchanged {
            return Ok(Some(runs));
        }
        let (Some(cache), Some(header)) = (&self.cache, self.header.take()) else { return Ok(Some(runs)) };
        self.summary.nothing_changed = true;
        let known = runs.iter().map(|(r, h, _)| state::Known { source: r.source.clone(), stamps: r.stamps, hash: *h, graphs: r.graphs.len() }).collect();
        let mut data = std::mem::take(&mut self.data);
        data.runs = runs.into_iter().map(|(record, hash, _)| SavedRun { record, hash }).collect();
        state::save(cache.dir(), state::Header { runs: known, ..header }, data).map_err(BuildError::Cache)?;
        self.push_record(false)?;
        Ok(None)
    }

    /// Group: series, dates, previous and next runs.
    fn group(&mut self, runs: Vec<Ingested>) -> Archive {
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
            (None, Some(s)) => derive::Source::Staging(s),
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
        self.unused_comparisons = derived.unused;
        Ok(())
    }

    /// Publish: plans every page, brings the staging tree to the new site (only what differs
    /// when the state knows that tree), swaps it in and saves the state.
    fn publish(&mut self, archive: Archive) -> Result<(), BuildError> {
        let staging = self.staging.take().expect("not a dry run");
        let cache = self.cache.as_ref();
        let data = &mut self.data;
        let made = &self.changes;
        let changes = |key: &str| -> Vec<GraphChanges> {
            match made.get(key) {
                Some(c) => c.clone(),
                None => cache.and_then(|c| c.get(key)).map(|p| p.changes).unwrap_or_default(),
            }
        };
        // A span of a series' history is read once for all its files (its names and its
        // buckets), and let go when the last of them has been rendered: kept to the end, the
        // spans of a full build of 100,000 runs held about a gigabyte.
        let histories: Vec<Vec<std::sync::Mutex<SpanCell>>> = archive
            .series
            .iter()
            .map(|s| derive::history::spans(s.runs.len()).into_iter().map(|(_, n)| std::sync::Mutex::new(SpanCell { span: None, uses: 1 + derive::history::buckets(n) })).collect())
            .collect();
        // A comparison's noise marks read the spans of the runs before its later one, and so
        // does the judgement of its regression mark, if it has one (once for all the pages and
        // feeds that show it).
        let threshold = self.config.archive.regression_points;
        for ci in 0..archive.comparisons.len() {
            if let Some((si, _, window)) = crate::site::pages::noise_window(&archive, ci, &self.config.changes) {
                let marked = archive.comparisons[ci].made.top.as_ref().is_some_and(|t| t.points > threshold);
                let mut spans: Vec<usize> = window.iter().map(|j| j / derive::history::SPAN).collect();
                spans.dedup();
                for k in spans {
                    if let Some(cell) = histories[si].get(k) {
                        cell.lock().expect("no panic while holding it").uses += 1 + usize::from(marked);
                    }
                }
            }
        }
        // A history reads its runs' manifests and name files only (derive::history::collect):
        // of a run in a bucket, nothing else is downloaded.
        let graph_file = |run: &crate::archive::run::Run, g: &crate::archive::run::GraphInfo, rel: &str| match cache {
            Some(c) => c.one_file_at(&run.record.key, Some(&run.url), &format!("{}{rel}", g.data)),
            None => staging.path(&format!("{}{}{rel}", run.url, g.data)),
        };
        // A file that cannot be read is checked against the sum its entry recorded (the record
        // is read only then): one edited or damaged in the published site has the build made
        // again (`build`), which writes it again.
        let damaged_file = |run: &crate::archive::run::Run, g: &crate::archive::run::GraphInfo, rel: &str| {
            cache.and_then(|c| c.damaged_file_at(&run.record.key, Some(&run.url), &format!("{}{rel}", g.data)))
        };
        let history_files = derive::history::Files { at: &graph_file, damaged: &damaged_file };
        let history = |si: usize, span: usize| {
            let Some(cell) = histories[si].get(span) else { return Err(format!("series {si} has no history span {span}")) };
            let mut cell = cell.lock().expect("no panic while holding it");
            let got = cell.span.get_or_insert_with(|| derive::history::collect(&archive, si, span, &history_files).map(std::sync::Arc::new)).clone();
            cell.uses = cell.uses.saturating_sub(1);
            if cell.uses == 0 {
                cell.span = None;
            }
            got
        };
        let site = Site {
            config: self.config,
            theme: &self.theme,
            archive: &archive,
            names: &self.names,
            base: hash_str(&self.fingerprint),
            changes: &changes,
            history: &history,
            change_points: Default::default(),
            in_series: Default::default(),
        };
        let plan = site.plan();
        let (staging_ino, _) = staging.inodes();
        // The site's static files, less those whose path the build writes itself.
        let generated = generated_names(&plan, &archive);
        let mut site_files = Vec::new();
        for (rel, bytes) in &self.site_files {
            let top = rel.split('/').next().unwrap_or(rel);
            if generated.contains(top) {
                let dir = self.config.static_dir.as_deref().unwrap_or(std::path::Path::new("static"));
                let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
                self.summary.warnings.push(Warning {
                    path: dir.join(rel).display().to_string(),
                    message: format!(
                        "not copied: the build writes {}{top} in the output folder itself (the files of static/ are copied to its root beside the site's own)",
                        if top == rel.as_str() { "" } else { "the folder " }
                    ),
                });
            } else {
                site_files.push((rel.as_str(), bytes.as_slice()));
            }
        }
        let live_ino = self.live_ino;
        let old_known = live_ino != 0 && data.live.ino == live_ino;
        let mut found_inside = None;
        // What the published tree lacks of what the state says it holds (files removed by
        // hand): the next build, which brings that tree up to date, writes them again.
        let mut lost = Vec::new();
        match &staging {
            Output::Folder(s) => {
                let foreign = foreign_files(self.config, &generated, &site_files, s)?;
                self.summary.warnings.extend(foreign);
                let left = data.foreign.take().filter(|(ino, _)| *ino == staging_ino).map(|(_, paths)| paths);
                let (warnings, found, missing) = foreign_inside(self.config, old_known.then_some(&data.live), left.as_deref().unwrap_or_default(), s)?;
                self.summary.warnings.extend(warnings);
                found_inside = (!found.is_empty()).then_some((live_ino, found));
                lost = missing;
            }
            // A bucket is often shared: only the folders and files the site writes are its.
            Output::Bucket(s) => {
                s.set_ours(generated.iter().map(|n| n.to_string()).chain(site_files.iter().filter_map(|(rel, _)| rel.split('/').next().map(str::to_string))));
                // What the record says the bucket holds is checked against one listing of it
                // (sizes): a page or file removed or changed by hand, or a run folder whose
                // graph files are not all there, is taken as not held, and written again.
                if let (true, Some((b, _))) = (old_known, &self.bucket) {
                    let listed = b.list("").map_err(|e| BuildError::Write(format!("checking the published site: {e}")))?;
                    let (pages, runs) = lacking(&data.live, &listed);
                    for p in pages {
                        self.summary.warnings.push(Warning { path: format!("{}/{p}", b.url()), message: format!("{NOT_AS_PUBLISHED}; written again") });
                        data.live.pages.remove(&p);
                    }
                    // A run's graph files are kept nowhere else: the run is decoded again, by
                    // the build made again with every run's files checked (`build`).
                    if let (false, Some(cache)) = (runs.is_empty(), cache) {
                        for url in &runs {
                            cache.discard_damaged(&data.live.runs[url], format!("{}/{url}: {NOT_AS_PUBLISHED}", b.url()));
                        }
                        return Err(BuildError::Write(format!("{}/{}: {NOT_AS_PUBLISHED}", b.url(), runs[0])));
                    }
                }
            }
        }
        let mut desired = Tree {
            ino: staging_ino,
            pages: plan.iter().map(|p| (p.path.clone(), p.hash)).collect(),
            runs: graph_sets(&archive).map(|(url, key)| (url.to_string(), key.to_string())).collect(),
            bytes: BTreeMap::new(),
            sealed: 0,
        };
        // The theme's static files and the site's own: the state knows them as pages, so that
        // one that is gone is removed from the staging tree as a page that is gone is, and one
        // the staging tree holds is not written again (in a bucket, not read back to compare).
        let theme_statics: Vec<(String, &[u8])> = self.theme.statics.iter().map(|(name, bytes)| (format!("static/{name}"), bytes.as_slice())).collect();
        let statics: Vec<(&str, &[u8])> = theme_statics.iter().map(|(rel, bytes)| (rel.as_str(), *bytes)).chain(site_files.iter().copied()).collect();
        desired.pages.extend(statics.iter().map(|(rel, bytes)| (rel.to_string(), hash_bytes(bytes))));
        // The staging tree is known when the state describes it.
        // A link removed from the staging tree where the site has a folder: the tree lacks
        // what the state says it holds there, and is written whole.
        let unlinked = !staging.unlinked().is_empty();
        let mut incremental = cache.is_some() && old_known && !unlinked && data.next.as_ref().is_some_and(|n| n.ino == staging_ino);
        let sizes = Sizes::default();
        let (mut rendered, mut kept) = self.pool.install(|| match (incremental, cache, &data.next) {
            (true, Some(cache), Some(next)) => {
                state::mark_dirty(cache.dir()).map_err(BuildError::Cache)?;
                update(&site, &plan, &statics, &desired, &staging, cache, &data.live, next, &self.redone, &sizes)
            }
            _ => rewrite(&site, &plan, &statics, &archive, &staging, cache, &sizes),
        })?;
        // Links met on the way of a write were removed, never written through (issue 45): the
        // tree is then written whole, as when nothing says what it holds.
        let links = staging.unlinked();
        if !links.is_empty() {
            for rel in &links {
                self.summary.warnings.push(Warning { path: shown(&staging.path(rel)), message: LINK_IN_THE_OLD_SITE.into() });
            }
            if incremental {
                incremental = false;
                (rendered, kept) = self.pool.install(|| rewrite(&site, &plan, &statics, &archive, &staging, cache, &sizes))?;
            }
        }
        self.summary.pages_rendered = rendered;
        self.summary.pages_kept = kept;
        let same;
        (desired.bytes, same) = sizes.complete(&desired, &data.live, &staging, cache);
        self.summary.published_bytes = match (cache, &staging) {
            // Without the cache the graph files were written by the decoders: counted on disk.
            (None, Output::Folder(s)) => folder_bytes(&s.path("")),
            _ => desired.total_bytes(),
        };
        self.summary.new_bytes = if old_known { desired.bytes_new_since(&data.live, &same) } else { self.summary.published_bytes };
        // When nothing says what the tree swapped out holds (a first build, or a lost state),
        // it is made anew as a copy of the new site, so that the next build has a known tree.
        if let Some((_, lock)) = &self.bucket {
            lock.held()?;
        }
        let to_folder = matches!(staging, Output::Folder(_));
        // Every folder of the new tree has been written (the swap renames the tree's top).
        desired.sealed = staging.clock();
        let mirror = staging.commit(!incremental, cache.is_some() && !old_known)?;

        let Some(cache) = cache else { return Ok(()) };
        if incremental {
            // Only entries of runs that changed or went, and comparisons of them, can have
            // become unused: those few are looked for among the keys in use (a set of all
            // keys was a measurable part of a rebuild at 100,000 runs: docs/BENCHMARKS.md, "Figures behind the code").
            let mut unused: HashMap<String, bool> = self.replaced_keys.drain(..).chain(self.unused_comparisons.drain(..)).map(|k| (k, true)).collect();
            if !unused.is_empty() {
                for (_, key) in graph_sets(&archive) {
                    if let Some(u) = unused.get_mut(key) {
                        *u = false;
                    }
                }
            }
            cache.remove(unused.into_iter().filter_map(|(k, u)| u.then_some(k)));
        }
        let records = if incremental {
            let before = self.header.as_ref().map_or(0, |h| h.records);
            before.saturating_add_signed(cache.records_added())
        } else {
            let used: BTreeSet<&str> = graph_sets(&archive).map(|(_, key)| key).collect();
            cache.retain(&used)
        };
        let old_live = std::mem::take(&mut data.live);
        let mut next = match mirror {
            Some(ino) => Some(TreeDiff { ino, ..TreeDiff::default() }),
            None => old_known.then(|| TreeDiff::between(&desired, &old_live)),
        };
        if let Some(next) = next.as_mut() {
            // Files removed by hand from the site just swapped out are written there again by
            // the next build (this one published them from the other tree).
            for rel in &lost {
                let folder = format!("{rel}/");
                for page in desired.pages.keys().filter(|p| *p == rel || p.starts_with(&folder)) {
                    next.pages.insert(page.clone(), None);
                }
                // A run folder there holds something other than its files (what is left of
                // them): the next build removes it first, then writes them.
                for url in desired.runs.keys().filter(|u| rel.starts_with(u.as_str()) || u.starts_with(&folder)) {
                    next.runs.insert(url.clone(), Some(String::new()));
                }
            }
        }
        if let Some(next) = next.as_mut().filter(|_| !self.redone.is_empty()) {
            // The tree swapped out has the files of the runs decoded again as they were found
            // (changed): the next build writes those folders there again.
            for (url, key) in &desired.runs {
                if self.redone.contains(key) {
                    next.runs.insert(url.clone(), None);
                }
            }
        }
        let known = archive.runs.iter().map(|r| state::Known { source: r.record.source.clone(), stamps: r.record.stamps, hash: r.hash, graphs: r.record.graphs.len() }).collect();
        let comparisons = archive.comparisons.into_iter().map(|c| c.made).collect();
        let runs = archive.runs.into_iter().map(|r| SavedRun { record: r.record, hash: r.hash }).collect();
        state::drop_later((archive.series, plan, old_live));
        let header = state::Header {
            version: 0,
            fingerprint: self.fingerprint.clone(),
            generation: 0,
            live_ino: staging_ino,
            runs: known,
            statics: self.site_files_hash.clone(),
            records,
        };
        let names = std::mem::take(&mut self.names);
        state::save(cache.dir(), header, state::Data { generation: 0, names, runs, live: desired, next, comparisons, foreign: found_inside }).map_err(BuildError::Cache)?;
        if to_folder {
            let state = [crate::ingest::cache::STATE, state::DATA].iter().map(|f| std::fs::metadata(cache.dir().join(f)).map_or(0, |m| m.len())).sum::<u64>();
            self.summary.kept_bytes = Some(records + state);
        }
        // The published site now holds every entry's files: the entries made by this build
        // keep their sums only (after a rewrite, `retain` above let go of every entry's).
        cache.shed();
        self.push_record(true)
    }

    /// A bucket keeps the build's record beside the site: the cache folder's copy is uploaded
    /// (the state last), and after a publish the marker of a publish under way goes.
    fn push_record(&self, published: bool) -> Result<(), BuildError> {
        let (Some((bucket, lock)), Some(cache)) = (&self.bucket, &self.cache) else { return Ok(()) };
        let changes = cache.changes();
        lock.held()?;
        bucket::push_record(bucket, cache.dir(), &changes).map_err(|e| BuildError::Write(format!("saving the record of the published site: {e}")))?;
        if published {
            // Files a shard stored are in the site now: the store lets go of them.
            let mut stored: Vec<String> = Vec::new();
            for key in changes.stored.iter().collect::<BTreeSet<_>>() {
                if let Some(p) = cache.get(key) {
                    stored.extend(p.files.iter().map(|f| format!("{}/cache/{key}/files/{f}", bucket::RECORD)));
                }
            }
            bucket.delete_all(&stored).map_err(|e| BuildError::Write(format!("saving the record of the published site: {e}")))?;
            lock.finish()?;
        }
        Ok(())
    }
}

/// The names at the top of the output folder that the build writes: its pages' and graph
/// folders' first segments, and its fixed files and folders.
fn generated_names<'p>(plan: &'p [Page], archive: &'p Archive) -> BTreeSet<&'p str> {
    let mut ours: BTreeSet<&str> = plan.iter().filter_map(|p| p.path.split('/').next()).collect();
    ours.extend(graph_sets(archive).filter_map(|(url, _)| url.split('/').next()));
    ours.extend(["static", "p", "s", "index.json", "index.html", "feed.xml"]);
    ours
}

/// What a build says of a file put in the published site by hand (at its top or inside its
/// folders), which the new site does not have.
const NOT_IN_THE_NEW_SITE: &str =
    "was not written by flamesite: the output folder is replaced whole, so it is not in the new site (put files to publish as they are in the static/ folder beside site.toml)";
/// What the build says of a symbolic link it finds in the published site where the site has a
/// folder (a series' folder moved elsewhere and linked back).
const LINK_IN_THE_NEW_SITE: &str = "is a symbolic link where the site has a folder: flamesite never writes or removes through links, so the new site has a folder in its place (what the link leads to is left as it is)";
/// What the build says as it removes such a link from the tree it writes.
const LINK_IN_THE_OLD_SITE: &str = "was a symbolic link (it was in the output folder before the last build): the link was removed, never what it leads to, and the site's folders written anew";
/// What the build after says as it removes that file from the tree it brings up to date.
const REMOVED_FROM_THE_OLD_SITE: &str = "was not written by flamesite (it was in the output folder before the last build): removed";

/// Files at the top of the output folder that flamesite does not write (a `CNAME`, a
/// `robots.txt` put there by hand rather than in the site's `static/` folder) are not in the
/// new site, since the output folder is replaced whole: each is named in a warning. In the
/// staging tree (the site before, where such a file went at the last build) they are removed,
/// each named in a warning first, so that they do not come back every other build.
fn foreign_files(config: &Config, generated: &BTreeSet<&str>, site_files: &[(&str, &[u8])], staging: &crate::output::staging::Staging) -> Result<Vec<Warning>, BuildError> {
    let mut warnings = Vec::new();
    let mut ours = generated.clone();
    ours.extend(site_files.iter().filter_map(|(rel, _)| rel.split('/').next()));
    // The output's git repository goes with the output from build to build (Staging::commit).
    ours.insert(crate::output::staging::GIT);
    // Names the build does not write, and links (where it writes a folder or a file, one put
    // by hand: never written through), each with whether it is a link of a name of the site.
    let foreign = |dir: &std::path::Path| -> Vec<(String, bool)> {
        entries(dir)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, link)| {
                let link = link && name != crate::output::staging::GIT;
                let ours = ours.contains(name.as_str());
                (link || !ours).then_some((name, link && ours))
            })
            .collect()
    };
    let output = &config.output;
    for (name, link) in foreign(output) {
        warnings.push(Warning {
            path: shown(&output.join(&name)),
            message: if link { LINK_IN_THE_NEW_SITE } else { NOT_IN_THE_NEW_SITE }.into(),
        });
    }
    for (name, link) in foreign(&staging.path("")) {
        // A link goes alone, never what it leads to; one of the site's names is named (and the
        // tree written whole) by the build.
        if staging.remove_link(&name, link)? {
            if link {
                continue;
            }
        } else {
            staging.remove(&name)?;
        }
        warnings.push(Warning {
            path: shown(&staging.path(&name)),
            message: REMOVED_FROM_THE_OLD_SITE.into(),
        });
    }
    Ok(warnings)
}

/// Files and folders put by hand inside the site's folders (`p/api/notes.txt`), which the
/// top-level look of [`foreign_files`] does not see (issue 31, item 7). In the published
/// tree, described by the state as `live`, a folder is looked into only when it changed after
/// the build that wrote it had finished (`Tree::sealed`, the file system's time then; a folder
/// stamped in the same tick is looked into too, and holds nothing foreign when the build
/// wrote it): one `lstat` per folder of the site,
/// not a walk of its files; the graph folders inside a run's folder are not looked into (they
/// are a cache entry's files). Each entry found is named in a warning, as at the top, and
/// returned: the state keeps them, and the next build, which brings that tree up to date,
/// removes them first. `left`: those the last build found, removed here from the staging tree
/// (the tree they were found in), each named in a warning, so that they do not come back
/// every other build.
fn foreign_inside(config: &Config, live: Option<&Tree>, left: &[String], staging: &crate::output::staging::Staging) -> Result<(Vec<Warning>, Vec<String>, Vec<String>), BuildError> {
    let mut warnings = Vec::new();
    // Names the last build read from the output's folders; a state that says otherwise (one
    // climbing out, or naming the tree's top) is not acted on.
    let inside = crate::store::is_within;
    for rel in left.iter().filter(|r| r.contains('/') && inside(r)) {
        // A link (in the place of a folder of the site, or any other) goes alone, never what
        // it leads to; the build names it and writes the tree whole.
        if staging.remove_link(rel, true)? {
            continue;
        }
        if std::fs::symlink_metadata(staging.path(rel)).is_ok() {
            warnings.push(Warning {
                path: shown(&staging.path(rel)),
                message: REMOVED_FROM_THE_OLD_SITE.into(),
            });
            staging.remove(rel)?;
        }
    }
    let Some(live) = live.filter(|t| t.sealed != 0) else { return Ok((warnings, Vec::new(), Vec::new())) };
    let sealed = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(live.sealed);
    // Each folder of the tree but its top, with the names the build put in it.
    let mut expected: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for path in live.pages.keys().chain(live.runs.keys()) {
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            let (folder, rest) = (&path[..at + i], &path[at + i + 1..]);
            if let Some(name) = rest.split('/').next().filter(|n| !n.is_empty()) {
                expected.entry(folder).or_default().insert(name);
            }
            at += i + 1;
        }
    }
    for run in live.runs.keys() {
        expected.entry(run.trim_end_matches('/')).or_default().extend(["g", PREVIEW]);
    }
    let output = &config.output;
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (folder, names) in expected.iter().filter(|(f, _)| inside(f)) {
        let dir = output.join(folder);
        let changed = std::fs::symlink_metadata(&dir).ok().filter(|m| m.is_dir()).and_then(|m| m.modified().ok()).is_some_and(|t| t >= sealed);
        if !changed {
            continue;
        }
        let Some(all) = entries(&dir) else { continue };
        // What the build put there and is gone (removed by hand), the top of the tree aside.
        // (A run's preview and graph folder aside: not every run or comparison has a preview,
        // and the graph folders are not looked into.)
        let present: BTreeSet<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        missing.extend(names.iter().filter(|n| !present.contains(**n) && **n != "g" && **n != PREVIEW).map(|n| format!("{folder}/{n}")));
        // What the build did not put there, and links where it put a folder or a file.
        for (name, link) in all.into_iter().filter(|(n, link)| *link || !names.contains(n.as_str())) {
            let rel = format!("{folder}/{name}");
            let ours = names.contains(name.as_str());
            warnings.push(Warning {
                path: shown(&output.join(&rel)),
                message: if ours && link { LINK_IN_THE_NEW_SITE } else { NOT_IN_THE_NEW_SITE }.into(),
            });
            found.push(rel);
        }
    }
    Ok((warnings, found, missing))
}

/// Said of a file or run folder of a bucket's site that is not there as the last build
/// published it.
const NOT_AS_PUBLISHED: &str = "not in the bucket as the last build published it (removed or changed by hand?)";

/// What the record of a bucket's site (`live`) says it holds and its listing (`listed`: every
/// object under the prefix with its size) lacks or holds at another size: pages and files by
/// path, run folders (of runs and comparisons) by the sum of the sizes of their graph files,
/// the objects under the folder that are not pages nor in a folder of another run inside it.
fn lacking(live: &Tree, listed: &[(String, u64)]) -> (Vec<String>, Vec<String>) {
    let sizes: HashMap<&str, u64> = listed.iter().map(|(rel, size)| (rel.as_str(), *size)).collect();
    // (A file whose size the record does not give is checked for being there.)
    let pages: Vec<String> = live.pages.keys().filter(|p| sizes.get(p.as_str()).is_none_or(|s| live.bytes.get(*p).is_some_and(|b| b != s))).cloned().collect();
    let mut runs: HashMap<&str, u64> = live.runs.keys().map(|u| (u.as_str(), 0)).collect();
    for (rel, size) in listed {
        if live.pages.contains_key(rel) {
            continue;
        }
        // The deepest run folder it is in.
        let mut at = rel.len();
        while let Some(i) = rel[..at].rfind('/') {
            if let Some(sum) = runs.get_mut(&rel[..=i]) {
                *sum += size;
                break;
            }
            at = i;
        }
    }
    // (A folder whose size the record does not give is not judged.)
    let mut runs: Vec<String> = runs.into_iter().filter(|(u, sum)| live.bytes.get(*u).is_some_and(|b| b != sum)).map(|(u, _)| u.to_string()).collect();
    runs.sort();
    (pages, runs)
}

/// The entries of the folder `dir` (`None` when it cannot be read), each with whether it is a
/// symbolic link, in name order.
fn entries(dir: &std::path::Path) -> Option<Vec<(String, bool)>> {
    let mut all: Vec<(String, bool)> =
        std::fs::read_dir(dir).ok()?.flatten().map(|e| (e.file_name().to_string_lossy().into_owned(), e.file_type().is_ok_and(|t| t.is_symlink()))).collect();
    all.sort();
    Some(all)
}

/// The bytes of every file under `dir`.
fn folder_bytes(dir: &std::path::Path) -> u64 {
    walkdir::WalkDir::new(dir).into_iter().flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum()
}

/// The sizes of the files and run folders a build wrote, gathered from its threads.
#[derive(Default)]
struct Sizes(std::sync::Mutex<BTreeMap<String, u64>>, std::sync::Mutex<BTreeSet<String>>);

impl Sizes {
    /// Page `rel` was rendered again with the bytes it has in the published site.
    fn same(&self, rel: &str) {
        self.1.lock().expect("no panic while holding it").insert(rel.to_string());
    }

    fn put(&self, rel: &str, len: usize) {
        self.put_u64(rel, len as u64);
    }

    fn put_u64(&self, rel: &str, len: u64) {
        self.0.lock().expect("no panic while holding it").insert(rel.to_string(), len);
    }

    /// The size of everything in `desired`: what was written, else what the published tree
    /// `live` holds the same, else what the staging tree (a folder) holds, else what the cache
    /// entry of a run folder records.
    /// Also returns the pages rendered with the bytes the published site has.
    fn complete(self, desired: &Tree, live: &Tree, staging: &Output, cache: Option<&Cache>) -> (BTreeMap<String, u64>, BTreeSet<String>) {
        let same = self.1.into_inner().expect("no panic while holding it");
        let mut got = self.0.into_inner().expect("no panic while holding it");
        let on_disk = |rel: &str| match staging {
            Output::Folder(s) => std::fs::metadata(s.path(rel)).ok().map(|m| m.len()),
            Output::Bucket(_) => None,
        };
        for (path, hash) in &desired.pages {
            if !got.contains_key(path) {
                let len = live.bytes.get(path).filter(|_| live.pages.get(path) == Some(hash)).copied().or_else(|| on_disk(path)).unwrap_or(0);
                got.insert(path.clone(), len);
            }
        }
        for (url, key) in &desired.runs {
            if !got.contains_key(url) {
                let len = live.bytes.get(url).filter(|_| live.runs.get(url) == Some(key)).copied();
                let len = len.or_else(|| cache.and_then(|c| c.get(key)).map(|p| p.sums.iter().map(|s| s.len).sum()));
                got.insert(url.clone(), len.unwrap_or(0));
            }
        }
        (got, same)
    }
}

/// Brings a staging tree whose content is unknown to the new state: every page rendered and
/// written where it differs (and the static files `statics`), every run's graph files linked;
/// the commit then sweeps the rest.
fn rewrite(site: &Site, plan: &[Page], statics: &[(&str, &[u8])], archive: &Archive, staging: &Output, cache: Option<&Cache>, sizes: &Sizes) -> Result<(usize, usize), BuildError> {
    for (rel, bytes) in statics {
        staging.write(rel, bytes)?;
        sizes.put(rel, bytes.len());
    }
    plan.par_iter().try_for_each(|page| -> Result<(), BuildError> {
        let bytes = site.render(page).map_err(BuildError::Theme)?;
        staging.write(&page.path, &bytes)?;
        sizes.put(&page.path, bytes.len());
        Ok(())
    })?;
    if let Some(cache) = cache {
        let sets: Vec<(&str, &str)> = graph_sets(archive).collect();
        sets.par_iter().try_for_each(|(url, key)| link_run(staging, cache, url, key, None).map(|n| sizes.put_u64(url, n)))?;
    }
    Ok((plan.len(), 0))
}

/// Brings the staging tree, known to be `live` changed by `next`, to the new state `desired`, touching
/// only what differs: a page whose hash is unchanged is left, one the published site already
/// has is linked from it, and only the others are rendered. The folders of the runs in
/// `redone` are written again too, and the static files (`statics`) that differ.
#[allow(clippy::too_many_arguments)]
fn update(
    site: &Site,
    plan: &[Page],
    statics: &[(&str, &[u8])],
    desired: &Tree,
    staging: &Output,
    cache: &Cache,
    live: &Tree,
    next: &TreeDiff,
    redone: &BTreeSet<String>,
    sizes: &Sizes,
) -> Result<(usize, usize), BuildError> {
    // The work is found by walking the sorted maps side by side: a lookup per page and run
    // was a large part of a rebuild at 100,000 runs, to find the few that differ
    // (docs/BENCHMARKS.md, "Figures behind the code").
    let pages = state::Work::between(&desired.pages, &live.pages, &next.pages);
    let linkable: HashMap<&str, bool> = pages.set.iter().copied().collect();
    let results: Vec<Result<(usize, usize), BuildError>> = plan
        .par_iter()
        .filter_map(|page| linkable.get(page.path.as_str()).map(|&published| (page, published)))
        .map(|(page, published)| {
            if published && staging.link_published(&page.path)? {
                Ok((0, 1))
            } else {
                // Its hash differs from the staging tree's, so its bytes do.
                let bytes = site.render(page).map_err(BuildError::Theme)?;
                replace(staging, sizes, &page.path, &bytes)?;
                Ok((1, 0))
            }
        })
        .collect();
    let mut counts = (0, 0);
    for r in results {
        let (a, b) = r?;
        counts.0 += a;
        counts.1 += b;
    }
    // The static files, whose bytes are known, as the pages.
    for (rel, bytes) in statics {
        match linkable.get(rel) {
            Some(&published) => {
                if !(published && staging.link_published(rel)?) {
                    replace(staging, sizes, rel, bytes)?;
                }
            }
            None => {}
        }
    }
    for path in pages.remove {
        staging.remove(path)?;
    }
    let runs = state::Work::between(&desired.runs, &live.runs, &next.runs);
    if !runs.set.is_empty() {
        // A run that moved to another folder is read from where it was published.
        let wanted: BTreeSet<&str> = runs.set.iter().map(|&(url, _)| desired.runs[url].as_str()).collect();
        for (url, key) in live.runs.iter().filter(|(_, k)| wanted.contains(k.as_str())) {
            cache.home(key, url);
        }
    }
    // A folder the tree holds nothing at (a new run) has nothing to remove first: in a bucket,
    // looking would be a listing.
    let holds = |url: &str| next.runs.get(url).map_or(live.runs.contains_key(url), |k| k.is_some());
    runs.set.par_iter().try_for_each(|&(url, _)| link_run(staging, cache, url, &desired.runs[url], Some(holds(url))).map(|n| sizes.put_u64(url, n)))?;
    if !redone.is_empty() {
        // Runs decoded again where they were: their folders are written again too.
        let set: BTreeSet<&str> = runs.set.iter().map(|&(url, _)| url).collect();
        let again: Vec<(&String, &String)> = desired.runs.iter().filter(|(url, key)| redone.contains(*key) && !set.contains(url.as_str())).collect();
        again.par_iter().try_for_each(|(url, key)| link_run(staging, cache, url, key, Some(true)).map(|n| sizes.put_u64(url, n)))?;
    }
    for url in runs.remove {
        staging.remove(&format!("{url}g"))?;
        staging.remove(&format!("{url}{PREVIEW}"))?;
    }
    Ok(counts)
}

/// The worker threads of a build: `threads`, or one per core.
pub(crate) fn worker_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, BuildError> {
    rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build().map_err(|e| BuildError::Config(e.to_string()))
}

/// The build cache in its folder, made if missing; a folder that holds anything but the
/// cache's own files is refused.
pub(crate) fn open_cache(config: &Config) -> Result<Cache, BuildError> {
    let dir = config.cache_folder();
    std::fs::create_dir_all(&dir).map_err(|e| BuildError::Cache(format!("cache {}: {e}", dir.display())))?;
    cache::check_folder(&dir).map_err(BuildError::Config)?;
    Ok(Cache::new(&dir, config))
}

/// The profiles to build: the scan of the input folder, or the listing of the input bucket with
/// what downloads the profiles a build reads. The output and cache folders may be inside the
/// input (a site published under the profiles' prefix too): they are not profiles.
pub(crate) fn scan_input(config: &Config, pool: &rayon::ThreadPool) -> Result<(scan::Scan, Option<crate::ingest::remote::Remote>), BuildError> {
    let failed = |reason: String| BuildError::Input { path: config.input.clone(), reason };
    if !crate::config::is_url(&config.input) {
        let scanned = pool.install(|| scan::scan_except(&config.input, &[config.output.clone(), config.cache_folder()])).map_err(failed)?;
        return Ok((scanned, None));
    }
    let input = config.input.to_string_lossy().trim_end_matches('/').to_string();
    let output = config.output.to_string_lossy();
    let exclude: Vec<String> = output.strip_prefix(&format!("{input}/")).map(|o| o.trim_end_matches('/').to_string()).into_iter().collect();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("flamesite-input-{}-{nanos}", std::process::id()));
    let mut remote = crate::ingest::remote::Remote::open(&input, dir).map_err(|e| failed(e.to_string()))?;
    let scanned = remote.scan(&exclude).map_err(|e| failed(e.to_string()))?;
    Ok((scanned, Some(remote)))
}

/// Refuses a build whose output folder holds a folder the build reads or keeps (the input,
/// `static_dir`, `theme_dir`, the cache folder): the output is replaced whole by each build,
/// so such a folder would be swept away with the old site, or moved into the staging tree.
fn refuse_folders_inside_output(config: &Config) -> Result<(), BuildError> {
    // The output as published: through a link to the folder it leads to.
    let Ok(output) = std::fs::canonicalize(&config.output) else { return Ok(()) };
    let cache = config.cache_folder();
    let read = [("the input folder", Some(&config.input)), ("static_dir", config.static_dir.as_ref()), ("theme_dir", config.theme_dir.as_ref()), ("cache_dir", Some(&cache))];
    for (what, dir) in read {
        let Some(dir) = dir else { continue };
        let Ok(real) = std::fs::canonicalize(dir) else { continue };
        if real.starts_with(&output) {
            return Err(BuildError::Config(format!(
                "{what} {} is inside the output folder {}, which every build replaces whole: it would be lost with the old site; move it out of the output folder (or publish to another folder)",
                shown(dir),
                shown(&config.output)
            )));
        }
    }
    Ok(())
}

/// The output folder (with the staging folder beside it) or the cache folder inside
/// `static_dir`, whose files are copied into the site at every build (`static_dir = "."`): each
/// build copied the site into itself, its cache and staging folder included, growing without
/// end (issue 45, item 8). Refused before anything is read or written.
fn refuse_output_inside_static_dir(config: &Config) -> Result<(), BuildError> {
    let Some(dir) = &config.static_dir else { return Ok(()) };
    let Ok(real) = std::fs::canonicalize(dir) else { return Ok(()) };
    let mut written = vec![("the cache folder", "cache_dir", config.cache_folder())];
    if !crate::config::is_url(&config.output) {
        // (Its staging folder is beside it: inside too when it is.)
        written.insert(0, ("the output folder", "output", config.output.clone()));
    }
    for (what, key, path) in written {
        if real_path(&path).starts_with(&real) {
            return Err(BuildError::Config(format!(
                "{what} {} is inside static_dir {}, whose files are copied into the site at every build: the site would be copied into itself, again at each build; give static_dir a folder of its own (by default static/ beside site.toml), or set {key} outside it",
                shown(&path),
                shown(dir)
            )));
        }
    }
    Ok(())
}

/// `path` with its links resolved, as far as it exists: the nearest folder above it that
/// exists, resolved, with the rest of `path` after it.
fn real_path(path: &std::path::Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return absolute,
        }
    }
}

/// Every folder of graph files the site has, with the cache key of its files: each run's, and
/// each comparison's.
fn graph_sets(archive: &Archive) -> impl Iterator<Item = (&str, &str)> {
    let runs = archive.runs.iter().map(|r| (r.url.as_str(), r.record.key.as_str()));
    runs.chain(archive.comparisons.iter().map(|c| (c.url.as_str(), c.made.key.as_str())))
}

/// Writes `bytes`, known to differ from the staging tree's file at `rel`, and counts them (as
/// bytes the published site already holds, when it does).
fn replace(staging: &Output, sizes: &Sizes, rel: &str, bytes: &[u8]) -> Result<(), BuildError> {
    staging.replace(rel, bytes)?;
    sizes.put(rel, bytes.len());
    if staging.published_holds(rel, bytes) {
        sizes.same(rel);
    }
    Ok(())
}

/// Writes the graph files of run folder `url` (cache entry `key`) into the staging tree, which
/// `holds` a folder there (its old files are removed first), holds nothing there (the files
/// are written without a look at what is there: in a bucket, no read per file), or is not
/// known (`None`: each file is written where it differs).
fn link_run(staging: &Output, cache: &Cache, url: &str, key: &str, holds: Option<bool>) -> Result<u64, BuildError> {
    // Where the files are when the entry's were let go: this folder of the published site.
    cache.home(key, url);
    let product = cache.get(key).ok_or_else(|| {
        BuildError::Cache(format!(
            "the build cache has lost the graphs of {url} (entry {key}); remove {} and build again",
            cache.dir().display()
        ))
    })?;
    if holds == Some(true) {
        staging.remove(&format!("{url}g"))?;
        staging.remove(&format!("{url}{PREVIEW}"))?;
    }
    // Copied, not linked: a file of the site edited in place must not change the cache. Each
    // is checked against the length and hash its entry recorded.
    for (rel, sum) in product.files.iter().zip(&product.sums) {
        let bytes = cache.read(key, rel, sum).map_err(|why| {
            cache.discard_damaged(key, why.clone());
            BuildError::Cache(format!("{why}; the entry of {url} (cache entry {key}) was removed: build again to make it anew"))
        })?;
        if holds == Some(false) {
            staging.replace(&format!("{url}{rel}"), &bytes)?;
        } else {
            staging.write(&format!("{url}{rel}"), &bytes)?;
        }
    }
    Ok(product.sums.iter().map(|s| s.len).sum())
}

/// The names the published site holds (its `index.json`, and since version 3 its series'
/// listings), for a build without a state.
fn published_names(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> slug::Record {
    use crate::site::index_json::{Index, SeriesIndex};
    let Some(index) = read("index.json").and_then(|b| serde_json::from_slice::<Index>(&b).ok()) else { return slug::Record::default() };
    let mut names = index.names;
    let mut profiles = index.profiles;
    for s in &index.series {
        // A listing is read only from inside the output folder.
        let inside = crate::store::is_within(&s.index);
        if let Some(listing) = read(&s.index).filter(|_| inside).and_then(|b| serde_json::from_slice::<SeriesIndex>(&b).ok()) {
            profiles.extend(listing.profiles);
        }
    }
    for p in &profiles {
        names.runs.entry(p.source.clone()).or_insert_with(|| p.slug.clone());
    }
    for s in &index.series {
        let slug = s.url.trim_start_matches("s/").trim_end_matches('/').to_string();
        names.series.entry(s.name.clone()).or_insert(slug);
    }
    names
}

/// What every page and record depends on besides the runs: flamesite's version, every setting
/// that shapes a graph, a record or a page, and the theme's files (not `keep_going`, the output
/// folder or the cache folder, which change no byte of the site).
fn fingerprint(config: &Config, theme: &Theme) -> String {
    let mut h = blake3::Hasher::new();
    // The graph format too: a build that writes another format remakes every graph and
    // comparison, whatever theme it has.
    h.update(format!("flamesite {} graph format {}\n", env!("CARGO_PKG_VERSION"), crate::store::chunk::MANIFEST_VERSION).as_bytes());
    h.update(
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}\n{}\n{}\n{:?}\n",
            config.chunks,
            config.limits,
            config.perf,
            config.pprof,
            config.archive,
            config.changes,
            config.input.canonicalize().unwrap_or_else(|_| config.input.clone()),
            config.palette.as_str(),
            config.base_url,
            config.title,
            config.links,
        )
        .as_bytes(),
    );
    // The budgets: their marks are on the pages.
    h.update(crate::config::budgets_text(&config.budgets).as_bytes());
    for (name, text) in theme.templates() {
        h.update(format!("template {name} {}\n", text.len()).as_bytes());
        h.update(text.as_bytes());
    }
    for (name, bytes) in &theme.statics {
        h.update(format!("static {name} {}\n", bytes.len()).as_bytes());
        h.update(bytes);
    }
    h.finalize().to_hex().to_string()
}

/// A 64-bit hash of bytes, as the state keeps pages'.
fn hash_bytes(b: &[u8]) -> u64 {
    u64::from_le_bytes(blake3::hash(b).as_bytes()[..8].try_into().expect("eight bytes"))
}

fn hash_str(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// A hash of a run's record: equal hashes, records equal but for their files' stamps.
fn record_hash(record: &RunRecord) -> u64 {
    // Not its files' stamps, which no page shows: a profile written again with the same bytes
    // changes nothing on the site (its date, when taken from the file's time, is a field).
    let record = RunRecord { stamps: Default::default(), ..record.clone() };
    let json = serde_json::to_vec(&record).expect("a record serialises");
    let hash = blake3::hash(&json);
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("eight bytes"))
}

fn progress_bar(show: bool, len: usize) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    // indicatif draws only when stderr is a terminal.
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} building {pos}/{len} profiles [{bar:30}] {elapsed}")
            .unwrap()
            .progress_chars("=> "),
    );
    bar
}

/// A path outside the input folder as a warning shows it: absolute, since the command line
/// prints warnings' paths relative to the input folder (a relative output folder, `public`,
/// would otherwise read as `profiles/public/CNAME`).
fn shown(path: &std::path::Path) -> String {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of a page, a theme file, a run and a comparison inside the run's folder.
    fn live() -> Tree {
        let mut t = Tree::default();
        for (p, size) in [("index.html", 10), ("static/main.js", 20), ("p/a/1/index.html", 30), ("p/a/1/compare/index.html", 40)] {
            t.pages.insert(p.into(), 1);
            t.bytes.insert(p.into(), size);
        }
        t.pages.insert("CNAME".into(), 1);
        t.runs.insert("p/a/1/".into(), "run".into());
        t.runs.insert("p/a/1/compare/".into(), "comparison".into());
        t.runs.insert("p/a/2/".into(), "no size known".into());
        t.bytes.insert("p/a/1/".into(), 7);
        t.bytes.insert("p/a/1/compare/".into(), 5);
        t
    }

    fn listed(objects: &[(&str, u64)]) -> Vec<(String, u64)> {
        objects.iter().map(|(r, s)| (r.to_string(), *s)).collect()
    }

    #[test]
    fn a_bucket_that_holds_what_its_record_says_lacks_nothing() {
        let whole = [
            ("index.html", 10),
            ("static/main.js", 20),
            ("CNAME", 3),
            ("p/a/1/index.html", 30),
            ("p/a/1/g/cpu/manifest.json", 3),
            ("p/a/1/g/cpu/c/0-0.bin.gz", 4),
            ("p/a/1/compare/index.html", 40),
            ("p/a/1/compare/g/cpu/manifest.json", 5),
            ("robots.txt", 9),
        ];
        assert_eq!(lacking(&live(), &listed(&whole)), (vec![], vec![]));
        // A page gone, a file of another size, a graph file gone from the run (not the
        // comparison inside its folder); the file whose size the record lacks, when gone.
        let cut = [("static/main.js", 21), ("p/a/1/index.html", 30), ("p/a/1/g/cpu/c/0-0.bin.gz", 4), ("p/a/1/compare/index.html", 40), ("p/a/1/compare/g/cpu/manifest.json", 5)];
        let (pages, runs) = lacking(&live(), &listed(&cut));
        assert_eq!(pages, ["CNAME", "index.html", "static/main.js"]);
        assert_eq!(runs, ["p/a/1/"]);
    }
}
