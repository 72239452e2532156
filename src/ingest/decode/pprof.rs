//! pprof's `profile.proto`, as written by Go's `runtime/pprof`, `go tool pprof`, and the
//! many profilers that speak it (gzip-compressed or not; the caller undoes compression).
//!
//! Every sample type becomes a graph of its own, named by its type (`cpu`, `alloc_space`, …)
//! with its unit (`nanoseconds`, `bytes`, …); pprof's default sample type
//! (`default_sample_type`, else the last one) comes first. Frames:
//! - A sample lists its locations leaf first; a location lists its lines innermost first
//!   (the inlined callee, then the function it was inlined into, …). Each line is a frame of
//!   its own, and the stack is turned around to be root first.
//! - A frame is named by its function's `name`, or its `system_name` when the name is empty.
//!   Names are merged whole, never split, so a `;` inside a name is kept as it is.
//! - A location without lines (unsymbolised) is named by its address, `0x4b10e6`, followed by
//!   ` (file)` when its mapping has a file name. Lines whose `function_id` is 0 (no function)
//!   are left out; a location left with no line and no address is an error.
//! - A sample without locations is counted under one frame, `[unknown]`.
//! - A value of 0 adds nothing to a graph and is left out of it; a negative value is skipped
//!   with a warning.
//!
//! `time_nanos`, `duration_nanos`, `period` (with `period_type`), the comments, `doc_url`,
//! and the `drop_frames`/`keep_frames` regular expressions (shown, not applied) become the
//! profile's metadata.
//!
//! Per-sample labels (Go's `pprof.Do`/`pprof.Labels`, continuous profilers' thread, span or
//! endpoint tags):
//! - Each label key becomes a metadata entry `label KEY` listing its distinct values, strings
//!   sorted and then numbers in ascending order followed by their unit (`4096 bytes`), joined
//!   by `, ` and cut after [`MAX_LISTED_VALUES`] with `, … and N more`. A label with an empty
//!   key is ignored. A label with a string (`str`) is a string label, else a numeric one.
//! - With `[pprof] graph_by_label = "KEY"`, each sample type's graph of the whole profile is
//!   followed by one graph per value of KEY, named `TYPE KEY=VALUE` (`cpu thread=worker-1`),
//!   values in the order above, and, when some samples lack the label, `TYPE KEY=(none)` with
//!   those samples; the unit is the sample type's. A sample with several values of KEY counts
//!   in each of their graphs. The default sample type's graphs come first, then the next
//!   type's, and so on. A profile without the label gets no extra graph, and a label with
//!   more than [`MAX_LABEL_GRAPHS`] values is not split (with a warning).
//!
//! A protobuf has to be read whole, so the profile is held in memory: the reader stops at
//! `limits.max_profile_bytes`. Samples that expand to more than 32 frames per byte of the
//! profile over all sample types (at least 4 million) are refused: a few kilobytes of deeply
//! inlined locations counted in many sample types could otherwise fill the memory. Malformed
//! input (truncated or corrupt protobuf, wrong field types, string or id references to
//! nothing) is an error naming what is wrong.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::io::BufRead;

use prost::Message;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::{Compression, Decoded, FrameBudget, Graph};
use crate::config::{Limits, PprofConfig};
use crate::graph::frames::{FrameTable, MergeError, MAX_EXACT, NO_PARENT, ROOT_NAME};

// The messages of `profile.proto` (github.com/google/pprof, proto/profile.proto), written
// from the published schema with the field numbers it gives. The string table is read as
// bytes (the wire format is the same) so that a name that is not UTF-8 is repaired and
// counted rather than failing the whole profile.

/// The whole profile.
#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    /// What each value of a sample measures.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// The binaries the addresses belong to.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// The locations the samples refer to.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// The functions the lines refer to.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Every string of the profile; index 0 is the empty string.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_table: Vec<Vec<u8>>,
    /// Regular expression of frames to drop (string index).
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Regular expression of frames to keep (string index).
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// When the profile was taken, in nanoseconds since the Unix epoch.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// How long it covers.
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// What the period counts.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// Sampling period, in `period_type` units.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indices).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// Type of the sample type to show first (string index).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
    /// Documentation link for the profile (string index).
    #[prost(int64, tag = "15")]
    pub doc_url: i64,
}

