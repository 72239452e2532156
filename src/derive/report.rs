//! `flamesite diff`'s report: for each graph two profiles share, the functions whose share of
//! the total changed most (self, and total with a function's frames counted once, as a search
//! counts them), whether each change stands out from sampling noise, and the budgets a change
//! exceeds. Printed as text, Markdown (a pull request's comment) or JSON; a CI job reads the
//! exit status (README, "Comparing two profiles in CI").

use std::fmt::Write as _;

use serde::Serialize;

use crate::config::Budget;
use crate::graph::diff::{self, Change};
use crate::graph::frames::FrameTable;
use crate::units;

/// How far, in standard errors, a change of share must be from 0 to stand out from sampling
/// noise: a change this large arises from sampling alone less than once in 1,000 (two-sided).
pub const STANDS_OUT_Z: f64 = 3.29;

/// How a report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines for a terminal or a CI log.
    Text,
    /// GitHub-flavoured Markdown tables, for a pull request's comment.
    Markdown,
    /// One JSON object (docs/FORMAT.md, "flamesite diff --format json").
    Json,
}

/// One function of a graph's report.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The function.
    pub function: String,
    /// Self value before.
    pub self_before: u64,
    /// Self value after.
    pub self_after: u64,
    /// Total value before, its frames under a frame of the same name counted once.
    pub total_before: u64,
    /// Total value after, counted alike.
    pub total_after: u64,
    /// Self share of the earlier profile's total (a fraction of 1).
    pub self_share_before: f64,
    /// Self share of the later profile's total.
    pub self_share_after: f64,
    /// Total share of the earlier profile's total.
    pub total_share_before: f64,
    /// Total share of the later profile's total.
    pub total_share_after: f64,
    /// Whether the change of the self share stands out from sampling noise, at the level of
    /// the graph's functions together ([`run_z`]); `None` when the
    /// number of samples the graph's values rest on is not known (its unit does not count
    /// events, and no graph of the same samples counts them).
    pub self_stands_out: Option<bool>,
    /// The same of the total share.
    pub total_stands_out: Option<bool>,
}

/// One graph's report.
#[derive(Clone, Debug, Serialize)]
pub struct GraphReport {
    /// The graph (sample type).
    pub graph: String,
    /// Its unit.
    pub unit: String,
    /// Decimal places of its values.
    #[serde(skip)]
    pub decimals: u32,
    /// The earlier profile's total.
    pub total_before: u64,
    /// The later profile's total.
    pub total_after: u64,
    /// Whether changes are judged against sampling noise (the number of samples of both
    /// profiles is known: the unit counts events, or a graph of the same samples counts them).
    pub noise_judged: bool,
    /// The samples of the earlier and the later profile that the values rest on, when known.
    pub samples_before: Option<u64>,
    /// The later profile's.
    pub samples_after: Option<u64>,
    /// The functions whose self share changed most, largest change first.
    pub self_changes: Vec<Row>,
    /// The functions whose total share changed most, largest change first.
    pub total_changes: Vec<Row>,
}

/// One budget checked against one graph.
#[derive(Clone, Debug, Serialize)]
pub struct BudgetResult {
    /// Where the budget comes from: `--max-increase` or `site.toml`.
    pub source: String,
    /// The graph checked.
    pub graph: String,
    /// The functions it covers: a regular expression, or `any function` (`--max-increase`,
    /// each function's self share alone).
    pub function: String,
    /// What is measured: `self share` of the function that grew most, or `total share` of the
    /// matched functions together (their frames counted once).
    pub measure: String,
    /// The function that grew most (`--max-increase`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<String>,
    /// Allowed growth, in percentage points.
    pub max_increase_pp: f64,
    /// Growth, in percentage points.
    pub increase_pp: f64,
    /// Whether the growth is more than allowed, and stands out from sampling noise (a growth
    /// that sampling alone makes often exceeds nothing).
    pub exceeded: bool,
    /// Whether the growth stands out from sampling noise; `None` when it cannot be judged.
    pub stands_out: Option<bool>,
    /// `--max-increase`: a larger growth than `increase_pp` that is within sampling noise,
    /// and so not counted, when there is one: (function, growth in points).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_noise: Option<(String, f64)>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `flamesite-diff`, for readers of the JSON.
    pub format: &'static str,
    /// The earlier profile, as given.
    pub before: String,
    /// The later profile, as given.
    pub after: String,
    /// Each graph compared.
    pub graphs: Vec<GraphReport>,
    /// Each budget checked, per graph.
    pub budgets: Vec<BudgetResult>,
    /// Whether any budget is exceeded (the exit status is then 1).
    pub exceeded: bool,
}

