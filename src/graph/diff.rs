//! Differential graphs: two frame tables merged into one whose frames carry a before and an
//! after value, laid out so that nothing present in either run vanishes.
//!
//! [`merge`] walks both tables at once (each is in depth-first order with siblings sorted by
//! name, so their children lists merge like sorted lists) and makes the union tree: every
//! path of either run is one frame, with zero where a run does not have it. [`relayout`] then
//! gives the frames their widths, by one of three [`Layout`]s:
//!
//! - `Union` (the default view): a frame's width is its total before as a share of the before
//!   total plus its total after as a share of the after total, each in units of 2^-30 of a
//!   whole and rounded down ([`union_width`]), so that a path present in only one run still
//!   has width (unless its share is below 2^-30); its self width is the same of its self
//!   values. Rounding down, a frame's children and self never add up to more than its width
//!   (they may leave it a few units of 2^-30 over), so boxes nest as in any graph; and each
//!   width is a function of the frame's own values, which is why the chunk files leave the
//!   widths out (docs/FORMAT.md).
//! - `After`: the second run's values (flamegraph.pl's view: removed paths get width 0).
//! - `Before`: the first run's values.
//!
//! [`changes`] lists, per function, the self and total before and after, which the comparison
//! page's list of regressions and the series page's marks read. [`color`] is the colour a frame
//! gets in the diff views (the page script computes the same, `diff.js`).

use std::collections::HashMap;

use super::frames::{pow10, Before, FrameTable, Layout, MergeError, MAX_EXACT, NO_PARENT, ROOT_NAME};
use super::lists::Lists;

/// One whole in `Union` widths: a run's total is this wide.
pub const UNION_SCALE: u64 = 1 << 30;

/// Value `v` of a run whose total is `of`, in `Union` widths: `floor(v · 2^30 / of)`, 0 when
/// `of` is 0. The page script computes the same (`fetch.js` `unionWidth`).
pub fn union_width(v: u64, of: u64) -> u64 {
    if of == 0 {
        0
    } else {
        (v as u128 * UNION_SCALE as u128 / of as u128) as u64
    }
}

/// The width and self width of a frame with values (total, self) before `b` and after `a`, in
/// `layout`, where the runs' totals are `tb` and `ta`: what [`relayout`] gives it.
pub fn widths(layout: Layout, b: (u64, u64), a: (u64, u64), tb: u64, ta: u64) -> (u64, u64) {
    match layout {
        Layout::After => a,
        Layout::Before => b,
        Layout::Union => (union_width(b.0, tb) + union_width(a.0, ta), union_width(b.1, tb) + union_width(a.1, ta)),
    }
}

