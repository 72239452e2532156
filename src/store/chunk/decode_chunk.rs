//! The bytes of one chunk file back into the rows of a [`FrameTable`], of every version: a
//! coded chunk is first turned into the plain chunk of its version (its columns out of byte
//! planes, its gaps, steps and parent rows added up, a differential chunk's one layout kept),
//! which is then read.

use crate::graph::diff;
use crate::graph::frames::{FrameTable, Layout, NO_PARENT};
use crate::store::columns::Values;
use crate::store::planes;
use super::format::{CHUNK_MAGIC, CODED, DIFF_VERSION, FROM_PARENTS, LAYOUTS_VERSION, NO_WIDTHS_VERSION, OUTSIDE, PARENT_ROWS, UNION_FROM_LAYOUTS, VERSION};

/// The same chunk with its columns not coded (docs/FORMAT.md "Coded columns"), the flag
/// cleared; `b` is a chunk of `version` and `flags` whose columns start at `at`. `totals` are
/// the two runs' totals of a differential graph, whose widths follow from its values.
///
/// A differential chunk of [`LAYOUTS_VERSION`] comes back as one of [`DIFF_VERSION`] in
/// `layout`: that layout's offsets, then the four value columns.
pub(super) fn uncode_chunk(b: &[u8], version: u32, flags: u32, at: usize, layout: Layout, totals: (u64, u64)) -> Result<Vec<u8>, String> {
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
pub(super) fn decode_chunk(b: &[u8], t: &mut FrameTable, version: u32, totals: (u64, u64)) -> Result<(), String> {
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
