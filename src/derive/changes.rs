//! Change points: the runs of a series where a function's share of the total shifted and
//! stayed, told apart from one-night spikes and ordinary variation (README, "Change points").
//!
//! The parameters are `[changes]` of site.toml ([`ChangesConfig`], whose defaults are given here
//! in brackets). The method, per function whose share reaches `min_share_percent` (0.5%) in
//! some run: for each run `k` with at least `min_runs_before` (5) runs before it, the median
//! share of the up to `window` (8) runs before `k` against the median of `k` and the up to
//! `window` - 1 runs after it. Medians ignore a one-night spike on either side. The
//! noise is estimated from the series itself: 1.4826 times the median absolute difference of
//! consecutive shares, divided by √2 (the spread of one night's share, robust to the shifts
//! and spikes it is meant to find), and at least the sampling noise of the share when the unit
//! counts samples. A shift is a change point when the two medians differ by at least
//! `noise_factor` (4) standard errors of their difference (which grows as the windows shrink:
//! the newest runs need a larger shift) and by at least `min_relative` (0.25) of the larger of them
//! (a function that doubles or drops by two thirds; the small shifts every other function's
//! share takes from it do not qualify). Around a shift several runs qualify; the one with the
//! fewest runs of its two windows on the wrong side of the midway share is kept (then the
//! larger shift), and no other within a window of it. A shift with fewer
//! than `confirm_runs` (3) runs from it on is reported as not yet confirmed.
//!
//! The change points of one run are one [`Event`], named by the largest shift among them; a
//! run where at least `reshaped` (a third) of the profile's self shares moved changed the profile's
//! shape, and the change points of the runs just after it are part of that event
//! ([`of_spans`]).

use serde::Serialize;

use crate::config::ChangesConfig;

/// One function's share in each run of a series: `shares[k]` its share of run `k`'s total (0
/// where the run lacks it).
pub struct Series<'a> {
    /// The function.
    pub function: &'a str,
    /// Its share per run, oldest first.
    pub shares: &'a [f64],
}

/// A change point of a function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangePoint {
    /// The function.
    pub function: String,
    /// Index of the run it starts at, in the series' runs oldest first.
    pub run: usize,
    /// Its share before (the median of the runs before), a fraction of 1.
    pub before: f64,
    /// Its share from that run on (the median of the runs from it).
    pub after: f64,
    /// Whether enough runs follow to tell it from a spike.
    pub confirmed: bool,
}

/// The median of `v` (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// How much a function's share differs between two nights of an unchanged service, from its
/// `shares` in the runs before (oldest first): √2 times [`series_noise`], the spread of one
/// night's share, since a difference of two nights adds two such spreads. `None` with fewer
/// than `m.noise_min_runs` runs.
pub fn night_to_night(shares: &[f64], m: &ChangesConfig) -> Option<f64> {
    (shares.len() >= m.noise_min_runs).then(|| series_noise(shares) * std::f64::consts::SQRT_2)
}

/// Whether a change of a function's share by `delta` (a fraction of 1) stands out of its
/// night-to-night spread `spread` ([`night_to_night`]): by more than `m.stands_out` times it
/// (3: a run against the one before differs by more in about 3 of 1,000 pairs of nights of an
/// unchanged service when the shares vary normally). A share that never moved (spread 0)
/// stands out of it by any change.
pub fn stands_out_of_series(delta: f64, spread: f64, m: &ChangesConfig) -> bool {
    delta.abs() > m.stands_out * spread
}

/// The spread of one night's share, from the series itself (see the module's comment).
pub fn series_noise(shares: &[f64]) -> f64 {
    let diffs: Vec<f64> = shares.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    1.4826 * median(&diffs) / std::f64::consts::SQRT_2
}

