//! The search buckets (docs/FORMAT.md "Search buckets"): each name's value intervals and the
//! bytes of the files that list them, a plain graph's (each name's extents merged) and a
//! differential graph's (version 5: one entry per topmost frame of each name).

use crate::graph::frames::FrameTable;
use crate::graph::lists::Lists;
use crate::store::columns::{pad8, put_column, put_u32, put_u32_column, Values};
use crate::store::planes;
use super::format::{CODED, DIFF_VERSION, SEARCH_MAGIC, VERSION};

/// Value intervals by name id.
type Intervals = Lists<(u64, u64)>;

/// Each name's extents, merged into sorted disjoint intervals.
pub(super) fn name_intervals(table: &FrameTable) -> Intervals {
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

pub(super) fn encode_search(name_lo: u32, intervals: &[&[(u64, u64)]], values: Values) -> Vec<u8> {
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

/// Of a differential table: each name's intervals, one per topmost frame (see
/// [`topmost_frames`](crate::graph::frames::topmost_frames)), empty ones included, so that the buckets are cut alike in every layout.
pub(super) fn diff_intervals(table: &FrameTable, frames: &Lists<u32>) -> Intervals {
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
pub(super) fn encode_diff_search(name_lo: u32, table: &FrameTable, lists: &[&[u32]], last: &[u32], values: Values) -> Vec<u8> {
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
pub(super) fn subtree_last(table: &FrameTable) -> Vec<u32> {
    let n = table.len();
    let mut last: Vec<u32> = (0..n as u32).collect();
    for r in (1..n).rev() {
        let p = table.parent[r] as usize;
        last[p] = last[p].max(last[r]);
    }
    last
}
