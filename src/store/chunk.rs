//! Chunks: a laid-out [`FrameTable`] split into the files the page fetches, and read back.
//!
//! One graph becomes a manifest, a name table, binary columnar chunk files (a contiguous
//! range of depths each, narrow frames split off into fine width classes tiled by offset)
//! and search buckets (each function's disjoint value intervals). The byte layout is
//! specified in `docs/FORMAT.md`; [`encode`] writes it and [`read_graph`] reads it back, which
//! is how `flamesite fold` proves that the chunks lose nothing.

use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::graph::color::Palette;
use crate::config::ChunkConfig;
use crate::graph::diff::{self, Measure};
use crate::graph::frames::{topmost_frames, Before, FrameTable, Layout, NO_PARENT};
use crate::graph::lists::Lists;

use super::{gz, planes};
use super::columns::{pad8, put_column, put_u32, put_u32_column};
pub use super::columns::{Sink, Values};
pub use crate::graph::frames::self_by_name;
use super::sandwich::{self, SandwichRef};
use crate::error::FillError;

/// Value intervals by name id.
type Intervals = Lists<(u64, u64)>;

/// Version of the graph format written for a plain graph. [`read_graph`] reads versions 1
/// (values always f64) to [`DIFF_VERSION`].
pub const VERSION: u32 = 2;
/// Version written for a differential graph: its chunks carry each frame's values before and
/// after but not its widths, which follow from them (`graph::diff::widths`), its search files
/// each frame's values, and it comes in three layouts. Version 3 also wrote the widths;
/// version 4 had the same chunks as this one and search files of wider columns.
pub const DIFF_VERSION: u32 = 5;
/// Version of a differential graph's chunks that hold all three layouts: an offset column for
/// each (coded only). Its search buckets are of [`DIFF_VERSION`].
pub const LAYOUTS_VERSION: u32 = 6;
/// Version of every manifest written now: the graph's data files (chunks, name files, search
/// buckets, sandwiches) are gzip members named with `.gz` ([`gz`]), whose contents are those of
/// [`VERSION`] for a plain graph and for a differential one chunks of [`LAYOUTS_VERSION`] and
/// search buckets of [`DIFF_VERSION`], chunks and plain search buckets with coded columns
/// ([`CODED`]), parents given as rows of the chunk ([`PARENT_ROWS`]) and offsets from parents'
/// ([`FROM_PARENTS`]); its name files hold no colours (a reader reckons them from the names
/// and the palette); a comparison of two runs has no search buckets (its search reads its
/// runs' graphs: [`DiffSearch::Runs`]), and each chunk of a plain graph has a file of its
/// frames' left-heavy offsets beside it ([`LeftRef`]), which version 11 had not; version 10 had
/// the same files with a comparison's search buckets. Version 9
/// had the same files with offsets as gaps after the frame before
/// at their depth only. Version 8 had the same
/// files with ids and parents as steps and each name's colour in its name file; version 7 a
/// differential graph's layouts in three folders, each with its own chunks of version 5;
/// version 6 the same files as 7, their columns not coded.
pub const MANIFEST_VERSION: u32 = 12;
/// The manifest packed (see [`gz`]), beside `manifest.json`: what the page reads.
pub const PACKED_MANIFEST: &str = "manifest.json.gz";
/// The first manifest version whose data files are packed.
const PACKED_VERSION: u32 = 6;
/// The first differential version whose chunks leave the widths out.
const NO_WIDTHS_VERSION: u32 = 4;
const CHUNK_MAGIC: &[u8; 4] = b"FSCH";
const SEARCH_MAGIC: &[u8; 4] = b"FSSI";
/// Depths one chunk may span at most, so that a deep graph is fetched as the user scrolls.
const MAX_DEPTH_SPAN: u32 = 64;

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

/// Splits `table` into the files of one graph, handing each to `sink` as soon as it is made
/// (so they are never all in memory at once), and returns the manifest.
pub fn encode(
    graph: &str,
    unit: &str,
    table: &FrameTable,
    config: &ChunkConfig,
    palette: Palette,
    sink: Sink,
) -> Result<Manifest, FillError> {
    if table.before.is_some() {
        return Err(format!("graph {graph}: a differential table is written with its layouts (encode_graph)").into());
    }
    encode_layout(graph, unit, table, None, config, palette, sink, None, DiffSearch::Own, Order::Merged)
}

/// Writes a time-order graph ([`crate::graph::frames::Timeline`]): as [`encode`], its manifest
/// saying `"order": "time"`, and without left-heavy offsets (its children are in time order,
/// which is the point of it).
pub fn encode_time_order(graph: &str, unit: &str, table: &FrameTable, config: &ChunkConfig, palette: Palette, sink: Sink) -> Result<Manifest, FillError> {
    encode_layout(graph, unit, table, None, config, palette, sink, None, DiffSearch::Own, Order::Time)
}

/// How a graph's stacks were put together.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Merged, children by name: a flame graph.
    Merged,
    /// In the order they were taken: a time-order graph.
    Time,
}

/// The after and before layouts of a differential graph, beside the union layout its table
/// has: each frame's offset and width in each (`graph::diff::relayout`).
struct Others {
    after: (Vec<u64>, Vec<u64>),
    before: (Vec<u64>, Vec<u64>),
}

impl Others {
    /// Of a table `relayout` laid out as the union (its after columns set).
    fn of(union: &FrameTable) -> Result<Others, String> {
        let (before, after) = (union.before.as_ref().expect("a differential table"), union.after.as_ref().expect("relaid out"));
        let laid = |layout| {
            let (offset, total, _) = diff::laid_out(&union.parent, before, after, layout).map_err(|e| e.to_string())?;
            Ok::<_, String>((offset, total))
        };
        Ok(Others { after: laid(Layout::After)?, before: laid(Layout::Before)? })
    }
}

