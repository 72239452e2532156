//! The pages of the archive, from the built runs: the home page (every series with its newest
//! run, run count and a sparkline), series pages (runs by date, newest first, paginated, with
//! a trend plot), run pages (the viewer, metadata, notes, previous and next run), compare
//! pages, Atom feeds and `index.json`.
//!
//! Every link is relative, so the site works under any sub-path; `base_url` appears only in
//! feeds and Open Graph tags. A page depends only on its own series: adding runs to one
//! series leaves the pages of every other series byte-identical. Charts are inline SVG drawn
//! here, so they need no script.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::json;
use tera::Context;

use crate::config::{Config, GroupBy};
use crate::site::feed;
use crate::site::theme::{escape_html, path_to_root, Theme};
use crate::build::{GraphEntry, Index, Run, SeriesEntry};
use crate::output::staging::Staging;

/// Runs shown in a home-page sparkline (the newest ones).
const SPARK_RUNS: usize = 30;

/// A series and its runs, oldest first.
struct Series<'a> {
    name: &'a str,
    url: &'a str,
    runs: Vec<&'a Run>,
}

/// Writes every page, the theme's static files, the feeds and `index.json`.
pub fn write(config: &Config, theme: &Theme, runs: &[Run], staging: &Staging) -> Result<(), String> {
    for (name, bytes) in &theme.statics {
        staging.write(&format!("static/{name}"), bytes)?;
    }
    let mut by_name: BTreeMap<&str, Series> = BTreeMap::new();
    for run in runs {
        by_name
            .entry(&run.entry.series)
            .or_insert_with(|| Series { name: &run.entry.series, url: &run.entry.series_url, runs: Vec::new() })
            .runs
            .push(run);
    }
    let mut series: Vec<Series> = by_name.into_values().collect();
    for s in &mut series {
        s.runs.sort_by(|a, b| (a.when, &a.entry.source).cmp(&(b.when, &b.entry.source)));
    }

    write_index_json(runs, &series, staging)?;
    write_home(config, theme, &series, staging)?;
    write_feed(config, None, &series.iter().flat_map(|s| s.runs.iter().copied()).collect::<Vec<_>>(), staging)?;
    series.par_iter().try_for_each(|s| {
        write_series(config, theme, s, staging)?;
        write_feed(config, Some(s), &s.runs, staging)?;
        s.runs.par_iter().enumerate().try_for_each(|(i, run)| {
            let prev = i.checked_sub(1).map(|j| s.runs[j]);
            let next = s.runs.get(i + 1).copied();
            write_run(config, theme, s, run, prev, next, staging)?;
            match prev {
                Some(prev) => write_compare(config, theme, s, run, prev, staging),
                None => Ok(()),
            }
        })
    })
}

fn write_index_json(runs: &[Run], series: &[Series], staging: &Staging) -> Result<(), String> {
    let index = Index {
        format: "flamesite-index".into(),
        version: 2,
        series: series
            .iter()
            .map(|s| SeriesEntry {
                name: s.name.to_string(),
                url: s.url.to_string(),
                feed: format!("{}feed.xml", s.url),
                runs: s.runs.len(),
                newest: s.runs.last().map(|r| r.entry.url.clone()).unwrap_or_default(),
            })
            .collect(),
        profiles: runs.iter().map(|r| r.entry.clone()).collect(),
    };
    let mut json = serde_json::to_vec_pretty(&index).map_err(|e| e.to_string())?;
    json.push(b'\n');
    staging.write("index.json", &json)
}

fn base_context(config: &Config, root: &str) -> Context {
    let mut ctx = Context::new();
    ctx.insert("site_title", &config.title);
    ctx.insert("base_url", &config.base_url);
    ctx.insert("root", root);
    ctx
}

/// A run as the list templates see it.
#[derive(Serialize)]
struct RunLink {
    url: String,
    title: String,
    date: String,
    datetime: String,
    date_from: String,
    totals: Vec<String>,
    /// Whether the title says more than the date (a run named by its date does not).
    title_differs: bool,
    labels: BTreeMap<String, String>,
}

