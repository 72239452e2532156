//! `site.toml`: one struct with a default for every key, parsed with serde and toml, unknown
//! keys rejected (toml's message names the key, the line and the column), then validated.
//! Every key is documented in the README; `flamesite init` writes a commented copy.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::graph::color::Palette;

/// Whether `path` (site.toml's `input` or `output`, or the flag) names object storage rather
/// than a folder: `s3://`, `gs://`, `az://`, `abfs://`, `azure://`, `file://` and the services'
/// `https://` addresses.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(|s| s.split_once("://").is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+')))
}

/// The whole site configuration. Paths are relative to the folder holding `site.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Title of the site, shown on the home page.
    pub title: String,
    /// Folder scanned for profiles.
    pub input: PathBuf,
    /// Folder the site is written to; replaced as a whole when a build succeeds.
    pub output: PathBuf,
    /// Absolute URL the site is published at; only used where a relative link cannot be.
    pub base_url: String,
    /// Colour palette: `hot`, `module`, `lang` or `blue`.
    pub palette: Palette,
    /// How links to pages end: `"folders"` (`p/api/2026-11-20/`, for hosts that serve a
    /// folder's `index.html`) or `"index.html"` (`p/api/2026-11-20/index.html`, for a bucket
    /// served without a website endpoint).
    pub links: Links,
    /// Publish and exit 0 even when some profiles were skipped.
    pub keep_going: bool,
    /// Folder whose `templates/` and `static/` override the built-in theme file by file;
    /// by default `theme/` beside `site.toml`.
    pub theme_dir: Option<PathBuf>,
    /// Folder whose files are copied as they are into the output folder's root (`CNAME`,
    /// `robots.txt`, favicons); by default `static/` beside `site.toml`.
    pub static_dir: Option<PathBuf>,
    /// The file this configuration was read from (none for the defaults), so that a warning
    /// about a setting names it.
    #[serde(skip)]
    pub file: Option<PathBuf>,
    /// How graphs are split into chunk files.
    pub chunks: ChunkConfig,
    /// Limits that protect the build from hostile input.
    pub limits: Limits,
    /// How `perf script` text is folded into stacks.
    pub perf: PerfConfig,
    /// How pprof profiles are turned into graphs.
    pub pprof: PprofConfig,
    /// How profiles are grouped into series and runs, and how the archive pages list them.
    pub archive: ArchiveConfig,
    /// How change points are found and how a comparison is judged against its series' noise.
    pub changes: ChangesConfig,
    /// Folder of the incremental build cache; by default `.NAME.cache` beside the output
    /// folder `NAME`.
    pub cache_dir: Option<PathBuf>,
    /// Budgets `flamesite diff` checks (`[[budget]]` tables): how far the total share of the
    /// functions a regular expression matches may grow.
    #[serde(rename = "budget")]
    pub budgets: Vec<Budget>,
}

/// The budgets as text, one line each, for the fingerprints of what they change (a
/// comparison's cache entry, the build state).
pub fn budgets_text(budgets: &[Budget]) -> String {
    budgets.iter().map(|b| format!("budget {:?} {} {:?}\n", b.function.as_str(), b.max_increase, b.graph)).collect()
}

/// A `[[budget]]` of site.toml: the total share of the functions `function` matches (their
/// frames counted once, as a search counts them) may grow by at most `max_increase`
/// percentage points from one profile to the next, in `graph` or in every graph.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "BudgetToml")]
pub struct Budget {
    /// The functions the budget covers.
    pub function: regex::Regex,
    /// How many percentage points their total share may grow.
    pub max_increase: f64,
    /// The graph it applies to; every graph when none.
    pub graph: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetToml {
    function: String,
    max_increase: Points,
    graph: Option<String>,
}

/// Percentage points as site.toml and the command line give them: `2`, `2.5` or `"2pp"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Points {
    Number(f64),
    Text(String),
}

/// Parses percentage points: `2`, `0.5`, `2pp`, `2 pp`; 0 or more.
pub fn parse_points(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let number = t.strip_suffix("pp").unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a number of percentage points, 0 or more (such as 2pp)")),
    }
}

