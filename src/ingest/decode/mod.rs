//! Decoding: from a profile file to merged stacks.
//!
//! Compression is detected by magic bytes (gzip, zstd, or none), never by the name alone,
//! and is undone as a stream on a thread of its own, so a large profile decompresses on one
//! core while it is parsed on the other and is never held in memory as text. The format is
//! then detected from the decompressed content; each format has a module that streams its
//! stacks into a [`StackMerger`].

mod calltree;
pub mod collapse;
pub mod cpuprofile;
pub mod folded;
pub mod foreign;
pub mod gotext;
pub mod jfr;
pub mod pprof;
pub mod speedscope;
pub mod trace;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;
use std::sync::mpsc;

/// What the decoders make of a file, as a revision: raised whenever a decoder's graphs for
/// some file change (graphs added, stacks or values read otherwise), so that the cache's
/// decodes, keyed by it, are made again instead of published as they were.
/// 2: JFR count graphs and wall-mode CPU; perf script printed with any field set.
/// 3: macOS `sample` and VTune stacks reached at several call sites added up, not the last
/// kept; Rust's `_{{closure}}` path elements demangled to `{{closure}}`.
/// 4: speedscope samples with no frames (`[]`, or time between events with none open) counted
/// at the root, not dropped (py-spy writes them as the interpreter exits).
/// 5: files of other tools (callgrind, Go's debug=1 text) and text mostly not stacks refused,
/// not read as folded stacks.
/// 6: JFR execution samples counted as CPU only when their thread state is known and not
/// sleeping, and async-profiler's wall-clock samples beside CPU ones made a `wall` graph.
/// 7: perf script thread names holding numbers (`Pool Worker 7`) and ids -1 read whole, and
/// samples without frames (tracepoints recorded without -g) counted under their command.
/// 8: classes the JVM generates named without their run-time numbers (`App$$Lambda_.run`),
/// and Chrome Trace Event files, Go's text count profiles and xz, bzip2, LZ4 and layered
/// compression read rather than refused.
pub const DECODERS: u32 = 8;

use crate::config::Config;
use crate::graph::frames::FrameTable;

/// How a file is compressed, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// No compression.
    None,
    /// gzip (RFC 1952), one or more members.
    Gzip,
    /// Zstandard frames.
    Zstd,
    /// xz streams.
    Xz,
    /// bzip2 streams.
    Bzip2,
    /// LZ4 frames.
    Lz4,
}

/// Layers of compression unpacked at most, one inside the other (`profile.folded.gz.xz`).
const MAX_LAYERS: usize = 3;

impl Compression {
    /// Detects compression from the magic bytes at the start of a file.
    pub fn detect(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(b"\xFD7zXZ\x00") {
            Compression::Xz
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Compression::Bzip2
        } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
            Compression::Lz4
        } else {
            Compression::None
        }
    }

    fn label(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => "gzip ",
            Compression::Zstd => "zstd ",
            Compression::Xz => "xz ",
            Compression::Bzip2 => "bzip2 ",
            Compression::Lz4 => "LZ4 ",
        }
    }

    /// A decoder of this compression over `r`, or an error saying why it cannot start.
    fn decoder<'a>(self, r: Box<dyn Read + 'a>) -> io::Result<Box<dyn Read + 'a>> {
        Ok(match self {
            Compression::None => r,
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(r)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(r)?),
            // A dictionary of at most 256 MiB (`xz -9` uses 64 MiB): a header that asks for
            // more is refused before anything that large is allocated.
            Compression::Xz => Box::new(lzma_rust2::XzReader::new_mem_limit(r, true, 256 << 10)),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
            Compression::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(r)),
        })
    }
}

