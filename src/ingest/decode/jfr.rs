//! Java Flight Recorder recordings (`.jfr`, and `.jfr.gz` once the caller has undone the
//! compression), as the JDK (`-XX:StartFlightRecording`, `jcmd JFR.dump`) and async-profiler
//! (`-o jfr`) write them: JFR format 1.x and 2.x, one or more chunks.
//!
//! Each event type that carries a stack becomes a graph of its own, named and measured as
//! Pyroscope names and measures them (only the graphs that have events are made, in this
//! order):
//! - `cpu` (nanoseconds): `jdk.ExecutionSample`, each sample worth the sampling period, as
//!   Pyroscope counts them: only the samples whose thread state is known and is not
//!   `STATE_SLEEPING` (see [`execution`]). The period is the recording's own setting: the
//!   JDK's `period` of `jdk.ExecutionSample` (`10 ms`), or async-profiler's `interval` (in
//!   nanoseconds; its `wall` interval when `wall` ran without an event). When
//!   async-profiler's event is another (`cycles`, …) the graph is named after it and counts
//!   events (samples × interval). A recording without the setting counts samples (unit
//!   `samples`), with a warning: no period is guessed.
//! - `cpu_time` (nanoseconds): `jdk.CPUTimeSample`, the samples of JDK 25's CPU-time profiler
//!   (`jdk.CPUTimeSample#enabled=true`), each worth its own `samplingPeriod`: the CPU time its
//!   thread used since its previous sample. A sample whose stack could not be walked (`failed`)
//!   counts under `[unknown]`, so the graph's total stays the CPU time sampled. Samples the
//!   profiler reports lost (`jdk.CPUTimeSamplesLost`) are said in a warning.
//! - `wall` (nanoseconds): async-profiler's `profiler.WallClockSample` (its `samples` times the
//!   `wall` interval), and the `jdk.ExecutionSample` events its wall-clock sampler wrote: all
//!   of them in wall mode (`event=wall`, or `wall=…` alone), and with CPU and wall together
//!   (`event=cpu,wall=…` before async-profiler 4.0) those with the state the wall-clock
//!   sampler records, `STATE_RUNNABLE` or `STATE_SLEEPING` (the CPU sampler's are
//!   `STATE_DEFAULT`). In wall mode (`event=wall`) a `profiler.WallClockSample` whose thread
//!   state is `STATE_RUNNABLE` adds to `cpu` as well, as Pyroscope counts it.
//! - `native` (nanoseconds): `jdk.NativeMethodSample`, the JDK's samples of threads in native
//!   code (sleeping in a system call, blocked in I/O), each worth its own `period`. The JDK has
//!   no wall-clock sampler: `cpu` and `native` together are what it saw of running threads.
//! - `alloc_in_new_tlab` (bytes): `jdk.ObjectAllocationInNewTLAB`, the size of each new TLAB.
//! - `alloc_outside_tlab` (bytes): `jdk.ObjectAllocationOutsideTLAB`, each allocation's size.
//! - `alloc_sample` (bytes): `jdk.ObjectAllocationSample` (JDK 16+), each sample's `weight`.
//! - `live` (bytes): async-profiler's `profiler.LiveObject`, each object's size.
//! - `lock` (nanoseconds): `jdk.JavaMonitorEnter`, time spent waiting to enter a monitor.
//! - `park` (nanoseconds): `jdk.ThreadPark`, time spent parked (`java.util.concurrent` locks).
//!
//! Each allocation, live-object, monitor and park graph has a count beside it (unit `count`),
//! as Pyroscope makes both values of these events: `alloc_in_new_tlab_objects`,
//! `alloc_outside_tlab_objects`, `alloc_sample_objects`, `live_objects`, `lock_contentions`,
//! `park_contentions`.
//!
//! Frames are named as async-profiler names them: the class name as the recording stores it
//! (slashes, `java/lang/Thread`), a dot, the method name: `java/lang/Thread.run`. A frame whose
//! method has no class (async-profiler's native and kernel frames) is named by its method
//! alone. Line numbers, bytecode indices and frame types (interpreted, JIT-compiled, inlined)
//! are not part of the name, so that one method is one frame however it ran. A stack that the
//! recorder cut at its depth (`stackdepth`, 64 by default) keeps the frames it has, and the
//! number of such stacks is reported as a warning; an event without a stack is counted under
//! one frame, `[unknown]`.
//!
//! The recording's start (`time`), its `duration`, each sampled graph's period and the
//! recorder (async-profiler's version, when it says) become the profile's metadata.
//!
//! The format is read by this module (see the commit that added it and Cargo.toml for why no
//! crate is used): the chunk header, the metadata event (the type descriptions every value is
//! read by), the constant pools (stack traces, methods, classes, symbols) and the events. The
//! file is held in memory (JFR is read by offsets); every size, count, offset and string length
//! that the file states is checked against the bytes that are there before it is used, so a
//! truncated or corrupt file is an error that names the byte where reading failed, never a
//! large allocation. Nesting of types is bounded ([`MAX_NESTING`]), the constant pools' chain
//! may not loop, and the number of values read is bounded by the file's size ([`WORK_PER_BYTE`]).

