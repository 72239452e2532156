//! The frame table: stacks merged into one row per flame-graph box.
//!
//! [`StackMerger`] takes stacks one at a time (as a decoder streams them) and merges them into
//! a prefix tree; [`StackMerger::finish`] lays the tree out as a [`FrameTable`] in depth-first
//! order with siblings sorted by name, and computes every frame's `offset`, `total` and `self`
//! with checked integer arithmetic. The browser never walks this tree: the chunk files carry
//! the laid-out columns.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::lists::Lists;
use super::generated;

/// Label of the root frame, which is name 0 of every name table.
pub const ROOT_NAME: &str = "all";
/// `parent` of the root frame.
pub const NO_PARENT: u32 = u32::MAX;
/// Largest value that survives the trip through an `f64` column exactly.
pub const MAX_EXACT: u64 = 1 << 53;

/// One flame graph, laid out: struct of arrays, one row per frame, in depth-first order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameTable {
    /// Name table: `names[0]` is [`ROOT_NAME`], the others distinct and sorted by bytes.
    pub names: Vec<String>,
    /// Index into `names`, per frame.
    pub name: Vec<u32>,
    /// Depth of the frame; the root is at 0.
    pub depth: Vec<u32>,
    /// Row of the parent frame ([`NO_PARENT`] for the root).
    pub parent: Vec<u32>,
    /// Sum of the totals of the frames left of this one at the same depth.
    pub offset: Vec<u64>,
    /// Value of the frame and everything it called.
    pub total: Vec<u64>,
    /// Value of the frame itself: `total` less its children's totals.
    pub self_: Vec<u64>,
    /// The first count of a differential profile, when there is one.
    pub before: Option<Before>,
    /// The second count of a differential graph, when its layout is not that count (see
    /// [`crate::graph::diff`]); `None` for a plain graph and for one laid out by the second
    /// count, whose `total` and `self_` are then that count.
    pub after: Option<Before>,
    /// What `offset`, `total` and `self_` measure.
    pub layout: Layout,
    /// Decimal places of every value: a value `v` stands for `v / 10^decimals` in the unit.
    /// 0 but for inputs with fractional counts (folded `main;f 31.23`), whose values are
    /// kept exact as integers of hundredths (or finer) instead of being rounded.
    pub decimals: u32,
    /// Of the names renamed ([`super::generated`]), by index into `names`: the name as the
    /// profile gave it (the first by bytes when it gave several), for the tooltip.
    pub raw: std::collections::BTreeMap<u32, String>,
}

/// What a table's widths (`offset`, `total`, `self_`) measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The profile's values (a plain graph), or the second count of a differential graph.
    #[default]
    After,
    /// The first count of a differential graph.
    Before,
    /// Both counts, each as a share of its own total: nothing present in either run is lost.
    Union,
}

impl Layout {
    /// The name the manifest gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::After => "after",
            Layout::Before => "before",
            Layout::Union => "union",
        }
    }
}

/// One count's columns of a differential graph (folded `stack before after`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Before {
    /// Before-count of the frame and everything it called.
    pub total: Vec<u64>,
    /// Before-count of the frame itself.
    pub self_: Vec<u64>,
}

impl FrameTable {
    /// Records, for each `(name, raw)`, `raw` as the profile's form of `name` when the table
    /// has that name (`names[1..]` are in byte order); the first raw form by bytes wins.
    pub fn attach_raw<'a>(&mut self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (name, raw) in pairs {
            if let Ok(i) = self.names[1.min(self.names.len())..].binary_search_by(|n| n.as_str().cmp(name)) {
                let slot = self.raw.entry(i as u32 + 1).or_insert_with(|| raw.to_string());
                if raw < slot.as_str() {
                    *slot = raw.to_string();
                }
            }
        }
    }

    /// Number of frames, the root included.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when the table has no frame at all (never the case for a finished merge).
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// Number of rows: the largest depth plus one.
    pub fn depth_count(&self) -> u32 {
        self.depth.iter().copied().max().map_or(0, |d| d + 1)
    }

    /// The root's total: the whole profile.
    pub fn grand_total(&self) -> u64 {
        self.total.first().copied().unwrap_or(0)
    }

    /// The values the graph measures, `(total, self)`: the second count of a differential
    /// graph (whatever its layout), else the widths.
    pub fn values(&self) -> (&[u64], &[u64]) {
        match &self.after {
            Some(a) => (&a.total, &a.self_),
            None => (&self.total, &self.self_),
        }
    }
}

/// Why a merge failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError {
    /// A sum does not fit: the profile's counts are absurd.
    Overflow,
    /// The graph's total is at least 2^53 and would lose precision in the chunk files.
    TooLarge(u64),
    /// A stack is deeper than `limits.max_depth`.
    TooDeep(u32),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Overflow => write!(f, "the counts add up to more than 2^64 (overflow)"),
            MergeError::TooLarge(t) => write!(f, "the total {t} is 2^53 or more and cannot be stored exactly"),
            MergeError::TooDeep(d) => write!(f, "a stack is deeper than limits.max_depth ({d} frames)"),
        }
    }
}

/// Stacks turned into name ids by a [`Tokenizer`], for a [`Tree`] to merge, possibly on
/// another thread. One record per stack, in a flat buffer of words: source line (2 words),
/// count (2), before-count (2), frames shared with the previous stack (1), number of new
/// frames `n` (1), then the `n` name ids.
#[derive(Clone, Debug, Default)]
pub struct StackBatch {
    /// Whether the stacks carry a before-count.
    pub differential: bool,
    /// Decimal places of the batch's counts (see [`FrameTable::decimals`]). Batches are
    /// merged in order, and a later batch never has fewer places than an earlier one.
    pub decimals: u32,
    words: Vec<u32>,
}

