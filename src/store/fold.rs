//! `flamesite fold`: a built graph read back from its chunk files as folded stacks, one line
//! per stack that has a value of its own (or ends a path), sorted. Equal to the merged input,
//! which proves the chunks lose nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::store::chunk::read_graph;
use crate::graph::frames::{FrameTable, NO_PARENT};
use crate::units::exact;

/// Finds the graph folder: `dir` itself when it has a manifest, else the only graph of a
/// profile page folder.
pub fn graph_dir(dir: &Path) -> Result<PathBuf, String> {
    if dir.join("manifest.json").is_file() {
        return Ok(dir.to_path_buf());
    }
    let graphs = dir.join("g");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&graphs)
        .map_err(|_| format!("{}: no manifest.json here, nor a g/ folder of graphs", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("{}: no graph in it", graphs.display())),
        _ => Err(format!(
            "{} has several graphs; name one: {}",
            dir.display(),
            found.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Writes the graph at `dir` as folded stacks.
pub fn fold(dir: &Path, out: &mut dyn Write) -> Result<(), String> {
    let (_, table) = read_graph(&graph_dir(dir)?)?;
    for line in folded_lines(&table) {
        match out.write_all(line.as_bytes()) {
            // The reader stopped (`fold DIR | head`): nothing more to say, and nothing wrong.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            r => r.map_err(|e| e.to_string())?,
        }
    }
    Ok(())
}

/// The table as sorted folded lines (fractional counts written exactly, `31.23`), each ending in a newline.
pub fn folded_lines(t: &FrameTable) -> Vec<String> {
    let n = t.len();
    let mut has_child = vec![false; n];
    for &p in &t.parent {
        if p != NO_PARENT {
            has_child[p as usize] = true;
        }
    }
    let values = t.values();
    let mut lines = Vec::new();
    let mut path: Vec<&str> = Vec::new();
    for (row, &calls) in has_child.iter().enumerate().take(n).skip(1) {
        let own = values.1[row] > 0 || t.before.as_ref().is_some_and(|b| b.self_[row] > 0);
        if !own && calls {
            continue;
        }
        path.clear();
        let mut r = row;
        while r != 0 {
            path.push(&t.names[t.name[r] as usize]);
            r = t.parent[r] as usize;
        }
        path.reverse();
        let mut line = path.join(";");
        match &t.before {
            Some(b) => line.push_str(&format!(" {} {}\n", exact(b.self_[row], t.decimals), exact(values.1[row], t.decimals))),
            None => line.push_str(&format!(" {}\n", exact(values.1[row], t.decimals))),
        }
        lines.push(line);
    }
    lines.sort_unstable();
    lines
}