/// One decoded graph: a sample type with its unit and its frame table.
#[derive(Debug)]
pub struct Graph {
    /// Name of the sample type (`samples` for folded stacks), used in URLs.
    pub name: String,
    /// Unit of the values (`samples`, `nanoseconds`, `bytes`, …).
    pub unit: String,
    /// The merged stacks.
    pub table: FrameTable,
    /// Whether it is a time-order graph ([`crate::graph::frames::Timeline`]): stacks in the
    /// order they were taken, not merged; never compared with another run's.
    pub timeline: bool,
}

/// How many samples each graph's values rest on, and which graph counts them (an index into
/// `graphs`), where the profile says: a graph whose unit counts events (`units[i]`, the unit it
/// is published in) counts its own; a graph of exactly the same stacks as such a graph rests on
/// that one's (a Go CPU profile's `cpu` nanoseconds beside its `samples` count, a .cpuprofile's
/// `time` beside its `samples`): the same samples, weighted. `None` where nothing counts them
/// (a heap's bytes, a folded file of nanoseconds, fractional counts, a two-count profile).
/// Graphs with the same counting graph show the same samples: a change is counted once among
/// them (README, "What counts as a change").
pub fn draws(graphs: &[Graph], units: &[&str]) -> Vec<Option<(u64, usize)>> {
    let plain = |g: &Graph| !g.timeline && g.table.before.is_none() && g.table.after.is_none() && g.table.decimals == 0;
    let counting: Vec<usize> = (0..graphs.len()).filter(|&i| plain(&graphs[i]) && crate::units::counts_events(units[i])).collect();
    let same = |a: &FrameTable, b: &FrameTable| a.len() == b.len() && a.depth == b.depth && a.parent == b.parent && a.name == b.name && a.names == b.names;
    graphs
        .iter()
        .enumerate()
        .map(|(i, g)| {
            if !plain(g) {
                return None;
            }
            let by = if counting.contains(&i) { Some(i) } else { counting.iter().copied().find(|&c| same(&graphs[c].table, &g.table)) };
            by.map(|c| (graphs[c].table.total.first().copied().unwrap_or(0), c))
        })
        .collect()
}

/// A decoded profile.
#[derive(Debug)]
pub struct Decoded {
    /// The format the file was read as.
    pub format: &'static str,
    /// How it was compressed.
    pub compression: Compression,
    /// Its graphs, the default one first.
    pub graphs: Vec<Graph>,
    /// Problems that did not stop the decoding (malformed lines, invalid UTF-8).
    pub warnings: Vec<String>,
    /// What the profile says about itself (time, duration, period, comments, labels), shown
    /// on its page and listed in `index.json`.
    pub metadata: BTreeMap<String, String>,
}

/// Reads the profile at `path` with the limits and format options of `config`. The error is
/// a message without the path (the caller adds it).
pub fn decode_file(path: &Path, config: &Config) -> Result<Decoded, String> {
    let limits = &config.limits;
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    // Enough of the start for the format sniffing of plain files too.
    let mut head = vec![0u8; 64 << 10];
    let (got, result) = read_up_to(&mut file, &mut head);
    result.map_err(|e| e.to_string())?;
    head.truncate(got);
    let compression = Compression::detect(&head);
    // A file that is a symbolic link may lead anywhere (`/etc/passwd`): what it holds is never
    // shown in a message.
    let show = !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let raw = io::Cursor::new(head).chain(file);
    match compression {
        Compression::None => {
            let mut reader = BufReader::with_capacity(1 << 20, Limited::new(raw, limits.max_profile_bytes));
            decode_stream(&mut reader, compression, config, show, named(path))
        }
        _ => std::thread::scope(|scope| {
            let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(4);
            let max = limits.max_profile_bytes;
            scope.spawn(move || inflate(raw, compression, max, tx));
            let mut reader = ChannelReader { rx, buf: Vec::new(), pos: 0, done: false };
            let result = decode_stream(&mut reader, compression, config, show, named(path));
            // Dropping the reader closes the channel, which stops the inflating thread early
            // when the parser gave up.
            drop(reader);
            result
        }),
    }
}