impl StackBatch {
    /// An empty batch of plain or two-count stacks.
    pub fn new(differential: bool) -> Self {
        StackBatch { differential, decimals: 0, words: Vec::new() }
    }

    /// Gives every count buffered so far `decimals` places (more than it has): counts are
    /// multiplied by the power of ten between. An overflow comes with the stack's line.
    pub fn rescale(&mut self, decimals: u32) -> Result<(), (MergeError, u64)> {
        let factor = pow10(decimals - self.decimals).ok_or((MergeError::Overflow, 0))?;
        let w = &mut self.words;
        let mut i = 0;
        while i < w.len() {
            let line = w[i] as u64 | (w[i + 1] as u64) << 32;
            for at in [i + 2, i + 4] {
                let v = (w[at] as u64 | (w[at + 1] as u64) << 32).checked_mul(factor).ok_or((MergeError::Overflow, line))?;
                w[at] = v as u32;
                w[at + 1] = (v >> 32) as u32;
            }
            i += 8 + w[i + 7] as usize;
        }
        self.decimals = decimals;
        Ok(())
    }

    /// Number of words buffered; a producer sends the batch when this grows large.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// True when no stack is buffered.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn push_u64(&mut self, v: u64) {
        self.words.push(v as u32);
        self.words.push((v >> 32) as u32);
    }
}

/// The first stage of merging: interns frame names and finds how many leading frames a stack
/// shares, byte for byte, with the previous one, so that sorted or clustered input (the usual
/// case) costs one byte comparison per shared frame rather than one hash lookup.
pub struct Tokenizer {
    /// Ids of `names`, found by a name's hash: each name is held once, in `names` (a map from
    /// names to ids held each twice, 60 to 90 bytes a name, and a profile whose every line has
    /// a new name has millions: docs/RELIABILITY.md, "Memory per byte decoded").
    interned: HashTable<u32>,
    names: Vec<Box<str>>,
    /// Ids of the generated classes' names as the profile gives them ([`generated`]), each
    /// renamed once rather than every time it comes.
    generated: rustc_hash::FxHashMap<Box<str>, u32>,
    prev: Vec<u8>,
    prev_ends: Vec<usize>,
    /// Name ids of the previous stack when it came as a slice of names ([`Tokenizer::push_names`]).
    prev_ids: Vec<u32>,
    max_depth: u32,
    /// Stacks whose bytes were not UTF-8 and were read with U+FFFD replacements.
    pub invalid_utf8: u64,
    /// Stacks tokenized.
    pub stacks: u64,
}

impl Tokenizer {
    /// A tokenizer that refuses stacks deeper than `max_depth` frames.
    pub fn new(max_depth: u32) -> Self {
        Tokenizer {
            interned: HashTable::new(),
            names: Vec::new(),
            generated: Default::default(),
            prev: Vec::new(),
            prev_ends: Vec::new(),
            prev_ids: Vec::new(),
            max_depth,
            invalid_utf8: 0,
            stacks: 0,
        }
    }

    /// Appends one stack (frames separated by `;`, root first) to `batch`.
    pub fn push(&mut self, stack: &[u8], count: u64, before: u64, line: u64, batch: &mut StackBatch) -> Result<(), MergeError> {
        // A stack given as names leaves nothing for byte comparison to share.
        self.prev_ids.clear();
        let shared = self.shared_frames(stack);
        self.prev_ends.truncate(shared);
        batch.push_u64(line);
        batch.push_u64(count);
        batch.push_u64(before);
        batch.words.push(shared as u32);
        let n_at = batch.words.len();
        batch.words.push(0);
        let start = if shared == 0 { 0 } else { self.prev_ends[shared - 1] + 1 };
        // `start` is past the end when the whole stack is shared with the previous one.
        if start <= stack.len() {
            let rest = &stack[start..];
            match std::str::from_utf8(rest) {
                Ok(text) => self.push_frames(text, rest, start, batch),
                Err(_) => {
                    self.invalid_utf8 += 1;
                    let text = String::from_utf8_lossy(rest).into_owned();
                    self.push_frames(&text, rest, start, batch);
                }
            }
        }
        batch.words[n_at] = (self.prev_ends.len() - shared) as u32;
        self.prev.clear();
        self.prev.extend_from_slice(stack);
        self.stacks += 1;
        if self.prev_ends.len() > self.max_depth as usize {
            return Err(MergeError::TooDeep(self.max_depth));
        }
        Ok(())
    }

    /// Appends one stack given as its frame names, root first, to `batch`. Unlike
    /// [`Tokenizer::push`], a name may contain any character, `;` included: decoders of
    /// structured formats (pprof) use this, so that a name is never split.
    pub fn push_names(&mut self, frames: &[&str], count: u64, before: u64, line: u64, batch: &mut StackBatch) -> Result<(), MergeError> {
        if frames.len() > self.max_depth as usize {
            return Err(MergeError::TooDeep(self.max_depth));
        }
        // The byte form of the previous stack, if any, no longer describes it.
        self.prev.clear();
        self.prev_ends.clear();
        let mut shared = 0;
        while shared < frames.len()
            && shared < self.prev_ids.len()
            && self.names.get(self.prev_ids[shared] as usize).is_some_and(|n| **n == *frames[shared])
        {
            shared += 1;
        }
        self.prev_ids.truncate(shared);
        batch.push_u64(line);
        batch.push_u64(count);
        batch.push_u64(before);
        batch.words.push(shared as u32);
        batch.words.push((frames.len() - shared) as u32);
        for frame in &frames[shared..] {
            let id = self.intern(frame);
            batch.words.push(id);
            self.prev_ids.push(id);
        }
        self.stacks += 1;
        Ok(())
    }

