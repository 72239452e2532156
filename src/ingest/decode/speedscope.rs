//! speedscope's JSON file format (`$schema`
//! `https://www.speedscope.app/file-format-schema.json`), as written by py-spy
//! (`-f speedscope`), rbspy, speedscope's own export and others: a table of frames shared by
//! every profile, and one or more profiles, each `sampled` (stacks of frame indexes with
//! their weights) or `evented` (open and close events at times).
//!
//! Each profile becomes one graph, named after the profile (`profile N` when it has no name,
//! ` (2)`, ` (3)`… added to repeated names). An evented profile is turned into weighted
//! stacks: between two events, the stack that is open gets the time between them.
//! A frame is named `name file:line` (`name file` without a line, `name` alone without a
//! file), like the frames of a `.cpuprofile`.
//!
//! A sample with no frames (a sampled profile's `[]`, or an evented profile's time between two
//! events when no frame is open) counts at the root, `all`, as speedscope counts it
//! (`appendSampleWithWeight` and `CallTreeProfileBuilder` add its weight to the root's own), so
//! that the graph's total and every share are those speedscope shows; a warning says how many
//! such samples there were and what they weigh. (speedscope also counts the time from
//! `startValue` to an evented profile's first event, and to `endValue` after its last, which
//! are not read here.)
//!
//! Values are exact integers in flamesite, speedscope's are numbers: a time unit whose
//! weights have fractions is converted to the largest of milliseconds, microseconds and
//! nanoseconds in which every weight is whole (py-spy's 0.01 s samples become 10
//! milliseconds), and finer than a nanosecond is rounded, with a warning; in other units
//! fractional weights are kept exact with the fewest decimal places that hold them all, up to
//! six, as folded stacks' fractional counts are (`FrameTable::decimals`), and finer is rounded
//! to six, with a warning. The unit `none` is shown as `samples`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use std::fmt;

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::Deserialize;

use super::cpuprofile::{clean, contains};
use super::{read_json, Compression, Decoded, FrameBudget, Graph};
use crate::config::Config;
use crate::graph::frames::StackMerger;

#[derive(Deserialize)]
struct File {
    shared: Shared,
    profiles: Vec<Profile>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    exporter: Option<String>,
}

#[derive(Deserialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Deserialize)]
struct Frame {
    name: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u64>,
}

/// A profile as it is read: every field of both types, the type told by a plain field. (As a
/// `#[serde(tag = "type")]` enum, serde held each profile whole as generic values before
/// choosing the variant: many times the file's bytes, docs/BENCHMARKS.md, "Figures behind the code".)
#[derive(Deserialize)]
struct RawProfile {
    #[serde(rename = "type")]
    kind: Kind,
    #[serde(default)]
    name: String,
    unit: String,
    #[serde(default)]
    samples: Option<Stacks>,
    #[serde(default)]
    weights: Option<Vec<f64>>,
    #[serde(default)]
    events: Option<Vec<Event>>,
}

#[derive(Deserialize, Clone, Copy)]
enum Kind {
    #[serde(rename = "sampled")]
    Sampled,
    #[serde(rename = "evented")]
    Evented,
}

#[derive(Deserialize)]
#[serde(try_from = "RawProfile")]
enum Profile {
    Sampled { name: String, unit: String, samples: Stacks, weights: Vec<f64> },
    Evented { name: String, unit: String, events: Vec<Event> },
}

impl TryFrom<RawProfile> for Profile {
    type Error = String;
    fn try_from(p: RawProfile) -> Result<Profile, String> {
        let missing = |field: &str| format!("missing field `{field}` of a profile of type \"{}\"", match p.kind {
            Kind::Sampled => "sampled",
            Kind::Evented => "evented",
        });
        Ok(match p.kind {
            Kind::Sampled => Profile::Sampled {
                samples: p.samples.ok_or_else(|| missing("samples"))?,
                weights: p.weights.ok_or_else(|| missing("weights"))?,
                name: p.name,
                unit: p.unit,
            },
            Kind::Evented => Profile::Evented { events: p.events.ok_or_else(|| missing("events"))?, name: p.name, unit: p.unit },
        })
    }
}