/// Decodes an already decompressed stream.
fn decode_stream(reader: &mut dyn BufRead, compression: Compression, config: &Config, show: bool, named: Option<&Format>) -> Result<Decoded, String> {
    // A text profile saved by a Windows editor starts with a UTF-8 byte order mark: it is not
    // part of the first frame's name, nor of the format's first word. (No binary format this
    // reads starts with these bytes.)
    skip_bom(reader).map_err(|e| e.to_string())?;
    let head = loop {
        match reader.fill_buf() {
            Ok(b) => break b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        }
    };
    if head.is_empty() {
        return Err(format!("empty {}file: no samples", compression.label()));
    }
    let sniff = &head[..head.len().min(4096)];
    let format = FORMATS.iter().find(|f| (f.is_applicable)(sniff));
    // A file that is no format read is refused by what it is, before the folded reader (which
    // takes almost any text whose lines end in a number) or its name's format can misread it.
    if format.is_none_or(|f| f.name == "folded") {
        if let Some(foreign) = foreign::recognise(sniff) {
            let packed = match compression.label().trim_end() {
                "" => String::new(),
                name => format!(" ({name}-compressed)"),
            };
            return Err(format!("{}{packed}, which flamesite does not read: {}", foreign.what, foreign.instead));
        }
    }
    let format = match (format, named) {
        (Some(format), _) => format,
        // Not recognised, but its name says what it is (a truncated `.cpuprofile`): read as
        // that, so that the error is the format's own, with its line and column.
        (None, Some(format)) => {
            return (format.decode)(reader, config).map_err(|e| format!("not a readable {}, as its name says: {e}", format.description));
        }
        (None, None) => {
            let tried: Vec<&str> = FORMATS.iter().map(|f| f.description).collect();
            return Err(format!("unknown profile format (tried: {}){}", tried.join("; "), describe(sniff, show)));
        }
    };
    let mut decoded = (format.decode)(reader, config)?;
    decoded.compression = compression;
    Ok(decoded)
}

/// The format a file's name gives it, less compression extensions: `.cpuprofile`, `.jfr`,
/// `.speedscope.json`, `.pb` or `.pprof`; `None` for names that say nothing (`.json`,
/// `.txt`, `.folded`, whose content is sniffed alone).
fn named(path: &Path) -> Option<&'static Format> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let name = crate::archive::slug::without_compression(&name);
    let format = if name.ends_with(".cpuprofile") {
        "cpuprofile"
    } else if name.ends_with(".jfr") {
        "jfr"
    } else if name.ends_with(".speedscope.json") {
        "speedscope"
    } else if name.ends_with(".pb") || name.ends_with(".pprof") {
        "pprof"
    } else {
        return None;
    };
    FORMATS.iter().find(|f| f.name == format)
}

