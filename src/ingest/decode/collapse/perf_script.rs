//! `perf script` text folded with one inferno folder per event: the text read once, each
//! sample routed to its event's folder on a thread of its own, samples without frames counted
//! here, and the folders' graphs named by their events and units.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::sync::mpsc;

use inferno::collapse::perf;

use super::folding::{collapse, finish};
use super::perf_line::{restore_unknown_ids, root_frame, EventLine};
use crate::config::{Config, PerfConfig};
use crate::ingest::decode::{ChannelReader, Decoded};

/// Events of one `perf script` file made into graphs at most; the samples of any further
/// events are left out with a warning.
pub const MAX_PERF_EVENTS: usize = 16;

/// Bytes of text handed to an event's folder at a time.
const ROUTE_BATCH: usize = 1 << 18;

/// One event's folder as the text is routed: its name, whether its samples carry a period,
/// where its text goes and the text not sent yet; its samples without frames (see
/// [`Pending`]) and whether an id -1 was handed to inferno, which go to the folder at the end
/// (`tail`).
struct Route<'scope> {
    event: String,
    period: bool,
    tx: Option<mpsc::SyncSender<std::io::Result<Vec<u8>>>>,
    batch: Vec<u8>,
    frameless: BTreeMap<String, u64>,
    unknown_ids: bool,
    tail: mpsc::SyncSender<(Vec<u8>, bool)>,
    folding: std::thread::ScopedJoinHandle<'scope, Result<Decoded, String>>,
}

impl Route<'_> {
    fn send(&mut self) {
        if let Some(tx) = &self.tx {
            // A folder that gave up has dropped its receiver: its error is reported at the end.
            if tx.send(Ok(std::mem::take(&mut self.batch))).is_err() {
                self.tx = None;
            }
        }
        self.batch.clear();
    }

    fn push(&mut self, text: &[u8]) {
        self.batch.extend_from_slice(text);
        if self.batch.len() >= ROUTE_BATCH {
            self.send();
        }
    }
}

/// A sample's first line, held until the next line says whether the sample has frames. A
/// sample may have none: perf prints a tracepoint recorded without `-g` (`perf record -e
/// sched:sched_switch`) as one line, its fields after the event, the next sample's line right
/// after it, and a sample whose call chain is empty as its line and a blank line. Such a
/// sample is its command alone (its root frame), weighed as the others are (its period, or
/// 1), as stackcollapse-perf.pl counts one that a blank line ends; inferno leaves it out, and
/// would take a next sample's line for a frame, so it never sees one.
struct Pending {
    route: usize,
    /// The line as read, and as handed to inferno when it is rewritten for it.
    line: Vec<u8>,
    rewritten: Option<Vec<u8>>,
    /// Where its thread id starts and the words after it start ([`EventLine`]).
    id: (usize, usize),
    weight: u64,
}

