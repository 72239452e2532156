//! Reading a `perf script` sample's first line: where its command ends and its thread id is
//! (a command may hold spaces and numbers of its own), its cpu, time, period and event, its one
//! frame when it has no call chain; the line as inferno needs it to read every field, and the
//! root frame inferno names for it.

use crate::config::PerfConfig;

/// The event of the first sample of `perf script` text, and whether it carries a period:
/// `comm [pid/]tid [cpu] [time:] [period] event[:modifiers]:`.
pub fn first_perf_event(text: &[u8]) -> Option<(String, bool)> {
    let text = String::from_utf8_lossy(text);
    let line = text.lines().find(|l| !l.trim().is_empty() && !l.starts_with('#'))?;
    EventLine::read(line).map(|e| (e.event, e.period.is_some()))
}

/// Whether `sniff` starts with a sample that inferno's own test does not take: perf script's
/// right-aligned command (`perf script -F` pads it), a sample without an event or without a
/// time, samples of one line each (recorded without `-g`, the frame after the event), or
/// samples without frames, one line each (a tracepoint recorded without `-g`: its fields
/// after the event).
pub(super) fn is_perf_sample(sniff: &[u8]) -> bool {
    if sniff.contains(&0) {
        return false;
    }
    let text = String::from_utf8_lossy(sniff);
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty() || l.starts_with('#'));
    let Some(head) = lines.next().and_then(EventLine::read) else { return false };
    let next = lines.next();
    let sample = |h: &EventLine| h.fields && !h.event.is_empty();
    head.frame.is_some()
        || next.is_some_and(|l| l.starts_with([' ', '\t']) && is_frame(l.trim_start()))
        || (sample(&head) && next.and_then(EventLine::read).is_some_and(|h| sample(&h)))
}

/// Whether `s` is a frame as `perf script` prints it: an address in hex, then its symbol.
fn is_frame(s: &str) -> bool {
    s.split_once(' ').is_some_and(|(ip, sym)| !ip.is_empty() && ip.bytes().all(|b| b.is_ascii_hexdigit()) && !sym.trim().is_empty())
}

/// A sample's first line: `comm [pid/]tid [cpu] [time:] [period] [event[:modifiers]:]`, each
/// field in brackets there only when `perf script -F` asked for it, then, for a sample
/// recorded without call chains, its one frame (`ip sym (dso)`), or a tracepoint's fields.
#[derive(Debug, PartialEq)]
pub(super) struct EventLine {
    /// Where the thread id (`tid` or `pid/tid`) starts: the command is the text before it.
    pub(super) id_at: usize,
    /// Where the words after the thread id start.
    pub(super) rest: usize,
    /// Whether the words after the thread id read as the fields perf prints there (see
    /// [`find_id`]); when not, the id is the first word that can be one.
    pub(super) fields: bool,
    /// Whether a `time:` field comes before the event (`perf script -F` may leave it out).
    time: bool,
    /// Where the `[period] event` field starts and ends (at the colon after the event).
    field: (usize, usize),
    /// The event's name, without its modifiers (`cycles` of `cycles:u:`); empty when the line
    /// names none (`perf script -F comm,tid,ip,sym`).
    pub(super) event: String,
    /// The sample's period, if it has one.
    pub(super) period: Option<u64>,
    /// Whether anything but the event's modifiers follows the event (a frame, or a
    /// tracepoint's fields), which inferno would take for a frame.
    more: bool,
    /// Where the sample's one frame starts, when it is on this line.
    pub(super) frame: Option<usize>,
}

/// The words of `line` from byte `from`, each with where it starts.
fn words_from(line: &str, from: usize) -> impl Iterator<Item = (usize, &str)> {
    line[from..].split(' ').scan(from, |at, w| {
        let start = *at;
        *at += w.len() + 1;
        Some((start, w))
    }).filter(|(_, w)| !w.is_empty())
}

