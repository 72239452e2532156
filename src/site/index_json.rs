//! `index.json`: the listing of the site for machines (see `docs/FORMAT.md`). These are its
//! wire types; [`crate::site`] fills them from the archive.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::archive::slug;

/// Version of `index.json` and of the series listings this build writes.
pub const VERSION: u32 = 3;

/// `index.json`: the listing of the site for machines (see `docs/FORMAT.md`). Since version 3
/// the profiles are listed per series ([`SeriesIndex`]), so that adding a run rewrites its
/// series' listing and this small file, not a listing of the whole archive.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Index {
    /// Always `flamesite-index`.
    pub format: String,
    /// Version of this listing's format.
    pub version: u32,
    /// Every series, sorted by name.
    pub series: Vec<SeriesEntry>,
    /// Every built profile, sorted by source path: version 2 and earlier only (read for the
    /// names it records).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<ProfileEntry>,
    /// Who holds which name besides the profiles listed: every series ever published with its
    /// slug, and the sources that hold a name but are not on the site now (removed, or failing
    /// to build; version 2: every source), so that a build in a fresh checkout never gives a
    /// published URL to another profile.
    #[serde(default)]
    pub names: slug::Record,
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
    /// Its listing of profiles ([`SeriesIndex`]), relative to the site root (version 3).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub index: String,
    /// Number of runs.
    pub runs: usize,
    /// Page of its newest run.
    pub newest: String,
}

/// `s/<series>/index.json`: the profiles of one series (version 3).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SeriesIndex {
    /// Always `flamesite-series`.
    pub format: String,
    /// Version of this listing's format, the same as `index.json`'s.
    pub version: u32,
    /// The series' name.
    pub series: String,
    /// Its page, relative to the site root.
    pub url: String,
    /// Its profiles, sorted by source path.
    pub profiles: Vec<ProfileEntry>,
    /// Its change points among its newest runs (derive::changes), oldest first (none in a
    /// listing written before change points were).
    #[serde(default)]
    pub changes: Vec<ChangeEntry>,
    /// The events those change points make, one per run, oldest first (README, "Change
    /// points and events"; none in a listing written before events were).
    #[serde(default)]
    pub events: Vec<EventEntry>,
}

/// An event in a series' `index.json` and `changes.json`: the change points of one run, told
/// as one change (docs/FORMAT.md).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EventEntry {
    /// The run it starts at: its slug.
    pub run: String,
    /// The function whose share shifted most at it, which names it.
    pub function: String,
    /// That function's share before, a fraction of 1.
    pub before: f64,
    /// From that run on.
    pub after: f64,
    /// How many functions' change points start at the run (the lead's included).
    pub functions: usize,
    /// How much of the profile moved across the run (0 to 1).
    pub moved: f64,
    /// Whether most of it moved: the profile changed shape.
    pub reshaped: bool,
    /// False while too few runs follow to tell it from a spike.
    pub confirmed: bool,
}

/// A change point in a series' `index.json` (docs/FORMAT.md).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChangeEntry {
    /// The graph followed (the newest run's first).
    pub graph: String,
    /// The function.
    pub function: String,
    /// The run it starts at: its slug.
    pub run: String,
    /// Its share of the total before and from that run on, fractions of 1.
    pub before: f64,
    /// From that run on.
    pub after: f64,
    /// False while too few runs follow to tell it from a spike.
    pub confirmed: bool,
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
    /// Decimal places of its values: `total` stands for `total / 10^decimals` (fractional
    /// counts). Absent when 0.
    #[serde(default, skip_serializing_if = "crate::store::chunk::is_zero")]
    pub decimals: u32,
    /// `"time"` for a time-order graph (stacks in the order they were taken, not merged);
    /// absent for a flame graph, whose stacks are merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// How many samples its values rest on, when the profile says (its unit counts them, or a
    /// graph of the same samples does, as a Go CPU profile's `samples` does for its `cpu`):
    /// the sampling noise of its shares follows from it. Absent when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
}

impl GraphEntry {
    /// The entry of graph `g` of a run, its data folder `data`.
    pub fn of(g: &crate::archive::run::GraphInfo, data: String) -> GraphEntry {
        GraphEntry { name: g.name.clone(), unit: g.unit.clone(), total: g.total, frames: g.frames, data, decimals: g.decimals, order: g.timeline.then(|| "time".to_string()), samples: g.draws }
    }
}


