//! `perf script` text and the other stackcollapse inputs (DTrace, macOS `sample`, VTune).
//! perf and DTrace are folded by inferno's `collapse` modules (the Rust port of Brendan
//! Gregg's stackcollapse-* scripts), used as a library; `sample` and VTune call trees by
//! [`super::calltree`], since inferno 0.12's folders for them keep only the last count of a
//! stack listed twice. Either writes folded stacks; those are read by
//! [`super::folded::decode`], so limits, warnings and merging are the folded reader's.
//!
//! Each format is recognised by inferno's own `is_applicable` on the start of the file.
//! For perf, the first event line is also read here: its event names the graph, and whether
//! it carries a period decides the unit (inferno weighs a sample by its period when there is
//! one, as `perf report` does).
//!
//! This file recognises each format and folds DTrace, `sample` and VTune; [`perf_line`] reads
//! a `perf script` sample's first line (its command, thread id, period and event), and
//! [`perf_script`] routes perf text to a folder per event and makes its graphs; [`folding`] runs
//! inferno's folders and reads the folded stacks they write.

use std::io::BufRead;
use std::panic::{catch_unwind, AssertUnwindSafe};

use inferno::collapse::{dtrace, perf, sample, vtune, Collapse};

mod folding;
mod perf_line;
mod perf_script;

pub use perf_line::first_perf_event;
pub use perf_script::{decode_perf, perf_options, MAX_PERF_EVENTS};

use super::{calltree, cpuprofile, folded, Decoded};
use crate::config::Config;
use folding::{fold, quiet_inferno_panics, read_folded};
use perf_line::is_perf_sample;

/// Whether `sniff` is `perf script` text: its first event line is followed by a stack line
/// (or holds its one frame), or it starts with the header of `perf script --header`, which
/// can be longer than the sniff.
pub fn is_perf(sniff: &[u8]) -> bool {
    sniff.starts_with(b"# ========\n# captured on") || applicable(&mut perf::Folder::default(), sniff) || is_perf_sample(sniff)
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
    quiet_inferno_panics();
    catch_unwind(AssertUnwindSafe(|| folder.is_applicable(&text))).unwrap_or(Some(false))
}

/// Folds DTrace output.
pub fn decode_dtrace(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    fold(&mut dtrace::Folder::default(), reader, config, "dtrace")
}

/// Folds macOS `sample` output: each function's own samples (see [`calltree::fold_sample`]),
/// the samples of a path that `sample` lists once per call site added up.
pub fn decode_sample(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let mut out = Vec::new();
    calltree::fold_sample(reader, config.limits.max_line_bytes, &mut out).map_err(|e| format!("sample: {e}"))?;
    read_folded(&out, config, "sample")
}

/// Folds a VTune CSV export. Its `CPU Time:Self` seconds are read in whole milliseconds, as
/// inferno reads them, so the graph is `cpu time` in `milliseconds`.
pub fn decode_vtune(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let mut out = Vec::new();
    calltree::fold_vtune(reader, config.limits.max_line_bytes, &mut out).map_err(|e| format!("vtune: {e}"))?;
    let mut decoded = read_folded(&out, config, "vtune")?;
    decoded.graphs[0].name = "cpu time".into();
    decoded.graphs[0].unit = "milliseconds".into();
    Ok(decoded)
}

