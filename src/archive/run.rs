//! A run as the phases after ingest see it: its record, and the stamps that tell a rebuild
//! whether its files changed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::When;

/// The identity of a file as git's index keeps it: size, modification and change times,
/// inode and device. A file with the same stamp as at the last build is not read again; a
/// file changed in place gets a new change time, so a copy that keeps the old modification
/// time (`cp -p`) is still noticed.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    /// Change time, nanoseconds since the epoch.
    pub ctime: i64,
    /// Inode.
    pub ino: u64,
    /// Device.
    pub dev: u64,
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            size: meta.len(),
            mtime: meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec()),
            ctime: meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }

    /// Its modification time in whole seconds since the epoch.
    pub fn mtime_seconds(&self) -> i64 {
        self.mtime.div_euclid(1_000_000_000)
    }
}

/// One graph of a run, as ingest made it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GraphInfo {
    /// Its name (the sample type).
    pub name: String,
    /// Unit of its values.
    pub unit: String,
    /// Total value.
    pub total: u64,
    /// Number of frames.
    pub frames: u64,
    /// Its data folder, relative to the run's folder (`g/samples/`).
    pub data: String,
    /// Whether it is differential (a comparison, or a two-count profile): its folder then
    /// holds its other layouts too.
    #[serde(default)]
    pub differential: bool,
    /// Decimal places of its values (fractional counts; see `FrameTable::decimals`).
    #[serde(default)]
    pub decimals: u32,
    /// Whether it is a time-order graph (stacks in the order they were taken, not merged:
    /// `graph::frames::Timeline`), which is never compared with another run's.
    #[serde(default)]
    pub timeline: bool,
    /// How many samples its values rest on, where the profile says
    /// (`ingest::decode::draws`): the sampling noise of its shares follows from it.
    #[serde(default)]
    pub draws: Option<u64>,
    /// The graph of the same run that counts those samples (itself when its unit counts
    /// them): graphs with the same one show the same samples, and a change among them is
    /// counted once.
    #[serde(default)]
    pub drawn_by: Option<String>,
}

/// Everything the later phases need to know of one run: what the profile held, what its
/// sidecars and path say about it, and the identity of the files it was made from (so that a
/// rebuild can tell, without reading them, that nothing changed).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// Path of the profile relative to the input folder.
    pub source: String,
    /// The profile's and its sidecars' stamps when it was read.
    pub stamps: Stamps,
    /// Key of its graph files in the cache (a hash of its bytes and the settings).
    pub key: String,
    /// Format it was read as.
    pub format: String,
    /// What the profile says about itself (time, duration, …).
    pub metadata: BTreeMap<String, String>,
    /// Its graphs, the default one first.
    pub graphs: Vec<GraphInfo>,
    /// Files of its first graph's first view, relative to that graph's folder.
    pub preload: Vec<String>,
    /// Whether it has a link-preview image ([`PREVIEW`]).
    pub preview: bool,
    /// Its series.
    pub series: String,
    /// When it was taken.
    pub date: When,
    /// Where the date came from: `sidecar`, `profile`, `pattern`, `file name` or `file time`.
    pub date_from: String,
    /// Its title.
    pub title: String,
    /// Labels from its sidecar.
    pub labels: BTreeMap<String, String>,
    /// Its notes (sidecar `NAME.md`), rendered and sanitised.
    pub notes: Option<String>,
    /// Warnings of reading it, without the path.
    pub warnings: Vec<String>,
}

/// The stamps of a profile and of its sidecar files (`None`: no such sidecar).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stamps {
    /// The profile file.
    pub profile: Stamp,
    /// `NAME.toml`.
    pub toml: Option<Stamp>,
    /// `NAME.md`.
    pub md: Option<Stamp>,
}


/// The archive: every run with its URL and neighbours, every series with its runs. Made by
/// [`group`] from the runs' records, before any page exists; the derive phase adds the
/// comparisons.
#[derive(Debug, Default)]
pub struct Archive {
    /// Every run, sorted by source path.
    pub runs: Vec<Run>,
    /// Every series, sorted by name.
    pub series: Vec<Series>,
    /// Every comparison of two runs, sorted by URL.
    pub comparisons: Vec<Comparison>,
}

/// A comparison of two runs of a series: a run with the one before it, or with the series'
/// baseline.
#[derive(Debug)]
pub struct Comparison {
    /// The earlier run (an index into [`Archive::runs`]).
    pub before: usize,
    /// The later run.
    pub after: usize,
    /// Whether `before` is the series' baseline (else it is the previous run).
    pub baseline: bool,
    /// Its page, relative to the site root: `p/<after>/compare/` (with the previous run) or
    /// `p/<after>/vs/<before>/` (with the baseline).
    pub url: String,
    /// What it found.
    pub made: Compared,
}

/// What the derive phase made of a comparison: its graph files (a cache entry) and what the
/// pages say of it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Compared {
    /// Key of its cache entry, made from the keys of the two runs.
    pub key: String,
    /// Its differential graphs, one per graph name the two runs share; `total` is the later
    /// run's, `data` relative to the comparison's folder.
    pub graphs: Vec<GraphInfo>,
    /// Files of its first graph's first view.
    pub preload: Vec<String>,
    /// Whether it has a link-preview image.
    pub preview: bool,
    /// The function whose self share grew most, in the first graph, if any grew.
    pub top: Option<Regression>,
    /// The `[[budget]]`s of site.toml it exceeded, in the order of its graphs and of the budgets.
    #[serde(default)]
    pub budgets: Vec<Exceeded>,
}

