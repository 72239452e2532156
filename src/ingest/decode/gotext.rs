//! Go's text count profiles, as `/debug/pprof/goroutine?debug=1` and `threadcreate?debug=1`
//! serve them (`runtime/pprof`'s `WriteTo(w, 1)`): a first line `NAME profile: total N`,
//! then one record per stack, `COUNT @ 0xPC 0xPC …`, followed by a line per frame,
//! `#\t0xPC\tFUNCTION+0xOFFSET\tFILE:LINE` (leaf first; Go leaves out the runtime's frames at
//! the leaf and `runtime.goexit`), and a blank line.
//!
//! One graph, named after the profile (`goroutine`, `threadcreate`), unit `count`, as the
//! protobuf form of the same profile gives (pprof's sample type). A frame is its function's
//! name, as pprof's reader names it. A record without frame lines (a profile written without
//! symbols, as google/pprof's test data has them) is read from its addresses, each less one
//! (the call, not the return address, as pprof reads legacy profiles), named `0x…`; a record
//! without addresses (Go's threadcreate profile has had none for years) counts under one frame,
//! `[unknown]`, as pprof's reader counts a sample without locations, with a warning. `# labels:` lines are passed over. A total that the records do not add up
//! to is said in a warning.
//!
//! Go's other text profiles (heap, allocs, mutex, block at debug=1) are refused by name
//! ([`super::foreign`]).

use std::collections::BTreeMap;
use std::io::{BufRead, Read};

use super::{Compression, Decoded, Graph};
use crate::config::Config;
use crate::graph::frames::StackMerger;

/// The profile's name and stated total, if `line` is a count profile's first line
/// (`goroutine profile: total 6`).
fn header(line: &str) -> Option<(&str, u64)> {
    let (name, total) = line.trim_end().split_once(" profile: total ")?;
    let total = total.parse().ok()?;
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')).then_some((name, total))
}

/// Whether the start of a file is a Go text count profile.
pub fn is_applicable(sniff: &[u8]) -> bool {
    let first = sniff.split(|&b| b == b'\n').next().unwrap_or_default();
    std::str::from_utf8(first).ok().and_then(header).is_some()
}

/// One record being read: its count, its addresses, and its frames' names, leaf first.
struct Record {
    count: u64,
    pcs: Vec<u64>,
    names: Vec<String>,
    line: u64,
}

