//! The JSON of a graph: its manifest (`manifest.json`: every file of the graph and what a
//! reader needs to know of it) and its name files (`n/<k>.json`), as serde writes and reads
//! them, and what the page and the build ask of a manifest (its contents' version, the files
//! of its first view).

use serde::{Deserialize, Serialize};

use crate::store::sandwich::SandwichRef;
use super::format::{DIFF_VERSION, LAYOUTS_VERSION, MANIFEST_VERSION, PACKED_VERSION, VERSION};


/// Most decimal places a manifest may state: more than a `u64` value has digits (found by
/// fuzzing the chunk reader: a damaged manifest's `decimals` overflowed the formatter).
pub const MAX_STORED_DECIMALS: u32 = 19;

/// Whether a count is 0: such keys (`decimals`) are left out of the JSON written.
pub(crate) fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// `manifest.json` of a graph.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Always `flamesite-graph`.
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// Name of the graph (the sample type).
    pub graph: String,
    /// Unit of every value.
    pub unit: String,
    /// Decimal places of every value: `v` stands for `v / 10^decimals` units. Absent (0)
    /// but for fractional counts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub decimals: u32,
    /// Whether chunks carry the before columns.
    pub differential: bool,
    /// The root's total.
    pub total: u64,
    /// Sum of the before counts of a differential graph.
    pub total_before: Option<u64>,
    /// Number of frames.
    pub frames: u64,
    /// Number of rows (largest depth plus one).
    pub depth: u32,
    /// Palette the colours were made with.
    pub palette: String,
    /// Canvas width the width classes are computed for.
    pub root_width: u32,
    /// Ratio between consecutive width classes.
    pub class_factor: u32,
    /// Type of every value in the chunk and search files: `u32` when the totals fit in 32
    /// bits, else `f64` (version 1 has no such key: always `f64`).
    #[serde(default = "f64_values")]
    pub values: String,
    /// The name table, in files of consecutive name ids.
    pub names: Vec<NamesRef>,
    /// Every chunk file.
    pub chunks: Vec<ChunkRef>,
    /// Every search bucket.
    pub search: Vec<SearchRef>,
    /// What a differential graph (versions 3 to 5) adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffInfo>,
    /// Precomputed sandwiches of a plain graph's most called and hottest functions
    /// (`super::sandwich`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandwiches: Vec<SandwichRef>,
    /// `"time"` for a time-order graph (version 12): stacks in the order they were taken, each
    /// merged with the one before along what they share only, children in time order. Absent:
    /// a flame graph, children by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// The manifest of a differential graph says how it is laid out, where its other layouts
/// are, its two totals and the scales of its colours.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DiffInfo {
    /// `union`, `after` or `before` (see `graph::diff`).
    pub layout: String,
    /// The other layouts' folders, relative to this graph's folder, by layout (versions 3 to
    /// 7; empty and left out from version 8 on, whose chunks hold every layout).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub layouts: std::collections::BTreeMap<String, String>,
    /// Sum of the first run's values.
    pub total_before: u64,
    /// Sum of the second run's values.
    pub total_after: u64,
    /// The largest change of a frame's total share, in percentage points (the root excluded):
    /// full colour in the share view.
    pub scale_points: f64,
    /// The largest change of a frame's total value: full colour in the absolute view.
    pub scale_value: f64,
    /// What the two counts are, in the page's words; absent in graphs written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sides: Option<Sides>,
    /// `runs` (version 11) when the graph has no search buckets of its own: it compares two
    /// runs whose own graphs are laid out as its before and after layouts, and a search reads
    /// theirs (docs/FORMAT.md, "Differential graphs"). Absent: the graph's own buckets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}

/// Where a differential graph's search reads what was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffSearch {
    /// Its own search buckets (a two-count file, a CPI graph, `flamesite diff`'s page).
    Own,
    /// The two runs' own graphs, published beside it ([`DiffInfo::search`]).
    Runs,
}

/// What the two counts of a differential graph are, as noun phrases the page puts in its
/// sentences ("⊖ only in {before}") and, first letter up and a leading "the " dropped, on its
/// layout buttons: `the earlier run` and `this run` for a comparison of two runs, `instructions`
/// and `cycles` for a CPI graph, `the first count` and `the second count` for a two-count file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Sides {
    /// The first count (the `before` values).
    pub before: String,
    /// The second count (the `after` values).
    pub after: String,
}

impl Sides {
    /// The two sides named `before` and `after`.
    pub fn new(before: &str, after: &str) -> Sides {
        Sides { before: before.into(), after: after.into() }
    }
}

