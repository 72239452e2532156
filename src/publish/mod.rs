//! Publish: the derived archive made into the published site, through the output door.
//!
//! Plans every page with a hash of what it shows (site::pages), brings the staging tree to
//! the new site (only what differs, when the state says what that tree holds: [`tree`]),
//! names what was put in the output by hand ([`foreign`]), swaps the tree in and saves the
//! [`state`] that lets the next build do only what changed.

pub mod state;
pub mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::archive::run::{Archive, GraphChanges};
use crate::archive::slug;
use crate::config::Config;
use crate::derive;
use crate::derive::history::Span;
use crate::error::{BuildError, Warning};
use crate::ingest::cache::Cache;
use crate::output::foreign::{LINK_IN_THE_OLD_SITE, NOT_AS_PUBLISHED};
use crate::output::{bucket, Output};
use crate::site::pages::{Page, Site};
use crate::site::theme::Theme;
use state::{SavedRun, Tree, TreeDiff};
use tree::{rewrite, update, Sizes};

/// What publishing reads of the build: the settings, the theme and the site's own files, and
/// where the site goes.
pub(crate) struct Publish<'a> {
    pub config: &'a Config,
    pub theme: &'a Theme,
    pub pool: &'a rayon::ThreadPool,
    /// The hash of everything besides the runs that every page depends on.
    pub fingerprint: &'a str,
    /// The files of the site's `static/` folder, copied as they are to the output's root, and
    /// their hash.
    pub site_files: &'a [(String, Vec<u8>)],
    pub site_files_hash: &'a str,
    pub cache: Option<&'a Cache>,
    /// When publishing to object storage: the bucket, and its publish lock.
    pub bucket: Option<&'a (Arc<bucket::Bucket>, bucket::Lock)>,
    /// Inode of the published tree (0: none yet).
    pub live_ino: u64,
    /// Cache entries the last build left.
    pub records_before: u64,
}

/// What the phases before publish hand it besides the archive.
pub(crate) struct Handed {
    /// The names of runs and series, as this build gives them.
    pub names: slug::Record,
    /// Keys of runs decoded again with the key they had: the published files were not what
    /// their entry recorded (edited in place, or gone), so their folders are written again.
    pub redone: BTreeSet<String>,
    /// Keys of cache entries that may no longer be used: of runs read again or gone, and of
    /// the last build's comparisons that this one does not publish.
    pub unused: Vec<String>,
    /// Change lists of the comparisons made in this build, by key.
    pub changes: HashMap<String, Vec<GraphChanges>>,
}

/// What a publish did, for the build's summary.
#[derive(Debug, Default)]
pub(crate) struct Figures {
    /// Pages rendered and written.
    pub pages_rendered: usize,
    /// Pages taken as they were from the published site.
    pub pages_kept: usize,
    /// Bytes of the published site (every page, file and graph file).
    pub published_bytes: u64,
    /// Bytes of its files that are new or changed since the site before.
    pub new_bytes: u64,
    /// Bytes kept on this machine beside the output (a folder's cache; none for a bucket).
    pub kept_bytes: Option<u64>,
}

/// A span of a series' history while its files are rendered: read when the first of them is,
/// and how many of them (its names, its buckets) are still to come.
struct SpanCell {
    span: Option<Result<Arc<Span>, String>>,
    uses: usize,
}