    /// Appends one stack given as the first `keep` frames of the previous stack followed by
    /// the frames `ids` (names from [`Tokenizer::intern`]). It costs the new frames only, not
    /// the whole stack: decoders that walk a call tree (a `.cpuprofile`, speedscope's open and
    /// close events) pass each frame once, so deep trees are read in time linear in their
    /// size. `keep` must not exceed the previous stack's depth, nor may an id be one that
    /// was not interned; when the previous stack came through [`Tokenizer::push`], `keep` must be 0.
    pub fn push_ids(&mut self, keep: usize, ids: &[u32], count: u64, before: u64, line: u64, batch: &mut StackBatch) -> Result<(), MergeError> {
        assert!(keep <= self.prev_ids.len(), "push_ids: keep {keep} is deeper than the previous stack ({})", self.prev_ids.len());
        assert!(ids.iter().all(|&id| (id as usize) < self.names.len()), "push_ids: an id that was not interned");
        if keep + ids.len() > self.max_depth as usize {
            return Err(MergeError::TooDeep(self.max_depth));
        }
        self.prev.clear();
        self.prev_ends.clear();
        self.prev_ids.truncate(keep);
        self.prev_ids.extend_from_slice(ids);
        batch.push_u64(line);
        batch.push_u64(count);
        batch.push_u64(before);
        batch.words.push(keep as u32);
        batch.words.push(ids.len() as u32);
        batch.words.extend_from_slice(ids);
        self.stacks += 1;
        Ok(())
    }

    /// The id of a frame name, for [`Tokenizer::push_ids`]: the same name always gets the same
    /// id, and a generated class's name loses its run-time numbers first
    /// ([`generated::normalized`]), so that its versions of one run share an id too.
    pub fn intern(&mut self, frame: &str) -> u32 {
        let (names, hash) = (&self.names, name_hash(frame));
        if let Some(&id) = self.interned.find(hash, |&id| &*names[id as usize] == frame) {
            return id;
        }
        // A name not met yet, or a generated one met before under another form.
        if let Some(&id) = self.generated.get(frame) {
            return id;
        }
        if let Some(plain) = generated::normalized(frame) {
            let id = self.intern(&plain);
            self.generated.insert(frame.into(), id);
            return id;
        }
        let names = &self.names;
        let id = names.len() as u32;
        self.interned.insert_unique(hash, id, |&id| name_hash(&names[id as usize]));
        self.names.push(frame.into());
        id
    }

    /// The interned names, indexed by the ids in the batches.
    pub fn into_names(self) -> Vec<Box<str>> {
        self.names
    }

    /// Each generated class's name as the profile gave it, with the name it was given
    /// ([`generated::normalized`]): `(name, raw)` pairs, for [`FrameTable::attach_raw`].
    pub fn raw_forms(&self) -> Vec<(String, String)> {
        self.generated.iter().map(|(raw, &id)| (self.names[id as usize].to_string(), raw.to_string())).collect()
    }

    /// How many leading frames `stack` shares, byte for byte, with the previous stack.
    fn shared_frames(&self, stack: &[u8]) -> usize {
        let prev = &self.prev;
        let common = common_prefix(prev, stack);
        let boundary = |s: &[u8], i: usize| i == s.len() || s[i] == b';';
        let mut k = 0;
        for &end in &self.prev_ends {
            if end < common || (end == common && boundary(stack, end) && boundary(prev, end)) {
                k += 1;
            } else {
                break;
            }
        }
        k
    }

    /// Interns the frames of `text`, the (possibly repaired) text of the raw bytes `raw`
    /// that start at `start` in the stack; positions recorded for prefix sharing are those of
    /// the raw bytes.
    fn push_frames(&mut self, text: &str, raw: &[u8], start: usize, batch: &mut StackBatch) {
        let mut pos = start;
        for (frame, raw_frame) in text.split(';').zip(raw.split(|&b| b == b';')) {
            pos += raw_frame.len();
            let id = self.intern(frame);
            batch.words.push(id);
            self.prev_ends.push(pos);
            pos += 1;
        }
    }
}

/// The second stage of merging: the prefix tree of name ids, with each node's own counts.
pub struct Tree {
    /// Nodes found by the hash of their parent and name ([`child_hash`]); the key is read from
    /// `parent` and `name`, not held again (a map keyed by both took 17 to 34 bytes a node
    /// where this takes 5 to 10).
    children: HashTable<u32>,
    parent: Vec<u32>,
    name: Vec<u32>,
    self_: Vec<u64>,
    before_self: Option<Vec<u64>>,
    path: Vec<u32>,
    decimals: u32,
}

impl Tree {
    /// An empty tree (just the root) for plain or two-count stacks.
    pub fn new(differential: bool) -> Self {
        Tree {
            children: HashTable::new(),
            parent: vec![NO_PARENT],
            name: vec![u32::MAX],
            self_: vec![0],
            before_self: differential.then(|| vec![0]),
            path: Vec::new(),
            decimals: 0,
        }
    }