/// A type of value and its unit, both string indices.
#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    /// `cpu`, `alloc_space`, …
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// `nanoseconds`, `bytes`, `count`, …
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// One stack with one value per sample type.
#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// Location ids, leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Labels of this sample.
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// A sample label: a string or a number.
#[derive(Clone, PartialEq, Message)]
pub struct Label {
    /// Key (string index).
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// String value (string index).
    #[prost(int64, tag = "2")]
    pub str: i64,
    /// Numeric value.
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// Unit of the numeric value (string index).
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// A binary mapped into the address space.
#[derive(Clone, PartialEq, Message)]
pub struct Mapping {
    /// Unique non-zero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Start of the address range.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// End of the address range.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// Offset in the file.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// File name of the binary (string index).
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// Build id (string index).
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Whether symbols were resolved.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// Whether file names were resolved.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Whether line numbers were resolved.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Whether inlined frames were resolved.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// A code address, with the source lines it stands for.
#[derive(Clone, PartialEq, Message)]
pub struct Location {
    /// Unique non-zero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Mapping the address belongs to (0: none).
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The instruction address.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Lines, innermost (inlined callee) first.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    /// Whether several locations were folded into this one.
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// A source line within a function.
#[derive(Clone, PartialEq, Message)]
pub struct Line {
    /// The function (0: unknown).
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// Line number.
    #[prost(int64, tag = "2")]
    pub line: i64,
    /// Column number.
    #[prost(int64, tag = "3")]
    pub column: i64,
}

/// A function.
#[derive(Clone, PartialEq, Message)]
pub struct Function {
    /// Unique non-zero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Human-readable name (string index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Name as the system knows it, e.g. mangled (string index).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Source file (string index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// First line of the function.
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

/// Whether `sniff`, the start of the decompressed content, looks like a `profile.proto`:
/// binary (a control byte below tab, or not UTF-8), and read as protobuf it starts with
/// fields of `Profile` (numbers 1 to 15, each with its schema's wire type). Only the first
/// few fields are judged, so that a profile damaged further on is read as pprof and gets an
/// error that says what is wrong rather than "unknown format".
pub fn is_applicable(sniff: &[u8]) -> bool {
    let binary = sniff.iter().any(|&b| b < 0x09) || std::str::from_utf8(sniff).is_err();
    binary && fields_look_like_profile(sniff)
}

/// How many leading fields [`is_applicable`] judges.
const SNIFF_FIELDS: usize = 3;

fn fields_look_like_profile(mut rest: &[u8]) -> bool {
    let mut fields = 0;
    while !rest.is_empty() && fields < SNIFF_FIELDS {
        let Some((tag, n)) = varint(rest) else {
            // The sniff may end inside a varint.
            return fields > 0 && rest.len() < 10;
        };
        rest = &rest[n..];
        let (field, wire) = (tag >> 3, tag & 7);
        let expected = match field {
            1..=6 | 11 => 2,          // messages and strings
            7..=10 | 12 | 14 | 15 => 0, // int64
            13 => wire,               // comment: varint, or packed (2)
            _ => return false,
        };
        if wire != expected || (field == 13 && wire != 0 && wire != 2) {
            return false;
        }
        if wire == 2 {
            let Some((len, n)) = varint(rest) else {
                return rest.len() < 10;
            };
            rest = &rest[n..];
            if len >= rest.len() as u64 {
                // The field goes on past the sniff.
                return true;
            }
            rest = &rest[len as usize..];
        } else {
            let Some((_, n)) = varint(rest) else {
                return rest.len() < 10;
            };
            rest = &rest[n..];
        }
        fields += 1;
    }
    fields > 0
}

/// A protobuf varint at the start of `b`, with its length in bytes.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (i, &byte) in b.iter().enumerate().take(10) {
        if i == 9 && byte > 1 {
            // Past 64 bits.
            return None;
        }
        value |= ((byte & 0x7f) as u64) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Reads a whole profile from `reader` and merges every sample type into a graph (and, with
/// `options.graph_by_label`, into one graph per value of that label).
pub fn decode(reader: &mut dyn BufRead, limits: &Limits, options: &PprofConfig) -> Result<Decoded, String> {
    let bytes = read_whole(reader)?;
    let budget = FrameBudget::for_bytes(bytes.len() as u64);
    decode_within(&bytes, limits, options, budget)
}

/// Reads all of `reader` into memory (a pprof is decoded whole), asking for memory in a way
/// that can fail: a profile this machine cannot hold is this profile's error, and the build
/// goes on with the others, where `read_to_end` aborted the process (exit 134).
fn read_whole(reader: &mut dyn BufRead) -> Result<Vec<u8>, String> {
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        if buf.is_empty() {
            return Ok(bytes);
        }
        // Grows as a vector does (doubling), but says so when the memory is not there.
        bytes.try_reserve(buf.len()).map_err(|_| {
            format!(
                "pprof: not enough memory to hold the profile ({} bytes read; it is read whole); lower [limits] max_profile_bytes to refuse such files before reading them",
                bytes.len()
            )
        })?;
        bytes.extend_from_slice(buf);
        let n = buf.len();
        reader.consume(n);
    }
}

/// [`decode`] of the bytes of a profile, with a frame budget.
fn decode_within(bytes: &[u8], limits: &Limits, options: &PprofConfig, budget: FrameBudget) -> Result<Decoded, String> {
    // The samples are most of a profile: each is read when it is needed, into one `Sample`
    // reused for all, rather than decoded into a vector of its own (three allocations per
    // sample to make and to free). The rest of the profile is decoded whole.
    // The string table too is read where it is, a few bytes per string, not as a vector of
    // its own per string (24 bytes each, and prost's copy): a table of millions of empty
    // strings took many times its bytes (docs/BENCHMARKS.md, "Figures behind the code").
    match split_samples(bytes, limits.max_name_bytes)? {
        Some((head, samples, strings)) => {
            let profile = Profile::decode(head.as_slice()).map_err(malformed)?;
            drop(head);
            convert(&profile, Samples::Encoded(bytes, samples), Strings::new(Source::Ranges(bytes, strings)), limits, options, budget)
        }
        // A field cut short, or a group: prost reads the whole and says what is wrong.
        None => {
            let profile = Profile::decode(bytes).map_err(malformed)?;
            convert(&profile, Samples::Decoded(&profile.sample), Strings::new(Source::Table(&profile.string_table)), limits, options, budget)
        }
    }
}

fn malformed(e: prost::DecodeError) -> String {
    format!("pprof: malformed protobuf (truncated or corrupt): {e}")
}

/// The samples of a profile.
enum Samples<'a> {
    /// Where the encoded `Sample` messages are in the profile's bytes.
    Encoded(&'a [u8], Vec<std::ops::Range<usize>>),
    /// Decoded with the profile.
    Decoded(&'a [Sample]),
}

impl Samples<'_> {
    /// Calls `f` with each sample and its number (from 1), in order.
    fn for_each(&self, mut f: impl FnMut(&Sample, usize) -> Result<(), String>) -> Result<(), String> {
        match self {
            Samples::Encoded(bytes, ranges) => {
                let mut sample = Sample::default();
                for (k, range) in ranges.iter().enumerate() {
                    sample.clear();
                    if !read_sample(&bytes[range.clone()], &mut sample) {
                        sample.clear();
                        sample.merge(&bytes[range.clone()]).map_err(|e| format!("{}: sample {}", malformed(e), k + 1))?;
                    }
                    f(&sample, k + 1)?;
                }
            }
            Samples::Decoded(samples) => {
                for (k, sample) in samples.iter().enumerate() {
                    f(sample, k + 1)?;
                }
            }
        }
        Ok(())
    }
}

/// Reads the fields of a `Sample` message into `sample` as `Sample::merge` does, when they
/// are written as Go's and most writers write them: location ids and values as varints
/// (packed or not), labels as messages. `false` for anything else (another field, another
/// wire type, a varint or a length that runs past the end), which `Sample::merge` then reads
/// or names as an error. The samples are most of a profile, and prost's merge of them was a
/// measurable part of decoding the bench profile (docs/BENCHMARKS.md, "Figures behind the code").
fn read_sample(mut b: &[u8], sample: &mut Sample) -> bool {
    fn packed(mut b: &[u8], mut push: impl FnMut(u64)) -> bool {
        while !b.is_empty() {
            let Some((v, n)) = varint(b) else { return false };
            push(v);
            b = &b[n..];
        }
        true
    }
    while !b.is_empty() {
        let Some((key, n)) = varint(b) else { return false };
        b = &b[n..];
        let Some((v, n)) = varint(b) else { return false };
        b = &b[n..];
        match key {
            // location_id and value, one varint each.
            0x08 => sample.location_id.push(v),
            0x10 => sample.value.push(v as i64),
            // Packed, or a label: `v` bytes.
            0x0a | 0x12 | 0x1a => {
                let Some(field) = usize::try_from(v).ok().filter(|&len| len <= b.len()).map(|len| &b[..len]) else {
                    return false;
                };
                b = &b[field.len()..];
                let read = match key {
                    0x0a => packed(field, |v| sample.location_id.push(v)),
                    0x12 => packed(field, |v| sample.value.push(v as i64)),
                    _ => Label::decode(field).map(|l| sample.label.push(l)).is_ok(),
                };
                if !read {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// A profile's fields but its samples and strings, copied; where each sample's message is; and
/// where each string of the string table is (start and length).
type Split = (Vec<u8>, Vec<std::ops::Range<usize>>, Vec<[u32; 2]>);

/// The top-level fields of a profile's bytes split into the samples (field 2), by where
/// each one's message is, and the other fields, copied; `Ok(None)` when a field is cut short
/// or is a group (wire type 3 or 4), which no field of `Profile` is.
///
/// In the same pass, a string of the string table longer than `max_string` bytes (a function
/// or file name; one of gigabytes compresses to a small file: docs/BENCHMARKS.md, "Figures
/// behind the code") is refused before anything is decoded or copied, even when the profile is
/// cut short inside it.
fn split_samples(bytes: &[u8], max_string: u64) -> Result<Option<Split>, String> {
    // String positions are kept in 32 bits: a larger profile is read by prost whole.
    if u32::try_from(bytes.len()).is_err() {
        return Ok(None);
    }
    let mut head = Vec::new();
    let mut samples = Vec::new();
    let mut strings = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let Some((key, n)) = varint(&bytes[at..]) else { return Ok(None) };
        at += n;
        let size = match key & 7 {
            0 => match varint(&bytes[at..]) {
                Some((_, n)) => n,
                None => return Ok(None),
            },
            1 => 8,
            2 => {
                let Some((len, n)) = varint(&bytes[at..]) else { return Ok(None) };
                at += n;
                if key == (6 << 3) | 2 && len > max_string {
                    return Err(format!(
                        "pprof: its string table holds a string of {len} bytes (at byte {at}), more than limits.max_name_bytes ({max_string}); raise [limits] max_name_bytes in site.toml to read it"
                    ));
                }
                let Ok(len) = usize::try_from(len) else { return Ok(None) };
                len
            }
            5 => 4,
            _ => return Ok(None),
        };
        let Some(end) = at.checked_add(size).filter(|&end| end <= bytes.len()) else { return Ok(None) };
        if key == (2 << 3) | 2 {
            samples.push(at..end);
        } else if key == (6 << 3) | 2 {
            strings.push([at as u32, (end - at) as u32]);
        } else {
            head.extend_from_slice(&bytes[start..end]);
        }
        at = end;
    }
    Ok(Some((head, samples, strings)))
}

/// Values of one label key listed in its metadata entry; the rest are counted.
pub const MAX_LISTED_VALUES: usize = 20;

/// Most graphs `graph_by_label` makes per sample type (one per value); a label with more
/// values (a span or request id) is not split.
pub const MAX_LABEL_GRAPHS: usize = 100;

/// The value of a sample label: a string, or a number with its unit (possibly empty).
/// Ordered strings first, then numbers by unit and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum LabelValue<'a> {
    Str(&'a str),
    Num(&'a str, i64),
}

impl std::fmt::Display for LabelValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            LabelValue::Str(s) => f.write_str(s),
            LabelValue::Num("", n) => write!(f, "{n}"),
            LabelValue::Num(unit, n) => write!(f, "{n} {unit}"),
        }
    }
}

/// A label's key and value; `None` for a label with an empty key, which is ignored.
type Resolved<'a> = Option<(&'a str, LabelValue<'a>)>;

/// The labels of a profile, read once per distinct (key, str, num, num_unit).
struct Labels<'a> {
    /// Resolved labels by their raw indices.
    resolved: FxHashMap<(i64, i64, i64, i64), Resolved<'a>>,
}

impl<'a> Labels<'a> {
    /// The key and value of `l`, found on sample `number`.
    fn get(&mut self, l: &Label, strings: &'a Strings<'a>, number: usize) -> Result<Resolved<'a>, String> {
        let raw = (l.key, l.str, l.num, l.num_unit);
        if let Some(&r) = self.resolved.get(&raw) {
            return Ok(r);
        }
        let what = || format!("a label of sample {number}");
        let key = strings.get(l.key, &what)?;
        let value = if l.str != 0 {
            LabelValue::Str(strings.get(l.str, &what)?)
        } else {
            LabelValue::Num(strings.get(l.num_unit, &what)?, l.num)
        };
        let r = (!key.is_empty()).then_some((key, value));
        self.resolved.insert(raw, r);
        Ok(r)
    }
}

/// The string table, with checked lookups.
/// Where a profile's string table is: ranges of the profile's bytes (start, length), or the
/// table prost decoded.
enum Source<'a> {
    Ranges(&'a [u8], Vec<[u32; 2]>),
    Table(&'a [Vec<u8>]),
}

impl<'a> Source<'a> {
    fn len(&self) -> usize {
        match self {
            Source::Ranges(_, r) => r.len(),
            Source::Table(t) => t.len(),
        }
    }

    fn raw(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Source::Ranges(bytes, r) => r.get(i).map(|&[at, len]| &bytes[at as usize..at as usize + len as usize]),
            Source::Table(t) => t.get(i).map(Vec::as_slice),
        }
    }
}

/// A profile's string table, read in place: each string where the profile has it, the ones
/// that are not UTF-8 made so (U+FFFD) once and kept apart.
struct Strings<'a> {
    source: Source<'a>,
    /// The strings that are not UTF-8, as `String::from_utf8_lossy` makes them, by index.
    fixed: FxHashMap<usize, String>,
    invalid_utf8: u64,
}

impl<'a> Strings<'a> {
    fn new(source: Source<'a>) -> Self {
        let mut fixed = FxHashMap::default();
        for i in 0..source.len() {
            let raw = source.raw(i).expect("an index below the table's length");
            if std::str::from_utf8(raw).is_err() {
                fixed.insert(i, String::from_utf8_lossy(raw).into_owned());
            }
        }
        let invalid_utf8 = fixed.len() as u64;
        Strings { source, fixed, invalid_utf8 }
    }

