//! Colours: a pure function of a function's name and the palette, so the same function has
//! the same colour in every graph, run and release. The algorithm is specified in
//! `docs/FORMAT.md` ("Colours"); never use a seeded hasher here.

use serde::{Deserialize, Serialize};

/// A named rule that turns a name hash into a colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Palette {
    /// Warm reds, oranges and yellows, as flame graphs traditionally are.
    #[default]
    Hot,
    /// `hot`, hashed by module or package prefix, so one module has one colour.
    Module,
    /// By kind: kernel `_[k]` orange, JIT `_[j]` green, inlined `_[i]` aqua, else `hot`.
    Lang,
    /// Cool blues, for memory or off-CPU profiles.
    Blue,
}

impl Palette {
    /// The name used in `site.toml` and the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Palette::Hot => "hot",
            Palette::Module => "module",
            Palette::Lang => "lang",
            Palette::Blue => "blue",
        }
    }
}

/// FNV-1a, 32 bits, over the bytes of `s`.
pub fn fnv1a32(s: &[u8]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for &b in s {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The colour of `name` in `palette`, as `0xRRGGBB`.
pub fn color_of(name: &str, palette: Palette) -> u32 {
    match palette {
        Palette::Hot => hot(fnv1a32(name.as_bytes())),
        Palette::Module => hot(fnv1a32(module_of(name).as_bytes())),
        Palette::Blue => {
            let (v1, v2, _) = fractions(fnv1a32(name.as_bytes()));
            rgb(80.0 + 60.0 * v1, 80.0 + 60.0 * v1, 190.0 + 55.0 * v2)
        }
        Palette::Lang => {
            let h = fnv1a32(name.as_bytes());
            let (v1, v2, v3) = fractions(h);
            if name.ends_with("_[k]") {
                rgb(205.0 + 50.0 * v3, 140.0 + 70.0 * v1, 0.0)
            } else if name.ends_with("_[j]") {
                rgb(50.0 + 60.0 * v1, 200.0 + 55.0 * v3, 50.0 + 60.0 * v2)
            } else if name.ends_with("_[i]") {
                rgb(40.0 + 50.0 * v1, 190.0 + 40.0 * v2, 200.0 + 55.0 * v3)
            } else {
                hot(h)
            }
        }
    }
}

fn fractions(h: u32) -> (f64, f64, f64) {
    let f = |shift: u32| ((h >> shift) & 0xFF) as f64 / 255.0;
    (f(0), f(8), f(16))
}

fn hot(h: u32) -> u32 {
    let (v1, v2, v3) = fractions(h);
    rgb(205.0 + 50.0 * v3, 230.0 * v1, 55.0 * v2)
}

fn rgb(r: f64, g: f64, b: f64) -> u32 {
    ((r.floor() as u32) << 16) | ((g.floor() as u32) << 8) | (b.floor() as u32)
}

/// The module part of a name: up to its last `::`, `.` or `/` before the first `(` or `<`.
fn module_of(name: &str) -> &str {
    let head_end = name.find(['(', '<']).unwrap_or(name.len());
    let head = &name[..head_end];
    let cut = [head.rfind("::"), head.rfind('.'), head.rfind('/')]
        .into_iter()
        .flatten()
        .max();
    match cut {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_the_published_test_vectors() {
        assert_eq!(fnv1a32(b""), 0x811C_9DC5);
        assert_eq!(fnv1a32(b"a"), 0xE40C_292C);
        assert_eq!(fnv1a32(b"foobar"), 0xBF9C_F968);
    }

    #[test]
    fn hot_colours_are_warm_and_stable() {
        // Pinned: a change here changes every archive's colours, which the format forbids.
        let c = color_of("malloc", Palette::Hot);
        let h = fnv1a32(b"malloc");
        let (v1, v2, v3) = fractions(h);
        assert_eq!(c >> 16, (205.0 + 50.0 * v3) as u32);
        assert_eq!((c >> 8) & 0xFF, (230.0 * v1) as u32);
        assert_eq!(c & 0xFF, (55.0 * v2) as u32);
        assert!(c >> 16 >= 205, "red channel dominates in the warm palette");
    }

    #[test]
    fn module_palette_gives_one_colour_per_module() {
        assert_eq!(
            color_of("std::vec::Vec<T>::push", Palette::Module),
            color_of("std::vec::Vec<T>::pop", Palette::Module)
        );
        assert_eq!(
            color_of("java.util.HashMap.get", Palette::Module),
            color_of("java.util.HashMap.put", Palette::Module)
        );
        assert_ne!(
            color_of("java.util.HashMap.get", Palette::Module),
            color_of("java.util.TreeMap.get", Palette::Module)
        );
        assert_eq!(module_of("main"), "main");
    }

    #[test]
    fn lang_palette_marks_kernel_and_jit() {
        let k = color_of("do_syscall_64_[k]", Palette::Lang);
        assert_eq!(k & 0xFF, 0, "kernel frames are orange (no blue)");
        let j = color_of("Foo::bar_[j]", Palette::Lang);
        assert!((j >> 8) & 0xFF >= 200, "JIT frames are green");
    }
}