/// The change points of one function's shares; `samples[k]`, when the unit counts samples, is
/// run `k`'s total, whose sampling noise is a floor for the noise.
pub fn change_points(s: &Series, samples: Option<&[u64]>, m: &ChangesConfig) -> Vec<ChangePoint> {
    let (window, min_share) = (m.window, m.min_share_percent / 100.0);
    let x = s.shares;
    let n = x.len();
    if n < m.min_runs_before + 1 || x.iter().all(|&v| v < min_share) {
        return Vec::new();
    }
    let spread = series_noise(x);
    // Candidates: (run, runs on the wrong side of the step, before, after).
    let mut found: Vec<(usize, usize, f64, f64)> = Vec::new();
    for k in m.min_runs_before..n {
        let before = &x[k.saturating_sub(window)..k];
        let after = &x[k..(k + window).min(n)];
        let (mb, ma) = (median(before), median(after));
        let sampling = samples.map_or(0.0, |t| {
            let p = (mb + ma) / 2.0;
            let n = t[k.saturating_sub(window)..(k + window).min(n)].iter().copied().min().unwrap_or(0);
            if n == 0 { 0.0 } else { (p * (1.0 - p) / n as f64).sqrt() }
        });
        let noise = spread.max(sampling);
        let error = 1.2533 * noise * (1.0 / before.len() as f64 + 1.0 / after.len() as f64).sqrt();
        let d = (ma - mb).abs();
        if d >= m.noise_factor * error && d >= m.min_relative * ma.max(mb) && d > 0.0 {
            // How many runs of the two windows sit on the wrong side of the midway share: the
            // run where the shift starts has the fewest (a spike in a window counts one).
            let mid = (ma + mb) / 2.0;
            let up = ma > mb;
            let wrong = before.iter().filter(|&&v| (v > mid) == up).count() + after.iter().filter(|&&v| (v < mid) == up).count();
            found.push((k, wrong, mb, ma));
        }
    }
    // Best placed first (then the larger shift, then the earlier run); one per window.
    found.sort_by(|a, b| a.1.cmp(&b.1).then((b.3 - b.2).abs().total_cmp(&(a.3 - a.2).abs())).then(a.0.cmp(&b.0)));
    let mut kept: Vec<(usize, usize, f64, f64)> = Vec::new();
    for c in found {
        if kept.iter().all(|k| k.0.abs_diff(c.0) >= window) {
            kept.push(c);
        }
    }
    kept.sort_by_key(|c| c.0);
    kept.into_iter()
        .map(|(k, _, before, after)| ChangePoint { function: s.function.to_string(), run: k, before, after, confirmed: n - k >= m.confirm_runs })
        .collect()
}

/// An event: the change points that start at one run, told as one change (README, "Change
/// points and events"). Functions that move together at a run (a caller and its callees, the
/// shares every other function gives up when one grows) are one event, named by the function
/// whose share shifted most.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// Index of the run it starts at, as [`ChangePoint::run`].
    pub run: usize,
    /// The change point that names it: the largest shift of the run (ties by name).
    pub lead: ChangePoint,
    /// How many functions' change points start at the run, the lead included (and at the
    /// runs after a change of shape that are told as part of it).
    pub functions: usize,
    /// Where its change points are in [`Changes::points`]: `first..first + functions`.
    pub first: usize,
    /// How much of the profile moved across the run: half the sum over every function of the
    /// shift of its self share (medians as for a change point), from 0 (nothing) to 1 (all).
    pub moved: f64,
    /// Whether at least `reshaped` ([`ChangesConfig`]) of it moved: the profile changed shape, and its change
    /// points are that one event, not separate changes.
    pub reshaped: bool,
}

impl Event {
    /// The size of its lead shift, which orders events (strongest first).
    pub fn strength(&self) -> f64 {
        (self.lead.after - self.lead.before).abs()
    }
}

/// A series' change points (every function's, sorted by run, then function) and the events
/// they make (one per run, oldest first).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// Every change point.
    pub points: Vec<ChangePoint>,
    /// The events.
    pub events: Vec<Event>,
}