/// The union of `before` and `after` (two plain or differential tables; of a differential one,
/// its after values are taken), laid out by [`Layout::Union`].
pub fn merge(before: &FrameTable, after: &FrameTable) -> Result<FrameTable, MergeError> {
    // One name table, sorted by bytes with the root first, and each table's ids mapped to it.
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    for t in [before, after] {
        for n in t.names.iter().skip(1) {
            if !index.contains_key(n.as_str()) {
                index.insert(n, 0);
                names.push(n);
            }
        }
    }
    names.sort_unstable();
    for (i, n) in names.iter().enumerate() {
        index.insert(n, i as u32 + 1);
    }
    let map = |t: &FrameTable| -> Vec<u32> { t.names.iter().enumerate().map(|(i, n)| if i == 0 { 0 } else { index[n.as_str()] }).collect() };
    let (map_b, map_a) = (map(before), map(after));
    let (kids_b, kids_a) = (children(before), children(after));
    let (vb, va) = (before.values(), after.values());
    // Values of runs with fractional counts are compared in the finer run's decimal places.
    let decimals = before.decimals.max(after.decimals);
    let (fb, fa) = (pow10(decimals - before.decimals), pow10(decimals - after.decimals));
    let (fb, fa) = (fb.ok_or(MergeError::Overflow)?, fa.ok_or(MergeError::Overflow)?);
    let scaled = |v: u64, f: u64| v.checked_mul(f).ok_or(MergeError::Overflow);

    let n_guess = before.len().max(after.len());
    let mut out = FrameTable {
        names: std::iter::once(ROOT_NAME.to_string()).chain(names.iter().map(|s| s.to_string())).collect(),
        name: Vec::with_capacity(n_guess),
        depth: Vec::with_capacity(n_guess),
        parent: Vec::with_capacity(n_guess),
        offset: Vec::new(),
        total: Vec::new(),
        self_: Vec::new(),
        before: Some(Before { total: Vec::with_capacity(n_guess), self_: Vec::with_capacity(n_guess) }),
        after: Some(Before { total: Vec::with_capacity(n_guess), self_: Vec::with_capacity(n_guess) }),
        layout: Layout::After,
        decimals,
        raw: Default::default(),
    };
    // The profiles' own forms of renamed names, either run's (the first by bytes).
    let pairs: Vec<(&str, &str)> = [before, after].iter().flat_map(|t| t.raw.iter().map(|(&i, r)| (t.names[i as usize].as_str(), r.as_str()))).collect();
    out.attach_raw(pairs);
    const NONE: u32 = u32::MAX;
    // Pending pairs (row in before, row in after, depth, parent row in out); either row may be
    // NONE, not both.
    let root_b = if before.is_empty() { NONE } else { 0 };
    let root_a = if after.is_empty() { NONE } else { 0 };
    let mut todo: Vec<(u32, u32, u32, u32)> = vec![(root_b, root_a, 0, NO_PARENT)];
    let mut merged: Vec<(u32, u32)> = Vec::new();
    while let Some((rb, ra, depth, parent)) = todo.pop() {
        let row = out.name.len() as u32;
        let name = if rb != NONE { map_b[before.name[rb as usize] as usize] } else if ra != NONE { map_a[after.name[ra as usize] as usize] } else { 0 };
        out.name.push(name);
        out.depth.push(depth);
        out.parent.push(parent);
        let b = out.before.as_mut().expect("set above");
        b.total.push(if rb != NONE { scaled(vb.0[rb as usize], fb)? } else { 0 });
        b.self_.push(if rb != NONE { scaled(vb.1[rb as usize], fb)? } else { 0 });
        let a = out.after.as_mut().expect("set above");
        a.total.push(if ra != NONE { scaled(va.0[ra as usize], fa)? } else { 0 });
        a.self_.push(if ra != NONE { scaled(va.1[ra as usize], fa)? } else { 0 });
        // Children of both, merged by name (both lists are sorted by name).
        let cb: &[u32] = if rb != NONE { &kids_b[rb as usize] } else { &[] };
        let ca: &[u32] = if ra != NONE { &kids_a[ra as usize] } else { &[] };
        merged.clear();
        let (mut i, mut j) = (0, 0);
        while i < cb.len() || j < ca.len() {
            let nb = cb.get(i).map(|&r| map_b[before.name[r as usize] as usize]);
            let na = ca.get(j).map(|&r| map_a[after.name[r as usize] as usize]);
            match (nb, na) {
                (Some(x), Some(y)) if x == y => {
                    merged.push((cb[i], ca[j]));
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => {
                    merged.push((cb[i], NONE));
                    i += 1;
                }
                (Some(_), None) => {
                    merged.push((cb[i], NONE));
                    i += 1;
                }
                _ => {
                    merged.push((NONE, ca[j]));
                    j += 1;
                }
            }
        }
        for &(b, a) in merged.iter().rev() {
            todo.push((b, a, depth + 1, row));
        }
    }
    relayout(&mut out, Layout::Union)?;
    Ok(out)
}

/// Children lists of a table in depth-first order: each list in row order, which is name
/// order.
fn children(t: &FrameTable) -> Lists<u32> {
    Lists::collect(t.len(), || t.parent.iter().enumerate().filter(|&(_, &p)| p != NO_PARENT).map(|(row, &p)| (p, row as u32)))
}

/// Gives a differential table (before columns present) the widths of `layout`. A table laid
/// out by its second count keeps that count as its `after` columns.
pub fn relayout(t: &mut FrameTable, layout: Layout) -> Result<(), MergeError> {
    if t.before.is_none() {
        return Ok(());
    }
    if t.after.is_none() {
        // Laid out by the second count until now: that count is the after columns.
        t.after = Some(Before { total: t.total.clone(), self_: t.self_.clone() });
    }
    let (before, after) = (t.before.as_ref().expect("checked above"), t.after.as_ref().expect("set above"));
    (t.offset, t.total, t.self_) = laid_out(&t.parent, before, after, layout)?;
    t.layout = layout;
    Ok(())
}

/// Each frame's offset, width and self width in one layout.
pub type Laid = (Vec<u64>, Vec<u64>, Vec<u64>);

/// The offsets, widths and self widths of `layout` of a differential table's frames, whose
/// parents are `parent` and values `before` and `after` (the table itself is left as it is).
pub fn laid_out(parent: &[u32], before: &Before, after: &Before, layout: Layout) -> Result<Laid, MergeError> {
    let n = parent.len();
    let (tb, ta) = (before.total.first().copied().unwrap_or(0), after.total.first().copied().unwrap_or(0));
    let (total, own): (Vec<u64>, Vec<u64>) =
        (0..n).map(|r| widths(layout, (before.total[r], before.self_[r]), (after.total[r], after.self_[r]), tb, ta)).unzip();
    if total.first().is_some_and(|&g| g >= MAX_EXACT) {
        return Err(MergeError::TooLarge(total[0]));
    }
    let mut offset = vec![0u64; n];
    let mut cursor = vec![0u64; n];
    for r in 1..n {
        let p = parent[r] as usize;
        offset[r] = cursor[p];
        cursor[p] += total[r];
        cursor[r] = offset[r];
    }
    Ok((offset, total, own))
}

/// What one function did between the two runs: its self and total (recursion counted once)
/// before and after.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Change {
    /// The function.
    pub name: String,
    /// Self before.
    pub self_before: u64,
    /// Self after.
    pub self_after: u64,
    /// Total before (frames under a frame of the same name not counted again).
    pub total_before: u64,
    /// Total after.
    pub total_after: u64,
}