fn share(v: u64, total: u64) -> f64 {
    if total == 0 { 0.0 } else { v as f64 / total as f64 }
}

/// The change from `x1` of `n1` to `x2` of `n2` in standard errors of sampling noise (a test of
/// two proportions with their pooled share); 0 when there is nothing to judge.
pub fn z_score(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 0.0;
    }
    let (p1, p2) = (share(x1, n1), share(x2, n2));
    let pooled = (x1 as f64 + x2 as f64) / (n1 as f64 + n2 as f64);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
    if se == 0.0 { 0.0 } else { (p2 - p1) / se }
}

/// Whether a change of a share from `p1` of a profile of `n1` samples to `p2` of one of `n2`
/// stands out from sampling noise: a test of two proportions with their pooled share, at
/// [`STANDS_OUT_Z`]. `None` when either number of samples is not known (or is 0).
pub fn shares_stand_out(p1: f64, n1: Option<u64>, p2: f64, n2: Option<u64>) -> Option<bool> {
    shares_stand_out_at(STANDS_OUT_Z, p1, n1, p2, n2)
}

/// [`shares_stand_out`] at `z` standard errors.
fn shares_stand_out_at(z: f64, p1: f64, n1: Option<u64>, p2: f64, n2: Option<u64>) -> Option<bool> {
    let (n1, n2) = (n1.filter(|&n| n > 0)? as f64, n2.filter(|&n| n > 0)? as f64);
    let pooled = (p1 * n1 + p2 * n2) / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    Some(if se == 0.0 { p1 != p2 } else { ((p2 - p1) / se).abs() >= z })
}

/// Whether a change from `before` of `total_before` to `after` of `total_after` stands out
/// from sampling noise, the two profiles resting on `samples` (before, after) samples.
pub fn stands_out(samples: (Option<u64>, Option<u64>), before: u64, total_before: u64, after: u64, total_after: u64) -> Option<bool> {
    shares_stand_out(share(before, total_before), samples.0, share(after, total_after), samples.1)
}

/// [`stands_out`] at `z` standard errors rather than [`STANDS_OUT_Z`].
pub fn stands_out_at(z: f64, samples: (Option<u64>, Option<u64>), before: u64, total_before: u64, after: u64, total_after: u64) -> Option<bool> {
    shares_stand_out_at(z, share(before, total_before), samples.0, share(after, total_after), samples.1)
}

/// How far, in standard errors, the largest of `functions` changes of one comparison must be
/// from 0 for sampling alone to make any of them as large in fewer than 1 of 1,000
/// comparisons (two-sided; Bonferroni's bound over the functions): [`STANDS_OUT_Z`] for one
/// function, about 4.2 for 30, 4.9 for 1,000. 0 functions (not known): as for one.
pub fn run_z(functions: usize) -> f64 {
    let p = 0.001 / functions.max(1) as f64;
    // The z whose two tails hold p, by bisection over the normal distribution's tail.
    let (mut lo, mut hi) = (0.0f64, 12.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if 2.0 * normal_tail(mid) > p { lo = mid } else { hi = mid }
    }
    hi
}

/// P(Z > z) of a standard normal Z, for z ≥ 0: erfc(z/√2)/2, erfc by the rational
/// approximation of Abramowitz and Stegun (7.1.26), within 1.5e-7 (at most a few
/// hundredths of a standard error in `run_z`).
fn normal_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
}

/// `c`'s row, its changes judged at `z` standard errors (the graph's [`run_z`]).
fn row(c: &Change, z: f64, samples: (Option<u64>, Option<u64>), tb: u64, ta: u64) -> Row {
    let judged = |x1, x2| stands_out_at(z, samples, x1, tb, x2, ta);
    Row {
        function: c.name.clone(),
        self_before: c.self_before,
        self_after: c.self_after,
        total_before: c.total_before,
        total_after: c.total_after,
        self_share_before: share(c.self_before, tb),
        self_share_after: share(c.self_after, ta),
        total_share_before: share(c.total_before, tb),
        total_share_after: share(c.total_after, ta),
        self_stands_out: judged(c.self_before, c.self_after),
        total_stands_out: judged(c.total_before, c.total_after),
    }
}

