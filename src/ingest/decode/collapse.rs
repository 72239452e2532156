//! `perf script` text and the other stackcollapse inputs (DTrace, macOS `sample`, VTune),
//! folded by inferno's `collapse` modules (the Rust port of Brendan Gregg's stackcollapse-*
//! scripts), used as a library. inferno writes folded stacks; those are read by
//! [`super::folded::decode`], so limits, warnings and merging are the folded reader's.
//!
//! Each format is recognised by inferno's own `is_applicable` on the start of the file.
//! For perf, the first event line is also read here: its event names the graph, and whether
//! it carries a period decides the unit (inferno weighs a sample by its period when there is
//! one, as `perf report` does).

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

use inferno::collapse::{dtrace, perf, sample, vtune, Collapse};

use super::{cpuprofile, folded, Decoded};
use crate::config::{Config, PerfConfig};

/// Whether `sniff` is `perf script` text: its first event line is followed by a stack line,
/// or it starts with the header of `perf script --header`, which can be longer than the sniff.
pub fn is_perf(sniff: &[u8]) -> bool {
    sniff.starts_with(b"# ========\n# captured on") || applicable(&mut perf::Folder::default(), sniff)
}

/// Whether `sniff` is the output of a DTrace `ustack()`/`stack()` aggregation. inferno
/// decides at the first stack's count; a first stack longer than the sniff is accepted when
/// the sniff is full and, after a blank line, holds only `module`function` frames.
pub fn is_dtrace(sniff: &[u8]) -> bool {
    match judge(&mut dtrace::Folder::default(), sniff) {
        Some(yes) => yes,
        None => {
            // Whole lines only: the sniff ends inside one.
            let whole = &sniff[..sniff.iter().rposition(|&b| b == b'\n').unwrap_or(0)];
            let text = String::from_utf8_lossy(whole);
            sniff.len() >= 4096
                && text.split_once("\n\n").is_some_and(|(_, stacks)| {
                    let mut lines = stacks.lines().map(str::trim).filter(|l| !l.is_empty());
                    // Frames, not folded lines of DTrace stacks (`a`f;b`g 5`).
                    let frame = |l: &str| (l.contains('`') || l.starts_with("0x")) && !folded::is_applicable(l.as_bytes());
                    lines.clone().next().is_some() && lines.all(frame)
                })
        }
    }
}

/// Whether `sniff` is the text report of macOS `sample`: inferno looks for both the start
/// and the end of the call graph, which a real report's call graph puts further apart than
/// the sniff, so the report's first line and the start of its call graph also do.
pub fn is_sample(sniff: &[u8]) -> bool {
    (sniff.starts_with(b"Analysis of sampling ") && cpuprofile::contains(sniff, b"\nCall graph:"))
        || applicable(&mut sample::Folder::default(), sniff)
}

/// Whether `sniff` is a VTune call-stack CSV export.
pub fn is_vtune(sniff: &[u8]) -> bool {
    applicable(&mut vtune::Folder::default(), sniff)
}

fn applicable(folder: &mut impl Collapse, sniff: &[u8]) -> bool {
    judge(folder, sniff) == Some(true)
}

/// inferno's judgement of `sniff`: yes, no, or not sure yet.
fn judge(folder: &mut impl Collapse, sniff: &[u8]) -> Option<bool> {
    if sniff.contains(&0) {
        return Some(false);
    }
    // The sniff may end inside a line, or inside a character: judge whole lines only.
    let whole = match sniff.iter().rposition(|&b| b == b'\n') {
        Some(nl) if sniff.len() >= 4096 => &sniff[..=nl],
        _ => sniff,
    };
    let text = String::from_utf8_lossy(whole);
    catch_unwind(AssertUnwindSafe(|| folder.is_applicable(&text))).unwrap_or(Some(false))
}

/// The event of the first sample of `perf script` text, and whether it carries a period:
/// `comm [pid/]tid [cpu] time: [period] event[:modifiers]:`.
pub fn first_perf_event(text: &[u8]) -> Option<(String, bool)> {
    let text = String::from_utf8_lossy(text);
    let line = text.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#'))?;
    event_of_line(line)
}