/// Reads a Go text count profile.
pub fn decode(reader: &mut dyn BufRead, config: &Config) -> Result<Decoded, String> {
    let limits = &config.limits;
    let mut buf = Vec::new();
    // The next line into `buf` (without its end); false at the end of the file.
    let mut next_line = |buf: &mut Vec<u8>, n: u64| -> Result<bool, String> {
        buf.clear();
        let read = (&mut *reader).take(limits.max_line_bytes + 1).read_until(b'\n', buf).map_err(|e| format!("Go text profile: {e}"))?;
        if read as u64 > limits.max_line_bytes {
            return Err(format!("Go text profile: line {n} is longer than limits.max_line_bytes ({})", limits.max_line_bytes));
        }
        while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
            buf.pop();
        }
        Ok(read > 0)
    };
    if !next_line(&mut buf, 1)? {
        return Err("Go text profile: empty".into());
    }
    let (name, stated) = {
        let text = String::from_utf8_lossy(&buf).into_owned();
        let (name, total) = header(&text).ok_or("Go text profile: the first line is not `NAME profile: total N`")?;
        (name.to_string(), total)
    };
    let mut merger = StackMerger::new(false, limits.max_depth);
    let mut warnings = Vec::new();
    let mut record: Option<Record> = None;
    let mut total = 0u64;
    let mut stacks = 0u64;
    let mut empty = 0u64;
    let mut flush = |r: Record, merger: &mut StackMerger| -> Result<(), String> {
        // No address (Go's threadcreate profile has had none for years): one frame,
        // `[unknown]`, as pprof's reader counts a sample without locations.
        let names: Vec<String> = if r.pcs.is_empty() {
            empty = empty.saturating_add(r.count);
            vec!["[unknown]".to_string()]
        } else if r.names.is_empty() {
            r.pcs.iter().map(|pc| format!("{:#x}", pc.saturating_sub(1))).collect()
        } else {
            r.names
        };
        let root_first: Vec<&str> = names.iter().rev().map(String::as_str).collect();
        merger.add_names(&root_first, r.count, 0).map_err(|e| format!("Go text profile: line {}: {e}", r.line))?;
        total = total.saturating_add(r.count);
        stacks += 1;
        Ok(())
    };
    let mut n = 1u64;
    while next_line(&mut buf, n + 1)? {
        n += 1;
        let text = String::from_utf8_lossy(&buf).into_owned();
        let text = text.as_str();
        if text.trim().is_empty() {
            if let Some(r) = record.take() {
                flush(r, &mut merger)?;
            }
            continue;
        }
        if let Some(rest) = text.strip_prefix('#') {
            let Some(r) = record.as_mut() else {
                return Err(format!("Go text profile: line {n}: a frame line outside a record"));
            };
            if r.pcs.is_empty() {
                continue;
            }
            let fields: Vec<&str> = rest.split('\t').filter(|f| !f.is_empty()).collect();
            match fields.as_slice() {
                [pc, function, ..] if pc.starts_with("0x") => {
                    let function = function.rsplit_once("+0x").map_or(*function, |(f, _)| f);
                    r.names.push(super::cpuprofile::clean(function));
                }
                [pc] if pc.starts_with("0x") => {
                    let at = u64::from_str_radix(&pc[2..], 16).map_err(|_| format!("Go text profile: line {n}: `{pc}` is not an address"))?;
                    r.names.push(format!("{:#x}", at.saturating_sub(1)));
                }
                // `# labels: {…}`, and other comments.
                _ => {}
            }
            continue;
        }
        // A record: `COUNT @ 0xPC …`.
        if let Some(r) = record.take() {
            flush(r, &mut merger)?;
        }
        let (count, pcs) = text.split_once(" @").ok_or_else(|| format!("Go text profile: line {n}: not `COUNT @ 0xPC …`: {:?}", text.chars().take(40).collect::<String>()))?;
        let count: u64 = count.trim().parse().map_err(|_| format!("Go text profile: line {n}: `{}` is not a count", count.trim()))?;
        let pcs = pcs
            .split_whitespace()
            .map(|pc| pc.strip_prefix("0x").and_then(|h| u64::from_str_radix(h, 16).ok()).ok_or_else(|| format!("Go text profile: line {n}: `{pc}` is not an address")))
            .collect::<Result<Vec<u64>, String>>()?;
        record = Some(Record { count, pcs, names: Vec::new(), line: n });
    }
    if let Some(r) = record.take() {
        flush(r, &mut merger)?;
    }
    if stacks == 0 {
        return Err(format!("Go text profile: `{name} profile: total {stated}` with no records"));
    }
    if empty > 0 {
        warnings.push(format!("Go text profile: {empty} of {total} with no stack (records without addresses), counted under [unknown]"));
    }
    if total != stated {
        warnings.push(format!("Go text profile: the records add up to {total}, the first line says total {stated}"));
    }
    let table = merger.finish().map_err(|e| format!("Go text profile: {e}"))?;
    let mut metadata = BTreeMap::new();
    metadata.insert("total".to_string(), stated.to_string());
    Ok(Decoded { format: "go-text", compression: Compression::None, graphs: vec![Graph { name, unit: "count".into(), table, timeline: false }], warnings, metadata })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_count_profiles_only() {
        assert!(is_applicable(b"goroutine profile: total 6\n1 @ 0x1\n"));
        assert!(is_applicable(b"threadcreate profile: total 7\n"));
        assert!(!is_applicable(b"heap profile: 1: 2 [3: 4] @ heap/1048576\n"));
        assert!(!is_applicable(b"main;f 1\n"));
    }

    #[test]
    fn frames_come_from_the_frame_lines_root_first_and_addresses_without_them() {
        let text = "goroutine profile: total 3\n2 @ 0x43a0d6 0x4a0c05 0x4a0c27 0x46a161\n# labels: {\"k\":\"v\"}\n#\t0x4a0c04\tmain.leaf+0x24\t\t/tmp/g/main.go:9\n#\t0x4a0c26\tmain.mid+0x26\t\t/tmp/g/main.go:10\n\n1 @ 0x44cb3 0x440e2\n\n";
        let d = decode(&mut text.as_bytes(), &Config::default()).unwrap();
        assert_eq!((d.graphs[0].name.as_str(), d.graphs[0].unit.as_str()), ("goroutine", "count"));
        let mut lines = crate::store::fold::folded_lines(&d.graphs[0].table);
        lines.sort();
        assert_eq!(lines, ["0x440e1;0x44cb2 1\n", "main.mid;main.leaf 2\n"]);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn a_wrong_total_is_said_and_a_bad_line_named() {
        let d = decode(&mut "goroutine profile: total 5\n1 @ 0x10\n".as_bytes(), &Config::default()).unwrap();
        assert!(d.warnings[0].contains("add up to 1"), "{:?}", d.warnings);
        let e = decode(&mut "goroutine profile: total 1\n1 @ zz\n".as_bytes(), &Config::default()).unwrap_err();
        assert!(e.contains("line 2") && e.contains("zz"), "{e}");
    }
}