fn run_link(run: &Run) -> RunLink {
    RunLink {
        url: run.entry.url.clone(),
        title: run.entry.title.clone(),
        date: run.when.display(),
        datetime: run.entry.date.clone(),
        date_from: run.entry.date_from.clone(),
        totals: totals(run),
        title_differs: run.entry.title != run.when.day() && run.entry.title != run.when.display(),
        labels: run.entry.labels.clone(),
    }
}

/// One string per graph of `run`: its total, named when the graph's name is not its unit.
fn totals(run: &Run) -> Vec<String> {
    run.entry
        .graphs
        .iter()
        .map(|g| if g.name == g.unit { human(g.total, &g.unit) } else { format!("{}: {}", g.name, human(g.total, &g.unit)) })
        .collect()
}

/// `api run of 2026-11-20 09:30 UTC: 20.4 k samples`, for link previews and feeds.
fn summary(run: &Run) -> String {
    let (total, unit) = headline(run);
    format!("{} run of {}: {}", run.entry.series, run.when.display(), human(total, unit))
}

/// The total a trend plots: that of the run's first (default) graph.
fn headline(run: &Run) -> (u64, &str) {
    run.entry.graphs.first().map_or((0, ""), |g| (g.total, g.unit.as_str()))
}

fn write_home(config: &Config, theme: &Theme, series: &[Series], staging: &Staging) -> Result<(), String> {
    let rows: Vec<_> = series
        .iter()
        .map(|s| {
            let newest = s.runs.last().expect("a series has runs");
            let (total, unit) = headline(newest);
            // Totals in another unit (a heap profile beside CPU profiles) are not comparable.
            let same: Vec<&&Run> = s.runs.iter().filter(|r| headline(r).1 == unit).collect();
            let values: Vec<u64> = same[same.len().saturating_sub(SPARK_RUNS)..].iter().map(|r| headline(r).0).collect();
            json!({
                "name": s.name, "url": s.url, "count": s.runs.len(), "feed": format!("{}feed.xml", s.url),
                "newest": run_link(newest), "newest_total": human(total, unit),
                "spark": sparkline(&values, &format!("{}: totals of the last {} runs", s.name, values.len())),
            })
        })
        .collect();
    let mut ctx = base_context(config, "");
    ctx.insert("series", &rows);
    ctx.insert("runs", &series.iter().map(|s| s.runs.len()).sum::<usize>());
    staging.write("index.html", theme.render("index.html", &ctx)?.as_bytes())
}

fn write_series(config: &Config, theme: &Theme, s: &Series, staging: &Staging) -> Result<(), String> {
    let per_page = config.archive.per_page as usize;
    let newest_first: Vec<&Run> = s.runs.iter().rev().copied().collect();
    let pages: Vec<&[&Run]> = newest_first.chunks(per_page).collect();
    let page_url = |n: usize| if n == 1 { s.url.to_string() } else { format!("{}page/{n}/", s.url) };
    pages.par_iter().enumerate().try_for_each(|(i, runs)| {
        let n = i + 1;
        let url = page_url(n);
        let root = path_to_root(url.matches('/').count());
        let mut groups: Vec<(String, Vec<RunLink>)> = Vec::new();
        for run in runs.iter() {
            let heading = match config.archive.group_by {
                GroupBy::Day => run.when.day(),
                GroupBy::Month => run.when.month(),
            };
            match groups.last_mut() {
                Some((h, list)) if *h == heading => list.push(run_link(run)),
                _ => groups.push((heading, vec![run_link(run)])),
            }
        }
        let groups: Vec<_> = groups.into_iter().map(|(heading, runs)| json!({ "heading": heading, "runs": runs })).collect();
        // The plot shows the runs in the unit of the page's newest run; others are not comparable.
        let unit = runs.first().map_or("", |r| headline(r).1);
        let chronological: Vec<&Run> = runs.iter().rev().copied().filter(|r| headline(r).1 == unit).collect();
        let mut ctx = base_context(config, &root);
        ctx.insert(
            "series",
            &json!({ "name": s.name, "url": s.url, "feed": format!("{}feed.xml", s.url), "count": s.runs.len() }),
        );
        ctx.insert("page", &n);
        ctx.insert("pages", &pages.len());
        ctx.insert("groups", &groups);
        ctx.insert("trend", &trend(&chronological, &root, s.name));
        ctx.insert("newer", &(n > 1).then(|| page_url(n - 1)));
        ctx.insert("older", &(n < pages.len()).then(|| page_url(n + 1)));
        staging.write(&format!("{url}index.html"), theme.render("series.html", &ctx)?.as_bytes())
    })
}

