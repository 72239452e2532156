//! A function's history across a series: for every run of a series (its first graph), each
//! function's self and total as shares of the run's total, so that the series page can plot
//! any function, or any regex of functions, over the dates.
//!
//! The history of a series is published as `s/<series>/history/names.json` (the runs, every
//! function name, and how many buckets there are) and `s/<series>/history/b/<k>.json`, the
//! points of the names whose FNV-1a hash is `k` modulo the bucket count: a page fetches the
//! names, matches them, and fetches only the buckets of the names that matched. A bucket
//! holds about [`RUNS_PER_BUCKET`] runs' worth of points per name whatever the series' size.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::run::{Archive, GraphInfo, Run};
use crate::store::chunk::{Manifest, Names};

/// The bucket count is the run count divided by this, rounded up: a series of 1,000 runs and
/// 20,000 functions has 125 buckets of some 160 functions each.
pub const RUNS_PER_BUCKET: usize = 8;

/// Number of buckets of a series of `runs` runs.
pub fn buckets(runs: usize) -> usize {
    runs.div_ceil(RUNS_PER_BUCKET).max(1)
}

/// FNV-1a 32 of `name`'s bytes (the page script's `nameHash`).
pub fn fnv1a(name: &str) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for b in name.bytes() {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    h
}

/// `names.json` of a series' history.
#[derive(Serialize)]
pub struct Index {
    /// Always `flamesite-history`.
    pub format: &'static str,
    /// 1.
    pub version: u32,
    /// The graph followed: the name of each run's first graph.
    pub graph: String,
    /// The runs, oldest first: URL (relative to the site root), date, title.
    pub runs: Vec<RunPoint>,
    /// Every function name of any run, sorted.
    pub names: Vec<String>,
    /// Number of bucket files, `b/0.json` ..
    pub buckets: usize,
}

/// A run of the history.
#[derive(Serialize)]
pub struct RunPoint {
    /// Its page.
    pub url: String,
    /// Its date (RFC 3339).
    pub date: String,
    /// Its title.
    pub title: String,
}

/// The history of one series, as read from its runs' name files.
pub struct History {
    /// `names.json`.
    pub index: Index,
    /// Per name (in `index.names` order), its points: (run index, self share, total share),
    /// shares as fractions of the run's total.
    pub points: Vec<Vec<(u32, f64, f64)>>,
}

/// Reads the history of series `si` from its runs' first graphs; `dir` says where a run's graph
/// folder is.
pub fn collect(archive: &Archive, si: usize, dir: &dyn Fn(&Run, &GraphInfo) -> PathBuf) -> Result<History, String> {
    let runs: Vec<&Run> = archive.series[si].runs.iter().map(|&i| &archive.runs[i]).collect();
    let graph = runs.last().and_then(|r| r.record.graphs.first()).map_or(String::new(), |g| g.name.clone());
    let mut by_name: BTreeMap<String, Vec<(u32, f64, f64)>> = BTreeMap::new();
    for (k, run) in runs.iter().enumerate() {
        let Some(g) = run.record.graphs.iter().find(|g| g.name == graph) else { continue };
        let folder = dir(run, g);
        let read = |rel: &str| std::fs::read(folder.join(rel)).map_err(|e| format!("{}: {e}", folder.join(rel).display()));
        let manifest: Manifest = serde_json::from_slice(&read("manifest.json")?).map_err(|e| e.to_string())?;
        let total = manifest.diff.as_ref().map_or(manifest.total, |d| d.total_after) as f64;
        if total <= 0.0 {
            continue;
        }
        for f in &manifest.names {
            let names: Names = serde_json::from_slice(&read(&f.file)?).map_err(|e| e.to_string())?;
            for (i, name) in names.names.iter().enumerate() {
                if f.names[0] as usize + i == 0 {
                    continue; // the root
                }
                by_name.entry(name.clone()).or_default().push((k as u32, names.self_[i] as f64 / total, names.total[i] as f64 / total));
            }
        }
    }
    let index = Index {
        format: "flamesite-history",
        version: 1,
        graph,
        runs: runs.iter().map(|r| RunPoint { url: r.url.clone(), date: r.record.date.rfc3339(), title: r.record.title.clone() }).collect(),
        names: by_name.keys().cloned().collect(),
        buckets: buckets(runs.len()),
    };
    Ok(History { index, points: by_name.into_values().collect() })
}

/// `b/<k>.json`: `{"name": [[run, self, total], …], …}` for the names of bucket `k`, shares
/// rounded to six decimals.
pub fn bucket_json(h: &History, k: usize) -> String {
    let mut out = serde_json::Map::new();
    for (name, points) in h.index.names.iter().zip(&h.points) {
        if fnv1a(name) as usize % h.index.buckets != k {
            continue;
        }
        let round = |x: f64| (x * 1e6).round() / 1e6;
        let list: Vec<serde_json::Value> = points.iter().map(|&(r, s, t)| serde_json::json!([r, round(s), round(t)])).collect();
        out.insert(name.clone(), serde_json::Value::Array(list));
    }
    let mut text = serde_json::Value::Object(out).to_string();
    text.push('\n');
    text
}
