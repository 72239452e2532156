//! The graphs of a pprof profile, made from what [`super::proto`] read: each location's frames,
//! the samples summed per distinct stack and label slot, merged once into a tree per slot with
//! a value per sample type, then laid out as one graph per sample type (and label value); and
//! the profile's metadata, its labels' values among it.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::proto::{Label, Profile, Samples, Strings};
use crate::config::{Limits, PprofConfig};
use crate::graph::frames::{FrameTable, MergeError, MAX_EXACT, NO_PARENT, ROOT_NAME};
use crate::ingest::decode::{Compression, Decoded, FrameBudget, Graph};

/// Values of one label key listed in its metadata entry; the rest are counted.
pub const MAX_LISTED_VALUES: usize = 20;

/// Most graphs `graph_by_label` makes per sample type (one per value); a label with more
/// values (a span or request id) is not split.
pub const MAX_LABEL_GRAPHS: usize = 100;

/// The value of a sample label: a string, or a number with its unit (possibly empty).
/// Ordered strings first, then numbers by unit and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum LabelValue<'a> {
    Str(&'a str),
    Num(&'a str, i64),
}

impl std::fmt::Display for LabelValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            LabelValue::Str(s) => f.write_str(s),
            LabelValue::Num("", n) => write!(f, "{n}"),
            LabelValue::Num(unit, n) => write!(f, "{n} {unit}"),
        }
    }
}

/// A label's key and value; `None` for a label with an empty key, which is ignored.
type Resolved<'a> = Option<(&'a str, LabelValue<'a>)>;

/// The labels of a profile, read once per distinct (key, str, num, num_unit).
struct Labels<'a> {
    /// Resolved labels by their raw indices.
    resolved: FxHashMap<(i64, i64, i64, i64), Resolved<'a>>,
}

impl<'a> Labels<'a> {
    /// The key and value of `l`, found on sample `number`.
    fn get(&mut self, l: &Label, strings: &'a Strings<'a>, number: usize) -> Result<Resolved<'a>, String> {
        let raw = (l.key, l.str, l.num, l.num_unit);
        if let Some(&r) = self.resolved.get(&raw) {
            return Ok(r);
        }
        let what = || format!("a label of sample {number}");
        let key = strings.get(l.key, &what)?;
        let value = if l.str != 0 {
            LabelValue::Str(strings.get(l.str, &what)?)
        } else {
            LabelValue::Num(strings.get(l.num_unit, &what)?, l.num)
        };
        let r = (!key.is_empty()).then_some((key, value));
        self.resolved.insert(raw, r);
        Ok(r)
    }
}