/// The absolute URL of `rel` (relative to the site root), when `base_url` is set.
fn absolute(config: &Config, rel: &str) -> Option<String> {
    if config.base_url.is_empty() {
        return None;
    }
    let base = config.base_url.trim_end_matches('/');
    Some(format!("{base}/{rel}"))
}

fn write_run(
    config: &Config,
    theme: &Theme,
    s: &Series,
    run: &Run,
    prev: Option<&Run>,
    next: Option<&Run>,
    staging: &Staging,
) -> Result<(), String> {
    let p = &run.entry;
    let root = path_to_root(p.url.matches('/').count());
    let graphs: Vec<GraphEntry> = p
        .graphs
        .iter()
        .map(|g| GraphEntry { data: g.data.strip_prefix(&p.url).unwrap_or(&g.data).to_string(), ..g.clone() })
        .collect();
    let mut ctx = base_context(config, &root);
    ctx.insert(
        "profile",
        &json!({
            "slug": p.slug, "url": p.url, "source": p.source, "format": p.format,
            "title": p.title, "series": s.name, "series_url": s.url, "series_count": s.runs.len(),
            "date": run.when.display(), "datetime": p.date, "date_from": p.date_from,
            "labels": p.labels, "metadata": p.metadata, "graphs": graphs, "notes": run.notes,
            "preload": run.preload,
            "totals": totals(run),
            "prev": prev.map(run_link), "next": next.map(run_link),
            "compare": prev.map(|_| format!("{}compare/", p.url)),
        }),
    );
    let description = summary(run);
    ctx.insert(
        "og",
        &json!({
            "title": format!("{} · {}", p.title, s.name),
            "description": description,
            "url": absolute(config, &p.url),
            "image": p.preview.as_deref().and_then(|i| absolute(config, i)),
            "image_width": crate::site::preview::WIDTH, "image_height": crate::site::preview::HEIGHT,
        }),
    );
    staging.write(&format!("{}index.html", p.url), theme.render("profile.html", &ctx)?.as_bytes())
}

fn write_compare(config: &Config, theme: &Theme, s: &Series, run: &Run, prev: &Run, staging: &Staging) -> Result<(), String> {
    let url = format!("{}compare/", run.entry.url);
    let root = path_to_root(url.matches('/').count());
    let rows: Vec<_> = run
        .entry
        .graphs
        .iter()
        .map(|g| {
            let before = prev.entry.graphs.iter().find(|b| b.name == g.name && b.unit == g.unit);
            let (delta, pct) = match before {
                Some(b) => {
                    let d = g.total as f64 - b.total as f64;
                    let sign = if d > 0.0 { "+" } else if d < 0.0 { "−" } else { "±" };
                    let pct = if b.total > 0 { format!("{sign}{:.1}%", (d.abs() / b.total as f64) * 100.0) } else { "n/a".into() };
                    (format!("{sign}{}", human(d.abs() as u64, &g.unit)), pct)
                }
                None => ("n/a".into(), "n/a".into()),
            };
            json!({
                "name": g.name, "unit": g.unit,
                "before": before.map(|b| human(b.total, &b.unit)), "after": human(g.total, &g.unit),
                "delta": delta, "pct": pct,
                "grew": before.is_some_and(|b| g.total > b.total), "shrank": before.is_some_and(|b| g.total < b.total),
            })
        })
        .collect();
    let mut ctx = base_context(config, &root);
    ctx.insert("series", &json!({ "name": s.name, "url": s.url }));
    ctx.insert("run", &run_link(run));
    ctx.insert("prev", &run_link(prev));
    ctx.insert("rows", &rows);
    staging.write(&format!("{url}index.html"), theme.render("compare.html", &ctx)?.as_bytes())
}