    /// The string at `index`; `what` says where the index was found, for the error.
    fn get(&self, index: i64, what: &dyn Fn() -> String) -> Result<&str, String> {
        let out_of_range = || format!("pprof: string index {index} of {} out of range (the table has {})", what(), self.source.len());
        let i = usize::try_from(index).map_err(|_| out_of_range())?;
        if let Some(s) = self.fixed.get(&i) {
            return Ok(s);
        }
        let raw = self.source.raw(i).ok_or_else(out_of_range)?;
        // Checked when the table was read: the strings that are not UTF-8 are in `fixed`.
        Ok(std::str::from_utf8(raw).unwrap_or_default())
    }
}

fn convert(p: &Profile, samples: Samples, strings: Strings, limits: &Limits, options: &PprofConfig, mut budget: FrameBudget) -> Result<Decoded, String> {
    let mut warnings = Vec::new();

    // Sample types, and the order of the graphs: the default first.
    if p.sample_type.is_empty() {
        return Err("pprof: the profile has no sample types".into());
    }
    let mut types = Vec::with_capacity(p.sample_type.len());
    for (i, t) in p.sample_type.iter().enumerate() {
        let name = strings.get(t.r#type, &|| format!("sample type {}", i + 1))?;
        let unit = strings.get(t.unit, &|| format!("sample type {}", i + 1))?;
        types.push((name, unit));
    }
    let default = if p.default_sample_type != 0 {
        let wanted = strings.get(p.default_sample_type, &|| "default_sample_type".into())?;
        types.iter().position(|(name, _)| *name == wanted).unwrap_or(types.len() - 1)
    } else {
        types.len() - 1
    };
    let mut order = vec![default];
    order.extend((0..types.len()).filter(|&i| i != default));

    // Functions and mappings by id. A function written without an id (id 0, as the .NET
    // profiler writes them, with locations that refer to functions by their 1-based position
    // in the list) takes its position as its id, as Pyroscope reads such files; an id that a
    // function states wins over a position.
    let mut functions: FxHashMap<u64, &str> = FxHashMap::default();
    let mut positional = Vec::new();
    for (k, f) in p.function.iter().enumerate() {
        let what = || if f.id == 0 { format!("function {} (no id; position {})", f.id, k + 1) } else { format!("function {}", f.id) };
        let name = strings.get(f.name, &what)?;
        let name = if name.is_empty() { strings.get(f.system_name, &what)? } else { name };
        if f.id == 0 {
            positional.push((k as u64 + 1, name));
        } else {
            functions.entry(f.id).or_insert(name);
        }
    }
    for (id, name) in positional {
        functions.entry(id).or_insert(name);
    }
    let mut mappings: FxHashMap<u64, &str> = FxHashMap::default();
    for m in &p.mapping {
        let file = strings.get(m.filename, &|| format!("mapping {}", m.id))?;
        mappings.entry(m.id).or_insert(file);
    }

    // Each location's frames, root first, as indexes into `frame_names`: each name is a
    // function's (one index per function id) or an address's. The locations are numbered in
    // the order of the profile (the first of an id wins): location k's frames are
    // `frames[spans[k]..spans[k + 1]]`.
    let mut frame_names: Vec<Cow<str>> = Vec::new();
    // Names renamed, as (index into `frame_names`, the profile's own form).
    let mut renamed: Vec<(usize, &str)> = Vec::new();
    let mut function_frames: FxHashMap<u64, u32> = FxHashMap::default();
    let mut location_index = IdIndex::new(p.location.len());
    let mut frames: Vec<u32> = Vec::new();
    let mut spans: Vec<usize> = vec![0];
    for loc in &p.location {
        let start = frames.len();
        for line in loc.line.iter().rev() {
            if line.function_id == 0 {
                continue;
            }
            let name = functions.get(&line.function_id).ok_or_else(|| {
                format!("pprof: location {} refers to function {}, which does not exist", loc.id, line.function_id)
            })?;
            frames.push(*function_frames.entry(line.function_id).or_insert_with(|| {
                // A class the JVM generated loses its run-time numbers, as in every reader;
                // its own form is kept for the tooltip.
                match crate::graph::generated::normalized(name) {
                    Some(plain) => {
                        renamed.push((frame_names.len(), *name));
                        frame_names.push(Cow::Owned(plain));
                    }
                    None => frame_names.push(Cow::Borrowed(name)),
                }
                frame_names.len() as u32 - 1
            }));
        }
        if frames.len() == start {
            if loc.address == 0 {
                return Err(format!("pprof: location {} has no line and no address: nothing to show", loc.id));
            }
            let file = match loc.mapping_id {
                0 => "",
                id => mappings.get(&id).ok_or_else(|| {
                    format!("pprof: location {} refers to mapping {id}, which does not exist", loc.id)
                })?,
            };
            frame_names.push(Cow::Owned(if file.is_empty() {
                format!("{:#x}", loc.address)
            } else {
                format!("{:#x} ({file})", loc.address)
            }));
            frames.push(frame_names.len() as u32 - 1);
        }
        if location_index.get(loc.id).is_none() {
            location_index.insert(loc.id, spans.len() as u32 - 1);
            spans.push(frames.len());
        } else {
            frames.truncate(start);
        }
    }
    let location_count = spans.len() - 1;
    frame_names.push(Cow::Borrowed("[unknown]"));
    // The distinct names in byte order (the order of siblings in a graph, and of its name
    // table), and each location's frames as their ranks in it: two functions or an address
    // with the same name are one frame, as they are in a folded line.
    let mut by_name: Vec<u32> = (0..frame_names.len() as u32).collect();
    by_name.sort_unstable_by(|&a, &b| frame_names[a as usize].cmp(&frame_names[b as usize]));
    let mut rank = vec![0u32; frame_names.len()];
    let mut names: Vec<&str> = Vec::with_capacity(frame_names.len());
    for &f in &by_name {
        let name: &str = &frame_names[f as usize];
        if names.last() != Some(&name) {
            names.push(name);
        }
        rank[f as usize] = names.len() as u32 - 1;
    }
    drop(by_name);
    let raw_pairs: Vec<(&str, &str)> = renamed.iter().map(|&(f, raw)| (names[rank[f] as usize], raw)).collect();
    for f in &mut frames {
        *f = rank[*f as usize];
    }
    let unknown = rank[frame_names.len() - 1];

    // The samples, read once, into flat arrays: sample k's locations are
    // `sample_locations[location_ends[k - 1]..location_ends[k]]`, as their numbers above (a
    // location id that does not exist gets a number past them, for the error below), its
    // values `sample_values[k * width..][..width]`, its labels likewise by `label_ends`.
    let width = types.len();
    let mut missing_ids: Vec<u64> = Vec::new();
    let mut sample_locations: Vec<u32> = Vec::new();
    let mut location_ends: Vec<usize> = Vec::new();
    let mut sample_values: Vec<i64> = Vec::new();
    let mut sample_labels: Vec<Label> = Vec::new();
    let mut label_ends: Vec<usize> = Vec::new();
    samples.for_each(|sample, number| {
        if sample.value.len() != width {
            return Err(format!(
                "pprof: sample {number} has {} values but the profile has {width} sample types",
                sample.value.len()
            ));
        }
        for &id in &sample.location_id {
            let index = match location_index.get(id) {
                Some(index) => index,
                None => {
                    let index = (location_count + missing_ids.len()) as u32;
                    missing_ids.push(id);
                    location_index.insert(id, index);
                    index
                }
            };
            sample_locations.push(index);
        }
        location_ends.push(sample_locations.len());
        sample_values.extend_from_slice(&sample.value);
        sample_labels.extend_from_slice(&sample.label);
        label_ends.push(sample_labels.len());
        Ok(())
    })?;
    drop(samples);
    let sample_count = location_ends.len();
    let range = |ends: &[usize], k: usize| if k == 0 { 0..ends[0] } else { ends[k - 1]..ends[k] };

    // Every label key with its values, for the metadata and for graph_by_label.
    let mut labels = Labels { resolved: FxHashMap::default() };
    let mut label_values: BTreeMap<&str, std::collections::BTreeSet<LabelValue>> = BTreeMap::new();
    for k in 0..sample_count {
        for l in &sample_labels[range(&label_ends, k)] {
            if let Some((key, value)) = labels.get(l, &strings, k + 1)? {
                label_values.entry(key).or_default().insert(value);
            }
        }
    }

    // Slots: 0 is the whole profile; with graph_by_label, 1..=n are the label's values in
    // order and n + 1 the samples without it.
    let split: Option<(&str, Vec<LabelValue>)> = options.graph_by_label.as_deref().and_then(|key| {
        let values = label_values.get(key)?;
        if values.len() > MAX_LABEL_GRAPHS {
            warnings.push(format!(
                "pprof: label {key:?} has {} values, more than {MAX_LABEL_GRAPHS}: no graph per value",
                values.len()
            ));
            return None;
        }
        Some((key, values.iter().copied().collect()))
    });
    let slot_count = split.as_ref().map_or(1, |(_, values)| values.len() + 2);
    let mut unlabelled = false;

    // Samples with the same location list (and slot) are merged once: their values are
    // summed per sample type first (a profile repeats a stack for every label set, and most
    // samples fall on a few hot stacks). Distinct lists keep the order of their first sample.
    let mut distinct: FxHashMap<(&[u32], usize), usize> = FxHashMap::default();
    // Locations, slot, number of the first sample.
    let mut lists: Vec<(&[u32], usize, usize)> = Vec::new();
    let mut sums: Vec<u64> = Vec::new(); // width values per distinct list
    let mut negative: u64 = 0;
    let mut slots: Vec<usize> = Vec::new();
    for k in 0..sample_count {
        let number = k + 1;
        let location_list = &sample_locations[range(&location_ends, k)];
        let values = &sample_values[k * width..(k + 1) * width];
        slots.clear();
        slots.push(0);
        if let Some((wanted, values)) = &split {
            for l in &sample_labels[range(&label_ends, k)] {
                if let Some((key, value)) = labels.get(l, &strings, number)? {
                    if key == *wanted {
                        let at = values.binary_search(&value).expect("every value was collected");
                        slots.push(at + 1);
                    }
                }
            }
            if slots.len() == 1 {
                slots.push(values.len() + 1);
                unlabelled = true;
            }
            slots.sort_unstable();
            slots.dedup();
        }
        negative += values.iter().filter(|&&v| v < 0).count() as u64;
        for &slot in &slots {
            let at = *distinct.entry((location_list, slot)).or_insert_with(|| {
                lists.push((location_list, slot, number));
                sums.resize(sums.len() + width, 0);
                lists.len() - 1
            });
            for (t, &value) in values.iter().enumerate() {
                if value < 0 {
                    continue;
                }
                let sum = &mut sums[at * width + t];
                *sum = sum.checked_add(value as u64).ok_or_else(|| {
                    format!("pprof: sample {number}: the values of one stack add up past 2^64")
                })?;
            }
        }
    }

    // First, in sample order, what can be wrong with a stack: a location that does not
    // exist, a stack too deep, more frames than the budget. Then nothing can fail but the
    // sums.
    // A list's index is its row of `sums` (both were pushed together).
    for (at, &(list, _, number)) in lists.iter().enumerate() {
        if let Some(&index) = list.iter().rev().find(|&&index| index as usize >= location_count) {
            let id = missing_ids[index as usize - location_count];
            return Err(format!("pprof: location {id} referred to by sample {number} does not exist"));
        }
        let depth = list.iter().map(|&index| spans[index as usize + 1] - spans[index as usize]).sum::<usize>().max(1);
        if depth > limits.max_depth as usize {
            return Err(format!("pprof: sample {number}: {}", MergeError::TooDeep(limits.max_depth)));
        }
        let with_value = sums[at * width..(at + 1) * width].iter().filter(|&&v| v != 0).count();
        budget.spend((depth * with_value) as u64, "pprof", "over all sample types")?;
    }

    // Each slot's distinct stacks are merged once for all sample types, into one tree with a
    // value per type; each type's graph is then that tree without the frames whose total is 0
    // for the type (a stack whose value is 0 adds nothing to a graph).
    let tries: Vec<Result<Trie, String>> = (0..slot_count)
        .into_par_iter()
        .map(|slot| Trie::build(slot, &lists, &sums, width, (&frames, &spans), unknown))
        .collect();
    let tries: Vec<Trie> = tries.into_iter().collect::<Result<_, _>>()?;
    let merged: Vec<Result<FrameTable, MergeError>> = (0..slot_count * width)
        .into_par_iter()
        .map(|index| {
            let mut table = tries[index / width].table(index % width, &names)?;
            table.attach_raw(raw_pairs.iter().copied());
            Ok(table)
        })
        .collect();
    drop(tries);
    let mut tables: Vec<Option<FrameTable>> = Vec::with_capacity(merged.len());
    for table in merged {
        tables.push(Some(table.map_err(|e| format!("pprof: {e}"))?));
    }
    if negative > 0 {
        warnings.push(format!(
            "pprof: skipped {negative} negative value{} (a value per sample and sample type)",
            if negative == 1 { "" } else { "s" }
        ));
    }
    if strings.invalid_utf8 > 0 {
        warnings.push(format!(
            "pprof: {} string{} of the string table had bytes that are not UTF-8, shown as U+FFFD",
            strings.invalid_utf8,
            if strings.invalid_utf8 == 1 { "" } else { "s" }
        ));
    }

    // Graphs, with unique names (their folders are named by the build): per sample type, the
    // whole profile, then each value's, then the samples without the label.
    let mut used = HashSet::new();
    let mut unique = |base: String| {
        let mut name = base.clone();
        let mut n = 1;
        while !used.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        name
    };
    let mut graphs = Vec::with_capacity(tables.len());
    for &i in &order {
        let (name, unit) = types[i];
        let type_name = unique(if name.is_empty() { "values" } else { name }.to_string());
        let unit = if unit.is_empty() { "count" } else { unit };
        let mut take = |slot: usize| tables[slot * width + i].take().expect("each graph is taken once");
        graphs.push(Graph { name: type_name.clone(), unit: unit.to_string(), table: take(0), timeline: false });
        if let Some((key, values)) = &split {
            for (k, value) in values.iter().enumerate() {
                let table = take(k + 1);
                graphs.push(Graph { name: unique(format!("{type_name} {key}={value}")), unit: unit.to_string(), table, timeline: false });
            }
            if unlabelled {
                let table = take(values.len() + 1);
                graphs.push(Graph { name: unique(format!("{type_name} {key}=(none)")), unit: unit.to_string(), table, timeline: false });
            }
        }
    }

    let mut metadata = metadata(p, &strings)?;
    for (key, values) in &label_values {
        let mut listed: Vec<String> = values.iter().take(MAX_LISTED_VALUES).map(|v| v.to_string()).collect();
        if values.len() > MAX_LISTED_VALUES {
            listed.push(format!("… and {} more", values.len() - MAX_LISTED_VALUES));
        }
        metadata.insert(format!("label {key}"), listed.join(", "));
    }

    Ok(Decoded { format: "pprof", compression: Compression::None, graphs, warnings, metadata })
}

/// Location ids to their numbers: ids up to the number of locations (profiles number them
/// from 1) in a vector, the others in a hash map.
struct IdIndex {
    small: Vec<u32>,
    large: FxHashMap<u64, u32>,
}

impl IdIndex {
    const NONE: u32 = u32::MAX;

    fn new(locations: usize) -> Self {
        IdIndex { small: vec![Self::NONE; locations + 1], large: FxHashMap::default() }
    }

    fn get(&self, id: u64) -> Option<u32> {
        match usize::try_from(id).ok().and_then(|i| self.small.get(i)) {
            Some(&Self::NONE) => None,
            Some(&index) => Some(index),
            None => self.large.get(&id).copied(),
        }
    }

    fn insert(&mut self, id: u64, index: u32) {
        match usize::try_from(id).ok().and_then(|i| self.small.get_mut(i)) {
            Some(slot) => *slot = index,
            None => {
                self.large.insert(id, index);
            }
        }
    }
}

/// One slot's distinct stacks merged once for all sample types: a prefix tree of frame names
/// (their ranks in byte order), its nodes in depth-first order with siblings in name order,
/// which is the order of a graph's rows.
struct Trie {
    parent: Vec<u32>,
    depth: Vec<u32>,
    name: Vec<u32>,
    /// Each sample type's own value of every node.
    self_: Vec<Vec<u64>>,
}

impl Trie {
    /// Merges the stacks of `slot`: each list of `lists` (locations, with its `width` sums in
    /// `sums`) expanded to its frames, root first (location k's are `location_frames[spans[k]..
    /// spans[k + 1]]`); a list without locations is the frame `unknown`.
    fn build(
        slot: usize,
        lists: &[(&[u32], usize, usize)],
        sums: &[u64],
        width: usize,
        (location_frames, spans): (&[u32], &[usize]),
        unknown: u32,
    ) -> Result<Trie, String> {
        // The stacks of the slot, expanded, as (start in `frames`, end, list).
        let mut frames: Vec<u32> = Vec::new();
        let mut stacks: Vec<(u32, u32, u32)> = Vec::new();
        for (at, &(list, list_slot, _)) in lists.iter().enumerate() {
            if list_slot != slot || sums[at * width..(at + 1) * width].iter().all(|&v| v == 0) {
                continue;
            }
            let start = frames.len();
            for &index in list.iter().rev() {
                frames.extend_from_slice(&location_frames[spans[index as usize]..spans[index as usize + 1]]);
            }
            if frames.len() == start {
                frames.push(unknown);
            }
            stacks.push((start as u32, frames.len() as u32, at as u32));
        }
        // In the order of their names: the stacks under a frame come together, so each stack
        // is merged by comparing it with the one before, and a frame's children are made in
        // name order. Ties (lists of different locations with the same names) go by list, so
        // that the order, and a sum's overflow error, does not depend on the threads.
        let frames_of = |&(start, end, _): &(u32, u32, u32)| &frames[start as usize..end as usize];
        stacks.par_sort_unstable_by(|a, b| frames_of(a).cmp(frames_of(b)).then(a.2.cmp(&b.2)));

        let mut trie = Trie { parent: vec![NO_PARENT], depth: vec![0], name: vec![u32::MAX], self_: vec![vec![0]; width] };
        // At most a node per frame; reserved, so that the columns are not copied as they grow
        // (the pages not written to are never touched).
        let most = frames.len() + 1;
        trie.parent.reserve(most);
        trie.depth.reserve(most);
        trie.name.reserve(most);
        trie.self_.iter_mut().for_each(|values| values.reserve(most));
        // The nodes of the previous stack's frames.
        let mut path: Vec<u32> = Vec::new();
        let mut prev: &[u32] = &[];
        for stack in &stacks {
            let these = frames_of(stack);
            let shared = prev.iter().zip(these).take_while(|(a, b)| a == b).count();
            path.truncate(shared);
            for &name in &these[shared..] {
                let node = trie.parent.len() as u32;
                trie.parent.push(path.last().copied().unwrap_or(0));
                trie.depth.push(path.len() as u32 + 1);
                trie.name.push(name);
                for values in &mut trie.self_ {
                    values.push(0);
                }
                path.push(node);
            }
            let leaf = *path.last().expect("a stack has a frame") as usize;
            let at = stack.2 as usize;
            for (values, &v) in trie.self_.iter_mut().zip(&sums[at * width..(at + 1) * width]) {
                values[leaf] = values[leaf]
                    .checked_add(v)
                    .ok_or_else(|| format!("pprof: sample {}: {}", lists[at].2, MergeError::Overflow))?;
            }
            prev = these;
        }
        Ok(trie)
    }

    /// The graph of sample type `t`: the nodes whose total is not 0 for it (and the root),
    /// laid out; `names` are the distinct frame names in byte order.
    fn table(&self, t: usize, names: &[&str]) -> Result<FrameTable, MergeError> {
        let self_ = &self.self_[t];
        let n = self.parent.len();
        // Children come after their parents: one backward pass sums the subtrees.
        let mut total = self_.clone();
        for node in (1..n).rev() {
            let p = self.parent[node] as usize;
            total[p] = total[p].checked_add(total[node]).ok_or(MergeError::Overflow)?;
        }
        if total[0] >= MAX_EXACT {
            return Err(MergeError::TooLarge(total[0]));
        }
        // The graph's name table: the names of its frames, in byte order, after the root's.
        let mut index = vec![0u32; names.len()];
        for node in 1..n {
            if total[node] != 0 {
                index[self.name[node] as usize] = 1;
            }
        }
        let mut table_names = vec![ROOT_NAME.to_string()];
        for (rank, i) in index.iter_mut().enumerate() {
            if *i != 0 {
                *i = table_names.len() as u32;
                table_names.push(names[rank].to_string());
            }
        }
        let rows = 1 + (1..n).filter(|&node| total[node] != 0).count();
        let mut table = FrameTable {
            names: table_names,
            name: Vec::with_capacity(rows),
            depth: Vec::with_capacity(rows),
            parent: Vec::with_capacity(rows),
            offset: Vec::with_capacity(rows),
            total: Vec::with_capacity(rows),
            self_: Vec::with_capacity(rows),
            ..FrameTable::default()
        };
        // Depth-first order is kept by leaving nodes out (a node's total is at least its
        // children's). `rows_on_path[d]` is the row of the last frame at depth d, the parent of
        // the next at d + 1; `next[d]` the offset of the next frame at depth d: children are
        // laid out from their parent's offset, left to right, the parent's own value after them.
        let mut rows_on_path: Vec<u32> = Vec::new();
        let mut next: Vec<u64> = Vec::new();
        for node in 0..n {
            if node != 0 && total[node] == 0 {
                continue;
            }
            let d = self.depth[node] as usize;
            let offset = if d == 0 { 0 } else { next[d] };
            next.truncate(d);
            next.push(offset + total[node]);
            next.push(offset);
            rows_on_path.truncate(d);
            table.parent.push(rows_on_path.last().copied().unwrap_or(NO_PARENT));
            rows_on_path.push(table.name.len() as u32);
            table.name.push(if node == 0 { 0 } else { index[self.name[node] as usize] });
            table.depth.push(d as u32);
            table.offset.push(offset);
            table.total.push(total[node]);
            table.self_.push(self_[node]);
        }
        Ok(table)
    }
}

/// What the profile says about itself (its labels are added by the caller).
fn metadata(p: &Profile, strings: &Strings) -> Result<BTreeMap<String, String>, String> {
    let mut m = BTreeMap::new();
    if p.time_nanos != 0 {
        m.insert("time".into(), rfc3339(p.time_nanos));
    }
    if p.duration_nanos > 0 {
        m.insert("duration".into(), crate::units::format_value(p.duration_nanos.into(), "nanoseconds"));
    }
    if p.period != 0 {
        let period = match &p.period_type {
            Some(t) => {
                let what = || "period_type".to_string();
                let (ty, unit) = (strings.get(t.r#type, &what)?, strings.get(t.unit, &what)?);
                match (ty.is_empty(), unit.is_empty()) {
                    (true, true) => p.period.to_string(),
                    (true, false) => crate::units::format_value(p.period.into(), unit),
                    (false, _) => format!("{} of {ty}", crate::units::format_value(p.period.into(), unit)),
                }
            }
            None => p.period.to_string(),
        };
        m.insert("period".into(), period);
    }
    let mut comments = Vec::new();
    for (i, &c) in p.comment.iter().enumerate() {
        comments.push(strings.get(c, &|| format!("comment {}", i + 1))?);
    }
    if !comments.is_empty() {
        m.insert("comments".into(), comments.join("\n"));
    }
    for (key, index) in [("doc_url", p.doc_url), ("drop_frames", p.drop_frames), ("keep_frames", p.keep_frames)] {
        let value = strings.get(index, &|| key.to_string())?;
        if !value.is_empty() {
            m.insert(key.into(), value.to_string());
        }
    }
    Ok(m)
}

/// `2026-11-22T00:06:52Z` from nanoseconds since the Unix epoch (UTC, whole seconds, rounded
/// down, as the archive dates runs).
fn rfc3339(nanos: i64) -> String {
    // Every i64 of nanoseconds (years 1677 to 2262) is within jiff's range.
    jiff::Timestamp::from_second(nanos.div_euclid(1_000_000_000))
        .expect("within jiff's range")
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::frames::StackMerger;
    use crate::ingest::decode::MIN_FRAME_BUDGET;

    /// A profile with strings interned on the fly.
    struct Builder {
        p: Profile,
    }

    impl Builder {
        fn new(types: &[(&str, &str)]) -> Self {
            let mut b = Builder { p: Profile { string_table: vec![Vec::new()], ..Default::default() } };
            for (t, u) in types {
                let vt = ValueType { r#type: b.s(t), unit: b.s(u) };
                b.p.sample_type.push(vt);
            }
            b
        }

        fn s(&mut self, s: &str) -> i64 {
            if let Some(i) = self.p.string_table.iter().position(|x| x == s.as_bytes()) {
                return i as i64;
            }
            self.p.string_table.push(s.as_bytes().to_vec());
            self.p.string_table.len() as i64 - 1
        }

        fn function(&mut self, id: u64, name: &str) {
            let name = self.s(name);
            self.p.function.push(Function { id, name, ..Default::default() });
        }

        /// A location whose lines are the given functions, innermost first.
        fn location(&mut self, id: u64, functions: &[u64]) {
            let line = functions.iter().map(|&f| Line { function_id: f, line: 1, column: 0 }).collect();
            self.p.location.push(Location { id, line, address: 0x1000 + id, ..Default::default() });
        }

        /// A sample, locations leaf first.
        fn sample(&mut self, locations: &[u64], values: &[i64]) {
            self.p.sample.push(Sample { location_id: locations.to_vec(), value: values.to_vec(), label: vec![] });
        }

        /// A string label.
        fn label(&mut self, key: &str, value: &str) -> Label {
            Label { key: self.s(key), str: self.s(value), ..Default::default() }
        }

        /// A numeric label with its unit ("" for none).
        fn num_label(&mut self, key: &str, num: i64, unit: &str) -> Label {
            Label { key: self.s(key), num, num_unit: self.s(unit), ..Default::default() }
        }

        /// A sample with labels, locations leaf first.
        fn labelled_sample(&mut self, locations: &[u64], values: &[i64], labels: &[Label]) {
            self.p.sample.push(Sample { location_id: locations.to_vec(), value: values.to_vec(), label: labels.to_vec() });
        }

        fn bytes(&self) -> Vec<u8> {
            self.p.encode_to_vec()
        }
    }

    fn by_label(b: &Builder, key: &str) -> Decoded {
        let options = PprofConfig { graph_by_label: Some(key.to_string()) };
        decode(&mut &b.bytes()[..], &Limits::default(), &options).unwrap()
    }

    fn names_and_units(d: &Decoded) -> Vec<(&str, &str)> {
        d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect()
    }

    fn decode_bytes(b: &[u8]) -> Result<Decoded, String> {
        decode(&mut &b[..], &Limits::default(), &PprofConfig::default())
    }

    fn folded(g: &Graph) -> Vec<String> {
        crate::store::fold::folded_lines(&g.table)
    }

    #[test]
    fn functions_without_ids_are_found_by_their_position() {
        // As the .NET profiler writes them: every function's id is 0 (omitted on the wire),
        // and lines name functions by their 1-based position in the list.
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(0, "Program.Main");
        b.function(0, "Worker.Run");
        b.function(0, "Hash.Compute");
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.location(3, &[3]);
        b.sample(&[3, 2, 1], &[5]);
        b.sample(&[2, 1], &[2]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), ["Program.Main;Worker.Run 2\n", "Program.Main;Worker.Run;Hash.Compute 5\n"]);
        // Mixed: a function without an id is found by its position, one with an id by its id,
        // and a stated id wins over a position; a function that is neither is still an error.
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(0, "A"); // position 1
        b.function(2, "B"); // id 2 (and position 2)
        b.function(1, "C"); // id 1, which A's position would have been
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.sample(&[2, 1], &[1]);
        assert_eq!(folded(&decode_bytes(&b.bytes()).unwrap().graphs[0]), ["C;B 1\n"]);
        b.location(3, &[4]);
        b.sample(&[3], &[1]);
        assert_eq!(decode_bytes(&b.bytes()).unwrap_err(), "pprof: location 3 refers to function 4, which does not exist");
    }

    #[test]
    fn a_function_without_a_name_is_named_by_its_system_name() {
        // As C and C++ profilers write them: `name` empty, the symbol in `system_name`.
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "main");
        let (name, system_name) = (b.s(""), b.s("_ZN3foo3barEv"));
        b.p.function.push(Function { id: 2, name, system_name, ..Default::default() });
        // A function with both keeps its name.
        let (name, system_name) = (b.s("baz"), b.s("_Z3bazv"));
        b.p.function.push(Function { id: 3, name, system_name, ..Default::default() });
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.location(3, &[3]);
        b.sample(&[2, 1], &[3]);
        b.sample(&[3, 2, 1], &[1]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), ["main;_ZN3foo3barEv 3\n", "main;_ZN3foo3barEv;baz 1\n"]);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    /// main calls work, into which square was inlined; work calls leaf.
    fn sample_profile() -> Builder {
        let mut b = Builder::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
        b.function(1, "main");
        b.function(2, "work");
        b.function(3, "square");
        b.function(4, "leaf;with;semicolons");
        b.location(10, &[1]);
        b.location(11, &[3, 2]); // square inlined into work
        b.location(12, &[4]);
        b.sample(&[11, 10], &[2, 20]);
        b.sample(&[12, 11, 10], &[1, 10]);
        b.sample(&[10], &[3, 0]);
        b
    }

    #[test]
    fn every_sample_type_is_a_graph_the_default_first_with_inlined_frames() {
        let b = sample_profile();
        assert!(is_applicable(&b.bytes()));
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(d.format, "pprof");
        let names: Vec<(&str, &str)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect();
        assert_eq!(names, [("cpu", "nanoseconds"), ("samples", "count")]);
        assert_eq!(folded(&d.graphs[0]), ["main;work;square 20\n", "main;work;square;leaf;with;semicolons 10\n"]);
        assert_eq!(
            folded(&d.graphs[1]),
            ["main 3\n", "main;work;square 2\n", "main;work;square;leaf;with;semicolons 1\n"]
        );
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn generated_classes_lose_their_numbers_and_two_of_one_name_are_one_frame() {
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "java.lang.Thread.run");
        b.function(2, "App$$Lambda$75.0x00007ff44c0c4208.run");
        b.function(3, "App$$Lambda$76.0x00007ff44c0c4640.run");
        b.location(1, &[1]);
        b.location(2, &[2]);
        b.location(3, &[3]);
        b.sample(&[2, 1], &[3]);
        b.sample(&[3, 1], &[4]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), ["java.lang.Thread.run;App$$Lambda_.run 7\n"]);
        let t = &d.graphs[0].table;
        let at = t.names.iter().position(|n| n == "App$$Lambda_.run").unwrap() as u32;
        assert_eq!(t.raw.get(&at).map(String::as_str), Some("App$$Lambda$75.0x00007ff44c0c4208.run"));
        assert_eq!(t.raw.len(), 1);
    }

    #[test]
    fn default_sample_type_and_duplicate_names() {
        let mut b = Builder::new(&[("alloc_space", "bytes"), ("alloc_space", "bytes"), ("inuse", "bytes"), ("", "")]);
        b.function(1, "main");
        b.location(1, &[1]);
        b.sample(&[1], &[1, 2, 3, 4]);
        b.p.default_sample_type = b.s("alloc_space");
        let d = decode_bytes(&b.bytes()).unwrap();
        let names: Vec<(&str, &str)> = d.graphs.iter().map(|g| (g.name.as_str(), g.unit.as_str())).collect();
        assert_eq!(names, [("alloc_space", "bytes"), ("alloc_space-2", "bytes"), ("inuse", "bytes"), ("values", "count")]);
        assert_eq!(d.graphs[1].table.grand_total(), 2);
        // An unknown default falls back to the last.
        b.p.default_sample_type = b.s("nonesuch");
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(d.graphs[0].name, "values");
    }

    #[test]
    fn unsymbolised_locations_show_address_and_mapping_file() {
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "main");
        b.location(1, &[1]);
        let file = b.s("/usr/lib/libc.so.6");
        b.p.mapping.push(Mapping { id: 7, filename: file, ..Default::default() });
        b.p.location.push(Location { id: 2, mapping_id: 7, address: 0x7f3a2b1c, ..Default::default() });
        b.p.location.push(Location { id: 3, address: 0xdead, ..Default::default() });
        // A line without a function is left out, leaving the address.
        b.p.location.push(Location { id: 4, address: 0xbeef, line: vec![Line::default()], ..Default::default() });
        b.sample(&[2, 1], &[5]);
        b.sample(&[3, 1], &[6]);
        b.sample(&[4, 1], &[7]);
        b.sample(&[], &[8]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(
            folded(&d.graphs[0]),
            ["[unknown] 8\n", "main;0x7f3a2b1c (/usr/lib/libc.so.6) 5\n", "main;0xbeef 7\n", "main;0xdead 6\n"]
        );
    }

    #[test]
    fn negative_values_are_skipped_and_counted_and_bad_utf8_repaired() {
        let mut b = sample_profile();
        b.sample(&[10], &[-1, -5]);
        b.function(5, "x");
        b.p.string_table.last_mut().unwrap().push(0xff);
        b.location(13, &[5]);
        b.sample(&[13], &[1, 1]);
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(d.graphs[0].table.grand_total(), 31);
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
        assert!(d.warnings[0].contains("skipped 2 negative values"), "{}", d.warnings[0]);
        assert!(d.warnings[1].contains("1 string"), "{}", d.warnings[1]);
        assert!(d.graphs[0].table.names.iter().any(|n| n == "x\u{fffd}"));
    }

    #[test]
    fn metadata_is_kept() {
        let mut b = sample_profile();
        b.p.time_nanos = 1_795_305_612_004_271_667; // 2026-11-22T00:00:12Z
        b.p.duration_nanos = 2_000_000_000;
        b.p.period = 10_000_000;
        b.p.period_type = Some(ValueType { r#type: b.s("cpu"), unit: b.s("nanoseconds") });
        let c1 = b.s("first comment");
        let c2 = b.s("second");
        b.p.comment = vec![c1, c2];
        b.p.drop_frames = b.s("runtime\\..*");
        let d = decode_bytes(&b.bytes()).unwrap();
        let m = &d.metadata;
        assert_eq!(m["time"], "2026-11-22T00:00:12Z");
        assert_eq!(m["duration"], "2.00 s");
        assert_eq!(m["period"], "10.0 ms of cpu");
        assert_eq!(m["comments"], "first comment\nsecond");
        assert_eq!(m["drop_frames"], "runtime\\..*");
        assert!(!m.contains_key("keep_frames"));
    }

    #[test]
    fn labels_are_metadata_and_graph_by_label_makes_a_graph_per_value() {
        // sample_profile's three samples have no labels; three more have some.
        let mut b = sample_profile();
        let (w1, w2) = (b.label("thread", "worker-1"), b.label("thread", "worker-2"));
        let (big, small) = (b.num_label("bytes", 4096, "bytes"), b.num_label("bytes", 512, "bytes"));
        let (retries, no_key) = (b.num_label("retries", 3, ""), b.label("", "ignored"));
        b.labelled_sample(&[12, 11, 10], &[1, 5], &[w2.clone(), big]);
        b.labelled_sample(&[11, 10], &[4, 40], &[w1.clone(), small, retries, no_key]);
        // Two values of one key: the sample counts in both of their graphs.
        b.labelled_sample(&[11, 10], &[1, 1], &[w1, w2]);

        // Without graph_by_label: the graphs of the whole profile only, the labels as metadata.
        let plain = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(names_and_units(&plain), [("cpu", "nanoseconds"), ("samples", "count")]);
        assert_eq!(folded(&plain.graphs[0]), ["main;work;square 61\n", "main;work;square;leaf;with;semicolons 15\n"]);
        let m = &plain.metadata;
        assert_eq!(m["label thread"], "worker-1, worker-2");
        assert_eq!(m["label bytes"], "512 bytes, 4096 bytes", "numbers in numeric order, with their unit");
        assert_eq!(m["label retries"], "3");
        assert!(!m.contains_key("label "), "a label without a key is ignored: {m:?}");

        // By a string label: per sample type, the whole profile, each value, then (none).
        let d = by_label(&b, "thread");
        assert_eq!(
            names_and_units(&d),
            [
                ("cpu", "nanoseconds"),
                ("cpu thread=worker-1", "nanoseconds"),
                ("cpu thread=worker-2", "nanoseconds"),
                ("cpu thread=(none)", "nanoseconds"),
                ("samples", "count"),
                ("samples thread=worker-1", "count"),
                ("samples thread=worker-2", "count"),
                ("samples thread=(none)", "count"),
            ]
        );
        assert_eq!(folded(&d.graphs[0]), folded(&plain.graphs[0]), "the whole profile as before");
        assert_eq!(folded(&d.graphs[4]), folded(&plain.graphs[1]));
        assert_eq!(folded(&d.graphs[1]), ["main;work;square 41\n"]);
        assert_eq!(folded(&d.graphs[2]), ["main;work;square 1\n", "main;work;square;leaf;with;semicolons 5\n"]);
        assert_eq!(folded(&d.graphs[3]), ["main;work;square 20\n", "main;work;square;leaf;with;semicolons 10\n"]);
        assert_eq!(folded(&d.graphs[5]), ["main;work;square 5\n"]);
        assert_eq!(folded(&d.graphs[6]), ["main;work;square 1\n", "main;work;square;leaf;with;semicolons 1\n"]);
        assert_eq!(
            folded(&d.graphs[7]),
            ["main 3\n", "main;work;square 2\n", "main;work;square;leaf;with;semicolons 1\n"]
        );
        assert_eq!(d.metadata, plain.metadata);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);

        // By a numeric label: values in numeric order, named with their unit.
        let d = by_label(&b, "bytes");
        let names: Vec<&str> = d.graphs.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names[..4], ["cpu", "cpu bytes=512 bytes", "cpu bytes=4096 bytes", "cpu bytes=(none)"]);
        assert_eq!(folded(&d.graphs[1]), ["main;work;square 40\n"]);
        assert_eq!(folded(&d.graphs[2]), ["main;work;square;leaf;with;semicolons 5\n"]);
        assert_eq!(folded(&d.graphs[3]), ["main;work;square 21\n", "main;work;square;leaf;with;semicolons 10\n"]);

        // Every sample labelled: no (none) graph. A key no sample has: the graphs as before.
        let mut all = Builder::new(&[("samples", "count")]);
        all.function(1, "main");
        all.location(1, &[1]);
        let l = all.num_label("span", 7, "");
        all.labelled_sample(&[1], &[2], &[l]);
        let names: Vec<String> = by_label(&all, "span").graphs.into_iter().map(|g| g.name).collect();
        assert_eq!(names, ["samples", "samples span=7"]);
        assert_eq!(names_and_units(&by_label(&b, "nonesuch")), names_and_units(&plain));
    }

    #[test]
    fn many_label_values_are_cut_in_the_metadata_and_not_split_past_the_limit() {
        let mut b = Builder::new(&[("samples", "count")]);
        b.function(1, "main");
        b.location(1, &[1]);
        for i in 0..=MAX_LABEL_GRAPHS {
            let l = b.label("span", &format!("s{i:03}"));
            b.labelled_sample(&[1], &[1], &[l]);
        }
        let d = by_label(&b, "span");
        let more = MAX_LABEL_GRAPHS + 1 - MAX_LISTED_VALUES;
        let listed = &d.metadata["label span"];
        assert!(listed.starts_with("s000, s001, ") && listed.ends_with(&format!("s019, … and {more} more")), "{listed}");
        assert_eq!(d.graphs.len(), 1, "not split");
        assert!(d.warnings.iter().any(|w| w.contains("label \"span\" has 101 values, more than 100")), "{:?}", d.warnings);
        // One value fewer is split.
        b.p.sample.pop();
        assert_eq!(by_label(&b, "span").graphs.len(), 1 + MAX_LABEL_GRAPHS);
    }

    #[test]
    fn a_label_string_out_of_range_is_an_error() {
        let mut b = sample_profile();
        b.labelled_sample(&[10], &[1, 1], &[Label { key: 99, ..Default::default() }]);
        assert!(err(&b.bytes()).contains("string index 99 of a label of sample 4 out of range"));
    }

    #[test]
    fn time_formats() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000_000_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(rfc3339(i64::MAX), "2262-04-11T23:47:16Z");
        assert_eq!(rfc3339(i64::MIN), "1677-09-21T00:12:43Z");
    }

    fn err(bytes: &[u8]) -> String {
        match decode_bytes(bytes) {
            Ok(_) => panic!("decoded a malformed profile"),
            Err(e) => e,
        }
    }

    #[test]
    fn truncated_protobuf_never_panics_and_a_cut_field_is_an_error() {
        let bytes = sample_profile().bytes();
        // Where the top-level fields end, read from the protobuf wire format here: a prefix
        // ending anywhere else cuts a field and must be an error; one ending at a boundary is
        // a whole message that lacks what follows, and any result but a panic is right.
        let varint = |at: &mut usize| {
            let mut v = 0u64;
            for shift in (0..64).step_by(7) {
                let b = bytes[*at];
                *at += 1;
                v |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    break;
                }
            }
            v
        };
        let mut boundaries = vec![0];
        let mut at = 0;
        while at < bytes.len() {
            let tag = varint(&mut at);
            match tag & 7 {
                0 => drop(varint(&mut at)),
                1 => at += 8,
                2 => at += varint(&mut at) as usize,
                5 => at += 4,
                w => panic!("wire type {w}"),
            }
            boundaries.push(at);
        }
        assert_eq!(at, bytes.len());
        assert!(boundaries.len() > 10, "{boundaries:?}");
        let mut errors = 0;
        for n in 1..bytes.len() {
            let result = decode_bytes(&bytes[..n]);
            if !boundaries.contains(&n) {
                assert!(result.is_err(), "a prefix of {n} bytes cuts a field but decoded");
            }
            errors += usize::from(result.is_err());
        }
        assert!(errors >= bytes.len() - boundaries.len(), "{errors} errors of {} prefixes", bytes.len() - 1);
        let e = err(&bytes[..bytes.len() - 3]);
        assert!(e.starts_with("pprof: malformed protobuf"), "{e}");
    }

