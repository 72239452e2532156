//! Ingest: one profile file in, one run's record and graph files out.
//!
//! [`scan`] lists the profile files with their [`Stamp`]s, [`decode`] reads one (any
//! compression, any supported format) into frame tables, and the store encodes each table
//! into its graph files. A run depends only on its file, its sidecars and the configuration,
//! so [`ingest`] is a function of those: it is what the build runs in parallel, and what the
//! [`cache`] keeps. It hands the files it makes to a sink the build chooses (a cache entry, or
//! the run's folder when there is no cache) and never reaches into the output itself.

pub mod cache;
pub mod decode;
pub mod notes;
pub mod remote;
pub mod scan;

use std::collections::BTreeMap;

use crate::archive::{self, Pattern, Sidecar};
pub use crate::archive::run::{GraphInfo, RunRecord, Stamp, Stamps};
use crate::config::{Config, DateFrom};
use crate::error::{FillError, IngestError, ProfileError};
use crate::graph::preview;
use crate::store::chunk;
use cache::{Cache, Product};
use scan::Source;

/// Rows of the first view a run page preloads the files of (a canvas 1080 px tall).
pub const FIRST_VIEW_ROWS: u32 = 60;

pub use crate::archive::slug::PREVIEW;

/// What every ingest of a build shares.
pub struct Ctx<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// `archive.pattern`, compiled.
    pub pattern: Option<&'a Pattern>,
    /// The build cache, when in use.
    pub cache: Option<&'a Cache>,
}

/// The stem of `source`, the raw path its sidecars are found at, and its `.toml` sidecar.
fn sidecar_of(source: &Source) -> Result<(&str, std::path::PathBuf, Option<Sidecar>), String> {
    let stem = scan::stem(&source.rel);
    // The sidecars' path, byte for byte: `rel` spells bytes that are not UTF-8 as `\xNN`, but
    // the extensions it drops are ASCII, so the raw path less as many bytes is the stem's.
    let raw_base = scan::raw_stem(&source.path, source.rel.len() - stem.len());
    let sidecar = Sidecar::load_at(&raw_base, stem)?;
    Ok((stem, raw_base, sidecar))
}

/// The cache key of `source` (its bytes, with its sidecar's unit) and, when the cache has no
/// entry of that key, the entry made by decoding it: what a shard of a build does
/// (`flamesite build --shard`), leaving everything else to the build that publishes.
pub fn decode_into(cache: &Cache, config: &Config, source: &Source) -> Result<(String, bool), IngestError> {
    let err = |reason: String| IngestError::Profile(ProfileError::new(source.rel.clone(), reason));
    let (_, _, sidecar) = sidecar_of(source).map_err(err)?;
    let unit = sidecar.as_ref().and_then(|s| s.unit.clone());
    let key = cache.key(&source.path, unit.as_deref(), &words_key(config, source, sidecar.as_ref())).map_err(err)?;
    if cache.get(&key).is_some() {
        return Ok((key, false));
    }
    let pattern = config.archive.pattern.as_deref().map(archive::Pattern::new).transpose().map_err(err)?;
    let words = |metadata: &BTreeMap<String, String>| preview_words(&describe(config, source, sidecar.as_ref(), pattern.as_ref(), metadata));
    cache
        .fill(&key, |sink| produce(config, source, unit.as_deref(), &words, sink))
        .map_err(|e| match e {
            FillError::Make(reason) => err(reason),
            FillError::Write(why) => IngestError::Write(why),
        })?;
    Ok((key, true))
}

/// A run, ingested.
pub struct Ingested {
    /// Its record.
    pub record: RunRecord,
    /// How: its graphs taken from the cache, or decoded.
    pub how: How,
}

/// How a run was ingested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Its sidecars or path were read again, its graphs came from the cache.
    Cached,
    /// It was decoded.
    Decoded,
}

