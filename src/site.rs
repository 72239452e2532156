//! The build of a whole site, as a fixed sequence of steps:
//! scan → decode, merge and chunk every profile (in parallel) → render pages → swap the
//! output folder in. A profile that cannot be read is reported and skipped; the others are
//! built; the output is the same bytes whatever the thread count.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tera::Context;

use crate::chunk;
use crate::config::Config;
use crate::decode;
use crate::render::{path_to_root, Theme};
use crate::scan::{self, Source};
use crate::write::Staging;

/// How to run a build.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// Show a progress bar (it is hidden anyway when stderr is not a terminal).
    pub progress: bool,
    /// Decode and check everything but write nothing (`flamesite check`).
    pub dry_run: bool,
}

/// `index.json`: the listing of the site for machines.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Index {
    /// Always `flamesite-index`.
    pub format: String,
    /// Version of this listing's format.
    pub version: u32,
    /// Every built profile, sorted by source path.
    pub profiles: Vec<ProfileEntry>,
}

/// One profile in `index.json` and in the templates.
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
    /// What the profile says about itself (time, duration, labels, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
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

/// What a build did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Profiles built.
    pub built: Vec<ProfileEntry>,
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
    let scanned = scan::scan(&config.input)?;
    let slugs = assign_slugs(&scanned.sources);
    let staging = if options.dry_run { None } else { Some(Staging::new(&config.output)?) };

    let bar = progress_bar(options.progress, scanned.sources.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
        .map_err(|e| e.to_string())?;
    let outcomes: Vec<Result<(ProfileEntry, Vec<String>), String>> = pool.install(|| {
        scanned
            .sources
            .par_iter()
            .zip(slugs.par_iter())
            .map(|(source, slug)| {
                let r = build_profile(config, source, slug, staging.as_ref());
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();

    let mut summary = Summary { skipped: scanned.problems, ..Summary::default() };
    for (source, outcome) in scanned.sources.iter().zip(outcomes) {
        match outcome {
            Ok((entry, warnings)) => {
                summary.warnings.extend(warnings.into_iter().map(|w| (source.rel.clone(), w)));
                summary.built.push(entry);
            }
            Err(reason) => summary.skipped.push((source.rel.clone(), reason)),
        }
    }
    summary.skipped.sort();

    if let Some(staging) = staging {
        write_pages(config, &theme, &summary.built, &staging)?;
        staging.commit()?;
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

/// Decodes one profile and writes its graphs. Returns its entry and its warnings.
fn build_profile(
    config: &Config,
    source: &Source,
    slug: &str,
    staging: Option<&Staging>,
) -> Result<(ProfileEntry, Vec<String>), String> {
    let decoded = decode::decode_file(&source.path, config)?;
    let url = format!("p/{slug}/");
    let mut graphs = Vec::new();
    for graph in &decoded.graphs {
        let folder = scan::slug(&graph.name).replace('/', "_");
        let data = format!("{url}g/{folder}/");
        let sink = |rel: &str, bytes: &[u8]| match staging {
            Some(staging) => staging.write(&format!("{data}{rel}"), bytes),
            None => Ok(()),
        };
        let manifest = chunk::encode(&graph.name, &graph.unit, &graph.table, &config.chunks, config.palette, &sink)?;
        graphs.push(GraphEntry {
            name: graph.name.clone(),
            unit: graph.unit.clone(),
            total: manifest.total,
            frames: manifest.frames,
            data,
        });
    }
    let entry = ProfileEntry {
        source: source.rel.clone(),
        slug: slug.to_string(),
        url,
        format: decoded.format.into(),
        metadata: decoded.metadata,
        graphs,
    };
    Ok((entry, decoded.warnings))
}

fn write_pages(config: &Config, theme: &Theme, built: &[ProfileEntry], staging: &Staging) -> Result<(), String> {
    for (name, bytes) in &theme.statics {
        staging.write(&format!("static/{name}"), bytes)?;
    }
    let index = Index { format: "flamesite-index".into(), version: 1, profiles: built.to_vec() };
    let mut json = serde_json::to_vec_pretty(&index).map_err(|e| e.to_string())?;
    json.push(b'\n');
    staging.write("index.json", &json)?;

    let mut ctx = Context::new();
    ctx.insert("site_title", &config.title);
    ctx.insert("base_url", &config.base_url);
    ctx.insert("root", "");
    ctx.insert("profiles", built);
    staging.write("index.html", theme.render("index.html", &ctx)?.as_bytes())?;

    built.par_iter().try_for_each(|p| {
        let mut ctx = Context::new();
        ctx.insert("site_title", &config.title);
        ctx.insert("base_url", &config.base_url);
        // p/<slug>/ is 1 + (folders in the slug) levels below the root.
        ctx.insert("root", &path_to_root(2 + p.slug.matches('/').count()));
        let graphs: Vec<GraphEntry> = p
            .graphs
            .iter()
            .map(|g| GraphEntry { data: g.data.strip_prefix(&p.url).unwrap_or(&g.data).to_string(), ..g.clone() })
            .collect();
        ctx.insert(
            "profile",
            &serde_json::json!({
                "slug": p.slug, "url": p.url, "source": p.source, "format": p.format,
                "title": p.slug, "metadata": p.metadata, "graphs": graphs,
            }),
        );
        staging.write(&format!("{}index.html", p.url), theme.render("profile.html", &ctx)?.as_bytes())
    })
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
