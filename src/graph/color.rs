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

    /// Colours must be the same in every release. These values were computed outside this
    /// code, from the algorithm as docs/FORMAT.md states it, by tests/data/colors/colors.py
    /// (its output is tests/data/colors/colors.txt).
    #[test]
    fn every_palette_gives_the_colours_the_spec_gives() {
        let pinned: [(Palette, &str, u32); 22] = [
            (Palette::Hot, "all", 0xd4b010),
            (Palette::Hot, "main", 0xe90730),
            (Palette::Hot, "malloc", 0xe84508),
            (Palette::Hot, "", 0xd2b121),
            (Palette::Hot, "größe::λ_閉包", 0xf31c08),
            (Palette::Hot, "<script>alert('x')</script>", 0xf7ce1c),
            (Palette::Module, "std::vec::Vec<T>::push", 0xe4770b),
            (Palette::Module, "std::vec::Vec<T>::pop", 0xe4770b),
            (Palette::Module, "java.util.HashMap.get", 0xd7491f),
            (Palette::Module, "java.util.TreeMap.get", 0xf19c30),
            (Palette::Module, "net/http.(*Client).Do", 0xd91231),
            (Palette::Module, "operator new(unsigned long)", 0xf0c109),
            (Palette::Module, "main", 0xe90730),
            (Palette::Lang, "do_syscall_64_[k]", 0xdfd200),
            (Palette::Lang, "Foo::bar_[j]", 0x4ac941),
            (Palette::Lang, "std::mem::swap_[i]", 0x36cdd1),
            (Palette::Lang, "main", 0xe90730),
            (Palette::Lang, "x_[k]_", 0xf41726),
            (Palette::Blue, "all", 0x7e7ece),
            (Palette::Blue, "main", 0x5151ee),
            (Palette::Blue, "malloc", 0x6262c6),
            (Palette::Blue, "free", 0x8383f1),
        ];
        for (palette, name, want) in pinned {
            assert_eq!(color_of(name, palette), want, "{} {name:?}: {:#08x}", palette.as_str(), color_of(name, palette));
        }
    }

    /// The name-file example of docs/FORMAT.md is read from the document and its colours
    /// checked against the code, so the document cannot drift from the algorithm it states.
    #[test]
    fn the_format_documents_example_colours_are_the_codes() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
        let section = &doc[doc.find("## Name files").expect("a Name files section")..];
        let block = &section[section.find("```json\n").expect("its JSON example") + 8..];
        let block = &block[..block.find("```").unwrap()];
        let example: serde_json::Value = serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"));
        let names = example["names"].as_array().unwrap();
        let colors = example["colors"].as_array().unwrap();
        assert_eq!(names.len(), colors.len(), "{block}");
        assert!(names.len() >= 3, "{block}");
        // The manifest example beside it says "palette": "hot".
        assert!(doc.contains("\"palette\": \"hot\""));
        for (name, color) in names.iter().zip(colors) {
            let name = name.as_str().unwrap();
            assert_eq!(color.as_u64(), Some(u64::from(color_of(name, Palette::Hot))), "{name} in docs/FORMAT.md");
        }
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
