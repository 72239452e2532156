//! The writer of a graph: a laid-out [`FrameTable`] cut into chunks (by width class, then
//! depths, then offset), its names numbered in order of first use, each file made and handed
//! to the sink, and the manifest that lists them. The bytes of each kind of file are made by
//! [`super::encode_chunk`] (chunks, left-heavy offsets), [`super::search`] (search buckets) and
//! serde ([`super::manifest`]: name files, the manifest).

use rayon::prelude::*;

use crate::config::ChunkConfig;
use crate::error::FillError;
use crate::graph::color::Palette;
use crate::graph::diff::{self, Measure};
use crate::graph::frames::{self_by_name, topmost_frames, FrameTable, Layout};
use crate::graph::lists::Lists;
use crate::store::columns::{Sink, Values};
use crate::store::gz;
use crate::store::sandwich;
use super::encode_chunk::{encode_chunk, encode_left, Others};
use super::format::{MANIFEST_VERSION, PACKED_MANIFEST};
use super::manifest::{left_file, ChunkRef, DiffInfo, DiffSearch, Manifest, Names, NamesRef, SearchRef, Sides, Span};
use super::search::{diff_intervals, encode_diff_search, encode_search, name_intervals, subtree_last};

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

/// Depths one chunk may span at most, so that a deep graph is fetched as the user scrolls.
const MAX_DEPTH_SPAN: u32 = 64;

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
