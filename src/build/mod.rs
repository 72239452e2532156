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
//! [`state`], so a rebuild reads only the profiles whose files changed, renders only the
//! pages whose content changed, and touches only the files that differ in the tree it swaps
//! in: its cost follows what changed, not the size of the archive.

pub mod shard;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::archive::run::{group, Archive, Compared, GraphChanges};
use crate::archive::{slug, Pattern};
use crate::config::Config;
use crate::derive;
use crate::error::{shown, BuildError, IngestError, ProfileError, Warning, FillError};
use crate::ingest::cache::{self, Cache};
use crate::ingest::{self, scan, How, RunRecord};
use crate::output::{bucket, Output, Published};
use crate::site::theme::Theme;
use crate::publish::state::{self, SavedRun};
use crate::publish::{published_names, push_record, Handed, Publish};

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
            (staging.map(|s| Box::new(s) as Box<dyn Output>), cache, None)
        } else {
            // A bucket keeps the build's record beside the site; the cache folder holds a copy
            // of it while the build runs.
            if !options.cache {
                return Err(BuildError::Config("--no-cache: a site in object storage is published from the record it keeps beside it, which the cache folder holds while a build runs".into()));
            }
            let b = std::sync::Arc::new(bucket::Bucket::open(&config.output.to_string_lossy(), "output").map_err(BuildError::bucket(""))?);
            if options.dry_run {
                (None, None, None)
            } else {
                // A site inside another's prefix is refused before anything is written (its
                // lock included); one that holds another inside it, by Staging::new.
                bucket::refuse_inside_another_site(&b)?;
                let lock = bucket::Lock::take(b.clone())?;
                let cache = open_cache()?;
                pulled = bucket::pull_state(&b, &cache_dir, cache::STATE).map_err(BuildError::bucket("reading the record of the published site"))?;
                let staging = bucket::Staging::new(b.clone(), &lock)?;
                let mirror = bucket::Mirror::new(b.clone(), cache_dir.join(MIRROR));
                (Some(Box::new(staging) as Box<dyn Output>), Some(cache.publishing_to(Published::Bucket(mirror))), Some((b, lock)))
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
            unused: Vec::new(),
            redone: BTreeSet::new(),
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
            let refused = bucket::pull_state(b, &cache_dir, state::DATA).map_err(BuildError::bucket("reading the record of the published site"))?;
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
                            self.unused.push(k);
                        }
                        let hash = record_hash(&ingested.record);
                        same &= old_hash == Some(hash) && !redone;
                        (ingested.record, hash)
                    }
                    Err(IngestError::Profile(e)) => {
                        // One that fails again is not on the site either time.
                        same &= old_hash.is_none();
                        self.unused.extend(old_key);
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
        self.unused.extend(gone.into_iter().map(|r| r.record.key));
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
        push_record(self.bucket.as_ref(), self.cache.as_ref(), false)?;
        Ok(None)
    }

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