/// [`encode`], and for a differential graph (`table` in the union layout) with its other two
/// layouts' offsets in the same chunks.
#[allow(clippy::too_many_arguments)]
fn encode_layout(
    graph: &str,
    unit: &str,
    table: &FrameTable,
    sides: Option<&Sides>,
    config: &ChunkConfig,
    palette: Palette,
    sink: Sink,
    others: Option<&Others>,
    searched: DiffSearch,
    order: Order,
) -> Result<Manifest, FillError> {
    let n = table.len();
    let grand = table.grand_total();
    let values = Values::for_table(table);
    let width = config.root_width as u128;
    let factor = config.class_factor as u128;
    let k_max_of = |grand: u64| {
        let mut k = 1u32;
        let mut scale = width.saturating_mul(factor);
        while scale < grand as u128 {
            k += 1;
            scale = scale.saturating_mul(factor);
        }
        k
    };
    let k_max = k_max_of(grand);
    // The class of a frame `total` wide in a layout whose root is `grand` wide.
    let class_in = |total: u64, grand: u64| -> u32 {
        if total as u128 * width >= grand as u128 {
            return 0;
        }
        let k_max = k_max_of(grand);
        if total == 0 {
            return k_max;
        }
        let mut k = 1;
        let mut scale = total as u128 * width * factor;
        while k < k_max && scale < grand as u128 {
            k += 1;
            scale = scale.saturating_mul(factor);
        }
        k
    };
    // A differential graph's frame is in the class of its widest layout, so that every layout's
    // view finds it where that layout's widths say it is needed.
    let (ta, tb) = others.map_or((0, 0), |o| (o.after.1[0], o.before.1[0]));
    let class_of = |row: usize| -> u32 {
        let k = class_in(table.total[row], grand);
        match others {
            None => k,
            Some(o) => k.min(class_in(o.after.1[row], ta)).min(class_in(o.before.1[row], tb)),
        }
    };

    // Rows by (depth, row): a counting sort by depth keeps the depth-first (= offset) order.
    let depth_count = table.depth_count();
    let mut depth_start = vec![0usize; depth_count as usize + 1];
    for &d in &table.depth {
        depth_start[d as usize + 1] += 1;
    }
    for i in 0..depth_count as usize {
        depth_start[i + 1] += depth_start[i];
    }
    let mut by_depth = vec![0u32; n];
    let mut fill = depth_start.clone();
    for (row, &d) in table.depth.iter().enumerate() {
        by_depth[fill[d as usize]] = row as u32;
        fill[d as usize] += 1;
    }
    let mut classes: Vec<Vec<u32>> = vec![Vec::new(); k_max as usize + 1];
    for &row in &by_depth {
        classes[class_of(row as usize) as usize].push(row);
    }
    drop(by_depth);

    let target = config.target_frames as usize;
    // (class, rows) per chunk file, in manifest order.
    let mut tiles: Vec<(u32, Vec<u32>)> = Vec::new();
    for (class, rows) in classes.iter().enumerate() {
        for group in depth_groups(rows, &table.depth, target) {
            if class == 0 || group.len() <= target + target / 2 {
                tiles.push((class as u32, group.to_vec()));
                continue;
            }
            let mut by_offset = group.to_vec();
            by_offset.sort_unstable_by_key(|&r| (table.offset[r as usize], table.depth[r as usize], r));
            let count = by_offset.len().div_ceil(target);
            let size = by_offset.len().div_ceil(count);
            for tile in by_offset.chunks(size) {
                let mut tile = tile.to_vec();
                tile.sort_unstable_by_key(|&r| (table.depth[r as usize], r));
                tiles.push((class as u32, tile));
            }
        }
    }

    drop(classes);

    // Names are numbered in order of first use, so the root view needs the first few.
    let mut new_id = vec![u32::MAX; table.names.len()];
    let mut old_id = Vec::with_capacity(table.names.len());
    for (_, rows) in &tiles {
        for &r in rows {
            let old = table.name[r as usize] as usize;
            if new_id[old] == u32::MAX {
                new_id[old] = old_id.len() as u32;
                old_id.push(old);
            }
        }
    }

    let mut seq = vec![0u32; k_max as usize + 1];
    let chunk_files: Vec<String> = tiles
        .iter()
        .map(|(class, _)| {
            seq[*class as usize] += 1;
            format!("c/{class}-{}.bin{}", seq[*class as usize] - 1, gz::SUFFIX)
        })
        .collect();
    // A plain graph is laid out twice: children in name order, and heaviest first.
    let left = (table.before.is_none() && order == Order::Merged).then(|| crate::graph::frames::left_heavy_offsets(table));
    let chunks = tiles
        .par_iter()
        .zip(chunk_files)
        .map(|((class, tile), file)| {
            let bytes = gz::pack(&encode_chunk(table, others, tile, &new_id, values));
            sink(&file, &bytes)?;
            let r = |i: usize| tile[i] as usize;
            let span = |offset: &[u64], total: &[u64]| Span {
                offset: [
                    tile.iter().map(|&x| offset[x as usize]).min().unwrap_or(0),
                    tile.iter().map(|&x| offset[x as usize] + total[x as usize]).max().unwrap_or(0),
                ],
                max_total: tile.iter().map(|&x| total[x as usize]).max().unwrap_or(0),
            };
            // A plain chunk's left-heavy offsets, in a file of their own (`l/` for `c/`).
            let left = match left.as_deref() {
                Some(l) => {
                    sink(&left_file(&file), &gz::pack(&encode_left(table, l, tile, values)))?;
                    Some(span(l, &table.total).offset)
                }
                None => None,
            };
            let union = span(&table.offset, &table.total);
            Ok(ChunkRef {
                class: *class,
                depth: [table.depth[r(0)], table.depth[r(tile.len() - 1)] + 1],
                offset: union.offset,
                frames: tile.len() as u32,
                max_total: union.max_total,
                name_max: tile.iter().map(|&x| new_id[table.name[x as usize] as usize]).max().unwrap_or(0),
                bytes: bytes.len() as u64,
                file,
                after: others.map(|o| span(&o.after.0, &o.after.1)),
                before: others.map(|o| span(&o.before.0, &o.before.1)),
                left,
            })
        })
        .collect::<Result<Vec<_>, FillError>>()?;

    let differential = table.before.is_some();
    // Each name's self, for a plain graph's name files and its sandwiches' choice (a
    // differential graph's name files take theirs from its changes).
    let self_by_old = if differential { Vec::new() } else { self_by_name(table) };
    // The sandwiches of the most called and the hottest functions, within a share of the
    // chunks' bytes.
    let sandwiches = if !differential {
        let budget = sandwich::budget(chunks.iter().map(|c| c.bytes).sum());
        sandwich::encode(table, &new_id, &self_by_old, config.root_width, budget, values, sink)?
    } else {
        Vec::new()
    };
    let runs = differential && searched == DiffSearch::Runs;
    let (search, name_files) = search_and_names(table, config, &old_id, &self_by_old, !runs, sink)?;
    let (scale_points, scale_value) = match differential {
        true => (diff::deltas(table, Measure::Share).1, diff::deltas(table, Measure::Absolute).1),
        false => (0.0, 0.0),
    };
    let diff_info = table.before.as_ref().map(|b| DiffInfo {
        layout: table.layout.as_str().into(),
        layouts: Default::default(),
        total_before: b.total[0],
        total_after: table.values().0[0],
        scale_points,
        scale_value,
        sides: sides.cloned(),
        search: runs.then(|| "runs".to_string()),
    });
    let manifest = Manifest {
        format: "flamesite-graph".into(),
        version: MANIFEST_VERSION,
        graph: graph.into(),
        unit: unit.into(),
        decimals: table.decimals,
        differential: table.before.is_some(),
        total: grand,
        total_before: table.before.as_ref().map(|b| b.total[0]),
        frames: n as u64,
        depth: depth_count,
        palette: palette.as_str().into(),
        root_width: config.root_width,
        class_factor: config.class_factor,
        values: match values {
            Values::U32 => "u32",
            Values::F64 => "f64",
        }
        .into(),
        names: name_files,
        chunks,
        search,
        diff: diff_info,
        sandwiches,
        order: (order == Order::Time).then(|| "time".to_string()),
    };
    // Compact: the page fetches it for its first paint (the pretty form took many more bytes:
    // docs/BENCHMARKS.md, "Figures behind the code").
    let mut manifest_bytes = serde_json::to_vec(&manifest).expect("manifest serialises");
    manifest_bytes.push(b'\n');
    sink("manifest.json", &manifest_bytes)?;
    // And packed, which is what the page fetches: a large graph's list of chunks is tens of
    // kilobytes of JSON that most hosts would send as it is (far less packed:
    // docs/BENCHMARKS.md, "Figures behind the code").
    sink(PACKED_MANIFEST, &gz::pack(&manifest_bytes))?;
    Ok(manifest)
}

/// The search buckets and name files of a graph whose names are numbered by `old_id` (the
/// table's name of each new id), handed to `sink`. `self_by_old`: of a plain graph, each
/// name's self ([`self_by_name`]).
fn search_and_names(
    table: &FrameTable,
    config: &ChunkConfig,
    old_id: &[usize],
    self_by_old: &[u64],
    buckets: bool,
    sink: Sink,
) -> Result<(Vec<SearchRef>, Vec<NamesRef>), FillError> {
    let values = Values::for_table(table);
    let differential = table.before.is_some();
    let frames_of = if differential && buckets { Some(topmost_frames(table)) } else { None };
    // Once for every bucket (it is a pass over every frame).
    let last = if differential && buckets { Some(subtree_last(table)) } else { None };
    let by_old = match &frames_of {
        Some(frames) => diff_intervals(table, frames),
        None if differential => Lists::default(),
        None => name_intervals(table),
    };
    // A comparison of two runs has none: its search reads the runs' graphs.
    let searched = if differential && !buckets { 0 } else { old_id.len() };
    let intervals = |new: usize| &by_old[old_id[new]];
    // A differential bucket's entry is a few bytes more than a plain interval's 8: twice as
    // many entries a file keep its bytes below those of version 4's files (24 bytes an entry,
    // `search_intervals` of them) with half the files, and on a comparison's wide searches the
    // number of files fetched, not their bytes, is what takes the time (docs/BENCHMARKS.md,
    // "Figures behind the code").
    let per_bucket = config.search_intervals as usize * if differential { 2 } else { 1 };
    let mut buckets = Vec::new();
    let mut lo = 0usize;
    while lo < searched {
        let mut hi = lo;
        let mut count = 0;
        while hi < searched && (hi == lo || count + intervals(hi).len() <= per_bucket) {
            count += intervals(hi).len();
            hi += 1;
        }
        buckets.push((lo, hi, count));
        lo = hi;
    }
    let search = buckets
        .par_iter()
        .enumerate()
        .map(|(k, &(lo, hi, count))| {
            let bytes = match &frames_of {
                Some(frames) => {
                    let lists: Vec<&[u32]> = old_id[lo..hi].iter().map(|&o| &frames[o]).collect();
                    encode_diff_search(lo as u32, table, &lists, last.as_ref().expect("made for a differential table"), values)
                }
                None => encode_search(lo as u32, &(lo..hi).map(intervals).collect::<Vec<_>>(), values),
            };
            let bytes = gz::pack(&bytes);
            let file = format!("s/{k}.bin{}", gz::SUFFIX);
            sink(&file, &bytes)?;
            Ok(SearchRef { file, names: [lo as u32, hi as u32], intervals: count as u64, bytes: bytes.len() as u64 })
        })
        .collect::<Result<Vec<_>, FillError>>()?;

    let changes = if differential { diff::changes(table) } else { Vec::new() };
    // Of a differential graph, name id `o` (≥ 1) is `changes[o - 1]`.
    let change = |o: usize| &changes[o - 1];
    let zero = diff::Change::default();
    let change_or_root = |o: usize| if o == 0 { &zero } else { change(o) };
    let per_file = config.names_per_file.max(1) as usize;
    let name_files = old_id
        .par_chunks(per_file)
        .enumerate()
        .map(|(k, ids)| {
            let lo = k * per_file;
            let bucket = if differential {
                let root = |o: usize, v: u64, root: u64| if o == 0 { root } else { v };
                let (tb, ta) = (table.before.as_ref().map_or(0, |b| b.total[0]), table.values().0[0]);
                Names {
                    names: ids.iter().map(|&o| table.names[o].clone()).collect(),
                    colors: Vec::new(),
                    self_: ids.iter().map(|&o| change_or_root(o).self_after).collect(),
                    total: ids.iter().map(|&o| root(o, change_or_root(o).total_after, ta)).collect(),
                    self_before: Some(ids.iter().map(|&o| change_or_root(o).self_before).collect()),
                    total_before: Some(ids.iter().map(|&o| root(o, change_or_root(o).total_before, tb)).collect()),
                    raw: raw_forms(table, ids),
                }
            } else {
                Names {
                    names: ids.iter().map(|&o| table.names[o].clone()).collect(),
                    colors: Vec::new(),
                    self_: ids.iter().map(|&o| self_by_old[o]).collect(),
                    total: ids.iter().map(|&o| by_old[o].iter().map(|(a, b)| b - a).sum()).collect(),
                    self_before: None,
                    total_before: None,
                    raw: raw_forms(table, ids),
                }
            };
            let bytes = gz::pack(&serde_json::to_vec(&bucket).expect("names serialise"));
            let file = format!("n/{k}.json{}", gz::SUFFIX);
            sink(&file, &bytes)?;
            Ok(NamesRef { file, names: [lo as u32, (lo + ids.len()) as u32], bytes: bytes.len() as u64 })
        })
        .collect::<Result<Vec<_>, FillError>>()?;
    Ok((search, name_files))
}