    /// Merges a batch of stacks. An error comes with the line of the stack that caused it.
    pub fn apply(&mut self, batch: &StackBatch) -> Result<(), (MergeError, u64)> {
        if batch.decimals > self.decimals {
            // Counts merged so far get the batch's places (fractional counts first seen).
            let factor = pow10(batch.decimals - self.decimals).ok_or((MergeError::Overflow, 0))?;
            for v in self.self_.iter_mut().chain(self.before_self.iter_mut().flatten()) {
                *v = v.checked_mul(factor).ok_or((MergeError::Overflow, 0))?;
            }
            self.decimals = batch.decimals;
        }
        // A batch with fewer places than the tree (a merger's stacks in any order).
        let factor = pow10(self.decimals - batch.decimals).ok_or((MergeError::Overflow, 0))?;
        let w = &batch.words;
        let word64 = |i: usize| w[i] as u64 | (w[i + 1] as u64) << 32;
        let mut i = 0;
        while i < w.len() {
            let line = word64(i);
            let count = word64(i + 2).checked_mul(factor).ok_or((MergeError::Overflow, line))?;
            let before = word64(i + 4).checked_mul(factor).ok_or((MergeError::Overflow, line))?;
            let shared = w[i + 6] as usize;
            let n = w[i + 7] as usize;
            self.path.truncate(shared);
            for &name in &w[i + 8..i + 8 + n] {
                let parent = self.path.last().copied().unwrap_or(0);
                let hash = child_hash(parent, name);
                let (parents, names) = (&self.parent, &self.name);
                let found = self.children.find(hash, |&c| parents[c as usize] == parent && names[c as usize] == name);
                let node = match found {
                    Some(&node) => node,
                    None => {
                        let node = self.parent.len() as u32;
                        self.children.insert_unique(hash, node, |&c| child_hash(parents[c as usize], names[c as usize]));
                        self.parent.push(parent);
                        self.name.push(name);
                        self.self_.push(0);
                        if let Some(b) = &mut self.before_self {
                            b.push(0);
                        }
                        node
                    }
                };
                self.path.push(node);
            }
            i += 8 + n;
            let leaf = self.path.last().copied().unwrap_or(0) as usize;
            self.self_[leaf] = self.self_[leaf].checked_add(count).ok_or((MergeError::Overflow, line))?;
            if let Some(b) = &mut self.before_self {
                b[leaf] = b[leaf].checked_add(before).ok_or((MergeError::Overflow, line))?;
            }
        }
        Ok(())
    }
    /// Lays the merged tree out as a frame table; `names` are the tokenizer's.
    pub fn finish(mut self, names: Vec<Box<str>>) -> Result<FrameTable, MergeError> {
        // The lookup table is the largest part of the tree and is not needed any more.
        drop(std::mem::take(&mut self.children));
        let n = self.parent.len();
        // Name ids in byte order, so that sorting siblings by name is sorting integers.
        let (order, rank) = byte_order(&names);
        let names = {
            let mut by_id: Vec<Option<Box<str>>> = names.into_iter().map(Some).collect();
            let mut sorted = Vec::with_capacity(order.len() + 1);
            sorted.push(ROOT_NAME.to_string());
            sorted.extend(order.iter().map(|&old| by_id[old as usize].take().unwrap_or_default().into_string()));
            sorted
        };
        drop(order);
        let sorted_name = |node: usize| if node == 0 { 0 } else { rank[self.name[node] as usize] };

        let total = subtree_sums(&self.self_, &self.parent)?;
        let before_total = match &self.before_self {
            Some(b) => Some(subtree_sums(b, &self.parent)?),
            None => None,
        };
        if total[0] >= MAX_EXACT {
            return Err(MergeError::TooLarge(total[0]));
        }
        if let Some(b) = &before_total {
            if b[0] >= MAX_EXACT {
                return Err(MergeError::TooLarge(b[0]));
            }
        }

        // Children lists, each sorted by name.
        let parents = &self.parent;
        let mut children = Lists::collect(n, || (1..n).map(|node| (parents[node], node as u32)));
        drop(std::mem::take(&mut self.parent));
        let (first, kids) = children.parts_mut();
        for p in 0..n {
            let group = &mut kids[first[p] as usize..first[p + 1] as usize];
            if group.len() > 1 {
                group.sort_unstable_by_key(|&c| sorted_name(c as usize));
            }
        }
        let (first, kids) = children.parts();

        // Depth-first walk, without recursion (stacks can be 100,000 frames deep).
        let mut table = FrameTable {
            names,
            name: Vec::with_capacity(n),
            depth: Vec::with_capacity(n),
            parent: Vec::with_capacity(n),
            offset: Vec::with_capacity(n),
            total: Vec::with_capacity(n),
            self_: Vec::with_capacity(n),
            before: self.before_self.as_ref().map(|_| Before {
                total: Vec::with_capacity(n),
                self_: Vec::with_capacity(n),
            }),
            after: None,
            layout: Layout::After,
            decimals: self.decimals,
            raw: Default::default(),
        };
        // The frames open on the path from the root, each with its row, depth, the next of its
        // children to lay out and where that child starts. Children are taken one at a time,
        // so the path, not a node's children, is what is held: a root with millions of children
        // (a profile whose every line has a new name) held all of them (docs/BENCHMARKS.md, "Figures behind the code").
        struct Open {
            row: u32,
            depth: u32,
            next: u32,
            end: u32,
            offset: u64,
        }
        let mut path: Vec<Open> = Vec::new();
        let lay = |table: &mut FrameTable, node: usize, depth: u32, parent: u32, offset: u64| {
            let row = table.name.len() as u32;
            table.name.push(sorted_name(node));
            table.depth.push(depth);
            table.parent.push(parent);
            table.offset.push(offset);
            table.total.push(total[node]);
            table.self_.push(self.self_[node]);
            if let (Some(b), Some(bt), Some(bs)) = (&mut table.before, &before_total, &self.before_self) {
                b.total.push(bt[node]);
                b.self_.push(bs[node]);
            }
            Open { row, depth, next: first[node], end: first[node + 1], offset }
        };
        path.push(lay(&mut table, 0, 0, NO_PARENT, 0));
        while let Some(top) = path.last_mut() {
            if top.next == top.end {
                path.pop();
                continue;
            }
            let child = kids[top.next as usize] as usize;
            top.next += 1;
            let offset = top.offset;
            top.offset += total[child];
            let (depth, parent) = (top.depth + 1, top.row);
            let open = lay(&mut table, child, depth, parent, offset);
            path.push(open);
        }
        Ok(table)
    }
}