impl TryFrom<BudgetToml> for Budget {
    type Error = String;
    fn try_from(b: BudgetToml) -> Result<Budget, String> {
        let function = regex::Regex::new(&b.function).map_err(|e| format!("budget function {:?}: {e}", b.function))?;
        let max_increase = match b.max_increase {
            Points::Number(v) => parse_points(&v.to_string())?,
            Points::Text(t) => parse_points(&t)?,
        };
        Ok(Budget { function, max_increase, graph: b.graph })
    }
}

/// How links to pages end (see [`Config::links`]).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum Links {
    /// At the page's folder: `p/api/2026-11-20/`.
    #[default]
    #[serde(rename = "folders")]
    Folders,
    /// At the page's file: `p/api/2026-11-20/index.html`.
    #[serde(rename = "index.html")]
    IndexHtml,
}

impl Links {
    /// What a link to a page's folder `url` (ending in `/`, or empty for the site's root)
    /// ends with after it.
    pub fn suffix(self) -> &'static str {
        match self {
            Links::Folders => "",
            Links::IndexHtml => "index.html",
        }
    }

    /// The link to the page whose folder is `url`.
    pub fn page(self, url: &str) -> String {
        if url.is_empty() || url.ends_with('/') { format!("{url}{}", self.suffix()) } else { url.to_string() }
    }
}

/// How profiles are grouped into series of dated runs, and how the pages list them.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchiveConfig {
    /// A pattern matched against each profile's path (relative to the input folder, without
    /// format and compression extensions), such as `"{series}/{date}/{name}"`; see README.
    pub pattern: Option<String>,
    /// Which date a run takes when its path (the pattern's `{date}`, or a date in its file
    /// name) and its profile's own time disagree: `"path"`, which the user wrote (the
    /// default), or `"profile"`. A sidecar's date comes before both.
    pub date_from: DateFrom,
    /// Runs per page of a series.
    pub per_page: u32,
    /// Headings of a series page: `"day"` or `"month"`.
    pub group_by: GroupBy,
    /// Entries in each Atom feed (the newest runs).
    pub feed_entries: u32,
    /// A run is marked as a regression on its series page and in its feed when a function's
    /// share of the total (self) grew by more than this many percentage points since the
    /// previous run.
    pub regression_points: f64,
    /// Per series name, the run every later run is also compared with: its date
    /// (`2026-11-14`), title, or path without extensions.
    pub baselines: std::collections::BTreeMap<String, String>,
}

/// The parameters of the change-point method and of the series' noise (`[changes]` of
/// site.toml; README, "Change points and events", says what each does and why its default).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ChangesConfig {
    /// Runs on each side of a candidate run whose medians are compared.
    pub window: usize,
    /// Runs before a candidate needed to judge it.
    pub min_runs_before: usize,
    /// Runs from a shift on (itself included) that confirm it.
    pub confirm_runs: usize,
    /// A function is followed when its share reaches this many percent in some run.
    pub min_share_percent: f64,
    /// How many standard errors of their difference two medians must be apart: the standard
    /// error of the difference of the medians of `a` and `b` runs is 1.2533 σ √(1/a + 1/b), σ
    /// the spread of one run's share; with windows of 8 and 8 that is 2.5 σ, with one run after
    /// (the newest) 5.3 σ.
    pub noise_factor: f64,
    /// How much of the larger median a shift must be (0.25: a quarter).
    pub min_relative: f64,
    /// Of the profile's self shares, the part that must move at a run for the run to be said
    /// to have changed the profile's shape (one event, not many changes).
    pub reshaped: f64,
    /// Runs before a comparison's later run whose shares say how much a function's share
    /// differs from night to night.
    pub noise_runs: usize,
    /// Fewest such runs that say it.
    pub noise_min_runs: usize,
    /// How many times the night-to-night spread a comparison's change must be to stand out of
    /// the series' noise (a regression mark, a feed's "Regression").
    pub stands_out: f64,
}

impl Default for ChangesConfig {
    fn default() -> Self {
        ChangesConfig {
            window: 8,
            min_runs_before: 5,
            confirm_runs: 3,
            min_share_percent: 0.5,
            noise_factor: 4.0,
            min_relative: 0.25,
            reshaped: 1.0 / 3.0,
            noise_runs: 16,
            noise_min_runs: 6,
            stands_out: 3.0,
        }
    }
}

