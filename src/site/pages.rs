//! The pages of the archive, each a function of a small part of the archive model: the home
//! page (every series with its newest run, run count and a sparkline), series pages (runs by
//! date, newest first, paginated, with a trend plot), run pages (the viewer, metadata, notes,
//! previous and next run), compare pages, Atom feeds and `index.json`.
//!
//! [`plan`] lists every page with a hash of exactly what it shows, so the build renders a page
//! only when that hash changed: a run page depends on its run and its neighbours, a series
//! page on the runs it lists, the home page on each series' newest runs and counts. Every link
//! is relative, so the site works under any sub-path; `base_url` appears only in feeds and Open
//! Graph tags.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use serde::Serialize;
use serde_json::json;
use tera::Context;

use super::charts::{self, Point};
use super::feed;
use super::index_json::{self, GraphEntry, Index, ProfileEntry, SeriesEntry, SeriesIndex};
use super::theme::{path_to_root, Theme};
use crate::units::format_scaled;
use crate::archive::run::{Archive, Comparison, GraphChanges, Run, Series};
use crate::derive::changes::Changes;
use crate::derive::history::{self, Span};
use crate::archive::slug;
use crate::config::{Config, GroupBy};
use crate::graph::preview;
use crate::store::gz;
use crate::ingest::PREVIEW;

/// Events a series page shows before its list of the others.
pub const EVENTS_SHOWN: usize = 5;

/// Runs shown in a home-page sparkline (the newest ones).
const SPARK_RUNS: usize = 30;

/// What the pages are made from.
pub struct Site<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// The theme.
    pub theme: &'a Theme,
    /// The archive.
    pub archive: &'a Archive,
    /// The naming record, published in `index.json`.
    pub names: &'a slug::Record,
    /// A hash of everything every page depends on: flamesite's version, the theme's files and
    /// the settings pages show.
    pub base: u64,
    /// The change lists of comparisons, by key (read from the cache for those not made in
    /// this build).
    pub changes: &'a (dyn Fn(&str) -> Vec<GraphChanges> + Sync),
    /// Span `s` of the history of series `i` (read once, when one of its files is rendered).
    pub history: &'a (dyn Fn(usize, usize) -> Result<std::sync::Arc<Span>, String> + Sync),
    /// Each series' change points, reckoned once for the four files that show them.
    pub change_points: ChangePoints,
    /// Whether each marked comparison's growth stands out of its series' own night-to-night
    /// spread, reckoned once for the pages and feeds that mark it.
    pub in_series: InSeries,
}

/// By comparison, whether the growth of its regression mark stands out of the night-to-night
/// spread of that function's share in the runs before (`None`: too few runs to say).
#[derive(Default)]
pub struct InSeries(std::sync::Mutex<HashMap<usize, Option<bool>>>);

/// One series' change points and events, each run given by its index in the archive, reckoned
/// once by whichever file needs them first.
type SeriesChanges = std::sync::Arc<std::sync::OnceLock<Result<Changes, String>>>;

/// Change points of the archive's series, each reckoned once when a file first needs them.
#[derive(Default)]
pub struct ChangePoints(std::sync::Mutex<HashMap<usize, SeriesChanges>>);

/// A file of the site made from the model, with a hash of what it shows.
#[derive(Clone, Debug)]
pub struct Page {
    /// Its path, relative to the site root.
    pub path: String,
    /// A hash of everything it shows: equal hashes, equal bytes.
    pub hash: u64,
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Home,
    IndexJson,
    SeriesIndex(usize),
    Feed(Option<usize>),
    SeriesPage(usize, usize),
    Run(usize),
    Compare(usize),
    HistoryIndex(usize),
    HistoryNames(usize, usize),
    HistoryBucket(usize, usize, usize),
    SeriesChanges(usize),
}

fn hash_of(parts: impl Hash) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    parts.hash(&mut h);
    h.finish()
}