    #[test]
    fn wrong_wire_type_is_an_error() {
        let mut bytes = sample_profile().bytes();
        // Field 9 (time_nanos) as a length-delimited field instead of a varint.
        bytes.extend_from_slice(&[(9 << 3) | 2, 1, 0]);
        let e = err(&bytes);
        assert!(e.contains("malformed protobuf") && e.contains("wire type"), "{e}");
    }

    #[test]
    fn samples_read_apart_from_the_rest_give_the_same_graphs() {
        let plain = decode_bytes(&sample_profile().bytes()).unwrap();
        // Location ids far past the number of locations, and one that is u64::MAX.
        let mut b = sample_profile();
        let renumber = |id: u64| match id {
            10 => u64::MAX,
            11 => 1 << 40,
            id => id,
        };
        for l in &mut b.p.location {
            l.id = renumber(l.id);
        }
        for sample in &mut b.p.sample {
            sample.location_id.iter_mut().for_each(|id| *id = renumber(*id));
        }
        let d = decode_bytes(&b.bytes()).unwrap();
        assert_eq!(folded(&d.graphs[0]), folded(&plain.graphs[0]));
        assert_eq!(folded(&d.graphs[1]), folded(&plain.graphs[1]));
        b.sample(&[12, 1 << 41], &[1, 1]);
        assert_eq!(err(&b.bytes()), format!("pprof: location {} referred to by sample 4 does not exist", 1u64 << 41));
        // An unknown field that is a group (field 20: start 0xa3 0x01, a varint, end 0xa4 0x01), before the
        // samples: skipped, as prost skips it.
        let mut bytes = vec![0xa3, 0x01, 1 << 3, 5, 0xa4, 0x01];
        bytes.extend(sample_profile().bytes());
        let d = decode_bytes(&bytes).unwrap();
        assert_eq!(folded(&d.graphs[0]), folded(&plain.graphs[0]));
        assert_eq!(folded(&d.graphs[1]), folded(&plain.graphs[1]));
        // Field 2 (sample) as a varint, and a sample whose location list is cut short.
        let mut bytes = sample_profile().bytes();
        bytes.extend_from_slice(&[2 << 3, 1]);
        let e = err(&bytes);
        assert!(e.starts_with("pprof: malformed protobuf") && e.contains("wire type"), "{e}");
        let mut bytes = sample_profile().bytes();
        bytes.extend_from_slice(&[(2 << 3) | 2, 3, (1 << 3) | 2, 5, 10]);
        let e = err(&bytes);
        assert!(e.starts_with("pprof: malformed protobuf") && e.ends_with(": sample 4"), "{e}");
    }

