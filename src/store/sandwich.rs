//! Precomputed sandwiches: the callers and callees trees of the functions called from the most
//! places and of those with the most self time, merged at build time and cut to what a pane
//! draws at the root view, so that the page shows them without fetching every chunk (the
//! chunks over a function called from many places are nearly all of a graph's). The first are
//! the ones the page merges most slowly; the second head the page's table of functions, which
//! is sorted by self time, and are the hot functions a user opens first. A byte budget per
//! graph bounds them; the page merges any other function itself, and these too once a zoom
//! needs finer nodes. The byte layout is in `docs/FORMAT.md` ("Sandwich files").

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::columns::{put_column, put_u32, put_u32_column, Sink, Values};
use super::planes;
use crate::error::FillError;
use crate::graph::frames::{FrameTable, NO_PARENT};

const MAGIC: &[u8; 4] = b"FSSW";
/// Version of the sandwich files.
pub const SANDWICH_VERSION: u32 = 1;
/// Most functions a graph has sandwiches of.
const CANDIDATES: usize = 16;
/// Fewest outermost calls a function needs to be precomputed: the page merges the sandwich of
/// a function called from a few places from the chunks over it at little cost.
const MIN_CALLS: usize = 16;

/// One precomputed sandwich in the manifest.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SandwichRef {
    /// File name, relative to the graph folder.
    pub file: String,
    /// The function's name id (as the chunks number names).
    pub name: u32,
    /// Its calls: frames of it with no ancestor of the same name.
    pub calls: u64,
    /// File size.
    pub bytes: u64,
}

/// The byte budget of a graph's sandwich files: a quarter of its chunk bytes, at least 64 KiB.
pub fn budget(chunk_bytes: u64) -> u64 {
    (chunk_bytes / 4).max(64 << 10)
}

/// A row of a cut tree as the file holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Row {
    name: u32,
    offset: u64,
    total: u64,
    self_: u64,
    parent: u32,
}

/// Per table row, the row after its subtree (rows are depth first): a frame's children are
/// `r + 1`, then each next one at the end of the one before, while before `end[r]`.
fn subtree_ends(t: &FrameTable) -> Vec<u32> {
    let mut size = vec![1u32; t.len()];
    for r in (1..t.len()).rev() {
        size[t.parent[r] as usize] += size[r];
    }
    size.iter().enumerate().map(|(r, s)| r as u32 + s).collect()
}

/// Groups of one node's items by the name of the next frame along, with their sums.
struct Groups {
    /// Per table name: its group, or `u32::MAX`.
    of: Vec<u32>,
    name: Vec<u32>,
    total: Vec<u64>,
    self_: Vec<u64>,
    items: Vec<Vec<u32>>,
}

impl Groups {
    fn new(names: usize) -> Groups {
        Groups { of: vec![u32::MAX; names], name: Vec::new(), total: Vec::new(), self_: Vec::new(), items: Vec::new() }
    }

    fn add(&mut self, name: u32, total: u64, self_: u64, item: u32) {
        let mut g = self.of[name as usize];
        if g == u32::MAX {
            g = self.name.len() as u32;
            self.of[name as usize] = g;
            self.name.push(name);
            self.total.push(0);
            self.self_.push(0);
            self.items.push(Vec::new());
        }
        let g = g as usize;
        self.total[g] += total;
        self.self_[g] += self_;
        self.items[g].push(item);
    }