impl EventLine {
    pub(super) fn read(line: &str) -> Option<EventLine> {
        let Id { at: id_at, rest, fields } = find_id(line)?;
        let mut words = words_from(line, rest).peekable();
        let is_digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
        // `[cpu]`, then `seconds.fraction:` (each there only if perf printed it).
        let mut start = rest;
        if let Some(&(at, w)) = words.peek() {
            if w.len() > 2 && w.starts_with('[') && w.ends_with(']') && is_digits(&w[1..w.len() - 1]) {
                start = at + w.len();
                words.next();
            }
        }
        let mut time = false;
        if let Some(&(at, w)) = words.peek() {
            if w.strip_suffix(':').and_then(|t| t.split_once('.')).is_some_and(|(a, b)| is_digits(a) && is_digits(b)) {
                time = true;
                start = at + w.len();
                words.next();
            }
        }
        // `[period] event:`: an event is a word ending with a colon (`cycles:`, `cycles:u:`,
        // `sched:sched_switch:`), named by what comes before its first colon; a period is a
        // number before it, or alone at the end.
        let first = words.next();
        let second = words.peek().copied();
        let event_word = |w: &str| w.ends_with(':') && !w.starts_with(':');
        let (period, event_at, after) = match (first, second) {
            (Some((at, w)), _) if event_word(w) => (None, Some(at), at + w.len()),
            (Some((_, p)), Some((at, w))) if is_digits(p) && event_word(w) => {
                words.next();
                (Some(p.parse::<u64>().ok()?), Some(at), at + w.len())
            }
            (Some((at, p)), None) if is_digits(p) => (Some(p.parse::<u64>().ok()?), None, at + p.len()),
            // A period, then the sample's frame (`-F comm,tid,period,ip,sym`).
            (Some((at, p)), Some(_)) if is_digits(p) && is_frame(line[at + p.len()..].trim_start()) => {
                (Some(p.parse::<u64>().ok()?), None, at + p.len())
            }
            (Some((at, _)), _) => (None, None, at),
            (None, _) => (None, None, line.len()),
        };
        let (event, end) = match event_at {
            Some(at) => {
                let colon = at + line[at..].find(':')?;
                (line[at..colon].to_string(), colon)
            }
            None => (String::new(), start),
        };
        let tail = line[after..].trim_start();
        let frame = is_frame(tail).then(|| line.len() - tail.len());
        Some(EventLine { id_at, rest, fields, time, field: (start, end), event, period, more: !tail.trim_end().is_empty(), frame })
    }

    /// The line as inferno reads every field of it: the command and the thread id as read
    /// here, a time (zero where there is none), one space before the period and the event,
    /// and a sample's one frame on a line of its own after it (a blank line then ends the
    /// sample). perf pads the event names of a file of several events to one width (`2004008
    /// task-clock:`), and inferno, which splits at the last space, would read no period there.
    /// inferno takes the first number after the command's first word for the thread id, and
    /// cannot read -1: where it would read another id, the command is handed to it with its
    /// spaces made `_` (one word, which it takes whole), as it names the root frame of a
    /// command anyway (see [`root_frame`]), and an id -1 as [`UNKNOWN_ID`], put back in
    /// the names it makes ([`restore_unknown_ids`]). `line` is the whole line, its end of line
    /// included. None when inferno already reads the line so.
    pub(super) fn for_inferno(&self, line: &str) -> Option<Vec<u8>> {
        let field = match self.period {
            Some(p) => format!(" {p} {}", self.event),
            None => format!(" {}", self.event),
        };
        let id = &line[self.id_at..self.rest];
        let id_read = inferno_id_at(&line[..self.rest]) == Some(self.id_at) && id.ends_with(' ') && !self.unknown_id(line);
        // inferno takes the last word as the event and the one before it as the period, so
        // the spaces perf puts before the period do not matter: most lines stay as they are.
        let fields_read = self.time && !self.event.is_empty() && !self.more && line[self.field.0..self.field.1].ends_with(&field);
        if id_read && fields_read {
            return None;
        }
        let mut out = Vec::with_capacity(line.len() + 16);
        if id_read {
            out.extend_from_slice(line[..self.rest].as_bytes());
        } else {
            let id = id.trim_end().split('/').map(|p| if p == "-1" { UNKNOWN_ID } else { p }).collect::<Vec<_>>().join("/");
            out.extend_from_slice(format!("{} {id} ", line[..self.id_at].trim().replace(' ', "_")).as_bytes());
        }
        if fields_read {
            out.extend_from_slice(line[self.rest..].as_bytes());
            return Some(out);
        }
        out.extend_from_slice(b"0.0:");
        // A line that names no event gets an empty one, which inferno reads as such:
        // `0.0: 5 :` (period 5), `0.0: :`.
        out.extend_from_slice(field.trim_end().as_bytes());
        out.extend_from_slice(if self.event.is_empty() { b" :\n" } else { b":\n" });
        if let Some(frame) = self.frame {
            out.push(b'\t');
            out.extend_from_slice(line[frame..].as_bytes().trim_ascii_end());
            out.extend_from_slice(b"\n\n");
        }
        Some(out)
    }