fn write_feed(config: &Config, series: Option<&Series>, runs: &[&Run], staging: &Staging) -> Result<(), String> {
    let (path, title, id, alternate) = match series {
        Some(s) => (
            format!("{}feed.xml", s.url),
            format!("{} · {}", s.name, config.title),
            format!("urn:flamesite:series:{}", s.url.trim_start_matches("s/").trim_end_matches('/')),
            s.url.to_string(),
        ),
        None => ("feed.xml".to_string(), config.title.clone(), "urn:flamesite:site".to_string(), String::new()),
    };
    let mut newest: Vec<&Run> = runs.to_vec();
    newest.sort_by(|a, b| (b.when, &a.entry.source).cmp(&(a.when, &b.entry.source)));
    newest.truncate(config.archive.feed_entries as usize);
    // Links are absolute with base_url, else relative to the feed itself.
    let up = path_to_root(path.matches('/').count());
    let href = |rel: &str| absolute(config, rel).unwrap_or_else(|| format!("{up}{rel}"));
    let entries = newest
        .iter()
        .map(|run| {
            let p = &run.entry;
            feed::Entry {
                id: format!("urn:flamesite:run:{}", p.slug),
                title: format!("{} · {}", p.series, p.title),
                updated: p.date.clone(),
                href: href(&p.url),
                summary: summary(run),
                content_html: run.notes.clone(),
                categories: vec![p.series.clone()],
            }
        })
        .collect::<Vec<_>>();
    let feed = feed::Feed {
        title,
        id,
        updated: newest.first().map_or_else(|| "1970-01-01T00:00:00Z".to_string(), |r| r.entry.date.clone()),
        self_href: href(&path),
        alternate_href: if alternate.is_empty() {
            absolute(config, "").unwrap_or_else(|| "./".to_string())
        } else {
            href(&alternate)
        },
        author: config.title.clone(),
        entries,
    };
    staging.write(&path, feed::atom(&feed).as_bytes())
}

/// `1.23 M samples`, `4.56 s`, `7.8 MiB`: a value in its unit, short.
pub fn human(v: u64, unit: &str) -> String {
    let f = v as f64;
    match unit {
        "nanoseconds" | "ns" => duration(f / 1e9),
        "microseconds" | "us" | "µs" => duration(f / 1e6),
        "milliseconds" | "ms" => duration(f / 1e3),
        "seconds" | "s" => duration(f),
        "bytes" | "B" => {
            let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
            let mut x = f;
            let mut i = 0;
            while x >= 1024.0 && i < units.len() - 1 {
                x /= 1024.0;
                i += 1;
            }
            if i == 0 { format!("{v} B") } else { format!("{} {}", short(x), units[i]) }
        }
        _ => {
            let suffixes = ["", " k", " M", " G", " T", " P"];
            let mut x = f;
            let mut i = 0;
            while x >= 1000.0 && i < suffixes.len() - 1 {
                x /= 1000.0;
                i += 1;
            }
            let n = if i == 0 { v.to_string() } else { format!("{}{}", short(x), suffixes[i]) };
            if unit.is_empty() { n } else { format!("{n} {unit}") }
        }
    }
}

fn duration(secs: f64) -> String {
    if secs >= 3600.0 {
        format!("{} h", short(secs / 3600.0))
    } else if secs >= 60.0 {
        format!("{} min", short(secs / 60.0))
    } else if secs >= 1.0 {
        format!("{} s", short(secs))
    } else if secs >= 1e-3 {
        format!("{} ms", short(secs * 1e3))
    } else if secs >= 1e-6 {
        format!("{} µs", short(secs * 1e6))
    } else {
        format!("{} ns", short(secs * 1e9))
    }
}

