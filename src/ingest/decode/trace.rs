//! Chrome's Trace Event Format (the JSON of chrome://tracing, Perfetto's JSON export,
//! `chromium --trace-startup`, py-spy's `--format chrometrace`): its duration events become a
//! flame graph of wall time.
//!
//! The file is an object with a `traceEvents` array (other keys are passed over) or the array
//! alone. Each thread's duration events, a complete event (`"ph": "X"`, with `ts` and `dur`)
//! or a begin and an end (`"B"`, then `"E"`, which closes the thread's latest open `B`), are
//! intervals of its time; an interval inside another is a call made from it, as
//! chrome://tracing draws them. The graph, `wall` in nanoseconds, gives each stack of event
//! names its own time: its interval less those of the calls inside it (`ts` and `dur` are
//! microseconds, fractions allowed; each end is rounded to the nanosecond). An interval that
//! ends after the one it starts in is cut at that one's end; a `B` never closed ends at the
//! thread's last timestamp, an `E` with nothing open is passed over, each with a warning. When
//! the events are on more than one thread, each thread's stacks start with a frame for the
//! thread: its `thread_name` metadata (`"ph": "M"`) and ids, `CrRendererMain (pid 1, tid 7)`.
//! Other events (instant, counter, async, flow, metadata) add nothing. DevTools' CPU samples
//! (`Profile` and `ProfileChunk` events) make graphs of their own ([`javascript_graphs`]).

use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::cpuprofile::clean;
use super::{read_json, Compression, Decoded, FrameBudget, Graph};
use crate::config::Config;
use crate::graph::frames::StackMerger;

/// Whether the start of a file is a trace: a JSON object with a `traceEvents` key in its
/// start, or whose first key is the `metadata` DevTools writes before it (which may hold
/// megabytes of source maps, past the start read here), or an array of objects with a `ph` key.
pub fn is_applicable(sniff: &[u8]) -> bool {
    let text = trim_start(sniff);
    let has = |key: &[u8]| text.windows(key.len()).any(|w| w == key);
    if let Some(rest) = text.strip_prefix(b"{") {
        let devtools = trim_start(rest).starts_with(b"\"metadata\"") && (has(b"\"DevTools\"") || has(b"\"dataOrigin\""));
        return has(b"\"traceEvents\"") || devtools;
    }
    let Some(rest) = text.strip_prefix(b"[") else { return false };
    trim_start(rest).starts_with(b"{") && has(b"\"ph\"")
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// One event, with the fields read.
#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    ph: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    ts: Option<f64>,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default)]
    pid: Option<Id>,
    #[serde(default)]
    tid: Option<Id>,
    /// The profile a `Profile` or `ProfileChunk` event belongs to, with its `pid`.
    #[serde(default)]
    id: Option<Id>,
    #[serde(default)]
    args: Args,
}

/// A process or thread id: a number or a string, as traces write them.
#[derive(Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[serde(untagged)]
enum Id {
    Number(i64),
    Big(u64),
    Text(String),
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::Big(n) => write!(f, "{n}"),
            Id::Text(s) => f.write_str(s),
        }
    }
}

/// Of an event's `args`, only a string `name` (metadata events name threads with it) and, in
/// `data`, what DevTools' CPU samples hold ([`Data`]); any other value, and every other key,
/// is passed over without being held.
#[derive(Default)]
struct Args {
    name: Option<String>,
    data: Data,
}

/// Of `args.data`: a `Profile` event's `startTime` and a `ProfileChunk` event's
/// `cpuProfile` (`nodes`, `samples`) and `timeDeltas`, all in microseconds.
#[derive(Default)]
struct Data {
    start_time: Option<f64>,
    end_time: Option<f64>,
    nodes: Vec<serde_json::Value>,
    samples: Vec<u64>,
    time_deltas: Vec<f64>,
}

#[derive(Deserialize, Default)]
struct CpuProfileChunk {
    #[serde(default)]
    nodes: Vec<serde_json::Value>,
    #[serde(default)]
    samples: Vec<u64>,
}

/// Of a JSON value, the keys a [`Fields`] type keeps when it is an object; any other value
/// (a string, a number, an array) gives the type's default, and every other key is passed
/// over without being held.
trait Fields: Default {
    /// What the value is, for serde's messages.
    const WHAT: &'static str;
    /// Reads the value of `key` from `map` if it is kept, else passes it over.
    fn field<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// serde's visitor of a [`Fields`] type.
struct FieldsVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Fields> Visitor<'de> for FieldsVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::WHAT)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut value = T::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            value.field(&key, &mut map)?;
        }
        Ok(value)
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::default())
    }
}