impl ChangesConfig {
    /// The values that make no sense, with what to write instead.
    fn validate(&self) -> Result<(), String> {
        if self.window < 2 || self.min_runs_before < 2 || self.confirm_runs < 1 {
            return Err("changes.window and changes.min_runs_before must be at least 2 (runs), changes.confirm_runs at least 1".into());
        }
        if self.noise_runs < 2 || self.noise_min_runs < 2 || self.noise_min_runs > self.noise_runs {
            return Err("changes.noise_min_runs must be at least 2 and at most changes.noise_runs (runs)".into());
        }
        let fraction = |v: f64| v.is_finite() && (0.0..=1.0).contains(&v);
        if !fraction(self.min_relative) || !fraction(self.reshaped) || !(self.min_share_percent.is_finite() && (0.0..=100.0).contains(&self.min_share_percent)) {
            return Err("changes.min_relative and changes.reshaped must be fractions from 0 to 1, changes.min_share_percent a percentage".into());
        }
        if !(self.noise_factor.is_finite() && self.noise_factor > 0.0 && self.stands_out.is_finite() && self.stands_out > 0.0) {
            return Err("changes.noise_factor and changes.stands_out must be numbers above 0 (standard errors; spreads)".into());
        }
        Ok(())
    }
}

/// Which of a run's dates comes first when its path and its profile disagree.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DateFrom {
    /// The date in the profile's path.
    #[default]
    Path,
    /// The time the profile says it was taken.
    Profile,
}

/// How a series page groups its runs under headings.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// One heading per day (UTC).
    Day,
    /// One heading per month (UTC).
    Month,
}

impl Default for ArchiveConfig {
    fn default() -> Self {
        ArchiveConfig {
            pattern: None,
            date_from: DateFrom::Path,
            per_page: 50,
            group_by: GroupBy::Day,
            feed_entries: 50,
            regression_points: 2.0,
            baselines: Default::default(),
        }
    }
}

/// How `perf script` text is folded into stacks: the options of inferno-collapse-perf (and
/// of stackcollapse-perf.pl) that change frame names.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PerfConfig {
    /// Suffix kernel functions with `_[k]` (`--kernel`).
    pub annotate_kernel: bool,
    /// Suffix JIT-compiled functions (from a `/tmp/perf-PID.map`) with `_[j]` (`--jit`).
    pub annotate_jit: bool,
    /// Name the root frame of each process `comm-PID` rather than `comm` (`--pid`); perf
    /// script prints the pid only with `-F +pid`, otherwise it reads `?`.
    pub include_pid: bool,
    /// Name the root frame of each thread `comm-PID/TID` (`--tid`); implies `include_pid`.
    pub include_tid: bool,
    /// Keep raw addresses such as `[unknown <7f50a90f2ad7>]` where no symbol was found
    /// (`--addrs`).
    pub include_addrs: bool,
}

/// How pprof profiles are turned into graphs.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PprofConfig {
    /// A per-sample label key, such as `"thread"`: besides each sample type's graph of the
    /// whole profile, one graph per value of that label, named `<type> <key>=<value>`
    /// (`cpu thread=worker-1`), values sorted, and `<type> <key>=(none)` for the samples
    /// without the label. Profiles without the label get no extra graphs.
    pub graph_by_label: Option<String>,
}

/// How a graph is split into chunk files (see `docs/FORMAT.md`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// Canvas width in pixels for which a frame of the root view counts as visible; narrower
    /// frames go to fine chunks.
    pub root_width: u32,
    /// Each fine width class holds frames this many times narrower than the previous one.
    pub class_factor: u32,
    /// About how many frames one chunk file holds.
    pub target_frames: u32,
    /// About how many intervals one search bucket holds.
    pub search_intervals: u32,
    /// Names per name file.
    pub names_per_file: u32,
}