use std::collections::BTreeMap;
use std::io::BufRead;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Compression, Decoded, Graph};
use crate::config::Limits;
use crate::graph::frames::StackMerger;

/// The magic bytes that start every chunk.
const MAGIC: &[u8; 4] = b"FLR\0";
/// Bytes of a chunk header.
const HEADER: usize = 68;
/// Deepest nesting of types in a value (the JDK's types nest 3 or 4 deep).
const MAX_NESTING: u32 = 32;
/// Values that may be read per byte of the file (a type with no fields takes no bytes, so an
/// array of them could otherwise be long without the file being large).
const WORK_PER_BYTE: u64 = 4;
/// Event type ids of the metadata and constant-pool events.
const METADATA_EVENT: i64 = 0;
const CONSTANT_POOL_EVENT: i64 = 1;

/// Whether the decompressed content starts like a JFR chunk.
pub fn is_applicable(sniff: &[u8]) -> bool {
    sniff.starts_with(MAGIC)
}

/// Reads a whole recording and makes one graph per event type found.
pub fn decode(reader: &mut dyn BufRead, limits: &Limits) -> std::result::Result<Decoded, String> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    decode_bytes(&bytes, limits)
}

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

/// A reading error: what went wrong and at which byte of the (decompressed) file.
struct Error {
    at: usize,
    what: String,
}

type Result<T> = std::result::Result<T, Error>;

fn err<T>(at: usize, what: impl Into<String>) -> Result<T> {
    Err(Error { at, what: what.into() })
}

/// A string value: absent, inline, or a reference into the `java.lang.String` pool.
#[derive(Clone, Debug)]
enum Str {
    Null,
    Inline(String),
    Pool(i64),
}

/// A value read by its type.
#[derive(Clone, Debug)]
enum Value {
    /// Every integer type, `char` and `boolean`.
    Int(i64),
    /// `float` and `double`, read past (no graph needs one).
    Float,
    Str(Str),
    /// A constant-pool reference (a field marked `constantPool`).
    Ref(i64),
    Object(Vec<Value>),
    Array(Vec<Value>),
}

impl Value {
    fn int(&self) -> Option<i64> {
        match *self {
            Value::Int(v) | Value::Ref(v) => Some(v),
            _ => None,
        }
    }
}

/// Primitive types, by their names in the metadata.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Primitive {
    Int,
    Long,
    Short,
    Byte,
    Char,
    Boolean,
    Float,
    Double,
    String,
}

fn primitive(name: &str) -> Option<Primitive> {
    Some(match name {
        "int" => Primitive::Int,
        "long" => Primitive::Long,
        "short" => Primitive::Short,
        "byte" => Primitive::Byte,
        "char" => Primitive::Char,
        "boolean" => Primitive::Boolean,
        "float" => Primitive::Float,
        "double" => Primitive::Double,
        "java.lang.String" => Primitive::String,
        _ => return None,
    })
}

/// A field of a type.
#[derive(Debug)]
struct Field {
    name: String,
    /// Index of its type in [`Types::classes`], or `None` when the id names no type (an error
    /// only if a value of it is read).
    class: Option<usize>,
    type_id: i64,
    constant_pool: bool,
    array: bool,
}

/// A type of the chunk's metadata.
#[derive(Debug)]
struct Class {
    name: String,
    primitive: Option<Primitive>,
    fields: Vec<Field>,
}

