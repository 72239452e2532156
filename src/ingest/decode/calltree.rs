//! The call trees of macOS `sample` reports and of VTune CSV exports, folded here instead of by
//! inferno 0.12's `sample` and `vtune` folders: those store each occurrence of a stack over the
//! previous one (`Occurrences::insert`) instead of adding to it, so a function path listed more
//! than once keeps only its last count. `sample` lists a path once per call site (three calls of
//! one function from one caller are three subtrees of equal names), so the counts of all but
//! the last were lost (tests/data/sample/README.md). Frames are named as inferno names them;
//! the folded text written here is read by [`super::folded::decode`], which adds up equal stacks.
//!
//! Also Rust's legacy demangling, for the symbols `sample` leaves half-mangled (see
//! [`demangle_rust`]).

use std::borrow::Cow;
use std::io::{BufRead, Read, Write};

/// The symbols of waiting threads that `sample` reports leave out (a thread's samples in them
/// are time spent waiting, not running): inferno's list, which is stackcollapse-sample.awk's.
const WAITING: &[&str] = &[
    "__psynch_cvwait",
    "__select",
    "__semwait_signal",
    "__ulock_wait",
    "__wait4",
    "__workq_kernreturn",
    "kevent",
    "mach_msg_trap",
    "read",
    "semaphore_wait_trap",
];

/// Reads `reader` line by line, each at most `max_line` bytes, the line without its end.
struct Lines<'a> {
    reader: &'a mut dyn BufRead,
    max_line: u64,
    buf: Vec<u8>,
    number: u64,
}