    /// Whether the thread id, or the pid, is -1.
    pub(super) fn unknown_id(&self, line: &str) -> bool {
        line[self.id_at..self.rest].trim_end().split('/').any(|p| p == "-1")
    }
}

/// The root frame of the sample whose first line is `line`, its thread id from `id.0` to
/// `id.1` ([`EventLine`]), as inferno names it for the same sample (and as
/// stackcollapse-perf.pl would, did it not also take a number inside a command for the thread
/// id): the whole command, its spaces made `_` (`Pool Worker 7` is `Pool_Worker_7`), then
/// `-pid` (`include_pid`) or `-pid/tid` (`include_tid`), the pid `?` when perf printed only
/// the thread's id.
pub(super) fn root_frame(line: &str, id: (usize, usize), p: &PerfConfig) -> String {
    let mut root = line[..id.0].trim().replace(' ', "_");
    let id = line[id.0..id.1].trim_end();
    let (pid, tid) = id.rsplit_once('/').unwrap_or(("?", id));
    if p.include_tid {
        root.push_str(&format!("-{pid}/{tid}"));
    } else if p.include_pid {
        root.push_str(&format!("-{pid}"));
    }
    root
}

/// The thread id handed to inferno for -1, which it cannot read (it takes only digits): a
/// number no pid can be (perf prints a pid as a 32-bit signed number, at most 10 digits).
const UNKNOWN_ID: &str = "99999999999999999999";

/// Puts -1 back in the root frames of inferno's folded stacks where [`EventLine::for_inferno`]
/// handed it [`UNKNOWN_ID`] (in the `-pid` or `-pid/tid` that `include_pid` and `include_tid`
/// add to the command).
pub(super) fn restore_unknown_ids(folded: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(folded);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let root = line.find(';').unwrap_or(line.len());
        match line[..root].rfind('-') {
            Some(dash) => {
                out.push_str(&line[..dash]);
                out.push_str(&line[dash..root].replace(UNKNOWN_ID, "-1"));
                out.push_str(&line[root..]);
            }
            None => out.push_str(line),
        }
    }
    out.into_bytes()
}

/// The most bytes of a command as perf prints it: the kernel keeps 15 (`TASK_COMM_LEN` is 16
/// with the NUL), and perf prints that name, or `:tid` for a thread it never saw named.
const MAX_COMM: usize = 15;

/// Where a sample line's thread id is.
struct Id {
    /// Where the id word starts.
    at: usize,
    /// Where the words after it start.
    rest: usize,
    /// Whether those words read as the fields perf prints after an id.
    fields: bool,
}

