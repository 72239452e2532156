//! Java Flight Recorder recordings (`.jfr`, and `.jfr.gz` once the caller has undone the
//! compression), as the JDK (`-XX:StartFlightRecording`, `jcmd JFR.dump`) and async-profiler
//! (`-o jfr`) write them: JFR format 1.x and 2.x, one or more chunks.
//!
//! Each event type that carries a stack becomes a graph of its own, named and measured as
//! Pyroscope names and measures them (only the graphs that have events are made, in this
//! order):
//! - `cpu` (nanoseconds): `jdk.ExecutionSample`, each sample worth the sampling period, as
//!   Pyroscope counts them: only the samples whose thread state is known and is not
//!   `STATE_SLEEPING` (see [`events::execution`]). The period is the recording's own setting: the
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
//! large allocation. Nesting of types is bounded ([`reader::MAX_NESTING`]), the constant
//! pools' chain may not loop, and the number of values read is bounded by the file's size
//! ([`WORK_PER_BYTE`]).
//!
//! [`reader`] reads the file as it is laid out (chunk headers, metadata, constant pools, values
//! by their types); [`events`] reads the events into totals and makes the graphs from them; this
//! file reads the chunks one after the other.

use std::io::BufRead;

mod events;
mod reader;

use super::Decoded;
use crate::config::Limits;
use events::{chunk, finish, Totals};
use reader::{constant_pools, header, metadata, Cursor, Result, MAGIC};

/// Values that may be read per byte of the file (a type with no fields takes no bytes, so an
/// array of them could otherwise be long without the file being large).
const WORK_PER_BYTE: u64 = 4;

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

fn decode_bytes(data: &[u8], limits: &Limits) -> std::result::Result<Decoded, String> {
    read(data, limits).map_err(|e| format!("JFR: {} at byte {}", e.what, e.at))
}

fn read(data: &[u8], limits: &Limits) -> Result<Decoded> {
    let mut work = 0u64;
    let max_work = (data.len() as u64).saturating_mul(WORK_PER_BYTE).max(1 << 20);
    let mut totals = Totals::new();
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