/// Consumes a UTF-8 byte order mark at the start of `reader`, if it has one (in its first
/// chunk, which for every stream here holds far more than three bytes).
fn skip_bom(reader: &mut dyn BufRead) -> io::Result<()> {
    let starts = loop {
        match reader.fill_buf() {
            Ok(b) => break b.starts_with(b"\xEF\xBB\xBF"),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    if starts {
        reader.consume(3);
    }
    Ok(())
}

/// An input format: how to recognise it from the start of the decompressed content, and
/// how to read it with the limits and format options of `site.toml`. Errors are messages
/// without the path; read errors of the stream are already described by [`inflate`].
struct Format {
    /// The name a profile's `format` gives (index.json, `flamesite check`).
    name: &'static str,
    description: &'static str,
    is_applicable: fn(&[u8]) -> bool,
    decode: fn(&mut dyn BufRead, &Config) -> Result<Decoded, String>,
}

/// Every input format, `(name, description)`, in the order they are tried (`flamesite check
/// --formats`).
pub fn formats() -> impl Iterator<Item = (&'static str, &'static str)> {
    FORMATS.iter().map(|f| (f.name, f.description))
}

/// The formats, tried in this order: the most specific first, folded stacks (which accept
/// almost any text with a number at the end of its first line) last.
const FORMATS: &[Format] = &[
    Format { name: "jfr", description: "Java Flight Recorder (JFR)", is_applicable: jfr::is_applicable, decode: |r, config| jfr::decode(r, &config.limits) },
    Format {
        name: "pprof", description: "pprof profile.proto",
        is_applicable: pprof::is_applicable,
        decode: |r, config| pprof::decode(r, &config.limits, &config.pprof),
    },
    Format {
        name: "speedscope", description: "speedscope JSON",
        is_applicable: speedscope::is_applicable,
        decode: speedscope::decode,
    },
    Format {
        name: "cpuprofile", description: "Chrome/V8 .cpuprofile (JSON with \"nodes\" and \"samples\")",
        is_applicable: cpuprofile::is_applicable,
        decode: cpuprofile::decode,
    },
    Format {
        name: "chrome-trace", description: "Chrome Trace Event JSON (chrome://tracing, py-spy --format chrometrace)",
        is_applicable: trace::is_applicable,
        decode: trace::decode,
    },
    Format { name: "go-text", description: "Go text count profile (goroutine or threadcreate, debug=1)", is_applicable: gotext::is_applicable, decode: gotext::decode },
    Format { name: "perf", description: "perf script", is_applicable: collapse::is_perf, decode: collapse::decode_perf },
    Format { name: "dtrace", description: "DTrace stacks", is_applicable: collapse::is_dtrace, decode: collapse::decode_dtrace },
    Format { name: "sample", description: "macOS sample", is_applicable: collapse::is_sample, decode: collapse::decode_sample },
    Format { name: "vtune", description: "VTune CSV", is_applicable: collapse::is_vtune, decode: collapse::decode_vtune },
    Format {
        name: "folded", description: "folded stacks `frame;frame;… count`",
        is_applicable: folded::is_applicable,
        decode: |r, config| folded::decode(r, &config.limits).map_err(|e| e.to_string()),
    },
];

fn describe(sniff: &[u8], show: bool) -> String {
    /// Bytes of the first line shown, escaped.
    const SHOWN: usize = 24;
    if sniff.contains(&0) {
        return "; the content is binary".into();
    }
    if !show {
        return "; its content is not shown, since it is a symbolic link".into();
    }
    let Some((number, first)) = sniff.split(|&b| b == b'\n').enumerate().find(|(_, l)| !l.iter().all(u8::is_ascii_whitespace)) else {
        return String::new();
    };
    let first = first.strip_suffix(b"\r").unwrap_or(first).trim_ascii();
    // A stack with a count that is not one: say what is wrong with the count.
    if let Some(space) = first.iter().rposition(|&b| b == b' ') {
        let (stack, count) = (&first[..space], &first[space + 1..]);
        let numeric = count.first().is_some_and(|b| b.is_ascii_digit() || *b == b'-' || *b == b'+');
        if stack.contains(&b';') || numeric {
            let count = String::from_utf8_lossy(&count[..count.len().min(SHOWN)]);
            return format!(
                "; line {} looks like folded stacks, but its count {count:?} is not a number such as 12 or 31.25 (at most {} digits)",
                number + 1,
                u64::MAX.to_string().len()
            );
        }
    }
    let cut = first.len().min(SHOWN);
    let text: String = first[..cut].iter().flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect();
    format!("; line {} begins \"{text}\"{}", number + 1, if cut < first.len() { " (cut)" } else { "" })
}

/// Reads until `buf` is full or the stream ends; returns how much was read and, if the
/// stream failed, why (what was read before the failure is still in `buf`).
fn read_up_to(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> (usize, io::Result<()>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Err(e)),
        }
    }
    (n, Ok(()))
}

