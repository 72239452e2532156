//! Brendan Gregg's folded stacks: `frame;frame;frame count`, one stack per line, root first,
//! as written by stackcollapse-*, inferno-collapse-*, py-spy and async-profiler. The
//! differential form `stack before after` (difffolded) is recognised from the first line and
//! keeps both counts. Names may contain spaces; the count is the last field. Lines end with
//! LF or CRLF; blank lines are ignored; a malformed line is counted, reported with its line
//! number and skipped, as flamegraph.pl does.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read};
use std::sync::mpsc;

use super::{Compression, Decoded, Graph};
use crate::config::Limits;
use crate::graph::frames::{MergeError, StackBatch, Tokenizer, Tree};

/// Why a folded file could not be read.
#[derive(Debug)]
pub enum Error {
    /// The stream failed (corrupt or truncated compression, too large).
    Read(io::Error),
    /// The text is not folded stacks.
    Parse(String),
    /// The stacks do not add up (overflow, too deep).
    Merge(MergeError, u64),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Read(e) => write!(f, "{e}"),
            Error::Parse(m) => write!(f, "{m}"),
            Error::Merge(e, 0) => write!(f, "{e}"),
            Error::Merge(e, line) => write!(f, "line {line}: {e}"),
        }
    }
}

/// Whether `sniff`, the start of a file, looks like folded stacks: its first non-blank line
/// reads `stack count`, and so do at least as many of its whole lines as do not (perf script
/// printed without its fields starts `prog 10067`, and its frames follow). Text whose first
/// line does not end within `sniff` (a very deep stack) is left to the parser to judge.
pub fn is_applicable(sniff: &[u8]) -> bool {
    // A Go count profile's header (`threadcreate profile: total 4`) ends in a number too.
    if sniff.contains(&0) || super::gotext::is_applicable(sniff) {
        return false;
    }
    let (mut stacks, mut others) = (0u32, 0u32);
    let mut rest = sniff;
    while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
        let line = trim_line(&rest[..nl]);
        if !line.is_empty() && !is_comment(line) {
            match split_count(line) {
                Some(_) => stacks += 1,
                None if stacks == 0 => return false,
                None => others += 1,
            }
        }
        rest = &rest[nl + 1..];
    }
    if stacks > 0 {
        return stacks >= others;
    }
    let first = trim_line(rest).trim_ascii_start();
    // A JSON document on one line (a .cpuprofile) is no deep stack (`[unknown];f 1` is one).
    let json = first.starts_with(b"{") || (first.starts_with(b"[") && first.get(1).is_some_and(|b| b"{[\"".contains(b) || b.is_ascii_whitespace()));
    !first.is_empty() && !json && (rest.len() >= 4096 || split_count(first).is_some())
}

/// Whether a line is a comment: `#` alone or followed by a space or tab, as the austin
/// profiler writes its metadata (`# mode: wall`). A stack whose first frame starts with `#`
/// (`#anon;f 1`) is not one.
fn is_comment(line: &[u8]) -> bool {
    line.first() == Some(&b'#') && line.get(1).is_none_or(|&b| b == b' ' || b == b'\t')
}

/// The comments kept as run metadata, `# key: value`, and the unit their value is in.
const KNOWN_COMMENTS: &[(&str, &str)] = &[("austin", ""), ("mode", ""), ("interval", " µs")];

/// A known comment's metadata entry.
fn comment_metadata(line: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(&line[1..]).ok()?;
    let (key, value) = text.split_once(':')?;
    let (key, value) = (key.trim(), value.trim());
    let &(_, unit) = KNOWN_COMMENTS.iter().find(|(k, _)| *k == key)?;
    (!value.is_empty()).then(|| (key.to_string(), format!("{value}{unit}")))
}

/// Words of tokenized stacks sent to the merging thread at a time.
const BATCH_WORDS: usize = 1 << 16;