/// The `raw` of the name file of `table`'s names `ids`: empty when none of them was renamed.
fn raw_forms(table: &FrameTable, ids: &[usize]) -> Vec<Option<String>> {
    if !ids.iter().any(|&o| table.raw.contains_key(&(o as u32))) {
        return Vec::new();
    }
    ids.iter().map(|&o| table.raw.get(&(o as u32)).cloned()).collect()
}

/// Writes a graph: a plain table as [`encode`] does; a differential one in its union layout,
/// with the offsets of its after and before layouts in the same chunks (the frames, names and
/// values are the same in every layout, and the widths follow from the values). `sides` says
/// what its two counts are. Returns the manifest.
pub fn encode_graph(
    graph: &str,
    unit: &str,
    table: &FrameTable,
    sides: &Sides,
    config: &ChunkConfig,
    palette: Palette,
    sink: Sink,
) -> Result<Manifest, FillError> {
    if table.before.is_none() {
        return encode(graph, unit, table, config, palette, sink);
    }
    encode_diff(graph, unit, table, sides, config, palette, sink, DiffSearch::Own)
}

/// Writes the comparison of two runs' plain graphs as [`encode_graph`] does, but without search
/// buckets: its before and after layouts are the runs' own graphs' layouts, whose buckets a
/// search reads ([`DiffSearch::Runs`]; on the nightly series of docs/BENCHMARKS.md the
/// comparisons' buckets were a large part of the site: "Figures behind the code").
pub fn encode_comparison(graph: &str, unit: &str, table: &FrameTable, config: &ChunkConfig, palette: Palette, sink: Sink) -> Result<Manifest, FillError> {
    if table.before.is_none() {
        return Err(format!("graph {graph}: a comparison is a differential table").into());
    }
    encode_diff(graph, unit, table, &Sides::new("the earlier run", "this run"), config, palette, sink, DiffSearch::Runs)
}

#[allow(clippy::too_many_arguments)]
fn encode_diff(graph: &str, unit: &str, table: &FrameTable, sides: &Sides, config: &ChunkConfig, palette: Palette, sink: Sink, searched: DiffSearch) -> Result<Manifest, FillError> {
    let mut t = table.clone();
    diff::relayout(&mut t, Layout::Union).map_err(|e| e.to_string())?;
    let others = Others::of(&t)?;
    encode_layout(graph, unit, &t, Some(sides), config, palette, sink, Some(&others), searched, Order::Merged)
}

/// Of a differential table: each name's intervals, one per topmost frame (see
/// [`topmost_frames`]), empty ones included, so that the buckets are cut alike in every layout.
fn diff_intervals(table: &FrameTable, frames: &Lists<u32>) -> Intervals {
    let extent = |r: u32| (table.offset[r as usize], table.offset[r as usize] + table.total[r as usize]);
    Lists::collect(frames.len(), || (0..frames.len()).flat_map(|k| frames[k].iter().map(move |&r| (k as u32, extent(r)))))
}

/// A differential graph's search bucket (version 5, docs/FORMAT.md "Search buckets"): one entry
/// per topmost frame of each name (unmerged), with the frame's offset in the union layout, its
/// id, the number of its descendants (`last - id`) and its before and after totals, so that a
/// reader sums the values of a match exactly, nested frames once, in any layout. The extent's
/// end is left out: it follows from the values as the union's widths do. The id is stored as
/// its step from the previous entry of the same name (two bytes), the last three columns as a
/// byte each, with the entries that do not fit listed apart: most frames are small and most
/// of a name's frames are near each other, and these files are what a search on a comparison
/// fetches.
/// `last` is [`subtree_last`] of the table.
fn encode_diff_search(name_lo: u32, table: &FrameTable, lists: &[&[u32]], last: &[u32], values: Values) -> Vec<u8> {
    let rows: Vec<usize> = lists.iter().flat_map(|l| l.iter().map(|&r| r as usize)).collect();
    let k = rows.len();
    let before = table.before.as_ref().expect("a differential table");
    let (after, _) = table.values();
    let steps = lists.iter().flat_map(|l| l.iter().scan(0u32, |prev, &r| Some((r - std::mem::replace(prev, r)) as u64)));
    let id = Small::of(steps, u16::MAX as u64);
    let span = Small::of(rows.iter().map(|&r| (last[r] - r as u32) as u64), u8::MAX as u64);
    let bsmall = Small::of(rows.iter().map(|&r| before.total[r]), u8::MAX as u64);
    let asmall = Small::of(rows.iter().map(|&r| after[r]), u8::MAX as u64);
    let small = [&id, &span, &bsmall, &asmall];
    let (w, big) = (values.width(), small.iter().map(|s| s.big.len()).sum::<usize>());
    let mut out = Vec::with_capacity(48 + 4 * lists.len() + (w + 5) * k + (w + 8) * big);
    out.extend_from_slice(SEARCH_MAGIC);
    put_u32(&mut out, DIFF_VERSION);
    put_u32(&mut out, name_lo);
    put_u32(&mut out, name_lo + lists.len() as u32);
    put_u32(&mut out, k as u32);
    put_u32(&mut out, (values == Values::U32) as u32 | 2);
    let mut start = 0u32;
    put_u32(&mut out, 0);
    for list in lists {
        start += list.len() as u32;
        put_u32(&mut out, start);
    }
    for s in small {
        put_u32(&mut out, s.big.len() as u32);
    }
    pad8(&mut out);
    // Columns of values first (8-aligned for f64), then of u32, of u16 and of bytes.
    put_column(&mut out, values, rows.iter().map(|&r| table.offset[r]));
    put_column(&mut out, values, bsmall.big.iter().map(|&(_, v)| v));
    put_column(&mut out, values, asmall.big.iter().map(|&(_, v)| v));
    put_u32_column(&mut out, id.big.iter().map(|&(_, v)| v as u32));
    put_u32_column(&mut out, span.big.iter().map(|&(_, v)| v as u32));
    for s in small {
        put_u32_column(&mut out, s.big.iter().map(|&(i, _)| i));
    }
    for v in &id.small {
        out.extend_from_slice(&(*v as u16).to_le_bytes());
    }
    for s in [&span, &bsmall, &asmall] {
        out.extend(s.small.iter().map(|&v| v as u8));
    }
    out
}

/// A column of a differential search bucket in narrow integers: each value below `limit` (the
/// narrow type's largest) as itself, each other one as `limit` in `small` and as (its index,
/// itself) in `big`.
struct Small {
    small: Vec<u64>,
    big: Vec<(u32, u64)>,
}

impl Small {
    fn of(column: impl Iterator<Item = u64>, limit: u64) -> Small {
        let mut s = Small { small: Vec::new(), big: Vec::new() };
        for (i, v) in column.enumerate() {
            if v < limit {
                s.small.push(v);
            } else {
                s.small.push(limit);
                s.big.push((i as u32, v));
            }
        }
        s
    }
}

/// Per row, the id of its last descendant (itself when it has none).
fn subtree_last(table: &FrameTable) -> Vec<u32> {
    let n = table.len();
    let mut last: Vec<u32> = (0..n as u32).collect();
    for r in (1..n).rev() {
        let p = table.parent[r] as usize;
        last[p] = last[p].max(last[r]);
    }
    last
}

/// Consecutive depths grouped until a group holds `target` frames or spans
/// [`MAX_DEPTH_SPAN`] depths. `rows` is sorted by depth.
fn depth_groups<'a>(rows: &'a [u32], depth: &[u32], target: usize) -> Vec<&'a [u32]> {
    let mut groups = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < rows.len() {
        let d = depth[rows[i] as usize];
        let mut j = i;
        while j < rows.len() && depth[rows[j] as usize] == d {
            j += 1;
        }
        // rows[i..j] is one depth.
        let span = d - depth[rows[start] as usize] + 1;
        if j - start >= target || span >= MAX_DEPTH_SPAN || j == rows.len() {
            groups.push(&rows[start..j]);
            start = j;
        }
        i = j;
    }
    groups
}

/// Each name's extents, merged into sorted disjoint intervals.
fn name_intervals(table: &FrameTable) -> Intervals {
    let drawn = || (0..table.len()).filter(|&row| table.total[row] > 0);
    let mut lists = Lists::collect(table.names.len(), || drawn().map(|row| (table.name[row], (table.offset[row], table.offset[row] + table.total[row]))));
    let mut kept = vec![0u32; lists.len()];
    let (starts, spans) = lists.parts_mut();
    merge_lists(spans, starts, &mut kept);
    lists.truncate_each(&kept);
    lists
}

/// Sorts each list of `spans` (the lists `starts` delimits, from `starts[0]`) and merges its
/// overlapping intervals at its front, writing how many it kept into `kept`; lists in
/// parallel.
fn merge_lists(spans: &mut [(u64, u64)], starts: &[u32], kept: &mut [u32]) {
    let lists = kept.len();
    if lists > 1 && spans.len() > 1 << 14 {
        let mid = lists / 2;
        let (left, right) = spans.split_at_mut((starts[mid] - starts[0]) as usize);
        let (kept_left, kept_right) = kept.split_at_mut(mid);
        rayon::join(|| merge_lists(left, &starts[..=mid], kept_left), || merge_lists(right, &starts[mid..], kept_right));
        return;
    }
    for k in 0..lists {
        let list = &mut spans[(starts[k] - starts[0]) as usize..(starts[k + 1] - starts[0]) as usize];
        list.sort_unstable();
        let mut n = 0;
        for i in 0..list.len() {
            let (a, b) = list[i];
            match n {
                0 => n = 1,
                _ if a <= list[n - 1].1 => list[n - 1].1 = list[n - 1].1.max(b),
                _ => {
                    list[n] = (a, b);
                    n += 1;
                }
            }
        }
        kept[k] = n as u32;
    }
}