impl Row {
    /// Share before, share after, change in points and whether it stands out, of the self
    /// share (`total` false) or of the total share.
    fn measure(&self, total: bool) -> (f64, f64, f64, Option<bool>) {
        match total {
            false => (self.self_share_before, self.self_share_after, self.self_pp(), self.self_stands_out),
            true => (self.total_share_before, self.total_share_after, self.total_pp(), self.total_stands_out),
        }
    }

    /// Change of the self share, in percentage points.
    pub fn self_pp(&self) -> f64 {
        100.0 * (self.self_share_after - self.self_share_before)
    }
    /// Change of the total share, in percentage points.
    pub fn total_pp(&self) -> f64 {
        100.0 * (self.total_share_after - self.total_share_before)
    }
}

/// The totals before and after of the frames whose name `matches`, a frame under a matched
/// one not counted again (as a search counts them).
fn matched_totals(t: &FrameTable, matches: &[bool]) -> (u64, u64) {
    let (Some(b), (at, _)) = (&t.before, t.values()) else { return (0, 0) };
    let (mut before, mut after) = (0u64, 0u64);
    // Depth of the matched frame the walk is under, if any.
    let mut under: Option<u32> = None;
    for r in 0..t.len() {
        let d = t.depth[r];
        if under.is_some_and(|u| d <= u) {
            under = None;
        }
        if under.is_none() && r > 0 && matches[t.name[r] as usize] {
            before += b.total[r];
            after += at[r];
            under = Some(d);
        }
    }
    (before, after)
}

/// The report of one graph: the `top` functions whose self share, and whose total share,
/// changed most. `table` is the comparison's differential table; `samples` the samples its
/// two profiles' values rest on, when known.
pub fn graph_report(graph: &str, unit: &str, table: &FrameTable, top: usize, samples: (Option<u64>, Option<u64>)) -> GraphReport {
    let (tb, ta) = (table.before.as_ref().map_or(0, |b| b.total[0]), table.values().0[0]);
    let changes = diff::changes(table);
    // Judged as the run is: the largest of N changes stands out only where sampling alone
    // rarely makes any of N as large (the rule of the series page's marks and the feeds).
    let z = run_z(changes.len());
    let rows: Vec<Row> = changes.iter().map(|c| row(c, z, samples, tb, ta)).collect();
    let ranked = |key: fn(&Row) -> f64| {
        let mut list: Vec<&Row> = rows.iter().filter(|r| key(r) != 0.0).collect();
        // Largest change first, either way; ties by name, so every machine prints the same.
        list.sort_by(|a, b| key(b).abs().total_cmp(&key(a).abs()).then_with(|| a.function.cmp(&b.function)));
        list.into_iter().take(top).cloned().collect()
    };
    GraphReport {
        graph: graph.into(),
        unit: unit.into(),
        decimals: table.decimals,
        total_before: tb,
        total_after: ta,
        noise_judged: samples.0.is_some() && samples.1.is_some(),
        samples_before: samples.0,
        samples_after: samples.1,
        self_changes: ranked(Row::self_pp),
        total_changes: ranked(Row::total_pp),
    }
}