/// Both stages in one thread: the simple way to merge stacks that come one at a time.
pub struct StackMerger {
    tokens: Tokenizer,
    tree: Tree,
    batch: StackBatch,
}

impl StackMerger {
    /// A merger for plain (`differential == false`) or two-count stacks.
    pub fn new(differential: bool, max_depth: u32) -> Self {
        StackMerger {
            tokens: Tokenizer::new(max_depth),
            tree: Tree::new(differential),
            batch: StackBatch::new(differential),
        }
    }

    /// Adds one stack, frames separated by `;`, root first. `before` is ignored unless the
    /// merger is differential.
    pub fn add(&mut self, stack: &[u8], count: u64, before: u64) -> Result<(), MergeError> {
        self.batch.words.clear();
        self.tokens.push(stack, count, before, 0, &mut self.batch)?;
        self.tree.apply(&self.batch).map_err(|(e, _)| e)
    }

    /// Adds one stack given as its frame names, root first; names may contain `;`.
    pub fn add_names(&mut self, frames: &[&str], count: u64, before: u64) -> Result<(), MergeError> {
        self.batch.words.clear();
        self.tokens.push_names(frames, count, before, 0, &mut self.batch)?;
        self.tree.apply(&self.batch).map_err(|(e, _)| e)
    }

    /// The id of a frame name, for [`StackMerger::add_ids`].
    pub fn intern(&mut self, name: &str) -> u32 {
        self.tokens.intern(name)
    }

    /// Adds one stack: the first `keep` frames of the previous one, then the frames `ids`
    /// (from [`StackMerger::intern`]); it costs the new frames only (see
    /// [`Tokenizer::push_ids`]).
    pub fn add_ids(&mut self, keep: usize, ids: &[u32], count: u64) -> Result<(), MergeError> {
        self.batch.words.clear();
        self.tokens.push_ids(keep, ids, count, 0, 0, &mut self.batch)?;
        self.tree.apply(&self.batch).map_err(|(e, _)| e)
    }

    /// Stacks whose bytes were not UTF-8.
    pub fn invalid_utf8(&self) -> u64 {
        self.tokens.invalid_utf8
    }

    /// Lays the merged tree out as a frame table.
    pub fn finish(self) -> Result<FrameTable, MergeError> {
        let raw = self.tokens.raw_forms();
        let mut t = self.tree.finish(self.tokens.into_names())?;
        t.attach_raw(raw.iter().map(|(n, r)| (n.as_str(), r.as_str())));
        Ok(t)
    }
}

/// A **time-order** graph (speedscope's "Time Order", a flame chart): stacks in the order
/// they were taken, each merged with the one before it along the frames they share only, so
/// that the horizontal axis is time (or sample order). A frame's children are in the order
/// they ran, not by name: such a graph is drawn and searched as any other, but is not compared
/// with another run's (docs/FORMAT.md, "Time-order graphs"). Frames are numbered as they open,
/// which is depth-first order.
pub struct Timeline {
    tokens: Tokenizer,
    table: FrameTable,
    /// Rows of the open stack, the root first.
    open: Vec<u32>,
    /// The value laid out so far: where the next frame starts.
    end: u64,
    max_depth: usize,
}

impl Timeline {
    /// An empty time-order graph of stacks at most `max_depth` frames deep (a deeper one is an
    /// error, as in the merge).
    pub fn new(max_depth: u32) -> Self {
        let mut table = FrameTable {
            names: Vec::new(),
            name: Vec::new(),
            depth: Vec::new(),
            parent: Vec::new(),
            offset: Vec::new(),
            total: Vec::new(),
            self_: Vec::new(),
            before: None,
            after: None,
            layout: Layout::default(),
            decimals: 0,
            raw: Default::default(),
        };
        table.name.push(u32::MAX);
        table.depth.push(0);
        table.parent.push(NO_PARENT);
        table.offset.push(0);
        table.total.push(0);
        table.self_.push(0);
        Timeline { tokens: Tokenizer::new(max_depth), table, open: vec![0], end: 0, max_depth: max_depth as usize }
    }

    /// The id of a frame name, for [`Timeline::add_ids`].
    pub fn intern(&mut self, name: &str) -> u32 {
        self.tokens.intern(name)
    }

    /// Frames made so far, the root included.
    pub fn frames(&self) -> usize {
        self.table.name.len()
    }

    /// Adds the next stack in time: the first `keep` frames of the stack before it (which stay
    /// open: this stack continues them), then the frames `ids` (from [`Timeline::intern`]),
    /// worth `value`. A stack of value 0 changes nothing but what is open. Returns the number
    /// of frames made.
    pub fn add_ids(&mut self, keep: usize, ids: &[u32], value: u64) -> Result<usize, MergeError> {
        let keep = keep.min(self.open.len() - 1);
        if keep + ids.len() > self.max_depth {
            return Err(MergeError::TooDeep(self.max_depth as u32));
        }
        self.open.truncate(keep + 1);
        let t = &mut self.table;
        let before = t.name.len();
        for &id in ids {
            let parent = *self.open.last().expect("the root is open");
            let row = t.name.len() as u32;
            t.name.push(id);
            t.depth.push(self.open.len() as u32);
            t.parent.push(parent);
            t.offset.push(self.end);
            t.total.push(0);
            t.self_.push(0);
            self.open.push(row);
        }
        if value > 0 {
            match self.end.checked_add(value) {
                Some(e) if e < MAX_EXACT => {}
                Some(e) => return Err(MergeError::TooLarge(e)),
                None => return Err(MergeError::Overflow),
            }
            for &row in &self.open {
                t.total[row as usize] += value;
            }
            t.self_[*self.open.last().expect("the root is open") as usize] += value;
            self.end += value;
        }
        Ok(t.name.len() - before)
    }