/// Flag of a chunk or search file whose columns are coded (docs/FORMAT.md "Coded columns"):
/// each in byte planes, with offsets, ids and parents as steps.
const CODED: u32 = 4;
/// Flag of a coded chunk whose parents are given by their rows in the chunk, and whose ids
/// follow from their parents' (docs/FORMAT.md "Coded columns"): in a flame graph most frames
/// are a first child, whose id is its parent's plus one. It took a large part off what the ids
/// and parents of the large profile's first view take packed (docs/BENCHMARKS.md, "Figures
/// behind the code").
const PARENT_ROWS: u32 = 8;
/// Flag of a chunk with [`PARENT_ROWS`] whose offsets are gaps from the sibling before in the
/// chunk, else from the parent's offset when the parent is a row of the chunk (docs/FORMAT.md
/// "Coded columns"): a first child starts where its parent does, so its gap is 0 where it was
/// the parent's distance from the frame before at its depth. It took a measurable part off the
/// nightly series of benches/footprint.sh (docs/BENCHMARKS.md, "Figures behind the code").
const FROM_PARENTS: u32 = 16;
/// Flag of a differential chunk with [`FROM_PARENTS`] whose union offsets that follow neither
/// a sibling nor a parent in the chunk are told from the after and before layouts' offsets
/// (docs/FORMAT.md "Coded columns"): what is stored is the step, from the row before at its
/// depth, of the difference between the union offset and the sum of the other two in union
/// widths; such rows were a large part of a comparison's chunk bytes, numbers of the union's
/// 2^31 scale that do not pack (docs/BENCHMARKS.md, "Figures behind the code").
const UNION_FROM_LAYOUTS: u32 = 32;
/// Magic of a file of left-heavy offsets ([`encode_left`]).
const LEFT_MAGIC: &[u8; 4] = b"FSLH";
/// In a chunk with [`PARENT_ROWS`], the parent code of a row whose parent is not in the chunk.
const OUTSIDE: u32 = u32::MAX;

/// The left-heavy offsets (`left`, by frame) of the chunk of `rows`, in its row order
/// (docs/FORMAT.md "Left-heavy offsets"): a header (magic, version 1, flags with bit 1 when
/// values are `u32`, the row count), then each row's left-heavy offset less its parent's,
/// wherever the parent is (the root: its own), in byte planes. Most frames are their parent's
/// heaviest child, at distance 0. From the frame's own default offset instead, which a reader
/// could add without other chunks, the large profile's took several times the bytes (its
/// rows' parents are mostly in coarser chunks, and those shifts do not pack: BENCHMARKS.md,
/// "Graph format 12").
fn encode_left(table: &FrameTable, left: &[u64], rows: &[u32], values: Values) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + rows.len() * values.width());
    out.extend_from_slice(LEFT_MAGIC);
    put_u32(&mut out, 1);
    put_u32(&mut out, ((values == Values::U32) as u32) << 1);
    put_u32(&mut out, rows.len() as u32);
    let from = |&r: &u32| match table.parent[r as usize] {
        NO_PARENT => left[r as usize],
        p => left[r as usize].wrapping_sub(left[p as usize]),
    };
    let start = out.len();
    put_column(&mut out, values, rows.iter().map(from).collect::<Vec<_>>().into_iter());
    planes::split(&mut out[start..], values.width());
    out
}

/// A chunk file of `rows` (by depth, then offset) of `table`; of a differential table, with
/// the offsets of its `others` layouts.
fn encode_chunk(table: &FrameTable, others: Option<&Others>, rows: &[u32], new_id: &[u32], values: Values) -> Vec<u8> {
    let n = rows.len();
    let lo = table.depth[rows[0] as usize];
    let hi = table.depth[rows[n - 1] as usize] + 1;
    let diff = table.before.as_ref();
    let columns = if diff.is_some() { 7 } else { 3 };
    let mut out = Vec::with_capacity(32 + 4 * (hi - lo) as usize + n * (12 + columns * values.width()));
    out.extend_from_slice(CHUNK_MAGIC);
    put_u32(&mut out, if diff.is_some() { LAYOUTS_VERSION } else { VERSION });
    let union_from_layouts = if others.is_some() { UNION_FROM_LAYOUTS } else { 0 };
    put_u32(&mut out, diff.is_some() as u32 | ((values == Values::U32) as u32) << 1 | CODED | PARENT_ROWS | FROM_PARENTS | union_from_layouts);
    put_u32(&mut out, n as u32);
    put_u32(&mut out, lo);
    put_u32(&mut out, hi);
    let mut i = 0;
    for d in lo..=hi {
        while i < n && table.depth[rows[i] as usize] < d {
            i += 1;
        }
        put_u32(&mut out, i as u32);
    }
    pad8(&mut out);
    let w = values.width();
    let column = |out: &mut Vec<u8>, col: &mut dyn ExactSizeIterator<Item = u64>| {
        let start = out.len();
        put_column(out, values, col);
        planes::split(&mut out[start..], w);
    };
    let (ids, parents, outside) = parent_rows(table, rows);
    // The row of each row's parent in the chunk, if it is one.
    let parent_row: Vec<Option<usize>> = {
        let mut last = 0usize;
        parents.iter().map(|&code| (code != OUTSIDE).then(|| { last += code as usize; last })).collect()
    };
    // Each offset as its gap from the end of the sibling before it in the chunk, else from its
    // parent's offset when its parent is a row of the chunk, else from the end of the frame
    // before it at its depth (the first of a depth: itself). Children start at their parent's
    // offset and follow each other, so most gaps are 0; frames of a depth do not overlap and
    // lie inside their parents, so gaps are never negative in a table the build made.
    // With `others` (the union layout of a differential chunk, UNION_FROM_LAYOUTS), a row that
    // follows neither a sibling nor its parent holds instead the step of its residual (its
    // offset less the after and before offsets' sum in union widths, a small number: the
    // floors left out of the widths to its left) from that of the row before at its depth.
    let gaps = |offset: &[u64], total: &[u64], others: Option<&Others>| {
        let residual = |r: usize| {
            let o = others.expect("asked of the union layout only");
            let at = diff::union_width(o.before.0[r], o.before.1[0]) + diff::union_width(o.after.0[r], o.after.1[0]);
            offset[r].wrapping_sub(at)
        };
        let gap = |(i, &r): (usize, &u32)| {
            let r = r as usize;
            let before = i.checked_sub(1).map(|p| rows[p] as usize).filter(|&p| table.depth[p] == table.depth[r]);
            match (before, parent_row[i]) {
                (Some(p), _) if table.parent[p] == table.parent[r] => offset[r].wrapping_sub(offset[p] + total[p]),
                (_, Some(j)) => offset[r].wrapping_sub(offset[rows[j] as usize]),
                (Some(p), None) if others.is_some() => residual(r).wrapping_sub(residual(p)),
                (None, None) if others.is_some() => residual(r),
                (Some(p), None) => offset[r].wrapping_sub(offset[p] + total[p]),
                (None, None) => offset[r],
            }
        };
        rows.iter().enumerate().map(gap).collect::<Vec<_>>()
    };
    column(&mut out, &mut gaps(&table.offset, &table.total, others).into_iter());
    if let Some(o) = others {
        // A differential chunk: the after and before layouts' offsets, coded alike.
        column(&mut out, &mut gaps(&o.after.0, &o.after.1, None).into_iter());
        column(&mut out, &mut gaps(&o.before.0, &o.before.1, None).into_iter());
    }
    let of = |col: &[u64]| rows.iter().map(|&r| col[r as usize]).collect::<Vec<_>>().into_iter();
    match diff {
        // The widths (total, self) follow from the values: a reader computes them.
        Some(b) => {
            let (at, aself) = table.values();
            for col in [&b.total, &b.self_, at, aself] {
                column(&mut out, &mut of(col));
            }
        }
        None => {
            column(&mut out, &mut of(&table.total));
            column(&mut out, &mut of(&table.self_));
        }
    }
    let names: Vec<u32> = rows.iter().map(|&r| new_id[table.name[r as usize] as usize]).collect();
    for col in [ids, parents, names] {
        let start = out.len();
        put_u32_column(&mut out, col.into_iter());
        planes::split(&mut out[start..], 4);
    }
    put_u32(&mut out, outside.len() as u32);
    let start = out.len();
    put_u32_column(&mut out, outside.into_iter());
    planes::split(&mut out[start..], 4);
    out
}

/// The id and parent codes of a chunk of `rows` (docs/FORMAT.md "Coded columns"): a parent in
/// the chunk as the step from the row of the parent before (it is never behind: rows of a depth
/// are in offset order, as their parents are), one outside it as [`OUTSIDE`], its id listed
/// apart (as steps from the one listed before it); an id as its step from the row before's
/// when both have the same parent, else from its parent's id. Returns the ids' codes, the
/// parents' codes and the parents outside.
fn parent_rows(table: &FrameTable, rows: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let row_of: rustc_hash::FxHashMap<u32, u32> = rows.iter().enumerate().map(|(i, &r)| (r, i as u32)).collect();
    let (mut ids, mut parents, mut outside) = (Vec::with_capacity(rows.len()), Vec::with_capacity(rows.len()), Vec::new());
    let (mut last_row, mut last_outside) = (0u32, 0u32);
    for (i, &r) in rows.iter().enumerate() {
        let parent = table.parent[r as usize];
        match row_of.get(&parent) {
            Some(&j) if (j as usize) < i && j >= last_row => {
                parents.push(j - last_row);
                last_row = j;
            }
            _ => {
                parents.push(OUTSIDE);
                outside.push(parent.wrapping_sub(last_outside));
                last_outside = parent;
            }
        }
        let sibling = i > 0 && table.parent[rows[i - 1] as usize] == parent;
        ids.push(if sibling { r.wrapping_sub(rows[i - 1]) } else { r.wrapping_sub(parent) });
    }
    (ids, parents, outside)
}