/// Streams folded stacks from `reader` into a frame table. Parsing and tokenizing run on
/// this thread, merging into the tree on another, so a large profile keeps both cores busy.
pub fn decode(reader: &mut dyn BufRead, limits: &Limits) -> Result<Decoded, Error> {
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<StackBatch>(4);
        let merging = scope.spawn(move || {
            let mut tree = None;
            for batch in rx {
                tree.get_or_insert_with(|| Tree::new(batch.differential)).apply(&batch)?;
            }
            Ok::<_, (MergeError, u64)>(tree)
        });
        let parsed = parse(reader, limits, tx);
        let tree = merging.join().expect("the merging thread does not panic");
        // A merge error explains a parse that stopped early, so it comes first.
        let tree = tree.map_err(|(e, line)| Error::Merge(e, line))?;
        let (tokens, warnings, metadata) = parsed?;
        let tree = tree.expect("a parse that found stacks sent them");
        let raw = tokens.raw_forms();
        let mut table = tree.finish(tokens.into_names()).map_err(|e| Error::Merge(e, 0))?;
        table.attach_raw(raw.iter().map(|(n, r)| (n.as_str(), r.as_str())));
        Ok(Decoded {
            format: "folded",
            compression: Compression::None,
            graphs: vec![Graph { name: "samples".into(), unit: "samples".into(), table, timeline: false }],
            warnings,
            metadata,
        })
    })
}

/// What [`parse`] read besides the stacks it sent: the names, warnings and metadata.
type Parsed = (Tokenizer, Vec<String>, BTreeMap<String, String>);

