//! The archive model: every profile is a *run*, dated, in one *series* (a service, a
//! benchmark, a host); its graphs are its sample types.
//!
//! What a run is comes from these sources, the first that says wins:
//! 1. its sidecar `NAME.toml` (NAME is the profile's path without format and compression
//!    extensions: `api/2026-11-20.pb.gz` has `api/2026-11-20.toml`), keys `series`, `date`,
//!    `title`, `labels`, `unit`;
//! 2. the profile itself (pprof's `time_nanos`);
//! 3. the `archive.pattern` of `site.toml`, such as `{series}/{date}/{name}`;
//! 4. the parent folder (series) and a date in the file name, and only then the file's
//!    modification time, with a warning, since copying files changes it.
//!
//! Where two explicit sources disagree, the first wins and the build warns, naming the file.
//! Dates are kept as UTC instants; a date without a time of day is midnight UTC.

pub mod run;
pub mod slug;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;
use regex::Regex;
use serde::{Deserialize, Serialize};

/// When a run was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "WhenRepr", try_from = "WhenRepr")]
pub struct When {
    /// The instant (midnight UTC for a bare date).
    pub ts: Timestamp,
    /// Whether a time of day was given.
    pub has_time: bool,
}

/// How a [`When`] is stored: seconds and nanoseconds since the epoch, and whether a time of
/// day was given.
#[derive(Serialize, Deserialize)]
struct WhenRepr {
    s: i64,
    n: i32,
    t: bool,
}

impl From<When> for WhenRepr {
    fn from(w: When) -> WhenRepr {
        WhenRepr { s: w.ts.as_second(), n: w.ts.subsec_nanosecond(), t: w.has_time }
    }
}

impl TryFrom<WhenRepr> for When {
    type Error = String;
    fn try_from(r: WhenRepr) -> Result<When, String> {
        Ok(When { ts: Timestamp::new(r.s, r.n).map_err(|e| e.to_string())?, has_time: r.t })
    }
}

impl When {
    /// What is implausible about this date for a profile, in words for a page, when it is
    /// before 2000 (a clock that was never set gives 1970; a time read in the wrong units). A
    /// date in the future is judged by the page that shows it, against the reader's clock, so
    /// that the same inputs give the same site whatever day it is built.
    pub fn implausible(&self) -> Option<&'static str> {
        (self.ts < Timestamp::from_second(946_684_800).expect("2000-01-01 is a timestamp")).then_some("before 2000: a clock that was never set?")
    }

    /// `2026-11-20T14:03:00Z`.
    pub fn rfc3339(&self) -> String {
        self.ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// `2026-11-20` (UTC).
    pub fn day(&self) -> String {
        self.ts.strftime("%Y-%m-%d").to_string()
    }

    /// `2026-11` (UTC).
    pub fn month(&self) -> String {
        self.ts.strftime("%Y-%m").to_string()
    }

    /// `2026-11-20 14:03 UTC`, or `2026-11-20` for a bare date.
    pub fn display(&self) -> String {
        if self.has_time {
            self.ts.strftime("%Y-%m-%d %H:%M UTC").to_string()
        } else {
            self.day()
        }
    }
}

/// The regular expression of the date forms accepted in paths: `2026-11-20`, `20261120`,
/// `2026_11_20` (the JDK's recordings, `hotspot-pid-…-2026_11_20_14_03_00.jfr`), optionally
/// followed by a time `T14:03:00`, `_140300`, `-14-03-00`, `_14_03_00` (seconds, fraction and a
/// `Z` or `±HH:MM` offset optional). Its groups name the parts that [`parse_date`] reads; it
/// appears once in every regex built from it, so the names never repeat.
const DATE_RE: &str = r"(?<y>\d{4})[-_]?(?<m>\d{2})[-_]?(?<d>\d{2})(?:[T_ \-](?<H>\d{2})[:\-_]?(?<M>\d{2})(?:[:\-_]?(?<S>\d{2})(?:\.(?<f>\d{1,9}))?)?(?<z>Z|[+\-]\d{2}:?\d{2})?)?";