/// The change points of a series from its history `spans` (each span's points give runs by
/// their index in the series), over the series' runs `runs` (indices, oldest first: those that
/// have the graph followed; a run without it is left out, not counted as a share of 0).
/// `samples[j]`, when the graph followed counts samples, is run `runs[j]`'s total. Sorted by
/// run, then function.
pub fn of_spans(spans: &[&super::history::Span], runs: &[usize], samples: Option<&[u64]>, m: &ChangesConfig) -> Changes {
    let at: std::collections::HashMap<usize, usize> = runs.iter().enumerate().map(|(j, &k)| (k, j)).collect();
    // Per function, its total share and its self share in each run.
    let mut shares: std::collections::BTreeMap<&str, (Vec<f64>, Vec<f64>)> = std::collections::BTreeMap::new();
    for span in spans {
        for (name, points) in span.names.iter().zip(&span.points) {
            for &(run, own, total) in points {
                if let Some(&j) = at.get(&(run as usize)) {
                    let entry = shares.entry(name.as_str()).or_insert_with(|| (vec![0.0; runs.len()], vec![0.0; runs.len()]));
                    entry.0[j] = total;
                    entry.1[j] = own;
                }
            }
        }
    }
    let mut points: Vec<ChangePoint> = shares.iter().flat_map(|(function, (x, _))| change_points(&Series { function, shares: x }, samples, m)).collect();
    points.sort_by(|a, b| a.run.cmp(&b.run).then_with(|| a.function.cmp(&b.function)));
    // One event per run with change points; how much of the profile moved across it is
    // reckoned from every function's self share (self shares add up to the whole).
    let n = runs.len();
    let moved_at = |j: usize| {
        let (before, after) = (j.saturating_sub(m.window)..j, j..(j + m.window).min(n));
        (0.5 * shares.values().map(|(_, own)| (median(&own[after.clone()]) - median(&own[before.clone()])).abs()).sum::<f64>()).min(1.0)
    };
    // Whether run `j`'s own self shares are nearer the mean of the runs before it than that of
    // it and the runs after it: the run still has the old shape.
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    let old_shaped = |j: usize| {
        let (before, after) = (j.saturating_sub(m.window)..j, j..(j + m.window).min(n));
        let (mut to_before, mut to_after) = (0.0, 0.0);
        for (_, own) in shares.values() {
            to_before += (own[j] - mean(&own[before.clone()])).abs();
            to_after += (own[j] - mean(&own[after.clone()])).abs();
        }
        !before.is_empty() && to_before < to_after
    };
    let lead_of = |group: &[ChangePoint]| {
        group
            .iter()
            .max_by(|a, b| (a.after - a.before).abs().total_cmp(&(b.after - b.before).abs()).then_with(|| b.function.cmp(&a.function)))
            .expect("a group has a change point")
            .clone()
    };
    let mut events: Vec<Event> = Vec::new();
    let mut first = 0;
    for group in points.chunk_by(|a, b| a.run == b.run) {
        let at = first;
        first += group.len();
        let j = group[0].run;
        // The runs just after a change of shape, until the new shape has been seen in
        // `confirm_runs` runs, have no baseline of their own yet: what shifts in them is told
        // as part of that change, not as changes of their own. The change is placed at the
        // first of these runs that has the new shape: change points can come a run or two early,
        // where the windows after already hold the new shape's majority of runs, at a run that
        // still has the old shape.
        if let Some(last) = events.last_mut().filter(|e| e.reshaped && j - e.run < m.confirm_runs) {
            last.functions += group.len();
            if old_shaped(last.run) && !old_shaped(j) {
                last.run = j;
                last.lead = lead_of(group);
                last.moved = moved_at(j);
            }
            continue;
        }
        let moved = moved_at(j);
        events.push(Event { run: j, lead: lead_of(group), functions: group.len(), first: at, moved, reshaped: moved >= m.reshaped });
    }
    for e in &mut events {
        e.run = runs[e.run];
        e.lead.run = runs[e.lead.run];
    }
    for c in &mut points {
        c.run = runs[c.run];
    }
    Changes { points, events }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> ChangesConfig {
        ChangesConfig::default()
    }

    #[test]
    fn a_change_stands_out_of_the_series_noise_only_past_three_night_to_night_spreads() {
        // Nights around 10% that wobble by ±2 points: two nights differ by about 2.6 points.
        let nights: Vec<f64> = wobbly(16, 0.10, 0.2, 3);
        let spread = night_to_night(&nights, &m()).expect("16 nights say it");
        assert!(spread > 0.005 && spread < 0.05, "{spread}");
        assert!(!stands_out_of_series(0.02, spread, &m()), "a change of 2 points is ordinary here ({spread})");
        assert!(stands_out_of_series(0.10, spread, &m()), "a change of 10 points is not ({spread})");
        assert_eq!(night_to_night(&nights[..m().noise_min_runs - 1], &m()), None, "too few nights say nothing");
        // A share that never moved: any change stands out, none that is 0.
        let flat = night_to_night(&[0.0; 8], &m()).unwrap();
        assert!(stands_out_of_series(0.001, flat, &m()) && !stands_out_of_series(0.0, flat, &m()));
    }

    /// A share series of `n` nights around `level` with a deterministic wobble of ±`wobble`.
    fn wobbly(n: usize, level: f64, wobble: f64, seed: u64) -> Vec<f64> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                level * (1.0 + wobble * (2.0 * u - 1.0))
            })
            .collect()
    }

    #[test]
    fn a_doubling_is_found_at_its_night_a_spike_is_not_and_a_shift_at_the_newest_run_is_unconfirmed() {
        let mut x = wobbly(30, 0.10, 0.1, 1);
        for v in &mut x[12..] {
            *v *= 2.0;
        }
        x[5] *= 3.0; // a one-night spike
        let found = change_points(&Series { function: "f", shares: &x }, None, &m());
        assert_eq!(found.iter().map(|c| (c.run, c.confirmed)).collect::<Vec<_>>(), [(12, true)], "{found:?}");
        assert!((found[0].before - 0.10).abs() < 0.01 && (found[0].after - 0.20).abs() < 0.02, "{found:?}");
        // The same shift at the newest run: found, not yet confirmed.
        let mut y = wobbly(30, 0.10, 0.1, 2);
        y[29] *= 2.0;
        let found = change_points(&Series { function: "f", shares: &y }, None, &m());
        assert_eq!(found.iter().map(|c| (c.run, c.confirmed)).collect::<Vec<_>>(), [(29, false)], "{found:?}");
    }

    #[test]
    fn a_shift_is_confirmed_by_exactly_confirm_runs_from_it_on() {
        // A clean doubling whose new level has been seen in `from` runs (the shift included).
        let shifted = |n: usize, from: usize| -> Vec<ChangePoint> {
            let x: Vec<f64> = (0..n).map(|k| if k + from < n { 0.10 } else { 0.20 }).collect();
            change_points(&Series { function: "f", shares: &x }, None, &m())
        };
        let n = 20;
        let at = |found: &[ChangePoint]| found.iter().map(|c| (c.run, c.confirmed)).collect::<Vec<_>>();
        assert_eq!(at(&shifted(n, m().confirm_runs)), [(n - m().confirm_runs, true)], "seen in {} runs: confirmed", m().confirm_runs);
        assert_eq!(at(&shifted(n, m().confirm_runs - 1)), [(n - m().confirm_runs + 1, false)], "one fewer: not yet");
        assert_eq!(at(&shifted(n, m().confirm_runs + 1)), [(n - m().confirm_runs - 1, true)]);
    }

    #[test]
    fn ordinary_variation_and_small_shares_make_no_change_point() {
        for seed in 0..50 {
            let x = wobbly(40, 0.05, 0.2, seed);
            assert_eq!(change_points(&Series { function: "f", shares: &x }, None, &m()), [], "seed {seed}");
        }
        let tiny: Vec<f64> = (0..30).map(|k| if k < 15 { 0.001 } else { 0.003 }).collect();
        assert_eq!(change_points(&Series { function: "f", shares: &tiny }, None, &m()), []);
    }

    #[test]
    fn runs_without_the_graph_followed_are_left_out_not_counted_as_zero() {
        // f holds 10% in 20 runs; every third run of the series is of another kind (no point).
        let runs: Vec<usize> = (0..30).filter(|k| k % 3 != 2).collect();
        let points: Vec<(u32, f64, f64)> = runs.iter().map(|&k| (k as u32, 0.05, 0.10 + 0.001 * (k % 2) as f64)).collect();
        let span = crate::derive::history::Span { names: vec!["f".into()], buckets: 1, points: vec![points] };
        assert_eq!(of_spans(&[&span], &runs, None, &m()), Changes::default(), "no shift among the runs that have it");
        // Counted as shares of 0, the other runs would have been noise of the size of the share.
        let all: Vec<usize> = (0..30).collect();
        assert!(series_noise(&all.iter().map(|k| if k % 3 == 2 { 0.0 } else { 0.1 }).collect::<Vec<_>>()) > 0.05);
    }

    /// A span of `names`, each with its (self, total) share per run.
    fn span(names: &[(&str, Vec<(f64, f64)>)]) -> crate::derive::history::Span {
        let mut sorted: Vec<_> = names.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        crate::derive::history::Span {
            names: sorted.iter().map(|n| n.0.to_string()).collect(),
            buckets: 1,
            points: sorted.iter().map(|(_, v)| v.iter().enumerate().map(|(k, &(own, total))| (k as u32, own, total)).collect()).collect(),
        }
    }

    #[test]
    fn the_functions_that_shift_at_one_run_are_one_event_named_by_the_largest_shift() {
        // 20 runs: from run 12 a caller `validate` and its callee `regex` take 20 points that
        // `parse` and `hash` give up; the profile keeps its shape.
        let at = |k: usize, before: f64, after: f64| if k < 12 { before } else { after };
        let names = [
            ("validate", (0..20).map(|k| (0.0, at(k, 0.0, 0.20))).collect()),
            ("regex", (0..20).map(|k| (at(k, 0.0, 0.20), at(k, 0.0, 0.18))).collect()),
            ("parse", (0..20).map(|k| (at(k, 0.5, 0.40), at(k, 0.5, 0.40))).collect()),
            ("hash", (0..20).map(|k| (at(k, 0.5, 0.40), at(k, 0.5, 0.40))).collect()),
        ];
        let s = span(&names);
        let runs: Vec<usize> = (0..20).collect();
        let found = of_spans(&[&s], &runs, Some(&[300; 20]), &m());
        assert_eq!(found.points.iter().map(|c| (c.function.as_str(), c.run)).collect::<Vec<_>>(), [("regex", 12), ("validate", 12)], "{found:?}");
        assert_eq!(found.events.len(), 1, "{found:?}");
        let e = &found.events[0];
        assert_eq!((e.run, e.lead.function.as_str(), e.functions, e.reshaped), (12, "validate", 2, false), "{e:?}");
        assert!((e.moved - 0.2).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn a_run_where_most_of_the_profile_moved_is_one_change_of_shape_with_the_runs_just_after_it() {
        // Ten functions share the profile for 10 runs; from run 10 ten others do (a deploy),
        // and run 11 adds an eleventh new one: one event, at run 10.
        let mut names: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for i in 0..10 {
            names.push((format!("old{i}"), (0..14).map(|k| if k < 10 { (0.1, 0.1) } else { (0.0, 0.0) }).collect()));
            names.push((format!("new{i}"), (0..14).map(|k| if k < 10 { (0.0, 0.0) } else if k == 10 { (0.1, 0.1) } else { (0.09, 0.09) }).collect()));
        }
        names.push(("late".into(), (0..14).map(|k| if k < 11 { (0.0, 0.0) } else { (0.1, 0.1) }).collect()));
        let refs: Vec<(&str, Vec<(f64, f64)>)> = names.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
        let s = span(&refs);
        let runs: Vec<usize> = (0..14).collect();
        let found = of_spans(&[&s], &runs, Some(&[1000; 14]), &m());
        assert!(found.points.iter().any(|c| c.function == "late" && c.run == 11), "{found:?}");
        assert_eq!(found.events.len(), 1, "{:?}", found.events);
        let e = &found.events[0];
        assert_eq!((e.run, e.reshaped, e.functions, e.first), (10, true, found.points.len(), 0), "{e:?}");
        assert!(e.moved > 0.9, "{e:?}");
    }

    #[test]
    fn sampling_noise_is_a_floor_for_the_noise() {
        // Flat shares then a shift of 4 points, on runs of 100 samples: the sampling noise of a
        // 12% share is 3.2 points; it is not a change point.
        let x: Vec<f64> = (0..30).map(|k| if k < 15 { 0.10 } else { 0.14 }).collect();
        assert_eq!(change_points(&Series { function: "f", shares: &x }, None, &m()).len(), 1, "without counts, a clean shift is one");
        assert_eq!(change_points(&Series { function: "f", shares: &x }, Some(&[100; 30]), &m()), []);
    }
}