/// Reads lines, tokenizes their stacks and sends them to `tx` in batches. Comment lines are
/// skipped; the known ones are returned as metadata.
fn parse(reader: &mut dyn BufRead, limits: &Limits, tx: mpsc::SyncSender<StackBatch>) -> Result<Parsed, Error> {
    let mut metadata = BTreeMap::new();
    let max_line = limits.max_line_bytes;
    let mut line = Vec::with_capacity(4096);
    let mut number: u64 = 0;
    let mut tokens = Tokenizer::new(limits.max_depth);
    let mut batch: Option<StackBatch> = None;
    let mut malformed: u64 = 0;
    let mut examples = Vec::new();
    let mut blank_only = true;
    let (mut rounded, mut first_rounded) = (0u64, None);
    loop {
        line.clear();
        let n = (&mut *reader).take(max_line + 1).read_until(b'\n', &mut line).map_err(Error::Read)?;
        if n == 0 {
            break;
        }
        number += 1;
        if line.len() as u64 > max_line {
            return Err(Error::Parse(format!(
                "line {number} is longer than limits.max_line_bytes ({max_line} bytes)"
            )));
        }
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        if is_comment(text) {
            if let Some((key, value)) = comment_metadata(text) {
                metadata.entry(key).or_insert(value);
            }
            continue;
        }
        blank_only = false;
        let b = batch.get_or_insert_with(|| {
            StackBatch::new(split_count(text).is_some_and(|(stack, _)| split_count(stack).is_some()))
        });
        let parsed = split_count(text).and_then(|(stack, after)| {
            if b.differential {
                split_count(stack).map(|(stack, before)| (stack, before, after))
            } else {
                Some((stack, Count::ZERO, after))
            }
        });
        match parsed {
            Some((stack, before, count)) if !stack.is_empty() => {
                // Names have the budget of the other formats' strings; only a stack longer than
                // it can hold such a name, so the common line is not split here.
                if stack.len() as u64 > limits.max_name_bytes {
                    if let Some(long) = stack.split(|&c| c == b';').map(<[u8]>::len).max().filter(|&l| l as u64 > limits.max_name_bytes) {
                        return Err(Error::Parse(format!(
                            "line {number}: a function name of {long} bytes, more than limits.max_name_bytes ({}); raise [limits] max_name_bytes in site.toml to read it",
                            limits.max_name_bytes
                        )));
                    }
                }
                if count.rounded || before.rounded {
                    rounded += 1;
                    first_rounded.get_or_insert(number);
                }
                let places = before.places.max(count.places);
                if places > b.decimals {
                    // Fractional counts: what is buffered gets the new places; the merging
                    // thread rescales what it has when this batch reaches it.
                    b.rescale(places).map_err(|(e, at)| Error::Merge(e, at))?;
                }
                let overflow = || Error::Merge(MergeError::Overflow, number);
                let (count, before) = (count.at(b.decimals).ok_or_else(overflow)?, before.at(b.decimals).ok_or_else(overflow)?);
                tokens.push(stack, count, before, number, b).map_err(|e| Error::Merge(e, number))?;
                if b.len() >= BATCH_WORDS {
                    let mut empty = StackBatch::new(b.differential);
                    empty.decimals = b.decimals;
                    if tx.send(std::mem::replace(b, empty)).is_err() {
                        // The merging thread stopped on an error, which it reports.
                        return Err(Error::Parse("merging stopped".into()));
                    }
                }
            }
            _ => {
                malformed += 1;
                if examples.len() < 3 {
                    examples.push(number);
                }
            }
        }
    }
    if let Some(b) = batch {
        if !b.is_empty() {
            let _ = tx.send(b);
        }
    }
    if tokens.stacks == 0 {
        return Err(Error::Parse(if blank_only {
            "no stacks: the file is empty or blank".into()
        } else {
            format!(
                "no stacks: none of the {malformed} non-blank lines reads `frame;frame;… count` (line {} first)",
                examples.first().copied().unwrap_or(1)
            )
        }));
    }
    // Lines that are no stack are passed over, as flamegraph.pl does, while they are the few:
    // text where they are the most is some other kind of file whose lines happen to end in a
    // number (`summary: 194045152`), and reading it would draw a graph that looks right.
    if malformed > tokens.stacks {
        return Err(Error::Parse(format!(
            "not folded stacks: {malformed} of its {} lines that are not blank or comments do not read `frame;frame;… count` (line {} first), more than those that do",
            malformed + tokens.stacks,
            examples.first().copied().unwrap_or(1)
        )));
    }
    let mut warnings = Vec::new();
    if malformed > 0 {
        let lines: Vec<String> = examples.iter().map(|n| n.to_string()).collect();
        warnings.push(format!(
            "skipped {malformed} malformed line{} (line {}{}): expected `frame;frame;… count`",
            if malformed == 1 { "" } else { "s" },
            lines.join(", "),
            if malformed > examples.len() as u64 { ", …" } else { "" }
        ));
    }
    if rounded > 0 {
        warnings.push(format!(
            "{rounded} count{} had more than {MAX_DECIMALS} decimal places and {} rounded to {MAX_DECIMALS} (line {} first)",
            if rounded == 1 { "" } else { "s" },
            if rounded == 1 { "was" } else { "were" },
            first_rounded.unwrap_or(0)
        ));
    }
    if tokens.invalid_utf8 > 0 {
        warnings.push(format!(
            "{} stack{} had bytes that are not UTF-8, shown as U+FFFD",
            tokens.invalid_utf8,
            if tokens.invalid_utf8 == 1 { "" } else { "s" }
        ));
    }
    Ok((tokens, warnings, metadata))
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

/// Most decimal places a fractional count keeps (`1.123456`): values are kept exact as
/// integers of 10^-places, so each place takes a factor of ten of the range a graph's total
/// must fit (2^53: 9 × 10^9 whole units at six places). A count written with more places
/// (float noise such as `0.30000000000000004`, as scripts summing floats print) is rounded
/// half up to this many, and the file's warning says how many counts were.
pub const MAX_DECIMALS: u32 = 6;

/// A count as written: `digits` with `places` decimal places (`31.23` is 3123 and 2). Trailing
/// zeros after the point do not count (`5.0` is 5 and 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Count {
    digits: u64,
    places: u32,
    /// Whether places beyond [`MAX_DECIMALS`] were rounded away.
    rounded: bool,
}

impl Count {
    const ZERO: Count = Count { digits: 0, places: 0, rounded: false };

    /// The count in `places` decimal places (at least its own).
    fn at(self, places: u32) -> Option<u64> {
        self.digits.checked_mul(crate::graph::frames::pow10(places - self.places)?)
    }
}