/// Whether `word` can be a thread id as perf prints it: `tid` or `pid/tid`, each a number, or
/// -1 (a thread whose id the kernel no longer had when it took the sample: perf prints it
/// `:-1    -1`).
fn is_id(word: &str) -> bool {
    let part = |p: &str| p == "-1" || (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let mut parts = 0;
    word.split('/').all(|p| {
        parts += 1;
        part(p)
    }) && parts <= 2
}

/// Finds a sample line's thread id: `comm [pid/]tid [cpu] [time:] [period] [event:]…`, the
/// command padded on the left (`perf script -F` aligns it) and free to hold spaces and numbers
/// of its own (`Pool Worker 7`, Firefox's `FS Broker 5906`), so the id is not simply the first
/// number after the command's first word. It is a number word (or `pid/tid`, which no other
/// field looks like) after which the line reads as perf prints the fields that follow an id
/// ([`fields_after_id`]), the command before it no longer than a command can be. A reading
/// that finds one of perf's own fields there (`[cpu]`, `time:` or an event) wins, the
/// leftmost of them if several do; that settles every line perf prints with a time or a cpu.
/// Failing one, a reading that finds a period, the sample's frame or nothing does, and of
/// those the one that leaves the fewest words to the frame (`Worker 3  4236  2004008  55d0 f
/// (m)` is the thread 4236, period 2004008, not the thread 3, period 4236 and a frame whose
/// symbol is `55d0 f`), the leftmost if several leave the same. Without a time or a cpu,
/// `Worker 3  4236 cycles:` reads two ways alike (the thread 3 of `Worker`, period 4236, or
/// the thread 4236 of `Worker 3`): the leftmost is taken. A line that reads no way is read as
/// before: the id is the first word that can be one.
fn find_id(line: &str) -> Option<Id> {
    let mut at = line.len() - line.trim_start().len();
    at += line[at..].find(' ')?;
    let mut first = None;
    // The best reading without perf's own fields so far, and where its frame starts.
    let mut weak: Option<(Id, usize)> = None;
    for (start, word) in words_from(line, at + 1) {
        if !is_id(word) {
            continue;
        }
        let rest = (start + word.len() + 1).min(line.len());
        first.get_or_insert(Id { at: start, rest, fields: false });
        if line[..start].trim().len() > MAX_COMM {
            continue;
        }
        match fields_after_id(line, rest) {
            Some((true, _)) => return Some(Id { at: start, rest, fields: true }),
            Some((false, frame)) if weak.as_ref().is_none_or(|&(_, f)| frame > f) => {
                weak = Some((Id { at: start, rest, fields: true }, frame));
            }
            _ => {}
        }
    }
    weak.map(|(id, _)| id).or(first)
}

/// Whether `line` from byte `from` reads as the fields perf prints after a thread id:
/// `[cpu]`, `time:`, a period, `event:` (anything may follow an event: its modifiers, a
/// tracepoint's fields, a frame), each there only if `perf script -F` asked for it, or,
/// without an event, the sample's one frame (`ip sym (dso)`) or nothing. Some((true, _)) when
/// one of the cpu, the time or the event is there, Some((false, where the frame starts, or the
/// line's end)) when the line reads so without any, None when it does not.
fn fields_after_id(line: &str, from: usize) -> Option<(bool, usize)> {
    let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    // An event is named by more than digits and dots: `12.5:` is a time.
    let event = |w: &str| w.len() > 1 && w.ends_with(':') && !w.starts_with(':') && !w.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b':');
    let frame = |s: &str| {
        let s = s.trim();
        is_frame(s) && s.ends_with(')') && s.contains(" (")
    };
    let mut words = words_from(line, from).peekable();
    let mut strong = false;
    if words.peek().is_some_and(|&(_, w)| w.len() > 2 && w.starts_with('[') && w.ends_with(']') && digits(&w[1..w.len() - 1])) {
        words.next();
        strong = true;
    }
    if words.peek().is_some_and(|&(_, w)| w.strip_suffix(':').and_then(|t| t.split_once('.')).is_some_and(|(a, b)| digits(a) && digits(b))) {
        words.next();
        strong = true;
    }
    let Some((at, w)) = words.next() else { return Some((strong, line.len())) };
    if event(w) {
        return Some((true, at));
    }
    if digits(w) {
        // A period, then the end, an event or a frame.
        match words.peek() {
            None => return Some((strong, line.len())),
            Some(&(_, e)) if event(e) => return Some((true, at)),
            Some(&(next, _)) if frame(&line[next..]) => return Some((strong, next)),
            Some(_) => {}
        }
    }
    frame(&line[at..]).then_some((strong, at))
}

/// Where inferno 0.12 finds the thread id of a sample line (`perf::Folder::event_line_parts`):
/// the first word after the first that is made of digits and `/` and is followed by a space.
fn inferno_id_at(line: &str) -> Option<usize> {
    let (mut word_start, mut all_digits, mut last_was_space) = (0, false, false);
    for (i, c) in line.char_indices() {
        if c == ' ' {
            if all_digits && !last_was_space {
                return Some(word_start);
            }
            word_start = i + 1;
            all_digits = true;
        } else if c != '/' && !c.is_ascii_digit() {
            all_digits = false;
        }
        last_was_space = c == ' ';
    }
    None
}
