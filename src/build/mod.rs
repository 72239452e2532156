//! The build of a whole site, in four phases that hand each other plain data:
//!
//! ```text
//! ingest   scan the input folder; name every run (archive::slug); read each profile that
//!          changed (in parallel) into a RunRecord, its graph files into the cache
//! group    series, dates, previous and next run: the Archive (archive::run::group)
//! derive   graphs made from several runs (none yet)
//! publish  plan every page with a hash of what it shows (site::pages); render the ones that
//!          changed into the staging tree, link the runs' graph files, swap it in
//! ```
//!
//! A profile that cannot be read is reported and skipped; the others are built. The output
//! is the same bytes whatever the thread count. What the last build did is kept in its
//! [`state`], so a rebuild reads only the profiles whose files changed, renders only the
//! pages whose content changed, and touches only the files that differ in the tree it swaps
//! in: its cost follows what changed, not the size of the archive.

pub mod state;

use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::archive::run::{group, Archive};
use crate::archive::{slug, Pattern};
use crate::config::Config;
use crate::error::{BuildError, ProfileError, Warning};
use crate::ingest::cache::{self, Cache};
use crate::ingest::{self, scan, How, RunRecord, PREVIEW};
use crate::output::staging::Staging;
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
    /// Pages rendered and written.
    pub pages_rendered: usize,
    /// Pages taken as they were from the published site.
    pub pages_kept: usize,
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
    let start = Instant::now();
    let theme = Theme::load(config.theme_dir.as_deref()).map_err(BuildError::Theme)?;
    let pattern = config.archive.pattern.as_deref().map(Pattern::new).transpose().map_err(BuildError::Config)?;
    let fingerprint = fingerprint(config, &theme);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
        .map_err(|e| BuildError::Config(e.to_string()))?;

    // Ingest.
    // The output and cache folders may be inside the input folder: they are not profiles.
    let scanned = scan::scan_except(&config.input, &[config.output.clone(), config.cache_folder()])
        .map_err(|reason| BuildError::Input { path: config.input.clone(), reason })?;
    let staging = if options.dry_run { None } else { Some(Staging::new(&config.output)?) };
    let cache = match (&staging, options.cache) {
        (Some(_), true) => {
            let dir = config.cache_folder();
            std::fs::create_dir_all(&dir).map_err(|e| format!("cache {}: {e}", dir.display()))?;
            cache::check_folder(&dir).map_err(BuildError::Config)?;
            Some(Cache::new(&dir, config))
        }
        _ => None,
    };
    let cache_dir = config.cache_folder();
    let header = cache.as_ref().and_then(|_| state::Header::load(&cache_dir, &fingerprint));
    let live_ino = staging.as_ref().map_or(0, |s| s.inodes().1);
    let mut summary = Summary::default();
    if let Some(h) = &header {
        let same = h.live_ino == live_ino
            && live_ino != 0
            && h.runs.len() == scanned.sources.len()
            && h.runs.iter().zip(&scanned.sources).all(|(k, s)| k.source == s.rel && k.stamps == s.stamps);
        if same && scanned.problems.is_empty() {
            // Nothing changed: the published site is already this build's.
            summary.runs = h.runs.len();
            summary.unchanged = h.runs.len();
            summary.nothing_changed = true;
            summary.elapsed = start.elapsed();
            return Ok(summary);
        }
    }
    let mut data = header.as_ref().and_then(|h| state::Data::load(&cache_dir, h)).unwrap_or_default();
    if data.names == slug::Record::default() {
        data.names = published_names(config);
    }
    let mut names = data.names.clone();
    let stems: Vec<(&str, &str)> = scanned.sources.iter().map(|s| (s.rel.as_str(), scan::stem(&s.rel))).collect();
    let (slugs, collisions) = slug::assign_runs(&stems, &mut names);
    for c in &collisions {
        summary.warnings.push(Warning {
            path: c.claimant.clone(),
            message: format!("its URL p/{}/ is already {}'s; published as p/{}/", c.natural, c.holder, c.given),
        });
    }
    let old_hashes: Vec<(String, u64)> = data.runs.iter().map(|r| (r.record.source.clone(), r.hash)).collect();
    let mut previous: HashMap<String, SavedRun> = std::mem::take(&mut data.runs).into_iter().map(|r| (r.record.source.clone(), r)).collect();
    // A run whose files have the stamps they had is not read again.
    let unchanged: Vec<bool> = scanned
        .sources
        .iter()
        .map(|s| cache.is_some() && previous.get(&s.rel).is_some_and(|p| p.record.stamps == s.stamps))
        .collect();
    let ctx = ingest::Ctx { config, pattern: pattern.as_ref(), cache: cache.as_ref() };
    let todo: Vec<usize> = (0..scanned.sources.len()).filter(|&i| !unchanged[i]).collect();
    let bar = progress_bar(options.progress, todo.len());
    let mut outcomes: HashMap<usize, Result<ingest::Ingested, ProfileError>> = pool.install(|| {
        todo.par_iter()
            .map(|&i| {
                let (source, slug) = (&scanned.sources[i], &slugs[i]);
                // Without a cache, a decoded profile's files go straight to its folder.
                let url = format!("p/{slug}/");
                let sink = |rel: &str, bytes: &[u8]| match &staging {
                    Some(s) => s.write(&format!("{url}{rel}"), bytes),
                    None => Ok(()),
                };
                let r = ingest::ingest(&ctx, source, &sink);
                bar.inc(1);
                (i, r)
            })
            .collect()
    });
    bar.finish_and_clear();
    summary.skipped = scanned.problems.into_iter().map(|(path, reason)| ProfileError::new(path, reason)).collect();
    let mut runs = Vec::new();
    let mut replaced_keys = Vec::new();
    for (i, (source, slug)) in scanned.sources.iter().zip(slugs).enumerate() {
        if unchanged[i] {
            let saved = previous.remove(&source.rel).expect("an unchanged run has a record");
            summary.unchanged += 1;
            runs.push((saved.record, saved.hash, slug));
            continue;
        }
        if let Some(old) = previous.remove(&source.rel) {
            replaced_keys.push(old.record.key);
        }
        match outcomes.remove(&i).expect("every changed run was ingested") {
            Ok(ingested) => {
                match ingested.how {
                    How::Cached => summary.cached += 1,
                    How::Decoded => summary.decoded += 1,
                }
                let rec = ingested.record;
                for w in &rec.warnings {
                    summary.warnings.push(Warning { path: rec.source.clone(), message: w.clone() });
                }
                let hash = record_hash(&rec);
                runs.push((rec, hash, slug));
            }
            Err(e) => summary.skipped.push(e),
        }
    }
    summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    summary.runs = runs.len();
    summary.graphs = runs.iter().map(|(r, _, _)| r.graphs.len()).sum();
    let Some(staging) = staging else {
        summary.built = runs.into_iter().map(|(r, _, _)| r).collect();
        summary.elapsed = start.elapsed();
        return Ok(summary);
    };
    let (staging_ino, _) = staging.inodes();
    let same_runs = runs.len() == old_hashes.len() && runs.iter().zip(&old_hashes).all(|((r, h, _), (s, oh))| h == oh && r.source == *s);
    if cache.is_some() && same_runs && names == data.names && live_ino != 0 && data.live.ino == live_ino {
        // Nothing that shows changed (a profile was touched, or one that fails still fails).
        summary.nothing_changed = true;
        if let Some(h) = header {
            // Newer stamps, so that the next build need not read these files again.
            let known = runs.iter().map(|(r, h, _)| state::Known { source: r.source.clone(), stamps: r.stamps, hash: *h }).collect();
            data.runs = runs.into_iter().map(|(record, hash, _)| SavedRun { record, hash }).collect();
            state::save(&cache_dir, state::Header { runs: known, ..h }, data)?;
        }
        summary.elapsed = start.elapsed();
        return Ok(summary);
    }

    // Group.
    let (archive, series_collisions) = group(runs, &mut names);
    for c in &series_collisions {
        let first = archive.series.iter().find(|s| s.name == c.claimant).and_then(|s| s.runs.first());
        let path = first.map_or(String::new(), |&i| archive.runs[i].record.source.clone());
        summary.warnings.push(Warning {
            path,
            message: format!("series {:?} would share s/{}/ with series {:?}; published as s/{}/", c.claimant, c.natural, c.holder, c.given),
        });
    }

    // Derive: graphs of several runs (comparisons) come here.

    // Publish.
    let site = Site { config, theme: &theme, archive: &archive, names: &names, base: hash_str(&fingerprint) };
    let plan = site.plan();
    let desired = Tree {
        ino: staging_ino,
        pages: plan.iter().map(|p| (p.path.clone(), p.hash)).collect(),
        runs: archive.runs.iter().map(|r| (r.url.clone(), r.record.key.clone())).collect(),
    };
    // The staging tree is known when the state describes it.
    let incremental = cache.is_some()
        && live_ino != 0
        && data.live.ino == live_ino
        && data.next.as_ref().is_some_and(|n| n.ino == staging_ino);
    for (name, bytes) in &theme.statics {
        staging.write(&format!("static/{name}"), bytes)?;
    }
    let (rendered, kept) = if incremental {
        state::mark_dirty(&cache_dir)?;
        let next = data.next.as_ref().expect("known previous tree");
        update(&site, &plan, &archive, &staging, cache.as_ref().expect("cache"), &data.live, next)?
    } else {
        rewrite(&site, &plan, &archive, &staging, cache.as_ref())?
    };
    summary.pages_rendered = rendered;
    summary.pages_kept = kept;
    // When nothing says what the tree swapped out holds (a first build, or a lost state), it
    // is made anew as a copy of the new site, so that the next build has a known tree.
    let old_known = live_ino != 0 && data.live.ino == live_ino;
    let mirror = staging.commit(!incremental, cache.is_some() && !old_known)?;

    if let Some(cache) = &cache {
        let used: BTreeSet<String> = archive.runs.iter().map(|r| r.record.key.clone()).collect();
        if incremental {
            // Only entries of runs that changed or went can have become unused.
            let gone = previous.into_values().map(|r| r.record.key).chain(replaced_keys);
            cache.remove(gone.filter(|k| !used.contains(k)));
        } else {
            cache.retain(&used);
        }
        let old_live = std::mem::take(&mut data.live);
        let next = if let Some(ino) = mirror {
            Some(TreeDiff { ino, ..TreeDiff::default() })
        } else {
            (old_live.ino == live_ino).then(|| TreeDiff::between(&desired, &old_live))
        };
        let known = archive.runs.iter().map(|r| state::Known { source: r.record.source.clone(), stamps: r.record.stamps, hash: r.hash }).collect();
        let runs = archive.runs.into_iter().map(|r| SavedRun { record: r.record, hash: r.hash }).collect();
        let header = state::Header { version: 0, fingerprint, generation: 0, live_ino: staging_ino, runs: known };
        state::save(&cache_dir, header, state::Data { generation: 0, names, runs, live: desired, next })?;
    }
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Brings a staging tree whose content is unknown to the new state: every page rendered and
/// written where it differs, every run's graph files linked; the commit then sweeps the rest.
fn rewrite(site: &Site, plan: &[Page], archive: &Archive, staging: &Staging, cache: Option<&Cache>) -> Result<(usize, usize), BuildError> {
    plan.par_iter().try_for_each(|page| -> Result<(), BuildError> {
        let bytes = site.render(page).map_err(BuildError::Theme)?;
        Ok(staging.write(&page.path, &bytes)?)
    })?;
    if let Some(cache) = cache {
        archive.runs.par_iter().try_for_each(|run| link_run(staging, cache, &run.url, &run.record.key, false))?;
    }
    Ok((plan.len(), 0))
}

