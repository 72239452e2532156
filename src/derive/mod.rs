//! Derive: graphs made from several runs. Each run with a previous run in its series is
//! compared with it (`p/<run>/compare/`), and, when `archive.baselines` names a baseline for
//! its series, with the baseline (`p/<run>/vs/<baseline>/`).
//!
//! A comparison has one differential graph ([`crate::graph::diff`]) per graph name the two runs
//! share, read back from the runs' graph files, and the list of functions whose share grew and
//! shrank most. Its files are a cache entry keyed by the two runs' keys, so a rebuild makes only
//! the comparisons of runs that are new or changed: adding a run makes one.

pub mod changes;
pub mod history;
pub mod report;

use std::collections::HashMap;
use std::path::PathBuf;

use rayon::prelude::*;

use crate::archive::run::{Archive, Comparison, Compared, GraphChanges, GraphInfo, Regression};
use crate::archive::slug;
use crate::config::Config;
use crate::graph::diff::{self, Change};
use crate::graph::preview;
use crate::error::FillError;
use crate::ingest::cache::{Cache, Product};
use crate::ingest::PREVIEW;
use crate::output::Output;
use crate::store::chunk;

/// Functions listed as grown, and as shrunk, per graph of a comparison page.
pub const LISTED: usize = 10;

/// Where a run's graph files are: in its cache entry, or (with no cache) in the staging tree.
pub enum Source<'a> {
    /// The cache.
    Cache(&'a Cache),
    /// The staging tree, which received the graph files directly.
    Staging(&'a dyn Output),
}

/// What derive made, besides the archive's comparisons.
#[derive(Default)]
pub struct Derived {
    /// Comparisons made in this build (not found in the cache or the state).
    pub made: usize,
    /// The change lists of those, by key, when they were made without a cache; with one,
    /// every list is read from its cache entry when its page is rendered, since holding a
    /// list per comparison until then made a first build's memory grow with the archive.
    pub changes: HashMap<String, Vec<GraphChanges>>,
    /// Comparisons that could not be made: (the later run's source, why).
    pub failed: Vec<(String, String)>,
    /// Baselines named in `site.toml` that no run matches: (series, what was named).
    pub unknown_baselines: Vec<(String, String)>,
    /// A comparison's files that could not be written (a full disk): the build stops.
    pub write_failed: Option<String>,
    /// Keys of the known comparisons that no pair of this archive uses any more.
    pub unused: Vec<String>,
}

/// Adds every comparison to `archive`. `known` holds what earlier builds made, by key.
pub fn derive(config: &Config, archive: &mut Archive, source: Source, mut known: rustc_hash::FxHashMap<String, Compared>) -> Derived {
    let mut out = Derived::default();
    // The pairs: (before, after, baseline, url).
    let mut pairs: Vec<(usize, usize, bool, String)> = Vec::new();
    for si in 0..archive.series.len() {
        let baseline = match config.archive.baselines.get(&archive.series[si].name) {
            Some(spec) => {
                let found = find_run(archive, si, spec);
                if found.is_none() {
                    out.unknown_baselines.push((archive.series[si].name.clone(), spec.clone()));
                }
                found
            }
            None => None,
        };
        archive.series[si].baseline = baseline;
        let s = &archive.series[si];
        for (k, &i) in s.runs.iter().enumerate() {
            if k > 0 {
                pairs.push((s.runs[k - 1], i, false, format!("{}compare/", archive.runs[i].url)));
            }
            if let Some(b) = baseline {
                let pos = s.runs.iter().position(|&x| x == b).expect("the baseline is a run of its series");
                if k > pos && k != pos + 1 {
                    let url = format!("{}{}/{}/", archive.runs[i].url, slug::VS, archive.runs[b].slug);
                    pairs.push((b, i, true, url));
                }
            }
        }
    }
    // With a cache, a comparison's change list is in its entry (the comparison page reads it
    // from there), so none is kept in memory.
    let cached = matches!(source, Source::Cache(_));
    let keys: Vec<String> = pairs
        .par_iter()
        .map(|(b, a, _, url)| match &source {
            Source::Cache(c) => c.pair_key(&archive.runs[*b].record.key, &archive.runs[*a].record.key),
            Source::Staging(_) => url.clone(),
        })
        .collect();
    // Per pair: nothing to compare, or what was made (with its change list when made now).
    /// A comparison an earlier build made (its key is in `known`), or one made now, with its
    /// change list when it is to be kept in memory (none: its cache entry has it).
    enum Made {
        Known,
        New(Compared, Option<Vec<GraphChanges>>),
    }
    type Outcome = Option<Result<Made, FillError>>;
    let results: Vec<Outcome> = pairs
        .par_iter()
        .zip(&keys)
        .map(|((b, a, _, url), key)| {
            let (before, after) = (&archive.runs[*b], &archive.runs[*a]);
            // Like with like: graphs of the same name and unit (a Go profile's `samples`, a
            // count, is not a folded file's `samples`); runs with none are not compared. A
            // time-order graph is not: two runs' stacks in time do not line up.
            let mut shared: Vec<(&GraphInfo, &GraphInfo)> = after
                .record
                .graphs
                .iter()
                .filter(|g| !g.timeline)
                .filter_map(|g| before.record.graphs.iter().find(|x| x.name == g.name && x.unit == g.unit && !x.timeline).map(|x| (x, g)))
                .collect();
            // A differential graph of a run (a CPI graph: instructions against cycles) is read
            // back by its second count, so comparing it again would repeat the comparison of
            // that count's own graph: only runs with nothing else (two-count files) compare it.
            if shared.iter().any(|(b, a)| !b.differential && !a.differential) {
                shared.retain(|(b, a)| !b.differential && !a.differential);
            }
            if shared.is_empty() {
                return None;
            }
            // Taken from `known` below, without a copy: copying every known comparison was a
            // measurable part of adding one run (docs/BENCHMARKS.md, "Figures behind the code").
            if let Source::Cache(_) = source {
                if known.contains_key(key) {
                    return Some(Ok(Made::Known));
                }
            }
            let dir = |run: &crate::archive::run::Run, g: &GraphInfo| -> PathBuf {
                match &source {
                    Source::Cache(c) => c.file_at(&run.record.key, Some(&run.url), &g.data),
                    Source::Staging(s) => s.path(&format!("{}{}", run.url, g.data)),
                }
            };
            let make = |sink: chunk::Sink| compare(config, &shared, &dir, before, after, sink);
            let made = match &source {
                Source::Cache(c) => match c.verified_at(key, Some(url)) {
                    Some(p) => Ok(p),
                    None => c.fill(key, make),
                },
                Source::Staging(s) => {
                    let sink = |rel: &str, bytes: &[u8]| s.write(&format!("{url}{rel}"), bytes).map_err(|e| FillError::Write(e.to_string()));
                    make(&sink)
                }
            };
            Some(made.map(|p| {
                let top = top_regression(&p.changes);
                let compared = Compared { key: key.clone(), graphs: p.graphs, preload: p.preload, preview: p.files.iter().any(|f| f == PREVIEW), top, budgets: p.budgets };
                Made::New(compared, (!cached).then_some(p.changes))
            }))
        })
        .collect();
    for (((b, a, baseline, url), key), result) in pairs.into_iter().zip(keys).zip(results) {
        match result {
            None => {}
            Some(Err(FillError::Write(why))) => {
                out.write_failed.get_or_insert(why);
            }
            Some(Err(FillError::Make(e))) => out.failed.push((archive.runs[a].record.source.clone(), format!("its comparison with {}: {e}", archive.runs[b].record.source))),
            Some(Ok(made)) => {
                let made = match made {
                    // A pair two runs share makes one entry: a second pair with the same
                    // key (two identical runs) takes a copy.
                    Made::Known => match known.remove(&key) {
                        Some(c) => c,
                        None => archive.comparisons.iter().find(|c| c.made.key == key).map(|c| c.made.clone()).expect("a known key"),
                    },
                    Made::New(made, changes) => {
                        out.made += 1;
                        if let Some(changes) = changes {
                            out.changes.insert(made.key.clone(), changes);
                        }
                        made
                    }
                };
                let index = archive.comparisons.len();
                if baseline {
                    archive.runs[a].vs_baseline = Some(index);
                } else {
                    archive.runs[a].compare = Some(index);
                }
                archive.comparisons.push(Comparison { before: b, after: a, baseline, url, made });
            }
        }
    }
    out.unused = known.into_keys().collect();
    out
}

/// The run of series `si` that `spec` names: by date (`2026-11-14`, the first that day), title,
/// path without extensions, or slug.
fn find_run(archive: &Archive, si: usize, spec: &str) -> Option<usize> {
    let runs = &archive.series[si].runs;
    let by = |f: &dyn Fn(usize) -> bool| runs.iter().copied().find(|&i| f(i));
    by(&|i| archive.runs[i].record.date.rfc3339().starts_with(spec) && spec.len() >= 10)
        .or_else(|| by(&|i| archive.runs[i].record.title == spec))
        .or_else(|| by(&|i| crate::ingest::scan::stem(&archive.runs[i].record.source) == spec))
        .or_else(|| by(&|i| archive.runs[i].slug == spec))
}

/// The function whose self share grew most in the first graph, among those whose growth
/// stands out from sampling noise (all, when it cannot be judged): a regression is said only
/// of a change that sampling alone would rarely make. The run is judged, not one function:
/// among the graph's N functions, the one that grew most by sampling alone would often stand
/// out of a test made for one (30 functions over 30 nights are 900 chances), so the growth
/// must stand out at [`report::run_z`] of N, the level at which sampling alone makes any of
/// them stand out in fewer than 1 of 1,000 runs.
fn top_regression(changes: &[GraphChanges]) -> Option<Regression> {
    let g = changes.first()?;
    let z = report::run_z(g.functions);
    let c = g.grew.iter().find(|c| report::stands_out_at(z, (g.samples_before, g.samples_after), c.self_before, g.total_before, c.self_after, g.total_after) != Some(false))?;
    Some(Regression { graph: g.graph.clone(), name: c.name.clone(), points: c.self_points(g.total_before, g.total_after), functions: g.functions })
}

/// Makes the comparison of two runs' `shared` graphs, handing its files to `sink`.
fn compare(
    config: &Config,
    shared: &[(&GraphInfo, &GraphInfo)],
    dir: &(dyn Fn(&crate::archive::run::Run, &GraphInfo) -> PathBuf + Sync),
    before: &crate::archive::run::Run,
    after: &crate::archive::run::Run,
    sink: chunk::Sink,
) -> Result<Product, FillError> {
    let files = std::sync::Mutex::new(Vec::new());
    let write = |rel: String, bytes: &[u8]| {
        sink(&rel, bytes)?;
        files.lock().expect("no panic while holding it").push(rel);
        Ok::<(), FillError>(())
    };
    let mut graphs = Vec::new();
    let mut changes = Vec::new();
    let mut budgets = Vec::new();
    let mut preload = Vec::new();
    // Budgets that name no graph check the first of the graphs of the same samples only.
    let first = report::first_of_their_samples(&shared.iter().map(|(_, g)| g.drawn_by.as_deref()).collect::<Vec<_>>());
    for ((gb, ga), first) in shared.iter().zip(first) {
        // The two runs' graphs are read back at once: each read is one thread's work.
        let (rb, ra) = rayon::join(|| chunk::read_graph(&dir(before, gb)), || chunk::read_graph(&dir(after, ga)));
        let ((_, tb), (_, ta)) = (rb?, ra?);
        let table = diff::merge(&tb, &ta).map_err(|e| e.to_string())?;
        let data = ga.data.clone();
        let graph_sink = |rel: &str, bytes: &[u8]| write(format!("{data}{rel}"), bytes);
        // Of two plain graphs, a search reads the runs' own (published beside it); two-count
        // graphs have layouts of their own, so their comparison keeps its search files.
        let manifest = if gb.differential || ga.differential {
            chunk::encode_graph(&ga.name, &ga.unit, &table, &chunk::Sides::new("the earlier run", "this run"), &config.chunks, config.palette, &graph_sink)?
        } else {
            chunk::encode_comparison(&ga.name, &ga.unit, &table, &config.chunks, config.palette, &graph_sink)?
        };
        let samples = (gb.draws, ga.draws);
        let listed_changes = listed(&ga.name, &ga.unit, &table, samples);
        if graphs.is_empty() {
            preload = manifest.first_view(crate::ingest::FIRST_VIEW_ROWS);
            if !config.base_url.is_empty() {
                // Its words: the series, the two runs, and what grew most beyond sampling noise,
                // so that a pasted link says what changed. A fact, not the series page's verdict
                // (no ▲, no "regression"): the image is made with the comparison, before the
                // series' own spread, which the mark also weighs, is known.
                let grew = top_regression(std::slice::from_ref(&listed_changes))
                    .map(|r| format!("grew most: {} {:+.1} pp of self", r.name, r.points))
                    .unwrap_or_else(|| "no growth beyond sampling noise".to_string());
                let words = [after.record.series.clone(), format!("{} → {}", before.record.title, after.record.title), grew];
                write(PREVIEW.to_string(), &preview::png(&table, config.palette, &words)?)?;
            }
        }
        // The diff's values are in the finer run's decimal places.
        let total = manifest.diff.as_ref().map_or(ga.total, |d| d.total_after);
        graphs.push(GraphInfo { name: ga.name.clone(), unit: ga.unit.clone(), total, frames: manifest.frames, data: ga.data.clone(), differential: true, decimals: manifest.decimals, timeline: false, draws: ga.draws, drawn_by: ga.drawn_by.clone() });
        changes.push(listed_changes);
        // The budgets of site.toml it exceeds, shown on the run's pages and in the feeds.
        budgets.extend(exceeded_budgets(&ga.name, &table, &config.budgets, samples, !first));
    }
    let mut files = files.into_inner().expect("no panic while holding it");
    files.sort();
    let metadata = [("before".to_string(), before.record.source.clone()), ("after".to_string(), after.record.source.clone())].into();
    Ok(Product { format: "comparison".into(), metadata, graphs, preload, warnings: Vec::new(), files, changes, budgets, sums: Vec::new(), seal: String::new() })
}

/// The functions of a differential table whose self share grew most and shrank most.
pub fn listed(graph: &str, unit: &str, table: &crate::graph::frames::FrameTable, samples: (Option<u64>, Option<u64>)) -> GraphChanges {
    let (tb, ta) = (table.before.as_ref().map_or(0, |b| b.total[0]), table.values().0[0]);
    let mut all: Vec<(f64, Change)> = diff::changes(table).into_iter().map(|c| (c.self_points(tb, ta), c)).collect();
    // Largest growth first; ties by name, so the list is the same on every machine.
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let grew = all.iter().filter(|(p, _)| *p > 0.0).take(LISTED).map(|(_, c)| c.clone()).collect();
    let shrank = all.iter().rev().filter(|(p, _)| *p < 0.0).take(LISTED).map(|(_, c)| c.clone()).collect();
    GraphChanges { graph: graph.into(), unit: unit.into(), decimals: table.decimals, total_before: tb, total_after: ta, samples_before: samples.0, samples_after: samples.1, grew, shrank, functions: all.len() }
}

/// The `[[budget]]`s of site.toml that a comparison's differential `table` of graph `graph`
/// exceeds (the total share of the functions each matches grew by more than it allows), as
/// `flamesite diff` checks them.
pub fn exceeded_budgets(graph: &str, table: &crate::graph::frames::FrameTable, budgets: &[crate::config::Budget], samples: (Option<u64>, Option<u64>), repeats: bool) -> Vec<crate::archive::run::Exceeded> {
    report::check_budgets(graph, table, None, budgets, samples, repeats)
        .into_iter()
        .filter(|b| b.exceeded)
        .map(|b| crate::archive::run::Exceeded { graph: b.graph, function: b.function, increase_pp: b.increase_pp, max_increase_pp: b.max_increase_pp })
        .collect()
}