static DATE_PARTS: LazyLock<Regex> = LazyLock::new(|| Regex::new(&format!("^{DATE_RE}$")).expect("valid regex"));

/// A date of [`DATE_RE`] inside a file name, its year 19xx or 20xx, so that other digits
/// before it (py-spy's `4242-2026-11-28T08:47:33`, a process id first) are not read as one.
static DATE_IN_NAME: LazyLock<Regex> = LazyLock::new(|| {
    let date = DATE_RE.replace(r"(?<y>\d{4})", r"(?<y>(?:19|20)\d{2})");
    Regex::new(&format!(r"(?:^|[^0-9])(?<date>{date})(?:[^0-9]|$)")).expect("valid regex")
});

/// node's own file names for `--cpu-prof`: `CPU.20261128.084728.<pid>.<thread>.<n>`, a date
/// and a time of day (the machine's local time, read as UTC) that
/// [`DATE_IN_NAME`] would take as a bare date, or the time's digits as a fraction.
static NODE_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^CPU\.(?<day>\d{8})\.(?<time>\d{6})\.\d+\.\d+\.\d+$").expect("valid regex"));

/// The date written in file name `file`, with the time of day where the name has one.
fn date_in_name(file: &str) -> Option<Result<When, String>> {
    if let Some(c) = NODE_NAME.captures(file) {
        return Some(parse_date(&format!("{}T{}", &c["day"], &c["time"])));
    }
    DATE_IN_NAME.captures(file).map(|c| parse_date(&c["date"]))
}

/// Parses a date in one of the forms of [`DATE_RE`], or RFC 3339.
pub fn parse_date(s: &str) -> Result<When, String> {
    let bad = |why: String| format!("unparseable date {s:?}: {why}");
    let c = DATE_PARTS.captures(s.trim()).ok_or_else(|| {
        bad("expected a form such as 2026-11-20, 2026-11-20T14:03:00Z, 20261120 or 20261120T140300".into())
    })?;
    let num = |k: &str| c.name(k).map_or(0, |m| m.as_str().parse::<i64>().unwrap_or(0));
    let nanos = c.name("f").map_or(0, |f| {
        let digits = f.as_str();
        digits.parse::<i64>().unwrap_or(0) * 10_i64.pow(9 - digits.len() as u32)
    });
    let dt = DateTime::new(
        num("y") as i16,
        num("m") as i8,
        num("d") as i8,
        num("H") as i8,
        num("M") as i8,
        num("S") as i8,
        nanos as i32,
    )
    .map_err(|e| bad(e.to_string()))?;
    let offset = match c.name("z").map(|z| z.as_str()) {
        None | Some("Z") => Offset::UTC,
        Some(z) => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let digits: String = z[1..].chars().filter(char::is_ascii_digit).collect();
            let (h, m) = (digits[..2].parse::<i32>().unwrap_or(0), digits[2..].parse::<i32>().unwrap_or(0));
            Offset::from_seconds(sign * (h * 3600 + m * 60)).map_err(|e| bad(e.to_string()))?
        }
    };
    let ts = dt.to_zoned(TimeZone::fixed(offset)).map_err(|e| bad(e.to_string()))?.timestamp();
    in_feed_range(ts).map_err(bad)?;
    Ok(When { ts, has_time: c.name("H").is_some() })
}

/// Dates of runs are shown and written in feeds in RFC 3339, whose years have four digits:
/// an instant before 0001-01-01T00:00:00Z or after 9999-12-31T23:59:59Z (in UTC, once the
/// offset is applied) is refused, not clamped, so no feed says a date the source did not.
fn in_feed_range(ts: Timestamp) -> Result<(), String> {
    const FIRST: i64 = -62_135_596_800; // 0001-01-01T00:00:00Z
    const LAST: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z
    if (FIRST..=LAST).contains(&ts.as_second()) {
        Ok(())
    } else {
        Err(format!("it is {ts} in UTC, outside the years 0001 to 9999 that feeds (RFC 3339) can write"))
    }
}

