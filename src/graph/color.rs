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
    /// By language or kind, from the name's suffix and shape: kernel `_[k]` orange, JIT `_[j]`
    /// and Java green, inlined `_[i]` aqua, C++ (`::` names) yellow, other code red.
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

/// FNV-1a, 32 bits, over the bytes of `s`: the one hash of names in the output (docs/FORMAT.md
/// "Colours"). It picks a function's colour, the hash appended to a shortened name
/// (`archive::slug`) and a name's bucket in a series' history (`derive::history`); the page
/// script's `fnv1a32` and `nameHash` (themes/default/static/format.js) compute the same.
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
            let (v1, v2, v3) = fractions(fnv1a32(name.as_bytes()));
            match kind_of(name) {
                Kind::Kernel => rgb(220.0 + 35.0 * v3, 120.0 + 50.0 * v1, 30.0 * v2),
                Kind::Java => rgb(50.0 + 60.0 * v1, 200.0 + 55.0 * v3, 50.0 + 60.0 * v2),
                Kind::Inlined => rgb(40.0 + 50.0 * v1, 190.0 + 40.0 * v2, 200.0 + 55.0 * v3),
                Kind::Cpp => rgb(205.0 + 45.0 * v1, 190.0 + 45.0 * v1, 40.0 + 50.0 * v2),
                Kind::Other => rgb(200.0 + 55.0 * v3, 40.0 + 70.0 * v1, 40.0 + 40.0 * v2),
            }
        }
    }
}

/// What the `lang` palette tells from a name (docs/FORMAT.md, "Colours").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Kernel,
    Java,
    Inlined,
    Cpp,
    Other,
}