impl Publish<'_> {
    /// Publish: plans every page, brings the staging tree to the new site (only what differs
    /// when the state knows that tree), swaps it in and saves the state.
    pub(crate) fn publish(&self, staging: Box<dyn Output>, archive: Archive, handed: Handed, data: &mut state::Data, warnings: &mut Vec<Warning>) -> Result<Figures, BuildError> {
        let mut figures = Figures::default();
        let cache = self.cache;
        let made = &handed.changes;
        let changes = |key: &str| -> Vec<GraphChanges> {
            match made.get(key) {
                Some(c) => c.clone(),
                None => cache.and_then(|c| c.get(key)).map(|p| p.changes).unwrap_or_default(),
            }
        };
        // A span of a series' history is read once for all its files (its names and its
        // buckets), and let go when the last of them has been rendered: kept to the end, they
        // were most of a full build's memory (docs/BENCHMARKS.md, "Figures behind the code").
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
            names: &handed.names,
            base: hash_str(self.fingerprint),
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
        for (rel, bytes) in self.site_files {
            let top = rel.split('/').next().unwrap_or(rel);
            if generated.contains(top) {
                let dir = self.config.static_dir.as_deref().unwrap_or(std::path::Path::new("static"));
                let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
                warnings.push(Warning {
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
        // The names at the site's top that the build writes: a bucket is often shared, and
        // only those folders and files are the site's.
        let ours: BTreeSet<String> = generated.iter().map(|n| n.to_string()).chain(site_files.iter().filter_map(|(rel, _)| rel.split('/').next().map(str::to_string))).collect();
        let left = data.foreign.take().filter(|(ino, _)| *ino == staging_ino).map(|(_, paths)| paths);
        let survey = staging.survey(&ours, old_known.then_some(&data.live), left.as_deref().unwrap_or_default())?;
        warnings.extend(survey.warnings);
        // What was put by hand inside the published tree's folders, and what it lacks of what
        // the state says it holds (removed by hand): the next build, which brings that tree up
        // to date, removes the one and writes the other again.
        let found_inside = (!survey.found.is_empty()).then_some((live_ino, survey.found));
        let lost = survey.missing;
        // A page or file removed or changed by hand (in a bucket, seen in one listing of its
        // sizes) is taken as not held, and written again.
        for p in survey.pages_lacking {
            warnings.push(Warning { path: staging.name(&p), message: format!("{NOT_AS_PUBLISHED}; written again") });
            data.live.pages.remove(&p);
        }
        // A run's graph files are kept nowhere else: the run is decoded again, by the build made
        // again with every run's files checked (`build`).
        let runs = survey.runs_lacking;
        if let (false, Some(cache)) = (runs.is_empty(), cache) {
            for url in &runs {
                cache.discard_damaged(&data.live.runs[url], format!("{}: {NOT_AS_PUBLISHED}", staging.name(url)));
            }
            return Err(BuildError::Write(format!("{}: {NOT_AS_PUBLISHED}", staging.name(&runs[0]))));
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
                update(&site, &plan, &statics, &desired, &*staging, cache, &data.live, next, &handed.redone, &sizes)
            }
            _ => rewrite(&site, &plan, &statics, &archive, &*staging, cache, &sizes),
        })?;
        // Links met on the way of a write were removed, never written through (issue 45): the
        // tree is then written whole, as when nothing says what it holds.
        let links = staging.unlinked();
        if !links.is_empty() {
            for rel in &links {
                warnings.push(Warning { path: staging.name(rel), message: LINK_IN_THE_OLD_SITE.into() });
            }
            if incremental {
                incremental = false;
                (rendered, kept) = self.pool.install(|| rewrite(&site, &plan, &statics, &archive, &*staging, cache, &sizes))?;
            }
        }
        figures.pages_rendered = rendered;
        figures.pages_kept = kept;
        let same;
        (desired.bytes, same) = sizes.complete(&desired, &data.live, &*staging, cache);
        // Without the cache the graph files were written by the decoders: counted on disk (a
        // walk of the whole tree, so only then).
        figures.published_bytes = cache.is_none().then(|| staging.bytes()).flatten().unwrap_or_else(|| desired.total_bytes());
        figures.new_bytes = if old_known { desired.bytes_new_since(&data.live, &same) } else { figures.published_bytes };
        // When nothing says what the tree swapped out holds (a first build, or a lost state),
        // it is made anew as a copy of the new site, so that the next build has a known tree.
        if let Some((_, lock)) = self.bucket {
            lock.held()?;
        }
        // A bucket's build keeps nothing on this machine.
        let to_folder = self.bucket.is_none();
        // Every folder of the new tree has been written (the swap renames the tree's top).
        desired.sealed = staging.clock();
        let mirror = staging.commit(!incremental, cache.is_some() && !old_known)?;

        let Some(cache) = cache else { return Ok(figures) };
        if incremental {
            // Only entries of runs that changed or went, and comparisons of them, can have
            // become unused: those few are looked for among the keys in use (a set of all
            // keys was a measurable part of a rebuild at 100,000 runs: docs/BENCHMARKS.md, "Figures behind the code").
            let mut unused: HashMap<String, bool> = handed.unused.into_iter().map(|k| (k, true)).collect();
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
            let before = self.records_before;
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
        if let Some(next) = next.as_mut().filter(|_| !handed.redone.is_empty()) {
            // The tree swapped out has the files of the runs decoded again as they were found
            // (changed): the next build writes those folders there again.
            for (url, key) in &desired.runs {
                if handed.redone.contains(key) {
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
            fingerprint: self.fingerprint.to_string(),
            generation: 0,
            live_ino: staging_ino,
            runs: known,
            statics: self.site_files_hash.to_string(),
            records,
        };
        let names = handed.names;
        state::save(cache.dir(), header, state::Data { generation: 0, names, runs, live: desired, next, comparisons, foreign: found_inside }).map_err(BuildError::Cache)?;
        if to_folder {
            let state = [crate::ingest::cache::STATE, state::DATA].iter().map(|f| std::fs::metadata(cache.dir().join(f)).map_or(0, |m| m.len())).sum::<u64>();
            figures.kept_bytes = Some(records + state);
        }
        // The published site now holds every entry's files: the entries made by this build
        // keep their sums only (after a rewrite, `retain` above let go of every entry's).
        cache.shed();
        push_record(self.bucket, Some(cache), true)?;
        Ok(figures)
    }
}

/// A bucket keeps the build's record beside the site: the cache folder's copy is uploaded
/// (the state last), and after a publish the marker of a publish under way goes.
pub(crate) fn push_record(bucket: Option<&(Arc<bucket::Bucket>, bucket::Lock)>, cache: Option<&Cache>, published: bool) -> Result<(), BuildError> {
    let (Some((bucket, lock)), Some(cache)) = (bucket, cache) else { return Ok(()) };
    let changes = cache.changes();
    lock.held()?;
    bucket::push_record(bucket, cache.dir(), &changes).map_err(BuildError::bucket("saving the record of the published site"))?;
    if published {
        // Files a shard stored are in the site now: the store lets go of them.
        let mut stored: Vec<String> = Vec::new();
        for key in changes.stored.iter().collect::<BTreeSet<_>>() {
            if let Some(p) = cache.get(key) {
                stored.extend(p.files.iter().map(|f| format!("{}/cache/{key}/files/{f}", bucket::RECORD)));
            }
        }
        bucket.delete_all(&stored).map_err(BuildError::bucket("saving the record of the published site"))?;
        lock.finish()?;
    }
    Ok(())
}

/// The names at the top of the output folder that the build writes: its pages' and graph
/// folders' first segments, and its fixed files and folders.
fn generated_names<'p>(plan: &'p [Page], archive: &'p Archive) -> BTreeSet<&'p str> {
    let mut ours: BTreeSet<&str> = plan.iter().filter_map(|p| p.path.split('/').next()).collect();
    ours.extend(graph_sets(archive).filter_map(|(url, _)| url.split('/').next()));
    ours.extend(["static", "p", "s", "index.json", "index.html", "feed.xml"]);
    ours
}

/// Every folder of graph files the site has, with the cache key of its files: each run's, and
/// each comparison's.
pub(crate) fn graph_sets(archive: &Archive) -> impl Iterator<Item = (&str, &str)> {
    let runs = archive.runs.iter().map(|r| (r.url.as_str(), r.record.key.as_str()));
    runs.chain(archive.comparisons.iter().map(|c| (c.url.as_str(), c.made.key.as_str())))
}

/// The names the published site holds (its `index.json`, and since version 3 its series'
/// listings), for a build without a state.
pub(crate) fn published_names(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> slug::Record {
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

/// A 64-bit hash of bytes, as the state keeps pages'.
fn hash_bytes(b: &[u8]) -> u64 {
    u64::from_le_bytes(blake3::hash(b).as_bytes()[..8].try_into().expect("eight bytes"))
}

fn hash_str(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

