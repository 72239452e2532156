//! `flamesite diff BEFORE AFTER -o DIR`: the comparison page of two profile files, as a
//! folder any static host serves, for a CI job that compares a change's benchmark profile with
//! main's. The page, its graphs and the page script are those of a site's comparison page. A
//! driver beside [`crate::build`]: it calls the phases (ingest's decoders, derive's change list,
//! the site's page, the output's staging) as the build does, and none of them calls it.

use std::collections::BTreeMap;
use std::path::Path;

use crate::archive::run::{Archive, Comparison, Compared, GraphChanges, GraphInfo, Run, RunRecord, Series};
use crate::archive::{self, slug};
use crate::config::Config;
use crate::graph::diff;
use crate::ingest::decode;
use crate::output::staging::Staging;
use crate::site::pages::Site;
use crate::site::theme::Theme;
use crate::store::chunk;

/// What `diff` made.
pub struct Made {
    /// Graph names compared.
    pub graphs: Vec<String>,
    /// Graphs of only one of the two files, not compared.
    pub unmatched: Vec<String>,
    /// Each graph compared: its name, its unit and the differential table of the two.
    pub tables: Vec<(String, String, crate::graph::frames::FrameTable)>,
    /// Per graph compared, the samples each profile's values rest on, when known, and the
    /// later profile's graph that counts them (`decode::draws`).
    pub samples: Vec<((Option<u64>, Option<u64>), Option<String>)>,
}

/// Refuses `out` when it holds a site `flamesite build` made (an index that lists series, not
/// a comparison): replacing it would lose that archive and its record of names.
fn refuse_a_built_site(out: &Path) -> Result<(), String> {
    let shown = || crate::error::shown(out);
    let bytes = match crate::output::read_index(out) {
        Ok(None) => return Ok(()),
        Ok(Some(b)) => b,
        Err(e) => return Err(format!("{e}: flamesite diff replaces only a folder it wrote itself; choose another -o folder")),
    };
    match crate::output::recognise(&bytes) {
        Some(crate::output::SiteKind::Comparison) => Ok(()),
        Some(crate::output::SiteKind::Archive) => Err(format!(
            "{} holds a site that flamesite build made (its index.json lists series); flamesite diff replaces only a folder it wrote itself: choose another -o folder",
            shown()
        )),
        None => Err(format!(
            "{}'s index.json is not one flamesite wrote whole (cut short, or another program's); flamesite diff replaces only a folder it wrote itself: choose another -o folder",
            shown()
        )),
    }
}