/// A `[[budget]]` of site.toml that a comparison exceeded: the total share of the functions its
/// regular expression matches (their frames counted once) grew by more than it allows.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Exceeded {
    /// The graph.
    pub graph: String,
    /// The budget's regular expression.
    pub function: String,
    /// How much the matched functions' total share grew, in percentage points.
    pub increase_pp: f64,
    /// How much it allows.
    pub max_increase_pp: f64,
}

/// A function whose share of the total grew.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Regression {
    /// Its graph.
    pub graph: String,
    /// The function.
    pub name: String,
    /// Growth of its self share, in percentage points.
    pub points: f64,
    /// How many functions its graph's two runs hold between them: it is the largest growth
    /// of that many (`GraphChanges::functions`; 0: not known).
    #[serde(default)]
    pub functions: usize,
}

/// The list of a comparison page: per graph, the functions whose self share grew most and
/// shrank most.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GraphChanges {
    /// The graph.
    pub graph: String,
    /// Its unit.
    pub unit: String,
    /// Decimal places of its values.
    #[serde(default)]
    pub decimals: u32,
    /// Total of the earlier run.
    pub total_before: u64,
    /// Total of the later run.
    pub total_after: u64,
    /// The samples the earlier run's values rest on, when known (`GraphInfo::draws`).
    #[serde(default)]
    pub samples_before: Option<u64>,
    /// The later run's.
    #[serde(default)]
    pub samples_after: Option<u64>,
    /// Functions whose self share grew, most first.
    pub grew: Vec<crate::graph::diff::Change>,
    /// Functions whose self share shrank, most first.
    pub shrank: Vec<crate::graph::diff::Change>,
    /// How many functions the two runs' graphs hold between them: how many changes a
    /// regression is the largest of (0 in a record made before it was kept: not known).
    #[serde(default)]
    pub functions: usize,
}

/// A run in the archive.
#[derive(Debug)]
pub struct Run {
    /// What ingest learnt of it.
    pub record: RunRecord,
    /// A hash of the record: equal hashes, equal records.
    pub hash: u64,
    /// Its slug ([`super::slug`]).
    pub slug: String,
    /// Its page, relative to the site root: `p/<slug>/`.
    pub url: String,
    /// Its series (an index into [`Archive::series`]).
    pub series: usize,
    /// The run before it in its series (an index into [`Archive::runs`]).
    pub prev: Option<usize>,
    /// The run after it in its series.
    pub next: Option<usize>,
    /// Its comparison with the previous run (an index into [`Archive::comparisons`]).
    pub compare: Option<usize>,
    /// Its comparison with the series' baseline.
    pub vs_baseline: Option<usize>,
}

/// A series in the archive.
#[derive(Debug)]
pub struct Series {
    /// Its name.
    pub name: String,
    /// Its page, relative to the site root: `s/<slug>/`.
    pub url: String,
    /// Its runs (indexes into [`Archive::runs`]), oldest first: by date, then source path.
    pub runs: Vec<usize>,
    /// Its baseline run, when `archive.baselines` names one.
    pub baseline: Option<usize>,
}

/// Groups runs (each a record, its hash and its slug) into series ordered by date, naming
/// the series with `names`. Returns the archive and the series names that collided.
pub fn group(runs: Vec<(RunRecord, u64, String)>, names: &mut super::slug::Record) -> (Archive, Vec<super::slug::Collision>) {
    let mut runs: Vec<Run> = runs
        .into_iter()
        .map(|(record, hash, slug)| Run { url: super::slug::run_folder(&slug), record, hash, slug, series: 0, prev: None, next: None, compare: None, vs_baseline: None })
        .collect();
    runs.sort_by(|a, b| a.record.source.cmp(&b.record.source));
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        by_name.entry(run.record.series.as_str()).or_default().push(i);
    }
    let names_sorted: Vec<&str> = by_name.keys().copied().collect();
    let (slugs, collisions) = super::slug::assign_series(&names_sorted, names);
    let mut series: Vec<Series> = by_name
        .into_iter()
        .zip(slugs)
        .map(|((name, mut members), slug)| {
            members.sort_by(|&a, &b| (runs[a].record.date, &runs[a].record.source).cmp(&(runs[b].record.date, &runs[b].record.source)));
            Series { name: name.to_string(), url: format!("s/{slug}/"), runs: members, baseline: None }
        })
        .collect();
    series.sort_by(|a, b| a.name.cmp(&b.name));
    for (si, s) in series.iter().enumerate() {
        for (k, &i) in s.runs.iter().enumerate() {
            let run = &mut runs[i];
            run.series = si;
            run.prev = k.checked_sub(1).map(|j| s.runs[j]);
            run.next = s.runs.get(k + 1).copied();
        }
    }
    (Archive { runs, series, comparisons: Vec::new() }, collisions)
}