/// A TOML date-time (`2026-11-20`, `2026-11-20T14:03:00Z`, `2026-11-20 14:03:00`) as a [`When`].
fn from_toml(d: &toml::value::Datetime) -> Result<When, String> {
    let date = d.date.ok_or_else(|| format!("date {d} has no day; write it as 2026-11-20 or 2026-11-20T14:03:00Z"))?;
    let (h, mi, s, n) = d.time.map_or((0, 0, 0, 0), |t| (t.hour, t.minute, t.second, t.nanosecond));
    let dt = DateTime::new(date.year as i16, date.month as i8, date.day as i8, h as i8, mi as i8, s as i8, n as i32)
        .map_err(|e| format!("date {d}: {e}"))?;
    let offset = match d.offset {
        None | Some(toml::value::Offset::Z) => Offset::UTC,
        Some(toml::value::Offset::Custom { minutes }) => {
            Offset::from_seconds(i32::from(minutes) * 60).map_err(|e| format!("date {d}: {e}"))?
        }
    };
    let ts = dt.to_zoned(TimeZone::fixed(offset)).map_err(|e| format!("date {d}: {e}"))?.timestamp();
    in_feed_range(ts).map_err(|e| format!("date {d}: {e}"))?;
    Ok(When { ts, has_time: d.time.is_some() })
}

/// `archive.pattern`, compiled: a path pattern with `{series}`, `{date}`, `{name}` and `{*}`.
#[derive(Clone, Debug)]
pub struct Pattern {
    re: Regex,
}

/// What a [`Pattern`] found in a path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathFields {
    /// `{series}`.
    pub series: Option<String>,
    /// `{date}`, as written.
    pub date: Option<String>,
    /// `{name}`.
    pub name: Option<String>,
}

impl Pattern {
    /// Compiles `pattern`; a placeholder that is unknown or given twice is an error.
    pub fn new(pattern: &str) -> Result<Pattern, String> {
        let mut re = String::from("^");
        let mut rest = pattern.trim_matches('/');
        let mut seen = Vec::new();
        while let Some(open) = rest.find('{') {
            re.push_str(&regex::escape(&rest[..open]));
            let close = rest[open..].find('}').ok_or_else(|| format!("{pattern:?}: a {{ is not closed"))? + open;
            let key = &rest[open + 1..close];
            re.push_str(match key {
                "series" => r"(?<series>[^/]+?)",
                "name" => r"(?<name>[^/]+?)",
                "date" => "",
                "*" => r"[^/]*?",
                _ => return Err(format!("{pattern:?}: unknown placeholder {{{key}}}; use {{series}}, {{date}}, {{name}} or {{*}}")),
            });
            if key == "date" {
                re.push_str(&format!("(?<date>{DATE_RE})"));
            }
            if key != "*" {
                if seen.contains(&key) {
                    return Err(format!("{pattern:?}: {{{key}}} appears twice"));
                }
                seen.push(key);
            }
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("{pattern:?}: a }} has no {{"));
        }
        re.push_str(&regex::escape(rest));
        re.push('$');
        Ok(Pattern { re: Regex::new(&re).map_err(|e| format!("{pattern:?}: {e}"))? })
    }

    /// Matches `stem` (a profile's path without extensions, see [`crate::archive::slug::stem`]).
    pub fn matches(&self, stem: &str) -> Option<PathFields> {
        let c = self.re.captures(stem)?;
        let get = |k: &str| c.name(k).map(|m| m.as_str().to_string());
        Some(PathFields { series: get("series"), date: get("date"), name: get("name") })
    }
}

/// A sidecar `NAME.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// The run's series.
    pub series: Option<String>,
    /// When it was taken.
    pub date: Option<toml::value::Datetime>,
    /// Its title on pages and in feeds.
    pub title: Option<String>,
    /// Free-form labels (host, commit, build, …), shown on its page.
    #[serde(default)]
    pub labels: BTreeMap<String, toml::Value>,
    /// The unit of its values, replacing the unit of every graph of the profile (for formats
    /// that do not say, such as folded stacks).
    pub unit: Option<String>,
}