impl Fields for Data {
    const WHAT: &'static str = "an event's args.data";
    fn field<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "startTime" => self.start_time = map.next_value::<serde_json::Value>()?.as_f64(),
            "endTime" => self.end_time = map.next_value::<serde_json::Value>()?.as_f64(),
            "cpuProfile" => {
                let chunk: CpuProfileChunk = map.next_value()?;
                self.nodes = chunk.nodes;
                self.samples = chunk.samples;
            }
            "timeDeltas" => self.time_deltas = map.next_value()?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl Fields for Args {
    const WHAT: &'static str = "an event's args";
    fn field<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "name" => {
                self.name = match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::String(s) => Some(s),
                    _ => None,
                }
            }
            "data" => self.data = map.next_value()?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Data {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldsVisitor(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldsVisitor(std::marker::PhantomData))
    }
}

/// The object form: `traceEvents` and keys passed over.
#[derive(Deserialize)]
struct Object {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event>,
}

/// One interval of a thread's time: start and end in nanoseconds, and its name's index.
#[derive(Clone, Copy)]
struct Interval {
    start: i64,
    end: i64,
    name: u32,
    /// Order in the file, for ties.
    seq: u32,
}

/// A time in microseconds as nanoseconds, rounded; `None` when it is not a finite number
/// within ±2^53 nanoseconds.
fn nanos(us: f64) -> Option<i64> {
    let ns = (us * 1000.0).round();
    (ns.is_finite() && ns.abs() < (1u64 << 53) as f64).then_some(ns as i64)
}