    /// The graph as a frame table, its names in byte order (the root's first). Frames that
    /// were opened by stacks of value 0 only have total 0.
    pub fn finish(self) -> FrameTable {
        let mut t = self.table;
        let raw = self.tokens.raw_forms();
        let names = self.tokens.into_names();
        let (order, rank) = byte_order(&names);
        t.names = std::iter::once(ROOT_NAME.to_string()).chain(order.iter().map(|&old| names[old as usize].to_string())).collect();
        t.name[0] = 0;
        for x in t.name.iter_mut().skip(1) {
            *x = rank[*x as usize];
        }
        t.attach_raw(raw.iter().map(|(n, r)| (n.as_str(), r.as_str())));
        t
    }
}

/// What a decoder hands stacks to one at a time, each as the frames it keeps of the stack
/// before and the name ids of its new frames: a [`StackMerger`] (a flame graph) or a
/// [`Timeline`] (a time-order graph), so that one walk over a profile's stacks feeds either.
pub trait AddIds {
    /// The id of a frame name.
    fn intern(&mut self, name: &str) -> u32;
    /// Adds one stack: the first `keep` frames of the stack before, then `ids`, worth `value`.
    fn add_ids(&mut self, keep: usize, ids: &[u32], value: u64) -> Result<(), MergeError>;
}

impl AddIds for StackMerger {
    fn intern(&mut self, name: &str) -> u32 {
        StackMerger::intern(self, name)
    }
    fn add_ids(&mut self, keep: usize, ids: &[u32], value: u64) -> Result<(), MergeError> {
        StackMerger::add_ids(self, keep, ids, value)
    }
}

impl AddIds for Timeline {
    fn intern(&mut self, name: &str) -> u32 {
        Timeline::intern(self, name)
    }
    fn add_ids(&mut self, keep: usize, ids: &[u32], value: u64) -> Result<(), MergeError> {
        Timeline::add_ids(self, keep, ids, value).map(|_| ())
    }
}

/// `10^places`, when it fits.
pub fn pow10(places: u32) -> Option<u64> {
    10u64.checked_pow(places)
}

/// Totals from selfs: every node's value plus its subtree's. Children are created after
/// their parents, so one backward pass suffices.
fn subtree_sums(self_: &[u64], parent: &[u32]) -> Result<Vec<u64>, MergeError> {
    let mut total = self_.to_vec();
    for node in (1..total.len()).rev() {
        let p = parent[node] as usize;
        total[p] = total[p].checked_add(total[node]).ok_or(MergeError::Overflow)?;
    }
    Ok(total)
}

/// Length of the common prefix of two byte strings, eight bytes at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_ne_bytes(a[i..i + 8].try_into().unwrap());
        let y = u64::from_ne_bytes(b[i..i + 8].try_into().unwrap());
        if x != y {
            break;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}


/// Per name, the sum of its frames' self (recursion adds nothing twice: self is exclusive).
pub fn self_by_name(table: &FrameTable) -> Vec<u64> {
    let mut sums = vec![0u64; table.names.len()];
    for (row, &name) in table.name.iter().enumerate() {
        sums[name as usize] += table.self_[row];
    }
    sums
}

/// Per name, the rows of its frames that have no ancestor of the same name (its calls), in
/// row order (which is offset order): a differential graph's search intervals, and the calls a
/// precomputed sandwich merges (`crate::store::sandwich`).
pub fn topmost_frames(table: &FrameTable) -> Lists<u32> {
    Lists::collect(table.names.len(), || {
        let mut open = vec![0u32; table.names.len()];
        let mut path: Vec<u32> = Vec::new();
        (0..table.len()).filter_map(move |r| {
            while path.len() > table.depth[r] as usize {
                let top = path.pop().expect("not empty");
                open[table.name[top as usize] as usize] -= 1;
            }
            let name = table.name[r];
            let topmost = open[name as usize] == 0;
            open[name as usize] += 1;
            path.push(r as u32);
            topmost.then_some((name, r as u32))
        })
    })
}

/// Each frame's offset in the **left-heavy** layout (speedscope's "Left Heavy"): the same
/// frames and widths, but the children of every frame ordered by their totals, heaviest first
/// (equal totals in name order), so that the biggest callees line up on the left at every
/// depth. Computed at build time, as every layout is (docs/FORMAT.md, "Left-heavy offsets").
pub fn left_heavy_offsets(table: &FrameTable) -> Vec<u64> {
    let n = table.len();
    let mut children = Lists::collect(n, || (1..n).map(|r| (table.parent[r], r as u32)));
    let (starts, items) = children.parts_mut();
    let mut left = vec![0u64; n];
    // Parents come before their children in id order, so a frame's offset is known when its
    // children are placed.
    for p in 0..n {
        let kids = &mut items[starts[p] as usize..starts[p + 1] as usize];
        if kids.len() > 1 {
            kids.sort_by_key(|&c| (std::cmp::Reverse(table.total[c as usize]), c));
        }
        let mut at = left[p];
        for &c in kids.iter() {
            left[c as usize] = at;
            at += table.total[c as usize];
        }
    }
    left
}

/// The tokenizer's name ids in byte order of their names, and each id's place in it counted
/// from 1 (the root's label `all` is 0 in a table): what [`Tree::finish`] and
/// [`Timeline::finish`] renumber names by.
fn byte_order(names: &[Box<str>]) -> (Vec<u32>, Vec<u32>) {
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
    let mut rank = vec![0u32; names.len()];
    for (r, &old) in order.iter().enumerate() {
        rank[old as usize] = r as u32 + 1;
    }
    (order, rank)
}

/// The hash a [`Tree`] finds the child `name` of node `parent` by.
fn child_hash(parent: u32, name: u32) -> u64 {
    FxBuildHasher.hash_one(((parent as u64) << 32) | name as u64)
}