impl<'a> Lines<'a> {
    /// Reads up to and including the first line that starts with `header`; false when there
    /// is none.
    fn skip_past(&mut self, header: &str) -> Result<bool, String> {
        while let Some(l) = self.next()? {
            if l.starts_with(header) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn new(reader: &'a mut dyn BufRead, max_line: u64) -> Self {
        Lines { reader, max_line, buf: Vec::with_capacity(256), number: 0 }
    }

    /// The next line without its end and trailing blanks, or None at the end of the stream.
    fn next(&mut self) -> Result<Option<Cow<'_, str>>, String> {
        self.buf.clear();
        let n = (&mut *self.reader).take(self.max_line + 1).read_until(b'\n', &mut self.buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        if self.buf.len() as u64 > self.max_line {
            return Err(format!("line {} is longer than limits.max_line_bytes ({} bytes)", self.number, self.max_line));
        }
        Ok(Some(match String::from_utf8_lossy(&self.buf) {
            Cow::Borrowed(s) => Cow::Borrowed(s.trim_end()),
            Cow::Owned(s) => Cow::Owned(s.trim_end().to_string()),
        }))
    }
}

/// One function of the call graph being read: its frame, its samples (its callees' included),
/// the samples of the callees read so far, and whether it is a waiting symbol.
struct Node {
    frame: String,
    samples: u64,
    callees: u64,
    waiting: bool,
}

/// Folds the call graph of a macOS `sample` report into `out`: every function with samples of
/// its own (its count less its callees') is a stack of that many samples, unless it is one of
/// the waiting symbols. Equal stacks are written as often as they occur, each with its own
/// count. The lines before `Call graph:` are the report's header; the graph ends at `Total
/// number in stack`. A report without a call graph writes nothing.
pub(super) fn fold_sample(reader: &mut dyn BufRead, max_line: u64, out: &mut Vec<u8>) -> Result<(), String> {
    let mut lines = Lines::new(reader, max_line);
    if !lines.skip_past("Call graph:")? {
        return Ok(());
    }
    let mut stack: Vec<Node> = Vec::new();
    loop {
        let number = lines.number + 1;
        let Some(line) = lines.next()? else {
            return Err("the file ended before the end of the call graph (`Total number in stack`)".into());
        };
        if line.is_empty() {
            continue;
        }
        if line.starts_with("Total number in stack") {
            break;
        }
        let Some(rest) = line.strip_prefix("    ") else {
            return Err(format!("line {number}: a call graph line that does not start with 4 spaces: {line}"));
        };
        // `+ ! : |` and spaces mark the depth, two characters a level.
        let Some(indent) = rest.find(|c| !matches!(c, ' ' | '+' | '|' | ':' | '!')) else {
            return Err(format!("line {number}: a call graph line of indentation only"));
        };
        if indent % 2 != 0 {
            return Err(format!("line {number}: an odd number of indentation characters: {line}"));
        }
        let depth = indent / 2 + 1;
        if depth > stack.len() + 1 {
            return Err(format!("line {number}: an indentation level skipped: {line}"));
        }
        while stack.len() >= depth {
            pop(&mut stack, out);
        }
        let Some((samples, function, module)) = sample_parts(&rest[indent..]) else {
            return Err(format!("line {number}: not a call graph line (samples, then the function): {line}"));
        };
        let Ok(samples) = samples.parse::<u64>() else {
            return Err(format!("line {number}: not a number of samples: {samples}"));
        };
        if let Some(caller) = stack.last_mut() {
            caller.callees = caller.callees.saturating_add(samples);
        }
        // `sample` does not demangle Rust's legacy symbols (`_$LT$...$GT$::run::h30ecedc997ad7e32`).
        let function = demangle_rust(function);
        let waiting = WAITING.contains(&&*function);
        let frame = if module.is_empty() { function.into_owned() } else { format!("{module}`{function}") };
        stack.push(Node { frame, samples, callees: 0, waiting });
    }
    while !stack.is_empty() {
        pop(&mut stack, out);
    }
    Ok(())
}

/// Ends the innermost function of `stack`, writing its own samples as a stack.
fn pop(stack: &mut Vec<Node>, out: &mut Vec<u8>) {
    let Some(last) = stack.last() else { return };
    let own = last.samples.saturating_sub(last.callees);
    if own > 0 && !last.waiting {
        for (i, node) in stack.iter().enumerate() {
            if i > 0 {
                out.push(b';');
            }
            out.extend_from_slice(node.frame.as_bytes());
        }
        // Writing to a Vec cannot fail.
        let _ = writeln!(out, " {own}");
    }
    stack.pop();
}

/// A call graph line without its indentation, as inferno reads it: `samples function  (in
/// module) + offset  [address]`. The function ends at the first `(`; the module is what the
/// last `(in ` holds up to the `)`, without `.dylib`, and empty when there is none.
fn sample_parts(line: &str) -> Option<(&str, &str, &str)> {
    let (samples, rest) = line.trim_start().split_once(' ')?;
    let function = rest[..rest.find('(').unwrap_or(rest.len())].trim_end();
    let after = rest.rsplit("(in ").next().unwrap_or(rest);
    let module = after.find(')').map_or("", |close| &after[..close]);
    Some((samples.trim_end(), function, module.strip_suffix(".dylib").unwrap_or(module)))
}

/// Folds a VTune top-down CSV export (`Function Stack,CPU Time:Self,Module`) into `out`: each
/// row is a node of the call tree, one space deeper than its parent, with its own CPU time in
/// seconds; a node with time is a stack of `module`function` frames weighed by that time in
/// whole milliseconds (rounded), as inferno weighs it. Equal stacks (the same path reached
/// twice) are each written with their own time. A file without the header writes nothing.
pub(super) fn fold_vtune(reader: &mut dyn BufRead, max_line: u64, out: &mut Vec<u8>) -> Result<(), String> {
    let mut lines = Lines::new(reader, max_line);
    if !lines.skip_past("Function Stack,CPU Time:Self,Module")? {
        return Ok(());
    }
    let mut stack: Vec<String> = Vec::new();
    loop {
        let number = lines.number + 1;
        let Some(line) = lines.next()? else { break };
        if line.is_empty() {
            continue;
        }
        let spaces = line.len() - line.trim_start_matches(' ').len();
        if spaces > stack.len() {
            return Err(format!("line {number}: an indentation level skipped: {line}"));
        }
        stack.truncate(spaces);
        let Some((function, seconds, module)) = vtune_parts(&line[spaces..]) else {
            return Err(format!("line {number}: not a row of function, CPU time and module: {line}"));
        };
        let milliseconds = match seconds.parse::<f64>() {
            Ok(s) if s.is_finite() => (s * 1000.0).round(),
            _ => return Err(format!("line {number}: not a CPU time in seconds: {seconds}")),
        };
        stack.push(if module.is_empty() { function.into_owned() } else { format!("{module}`{function}") });
        // Negative times count nothing, as in inferno (its cast to u64 makes them 0).
        if milliseconds >= 1.0 {
            out.extend_from_slice(stack.join(";").as_bytes());
            let _ = writeln!(out, " {}", milliseconds as u64);
        }
    }
    Ok(())
}

/// A VTune row without its indentation: the function (in double quotes when it holds a comma,
/// `""` for a quote), its CPU time, and its module (the rest of the row).
fn vtune_parts(row: &str) -> Option<(Cow<'_, str>, &str, &str)> {
    let (function, rest) = match row.strip_prefix('"') {
        Some(quoted) => {
            let mut name = String::new();
            let mut rest = quoted;
            loop {
                let at = rest.find('"')?;
                name.push_str(&rest[..at]);
                rest = &rest[at + 1..];
                match rest.strip_prefix('"') {
                    Some(more) => {
                        name.push('"');
                        rest = more;
                    }
                    None => break,
                }
            }
            (Cow::Owned(name), rest.strip_prefix(',')?)
        }
        None => {
            let (name, rest) = row.split_once(',')?;
            (Cow::Borrowed(name), rest)
        }
    };
    let (seconds, module) = rest.split_once(',')?;
    Some((function, seconds, module))
}

/// Finishes the demangling of a Rust symbol in the legacy mangling that a profiler left
/// half-done (`_$LT$std..fs..ReadDir$u20$as$u20$core..iter..Iterator$GT$::next::hc14f1750ca79129b`),
/// by rustc-demangle's rules (src/legacy.rs): the hash (`::h` and 16 hex digits) is dropped,
/// each path element loses the `_` the mangler puts before a leading `$` escape, `..` is `::`,
/// and `$SP$ $BP$ $RF$ $LT$ $GT$ $LP$ $RP$ $C$ $uXX$` are `@ * & < > ( ) ,` and the character
/// XX. A symbol without such a hash is returned as it is.
pub(super) fn demangle_rust(symbol: &str) -> Cow<'_, str> {
    let b = symbol.as_bytes();
    let n = b.len();
    if n < 20 || &b[n - 19..n - 16] != b"::h" || !b[n - 16..].iter().all(u8::is_ascii_hexdigit) {
        return Cow::Borrowed(symbol);
    }
    // The byte before `::h` ends a character: the hash is ASCII.
    let path = &symbol[..n - 19];
    let mut out = String::with_capacity(path.len());
    for (i, element) in path.split("::").enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        let mut rest = element.strip_prefix('_').filter(|e| e.starts_with('$')).unwrap_or(element);
        while let Some(at) = rest.find(['$', '.']) {
            out.push_str(&rest[..at]);
            rest = &rest[at..];
            if let Some(after) = rest.strip_prefix("..") {
                out.push_str("::");
                rest = after;
            } else if let Some(after) = rest.strip_prefix('.') {
                out.push('.');
                rest = after;
            } else {
                let escape = rest[1..].find('$').and_then(|end| Some((unescape(&rest[1..1 + end])?, end)));
                match escape {
                    Some((c, end)) => {
                        out.push(c);
                        rest = &rest[end + 2..];
                    }
                    None => {
                        out.push('$');
                        rest = &rest[1..];
                    }
                }
            }
        }
        out.push_str(rest);
    }
    Cow::Owned(out)
}