impl Class {
    fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

/// The types of one chunk.
#[derive(Debug, Default)]
struct Types {
    classes: Vec<Class>,
    by_id: FxHashMap<i64, usize>,
}

impl Types {
    fn by_name(&self, name: &str) -> Option<(i64, usize)> {
        self.by_id.iter().find(|(_, &i)| self.classes[i].name == name).map(|(&id, &i)| (id, i))
    }
}

/// A position in the file, with the end of what may be read from it.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    compressed: bool,
    /// Values read so far, and how many may be.
    work: &'a mut u64,
    max_work: u64,
}

impl<'a> Cursor<'a> {
    /// The bytes left before the end of the part being read (none when the cursor is past it).
    fn left(&self) -> usize {
        self.end.min(self.data.len()).saturating_sub(self.pos)
    }

    fn need(&self, n: usize) -> Result<()> {
        // `pos` can be past `end`: an event's size is read before the event is bounded by it,
        // and a size smaller than its own varint ends the event behind the cursor (found by
        // coverage-guided fuzzing: the subtraction wrapped and the read went past the file).
        let left = self.left();
        if n > left {
            return err(self.pos, format!("{n} bytes needed, {left} left in this part of the recording"));
        }
        Ok(())
    }

    fn u8(&mut self) -> Result<u8> {
        self.need(1)?;
        let b = self.data[self.pos];
        self.pos += 1;
        Ok(b)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.need(N)?;
        let mut b = [0; N];
        b.copy_from_slice(&self.data[self.pos..self.pos + N]);
        self.pos += N;
        Ok(b)
    }

    /// A LEB128 integer of up to 9 bytes, the ninth giving all its 8 bits (JFR's compressed
    /// integers; not zigzag).
    fn varint(&mut self) -> Result<i64> {
        let mut value: u64 = 0;
        for i in 0..8 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value as i64);
            }
        }
        Ok((value | u64::from(self.u8()?) << 56) as i64)
    }

    fn int(&mut self) -> Result<i64> {
        if self.compressed {
            Ok(self.varint()? as i32 as i64)
        } else {
            Ok(i32::from_be_bytes(self.fixed()?) as i64)
        }
    }

    fn long(&mut self) -> Result<i64> {
        if self.compressed {
            self.varint()
        } else {
            Ok(i64::from_be_bytes(self.fixed()?))
        }
    }

    fn short(&mut self) -> Result<i64> {
        if self.compressed {
            Ok(self.varint()? as i16 as i64)
        } else {
            Ok(i16::from_be_bytes(self.fixed()?) as i64)
        }
    }

    /// A count or length, which must be at most the bytes left (each item takes one at least,
    /// except items of a type without fields, which the work bound covers).
    fn count(&mut self) -> Result<usize> {
        let at = self.pos;
        let n = self.int()?;
        let left = self.left();
        if n < 0 || n as usize > left {
            return err(at, format!("a count of {n}, but {left} bytes are left"));
        }
        Ok(n as usize)
    }

    fn string(&mut self) -> Result<Str> {
        let at = self.pos;
        match self.u8()? {
            0 => Ok(Str::Null),
            1 => Ok(Str::Inline(String::new())),
            2 => Ok(Str::Pool(self.long()?)),
            3 => {
                let n = self.count()?;
                let s = String::from_utf8_lossy(&self.data[self.pos..self.pos + n]).into_owned();
                self.pos += n;
                Ok(Str::Inline(s))
            }
            4 => {
                let n = self.count()?;
                let mut units = Vec::with_capacity(n);
                for _ in 0..n {
                    units.push(self.int()? as u16);
                }
                Ok(Str::Inline(String::from_utf16_lossy(&units)))
            }
            5 => {
                let n = self.count()?;
                let s = self.data[self.pos..self.pos + n].iter().map(|&b| char::from(b)).collect();
                self.pos += n;
                Ok(Str::Inline(s))
            }
            e => err(at, format!("unknown string encoding {e}")),
        }
    }

    fn tick(&mut self) -> Result<()> {
        *self.work += 1;
        if *self.work > self.max_work {
            return err(self.pos, format!("more than {} values for a file of this size: refused as corrupt", self.max_work));
        }
        Ok(())
    }

    /// Reads a value of type `class` (a field's own value when `constant_pool` is false).
    fn value(&mut self, types: &Types, class: usize, depth: u32) -> Result<Value> {
        self.tick()?;
        let c = &types.classes[class];
        if let Some(p) = c.primitive {
            return self.primitive(p);
        }
        if depth >= MAX_NESTING {
            return err(self.pos, format!("types nest deeper than {MAX_NESTING} (is type {} its own field?)", c.name));
        }
        let mut fields = Vec::with_capacity(c.fields.len());
        for f in &c.fields {
            fields.push(self.field(types, f, depth + 1)?);
        }
        Ok(Value::Object(fields))
    }

    fn field(&mut self, types: &Types, f: &Field, depth: u32) -> Result<Value> {
        if f.array {
            let n = self.count()?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(self.single(types, f, depth)?);
            }
            Ok(Value::Array(items))
        } else {
            self.single(types, f, depth)
        }
    }

    fn single(&mut self, types: &Types, f: &Field, depth: u32) -> Result<Value> {
        if f.constant_pool {
            self.tick()?;
            return Ok(Value::Ref(self.long()?));
        }
        let Some(class) = f.class else {
            return err(self.pos, format!("field {} has type id {}, which the metadata does not describe", f.name, f.type_id));
        };
        self.value(types, class, depth)
    }

    fn primitive(&mut self, p: Primitive) -> Result<Value> {
        Ok(match p {
            Primitive::Int => Value::Int(self.int()?),
            Primitive::Long => Value::Int(self.long()?),
            Primitive::Short => Value::Int(self.short()?),
            Primitive::Char => Value::Int(self.short()? & 0xffff),
            Primitive::Byte | Primitive::Boolean => Value::Int(self.u8()? as i8 as i64),
            Primitive::Float => {
                self.fixed::<4>()?;
                Value::Float
            }
            Primitive::Double => {
                self.fixed::<8>()?;
                Value::Float
            }
            Primitive::String => Value::Str(self.string()?),
        })
    }
}