pub(super) fn convert(p: &Profile, samples: Samples, strings: Strings, limits: &Limits, options: &PprofConfig, mut budget: FrameBudget) -> Result<Decoded, String> {
    let mut warnings = Vec::new();

    // Sample types, and the order of the graphs: the default first.
    if p.sample_type.is_empty() {
        return Err("pprof: the profile has no sample types".into());
    }
    let mut types = Vec::with_capacity(p.sample_type.len());
    for (i, t) in p.sample_type.iter().enumerate() {
        let name = strings.get(t.r#type, &|| format!("sample type {}", i + 1))?;
        let unit = strings.get(t.unit, &|| format!("sample type {}", i + 1))?;
        types.push((name, unit));
    }
    let default = if p.default_sample_type != 0 {
        let wanted = strings.get(p.default_sample_type, &|| "default_sample_type".into())?;
        types.iter().position(|(name, _)| *name == wanted).unwrap_or(types.len() - 1)
    } else {
        types.len() - 1
    };
    let mut order = vec![default];
    order.extend((0..types.len()).filter(|&i| i != default));

    // Functions and mappings by id. A function written without an id (id 0, as the .NET
    // profiler writes them, with locations that refer to functions by their 1-based position
    // in the list) takes its position as its id, as Pyroscope reads such files; an id that a
    // function states wins over a position.
    let mut functions: FxHashMap<u64, &str> = FxHashMap::default();
    let mut positional = Vec::new();
    for (k, f) in p.function.iter().enumerate() {
        let what = || if f.id == 0 { format!("function {} (no id; position {})", f.id, k + 1) } else { format!("function {}", f.id) };
        let name = strings.get(f.name, &what)?;
        let name = if name.is_empty() { strings.get(f.system_name, &what)? } else { name };
        if f.id == 0 {
            positional.push((k as u64 + 1, name));
        } else {
            functions.entry(f.id).or_insert(name);
        }
    }
    for (id, name) in positional {
        functions.entry(id).or_insert(name);
    }
    let mut mappings: FxHashMap<u64, &str> = FxHashMap::default();
    for m in &p.mapping {
        let file = strings.get(m.filename, &|| format!("mapping {}", m.id))?;
        mappings.entry(m.id).or_insert(file);
    }

    // Each location's frames, root first, as indexes into `frame_names`: each name is a
    // function's (one index per function id) or an address's. The locations are numbered in
    // the order of the profile (the first of an id wins): location k's frames are
    // `frames[spans[k]..spans[k + 1]]`.
    let mut frame_names: Vec<Cow<str>> = Vec::new();
    // Names renamed, as (index into `frame_names`, the profile's own form).
    let mut renamed: Vec<(usize, &str)> = Vec::new();
    let mut function_frames: FxHashMap<u64, u32> = FxHashMap::default();
    let mut location_index = IdIndex::new(p.location.len());
    let mut frames: Vec<u32> = Vec::new();
    let mut spans: Vec<usize> = vec![0];
    for loc in &p.location {
        let start = frames.len();
        for line in loc.line.iter().rev() {
            if line.function_id == 0 {
                continue;
            }
            let name = functions.get(&line.function_id).ok_or_else(|| {
                format!("pprof: location {} refers to function {}, which does not exist", loc.id, line.function_id)
            })?;
            frames.push(*function_frames.entry(line.function_id).or_insert_with(|| {
                // A class the JVM generated loses its run-time numbers, as in every reader;
                // its own form is kept for the tooltip.
                match crate::graph::generated::normalized(name) {
                    Some(plain) => {
                        renamed.push((frame_names.len(), *name));
                        frame_names.push(Cow::Owned(plain));
                    }
                    None => frame_names.push(Cow::Borrowed(name)),
                }
                frame_names.len() as u32 - 1
            }));
        }
        if frames.len() == start {
            if loc.address == 0 {
                return Err(format!("pprof: location {} has no line and no address: nothing to show", loc.id));
            }
            let file = match loc.mapping_id {
                0 => "",
                id => mappings.get(&id).ok_or_else(|| {
                    format!("pprof: location {} refers to mapping {id}, which does not exist", loc.id)
                })?,
            };
            frame_names.push(Cow::Owned(if file.is_empty() {
                format!("{:#x}", loc.address)
            } else {
                format!("{:#x} ({file})", loc.address)
            }));
            frames.push(frame_names.len() as u32 - 1);
        }
        if location_index.get(loc.id).is_none() {
            location_index.insert(loc.id, spans.len() as u32 - 1);
            spans.push(frames.len());
        } else {
            frames.truncate(start);
        }
    }
    let location_count = spans.len() - 1;
    frame_names.push(Cow::Borrowed("[unknown]"));
    // The distinct names in byte order (the order of siblings in a graph, and of its name
    // table), and each location's frames as their ranks in it: two functions or an address
    // with the same name are one frame, as they are in a folded line.
    let mut by_name: Vec<u32> = (0..frame_names.len() as u32).collect();
    by_name.sort_unstable_by(|&a, &b| frame_names[a as usize].cmp(&frame_names[b as usize]));
    let mut rank = vec![0u32; frame_names.len()];
    let mut names: Vec<&str> = Vec::with_capacity(frame_names.len());
    for &f in &by_name {
        let name: &str = &frame_names[f as usize];
        if names.last() != Some(&name) {
            names.push(name);
        }
        rank[f as usize] = names.len() as u32 - 1;
    }
    drop(by_name);
    let raw_pairs: Vec<(&str, &str)> = renamed.iter().map(|&(f, raw)| (names[rank[f] as usize], raw)).collect();
    for f in &mut frames {
        *f = rank[*f as usize];
    }
    let unknown = rank[frame_names.len() - 1];

    // The samples, read once, into flat arrays: sample k's locations are
    // `sample_locations[location_ends[k - 1]..location_ends[k]]`, as their numbers above (a
    // location id that does not exist gets a number past them, for the error below), its
    // values `sample_values[k * width..][..width]`, its labels likewise by `label_ends`.
    let width = types.len();
    let mut missing_ids: Vec<u64> = Vec::new();
    let mut sample_locations: Vec<u32> = Vec::new();
    let mut location_ends: Vec<usize> = Vec::new();
    let mut sample_values: Vec<i64> = Vec::new();
    let mut sample_labels: Vec<Label> = Vec::new();
    let mut label_ends: Vec<usize> = Vec::new();
    samples.for_each(|sample, number| {
        if sample.value.len() != width {
            return Err(format!(
                "pprof: sample {number} has {} values but the profile has {width} sample types",
                sample.value.len()
            ));
        }
        for &id in &sample.location_id {
            let index = match location_index.get(id) {
                Some(index) => index,
                None => {
                    let index = (location_count + missing_ids.len()) as u32;
                    missing_ids.push(id);
                    location_index.insert(id, index);
                    index
                }
            };
            sample_locations.push(index);
        }
        location_ends.push(sample_locations.len());
        sample_values.extend_from_slice(&sample.value);
        sample_labels.extend_from_slice(&sample.label);
        label_ends.push(sample_labels.len());
        Ok(())
    })?;
    drop(samples);
    let sample_count = location_ends.len();
    let range = |ends: &[usize], k: usize| if k == 0 { 0..ends[0] } else { ends[k - 1]..ends[k] };

    // Every label key with its values, for the metadata and for graph_by_label.
    let mut labels = Labels { resolved: FxHashMap::default() };
    let mut label_values: BTreeMap<&str, std::collections::BTreeSet<LabelValue>> = BTreeMap::new();
    for k in 0..sample_count {
        for l in &sample_labels[range(&label_ends, k)] {
            if let Some((key, value)) = labels.get(l, &strings, k + 1)? {
                label_values.entry(key).or_default().insert(value);
            }
        }
    }

    // Slots: 0 is the whole profile; with graph_by_label, 1..=n are the label's values in
    // order and n + 1 the samples without it.
    let split: Option<(&str, Vec<LabelValue>)> = options.graph_by_label.as_deref().and_then(|key| {
        let values = label_values.get(key)?;
        if values.len() > MAX_LABEL_GRAPHS {
            warnings.push(format!(
                "pprof: label {key:?} has {} values, more than {MAX_LABEL_GRAPHS}: no graph per value",
                values.len()
            ));
            return None;
        }
        Some((key, values.iter().copied().collect()))
    });
    let slot_count = split.as_ref().map_or(1, |(_, values)| values.len() + 2);
    let mut unlabelled = false;

    // Samples with the same location list (and slot) are merged once: their values are
    // summed per sample type first (a profile repeats a stack for every label set, and most
    // samples fall on a few hot stacks). Distinct lists keep the order of their first sample.
    let mut distinct: FxHashMap<(&[u32], usize), usize> = FxHashMap::default();
    // Locations, slot, number of the first sample.
    let mut lists: Vec<(&[u32], usize, usize)> = Vec::new();
    let mut sums: Vec<u64> = Vec::new(); // width values per distinct list
    let mut negative: u64 = 0;
    let mut slots: Vec<usize> = Vec::new();
    for k in 0..sample_count {
        let number = k + 1;
        let location_list = &sample_locations[range(&location_ends, k)];
        let values = &sample_values[k * width..(k + 1) * width];
        slots.clear();
        slots.push(0);
        if let Some((wanted, values)) = &split {
            for l in &sample_labels[range(&label_ends, k)] {
                if let Some((key, value)) = labels.get(l, &strings, number)? {
                    if key == *wanted {
                        let at = values.binary_search(&value).expect("every value was collected");
                        slots.push(at + 1);
                    }
                }
            }
            if slots.len() == 1 {
                slots.push(values.len() + 1);
                unlabelled = true;
            }
            slots.sort_unstable();
            slots.dedup();
        }
        negative += values.iter().filter(|&&v| v < 0).count() as u64;
        for &slot in &slots {
            let at = *distinct.entry((location_list, slot)).or_insert_with(|| {
                lists.push((location_list, slot, number));
                sums.resize(sums.len() + width, 0);
                lists.len() - 1
            });
            for (t, &value) in values.iter().enumerate() {
                if value < 0 {
                    continue;
                }
                let sum = &mut sums[at * width + t];
                *sum = sum.checked_add(value as u64).ok_or_else(|| {
                    format!("pprof: sample {number}: the values of one stack add up past 2^64")
                })?;
            }
        }
    }

    // First, in sample order, what can be wrong with a stack: a location that does not
    // exist, a stack too deep, more frames than the budget. Then nothing can fail but the
    // sums.
    // A list's index is its row of `sums` (both were pushed together).
    for (at, &(list, _, number)) in lists.iter().enumerate() {
        if let Some(&index) = list.iter().rev().find(|&&index| index as usize >= location_count) {
            let id = missing_ids[index as usize - location_count];
            return Err(format!("pprof: location {id} referred to by sample {number} does not exist"));
        }
        let depth = list.iter().map(|&index| spans[index as usize + 1] - spans[index as usize]).sum::<usize>().max(1);
        if depth > limits.max_depth as usize {
            return Err(format!("pprof: sample {number}: {}", MergeError::TooDeep(limits.max_depth)));
        }
        let with_value = sums[at * width..(at + 1) * width].iter().filter(|&&v| v != 0).count();
        budget.spend((depth * with_value) as u64, "pprof", "over all sample types")?;
    }

    // Each slot's distinct stacks are merged once for all sample types, into one tree with a
    // value per type; each type's graph is then that tree without the frames whose total is 0
    // for the type (a stack whose value is 0 adds nothing to a graph).
    let tries: Vec<Result<Trie, String>> = (0..slot_count)
        .into_par_iter()
        .map(|slot| Trie::build(slot, &lists, &sums, width, (&frames, &spans), unknown))
        .collect();
    let tries: Vec<Trie> = tries.into_iter().collect::<Result<_, _>>()?;
    let merged: Vec<Result<FrameTable, MergeError>> = (0..slot_count * width)
        .into_par_iter()
        .map(|index| {
            let mut table = tries[index / width].table(index % width, &names)?;
            table.attach_raw(raw_pairs.iter().copied());
            Ok(table)
        })
        .collect();
    drop(tries);
    let mut tables: Vec<Option<FrameTable>> = Vec::with_capacity(merged.len());
    for table in merged {
        tables.push(Some(table.map_err(|e| format!("pprof: {e}"))?));
    }
    if negative > 0 {
        warnings.push(format!(
            "pprof: skipped {negative} negative value{} (a value per sample and sample type)",
            if negative == 1 { "" } else { "s" }
        ));
    }
    if strings.invalid_utf8 > 0 {
        warnings.push(format!(
            "pprof: {} string{} of the string table had bytes that are not UTF-8, shown as U+FFFD",
            strings.invalid_utf8,
            if strings.invalid_utf8 == 1 { "" } else { "s" }
        ));
    }

    // Graphs, with unique names (their folders are named by the build): per sample type, the
    // whole profile, then each value's, then the samples without the label.
    let mut used = HashSet::new();
    let mut unique = |base: String| {
        let mut name = base.clone();
        let mut n = 1;
        while !used.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        name
    };
    let mut graphs = Vec::with_capacity(tables.len());
    for &i in &order {
        let (name, unit) = types[i];
        let type_name = unique(if name.is_empty() { "values" } else { name }.to_string());
        let unit = if unit.is_empty() { "count" } else { unit };
        let mut take = |slot: usize| tables[slot * width + i].take().expect("each graph is taken once");
        graphs.push(Graph { name: type_name.clone(), unit: unit.to_string(), table: take(0), timeline: false });
        if let Some((key, values)) = &split {
            for (k, value) in values.iter().enumerate() {
                let table = take(k + 1);
                graphs.push(Graph { name: unique(format!("{type_name} {key}={value}")), unit: unit.to_string(), table, timeline: false });
            }
            if unlabelled {
                let table = take(values.len() + 1);
                graphs.push(Graph { name: unique(format!("{type_name} {key}=(none)")), unit: unit.to_string(), table, timeline: false });
            }
        }
    }

    let mut metadata = metadata(p, &strings)?;
    for (key, values) in &label_values {
        let mut listed: Vec<String> = values.iter().take(MAX_LISTED_VALUES).map(|v| v.to_string()).collect();
        if values.len() > MAX_LISTED_VALUES {
            listed.push(format!("… and {} more", values.len() - MAX_LISTED_VALUES));
        }
        metadata.insert(format!("label {key}"), listed.join(", "));
    }

    Ok(Decoded { format: "pprof", compression: Compression::None, graphs, warnings, metadata })
}

/// Location ids to their numbers: ids up to the number of locations (profiles number them
/// from 1) in a vector, the others in a hash map.
struct IdIndex {
    small: Vec<u32>,
    large: FxHashMap<u64, u32>,
}

impl IdIndex {
    const NONE: u32 = u32::MAX;

    fn new(locations: usize) -> Self {
        IdIndex { small: vec![Self::NONE; locations + 1], large: FxHashMap::default() }
    }

    fn get(&self, id: u64) -> Option<u32> {
        match usize::try_from(id).ok().and_then(|i| self.small.get(i)) {
            Some(&Self::NONE) => None,
            Some(&index) => Some(index),
            None => self.large.get(&id).copied(),
        }
    }

    fn insert(&mut self, id: u64, index: u32) {
        match usize::try_from(id).ok().and_then(|i| self.small.get_mut(i)) {
            Some(slot) => *slot = index,
            None => {
                self.large.insert(id, index);
            }
        }
    }
}

/// One slot's distinct stacks merged once for all sample types: a prefix tree of frame names
/// (their ranks in byte order), its nodes in depth-first order with siblings in name order,
/// which is the order of a graph's rows.
struct Trie {
    parent: Vec<u32>,
    depth: Vec<u32>,
    name: Vec<u32>,
    /// Each sample type's own value of every node.
    self_: Vec<Vec<u64>>,
}

impl Trie {
    /// Merges the stacks of `slot`: each list of `lists` (locations, with its `width` sums in
    /// `sums`) expanded to its frames, root first (location k's are `location_frames[spans[k]..
    /// spans[k + 1]]`); a list without locations is the frame `unknown`.
    fn build(
        slot: usize,
        lists: &[(&[u32], usize, usize)],
        sums: &[u64],
        width: usize,
        (location_frames, spans): (&[u32], &[usize]),
        unknown: u32,
    ) -> Result<Trie, String> {
        // The stacks of the slot, expanded, as (start in `frames`, end, list).
        let mut frames: Vec<u32> = Vec::new();
        let mut stacks: Vec<(u32, u32, u32)> = Vec::new();
        for (at, &(list, list_slot, _)) in lists.iter().enumerate() {
            if list_slot != slot || sums[at * width..(at + 1) * width].iter().all(|&v| v == 0) {
                continue;
            }
            let start = frames.len();
            for &index in list.iter().rev() {
                frames.extend_from_slice(&location_frames[spans[index as usize]..spans[index as usize + 1]]);
            }
            if frames.len() == start {
                frames.push(unknown);
            }
            stacks.push((start as u32, frames.len() as u32, at as u32));
        }
        // In the order of their names: the stacks under a frame come together, so each stack
        // is merged by comparing it with the one before, and a frame's children are made in
        // name order. Ties (lists of different locations with the same names) go by list, so
        // that the order, and a sum's overflow error, does not depend on the threads.
        let frames_of = |&(start, end, _): &(u32, u32, u32)| &frames[start as usize..end as usize];
        stacks.par_sort_unstable_by(|a, b| frames_of(a).cmp(frames_of(b)).then(a.2.cmp(&b.2)));

        let mut trie = Trie { parent: vec![NO_PARENT], depth: vec![0], name: vec![u32::MAX], self_: vec![vec![0]; width] };
        // At most a node per frame; reserved, so that the columns are not copied as they grow
        // (the pages not written to are never touched).
        let most = frames.len() + 1;
        trie.parent.reserve(most);
        trie.depth.reserve(most);
        trie.name.reserve(most);
        trie.self_.iter_mut().for_each(|values| values.reserve(most));
        // The nodes of the previous stack's frames.
        let mut path: Vec<u32> = Vec::new();
        let mut prev: &[u32] = &[];
        for stack in &stacks {
            let these = frames_of(stack);
            let shared = prev.iter().zip(these).take_while(|(a, b)| a == b).count();
            path.truncate(shared);
            for &name in &these[shared..] {
                let node = trie.parent.len() as u32;
                trie.parent.push(path.last().copied().unwrap_or(0));
                trie.depth.push(path.len() as u32 + 1);
                trie.name.push(name);
                for values in &mut trie.self_ {
                    values.push(0);
                }
                path.push(node);
            }
            let leaf = *path.last().expect("a stack has a frame") as usize;
            let at = stack.2 as usize;
            for (values, &v) in trie.self_.iter_mut().zip(&sums[at * width..(at + 1) * width]) {
                values[leaf] = values[leaf]
                    .checked_add(v)
                    .ok_or_else(|| format!("pprof: sample {}: {}", lists[at].2, MergeError::Overflow))?;
            }
            prev = these;
        }
        Ok(trie)
    }

    /// The graph of sample type `t`: the nodes whose total is not 0 for it (and the root),
    /// laid out; `names` are the distinct frame names in byte order.
    fn table(&self, t: usize, names: &[&str]) -> Result<FrameTable, MergeError> {
        let self_ = &self.self_[t];
        let n = self.parent.len();
        // Children come after their parents: one backward pass sums the subtrees.
        let mut total = self_.clone();
        for node in (1..n).rev() {
            let p = self.parent[node] as usize;
            total[p] = total[p].checked_add(total[node]).ok_or(MergeError::Overflow)?;
        }
        if total[0] >= MAX_EXACT {
            return Err(MergeError::TooLarge(total[0]));
        }
        // The graph's name table: the names of its frames, in byte order, after the root's.
        let mut index = vec![0u32; names.len()];
        for node in 1..n {
            if total[node] != 0 {
                index[self.name[node] as usize] = 1;
            }
        }
        let mut table_names = vec![ROOT_NAME.to_string()];
        for (rank, i) in index.iter_mut().enumerate() {
            if *i != 0 {
                *i = table_names.len() as u32;
                table_names.push(names[rank].to_string());
            }
        }
        let rows = 1 + (1..n).filter(|&node| total[node] != 0).count();
        let mut table = FrameTable {
            names: table_names,
            name: Vec::with_capacity(rows),
            depth: Vec::with_capacity(rows),
            parent: Vec::with_capacity(rows),
            offset: Vec::with_capacity(rows),
            total: Vec::with_capacity(rows),
            self_: Vec::with_capacity(rows),
            ..FrameTable::default()
        };
        // Depth-first order is kept by leaving nodes out (a node's total is at least its
        // children's). `rows_on_path[d]` is the row of the last frame at depth d, the parent of
        // the next at d + 1; `next[d]` the offset of the next frame at depth d: children are
        // laid out from their parent's offset, left to right, the parent's own value after them.
        let mut rows_on_path: Vec<u32> = Vec::new();
        let mut next: Vec<u64> = Vec::new();
        for node in 0..n {
            if node != 0 && total[node] == 0 {
                continue;
            }
            let d = self.depth[node] as usize;
            let offset = if d == 0 { 0 } else { next[d] };
            next.truncate(d);
            next.push(offset + total[node]);
            next.push(offset);
            rows_on_path.truncate(d);
            table.parent.push(rows_on_path.last().copied().unwrap_or(NO_PARENT));
            rows_on_path.push(table.name.len() as u32);
            table.name.push(if node == 0 { 0 } else { index[self.name[node] as usize] });
            table.depth.push(d as u32);
            table.offset.push(offset);
            table.total.push(total[node]);
            table.self_.push(self_[node]);
        }
        Ok(table)
    }
}

/// What the profile says about itself (its labels are added by the caller).
fn metadata(p: &Profile, strings: &Strings) -> Result<BTreeMap<String, String>, String> {
    let mut m = BTreeMap::new();
    if p.time_nanos != 0 {
        m.insert("time".into(), rfc3339(p.time_nanos));
    }
    if p.duration_nanos > 0 {
        m.insert("duration".into(), crate::units::format_value(p.duration_nanos.into(), "nanoseconds"));
    }
    if p.period != 0 {
        let period = match &p.period_type {
            Some(t) => {
                let what = || "period_type".to_string();
                let (ty, unit) = (strings.get(t.r#type, &what)?, strings.get(t.unit, &what)?);
                match (ty.is_empty(), unit.is_empty()) {
                    (true, true) => p.period.to_string(),
                    (true, false) => crate::units::format_value(p.period.into(), unit),
                    (false, _) => format!("{} of {ty}", crate::units::format_value(p.period.into(), unit)),
                }
            }
            None => p.period.to_string(),
        };
        m.insert("period".into(), period);
    }
    let mut comments = Vec::new();
    for (i, &c) in p.comment.iter().enumerate() {
        comments.push(strings.get(c, &|| format!("comment {}", i + 1))?);
    }
    if !comments.is_empty() {
        m.insert("comments".into(), comments.join("\n"));
    }
    for (key, index) in [("doc_url", p.doc_url), ("drop_frames", p.drop_frames), ("keep_frames", p.keep_frames)] {
        let value = strings.get(index, &|| key.to_string())?;
        if !value.is_empty() {
            m.insert(key.into(), value.to_string());
        }
    }
    Ok(m)
}

/// `2026-11-22T00:06:52Z` from nanoseconds since the Unix epoch (UTC, whole seconds, rounded
/// down, as the archive dates runs).
pub(super) fn rfc3339(nanos: i64) -> String {
    // Every i64 of nanoseconds (years 1677 to 2262) is within jiff's range.
    jiff::Timestamp::from_second(nanos.div_euclid(1_000_000_000))
        .expect("within jiff's range")
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
