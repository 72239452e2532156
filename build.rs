//! Embeds every file of `themes/default/` into the binary, so a site needs no theme folder.

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("themes/default");
    println!("cargo:rerun-if-changed=themes/default");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut code = String::from("/// Files of the built-in theme: (path inside the theme, bytes).\npub static THEME: &[(&str, &[u8])] = &[\n");
    for rel in &files {
        let abs = root.join(rel);
        code.push_str(&format!("    ({rel:?}, include_bytes!({:?})),\n", abs.display().to_string()));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("theme.rs");
    std::fs::write(out, code).unwrap();
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(root, &path, files);
        } else {
            let rel = path.strip_prefix(root).unwrap();
            files.push(rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"));
        }
    }
}