/// A sampled profile's stacks (frame indexes, root first), one after another: a vector per
/// sample took 48 bytes and an allocation even for a sample of one frame.
#[derive(Default)]
struct Stacks {
    frames: Vec<u32>,
    /// Where each stack ends in `frames`.
    ends: Vec<usize>,
}

impl Stacks {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Each stack, in the file's order.
    fn iter(&self) -> impl Iterator<Item = &[u32]> {
        self.ends.iter().scan(0, |start, &end| Some(&self.frames[std::mem::replace(start, end)..end]))
    }
}

impl<'de> Deserialize<'de> for Stacks {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Stacks, D::Error> {
        struct All;
        impl<'de> Visitor<'de> for All {
            type Value = Stacks;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of stacks, each an array of frame indexes")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Stacks, A::Error> {
                let mut stacks = Stacks::default();
                while seq.next_element_seed(Stack(&mut stacks.frames))?.is_some() {
                    stacks.ends.push(stacks.frames.len());
                }
                Ok(stacks)
            }
        }
        /// Appends one stack's frames.
        struct Stack<'a>(&'a mut Vec<u32>);
        impl<'de> DeserializeSeed<'de> for Stack<'_> {
            type Value = ();
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_seq(self)
            }
        }
        impl<'de> Visitor<'de> for Stack<'_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a stack: an array of frame indexes")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while let Some(frame) = seq.next_element::<u64>()? {
                    let frame = u32::try_from(frame).map_err(|_| de::Error::custom(format_args!("frame {frame} does not exist")))?;
                    self.0.push(frame);
                }
                Ok(())
            }
        }
        d.deserialize_seq(All)
    }
}

#[derive(Deserialize)]
struct Event {
    /// `O` (open) or `C` (close).
    #[serde(rename = "type")]
    kind: char,
    at: f64,
    frame: u32,
}

/// Whether `sniff` is JSON that names speedscope's schema.
pub fn is_applicable(sniff: &[u8]) -> bool {
    let start = sniff.iter().position(|b| !b.is_ascii_whitespace());
    start.is_some_and(|s| sniff[s] == b'{') && contains(sniff, b"speedscope.app/file-format-schema")
}

