//! The build of a whole site, as a fixed sequence of steps:
//! scan → read sidecars, decode, merge and chunk every profile (in parallel; unchanged ones
//! come from the cache) → work out series and runs → render pages → swap the output folder
//! in. A profile that cannot be read is reported and skipped; the others are built; the
//! output is the same bytes whatever the thread count.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::archive::{self, Pattern, Sidecar, When};
use crate::ingest::cache::{Cache, Product};
use crate::store::chunk;
use crate::config::Config;
use crate::ingest::decode;
use crate::site::pages;
use crate::site::theme::Theme;
use crate::ingest::scan::{self, Source};
use crate::output::staging::Staging;

/// How to run a build.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// Show a progress bar (it is hidden anyway when stderr is not a terminal).
    pub progress: bool,
    /// Decode and check everything but write nothing (`flamesite check`).
    pub dry_run: bool,
    /// Reuse the graphs of unchanged profiles from the incremental build cache.
    pub cache: bool,
}

/// `index.json`: the listing of the site for machines (see `docs/FORMAT.md`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Index {
    /// Always `flamesite-index`.
    pub format: String,
    /// Version of this listing's format.
    pub version: u32,
    /// Every series, sorted by name.
    pub series: Vec<SeriesEntry>,
    /// Every built profile, sorted by source path.
    pub profiles: Vec<ProfileEntry>,
}

/// One series in `index.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SeriesEntry {
    /// Its name.
    pub name: String,
    /// Its page, relative to the site root.
    pub url: String,
    /// Its Atom feed, relative to the site root.
    pub feed: String,
    /// Number of runs.
    pub runs: usize,
    /// Page of its newest run.
    pub newest: String,
}

/// One profile (a run) in `index.json` and in the templates.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProfileEntry {
    /// Path of the profile file relative to the input folder.
    pub source: String,
    /// Stable identifier, from the path.
    pub slug: String,
    /// Its page, relative to the site root.
    pub url: String,
    /// Format it was read as.
    pub format: String,
    /// Its series.
    pub series: String,
    /// Its series' page, relative to the site root.
    pub series_url: String,
    /// When it was taken, RFC 3339 in UTC.
    pub date: String,
    /// Where the date came from: `sidecar`, `profile`, `pattern`, `file name` or `file time`.
    pub date_from: String,
    /// Its title.
    pub title: String,
    /// Labels from its sidecar.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// What the profile says about itself (time, duration, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Its link-preview image, relative to the site root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// Its graphs, the default one first.
    pub graphs: Vec<GraphEntry>,
}

/// One graph of a profile.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GraphEntry {
    /// Sample type.
    pub name: String,
    /// Unit of its values.
    pub unit: String,
    /// Total value.
    pub total: u64,
    /// Number of frames.
    pub frames: u64,
    /// Its data folder, relative to the site root.
    pub data: String,
}

/// A built run: its listing entry and what its pages need besides.
#[derive(Clone, Debug)]
pub struct Run {
    /// What `index.json` says of it.
    pub entry: ProfileEntry,
    /// Its date.
    pub when: When,
    /// Its notes (sidecar `NAME.md`), rendered and sanitised.
    pub notes: Option<String>,
    /// Files of its first graph's first view, relative to that graph's folder, which its page
    /// preloads.
    pub preload: Vec<String>,
}

/// What a build did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Profiles built.
    pub built: Vec<ProfileEntry>,
    /// How many of them came from the cache, unchanged.
    pub reused: usize,
    /// Paths skipped, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Paths built with warnings.
    pub warnings: Vec<(String, String)>,
    /// Wall time of the build.
    pub elapsed: Duration,
}