/// Largest sidecar (`.toml` or `.md`) read, in bytes.
const MAX_SIDECAR: u64 = 1 << 20;

/// Reads `input/STEM.ext`, if it exists.
pub fn read_sidecar_text(input: &Path, stem: &str, ext: &str) -> Result<Option<String>, String> {
    read_sidecar_at(&input.join(stem), stem, ext)
}

/// Reads the sidecar `BASE.ext` (BASE being the profile's path without its extensions, byte
/// for byte, whatever its encoding), if it exists; `stem` names it in messages.
pub fn read_sidecar_at(base: &Path, stem: &str, ext: &str) -> Result<Option<String>, String> {
    let rel = format!("{stem}.{ext}");
    let mut path = base.as_os_str().to_os_string();
    path.push(format!(".{ext}"));
    let path = std::path::PathBuf::from(path);
    let meta = match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => m,
        _ => return Ok(None),
    };
    if meta.len() > MAX_SIDECAR {
        return Err(format!("{rel}: larger than {MAX_SIDECAR} bytes"));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("{rel}: {e}"))?;
    String::from_utf8(bytes).map(Some).map_err(|e| format!("{rel}: not UTF-8 (byte {})", e.utf8_error().valid_up_to()))
}

impl Sidecar {
    /// Reads and parses `input/STEM.toml`; a file that does not parse is an error that names it.
    pub fn load(input: &Path, stem: &str) -> Result<Option<Sidecar>, String> {
        Sidecar::load_at(&input.join(stem), stem)
    }

    /// Reads and parses `BASE.toml` (see [`read_sidecar_at`]).
    pub fn load_at(base: &Path, stem: &str) -> Result<Option<Sidecar>, String> {
        let Some(text) = read_sidecar_at(base, stem, "toml")? else { return Ok(None) };
        let sidecar: Sidecar =
            toml::from_str(&text).map_err(|e| format!("{stem}.toml: {}", e.to_string().trim_end()))?;
        if let Some(d) = &sidecar.date {
            from_toml(d).map_err(|e| format!("{stem}.toml: {e}"))?;
        }
        Ok(Some(sidecar))
    }
}

/// What the archive knows of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// Its series.
    pub series: String,
    /// When it was taken.
    pub date: When,
    /// Where the date came from: `sidecar`, `profile`, `pattern`, `file name` or `file time`.
    pub date_from: &'static str,
    /// Its name: `{name}` of the pattern, else the file name without extensions.
    pub name: String,
    /// Its title: the sidecar's, else its name.
    pub title: String,
    /// Its labels, from the sidecar.
    pub labels: BTreeMap<String, String>,
}