/// The event of a sample's first line, and whether the line has a period.
fn event_of_line(line: &str) -> Option<(String, bool)> {
    // The thread id is the first all-digit word (`tid` or `pid/tid`); comm may have spaces.
    let words: Vec<&str> = line.split(' ').collect();
    let is_id = |w: &str| !w.is_empty() && w.split('/').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let at = words.iter().skip(1).position(|w| is_id(w))? + 2;
    let rest = words[at..].join(" ");
    // After the time's colon comes `[period] event`, up to the next colon.
    let (_, after_time) = rest.split_once(':')?;
    let field = after_time.split(':').next()?.trim();
    let mut parts = field.rsplit(' ').filter(|w| !w.is_empty());
    let event = parts.next()?;
    let period = parts.next().is_some_and(|p| p.parse::<u64>().is_ok());
    Some((event.to_string(), period))
}

/// Passes `perf script` text through to inferno and counts the samples of each event on the
/// way, so that the samples inferno leaves out (those of other events) can be reported.
struct EventCounter<'a> {
    inner: &'a mut dyn BufRead,
    events: EventCounts,
}

/// Samples per event, counted from the lines that go by.
#[derive(Default)]
struct EventCounts {
    /// `+` and the start of the line being read (enough for its event), when it is a
    /// sample's first line; empty otherwise.
    line: Vec<u8>,
    in_line: bool,
    counts: BTreeMap<String, u64>,
}

impl<'a> EventCounter<'a> {
    fn new(inner: &'a mut dyn BufRead) -> Self {
        EventCounter { inner, events: EventCounts::default() }
    }
}

impl EventCounts {
    fn see(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = memchr::memchr(b'\n', bytes);
            let part = &bytes[..end.unwrap_or(bytes.len())];
            if !self.in_line {
                self.in_line = true;
                // Stack lines start with whitespace, comments with '#'.
                if part.first().is_some_and(|b| !b.is_ascii_whitespace() && *b != b'#') {
                    self.line.push(b'+');
                }
            }
            if !self.line.is_empty() && self.line.len() < 1024 {
                let room = 1024 - self.line.len();
                self.line.extend_from_slice(&part[..part.len().min(room)]);
            }
            match end {
                Some(e) => {
                    self.end_line();
                    bytes = &bytes[e + 1..];
                }
                None => bytes = &[],
            }
        }
    }

    fn end_line(&mut self) {
        if self.line.len() > 1 {
            if let Some((event, _)) = event_of_line(&String::from_utf8_lossy(&self.line[1..])) {
                *self.counts.entry(event).or_default() += 1;
            }
        }
        self.line.clear();
        self.in_line = false;
    }
}

impl std::io::Read for EventCounter<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for EventCounter<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        // `fill_buf` returns what it returned before, without reading.
        if let Ok(buf) = self.inner.fill_buf() {
            self.events.see(&buf[..amt.min(buf.len())]);
        }
        self.inner.consume(amt);
    }
}