/// Ingests the profile `source`. `sink` receives the files of a decoded profile (paths
/// relative to the run's folder) when there is no cache; with a cache they go into a cache
/// entry. (A profile whose files did not change since the last build is not ingested at all:
/// the build keeps its record.)
/// `home` is the run's folder in the published site, where its files are when they were
/// published from the same bytes.
pub fn ingest(ctx: &Ctx, source: &Source, home: &str, sink: chunk::Sink) -> Result<Ingested, IngestError> {
    let err = |reason: String| IngestError::Profile(ProfileError::new(source.rel.clone(), reason));
    let config = ctx.config;
    let (stem, raw_base, sidecar) = sidecar_of(source).map_err(err)?;
    let unit = sidecar.as_ref().and_then(|s| s.unit.clone());

    let key = match ctx.cache {
        Some(cache) => cache.key(&source.path, unit.as_deref(), &words_key(config, source, sidecar.as_ref())).map_err(err)?,
        None => String::new(),
    };
    // The run is described once: while its preview is made (a profile decoded with a
    // base_url), from the metadata the product then carries, else after.
    let described = std::cell::OnceCell::new();
    let words = |metadata: &BTreeMap<String, String>| preview_words(described.get_or_init(|| describe(config, source, sidecar.as_ref(), ctx.pattern, metadata)));
    // What is restored is checked: a broken entry is made again.
    let cached = ctx.cache.and_then(|c| c.verified_at(&key, Some(home)));
    let how = if cached.is_some() { How::Cached } else { How::Decoded };
    let fill_err = |e: FillError| match e {
        FillError::Make(reason) => err(reason),
        FillError::Write(why) => IngestError::Write(why),
    };
    let product = match cached {
        Some(p) => p,
        None => match ctx.cache {
            Some(cache) => cache.fill(&key, |sink| produce(config, source, unit.as_deref(), &words, sink)).map_err(fill_err)?,
            // A file the sink could not write stops the build, like a cache entry's: its error
            // says so by its type.
            None => produce(config, source, unit.as_deref(), &words, sink).map_err(fill_err)?,
        },
    };

    let (info, run_warnings) = match described.into_inner() {
        Some(described) => described,
        None => describe(config, source, sidecar.as_ref(), ctx.pattern, &product.metadata),
    }
    .map_err(err)?;
    let notes = archive::read_sidecar_at(&raw_base, stem, "md").map_err(err)?.map(|md| crate::ingest::notes::render(&md));
    let mut warnings = product.warnings;
    warnings.extend(run_warnings);
    let record = RunRecord {
        source: source.rel.clone(),
        stamps: source.stamps,
        key,
        format: product.format,
        metadata: product.metadata,
        graphs: product.graphs,
        preload: product.preload,
        preview: product.files.iter().any(|f| f == PREVIEW),
        series: info.series,
        date: info.date,
        date_from: info.date_from.to_string(),
        title: info.title,
        labels: info.labels,
        notes,
        warnings,
    };
    Ok(Ingested { record, how })
}

/// The CPI graph of a `perf record -e cycles,instructions` profile (the flame-graph paper's
/// "CPI flame graph"): the comparison of its `instructions` graph (before) with its `cycles`
/// graph (after), drawn by the comparisons' code. A frame is red where its share of the cycles
/// is larger than its share of the instructions (more cycles per instruction than the
/// profile's average: stalls), blue where smaller; the `after` layout is widths by cycles.
/// Events are matched without their modifiers (`cycles:u`, `cpu-cycles`, `instructions:ppp`).
fn cpi_graph(decoded: &decode::Decoded) -> Result<Option<decode::Graph>, String> {
    if decoded.format != "perf" {
        return Ok(None);
    }
    let event = |g: &&decode::Graph| g.name.split(':').next().unwrap_or("").to_string();
    let cycles = decoded.graphs.iter().find(|g| matches!(event(g).as_str(), "cycles" | "cpu-cycles"));
    let instructions = decoded.graphs.iter().find(|g| event(g) == "instructions");
    let (Some(cycles), Some(instructions)) = (cycles, instructions) else {
        return Ok(None);
    };
    let table = crate::graph::diff::merge(&instructions.table, &cycles.table).map_err(|e| format!("the CPI graph: {e}"))?;
    Ok(Some(decode::Graph { name: "cpi".into(), unit: cycles.unit.clone(), table, timeline: false }))
}

/// The run of `source` ([`archive::describe`]), from what its profile said about itself
/// (`metadata`), with its warnings.
fn describe(config: &Config, source: &Source, sidecar: Option<&Sidecar>, pattern: Option<&archive::Pattern>, metadata: &BTreeMap<String, String>) -> Result<(archive::RunInfo, Vec<String>), String> {
    let mtime = source.stamps.profile.mtime_seconds();
    archive::describe(&source.rel, sidecar, metadata, pattern, mtime, config.archive.date_from == DateFrom::Profile)
}

/// What a run's link-preview image says ([`preview::png`]), given the run as [`describe`]d:
/// its series, then its title with its date, unless the date is the file's time (which a copy
/// changes, and which no cache key holds). Empty when the run cannot be described (its error
/// comes later, from `ingest`).
fn preview_words(described: &Result<(archive::RunInfo, Vec<String>), String>) -> Vec<String> {
    match described {
        Ok((info, _)) => {
            let date = info.date.display();
            let second = if info.date_from == "file time" || info.title.contains(&date) { info.title.clone() } else { format!("{} · {date}", info.title) };
            vec![info.series.clone(), second]
        }
        Err(_) => Vec::new(),
    }
}

/// What, besides its bytes, a run's cache entry depends on when it has a preview image: the
/// inputs of [`preview_words`] that are not in the profile (its path, which the series and
/// title may come from, and its sidecar's series, title and date). Empty without a `base_url`
/// (no preview is made). Two copies of a profile at two paths are then two entries.
fn words_key(config: &Config, source: &Source, sidecar: Option<&Sidecar>) -> String {
    if config.base_url.is_empty() {
        return String::new();
    }
    let s = sidecar.map(|s| (s.series.clone(), s.title.clone(), s.date.map(|d| d.to_string())));
    // The pattern and the choice of dates decide the series and the date the image says.
    format!("preview words {:?} {s:?} {:?} {:?}", source.rel, config.archive.pattern, config.archive.date_from)
}