/// The character of a legacy mangling escape, the text between its `$`s.
fn unescape(code: &str) -> Option<char> {
    Some(match code {
        "SP" => '@',
        "BP" => '*',
        "RF" => '&',
        "LT" => '<',
        "GT" => '>',
        "LP" => '(',
        "RP" => ')',
        "C" => ',',
        _ => {
            let hex = code.strip_prefix('u')?;
            if hex.is_empty() || hex.len() > 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
        }
    })
}

/// Drops, in folded stacks that inferno demangled, the `_` that Rust's legacy mangling puts
/// before a path element starting with an escape, where inferno keeps it: it drops it only at
/// the start of the whole symbol, so `recv_task::_$u7b$$u7b$closure$u7d$$u7d$::h…` reads
/// `recv_task::_{{closure}}` where rustc-demangle, and DTrace for the symbols it demangles,
/// give `recv_task::{{closure}}`. Only `::_{{` is changed: no identifier holds a `{`, so the
/// `_` there is the mangler's, never part of a name.
pub(super) fn drop_escape_underscores(folded: &mut Vec<u8>) {
    const MARK: &[u8] = b"::_{{";
    let Some(first) = folded.windows(MARK.len()).position(|w| w == MARK) else { return };
    let mut write = first;
    let mut read = first;
    while read < folded.len() {
        if folded[read..].starts_with(MARK) {
            folded.copy_within(read..read + 2, write);
            write += 2;
            read += 3;
        } else {
            folded[write] = folded[read];
            write += 1;
            read += 1;
        }
    }
    folded.truncate(write);
}
