//! What a JFR recording's events add up to: which event types are read and into which graph
//! (the plans, by the recorder's settings), the stacks they name resolved through the constant
//! pools, and the graphs, warnings and metadata made from the totals of every chunk.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::reader::{err, Cursor, Error, Header, Pools, Result, Types, Value, CONSTANT_POOL_EVENT, HEADER, METADATA_EVENT};
use crate::config::Limits;
use crate::graph::frames::StackMerger;
use crate::ingest::decode::{Compression, Decoded, Graph};

/// The graphs, in the order they are listed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Cpu,
    CpuTime,
    Wall,
    Native,
    AllocInNewTlab,
    AllocInNewTlabObjects,
    AllocOutsideTlab,
    AllocOutsideTlabObjects,
    AllocSample,
    AllocSampleObjects,
    Live,
    LiveObjects,
    Lock,
    LockContentions,
    Park,
    ParkContentions,
}

const KINDS: [Kind; 16] = [
    Kind::Cpu,
    Kind::CpuTime,
    Kind::Wall,
    Kind::Native,
    Kind::AllocInNewTlab,
    Kind::AllocInNewTlabObjects,
    Kind::AllocOutsideTlab,
    Kind::AllocOutsideTlabObjects,
    Kind::AllocSample,
    Kind::AllocSampleObjects,
    Kind::Live,
    Kind::LiveObjects,
    Kind::Lock,
    Kind::LockContentions,
    Kind::Park,
    Kind::ParkContentions,
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::CpuTime => "cpu_time",
            Kind::Wall => "wall",
            Kind::Native => "native",
            Kind::AllocInNewTlab => "alloc_in_new_tlab",
            Kind::AllocInNewTlabObjects => "alloc_in_new_tlab_objects",
            Kind::AllocOutsideTlab => "alloc_outside_tlab",
            Kind::AllocOutsideTlabObjects => "alloc_outside_tlab_objects",
            Kind::AllocSample => "alloc_sample",
            Kind::AllocSampleObjects => "alloc_sample_objects",
            Kind::Live => "live",
            Kind::LiveObjects => "live_objects",
            Kind::Lock => "lock",
            Kind::LockContentions => "lock_contentions",
            Kind::Park => "park",
            Kind::ParkContentions => "park_contentions",
        }
    }
}

/// What an event of interest adds to which graph.
#[derive(Clone, Copy, Debug)]
enum Measure {
    /// One sample (times the period, applied at the end).
    Sample,
    /// The integer field at this index (`samples`, `tlabSize`, `weight`, …); 1 without it.
    Field(Option<usize>),
    /// A time span field at this index in ticks (`duration`, `samplingPeriod`), converted to
    /// nanoseconds.
    Duration(usize),
}

/// What else an event adds, besides its measure to its own graph.
#[derive(Clone, Copy, Debug)]
enum Also {
    Nothing,
    /// One to this graph: the count of events beside their sum (objects beside bytes,
    /// contentions beside the time waited).
    Count(Kind),
    /// Its measure to `cpu` too, when the thread state in its `state` field (at this index;
    /// a name from the constant pools) is `STATE_RUNNABLE`: an async-profiler
    /// `profiler.WallClockSample` in wall mode, as Pyroscope reads one.
    CpuWhenRunnable(Option<usize>),
}

/// Which of async-profiler's samplers wrote a recording's `jdk.ExecutionSample` events, by its
/// settings (`jdk.ActiveSetting`): the `event` of `jdk.ActiveRecording` and the `wall` interval
/// of `jdk.ExecutionSample`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Samplers {
    /// A CPU sampler alone: the JDK's, or async-profiler's `cpu`, `itimer`, `ctimer`, perf
    /// events (`cycles`, …) without `wall`.
    Cpu,
    /// async-profiler's wall-clock sampler alone: `event=wall`, or `wall=…` with no event.
    Wall,
    /// Both (`event=cpu,wall=…`, `asprof -e cpu --wall 10ms`), as async-profiler 2.10 to 3.0
    /// record them, and later ones with `nobatch` (otherwise they write the wall-clock
    /// samples as `profiler.WallClockSample`): the wall-clock sampler's samples carry the
    /// thread's state, `STATE_RUNNABLE` or `STATE_SLEEPING`, the CPU sampler's
    /// `STATE_DEFAULT`.
    CpuAndWall,
}