/// Decodes one profile and hands its graphs and (with a `base_url`) its preview image to
/// `sink`, paths relative to the run's folder.
fn produce(config: &Config, source: &Source, unit: Option<&str>, words: &dyn Fn(&BTreeMap<String, String>) -> Vec<String>, sink: chunk::Sink) -> Result<Product, FillError> {
    let mut decoded = decode::decode_file(&source.path, config)?;
    let max = config.limits.max_graphs as usize;
    if decoded.graphs.len() > max {
        // Each graph is a folder of files and a page's worth of data: a 223-byte pprof with
        // 10,000 sample types made 40,000 files.
        return Err(format!(
            "it would make {} graphs (sample types, profiles or event kinds), more than limits.max_graphs ({max}); skipped (raise [limits] max_graphs in site.toml to build it)",
            decoded.graphs.len()
        )
        .into());
    }
    let counts = chunk::Sides::new("the first count", "the second count");
    let mut cpi = None;
    if let Some(g) = cpi_graph(&decoded)? {
        cpi = Some((decoded.graphs.len(), chunk::Sides::new("instructions", "cycles")));
        decoded.graphs.push(g);
    }
    let files = std::sync::Mutex::new(Vec::new());
    let write = |rel: String, bytes: &[u8]| {
        sink(&rel, bytes)?;
        files.lock().expect("no panic while holding it").push(rel);
        Ok::<(), FillError>(())
    };
    let names: Vec<&str> = decoded.graphs.iter().map(|g| g.name.as_str()).collect();
    let folders = archive::slug::graph_folders(&names);
    // The graphs of a profile (pprof's sample types, perf's events) are written in parallel:
    // a large profile is often one file, and its graphs are independent.
    use rayon::prelude::*;
    let units: Vec<&str> = decoded.graphs.iter().map(|g| unit.unwrap_or(&g.unit)).collect();
    let draws = decode::draws(&decoded.graphs, &units);
    let written: Vec<Result<(GraphInfo, chunk::Manifest), FillError>> = decoded
        .graphs
        .par_iter()
        .zip(folders)
        .enumerate()
        .map(|(i, (graph, folder))| {
            let data = format!("g/{folder}/");
            let graph_sink = |rel: &str, bytes: &[u8]| write(format!("{data}{rel}"), bytes);
            let unit = unit.unwrap_or(&graph.unit);
            let sides = match &cpi {
                Some((at, sides)) if *at == i => sides,
                _ => &counts,
            };
            let manifest = match graph.timeline {
                true => chunk::encode_time_order(&graph.name, unit, &graph.table, &config.chunks, config.palette, &graph_sink)?,
                false => chunk::encode_graph(&graph.name, unit, &graph.table, sides, &config.chunks, config.palette, &graph_sink)?,
            };
            // A differential graph's widths are not its values: its total is the second count's.
            let total = manifest.diff.as_ref().map_or(manifest.total, |d| d.total_after);
            let info = GraphInfo { name: graph.name.clone(), unit: unit.to_string(), total, frames: manifest.frames, data, differential: manifest.differential, decimals: manifest.decimals, timeline: graph.timeline, draws: draws[i].map(|d| d.0), drawn_by: draws[i].map(|d| decoded.graphs[d.1].name.clone()) };
            Ok((info, manifest))
        })
        .collect();
    let mut graphs = Vec::with_capacity(written.len());
    let mut preload = Vec::new();
    // The page opens on the first graph with a value (a .NET profile's first sample type may
    // add up to 0): its first view is the one preloaded, and the one the preview shows.
    let shown = written.iter().position(|w| w.as_ref().is_ok_and(|(info, _)| info.total > 0)).unwrap_or(0);
    for (i, w) in written.into_iter().enumerate() {
        let (info, manifest) = w?;
        if i == shown {
            preload = manifest.first_view(FIRST_VIEW_ROWS);
        }
        graphs.push(info);
    }
    // Link previews need an absolute URL, so they are made only when base_url gives one.
    if let (Some(first), false) = (decoded.graphs.get(shown), config.base_url.is_empty()) {
        // Its words, and the graph it shows with its total.
        let mut lines = words(&decoded.metadata);
        if let Some(info) = graphs.get(shown).filter(|i| i.decimals == 0 && !lines.is_empty()) {
            lines.push(format!("{} · total {}", info.name, crate::units::format_value(i128::from(info.total), &info.unit)));
        }
        write(PREVIEW.to_string(), &preview::png(&first.table, config.palette, &lines)?)?;
    }
    let mut files = files.into_inner().expect("no panic while holding it");
    files.sort();
    Ok(Product { format: decoded.format.into(), metadata: decoded.metadata, graphs, preload, warnings: decoded.warnings, files, changes: Vec::new(), budgets: Vec::new(), sums: Vec::new(), seal: String::new() })
}