impl Site<'_> {
    fn run(&self, i: usize) -> &Run {
        &self.archive.runs[i]
    }

    /// What a link to run `i` shows, for a page's hash: the run, and its regression mark (the
    /// function and the exact growth, which decides the text shown; nothing is formatted here,
    /// since the plan makes this for every link of every page).
    /// A mark is judged against the runs before (their shares of the marked function): their
    /// hashes stand for that judgement, which is only reckoned when a page is rendered.
    fn link_hash(&self, i: usize) -> (u64, &str, Option<(&str, u64, Vec<u64>)>, Vec<(&str, &str, u64, u64)>) {
        let r = self.run(i);
        let mark = r.compare.and_then(|c| self.archive.comparisons[c].made.top.as_ref().map(|t| (c, t))).filter(|(_, t)| t.points > self.config.archive.regression_points);
        let mark = mark.map(|(c, t)| {
            let before = self.noise_window(c).map(|(si, _, window)| window.iter().map(|&j| self.run(self.archive.series[si].runs[j]).hash).collect()).unwrap_or_default();
            (t.name.as_str(), t.points.to_bits(), before)
        });
        (r.hash, r.url.as_str(), mark, self.budget_marks(i))
    }

    /// The budgets run `i`'s comparison with the run before exceeded, for a page's hash.
    fn budget_marks(&self, i: usize) -> Vec<(&str, &str, u64, u64)> {
        let Some(c) = self.run(i).compare else { return Vec::new() };
        self.archive.comparisons[c].made.budgets.iter().map(|b| (b.graph.as_str(), b.function.as_str(), b.increase_pp.to_bits(), b.max_increase_pp.to_bits())).collect()
    }

    /// The budgets run `i`'s comparison with the run before exceeded, as its pages say them.
    fn budgets(&self, i: usize) -> Vec<serde_json::Value> {
        let Some(c) = self.run(i).compare else { return Vec::new() };
        budget_words(&self.archive.comparisons[c].made.budgets)
    }

    /// The function whose self share grew by more than `archive.regression_points` since
    /// the previous run, with its growth as text (`+3.2 pp`), if any.
    /// A growth within the night-to-night spread of that function's share in the series (as
    /// the comparison page judges each function) is not one: the series page, the feeds and the
    /// comparison page say the same of it.
    fn regression(&self, i: usize) -> Option<(String, String)> {
        let ci = self.run(i).compare?;
        let top = self.archive.comparisons[ci].made.top.as_ref()?;
        if top.points <= self.config.archive.regression_points || self.stands_out_of_series(ci, top) == Some(false) {
            return None;
        }
        Some((top.name.clone(), format!("+{:.1} pp", top.points)))
    }

    /// Whether the growth `top` of comparison `ci` (the largest of its run's functions) stands
    /// out of its series, twice: out of the spread of that function's share from night to night
    /// in the runs around (derive::changes::stands_out_of_series), and above its usual share,
    /// the median of the runs before, by as much (a share back to its usual level after a
    /// night where another function's spike took the total is not a regression). The level of
    /// both is `stands_out`, raised as the sampling level is raised for the largest of that
    /// many functions (derive::report::run_z). `None` when there are too few runs around, or
    /// their history cannot be read (the comparison page says why).
    fn stands_out_of_series(&self, ci: usize, top: &crate::archive::run::Regression) -> Option<bool> {
        if let Some(&known) = self.in_series.0.lock().expect("no panic while holding it").get(&ci) {
            return known;
        }
        let run_level = crate::derive::report::run_z(top.functions) / crate::derive::report::STANDS_OUT_Z;
        let window = self.noise_window(ci);
        let rise = window.as_ref().and_then(|w| self.rise_over_usual(ci, w, &top.name));
        let spread = self.series_spreads(window, &[top.name.as_str()]).ok().flatten().and_then(|(_, by)| by.get(top.name.as_str()).copied().flatten());
        let verdict = spread.map(|spread| {
            let judged = |points: f64| crate::derive::changes::stands_out_of_series(points / 100.0 / run_level, spread, &self.config.changes);
            judged(top.points) && rise.is_none_or(|r| r * 100.0 > self.config.archive.regression_points && judged(r * 100.0))
        });
        self.in_series.0.lock().expect("no panic while holding it").insert(ci, verdict);
        verdict
    }

    /// How far `function`'s self share in comparison `ci`'s later run stands above its median
    /// share in the runs of the comparison's noise `window` before that run (fractions of 1);
    /// `None` with fewer than three such runs, or when the history cannot be read.
    fn rise_over_usual(&self, ci: usize, window: &(usize, &crate::archive::run::GraphInfo, Vec<usize>), function: &str) -> Option<f64> {
        let (si, _, window) = window;
        let s = &self.archive.series[*si];
        let k = s.runs.iter().position(|&i| i == self.archive.comparisons[ci].after)?;
        let before: Vec<usize> = window.iter().copied().filter(|&j| j < k).collect();
        if before.len() < 3 {
            return None;
        }
        // The runs before, then the run itself (after them all): sorted.
        let positions: Vec<usize> = before.iter().copied().chain([k]).collect();
        let mut shares = self_shares(&self.spans_of(*si, &positions).ok()?, &positions, function);
        let now = shares.pop().expect("the run itself");
        Some(now - crate::derive::changes::median(&shares))
    }

    /// The newest `n` runs among `runs` (indexes), newest first.
    fn newest(&self, runs: impl Iterator<Item = usize>, n: usize) -> Vec<usize> {
        let mut all: Vec<usize> = runs.collect();
        let key = |&i: &usize| (std::cmp::Reverse(self.run(i).record.date), self.run(i).record.source.as_str());
        if all.len() > n {
            all.select_nth_unstable_by_key(n, key);
            all.truncate(n);
        }
        all.sort_by_key(key);
        all
    }

    fn pages_of(&self, s: &Series) -> usize {
        s.runs.len().div_ceil(self.config.archive.per_page.max(1) as usize).max(1)
    }

    /// Every page of the site, with its hash.
    pub fn plan(&self) -> Vec<Page> {
        let a = self.archive;
        let base = self.base;
        let mut pages = Vec::new();
        let home = hash_of((
            base,
            "home",
            a.series
                .iter()
                .map(|s| (&s.name, &s.url, s.runs.len(), s.runs[s.runs.len().saturating_sub(SPARK_RUNS)..].iter().map(|&i| self.link_hash(i)).collect::<Vec<_>>()))
                .collect::<Vec<_>>(),
        ));
        pages.push(Page { path: "index.html".into(), hash: home, kind: Kind::Home });
        let index = hash_of((
            base,
            "index.json",
            a.series.iter().map(|s| (&s.name, &s.url, s.runs.len(), s.runs.last().map(|&i| &self.run(i).url))).collect::<Vec<_>>(),
            &self.names.series,
            self.gone_runs(),
        ));
        pages.push(Page { path: "index.json".into(), hash: index, kind: Kind::IndexJson });
        let entries = self.config.archive.feed_entries as usize;
        let feed = self.newest(0..a.runs.len(), entries).into_iter().map(|i| self.link_hash(i)).collect::<Vec<_>>();
        pages.push(Page { path: "feed.xml".into(), hash: hash_of((base, "feed", feed)), kind: Kind::Feed(None) });
        for (si, s) in a.series.iter().enumerate() {
            let newest = self.newest(s.runs.iter().copied(), entries).into_iter().map(|i| self.link_hash(i)).collect::<Vec<_>>();
            // The runs change points are looked for in (the newest two history spans): the
            // feed's entries, the first series page and `changes.json` name them.
            let window: Vec<u64> = s.runs[history::recent_spans(s.runs.len()).start * history::SPAN..].iter().map(|&i| self.run(i).hash).collect();
            if s.runs.len() >= 2 {
                pages.push(Page { path: format!("{}changes.json", s.url), hash: hash_of((base, "series changes", &s.url, &window)), kind: Kind::SeriesChanges(si) });
            }
            pages.push(Page {
                path: format!("{}feed.xml", s.url),
                hash: hash_of((base, "series feed", &s.name, &s.url, newest, &window)),
                kind: Kind::Feed(Some(si)),
            });
            // Its runs' records say everything its listing and its history hold (their keys
            // name the bytes).
            let runs: Vec<_> = s.runs.iter().map(|&i| (self.run(i).hash, &self.run(i).url)).collect();
            pages.push(Page { path: format!("{}index.json", s.url), hash: hash_of((base, "series index", &s.name, &s.url, &runs)), kind: Kind::SeriesIndex(si) });
            if s.runs.len() >= 2 {
                // A span's files depend on its runs and the graph followed, the index on all.
                let graph = self.run(*s.runs.last().expect("a series has runs")).record.graphs.first().map(|g| &g.name);
                let hash = hash_of((base, "history", &s.url, &runs));
                pages.push(Page { path: format!("{}history/names.json", s.url), hash, kind: Kind::HistoryIndex(si) });
                for (span, (first, n)) in history::spans(s.runs.len()).into_iter().enumerate() {
                    let hash = hash_of((base, "history span", &s.url, graph, &runs[first..first + n], first));
                    pages.push(Page { path: format!("{}history/{span}/names.json{}", s.url, gz::SUFFIX), hash, kind: Kind::HistoryNames(si, span) });
                    for k in 0..history::buckets(n) {
                        let path = format!("{}history/{span}/b/{k}.json{}", s.url, gz::SUFFIX);
                        pages.push(Page { path, hash: hash_of((hash, k)), kind: Kind::HistoryBucket(si, span, k) });
                    }
                }
            }
            let per_page = self.config.archive.per_page.max(1) as usize;
            let count = self.pages_of(s);
            for n in 1..=count {
                let on_page: Vec<_> = s.runs.iter().rev().skip((n - 1) * per_page).take(per_page).map(|&i| self.link_hash(i)).collect();
                // The first page lists the change points.
                let window = if n == 1 { &window[..] } else { &[] };
                pages.push(Page {
                    path: format!("{}index.html", series_page_url(s, n)),
                    hash: hash_of((base, "series", &s.name, &s.url, s.runs.len(), n, count, on_page, window)),
                    kind: Kind::SeriesPage(si, n),
                });
            }
        }
        for (i, r) in a.runs.iter().enumerate() {
            let s = &a.series[r.series];
            let prev = r.prev.map(|p| self.link_hash(p));
            let next = r.next.map(|n| self.link_hash(n));
            let compared = [r.compare, r.vs_baseline].map(|c| c.map(|c| &a.comparisons[c].url));
            let budgets = self.budget_marks(i);
            pages.push(Page {
                path: format!("{}index.html", r.url),
                hash: hash_of((base, "run", r.hash, &r.url, &s.name, &s.url, prev, next, compared, budgets)),
                kind: Kind::Run(i),
            });
        }
        for (ci, c) in a.comparisons.iter().enumerate() {
            let s = &a.series[self.run(c.after).series];
            pages.push(Page {
                path: format!("{}index.html", c.url),
                // Its noise marks read the runs before its later one (not those after).
                hash: hash_of((
                    base,
                    "compare",
                    &c.made.key,
                    &c.url,
                    &s.name,
                    &s.url,
                    c.baseline,
                    self.link_hash(c.before),
                    self.link_hash(c.after),
                    self.noise_window(ci).map(|(si, g, w)| (&g.name, w.iter().map(|&j| self.run(a.series[si].runs[j]).hash).collect::<Vec<_>>())),
                )),
                kind: Kind::Compare(ci),
            });
        }
        pages
    }

    /// The bytes of `page`.
    pub fn render(&self, page: &Page) -> Result<Vec<u8>, String> {
        let text = match page.kind {
            Kind::Home => self.home()?,
            Kind::IndexJson => self.index_json()?,
            Kind::SeriesIndex(si) => self.series_index(si)?,
            Kind::SeriesChanges(si) => {
                let (graph, changes, events) = self.change_entries(si)?;
                let mut json = serde_json::to_string(&json!({ "format": "flamesite-changes", "version": 2, "graph": graph, "changes": changes, "events": events })).map_err(|e| e.to_string())?;
                json.push('\n');
                json
            }
            Kind::Feed(series) => self.feed(series),
            Kind::SeriesPage(si, n) => self.series_page(si, n)?,
            Kind::Run(i) => self.run_page(i)?,
            Kind::Compare(i) => self.compare(i)?,
            Kind::HistoryIndex(si) => {
                let mut json = serde_json::to_string(&history::index(self.archive, si)).map_err(|e| e.to_string())?;
                json.push('\n');
                json
            }
            // A span's files are data, published packed as a graph's are.
            Kind::HistoryNames(si, span) => return Ok(gz::pack(history::names_json(&*(self.history)(si, span)?).as_bytes())),
            Kind::HistoryBucket(si, span, k) => return Ok(gz::pack(history::bucket_json(&*(self.history)(si, span)?, k).as_bytes())),
        };
        Ok(text.into_bytes())
    }

    fn context(&self, root: &str) -> Context {
        let mut ctx = Context::new();
        ctx.insert("site_title", &self.config.title);
        ctx.insert("base_url", &self.config.base_url);
        ctx.insert("root", root);
        // Appended to every link to a page's folder (see `links` in site.toml).
        ctx.insert("index", self.config.links.suffix());
        ctx
    }

    /// The link-preview image of run `i`'s page, absolute, and its alternative text: the
    /// preview of its comparison with the run before, which states what grew most since (its
    /// graph coloured by change), or for a series' first run the run's own. `None` without
    /// `base_url` or previews. Series and home pages show their newest run's.
    fn run_image(&self, i: usize) -> Option<(String, String)> {
        let run = self.run(i);
        let title = format!("{} · {}", run.record.title, run.record.series);
        let compared = run.compare.map(|c| &self.archive.comparisons[c]).filter(|c| c.made.preview);
        let (rel, alt) = match compared {
            Some(c) => (format!("{}{PREVIEW}", c.url), format!("Differential flame graph of {title} against the run before, {}", self.run(c.before).record.title)),
            None => (run.record.preview.then(|| format!("{}{PREVIEW}", run.url))?, format!("Flame graph of {title}")),
        };
        Some((self.absolute(&rel)?, alt))
    }

    /// The absolute URL of `rel` (relative to the site root), when `base_url` is set.
    fn absolute(&self, rel: &str) -> Option<String> {
        let base = self.config.base_url.trim_end_matches('/');
        (!base.is_empty()).then(|| format!("{base}/{rel}"))
    }

    /// The `index.json` entry of run `i`.
    pub fn entry(&self, i: usize) -> ProfileEntry {
        let r = self.run(i);
        let rec = &r.record;
        ProfileEntry {
            source: rec.source.clone(),
            slug: r.slug.clone(),
            url: r.url.clone(),
            format: rec.format.clone(),
            series: rec.series.clone(),
            series_url: self.archive.series[r.series].url.clone(),
            date: rec.date.rfc3339(),
            date_from: rec.date_from.clone(),
            title: rec.title.clone(),
            labels: rec.labels.clone(),
            metadata: rec.metadata.clone(),
            preview: rec.preview.then(|| format!("{}{PREVIEW}", r.url)),
            graphs: rec
                .graphs
                .iter()
                .map(|g| GraphEntry::of(g, format!("{}{}", r.url, g.data)))
                .collect(),
        }
    }

    /// The sources of the naming record that no run of the archive has (their names stay
    /// reserved), with their slugs, by source.
    fn gone_runs(&self) -> BTreeMap<&str, &str> {
        // Both are sorted by source: one walk side by side.
        let mut built = self.archive.runs.iter().map(|r| r.record.source.as_str()).peekable();
        let mut gone = BTreeMap::new();
        for (source, slug) in &self.names.runs {
            while built.next_if(|b| *b < source.as_str()).is_some() {}
            if built.peek() != Some(&source.as_str()) {
                gone.insert(source.as_str(), slug.as_str());
            }
        }
        gone
    }

    fn index_json(&self) -> Result<String, String> {
        let a = self.archive;
        let names = slug::Record {
            runs: self.gone_runs().into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            series: self.names.series.clone(),
        };
        let index = Index {
            format: "flamesite-index".into(),
            version: index_json::VERSION,
            series: a
                .series
                .iter()
                .map(|s| SeriesEntry {
                    name: s.name.clone(),
                    url: s.url.clone(),
                    feed: format!("{}feed.xml", s.url),
                    index: format!("{}index.json", s.url),
                    runs: s.runs.len(),
                    newest: s.runs.last().map(|&i| self.run(i).url.clone()).unwrap_or_default(),
                })
                .collect(),
            profiles: Vec::new(),
            names,
        };
        let mut json = serde_json::to_string(&index).map_err(|e| e.to_string())?;
        json.push('\n');
        Ok(json)
    }

    /// The change points of series `si` among its newest runs, the last two spans of its
    /// history (derive::changes), each with the index of its run in the archive.
    fn change_points(&self, si: usize) -> Result<Changes, String> {
        // The series page, its listing, its changes.json and its feed show them: one reckoning
        // (two history spans read) for all four.
        let cell = self.change_points.0.lock().expect("no panic while holding it").entry(si).or_default().clone();
        cell.get_or_init(|| self.reckon_change_points(si)).clone()
    }

    fn reckon_change_points(&self, si: usize) -> Result<Changes, String> {
        let s = &self.archive.series[si];
        if s.runs.len() < 2 {
            return Ok(Changes::default());
        }
        let recent = history::recent_spans(s.runs.len());
        let from = recent.start * history::SPAN;
        let held: Vec<std::sync::Arc<Span>> = recent.map(|k| (self.history)(si, k)).collect::<Result<_, _>>()?;
        // The graph the history follows, and the runs that have it with a value, with their
        // totals (the floor of the noise when they count samples).
        let Some(followed) = history::followed_graph(self.run(*s.runs.last().expect("a series has runs"))) else { return Ok(Changes::default()) };
        let (runs, draws): (Vec<usize>, Vec<Option<u64>>) = (from..s.runs.len())
            .filter_map(|k| self.run(s.runs[k]).record.graphs.iter().find(|g| g.name == followed.name && g.total > 0).map(|g| (k, g.draws)))
            .unzip();
        // The samples each run's shares rest on, when every run says.
        let totals: Option<Vec<u64>> = draws.into_iter().collect();
        let samples = totals.as_deref();
        let refs: Vec<&Span> = held.iter().map(|a| &**a).collect();
        let mut changes = crate::derive::changes::of_spans(&refs, &runs, samples, &self.config.changes);
        for c in &mut changes.points {
            c.run = s.runs[c.run];
        }
        for e in &mut changes.events {
            e.run = s.runs[e.run];
            e.lead.run = s.runs[e.lead.run];
        }
        Ok(changes)
    }

    /// The graph change points follow in series `si`, and its change points as its listings
    /// give them.
    fn change_entries(&self, si: usize) -> Result<(String, Vec<index_json::ChangeEntry>, Vec<index_json::EventEntry>), String> {
        let s = &self.archive.series[si];
        let graph = history::followed_graph(self.run(*s.runs.last().expect("a series has runs"))).map_or(String::new(), |g| g.name.clone());
        let all = self.change_points(si)?;
        let changes = all
            .points
            .into_iter()
            .map(|c| index_json::ChangeEntry { graph: graph.clone(), function: c.function, run: self.run(c.run).slug.clone(), before: c.before, after: c.after, confirmed: c.confirmed })
            .collect();
        let events = all
            .events
            .into_iter()
            .map(|e| index_json::EventEntry {
                run: self.run(e.run).slug.clone(),
                function: e.lead.function,
                before: e.lead.before,
                after: e.lead.after,
                functions: e.functions,
                moved: e.moved,
                reshaped: e.reshaped,
                confirmed: e.lead.confirmed,
            })
            .collect();
        Ok((graph, changes, events))
    }

    /// The listing of series `si`'s profiles.
    fn series_index(&self, si: usize) -> Result<String, String> {
        let s = &self.archive.series[si];
        let (_, changes, events) = self.change_entries(si)?;
        let mut runs = s.runs.clone();
        runs.sort_by(|&a, &b| self.run(a).record.source.cmp(&self.run(b).record.source));
        let index = SeriesIndex {
            format: "flamesite-series".into(),
            version: index_json::VERSION,
            series: s.name.clone(),
            url: s.url.clone(),
            profiles: runs.into_iter().map(|i| self.entry(i)).collect(),
            changes,
            events,
        };
        let mut json = serde_json::to_string(&index).map_err(|e| e.to_string())?;
        json.push('\n');
        Ok(json)
    }

    fn home(&self) -> Result<String, String> {
        let rows: Vec<_> = self
            .archive
            .series
            .iter()
            .map(|s| {
                let newest = self.run(*s.runs.last().expect("a series has runs"));
                let (total, unit, decimals) = headline(newest);
                // Totals in another unit (a heap profile beside CPU profiles) are not comparable.
                let same: Vec<usize> = s.runs.iter().copied().filter(|&i| headline(self.run(i)).1 == unit).collect();
                let shown: Vec<&Run> = same[same.len().saturating_sub(SPARK_RUNS)..].iter().map(|&i| self.run(i)).collect();
                let (values, _) = plotted(&shown);
                json!({
                    "name": s.name, "url": s.url, "count": s.runs.len(), "feed": format!("{}feed.xml", s.url),
                    "newest": run_link(newest), "newest_total": format_scaled(total as i128, unit, decimals),
                    "spark": charts::sparkline(&values, &format!("{}: totals of the last {} runs", s.name, values.len())),
                })
            })
            .collect();
        let mut ctx = self.context("");
        ctx.insert("series", &rows);
        ctx.insert("runs", &self.archive.runs.len());
        let (series, runs) = (self.archive.series.len(), self.archive.runs.len());
        let newest_i = (0..runs).max_by_key(|&i| (self.run(i).record.date.rfc3339(), i));
        let newest = newest_i.map(|i| self.run(i));
        let image = newest_i.and_then(|i| self.run_image(i));
        ctx.insert(
            "og",
            &json!({
                "title": self.config.title,
                "description": format!(
                    "Flame graphs of {runs} profile run{} in {series} series{}",
                    if runs == 1 { "" } else { "s" },
                    newest.map_or(String::new(), |r| format!("; newest: {} of {}", r.record.series, r.record.date.display()))
                ),
                "url": self.absolute(&self.config.links.page("")),
                "image": image.as_ref().map(|(u, _)| u), "image_alt": image.as_ref().map(|(_, a)| a),
                "image_width": preview::WIDTH, "image_height": preview::HEIGHT,
            }),
        );
        self.theme.render("index.html", &ctx)
    }

    fn series_page(&self, si: usize, n: usize) -> Result<String, String> {
        let s = &self.archive.series[si];
        let per_page = self.config.archive.per_page.max(1) as usize;
        let on_page: Vec<usize> = s.runs.iter().rev().skip((n - 1) * per_page).take(per_page).copied().collect();
        let runs: Vec<&Run> = on_page.iter().map(|&i| self.run(i)).collect();
        let count = self.pages_of(s);
        let url = series_page_url(s, n);
        let root = path_to_root(url.matches('/').count());
        let mut groups: Vec<(String, Vec<RunLink>)> = Vec::new();
        for (&i, run) in on_page.iter().zip(&runs) {
            let heading = match self.config.archive.group_by {
                GroupBy::Day => run.record.date.day(),
                GroupBy::Month => run.record.date.month(),
            };
            match groups.last_mut() {
                Some((h, list)) if *h == heading => list.push(self.marked_link(i)),
                _ => groups.push((heading, vec![self.marked_link(i)])),
            }
        }
        let groups: Vec<_> = groups.into_iter().map(|(heading, runs)| json!({ "heading": heading, "runs": runs })).collect();
        // The plot shows the runs in the unit of the page's newest run; others are not comparable.
        let unit = runs.first().map_or("", |r| headline(r).1);
        let chronological: Vec<&Run> = runs.iter().rev().copied().filter(|r| headline(r).1 == unit).collect();
        let (values, decimals) = plotted(&chronological);
        let points: Vec<Point> = chronological
            .iter()
            .zip(values)
            .map(|(r, value)| {
                let (total, unit, places) = headline(r);
                Point {
                    href: format!("{root}{}", self.config.links.page(&r.url)),
                    title: format!("{} · {} · {}", r.record.date.display(), r.record.title, format_scaled(total as i128, unit, places)),
                    value,
                }
            })
            .collect();
        let label = format!("Totals of the {} runs of {} on this page, oldest on the left", points.len(), s.name);
        let first = chronological.first().map(|r| r.record.date.day()).unwrap_or_default();
        let last = chronological.last().map(|r| r.record.date.day()).unwrap_or_default();
        // Its events, strongest first, on its first page: a handful shown, the rest behind a
        // list the reader opens (index.json and changes.json keep every change point).
        let changes = if n == 1 { self.change_points(si)? } else { Changes::default() };
        let mut events = changes.events.clone();
        events.sort_by(|a, b| b.strength().total_cmp(&a.strength()).then(b.run.cmp(&a.run)));
        let events: Vec<_> = events
            .iter()
            .map(|e| {
                let r = self.run(e.run);
                let c = &e.lead;
                let others: Vec<_> = changes.points[e.first..e.first + e.functions]
                    .iter()
                    .filter(|p| !(p.run == c.run && p.function == c.function))
                    .map(|p| json!({ "function": p.function, "up": p.after > p.before, "before": format!("{:.2}%", 100.0 * p.before), "after": format!("{:.2}%", 100.0 * p.after) }))
                    .collect();
                json!({
                    "function": c.function,
                    "up": c.after > c.before,
                    "before": format!("{:.2}%", 100.0 * c.before),
                    "after": format!("{:.2}%", 100.0 * c.after),
                    "confirmed": c.confirmed,
                    "reshaped": e.reshaped,
                    "moved": format!("{:.0}%", 100.0 * e.moved),
                    "others": others,
                    "run": run_link(r),
                    "href": format!("{root}{}#q={}", self.config.links.page(&r.url), fragment_escape(&exact_regex(&c.function))),
                })
            })
            .collect();
        let shown = EVENTS_SHOWN.min(events.len());
        let mut ctx = self.context(&root);
        ctx.insert("series", &json!({ "name": s.name, "url": s.url, "feed": format!("{}feed.xml", s.url), "count": s.runs.len() }));
        ctx.insert("history", &(s.runs.len() >= 2));
        let newest = s.runs.last().map(|&i| self.run(i));
        let mut description = format!("{} run{} of {}{}", s.runs.len(), if s.runs.len() == 1 { "" } else { "s" }, s.name, newest.map_or(String::new(), |r| format!(", the newest of {}", r.record.date.display())));
        if let Some(c) = events.first() {
            description.push_str(&format!("; change: {} {} → {} from {}", c["function"].as_str().unwrap_or(""), c["before"].as_str().unwrap_or(""), c["after"].as_str().unwrap_or(""), c["run"]["date"].as_str().unwrap_or("")));
        }
        let image = s.runs.last().and_then(|&i| self.run_image(i));
        ctx.insert(
            "og",
            &json!({
                "title": format!("{} · {}", s.name, self.config.title), "description": description, "url": self.absolute(&self.config.links.page(&url)),
                "image": image.as_ref().map(|(u, _)| u), "image_alt": image.as_ref().map(|(_, a)| a),
                "image_width": preview::WIDTH, "image_height": preview::HEIGHT,
            }),
        );
        ctx.insert("changes", &events[..shown]);
        ctx.insert("more_changes", &events[shown..]);
        ctx.insert("page", &n);
        ctx.insert("pages", &count);
        ctx.insert("groups", &groups);
        ctx.insert("trend", &charts::trend(&points, unit, decimals, &label, &first, &last));
        ctx.insert("newer", &(n > 1).then(|| series_page_url(s, n - 1)));
        ctx.insert("older", &(n < count).then(|| series_page_url(s, n + 1)));
        self.theme.render("series.html", &ctx)
    }

    fn run_page(&self, i: usize) -> Result<String, String> {
        let run = self.run(i);
        let s = &self.archive.series[run.series];
        let rec = &run.record;
        let root = path_to_root(run.url.matches('/').count());
        let graphs: Vec<serde_json::Value> = rec.graphs.iter().map(menu_entry).collect();
        let prev = run.prev.map(|p| self.run(p));
        let next = run.next.map(|n| self.run(n));
        let mut ctx = self.context(&root);
        ctx.insert(
            "profile",
            &json!({
                "slug": run.slug, "url": run.url, "source": rec.source, "format": rec.format,
                "title": rec.title, "series": s.name, "series_url": s.url,
                "date": rec.date.display(), "datetime": rec.date.rfc3339(), "date_from": rec.date_from,
                "date_flag": rec.date.implausible(),
                "labels": rec.labels, "metadata": rec.metadata, "graphs": graphs, "notes": rec.notes,
                "preload": rec.preload,
                "differential": rec.graphs.iter().any(|g| g.differential),
                "totals": totals(run),
                "prev": prev.map(run_link), "next": next.map(run_link),
                // The series page's table of two runs, function by function: the run before and this one.
                "pair": (prev.is_some() || next.is_some()).then(|| format!("{},{}", prev.map_or(&run.slug, |p| &p.slug), run.slug)),
                "compare": run.compare.map(|c| &self.archive.comparisons[c].url),
                "vs_baseline": run.vs_baseline.map(|c| &self.archive.comparisons[c].url),
                "budgets": self.budgets(i),
            }),
        );
        let image = self.run_image(i);
        let (total, unit, decimals) = headline(run);
        let mut description = format!("{} run of {}: {}", s.name, rec.date.display(), format_scaled(total as i128, unit, decimals));
        // What a link pasted in chat should say: what grew most since the previous run.
        if let Some(top) = run.compare.and_then(|c| self.archive.comparisons[c].made.top.as_ref()).filter(|t| t.points > 0.0) {
            description.push_str(&format!("; since the previous run, {} grew most, {:+.2} pp of the total", top.name, top.points));
        }
        ctx.insert(
            "og",
            &json!({
                "title": format!("{} · {}", rec.title, s.name),
                "description": description,
                "url": self.absolute(&self.config.links.page(&run.url)),
                "image": image.as_ref().map(|(u, _)| u), "image_alt": image.as_ref().map(|(_, a)| a),
                "image_width": preview::WIDTH, "image_height": preview::HEIGHT,
            }),
        );
        self.theme.render("profile.html", &ctx)
    }

    /// The comparison page `ci` as a folder of its own (`flamesite diff`): no links to runs or
    /// series, the page at the folder's root.
    pub fn standalone_comparison(&self, ci: usize) -> Result<String, String> {
        self.compare_page(ci, true)
    }

    /// See [`noise_window`].
    fn noise_window(&self, ci: usize) -> Option<(usize, &crate::archive::run::GraphInfo, Vec<usize>)> {
        noise_window(self.archive, ci, &self.config.changes)
    }

    /// How much each of `names`' self share differs from night to night in the runs of
    /// `window` (a comparison's [`noise_window`]), in the graph its series' history follows
    /// (which is returned with them): from the history's spans of those runs. A function
    /// missing from a run counts as a share of 0 there.
    fn series_spreads<'n>(
        &self,
        window: Option<(usize, &crate::archive::run::GraphInfo, Vec<usize>)>,
        names: &[&'n str],
    ) -> Result<Option<(String, HashMap<&'n str, Option<f64>>)>, String> {
        let Some((si, followed, window)) = window else { return Ok(None) };
        let held = self.spans_of(si, &window)?;
        let spread = |name: &str| crate::derive::changes::night_to_night(&self_shares(&held, &window, name), &self.config.changes);
        Ok(Some((followed.name.clone(), names.iter().map(|&n| (n, spread(n))).collect())))
    }

    /// The spans of series `si`'s history that hold its runs `positions` (sorted).
    fn spans_of(&self, si: usize, positions: &[usize]) -> Result<Vec<std::sync::Arc<Span>>, String> {
        let mut spans: Vec<usize> = positions.iter().map(|j| j / history::SPAN).collect();
        spans.dedup();
        spans.into_iter().map(|k| (self.history)(si, k)).collect()
    }

    fn compare(&self, ci: usize) -> Result<String, String> {
        self.compare_page(ci, false)
    }

    fn compare_page(&self, ci: usize, standalone: bool) -> Result<String, String> {
        let c: &Comparison = &self.archive.comparisons[ci];
        let (before, after) = (self.run(c.before), self.run(c.after));
        let s = &self.archive.series[after.series];
        let root = path_to_root(c.url.matches('/').count());
        let changes = (self.changes)(&c.made.key);
        // Each graph with, where the runs have it as a plain graph, the folders of the runs'
        // own graphs, which its search reads (docs/FORMAT.md, "Differential graphs").
        let graph_of = |r: &crate::archive::run::Run, g: &crate::archive::run::GraphInfo| {
            r.record.graphs.iter().find(|x| x.name == g.name && x.unit == g.unit && !x.differential).map(|x| format!("{root}{}{}", r.url, x.data))
        };
        let graphs: Vec<serde_json::Value> = c
            .made
            .graphs
            .iter()
            .map(|g| {
                let mut entry = menu_entry(g);
                if let (Some(b), Some(a)) = (graph_of(before, g), graph_of(after, g)) {
                    entry["before"] = b.into();
                    entry["after"] = a.into();
                }
                entry
            })
            .collect();
        let fmt_points = |p: f64| if p >= 0.0 { format!("+{p:.2} pp") } else { format!("−{:.2} pp", -p) };
        // How much each listed function's share differs from night to night in the series,
        // for the graph its history follows.
        let listed: Vec<&str> = changes.iter().flat_map(|g| g.grew.iter().chain(&g.shrank)).map(|ch| ch.name.as_str()).collect();
        let window = self.noise_window(ci);
        let noise_runs = window.as_ref().map_or(0, |(_, _, w)| w.len());
        // Runs after this one, which judge the first nights of a series.
        let at = s.runs.iter().position(|&i| i == c.after).unwrap_or(0);
        let noise_after = window.as_ref().map_or(0, |(_, _, w)| w.iter().filter(|&&j| j > at).count());
        let spreads = self.series_spreads(window, &listed)?;
        let lists: Vec<_> = changes
            .iter()
            .map(|g| {
                let row = |ch: &crate::graph::diff::Change| {
                    let points = ch.self_points(g.total_before, g.total_after);
                    // At the run's level, as its regression mark judges it (derive::report::run_z).
                    let z = crate::derive::report::run_z(g.functions);
                    let sampling = crate::derive::report::stands_out_at(z, (g.samples_before, g.samples_after), ch.self_before, g.total_before, ch.self_after, g.total_after);
                    let spread = spreads.as_ref().filter(|(graph, _)| *graph == g.graph).and_then(|(_, by)| by.get(ch.name.as_str()).copied().flatten());
                    let series = spread.map(|s| crate::derive::changes::stands_out_of_series(points / 100.0, s, &self.config.changes));
                    json!({
                        "name": ch.name,
                        "points": fmt_points(points),
                        "before": format_scaled(ch.self_before as i128, &g.unit, g.decimals),
                        "after": format_scaled(ch.self_after as i128, &g.unit, g.decimals),
                        "href": format!("#g={}&q={}&c=1", fragment_escape(&g.graph), fragment_escape(&exact_regex(&ch.name))),
                        // Of counts (samples): whether sampling alone would rarely make this
                        // change; in a series, whether its nights differ by as much.
                        "noise": match (sampling, series) {
                            (Some(false), _) => "within noise",
                            (_, Some(false)) => "within the series' noise",
                            (Some(true), _) | (_, Some(true)) => "stands out",
                            (None, None) => "",
                        },
                        "spread": spread.map(|s| format!("±{:.2} pp", s * 100.0)).unwrap_or_default(),
                    })
                };
                let d = g.total_after as i128 - g.total_before as i128;
                let pct = if g.total_before > 0 { format!("{:+.1}%", d as f64 * 100.0 / g.total_before as f64).replace('-', "−") } else { "n/a".into() };
                json!({
                    "graph": g.graph, "unit": g.unit,
                    "before": format_scaled(g.total_before as i128, &g.unit, g.decimals), "after": format_scaled(g.total_after as i128, &g.unit, g.decimals),
                    "delta": format!("{}{}", if d > 0 { "+" } else if d < 0 { "−" } else { "±" }, format_scaled(d.abs(), &g.unit, g.decimals)),
                    "pct": pct, "grew": g.grew.iter().map(row).collect::<Vec<_>>(), "shrank": g.shrank.iter().map(row).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut ctx = self.context(&root);
        ctx.insert("series", &json!({ "name": s.name, "url": s.url }));
        ctx.insert("run", &run_link(after));
        ctx.insert("prev", &run_link(before));
        ctx.insert("baseline", &c.baseline);
        ctx.insert("standalone", &standalone);
        ctx.insert("url", &c.url);
        ctx.insert("graphs", &graphs);
        ctx.insert("preload", &c.made.preload);
        ctx.insert("lists", &lists);
        ctx.insert("noise_series", &spreads.as_ref().map(|(graph, _)| graph.clone()));
        ctx.insert("noise_runs", &noise_runs);
        ctx.insert("noise_after", &noise_after);
        ctx.insert("threshold", &self.config.archive.regression_points);
        ctx.insert("budgets", &budget_words(&c.made.budgets));
        // Earlier → later, as the page's headings, its preview image and its exports say it.
        let title = format!("{} → {} · {}", before.record.title, after.record.title, s.name);
        let mut description = format!("What changed in {} between {} and {}", s.name, before.record.date.display(), after.record.date.display());
        // What a link pasted in chat should say: the largest growth and shrinkage of the first
        // graph's self shares.
        if let Some(g) = changes.first() {
            let said = |c: &crate::graph::diff::Change| format!("{} {:+.2} pp", c.name, c.self_points(g.total_before, g.total_after));
            let most: Vec<String> = g.grew.first().map(said).into_iter().chain(g.shrank.first().map(said)).collect();
            if !most.is_empty() {
                description.push_str(&format!(": {}", most.join(", ")));
            }
        }
        ctx.insert(
            "og",
            &json!({
                "title": title,
                "description": description,
                "url": self.absolute(&self.config.links.page(&c.url)),
                "image": c.made.preview.then(|| format!("{}{PREVIEW}", c.url)).and_then(|i| self.absolute(&i)),
                "image_width": preview::WIDTH, "image_height": preview::HEIGHT,
            }),
        );
        self.theme.render("compare.html", &ctx)
    }

    fn feed(&self, series: Option<usize>) -> String {
        let config = self.config;
        let entries = config.archive.feed_entries as usize;
        let (path, title, id, alternate, newest) = match series {
            Some(si) => {
                let s = &self.archive.series[si];
                (
                    format!("{}feed.xml", s.url),
                    format!("{} · {}", s.name, config.title),
                    format!("urn:flamesite:series:{}", s.url.trim_start_matches("s/").trim_end_matches('/')),
                    s.url.clone(),
                    self.newest(s.runs.iter().copied(), entries),
                )
            }
            None => (
                "feed.xml".to_string(),
                config.title.clone(),
                "urn:flamesite:site".to_string(),
                String::new(),
                self.newest(0..self.archive.runs.len(), entries),
            ),
        };
        // A series' feed says on a run's entry which change points start at it.
        let mut starts: HashMap<usize, Vec<String>> = HashMap::new();
        if let Some(si) = series {
            // A change point that cannot be read back costs the feed its mention, not the build
            // (the series page and listing, rendered from the same spans, report the error).
            for e in self.change_points(si).unwrap_or_default().events {
                starts.entry(e.run).or_default().push(event_sentence(&e));
            }
        }
        // Links are absolute with base_url, else relative to the feed itself.
        let up = path_to_root(path.matches('/').count());
        let href = |rel: &str| self.absolute(rel).unwrap_or_else(|| format!("{up}{rel}"));
        let items = newest
            .iter()
            .map(|&i| {
                let run = self.run(i);
                let rec = &run.record;
                let (total, unit, decimals) = headline(run);
                feed::Entry {
                    id: format!("urn:flamesite:run:{}", run.slug),
                    title: format!("{} · {}", rec.series, rec.title),
                    updated: rec.date.rfc3339(),
                    href: href(&self.config.links.page(&run.url)),
                    summary: match self.regression(i) {
                        Some((name, points)) => format!(
                            "{} run of {}: {}. Regression: {name} grew by {points} of the total since the previous run.",
                            rec.series,
                            rec.date.display(),
                            format_scaled(total as i128, unit, decimals)
                        ),
                        None => format!("{} run of {}: {}", rec.series, rec.date.display(), format_scaled(total as i128, unit, decimals)),
                    } + &starts.get(&i).map(|l| format!(" {}", l.join(" "))).unwrap_or_default()
                        + &self.budgets(i).iter().map(|b| format!(" Budget exceeded: {}", b["sentence"].as_str().unwrap_or_default())).collect::<String>(),
                    content_html: rec.notes.clone(),
                    categories: vec![rec.series.clone()],
                }
            })
            .collect::<Vec<_>>();
        let feed = feed::Feed {
            title,
            id,
            updated: newest.first().map_or_else(|| "1970-01-01T00:00:00Z".to_string(), |&i| self.run(i).record.date.rfc3339()),
            self_href: href(&path),
            alternate_href: if alternate.is_empty() {
                self.absolute(&self.config.links.page("")).unwrap_or_else(|| self.config.links.page("./"))
            } else {
                href(&self.config.links.page(&alternate))
            },
            author: config.title.clone(),
            entries: items,
        };
        feed::atom(&feed)
    }
}

impl Site<'_> {
    /// A run as a list shows it, with its regression mark and comparison link.
    fn marked_link(&self, i: usize) -> RunLink {
        let run = self.run(i);
        let mut link = run_link(run);
        link.regression = self.regression(i).map(|(name, points)| json!({ "name": name, "points": points }));
        link.budget = self.budgets(i).into_iter().next();
        link.compare = run.compare.map(|c| self.archive.comparisons[c].url.clone());
        link
    }
}

/// A regular expression that matches exactly `name`.
fn exact_regex(name: &str) -> String {
    let mut out = String::from("^");
    for ch in name.chars() {
        if "\\^$.|?*+()[]{}/".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('$');
    out
}

/// `text` escaped for a URL fragment value as the page script reads it (`decodeURIComponent`).
fn fragment_escape(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The URL of page `n` of series `s`.
/// An event as a feed says it.
fn event_sentence(e: &crate::derive::changes::Event) -> String {
    let c = &e.lead;
    let others = match e.functions - 1 {
        0 => String::new(),
        1 => ", with 1 other function".to_string(),
        k => format!(", with {k} other functions"),
    };
    let unconfirmed = if c.confirmed { "" } else { " (not yet confirmed)" };
    if e.reshaped {
        format!(
            "The profile changed shape from this run on{unconfirmed}: {:.0}% of it moved; most, the share of {} went from {:.2}% to {:.2}%{others}.",
            100.0 * e.moved,
            c.function,
            100.0 * c.before,
            100.0 * c.after
        )
    } else {
        format!("Change point: the share of {} went from {:.2}% to {:.2}% from this run on{others}{unconfirmed}.", c.function, 100.0 * c.before, 100.0 * c.after)
    }
}

fn series_page_url(s: &Series, n: usize) -> String {
    if n == 1 { s.url.clone() } else { format!("{}page/{n}/", s.url) }
}

/// A run as the list templates see it.
#[derive(Serialize)]
struct RunLink {
    url: String,
    /// Its profile's slug (`api/2026-11-20`).
    slug: String,
    title: String,
    date: String,
    datetime: String,
    date_from: String,
    /// What is implausible about its date (before 2000), for a flag beside it.
    date_flag: Option<&'static str>,
    totals: Vec<String>,
    /// Whether the title says more than the date (a run named by its date does not).
    title_differs: bool,
    labels: BTreeMap<String, String>,
    /// A function that grew by more than the threshold since the previous run.
    regression: Option<serde_json::Value>,
    /// The first budget of site.toml its comparison with the run before exceeded.
    budget: Option<serde_json::Value>,
    /// Its comparison with the previous run.
    compare: Option<String>,
}

fn run_link(run: &Run) -> RunLink {
    let rec = &run.record;
    RunLink {
        url: run.url.clone(),
        slug: run.slug.clone(),
        title: rec.title.clone(),
        date: rec.date.display(),
        datetime: rec.date.rfc3339(),
        date_from: rec.date_from.clone(),
        date_flag: rec.date.implausible(),
        totals: totals(run),
        title_differs: rec.title != rec.date.day() && rec.title != rec.date.display(),
        labels: rec.labels.clone(),
        regression: None,
        budget: None,
        compare: None,
    }
}

/// One string per graph of `run`: its total, named when the graph's name is not its unit.
fn totals(run: &Run) -> Vec<String> {
    run.record
        .graphs
        .iter()
        .map(|g| {
            let v = format_scaled(g.total as i128, &g.unit, g.decimals);
            if g.name == g.unit { v } else { format!("{}: {v}", g.name) }
        })
        .collect()
}

/// The total a trend plots: that of the graph the run's page opens on (its first graph with
/// data, as the page script's `shownGraph`: a .NET profile's empty `lock-time` graph comes
/// before its `cpu`), its unit and its decimal places.
fn headline(run: &Run) -> (u64, &str, u32) {
    let graphs = &run.record.graphs;
    graphs
        .iter()
        .find(|g| g.total > 0)
        .or(graphs.first())
        .map_or((0, "", 0), |g| (g.total, g.unit.as_str(), g.decimals))
}

/// Graph `g`'s entry for a page's graph menu: its index.json entry, and `shown_total`, its
/// total in words ("5.65 s"), which the menu names beside it.
fn menu_entry(g: &crate::archive::run::GraphInfo) -> serde_json::Value {
    let mut entry = serde_json::to_value(GraphEntry::of(g, g.data.clone())).expect("an entry serialises");
    entry["shown_total"] = format_scaled(g.total as i128, &g.unit, g.decimals).into();
    entry
}

/// The headline totals of `runs` (of one unit) in the decimal places of the finest of them,
/// so that a run of fractional counts plots beside whole ones; and those places.
fn plotted(runs: &[&Run]) -> (Vec<u64>, u32) {
    let places = runs.iter().map(|r| headline(r).2).max().unwrap_or(0);
    let values = runs
        .iter()
        .map(|r| {
            let (total, _, own) = headline(r);
            total.saturating_mul(10u64.saturating_pow(places - own))
        })
        .collect();
    (values, places)
}

/// What the pages say of exceeded budgets: `{ graph, function, increase, limit, sentence }`.
fn budget_words(budgets: &[crate::archive::run::Exceeded]) -> Vec<serde_json::Value> {
    budgets
        .iter()
        .map(|b| {
            let (increase, limit) = (format!("{:+.2} pp", b.increase_pp), format!("{:.2} pp", b.max_increase_pp));
            json!({
                "graph": b.graph, "function": b.function, "increase": increase, "limit": limit,
                "sentence": format!("{}: the total share of /{}/ grew by {increase} since the previous run (budget {limit}).", b.graph, b.function),
            })
        })
        .collect()
}

/// `function`'s self share in each of the runs `positions` (sorted positions in its series),
/// from the history spans `held` that hold them; 0 where it is absent.
fn self_shares(held: &[std::sync::Arc<Span>], positions: &[usize], function: &str) -> Vec<f64> {
    let mut shares = vec![0.0; positions.len()];
    for span in held {
        let Ok(at) = span.names.binary_search_by(|n| n.as_str().cmp(function)) else { continue };
        for &(run, self_share, _) in &span.points[at] {
            if let Ok(w) = positions.binary_search(&(run as usize)) {
                shares[w] = self_share;
            }
        }
    }
    shares
}

/// The runs of comparison `ci`'s series whose shares say how much a function's share differs
/// from night to night (derive::changes::night_to_night) at its later run: its series, the
/// graph the series' history follows and the runs' places in the series (those with that
/// graph): the `m.noise_runs` before it, or, when fewer than `m.noise_min_runs` are before it
/// (the first nights of a series), those and the nearest after it, up to `noise_runs`; never
/// the later run itself. `None` when fewer than `noise_min_runs` have the graph. The build
/// counts the history spans these read (each is read once for all its readers).
pub fn noise_window<'a>(archive: &'a Archive, ci: usize, m: &crate::config::ChangesConfig) -> Option<(usize, &'a crate::archive::run::GraphInfo, Vec<usize>)> {
    let (noise_runs, noise_min_runs) = (m.noise_runs, m.noise_min_runs);
    let c = &archive.comparisons[ci];
    let si = archive.runs[c.after].series;
    let s = &archive.series[si];
    let k = s.runs.iter().position(|&i| i == c.after)?;
    let followed = history::followed_graph(&archive.runs[*s.runs.last()?])?;
    let has = |j: usize| archive.runs[s.runs[j]].record.graphs.iter().any(|g| g.name == followed.name && g.total > 0);
    let mut window: Vec<usize> = (k.saturating_sub(noise_runs)..k).filter(|&j| has(j)).collect();
    if window.len() < noise_min_runs {
        let room = noise_runs - window.len();
        window.extend((k + 1..s.runs.len()).filter(|&j| has(j)).take(room));
    }
    (window.len() >= noise_min_runs).then_some((si, followed, window))
}