    #[test]
    fn samples_read_without_prost_are_what_prost_reads() {
        // Packed, as prost writes them: negative values, a label, and then the same fields
        // one varint each (as some writers write them) appended, which adds to them.
        let labelled = Sample {
            location_id: vec![3, 1 << 40, 1],
            value: vec![-5, 0, i64::MAX],
            label: vec![Label { key: 1, str: 2, num: -7, num_unit: 3 }],
        };
        let mut bytes = labelled.encode_to_vec();
        bytes.extend_from_slice(&[0x08, 9, 0x10, 4, 0x08, 0x80, 0x01]);
        let want = Sample::decode(bytes.as_slice()).unwrap();
        assert_eq!(want.location_id, [3, 1 << 40, 1, 9, 128]);
        let mut read = Sample::default();
        assert!(read_sample(&bytes, &mut read));
        assert_eq!(read, want);
        // Cut anywhere: not read, or read as prost reads it.
        for n in 0..bytes.len() {
            let mut read = Sample::default();
            if read_sample(&bytes[..n], &mut read) {
                assert_eq!(Sample::decode(&bytes[..n]).as_ref(), Ok(&read), "cut at {n}");
            }
        }
        // Another field is left to prost.
        let mut other = bytes.clone();
        other.extend_from_slice(&[0x20, 1]);
        assert!(!read_sample(&other, &mut Sample::default()));
        assert_eq!(Sample::decode(other.as_slice()).unwrap(), want);
    }