/// Splits `stack count` at the last space; the count is a decimal number, `123` or `31.23`,
/// whose digits (up to [`MAX_DECIMALS`] places) fit `u64`. Only that one space goes: a frame's
/// own spaces are kept (a last frame named ` ` is written `a;  1`), as flamegraph.pl reads
/// the line.
fn split_count(line: &[u8]) -> Option<(&[u8], Count)> {
    let space = line.iter().rposition(|&b| b == b' ')?;
    let text = &line[space + 1..];
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &[][..]),
    };
    if whole.is_empty() || whole.len() > 20 || !whole.iter().chain(fraction).all(u8::is_ascii_digit) {
        return None;
    }
    let significant = fraction.iter().rposition(|&b| b != b'0').map_or(0, |last| last + 1);
    let places = significant.min(MAX_DECIMALS as usize);
    let mut digits: u64 = 0;
    for &d in whole.iter().chain(&fraction[..places]) {
        digits = digits.checked_mul(10)?.checked_add((d - b'0') as u64)?;
    }
    let rounded = significant > places;
    let mut places = places as u32;
    if rounded && fraction[places as usize] >= b'5' {
        digits = digits.checked_add(1)?;
    }
    // A rounded count may end in zeros (`4.399900000000001` is 4.3999): they are no places.
    while rounded && places > 0 && digits.is_multiple_of(10) {
        digits /= 10;
        places -= 1;
    }
    Some((&line[..space], Count { digits, places, rounded }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_str(s: &str) -> Result<Decoded, Error> {
        decode(&mut s.as_bytes(), &Limits::default())
    }

    #[test]
    fn reads_crlf_blank_lines_and_names_with_spaces() {
        let d = decode_str("a;b c 2\r\n\r\n\na;b c;d 3\r\n").unwrap();
        let t = &d.graphs[0].table;
        assert_eq!(t.names, vec!["all", "a", "b c", "d"]);
        assert_eq!(t.total, vec![5, 5, 5, 3]);
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn malformed_lines_are_counted_with_their_numbers() {
        let d = decode_str("a 1\nnot a count\nb x\nc 2\n").unwrap();
        assert_eq!(d.graphs[0].table.grand_total(), 3);
        assert_eq!(d.warnings.len(), 1);
        assert!(d.warnings[0].contains("2 malformed lines (line 2, 3)"), "{}", d.warnings[0]);
    }

    #[test]
    fn differential_form_keeps_both_counts() {
        let d = decode_str("a;b 3 5\na;c 4 0\n").unwrap();
        let t = &d.graphs[0].table;
        assert_eq!(t.grand_total(), 5);
        assert_eq!(t.before.as_ref().unwrap().total[0], 7);
    }

    #[test]
    fn absurd_counts_are_malformed_and_sums_overflow_with_a_line_number() {
        let d = decode_str("a 99999999999999999999999\nb 1\n").unwrap();
        assert_eq!(d.warnings.len(), 1);
        let e = decode_str("a 18446744073709551615\nb 1\n").unwrap_err();
        assert!(e.to_string().contains("overflow"), "{e}");
        let e = decode_str("a 18446744073709551615\na 1\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2:"), "{e}");
    }

    #[test]
    fn empty_and_non_folded_files_are_errors() {
        assert!(decode_str("").unwrap_err().to_string().contains("empty"));
        assert!(decode_str("\n\n  \n").unwrap_err().to_string().contains("empty"));
        let e = decode_str("hello world\nfoo\n").unwrap_err().to_string();
        assert!(e.contains("none of the 2"), "{e}");
        assert!(!is_applicable(b"# README\nsome text\n"));
        assert!(is_applicable(b"\n\nmain;f 1\n"));
        assert!(is_applicable(b"main;f 1"), "no final newline");
        assert!(!is_applicable(b"main;f"));
    }

    #[test]
    fn comment_lines_are_skipped_and_austins_known_ones_kept() {
        // As the austin Python profiler writes them: metadata first, more at the end.
        let text = "# austin: 3.3.0\n# interval: 100\n# mode: wall\n\nP1;T1;main (a.py);f (a.py) 300\n#anon;g 2\n\n# duration: 5000\n";
        assert!(is_applicable(text.as_bytes()));
        let d = decode_str(text).unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(d.graphs[0].table.grand_total(), 302);
        assert!(d.graphs[0].table.names.iter().any(|n| n == "#anon"), "a frame starting with # is not a comment");
        let meta: Vec<(&str, &str)> = d.metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(meta, [("austin", "3.3.0"), ("interval", "100 µs"), ("mode", "wall")]);
        assert!(!is_applicable(b"# only comments\n# here: 1\n"));
    }

    #[test]
    fn frame_names_keep_their_spaces_even_a_last_frame_of_one_space() {
        let d = decode_str("main; ;leaf 5\nmain;  3\nmain;b  c 1\n").unwrap();
        let lines = crate::store::fold::folded_lines(&d.graphs[0].table).concat();
        assert_eq!(lines, "main; 3\nmain; ;leaf 5\nmain;b  c 1\n".replace("main; 3", "main;  3"));
    }

    #[test]
    fn fractional_counts_are_kept_exact_in_the_finest_places_seen() {
        // Whole counts first, then finer and finer fractions, across batch boundaries: every
        // value ends in the finest places (3), none rounded.
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!("main;f{} 2\n", i % 7));
        }
        text.push_str("main;g 31.23\nmain;g 0.005\nmain;h 5.0\nmain;h 1.10\n");
        let d = decode_str(&text).unwrap();
        let t = &d.graphs[0].table;
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(t.decimals, 3);
        assert_eq!(t.grand_total(), 40_000_000 + 31_235 + 6_100);
        let g = t.names.iter().position(|n| n == "g").unwrap() as u32;
        let row = t.name.iter().position(|&n| n == g).unwrap();
        assert_eq!(t.total[row], 31_235);
        let lines = crate::store::fold::folded_lines(t).concat();
        assert!(lines.contains("main;g 31.235\nmain;h 6.1\n"), "{lines}");
        assert!(lines.contains("main;f0 5716\n"), "{lines}");
    }

    #[test]
    fn fractional_counts_in_both_columns_of_a_differential_file() {
        let d = decode_str("a;b 1.5 2\na;c 0 0.25\n").unwrap();
        let t = &d.graphs[0].table;
        assert_eq!((t.decimals, t.grand_total(), t.before.as_ref().unwrap().total[0]), (2, 225, 150));
        assert!(is_applicable(b"cksum;_start;main 31.23\n"));
    }

    #[test]
    fn counts_that_are_not_plain_decimals_are_malformed() {
        for bad in ["1e5", ".5", "1.2.3", "-1", "1,5", "+3", "1.5x", "", "nan"] {
            let d = decode_str(&format!("a {bad}\nb 1\n")).unwrap();
            assert_eq!(d.warnings.len(), 1, "{bad} is not a count");
            assert_eq!((d.graphs[0].table.grand_total(), d.graphs[0].table.decimals), (1, 0), "{bad}");
        }
        // Trailing zeros are no places at all.
        let d = decode_str("a 0.123456\nb 2.5000000000000\n").unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!((d.graphs[0].table.decimals, d.graphs[0].table.grand_total()), (6, 2_623_456));
    }

    #[test]
    fn counts_with_more_than_six_places_are_rounded_half_up_with_a_warning() {
        // As a script summing floats prints them: 0.1 + 0.2 and friends.
        let d = decode_str("a 1\nb 0.30000000000000004\nc 0.1234565\nd 0.99999951\ne 2.25\n").unwrap();
        let t = &d.graphs[0].table;
        assert_eq!(t.decimals, 6);
        let lines = crate::store::fold::folded_lines(t).concat();
        assert_eq!(lines, "a 1\nb 0.3\nc 0.123457\nd 1\ne 2.25\n");
        assert_eq!(d.warnings, ["3 counts had more than 6 decimal places and were rounded to 6 (line 2 first)"]);
    }

    #[test]
    fn names_longer_than_the_name_budget_are_refused_with_their_line() {
        let limits = Limits { max_name_bytes: 8, ..Limits::default() };
        let d = decode(&mut "a;abcdefgh 1\nabcdefgh;b;c;d;e 2\n".as_bytes(), &limits).unwrap();
        assert_eq!(d.graphs[0].table.total[0], 3, "names of 8 bytes and stacks longer than 8 are read");
        let e = decode(&mut "a;b 1\nmain;abcdefghi;x 2\n".as_bytes(), &limits).unwrap_err();
        assert!(e.to_string().contains("line 2: a function name of 9 bytes, more than limits.max_name_bytes (8)"), "{e}");
    }

    #[test]
    fn overlong_lines_are_refused() {
        let limits = Limits { max_line_bytes: 10, ..Limits::default() };
        let e = decode(&mut "a;b;c;d;e;f;g 1\n".as_bytes(), &limits).unwrap_err();
        assert!(e.to_string().contains("line 1 is longer"), "{e}");
    }
}
