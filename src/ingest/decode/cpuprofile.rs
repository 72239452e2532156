//! Chrome/V8 `.cpuprofile` JSON, as written by `node --cpu-prof` and saved from Chrome
//! DevTools: a call tree of `nodes` (`id`, `callFrame`, `children` or `parent`) and the
//! sampled node of each tick in `samples` (with `timeDeltas` in microseconds).
//!
//! Graph `samples` (unit `samples`): each sample counts 1 on its node's stack (files without
//! `samples` use each node's `hitCount`). Graph `time` (unit `microseconds`), when the file
//! has `timeDeltas`: each sample lasts until the next one in time, the last until `endTime`. A frame is named `functionName url:line`
//! (line 1-based, as DevTools shows it), `(anonymous)` for an empty function name, and
//! without ` url:line` for frames that have no url (`(program)`, `(garbage collector)`,
//! native functions). The `(root)` node is not a frame: the graph's root is `all`. A `;` in
//! a name is written `:`, since `;` separates frames.
//!
//! The layout before 2017 (Chrome before 58, node 8 and older) is read too: a nested tree in
//! `head` (each node with its `functionName`, `url`, `lineNumber`, `hitCount` and `children`
//! nodes), `startTime` and `endTime` in seconds, and the absolute time of each sample in
//! `timestamps` (microseconds). It is turned into the current layout first. Its
//! `lineNumber` is V8's 1-based line (`CpuProfileNode::GetLineNumber`), where the current
//! layout's is 0-based; frames are named with the 1-based line either way.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;