    #[test]
    fn string_index_out_of_range_is_an_error() {
        let mut b = sample_profile();
        b.p.function[1].name = 57;
        let e = err(&b.bytes());
        let n = b.p.string_table.len();
        assert_eq!(e, format!("pprof: string index 57 of function 2 out of range (the table has {n})"));
        let mut b = sample_profile();
        b.p.sample_type[0].unit = -3;
        assert!(err(&b.bytes()).contains("string index -3 of sample type 1"));
    }

    #[test]
    fn references_to_nothing_are_errors() {
        let mut b = sample_profile();
        b.sample(&[10, 99], &[1, 1]);
        assert_eq!(err(&b.bytes()), "pprof: location 99 referred to by sample 4 does not exist");
        let mut b = sample_profile();
        b.location(14, &[42]);
        assert_eq!(err(&b.bytes()), "pprof: location 14 refers to function 42, which does not exist");
        let mut b = sample_profile();
        b.p.location.push(Location { id: 15, mapping_id: 3, address: 1, ..Default::default() });
        assert_eq!(err(&b.bytes()), "pprof: location 15 refers to mapping 3, which does not exist");
        let mut b = sample_profile();
        b.p.location.push(Location { id: 16, ..Default::default() });
        assert_eq!(err(&b.bytes()), "pprof: location 16 has no line and no address: nothing to show");
        let mut b = sample_profile();
        b.sample(&[10], &[1]);
        assert_eq!(err(&b.bytes()), "pprof: sample 4 has 1 values but the profile has 2 sample types");
        let b = Builder::new(&[]);
        let mut bytes = b.bytes();
        bytes.extend_from_slice(&[(9 << 3), 1]);
        assert_eq!(err(&bytes), "pprof: the profile has no sample types");
    }