/// Decompresses `raw` in blocks and sends them; stops when the receiver hangs up.
fn inflate(raw: impl Read, compression: Compression, max: u64, tx: mpsc::SyncSender<io::Result<Vec<u8>>>) {
    let position = Rc::new(Cell::new(0u64));
    let counted = Counted { inner: raw, count: position.clone() };
    // Says where in the compressed file decoding failed: "byte where it helps".
    let describe = |e: io::Error| {
        let at = position.get();
        let what = compression.label().trim_end();
        if e.kind() == io::ErrorKind::UnexpectedEof {
            io::Error::new(e.kind(), format!("truncated {what} data: the file ends at byte {at} in the middle of a stream"))
        } else {
            io::Error::new(e.kind(), format!("corrupt {what} data near byte {at}: {e}"))
        }
    };
    let mut stream: Box<dyn Read> = match compression.decoder(Box::new(counted)) {
        Ok(d) => d,
        Err(e) => {
            let _ = tx.send(Err(describe(e)));
            return;
        }
    };
    // A file packed twice or more (`.folded.gz` then xz): each layer is unpacked in turn, up to
    // MAX_LAYERS; what comes out of the last counts against the limit as one file does.
    for _ in 1..MAX_LAYERS {
        let mut buffered = BufReader::with_capacity(64 << 10, stream);
        let head = match buffered.fill_buf() {
            Ok(h) => h,
            Err(e) => {
                let _ = tx.send(Err(describe(e)));
                return;
            }
        };
        let inner = Compression::detect(head);
        stream = Box::new(buffered);
        if inner == Compression::None {
            break;
        }
        stream = match inner.decoder(stream) {
            Ok(d) => d,
            Err(e) => {
                let _ = tx.send(Err(io::Error::new(e.kind(), format!("corrupt inner {}data: {e}", inner.label()))));
                return;
            }
        };
    }
    let mut produced: u64 = 0;
    loop {
        let mut block = vec![0u8; 1 << 20];
        let (filled, result) = read_up_to(&mut *stream, &mut block);
        produced += filled as u64;
        if produced > max {
            let _ = tx.send(Err(too_big(max)));
            return;
        }
        block.truncate(filled);
        let last = filled == 0;
        if filled > 0 && tx.send(Ok(block)).is_err() {
            return;
        }
        if let Err(e) = result {
            let _ = tx.send(Err(describe(e)));
            return;
        }
        if last {
            return;
        }
    }
}

fn too_big(max: u64) -> io::Error {
    io::Error::other(format!(
        "decompressed size exceeds limits.max_profile_bytes ({max} bytes); is it a compression bomb?"
    ))
}

/// Counts the compressed bytes read, for error messages.
struct Counted<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// A reader that fails once more than `max` bytes went through it.
struct Limited<R> {
    inner: R,
    left: u64,
    max: u64,
}