fn encode_search(name_lo: u32, intervals: &[&[(u64, u64)]], values: Values) -> Vec<u8> {
    let k: usize = intervals.iter().map(|l| l.len()).sum();
    let mut out = Vec::with_capacity(32 + 4 * intervals.len() + 2 * values.width() * k);
    out.extend_from_slice(SEARCH_MAGIC);
    put_u32(&mut out, VERSION);
    put_u32(&mut out, name_lo);
    put_u32(&mut out, name_lo + intervals.len() as u32);
    put_u32(&mut out, k as u32);
    put_u32(&mut out, (values == Values::U32) as u32 | CODED);
    let mut start = 0u32;
    put_u32(&mut out, 0);
    for list in intervals {
        start += list.len() as u32;
        put_u32(&mut out, start);
    }
    pad8(&mut out);
    // Coded: each interval's gap from the end of the one before it of its name (the first's
    // start as itself), then every interval's length, each column in byte planes.
    let gaps = intervals.iter().flat_map(|l| l.iter().scan(0u64, |end, &(a, b)| Some(a - std::mem::replace(end, b))));
    let lengths = intervals.iter().flat_map(|l| l.iter().map(|&(a, b)| b - a));
    for col in [gaps.collect::<Vec<_>>(), lengths.collect()] {
        let start = out.len();
        put_column(&mut out, values, col.into_iter());
        planes::split(&mut out[start..], values.width());
    }
    out
}

/// Largest name file a reader unpacks: far more than `names_per_file` names of the longest
/// line a profile may have.
const MAX_NAME_FILE_BYTES: u64 = 1 << 30;

/// Largest `manifest.json` a reader takes: far more than the manifest of any graph.
const MAX_MANIFEST_BYTES: u64 = 1 << 30;

/// The bytes of the file at `path`, which must be a regular file of at most `limit` bytes
/// (exactly `exact` when given), reached without following a symbolic link at its last
/// component: a graph folder is read as data, so a manifest naming `/dev/zero`, a FIFO or a
/// link out of the folder is refused before anything is read (found by a hostile tester).
fn read_file(path: &Path, limit: u64, exact: Option<u64>) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let bad = |why: String| format!("{}: {why}", path.display());
    let (file, len) = super::open_regular(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => bad("is a symbolic link, which a graph folder's files never are".into()),
        _ => bad(e.to_string()),
    })?;
    if len > limit || exact.is_some_and(|n| n != len) {
        let want = exact.map_or(format!("at most {limit}"), |n| n.to_string());
        return Err(bad(format!("is {len} bytes where the manifest says {want}; the graph is damaged")));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit).read_to_end(&mut bytes).map_err(|e| bad(e.to_string()))?;
    Ok(bytes)
}

/// `rel` from a manifest, when it names a file inside the graph folder: relative, without
/// `..` or empty components.
fn inside(dir: &Path, rel: &str) -> Result<std::path::PathBuf, String> {
    if !super::is_inside(rel) {
        return Err(format!("{}: the manifest names {rel:?}, which is not a file inside the graph folder; the graph is damaged", dir.join("manifest.json").display()));
    }
    // Nor through a folder of the graph that is a link (`c` linked outside it): the file itself
    // is opened without following a link (`read_file`), its folders are looked at here.
    let mut folder = dir.to_path_buf();
    for part in rel.split('/').take(rel.split('/').count() - 1) {
        folder.push(part);
        if std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!("{}: is a symbolic link, which a graph folder's folders never are; the graph is damaged", folder.display()));
        }
    }
    Ok(dir.join(rel))
}