#[cfg(test)]
mod tests {
    use super::perf_line::EventLine;
    use super::*;
    use crate::config::PerfConfig;

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
    fn each_event_is_a_graph_in_the_order_the_events_first_appear() {
        let text = format!("{PERF}prog 2124 4401.95: 7 instructions:u: \n\t1 f (/p)\n\nprog 2124 4401.96: 7 instructions:u: \n\t1 f (/p)\n");
        // Read whole, and a byte at a time (lines split across reads).
        for d in [
            decode_perf(&mut text.as_bytes(), &Config::default()).unwrap(),
            decode_perf(&mut std::io::BufReader::with_capacity(1, text.as_bytes()), &Config::default()).unwrap(),
        ] {
            assert!(d.warnings.is_empty(), "{:?}", d.warnings);
            let graphs: Vec<(&str, &str, u64)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str(), g.table.grand_total())).collect();
            assert_eq!(graphs, [("cycles", "cycles", 350000), ("instructions", "instructions", 14)]);
            assert_eq!(crate::store::fold::folded_lines(&d.graphs[1].table).concat(), "prog;f 14\n");
            assert_eq!(d.metadata.get("perf events").map(String::as_str), Some("cycles, instructions"));
        }
        // Past MAX_PERF_EVENTS events, the samples of the others are left out and counted.
        let mut many = String::new();
        for e in 0..MAX_PERF_EVENTS + 2 {
            many.push_str(&format!("prog 1 1.{e}: 1 ev{e:02}: \n\t1 f (/p)\n\n"));
        }
        let d = decode_perf(&mut many.as_bytes(), &Config::default()).unwrap();
        assert_eq!(d.graphs.len(), MAX_PERF_EVENTS);
        assert!(d.warnings.iter().any(|w| w.contains("ev16 (1 samples), ev17 (1 samples)")), "{:?}", d.warnings);
    }

    #[test]
    fn sample_lines_without_a_time_field_are_read() {
        // `perf script -F comm,pid,event,ip,sym,dso`: `comm pid event:`, no time, no period.
        let text = "jit 23648 page-faults: \n\tffff81753 elf_load ([kernel.kallsyms])\n\t7fa9 [unknown] ([unknown])\n\n\
            jit 23648 task-clock: \n\t55d0 leaf (/tmp/jit)\n\t55d1 main (/tmp/jit)\n\n\
            jit 23648 task-clock:ppp: \n\t55d0 leaf (/tmp/jit)\n\t55d1 main (/tmp/jit)\n\n";
        assert_eq!(first_perf_event(text.as_bytes()), Some(("page-faults".into(), false)));
        let d = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap();
        let graphs: Vec<(&str, &str)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect();
        assert_eq!(graphs, [("page-faults", "samples"), ("task-clock", "samples")]);
        assert_eq!(crate::store::fold::folded_lines(&d.graphs[1].table).concat(), "jit;main;leaf 2\n");
        // With a period and no time, and with a cpu and a time: the same event and period.
        assert_eq!(first_perf_event(b"prog 2124 250000 cycles:u: \n"), Some(("cycles".into(), true)));
        assert_eq!(first_perf_event(b"V8 Worker 24636/25607 [000] 94564.109216: cycles:\n"), Some(("cycles".into(), false)));
        assert_eq!(first_perf_event(b"java 12688/12764 6544038.708352: 10101 cpu-clock:\n"), Some(("cpu-clock".into(), true)));
    }

    #[test]
    fn sample_lines_of_every_field_set_perf_prints_are_read() {
        // Each shape of a sample's first line beside the same sample printed with every field:
        // the same stacks, weighed alike (tests/formats_text.rs checks real recordings).
        let full = "prog  2124 [001] 4401.9:     250000 cycles:u: \n\t1 leaf (/p)\n\t2 main (/p)\n\n";
        let one_frame = "prog  2124 [001] 4401.9:     250000 cycles:u: \n\t1 leaf (/p)\n\n";
        let expect = |text: &str| folded_of(&decode_perf(&mut text.as_bytes(), &Config::default()).unwrap());
        for (shape, text, like) in [
            ("padded command, no time", "        prog  2124     250000 cycles:u: \n\t1 leaf (/p)\n\t2 main (/p)\n\n", full),
            ("a cpu and a period, no time", "prog  2124 [001]     250000 cycles:u: \n\t1 leaf (/p)\n\t2 main (/p)\n\n", full),
            // A tracepoint's fields follow its name; inferno would take them for a frame.
            ("tracepoint fields", "prog  2124 [001] 4401.9:     250000 cycles:u: prev_comm=x prev_pid=1 \n\t1 leaf (/p)\n\t2 main (/p)\n\n", full),
            ("one line", "        prog  2124 [001] 4401.9:     250000 cycles:u:  1 leaf (/p)\n", one_frame),
            ("one line, no modifiers", "prog  2124 4401.9:     250000 cycles:  1 leaf (/p)\n", one_frame),
            ("one line, period, no event", "        prog  2124     250000   1 leaf (/p)\n", one_frame),
            // perf's `-F +srcline` adds an indented line after the frame.
            ("one line, srcline", "        prog  2124 4401.9:     250000 cycles:  1 leaf (/p)\n  prog[1]\n", one_frame),
        ] {
            assert!(is_perf(text.as_bytes()), "{shape}");
            let twice = format!("{text}{text}");
            let d = decode_perf(&mut twice.as_bytes(), &Config::default()).unwrap();
            let weighed = folded_of(&d);
            assert_eq!(weighed, expect(&format!("{like}{like}")), "{shape}");
            assert!(d.warnings.is_empty(), "{shape}: {:?}", d.warnings);
        }
        // Without an event or a time: `comm tid` alone, and `comm tid` then the frame.
        for (shape, text) in [("comm tid", "prog 2124 \n\t1 leaf (/p)\n\t2 main (/p)\n\n"), ("one line", "   prog 2124   1 leaf (/p)\n   prog 2124   1 leaf (/p)\n")] {
            assert!(is_perf(text.as_bytes()), "{shape}");
            let d = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap();
            assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("samples", "samples"), "{shape}");
            assert_eq!(d.graphs[0].table.grand_total(), if shape == "one line" { 2 } else { 1 }, "{shape}");
        }
        // Frames printed without their module (`-F` without `dso`) are not read by inferno:
        // the error says so and how to print them, with the line.
        for text in ["prog 2124 4401.9: 5 cycles: \n\t1 leaf\n\t2 main\n\n", "  prog 2124 4401.9: 5 cycles:  1 leaf\n"] {
            let e = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap_err();
            assert!(e.contains("a frame without its module") && e.contains("perf script -F +dso"), "{e}");
        }
        // Inside a stack, an unindented line starts a sample only if it names its event.
        let text = "prog 2124 4401.9: 5 cycles: \n\t1 leaf (/p)\nmessage 12 from a tool\n\t2 main (/p)\n\n";
        assert_eq!(expect(text), "prog;main;leaf 5\n");
    }

    /// What inferno's perf folder (the library behind inferno-collapse-perf, with the options
    /// flamesite gives it) prints for `text`, lines sorted.
    fn inferno_folded(text: &str, event: &str) -> String {
        let mut folder = perf::Folder::from(perf_options(&crate::config::PerfConfig::default(), event));
        let mut out = Vec::new();
        folder.collapse(text.as_bytes(), &mut out).unwrap();
        let mut lines: Vec<String> = String::from_utf8(out).unwrap().lines().map(|l| format!("{l}\n")).collect();
        lines.sort();
        lines.concat()
    }

    #[test]
    fn a_line_inside_a_stack_that_is_not_indented_is_read_as_inferno_reads_it() {
        // perf's own messages (addr2line's, BFD's) land inside stacks when stderr goes to the
        // same file: not indented, and not a sample's first line.
        for message in ["addr2line: DWARF error: could not find variable specification at offset 0x1234", "BFD: Dwarf Error: found dwarf version '5'", "Warning:", "unwind: no map"] {
            let text = format!(
                "prog 2124 [001] 4401.9: 250000 cycles: \n\t1 leaf (/p)\n{message}\n\t2 mid (/p)\n\t3 main (/p)\n\n\
                 prog 2124 [001] 4402.0: 250000 cycles: \n\t1 leaf (/p)\n\t3 main (/p)\n\n"
            );
            let d = decode_perf(&mut text.as_bytes(), &Config::default()).unwrap();
            assert_eq!(folded_of(&d), inferno_folded(&text, "cycles"), "{message}");
            assert!(folded_of(&d).contains("prog;main;mid;leaf 250000"), "{message}: {}", folded_of(&d));
            assert!(!d.warnings.iter().any(|w| w.contains("names no event")), "{message}: {:?}", d.warnings);
        }
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
        // A first line that is not a sample's (no thread id after the command).
        let e = decode_perf(&mut "no sample here\n\tabc f (m)\n\n".as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("line 1 does not start a sample"), "{e}");
        // `comm tid period` is perf's `-F comm,tid,period`: a sample of no named event.
        let d = decode_perf(&mut "prog 123 456\n\tabc f (m)\n\n".as_bytes(), &Config::default()).unwrap();
        assert_eq!((d.graphs[0].name.as_str(), folded_of(&d).as_str()), ("period", "prog;f 456\n"));
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

    /// Small shapes and the sniffing, worked out by hand: stacks of DTrace's frames without
    /// their offsets, of each `sample` function's own samples, of each VTune row's own time.
    /// (`inferno-collapse-dtrace`, `-sample` and `-vtune` 0.12.8 print the same for these
    /// texts, which repeat no stack and have no half-mangled Rust names: where inferno differs,
    /// see the tests below.) Real files of the three tools, against FlameGraph's collapsers
    /// (and tests/data/vtune/fold-vtune.py), are in tests/formats_text.rs
    /// `dtrace_sample_and_vtune_files_of_the_real_tools_fold_as_the_reference_collapsers_fold_them`.
    #[test]
    fn dtrace_sample_and_vtune_small_texts_are_recognised_and_folded() {
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

        // Each function's own samples; the thread line names its thread as inferno does
        // (the text before its `)` as a module).
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

        // Each row's own CPU time, in whole milliseconds.
        let vtune = "Function Stack,CPU Time:Self,Module\nTotal,0.0,[Unknown]\n main,0.015,prog\n  foo,0.005,prog\n  bar,0.0101,libbar.so\n";
        assert!(is_vtune(vtune.as_bytes()));
        let d = decode_vtune(&mut vtune.as_bytes(), &Config::default()).unwrap();
        assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("cpu time", "milliseconds"));
        assert_eq!(
            folded_of(&d),
            "[Unknown]`Total;prog`main 15\n[Unknown]`Total;prog`main;libbar.so`bar 10\n[Unknown]`Total;prog`main;prog`foo 5\n"
        );
    }

    /// What inferno's own folder (the library behind its command) prints for `text`.
    fn inferno_prints(folder: &mut impl Collapse, text: &str) -> String {
        let mut out = Vec::new();
        folder.collapse(text.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_sample_path_listed_at_two_call_sites_adds_up() {
        // `main` calls `work` from two call sites (`+ 10`, `+ 30`): `sample` lists the path
        // twice, with 3 and 4 samples; folded by name it is one stack of 7. `main` has 2
        // samples of its own (10 less its callees' 8); `idle`'s one is in a waiting symbol.
        let sample = [
            "Analysis of sampling prog (pid 1) every 1 millisecond",
            "",
            "Call graph:",
            "    10 Thread_1",
            "    + 10 main  (in prog) + 5  [0x1]",
            "    +   3 work  (in prog) + 10  [0x2]",
            "    +   ! 3 leaf  (in libleaf.dylib) + 1  [0x3]",
            "    +   4 work  (in prog) + 30  [0x4]",
            "    +   : 4 leaf  (in libleaf.dylib) + 1  [0x3]",
            "    +   1 idle  (in prog) + 2  [0x5]",
            "    +     1 __ulock_wait  (in libsystem_kernel.dylib) + 10  [0x6]",
            "",
            "Total number in stack (recursive counted multiple times):",
            "        10       main  (in prog) + 5  [0x1]",
            "",
        ]
        .join("\n");
        assert!(is_sample(sample.as_bytes()));
        let d = decode_sample(&mut sample.as_bytes(), &Config::default()).unwrap();
        assert_eq!(folded_of(&d), "Thread_1;prog`main 2\nThread_1;prog`main;prog`work;libleaf`leaf 7\n");
        // inferno 0.12's folder keeps the last count of the path only, and callers' own samples
        // not at all: why flamesite reads `sample`'s call graph itself.
        assert_eq!(inferno_prints(&mut sample::Folder::default(), &sample), "Thread_1;prog`main;prog`work;libleaf`leaf 4\n");

        // A graph cut before its end, a skipped level and a line without its indentation are errors.
        let cut = &sample[..sample.find("\nTotal").unwrap()];
        let e = decode_sample(&mut cut.as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("ended before the end of the call graph"), "{e}");
        let skipped = sample.replace("    +   ! 3 leaf", "    +     ! 3 leaf");
        let e = decode_sample(&mut skipped.as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("line 7: an indentation level skipped"), "{e}");
        let e = decode_sample(&mut sample.replace("    + 10 main", "+ 10 main").as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("line 5: a call graph line that does not start with 4 spaces"), "{e}");
    }

    #[test]
    fn a_vtune_stack_reached_twice_adds_up() {
        let vtune = "Function Stack,CPU Time:Self,Module\nTotal,0.0,[Unknown]\n main,0.002,prog\n  work,0.003,prog\n  \"f(a, \"\"b\"\")\",0.001,prog\n  work,0.004,prog\n";
        assert!(is_vtune(vtune.as_bytes()));
        let d = decode_vtune(&mut vtune.as_bytes(), &Config::default()).unwrap();
        assert_eq!(
            folded_of(&d),
            "[Unknown]`Total;prog`main 2\n[Unknown]`Total;prog`main;prog`f(a, \"b\") 1\n[Unknown]`Total;prog`main;prog`work 7\n"
        );
        // inferno 0.12's folder keeps the last time of `work` only.
        assert!(inferno_prints(&mut vtune::Folder::default(), vtune).contains("[Unknown]`Total;prog`main;prog`work 4\n"));
        let e = decode_vtune(&mut vtune.replace("0.004", "inf").as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("line 6: not a CPU time in seconds: inf"), "{e}");
        let e = decode_vtune(&mut vtune.replace(" main", "   main").as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("line 3: an indentation level skipped"), "{e}");
    }

    #[test]
    fn rust_legacy_symbols_lose_the_underscore_before_an_escape_in_every_path_element() {
        use super::calltree::{demangle_rust, drop_escape_underscores};
        for (mangled, demangled) in [
            (
                "rg::search_parallel::_$u7b$$u7b$closure$u7d$$u7d$::_$u7b$$u7b$closure$u7d$$u7d$::h6e849b55a66fcd85",
                "rg::search_parallel::{{closure}}::{{closure}}",
            ),
            ("_$u7b$$u7b$closure$u7d$$u7d$::h6e849b55a66fcd85", "{{closure}}"),
            (
                "_$LT$grep_searcher..searcher..glue..ReadByLine$LT$$u27$s$C$$u20$M$C$$u20$R$C$$u20$S$GT$$GT$::run::h30ecedc997ad7e32",
                "<grep_searcher::searcher::glue::ReadByLine<'s, M, R, S>>::run",
            ),
            ("_$LT$$RF$std..fs..File$u20$as$u20$std..io..Read$GT$::read::h5d84059cf335c8e6", "<&std::fs::File as std::io::Read>::read"),
            // Names that merely hold an underscore keep it.
            ("std::fs::OpenOptions::_open::h1cd1c180d181e2f5", "std::fs::OpenOptions::_open"),
            ("std::sys_common::backtrace::__rust_begin_short_backtrace::h71644e3bf9e2bb80", "std::sys_common::backtrace::__rust_begin_short_backtrace"),
            ("_readdir_unlocked$INODE64", "_readdir_unlocked$INODE64"),
            ("__rust_maybe_catch_panic", "__rust_maybe_catch_panic"),
            // Without a hash it is not a Rust symbol: left as it is.
            ("a::_$u7b$$u7b$closure$u7d$$u7d$", "a::_$u7b$$u7b$closure$u7d$$u7d$"),
            ("ééééééééééééééééééé", "ééééééééééééééééééé"),
        ] {
            assert_eq!(demangle_rust(mangled), demangled, "{mangled}");
        }
        let mut folded = b"m`a::_{{closure}};m`b::_open;c::__{{x}};_{{y}} 1\nm`d::_{{closure}}::_{{closure}} 2\n".to_vec();
        drop_escape_underscores(&mut folded);
        assert_eq!(String::from_utf8(folded).unwrap(), "m`a::{{closure}};m`b::_open;c::__{{x}};_{{y}} 1\nm`d::{{closure}}::{{closure}} 2\n");

        // DTrace and perf, whose frames inferno demangles: inferno keeps the `_` inside the path.
        let closure = "crucible::recv_task::_$u7b$$u7b$closure$u7d$$u7d$::h2313d0ca35c97b46";
        let dtrace = format!("\n\n              prog`{closure}\n              prog`main+0x10\n                3\n");
        assert!(inferno_prints(&mut dtrace::Folder::default(), &dtrace).contains("recv_task::_{{closure}}"));
        let d = decode_dtrace(&mut dtrace.as_bytes(), &Config::default()).unwrap();
        assert_eq!(folded_of(&d), "prog`main;prog`crucible::recv_task::{{closure}} 3\n");
        let perf = format!("prog 2124 4401.9: 5 cycles: \n\t1 {closure}+0x9 (/p)\n\t2 main+0x10 (/p)\n\n");
        assert!(inferno_folded(&perf, "cycles").contains("recv_task::_{{closure}}"));
        let d = decode_perf(&mut perf.as_bytes(), &Config::default()).unwrap();
        assert_eq!(folded_of(&d), "prog;main;crucible::recv_task::{{closure}} 5\n");
    }

    /// `decode_perf` of `text` with the `[perf]` options `p`: each graph's name and folded stacks.
    fn perf_graphs(text: &str, p: &PerfConfig) -> Vec<(String, String)> {
        let mut c = Config::default();
        c.perf = p.clone();
        let d = decode_perf(&mut text.as_bytes(), &c).unwrap();
        d.graphs.iter().map(|g| (g.name.clone(), crate::store::fold::folded_lines(&g.table).concat())).collect()
    }

    #[test]
    fn a_command_holding_numbers_is_read_whole() {
        // Thread names as applications set them (tests/formats_text.rs checks real recordings).
        for (line, comm, period) in [
            ("Pool Worker 7  4237 12546.353050:    2004008 cpu-clock:ppp: ", "Pool Worker 7", Some(2004008)),
            ("FS Broker 5906  4238 [001] 12546.353050:    2004008 cpu-clock:ppp: ", "FS Broker 5906", Some(2004008)),
            ("Worker 3  4234/4236  12546.353050:    2004008 cpu-clock:ppp: ", "Worker 3", Some(2004008)),
            ("        Worker 3  4236 [000] 12549.4: sched:sched_switch: prev_comm=Worker 3 prev_pid=4236 prev_prio=120", "Worker 3", None),
            ("  FS Broker 5906  4238 12546.3:    2004008 cpu-clock:  55d0 broker+0x9 (/tmp/threads)", "FS Broker 5906", Some(2004008)),
            // Without a time, a cpu or an event: a period and a frame, the frame alone.
            ("        Worker 3  4236    2004008   55d0 f (/p)", "Worker 3", Some(2004008)),
            ("        3 2 1  4236    2004008   55d0 f (/p)", "3 2 1", Some(2004008)),
            // A command that is a number, and a number word at the end of the longest command.
            ("1234  4236 12546.3: 5 cycles: ", "1234", Some(5)),
            ("a b c d e f g 7  4236 12546.3: 5 cycles: ", "a b c d e f g 7", Some(5)),
            (":-1    -1 [001] 12546.3:     250000 cycles: ", ":-1", Some(250000)),
            ("             :-1 -1/-1   [001] 12546.3:     250000 cycles:  1 f (/p)", ":-1", Some(250000)),
        ] {
            let head = EventLine::read(line).unwrap_or_else(|| panic!("{line}"));
            assert!(head.fields, "{line}");
            assert_eq!((line[..head.id_at].trim(), head.period), (comm, period), "{line}");
        }
        // Without a time or a cpu, a number ending the command reads two ways; the first is
        // taken (the thread 3 of `Worker`, its period 4236).
        let head = EventLine::read("Worker 3  4236 cycles: ").unwrap();
        assert_eq!((&"Worker 3  4236 cycles: "[..head.id_at], head.period), ("Worker ", Some(4236)));
        // A line that reads as no field set perf prints takes the first number, as before.
        let head = EventLine::read("message 12 from a tool").unwrap();
        assert!(!head.fields && head.event.is_empty());
        // A command longer than perf prints (15 bytes) does not hide the id before it.
        let head = EventLine::read("prog 2124 2026-11-28 10:15:00.5 250000 cycles: ").unwrap();
        assert_eq!(&"prog 2124 "[..head.id_at], "prog ");

        let text = "Pool Worker 7  4237 12546.35:    2004008 cpu-clock:ppp: \n\t1 leaf (/p)\n\t2 run (/p)\n\n\
                    FS Broker 5906  4234/4238 12546.36:    1000000 cpu-clock:ppp: \n\t1 leaf (/p)\n\n\
                    \x20       Worker 3  4236 12546.37:    3000000 cpu-clock:ppp:  1 leaf (/p)\n";
        assert!(is_perf(text.as_bytes()));
        assert_eq!(first_perf_event(text.as_bytes()), Some(("cpu-clock".into(), true)));
        let graphs = perf_graphs(text, &PerfConfig::default());
        let expected = "FS_Broker_5906;leaf 1000000\nPool_Worker_7;run;leaf 2004008\nWorker_3;leaf 3000000\n";
        assert_eq!(graphs, [("cpu-clock".to_string(), expected.to_string())]);
        // What inferno prints once each name is one word, and what it prints as it is: a root
        // frame cut at the name's number.
        let joined = text.replace("Pool Worker 7", "Pool_Worker_7").replace("FS Broker 5906", "FS_Broker_5906").replace("Worker 3", "Worker_3");
        let mut as_is = joined.clone();
        as_is.truncate(as_is.find("\x20       Worker_3").unwrap());
        assert_eq!(inferno_folded(&as_is, "cpu-clock"), "FS_Broker_5906;leaf 1000000\nPool_Worker_7;run;leaf 2004008\n");
        assert!(inferno_folded(&text[..text.find("\x20       Worker").unwrap()], "cpu-clock").contains("Pool_Worker;run;leaf"));
        let p = PerfConfig { include_tid: true, ..PerfConfig::default() };
        let graphs = perf_graphs(text, &p);
        assert!(graphs[0].1.contains("FS_Broker_5906-4234/4238;leaf 1000000\n") && graphs[0].1.contains("Pool_Worker_7-?/4237;run;leaf"), "{graphs:?}");
    }

    #[test]
    fn a_thread_id_of_minus_one_is_read_and_named() {
        let text = ":-1    -1 [001] 1234.567890:     250000 cycles: \n\t1 exit (/k)\n\n\
                    prog  2124 [001] 1234.6:     100000 cycles: \n\t1 main (/p)\n\n\
                    :-1 -1/-1 [000] 1234.7:     250000 cycles: \n\t1 exit (/k)\n\n";
        assert!(is_perf(text.as_bytes()));
        for (p, exited) in [
            (PerfConfig::default(), ":-1;exit 500000\n"),
            (PerfConfig { include_pid: true, ..PerfConfig::default() }, ":-1--1;exit 250000\n:-1-?;exit 250000\n"),
            (PerfConfig { include_tid: true, ..PerfConfig::default() }, ":-1--1/-1;exit 250000\n:-1-?/-1;exit 250000\n"),
        ] {
            let graphs = perf_graphs(text, &p);
            let prog = if p.include_tid { "prog-?/2124" } else if p.include_pid { "prog-?" } else { "prog" };
            assert_eq!(graphs, [("cycles".to_string(), format!("{exited}{prog};main 100000\n"))], "{p:?}");
        }
    }

    #[test]
    fn samples_without_frames_count_under_their_command() {
        // A tracepoint recorded without -g: one line a sample, no blank line between them.
        let text = "         threads  9769 [000] 12756.269156: sched:sched_switch: prev_comm=threads prev_pid=9769 prev_prio=120 prev_state=S ==> next_comm=Worker 3 next_pid=9771 next_prio=120\n\
                    \x20       Worker 3  9771 [000] 12756.269863: sched:sched_switch: prev_comm=Worker 3 prev_pid=9771 prev_prio=120 prev_state=R ==> next_comm=threads next_pid=9769 next_prio=120\n\
                    \x20       Worker 3  9771 [001] 12756.270001: sched:sched_switch: prev_comm=Worker 3 prev_pid=9771 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n";
        assert!(is_perf(text.as_bytes()));
        assert_eq!(perf_graphs(text, &PerfConfig::default()), [("samples".to_string(), "Worker_3 2\nthreads 1\n".to_string())]);
        let p = PerfConfig { include_tid: true, ..PerfConfig::default() };
        assert_eq!(perf_graphs(text, &p)[0].1, "Worker_3-?/9771 2\nthreads-?/9769 1\n");
        // stackcollapse-perf.pl counts a sample that a blank line ends; inferno leaves it out
        // (and would take the next sample's line for a frame).
        let blank = text.replace("120\n", "120\n\n");
        assert_eq!(inferno_folded(&blank, "sched"), "");
        assert_eq!(perf_graphs(&blank, &PerfConfig::default())[0].1, "Worker_3 2\nthreads 1\n");
        // Beside samples with frames, weighed by their period.
        let mixed = "prog 2124 1.0: 250000 cycles: \n\t1 f (/p)\n\nprog 2124 1.1: 100000 cycles: \n\nprog 2124 1.2: 7 cycles: \nprog 2124 1.3: 5 cycles: \n\t1 f (/p)\n\n";
        assert_eq!(perf_graphs(mixed, &PerfConfig::default()), [("cycles".to_string(), "prog 100007\nprog;f 250005\n".to_string())]);
        // A first line that ends the text after samples with stacks is a sample cut before its
        // stack: left out, as both collapsers leave it.
        let cut = "prog 2124 1.0: 250000 cycles: \n\t1 f (/p)\n\nprog 2124 1.1: 100000 cycles: \n";
        assert_eq!(perf_graphs(cut, &PerfConfig::default())[0].1, "prog;f 250000\n");
    }
}
