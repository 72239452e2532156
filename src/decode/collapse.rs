//! `perf script` text and the other stackcollapse inputs (DTrace, macOS `sample`, VTune),
//! folded by inferno's `collapse` modules (the Rust port of Brendan Gregg's stackcollapse-*
//! scripts), used as a library. inferno writes folded stacks; those are read by
//! [`super::folded::decode`], so limits, warnings and merging are the folded reader's.
//!
//! Each format is recognised by inferno's own `is_applicable` on the start of the file.
//! For perf, the first event line is also read here: its event names the graph, and whether
//! it carries a period decides the unit (inferno weighs a sample by its period when there is
//! one, as `perf report` does).

use std::io::BufRead;
use std::panic::{catch_unwind, AssertUnwindSafe};

use inferno::collapse::{dtrace, perf, sample, vtune, Collapse};

use super::{folded, Decoded};
use crate::config::{Config, PerfConfig};

/// Whether `sniff` is `perf script` text: its first event line is followed by a stack line,
/// or it starts with the header of `perf script --header`, which can be longer than the sniff.
pub fn is_perf(sniff: &[u8]) -> bool {
    sniff.starts_with(b"# ========\n# captured on") || applicable(&mut perf::Folder::default(), sniff)
}

/// Whether `sniff` is the output of a DTrace `ustack()`/`stack()` aggregation.
pub fn is_dtrace(sniff: &[u8]) -> bool {
    applicable(&mut dtrace::Folder::default(), sniff)
}

/// Whether `sniff` is the text report of macOS `sample`.
pub fn is_sample(sniff: &[u8]) -> bool {
    applicable(&mut sample::Folder::default(), sniff)
}

/// Whether `sniff` is a VTune call-stack CSV export.
pub fn is_vtune(sniff: &[u8]) -> bool {
    applicable(&mut vtune::Folder::default(), sniff)
}

fn applicable(folder: &mut impl Collapse, sniff: &[u8]) -> bool {
    if sniff.contains(&0) {
        return false;
    }
    // The sniff may end inside a line, or inside a character: judge whole lines only.
    let whole = match sniff.iter().rposition(|&b| b == b'\n') {
        Some(nl) if sniff.len() >= 4096 => &sniff[..=nl],
        _ => sniff,
    };
    let text = String::from_utf8_lossy(whole);
    catch_unwind(AssertUnwindSafe(|| folder.is_applicable(&text))).ok().flatten() == Some(true)
}

/// The event of the first sample of `perf script` text, and whether it carries a period:
/// `comm [pid/]tid [cpu] time: [period] event[:modifiers]:`.
pub fn first_perf_event(text: &[u8]) -> Option<(String, bool)> {
    let text = String::from_utf8_lossy(text);
    let line = text.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#'))?;
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

/// Folds `perf script` text with the `[perf]` options of `site.toml`.
pub fn decode_perf(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let head = reader.fill_buf().map_err(|e| e.to_string())?;
    let (event, periods) = first_perf_event(head).ok_or(
        "perf script: the first sample's line names no event (expected `comm pid time: [period] event:`)",
    )?;
    let mut folder = perf::Folder::from(perf_options(&config.perf, &event));
    let mut decoded = fold(&mut folder, reader, config, "perf")?;
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
/// inferno does by default; stated here so that its parser never has to guess).
pub fn perf_options(p: &PerfConfig, event: &str) -> perf::Options {
    let mut o = perf::Options::default();
    o.annotate_kernel = p.annotate_kernel;
    o.annotate_jit = p.annotate_jit;
    o.include_pid = p.include_pid;
    o.include_tid = p.include_tid;
    o.include_addrs = p.include_addrs;
    o.event_filter = Some(event.to_string());
    o.nthreads = 1;
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

/// Folds a VTune CSV export.
pub fn decode_vtune(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    fold(&mut vtune::Folder::default(), reader, config, "vtune")
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
        crate::fold::folded_lines(&d.graphs[0].table).concat()
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
        // Truncated in the middle of the first event line's stack: what there is is kept.
        let cut = &PERF[..PERF.find("main+0x10").unwrap()];
        let d = decode_perf(&mut cut.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.graphs[0].table.grand_total(), 250000);
        // Only an event line: no stacks.
        let e = decode_perf(&mut "prog 1 1.0: 1 cycles:\n".as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("no stacks"), "{e}");
        // Garbage after a good start.
        let junk = format!("{PERF}\u{0}\u{1}garbage: without structure\n\t\t\t\n((( )))\n");
        assert!(decode_perf(&mut junk.as_bytes(), &Config::default()).is_ok());
    }

    #[test]
    fn dtrace_and_sample_are_folded() {
        let dtrace = "CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s\n\n\n              libc.so.1`__write+0x15\n              prog`main+0x10\n                5\n\n              prog`main+0x10\n                2\n";
        assert!(is_dtrace(dtrace.as_bytes()));
        let d = decode_dtrace(&mut dtrace.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.format, "dtrace");
        assert_eq!(folded_of(&d), "prog`main 2\nprog`main;libc.so.1`__write 5\n");
    }
}