impl Change {
    /// Change of its self share of the whole, in percentage points.
    pub fn self_points(&self, total_before: u64, total_after: u64) -> f64 {
        points(self.self_before, total_before, self.self_after, total_after)
    }
}

/// `after / total_after - before / total_before`, in percentage points (a run with total 0
/// counts as share 0).
pub fn points(before: u64, total_before: u64, after: u64, total_after: u64) -> f64 {
    let share = |v: u64, t: u64| if t == 0 { 0.0 } else { v as f64 / t as f64 };
    100.0 * (share(after, total_after) - share(before, total_before))
}

/// Every function of a differential table with its values before and after, in name order
/// (the root excluded).
pub fn changes(t: &FrameTable) -> Vec<Change> {
    let (Some(b), (at, aself)) = (&t.before, t.values()) else { return Vec::new() };
    let names = t.names.len();
    let mut out: Vec<Change> = t.names.iter().map(|n| Change { name: n.clone(), ..Change::default() }).collect();
    // Open frames of each name on the current path: a frame counts in its name's total only
    // when no ancestor has the same name.
    let mut open = vec![0u32; names];
    let mut path: Vec<u32> = Vec::new();
    for r in 0..t.len() {
        let d = t.depth[r] as usize;
        while path.len() > d {
            let top = path.pop().expect("not empty");
            open[t.name[top as usize] as usize] -= 1;
        }
        let name = t.name[r] as usize;
        let c = &mut out[name];
        c.self_before += b.self_[r];
        c.self_after += aself[r];
        if open[name] == 0 {
            c.total_before += b.total[r];
            c.total_after += at[r];
        }
        open[name] += 1;
        path.push(r as u32);
    }
    out.remove(0);
    out
}