/// Checks `budgets` against a graph: `max_increase` (points) against every function's self
/// share, and each of site.toml's against the total share of the functions it matches. A
/// budget is exceeded only by a growth that stands out from sampling noise, when the
/// `samples` of the two profiles say what noise is (a gate that fails on noise fails unchanged
/// code): `--max-increase` counts the largest growth among those that stand out at the
/// graph's [`run_z`], since it looks at every function for the one that grew most (as the
/// series page's regression marks do); a site.toml budget names its functions beforehand, one
/// question asked once, so its growth stands out at [`STANDS_OUT_Z`]. A graph that
/// `repeats` the samples of one checked before it ([`first_of_their_samples`]) is checked only
/// by the budgets that name it.
pub fn check_budgets(graph: &str, table: &FrameTable, max_increase: Option<f64>, budgets: &[Budget], samples: (Option<u64>, Option<u64>), repeats: bool) -> Vec<BudgetResult> {
    let (tb, ta) = (table.before.as_ref().map_or(0, |b| b.total[0]), table.values().0[0]);
    let mut out = Vec::new();
    if let Some(limit) = max_increase.filter(|_| !repeats) {
        let changes = diff::changes(table);
        let z = run_z(changes.len());
        let mut grown: Vec<(f64, String, Option<bool>)> =
            changes.into_iter().map(|c| (c.self_points(tb, ta), stands_out_at(z, samples, c.self_before, tb, c.self_after, ta), c.name)).map(|(p, judged, name)| (p, name, judged)).collect();
        // Largest growth first; ties by name, so every machine prints the same.
        grown.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let counted = grown.iter().find(|g| g.2 != Some(false));
        let within_noise = grown.first().filter(|g| g.2 == Some(false) && counted.is_none_or(|c| g.0 > c.0)).map(|g| (g.1.clone(), g.0));
        let (increase, name, judged) = counted.map_or((0.0, None, None), |g| (g.0, Some(g.1.clone()), g.2));
        out.push(BudgetResult {
            source: "--max-increase".into(),
            graph: graph.into(),
            function: "any function".into(),
            measure: "self share".into(),
            worst: name,
            max_increase_pp: limit,
            increase_pp: increase,
            exceeded: increase > limit,
            stands_out: judged,
            within_noise,
        });
    }
    for b in budgets.iter().filter(|b| match b.graph.as_deref() {
        Some(g) => g == graph,
        None => !repeats,
    }) {
        let matches: Vec<bool> = table.names.iter().map(|n| b.function.is_match(n)).collect();
        let (before, after) = matched_totals(table, &matches);
        let increase = diff::points(before, tb, after, ta);
        let judged = stands_out(samples, before, tb, after, ta);
        out.push(BudgetResult {
            source: "site.toml".into(),
            graph: graph.into(),
            function: b.function.as_str().into(),
            measure: "total share".into(),
            worst: None,
            max_increase_pp: b.max_increase,
            increase_pp: increase,
            exceeded: increase > b.max_increase && judged != Some(false),
            stands_out: judged,
            within_noise: None,
        });
    }
    out
}

/// For each of a profile's graphs, given the graph that counts its samples (`drawn_by`, where
/// known), whether it is the first of those samples: graphs of the same samples (a Go CPU
/// profile's `cpu` and `samples`) show one change twice, so budgets that name no graph check
/// the first of them only.
pub fn first_of_their_samples(drawn_by: &[Option<&str>]) -> Vec<bool> {
    drawn_by.iter().enumerate().map(|(i, d)| d.is_none() || !drawn_by[..i].contains(d)).collect()
}

fn percent(share: f64) -> String {
    format!("{:.2}%", 100.0 * share)
}

fn points(pp: f64) -> String {
    format!("{pp:+.2} pp")
}

fn mark(stands_out: Option<bool>) -> &'static str {
    match stands_out {
        Some(true) => "stands out",
        Some(false) => "within noise",
        None => "",
    }
}

/// Function names are untrusted: in Markdown every character that could start markup is
/// escaped (the table's `|` too), and `<` and `&` are written as entities, so no name renders
/// as a link, an image or HTML.
pub fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Control characters of a name shown as `\u{…}` in a terminal, so a name cannot move the
/// cursor or recolour the log.
fn plain_text(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

impl Report {
    /// The report as `format` prints it.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self).expect("a report serialises") + "\n",
            Format::Text => self.text(),
            Format::Markdown => self.markdown(),
        }
    }

    fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "flamesite diff: {} -> {}", plain_text(&self.before), plain_text(&self.after));
        for g in &self.graphs {
            let value = |v: u64| units::format_scaled(v as i128, &g.unit, g.decimals);
            let _ = writeln!(o, "\ngraph {} ({}): {} in the first, {} in the second", plain_text(&g.graph), plain_text(&g.unit), value(g.total_before), value(g.total_after));
            if !g.noise_judged {
                let _ = writeln!(o, "  (sampling noise not judged: {} is not a count of samples, and no graph of the same samples counts them)", plain_text(&g.unit));
            }
            for (what, rows, total) in [("self share", &g.self_changes, false), ("total share", &g.total_changes, true)] {
                let _ = writeln!(o, "  {what}: first -> second, change");
                if rows.is_empty() {
                    let _ = writeln!(o, "    no function changed");
                }
                for r in rows {
                    let (b, a, pp, s) = r.measure(total);
                    let _ = writeln!(o, "    {:>7} -> {:>7}  {:>10}  {:<12}  {}", percent(b), percent(a), points(pp), mark(s), plain_text(&r.function));
                }
            }
        }
        if !self.budgets.is_empty() {
            let _ = writeln!(o, "\nbudgets:");
            for b in &self.budgets {
                let _ = writeln!(o, "  {}", budget_line(b, plain_text));
            }
        }
        o
    }

    fn markdown(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "### flamesite diff: {} → {}\n", markdown_text(&self.before), markdown_text(&self.after));
        if !self.budgets.is_empty() {
            let exceeded = self.budgets.iter().filter(|b| b.exceeded).count();
            let _ = writeln!(o, "**Budgets: {}**\n", if exceeded == 0 { "all within".to_string() } else { format!("{exceeded} exceeded") });
            for b in &self.budgets {
                let _ = writeln!(o, "- {}", budget_line(b, markdown_text));
            }
            o.push('\n');
        }
        for g in &self.graphs {
            let value = |v: u64| units::format_scaled(v as i128, &g.unit, g.decimals);
            let _ = writeln!(o, "#### {} ({}): {} in the first, {} in the second\n", markdown_text(&g.graph), markdown_text(&g.unit), value(g.total_before), value(g.total_after));
            if !g.noise_judged {
                let _ = writeln!(o, "Sampling noise not judged: {} is not a count of samples, and no graph of the same samples counts them.\n", markdown_text(&g.unit));
            }
            for (what, rows, total) in [("Self share", &g.self_changes, false), ("Total share", &g.total_changes, true)] {
                if rows.is_empty() {
                    let _ = writeln!(o, "{what}: no function changed.\n");
                    continue;
                }
                let _ = writeln!(o, "| Function | {what}, first | second | Change | Noise |\n|---|---:|---:|---:|---|");
                for r in rows {
                    let (b, a, pp, s) = r.measure(total);
                    let _ = writeln!(o, "| {} | {} | {} | {} | {} |", markdown_text(&r.function), percent(b), percent(a), points(pp), mark(s));
                }
                o.push('\n');
            }
        }
        o
    }
}