/// Where a `jdk.ExecutionSample` counts, `(cpu, wall)`, by the samplers of its recording,
/// whether the recording's event is a count of something else than time (`cycles`, …: the
/// `cpu` graph is then named after it), and its thread state: `None` when the event type has
/// no `state` field, `Some(None)` when its state is not in the constant pools.
///
/// As Pyroscope reads JFR (grafana/jfr-parser, `pprof/parser.go`): a sample is CPU time when
/// its thread state is known and is not `STATE_SLEEPING`, whatever the sampler; and in wall
/// mode every sample is wall time. Pyroscope makes no wall graph of a recording of CPU and
/// wall together; here the wall-clock sampler's samples, told apart by their state, are one.
fn execution(samplers: Samplers, custom: bool, state: Option<Option<&str>>) -> (bool, bool) {
    let wall = match samplers {
        Samplers::Cpu => false,
        Samplers::Wall => true,
        Samplers::CpuAndWall => matches!(state, Some(Some("STATE_RUNNABLE" | "STATE_SLEEPING"))),
    };
    let cpu = match state {
        // No state recorded: a CPU sampler's sample, unless no CPU sampler ran.
        None => samplers != Samplers::Wall,
        Some(None) => false,
        Some(Some(s)) => s != "STATE_SLEEPING",
    };
    // A count of events (`cycles`, …) holds its own sampler's samples only.
    (cpu && !(custom && wall), wall)
}

/// How an event type of the current chunk is read.
#[derive(Clone, Copy, Debug)]
enum Plan {
    /// Skipped by its size.
    Skip,
    /// Adds to a graph: the index of its `stackTrace` field and its measure, and to another
    /// graph as `also` says.
    Stack { kind: Kind, stack: Option<usize>, measure: Measure, also: Also },
    /// `jdk.ExecutionSample`: one sample to `cpu`, `wall` or both, as [`execution`] says by
    /// its `state` field (at this index).
    Execution { stack: Option<usize>, state: Option<usize>, samplers: Samplers, custom: bool },
    /// `jdk.ActiveSetting`: the indices of `id`, `name` and `value`.
    Setting { id: usize, name: usize, value: usize },
    /// `jdk.CPUTimeSamplesLost`: the index of `lostSamples`.
    Lost { count: usize },
}

/// Parses a JDK duration setting: `10 ms`, `20 ms`, `1 s`, `500 us`, `100 ns`.
fn setting_nanos(value: &str) -> Option<u64> {
    let value = value.trim();
    let split = value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: u64 = number.parse().ok()?;
    let per = match unit.trim() {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    };
    number.checked_mul(per)
}

/// What the whole recording adds up to, over its chunks.
pub(super) struct Totals {
    /// Frame names, interned.
    names: Vec<Box<str>>,
    name_ids: FxHashMap<Box<str>, u32>,
    /// Distinct stacks (frame-name ids, root first), interned.
    stacks: Vec<Box<[u32]>>,
    stack_ids: FxHashMap<Box<[u32]>, u32>,
    /// Per graph, its sum per stack id.
    sums: [Vec<u64>; KINDS.len()],
    /// Events per graph.
    events: [u64; KINDS.len()],
    /// `(event type, setting)` to value, from `jdk.ActiveSetting`, first value kept.
    settings: BTreeMap<(String, String), String>,
    truncated: u64,
    missing: u64,
    /// Samples the CPU-time profiler lost (`jdk.CPUTimeSamplesLost`).
    lost: u64,
    /// Samples whose thread state is not in the constant pools (so not counted as running).
    unknown_states: u64,
}

impl Totals {
    /// Nothing added up yet.
    pub(super) fn new() -> Totals {
        Totals {
            names: Vec::new(),
            name_ids: FxHashMap::default(),
            stacks: Vec::new(),
            stack_ids: FxHashMap::default(),
            sums: Default::default(),
            events: [0; KINDS.len()],
            settings: BTreeMap::new(),
            truncated: 0,
            missing: 0,
            lost: 0,
            unknown_states: 0,
        }
    }