/// An element of the metadata event's tree.
struct Element {
    name: u32,
    attributes: Vec<(u32, u32)>,
    children: Vec<Element>,
}

fn element(c: &mut Cursor, strings: &[String], depth: u32) -> Result<Element> {
    if depth >= MAX_NESTING {
        return err(c.pos, format!("metadata elements nest deeper than {MAX_NESTING}"));
    }
    c.tick()?;
    let index = |c: &mut Cursor| -> Result<u32> {
        let at = c.pos;
        let i = c.int()?;
        if i < 0 || i as usize >= strings.len() {
            return err(at, format!("metadata string {i} out of range (there are {})", strings.len()));
        }
        Ok(i as u32)
    };
    let name = index(c)?;
    let n = c.count()?;
    let mut attributes = Vec::new();
    for _ in 0..n {
        attributes.push((index(c)?, index(c)?));
    }
    let n = c.count()?;
    let mut children = Vec::new();
    for _ in 0..n {
        children.push(element(c, strings, depth + 1)?);
    }
    Ok(Element { name, attributes, children })
}

/// Reads the metadata event at `c.pos` into the chunk's types.
fn metadata(c: &mut Cursor) -> Result<Types> {
    let start = c.pos;
    let size = c.int()?;
    if size <= 0 || size as usize > c.end - start {
        return err(start, format!("the metadata event's size {size} goes past the end of its chunk"));
    }
    c.end = start + size as usize;
    let kind = c.long()?;
    if kind != METADATA_EVENT {
        return err(start, format!("the chunk's metadata offset points to an event of type {kind}, not metadata"));
    }
    c.long()?; // start time
    c.long()?; // duration
    c.long()?; // metadata id
    let n = c.count()?;
    let mut strings = Vec::new();
    for _ in 0..n {
        strings.push(match c.string()? {
            Str::Inline(s) => s,
            Str::Null => String::new(),
            Str::Pool(_) => return err(c.pos, "a metadata string refers to the constant pool"),
        });
    }
    let root = element(c, &strings, 0)?;
    let s = |i: u32| strings[i as usize].as_str();
    let attribute = |e: &Element, key: &str| e.attributes.iter().find(|(k, _)| s(*k) == key).map(|(_, v)| s(*v));
    let mut types = Types::default();
    let mut pending: Vec<Vec<(String, i64, bool, bool)>> = Vec::new();
    for m in root.children.iter().filter(|e| s(e.name) == "metadata") {
        for class in m.children.iter().filter(|e| s(e.name) == "class") {
            let id = attribute(class, "id").and_then(|v| v.parse::<i64>().ok());
            let (Some(id), Some(name)) = (id, attribute(class, "name")) else {
                return err(start, "a type of the metadata has no id or no name");
            };
            let mut fields = Vec::new();
            for f in class.children.iter().filter(|e| s(e.name) == "field") {
                let type_id = attribute(f, "class").and_then(|v| v.parse::<i64>().ok());
                let (Some(field_name), Some(type_id)) = (attribute(f, "name"), type_id) else {
                    return err(start, format!("a field of type {name} has no name or no type"));
                };
                let cp = attribute(f, "constantPool") == Some("true");
                let array = attribute(f, "dimension").is_some_and(|d| d != "0");
                fields.push((field_name.to_string(), type_id, cp, array));
            }
            if types.by_id.insert(id, types.classes.len()).is_some() {
                return err(start, format!("two types of the metadata have id {id}"));
            }
            types.classes.push(Class { name: name.to_string(), primitive: primitive(name), fields: Vec::new() });
            pending.push(fields);
        }
    }
    for (i, fields) in pending.into_iter().enumerate() {
        types.classes[i].fields = fields
            .into_iter()
            .map(|(name, type_id, constant_pool, array)| Field {
                name,
                class: types.by_id.get(&type_id).copied(),
                type_id,
                constant_pool,
                array,
            })
            .collect();
    }
    Ok(types)
}