    #[test]
    fn samples_of_one_stack_add_up_per_sample_type() {
        // The same location list three times (as label sets make it), with a negative and a
        // zero value among them, gives the graph of its sums; other stacks are untouched.
        let mut b = sample_profile();
        b.sample(&[12, 11, 10], &[4, 0]);
        b.sample(&[12, 11, 10], &[-7, 5]);
        let d = decode_bytes(&b.bytes()).unwrap();
        let cpu = folded(&d.graphs[0]);
        let samples = folded(&d.graphs[1]);
        assert_eq!(d.graphs[0].name, "cpu");
        assert!(cpu.contains(&"main;work;square;leaf;with;semicolons 15\n".to_string()), "{cpu:?}");
        assert!(samples.contains(&"main;work;square;leaf;with;semicolons 5\n".to_string()), "{samples:?}");
        assert!(samples.contains(&"main;work;square 2\n".to_string()), "{samples:?}");
        assert!(d.warnings.iter().any(|w| w.contains("skipped 1 negative value")), "{:?}", d.warnings);
    }

    #[test]
    fn each_graph_is_its_samples_stacks_merged_one_by_one() {
        // Samples drawn over a small call graph, with functions that share a name, an address
        // named like a function, a sample without locations and many zero values: each sample
        // type's table, column for column, is what merging each sample's stack with a value
        // for that type, one at a time, gives.
        let mut b = Builder::new(&[("a", "count"), ("b", "count"), ("c", "count")]);
        let functions = ["main", "work", "work", "b;c", "zeta", "alpha", "work", "0xabc", "[unknown]"];
        for (i, name) in functions.iter().enumerate() {
            b.function(i as u64 + 1, name);
        }
        let mut seed: u64 = 7;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for id in 1..=12 {
            let lines: Vec<u64> = (0..1 + next(3)).map(|_| 1 + next(functions.len() as u64)).collect();
            b.location(id, &lines);
        }
        b.p.location.push(Location { id: 13, address: 0xabc, ..Default::default() });
        for _ in 0..400 {
            let ids: Vec<u64> = (0..next(6)).map(|_| 1 + next(13)).collect();
            let values: Vec<i64> = (0..3).map(|_| if next(3) == 0 { 0 } else { next(1000) as i64 }).collect();
            b.sample(&ids, &values);
        }
        let d = decode_bytes(&b.bytes()).unwrap();
        let names = |l: &Location| -> Vec<String> {
            if l.line.is_empty() {
                return vec![format!("{:#x}", l.address)];
            }
            l.line.iter().rev().map(|line| functions[line.function_id as usize - 1].to_string()).collect()
        };
        for (t, type_name) in ["a", "b", "c"].iter().enumerate() {
            let mut m = StackMerger::new(false, 1000);
            for sample in &b.p.sample {
                if sample.value[t] == 0 {
                    continue;
                }
                let mut stack: Vec<String> = Vec::new();
                for id in sample.location_id.iter().rev() {
                    stack.extend(names(b.p.location.iter().find(|l| l.id == *id).unwrap()));
                }
                if stack.is_empty() {
                    stack.push("[unknown]".into());
                }
                let stack: Vec<&str> = stack.iter().map(|s| s.as_str()).collect();
                m.add_names(&stack, sample.value[t] as u64, 0).unwrap();
            }
            let graph = d.graphs.iter().find(|g| g.name == *type_name).unwrap();
            assert!(graph.table.len() > 50, "{}", graph.table.len());
            assert_eq!(graph.table, m.finish().unwrap(), "sample type {type_name}");
        }
    }

