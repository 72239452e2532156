//! Charts drawn as inline SVG at build time, so they need no script: the home page's
//! sparklines and a series page's trend plot.

use std::fmt::Write as _;

use super::theme::escape_html;
use crate::units::format_scaled;

/// A point of a trend plot: its link, its tooltip, its value.
pub struct Point {
    /// Where the point links to, relative to the page.
    pub href: String,
    /// Its tooltip.
    pub title: String,
    /// Its value.
    pub value: u64,
}

/// An inline SVG sparkline of `values` (oldest first), from zero to their maximum.
pub fn sparkline(values: &[u64], label: &str) -> String {
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

/// The trend plot of a series page: `points` (oldest first) in `unit` (with `decimals`
/// places), from zero to their maximum, each a link; `first` and `last` label the time axis.
///
/// The plot takes its box's width at a fixed height and is not scaled: its horizontal
/// positions are percentages of its width, its vertical ones CSS pixels, so its labels keep
/// their own size (11 px, flamesite.css) on a phone and on a wide screen alike. (A viewBox
/// scaled the whole picture with the box: 5.7 px labels on a phone.) Its line is drawn in a
/// nested SVG stretched to the plot's width, with a stroke that does not stretch with it.
pub fn trend(points: &[Point], unit: &str, decimals: u32, label: &str, first: &str, last: &str) -> String {
    let h = 180.0;
    // Left and right margins in percent of the width; top and bottom in pixels. The top one
    // holds the label of the maximum, above the plot (inside it, the highest points and the
    // line ran through it).
    let (left, right, top, bottom) = (4.0, 2.0, 24.0, 28.0);
    let max = points.iter().map(|p| p.value).max().unwrap_or(0).max(1) as f64;
    let (pw, ph) = (100.0 - left - right, h - top - bottom);
    let n = points.len();
    // A point's place: across, in percent of the plot (0 to 100); down, in pixels.
    let across = |i: usize| if n > 1 { 100.0 * i as f64 / (n - 1) as f64 } else { 50.0 };
    let down = |i: usize| ph - (points[i].value as f64 / max) * ph;
    let right_edge = 100.0 - right;
    let mut svg = format!(r#"<svg class="fs-trend" width="100%" height="{h}" role="img" aria-label="{}">"#, escape_html(label));
    let _ = write!(
        svg,
        r#"<line class="fs-axis" x1="{left}%" y1="{y0}" x2="{right_edge}%" y2="{y0}"/><line class="fs-axis" x1="{left}%" y1="{top}" x2="{left}%" y2="{y0}"/>"#,
        y0 = top + ph,
    );
    let _ = write!(
        svg,
        r#"<text class="fs-axis-label" x="{left}%" y="{y}">{}</text><text class="fs-axis-label" x="{left}%" dx="-6" y="{y0}" text-anchor="end">0</text>"#,
        escape_html(&format_scaled(max as i128, unit, decimals)),
        y = top - 9.0,
        y0 = top + ph
    );
    if n > 0 {
        let _ = write!(
            svg,
            r#"<text class="fs-axis-label" x="{left}%" y="{y}">{}</text><text class="fs-axis-label" x="{right_edge}%" y="{y}" text-anchor="end">{}</text>"#,
            escape_html(first),
            escape_html(last),
            y = h - 8.0,
        );
    }
    if n > 1 {
        let _ = write!(
            svg,
            r#"<svg x="{left}%" y="{top}" width="{pw}%" height="{ph}" viewBox="0 0 100 {ph}" preserveAspectRatio="none" overflow="visible"><polyline class="fs-line" vector-effect="non-scaling-stroke" points=""#
        );
        for i in 0..n {
            let _ = write!(svg, "{}{:.2},{:.1}", if i == 0 { "" } else { " " }, across(i), down(i));
        }
        svg.push_str(r#""/></svg>"#);
    }
    for (i, p) in points.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<a href="{}"><circle cx="{:.2}%" cy="{:.1}" r="4"><title>{}</title></circle></a>"#,
            escape_html(&p.href),
            left + pw * across(i) / 100.0,
            top + down(i),
            escape_html(&p.title)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_escapes_and_scales() {
        let s = sparkline(&[0, 5, 10], "<b>\"x\"");
        assert!(s.contains("&lt;b&gt;&quot;x&quot;"), "{s}");
        assert!(s.contains("points=\"3.0,25.0 60.0,14.0 117.0,3.0\""), "{s}");
    }

    fn point(value: u64) -> Point {
        Point { href: format!("../p/{value}/"), title: format!("<{value}>"), value }
    }

    #[test]
    fn the_trend_is_not_scaled_so_its_labels_keep_their_size() {
        let s = trend(&[point(0), point(50), point(100)], "samples", 0, "Totals", "2026-11-01", "2026-11-03");
        // No viewBox on the plot itself: its box's width at 180 px, drawn at its own scale.
        let outer = &s[..s.find('>').unwrap()];
        assert!(outer.starts_with("<svg class=\"fs-trend\" width=\"100%\" height=\"180\"") && !outer.contains("viewBox"), "{outer}");
        // Points across in percent of the width (4% to 98%), down in pixels (24 to 152).
        for (x, y) in [("4.00", "152.0"), ("51.00", "88.0"), ("98.00", "24.0")] {
            assert!(s.contains(&format!("cx=\"{x}%\" cy=\"{y}\"")), "{x},{y}: {s}");
        }
        // The line in a plot stretched across, its stroke not stretched with it.
        assert!(s.contains(r#"<svg x="4%" y="24" width="94%" height="128" viewBox="0 0 100 128" preserveAspectRatio="none""#), "{s}");
        assert!(s.contains(r#"vector-effect="non-scaling-stroke" points="0.00,128.0 50.00,64.0 100.00,0.0""#), "{s}");
        // Labels: the maximum above the plot, zero, the first and the last date; the titles
        // escaped.
        assert!(s.contains(r#"<text class="fs-axis-label" x="4%" y="15">100 samples</text>"#), "{s}");
        for l in [">0</text>", ">2026-11-01</text>", ">2026-11-03</text>", "<title>&lt;50&gt;</title>"] {
            assert!(s.contains(l), "{l}: {s}");
        }
    }

    #[test]
    fn a_trend_of_one_run_puts_it_in_the_middle_without_a_line() {
        let s = trend(&[point(7)], "samples", 0, "Totals", "2026-11-01", "2026-11-01");
        assert!(s.contains("cx=\"51.00%\" cy=\"24.0\"") && !s.contains("polyline"), "{s}");
        let empty = trend(&[], "samples", 0, "Totals", "", "");
        assert!(!empty.contains("<circle") && !empty.contains("polyline") && empty.ends_with("</svg>"), "{empty}");
    }
}