/// Limits against hostile input.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest decompressed size of one profile, in bytes (a gzip bomb stops here).
    pub max_profile_bytes: u64,
    /// Longest line of a text profile, in bytes.
    pub max_line_bytes: u64,
    /// Deepest stack accepted, in frames.
    pub max_depth: u32,
    /// Most graphs one profile may make (pprof sample types, speedscope profiles, JFR event
    /// kinds, label values): a profile that would make more is skipped.
    pub max_graphs: u32,
    /// Longest string of a JSON profile (a function or file name, in `.cpuprofile` and
    /// speedscope), in bytes: refused as it is read, before it is held.
    pub max_name_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            title: "Profiles".into(),
            input: PathBuf::from("profiles"),
            output: PathBuf::from("public"),
            base_url: String::new(),
            palette: Palette::Hot,
            links: Links::Folders,
            keep_going: false,
            theme_dir: None,
            static_dir: None,
            file: None,
            chunks: ChunkConfig::default(),
            limits: Limits::default(),
            perf: PerfConfig::default(),
            pprof: PprofConfig::default(),
            archive: ArchiveConfig::default(),
            changes: ChangesConfig::default(),
            cache_dir: None,
            budgets: Vec::new(),
        }
    }
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig { root_width: 3840, class_factor: 8, target_frames: 4096, search_intervals: 16384, names_per_file: 2048 }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_profile_bytes: 16 << 30, max_line_bytes: 16 << 20, max_depth: 100_000, max_graphs: 256, max_name_bytes: 1 << 20 }
    }
}

impl Config {
    /// Parses `text` (the contents of `path`, used in messages) and validates it.
    pub fn parse(text: &str, path: &Path) -> Result<Config, String> {
        let config: Config =
            toml::from_str(text).map_err(|e| format!("{}: {}", path.display(), e.to_string().trim_end()))?;
        config.validate().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(config)
    }

    /// Reads and parses `site.toml` at `path`; relative paths in it are made relative to its
    /// folder.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut config = Config::parse(&text, path)?;
        config.file = Some(path.to_path_buf());
        let dir = path.parent().unwrap_or(Path::new(""));
        if !is_url(&config.input) {
            config.input = dir.join(&config.input);
        }
        if !is_url(&config.output) {
            config.output = dir.join(&config.output);
        }
        config.cache_dir = config.cache_dir.map(|c| dir.join(c));
        let here = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        // Before static/ was copied to the output's root, templates/ and static/ beside
        // site.toml overrode the theme: such a site is told where they go now.
        if config.theme_dir.is_none() && here.join("templates").is_dir() {
            return Err(format!(
                "{}: theme overrides now go in theme/ beside site.toml (or the folder theme_dir names): \
                 move templates/ to theme/templates/, and the files of static/ that replace the theme's to theme/static/; \
                 static/ beside site.toml is now copied as it is to the output folder's root",
                here.join("templates").display()
            ));
        }
        if let Some(t) = &config.theme_dir {
            if !here.join(t).is_dir() {
                return Err(format!("theme_dir: theme folder {} is not a folder", here.join(t).display()));
            }
        }
        config.theme_dir = Some(here.join(config.theme_dir.unwrap_or_else(|| PathBuf::from("theme"))));
        config.static_dir = Some(here.join(config.static_dir.unwrap_or_else(|| PathBuf::from("static"))));
        if config.theme_dir.as_deref().and_then(|t| t.canonicalize().ok()).is_some_and(|t| Some(t) == here.canonicalize().ok()) {
            return Err("theme_dir is the folder of site.toml, whose static/ is copied as it is to the output folder's root: \
                        put the theme's overrides in a folder of their own (theme/ by default) and remove theme_dir"
                .into());
        }
        Ok(config)
    }

    /// Checks values that parse but make no sense, with a message that says what to write.
    pub fn validate(&self) -> Result<(), String> {
        let c = &self.chunks;
        if c.root_width == 0 {
            return Err("chunks.root_width must be at least 1 (pixels), for example 3840".into());
        }
        if c.class_factor < 2 {
            return Err("chunks.class_factor must be at least 2, for example 8".into());
        }
        if c.target_frames == 0 || c.search_intervals == 0 || c.names_per_file == 0 {
            return Err("chunks.target_frames, chunks.search_intervals and chunks.names_per_file must be at least 1".into());
        }
        let l = &self.limits;
        if l.max_line_bytes == 0 || l.max_profile_bytes == 0 || l.max_depth == 0 || l.max_graphs == 0 || l.max_name_bytes == 0 {
            return Err("limits.* must be at least 1".into());
        }
        if !(self.base_url.is_empty() || self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(format!("base_url must be an absolute http(s) URL such as \"https://example.com/perf/\", not {:?}", self.base_url));
        }
        if !self.archive.regression_points.is_finite() || self.archive.regression_points < 0.0 {
            return Err("archive.regression_points must be a number of percentage points, 0 or more".into());
        }
        self.changes.validate()?;
        if self.archive.per_page == 0 || self.archive.feed_entries == 0 {
            return Err("archive.per_page and archive.feed_entries must be at least 1".into());
        }
        if self.pprof.graph_by_label.as_deref().is_some_and(|k| k.is_empty()) {
            return Err("pprof.graph_by_label must name a label key, for example \"thread\"".into());
        }
        if let Some(p) = &self.archive.pattern {
            crate::archive::Pattern::new(p).map_err(|e| format!("archive.pattern: {e}"))?;
        }
        Ok(())
    }

    /// The folder of the incremental build cache.
    pub fn cache_folder(&self) -> PathBuf {
        if let Some(c) = &self.cache_dir {
            return c.clone();
        }
        if is_url(&self.output) {
            // A bucket keeps the build's record itself: its copy while this build runs is
            // this process's own, removed at the end.
            let hash = blake3::hash(self.output.as_os_str().as_encoded_bytes()).to_hex();
            return std::env::temp_dir().join(format!("flamesite-{}-{}.cache", std::process::id(), &hash[..16]));
        }
        let name = self.output.file_name().unwrap_or(std::ffi::OsStr::new("public"));
        let parent = self.output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        parent.join(crate::archive::slug::sibling_name(name, ".cache"))
    }
}

