//! Rendering: HTML pages from tera templates and the theme's static files.
//!
//! The default theme (`themes/default/`) is compiled into the binary; the `templates/` and
//! `static/` folders beside `site.toml` (or in `theme_dir`) override it file by file, so a
//! user changes one template without copying the theme. Templates get small contexts (never a frame table):
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
            THEME.iter().map(|(p, b)| (p.to_string(), b.to_vec())).collect();
        if let Some(dir) = overrides {
            if !dir.is_dir() {
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

    /// Every template, by name, with its text.
    pub fn templates(&self) -> &[(String, String)] {
        &self.templates
    }

    /// Renders template `name` with `context`.
    pub fn render(&self, name: &str, context: &Context) -> Result<String, String> {
        self.tera.render(name, context).map_err(error_chain)
    }
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