    /// The node's children, in byte order of their names, from row `h` at `offset`: rows of
    /// those kept (every child of the root, else a total of at least `min`) onto `rows` and
    /// their items onto `items`; the groups are emptied.
    fn children(&mut self, names: &[String], h: usize, offset: u64, min: u64, rows: &mut Vec<Row>, items: &mut Vec<Vec<u32>>) {
        let mut order: Vec<usize> = (0..self.name.len()).collect();
        order.sort_unstable_by(|&a, &b| names[self.name[a] as usize].as_bytes().cmp(names[self.name[b] as usize].as_bytes()));
        let mut o = offset;
        for g in order {
            let total = self.total[g];
            if h == 0 || (total >= min && total > 0) {
                rows.push(Row { name: self.name[g], offset: o, total, self_: self.self_[g], parent: h as u32 });
                items.push(std::mem::take(&mut self.items[g]));
            }
            o += total;
        }
        for &n in &self.name {
            self.of[n as usize] = u32::MAX;
        }
        self.name.clear();
        self.total.clear();
        self.self_.clear();
        self.items.clear();
    }
}

/// The callees tree of `calls`, cut (each call's subtree merged, rooted at the function, as
/// the page's `sandwich.js` merges it), in the file's row order. A node is merged only when
/// kept and at least `min`: a node's children are no wider than it, so the nodes under a
/// narrower one are all cut (the root's children are kept, not merged further).
fn callees(t: &FrameTable, name: u32, calls: &[u32], min: u64, end: &[u32], g: &mut Groups) -> Vec<Row> {
    let (total, self_) = calls.iter().fold((0, 0), |(a, b), &c| (a + t.total[c as usize], b + t.self_[c as usize]));
    let mut rows = vec![Row { name, offset: 0, total, self_, parent: NO_PARENT }];
    let mut items = vec![calls.to_vec()];
    let mut h = 0;
    while h < rows.len() {
        let frames = std::mem::take(&mut items[h]);
        if h == 0 || rows[h].total >= min {
            for &r in &frames {
                let mut c = r + 1;
                while c < end[r as usize] {
                    let k = c as usize;
                    g.add(t.name[k], t.total[k], t.self_[k], c);
                    c = end[k];
                }
            }
            g.children(&t.names, h, rows[h].offset, min, &mut rows, &mut items);
        }
        h += 1;
    }
    rows
}

/// The callers tree of `calls`, cut (each call's path up to its stack's first frame, merged
/// from the function up; a node's self the calls whose stacks begin there), in the file's row
/// order, merged as far as [`callees`] merges its tree.
fn callers(t: &FrameTable, name: u32, calls: &[u32], min: u64, g: &mut Groups) -> Vec<Row> {
    let total = calls.iter().map(|&c| t.total[c as usize]).sum();
    let mut rows = vec![Row { name, offset: 0, total, self_: 0, parent: NO_PARENT }];
    // Per call, the ancestor its next step reads.
    let mut up: Vec<u32> = calls.iter().map(|&c| t.parent[c as usize]).collect();
    let mut items = vec![(0..calls.len() as u32).collect::<Vec<u32>>()];
    let mut h = 0;
    while h < rows.len() {
        let list = std::mem::take(&mut items[h]);
        let grow = h == 0 || rows[h].total >= min;
        let mut self_ = 0;
        for &i in &list {
            let q = up[i as usize];
            let value = t.total[calls[i as usize] as usize];
            if q == NO_PARENT || q == 0 {
                self_ += value; // the stack begins here
            } else if grow {
                g.add(t.name[q as usize], value, 0, i);
                up[i as usize] = t.parent[q as usize];
            }
        }
        rows[h].self_ = self_;
        if grow {
            g.children(&t.names, h, rows[h].offset, min, &mut rows, &mut items);
        }
        h += 1;
    }
    rows
}