/// Reads a whole speedscope file, as it streams (its text is never held, see
/// [`super::read_json`]): one graph per profile.
pub fn decode(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let (file, content): (File, u64) = read_json(reader, config.limits.max_name_bytes).map_err(|e| format!("speedscope: {e}"))?;
    if file.profiles.is_empty() {
        return Err("speedscope: the file has no profiles".into());
    }
    let mut budget = FrameBudget::for_bytes(content);
    let mut graphs = Vec::new();
    let mut warnings = Vec::new();
    let mut taken = BTreeSet::new();
    let mut timelines = Vec::new();
    for (i, profile) in file.profiles.iter().enumerate() {
        let (name, unit) = match profile {
            Profile::Sampled { name, unit, samples, weights } => {
                if samples.len() != weights.len() {
                    return Err(format!(
                        "speedscope: profile {} has {} samples but {} weights",
                        i + 1,
                        samples.len(),
                        weights.len()
                    ));
                }
                (name, unit)
            }
            Profile::Evented { name, unit, .. } => (name, unit),
        };
        let context = format!("speedscope: profile {} ({:?})", i + 1, name);
        let frames = file.shared.frames.len();
        // Two passes over the stacks, none of them copied: the first checks them and finds
        // the unit that makes every weight whole, the second merges. Each looks at the frames
        // a stack does not share with the one before only, so deep stacks opened and closed
        // by events cost their events, not their depth at each event.
        // An evented profile's weights are the times between its events.
        let mut between = Vec::new();
        let evented = matches!(profile, Profile::Evented { .. });
        visit(i, profile, &mut |stack, keep, w| {
            if let Some(bad) = stack[keep..].iter().find(|&&f| f as usize >= frames) {
                return Err(format!("{context}: frame {bad} does not exist (the file has {frames} frames)"));
            }
            if !w.is_finite() || w < 0.0 {
                return Err(format!("{context}: weight {w} is not a finite number of at least 0"));
            }
            if evented {
                between.push(w);
            }
            Ok(())
        })?;
        let weights = match profile {
            Profile::Sampled { weights, .. } => weights,
            Profile::Evented { .. } => &between,
        };
        let (unit, factor, decimals, rounded) = integer_unit(unit, weights.iter().copied());
        drop(between);
        if rounded {
            let to = if decimals == 0 { "a whole nanosecond".to_string() } else { format!("{decimals} decimal places") };
            warnings.push(format!("{context}: weights finer than {to} were rounded to it"));
        }
        let mut merger = StackMerger::new(false, config.limits.max_depth);
        let added = add_stacks(i, profile, &file.shared.frames, factor, &mut merger, &mut budget, "over its profiles", &context)?;
        if added.stacks == 0 {
            warnings.push(format!("{context}: no samples; the profile is left out"));
            continue;
        }
        let mut table = merger.finish().map_err(|e| format!("{context}: {e}"))?;
        table.decimals = decimals;
        if added.empty > 0 {
            warnings.push(no_frames(&context, evented, added.empty, added.empty_weight, table.grand_total(), &unit, decimals));
        }
        let mut unique = |wanted: String| {
            let mut name = wanted.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{wanted} ({n})");
                n += 1;
            }
            name
        };
        let graph_name = unique(if name.trim().is_empty() { format!("profile {}", i + 1) } else { name.clone() });
        // The same stacks in the order they were taken, with a budget of its own: one that
        // would be too large is left out, the profile still builds.
        let mut own = FrameBudget { limit: budget.limit, spent: 0 };
        match timeline(i, profile, &file.shared.frames, factor, config.limits.max_depth, &mut own, &context) {
            Ok(Some(mut t)) => {
                t.decimals = decimals;
                let time_name = unique(format!("{graph_name} (time order)"));
                timelines.push(Graph { name: time_name, unit: unit.clone(), table: t, timeline: true });
            }
            Ok(None) => {}
            Err(e) => warnings.push(format!("{context}: {e}; its time-order graph is left out")),
        }
        graphs.push(Graph { name: graph_name, unit, table, timeline: false });
    }
    // The time-order graphs after the flame graphs: the page opens on the first graph.
    graphs.append(&mut timelines);
    if graphs.is_empty() {
        return Err("speedscope: no profile has samples".into());
    }
    let mut metadata = BTreeMap::new();
    if let Some(n) = file.name.filter(|n| !n.is_empty()) {
        metadata.insert("name".to_string(), n);
    }
    if let Some(e) = file.exporter.filter(|e| !e.is_empty()) {
        metadata.insert("exporter".to_string(), e);
    }
    Ok(Decoded { format: "speedscope", compression: Compression::None, graphs, warnings, metadata })
}

/// The time-order graph of profile `i` ([`crate::graph::frames::Timeline`]): its stacks in the
/// order [`visit`] gives them, weights times `factor` (as the flame graph's); `None` when it
/// would be the flame graph again (one stack).
fn timeline(i: usize, profile: &Profile, frames: &[Frame], factor: f64, max_depth: u32, budget: &mut FrameBudget, context: &str) -> Result<Option<crate::graph::frames::FrameTable>, String> {
    let mut t = crate::graph::frames::Timeline::new(max_depth);
    let stacks = add_stacks(i, profile, frames, factor, &mut t, budget, "in time order", context)?.stacks;
    Ok((stacks > 1).then(|| t.finish()))
}

/// What [`add_stacks`] handed on.
struct Added {
    /// Stacks that differ from the one before, counted up to 2 (0: none; 1: one stack,
    /// repeated or not).
    stacks: usize,
    /// Stacks with no frames (counted at the root), and their values.
    empty: u64,
    empty_weight: u64,
}

/// The warning for `count` samples (of an evented profile: stretches of time between events)
/// with no frames, worth `weight` of the graph's `total`, counted at the root.
fn no_frames(context: &str, evented: bool, count: u64, weight: u64, total: u64, unit: &str, decimals: u32) -> String {
    let what = match (evented, count == 1) {
        (false, true) => "1 sample had no frames (an empty stack)".to_string(),
        (false, false) => format!("{count} samples had no frames (an empty stack)"),
        (true, true) => "1 stretch of time between events had no frame open".to_string(),
        (true, false) => format!("{count} stretches of time between events had no frame open"),
    };
    let share = weight as f64 * 100.0 / total.max(1) as f64;
    format!(
        "{context}: {what}: {} ({share:.1}% of the profile), counted at the root, {}",
        crate::units::format_scaled(weight.into(), unit, decimals),
        crate::graph::frames::ROOT_NAME
    )
}