    #[test]
    fn sums_past_the_limits_are_errors() {
        // Samples of i64::MAX, i64::MAX and 2 on locations of functions `f` and `second`.
        let profile = |second: &str| {
            let mut b = Builder::new(&[("samples", "count")]);
            b.function(1, "f");
            b.function(2, second);
            b.location(1, &[1]);
            b.location(2, &[2]);
            b.sample(&[1], &[i64::MAX]);
            b.sample(&[1], &[i64::MAX]);
            b.sample(&[2], &[2]);
            b
        };
        // Two locations of functions with one name: one stack, whose sum overflows.
        assert_eq!(err(&profile("f").bytes()), "pprof: sample 3: the counts add up to more than 2^64 (overflow)");
        // Different stacks whose total overflows; a total too large for the chunk files.
        let mut b = profile("g");
        assert_eq!(err(&b.bytes()), "pprof: the counts add up to more than 2^64 (overflow)");
        b.p.sample.truncate(1);
        b.p.sample[0].value[0] = 1 << 53;
        assert_eq!(err(&b.bytes()), format!("pprof: the total {} is 2^53 or more and cannot be stored exactly", 1u64 << 53));
    }

    #[test]
    fn too_deep_stacks_are_errors() {
        let b = sample_profile();
        let limits = Limits { max_depth: 2, ..Limits::default() };
        let e = decode(&mut &b.bytes()[..], &limits, &PprofConfig::default()).unwrap_err();
        assert!(e.starts_with("pprof: sample 1:") && e.contains("deeper"), "{e}");
    }

    #[test]
    fn a_small_profile_that_expands_to_billions_of_frames_is_refused() {
        // 1000 sample types, one location with 1000 inlined lines, a sample that refers to it
        // 50 times: 50 million frames per sample type from a few kilobytes.
        let types: Vec<(String, String)> = (0..1000).map(|i| (format!("t{i}"), "count".to_string())).collect();
        let types: Vec<(&str, &str)> = types.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let mut b = Builder::new(&types);
        b.function(1, "f");
        b.location(1, &[1; 1000]);
        b.sample(&[1; 50], &[1; 1000]);
        let bytes = b.bytes();
        assert!(bytes.len() < 20_000, "{}", bytes.len());
        assert_eq!(FrameBudget::for_bytes(bytes.len() as u64).limit, MIN_FRAME_BUDGET);
        // The same check with a smaller budget, to keep the test quick.
        let e = decode_within(&bytes, &Limits::default(), &PprofConfig::default(), FrameBudget::with_limit(1_000_000)).unwrap_err();
        assert!(e.contains("more than 1000000 frames") && e.contains("refused as a likely bomb"), "{e}");
        // A real profile is far below its budget.
        let p = sample_profile().bytes();
        assert!(decode_bytes(&p).is_ok() && FrameBudget::for_bytes(p.len() as u64).limit >= MIN_FRAME_BUDGET);
    }

    #[test]
    fn sniffing_tells_profiles_from_text_and_other_binaries() {
        assert!(is_applicable(&sample_profile().bytes()));
        assert!(!is_applicable(b"main;f 1\n"));
        assert!(!is_applicable(b"\n\nmain;f 1\n"));
        assert!(!is_applicable(&[0x0a, 0x02, 0x08, 0x01, 0xfa, 0x01, 0x00]), "field 31 is not in Profile");
        assert!(!is_applicable(&[0x0a, 0x02, 0x08, 0x01, 0x48, 0x01, 0x49]), "field 9 with a wire type 1");
        assert!(!is_applicable(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]), "zstd magic");
        assert!(!is_applicable(b"\x7fELF\x02\x01\x01\x00"));
        // A sniff that ends inside a field still counts.
        let bytes = sample_profile().bytes();
        assert!(is_applicable(&bytes[..bytes.len() / 2]));
    }
}