/// Reads a whole trace, as it streams (see [`super::read_json`]).
pub fn decode(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let object = {
        let head = reader.fill_buf().map_err(|e| e.to_string())?;
        trim_start(head).starts_with(b"{")
    };
    let max = config.limits.max_name_bytes;
    let (events, content) = if object {
        let (o, content) = read_json::<Object>(reader, max).map_err(|e| format!("Chrome trace: {e}"))?;
        (o.trace_events, content)
    } else {
        read_json::<Vec<Event>>(reader, max).map_err(|e| format!("Chrome trace: {e}"))?
    };
    let mut warnings = Vec::new();
    // Names of the events, interned, and each thread's intervals.
    let mut names: Vec<String> = Vec::new();
    let mut name_ids: std::collections::HashMap<String, u32> = Default::default();
    let mut intern = |name: &str| -> u32 {
        if let Some(&id) = name_ids.get(name) {
            return id;
        }
        names.push(clean(name));
        name_ids.insert(name.to_string(), names.len() as u32 - 1);
        names.len() as u32 - 1
    };
    type Thread = (Option<Id>, Option<Id>);
    let mut intervals: BTreeMap<Thread, Vec<Interval>> = BTreeMap::new();
    let mut open: BTreeMap<Thread, Vec<(i64, u32, u32)>> = BTreeMap::new();
    let mut last: BTreeMap<Thread, i64> = BTreeMap::new();
    let mut thread_names: BTreeMap<Thread, String> = BTreeMap::new();
    let mut profiles: BTreeMap<(Option<Id>, Option<Id>), Data> = BTreeMap::new();
    let (mut bad_times, mut stray_ends) = (0u64, 0u64);
    for (seq, e) in events.into_iter().enumerate() {
        let seq = seq as u32;
        let thread = (e.pid.clone(), e.tid.clone());
        match e.ph.as_str() {
            "M" if e.name.as_deref() == Some("thread_name") => {
                if let Some(name) = e.args.name {
                    thread_names.insert(thread, name);
                }
                continue;
            }
            _ if e.name.as_deref() == Some("Profile") || e.name.as_deref() == Some("ProfileChunk") => {
                // DevTools' CPU samples: a profile's start, then its chunks, by pid and id.
                let p = profiles.entry((e.pid.clone(), e.id.clone())).or_default();
                let data = e.args.data;
                if e.name.as_deref() == Some("Profile") {
                    p.start_time = data.start_time.or(p.start_time);
                } else {
                    p.nodes.extend(data.nodes);
                    p.samples.extend(data.samples);
                    p.time_deltas.extend(data.time_deltas);
                }
                p.end_time = data.end_time.or(p.end_time);
                continue;
            }
            "X" | "B" | "E" => {}
            _ => continue,
        }
        let Some(ts) = e.ts.and_then(nanos) else {
            bad_times += 1;
            continue;
        };
        let at = last.entry(thread.clone()).or_insert(ts);
        *at = (*at).max(ts);
        match e.ph.as_str() {
            "X" => {
                let Some(end) = e.dur.filter(|d| *d >= 0.0).and_then(|d| nanos(e.ts.unwrap_or(0.0) + d)) else {
                    bad_times += 1;
                    continue;
                };
                *at = (*at).max(end);
                let name = intern(e.name.as_deref().unwrap_or(""));
                intervals.entry(thread).or_default().push(Interval { start: ts, end: end.max(ts), name, seq });
            }
            "B" => {
                let name = intern(e.name.as_deref().unwrap_or(""));
                open.entry(thread).or_default().push((ts, name, seq));
            }
            _ => match open.get_mut(&thread).and_then(|s| s.pop()) {
                Some((start, name, seq)) => intervals.entry(thread).or_default().push(Interval { start, end: ts.max(start), name, seq }),
                None => stray_ends += 1,
            },
        }
    }
    let mut unclosed = 0u64;
    for (thread, stack) in open {
        let end = last.get(&thread).copied().unwrap_or(0);
        for (start, name, seq) in stack {
            unclosed += 1;
            intervals.entry(thread.clone()).or_default().push(Interval { start, end: end.max(start), name, seq });
        }
    }
    if bad_times > 0 {
        warnings.push(format!("Chrome trace: {bad_times} duration event{} without a usable ts (or dur) passed over", plural(bad_times)));
    }
    if stray_ends > 0 {
        warnings.push(format!("Chrome trace: {stray_ends} end event{} (\"E\") with no begin open on its thread passed over", plural(stray_ends)));
    }
    if unclosed > 0 {
        warnings.push(format!("Chrome trace: {unclosed} begin event{} (\"B\") never ended, counted to their thread's last timestamp", plural(unclosed)));
    }
    let mut budget = FrameBudget::for_bytes(content);
    // DevTools' CPU samples: each profile as the .cpuprofile DevTools would save of it.
    let js = javascript_graphs(profiles, config, &mut budget, &mut warnings);
    if intervals.values().all(|v| v.is_empty()) {
        if js.is_empty() {
            return Err("Chrome trace: no duration events (\"X\", or \"B\" and \"E\") and no CPU samples to make a graph of".into());
        }
        return Ok(Decoded { format: "chrome-trace", compression: Compression::None, graphs: js, warnings, metadata: BTreeMap::new() });
    }
    let threaded = intervals.len() > 1;
    let mut merger = StackMerger::new(false, config.limits.max_depth);
    let mut cut = 0u64;
    for (thread, mut list) in intervals {
        let mut path: Vec<&str> = Vec::new();
        // Earliest first; of two that start together the longer holds the other.
        list.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)).then(a.seq.cmp(&b.seq)));
        let label = threaded.then(|| thread_label(&thread, thread_names.get(&thread)));
        // The open intervals: (end, name, time of the calls inside it).
        let mut stack: Vec<(i64, u32, i64, i64)> = Vec::new();
        let mut emit = |stack: &[(i64, u32, i64, i64)], merger: &mut StackMerger, budget: &mut FrameBudget| -> Result<(), String> {
            let &(end, _, start, inner) = stack.last().expect("an open interval");
            let own = end - start - inner;
            if own <= 0 {
                return Ok(());
            }
            path.clear();
            path.extend(label.as_deref());
            path.extend(stack.iter().map(|&(_, n, _, _)| names[n as usize].as_str()));
            budget.spend(path.len() as u64, "Chrome trace", "over its threads")?;
            merger.add_names(&path, own as u64, 0).map_err(|e| format!("Chrome trace: {e}"))
        };
        for iv in list {
            while let Some(&(end, ..)) = stack.last() {
                if end > iv.start {
                    break;
                }
                emit(&stack, &mut merger, &mut budget)?;
                let (end, _, start, _) = stack.pop().expect("just seen");
                if let Some(parent) = stack.last_mut() {
                    parent.3 += end - start;
                }
            }
            let mut end = iv.end;
            if let Some(&(parent_end, ..)) = stack.last() {
                if end > parent_end {
                    end = parent_end;
                    cut += 1;
                }
            }
            if end <= iv.start {
                continue;
            }
            stack.push((end, iv.name, iv.start, 0));
        }
        while !stack.is_empty() {
            emit(&stack, &mut merger, &mut budget)?;
            let (end, _, start, _) = stack.pop().expect("not empty");
            if let Some(parent) = stack.last_mut() {
                parent.3 += end - start;
            }
        }
    }
    if cut > 0 {
        warnings.push(format!("Chrome trace: {cut} event{} ending after the event {} started in, cut at its end", plural(cut), if cut == 1 { "it" } else { "they" }));
    }
    let table = merger.finish().map_err(|e| format!("Chrome trace: {e}"))?;
    let mut graphs = vec![Graph { name: "wall".into(), unit: "nanoseconds".into(), table, timeline: false }];
    graphs.extend(js);
    Ok(Decoded { format: "chrome-trace", compression: Compression::None, graphs, warnings, metadata: BTreeMap::new() })
}