/// A sandwich file (docs/FORMAT.md): both trees' rows, callers first.
fn encode_file(name: u32, calls: usize, trees: [&[Row]; 2], new_id: &[u32], values: Values) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, SANDWICH_VERSION);
    // Flag 4: coded columns (docs/FORMAT.md "Coded columns"), as chunks have them.
    put_u32(&mut out, ((values == Values::U32) as u32) << 1 | CODED);
    put_u32(&mut out, name);
    put_u32(&mut out, calls as u32);
    put_u32(&mut out, trees[0].len() as u32);
    put_u32(&mut out, trees[1].len() as u32);
    put_u32(&mut out, 0);
    let w = values.width();
    for rows in trees {
        // A node's offset as its gap after the sibling before it, or (a first child) from its
        // parent's offset; parents as steps from the row before.
        let gap = |(i, r): (usize, &Row)| match i.checked_sub(1).map(|p| &rows[p]) {
            Some(prev) if prev.parent == r.parent => r.offset.wrapping_sub(prev.offset + prev.total),
            _ if r.parent == NO_PARENT => r.offset,
            _ => r.offset.wrapping_sub(rows[r.parent as usize].offset),
        };
        let columns: [Vec<u64>; 3] = [rows.iter().enumerate().map(gap).collect(), rows.iter().map(|r| r.total).collect(), rows.iter().map(|r| r.self_).collect()];
        for col in columns {
            // As chunks' columns (a gap is never negative in a tree the build made).
            let start = out.len();
            put_column(&mut out, values, col.into_iter());
            planes::split(&mut out[start..], w);
        }
        let parents = rows.iter().scan(0u32, |prev, r| Some(r.parent.wrapping_sub(std::mem::replace(prev, r.parent))));
        for col in [parents.collect::<Vec<u32>>(), rows.iter().map(|r| new_id[r.name as usize]).collect()] {
            let start = out.len();
            put_u32_column(&mut out, col.into_iter());
            planes::split(&mut out[start..], 4);
        }
    }
    out
}

/// Flag of a sandwich file whose columns are coded.
const CODED: u32 = 4;