use super::{read_json, Compression, Decoded, FrameBudget, Graph};
use crate::config::Config;
use crate::graph::frames::{FrameTable, StackMerger};
use crate::graph::lists::Lists;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Profile {
    nodes: Vec<Node>,
    #[serde(default)]
    samples: Option<Vec<u64>>,
    #[serde(default)]
    time_deltas: Vec<f64>,
    #[serde(default)]
    start_time: Option<f64>,
    #[serde(default)]
    end_time: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Node {
    id: u64,
    call_frame: CallFrame,
    #[serde(default)]
    children: Vec<u64>,
    #[serde(default)]
    parent: Option<u64>,
    #[serde(default)]
    hit_count: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallFrame {
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    url: String,
    #[serde(default = "minus_one")]
    line_number: i64,
}

fn minus_one() -> i64 {
    -1
}

/// The layout before 2017: a tree of nodes, times in seconds and absolute timestamps.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OldProfile {
    head: OldNode,
    #[serde(default)]
    samples: Option<Vec<u64>>,
    #[serde(default)]
    timestamps: Vec<f64>,
    #[serde(default)]
    start_time: Option<f64>,
    #[serde(default)]
    end_time: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OldNode {
    id: u64,
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    url: String,
    /// 1-based; 0 where V8 knows no line.
    #[serde(default)]
    line_number: i64,
    #[serde(default)]
    hit_count: u64,
    #[serde(default)]
    children: Vec<OldNode>,
}

impl OldProfile {
    /// The same profile in the current layout: the tree as a list of nodes with their
    /// children's ids, times in microseconds and each sample's time as the delta from the
    /// one before (the first from `startTime`).
    fn into_current(self) -> Profile {
        let mut nodes = Vec::new();
        // Depth first, without recursion: a deep tree is not a deep stack here.
        let mut todo = vec![self.head];
        while let Some(n) = todo.pop() {
            nodes.push(Node {
                id: n.id,
                call_frame: CallFrame { function_name: n.function_name, url: n.url, line_number: n.line_number - 1 },
                children: n.children.iter().map(|c| c.id).collect(),
                parent: None,
                hit_count: n.hit_count,
            });
            todo.extend(n.children.into_iter().rev());
        }
        let us = |s: f64| s * 1e6;
        let start = self.start_time.map(us);
        let time_deltas = match start {
            Some(start) => {
                let mut last = start;
                self.timestamps
                    .iter()
                    .map(|&t| {
                        let d = t - last;
                        last = t;
                        d
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        Profile { nodes, samples: self.samples, time_deltas, start_time: start, end_time: self.end_time.map(us) }
    }
}

/// Whether `sniff` is a JSON object with a `"nodes"` key and a `"samples"`, `"startTime"` or
/// `"callFrame"` key. (speedscope files, which name their schema, are tried first.)
pub fn is_applicable(sniff: &[u8]) -> bool {
    let start = sniff.iter().position(|b| !b.is_ascii_whitespace());
    start.is_some_and(|s| sniff[s] == b'{')
        && ((contains(sniff, b"\"nodes\"")
            && (contains(sniff, b"\"samples\"") || contains(sniff, b"\"startTime\"") || contains(sniff, b"\"callFrame\"")))
            || is_old_layout(sniff))
}

/// Whether `sniff` starts the layout before 2017: a `"head"` node that has a
/// `"functionName"`, and no `"nodes"` list.
fn is_old_layout(sniff: &[u8]) -> bool {
    contains(sniff, b"\"head\"") && contains(sniff, b"\"functionName\"") && !contains(sniff, b"\"nodes\"")
}

pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Frame name of a call frame (see the module documentation).
pub fn frame_name(f: &CallFrameRef) -> String {
    let mut s = if f.function_name.is_empty() { "(anonymous)".to_string() } else { f.function_name.to_string() };
    if !f.url.is_empty() {
        s.push_str(&format!(" {}:{}", f.url, f.line_number + 1));
    }
    clean(&s)
}

/// The parts of a call frame that name it.
pub struct CallFrameRef<'a> {
    /// `callFrame.functionName`.
    pub function_name: &'a str,
    /// `callFrame.url`.
    pub url: &'a str,
    /// `callFrame.lineNumber`, 0-based.
    pub line_number: i64,
}

/// A name fit for a folded stack: no `;` (the separator) and no line ends.
pub(super) fn clean(s: &str) -> String {
    s.replace(';', ":").replace(['\n', '\r'], " ")
}

/// Reads a whole `.cpuprofile`, as it streams: its text is never held (see
/// [`super::read_json`]).
pub fn decode(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let old_layout = {
        let head = reader.fill_buf().map_err(|e| e.to_string())?;
        is_old_layout(&head[..head.len().min(4096)])
    };
    let (profile, content): (Profile, u64) = if old_layout {
        // serde_json refuses nesting past 128 levels (two per node), which keeps a hostile
        // file from exhausting the stack; such a tree is refused with a message.
        let (old, content) = read_json::<OldProfile>(reader, config.limits.max_name_bytes).map_err(|e| {
            let why = if e.to_string().contains("recursion limit") { format!("its tree is nested more than 63 nodes deep, which is not read ({e})") } else { e.to_string() };
            format!("cpuprofile (the layout before 2017): {why}")
        })?;
        (old.into_current(), content)
    } else {
        read_json(reader, config.limits.max_name_bytes).map_err(|e| format!("cpuprofile: {e}"))?
    };
    let mut budget = FrameBudget::for_bytes(content);
    let (graphs, samples, warnings) = merge(&profile, config.limits.max_depth, &mut budget)?;
    let mut metadata = std::collections::BTreeMap::new();
    metadata.insert("samples".to_string(), samples.to_string());
    if let (Some(s), Some(e)) = (profile.start_time, profile.end_time) {
        if e >= s {
            // Through the one value formatter, as pprof's duration: "788 ms", not "787980 µs".
            metadata.insert("duration".to_string(), crate::units::format_value((e - s).round() as i128, "microseconds"));
        }
    }
    Ok(Decoded {
        format: "cpuprofile",
        compression: Compression::None,
        graphs,
        warnings,
        metadata,
    })
}

/// The graphs of a profile given as a JSON value of the current layout (the samples of a
/// Chrome trace's `Profile` and `ProfileChunk` events, put together), with the samples'
/// count and the warnings, as [`decode`] makes them of a file.
pub(super) fn graphs_of_value(value: serde_json::Value, config: &Config, budget: &mut FrameBudget) -> Result<(Vec<Graph>, u64, Vec<String>), String> {
    let profile: Profile = serde_json::from_value(value).map_err(|e| format!("cpuprofile: {e}"))?;
    merge(&profile, config.limits.max_depth, budget)
}

/// The call tree: each node's children, and the nodes without a parent.
struct CallTree {
    kids: Lists<usize>,
    /// In index order.
    roots: Vec<usize>,
}

impl CallTree {
    fn new(parent: &[Option<usize>]) -> CallTree {
        let kids = Lists::collect(parent.len(), || parent.iter().enumerate().filter_map(|(i, p)| p.map(|p| (p as u32, i))));
        let roots = parent.iter().enumerate().filter(|(_, p)| p.is_none()).map(|(i, _)| i).collect();
        CallTree { kids, roots }
    }

    fn children(&self, node: usize) -> &[usize] {
        &self.kids[node]
    }

    /// Whether `node` is the call tree's `(root)` above the calls, which the graph's `all`
    /// stands for (a root named so, with children); a sample on it keeps it as a frame.
    fn is_root_label(&self, node: usize, names: &[String]) -> bool {
        names[node] == "(root)" && !self.children(node).is_empty() && self.roots.binary_search(&node).is_ok()
    }
}

fn merge(p: &Profile, max_depth: u32, budget: &mut FrameBudget) -> Result<(Vec<Graph>, u64, Vec<String>), String> {
    if p.nodes.is_empty() {
        return Err("cpuprofile: no nodes".into());
    }
    let mut index: HashMap<u64, usize> = HashMap::with_capacity(p.nodes.len());
    for (i, n) in p.nodes.iter().enumerate() {
        if index.insert(n.id, i).is_some() {
            return Err(format!("cpuprofile: node id {} appears twice", n.id));
        }
    }
    // Parents, from `children` lists or `parent` fields.
    let mut parent: Vec<Option<usize>> = vec![None; p.nodes.len()];
    for (i, n) in p.nodes.iter().enumerate() {
        for c in &n.children {
            let &ci = index.get(c).ok_or_else(|| format!("cpuprofile: node {} has child {c} that does not exist", n.id))?;
            if parent[ci].is_some_and(|q| q != i) {
                return Err(format!("cpuprofile: node {c} is the child of two nodes"));
            }
            parent[ci] = Some(i);
        }
        if let Some(q) = n.parent {
            let &qi = index.get(&q).ok_or_else(|| format!("cpuprofile: node {} has parent {q} that does not exist", n.id))?;
            parent[i].get_or_insert(qi);
        }
    }
    let tree = CallTree::new(&parent);
    // Sample counts per node.
    let mut count = vec![0u64; p.nodes.len()];
    match &p.samples {
        Some(samples) if !samples.is_empty() => {
            for s in samples {
                let &i = index.get(s).ok_or_else(|| format!("cpuprofile: a sample refers to node {s} that does not exist"))?;
                count[i] += 1;
            }
        }
        _ => {
            for (i, n) in p.nodes.iter().enumerate() {
                count[i] = n.hit_count;
            }
        }
    }
    let names: Vec<String> = p
        .nodes
        .iter()
        .map(|n| {
            let f = &n.call_frame;
            frame_name(&CallFrameRef { function_name: &f.function_name, url: &f.url, line_number: f.line_number })
        })
        .collect();
    let samples = table(p, &tree, &names, &count, max_depth, budget)?.ok_or("cpuprofile: no samples")?;
    let mut graphs = vec![Graph { name: "samples".into(), unit: "samples".into(), table: samples.0, timeline: false }];
    let mut warnings = Vec::new();
    match sample_times(p, &index) {
        Ok(Some(in_order)) => {
            let mut time = vec![0u64; p.nodes.len()];
            for &(node, d) in &in_order {
                time[node] += d;
            }
            if let Some((t, _)) = table(p, &tree, &names, &time, max_depth, budget)? {
                graphs.push(Graph { name: "time".into(), unit: "microseconds".into(), table: t, timeline: false });
                // The same time in the order it passed (a budget of its own: a time-order
                // graph that would be too large is left out, the profile still builds).
                let mut own = FrameBudget { limit: budget.limit, spent: 0 };
                match timeline(&tree, &parent, &names, &in_order, max_depth, &mut own) {
                    Ok(t) => graphs.push(Graph { name: "time order".into(), unit: "microseconds".into(), table: t, timeline: true }),
                    Err(e) => warnings.push(format!("{e}; the time-order graph is left out")),
                }
            }
        }
        Ok(None) => {}
        Err(w) => warnings.push(w),
    }
    Ok((graphs, samples.1, warnings))
}

/// The time-order graph of the samples `in_order` (node, microseconds), in the order they
/// were taken ([`crate::graph::frames::Timeline`]): a sample continues the frames of the one
/// before it that are its own ancestors. Each sample's stack is found by walking up from its
/// node until a frame that is open, so the cost is that of the frames opened.
fn timeline(tree: &CallTree, parent: &[Option<usize>], names: &[String], in_order: &[(usize, u64)], max_depth: u32, budget: &mut FrameBudget) -> Result<FrameTable, String> {
    // The root of the call tree, `(root)`, is the graph's `all`, as in `table`.
    let skipped = |node: usize| tree.is_root_label(node, names);
    // Each node's depth as a frame, top down from the roots (a node no root leads to has none).
    const NONE: usize = usize::MAX;
    let mut depth = vec![NONE; parent.len()];
    let mut todo: Vec<(usize, usize)> = tree.roots.iter().map(|&r| (r, 0)).collect();
    while let Some((node, d)) = todo.pop() {
        let below = if skipped(node) { 0 } else { depth[node] = d; d + 1 };
        todo.extend(tree.children(node).iter().map(|&c| (c, below)));
    }
    let mut t = crate::graph::frames::Timeline::new(max_depth);
    let mut ids: Vec<u32> = vec![u32::MAX; names.len()];
    let (mut open, mut chain, mut new): (Vec<usize>, Vec<usize>, Vec<u32>) = (Vec::new(), Vec::new(), Vec::new());
    for &(node, d) in in_order {
        if d == 0 {
            continue;
        }
        chain.clear();
        let mut keep = 0;
        if skipped(node) {
            // A sample on the root itself keeps it as a frame.
            if open.first() == Some(&node) {
                keep = 1;
            } else {
                chain.push(node);
            }
        } else {
            if depth[node] == NONE {
                return Err(format!("cpuprofile: the parents of node {node} form a cycle"));
            }
            let mut at = Some(node);
            while let Some(x) = at.filter(|&x| !skipped(x)) {
                if open.get(depth[x]) == Some(&x) {
                    keep = depth[x] + 1;
                    break;
                }
                chain.push(x);
                at = parent[x];
            }
            chain.reverse();
        }
        new.clear();
        for &x in &chain {
            if ids[x] == u32::MAX {
                ids[x] = t.intern(&names[x]);
            }
            new.push(ids[x]);
        }
        budget.spend(new.len() as u64, "cpuprofile", "in time order")?;
        t.add_ids(keep, &new, d).map_err(|e| format!("cpuprofile: {e}"))?;
        open.truncate(keep);
        open.extend_from_slice(&chain);
    }
    Ok(t.finish())
}

/// The samples in time order, each as its node's index and its microseconds: sample i lasts
/// until the next sample in time (the last one until `endTime`); samples out of time order
/// are sorted first. `None` when the file has no times.
fn sample_times(p: &Profile, index: &HashMap<u64, usize>) -> Result<Option<Vec<(usize, u64)>>, String> {
    let (Some(samples), Some(start), Some(end)) = (&p.samples, p.start_time, p.end_time) else {
        return Ok(None);
    };
    if samples.is_empty() || p.time_deltas.is_empty() {
        return Ok(None);
    }
    if p.time_deltas.len() != samples.len() {
        return Err(format!(
            "cpuprofile: {} samples but {} timeDeltas; the time graph is left out",
            samples.len(),
            p.time_deltas.len()
        ));
    }
    let mut at = Vec::with_capacity(samples.len());
    let mut t = start;
    for d in &p.time_deltas {
        t += d;
        at.push(t);
    }
    if !at.iter().all(|t| t.is_finite()) || !end.is_finite() {
        return Err("cpuprofile: timeDeltas are not finite numbers; the time graph is left out".into());
    }
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by(|&a, &b| at[a].total_cmp(&at[b]));
    let mut in_order = Vec::with_capacity(order.len());
    for (k, &i) in order.iter().enumerate() {
        let next = order.get(k + 1).map_or(end, |&j| at[j]);
        let d = (next - at[i]).max(0.0).round();
        if d >= crate::graph::frames::MAX_EXACT as f64 {
            return Err("cpuprofile: the sample times are absurd; the time graph is left out".into());
        }
        in_order.push((index[&samples[i]], d as u64));
    }
    Ok(Some(in_order))
}

/// The frame table of `values` per node, and their sum; `None` when all are 0.
///
/// The call tree is walked depth first, once: each node's stack is its parent's plus one
/// frame, so each frame is passed to the merger once ([`StackMerger::add_ids`]) and the cost
/// is linear in the number of nodes, however deep the tree (a chain of 40,000 nodes, each
/// sampled, was 800 million frames when every stack was built whole).
fn table(
    p: &Profile,
    tree: &CallTree,
    names: &[String],
    values: &[u64],
    max_depth: u32,
    budget: &mut FrameBudget,
) -> Result<Option<(FrameTable, u64)>, String> {
    const NOT_INTERNED: u32 = u32::MAX;
    let mut merger = StackMerger::new(false, max_depth);
    // Names are interned as they are first used, so that the table has only those of its frames.
    let mut ids = vec![NOT_INTERNED; p.nodes.len()];
    let mut total: u64 = 0;
    let mut visited = 0usize;
    // The nodes whose frames make the current stack, root first; `low`: how deep the stack
    // was at its shallowest since the last one given to the merger, whose frames up to there
    // are the current stack's too.
    let mut path: Vec<usize> = Vec::new();
    let mut low = 0usize;
    let mut new: Vec<u32> = Vec::new();
    let mut add = |merger: &mut StackMerger, keep: usize, frames: &[usize], n: u64, ids: &mut [u32]| -> Result<(), String> {
        new.clear();
        for &j in frames {
            if ids[j] == NOT_INTERNED {
                ids[j] = merger.intern(&names[j]);
            }
            new.push(ids[j]);
        }
        budget.spend(new.len() as u64, "cpuprofile", "over its graphs")?;
        total = total.checked_add(n).ok_or("cpuprofile: the values overflow")?;
        merger.add_ids(keep, &new, n).map_err(|e| format!("cpuprofile: {e}"))
    };
    // Pending nodes, with the depth of the stack they go on.
    let mut todo: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((node, depth)) = todo.pop() {
        visited += 1;
        path.truncate(depth);
        low = low.min(depth);
        let n = values[node];
        // The root of the call tree, `(root)`, is the graph's `all`: its children's stacks
        // start below it (a sample on the root itself keeps it as a frame).
        if tree.is_root_label(node, names) {
            if n > 0 {
                add(&mut merger, 0, &[node], n, &mut ids)?;
                low = 0;
            }
            todo.extend(tree.children(node).iter().rev().map(|&c| (c, 0)));
            continue;
        }
        path.push(node);
        if n > 0 {
            add(&mut merger, low, &path[low..], n, &mut ids)?;
            low = path.len();
        }
        todo.extend(tree.children(node).iter().rev().map(|&c| (c, path.len())));
    }
    if visited < p.nodes.len() {
        // Nodes that no root leads to: their parents form a cycle.
        let mut reached = vec![false; p.nodes.len()];
        let mut todo = tree.roots.clone();
        while let Some(node) = todo.pop() {
            reached[node] = true;
            todo.extend_from_slice(tree.children(node));
        }
        if let Some(i) = (0..p.nodes.len()).find(|&i| !reached[i] && values[i] > 0) {
            return Err(format!("cpuprofile: the parents of node {} form a cycle", p.nodes[i].id));
        }
    }
    if total == 0 {
        return Ok(None);
    }
    Ok(Some((merger.finish().map_err(|e| format!("cpuprofile: {e}"))?, total)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_str(s: &str) -> Result<Decoded, String> {
        decode(&mut s.as_bytes(), &Config::default())
    }

    const GOOD: &str = r#"{"nodes":[
        {"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1},"children":[2,3]},
        {"id":2,"callFrame":{"functionName":"(program)","url":"","lineNumber":-1}},
        {"id":3,"callFrame":{"functionName":"","url":"file:///a.js","lineNumber":0},"children":[4]},
        {"id":4,"callFrame":{"functionName":"f;g","url":"file:///a.js","lineNumber":9}}],
        "startTime":100,"endTime":400,"samples":[2,4,4,3],"timeDeltas":[1,1,1,1]}"#;

    #[test]
    fn samples_count_on_named_stacks_without_the_root() {
        assert!(is_applicable(GOOD.as_bytes()));
        assert!(!is_applicable(b"a;b 1\n"));
        let d = decode_str(GOOD).unwrap();
        assert_eq!(d.format, "cpuprofile");
        let folded = crate::store::fold::folded_lines(&d.graphs[0].table).concat();
        assert_eq!(
            folded,
            "(anonymous) file:///a.js:1 1\n(anonymous) file:///a.js:1;f:g file:///a.js:10 2\n(program) 1\n"
        );
        assert_eq!(d.metadata["duration"], "300 µs");
        // The duration goes through the one value formatter, as pprof's does: not "787980 µs".
        let long = GOOD.replace(r#""endTime":400"#, r#""endTime":788080"#);
        assert_eq!(decode_str(&long).unwrap().metadata["duration"], "788 ms");
        // Each sample lasts until the next, the last until endTime.
        assert_eq!((d.graphs[1].name.as_str(), d.graphs[1].unit.as_str()), ("time", "microseconds"));
        assert_eq!(
            crate::store::fold::folded_lines(&d.graphs[1].table).concat(),
            "(anonymous) file:///a.js:1 296\n(anonymous) file:///a.js:1;f:g file:///a.js:10 2\n(program) 1\n"
        );
        // And in the order the time passed: (program) at 101, f;g at 102 and 103 (one frame:
        // it went on), then the anonymous function alone from 104 to 400.
        assert_eq!((d.graphs[2].name.as_str(), d.graphs[2].unit.as_str(), d.graphs[2].timeline), ("time order", "microseconds", true));
        let t = &d.graphs[2].table;
        let frames: Vec<(&str, u32, u64, u64, u64)> = (0..t.len()).map(|r| (t.names[t.name[r] as usize].as_str(), t.depth[r], t.offset[r], t.total[r], t.self_[r])).collect();
        assert_eq!(
            frames,
            [
                ("all", 0, 0, 299, 0),
                ("(program)", 1, 0, 1, 1),
                ("(anonymous) file:///a.js:1", 1, 1, 298, 296),
                ("f:g file:///a.js:10", 2, 1, 2, 2),
            ]
        );
        assert!(d.graphs[..2].iter().all(|g| !g.timeline));
    }

    #[test]
    fn samples_out_of_time_order_are_sorted_and_bad_deltas_only_warn() {
        let d = decode_str(&GOOD.replace("[1,1,1,1]", "[1,5,-3,1]")).unwrap();
        assert_eq!(
            crate::store::fold::folded_lines(&d.graphs[1].table).concat(),
            "(anonymous) file:///a.js:1 2\n(anonymous) file:///a.js:1;f:g file:///a.js:10 295\n(program) 2\n"
        );
        let d = decode_str(&GOOD.replace("[1,1,1,1]", "[1,1]")).unwrap();
        assert_eq!(d.graphs.len(), 1);
        assert!(d.warnings[0].contains("4 samples but 2 timeDeltas"), "{:?}", d.warnings);
    }

    #[test]
    fn parent_fields_and_hit_counts_are_read_too() {
        let s = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},
            {"id":2,"parent":1,"callFrame":{"functionName":"main"},"hitCount":3}]}"#;
        let d = decode_str(s).unwrap();
        assert_eq!(crate::store::fold::folded_lines(&d.graphs[0].table).concat(), "main 3\n");
    }

    #[test]
    fn the_layout_before_2017_reads_as_the_current_one() {
        // GOOD in the old layout, written from the format Chrome 57 and node 8 saved: a nested
        // `head`, 1-based lines, times in seconds and absolute timestamps in microseconds.
        let old = r#"{"head":{"functionName":"(root)","url":"","lineNumber":0,"callUID":1,"id":1,"hitCount":0,"children":[
            {"functionName":"(program)","url":"","lineNumber":0,"id":2,"hitCount":1,"children":[]},
            {"functionName":"","url":"file:///a.js","lineNumber":1,"id":3,"hitCount":1,"children":[
                {"functionName":"f;g","url":"file:///a.js","lineNumber":10,"id":4,"hitCount":2,"children":[]}]}]},
            "startTime":0.0001,"endTime":0.0004,"samples":[2,4,4,3],"timestamps":[101,102,103,104]}"#;
        assert!(is_applicable(old.as_bytes()));
        let (d, g) = (decode_str(old).unwrap(), decode_str(GOOD).unwrap());
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        for k in 0..2 {
            assert_eq!((&d.graphs[k].name, &d.graphs[k].unit), (&g.graphs[k].name, &g.graphs[k].unit));
            assert_eq!(crate::store::fold::folded_lines(&d.graphs[k].table), crate::store::fold::folded_lines(&g.graphs[k].table));
        }
        assert_eq!(d.metadata["duration"], "300 µs");
        // Without samples, the hit counts.
        let counts = old.replace(r#""samples":[2,4,4,3],"timestamps":[101,102,103,104]"#, r#""samples":[]"#);
        let d = decode_str(&counts).unwrap();
        assert_eq!(d.graphs.len(), 1);
        assert_eq!(crate::store::fold::folded_lines(&d.graphs[0].table).concat(), "(anonymous) file:///a.js:1 1\n(anonymous) file:///a.js:1;f:g file:///a.js:10 2\n(program) 1\n");
        let e = decode_str(r#"{"head":{"functionName":"x"},"samples":[1]}"#).unwrap_err();
        assert!(e.contains("the layout before 2017") && e.contains("missing field `id`"), "{e}");
        // A tree deeper than the reader takes is refused with a message, not a crash.
        let mut deep = String::from(r#"{"head":"#);
        for i in 0..100_000 {
            deep.push_str(&format!(r#"{{"functionName":"f","id":{i},"children":["#));
        }
        let e = decode_str(&deep).unwrap_err();
        assert!(e.contains("nested more than 63 nodes deep"), "{e}");
    }

    #[test]
    fn wrong_shapes_are_clear_errors() {
        let cases = [
            (r#"{"nodes":[{"id":1,"callFrame":{"functionName":"x"},"children":[99]}],"samples":[1]}"#, "node 1 has child 99 that does not exist"),
            (r#"{"nodes":[{"id":1,"callFrame":{"functionName":"x"}}],"samples":[7]}"#, "node 7 that does not exist"),
            (r#"{"nodes":[{"id":1,"callFrame":{}}, {"id":1,"callFrame":{}}],"samples":[1]}"#, "appears twice"),
            (r#"{"nodes":[{"id":1,"callFrame":{},"children":[2]},{"id":2,"callFrame":{},"children":[1]}],"samples":[1]}"#, "cycle"),
            (r#"{"nodes":"many","samples":[]}"#, "invalid type"),
            (r#"{"nodes":[{"id":1}],"samples":[1]}"#, "missing field `callFrame`"),
            (r#"{"nodes":[{"id":1,"callFrame":{}}],"samples":[]}"#, "no samples"),
            (r#"{"nodes":[],"samples":[]}"#, "no nodes"),
            (r#"{"nodes":[{"id":1,"callFrame":{}}],"samp"#, "EOF"),
        ];
        for (input, want) in cases {
            let e = decode_str(input).unwrap_err();
            assert!(e.starts_with("cpuprofile: ") && e.contains(want), "{input}: {e}");
        }
    }
}