/// Three significant digits.
fn short(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// An inline SVG sparkline of `values` (oldest first), from zero to their maximum.
fn sparkline(values: &[u64], label: &str) -> String {
    let (w, h, pad) = (120.0, 28.0, 3.0);
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let step = if values.len() > 1 { (w - 2.0 * pad) / (values.len() - 1) as f64 } else { 0.0 };
    let point = |i: usize, v: u64| (pad + step * i as f64, h - pad - (v as f64 / max) * (h - 2.0 * pad));
    let mut pts = String::new();
    for (i, &v) in values.iter().enumerate() {
        let (x, y) = point(i, v);
        let _ = write!(pts, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
    }
    let (lx, ly) = values.last().map_or((pad, h - pad), |&v| point(values.len() - 1, v));
    format!(
        r#"<svg class="fs-spark" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{}"><polyline points="{pts}"/><circle cx="{lx:.1}" cy="{ly:.1}" r="2.5"/></svg>"#,
        escape_html(label)
    )
}

/// The trend plot of a series page: the totals of `runs` (oldest first), each point a link
/// to its run.
fn trend(runs: &[&Run], root: &str, series: &str) -> String {
    let (w, h) = (720.0, 180.0);
    let (left, right, top, bottom) = (28.0, 12.0, 12.0, 28.0);
    let values: Vec<u64> = runs.iter().map(|r| headline(r).0).collect();
    let unit = runs.first().map_or("", |r| headline(r).1);
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let (pw, ph) = (w - left - right, h - top - bottom);
    let step = if runs.len() > 1 { pw / (runs.len() - 1) as f64 } else { 0.0 };
    let point = |i: usize| {
        let x = if runs.len() > 1 { left + step * i as f64 } else { left + pw / 2.0 };
        (x, top + ph - (values[i] as f64 / max) * ph)
    };
    let mut svg = format!(
        r#"<svg class="fs-trend" viewBox="0 0 {w} {h}" role="img" aria-label="{}">"#,
        escape_html(&format!("Totals of the {} runs of {series} on this page, oldest on the left", runs.len()))
    );
    let _ = write!(
        svg,
        r#"<line class="fs-axis" x1="{left}" y1="{y0}" x2="{x1}" y2="{y0}"/><line class="fs-axis" x1="{left}" y1="{top}" x2="{left}" y2="{y0}"/>"#,
        y0 = top + ph,
        x1 = w - right
    );
    let _ = write!(
        svg,
        r#"<text class="fs-axis-label" x="{x}" y="{y}">{}</text><text class="fs-axis-label" x="{x0}" y="{y0}" text-anchor="end">0</text>"#,
        escape_html(&human(max as u64, unit)),
        x = left + 6.0,
        y = top + 10.0,
        x0 = left - 6.0,
        y0 = top + ph
    );
    if let (Some(first), Some(last)) = (runs.first(), runs.last()) {
        let _ = write!(
            svg,
            r#"<text class="fs-axis-label" x="{left}" y="{y}">{}</text><text class="fs-axis-label" x="{x}" y="{y}" text-anchor="end">{}</text>"#,
            escape_html(&first.when.day()),
            escape_html(&last.when.day()),
            y = h - 8.0,
            x = w - right
        );
    }
    if runs.len() > 1 {
        svg.push_str(r#"<polyline class="fs-line" points=""#);
        for i in 0..runs.len() {
            let (x, y) = point(i);
            let _ = write!(svg, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
        }
        svg.push_str(r#""/>"#);
    }
    for (i, run) in runs.iter().enumerate() {
        let (x, y) = point(i);
        let (total, unit) = headline(run);
        let _ = write!(
            svg,
            r#"<a href="{}"><circle cx="{x:.1}" cy="{y:.1}" r="4"><title>{}</title></circle></a>"#,
            escape_html(&format!("{root}{}", run.entry.url)),
            escape_html(&format!("{} · {} · {}", run.when.display(), run.entry.title, human(total, unit)))
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_values() {
        assert_eq!(human(950, "samples"), "950 samples");
        assert_eq!(human(1_234_567, "samples"), "1.23 M samples");
        assert_eq!(human(2_500_000_000, "nanoseconds"), "2.50 s");
        assert_eq!(human(1536, "bytes"), "1.50 KiB");
        assert_eq!(human(12, ""), "12");
    }

    #[test]
    fn sparkline_escapes_and_scales() {
        let s = sparkline(&[0, 5, 10], "<b>\"x\"");
        assert!(s.contains("&lt;b&gt;&quot;x&quot;"), "{s}");
        assert!(s.contains("points=\"3.0,25.0 60.0,14.0 117.0,3.0\""), "{s}");
    }
}