/// Compares the profiles `before` and `after`, and writes their comparison page to the folder
/// `out` when one is given (replacing a previous one whole, never a folder flamesite did not
/// write).
pub fn standalone(config: &Config, before: &Path, after: &Path, out: Option<&Path>) -> Result<Made, String> {
    let read = |p: &Path| decode::decode_file(p, config).map_err(|e| format!("{}: {e}", p.display()));
    // Both at once: a decoder keeps about one core busy (a folded profile's parse and merge
    // threads wait on each other), and one after the other left the second core idle.
    let (b, a) = rayon::join(|| read(before), || read(after));
    let (mut b, mut a) = (b?, a?);
    // The graphs of both, each with its folder (named as the later profile's graphs are). A
    // time-order graph is not compared: two profiles' stacks in time do not line up.
    a.graphs.retain(|g| !g.timeline);
    b.graphs.retain(|g| !g.timeline);
    let names: Vec<&str> = a.graphs.iter().map(|g| g.name.as_str()).collect();
    let draws = |d: &decode::Decoded| decode::draws(&d.graphs, &d.graphs.iter().map(|g| g.unit.as_str()).collect::<Vec<_>>());
    let (draws_b, draws_a) = (draws(&b), draws(&a));
    let mut samples = Vec::new();
    let mut tables = Vec::new();
    let mut folders = Vec::new();
    let mut unmatched = Vec::new();
    for ((ga, folder), da) in a.graphs.iter().zip(slug::graph_folders(&names)).zip(&draws_a) {
        match b.graphs.iter().position(|g| g.name == ga.name) {
            Some(ib) => {
                let gb = &b.graphs[ib];
                samples.push(((draws_b[ib].map(|d| d.0), da.map(|d| d.0)), da.map(|d| a.graphs[d.1].name.clone())));
                tables.push((ga.name.clone(), ga.unit.clone(), diff::merge(&gb.table, &ga.table).map_err(|e| e.to_string())?));
                folders.push(folder);
            }
            None => unmatched.push(ga.name.clone()),
        }
    }
    unmatched.extend(b.graphs.iter().filter(|g| !a.graphs.iter().any(|x| x.name == g.name)).map(|g| g.name.clone()));
    if tables.is_empty() {
        return Err(format!("{} and {} have no graph (sample type) in common", before.display(), after.display()));
    }
    let Some(out) = out else {
        return Ok(Made { graphs: tables.iter().map(|t| t.0.clone()).collect(), unmatched, tables, samples });
    };
    let theme = Theme::load(config.theme_dir.as_deref())?;
    refuse_a_built_site(out)?;
    let staging = Staging::new(out).map_err(|e| e.to_string())?;
    let write = |rel: &str, bytes: &[u8]| staging.write(rel, bytes).map_err(|e| e.to_string());
    let mut graphs = Vec::new();
    let mut changes: Vec<GraphChanges> = Vec::new();
    let mut preload = Vec::new();
    let sides = chunk::Sides::new("the first profile", "the second profile");
    for (((name, unit, table), folder), (drawn, drawn_by)) in tables.iter().zip(folders).zip(&samples) {
        let data = format!("g/{folder}/");
        let sink = |rel: &str, bytes: &[u8]| write(&format!("{data}{rel}"), bytes).map_err(crate::error::FillError::Write);
        let manifest = chunk::encode_graph(name, unit, table, &sides, &config.chunks, config.palette, &sink).map_err(|e| e.to_string())?;
        if graphs.is_empty() {
            preload = manifest.first_view(crate::ingest::FIRST_VIEW_ROWS);
        }
        let total = manifest.diff.as_ref().map_or(manifest.total, |d| d.total_after);
        graphs.push(GraphInfo { name: name.clone(), unit: unit.clone(), total, frames: manifest.frames, data, differential: true, decimals: manifest.decimals, timeline: false, draws: drawn.1, drawn_by: drawn_by.clone() });
        changes.push(crate::derive::listed(name, unit, table, *drawn));
    }
    let run = |path: &Path, d: &decode::Decoded| -> Result<Run, String> {
        let file = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned());
        let mtime = std::fs::metadata(path).ok().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs() as i64);
        let (info, _) = archive::describe(&file, None, &d.metadata, None, mtime, false)?;
        let record = RunRecord {
            source: path.display().to_string(),
            stamps: Default::default(),
            key: String::new(),
            format: d.format.into(),
            metadata: d.metadata.clone(),
            graphs: Vec::new(),
            preload: Vec::new(),
            preview: false,
            series: String::new(),
            date: info.date,
            date_from: info.date_from.to_string(),
            title: file,
            labels: BTreeMap::new(),
            notes: None,
            warnings: Vec::new(),
        };
        Ok(Run { record, hash: 0, slug: String::new(), url: String::new(), series: 0, prev: None, next: None, compare: None, vs_baseline: None })
    };
    let top = None;
    let made = Compared { key: String::new(), graphs: graphs.clone(), preload, preview: false, top, budgets: Vec::new() };
    let archive = Archive {
        runs: vec![run(before, &b)?, run(after, &a)?],
        series: vec![Series { name: "diff".into(), url: String::new(), runs: vec![0, 1], baseline: None }],
        comparisons: vec![Comparison { before: 0, after: 1, baseline: false, url: String::new(), made }],
    };
    let lists = changes.clone();
    let get = move |_: &str| lists.clone();
    let names = slug::Record::default();
    let no_history = |_: usize, _: usize| Err("no history".to_string());
    let site = Site { config, theme: &theme, archive: &archive, names: &names, base: 0, changes: &get, history: &no_history, change_points: Default::default(), in_series: Default::default() };
    write("index.html", site.standalone_comparison(0)?.as_bytes())?;
    for (name, bytes) in &theme.statics {
        write(&format!("static/{name}"), bytes)?;
    }
    // Marks the folder as flamesite's, so that the next `diff` into it may replace it.
    let index = serde_json::json!({
        "format": "flamesite-index", "version": crate::site::index_json::VERSION, "series": [],
        "comparison": { "before": before.display().to_string(), "after": after.display().to_string(), "graphs": graphs },
    });
    write("index.json", format!("{index}\n").as_bytes())?;
    staging.commit(true, false).map_err(|e| e.to_string())?;
    Ok(Made { graphs: graphs.into_iter().map(|g| g.name).collect(), unmatched, tables, samples })
}