/// Hands the stacks of profile `i` that weigh more than 0 (weights times `factor`) to `to` in
/// the order [`visit`] gives them, each as the frames it keeps of the one handed before and
/// its new frames, whose names are made and interned when first used, once; each new frame is
/// spent from `budget` (`over` says over what). A stack with no frames adds its value to the
/// root's own. Says how many stacks it handed on that differ from the one before, and which
/// had no frames.
#[allow(clippy::too_many_arguments)]
fn add_stacks(i: usize, profile: &Profile, frames: &[Frame], factor: f64, to: &mut dyn crate::graph::frames::AddIds, budget: &mut FrameBudget, over: &str, context: &str) -> Result<Added, String> {
    let mut ids: Vec<u32> = vec![u32::MAX; frames.len()];
    let mut new = Vec::new();
    // How deep the stacks were at their shallowest since the last one handed on, and how deep
    // that one was.
    let mut low = 0usize;
    let mut stacks = 0usize;
    let (mut empty, mut empty_weight) = (0u64, 0u64);
    let mut last: Option<Vec<u32>> = None;
    visit(i, profile, &mut |stack, keep, w| {
        low = low.min(keep);
        let value = (w * factor).round();
        if value >= crate::graph::frames::MAX_EXACT as f64 {
            return Err(format!("{context}: the weight {w} is too large"));
        }
        if value == 0.0 {
            return Ok(());
        }
        if stack.is_empty() {
            empty += 1;
            empty_weight = empty_weight.saturating_add(value as u64);
        }
        new.clear();
        for &f in &stack[low..] {
            let f = f as usize;
            if ids[f] == u32::MAX {
                ids[f] = to.intern(&frame_name(&frames[f]));
            }
            new.push(ids[f]);
        }
        budget.spend(new.len() as u64, "speedscope", over)?;
        to.add_ids(low, &new, value as u64).map_err(|e| format!("{context}: {e}"))?;
        if stacks < 2 && last.as_deref() != Some(stack) {
            stacks += 1;
            last = Some(stack.to_vec());
        }
        low = stack.len();
        Ok(())
    })?;
    Ok(Added { stacks, empty, empty_weight })
}

fn frame_name(f: &Frame) -> String {
    let name = match (&f.file, f.line) {
        (Some(file), Some(line)) if !file.is_empty() => format!("{} {file}:{line}", f.name),
        (Some(file), None) if !file.is_empty() => format!("{} {file}", f.name),
        _ => f.name.clone(),
    };
    clean(&name)
}

/// What [`visit`] calls with each stack (frame indexes, root first), how many of its first
/// frames are those of the stack of the call before, and its weight.
type StackVisitor<'a> = dyn FnMut(&[u32], usize, f64) -> Result<(), String> + 'a;

/// Calls `f` with each stack of the profile (frame indexes, root first), the frames it shares
/// with the previous stack, and its weight.
fn visit(i: usize, profile: &Profile, f: &mut StackVisitor) -> Result<(), String> {
    match profile {
        Profile::Sampled { samples, weights, .. } => {
            let mut prev: &[u32] = &[];
            for (stack, &w) in samples.iter().zip(weights) {
                let keep = prev.iter().zip(stack).take_while(|(a, b)| a == b).count();
                f(stack, keep, w)?;
                prev = stack;
            }
            Ok(())
        }
        Profile::Evented { events, .. } => evented(i, events, f),
    }
}