/// Reads the manifest at `path` (within [`MAX_MANIFEST_BYTES`], a regular file).
pub fn read_manifest(path: &Path) -> Result<Manifest, String> {
    serde_json::from_slice(&read_file(path, MAX_MANIFEST_BYTES, None)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads the name file at `path` (packed or not, within [`MAX_NAME_FILE_BYTES`]).
pub fn read_names(path: &Path) -> Result<Names, String> {
    let bytes = read_file(path, MAX_NAME_FILE_BYTES, None)?;
    let bytes = gz::unpack(bytes, MAX_NAME_FILE_BYTES).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The most bytes the chunk of `entry` can hold unpacked: its header and row index, and seven
/// columns of 8-byte values and three of u32 per frame.
fn chunk_limit(entry: &ChunkRef) -> u64 {
    let rows = entry.depth[1].saturating_sub(entry.depth[0]) as u64 + 1;
    32 + 4 * rows + 68 * entry.frames as u64
}

/// Reads a built graph folder back into a frame table, from its chunk files alone; a
/// differential graph in the layout its manifest names (the union from version 8 on).
pub fn read_graph(dir: &Path) -> Result<(Manifest, FrameTable), String> {
    read_graph_in(dir, None)
}

/// [`read_graph`], a differential graph of version 8 in `layout` when given (its chunks hold
/// every layout's offsets).
pub fn read_graph_in(dir: &Path, layout: Option<Layout>) -> Result<(Manifest, FrameTable), String> {
    let manifest = read_manifest(&dir.join("manifest.json"))?;
    if manifest.format != "flamesite-graph" || !(1..=MANIFEST_VERSION).contains(&manifest.version) {
        return Err(format!(
            "{}: format {} version {} is not flamesite-graph version 1 to {MANIFEST_VERSION}",
            dir.display(),
            manifest.format,
            manifest.version
        ));
    }
    if manifest.decimals > MAX_STORED_DECIMALS {
        return Err(format!(
            "{}: {} decimal places, more than a value can have ({MAX_STORED_DECIMALS}); it is damaged",
            dir.join("manifest.json").display(),
            manifest.decimals
        ));
    }
    // A chunk file, of the size its entry says, unpacked within `limit` bytes.
    let unpacked = |entry: &ChunkRef, limit: u64| {
        let path = inside(dir, &entry.file)?;
        gz::unpack(read_file(&path, entry.bytes, Some(entry.bytes))?, limit).map_err(|e| format!("{}: {e}", path.display()))
    };
    let mut all_names = Vec::new();
    let mut all_raw = std::collections::BTreeMap::new();
    for file in &manifest.names {
        let names = read_names(&inside(dir, &file.file)?)?;
        if file.names[0] as usize != all_names.len() || Some(names.names.len()) != file.names[1].checked_sub(file.names[0]).map(|n| n as usize) {
            return Err(format!("{}: name ids do not follow on", dir.join(&file.file).display()));
        }
        if !names.raw.is_empty() && names.raw.len() != names.names.len() {
            return Err(format!("{}: {} raw names for {} names; it is damaged", dir.join(&file.file).display(), names.raw.len(), names.names.len()));
        }
        for (j, raw) in names.raw.into_iter().enumerate() {
            if let Some(raw) = raw {
                all_raw.insert((all_names.len() + j) as u32, raw);
            }
        }
        all_names.extend(names.names);
    }
    // The manifest's count is checked against the chunk files before anything is allocated
    // for it: every frame takes at least a byte of a chunk, and 24 bytes of a chunk at least
    // a 1032nd of a byte of its gzip member (deflate's largest ratio).
    let frames_per_byte = if manifest.version >= PACKED_VERSION { 1032 / 24 } else { 1 };
    let mut chunk_bytes = 0u64;
    for chunk in &manifest.chunks {
        // What is on disk, as the manifest says it (a regular file of its size, not a link),
        // before anything is allocated for the frames it claims.
        let path = inside(dir, &chunk.file)?;
        let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_file() || meta.len() != chunk.bytes {
            return Err(format!("{}: is not a regular file of the {} bytes the manifest says; the graph is damaged", path.display(), chunk.bytes));
        }
        chunk_bytes = chunk_bytes.saturating_add(meta.len());
    }
    if manifest.frames > chunk_bytes.saturating_mul(frames_per_byte) {
        return Err(format!(
            "{}: the manifest claims {} frames but its {} chunk files hold {chunk_bytes} bytes; it is damaged",
            dir.join("manifest.json").display(),
            manifest.frames,
            manifest.chunks.len()
        ));
    }
    let n = manifest.frames as usize;
    let mut t = FrameTable {
        names: all_names,
        name: vec![u32::MAX; n],
        depth: vec![0; n],
        parent: vec![0; n],
        offset: vec![0; n],
        total: vec![0; n],
        self_: vec![0; n],
        before: manifest.differential.then(|| Before { total: vec![0; n], self_: vec![0; n] }),
        after: (manifest.differential && manifest.content_version() >= 3).then(|| Before { total: vec![0; n], self_: vec![0; n] }),
        layout: match (layout, manifest.diff.as_ref().map(|d| d.layout.as_str())) {
            (Some(l), _) if manifest.content_version() == LAYOUTS_VERSION => l,
            (_, Some("union")) => Layout::Union,
            (_, Some("before")) => Layout::Before,
            _ => Layout::After,
        },
        decimals: manifest.decimals,
        raw: all_raw,
    };
    let totals = manifest.diff.as_ref().map_or((0, 0), |d| (d.total_before, d.total_after));
    for chunk in &manifest.chunks {
        let bytes = unpacked(chunk, chunk_limit(chunk))?;
        decode_chunk(&bytes, &mut t, manifest.content_version(), totals).map_err(|e| format!("{}: {e}", dir.join(&chunk.file).display()))?;
    }
    if let Some(row) = t.name.iter().position(|&x| x == u32::MAX) {
        return Err(format!("{}: frame {row} is in no chunk", dir.display()));
    }
    if manifest.differential && manifest.content_version() >= NO_WIDTHS_VERSION {
        // The widths, from the values (the chunks leave them out).
        let (b, a) = (t.before.as_ref().expect("differential"), t.after.as_ref().expect("version 4 or later"));
        let (tb, ta) = (b.total[0], a.total[0]);
        for r in 0..t.len() {
            (t.total[r], t.self_[r]) = diff::widths(t.layout, (b.total[r], b.self_[r]), (a.total[r], a.self_[r]), tb, ta);
        }
    }
    // The tree the ids promise (docs/FORMAT.md): the root alone has no parent, and every other
    // frame's parent comes before it, one row up. A damaged chunk that breaks this would send
    // a reader walking up from a frame out of the table, or round in a cycle.
    for row in 0..t.len() {
        let (parent, depth) = (t.parent[row], t.depth[row]);
        let whole = if row == 0 {
            parent == NO_PARENT && depth == 0
        } else {
            parent != NO_PARENT && (parent as usize) < row && t.depth[parent as usize].checked_add(1) == Some(depth)
        };
        if !whole {
            return Err(format!("{}: frame {row} has parent {parent} at depth {depth}, which is not a tree in depth-first order; the graph is damaged", dir.display()));
        }
    }
    sort_names(&mut t);
    Ok((manifest, t))
}

/// Renumbers names into byte order (the root first), as a merge leaves them.
fn sort_names(t: &mut FrameTable) {
    let mut order: Vec<usize> = (1..t.names.len()).collect();
    order.sort_unstable_by(|&a, &b| t.names[a].cmp(&t.names[b]));
    order.insert(0, 0);
    let mut new_id = vec![0u32; t.names.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    t.names = order.iter().map(|&old| std::mem::take(&mut t.names[old])).collect();
    for x in &mut t.name {
        *x = new_id[*x as usize];
    }
    t.raw = std::mem::take(&mut t.raw).into_iter().map(|(old, raw)| (new_id[old as usize], raw)).collect();
}

/// The same chunk with its columns not coded (docs/FORMAT.md "Coded columns"), the flag
/// cleared; `b` is a chunk of `version` and `flags` whose columns start at `at`. `totals` are
/// the two runs' totals of a differential graph, whose widths follow from its values.
///
/// A differential chunk of [`LAYOUTS_VERSION`] comes back as one of [`DIFF_VERSION`] in
/// `layout`: that layout's offsets, then the four value columns.
fn uncode_chunk(b: &[u8], version: u32, flags: u32, at: usize, layout: Layout, totals: (u64, u64)) -> Result<Vec<u8>, String> {
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let diff = flags & 1 == 1;
    // Coded chunks: plain ones of version 2, differential ones of version 5 (one layout, as
    // manifests of version 7 have them) and 6.
    let layouts = diff && version == LAYOUTS_VERSION;
    if !(if diff { version == DIFF_VERSION || layouts } else { version == VERSION }) {
        return Err(format!("a chunk of version {version} with coded columns"));
    }
    let values = if flags & 2 != 0 { Values::U32 } else { Values::F64 };
    let w = values.width();
    let n = u32_at(b, 12) as usize;
    let cols = if layouts { 7 } else if diff { 5 } else { 3 };
    let columns_end = at + (cols * w + 12) * n;
    // With PARENT_ROWS, the parents outside the chunk follow the columns: their count, then them.
    let outside = match flags & PARENT_ROWS {
        0 => 0,
        _ => b.get(columns_end..columns_end + 4).map_or(usize::MAX, |_| u32_at(b, columns_end) as usize),
    };
    let expected = match (flags & PARENT_ROWS, outside) {
        (0, _) => Some(columns_end),
        (_, m) if m <= n => Some(columns_end + 4 + 4 * m),
        _ => None,
    };
    if Some(b.len()) != expected {
        return Err(format!("{} bytes, not those of {n} frames (truncated chunk)", b.len()));
    }
    let mut plain = b[..at].to_vec();
    plain[8..12].copy_from_slice(&(flags & !(CODED | PARENT_ROWS | FROM_PARENTS | UNION_FROM_LAYOUTS)).to_le_bytes());
    // The offset column of `layout` (of a differential chunk: union, after, before), then the
    // value columns.
    let offsets = match (layouts, layout) {
        (true, Layout::After) => 1,
        (true, Layout::Before) => 2,
        _ => 0,
    };
    let kept = std::iter::once(offsets).chain(if layouts { 3..cols } else { 1..cols });
    for c in kept {
        plain.extend(planes::join(&b[at + c * w * n..][..w * n], w));
    }
    if diff {
        plain[4..8].copy_from_slice(&DIFF_VERSION.to_le_bytes());
    }
    // The u32 columns, in the file and in `plain`.
    let (from, u32s) = (at + cols * w * n, plain.len());
    for c in 0..3 {
        plain.extend(planes::join(&b[from + c * 4 * n..][..4 * n], 4));
    }
    if flags & PARENT_ROWS == 0 {
        // Ids and parents: the steps added up.
        for c in 0..2 {
            let mut sum = 0u32;
            for i in 0..n {
                let p = u32s + 4 * (c * n + i);
                sum = sum.wrapping_add(u32_at(&plain, p));
                plain[p..p + 4].copy_from_slice(&sum.to_le_bytes());
            }
        }
    }
    // With PARENT_ROWS, the row of each row's parent when it is a row of the chunk.
    let mut parent_row: Vec<Option<usize>> = Vec::new();
    if flags & PARENT_ROWS != 0 {
        parent_row.reserve_exact(n);
        let listed = planes::join(&b[columns_end + 4..], 4);
        let (ids, parents) = (u32s, u32s + 4 * n);
        let (mut last_row, mut next_outside, mut last_outside) = (0usize, 0usize, 0u32);
        for i in 0..n {
            let code = u32_at(&plain, parents + 4 * i);
            let parent = if code == OUTSIDE {
                let step = listed.get(4 * next_outside..4 * next_outside + 4).ok_or("more rows with a parent outside the chunk than it lists")?;
                next_outside += 1;
                last_outside = last_outside.wrapping_add(u32::from_le_bytes(step.try_into().unwrap()));
                parent_row.push(None);
                last_outside
            } else {
                last_row = last_row.checked_add(code as usize).filter(|&j| j < i).ok_or_else(|| format!("row {i}'s parent is not a row before it"))?;
                parent_row.push(Some(last_row));
                u32_at(&plain, ids + 4 * last_row)
            };
            let sibling = i > 0 && u32_at(&plain, parents + 4 * (i - 1)) == parent;
            let from = if sibling { u32_at(&plain, ids + 4 * (i - 1)) } else { parent };
            let id = from.wrapping_add(u32_at(&plain, ids + 4 * i));
            plain[ids + 4 * i..ids + 4 * i + 4].copy_from_slice(&id.to_le_bytes());
            plain[parents + 4 * i..parents + 4 * i + 4].copy_from_slice(&parent.to_le_bytes());
        }
        if next_outside != outside {
            return Err(format!("lists {outside} parents outside the chunk, and {next_outside} rows have one"));
        }
    }
    // Offsets: each gap added to the end of the frame before it at its depth; with
    // FROM_PARENTS, to its parent's offset instead when that frame is not a sibling and the
    // parent is a row of the chunk (rows of lower depths are done first); with
    // UNION_FROM_LAYOUTS, the union's rows that follow neither from the other two layouts'.
    let from_parents = flags & FROM_PARENTS != 0;
    let parent_of = |plain: &[u8], i: usize| u32_at(plain, u32s + 4 * (n + i));
    let value = |plain: &[u8], col: usize, i: usize| values.get(plain, at + w * (col * n + i)).unwrap_or(0);
    let fix = |v: u64| if values == Values::U32 { v & 0xFFFF_FFFF } else { v };
    let (lo, hi) = (u32_at(b, 16), u32_at(b, 20));
    // The offsets of layout `lay` from the coded column `c` of the file; `from` the after and
    // before layouts' offsets and the runs' totals, for the union's rows told from them.
    let offsets_in = |lay: Layout, c: usize, from: Option<(&[u64], &[u64])>| -> Vec<u64> {
        let col = planes::join(&b[at + c * w * n..][..w * n], w);
        let gap_at = |i: usize| match values {
            Values::U32 => u32_at(&col, w * i) as u64,
            Values::F64 => f64::from_le_bytes(col[w * i..w * i + 8].try_into().unwrap()) as i64 as u64,
        };
        let width = |i: usize| match diff {
            false => value(&plain, 1, i),
            true => diff::widths(lay, (value(&plain, 1, i), 0), (value(&plain, 3, i), 0), totals.0, totals.1).0,
        };
        let told = |i: usize| from.map(|(a, bf)| diff::union_width(bf[i], totals.0) + diff::union_width(a[i], totals.1));
        let mut out = vec![0u64; n];
        for d in 0..(hi.saturating_sub(lo) as usize) {
            let (first, last) = (u32_at(b, 24 + 4 * d) as usize, u32_at(b, 28 + 4 * d) as usize);
            for i in first..last.min(n) {
                let gap = gap_at(i);
                let sibling = i > first && parent_of(&plain, i - 1) == parent_of(&plain, i);
                let offset = match (parent_row.get(i), told(i)) {
                    (Some(&Some(j)), _) if from_parents && !sibling => out[j].wrapping_add(gap),
                    (_, Some(u)) if !sibling && i == first => u.wrapping_add(gap),
                    (_, Some(u)) if !sibling => u.wrapping_add(out[i - 1].wrapping_sub(told(i - 1).unwrap_or(0))).wrapping_add(gap),
                    _ if i == first => gap,
                    _ => out[i - 1].wrapping_add(width(i - 1)).wrapping_add(gap),
                };
                out[i] = fix(offset);
            }
        }
        out
    };
    let kept = match (layouts && flags & UNION_FROM_LAYOUTS != 0, layout) {
        (true, Layout::Union) => {
            let (a, bf) = (offsets_in(Layout::After, 1, None), offsets_in(Layout::Before, 2, None));
            offsets_in(Layout::Union, 0, Some((&a, &bf)))
        }
        _ => offsets_in(layout, offsets, None),
    };
    for (i, offset) in kept.into_iter().enumerate() {
        let p = at + w * i;
        match values {
            Values::U32 => plain[p..p + 4].copy_from_slice(&(offset as u32).to_le_bytes()),
            Values::F64 => plain[p..p + 8].copy_from_slice(&(offset as f64).to_le_bytes()),
        }
    }
    Ok(plain)
}

/// Reads one chunk of a graph whose manifest has `version` into `t`; `totals` are the two
/// runs' totals of a differential graph.
fn decode_chunk(b: &[u8], t: &mut FrameTable, version: u32, totals: (u64, u64)) -> Result<(), String> {
    let graph_version = version;
    let u32_at = |at: usize| -> Result<u32, String> {
        b.get(at..at + 4).map(|s| u32::from_le_bytes(s.try_into().unwrap())).ok_or_else(|| "truncated chunk".to_string())
    };
    let version = u32_at(4)?;
    if b.get(0..4) != Some(CHUNK_MAGIC) || !(1..=LAYOUTS_VERSION).contains(&version) {
        return Err(format!("not a chunk of version 1 to {LAYOUTS_VERSION}"));
    }
    let flags = u32_at(8)?;
    if version == LAYOUTS_VERSION && flags & CODED == 0 {
        return Err(format!("a chunk of version {LAYOUTS_VERSION} whose columns are not coded"));
    }
    if flags & !(1 | 2 | CODED | PARENT_ROWS | FROM_PARENTS | UNION_FROM_LAYOUTS) != 0
        || (flags & PARENT_ROWS != 0 && flags & CODED == 0)
        || (flags & FROM_PARENTS != 0 && flags & PARENT_ROWS == 0)
        || (flags & UNION_FROM_LAYOUTS != 0 && (flags & FROM_PARENTS == 0 || flags & 1 == 0 || version != LAYOUTS_VERSION))
    {
        return Err(format!("flags {flags:#x} name columns this reader does not know"));
    }
    if flags & CODED != 0 {
        let (lo, hi) = (u32_at(16)?, u32_at(20)?);
        let at = (24 + 4 * (hi as usize).saturating_sub(lo as usize).saturating_add(1)).div_ceil(8) * 8;
        if hi < lo || b.len() < at {
            return Err("truncated chunk".into());
        }
        if (version == LAYOUTS_VERSION) != (graph_version == LAYOUTS_VERSION) {
            return Err("its columns are not the manifest's".into());
        }
        let plain = uncode_chunk(b, version, flags, at, t.layout, totals)?;
        // Of a differential chunk, the one layout kept, as version 5 has it.
        let graph_version = if graph_version == LAYOUTS_VERSION { DIFF_VERSION } else { graph_version };
        return decode_chunk(&plain, t, graph_version, totals);
    }
    let diff = flags & 1 == 1;
    let values = if version >= 2 && flags & 2 != 0 { Values::U32 } else { Values::F64 };
    let value_at = |at: usize| -> Result<u64, String> { values.get(b, at).ok_or_else(|| "truncated chunk".to_string()) };
    let width = values.width();
    let n = u32_at(12)? as usize;
    let (lo, hi) = (u32_at(16)?, u32_at(20)?);
    let mut at = 24;
    let mut starts = Vec::new();
    for _ in lo..=hi {
        starts.push(u32_at(at)? as usize);
        at += 4;
    }
    at = at.div_ceil(8) * 8;
    // Differential chunks: version 2 has the before columns after the widths (which are the
    // after values), version 3 the before and after columns after the widths, versions 4 and
    // 5 the before and after columns instead of the widths.
    let after = diff && version >= 3;
    if after != t.after.is_some() || diff != t.before.is_some() || (diff && version != graph_version) {
        return Err("its columns are not the manifest's".into());
    }
    let widths = !diff || version < NO_WIDTHS_VERSION;
    let cols = match (diff, version) {
        (false, _) => 3,
        (true, 2) => 5,
        (true, 3) => 7,
        _ => 5,
    };
    let u32_base = at + cols * width * n;
    let ids: Vec<usize> = (0..n).map(|i| u32_at(u32_base + 4 * i).map(|x| x as usize)).collect::<Result<_, _>>()?;
    if ids.iter().any(|&id| id >= t.len()) {
        return Err("frame id out of range".into());
    }
    for (d, w) in (lo..hi).zip(starts.windows(2)) {
        for &id in ids.get(w[0]..w[1].min(n)).unwrap_or(&[]) {
            t.depth[id] = d;
        }
    }
    // Column of each value field, in units of n values (None: not in this chunk).
    let (wcol, bcol, acol) = if widths { (Some(1), 3, 5) } else { (None, 1, 3) };
    for (i, &id) in ids.iter().enumerate() {
        t.offset[id] = value_at(at + width * i)?;
        if let Some(c) = wcol {
            t.total[id] = value_at(at + width * (c * n + i))?;
            t.self_[id] = value_at(at + width * ((c + 1) * n + i))?;
        }
        if let Some(bf) = &mut t.before {
            bf.total[id] = value_at(at + width * (bcol * n + i))?;
            bf.self_[id] = value_at(at + width * ((bcol + 1) * n + i))?;
        }
        if let Some(af) = &mut t.after {
            af.total[id] = value_at(at + width * (acol * n + i))?;
            af.self_[id] = value_at(at + width * ((acol + 1) * n + i))?;
        }
        t.parent[id] = u32_at(u32_base + 4 * (n + i))?;
        t.name[id] = u32_at(u32_base + 4 * (2 * n + i))?;
        if t.name[id] as usize >= t.names.len() || (t.parent[id] != NO_PARENT && t.parent[id] as usize >= t.len()) {
            return Err("name or parent out of range".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::frames::StackMerger;

    fn table(lines: &[(&str, u64)]) -> FrameTable {
        let mut m = StackMerger::new(false, 1000);
        for (s, c) in lines {
            m.add(s.as_bytes(), *c, 0).unwrap();
        }
        m.finish().unwrap()
    }

    #[test]
    fn narrow_frames_go_to_fine_classes() {
        let t = table(&[("main;big", 1000), ("main;tiny", 1), ("main;mid", 20)]);
        let config = ChunkConfig { root_width: 100, class_factor: 4, target_frames: 4096, search_intervals: 100, names_per_file: 2 };
        let m = encode("samples", "samples", &t, &config, Palette::Hot, &|_, _| Ok(())).unwrap();
        let classes: Vec<(u32, u32)> = m.chunks.iter().map(|c| (c.class, c.frames)).collect();
        // 1021 total on 100 px: mid (20) is >= 10.21 -> class 0; tiny (1): 1*100*4^2 >= 1021 -> class 2.
        assert_eq!(classes, vec![(0, 4), (2, 1)]);
        assert_eq!(m.chunks[1].max_total, 1);
        // The first view: the class-0 chunk and the name files of its names (all, main, big,
        // mid: ids 0..4, two per file), not the file of tiny (id 4, class 2 only).
        assert_eq!(m.first_view(60), vec!["n/0.json.gz", "n/1.json.gz", "c/0-0.bin.gz"]);
        assert_eq!(m.names.len(), 3);
        assert!(m.first_view(0).is_empty());
    }

    /// Writes `bytes` as the chunk file `file` of the graph in `dir`, with its size in the
    /// manifest (which a reader checks).
    fn rewrite_chunk(dir: &Path, file: &str, bytes: &[u8]) {
        std::fs::write(dir.join(file), bytes).unwrap();
        let path = dir.join("manifest.json");
        let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for c in m["chunks"].as_array_mut().unwrap() {
            if c["file"] == file {
                c["bytes"] = bytes.len().into();
            }
        }
        std::fs::write(&path, m.to_string()).unwrap();
    }

    /// A plain graph's chunk with its columns not coded (as version 6 wrote them).
    fn plain_chunk(b: &[u8]) -> Vec<u8> {
        let u = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(u(8) & CODED, CODED, "chunks are written coded");
        let at = (24 + 4 * (u(20) - u(16) + 1) as usize).div_ceil(8) * 8;
        uncode_chunk(b, u(4), u(8), at, Layout::After, (0, 0)).unwrap()
    }

    /// Writes the `samples` graph of `t` into `dir`, as a build does.
    fn encode_to(dir: &Path, t: &FrameTable, config: &ChunkConfig) -> Manifest {
        let write = |rel: &str, bytes: &[u8]| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).map_err(|e| FillError::Write(e.to_string()))
        };
        encode("samples", "samples", t, config, Palette::Hot, &write).unwrap()
    }

    #[test]
    fn chunks_round_trip_and_name_totals_do_not_double_count_recursion() {
        let t = table(&[("f;f;f", 3), ("f;g", 2), ("h", 5)]);
        let config = ChunkConfig { root_width: 2, class_factor: 2, target_frames: 1, search_intervals: 1, names_per_file: 1000 };
        let dir = tempfile::tempdir().unwrap();
        encode_to(dir.path(), &t, &config);
        let (m, back) = read_graph(dir.path()).unwrap();
        assert_eq!(back, t);
        assert_eq!(m.frames, t.len() as u64);
        assert_eq!(m.values, "u32");
        let packed = std::fs::read(dir.path().join("n/0.json.gz")).unwrap();
        assert!(gz::is_packed(&packed), "name files are published packed");
        let names: Names = serde_json::from_slice(&gz::unpack(packed, u64::MAX).unwrap()).unwrap();
        let f = names.names.iter().position(|n| n == "f").unwrap();
        assert_eq!(names.total[f], 5, "f;f;f counted once");
        assert_eq!(names.self_[f], 3);
    }

    #[test]
    fn a_renamed_name_keeps_its_own_form_through_the_files_and_a_comparison() {
        let t = table(&[("main;App$$Lambda$75.0x00007ff44c0c4208.run;work", 3), ("main;other", 2)]);
        let config = ChunkConfig { root_width: 2, class_factor: 2, target_frames: 1, search_intervals: 1, names_per_file: 2 };
        let dir = tempfile::tempdir().unwrap();
        encode_to(dir.path(), &t, &config);
        let (_, back) = read_graph(dir.path()).unwrap();
        assert_eq!(back, t);
        let at = back.names.iter().position(|n| n == "App$$Lambda_.run").unwrap() as u32;
        assert_eq!(back.raw.get(&at).map(String::as_str), Some("App$$Lambda$75.0x00007ff44c0c4208.run"));
        // Name files without a renamed name say nothing of it.
        let files: Vec<Names> = (0..3)
            .filter_map(|k| std::fs::read(dir.path().join(format!("n/{k}.json.gz"))).ok())
            .map(|p| serde_json::from_slice(&gz::unpack(p, u64::MAX).unwrap()).unwrap())
            .collect();
        assert_eq!(files.iter().filter(|f| !f.raw.is_empty()).count(), 1, "{files:?}");
        // A comparison with a run whose lambda had other numbers: one name, a raw form of either.
        let later = table(&[("main;App$$Lambda$9.0x00007ff000000000.run;work", 4)]);
        let union = diff::merge(&back, &later).unwrap();
        let at = union.names.iter().position(|n| n == "App$$Lambda_.run").unwrap() as u32;
        assert_eq!(union.raw.get(&at).map(String::as_str), Some("App$$Lambda$75.0x00007ff44c0c4208.run"), "the first by bytes");
    }

    #[test]
    fn coded_columns_read_back_exactly_with_gaps_in_every_layout_and_value_type() {
        // Parents' self leaves gaps between the frames of a depth (b ends at 2, d starts at 5),
        // and a comparison's layouts have gaps of their own (a path of one run only).
        let before = table(&[("a;b", 2), ("a", 3), ("c;d", 4), ("c", 1), ("e;f;g", 6)]);
        let after = table(&[("a;b", 7), ("c;d", 4), ("c;x", 2), ("e;f", 9), ("e;f;g", 1)]);
        let huge = table(&[("a;b", 5_000_000_007), ("a", 3), ("c;d", 4), ("c", 6_000_000_000)]);
        for config in [
            ChunkConfig { root_width: 4, class_factor: 2, target_frames: 2, search_intervals: 1, names_per_file: 2 },
            ChunkConfig { root_width: 1000, class_factor: 8, target_frames: 4096, search_intervals: 100, names_per_file: 1000 },
        ] {
            for t in [&before, &huge] {
                let dir = tempfile::tempdir().unwrap();
                encode_to(dir.path(), t, &config);
                assert_eq!(&read_graph(dir.path()).unwrap().1, t);
            }
            let union = diff::merge(&before, &after).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let write = |rel: &str, bytes: &[u8]| {
                let p = dir.path().join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, bytes).map_err(|e| FillError::Write(e.to_string()))
            };
            let m = encode_graph("samples", "samples", &union, &Sides::new("the earlier run", "this run"), &config, Palette::Hot, &write).unwrap();
            // A frame wide enough to be drawn at the root view of any layout is in a class-0
            // chunk: a fine chunk is narrow in every layout.
            let d = m.diff.as_ref().unwrap();
            for c in m.chunks.iter().filter(|c| c.class > 0) {
                let w = config.root_width as u64;
                let (a, b) = (c.after.as_ref().unwrap(), c.before.as_ref().unwrap());
                assert!(c.max_total * w < m.total && a.max_total * w < d.total_after && b.max_total * w < d.total_before, "{c:?}");
            }
            assert_eq!(m.chunks.iter().any(|c| c.class > 0), config.root_width == 4, "the small canvas has fine chunks");
            for layout in [Layout::Union, Layout::After, Layout::Before] {
                let mut expected = union.clone();
                diff::relayout(&mut expected, layout).unwrap();
                let (_, back) = read_graph_in(dir.path(), Some(layout)).unwrap();
                assert_eq!((&back.offset, &back.total, &back.parent), (&expected.offset, &expected.total, &expected.parent), "{layout:?}");
            }
            assert!(!dir.path().join("after").exists() && !dir.path().join("before").exists(), "one folder holds every layout");
        }
    }

    #[test]
    fn a_chunk_whose_parents_do_not_make_a_tree_is_refused_not_walked() {
        // Found by fuzzing the chunk reader: a frame whose parent was damaged to "none" (the
        // root's 0xFFFFFFFF) sent `fold` walking up out of the table; a parent pointing at
        // the frame itself, or below it, would send it round forever.
        let t = table(&[("main;work", 5), ("main;idle", 3)]);
        let config = ChunkConfig { root_width: 100, class_factor: 4, target_frames: 4096, search_intervals: 100, names_per_file: 1000 };
        for (row, parent) in [(1usize, u32::MAX), (2, 2), (1, 3), (0, 0)] {
            let dir = tempfile::tempdir().unwrap();
            encode_to(dir.path(), &t, &config);
            assert!(read_graph(dir.path()).is_ok());
            // One chunk of 4 frames (all, main, idle, work) in u32 values: header and row
            // index (24 + 4 * 4, padded to 40), three value columns, then ids, parents, names.
            let path = dir.path().join("c/0-0.bin.gz");
            let mut bytes = plain_chunk(&gz::unpack(std::fs::read(&path).unwrap(), u64::MAX).unwrap());
            let n = 4;
            let ids = 40 + 3 * 4 * n;
            let at = (0..n).find(|&i| u32::from_le_bytes(bytes[ids + 4 * i..ids + 4 * i + 4].try_into().unwrap()) as usize == row).unwrap();
            let p = ids + 4 * (n + at);
            bytes[p..p + 4].copy_from_slice(&parent.to_le_bytes());
            rewrite_chunk(dir.path(), "c/0-0.bin.gz", &gz::pack(&bytes));
            let e = read_graph(dir.path()).unwrap_err();
            assert!(e.contains(&format!("frame {row} has parent {parent}")) && e.contains("damaged"), "{e}");
        }
        // Found next: a manifest claiming more decimal places than a value has digits.
        let dir = tempfile::tempdir().unwrap();
        encode_to(dir.path(), &t, &config);
        let path = dir.path().join("manifest.json");
        let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        manifest["decimals"] = serde_json::json!(4_000_000_000u32);
        std::fs::write(&path, manifest.to_string()).unwrap();
        let e = read_graph(dir.path()).unwrap_err();
        assert!(e.contains("4000000000 decimal places") && e.contains("damaged"), "{e}");
    }

    #[test]
    fn totals_past_32_bits_are_stored_as_f64_and_read_back_exactly() {
        // Nanoseconds of CPU time pass 2^32 in a few seconds.
        let t = table(&[("main;work", 5_000_000_007), ("main;idle", 3)]);
        let config = ChunkConfig { root_width: 100, class_factor: 4, target_frames: 4096, search_intervals: 100, names_per_file: 1000 };
        let dir = tempfile::tempdir().unwrap();
        let files = std::sync::Mutex::new(Vec::new());
        let write = |rel: &str, bytes: &[u8]| {
            files.lock().unwrap().push((rel.to_string(), gz::unpack(bytes.to_vec(), u64::MAX).unwrap().len()));
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).map_err(|e| FillError::Write(e.to_string()))
        };
        let m = encode("cpu", "nanoseconds", &t, &config, Palette::Hot, &write).unwrap();
        assert_eq!(m.values, "f64");
        let (_, back) = read_graph(dir.path()).unwrap();
        assert_eq!(back, t);
        // The root-view chunk (all, main, work; depths 0..3): the header and row index (24 + 4 * 4,
        // padded to 40), then per frame three f64 columns and three u32 columns, then how many
        // parents are outside the chunk and those parents: one, the root's. Its left-heavy
        // offsets: a header of 16 bytes and an f64 per frame.
        let size = |name: &str| files.lock().unwrap().iter().find(|(f, _)| f == name).unwrap().1;
        assert_eq!(m.chunks[0].frames, 3);
        assert_eq!(size("c/0-0.bin.gz"), 40 + 3 * (3 * 8 + 3 * 4) + 4 + 4);
        assert_eq!(size(&left_file("c/0-0.bin.gz")), 16 + 3 * 8);
        // The same files as version 1 wrote them (f64 values, no `values` key) still read back.
        let path = dir.path().join("manifest.json");
        let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        json["version"] = 1.into();
        json.as_object_mut().unwrap().remove("values");
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        // Version 1 stored its files plain.
        for c in &m.chunks {
            let p = dir.path().join(&c.file);
            let mut bytes = plain_chunk(&gz::unpack(std::fs::read(&p).unwrap(), u64::MAX).unwrap());
            bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
            rewrite_chunk(dir.path(), &c.file, &bytes);
        }
        for f in &m.names {
            let p = dir.path().join(&f.file);
            std::fs::write(&p, gz::unpack(std::fs::read(&p).unwrap(), u64::MAX).unwrap()).unwrap();
        }
        let (m1, back) = read_graph(dir.path()).unwrap();
        assert_eq!((m1.version, m1.values.as_str()), (1, "f64"));
        assert_eq!(back, t);
    }
}
