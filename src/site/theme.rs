//! Rendering: HTML pages from tera templates and the theme's static files.
//!
//! The default theme (`themes/default/`) is compiled into the binary; the `templates/` and
//! `static/` folders of `theme/` beside `site.toml` (or of `theme_dir`) override it file by
//! file, so a user changes one template without copying the theme. The site's own `static/`
//! folder beside `site.toml` is another thing: its files are copied as they are to the
//! output's root ([`site_files`]). Templates get small contexts (never a frame table):
//! the page script fetches graph data itself. Tera escapes every value in `.html` templates.

use std::path::Path;

use tera::{Context, Tera};

include!(concat!(env!("OUT_DIR"), "/theme.rs"));

/// Templates and static files of the theme in use.
pub struct Theme {
    tera: Tera,
    /// Templates by name, with their text.
    templates: Vec<(String, String)>,
    /// Files copied to `static/` in the output, sorted by path.
    pub statics: Vec<(String, Vec<u8>)>,
}

impl Theme {
    /// The built-in theme, with the files of `overrides` (if any) in place of its own.
    pub fn load(overrides: Option<&Path>) -> Result<Theme, String> {
        let mut files: std::collections::BTreeMap<String, Vec<u8>> =
            THEME.iter().map(|(p, b)| (p.to_string(), published(p, b))).collect();
        if let Some(dir) = overrides {
            // A missing folder has no overrides (`theme/` beside site.toml, by default); one
            // that site.toml names must exist (`Config::load` checks it).
            if dir.exists() && !dir.is_dir() {
                return Err(format!("theme folder {} is not a folder", dir.display()));
            }
            for part in ["templates", "static"] {
                let sub = dir.join(part);
                if !sub.is_dir() {
                    continue;
                }
                for entry in walkdir::WalkDir::new(&sub).sort_by_file_name() {
                    let entry = entry.map_err(|e| format!("theme: {e}"))?;
                    if entry.file_type().is_file() {
                        let rel = entry.path().strip_prefix(dir).unwrap();
                        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                        let bytes =
                            std::fs::read(entry.path()).map_err(|e| format!("{}: {e}", entry.path().display()))?;
                        files.insert(rel, bytes);
                    }
                }
            }
        }
        let mut tera = Tera::default();
        tera.set_escape_fn(escape_html);
        let mut templates = Vec::new();
        let mut statics = Vec::new();
        for (path, bytes) in files {
            if let Some(name) = path.strip_prefix("templates/") {
                let text = String::from_utf8(bytes).map_err(|_| format!("template {path} is not UTF-8"))?;
                templates.push((name.to_string(), text));
            } else if let Some(name) = path.strip_prefix("static/") {
                statics.push((name.to_string(), bytes));
            }
        }
        tera.add_raw_templates(templates.clone()).map_err(error_chain)?;
        Ok(Theme { tera, templates, statics })
    }

    /// Whether `name` (a path under `static/`) is a file of the built-in theme.
    pub fn is_builtin_static(name: &str) -> bool {
        THEME.iter().any(|(p, _)| p.strip_prefix("static/") == Some(name))
    }

    /// Every template, by name, with its text.
    pub fn templates(&self) -> &[(String, String)] {
        &self.templates
    }

    /// Renders template `name` with `context`.
    pub fn render(&self, name: &str, context: &Context) -> Result<String, String> {
        self.tera.render(name, context).map_err(error_chain)
    }
}

/// A file of the built-in theme as it is published: its scripts and stylesheet without their
/// comments and indentation, which halves the bytes of the page's first view's scripts
/// (docs/BENCHMARKS.md, "Figures behind the code"; most hosts do not compress them). A theme's
/// own files (`theme_dir`) are copied as they are.
fn published(path: &str, bytes: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(bytes) else { return bytes.to_vec() };
    if path.ends_with(".js") {
        minifier::js::minify(text).to_string().into_bytes()
    } else if path.ends_with(".css") {
        minifier::css::minify(text).map(|m| m.to_string().into_bytes()).unwrap_or_else(|_| bytes.to_vec())
    } else {
        bytes.to_vec()
    }
}

/// The files of the site's `static/` folder (`dir`), by path relative to it (`/`-separated),
/// sorted, to be copied as they are to the output's root. A missing folder has none. A file
/// named like a file of the built-in theme's `static/` is what a site had there when that
/// folder overrode the theme: it is refused with where it goes now. Symbolic links are
/// followed; hidden files (`.name`) are copied too, except `.git` and `.DS_Store`.
pub fn site_files(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(dir).follow_links(true).sort_by_file_name().into_iter();
    for entry in walk.filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git" | ".DS_Store"))) {
        let entry = entry.map_err(|e| format!("static folder: {e}"))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).expect("below the folder");
        let Some(rel) = rel.to_str().map(|r| r.replace(std::path::MAIN_SEPARATOR, "/")) else {
            return Err(format!("{}: a file name in static/ must be UTF-8 (it becomes a URL)", entry.path().display()));
        };
        if Theme::is_builtin_static(&rel) {
            return Err(format!(
                "{}: is named like the theme's static/{rel}: files that replace the theme's now go in theme/static/ \
                 beside site.toml (or in theme_dir); static/ is copied as it is to the output folder's root",
                entry.path().display()
            ));
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| format!("{}: {e}", entry.path().display()))?;
        files.push((rel, bytes));
    }
    Ok(files)
}

/// Escapes text for HTML content and quoted attributes. Tera's own escaper also turns `/`
/// into `&#x2F;`, which is safe but makes every relative link unreadable in the source.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A tera error with its causes, which is where tera says what is wrong.
fn error_chain(e: tera::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

/// The relative path from a page at `slug_depth` folders below the root back to the root.
pub fn path_to_root(folders: usize) -> String {
    "../".repeat(folders)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_scripts_are_published_without_comments_and_a_themes_own_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let own = "// a theme's own script, kept as written\nexport const x = 1;\n";
        std::fs::create_dir_all(dir.path().join("static")).unwrap();
        std::fs::write(dir.path().join("static/mine.js"), own).unwrap();
        let theme = Theme::load(Some(dir.path())).unwrap();
        let file = |name: &str| theme.statics.iter().find(|(n, _)| n == name).map(|(_, b)| String::from_utf8(b.clone()).unwrap()).unwrap();
        assert_eq!(file("mine.js"), own);
        for (name, source) in THEME.iter().filter_map(|(p, b)| p.strip_prefix("static/").map(|n| (n, std::str::from_utf8(b).unwrap()))) {
            let published = file(name);
            if name.ends_with(".js") || name.ends_with(".css") {
                assert!(published.len() * 10 < source.len() * 9, "{name}: {} of {} bytes", published.len(), source.len());
                assert!(!published.contains("\n  ") && !published.contains("/**"), "{name} keeps comments or indentation");
            }
            // What the scripts import from each other and export stays.
            for line in source.lines().filter(|l| l.starts_with("import ") || l.starts_with("export function ") || l.starts_with("export class ")) {
                let word = line.split(['{', '(', ' ']).filter(|w| !w.is_empty()).nth(2).unwrap_or("");
                assert!(published.contains(word), "{name}: {word} is lost ({line})");
            }
        }
    }
}