    fn name(&mut self, name: String) -> u32 {
        if let Some(&id) = self.name_ids.get(name.as_str()) {
            return id;
        }
        let id = self.names.len() as u32;
        let name: Box<str> = name.into();
        self.names.push(name.clone());
        self.name_ids.insert(name, id);
        id
    }

    fn stack(&mut self, frames: Vec<u32>) -> u32 {
        if let Some(&id) = self.stack_ids.get(frames.as_slice()) {
            return id;
        }
        let id = self.stacks.len() as u32;
        let frames: Box<[u32]> = frames.into();
        self.stacks.push(frames.clone());
        self.stack_ids.insert(frames, id);
        id
    }

    fn add(&mut self, kind: Kind, stack: u32, value: u64, at: usize) -> Result<()> {
        let sums = &mut self.sums[kind as usize];
        if sums.len() <= stack as usize {
            sums.resize(stack as usize + 1, 0);
        }
        let sum = &mut sums[stack as usize];
        *sum = sum.checked_add(value).ok_or(Error { at, what: format!("the {} values of one stack add up past 2^64", kind.name()) })?;
        self.events[kind as usize] += 1;
        Ok(())
    }
}


/// How each event type of a chunk is read.
fn plans(types: &Types, settings: &BTreeMap<(String, String), String>) -> FxHashMap<i64, Plan> {
    let event = settings.get(&("jdk.ActiveRecording".to_string(), "event".to_string())).map(String::as_str);
    let wall = settings.contains_key(&("jdk.ExecutionSample".to_string(), "wall".to_string()));
    let samplers = match event {
        Some("wall") => Samplers::Wall,
        None if wall => Samplers::Wall,
        Some(_) if wall => Samplers::CpuAndWall,
        _ => Samplers::Cpu,
    };
    let custom = event.is_some_and(|e| !matches!(e, "cpu" | "itimer" | "ctimer" | "wall"));
    let mut plans = FxHashMap::default();
    for (&id, &i) in &types.by_id {
        let c = &types.classes[i];
        let f = |name: &str| c.field(name);
        let stack = f("stackTrace");
        let plan = match c.name.as_str() {
            "jdk.ExecutionSample" => Plan::Execution { stack, state: f("state"), samplers, custom },
            "jdk.NativeMethodSample" => Plan::Stack { kind: Kind::Native, stack, measure: Measure::Sample, also: Also::Nothing },
            "jdk.CPUTimeSample" => match f("samplingPeriod") {
                Some(p) => Plan::Stack { kind: Kind::CpuTime, stack, measure: Measure::Duration(p), also: Also::Nothing },
                None => Plan::Skip,
            },
            "jdk.CPUTimeSamplesLost" => match f("lostSamples") {
                Some(count) => Plan::Lost { count },
                None => Plan::Skip,
            },
            "profiler.WallClockSample" => {
                let also = if event == Some("wall") { Also::CpuWhenRunnable(f("state")) } else { Also::Nothing };
                Plan::Stack { kind: Kind::Wall, stack, measure: Measure::Field(f("samples")), also }
            }
            "jdk.ObjectAllocationInNewTLAB" => Plan::Stack {
                kind: Kind::AllocInNewTlab,
                stack,
                measure: Measure::Field(f("tlabSize")),
                also: Also::Count(Kind::AllocInNewTlabObjects),
            },
            "jdk.ObjectAllocationOutsideTLAB" => {
                Plan::Stack {
                    kind: Kind::AllocOutsideTlab,
                    stack,
                    measure: Measure::Field(f("allocationSize")),
                    also: Also::Count(Kind::AllocOutsideTlabObjects),
                }
            }
            "jdk.ObjectAllocationSample" => Plan::Stack {
                kind: Kind::AllocSample,
                stack,
                measure: Measure::Field(f("weight")),
                also: Also::Count(Kind::AllocSampleObjects),
            },
            "profiler.LiveObject" => Plan::Stack {
                kind: Kind::Live,
                stack,
                measure: Measure::Field(f("allocationSize")),
                also: Also::Count(Kind::LiveObjects),
            },
            "jdk.JavaMonitorEnter" | "jdk.ThreadPark" => {
                let (kind, count) =
                    if c.name == "jdk.ThreadPark" { (Kind::Park, Kind::ParkContentions) } else { (Kind::Lock, Kind::LockContentions) };
                match f("duration") {
                    Some(d) => Plan::Stack { kind, stack, measure: Measure::Duration(d), also: Also::Count(count) },
                    None => Plan::Skip,
                }
            }
            "jdk.ActiveSetting" => match (f("id"), f("name"), f("value")) {
                (Some(id), Some(name), Some(value)) => Plan::Setting { id, name, value },
                _ => Plan::Skip,
            },
            _ => Plan::Skip,
        };
        if !matches!(plan, Plan::Skip) {
            plans.insert(id, plan);
        }
    }
    plans
}