/// Stacks and their durations from open and close events: between two events, the open
/// stack gets the time between them (an empty stack when no frame is open).
fn evented(i: usize, events: &[Event], f: &mut StackVisitor) -> Result<(), String> {
    let context = |k: usize| format!("speedscope: profile {}, event {}", i + 1, k + 1);
    let mut open: Vec<u32> = Vec::new();
    // How deep the open stack was at its shallowest since the last call of `f`.
    let mut low = 0usize;
    let mut last: Option<f64> = None;
    for (k, e) in events.iter().enumerate() {
        if !e.at.is_finite() {
            return Err(format!("{}: time {} is not a number", context(k), e.at));
        }
        if let Some(prev) = last {
            if e.at < prev {
                return Err(format!("{}: time {} is before the previous event's {prev}", context(k), e.at));
            }
            if e.at > prev {
                f(&open, low, e.at - prev)?;
                low = open.len();
            }
        }
        last = Some(e.at);
        match e.kind {
            'O' => open.push(e.frame),
            'C' => match open.last() {
                Some(&top) if top == e.frame => {
                    open.pop();
                    low = low.min(open.len());
                }
                Some(&top) => {
                    return Err(format!("{}: closes frame {} but frame {top} is the one open", context(k), e.frame));
                }
                None => return Err(format!("{}: closes frame {} but no frame is open", context(k), e.frame)),
            },
            other => return Err(format!("{}: type {other:?} is neither \"O\" (open) nor \"C\" (close)", context(k))),
        }
    }
    if !open.is_empty() {
        return Err(format!(
            "speedscope: profile {}: {} frame{} still open after the last event (frame {} last)",
            i + 1,
            open.len(),
            if open.len() == 1 { " is" } else { "s are" },
            open[open.len() - 1]
        ));
    }
    Ok(())
}

