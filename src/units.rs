//! The one value formatter of the pages: a value in its unit, as people read it. The page
//! script's `formatValue` (`themes/default/static/format.js`) follows the same rules, and both
//! are tested against the same vectors (`tests/data/units/vectors.json`):
//!
//! * times (`nanoseconds`/`ns`, `microseconds`/`us`/`µs`, `milliseconds`/`ms`,
//!   `seconds`/`s`): ns below 1,000 ns, then µs, ms, s, min from 60 s and h from 3,600 s;
//! * bytes (`bytes`/`byte`/`B`): B below 1,024, then KiB, MiB, GiB, TiB, PiB;
//! * anything else is a count: exact with thousands separators below 10,000 ("9,999"), then
//!   k, M, G, T, P; no unit word for `count`, "sample"/"samples", else the unit as given;
//! * three significant digits after a prefix (0, 1 or 2 decimals), ties rounded up as
//!   JavaScript's `toFixed` does; negative values start with "−".

/// Units whose values count events (one sample, one call): their shares rest on that many
/// draws, so the sampling noise of a share follows from the counts alone. Values of other
/// units (nanoseconds, bytes) are weighted samples whose number only a graph of the same
/// samples in such a unit gives (`ingest::decode::draws`).
const COUNTED_UNITS: &[&str] = &["samples", "sample", "count", "events"];

/// Whether values of `unit` count events ([`COUNTED_UNITS`]).
pub fn counts_events(unit: &str) -> bool {
    COUNTED_UNITS.contains(&unit)
}

/// `v / 10^decimals`, exactly, as folded stacks write it: `3123` with 2 places is `31.23`,
/// `3120` is `31.2`, `3100` is `31`.
pub fn exact(v: u64, decimals: u32) -> String {
    if decimals == 0 {
        return v.to_string();
    }
    // More places than a u64 has digits cannot come from a build (the chunk reader refuses
    // such a manifest); they would only pad with zeros.
    let decimals = decimals.min(20);
    let digits = format!("{v:0>width$}", width = decimals as usize + 1);
    let (whole, fraction) = digits.split_at(digits.len() - decimals as usize);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    }
}

/// `v` in `unit`, for people: "1,234 samples", "20.4 k samples", "1.50 ms", "2.00 MiB".
pub fn format_value(v: i128, unit: &str) -> String {
    format_scaled(v, unit, 0)
}

/// `v / 10^decimals` in `unit`, for people: a graph of fractional counts (see
/// `FrameTable::decimals`) shows them exactly below 10,000 ("31.23 samples", "1,234.5"), and
/// like any count above.
pub fn format_scaled(v: i128, unit: &str, decimals: u32) -> String {
    if v < 0 {
        return format!("−{}", format_scaled(v.unsigned_abs().min(i128::MAX as u128) as i128, unit, decimals));
    }
    let decimals = decimals.min(20);
    let scale = 10f64.powi(decimals as i32);
    let one = 10i128.pow(decimals);
    let lower = unit.to_ascii_lowercase();
    let ns_per = match lower.as_str() {
        "nanoseconds" | "ns" => Some(1.0),
        "microseconds" | "us" | "µs" => Some(1e3),
        "milliseconds" | "ms" => Some(1e6),
        "seconds" | "s" => Some(1e9),
        _ => None,
    };
    if let Some(k) = ns_per {
        return duration(v as f64 * k / scale);
    }
    let bytes_unit = matches!(lower.as_str(), "bytes" | "byte") || unit == "B";
    if bytes_unit && v >= 1024 * one {
        return bytes(v as f64 / scale);
    }
    let number = if v < 10_000 * one {
        let fraction = exact((v % one) as u64 + one as u64, decimals);
        format!("{}{}", group_digits(v / one), fraction.split_once('.').map_or(String::new(), |(_, f)| format!(".{f}")))
    } else {
        let suffixes = [" k", " M", " G", " T", " P"];
        let mut x = v as f64 / scale / 1000.0;
        let mut i = 0;
        while x >= 1000.0 && i < suffixes.len() - 1 {
            x /= 1000.0;
            i += 1;
        }
        format!("{}{}", sig3(x), suffixes[i])
    };
    if bytes_unit {
        return format!("{number} B");
    }
    match lower.as_str() {
        "" | "count" | "counts" => number,
        "samples" | "sample" => format!("{number} {}", if v == one { "sample" } else { "samples" }),
        _ => format!("{number} {unit}"),
    }
}

fn duration(ns: f64) -> String {
    if ns < 1e3 {
        format!("{} ns", group_digits(ns.round() as i128))
    } else if ns < 1e6 {
        format!("{} µs", sig3(ns / 1e3))
    } else if ns < 1e9 {
        format!("{} ms", sig3(ns / 1e6))
    } else if ns < 60e9 {
        format!("{} s", sig3(ns / 1e9))
    } else if ns < 3600e9 {
        format!("{} min", sig3(ns / 60e9))
    } else {
        format!("{} h", sig3(ns / 3600e9))
    }
}

