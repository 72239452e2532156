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
pub fn trend(points: &[Point], unit: &str, decimals: u32, label: &str, first: &str, last: &str) -> String {
    let (w, h) = (720.0, 180.0);
    let (left, right, top, bottom) = (28.0, 12.0, 12.0, 28.0);
    let max = points.iter().map(|p| p.value).max().unwrap_or(0).max(1) as f64;
    let (pw, ph) = (w - left - right, h - top - bottom);
    let n = points.len();
    let step = if n > 1 { pw / (n - 1) as f64 } else { 0.0 };
    let point = |i: usize| {
        let x = if n > 1 { left + step * i as f64 } else { left + pw / 2.0 };
        (x, top + ph - (points[i].value as f64 / max) * ph)
    };
    let mut svg = format!(r#"<svg class="fs-trend" viewBox="0 0 {w} {h}" role="img" aria-label="{}">"#, escape_html(label));
    let _ = write!(
        svg,
        r#"<line class="fs-axis" x1="{left}" y1="{y0}" x2="{x1}" y2="{y0}"/><line class="fs-axis" x1="{left}" y1="{top}" x2="{left}" y2="{y0}"/>"#,
        y0 = top + ph,
        x1 = w - right
    );
    let _ = write!(
        svg,
        r#"<text class="fs-axis-label" x="{x}" y="{y}">{}</text><text class="fs-axis-label" x="{x0}" y="{y0}" text-anchor="end">0</text>"#,
        escape_html(&format_scaled(max as i128, unit, decimals)),
        x = left + 6.0,
        y = top + 10.0,
        x0 = left - 6.0,
        y0 = top + ph
    );
    if n > 0 {
        let _ = write!(
            svg,
            r#"<text class="fs-axis-label" x="{left}" y="{y}">{}</text><text class="fs-axis-label" x="{x}" y="{y}" text-anchor="end">{}</text>"#,
            escape_html(first),
            escape_html(last),
            y = h - 8.0,
            x = w - right
        );
    }
    if n > 1 {
        svg.push_str(r#"<polyline class="fs-line" points=""#);
        for i in 0..n {
            let (x, y) = point(i);
            let _ = write!(svg, "{}{x:.1},{y:.1}", if i == 0 { "" } else { " " });
        }
        svg.push_str(r#""/>"#);
    }
    for (i, p) in points.iter().enumerate() {
        let (x, y) = point(i);
        let _ = write!(
            svg,
            r#"<a href="{}"><circle cx="{x:.1}" cy="{y:.1}" r="4"><title>{}</title></circle></a>"#,
            escape_html(&p.href),
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
}
