//! Precomputed sandwiches: the callers and callees trees of the functions called from the most
//! places, merged at build time and cut to what a pane draws at the root view, so that the
//! page shows them without fetching every chunk (the chunks over such a function's search
//! intervals are nearly all of a graph's). A byte budget per graph bounds them; the page
//! merges any other function itself, and these too once a zoom needs finer nodes. The byte
//! layout is in `docs/FORMAT.md` ("Sandwich files").

use std::cmp::Ordering;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::chunk::{put_u32, Values};
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

/// The byte budget of a graph's sandwich files: an eighth of its chunk bytes, at least 64 KiB.
pub fn budget(chunk_bytes: u64) -> u64 {
    (chunk_bytes / 8).max(64 << 10)
}

/// One merged tree, nodes in the order they were made (node 0 the root).
#[derive(Default)]
struct Tree {
    parent: Vec<u32>,
    name: Vec<u32>,
    total: Vec<u64>,
    self_: Vec<u64>,
    index: FxHashMap<(u32, u32), u32>,
}

impl Tree {
    fn new(name: u32) -> Tree {
        Tree { parent: vec![NO_PARENT], name: vec![name], total: vec![0], self_: vec![0], index: FxHashMap::default() }
    }

    fn child(&mut self, p: u32, name: u32) -> u32 {
        let next = self.parent.len() as u32;
        let c = *self.index.entry((p, name)).or_insert(next);
        if c == next {
            self.parent.push(p);
            self.name.push(name);
            self.total.push(0);
            self.self_.push(0);
        }
        c
    }
}

/// The outermost frames of every name (frames with no ancestor of the same name), by table
/// name, in row order. The root is nobody's call.
fn calls_by_name(t: &FrameTable) -> Vec<Vec<u32>> {
    let mut calls = vec![Vec::new(); t.names.len()];
    let mut open = vec![0u32; t.names.len()];
    let mut path: Vec<u32> = Vec::new();
    for row in 1..t.len() {
        let p = t.parent[row];
        while let Some(&top) = path.last() {
            if top == p {
                break;
            }
            open[t.name[top as usize] as usize] -= 1;
            path.pop();
        }
        let n = t.name[row] as usize;
        if open[n] == 0 {
            calls[n].push(row as u32);
        }
        open[n] += 1;
        path.push(row as u32);
    }
    calls
}

/// The callees tree of `calls` (each call's subtree merged, rooted at the function) and the
/// callers tree (each call's path up to the stack's first frame, merged from the function up;
/// a node's self the calls whose stacks begin there), as the page's `sandwich.js` merges them.
fn merge(t: &FrameTable, name: u32, calls: &[u32]) -> (Tree, Tree) {
    let mut callees = Tree::new(name);
    let mut callers = Tree::new(name);
    let mut node: Vec<u32> = Vec::new();
    for &c in calls {
        let c = c as usize;
        let (total, self_) = (t.total[c], t.self_[c]);
        callees.total[0] += total;
        callees.self_[0] += self_;
        // The subtree is the rows after the call while they are deeper (depth-first order).
        node.clear();
        node.push(0);
        let mut r = c + 1;
        while r < t.len() && t.depth[r] > t.depth[c] {
            let up = node[t.parent[r] as usize - c];
            let k = callees.child(up, t.name[r]);
            callees.total[k as usize] += t.total[r];
            callees.self_[k as usize] += t.self_[r];
            node.push(k);
            r += 1;
        }
        callers.total[0] += total;
        let mut k = 0;
        let mut q = t.parent[c];
        while q != NO_PARENT && q != 0 {
            k = callers.child(k, t.name[q as usize]);
            callers.total[k as usize] += total;
            q = t.parent[q as usize];
        }
        callers.self_[k as usize] += total;
    }
    (callees, callers)
}

/// A laid-out row of a tree: its node, its offset from the root, its parent's row.
type Row = (u32, u64, u32);

/// The rows of a tree as the page lays it out, cut: breadth first over children in byte order
/// of their names (so by depth, then offset), each child after the totals of all the ones
/// before it; kept are the root, all its children, and the nodes of at least `min`.
/// Returns (node, offset from the root, parent row) per row.
fn rows(tree: &Tree, names: &[String], min: u64) -> Vec<Row> {
    let n = tree.parent.len();
    let mut first = vec![0usize; n + 1];
    for &p in &tree.parent[1..] {
        first[p as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut kids = vec![0u32; n.saturating_sub(1)];
    let mut fill = first.clone();
    for (c, &p) in tree.parent.iter().enumerate().skip(1) {
        kids[fill[p as usize]] = c as u32;
        fill[p as usize] += 1;
    }
    let by_name = |a: &u32, b: &u32| -> Ordering { names[tree.name[*a as usize] as usize].as_bytes().cmp(names[tree.name[*b as usize] as usize].as_bytes()) };
    let mut out = vec![(0u32, 0u64, NO_PARENT)];
    let mut h = 0;
    while h < out.len() {
        let (v, at, _) = out[h];
        let list = &mut kids[first[v as usize]..first[v as usize + 1]];
        list.sort_unstable_by(by_name);
        let mut o = at;
        for &c in list.iter() {
            let total = tree.total[c as usize];
            if v == 0 || (total >= min && total > 0) {
                out.push((c, o, h as u32));
            }
            o += total;
        }
        h += 1;
    }
    out
}

/// A sandwich file (docs/FORMAT.md): both trees' rows, callers first.
fn encode_file(name: u32, calls: usize, trees: [(&Tree, &[Row]); 2], new_id: &[u32], values: Values) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, SANDWICH_VERSION);
    put_u32(&mut out, ((values == Values::U32) as u32) << 1);
    put_u32(&mut out, name);
    put_u32(&mut out, calls as u32);
    put_u32(&mut out, trees[0].1.len() as u32);
    put_u32(&mut out, trees[1].1.len() as u32);
    put_u32(&mut out, 0);
    for (tree, rows) in trees {
        for &(_, offset, _) in rows {
            values.put(&mut out, offset);
        }
        for &(v, _, _) in rows {
            values.put(&mut out, tree.total[v as usize]);
        }
        for &(v, _, _) in rows {
            values.put(&mut out, tree.self_[v as usize]);
        }
        for &(_, _, p) in rows {
            put_u32(&mut out, p);
        }
        for &(v, _, _) in rows {
            put_u32(&mut out, new_id[tree.name[v as usize] as usize]);
        }
    }
    out
}