/// The unit the weights are stored in, the factor from speedscope's unit to it, the decimal
/// places the values keep (0 but for fractional weights in a unit that is not a time), and
/// whether some weights had to be rounded.
fn integer_unit(unit: &str, weights: impl Iterator<Item = f64> + Clone) -> (String, f64, u32, bool) {
    let whole = |factor: f64| {
        weights.clone().all(|w| {
            let x = w * factor;
            (x - x.round()).abs() <= 1e-6 * x.abs().max(1.0)
        })
    };
    let time: &[(&str, f64)] = match unit {
        "seconds" => &[("seconds", 1.0), ("milliseconds", 1e3), ("microseconds", 1e6), ("nanoseconds", 1e9)],
        "milliseconds" => &[("milliseconds", 1.0), ("microseconds", 1e3), ("nanoseconds", 1e6)],
        "microseconds" => &[("microseconds", 1.0), ("nanoseconds", 1e3)],
        _ => &[],
    };
    for &(name, factor) in time {
        if whole(factor) {
            return (name.to_string(), factor, 0, false);
        }
    }
    if let Some(&(name, factor)) = time.last() {
        return (name.to_string(), factor, 0, true);
    }
    let name = match unit {
        "none" | "" => "samples",
        other => other,
    };
    let most = super::folded::MAX_DECIMALS;
    for places in 0..=most {
        let factor = 10f64.powi(places as i32);
        if whole(factor) {
            return (name.to_string(), factor, places, false);
        }
    }
    (name.to_string(), 10f64.powi(most as i32), most, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_str(s: &str) -> Result<Decoded, String> {
        decode(&mut s.as_bytes(), &Config::default())
    }

    fn file(profiles: &str) -> String {
        format!(
            r#"{{"$schema": "https://www.speedscope.app/file-format-schema.json",
            "shared": {{"frames": [{{"name": "main", "file": "m.py", "line": 3}}, {{"name": "f;g"}}, {{"name": "h", "file": "h.c"}}]}},
            "profiles": [{profiles}]}}"#
        )
    }

    fn folded(d: &Decoded, i: usize) -> String {
        crate::store::fold::folded_lines(&d.graphs[i].table).concat()
    }

    #[test]
    fn sampled_and_evented_profiles_become_graphs() {
        let s = file(
            r#"{"type": "sampled", "name": "t", "unit": "seconds", "startValue": 0, "endValue": 1,
                "samples": [[0, 1], [0], [0, 1]], "weights": [0.01, 0.02, 0.0005]},
               {"type": "evented", "name": "t", "unit": "microseconds", "startValue": 0, "endValue": 10,
                "events": [{"type": "O", "at": 0, "frame": 0}, {"type": "O", "at": 2, "frame": 2},
                           {"type": "C", "at": 5, "frame": 2}, {"type": "C", "at": 10, "frame": 0}]},
               {"type": "sampled", "unit": "none", "startValue": 0, "endValue": 1,
                "samples": [[2]], "weights": [3]}"#,
        );
        assert!(is_applicable(s.as_bytes()));
        let d = decode_str(&s).unwrap();
        assert_eq!(d.format, "speedscope");
        let names: Vec<(&str, &str)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect();
        // The flame graphs, then the time order of each profile of more than one stack.
        assert_eq!(
            names,
            [("t", "microseconds"), ("t (2)", "microseconds"), ("profile 3", "samples"), ("t (time order)", "microseconds"), ("t (2) (time order)", "microseconds")]
        );
        assert_eq!(d.graphs.iter().map(|g| g.timeline).collect::<Vec<_>>(), [false, false, false, true, true]);
        assert_eq!(folded(&d, 0), "main m.py:3 20000\nmain m.py:3;f:g 10500\n");
        assert_eq!(folded(&d, 1), "main m.py:3 7\nmain m.py:3;h h.c 3\n");
        assert_eq!(folded(&d, 2), "h h.c 3\n");
        // In time order, f;g ran twice, before and after main's own 20,000: two frames.
        let t = &d.graphs[3].table;
        let frames: Vec<(&str, u32, u64, u64)> = (0..t.len()).map(|r| (t.names[t.name[r] as usize].as_str(), t.depth[r], t.offset[r], t.total[r])).collect();
        assert_eq!(frames, [("all", 0, 0, 30500), ("main m.py:3", 1, 0, 30500), ("f:g", 2, 0, 10000), ("f:g", 2, 30000, 500)]);
        // Events: main, h inside it, main again: main continues.
        assert_eq!(folded(&d, 4), "main m.py:3 7\nmain m.py:3;h h.c 3\n");
    }

    #[test]
    fn samples_with_no_frames_count_at_the_root_with_a_warning() {
        // A sampled `[]` and an evented gap with no frame open, as speedscope counts them: at
        // the root's own, in the total.
        let s = file(
            r#"{"type": "sampled", "name": "s", "unit": "milliseconds", "startValue": 0, "endValue": 1,
                "samples": [[0, 1], [], [0], [], [0, 1]], "weights": [10, 5, 20, 0.5, 10]},
               {"type": "evented", "name": "e", "unit": "microseconds", "startValue": 0, "endValue": 12,
                "events": [{"type": "O", "at": 0, "frame": 0}, {"type": "C", "at": 4, "frame": 0},
                           {"type": "O", "at": 10, "frame": 2}, {"type": "C", "at": 12, "frame": 2}]},
               {"type": "sampled", "name": "only", "unit": "none", "startValue": 0, "endValue": 1,
                "samples": [[], []], "weights": [2, 1]}"#,
        );
        let d = decode_str(&s).unwrap();
        let root_self = |g: usize| (d.graphs[g].table.self_[0], d.graphs[g].table.grand_total());
        assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("s", "microseconds"));
        assert_eq!(root_self(0), (5500, 45500));
        assert_eq!(folded(&d, 0), "main m.py:3 20000\nmain m.py:3;f:g 20000\n");
        assert_eq!((d.graphs[1].name.as_str(), root_self(1)), ("e", (6, 12)));
        assert_eq!(folded(&d, 1), "h h.c 2\nmain m.py:3 4\n");
        // A profile of empty stacks only is still a profile: its whole weight at the root.
        assert_eq!((d.graphs[2].name.as_str(), root_self(2)), ("only", (3, 3)));
        assert_eq!(
            d.warnings,
            [
                "speedscope: profile 1 (\"s\"): 2 samples had no frames (an empty stack): 5.50 ms (12.1% of the profile), counted at the root, all",
                "speedscope: profile 2 (\"e\"): 1 stretch of time between events had no frame open: 6.00 µs (50.0% of the profile), counted at the root, all",
                "speedscope: profile 3 (\"only\"): 2 samples had no frames (an empty stack): 3 samples (100.0% of the profile), counted at the root, all",
            ]
        );
        // In time order, each empty sample is root time where it was taken.
        let t = &d.graphs[3].table;
        assert_eq!((d.graphs[3].name.as_str(), t.self_[0], t.grand_total()), ("s (time order)", 5500, 45500));
        let frames: Vec<(&str, u64, u64)> = (0..t.len()).map(|r| (t.names[t.name[r] as usize].as_str(), t.offset[r], t.total[r])).collect();
        assert_eq!(
            frames,
            [("all", 0, 45500), ("main m.py:3", 0, 10000), ("f:g", 0, 10000), ("main m.py:3", 15000, 20000), ("main m.py:3", 35500, 10000), ("f:g", 35500, 10000)]
        );
    }

    #[test]
    fn fractional_weights_of_counts_are_kept_exact_and_only_past_six_places_rounded() {
        // Counts (not times) with fractions: the fewest decimal places that hold them all.
        let s = file(
            r#"{"type": "sampled", "name": "a", "unit": "none", "startValue": 0, "endValue": 1,
                "samples": [[0, 1], [0], [0, 1]], "weights": [0.5, 1.25, 2]},
               {"type": "sampled", "name": "b", "unit": "bytes", "startValue": 0, "endValue": 1,
                "samples": [[0], [0, 1]], "weights": [0.1234567, 1]},
               {"type": "sampled", "name": "c", "unit": "microseconds", "startValue": 0, "endValue": 1,
                "samples": [[0]], "weights": [0.0015]}"#,
        );
        let d = decode_str(&s).unwrap();
        assert_eq!((d.graphs[0].table.decimals, d.graphs[0].table.grand_total()), (2, 375));
        assert_eq!(folded(&d, 0), "main m.py:3 1.25\nmain m.py:3;f:g 2.5\n");
        assert_eq!((d.graphs[1].table.decimals, d.graphs[1].table.grand_total()), (6, 1_123_457));
        // A time finer than a nanosecond is rounded to one (1.5 ns is 2 ns), with a warning.
        assert_eq!((d.graphs[2].unit.as_str(), d.graphs[2].table.decimals, d.graphs[2].table.grand_total()), ("nanoseconds", 0, 2));
        let warned: Vec<&String> = d.warnings.iter().filter(|w| w.contains("were rounded")).collect();
        assert_eq!(warned.len(), 2, "{:?}", d.warnings);
        assert!(warned[0].contains("finer than 6 decimal places") && warned[1].contains("finer than a whole nanosecond"), "{warned:?}");
    }

    #[test]
    fn wrong_shapes_and_events_are_clear_errors() {
        let cases = [
            (file(r#"{"type": "sampled", "name": "x", "unit": "none", "samples": [[0]], "weights": []}"#), "1 samples but 0 weights"),
            (file(r#"{"type": "sampled", "name": "x", "unit": "none", "samples": [[7]], "weights": [1]}"#), "frame 7 does not exist"),
            (file(r#"{"type": "sampled", "name": "x", "unit": "none", "samples": [[0]], "weights": [-1]}"#), "weight -1"),
            (file(r#"{"type": "flat", "name": "x"}"#), "unknown variant `flat`"),
            (file(r#"{"type": "sampled", "name": "x", "unit": "none", "weights": [1]}"#), "missing field `samples` of a profile of type \"sampled\""),
            (file(r#"{"type": "evented", "name": "x", "unit": "none"}"#), "missing field `events`"),
            (file(r#"{"type": "sampled", "name": "x", "unit": "none", "samples": [[0, 4294967296]], "weights": [1]}"#), "frame 4294967296 does not exist"),
            (file(r#"{"type": "sampled", "name": "x", "unit": "none", "samples": [0], "weights": [1]}"#), "expected a stack: an array of frame indexes"),
            (file(""), "no profiles"),
            (file(r#"{"type": "evented", "name": "x", "unit": "none", "startValue": 0, "endValue": 1,
                      "events": [{"type": "C", "at": 0, "frame": 0}]}"#), "closes frame 0 but no frame is open"),
            (file(r#"{"type": "evented", "name": "x", "unit": "none", "startValue": 0, "endValue": 1,
                      "events": [{"type": "O", "at": 0, "frame": 0}]}"#), "1 frame is still open"),
            (file(r#"{"type": "evented", "name": "x", "unit": "none", "startValue": 0, "endValue": 1,
                      "events": [{"type": "O", "at": 5, "frame": 0}, {"type": "C", "at": 1, "frame": 0}]}"#), "before the previous"),
            (file(r#"{"type": "evented", "name": "x", "unit": "none", "startValue": 0, "endValue": 1,
                      "events": [{"type": "X", "at": 0, "frame": 0}]}"#), "neither"),
            (r#"{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": []}"#.to_string(), "missing field `shared`"),
        ];
        for (input, want) in cases {
            let e = decode_str(&input).unwrap_err();
            assert!(e.starts_with("speedscope: ") && e.contains(want), "{want}: {e}");
        }
    }
}