/// The constant pools of a chunk that name frames.
#[derive(Default)]
struct Pools {
    /// `jdk.types.Symbol`: its string.
    symbols: FxHashMap<i64, Str>,
    /// `java.lang.String`.
    strings: FxHashMap<i64, Str>,
    /// `java.lang.Class`: the symbol of its name.
    classes: FxHashMap<i64, i64>,
    /// `jdk.types.Method`: its class and the symbol of its name.
    methods: FxHashMap<i64, (i64, i64)>,
    /// `jdk.types.StackTrace`: truncated, and its methods, leaf first.
    stacks: FxHashMap<i64, (bool, Vec<i64>)>,
    /// `jdk.types.ThreadState`: its name (`STATE_RUNNABLE`, `STATE_SLEEPING`, …), resolved once
    /// the whole chain is read (its strings may come later in it), not at every sample.
    thread_states: FxHashMap<i64, String>,
}

impl Pools {
    fn string(&self, s: &Str) -> Option<String> {
        match s {
            Str::Null => None,
            Str::Inline(s) => Some(s.clone()),
            Str::Pool(i) => match self.strings.get(i)? {
                Str::Inline(s) => Some(s.clone()),
                _ => None,
            },
        }
    }

    fn symbol(&self, id: i64) -> Option<String> {
        self.string(self.symbols.get(&id)?)
    }
}