/// Reads the events of one chunk into the totals.
pub(super) fn chunk(c: &mut Cursor, h: &Header, types: &Types, pools: &Pools, totals: &mut Totals) -> Result<()> {
    let mut plans = plans(types, &totals.settings);
    // Frame names and stacks of this chunk's pools, resolved once.
    let mut method_names: FxHashMap<i64, u32> = FxHashMap::default();
    let mut stack_ids: FxHashMap<i64, u32> = FxHashMap::default();
    // As the JDK converts ticks (RecordedEvent.getDuration): divided by ticks per nanosecond.
    let ticks_per_nano = if h.ticks_per_second > 0 { h.ticks_per_second as f64 / 1e9 } else { 1.0 };
    let mut fields: Vec<Value> = Vec::new();
    let mut at = h.start + HEADER;
    while at < h.end {
        c.pos = at;
        c.end = h.end;
        let size = c.int()?;
        if size <= 0 || size as usize > h.end - at {
            return err(at, format!("an event's size {size} goes past the end of its chunk (or is not positive)"));
        }
        c.end = at + size as usize;
        let type_id = c.long()?;
        let next = at + size as usize;
        let plan = match type_id {
            METADATA_EVENT | CONSTANT_POOL_EVENT => Plan::Skip,
            id => match plans.get(&id) {
                Some(&p) => p,
                None if types.by_id.contains_key(&id) => Plan::Skip,
                None => return err(at, format!("an event of type id {id}, which the metadata does not describe")),
            },
        };
        if matches!(plan, Plan::Skip) {
            at = next;
            continue;
        }
        let class = &types.classes[types.by_id[&type_id]];
        fields.clear();
        for f in &class.fields {
            fields.push(c.field(types, f, 1)?);
        }
        match plan {
            Plan::Skip => {}
            Plan::Setting { id, name, value } => {
                let event = fields[id].int().and_then(|id| types.by_id.get(&id)).map(|&i| types.classes[i].name.clone());
                let name = match &fields[name] {
                    Value::Str(s) => pools.string(s),
                    _ => None,
                };
                let value = match &fields[value] {
                    Value::Str(s) => pools.string(s),
                    _ => None,
                };
                if let (Some(event), Some(name), Some(value)) = (event, name, value) {
                    let new = !totals.settings.contains_key(&(event.clone(), name.clone()));
                    // The settings that say which samplers ran, and so how samples are read.
                    let samplers = matches!((event.as_str(), name.as_str()), ("jdk.ActiveRecording", "event") | ("jdk.ExecutionSample", "wall"));
                    totals.settings.entry((event, name)).or_insert(value);
                    if new && samplers {
                        plans = self::plans(types, &totals.settings);
                    }
                }
            }
            Plan::Lost { count } => {
                totals.lost = totals.lost.saturating_add(fields[count].int().unwrap_or(0).max(0) as u64);
            }
            Plan::Stack { kind, stack, measure, also } => {
                let value = match measure {
                    Measure::Sample => 1,
                    Measure::Field(None) => 1,
                    Measure::Field(Some(i)) => fields[i].int().unwrap_or(0).max(0) as u64,
                    Measure::Duration(i) => (fields[i].int().unwrap_or(0).max(0) as f64 / ticks_per_nano) as u64,
                };
                let id = event_stack(&fields, stack, pools, &mut stack_ids, &mut method_names, totals);
                totals.add(kind, id, value, at)?;
                match also {
                    Also::Nothing => {}
                    Also::Count(count) => totals.add(count, id, 1, at)?,
                    Also::CpuWhenRunnable(state) => {
                        let state = state.map(|i| thread_state(&fields[i], pools));
                        if state == Some(None) {
                            totals.unknown_states += 1;
                        }
                        if state == Some(Some("STATE_RUNNABLE")) {
                            totals.add(Kind::Cpu, id, value, at)?;
                        }
                    }
                }
            }
            Plan::Execution { stack, state, samplers, custom } => {
                let id = event_stack(&fields, stack, pools, &mut stack_ids, &mut method_names, totals);
                let state = state.map(|i| thread_state(&fields[i], pools));
                if state == Some(None) {
                    totals.unknown_states += 1;
                }
                let (cpu, wall) = execution(samplers, custom, state);
                if cpu {
                    totals.add(Kind::Cpu, id, 1, at)?;
                }
                if wall {
                    totals.add(Kind::Wall, id, 1, at)?;
                }
            }
        }
        at = next;
    }
    Ok(())
}