fn f64_values() -> String {
    "f64".into()
}

impl Manifest {
    /// The version of the contents of the graph's data files: a manifest of
    /// [`MANIFEST_VERSION`] states it by being differential or not; older ones were their
    /// files' version.
    pub fn content_version(&self) -> u32 {
        match self.version {
            8..=MANIFEST_VERSION if self.differential => LAYOUTS_VERSION,
            PACKED_VERSION..=MANIFEST_VERSION if self.differential => DIFF_VERSION,
            PACKED_VERSION..=MANIFEST_VERSION => VERSION,
            v => v,
        }
    }

    /// The files a page needs for its first view of a canvas `rows` rows tall, to preload from
    /// the HTML: the class-0 chunks starting above row `rows` and the name files up to their
    /// largest name id, paths relative to the graph folder.
    pub fn first_view(&self, rows: u32) -> Vec<String> {
        let chunks: Vec<&ChunkRef> = self.chunks.iter().filter(|c| c.class == 0 && c.depth[0] < rows).collect();
        if chunks.is_empty() {
            return Vec::new();
        }
        let name_max = chunks.iter().map(|c| c.name_max).max().unwrap_or(0);
        let names = self.names.iter().filter(|n| n.names[0] <= name_max).map(|n| n.file.clone());
        names.chain(chunks.iter().map(|c| c.file.clone())).collect()
    }
}

/// One file of the name table.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NamesRef {
    /// File name, relative to the graph folder.
    pub file: String,
    /// Half-open range of the name ids it holds.
    pub names: [u32; 2],
    /// File size.
    pub bytes: u64,
}

/// One chunk file in the manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChunkRef {
    /// File name, relative to the graph folder.
    pub file: String,
    /// Width class: 0 is visible at the root view.
    pub class: u32,
    /// Half-open range of depths.
    pub depth: [u32; 2],
    /// Smallest offset and largest end of its frames.
    pub offset: [u64; 2],
    /// Number of frames.
    pub frames: u32,
    /// Largest total among its frames.
    pub max_total: u64,
    /// Largest name id among its frames: the name files a reader needs to label it.
    pub name_max: u32,
    /// File size.
    pub bytes: u64,
    /// Of a differential graph (version 8): `offset` and `max_total` in the after layout
    /// (`offset` and `max_total` above are the union layout's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Span>,
    /// The same in the before layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Span>,
    /// Of a plain graph (version 12): the smallest offset and largest end of its frames in the
    /// left-heavy layout, whose offsets are in a file of their own ([`left_file`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<[u64; 2]>,
}

/// The file of a plain graph's chunk's left-heavy offsets (docs/FORMAT.md "Left-heavy offsets"):
/// `l/<class>-<n>.bin.gz` for the chunk `c/<class>-<n>.bin.gz`. Apart from the chunk, so that a
/// view by name, the default, never fetches them.
pub fn left_file(chunk: &str) -> String {
    format!("l/{}", chunk.strip_prefix("c/").unwrap_or(chunk))
}

/// Where a chunk's frames lie in one layout of a differential graph.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Span {
    /// Smallest offset and largest end of its frames.
    pub offset: [u64; 2],
    /// Largest width among its frames.
    pub max_total: u64,
}

/// One search bucket in the manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SearchRef {
    /// File name, relative to the graph folder.
    pub file: String,
    /// Half-open range of name ids.
    pub names: [u32; 2],
    /// Number of intervals.
    pub intervals: u64,
    /// File size.
    pub bytes: u64,
}

/// One name file, `n/<k>.json`: the names of ids `lo..hi` (see [`NamesRef`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Names {
    /// The names.
    pub names: Vec<String>,
    /// `0xRRGGBB` per name: written up to version 8; a reader reckons them from the names and
    /// the manifest's palette (docs/FORMAT.md, "Colours").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub colors: Vec<u32>,
    /// Sum of self per name.
    #[serde(rename = "self")]
    pub self_: Vec<u64>,
    /// Length of the union of the name's extents (of a differential graph: the sum of the
    /// after totals of its frames with no ancestor of the same name).
    pub total: Vec<u64>,
    /// Of a differential graph: self before, per name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_before: Option<Vec<u64>>,
    /// Of a differential graph: total before, per name, recursion counted once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_before: Option<Vec<u64>>,
    /// Per name, the profile's own form of a name flamesite renamed (a class the JVM
    /// generated, docs/FORMAT.md), else null; absent when no name of the file was renamed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<Option<String>>,
}