/// The commented `site.toml` that `flamesite init` writes; it parses to the defaults.
pub const INIT_TOML: &str = include_str!("init_site.toml");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_folders_are_told_apart() {
        assert!(is_url(Path::new("s3://bucket/site")));
        assert!(is_url(Path::new("gs://b/x")));
        assert!(is_url(Path::new("file:///tmp/x")));
        assert!(!is_url(Path::new("public")));
        assert!(!is_url(Path::new("/srv/www/site")));
        assert!(!is_url(Path::new("a/b://c")));
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let err = Config::parse("title = \"x\"\n\npalete = \"hot\"\n", Path::new("site.toml")).unwrap_err();
        assert!(err.contains("palete"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.starts_with("site.toml"), "{err}");
    }

    #[test]
    fn unknown_key_in_a_table_is_rejected() {
        let err = Config::parse("[chunks]\nroot_widht = 5\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("root_widht") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn bad_values_say_what_to_write() {
        let err = Config::parse("[chunks]\nclass_factor = 1\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("class_factor must be at least 2"), "{err}");
        let err = Config::parse("palette = \"rainbow\"\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("rainbow") && err.contains("hot"), "{err}");
        let err = Config::parse("base_url = \"example.com\"\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("absolute"), "{err}");
    }

    #[test]
    fn init_template_parses_to_the_defaults() {
        let c = Config::parse(INIT_TOML, Path::new("site.toml")).unwrap();
        let d = Config::default();
        assert_eq!(c.title, d.title);
        assert_eq!(c.input, d.input);
        assert_eq!(c.output, d.output);
        assert_eq!(c.chunks.root_width, d.chunks.root_width);
        assert_eq!(c.limits.max_depth, d.limits.max_depth);
        let (p, q) = (&c.perf, &d.perf);
        assert_eq!(
            (p.annotate_kernel, p.annotate_jit, p.include_pid, p.include_tid, p.include_addrs),
            (q.annotate_kernel, q.annotate_jit, q.include_pid, q.include_tid, q.include_addrs)
        );
    }

    #[test]
    fn perf_keys_parse_and_typos_are_named() {
        let c = Config::parse("[perf]\nannotate_kernel = true\ninclude_tid = true\n", Path::new("s.toml")).unwrap();
        assert!(c.perf.annotate_kernel && c.perf.include_tid && !c.perf.annotate_jit);
        let err = Config::parse("[perf]\nannotate_kernels = true\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("annotate_kernels") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn pprof_keys_parse_and_typos_are_named() {
        assert_eq!(Config::default().pprof.graph_by_label, None);
        let c = Config::parse("[pprof]\ngraph_by_label = \"thread\"\n", Path::new("s.toml")).unwrap();
        assert_eq!(c.pprof.graph_by_label.as_deref(), Some("thread"));
        let err = Config::parse("[pprof]\ngraph_by_labels = \"thread\"\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("graph_by_labels") && err.contains("line 2"), "{err}");
        let err = Config::parse("[pprof]\ngraph_by_label = \"\"\n", Path::new("s.toml")).unwrap_err();
        assert!(err.contains("pprof.graph_by_label must name a label key"), "{err}");
    }
}