impl<R> Limited<R> {
    fn new(inner: R, max: u64) -> Self {
        Limited { inner, left: max, max }
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(too_big(self.max));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The parser's end of the inflating thread's channel.
pub(super) struct ChannelReader {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    buf: Vec<u8>,
    pos: usize,
    done: bool,
}

impl ChannelReader {
    /// A reader of the blocks that come through `rx`, in order, until its sender is dropped.
    pub(super) fn new(rx: mpsc::Receiver<io::Result<Vec<u8>>>) -> ChannelReader {
        ChannelReader { rx, buf: Vec::new(), pos: 0, done: false }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ChannelReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos >= self.buf.len() && !self.done {
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    self.buf = block;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => self.done = true,
            }
        }
        Ok(&self.buf[self.pos.min(self.buf.len())..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos += amt;
    }
}

/// Frames that every format's decoder may pass to its mergers, over all the graphs of one
/// profile, in proportion to the profile's content: `FRAMES_PER_BYTE` per byte (per byte that
/// is not white space for the JSON formats), at least `MIN_FRAME_BUDGET`. A few kilobytes can
/// describe billions of frames (a pprof location with many inlined lines referred to by many
/// samples in many sample types); real profiles come to a few frames per byte. The decoders
/// pass each frame of a call tree once (see `StackMerger::add_ids`), so their cost is linear in
/// what they read and the budget bounds what it can amount to.
pub(super) struct FrameBudget {
    pub(super) limit: u64,
    spent: u64,
}

/// Frames allowed per byte of content.
pub(super) const FRAMES_PER_BYTE: u64 = 32;
/// Frames allowed whatever the size.
pub(super) const MIN_FRAME_BUDGET: u64 = 4 << 20;

impl FrameBudget {
    /// The budget of a profile of `bytes` bytes of content.
    pub(super) fn for_bytes(bytes: u64) -> FrameBudget {
        FrameBudget { limit: bytes.saturating_mul(FRAMES_PER_BYTE).max(MIN_FRAME_BUDGET), spent: 0 }
    }

    /// A budget of `limit` frames, for tests of the limit with small inputs.
    #[cfg(test)]
    pub(super) fn with_limit(limit: u64) -> FrameBudget {
        FrameBudget { limit, spent: 0 }
    }

    /// Takes `frames` from the budget; past it, the error (`format` starts it, `over` says
    /// over what the frames were counted).
    pub(super) fn spend(&mut self, frames: u64, format: &str, over: &str) -> Result<(), String> {
        self.spent = self.spent.saturating_add(frames);
        if self.spent > self.limit {
            return Err(format!(
                "{format}: the samples expand to more than {} frames {over} ({FRAMES_PER_BYTE} per byte of the profile, \
                 at least {MIN_FRAME_BUDGET}): refused as a likely bomb",
                self.limit
            ));
        }
        Ok(())
    }
}

/// Reads a JSON document from `reader` as it streams, never holding its text: white space
/// (a file of gigabytes of spaces that compresses to almost nothing) costs time, not memory,
/// and what is kept is the parsed document, in proportion to its content. Returns the
/// document and its content bytes (those that are not ASCII white space), for the
/// [`FrameBudget`].
///
/// A string longer than `max_string` bytes (as written, escapes included) stops the reading
/// with an error saying so, before serde_json holds it: a name of a gibibyte compresses to a
/// few kilobytes and took several times its size to parse (docs/BENCHMARKS.md, "Figures behind the code").
pub(super) fn read_json<T: serde::de::DeserializeOwned>(reader: &mut dyn BufRead, max_string: u64) -> Result<(T, u64), serde_json::Error> {
    let mut counted = ContentCounter { inner: reader, content: 0, max_string, in_string: false, escaped: false, string: 0, offset: 0, failed: None };
    // serde_json reads a byte at a time: a `BufReader` of its own makes that a buffer access.
    let value = serde_json::from_reader(BufReader::with_capacity(64 << 10, &mut counted))?;
    Ok((value, counted.content))
}

/// Counts the bytes read that are not ASCII white space, and refuses a string longer than
/// `max_string` as it streams by (a JSON string is `"`, then bytes where `\\` escapes the next
/// one, then `"`).
struct ContentCounter<'a> {
    inner: &'a mut dyn BufRead,
    content: u64,
    max_string: u64,
    in_string: bool,
    escaped: bool,
    /// Bytes of the string being read.
    string: u64,
    /// Bytes read so far.
    offset: u64,
    /// Why the reading stopped, once it has.
    failed: Option<String>,
}

impl Read for ContentCounter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(why) = &self.failed {
            return Err(io::Error::other(why.clone()));
        }
        let n = self.inner.read(buf)?;
        for (i, &b) in buf[..n].iter().enumerate() {
            if self.in_string {
                self.content += 1;
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    continue;
                }
                self.string += 1;
                if self.string > self.max_string {
                    let at = (self.offset + i as u64 + 1).saturating_sub(self.string);
                    let why = format!(
                        "a string of more than {} bytes (limits.max_name_bytes) begins at byte {at}; raise [limits] max_name_bytes in site.toml to read it",
                        self.max_string
                    );
                    // serde_json may read again after an error: it gets the same one.
                    self.failed = Some(why.clone());
                    return Err(io::Error::other(why));
                }
            } else if !b.is_ascii_whitespace() {
                self.content += 1;
                if b == b'"' {
                    self.in_string = true;
                    self.string = 0;
                }
            }
        }
        self.offset += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of a file of the project's test data, decompressed, as the formats see it.
    fn sniff_of(path: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(path);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut text = Vec::new();
        if bytes.starts_with(&[0x1f, 0x8b]) {
            flate2::read::MultiGzDecoder::new(&bytes[..]).take(1 << 20).read_to_end(&mut text).unwrap();
        } else {
            text = bytes;
        }
        let text = text.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(text);
        text[..text.len().min(4096)].to_vec()
    }

