//! Reading a pprof profile's protobuf: the messages of `profile.proto`, the sniff that tells a
//! profile from other files, and the samples and the string table read in place, where the
//! profile's bytes have them, rather than decoded into vectors of their own.

use prost::Message;
use rustc_hash::FxHashMap;

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
pub(super) fn varint(b: &[u8]) -> Option<(u64, usize)> {
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

pub(super) fn malformed(e: prost::DecodeError) -> String {
    format!("pprof: malformed protobuf (truncated or corrupt): {e}")
}

/// The samples of a profile.
pub(super) enum Samples<'a> {
    /// Where the encoded `Sample` messages are in the profile's bytes.
    Encoded(&'a [u8], Vec<std::ops::Range<usize>>),
    /// Decoded with the profile.
    Decoded(&'a [Sample]),
}

impl Samples<'_> {
    /// Calls `f` with each sample and its number (from 1), in order.
    pub(super) fn for_each(&self, mut f: impl FnMut(&Sample, usize) -> Result<(), String>) -> Result<(), String> {
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
pub(super) fn read_sample(mut b: &[u8], sample: &mut Sample) -> bool {
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
pub(super) type Split = (Vec<u8>, Vec<std::ops::Range<usize>>, Vec<[u32; 2]>);

/// The top-level fields of a profile's bytes split into the samples (field 2), by where
/// each one's message is, and the other fields, copied; `Ok(None)` when a field is cut short
/// or is a group (wire type 3 or 4), which no field of `Profile` is.
///
/// In the same pass, a string of the string table longer than `max_string` bytes (a function
/// or file name; one of gigabytes compresses to a small file: docs/BENCHMARKS.md, "Figures
/// behind the code") is refused before anything is decoded or copied, even when the profile is
/// cut short inside it.
pub(super) fn split_samples(bytes: &[u8], max_string: u64) -> Result<Option<Split>, String> {
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

/// The string table, with checked lookups.
/// Where a profile's string table is: ranges of the profile's bytes (start, length), or the
/// table prost decoded.
pub(super) enum Source<'a> {
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
pub(super) struct Strings<'a> {
    source: Source<'a>,
    /// The strings that are not UTF-8, as `String::from_utf8_lossy` makes them, by index.
    fixed: FxHashMap<usize, String>,
    pub(super) invalid_utf8: u64,
}

impl<'a> Strings<'a> {
    pub(super) fn new(source: Source<'a>) -> Self {
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
    pub(super) fn get(&self, index: i64, what: &dyn Fn() -> String) -> Result<&str, String> {
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