/// Which of the two measures colours a diff view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// The change of the frame's share of its run's total, in percentage points.
    Share,
    /// The change of its value.
    Absolute,
}

/// Colour, `0xRRGGBB`, of a change `delta` on a scale where `scale` (> 0) is full colour:
/// grey for no change, towards red for growth and blue for shrinkage. The page script's
/// `diffColor` is the same function.
pub fn color(delta: f64, scale: f64) -> u32 {
    const NEUTRAL: [f64; 3] = [224.0, 224.0, 224.0];
    const GREW: [f64; 3] = [220.0, 38.0, 30.0];
    const SHRANK: [f64; 3] = [38.0, 96.0, 220.0];
    let i = if scale > 0.0 { (delta.abs() / scale).min(1.0) } else { 0.0 };
    let to = if delta > 0.0 { GREW } else { SHRANK };
    let ch = |k: usize| (NEUTRAL[k] + (to[k] - NEUTRAL[k]) * i).round() as u32;
    (ch(0) << 16) | (ch(1) << 8) | ch(2)
}

/// Per frame, the change in `measure` of a differential table, and the largest change in
/// magnitude (the colour scale), the root excluded.
pub fn deltas(t: &FrameTable, measure: Measure) -> (Vec<f64>, f64) {
    let Some(b) = &t.before else { return (vec![0.0; t.len()], 0.0) };
    let (at, _) = t.values();
    let (tb, ta) = (b.total.first().copied().unwrap_or(0), at.first().copied().unwrap_or(0));
    let d: Vec<f64> = (0..t.len())
        .map(|r| match measure {
            Measure::Share => points(b.total[r], tb, at[r], ta),
            Measure::Absolute => at[r] as f64 - b.total[r] as f64,
        })
        .collect();
    let max = d.iter().skip(1).fold(0.0f64, |m, x| m.max(x.abs()));
    (d, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::frames::StackMerger;
    use crate::store::fold::folded_lines;

    fn table(lines: &[(&str, u64)]) -> FrameTable {
        let mut m = StackMerger::new(false, 1000);
        for (s, c) in lines {
            m.add(s.as_bytes(), *c, 0).unwrap();
        }
        m.finish().unwrap()
    }

    #[test]
    fn the_union_keeps_every_path_of_either_run_with_zero_where_it_is_absent() {
        let before = table(&[("main;gone", 4), ("main;gone;deeper", 6), ("main;a", 10)]);
        let after = table(&[("main;a", 20), ("main;new;x", 5)]);
        let d = merge(&before, &after).unwrap();
        // Reckoned by hand: every stack of either run, before and after.
        let expected = vec![
            "main;a 10 20\n".to_string(),
            "main;gone 4 0\n".into(),
            "main;gone;deeper 6 0\n".into(),
            "main;new;x 0 5\n".into(),
        ];
        assert_eq!(folded_lines(&d), expected);
        // Nothing vanishes: every frame has width in the union layout, and boxes nest.
        assert!(d.total.iter().all(|&w| w > 0));
        for r in 1..d.len() {
            let p = d.parent[r] as usize;
            assert!(d.offset[r] >= d.offset[p] && d.offset[r] + d.total[r] <= d.offset[p] + d.total[p]);
        }
        // The root is two wholes (each run's total as a share of itself), and each frame's
        // widths are its own values' shares, rounded down: reckoned here for every frame.
        assert_eq!(d.total[0], 2 * UNION_SCALE, "each run is one whole wide");
        let (b, a) = (d.before.as_ref().unwrap(), d.after.as_ref().unwrap());
        for r in 0..d.len() {
            let w = |v: u64, of: u64| (v as f64 / of as f64 * (1u64 << 30) as f64).floor() as u64;
            assert_eq!(d.total[r], w(b.total[r], 20) + w(a.total[r], 25), "row {r}");
            assert_eq!(d.self_[r], w(b.self_[r], 20) + w(a.self_[r], 25), "row {r}");
        }
        // A frame's children and its self fit in it.
        for r in 0..d.len() {
            let kids: u64 = (0..d.len()).filter(|&k| d.parent[k] as usize == r).map(|k| d.total[k]).sum();
            assert!(kids + d.self_[r] <= d.total[r], "row {r}");
        }
        // The other layouts are each run's own graph.
        let mut a = d.clone();
        relayout(&mut a, Layout::After).unwrap();
        assert_eq!(a.total[0], 25);
        let gone = a.names.iter().position(|n| n == "gone").unwrap() as u32;
        let row = a.name.iter().position(|&n| n == gone).unwrap();
        assert_eq!((a.total[row], a.before.as_ref().unwrap().total[row]), (0, 10));
        let mut b = d.clone();
        relayout(&mut b, Layout::Before).unwrap();
        assert_eq!((b.total[0], b.total[row]), (20, 10));
    }

    #[test]
    fn the_merged_table_has_one_row_per_stack_with_both_counts_and_siblings_by_name() {
        // Siblings interleave: before has a and c, after b and c. Summing folded lines would
        // hide `main;c` split over two rows (`10 0` and `0 20`); the table itself must not.
        let before = table(&[("main;a", 10), ("main;c", 10), ("main;c;x", 3)]);
        let after = table(&[("main;b", 5), ("main;c", 20), ("main;c;x", 4), ("main;c;y", 1)]);
        let d = merge(&before, &after).unwrap();
        let path = |r: usize| {
            let mut p = Vec::new();
            let mut r = r as u32;
            while r != NO_PARENT {
                p.push(d.names[d.name[r as usize] as usize].as_str());
                r = d.parent[r as usize];
            }
            p.reverse();
            p.join(";")
        };
        let (b, a) = (d.before.as_ref().unwrap(), d.after.as_ref().unwrap());
        let rows: Vec<(String, u64, u64)> = (0..d.len()).map(|r| (path(r), b.total[r], a.total[r])).collect();
        // Depth-first, siblings sorted by name, each stack once with its before and after.
        let expected: Vec<(String, u64, u64)> = [
            ("all", 23, 30),
            ("all;main", 23, 30),
            ("all;main;a", 10, 0),
            ("all;main;b", 0, 5),
            ("all;main;c", 13, 25),
            ("all;main;c;x", 3, 4),
            ("all;main;c;y", 0, 1),
        ]
        .iter()
        .map(|&(p, x, y)| (p.to_string(), x, y))
        .collect();
        assert_eq!(rows, expected);
        // Every parent's children are in strictly increasing name order (so no name twice).
        for p in 0..d.len() {
            let kids: Vec<&str> = (0..d.len()).filter(|&k| d.parent[k] as usize == p).map(|k| d.names[d.name[k] as usize].as_str()).collect();
            assert!(kids.windows(2).all(|w| w[0] < w[1]), "children of {}: {kids:?}", path(p));
        }
    }

    #[test]
    fn changes_count_recursion_once_and_colours_go_from_grey_to_red_and_blue() {
        let before = table(&[("f;f;g", 10), ("h", 10)]);
        let after = table(&[("f;f;g", 30), ("h", 10)]);
        let d = merge(&before, &after).unwrap();
        let c = changes(&d);
        let f = c.iter().find(|c| c.name == "f").unwrap();
        assert_eq!((f.total_before, f.total_after, f.self_before, f.self_after), (10, 30, 0, 0));
        let g = c.iter().find(|c| c.name == "g").unwrap();
        // g: 50% of 20 before, 75% of 40 after: +25 points.
        assert!((g.self_points(20, 40) - 25.0).abs() < 1e-9);
        assert_eq!(color(0.0, 1.0), 0xE0E0E0);
        assert_eq!(color(1.0, 1.0), 0xDC261E);
        assert_eq!(color(-2.0, 1.0), 0x2660DC);
        assert_eq!(color(0.5, 1.0), ((222 << 16) | (131 << 8) | 127));
    }
}