/// The sandwich files of a plain graph within `budget` bytes, handed to `sink`: of the
/// functions with at least [`MIN_CALLS`] calls, the one with the most calls, the one with the
/// most self time, the second with the most calls, the second with the most self time, and so
/// on (ties by name; each function once; the first [`CANDIDATES`]), in that order, each whose
/// file fits what is left of the budget; nodes cut at `1 / root_width` of the function's total
/// (a pixel of a canvas `root_width` wide). `new_id`: name ids as the chunks number them;
/// `self_of`: each name's self ([`crate::graph::frames::self_by_name`]).
pub fn encode(
    t: &FrameTable,
    new_id: &[u32],
    self_of: &[u64],
    root_width: u32,
    budget: u64,
    values: Values,
    sink: Sink,
) -> Result<Vec<SandwichRef>, FillError> {
    if t.before.is_some() || t.len() < 2 {
        return Ok(Vec::new());
    }
    // Each name's calls: its frames with no ancestor of the same name. The root (name 0) is
    // nobody's call, and not a candidate.
    let calls = crate::graph::frames::topmost_frames(t);
    let eligible: Vec<usize> = (1..t.names.len()).filter(|&n| calls[n].len() >= MIN_CALLS).collect();
    let by_name = |a: usize, b: usize| t.names[a].as_bytes().cmp(t.names[b].as_bytes());
    let mut by_calls = eligible.clone();
    by_calls.sort_by(|&a, &b| calls[b].len().cmp(&calls[a].len()).then_with(|| by_name(a, b)));
    let mut by_self = eligible;
    by_self.sort_by(|&a, &b| self_of[b].cmp(&self_of[a]).then_with(|| by_name(a, b)));
    let mut order = Vec::with_capacity(CANDIDATES);
    let mut taken = vec![false; t.names.len()];
    for n in by_calls.iter().zip(&by_self).flat_map(|(&a, &b)| [a, b]) {
        if order.len() < CANDIDATES && !taken[n] {
            taken[n] = true;
            order.push(n);
        }
    }
    let end = subtree_ends(t);
    // Merged a batch at a time, one per thread; a file that does not fit what is left is
    // skipped. The batches change how much is merged in vain, never what is written.
    let mut left = budget;
    let mut out = Vec::new();
    for batch in order.chunks(rayon::current_num_threads().max(1)) {
        let files: Vec<(usize, Vec<u8>)> = batch
            .par_iter()
            .map(|&n| {
                let total: u64 = calls[n].iter().map(|&c| t.total[c as usize]).sum();
                // A pixel of a canvas root_width wide, rounded up: frames narrower are not drawn.
                let min = total.div_ceil(root_width.max(1) as u64);
                let mut g = Groups::new(t.names.len());
                let a = callers(t, n as u32, &calls[n], min, &mut g);
                let b = callees(t, n as u32, &calls[n], min, &end, &mut g);
                (n, super::gz::pack(&encode_file(new_id[n], calls[n].len(), [&a, &b], new_id, values)))
            })
            .collect();
        for (n, bytes) in files {
            if bytes.len() as u64 > left {
                continue;
            }
            left -= bytes.len() as u64;
            let file = format!("w/{}.bin{}", out.len(), super::gz::SUFFIX);
            sink(&file, &bytes)?;
            out.push(SandwichRef { file, name: new_id[n], calls: calls[n].len() as u64, bytes: bytes.len() as u64 });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::*;
    use crate::graph::frames::self_by_name;
    use crate::graph::frames::StackMerger;

    fn table(lines: &[(String, u64)]) -> FrameTable {
        let mut m = StackMerger::new(false, 1000);
        for (s, c) in lines {
            m.add(s.as_bytes(), *c, 0).unwrap();
        }
        m.finish().unwrap()
    }

    /// From the stacks alone: for each stack through `f`, from its first `f` on, every prefix
    /// of what follows (callees: "f;…;x") and of what precedes it read backwards (callers).
    fn reckon(lines: &[(String, u64)], f: &str) -> [BTreeMap<String, (u64, u64)>; 2] {
        let mut out = [BTreeMap::new(), BTreeMap::new()];
        for (s, c) in lines {
            let frames: Vec<&str> = s.split(';').collect();
            let Some(i) = frames.iter().position(|x| *x == f) else { continue };
            let up: Vec<&str> = frames[..=i].iter().rev().copied().collect();
            for (k, side) in [up, frames[i..].to_vec()].into_iter().enumerate() {
                for j in 0..side.len() {
                    let e = out[k].entry(side[..=j].join(";")).or_insert((0, 0));
                    e.0 += c;
                    if j + 1 == side.len() {
                        e.1 += c;
                    }
                }
            }
        }
        out
    }

    /// A decoded row: (path, offset, total, self).
    type DecodedRow = (String, u64, u64, u64);

    /// A file's two trees as rows, in file order.
    fn decode(b: &[u8], names: &[String]) -> (u32, Vec<Vec<DecodedRow>>) {
        let u = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(&b[0..4], MAGIC);
        assert_eq!(u(8) & CODED, CODED, "written coded");
        let w = if u(8) & 2 != 0 { 4 } else { 8 };
        // One column of n values of `w` bytes from its planes.
        let column = |at: usize, n: usize, w: usize| -> Vec<u64> {
            (0..n)
                .map(|i| {
                    let bytes: Vec<u8> = (0..w).map(|k| b[at + k * n + i]).collect();
                    match w {
                        4 => u32::from_le_bytes(bytes.try_into().unwrap()) as u64,
                        _ => f64::from_le_bytes(bytes.try_into().unwrap()) as i64 as u64,
                    }
                })
                .collect()
        };
        let mut at = 32;
        let mut trees = Vec::new();
        for n in [u(20) as usize, u(24) as usize] {
            let [gap, total, self_] = [0, 1, 2].map(|k| column(at + k * w * n, n, w));
            let steps = column(at + 3 * w * n, n, 4);
            let name = column(at + 3 * w * n + 4 * n, n, 4);
            let mut rows: Vec<(String, u64, u64, u64)> = Vec::new();
            let (mut parents, mut parent) = (Vec::new(), 0u32);
            for r in 0..n {
                parent = parent.wrapping_add(steps[r] as u32);
                parents.push(parent);
                let name = &names[name[r] as usize];
                let (path, offset) = match parent {
                    NO_PARENT => (name.clone(), gap[r]),
                    p if r > 0 && parents[r - 1] == p => (format!("{};{name}", rows[p as usize].0), rows[r - 1].1 + rows[r - 1].2 + gap[r]),
                    p => (format!("{};{name}", rows[p as usize].0), rows[p as usize].1 + gap[r]),
                };
                rows.push((path, offset, total[r], self_[r]));
            }
            at += n * (3 * w + 8);
            trees.push(rows);
        }
        assert_eq!(at, b.len());
        (u(16), trees)
    }

    fn profile() -> Vec<(String, u64)> {
        let mut lines = Vec::new();
        for i in 0..40u64 {
            lines.push((format!("main;w{};malloc;brk", i % 23), 1 + i % 5));
            lines.push((format!("main;x{};malloc", i % 7), 2));
        }
        lines.push(("main;r;malloc;malloc;mmap".to_string(), 30)); // recursion: one call
        lines.push(("malloc;brk".to_string(), 9)); // a stack beginning at malloc
        for i in 0..20 {
            lines.push((format!("main;y{i};free;z{}", i % 3), 3));
        }
        lines
    }

    #[test]
    fn the_most_called_functions_sandwiches_are_the_stacks_paths_cut_at_a_pixel() {
        let lines = profile();
        let t = table(&lines);
        // Name ids as chunks would number them: any renumbering, here reversed.
        let new_id: Vec<u32> = (0..t.names.len() as u32).map(|i| if i == 0 { 0 } else { t.names.len() as u32 - i }).collect();
        let mut by_new = t.names.clone();
        for (old, &new) in new_id.iter().enumerate() {
            by_new[new as usize] = t.names[old].clone();
        }
        let files = Mutex::new(BTreeMap::new());
        let sink = |f: &str, b: &[u8]| {
            files.lock().unwrap().insert(f.to_string(), b.to_vec());
            Ok(())
        };
        let refs = encode(&t, &new_id, &self_by_name(&t), 40, 1 << 20, Values::U32, &sink).unwrap();
        // malloc: 23 + 7 + 1 + 1 = 32 calls (the one inside another is not one); brk 23 + 1;
        // free 20; nothing else has 16 (z0 .. z2 are called from 20 places, but each under
        // a free, so its calls are ... each one of 20 too: 7, 7 and 6).
        let named: Vec<(&str, u64)> = refs.iter().map(|r| (by_new[r.name as usize].as_str(), r.calls)).collect();
        assert_eq!(named, vec![("malloc", 32), ("brk", 24), ("free", 20)]);
        let mut cut_paths = 0;
        for r in &refs {
            let f = by_new[r.name as usize].clone();
            let bytes = files.lock().unwrap()[&r.file].clone();
            assert_eq!(bytes.len() as u64, r.bytes);
            assert!(r.file.ends_with(".bin.gz") && crate::store::gz::is_packed(&bytes), "{} is published packed", r.file);
            let bytes = crate::store::gz::unpack(bytes, u64::MAX).unwrap();
            let (calls, trees) = decode(&bytes, &by_new);
            assert_eq!(calls as u64, r.calls);
            let want = reckon(&lines, &f);
            for (rows, want) in trees.iter().zip(&want) {
                let total = want[&f].0;
                let cut = total.div_ceil(40);
                // Exactly the root, its children and the paths of at least a pixel.
                let kept: Vec<&String> = want.keys().filter(|p| p.matches(';').count() <= 1 || want[*p].0 >= cut).collect();
                let mut got: Vec<&String> = rows.iter().map(|r| &r.0).collect();
                got.sort();
                assert_eq!(got, kept, "{f}");
                cut_paths += want.len() - kept.len();
                for (path, offset, total, self_) in rows {
                    assert_eq!((*total, *self_), want[path], "{f}: {path}");
                    // Each child after the totals of the siblings before it, cut ones too.
                    let Some((parent, name)) = path.rsplit_once(';') else { continue };
                    let before: u64 = want
                        .iter()
                        .filter(|(p, _)| p.rsplit_once(';').is_some_and(|(q, n)| q == parent && n.as_bytes() < name.as_bytes()))
                        .map(|(_, v)| v.0)
                        .sum();
                    let at = rows.iter().find(|r| r.0 == parent).unwrap().1;
                    assert_eq!(*offset, at + before, "{f}: {path}");
                }
            }
        }
        assert!(cut_paths > 0, "some paths are cut");
        // The budget: in order, each file that fits what is left.
        let sizes: Vec<u64> = refs.iter().map(|r| r.bytes).collect();
        let fit = |budget: u64| encode(&t, &new_id, &self_by_name(&t), 40, budget, Values::U32, &sink).unwrap().iter().map(|r| r.calls).collect::<Vec<_>>();
        assert_eq!(fit(sizes.iter().sum()), vec![32, 24, 20]);
        assert!(sizes[1] < sizes[0] && sizes[1] + sizes[2] >= sizes[0] && sizes[2] < sizes[0], "{sizes:?}");
        assert_eq!(fit(sizes[0] - 1), vec![24], "malloc does not fit; brk, after it, does, and leaves too little for free");
        assert_eq!(fit(sizes[0]), vec![32]);
        assert_eq!(fit(sizes[1].min(sizes[2]) - 1), Vec::<u64>::new());
    }

    #[test]
    fn the_functions_with_the_most_self_time_take_turns_with_the_most_called() {
        // a: 30 calls, self 30; b: 25 calls, self 25; c: 18 calls, self 180 (the page's table,
        // sorted by self time, shows it first). Every other name has fewer than 16 calls.
        let mut lines = Vec::new();
        for i in 0..30 {
            lines.push((format!("main;p{i};a"), 1));
        }
        for i in 0..25 {
            lines.push((format!("main;q{i};b"), 1));
        }
        for i in 0..18 {
            lines.push((format!("main;s{i};c"), 10));
        }
        let t = table(&lines);
        let ids: Vec<u32> = (0..t.names.len() as u32).collect();
        let sink = |_: &str, _: &[u8]| Ok(());
        let fit = |budget: u64| encode(&t, &ids, &self_by_name(&t), 40, budget, Values::U32, &sink).unwrap();
        let all = fit(1 << 20);
        let named: Vec<(&str, u64)> = all.iter().map(|r| (t.names[r.name as usize].as_str(), r.calls)).collect();
        // The most called, the most self time, the second most called.
        assert_eq!(named, vec![("a", 30), ("c", 18), ("b", 25)]);
        // Room for two: the hottest by self time comes before the second most called.
        let two: Vec<&str> = fit(all[0].bytes + all[1].bytes).iter().map(|r| t.names[r.name as usize].as_str()).collect();
        assert_eq!(two, vec!["a", "c"]);
    }

    #[test]
    fn the_files_are_the_same_whatever_the_thread_count() {
        let lines = profile();
        let t = table(&lines);
        let ids: Vec<u32> = (0..t.names.len() as u32).collect();
        let run = |threads: usize, budget: u64| {
            let files = Mutex::new(BTreeMap::new());
            let sink = |f: &str, b: &[u8]| {
                files.lock().unwrap().insert(f.to_string(), b.to_vec());
                Ok(())
            };
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let refs = pool.install(|| encode(&t, &ids, &self_by_name(&t), 40, budget, Values::U32, &sink).unwrap());
            (refs, files.into_inner().unwrap())
        };
        let all = run(1, 1 << 20);
        assert_eq!(all.0.len(), 3);
        // A budget that stops in the middle of a batch of three.
        let some = all.0[0].bytes + all.0[1].bytes;
        for threads in [2, 3, 4] {
            assert_eq!(run(threads, 1 << 20), all);
            assert_eq!(run(threads, some), run(1, some));
        }
        assert_eq!(run(3, some).0.len(), 2);
    }
}