/// The interned stack of an event whose `stackTrace` field is at index `stack` of `fields`,
/// each of the chunk's stack traces resolved once.
fn event_stack(
    fields: &[Value],
    stack: Option<usize>,
    pools: &Pools,
    stack_ids: &mut FxHashMap<i64, u32>,
    method_names: &mut FxHashMap<i64, u32>,
    totals: &mut Totals,
) -> u32 {
    let trace = stack.and_then(|i| fields[i].int()).unwrap_or(0);
    if let Some(&id) = stack_ids.get(&trace) {
        return id;
    }
    let id = resolve(trace, pools, method_names, totals);
    stack_ids.insert(trace, id);
    id
}

/// The name of the thread state a `state` field refers to (`STATE_RUNNABLE`, …), if the
/// constant pools hold it.
fn thread_state<'p>(field: &Value, pools: &'p Pools) -> Option<&'p str> {
    field.int().and_then(|s| pools.thread_states.get(&s)).map(String::as_str)
}

/// The interned stack, root first, of stack trace `trace` of the chunk's pools.
fn resolve(trace: i64, pools: &Pools, method_names: &mut FxHashMap<i64, u32>, totals: &mut Totals) -> u32 {
    let Some((truncated, methods)) = pools.stacks.get(&trace) else {
        if trace != 0 {
            totals.missing += 1;
        }
        let unknown = totals.name("[unknown]".into());
        return totals.stack(vec![unknown]);
    };
    if *truncated {
        totals.truncated += 1;
    }
    let mut frames = Vec::with_capacity(methods.len());
    for &m in methods.iter().rev() {
        let id = match method_names.get(&m) {
            Some(&id) => id,
            None => {
                let name = match pools.methods.get(&m) {
                    Some(&(class, name)) => {
                        let method = pools.symbol(name).unwrap_or_else(|| "[unknown]".into());
                        match pools.classes.get(&class).and_then(|&s| pools.symbol(s)) {
                            Some(class) if !class.is_empty() => format!("{class}.{method}"),
                            _ => method,
                        }
                    }
                    None => {
                        totals.missing += 1;
                        "[unknown]".into()
                    }
                };
                let id = totals.name(name);
                method_names.insert(m, id);
                id
            }
        };
        frames.push(id);
    }
    if frames.is_empty() {
        frames.push(totals.name("[unknown]".into()));
    }
    totals.stack(frames)
}