/// At least 1 KiB, in KiB, MiB, …
fn bytes(v: f64) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = v / 1024.0;
    let mut i = 0;
    while x >= 1024.0 && i < units.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    format!("{} {}", sig3(x), units[i])
}

/// An integer with "," between groups of three digits.
pub fn group_digits(v: i128) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if v < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Three significant digits: 0, 1 or 2 decimals for x from 100, from 10, below 10.
fn sig3(x: f64) -> String {
    let decimals = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    fixed(x, decimals)
}

/// `x` (not negative) with `d` decimals, an exact tie rounded up (as JavaScript's `toFixed`;
/// Rust's formatting rounds ties to even).
fn fixed(x: f64, d: usize) -> String {
    // A tie has at most d + 1 decimals, so 30 more digits show whether x is one exactly.
    let exact = format!("{:.*}", d + 30, x);
    let (int, frac) = exact.split_once('.').expect("formatted with decimals");
    let rest = &frac[d..];
    if !(rest.starts_with('5') && rest[1..].bytes().all(|b| b == b'0')) {
        return format!("{:.*}", d, x);
    }
    // Round the truncated digits up by one unit of the last place.
    let mut digits: Vec<u8> = int.bytes().chain(frac[..d].bytes()).collect();
    let mut i = digits.len();
    loop {
        if i == 0 {
            digits.insert(0, b'1');
            break;
        }
        i -= 1;
        if digits[i] == b'9' {
            digits[i] = b'0';
        } else {
            digits[i] += 1;
            break;
        }
    }
    let s = String::from_utf8(digits).expect("digits");
    if d == 0 {
        s
    } else {
        let (a, b) = s.split_at(s.len() - d);
        format!("{a}.{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_of_the_formatter() {
        assert_eq!(format_value(9_999, "samples"), "9,999 samples");
        assert_eq!(format_value(20_355, "samples"), "20.4 k samples");
        assert_eq!(format_value(12_250, "samples"), "12.3 k samples", "a tie rounds up");
        assert_eq!(format_value(1, "samples"), "1 sample");
        assert_eq!(format_value(18_800, "count"), "18.8 k");
        assert_eq!(format_value(2_500_000_000, "nanoseconds"), "2.50 s");
        assert_eq!(format_value(120, "seconds"), "2.00 min");
        assert_eq!(format_value(1536, "bytes"), "1.50 KiB");
        assert_eq!(format_value(-1500, "ns"), "−1.50 µs");
        assert_eq!(format_value(5_000_000_000, "cycles"), "5.00 G cycles");
        assert_eq!(fixed(0.125, 2), "0.13");
        assert_eq!(fixed(99.5, 0), "100");
        assert_eq!(fixed(12.24, 1), "12.2");
    }

    #[test]
    fn fractional_counts_are_shown_exactly_below_ten_thousand() {
        assert_eq!(format_scaled(3123, "samples", 2), "31.23 samples");
        assert_eq!(format_scaled(3120, "samples", 2), "31.2 samples");
        assert_eq!(format_scaled(100, "samples", 2), "1 sample");
        assert_eq!(format_scaled(5, "samples", 2), "0.05 samples");
        assert_eq!(format_scaled(123_456_789, "count", 4), "12.3 k");
        assert_eq!(format_scaled(12_345_678, "", 4), "1,234.5678");
        assert_eq!(format_scaled(-250, "samples", 2), "−2.5 samples");
        assert_eq!(format_scaled(15, "ms", 1), "1.50 ms");
        assert_eq!(format_scaled(20_480, "bytes", 1), "2.00 KiB");
        assert_eq!(format_scaled(125, "bytes", 1), "12.5 B");
        assert_eq!(exact(3123, 2), "31.23");
        assert_eq!(exact(5, 3), "0.005");
        assert_eq!(exact(3100, 2), "31");
        assert_eq!(exact(0, 2), "0");
    }

    /// The vectors the page script is tested against too, reckoned independently
    /// (`tests/data/units/make.py`).
    #[test]
    fn the_shared_vectors() {
        let text = include_str!("../tests/data/units/vectors.json");
        let vectors: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
        assert!(vectors.len() >= 40);
        for v in vectors {
            let value = v["value"].as_i64().map(i128::from).unwrap_or_else(|| v["value"].as_u64().unwrap().into());
            let decimals = v["decimals"].as_u64().unwrap_or(0) as u32;
            assert_eq!(format_scaled(value, v["unit"].as_str().unwrap(), decimals), v["text"].as_str().unwrap(), "{v}");
        }
    }
}