/// Builds the site described by `config`.
pub fn build(config: &Config, options: &Options) -> Result<Summary, String> {
    let start = Instant::now();
    let theme = Theme::load(config.theme_dir.as_deref())?;
    let pattern = config.archive.pattern.as_deref().map(Pattern::new).transpose()?;
    let scanned = scan::scan(&config.input)?;
    let slugs = assign_slugs(&scanned.sources);
    let staging = if options.dry_run { None } else { Some(Staging::new(&config.output)?) };
    let cache = match (&staging, options.cache) {
        (Some(_), true) => {
            let dir = config.cache_folder();
            std::fs::create_dir_all(&dir).map_err(|e| format!("cache {}: {e}", dir.display()))?;
            Some(Cache::new(&dir, config))
        }
        _ => None,
    };
    let ctx = ProfileCtx { config, pattern: pattern.as_ref(), staging: staging.as_ref(), cache: cache.as_ref() };

    let bar = progress_bar(options.progress, scanned.sources.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
        .map_err(|e| e.to_string())?;
    let outcomes: Vec<Result<Built, String>> = pool.install(|| {
        scanned
            .sources
            .par_iter()
            .zip(slugs.par_iter())
            .map(|(source, slug)| {
                let r = build_profile(&ctx, source, slug);
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();

    let mut summary = Summary { skipped: scanned.problems, ..Summary::default() };
    let mut runs = Vec::new();
    let mut used_keys = BTreeSet::new();
    for (source, outcome) in scanned.sources.iter().zip(outcomes) {
        match outcome {
            Ok(built) => {
                summary.warnings.extend(built.warnings.into_iter().map(|w| (source.rel.clone(), w)));
                summary.reused += usize::from(built.reused);
                used_keys.extend(built.key);
                summary.built.push(built.run.entry.clone());
                runs.push(built.run);
            }
            Err(reason) => summary.skipped.push((source.rel.clone(), reason)),
        }
    }
    summary.skipped.sort();

    if let Some(staging) = staging {
        pool.install(|| pages::write(config, &theme, &runs, &staging))?;
        staging.commit()?;
        if let Some(cache) = &cache {
            cache.retain(&used_keys);
        }
    }
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Slugs in scan order; a collision gives the later file its long slug.
fn assign_slugs(sources: &[Source]) -> Vec<String> {
    let mut taken = BTreeSet::new();
    sources
        .iter()
        .map(|s| {
            let short = scan::slug(&s.rel);
            let slug = if taken.contains(&short) { scan::long_slug(&s.rel) } else { short };
            taken.insert(slug.clone());
            slug
        })
        .collect()
}

/// What every profile's build shares.
struct ProfileCtx<'a> {
    config: &'a Config,
    pattern: Option<&'a Pattern>,
    staging: Option<&'a Staging>,
    cache: Option<&'a Cache>,
}

/// One profile, built.
struct Built {
    run: Run,
    warnings: Vec<String>,
    /// Its cache key, when the cache is in use.
    key: Option<String>,
    /// Whether its graphs came from the cache.
    reused: bool,
}

/// Reads one profile's sidecars, decodes it (or takes its graphs from the cache) and writes
/// its graphs.
fn build_profile(ctx: &ProfileCtx, source: &Source, slug: &str) -> Result<Built, String> {
    let config = ctx.config;
    let stem = scan::stem(&source.rel);
    let sidecar = Sidecar::load(&config.input, stem)?;
    let unit = sidecar.as_ref().and_then(|s| s.unit.clone());
    let url = format!("p/{slug}/");

    let key = ctx.cache.map(|c| c.key(&source.path, unit.as_deref())).transpose()?;
    let mut reused = false;
    let mut product = None;
    if let (Some(cache), Some(key), Some(staging)) = (ctx.cache, &key, ctx.staging) {
        if let Some(p) = cache.get(key) {
            // An entry that cannot be restored whole is rebuilt, which rewrites every file.
            if cache.restore(key, &p, staging, &url).is_ok() {
                product = Some(p);
                reused = true;
            }
        }
    }
    let product = match product {
        Some(p) => p,
        None => {
            let p = produce(config, source, unit.as_deref(), &url, ctx.staging)?;
            if let (Some(cache), Some(key), Some(staging)) = (ctx.cache, &key, ctx.staging) {
                cache.put(key, &p, &staging.path(&url));
            }
            p
        }
    };

    let (info, run_warnings) =
        archive::describe(&config.input, &source.rel, sidecar.as_ref(), &product.metadata, ctx.pattern)?;
    let notes = archive::read_sidecar_text(&config.input, stem, "md")?.map(|md| crate::site::notes::render(&md));
    let series_url = format!("s/{}/", archive::series_slug(&info.series));
    let entry = ProfileEntry {
        source: source.rel.clone(),
        slug: slug.to_string(),
        url: url.clone(),
        format: product.format.clone(),
        series: info.series,
        series_url,
        date: info.date.rfc3339(),
        date_from: info.date_from.to_string(),
        title: info.title,
        labels: info.labels,
        metadata: product.metadata.clone(),
        preview: product.files.iter().any(|f| f == PREVIEW).then(|| format!("{url}{PREVIEW}")),
        graphs: product.graphs.iter().map(|g| GraphEntry { data: format!("{url}{}", g.data), ..g.clone() }).collect(),
    };
    let mut warnings = product.warnings;
    warnings.extend(run_warnings);
    Ok(Built { run: Run { entry, when: info.date, notes, preload: product.preload }, warnings, key, reused })
}

/// Rows of the first view a run page preloads the files of (a canvas 1080 px tall).
const FIRST_VIEW_ROWS: u32 = 60;

/// File name of a run's link-preview image, in its folder.
pub const PREVIEW: &str = "preview.png";

/// Decodes one profile and writes its graphs and (with a `base_url`) its preview image under
/// `url` in the staging folder (nowhere for a dry run).
fn produce(config: &Config, source: &Source, unit: Option<&str>, url: &str, staging: Option<&Staging>) -> Result<Product, String> {
    let decoded = decode::decode_file(&source.path, config)?;
    let mut graphs = Vec::new();
    let mut preload = Vec::new();
    let files = std::sync::Mutex::new(Vec::new());
    let write = |rel: String, bytes: &[u8]| match staging {
        Some(staging) => {
            staging.write(&format!("{url}{rel}"), bytes)?;
            files.lock().expect("no panic while holding it").push(rel);
            Ok(())
        }
        None => Ok(()),
    };
    for graph in &decoded.graphs {
        let folder = scan::slug(&graph.name).replace('/', "_");
        let data = format!("g/{folder}/");
        let sink = |rel: &str, bytes: &[u8]| write(format!("{data}{rel}"), bytes);
        let unit = unit.unwrap_or(&graph.unit);
        let manifest = chunk::encode(&graph.name, unit, &graph.table, &config.chunks, config.palette, &sink)?;
        if graphs.is_empty() {
            preload = manifest.first_view(FIRST_VIEW_ROWS);
        }
        graphs.push(GraphEntry {
            name: graph.name.clone(),
            unit: unit.to_string(),
            total: manifest.total,
            frames: manifest.frames,
            data,
        });
    }
    // Link previews need an absolute URL, so they are made only when base_url gives one.
    if let (Some(_), Some(first), false) = (staging, decoded.graphs.first(), config.base_url.is_empty()) {
        write(PREVIEW.to_string(), &crate::site::preview::png(&first.table, config.palette)?)?;
    }
    let mut files = files.into_inner().expect("no panic while holding it");
    files.sort();
    Ok(Product { format: decoded.format.into(), metadata: decoded.metadata, graphs, preload, warnings: decoded.warnings, files })
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