/// The sandwich files of a plain graph within `budget` bytes, handed to `sink`: the functions
/// with the most calls (at least [`MIN_CALLS`]; ties by name; the first [`CANDIDATES`]), in
/// that order until one does not fit what is left of the budget, nodes cut at `1 /
/// root_width` of the function's total (a pixel of a canvas `root_width` wide). `new_id`: name
/// ids as the chunks number them.
pub fn encode(
    t: &FrameTable,
    new_id: &[u32],
    root_width: u32,
    budget: u64,
    values: Values,
    sink: super::chunk::Sink,
) -> Result<Vec<SandwichRef>, String> {
    if t.before.is_some() || t.len() < 2 {
        return Ok(Vec::new());
    }
    let calls = calls_by_name(t);
    let mut order: Vec<usize> = (1..t.names.len()).filter(|&n| calls[n].len() >= MIN_CALLS).collect();
    order.sort_by(|&a, &b| calls[b].len().cmp(&calls[a].len()).then_with(|| t.names[a].as_bytes().cmp(t.names[b].as_bytes())));
    order.truncate(CANDIDATES);
    // Merged a batch at a time, one per thread, until a file does not fit what is left: the
    // batches change how much is merged in vain, never what is written.
    let mut left = budget;
    let mut out = Vec::new();
    for batch in order.chunks(rayon::current_num_threads().max(1)) {
        let files: Vec<(usize, Vec<u8>)> = batch
            .par_iter()
            .map(|&n| {
                let (callees, callers) = merge(t, n as u32, &calls[n]);
                // A pixel of a canvas root_width wide, rounded up: frames narrower are not drawn.
                let min = callees.total[0].div_ceil(root_width.max(1) as u64);
                let a = rows(&callers, &t.names, min);
                let b = rows(&callees, &t.names, min);
                (n, encode_file(new_id[n], calls[n].len(), [(&callers, &a), (&callees, &b)], new_id, values))
            })
            .collect();
        for (n, bytes) in files {
            if bytes.len() as u64 > left {
                return Ok(out);
            }
            left -= bytes.len() as u64;
            let file = format!("w/{}.bin", out.len());
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

    /// A file's two trees as (path, offset, total, self) rows, in file order.
    fn decode(b: &[u8], names: &[String]) -> (u32, Vec<Vec<(String, u64, u64, u64)>>) {
        let u = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(&b[0..4], MAGIC);
        let w = if u(8) & 2 != 0 { 4 } else { 8 };
        let val = |at: usize| if w == 4 { u(at) as u64 } else { f64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as u64 };
        let mut at = 32;
        let mut trees = Vec::new();
        for n in [u(20) as usize, u(24) as usize] {
            let col = |k: usize| at + k * w * n;
            let mut rows: Vec<(String, u64, u64, u64)> = Vec::new();
            for r in 0..n {
                let parent = u(at + 3 * w * n + 4 * r);
                let name = &names[u(at + 3 * w * n + 4 * n + 4 * r) as usize];
                let path = if parent == NO_PARENT { name.clone() } else { format!("{};{name}", rows[parent as usize].0) };
                rows.push((path, val(col(0) + w * r), val(col(1) + w * r), val(col(2) + w * r)));
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
        let refs = encode(&t, &new_id, 40, 1 << 20, Values::U32, &sink).unwrap();
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
        // The budget: in order of calls until a file does not fit.
        let sizes: Vec<u64> = refs.iter().map(|r| r.bytes).collect();
        let fit = |budget: u64| encode(&t, &new_id, 40, budget, Values::U32, &sink).unwrap().iter().map(|r| r.calls).collect::<Vec<_>>();
        assert_eq!(fit(sizes.iter().sum()), vec![32, 24, 20]);
        assert_eq!(fit(sizes[0] + sizes[1] - 1), vec![32], "brk does not fit: free, after it, is not tried");
        assert_eq!(fit(sizes[0]), vec![32]);
        assert_eq!(fit(sizes[0] - 1), Vec::<u64>::new());
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
            let refs = pool.install(|| encode(&t, &ids, 40, budget, Values::U32, &sink).unwrap());
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