/// The graphs of DevTools' CPU samples in a trace: each profile (`Profile` and its
/// `ProfileChunk` events, by pid and id) put together as the `.cpuprofile` DevTools saves
/// (its nodes, samples and time deltas in order; without an `endTime`, the profile ends at its
/// last sample) and read as one ([`super::cpuprofile`]): `js samples`, `js time` and
/// `js time order`, with ` (pid N)` after each when the trace has several profiles. A profile
/// that cannot be read is left out with a warning.
fn javascript_graphs(profiles: BTreeMap<(Option<Id>, Option<Id>), Data>, config: &Config, budget: &mut FrameBudget, warnings: &mut Vec<String>) -> Vec<Graph> {
    let profiles: Vec<_> = profiles.into_iter().filter(|(_, p)| !p.nodes.is_empty()).collect();
    let several = profiles.len() > 1;
    let mut graphs = Vec::new();
    for ((pid, _), p) in profiles {
        let start = p.start_time.unwrap_or(0.0);
        let end = p.end_time.unwrap_or_else(|| start + p.time_deltas.iter().sum::<f64>());
        let value = serde_json::json!({ "nodes": p.nodes, "samples": p.samples, "timeDeltas": p.time_deltas, "startTime": start, "endTime": end });
        let whose = if several { format!(" (pid {})", pid.as_ref().map_or("?".to_string(), Id::to_string)) } else { String::new() };
        match super::cpuprofile::graphs_of_value(value, config, budget) {
            Ok((made, _, said)) => {
                warnings.extend(said.into_iter().map(|w| format!("Chrome trace, CPU samples{whose}: {w}")));
                graphs.extend(made.into_iter().map(|g| Graph { name: format!("js {}{whose}", g.name), ..g }));
            }
            Err(e) => warnings.push(format!("Chrome trace, CPU samples{whose}: {e}; left out")),
        }
    }
    graphs
}