/// Reads the chain of constant-pool events of a chunk, from the last one back.
fn constant_pools(c: &mut Cursor, chunk: (usize, usize), first: usize, types: &Types) -> Result<Pools> {
    let mut pools = Pools::default();
    // Thread states as read, their names resolved at the end.
    let mut states: FxHashMap<i64, Str> = FxHashMap::default();
    let mut seen = FxHashSet::default();
    let mut at = first;
    let idx = |name: &str| types.by_name(name).map(|(_, i)| i);
    let (symbol, string, class, method, stack, frame, thread_state) = (
        idx("jdk.types.Symbol"),
        idx("java.lang.String"),
        idx("java.lang.Class"),
        idx("jdk.types.Method"),
        idx("jdk.types.StackTrace"),
        idx("jdk.types.StackFrame"),
        idx("jdk.types.ThreadState"),
    );
    let field = |class: Option<usize>, name: &str| class.and_then(|c| types.classes[c].field(name));
    let symbol_string = field(symbol, "string");
    let class_name = field(class, "name");
    let (method_type, method_name) = (field(method, "type"), field(method, "name"));
    let (stack_truncated, stack_frames) = (field(stack, "truncated"), field(stack, "frames"));
    let frame_method = field(frame, "method");
    let state_name = field(thread_state, "name");
    loop {
        if at < chunk.0 + HEADER || at >= chunk.1 || !seen.insert(at) {
            return err(at, "the constant pools' chain points outside its chunk or back to itself");
        }
        c.pos = at;
        c.end = chunk.1;
        let size = c.int()?;
        if size <= 0 || size as usize > chunk.1 - at {
            return err(at, format!("a constant-pool event's size {size} goes past the end of its chunk"));
        }
        c.end = at + size as usize;
        let kind = c.long()?;
        if kind != CONSTANT_POOL_EVENT {
            return err(at, format!("the constant pools' chain points to an event of type {kind}"));
        }
        c.long()?; // start time
        c.long()?; // duration
        let delta = c.long()?;
        c.u8()?; // flush
        let n = c.count()?;
        for _ in 0..n {
            let type_at = c.pos;
            let type_id = c.long()?;
            let Some(&ci) = types.by_id.get(&type_id) else {
                return err(type_at, format!("a constant pool of type id {type_id}, which the metadata does not describe"));
            };
            let count = c.count()?;
            for _ in 0..count {
                let key = c.long()?;
                let value = c.value(types, ci, 0)?;
                let get = |i: Option<usize>| match (&value, i) {
                    (Value::Object(f), Some(i)) => f.get(i),
                    _ => None,
                };
                let ci = Some(ci);
                if ci == symbol {
                    if let Some(Value::Str(s)) = get(symbol_string) {
                        pools.symbols.entry(key).or_insert_with(|| s.clone());
                    }
                } else if ci == string {
                    if let Value::Str(s) = &value {
                        pools.strings.entry(key).or_insert_with(|| s.clone());
                    }
                } else if ci == class {
                    if let Some(name) = get(class_name).and_then(Value::int) {
                        pools.classes.entry(key).or_insert(name);
                    }
                } else if ci == method {
                    let class = get(method_type).and_then(Value::int).unwrap_or(0);
                    let name = get(method_name).and_then(Value::int).unwrap_or(0);
                    pools.methods.entry(key).or_insert((class, name));
                } else if ci == stack {
                    let truncated = get(stack_truncated).and_then(Value::int).unwrap_or(0) != 0;
                    let methods = match get(stack_frames) {
                        Some(Value::Array(frames)) => frames
                            .iter()
                            .map(|f| match (f, frame_method) {
                                (Value::Object(f), Some(i)) => f.get(i).and_then(Value::int).unwrap_or(0),
                                (Value::Ref(m), None) => *m,
                                _ => 0,
                            })
                            .collect(),
                        _ => Vec::new(),
                    };
                    pools.stacks.entry(key).or_insert((truncated, methods));
                } else if ci == thread_state {
                    if let Some(Value::Str(s)) = get(state_name) {
                        states.entry(key).or_insert_with(|| s.clone());
                    }
                }
            }
        }
        if delta == 0 {
            pools.thread_states = states.iter().filter_map(|(&k, s)| Some((k, pools.string(s)?))).collect();
            return Ok(pools);
        }
        at = match (at as i64).checked_add(delta) {
            Some(next) if next >= 0 => next as usize,
            _ => return err(at, format!("the constant pools' chain has an offset {delta} out of range")),
        };
    }
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
struct Totals {
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

/// One chunk's header.
struct Header {
    start: usize,
    end: usize,
    constant_pools: usize,
    metadata: usize,
    start_nanos: i64,
    duration_nanos: i64,
    ticks_per_second: i64,
    compressed: bool,
}

fn header(data: &[u8], at: usize, number: usize) -> Result<Header> {
    let left = data.len() - at;
    if left < HEADER {
        return err(at, format!("the file ends inside the header of chunk {number} (truncated?)"));
    }
    let h = &data[at..at + HEADER];
    if &h[..4] != MAGIC {
        return err(at, format!("chunk {number} does not start with the JFR magic bytes"));
    }
    let be64 = |o: usize| i64::from_be_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    let (major, minor) = (u16::from_be_bytes([h[4], h[5]]), u16::from_be_bytes([h[6], h[7]]));
    if !(1..=2).contains(&major) {
        return err(at + 4, format!("JFR format version {major}.{minor} is not read (versions 1 and 2 are, as JDK 9 and later write them)"));
    }
    let size = be64(8);
    if size == 0 {
        return err(at + 8, format!("chunk {number} was not finished (its size is 0): the recording was still being written"));
    }
    if size < HEADER as i64 || size as u64 > left as u64 {
        return err(at + 8, format!("chunk {number} claims {size} bytes, but {left} are left in the file (truncated?)"));
    }
    let size = size as usize;
    let offset = |o: usize, what: &str| -> Result<usize> {
        let v = be64(o);
        if v < HEADER as i64 || v as u64 >= size as u64 {
            return err(at + o, format!("chunk {number}'s {what} offset {v} is outside the chunk ({size} bytes; 0: not finished)"));
        }
        Ok(at + v as usize)
    };
    let constant_pools = offset(16, "constant pool")?;
    let metadata = offset(24, "metadata")?;
    let features = i32::from_be_bytes(h[64..68].try_into().expect("4 bytes"));
    Ok(Header {
        start: at,
        end: at + size,
        constant_pools,
        metadata,
        start_nanos: be64(32),
        duration_nanos: be64(40),
        ticks_per_second: be64(56),
        compressed: features & 1 != 0,
    })
}

fn decode_bytes(data: &[u8], limits: &Limits) -> std::result::Result<Decoded, String> {
    read(data, limits).map_err(|e| format!("JFR: {} at byte {}", e.what, e.at))
}

fn read(data: &[u8], limits: &Limits) -> Result<Decoded> {
    let mut work = 0u64;
    let max_work = (data.len() as u64).saturating_mul(WORK_PER_BYTE).max(1 << 20);
    let mut totals = Totals {
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
    };
    let (mut first_start, mut duration, mut chunks) = (None, 0i64, 0usize);
    let mut at = 0;
    while at < data.len() {
        chunks += 1;
        let h = header(data, at, chunks)?;
        first_start.get_or_insert(h.start_nanos);
        duration = duration.saturating_add(h.duration_nanos.max(0));
        let mut c = Cursor { data, pos: h.metadata, end: h.end, compressed: h.compressed, work: &mut work, max_work };
        let types = metadata(&mut c)?;
        let pools = constant_pools(&mut c, (h.start, h.end), h.constant_pools, &types)?;
        chunk(&mut c, &h, &types, &pools, &mut totals)?;
        at = h.end;
    }
    finish(totals, first_start, duration, chunks, limits)
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
fn chunk(c: &mut Cursor, h: &Header, types: &Types, pools: &Pools, totals: &mut Totals) -> Result<()> {
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

fn finish(totals: Totals, first_start: Option<i64>, duration: i64, chunks: usize, limits: &Limits) -> Result<Decoded> {
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

    #[test]
    fn compressed_integers_take_all_eight_bits_of_their_ninth_byte() {
        let mut work = 0;
        let bytes = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x85, 0xb0, 0x03];
        let mut c = Cursor { data: &bytes, pos: 0, end: bytes.len(), compressed: true, work: &mut work, max_work: 10 };
        assert_eq!(c.long().ok(), Some(-1));
        assert_eq!(c.long().ok(), Some(55301));
        let e = c.long().expect_err("the end");
        assert_eq!(e.at, 12);
    }

    #[test]
    fn an_event_whose_size_is_smaller_than_its_own_size_field_is_an_error_not_a_panic() {
        // Found by coverage-guided fuzzing (scripts/libfuzz.sh, target jfr): the metadata
        // event's size, 0x30 after a 9-byte varint of 0xff bytes, ends the event behind the
        // cursor; the bytes left were reckoned as `end - pos`, which wrapped, and the next read
        // went past the end of the 88-byte file.
        let file = b"\x46\x4c\x52\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00\x00\x44\x00\x00\x00\x00\x00\x00\x00\x44\x9b\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x44\x00\x00\x01\x00\x00\x00\x00\xff\x30\xff\xff\xef\x73\x6c\x09\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00";
        let e = decode(&mut &file[..], &Limits::default()).expect_err("a damaged recording");
        assert!(e.contains("bytes needed") || e.contains("left"), "{e}");
        let mut work = 0;
        let mut c = Cursor { data: &file[..], pos: 10, end: 4, compressed: true, work: &mut work, max_work: 10 };
        assert_eq!(c.left(), 0);
        assert!(c.u8().is_err());
    }
}