fn budget_line(b: &BudgetResult, text: fn(&str) -> String) -> String {
    let verdict = if b.exceeded {
        "EXCEEDED"
    } else if b.increase_pp > b.max_increase_pp && b.stands_out == Some(false) {
        "within (the growth is within sampling noise)"
    } else {
        "within"
    };
    let whose = match &b.worst {
        Some(w) => format!("{} (grew most: {})", text(&b.function), text(w)),
        None => text(&b.function),
    };
    format!(
        "{verdict}: graph {}, {} of {whose}: {} (limit {}, from {})",
        text(&b.graph),
        b.measure,
        points(b.increase_pp),
        points(b.max_increase_pp),
        text(&b.source)
    ) + &match &b.within_noise {
        Some((f, pp)) => format!("; {} grew {} but within sampling noise", text(f), points(*pp)),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_of_many_changes_must_stand_out_further() {
        // One function: the per-function level (two tails of 0.001).
        assert!((run_z(1) - STANDS_OUT_Z).abs() < 0.02, "{}", run_z(1));
        assert!((run_z(0) - STANDS_OUT_Z).abs() < 0.02);
        // 30 functions: two tails of 0.001 / 30 = 3.3e-5, z about 4.15; 1,000: about 4.89.
        assert!((run_z(30) - 4.15).abs() < 0.03, "{}", run_z(30));
        assert!((run_z(1000) - 4.89).abs() < 0.03, "{}", run_z(1000));
        // 27 of ~1,300 samples against 53 of ~1,300 (3.3 standard errors): one function's
        // change, not the largest of 30 in a run.
        let samples = (Some(1397), Some(1290));
        assert_eq!(stands_out_at(STANDS_OUT_Z, samples, 27, 1397, 53, 1290), Some(true));
        assert_eq!(stands_out_at(run_z(30), samples, 27, 1397, 53, 1290), Some(false));
    }

    #[test]
    fn a_change_stands_out_when_sampling_alone_would_rarely_make_it() {
        // 10% of 10,000 samples against 13% of 10,000: about 6.7 standard errors.
        assert!(z_score(1_000, 10_000, 1_300, 10_000) > STANDS_OUT_Z);
        // 10% of 100 against 13% of 100: well within noise.
        assert!(z_score(10, 100, 13, 100).abs() < STANDS_OUT_Z);
        assert!(z_score(1_300, 10_000, 1_000, 10_000) < -STANDS_OUT_Z);
        assert_eq!(z_score(0, 0, 5, 10), 0.0);
    }

    #[test]
    fn shares_of_weighted_samples_are_judged_by_the_samples_they_rest_on() {
        // 30% against 34% of 300 samples each: sampling makes that often.
        assert_eq!(shares_stand_out(0.30, Some(300), 0.34, Some(300)), Some(false));
        // The same of 30,000 samples: not by chance.
        assert_eq!(shares_stand_out(0.30, Some(30_000), 0.34, Some(30_000)), Some(true));
        // Nothing to judge by.
        assert_eq!(shares_stand_out(0.30, None, 0.34, Some(300)), None);
        assert_eq!(shares_stand_out(0.30, Some(0), 0.34, Some(300)), None);
        // A share that cannot vary (0 of both) changed only if it moved.
        assert_eq!(shares_stand_out(0.0, Some(100), 0.0, Some(100)), Some(false));
    }

    #[test]
    fn a_budget_is_exceeded_only_by_a_growth_that_stands_out_from_sampling_noise() {
        use crate::graph::frames::{FrameTable, StackMerger};
        let table = |a: u64, b: u64, c: u64| {
            let mut m = StackMerger::new(false, 1000);
            for (s, v) in [("main;a", a), ("main;b", b), ("main;c", c)] {
                m.add(s.as_bytes(), v, 0).unwrap();
            }
            m.finish().unwrap()
        };
        // 300 samples a profile: a grows 30% → 34% (noise), b 10% → 25%.
        let before = table(90, 30, 180);
        let diff = crate::graph::diff::merge(&before, &table(102, 75, 123)).unwrap();
        let samples = (Some(300), Some(300));
        let quiet = crate::graph::diff::merge(&before, &table(102, 30, 168)).unwrap();
        let gate = |t: &FrameTable, s| check_budgets("cpu", t, Some(2.0), &[], s, false).remove(0);
        // b's 15 points stand out: exceeded, and b is the one named.
        let r = gate(&diff, samples);
        assert!(r.exceeded && r.worst.as_deref() == Some("b") && r.stands_out == Some(true), "{r:?}");
        // Only a's 4 points: within sampling noise, not exceeded, and said so.
        let r = gate(&quiet, samples);
        assert!(!r.exceeded && r.within_noise.as_ref().is_some_and(|w| w.0 == "a"), "{r:?}");
        assert!(budget_line(&r, plain_text).contains("a grew +4.00 pp but within sampling noise"), "{}", budget_line(&r, plain_text));
        // Without the samples' number nothing is judged: the old gate.
        let r = gate(&quiet, (None, None));
        assert!(r.exceeded && r.stands_out.is_none(), "{r:?}");
    }

    #[test]
    fn the_report_and_the_any_function_gate_judge_a_graph_of_many_functions_as_a_run() {
        use crate::graph::frames::StackMerger;
        // 31 functions; f00 grows 27 of 1,397 → 53 of 1,290 samples (3.3 standard errors): a
        // level one function's test passes, the largest of 31 often reaches by chance.
        let table = |first: u64, others: u64| {
            let mut m = StackMerger::new(false, 1000);
            m.add(b"main;f00", first, 0).unwrap();
            for k in 1..31 {
                let v = others / 30 + u64::from(k <= others % 30);
                m.add(format!("main;f{k:02}").as_bytes(), v, 0).unwrap();
            }
            m.finish().unwrap()
        };
        let diff = crate::graph::diff::merge(&table(27, 1370), &table(53, 1237)).unwrap();
        let samples = (Some(1397), Some(1290));
        let report = graph_report("cpu", "samples", &diff, 3, samples);
        let top = &report.self_changes[0];
        assert!(top.function == "f00" && top.self_stands_out == Some(false), "{top:?}");
        let named = Budget { function: regex::Regex::new("^f00$").unwrap(), max_increase: 1.0, graph: None };
        let checked = check_budgets("cpu", &diff, Some(1.0), std::slice::from_ref(&named), samples, false);
        // `--max-increase`: f00's 2.18 points are within noise at the graph's level.
        assert!(!checked[0].exceeded && checked[0].within_noise.as_ref().is_some_and(|w| w.0 == "f00"), "{:?}", checked[0]);
        // A budget that names f00 beforehand asks one question: its growth stands out.
        assert!(checked[1].exceeded && checked[1].stands_out == Some(true), "{:?}", checked[1]);
    }

    #[test]
    fn names_cannot_make_markdown_or_html() {
        assert_eq!(markdown_text("a|b"), "a\\|b");
        assert_eq!(markdown_text("<script>"), "&lt;script&gt;");
        assert_eq!(markdown_text("[x](javascript:y)"), "\\[x\\]\\(javascript\\:y\\)");
        assert_eq!(plain_text("a\u{1b}[31mb"), "a\\u{1b}[31mb");
    }
}