/// The kind of `name`: its suffix (`_[k]`, `_[j]`, `_[i]`) first, then its shape.
fn kind_of(name: &str) -> Kind {
    if name.ends_with("_[k]") {
        Kind::Kernel
    } else if name.ends_with("_[j]") {
        Kind::Java
    } else if name.ends_with("_[i]") {
        Kind::Inlined
    } else if is_java(name.as_bytes()) {
        Kind::Java
    } else if name.contains("::") || is_operator(name.as_bytes()) {
        Kind::Cpp
    } else {
        Kind::Other
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The identifiers of `s` joined by `sep`, up to the first byte that is neither: the
/// identifiers' start offsets and the end offset. None when a part is not an identifier.
fn idents(s: &[u8], sep: u8) -> Option<(Vec<usize>, usize)> {
    let mut starts = Vec::new();
    let mut i = 0;
    loop {
        if i >= s.len() || !is_ident_start(s[i]) {
            return None;
        }
        starts.push(i);
        while i < s.len() && is_ident(s[i]) {
            i += 1;
        }
        if i + 1 < s.len() && s[i] == sep && is_ident_start(s[i + 1]) {
            i += 1;
        } else {
            return Some((starts, i));
        }
    }
}

/// A Java frame by its shape: a JVM descriptor `Lpkg/Class;…`, a class path `pkg/…/Class.`
/// (two or more identifiers joined by `/`, the last one capitalised, then a dot), or a dotted
/// class `pkg.pkg.Class.` (two or more identifiers that begin in lower case, then a
/// capitalised one, then a dot).
fn is_java(s: &[u8]) -> bool {
    if s.first() == Some(&b'L') {
        if let Some((_, end)) = idents(&s[1..], b'/') {
            if s.get(1 + end) == Some(&b';') {
                return true;
            }
        }
    }
    if let Some((starts, end)) = idents(s, b'/') {
        if starts.len() >= 2 && s[*starts.last().unwrap()].is_ascii_uppercase() && s.get(end) == Some(&b'.') {
            return true;
        }
    }
    if let Some((starts, _)) = idents(s, b'.') {
        // Packages in lower case, then the class, then a dot (the method follows).
        if let Some(class) = starts.iter().position(|&i| s[i].is_ascii_uppercase()) {
            let lower = starts[..class].iter().all(|&i| s[i].is_ascii_lowercase());
            let mut after = starts[class];
            while after < s.len() && is_ident(s[after]) {
                after += 1;
            }
            if class >= 2 && lower && s.get(after) == Some(&b'.') {
                return true;
            }
        }
    }
    false
}

/// A C++ operator: `operator` followed by a character that cannot continue an identifier.
fn is_operator(s: &[u8]) -> bool {
    s.starts_with(b"operator") && s.get(8).is_some_and(|&b| !is_ident(b))
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

/// The module part of a name: without Go's ABI and closure endings, up to its last `::`, `.`
/// or `/` before the first `(` or `<`.
fn module_of(name: &str) -> &str {
    let name = go_base(name);
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

/// `name` without a Go ABI ending (`.abi0`, `.abiinternal`), then without a Go closure ending
/// (`.func` and digits, then any number of `.` and digits: `.func1`, `.func2.1`).
fn go_base(name: &str) -> &str {
    let mut s = name.strip_suffix(".abi0").or_else(|| name.strip_suffix(".abiinternal")).unwrap_or(name);
    // Closure numbers: strip `.digits` groups while the part before them ends in `.funcN`.
    let mut t = s;
    while let Some(dot) = t.rfind('.') {
        let tail = &t[dot + 1..];
        if let Some(num) = tail.strip_prefix("func") {
            if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) {
                s = &t[..dot];
                break;
            }
            break;
        }
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        t = &t[..dot];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_the_published_test_vectors() {
        assert_eq!(fnv1a32(b""), 0x811C_9DC5);
        assert_eq!(fnv1a32(b"a"), 0xE40C_292C);
        assert_eq!(fnv1a32(b"foobar"), 0xBF9C_F968);
        // UTF-8 bytes, one at a time (computed outside this code).
        assert_eq!(fnv1a32("naïve::λ".as_bytes()), 0x11E2_7BBC);
    }

    /// Colours must be the same in every release. The expected values were computed outside
    /// this code, from the algorithm as docs/FORMAT.md states it, by
    /// tests/data/colors/colors.py (its output is tests/data/colors/colors.txt, which the page's
    /// palettes are tested against too: tests/js/palette.test.mjs).
    #[test]
    fn every_palette_gives_the_colours_the_spec_gives() {
        let text = include_str!("../../tests/data/colors/colors.txt");
        let mut seen = std::collections::BTreeMap::<&str, usize>::new();
        for line in text.lines().filter(|l| !l.starts_with("example")) {
            let f: Vec<&str> = line.split('\t').collect();
            let palette = match f[0] {
                "hot" => Palette::Hot,
                "module" => Palette::Module,
                "lang" => Palette::Lang,
                "blue" => Palette::Blue,
                other => panic!("palette {other} in colors.txt"),
            };
            let name: String = serde_json::from_str(f[1]).unwrap();
            let want: u32 = f[2].parse().unwrap();
            let got = color_of(&name, palette);
            assert_eq!(got, want, "{} {name:?}: {got:#08x}, the spec gives {want:#08x}", f[0]);
            *seen.entry(f[0]).or_default() += 1;
        }
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), ["blue", "hot", "lang", "module"]);
        assert!(seen["lang"] >= 25 && seen["module"] >= 15, "{seen:?}");
    }

    #[test]
    fn lang_palette_tells_kinds_by_suffix_and_shape() {
        for (name, kind) in [
            ("do_syscall_64_[k]", Kind::Kernel),
            ("Foo::bar_[j]", Kind::Java),
            ("std::mem::swap_[i]", Kind::Inlined),
            ("java/lang/String.hashCode", Kind::Java),
            ("java.util.HashMap.get", Kind::Java),
            ("java.lang.Object.<init>", Kind::Java),
            ("Lfoo/Bar;.baz", Kind::Java),
            ("std::vector<int>::push_back", Kind::Cpp),
            ("foo::bar()", Kind::Cpp),
            ("operator new(unsigned long)", Kind::Cpp),
            ("operatorNew", Kind::Other),
            ("net/http.(*Client).Do", Kind::Other),
            ("time.Time.Format", Kind::Other),
            ("github.com/foo/bar.Baz", Kind::Other),
            ("Loop", Kind::Other),
            ("L;", Kind::Other),
            ("", Kind::Other),
        ] {
            assert_eq!(kind_of(name), kind, "{name:?}");
        }
    }

    #[test]
    fn go_abi_and_closure_endings_do_not_change_the_package() {
        assert_eq!(module_of("runtime.goexit.abi0"), "runtime");
        assert_eq!(module_of("syscall.Syscall6.abiinternal"), "syscall");
        assert_eq!(module_of("runtime.gcBgMarkWorker.func2"), "runtime");
        assert_eq!(module_of("net/http.(*conn).serve.func1.2"), "net/http");
        assert_eq!(module_of("main.main.func1.2"), "main", "a closure inside a closure");
        assert_eq!(module_of("main.main.1"), "main.main", "digits without .funcN are kept");
        assert_eq!(module_of(".abi0"), "");
    }

    /// The colours example of docs/FORMAT.md is read from the document and its colours
    /// checked against the code, so the document cannot drift from the algorithm it states.
    #[test]
    fn the_format_documents_example_colours_are_the_codes() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
        let section = &doc[doc.find("## Colours").expect("a Colours section")..];
        let block = &section[section.find("```json\n").expect("its JSON example") + 8..];
        let block = &block[..block.find("```").unwrap()];
        let example: serde_json::Value = serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"));
        let names = example["names"].as_array().unwrap();
        let colors = example["colors"].as_array().unwrap();
        assert_eq!(names.len(), colors.len(), "{block}");
        assert!(names.len() >= 3, "{block}");
        assert_eq!(example["palette"], "hot", "{block}");
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
}