    /// Issue 48: each format is recognised by what it must contain, so that no reader takes
    /// another's file. Every real file of the test data (made by the real tools, or taken from
    /// other projects' tests: each folder's README says which) is offered to every format's
    /// test and to the test of the files that are not read: exactly one says yes.
    #[test]
    fn no_format_takes_a_file_of_another() {
        let read = [
            ("folded", "austin/austin.txt"),
            ("folded", "jfr/expected.cpu.folded"),
            ("folded", "dtrace/example-dtrace-stacks.folded.gz"),
            ("folded", "perf-cpi/cpi.difffolded"),
            ("folded", "perf/expected.folded"),
            ("folded", "chrome-trace/trace.folded"),
            ("perf", "perf/perf.txt"),
            ("perf", "perf-jit/jit.txt"),
            ("perf", "perf-jit/events.txt"),
            ("perf", "perf-fields/oneline.txt"),
            ("perf", "perf-fields/noevent.txt"),
            ("perf", "perf-notime/notime.txt"),
            ("perf", "perf-cpi/cycles-instructions.txt"),
            ("dtrace", "dtrace/stack-ustack.txt"),
            ("dtrace", "dtrace/example-dtrace-stacks.txt.gz"),
            ("sample", "sample/sample.txt"),
            ("vtune", "vtune/vtune.csv"),
            ("cpuprofile", "cpuprofile/node.cpuprofile"),
            ("speedscope", "speedscope/py-spy.speedscope.json"),
            ("speedscope", "speedscope/gap.evented.speedscope.json"),
            ("pprof", "pprof/cpu.pb.gz"),
            ("pprof", "pprof/heap.pb.gz"),
            ("jfr", "jfr/recording.jfr"),
            ("jfr", "jfr-async/dump2.jfr.gz"),
            ("chrome-trace", "chrome-trace/trace.json"),
            ("chrome-trace", "chrome-trace/py-spy.trace.json.gz"),
            ("chrome-trace", "chrome-trace/chromium.trace.json.gz"),
            ("go-text", "go-text/goroutine.txt"),
            ("go-text", "go-text/threadcreate.txt"),
            ("go-text", "go-text/go.godoc.thread"),
        ];
        for (format, path) in read {
            let sniff = sniff_of(path);
            let takers: Vec<&str> = FORMATS.iter().filter(|f| (f.is_applicable)(&sniff)).map(|f| f.name).collect();
            assert_eq!(takers, [format], "{path}");
            assert_eq!(foreign::recognise(&sniff), None, "{path}");
        }
        let foreign = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/foreign")).unwrap();
        let mut seen = 0;
        for entry in foreign {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".md") || name.ends_with(".sh") {
                continue;
            }
            seen += 1;
            let sniff = sniff_of(&format!("foreign/{name}"));
            assert!(foreign::recognise(&sniff).is_some(), "{name} is not recognised");
            // Only the folded reader, asked after the test of foreign files, may think it text.
            let takers: Vec<&str> = FORMATS.iter().filter(|f| (f.is_applicable)(&sniff)).map(|f| f.name).filter(|&n| n != "folded").collect();
            assert_eq!(takers, Vec::<&str>::new(), "{name}");
        }
        assert!(seen >= 9, "{seen} foreign files");
    }
}