/// The frame that starts a thread's stacks: its name, when the trace gives one, and its ids.
fn thread_label(thread: &(Option<Id>, Option<Id>), name: Option<&String>) -> String {
    let ids = |id: &Option<Id>| id.as_ref().map_or("?".to_string(), Id::to_string);
    let ids = format!("pid {}, tid {}", ids(&thread.0), ids(&thread.1));
    clean(&match name {
        Some(n) => format!("{n} ({ids})"),
        None => format!("thread ({ids})"),
    })
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(json: &str) -> (Vec<String>, Vec<String>) {
        let d = decode(&mut json.as_bytes(), &Config::default()).unwrap();
        let mut lines: Vec<String> = crate::store::fold::folded_lines(&d.graphs[0].table).into_iter().map(|l| l.trim_end().to_string()).collect();
        lines.sort();
        (lines, d.warnings)
    }

    #[test]
    fn recognises_both_forms_and_nothing_else() {
        assert!(is_applicable(b"{\"traceEvents\": [{\"ph\": \"X\"}]}"));
        assert!(is_applicable(b"  [\n{\"args\":{},\"ph\":\"B\",\"name\":\"f\"}"));
        assert!(!is_applicable(b"{\"nodes\": []}"));
        // DevTools' saved trace: its metadata first, its events past the sniff.
        assert!(is_applicable(b"{\"metadata\": {\"source\": \"DevTools\", \"startTime\": \"2026-12-07T23:00:00.000Z\", \"sourceMaps\": [{\"x\""));
        assert!(!is_applicable(b"{\"metadata\": {\"version\": 24}, \"threads\": []}"));
        assert!(!is_applicable(b"[{\"name\": \"x\"}]"));
        assert!(!is_applicable(b"main;f 1\n"));
    }

    #[test]
    fn nested_intervals_give_each_stack_its_own_time() {
        // The example of FlameGraph's stackcollapse-chrome-tracing.py, and B/E pairs alike.
        let x = r#"{"traceEvents":[{"pid":1,"tid":2,"ts":0,"ph":"X","name":"Foo","dur":50},{"pid":1,"tid":2,"ts":10,"ph":"X","name":"Bar","dur":30}]}"#;
        let (lines, warnings) = folded(x);
        assert_eq!(lines, ["Foo 20000", "Foo;Bar 30000"]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let be = r#"[{"ph":"B","name":"Foo","ts":0,"pid":1,"tid":2},{"ph":"B","name":"Bar","ts":10,"pid":1,"tid":2},{"ph":"E","ts":40,"pid":1,"tid":2},{"ph":"E","ts":50,"pid":1,"tid":2}]"#;
        assert_eq!(folded(be).0, ["Foo 20000", "Foo;Bar 30000"]);
    }

    #[test]
    fn threads_get_a_frame_each_when_there_are_several() {
        let json = r#"[{"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"CrRendererMain"}},
            {"ph":"X","name":"RunTask","ts":1.5,"dur":2.25,"pid":1,"tid":7,"args":{"data":{"x":[1,2]}}},
            {"ph":"X","name":"RunTask","ts":0,"dur":1,"pid":1,"tid":"io"}]"#;
        let (lines, _) = folded(json);
        assert_eq!(lines, ["CrRendererMain (pid 1, tid 7);RunTask 2250", "thread (pid 1, tid io);RunTask 1000"]);
    }

    #[test]
    fn broken_nesting_is_cut_and_said() {
        // Bar ends after Foo; a B never ended; an E with nothing open.
        let json = r#"[{"ph":"X","name":"Foo","ts":0,"dur":10,"pid":1,"tid":1},{"ph":"X","name":"Bar","ts":5,"dur":10,"pid":1,"tid":1},
            {"ph":"E","ts":20,"pid":1,"tid":1},{"ph":"B","name":"Baz","ts":30,"pid":1,"tid":1},{"ph":"X","name":"Qux","ts":30,"dur":5,"pid":1,"tid":1}]"#;
        let (lines, warnings) = folded(json);
        assert_eq!(lines, ["Baz;Qux 5000", "Foo 5000", "Foo;Bar 5000"]);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
    }

    #[test]
    fn devtools_cpu_samples_are_read_as_the_cpuprofile_they_make() {
        // A profile's start, then two chunks (nodes by parent, samples, their time deltas).
        let json = r#"{"traceEvents":[
            {"ph":"P","name":"Profile","id":"0x1","ts":5,"pid":1,"tid":1,"args":{"data":{"startTime":1000}}},
            {"ph":"P","name":"ProfileChunk","id":"0x1","ts":6,"pid":1,"tid":9,"args":{"data":{"cpuProfile":{"nodes":[
                {"id":1,"callFrame":{"functionName":"(root)","url":"","scriptId":0}},
                {"id":2,"parent":1,"callFrame":{"functionName":"main","url":"app.js","lineNumber":0,"scriptId":3}}],
                "samples":[2,2]},"timeDeltas":[10,20]}}},
            {"ph":"P","name":"ProfileChunk","id":"0x1","ts":7,"pid":1,"tid":9,"args":{"data":{"cpuProfile":{"nodes":[
                {"id":3,"parent":2,"callFrame":{"functionName":"work","url":"app.js","lineNumber":4,"scriptId":3}}],
                "samples":[3]},"timeDeltas":[5]}}}]}"#;
        let d = decode(&mut json.as_bytes(), &Config::default()).unwrap();
        let names: Vec<&str> = d.graphs.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["js samples", "js time", "js time order"]);
        let mut samples = crate::store::fold::folded_lines(&d.graphs[0].table);
        samples.sort();
        assert_eq!(samples, ["main app.js:1 2\n", "main app.js:1;work app.js:5 1\n"]);
        // The first sample lasts until the second (20 µs), the second until the third (5 µs),
        // the last until the profile's end, its last sample.
        let time = crate::store::fold::folded_lines(&d.graphs[1].table);
        assert_eq!(time, ["main app.js:1 25\n"]);
    }
}
