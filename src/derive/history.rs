//! A function's history across a series: for every run of a series (its first graph), each
//! function's self and total as shares of the run's total, so that the series page can plot
//! any function, or any regex of functions, over the dates.
//!
//! The runs of a series are cut into spans of [`SPAN`] consecutive runs, oldest first. The
//! history is published as `s/<series>/history/names.json` (the runs and the spans) and, per
//! span `s`, `history/<s>/names.json` (every function name of its runs) and
//! `history/<s>/b/<k>.json`, the points of the names whose FNV-1a hash is `k` modulo the span's
//! bucket count. A page fetches each span's names, matches them, and fetches only the buckets
//! of the names that matched. A span's files depend on its runs alone, so adding a run to a
//! series rewrites the files of its last span (and the small index), never the whole history:
//! the cost of adding a run does not grow with the series.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::archive::run::{Archive, GraphInfo, Run};
use crate::graph::color::fnv1a32;
use crate::store::chunk::Manifest;

/// A span's bucket count is its run count divided by this, rounded up: a full span of 64 runs
/// of 20,000 functions has 8 buckets of some 2,500 functions (160,000 points) each.
pub const RUNS_PER_BUCKET: usize = 8;

/// Runs per span: a series of 1,000 runs has 16 spans.
pub const SPAN: usize = 64;

/// Number of buckets of a span of `runs` runs.
pub fn buckets(runs: usize) -> usize {
    runs.div_ceil(RUNS_PER_BUCKET).max(1)
}

/// The spans of a series of `runs` runs: `(first run, number of runs)`, oldest first.
pub fn spans(runs: usize) -> Vec<(usize, usize)> {
    (0..runs.div_ceil(SPAN)).map(|s| (s * SPAN, SPAN.min(runs - s * SPAN))).collect()
}

/// `names.json` of a series' history.
#[derive(Serialize)]
pub struct Index {
    /// Always `flamesite-history`.
    pub format: &'static str,
    /// 3: span files are gzip members named `.json.gz` (version 2 had them as plain JSON,
    /// version 1 one names list and one set of buckets for the whole series).
    pub version: u32,
    /// The graph followed: the name of the newest run's first graph.
    pub graph: String,
    /// The runs, oldest first: URL (relative to the site root), date, title.
    pub runs: Vec<RunPoint>,
    /// The spans, oldest first: span `s` has the files `<s>/names.json.gz` and `<s>/b/<k>.json.gz`.
    pub spans: Vec<SpanInfo>,
}

/// A span of the history.
#[derive(Serialize)]
pub struct SpanInfo {
    /// Index of its first run in `runs`.
    pub first: usize,
    /// Its number of runs.
    pub runs: usize,
    /// Number of its bucket files, `b/0.json.gz` ..
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
    /// Its comparison with the run before (relative to the site root), when it has one: where
    /// a point of the history leads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<String>,
}

/// The index of series `si`'s history: made from the records alone, no file is read.
pub fn index(archive: &Archive, si: usize) -> Index {
    let runs: Vec<&Run> = archive.series[si].runs.iter().map(|&i| &archive.runs[i]).collect();
    Index {
        format: "flamesite-history",
        version: 3,
        graph: followed(&runs),
        runs: runs
            .iter()
            .map(|r| RunPoint {
                url: r.url.clone(),
                date: r.record.date.rfc3339(),
                title: r.record.title.clone(),
                compare: r.compare.map(|c| archive.comparisons[c].url.clone()),
            })
            .collect(),
        spans: spans(runs.len()).into_iter().map(|(first, n)| SpanInfo { first, runs: n, buckets: buckets(n) }).collect(),
    }
}

fn followed(runs: &[&Run]) -> String {
    runs.last().and_then(|r| followed_graph(r)).map_or(String::new(), |g| g.name.clone())
}

/// The graph a series' history (and its change points) follows: the first graph of its newest
/// run, `newest`.
pub fn followed_graph(newest: &Run) -> Option<&GraphInfo> {
    newest.record.graphs.first()
}

/// The spans of a series of `runs` runs that change points are looked for in: the newest two,
/// so that adding a run reads about as much whatever the series' length.
pub fn recent_spans(runs: usize) -> std::ops::Range<usize> {
    let n = runs.div_ceil(SPAN);
    n.saturating_sub(2)..n
}

/// One span of a series' history, as read from its runs' name files.
pub struct Span {
    /// Every function name of its runs, sorted (`<s>/names.json`).
    pub names: Vec<String>,
    /// Its bucket count.
    pub buckets: usize,
    /// Per name (in `names` order), its points: (run index in the series, self share, total
    /// share), shares as fractions of the run's total.
    pub points: Vec<Vec<(u32, f64, f64)>>,
}

