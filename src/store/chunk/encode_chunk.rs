//! The bytes of one chunk file (docs/FORMAT.md "Chunk files", "Coded columns": a header, a row
//! index by depth, then the columns in byte planes, offsets as gaps, ids and parents as
//! rows of the chunk) and of its left-heavy offsets ("Left-heavy offsets"); of a differential
//! graph, with the offsets of its after and before layouts beside the union's ([`Others`]).

use crate::graph::diff;
use crate::graph::frames::{FrameTable, Layout, NO_PARENT};
use crate::store::columns::{pad8, put_column, put_u32, put_u32_column, Values};
use crate::store::planes;
use super::format::{CHUNK_MAGIC, CODED, FROM_PARENTS, LAYOUTS_VERSION, LEFT_MAGIC, OUTSIDE, PARENT_ROWS, UNION_FROM_LAYOUTS, VERSION};

/// The after and before layouts of a differential graph, beside the union layout its table
/// has: each frame's offset and width in each (`graph::diff::relayout`).
pub(super) struct Others {
    pub(super) after: (Vec<u64>, Vec<u64>),
    pub(super) before: (Vec<u64>, Vec<u64>),
}

impl Others {
    /// Of a table `relayout` laid out as the union (its after columns set).
    pub(super) fn of(union: &FrameTable) -> Result<Others, String> {
        let (before, after) = (union.before.as_ref().expect("a differential table"), union.after.as_ref().expect("relaid out"));
        let laid = |layout| {
            let (offset, total, _) = diff::laid_out(&union.parent, before, after, layout).map_err(|e| e.to_string())?;
            Ok::<_, String>((offset, total))
        };
        Ok(Others { after: laid(Layout::After)?, before: laid(Layout::Before)? })
    }
}

/// The left-heavy offsets (`left`, by frame) of the chunk of `rows`, in its row order
/// (docs/FORMAT.md "Left-heavy offsets"): a header (magic, version 1, flags with bit 1 when
/// values are `u32`, the row count), then each row's left-heavy offset less its parent's,
/// wherever the parent is (the root: its own), in byte planes. Most frames are their parent's
/// heaviest child, at distance 0. From the frame's own default offset instead, which a reader
/// could add without other chunks, the large profile's took several times the bytes (its
/// rows' parents are mostly in coarser chunks, and those shifts do not pack: BENCHMARKS.md,
/// "Graph format 12").
pub(super) fn encode_left(table: &FrameTable, left: &[u64], rows: &[u32], values: Values) -> Vec<u8> {
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
pub(super) fn encode_chunk(table: &FrameTable, others: Option<&Others>, rows: &[u32], new_id: &[u32], values: Values) -> Vec<u8> {
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