/// The hash a [`Tokenizer`] finds a name by.
fn name_hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(lines: &[(&str, u64)]) -> FrameTable {
        let mut m = StackMerger::new(false, 1000);
        for (s, c) in lines {
            m.add(s.as_bytes(), *c, 0).unwrap();
        }
        m.finish().unwrap()
    }

    #[test]
    fn a_timeline_keeps_the_stacks_in_their_order_merging_only_what_continues() {
        // main;a for 2, main;b for 1, main;a;x for 3 (a opens again: b ran between), main;a
        // for 1 (continues it), then a stack of value 0 that only closes frames.
        let mut t = Timeline::new(10);
        let (main, a, b, x) = (t.intern("main"), t.intern("a"), t.intern("b"), t.intern("x"));
        assert_eq!(t.add_ids(0, &[main, a], 2).unwrap(), 2);
        assert_eq!(t.add_ids(1, &[b], 1).unwrap(), 1);
        assert_eq!(t.add_ids(1, &[a, x], 3).unwrap(), 2);
        assert_eq!(t.add_ids(2, &[], 1).unwrap(), 0);
        assert!(matches!(t.add_ids(0, &[0; 11], 1), Err(MergeError::TooDeep(10))));
        let t = t.finish();
        let row = |i: usize| (t.names[t.name[i] as usize].as_str(), t.depth[i], t.parent[i], t.offset[i], t.total[i], t.self_[i]);
        assert_eq!(t.len(), 6);
        assert_eq!(row(0), ("all", 0, NO_PARENT, 0, 7, 0));
        assert_eq!(row(1), ("main", 1, 0, 0, 7, 0));
        assert_eq!(row(2), ("a", 2, 1, 0, 2, 2));
        assert_eq!(row(3), ("b", 2, 1, 2, 1, 1));
        assert_eq!(row(4), ("a", 2, 1, 3, 4, 1));
        assert_eq!(row(5), ("x", 3, 4, 3, 3, 3));
        assert_eq!(t.names, ["all", "a", "b", "main", "x"]);
    }

    #[test]
    fn left_heavy_puts_the_heaviest_child_first_at_every_depth() {
        // By name: a (2) before b (5) under main, and x (1), y (3) under b; left-heavy: b then
        // a, and y then x. Equal totals keep name order (c, d under a).
        let t = merge(&[("main;a;c", 1), ("main;a;d", 1), ("main;b;x", 1), ("main;b;y", 3), ("main;b", 1)]);
        let left = left_heavy_offsets(&t);
        let at = |path: &str| {
            let names: Vec<&str> = path.split(';').collect();
            (0..t.len()).find(|&r| {
                let mut r2 = r;
                let mut got: Vec<&str> = Vec::new();
                while r2 != 0 {
                    got.push(t.names[t.name[r2] as usize].as_ref());
                    r2 = t.parent[r2] as usize;
                }
                got.reverse();
                got == names
            }).unwrap()
        };
        let l = |path: &str| left[at(path)];
        assert_eq!((l("main"), l("main;b"), l("main;a")), (0, 0, 5));
        assert_eq!((l("main;b;y"), l("main;b;x")), (0, 3));
        assert_eq!((l("main;a;c"), l("main;a;d")), (5, 6));
        // The default layout is by name: a first.
        assert_eq!((t.offset[at("main;a")], t.offset[at("main;b")]), (0, 2));
    }

    fn rows(t: &FrameTable) -> Vec<(String, u32, u64, u64, u64)> {
        (0..t.len())
            .map(|i| {
                (t.names[t.name[i] as usize].clone(), t.depth[i], t.offset[i], t.total[i], t.self_[i])
            })
            .collect()
    }

    #[test]
    fn merges_into_depth_first_rows_with_sorted_siblings() {
        let t = merge(&[("main;b", 3), ("main;a;x", 2), ("main", 1), ("main;a", 4)]);
        let r = rows(&t);
        let want = vec![
            ("all".to_string(), 0, 0, 10, 0),
            ("main".into(), 1, 0, 10, 1),
            ("a".into(), 2, 0, 6, 4),
            ("x".into(), 3, 0, 2, 2),
            ("b".into(), 2, 6, 3, 3),
        ];
        assert_eq!(r, want);
        assert_eq!(t.parent, vec![NO_PARENT, 0, 1, 2, 1]);
        assert_eq!(t.names, vec!["all", "a", "b", "main", "x"]);
    }

    #[test]
    fn prefix_reuse_does_not_confuse_names_that_share_bytes() {
        // "ab" shares the bytes "a" with "a;b" but not the frame.
        let t = merge(&[("a;b", 1), ("ab", 2), ("a;bc", 3), ("a;b", 4), ("a", 5), ("a;b;c", 6)]);
        let r = rows(&t);
        assert_eq!(r[1], ("a".into(), 1, 0, 19, 5));
        assert_eq!(r[2], ("b".into(), 2, 0, 11, 5));
        assert_eq!(r[3], ("c".into(), 3, 0, 6, 6));
        assert_eq!(r[4], ("bc".into(), 2, 11, 3, 3));
        assert_eq!(r[5], ("ab".into(), 1, 19, 2, 2));
    }

    #[test]
    fn recursion_and_repeated_names_get_separate_frames() {
        let t = merge(&[("f;f;f", 1), ("f;g;f", 1)]);
        assert_eq!(t.len(), 6);
        assert_eq!(t.names, vec!["all", "f", "g"]);
    }

    #[test]
    fn a_generated_class_has_one_name_whatever_numbers_the_jvm_gave_it() {
        // Two lambda classes of one call site (a JVM can make two), as bytes and as names.
        let t = merge(&[("main;App$$Lambda$75.0x00007ff44c0c4208.run;work", 3), ("main;App$$Lambda$76.0x00007ff44c0c4640.run;work", 2)]);
        assert_eq!(t.names, vec!["all", "App$$Lambda_.run", "main", "work"]);
        assert_eq!(t.len(), 4, "one frame of each name");
        // The profile's own form is kept for the tooltip: the first by bytes.
        assert_eq!(t.raw.iter().collect::<Vec<_>>(), [(&1, &"App$$Lambda$75.0x00007ff44c0c4208.run".to_string())]);
        let mut m = StackMerger::new(false, 10);
        m.add_names(&["main", "App$$Lambda.0x00007ff32c0c6a50.run"], 1, 0).unwrap();
        m.add_names(&["main", "App$$Lambda.0x00007ff32c0c63f8.run"], 1, 0).unwrap();
        let t = m.finish().unwrap();
        assert_eq!((t.names.clone(), t.len()), (vec!["all".to_string(), "App$$Lambda_.run".into(), "main".into()], 3));
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let mut m = StackMerger::new(false, 10);
        m.add(b"a", u64::MAX, 0).unwrap();
        m.add(b"b", 1, 0).unwrap();
        assert_eq!(m.finish().unwrap_err(), MergeError::Overflow);
        let mut m = StackMerger::new(false, 10);
        m.add(b"a", u64::MAX, 0).unwrap();
        assert_eq!(m.add(b"a", 1, 0).unwrap_err(), MergeError::Overflow);
        let mut m = StackMerger::new(false, 10);
        m.add(b"a", MAX_EXACT, 0).unwrap();
        assert!(matches!(m.finish().unwrap_err(), MergeError::TooLarge(_)));
    }

    #[test]
    fn stacks_given_as_new_frames_on_the_previous_ones_merge_like_whole_stacks() {
        let whole = merge(&[("a;b;c", 1), ("a;b;d", 2), ("a", 3), ("a;b;c;e", 4), ("x;b", 5)]);
        let mut m = StackMerger::new(false, 4);
        let id = |m: &mut StackMerger, s: &str| m.intern(s);
        let (a, b, c, d, e, x) = (id(&mut m, "a"), id(&mut m, "b"), id(&mut m, "c"), id(&mut m, "d"), id(&mut m, "e"), id(&mut m, "x"));
        m.add_ids(0, &[a, b, c], 1).unwrap();
        m.add_ids(2, &[d], 2).unwrap();
        m.add_ids(1, &[], 3).unwrap();
        m.add_ids(1, &[b, c, e], 4).unwrap();
        m.add_ids(0, &[x, b], 5).unwrap();
        assert_eq!(rows(&m.finish().unwrap()), rows(&whole));
        let mut m = StackMerger::new(false, 3);
        let a = m.intern("a");
        m.add_ids(0, &[a, a], 1).unwrap();
        assert_eq!(m.add_ids(2, &[a, a], 1).unwrap_err(), MergeError::TooDeep(3));
    }

    #[test]
    fn too_deep_is_an_error() {
        let mut m = StackMerger::new(false, 3);
        assert_eq!(m.add(b"a;b;c;d", 1, 0).unwrap_err(), MergeError::TooDeep(3));
    }

    #[test]
    fn invalid_utf8_is_replaced_and_counted() {
        let mut m = StackMerger::new(false, 10);
        m.add(b"a;b\xffc", 1, 0).unwrap();
        m.add(b"a;b\xffc;d", 1, 0).unwrap();
        assert_eq!(m.invalid_utf8(), 1, "the second line shares the repaired frame");
        let t = m.finish().unwrap();
        assert!(t.names.contains(&"b\u{fffd}c".to_string()));
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn differential_keeps_both_columns() {
        let mut m = StackMerger::new(true, 10);
        m.add(b"a;b", 5, 2).unwrap();
        m.add(b"a;c", 0, 7).unwrap();
        let t = m.finish().unwrap();
        let b = t.before.as_ref().unwrap();
        assert_eq!(t.total, vec![5, 5, 5, 0]);
        assert_eq!(b.total, vec![9, 9, 2, 7]);
        assert_eq!(b.self_, vec![0, 0, 2, 7]);
        // The vanished path keeps its place, with zero width, right of its siblings.
        assert_eq!(t.offset[3], 5);
    }

    #[test]
    fn stacks_given_as_names_keep_semicolons_and_mix_with_byte_stacks() {
        let mut m = StackMerger::new(false, 3);
        m.add_names(&["main", "a;b", "c"], 1, 0).unwrap();
        m.add_names(&["main", "a;b"], 2, 0).unwrap();
        m.add(b"main;a;b", 4, 0).unwrap();
        m.add_names(&["main", "a;b", "c"], 8, 0).unwrap();
        m.add_names(&[], 16, 0).unwrap();
        assert_eq!(m.add_names(&["a", "b", "c", "d"], 1, 0).unwrap_err(), MergeError::TooDeep(3));
        let t = m.finish().unwrap();
        let r = rows(&t);
        assert_eq!(r[0], ("all".into(), 0, 0, 31, 16));
        assert_eq!(r[1], ("main".into(), 1, 0, 15, 0));
        assert_eq!(r[2], ("a".into(), 2, 0, 4, 0));
        assert_eq!(r[3], ("b".into(), 3, 0, 4, 4));
        assert_eq!(r[4], ("a;b".into(), 2, 4, 11, 2));
        assert_eq!(r[5], ("c".into(), 3, 4, 9, 9));
        assert_eq!(t.len(), 6);
    }

    #[test]
    fn deep_recursion_does_not_overflow_the_stack() {
        let stack = vec!["f"; 20_000].join(";");
        let mut m = StackMerger::new(false, 100_000);
        m.add(stack.as_bytes(), 1, 0).unwrap();
        let t = m.finish().unwrap();
        assert_eq!(t.depth_count(), 20_001);
    }
}