/// Where a file of a run's graph folder is, and why a file that could not be read is not what
/// its run's build wrote, if it is not (edited or damaged since).
pub struct Files<'f> {
    /// Where file `rel` of a run's graph is.
    pub at: &'f (dyn Fn(&Run, &GraphInfo, &str) -> PathBuf + Sync),
    /// Why that file is not the one the run's build wrote, if it is not.
    pub damaged: &'f (dyn Fn(&Run, &GraphInfo, &str) -> Option<String> + Sync),
}

impl Files<'_> {
    /// File `rel` of `run`'s graph `g`, read by `read`; when it cannot be, why it is damaged
    /// if it is, else why it could not be read.
    fn read<T>(&self, run: &Run, g: &GraphInfo, rel: &str, read: impl Fn(&Path) -> Result<T, String>) -> Result<T, String> {
        read(&(self.at)(run, g, rel)).map_err(|e| (self.damaged)(run, g, rel).unwrap_or(e))
    }
}

/// Reads span `span` of series `si`'s history from its runs' first graphs, from `files` (their
/// manifests and name files, the only ones read).
pub fn collect(archive: &Archive, si: usize, span: usize, files: &Files) -> Result<Span, String> {
    let runs: Vec<&Run> = archive.series[si].runs.iter().map(|&i| &archive.runs[i]).collect();
    let graph = followed(&runs);
    let (first, count) = spans(runs.len()).get(span).copied().unwrap_or((0, 0));
    let mut by_name: BTreeMap<String, Vec<(u32, f64, f64)>> = BTreeMap::new();
    for (k, run) in runs.iter().enumerate().skip(first).take(count) {
        let Some(g) = run.record.graphs.iter().find(|g| g.name == graph) else { continue };
        let manifest: Manifest = files.read(run, g, "manifest.json", crate::store::chunk::read_manifest)?;
        let total = manifest.diff.as_ref().map_or(manifest.total, |d| d.total_after) as f64;
        if total <= 0.0 {
            continue;
        }
        for f in &manifest.names {
            let names = files.read(run, g, &f.file, crate::store::chunk::read_names)?;
            for (i, name) in names.names.iter().enumerate() {
                if f.names[0] as usize + i == 0 {
                    continue; // the root
                }
                by_name.entry(name.clone()).or_default().push((k as u32, names.self_[i] as f64 / total, names.total[i] as f64 / total));
            }
        }
    }
    Ok(Span { names: by_name.keys().cloned().collect(), buckets: buckets(count), points: by_name.into_values().collect() })
}

/// `<s>/names.json`: `{"names": [...]}`.
pub fn names_json(span: &Span) -> String {
    let mut text = serde_json::json!({ "names": span.names }).to_string();
    text.push('\n');
    text
}

/// `<s>/b/<k>.json`: `{"name": [[run, self, total], …], …}` for the names of bucket `k`,
/// shares rounded to six decimals.
pub fn bucket_json(span: &Span, k: usize) -> String {
    let mut out = serde_json::Map::new();
    for (name, points) in span.names.iter().zip(&span.points) {
        if fnv1a32(name.as_bytes()) as usize % span.buckets != k {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A name's bucket is part of the published format (the page script fetches the bucket it
    /// computes): FNV-1a 32 of its UTF-8 bytes modulo the span's bucket count. The hashes were
    /// computed outside this code: "main" is 0xEA90E208 (bucket 0 of 8),
    /// "std::vec::Vec<T>::push" 0xC2DD1DDC (bucket 4), "naïve::λ" 0x11E27BBC (bucket 4).
    #[test]
    fn a_name_is_in_the_bucket_of_its_fnv1a32_hash() {
        let names = ["main", "naïve::λ", "std::vec::Vec<T>::push"];
        let span = Span { names: names.iter().map(|n| n.to_string()).collect(), buckets: 8, points: vec![vec![(0, 0.5, 1.0)]; 3] };
        assert_eq!(bucket_json(&span, 0), "{\"main\":[[0,0.5,1.0]]}\n");
        assert_eq!(bucket_json(&span, 4), "{\"naïve::λ\":[[0,0.5,1.0]],\"std::vec::Vec<T>::push\":[[0,0.5,1.0]]}\n");
        for k in [1, 2, 3, 5, 6, 7] {
            assert_eq!(bucket_json(&span, k), "{}\n");
        }
    }
}