/// Folds `perf script` text with the `[perf]` options of `site.toml`: one graph per event
/// (`perf record -e cycles,instructions`), in the order the events first appear. The text is
/// read once; each sample (its first line and its stack) goes to its event's inferno folder,
/// each on a thread of its own. A first line without a time field (`perf script -F
/// comm,pid,event,…`, older perf) is handed to inferno with a zero time, and one whose event
/// is padded with one space before it (see [`EventLine::for_inferno`]), so that inferno reads
/// every event and period; so is one whose command holds a number, or whose thread is -1
/// ([`find_id`](super::perf_line::find_id)). A sample without frames is counted here, under
/// its command ([`Pending`]).
pub fn decode_perf(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let max_line = config.limits.max_line_bytes;
    std::thread::scope(|scope| {
        let mut routes: Vec<Route> = Vec::new();
        // The route of the sample being read; None while its lines are left out.
        let mut current: Option<usize> = None;
        // Whether a sample's stack is being read: from its first line to a blank line.
        let mut in_stack = false;
        // The first line of the sample being read while no line has followed it, and whether
        // a sample has been ended by the next one's first line (samples of one line each).
        let mut pending: Option<Pending> = None;
        let mut lines_alone = false;
        // The buffer of the last pending line, read into again.
        let mut spare: Vec<u8> = Vec::with_capacity(256);
        let frameless = |routes: &mut Vec<Route>, spare: &mut Vec<u8>, p: Pending| {
            let text = String::from_utf8_lossy(&p.line);
            let n = routes[p.route].frameless.entry(root_frame(&text, p.id, &config.perf)).or_default();
            *n = n.saturating_add(p.weight);
            *spare = p.line;
        };
        // The sample has a line after its first: its first goes to its folder.
        let flush = |routes: &mut Vec<Route>, spare: &mut Vec<u8>, p: Pending| {
            routes[p.route].push(p.rewritten.as_deref().unwrap_or(&p.line));
            *spare = p.line;
        };
        let mut left_out: BTreeMap<String, u64> = BTreeMap::new();
        let mut unreadable: u64 = 0;
        // The first frame line without `(module)` at its end, if one is met.
        let mut frame_without_module: Option<u64> = None;
        let mut line = Vec::with_capacity(256);
        let mut number: u64 = 0;
        loop {
            line.clear();
            let n = (&mut *reader).take(max_line + 1).read_until(b'\n', &mut line).map_err(|e| format!("perf: {e}"))?;
            if n == 0 {
                break;
            }
            number += 1;
            if line.len() as u64 > max_line {
                return Err(format!("perf: line {number} is longer than limits.max_line_bytes ({max_line} bytes)"));
            }
            // A blank line ends a sample's stack, and comments start with '#'. Inside a stack,
            // lines are its frames (indented) unless one starts a sample that names its event.
            // Elsewhere a line starts a sample: perf may pad the command on the left.
            let indented = line.first().is_some_and(|b| b.is_ascii_whitespace());
            // Right after a sample's first line, a line padded with spaces (frames are indented
            // with a tab) may start the next sample: perf pads the command of samples that it
            // prints without their call chain. It does if it reads as every field perf prints.
            let after_first = pending.is_some() && line[0] == b' ';
            let unended = !line.trim_ascii_end().ends_with(b")");
            if in_stack && indented && !after_first && frame_without_module.is_none() && unended {
                frame_without_module = Some(number);
            }
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                in_stack = false;
                if let Some(p) = pending.take() {
                    frameless(&mut routes, &mut spare, p);
                }
            } else if line[0] != b'#' && (!(in_stack && indented) || after_first) {
                let text = String::from_utf8_lossy(&line);
                let head = EventLine::read(text.trim_end_matches(['\n', '\r']))
                    .filter(|h| !(in_stack || indented) || !h.event.is_empty() || h.frame.is_some())
                    .filter(|h| !(in_stack && indented) || h.fields);
                match head {
                    // A frame after all.
                    None if in_stack && indented => {
                        if frame_without_module.is_none() && unended {
                            frame_without_module = Some(number);
                        }
                    }
                    None => {
                        if in_stack || indented {
                            // Not a sample's first line inside a stack (perf's own messages,
                            // addr2line's, land there), or an indented line outside one: the
                            // stack's folder reads it as inferno does (it passes over such a
                            // line and keeps the stack).
                            if let Some(p) = pending.take() {
                                flush(&mut routes, &mut spare, p);
                            }
                            if let Some(i) = current {
                                routes[i].batch.extend_from_slice(&line);
                            }
                            continue;
                        }
                        if routes.is_empty() && left_out.is_empty() {
                            return Err(format!(
                                "perf script: line {number} does not start a sample (expected `comm [pid/]tid [time:] [period] [event:]`, the fields perf script prints)"
                            ));
                        }
                        unreadable += 1;
                        current = None;
                        continue;
                    }
                    Some(head) => {
                        if let Some(p) = pending.take() {
                            frameless(&mut routes, &mut spare, p);
                            lines_alone = true;
                        }
                        if head.frame.is_some() && frame_without_module.is_none() && !text.trim_end().ends_with(')') {
                            frame_without_module = Some(number);
                        }
                        in_stack = true;
                        current = match routes.iter().position(|r| r.event == head.event) {
                            Some(i) => Some(i),
                            None if routes.len() < MAX_PERF_EVENTS => {
                                let (tx, rx) = mpsc::sync_channel(4);
                                let (tail, tail_rx) = mpsc::sync_channel(1);
                                let options = perf_options(&config.perf, &head.event);
                                let ids_named = options.include_pid || options.include_tid;
                                let folding = scope.spawn(move || {
                                    let mut folder = perf::Folder::from(options);
                                    let mut out = collapse(&mut folder, &mut ChannelReader::new(rx), "perf")?;
                                    let (frameless, unknown_ids): (Vec<u8>, bool) = tail_rx.recv().unwrap_or_default();
                                    if unknown_ids && ids_named {
                                        out = restore_unknown_ids(&out);
                                    }
                                    out.extend_from_slice(&frameless);
                                    finish(out, config, "perf")
                                });
                                routes.push(Route {
                                    event: head.event.clone(),
                                    period: head.period.is_some(),
                                    tx: Some(tx),
                                    batch: Vec::with_capacity(ROUTE_BATCH),
                                    frameless: BTreeMap::new(),
                                    unknown_ids: false,
                                    tail,
                                    folding,
                                });
                                Some(routes.len() - 1)
                            }
                            None => {
                                *left_out.entry(head.event.clone()).or_default() += 1;
                                None
                            }
                        };
                        if let Some(i) = current {
                            let r = &mut routes[i];
                            r.unknown_ids |= head.unknown_id(&text);
                            let rewritten = head.for_inferno(&text);
                            if head.frame.is_some() {
                                // A sample of one line (perf record without -g) is whole: what
                                // follows it up to the next sample (`-F +srcline`'s lines) is not
                                // a frame.
                                r.push(rewritten.as_deref().unwrap_or(&line));
                                in_stack = false;
                                current = None;
                            } else {
                                let (id, weight) = ((head.id_at, head.rest), head.period.unwrap_or(1));
                                let held = std::mem::replace(&mut line, std::mem::take(&mut spare));
                                pending = Some(Pending { route: i, line: held, rewritten, id, weight });
                            }
                        }
                        continue;
                    }
                }
            }
            if line[0] != b'#' && !line.iter().all(|b| b.is_ascii_whitespace()) {
                // A line of the stack: the sample has one.
                if let Some(p) = pending.take() {
                    flush(&mut routes, &mut spare, p);
                }
            }
            if let Some(i) = current {
                routes[i].push(&line);
            }
        }
        // A first line that ends the text is a sample of its own in a text of such samples;
        // elsewhere it is a sample cut before its stack, which neither collapser keeps.
        if let Some(p) = pending.take().filter(|_| lines_alone) {
            frameless(&mut routes, &mut spare, p);
        }
        if routes.is_empty() {
            return Err("perf: no samples found (is the file truncated, or were stacks not recorded?)".into());
        }
        let mut results = Vec::new();
        for mut r in routes {
            if !r.batch.is_empty() {
                r.send();
            }
            let frameless: String = r.frameless.iter().map(|(root, n)| format!("{root} {n}\n")).collect();
            // A folder that gave up has dropped its receiver: its error is reported below.
            let _ = r.tail.send((frameless.into_bytes(), r.unknown_ids));
            drop(r.tx.take());
            let folded = r.folding.join().unwrap_or_else(|_| Err("perf: the folder failed".into()));
            results.push((r.event, r.period, folded));
        }
        let several = results.len() > 1;
        let mut decoded: Option<Decoded> = None;
        let mut failed = Vec::new();
        let events: Vec<String> = results.iter().map(|(e, _, _)| e.clone()).collect();
        for (event, period, folded) in results {
            let mut d = match folded {
                Ok(d) => d,
                Err(e) => {
                    failed.push(if several { format!("event {event}: {e}") } else { e });
                    continue;
                }
            };
            // Without periods every sample counts 1; with them inferno sums the periods, in
            // the event's own unit (nanoseconds for the software clocks). A file of one event
            // without periods keeps the graph name it always had.
            // Samples of no named event (`perf script -F` without `event`) are "samples", or
            // their "period" when they carry one.
            let (name, unit) = if !period {
                (if several && !event.is_empty() { event.clone() } else { "samples".to_string() }, "samples".to_string())
            } else if matches!(event.as_str(), "cpu-clock" | "task-clock") {
                (event.clone(), "nanoseconds".to_string())
            } else if event.is_empty() {
                ("period".to_string(), "period".to_string())
            } else {
                (event.clone(), event.clone())
            };
            let mut graph = d.graphs.remove(0);
            graph.name = name;
            graph.unit = unit;
            let warnings = d.warnings.drain(..).map(|w| if several { format!("event {event}: {w}") } else { w });
            match &mut decoded {
                None => {
                    d.graphs = vec![graph];
                    d.warnings = warnings.collect();
                    decoded = Some(d);
                }
                Some(first) => {
                    first.graphs.push(graph);
                    first.warnings.extend(warnings);
                }
            }
        }
        let Some(mut decoded) = decoded else {
            if let Some(frame) = frame_without_module {
                // inferno reads a frame by its module in parentheses: without one it reads
                // nothing (and says nothing either).
                return Err(format!(
                    "perf: line {frame}: a frame without its module in parentheses at its end (`perf script -F` without `dso`), which the perf reader needs to read frames: print the file again with `perf script -F +dso` (or without -F)"
                ));
            }
            return Err(failed.join("; "));
        };
        decoded.warnings.extend(failed);
        if !left_out.is_empty() {
            let list: Vec<String> = left_out.iter().map(|(e, n)| format!("{e} ({n} samples)")).collect();
            decoded.warnings.push(format!("perf: more than {MAX_PERF_EVENTS} events; left out: {}", list.join(", ")));
        }
        if unreadable > 0 {
            decoded.warnings.push(format!("perf: {unreadable} samples whose first line names no event were left out"));
        }
        if !events[0].is_empty() {
            decoded.metadata.insert("perf event".into(), events[0].clone());
        }
        if several {
            decoded.metadata.insert("perf events".into(), events.join(", "));
        }
        Ok(decoded)
    })
}

/// inferno's perf options from ours. Only samples of `event` are kept (every sample routed to
/// the folder is of that event; stated here so that its parser never has to guess). The folding
/// runs on up to 4 threads (its output is sorted, so it does not depend on them).
pub fn perf_options(p: &PerfConfig, event: &str) -> perf::Options {
    let mut o = perf::Options::default();
    o.annotate_kernel = p.annotate_kernel;
    o.annotate_jit = p.annotate_jit;
    o.include_pid = p.include_pid;
    o.include_tid = p.include_tid;
    o.include_addrs = p.include_addrs;
    o.event_filter = Some(event.to_string());
    o.nthreads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    o
}