/// Works out the run of the profile at `rel` (relative to `input`), from its sidecar, what
/// the profile said about itself (`metadata`), the pattern and the file. Returns the run and
/// the warnings to report.
pub fn describe(
    rel: &str,
    sidecar: Option<&Sidecar>,
    metadata: &BTreeMap<String, String>,
    pattern: Option<&Pattern>,
    mtime_seconds: i64,
    profile_date_first: bool,
) -> Result<(RunInfo, Vec<String>), String> {
    let stem = crate::archive::slug::stem(rel);
    let (folder, file) = match stem.rsplit_once('/') {
        Some((f, n)) => (Some(f), n),
        None => (None, stem),
    };
    let mut warnings = Vec::new();
    let fields = match pattern {
        Some(p) => {
            let f = p.matches(stem);
            if f.is_none() {
                warnings.push(format!("path {stem:?} does not match archive.pattern; series and date come from its folder and name"));
            }
            f.unwrap_or_default()
        }
        None => PathFields::default(),
    };
    let sidecar_name = format!("{stem}.toml");

    // Dates, best source first: a sidecar's, then the path's (the pattern's, or else a date
    // in the file's name), which the user wrote, then the profile's own; the profile's before
    // the path's with `archive.date_from = "profile"`. A profile's clock may be wrong (1970),
    // or the files may have been copied with their times (every run dated the day of a copy).
    let mut dates: Vec<(When, &'static str, String)> = Vec::new();
    if let Some(d) = sidecar.and_then(|s| s.date.as_ref()) {
        dates.push((from_toml(d).map_err(|e| format!("{sidecar_name}: {e}"))?, "sidecar", sidecar_name.clone()));
    }
    let mut path_date = None;
    if let Some(d) = &fields.date {
        match parse_date(d) {
            Ok(w) => path_date = Some((w, "pattern", "its path".to_string())),
            Err(e) => warnings.push(format!("{stem:?}: {e}")),
        }
    }
    // A date in the file's name is not weighed against a sidecar's, which is there to correct
    // it.
    let mut name_error = None;
    if fields.date.is_none() && dates.is_empty() {
        match date_in_name(file) {
            Some(Ok(w)) => path_date = Some((w, "file name", "its file name".into())),
            Some(Err(e)) => name_error = Some(format!("its file name has {e}; not used as its date")),
            None => {}
        }
    }
    let mut profile_date = None;
    if let Some(t) = metadata.get("time") {
        match parse_date(t) {
            Ok(w) => profile_date = Some((w, "profile", "the profile".to_string())),
            Err(e) => warnings.push(format!("the profile's time: {e}")),
        }
    }
    // Digits in a name that are not a date matter only when nothing else dates the run.
    if let (Some(e), true) = (name_error, dates.is_empty() && profile_date.is_none()) {
        warnings.push(e);
    }
    if profile_date_first {
        dates.extend(profile_date.into_iter().chain(path_date));
    } else {
        dates.extend(path_date.into_iter().chain(profile_date));
    }
    let (date, date_from) = match dates.first() {
        Some((w, from, said)) => {
            let mut chosen = (*w, *from);
            for (other, other_from, other_said) in &dates[1..] {
                if !same_when(w, other) {
                    let how = match (*from, *other_from) {
                        ("pattern" | "file name", "profile") => "; archive.date_from = \"profile\" in site.toml dates runs by their profiles instead",
                        ("profile", "pattern" | "file name") => "; archive.date_from = \"path\" in site.toml (the default) dates runs by their paths instead",
                        _ => "",
                    };
                    warnings.push(format!("date {} from {said} differs from {} from {other_said}; using the first{how}", w.display(), other.display()));
                } else if !chosen.0.has_time && other.has_time {
                    // The same day, and the other says the time of day too: runs of one day keep
                    // their order.
                    chosen = (*other, *other_from);
                }
            }
            chosen
        }
        None => {
            let ts = Timestamp::from_second(mtime_seconds).map_err(|e| format!("file time: {e}"))?;
            warnings.push(format!(
                "no date in a sidecar {sidecar_name}, the profile or its path: dated by its file time, which changes when files are copied; its place among its series' runs, and the run it is compared with, follow that time"
            ));
            // Whole seconds, as file systems differ in sub-second precision.
            (When { ts, has_time: true }, "file time")
        }
    };
    // A date no profile of a service can have: a clock that was never set (the Unix epoch:
    // a py-spy pprof says 1970-01-20) or a time read in the wrong units; or a date later than
    // this machine's clock. Kept (the run goes where its date puts it), and said.
    let source = dates.iter().find(|d| d.1 == date_from).map_or("its file time", |d| d.2.as_str());
    if date.implausible().is_some() {
        warnings.push(format!(
            "its date {} (from {source}) is before 2000, which a clock that was not set gives: its run is placed there among its series' runs; give its date in a sidecar {sidecar_name} (date = \"YYYY-MM-DD\") if it is wrong",
            date.display()
        ));
    } else if date.ts.as_second() > Timestamp::now().as_second() + 86_400 {
        warnings.push(format!(
            "its date {} (from {source}) is in the future, more than a day past this machine's clock: its run is placed there, after every run dated today; give its date in a sidecar {sidecar_name} (date = \"YYYY-MM-DD\") if it is wrong",
            date.display()
        ));
    }

    // Series, best source first.
    let mut series: Vec<(String, String)> = Vec::new();
    if let Some(s) = sidecar.and_then(|s| s.series.clone()) {
        series.push((s, sidecar_name.clone()));
    }
    if let Some(s) = fields.series.clone() {
        series.push((s, "archive.pattern".into()));
    }
    for (other, said) in series.iter().skip(1) {
        if *other != series[0].0 {
            warnings.push(format!("series {:?} from {} differs from {other:?} from {said}; using the first", series[0].0, series[0].1));
        }
    }
    let series = match series.into_iter().next() {
        Some((s, _)) => s,
        None => match folder {
            Some(f) => f.to_string(),
            // A file at the top: its own series, named without the date.
            None => {
                let without = DATE_IN_NAME.replace(file, "");
                let trimmed = without.trim_matches(|c: char| "-_. ".contains(c));
                if trimmed.is_empty() { "profiles".to_string() } else { trimmed.to_string() }
            }
        },
    };
    let series = series.trim().to_string();
    if series.is_empty() {
        return Err(format!("{sidecar_name}: series is empty"));
    }
    let name = fields.name.unwrap_or_else(|| file.to_string());
    let title = sidecar.and_then(|s| s.title.clone()).filter(|t| !t.trim().is_empty()).unwrap_or_else(|| name.clone());
    let labels = sidecar
        .map(|s| {
            s.labels
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                .collect()
        })
        .unwrap_or_default();
    Ok((RunInfo { series, date, date_from, name, title, labels }, warnings))
}

/// Two dates agree when they are the same instant, or the same day where one has no time.
fn same_when(a: &When, b: &When) -> bool {
    if a.has_time && b.has_time { a.ts == b.ts } else { a.day() == b.day() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> String {
        parse_date(s).unwrap().rfc3339()
    }

    #[test]
    fn date_forms() {
        assert_eq!(w("2026-11-20"), "2026-11-20T00:00:00Z");
        assert_eq!(w("20261120"), "2026-11-20T00:00:00Z");
        assert_eq!(w("2026-11-20T14:03:09Z"), "2026-11-20T14:03:09Z");
        assert_eq!(w("2026-11-20T14:03:09.5+02:00"), "2026-11-20T12:03:09Z");
        assert_eq!(w("20261120T140309"), "2026-11-20T14:03:09Z");
        assert_eq!(w("2026-11-20_14-03"), "2026-11-20T14:03:00Z");
        assert_eq!(w("2026-11-20-14-03-09"), "2026-11-20T14:03:09Z");
        assert!(!parse_date("2026-11-20").unwrap().has_time);
        let e = parse_date("2026-13-40").unwrap_err();
        assert!(e.contains("2026-13-40"), "{e}");
        assert!(parse_date("yesterday").unwrap_err().contains("expected a form"));
    }

    #[test]
    fn patterns() {
        let p = Pattern::new("{series}/{date}/{name}").unwrap();
        let f = p.matches("api/2026-11-20/cpu").unwrap();
        assert_eq!(f.series.as_deref(), Some("api"));
        assert_eq!(f.date.as_deref(), Some("2026-11-20"));
        assert_eq!(f.name.as_deref(), Some("cpu"));
        assert!(p.matches("api/cpu").is_none());
        let p = Pattern::new("{*}/{series}-{date}").unwrap();
        let f = p.matches("hosts/api-eu-20261120T0100").unwrap();
        assert_eq!(f.series.as_deref(), Some("api-eu"));
        assert_eq!(f.date.as_deref(), Some("20261120T0100"));
        assert!(Pattern::new("{service}/{date}").unwrap_err().contains("unknown placeholder {service}"));
        assert!(Pattern::new("{series}/{series}").unwrap_err().contains("twice"));
        assert!(Pattern::new("{series").unwrap_err().contains("not closed"));
    }

    fn run(dir: &Path, rel: &str, sidecar: Option<&str>, meta: &[(&str, &str)], pattern: Option<&str>) -> (RunInfo, Vec<String>) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "a 1\n").unwrap();
        let stem = crate::archive::slug::stem(rel);
        if let Some(s) = sidecar {
            std::fs::write(dir.join(format!("{stem}.toml")), s).unwrap();
        }
        let sc = Sidecar::load(dir, stem).unwrap();
        let meta: BTreeMap<_, _> = meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let pattern = pattern.map(|p| Pattern::new(p).unwrap());
        let mtime = crate::archive::run::Stamp::of(&std::fs::metadata(&path).unwrap()).mtime_seconds();
        describe(rel, sc.as_ref(), &meta, pattern.as_ref(), mtime, false).unwrap()
    }

    #[test]
    fn sources_in_order() {
        let d = tempfile::tempdir().unwrap();
        let (r, warn) = run(
            d.path(),
            "x/api-2026-11-19.folded.gz",
            Some("series = \"api\"\ndate = 2026-11-20T10:00:00Z\ntitle = \"Deploy 42\"\nlabels = { host = \"h1\", build = 42 }\n"),
            &[("time", "2026-11-20T10:00:00Z")],
            None,
        );
        assert_eq!((r.series.as_str(), r.date_from, r.title.as_str()), ("api", "sidecar", "Deploy 42"));
        assert_eq!(r.date.rfc3339(), "2026-11-20T10:00:00Z");
        assert_eq!(r.labels["build"], "42");
        assert!(warn.is_empty(), "{warn:?}");

        let (r, warn) = run(d.path(), "svc/cpu.pb.gz", None, &[("time", "2026-11-18T01:02:03Z")], None);
        assert_eq!((r.series.as_str(), r.date_from, r.name.as_str()), ("svc", "profile", "cpu"));
        assert!(warn.is_empty());

        let (r, _) = run(d.path(), "a/2026-11-17/b.folded", None, &[], Some("{series}/{date}/{name}"));
        assert_eq!((r.series.as_str(), r.date.day().as_str(), r.name.as_str(), r.date_from), ("a", "2026-11-17", "b", "pattern"));

        let (r, _) = run(d.path(), "web/run-20261116.folded", None, &[], None);
        assert_eq!((r.series.as_str(), r.date.day().as_str(), r.date_from), ("web", "2026-11-16", "file name"));

        let (r, warn) = run(d.path(), "web/nodate.folded", None, &[], None);
        assert_eq!(r.date_from, "file time");
        assert!(warn[0].contains("file time") && warn[0].contains("web/nodate.toml"), "{warn:?}");

        let (r, _) = run(d.path(), "db-2026-11-15.folded", None, &[], None);
        assert_eq!((r.series.as_str(), r.date.day().as_str()), ("db", "2026-11-15"));
    }

    fn run_with(dir: &Path, rel: &str, meta: &[(&str, &str)], profile_first: bool) -> (RunInfo, Vec<String>) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "a 1\n").unwrap();
        let meta: BTreeMap<_, _> = meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        describe(rel, None, &meta, None, 0, profile_first).unwrap()
    }

    #[test]
    fn the_path_date_the_user_wrote_beats_the_profile_clock_unless_site_toml_says_otherwise() {
        let d = tempfile::tempdir().unwrap();
        // A pprof whose clock says 1970, in a file named by its day.
        let (r, warn) = run_with(d.path(), "api/2026-11-19.pb.gz", &[("time", "1970-01-20T03:00:00Z")], false);
        assert_eq!((r.date.display().as_str(), r.date_from), ("2026-11-19", "file name"));
        assert_eq!(warn.len(), 1, "{warn:?}");
        assert!(warn[0].contains("1970-01-20 03:00 UTC") && warn[0].contains("date_from = \"profile\""), "{warn:?}");
        // The same file with the profile's date first: the profile wins, the warning says how to
        // go back, and 1970 is flagged.
        let (r, warn) = run_with(d.path(), "api/2026-11-19.pb.gz", &[("time", "1970-01-20T03:00:00Z")], true);
        assert_eq!((r.date.day().as_str(), r.date_from), ("1970-01-20", "profile"));
        assert!(r.date.implausible().is_some());
        assert!(warn.iter().any(|w| w.contains("date_from = \"path\"")), "{warn:?}");
        assert!(warn.iter().any(|w| w.contains("before 2000") && w.contains("the profile")), "{warn:?}");
        // The same day: the profile's time of day is kept, so the runs of a day keep their order.
        let (r, warn) = run_with(d.path(), "api/2026-11-19.pb.gz", &[("time", "2026-11-19T08:30:00Z")], false);
        assert_eq!((r.date.rfc3339().as_str(), r.date_from), ("2026-11-19T08:30:00Z", "profile"));
        assert!(warn.is_empty(), "{warn:?}");
        // Digits in a name that are not a date say nothing when the profile dates the run.
        let (r, warn) = run_with(d.path(), "api/build-99999999.pb.gz", &[("time", "2026-11-19T08:30:00Z")], false);
        assert_eq!(r.date_from, "profile");
        assert!(warn.is_empty(), "{warn:?}");
    }

    #[test]
    fn the_file_names_common_profilers_give_are_dated_with_their_time_of_day() {
        let d = tempfile::tempdir().unwrap();
        for (rel, want) in [
            // node --cpu-prof
            ("svc/CPU.20261128.084728.41233.0.001.cpuprofile", "2026-11-28T08:47:28Z"),
            // the JDK's own recording names
            ("svc/hotspot-pid-4242-id-1-2026_11_28_08_47_30.jfr", "2026-11-28T08:47:30Z"),
            // async-profiler's %t
            ("svc/cpu-20261128-084731.collapsed", "2026-11-28T08:47:31Z"),
            // py-spy's default, by program name or process id
            ("svc/python-2026-11-28T08:47:32.json", "2026-11-28T08:47:32Z"),
            ("svc/4242-2026-11-28T08:47:33.txt", "2026-11-28T08:47:33Z"),
        ] {
            let (r, warn) = run_with(d.path(), rel, &[], false);
            assert_eq!((r.date.rfc3339().as_str(), r.date_from), (want, "file name"), "{rel}");
            assert!(warn.is_empty(), "{rel}: {warn:?}");
        }
    }

    #[test]
    fn conflicts_and_bad_sidecars_name_the_file() {
        let d = tempfile::tempdir().unwrap();
        let (r, warn) = run(d.path(), "a/2026-11-17/b.folded", Some("series = \"z\"\ndate = 2026-11-01\n"), &[], Some("{series}/{date}/{name}"));
        assert_eq!(r.series, "z");
        assert_eq!(r.date.day(), "2026-11-01");
        assert_eq!(warn.len(), 2, "{warn:?}");
        assert!(warn.iter().any(|w| w.contains("a/2026-11-17/b.toml") && w.contains("2026-11-17")), "{warn:?}");

        std::fs::write(d.path().join("bad.toml"), "date = \"last tuesday\"\n").unwrap();
        let e = Sidecar::load(d.path(), "bad").unwrap_err();
        assert!(e.starts_with("bad.toml") && e.contains("line 1"), "{e}");
        std::fs::write(d.path().join("bad.toml"), "serie = \"x\"\n").unwrap();
        let e = Sidecar::load(d.path(), "bad").unwrap_err();
        assert!(e.contains("serie"), "{e}");
        std::fs::write(d.path().join("bad.toml"), "date = 14:00:00\n").unwrap();
        let e = Sidecar::load(d.path(), "bad").unwrap_err();
        assert!(e.contains("bad.toml") && e.contains("no day"), "{e}");
    }
}