/// Folds `perf script` text with the `[perf]` options of `site.toml`.
pub fn decode_perf(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    // Lines up to the first sample's (after the header's comments), then put back in front.
    let mut head = Vec::new();
    loop {
        let start = head.len();
        let n = (&mut *reader).take(config.limits.max_line_bytes + 1).read_until(b'\n', &mut head).map_err(|e| e.to_string())?;
        let line = &head[start..];
        if n == 0 || line.first().is_some_and(|b| !b.is_ascii_whitespace() && *b != b'#') || head.len() > 1 << 20 {
            break;
        }
    }
    let (event, periods) = first_perf_event(&head).ok_or(
        "perf script: the first sample's line names no event (expected `comm pid time: [period] event:`)",
    )?;
    let mut folder = perf::Folder::from(perf_options(&config.perf, &event));
    let mut chained = std::io::Cursor::new(head).chain(reader);
    let mut counter = EventCounter::new(&mut chained);
    let mut decoded = fold(&mut folder, &mut counter, config, "perf")?;
    counter.events.end_line();
    let others: Vec<String> =
        counter.events.counts.iter().filter(|(e, _)| **e != event).map(|(e, n)| format!("{e} ({n} samples)")).collect();
    if !others.is_empty() {
        decoded.warnings.push(format!(
            "perf: only the samples of the first sample's event, {event}, are shown; left out: {}",
            others.join(", ")
        ));
    }
    // Without periods every sample counts 1; with them inferno sums the periods, in the
    // event's own unit (nanoseconds for the software clocks).
    let (name, unit) = if !periods {
        ("samples".to_string(), "samples".to_string())
    } else if matches!(event.as_str(), "cpu-clock" | "task-clock") {
        (event.clone(), "nanoseconds".to_string())
    } else {
        (event.clone(), event.clone())
    };
    decoded.graphs[0].name = name;
    decoded.graphs[0].unit = unit;
    decoded.metadata.insert("perf event".into(), event);
    Ok(decoded)
}

/// inferno's perf options from ours. Only samples of `event`, the first one's, are kept (as
/// inferno does by default; stated here so that its parser never has to guess). The folding
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

/// Folds DTrace output.
pub fn decode_dtrace(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    fold(&mut dtrace::Folder::default(), reader, config, "dtrace")
}

/// Folds macOS `sample` output.
pub fn decode_sample(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    fold(&mut sample::Folder::default(), reader, config, "sample")
}

/// Folds a VTune CSV export. inferno turns its `CPU Time:Self` seconds into whole
/// milliseconds, so the graph is `cpu time` in `milliseconds`.
pub fn decode_vtune(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let mut decoded = fold(&mut vtune::Folder::default(), reader, config, "vtune")?;
    decoded.graphs[0].name = "cpu time".into();
    decoded.graphs[0].unit = "milliseconds".into();
    Ok(decoded)
}