pub(super) fn finish(totals: Totals, first_start: Option<i64>, duration: i64, chunks: usize, limits: &Limits) -> Result<Decoded> {
    let setting = |event: &str, name: &str| totals.settings.get(&(event.to_string(), name.to_string())).map(String::as_str);
    let event = setting("jdk.ActiveRecording", "event");
    let mut warnings = Vec::new();
    let mut metadata = BTreeMap::new();
    let interval = setting("jdk.ExecutionSample", "interval").and_then(|v| v.trim().parse::<u64>().ok());
    // async-profiler's wall-clock interval beside another event (`wall=…`).
    let wall = setting("jdk.ExecutionSample", "wall");
    let mut graphs = Vec::new();
    for kind in KINDS {
        let sums = &totals.sums[kind as usize];
        if totals.events[kind as usize] == 0 {
            continue;
        }
        // The graph's name, unit and what each sample is worth.
        let (name, unit, multiplier): (String, &str, u64) = match kind {
            Kind::Cpu | Kind::Wall | Kind::Native => {
                let period = match (kind, event) {
                    (Kind::Native, _) => setting("jdk.NativeMethodSample", "period").and_then(setting_nanos),
                    (Kind::Wall, Some("wall")) => interval,
                    (Kind::Wall, _) => wall.and_then(|v| v.trim().parse().ok()),
                    // `wall=…` with no event: the wall-clock sampler's running samples.
                    (_, None) if wall.is_some() => wall.and_then(|v| v.trim().parse().ok()),
                    (_, None) => setting("jdk.ExecutionSample", "period").and_then(setting_nanos),
                    (_, Some(_)) => interval,
                };
                let custom = match (kind, event) {
                    (Kind::Cpu, Some(e)) if !matches!(e, "cpu" | "itimer" | "ctimer" | "wall") => Some(e),
                    _ => None,
                };
                match (custom, period) {
                    (Some(e), Some(p)) if p > 0 => (
                        if KINDS.iter().any(|k| k.name() == e) { format!("{e}-events") } else { e.to_string() },
                        "count",
                        p,
                    ),
                    (None, Some(p)) if p > 0 => {
                        metadata.insert(format!("{} period", kind.name()), crate::units::format_value(p.into(), "nanoseconds"));
                        (kind.name().to_string(), "nanoseconds", p)
                    }
                    (_, _) => {
                        warnings.push(format!(
                            "JFR: the recording does not say the sampling period of its {} samples: the graph counts samples",
                            kind.name()
                        ));
                        (custom.unwrap_or(kind.name()).to_string(), "samples", 1)
                    }
                }
            }
            Kind::AllocInNewTlab | Kind::AllocOutsideTlab | Kind::AllocSample | Kind::Live => {
                (kind.name().to_string(), "bytes", 1)
            }
            Kind::AllocInNewTlabObjects
            | Kind::AllocOutsideTlabObjects
            | Kind::AllocSampleObjects
            | Kind::LiveObjects
            | Kind::LockContentions
            | Kind::ParkContentions => (kind.name().to_string(), "count", 1),
            Kind::Lock | Kind::Park => (kind.name().to_string(), "nanoseconds", 1),
            // Each sample carries its own period: no setting to read or guess.
            Kind::CpuTime => {
                if let Some(throttle) = setting("jdk.CPUTimeSample", "throttle") {
                    metadata.insert("cpu_time throttle".into(), throttle.to_string());
                }
                (kind.name().to_string(), "nanoseconds", 1)
            }
        };
        let mut merger = StackMerger::new(false, limits.max_depth);
        let mut names: Vec<&str> = Vec::new();
        for (stack, &sum) in sums.iter().enumerate() {
            if sum == 0 {
                continue;
            }
            let value = sum.checked_mul(multiplier).ok_or(Error {
                at: 0,
                what: format!("the {name} values of one stack add up past 2^64"),
            })?;
            names.clear();
            names.extend(totals.stacks[stack].iter().map(|&n| &*totals.names[n as usize]));
            merger.add_names(&names, value, 0).map_err(|e| Error { at: 0, what: format!("{name}: {e}") })?;
        }
        let table = merger.finish().map_err(|e| Error { at: 0, what: format!("{name}: {e}") })?;
        graphs.push(Graph { name, unit: unit.to_string(), table, timeline: false });
    }
    if graphs.is_empty() {
        return err(
            0,
            "the recording has none of the events with stacks that are read (jdk.ExecutionSample, jdk.CPUTimeSample, jdk.NativeMethodSample, \
             jdk.ObjectAllocationInNewTLAB, jdk.ObjectAllocationOutsideTLAB, jdk.ObjectAllocationSample, jdk.JavaMonitorEnter, \
             jdk.ThreadPark, async-profiler's profiler.WallClockSample and profiler.LiveObject); the file ends",
        );
    }
    if totals.truncated > 0 {
        warnings.push(format!(
            "JFR: {} stack trace{} cut at the recording's stack depth (-XX:FlightRecorderOptions:stackdepth=…): their outermost frames are missing",
            totals.truncated,
            if totals.truncated == 1 { " was" } else { "s were" }
        ));
    }
    if totals.lost > 0 {
        warnings.push(format!(
            "JFR: the CPU-time profiler lost {} sample{} (jdk.CPUTimeSamplesLost): the cpu_time graph misses their time",
            totals.lost,
            if totals.lost == 1 { "" } else { "s" }
        ));
    }
    if totals.unknown_states > 0 {
        warnings.push(format!(
            "JFR: {} sample{} a thread state not in the constant pools: not counted as running (cpu)",
            totals.unknown_states,
            if totals.unknown_states == 1 { " names" } else { "s name" }
        ));
    }
    if totals.missing > 0 {
        warnings.push(format!(
            "JFR: {} stack trace{} or method{} not in the constant pools, shown as [unknown]",
            totals.missing,
            if totals.missing == 1 { "" } else { "s" },
            if totals.missing == 1 { "" } else { "s" }
        ));
    }
    if let Some(start) = first_start.filter(|&s| s > 0) {
        let time = jiff::Timestamp::from_second(start.div_euclid(1_000_000_000)).map_err(|e| Error { at: 32, what: e.to_string() })?;
        metadata.insert("time".into(), time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    }
    if duration > 0 {
        metadata.insert("duration".into(), crate::units::format_value(duration.into(), "nanoseconds"));
    }
    if chunks > 1 {
        metadata.insert("chunks".into(), chunks.to_string());
    }
    if let Some(version) = setting("jdk.ActiveRecording", "version") {
        metadata.insert("recorder".into(), format!("async-profiler {version}"));
    }
    if let Some(e) = event {
        metadata.insert("event".into(), e.to_string());
    }
    Ok(Decoded { format: "jfr", compression: Compression::None, graphs, warnings, metadata })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jdk_duration_settings_are_read_in_nanoseconds() {
        assert_eq!(setting_nanos("10 ms"), Some(10_000_000));
        assert_eq!(setting_nanos("20ms"), Some(20_000_000));
        assert_eq!(setting_nanos("1 s"), Some(1_000_000_000));
        assert_eq!(setting_nanos("500 us"), Some(500_000));
        assert_eq!(setting_nanos("everyChunk"), None);
        assert_eq!(setting_nanos("10 fortnights"), None);
        assert_eq!(setting_nanos("99999999999 d"), None, "overflow is no period");
    }

    #[test]
    fn execution_samples_are_cpu_when_running_and_wall_when_the_wall_clock_sampler_took_them() {
        let (runnable, sleeping, default) = (Some(Some("STATE_RUNNABLE")), Some(Some("STATE_SLEEPING")), Some(Some("STATE_DEFAULT")));
        // The JDK, or async-profiler's cpu alone: running samples are CPU time, no wall.
        assert_eq!(execution(Samplers::Cpu, false, runnable), (true, false));
        assert_eq!(execution(Samplers::Cpu, false, default), (true, false));
        assert_eq!(execution(Samplers::Cpu, false, sleeping), (false, false));
        assert_eq!(execution(Samplers::Cpu, false, None), (true, false), "no state field: a CPU sample");
        assert_eq!(execution(Samplers::Cpu, false, Some(None)), (false, false), "a state not in the pools: not running, as Pyroscope");
        // Wall mode: every sample is wall time, the running ones CPU time too.
        assert_eq!(execution(Samplers::Wall, false, runnable), (true, true));
        assert_eq!(execution(Samplers::Wall, false, sleeping), (false, true));
        assert_eq!(execution(Samplers::Wall, false, None), (false, true));
        // CPU and wall together: the wall-clock sampler's samples carry a state, the CPU
        // sampler's STATE_DEFAULT; a running wall-clock sample is CPU time too, as Pyroscope.
        assert_eq!(execution(Samplers::CpuAndWall, false, default), (true, false));
        assert_eq!(execution(Samplers::CpuAndWall, false, sleeping), (false, true));
        assert_eq!(execution(Samplers::CpuAndWall, false, runnable), (true, true));
        // A count of cycles (or another event) keeps to its own sampler's samples.
        assert_eq!(execution(Samplers::CpuAndWall, true, runnable), (false, true));
        assert_eq!(execution(Samplers::CpuAndWall, true, default), (true, false));
    }

}