/// Brings the staging tree, known to be `live` changed by `next`, to the new state, touching
/// only what differs: a page whose hash is unchanged is left, one the published site already
/// has is linked from it, and only the others are rendered.
fn update(
    site: &Site,
    plan: &[Page],
    archive: &Archive,
    staging: &Staging,
    cache: &Cache,
    live: &Tree,
    next: &TreeDiff,
) -> Result<(usize, usize), BuildError> {
    let in_staging = |path: &str| next.pages.get(path).copied().unwrap_or_else(|| live.pages.get(path).copied());
    let results: Vec<Result<(usize, usize), BuildError>> = plan
        .par_iter()
        .filter(|page| in_staging(&page.path) != Some(page.hash))
        .map(|page| {
            if live.pages.get(&page.path) == Some(&page.hash) {
                staging.link_published(&page.path)?;
                Ok((0, 1))
            } else {
                // Its hash differs from the staging tree's, so its bytes do.
                let bytes = site.render(page).map_err(BuildError::Theme)?;
                staging.replace(&page.path, &bytes)?;
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
    let wanted: BTreeSet<&str> = plan.iter().map(|p| p.path.as_str()).collect();
    for path in live.pages.keys().chain(next.pages.keys()) {
        if !wanted.contains(path.as_str()) && in_staging(path).is_some() {
            staging.remove(path)?;
        }
    }
    let run_in_staging = |url: &str| next.runs.get(url).cloned().unwrap_or_else(|| live.runs.get(url).cloned());
    archive.runs.par_iter().try_for_each(|run| match run_in_staging(&run.url) {
        Some(key) if key == run.record.key => Ok(()),
        _ => link_run(staging, cache, &run.url, &run.record.key, true),
    })?;
    let urls: BTreeSet<&str> = archive.runs.iter().map(|r| r.url.as_str()).collect();
    for url in live.runs.keys().chain(next.runs.keys()) {
        if !urls.contains(url.as_str()) && run_in_staging(url).is_some() {
            staging.remove(&format!("{url}g"))?;
            staging.remove(&format!("{url}{PREVIEW}"))?;
        }
    }
    Ok(counts)
}

/// Links the graph files of cache entry `key` into run folder `url`, first removing what the
/// folder had (when `replace`).
fn link_run(staging: &Staging, cache: &Cache, url: &str, key: &str, replace: bool) -> Result<(), BuildError> {
    let product = cache.get(key).ok_or_else(|| {
        BuildError::Output(format!(
            "the build cache has lost the graphs of {url} (entry {key}); remove {} and build again",
            cache.dir().display()
        ))
    })?;
    if replace {
        staging.remove(&format!("{url}g"))?;
        staging.remove(&format!("{url}{PREVIEW}"))?;
    }
    for rel in &product.files {
        staging.link(&format!("{url}{rel}"), &cache.file(key, rel))?;
    }
    Ok(())
}

/// The names the published site holds (its `index.json`), for a build without a state.
fn published_names(config: &Config) -> slug::Record {
    let Ok(bytes) = std::fs::read(config.output.join("index.json")) else { return slug::Record::default() };
    let Ok(index) = serde_json::from_slice::<crate::site::index_json::Index>(&bytes) else { return slug::Record::default() };
    let mut names = index.names;
    for p in &index.profiles {
        names.runs.entry(p.source.clone()).or_insert_with(|| p.slug.clone());
    }
    for s in &index.series {
        let slug = s.url.trim_start_matches("s/").trim_end_matches('/').to_string();
        names.series.entry(s.name.clone()).or_insert(slug);
    }
    names
}

/// What every page and record depends on besides the runs: flamesite's version, the
/// configuration (all of it but the input and output folders' names) and the theme's files.
fn fingerprint(config: &Config, theme: &Theme) -> String {
    let mut h = blake3::Hasher::new();
    h.update(format!("flamesite {}\n", env!("CARGO_PKG_VERSION")).as_bytes());
    h.update(
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}\n{}\n{}\n{}\n",
            config.chunks,
            config.limits,
            config.perf,
            config.archive,
            config.input.canonicalize().unwrap_or_else(|_| config.input.clone()),
            config.palette.as_str(),
            config.base_url,
            config.title,
            config.keep_going
        )
        .as_bytes(),
    );
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

fn hash_str(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// A hash of a run's record: equal hashes, equal records.
fn record_hash(record: &RunRecord) -> u64 {
    let json = serde_json::to_vec(record).expect("a record serialises");
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