/// Runs inferno's folder over the whole stream, then reads its folded output. A panic inside
/// the parser (hostile input it did not expect) becomes an error, not a crash.
fn fold(folder: &mut impl Collapse, reader: &mut dyn BufRead, config: &Config, format: &'static str) -> Result<Decoded, String> {
    let mut out = Vec::new();
    let result = catch_unwind(AssertUnwindSafe(|| folder.collapse(&mut *reader, &mut out)));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("{format}: {e}")),
        Err(_) => return Err(format!("{format}: the input is malformed (inferno's {format} parser gave up)")),
    }
    if out.iter().all(u8::is_ascii_whitespace) {
        return Err(format!("{format}: no stacks found (is the file truncated, or were stacks not recorded?)"));
    }
    let mut decoded = folded::decode(&mut &out[..], &config.limits).map_err(|e| format!("{format}: {e}"))?;
    decoded.format = format;
    Ok(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERF: &str = "prog  2124  4401.946538:     250000 cycles:u: \n\
        \tffffffff815ca1c9 kvfree_call_rcu+0x19 ([kernel.kallsyms])\n\
        \t    55d0c0a01149 leaf+0x9 (/tmp/prog)\n\
        \t    55d0c0a01180 main+0x10 (/tmp/prog)\n\
        \n\
        prog  2124  4401.946600:     100000 cycles:u: \n\
        \t    55d0c0a01149 leaf+0x9 (/tmp/prog)\n\
        \t    55d0c0a01180 main+0x10 (/tmp/prog)\n\
        \n";

    fn folded_of(d: &Decoded) -> String {
        crate::store::fold::folded_lines(&d.graphs[0].table).concat()
    }

    #[test]
    fn perf_is_recognised_and_weighed_by_period() {
        assert!(is_perf(PERF.as_bytes()));
        assert!(!is_perf(b"main;a 1\n"));
        assert!(!is_dtrace(PERF.as_bytes()) && !is_sample(PERF.as_bytes()) && !is_vtune(PERF.as_bytes()));
        for f in [is_perf, is_dtrace, is_sample, is_vtune] {
            assert!(!f(b"main;a;b 12\nmain;c 3\n"), "folded text is left to the folded reader");
            assert!(!f(b"{\"nodes\": [], \"samples\": []}"));
        }
        assert_eq!(first_perf_event(PERF.as_bytes()), Some(("cycles".into(), true)));
        let d = decode_perf(&mut PERF.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.format, "perf");
        assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("cycles", "cycles"));
        assert_eq!(folded_of(&d), "prog;main;leaf 100000\nprog;main;leaf;kvfree_call_rcu 250000\n");
    }

    #[test]
    fn a_long_perf_header_is_recognised() {
        let mut text = String::from("# ========\n# captured on    : Sun Nov 22 00:15:00 2026\n");
        while text.len() < 5000 {
            text.push_str("# sibling sockets : 0-63\n");
        }
        text.push_str("# ========\n#\n");
        text.push_str(PERF);
        assert!(is_perf(&text.as_bytes()[..4096]));
        let d = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.graphs[0].table.grand_total(), 350000);
    }

    #[test]
    fn samples_of_other_events_are_left_out_with_a_warning() {
        let text = format!("{PERF}prog 2124 4401.95: 7 instructions:u: \n\t1 f (/p)\n\nprog 2124 4401.96: 7 instructions:u: \n\t1 f (/p)\n");
        let d = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.graphs[0].table.grand_total(), 350000);
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(d.warnings[0].contains("cycles") && d.warnings[0].contains("instructions (2 samples)"), "{:?}", d.warnings);
        // Read a byte at a time, lines are split across reads.
        let mut slow = std::io::BufReader::with_capacity(1, text.as_bytes());
        let d = decode_perf(&mut slow, &Config::default()).unwrap();
        assert!(d.warnings[0].contains("instructions (2 samples)"), "{:?}", d.warnings);
        assert!(decode_perf(&mut PERF.as_bytes(), &Config::default()).unwrap().warnings.is_empty());
    }

    #[test]
    fn perf_options_change_names() {
        let mut c = Config::default();
        c.perf.annotate_kernel = true;
        c.perf.include_tid = true;
        let d = decode_perf(&mut PERF.as_bytes(), &c).unwrap();
        assert!(folded_of(&d).contains("prog-?/2124;main;leaf;kvfree_call_rcu_[k] 250000"), "{}", folded_of(&d));
    }

    #[test]
    fn samples_without_period_count_one_each() {
        let text = "prog 2124 [001] 4401.9: cpu-clock: \n\t1 f (/p)\n\t2 main (/p)\n\nprog 2124 [001] 4402.0: cpu-clock: \n\t2 main (/p)\n";
        assert_eq!(first_perf_event(text.as_bytes()), Some(("cpu-clock".into(), false)));
        let d = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap();
        assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("samples", "samples"));
        assert_eq!(folded_of(&d), "prog;main 1\nprog;main;f 1\n");
    }

    #[test]
    fn malformed_perf_is_an_error_not_a_panic() {
        // Recognised (an event line and a stack line) but no event after the time.
        let e = decode_perf(&mut "prog 123 456\n\tabc f (m)\n\n".as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("names no event"), "{e}");
        // Cut inside the first sample's third frame line: what was read of the sample is kept
        // under the process name, without the frame that was cut, as inferno-collapse-perf
        // prints for the same text (stackcollapse-perf.pl would drop the sample; README).
        let cut = &PERF[..PERF.find("main+0x10").unwrap()];
        let d = decode_perf(&mut cut.as_bytes(), &Config::default()).unwrap();
        assert_eq!(folded_of(&d), "prog;leaf;kvfree_call_rcu 250000\n");
        // Only an event line: no stacks.
        let e = decode_perf(&mut "prog 1 1.0: 1 cycles:\n".as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("no stacks"), "{e}");
        // Garbage after a good start.
        let junk = format!("{PERF}\u{0}\u{1}garbage: without structure\n\t\t\t\n((( )))\n");
        assert!(decode_perf(&mut junk.as_bytes(), &Config::default()).is_ok());
    }

    #[test]
    fn dtrace_sample_and_vtune_fold_as_infernos_clis_do() {
        let dtrace = "CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s\n\n\n              libc.so.1`__write+0x15\n              prog`main+0x10\n                5\n\n              prog`main+0x10\n                2\n";
        assert!(is_dtrace(dtrace.as_bytes()));
        let d = decode_dtrace(&mut dtrace.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.format, "dtrace");
        assert_eq!(folded_of(&d), "prog`main 2\nprog`main;libc.so.1`__write 5\n");

        // A first stack longer than the sniff.
        let mut deep = String::from("CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s\n\n\n");
        while deep.len() < 5000 {
            deep.push_str("              prog`recurse+0x10\n");
        }
        for pad in 0..40 {
            // The sniff ends at every position of a frame line.
            let padded = format!("{}{deep}", " ".repeat(pad));
            assert!(is_dtrace(&padded.as_bytes()[..4096]), "{pad}");
        }
        assert!(!is_dtrace(&deep.as_bytes()[..1000]), "not sure yet, and the whole file is this");
        let mut text = "x".repeat(5000);
        text.insert_str(100, "\n\n");
        assert!(!is_dtrace(&text.as_bytes()[..4096]));
        let mut folded_dtrace = String::from("\n\n");
        while folded_dtrace.len() < 5000 {
            folded_dtrace.push_str("libc.so.1`__write+0x15;prog`main+0x10 5\n");
        }
        assert!(!is_dtrace(&folded_dtrace.as_bytes()[..4096]), "folded stacks of DTrace frames are folded");

        // Expected: inferno-collapse-sample's output for the same text.
        let mut sample = String::from("Analysis of sampling prog (pid 123) every 1 millisecond\nProcess:         prog [123]\n\nCall graph:\n    5 Thread_1   DispatchQueue_1: com.apple.main-thread  (serial)\n    + 5 start  (in libdyld.dylib) + 1  [0x7fff6f1c3cc9]\n    +   5 main  (in prog) + 10  [0x100000f4a]\n    +     3 foo  (in prog) + 5  [0x100000f10]\n    +     ! 3 leaf  (in prog) + 1  [0x100000f00]\n    +     2 bar  (in prog) + 5  [0x100000f20]\n");
        sample.push_str("\nTotal number in stack (recursive counted multiple times):\n        5       main  (in prog) + 10  [0x100000f4a]\n");
        assert!(is_sample(sample.as_bytes()));
        let d = decode_sample(&mut sample.as_bytes(), &Config::default()).unwrap();
        let thread = "Thread_1   DispatchQueue_1: com.apple.main-thread  (serial`Thread_1   DispatchQueue_1: com.apple.main-thread";
        assert_eq!(
            folded_of(&d),
            format!("{thread};libdyld`start;prog`main;prog`bar 2\n{thread};libdyld`start;prog`main;prog`foo;prog`leaf 3\n")
        );
        // A call graph longer than the sniff is still recognised from the report's start.
        let start = &sample[..sample.find("    + 5 start").unwrap()];
        assert!(is_sample(start.as_bytes()));

        // Expected: inferno-collapse-vtune's output (CPU time in milliseconds).
        let vtune = "Function Stack,CPU Time:Self,Module\nTotal,0.0,[Unknown]\n main,0.015,prog\n  foo,0.005,prog\n  bar,0.0101,libbar.so\n";
        assert!(is_vtune(vtune.as_bytes()));
        let d = decode_vtune(&mut vtune.as_bytes(), &Config::default()).unwrap();
        assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("cpu time", "milliseconds"));
        assert_eq!(
            folded_of(&d),
            "[Unknown]`Total;prog`main 15\n[Unknown]`Total;prog`main;libbar.so`bar 10\n[Unknown]`Total;prog`main;prog`foo 5\n"
        );
    }
}
